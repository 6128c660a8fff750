"""Install a release wheel with pip into Debian chroots and run the tests there (issue 37).

    python eng/chroot.py --wheels DIR [RELEASE ...]     (default: bookworm trixie sid)
    python eng/chroot.py --sdist FILE [RELEASE ...]     (the sdist built there by pip)

Each release is a `debootstrap --variant=minbase` system with only its own packages: python3 and
python3-venv, unixodbc, tdsodbc (FreeTDS), libsqliteodbc, odbc-postgresql (where it installs),
and what Microsoft's driver links (Kerberos, OpenSSL). Microsoft ODBC Driver 18 comes from the
`mssql-python-odbc` wheel (pinned in eng/requirements.txt) and is registered with the chroot's
unixODBC, as eng/setup.sh does on the host. The built system, with a venv holding the test
tools (pytest, pyarrow, polars at the pins of eng/requirements.txt), is cached as a tarball
outside the clone (~/.cache/ferrodbc/chroot/<release>-<hash>.tar.zst) and unpacked fresh for
every run. In the fresh copy, as a user would:

1. `pip install --no-index ferrodbc` from DIR: pip picks the wheel for the release's Python.
   With --sdist instead: the chroot gets only a C toolchain for the linker (gcc, libc6-dev) and
   unixODBC's development package (unixodbc-dev) from its own archive, and Rust as a user's
   rustup gives it: the host's active toolchain bind-mounted read-only at /opt/rust (bookworm's
   own rustc is 1.63, older than the crate's rust-version 1.86, and the chroot cannot download
   rustup). Crates come from crates.io into a fresh CARGO_HOME, the build
   backend (maturin) from PyPI; `pip install FILE` builds the release profile, as a user's
   `pip install --no-binary ferrodbc ferrodbc` does. Steps 2 to 4 then run on what it built.
2. With libodbc.so.2 moved away, `import ferrodbc` must fail with the install advice
   (python/ferrodbc/_install_help.py), this release's command first.
3. tests/python on SQLite3 ODBC and PostgreSQL (psqlODBC against the server FERRODBC_PG_CONNSTR
   names, on the host's loopback; CI=true, so a peer that cannot be reached fails).
4. A round trip to the project's TDS peer, which runs outside the chroot on loopback, through
   Driver 18 and FreeTDS (eng/chroot_probe.py), and a fork mid-prefetch through both that must
   stay quiet under `-W error` (tests/scripts/fork_threads.py).

Prints one line per release: `chroot <release> (Python x.y, glibc z): <outcomes>`; exits 1 if
any step failed. Needs root (debootstrap, chroot, mount), debootstrap and zstd, Debian's archive,
and PyPI for the test tools. The peer binary is target/release/tds-peer (eng/setup.sh).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Self

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "eng" / "peers"))

import tdspeer  # noqa: E402

MIRROR = os.environ.get("FERRODBC_DEBIAN_MIRROR", "http://deb.debian.org/debian")
CACHE = Path(os.environ.get("FERRODBC_CACHE", Path.home() / ".cache" / "ferrodbc")) / "chroot"
RELEASES = ("bookworm", "trixie", "sid")
PACKAGES = ["python3", "python3-venv", "unixodbc", "tdsodbc", "libsqliteodbc", "ca-certificates",
            # Driver 18's own libraries (it dlopens libssl; openssl pulls the release's libssl).
            "libgssapi-krb5-2", "libkrb5-3", "openssl", "libstdc++6"]
OPTIONAL_PACKAGES = ["odbc-postgresql"]
# The test tools in the chroot's venv, at eng/requirements.txt's pins.
TOOLS = ("pytest", "pyarrow", "polars", "mssql-python-odbc")
MS_DRIVER = "ODBC Driver 18 for SQL Server"


def log(message: str) -> None:
    print(f"chroot: {message}", flush=True)


def pins() -> list[str]:
    """The TOOLS at eng/requirements.txt's versions (pytest's `>=8` stays a floor)."""
    out = []
    for line in (ROOT / "eng" / "requirements.txt").read_text().splitlines():
        m = re.match(r"([A-Za-z0-9_.-]+)\s*([=<>!~].*)?$", line.strip())
        if m and m.group(1).lower() in TOOLS:
            out.append(line.strip())
    return out


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kw)


class Mounted:
    """/proc, /dev and /dev/pts of the host inside `root` for the duration of a `with`."""

    def __init__(self, root: Path, read_only: dict[str, Path] | None = None):
        self.root = root
        self.points: list[Path] = []
        # Host folders bound read-only inside the chroot: {path in the chroot: host path}.
        self.read_only = read_only or {}

    def __enter__(self) -> Self:
        for what, args in (("proc", ["-t", "proc", "proc"]), ("dev", ["--bind", "/dev"]),
                           ("dev/pts", ["--bind", "/dev/pts"])):
            point = self.root / what
            point.mkdir(parents=True, exist_ok=True)
            run(["mount", *args, str(point)])
            self.points.append(point)
        for inside, host in self.read_only.items():
            point = self.root / inside.lstrip("/")
            point.mkdir(parents=True, exist_ok=True)
            run(["mount", "--bind", str(host), str(point)])
            self.points.append(point)
            run(["mount", "-o", "remount,bind,ro", str(point)])
        shutil.copy("/etc/resolv.conf", self.root / "etc" / "resolv.conf")
        # The host's trust store for pip (PIP_CERT below): a network may inspect TLS with its
        # own authority, which the host trusts and a fresh chroot does not.
        shutil.copy(os.environ.get("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt"),
                    self.root / "etc" / "host-ca-certificates.crt")
        return self

    def __exit__(self, *exc) -> None:
        for point in reversed(self.points):
            subprocess.run(["umount", "-l", str(point)], check=False)


def in_chroot(root: Path, script: str, env: dict[str, str] | None = None, check: bool = True,
              capture: bool = False) -> subprocess.CompletedProcess:
    """Run a shell script in the chroot, with a clean environment (plus `env`)."""
    base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
            "LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive",
            "PIP_CERT": "/etc/host-ca-certificates.crt", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run(["chroot", str(root), "/bin/sh", "-ec", script], env={**base, **(env or {})},
                          check=check, text=True, capture_output=capture)


def base_key(release: str) -> str:
    text = "\n".join([release, MIRROR, *PACKAGES, *OPTIONAL_PACKAGES, *pins(), "v1"])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def build_base(release: str) -> Path:
    """The cached tarball of `release`'s system with the test venv (built when missing)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    tarball = CACHE / f"{release}-{base_key(release)}.tar.zst"
    if tarball.exists():
        return tarball
    for old in CACHE.glob(f"{release}-*.tar.zst"):
        old.unlink()
    start = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix=f"ferrodbc-{release}-", dir=CACHE))
    root = work / "root"
    try:
        log(f"{release}: debootstrap --variant=minbase ({MIRROR})")
        run(["debootstrap", "--variant=minbase", release, str(root), MIRROR], stdout=subprocess.DEVNULL)
        # The archive may serve Release files past their Valid-Until (a frozen mirror).
        (root / "etc/apt/apt.conf.d/99ferrodbc").write_text('Acquire::Check-Valid-Until "false";\n')
        with Mounted(root):
            log(f"{release}: apt-get install {' '.join(PACKAGES)}")
            in_chroot(root, "apt-get update -qq && apt-get install -y -qq --no-install-recommends "
                      + " ".join(PACKAGES) + " >/dev/null")
            for p in OPTIONAL_PACKAGES:
                done = in_chroot(root, f"apt-get install -y -qq --no-install-recommends {p} >/dev/null",
                                 check=False)
                log(f"{release}: {p} {'installed' if done.returncode == 0 else 'does not install'}")
            log(f"{release}: venv /opt/venv with {' '.join(pins())}")
            in_chroot(root, "python3 -m venv /opt/venv && /opt/venv/bin/pip install -q "
                      "--disable-pip-version-check " + " ".join(f"'{p}'" for p in pins()))
            in_chroot(root, "apt-get clean && rm -rf /var/lib/apt/lists/* /root/.cache")
        run(["tar", "--zstd", "-C", str(root), "-cf", str(tarball) + ".part", "."])
        os.replace(str(tarball) + ".part", tarball)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"{release}: cached {tarball.name} ({tarball.stat().st_size / 2**20:.0f} MiB) in "
        f"{time.monotonic() - start:.0f} s")
    return tarball


INSTALL_WHEEL = r"""
/opt/venv/bin/pip install -q --disable-pip-version-check --no-index --find-links /wheels ferrodbc
"""

# --sdist: what a user adds to build from source, from the release's own archive: a linker (gcc
# with libc6-dev) and unixODBC's development package (the unversioned libodbc.so). No
# python3-dev: an extension module does not link libpython, and PyO3 needs no headers.
SDIST_PACKAGES = ["gcc", "libc6-dev", "unixodbc-dev"]
SDIST_TOOLS = r"""
apt-get update -qq
apt-get install -y -qq --no-install-recommends """ + " ".join(SDIST_PACKAGES) + r""" >/dev/null
rm -rf /var/lib/apt/lists/*
echo "$(rustc --version) | $(cargo --version) | gcc $(gcc -dumpfullversion) | unixodbc-dev $(dpkg-query -W -f='${Version}' unixodbc-dev)"
"""
# pip's own build of the sdist (PEP 517, maturin from PyPI, release profile), then installed.
BUILD_SDIST = r"""
/opt/venv/bin/pip install -q --disable-pip-version-check /sdist/*.tar.gz
"""

REGISTER_MS_DRIVER = r"""
# Microsoft ODBC Driver 18 from the mssql-python-odbc wheel, registered as eng/setup.sh does.
LIBS=$(/opt/venv/bin/python -c 'import mssql_python_odbc, os; print(os.path.dirname(mssql_python_odbc.__file__))')
SO=$(find "$LIBS" -path '*debian_ubuntu/x86_64*' -name 'libmsodbcsql-18*.so*' | head -n1)
RLL=$(find "$LIBS" -path '*debian_ubuntu/x86_64*' -name 'msodbcsqlr18.rll' | head -n1)
mkdir -p /opt/microsoft/msodbcsql18/lib64 /opt/microsoft/msodbcsql18/share/resources/en_US
cp "$SO" /opt/microsoft/msodbcsql18/lib64/
[ -z "$RLL" ] || cp "$RLL" /opt/microsoft/msodbcsql18/share/resources/en_US/
printf '[ODBC Driver 18 for SQL Server]\nDriver=/opt/microsoft/msodbcsql18/lib64/%s\n' "$(basename "$SO")" > /tmp/ms.ini
odbcinst -i -d -f /tmp/ms.ini >/dev/null
"""

# Step 2: the import without a driver manager (the library moved away, then back).
NO_DRIVER_MANAGER = r"""
lib=$(ls /usr/lib/x86_64-linux-gnu/libodbc.so.2* | head -n1)
mkdir -p /root/aside && mv /usr/lib/x86_64-linux-gnu/libodbc.so.2* /root/aside/
set +e
out=$(cd / && /opt/venv/bin/python -c 'import ferrodbc' 2>&1)
set -e
mv /root/aside/* /usr/lib/x86_64-linux-gnu/
printf '%s\n' "$out" | tail -n 12
"""


def host_rust() -> Path:
    """The host's active Rust toolchain (its bin/ holds rustc and cargo), for --sdist."""
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], check=True, text=True,
                             capture_output=True).stdout.strip()
    return Path(sysroot)


def run_release(release: str, wheels: Path | None, pg_connstr: str | None, peer,
                sdist: Path | None = None) -> tuple[bool, str]:
    """Every step in a fresh copy of `release`, on the wheel pip picks from `wheels` or on what
    pip builds from `sdist`; (all passed, the summary line)."""
    tarball = build_base(release)
    work = Path(tempfile.mkdtemp(prefix=f"ferrodbc-{release}-{'sdist' if sdist else 'run'}-"))
    root = work / "root"
    outcomes: list[str] = []
    ok = True

    def step(name: str, passed: bool, detail: str = "") -> None:
        nonlocal ok
        ok &= passed
        outcomes.append(f"{name} {'ok' if passed else 'FAILED'}{' ' + detail if detail else ''}")
        log(f"{release}: {name}: {'ok' if passed else 'FAILED'} {detail}")

    try:
        root.mkdir()
        run(["tar", "--zstd", "-C", str(root), "-xf", str(tarball)])
        (root / "wheels").mkdir()
        for w in (wheels.glob("ferrodbc-*.whl") if wheels else ()):
            shutil.copy(w, root / "wheels")
        read_only: dict[str, Path] = {}
        build_env: dict[str, str] = {}
        if sdist:
            (root / "sdist").mkdir()
            shutil.copy(sdist, root / "sdist")
            read_only["/opt/rust"] = host_rust()
            build_env = {"PATH": "/opt/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                         "CARGO_HTTP_CAINFO": "/etc/host-ca-certificates.crt"}
        src = root / "src"
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "target", "out")
        for part in ("tests", "eng"):
            shutil.copytree(ROOT / part, src / part, ignore=ignore)
        with Mounted(root, read_only):
            facts = in_chroot(root, "python3 -c 'import platform; print(platform.python_version())'; "
                              "ldd --version | head -n1 | awk '{print $NF}'", capture=True).stdout.split()
            py, glibc = facts[0], facts[1]
            if sdist:
                tools = in_chroot(root, SDIST_TOOLS, env=build_env, check=False, capture=True)
                step(f"apt-get install {' '.join(SDIST_PACKAGES)} + host Rust", tools.returncode == 0,
                     tools.stdout.strip() if tools.returncode == 0 else tools.stderr.strip()[-400:])
                start = time.monotonic()
                build = in_chroot(root, BUILD_SDIST, env=build_env, check=False, capture=True)
                outcomes.append(f"sdist build {time.monotonic() - start:.0f} s")
                setup = build
                if build.returncode == 0:
                    setup = in_chroot(root, REGISTER_MS_DRIVER, check=False, capture=True)
                else:
                    print(build.stderr[-4000:], flush=True)
            else:
                setup = in_chroot(root, INSTALL_WHEEL + REGISTER_MS_DRIVER, check=False, capture=True)
            installed = in_chroot(root, "/opt/venv/bin/pip list 2>/dev/null | grep -i '^ferrodbc' || true",
                                  capture=True).stdout.strip()
            wheel = in_chroot(root, "ls /opt/venv/lib/python3*/site-packages/ | grep -i '^ferrodbc-.*dist-info' "
                              "|| true", capture=True).stdout.strip()
            step("pip install " + (sdist.name if sdist else "wheel"), setup.returncode == 0 and bool(installed),
                 installed.replace("  ", " ").replace("  ", " ") if setup.returncode == 0
                 else setup.stderr.strip()[-400:])
            if setup.returncode != 0:
                return False, f"chroot {release} (Python {py}, glibc {glibc}): " + "; ".join(outcomes)
            advice = in_chroot(root, NO_DRIVER_MANAGER, capture=True).stdout
            first = next((ln.strip() for ln in advice.splitlines() if re.match(r"\s+(sudo|apk) ", ln)), "")
            step("import without libodbc.so.2", "needs the unixODBC driver manager" in advice
                 and first.startswith("sudo apt-get install unixodbc"), repr(first))

            env = {"CI": "true", "PYTHONDONTWRITEBYTECODE": "1"}
            have_pg = in_chroot(root, "odbcinst -q -d -n 'PostgreSQL Unicode' >/dev/null", check=False).returncode == 0
            args = ""
            if have_pg and pg_connstr:
                env["FERRODBC_PG_CONNSTR"] = pg_connstr
            else:
                # Without PostgreSQL its tests skip (CI=true would fail them); SQLite3 still runs.
                env.pop("CI")
                args = "-rs"
                outcomes.append("postgres skipped: " + ("odbc-postgresql does not install" if not have_pg
                                                        else "no FERRODBC_PG_CONNSTR"))
            start = time.monotonic()
            tests = in_chroot(root, f"cd /src && /opt/venv/bin/python -m pytest -q -p no:cacheprovider -rfE "
                              f"tests/python {args} 2>&1 | tail -n 40", env=env, check=False, capture=True)
            summary = tests.stdout.strip().splitlines()[-1] if tests.stdout.strip() else tests.stderr[-300:]
            passed = re.search(r"\b(failed|error)", summary) is None and " passed" in summary
            step("tests/python", passed, f"{summary.strip('= ')} ({time.monotonic() - start:.0f} s)")
            if not passed:
                print(tests.stdout[-3000:], flush=True)
                outcomes.extend(ln for ln in tests.stdout.splitlines() if ln.startswith(("FAILED", "ERROR")))

            for driver in ("msodbcsql", "freetds"):
                cs = tdspeer.conn_str(peer, driver)
                probe = in_chroot(root, "cd / && /opt/venv/bin/python -W error /src/eng/chroot_probe.py \"$CS\"",
                                  env={"CS": cs}, check=False, capture=True)
                step(f"peer {driver}", probe.returncode == 0,
                     (probe.stdout.strip() if probe.returncode == 0 else probe.stderr.strip()[-600:]))
                fork = in_chroot(root, "cd / && /opt/venv/bin/python -W error /src/tests/scripts/fork_threads.py "
                                 "\"$CS\" 'SELECT * FROM peer.int_nvarchar_60000' 60000",
                                 env={"CS": cs}, check=False, capture=True)
                want = "before 2 at_fork 1 child 0 rows ok True again 2"
                step(f"fork {driver}", fork.returncode == 0 and fork.stdout.strip() == want and not fork.stderr,
                     fork.stdout.strip() + fork.stderr.strip()[-400:])
        what = f"built from {sdist.name}, {wheel}" if sdist else wheel
        line = f"chroot {release} (Python {py}, glibc {glibc}, {what}): " + "; ".join(outcomes)
        return ok, line
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheels", type=Path, help="folder of ferrodbc wheels (eng/wheels.sh)")
    ap.add_argument("--sdist", type=Path, help="instead: build this sdist in each release (Rust + unixodbc-dev)")
    ap.add_argument("releases", nargs="*", default=list(RELEASES))
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("chroot: needs root (debootstrap, chroot, mount)")
    if args.sdist is None and args.wheels is None:
        raise SystemExit("chroot: --wheels DIR (or --sdist FILE)")
    if args.sdist is None and not list(args.wheels.glob("ferrodbc-*.whl")):
        raise SystemExit(f"chroot: no ferrodbc wheel in {args.wheels}")
    if args.sdist is not None and not args.sdist.is_file():
        raise SystemExit(f"chroot: no sdist at {args.sdist}")
    wheels = None if args.sdist else args.wheels.resolve()
    sdist = args.sdist.resolve() if args.sdist else None
    pg = os.environ.get("FERRODBC_PG_CONNSTR", "").strip() or None
    results = []
    with tdspeer.start_peer() as peer:
        for release in args.releases:
            start = time.monotonic()
            ok, line = run_release(release, wheels, pg, peer, sdist)
            results.append((ok, f"{line} [{time.monotonic() - start:.0f} s]"))
    print("\n".join(line for _, line in results), flush=True)
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
