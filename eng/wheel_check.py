"""Build a ferrodbc wheel once, install it into a fresh virtual environment, and use it.

    .venv/bin/python eng/wheel_check.py [--profile dev|release] [--wheel PATH]

What `maturin develop` cannot show: that the wheel a user installs carries everything it needs
(the Python package, the stub, the extension) and finds the system's unixODBC on its own. The
check, in order:

1. `maturin build` the wheel (default profile `dev`: unoptimised, ~1 min instead of the release
   profile's fat-LTO build; the packaging is the same), or take `--wheel`.
2. Create a fresh venv (no system site-packages) and `pip install --no-index` the wheel alone:
   ferrodbc has no Python dependencies.
3. From a directory outside the checkout, with no PYTHONPATH, the venv's Python must import
   ferrodbc from its own site-packages; the extension must link `libodbc.so.2` from the system
   (ldd) and the wheel must bundle no shared library.
4. A small query through the installed module on SQLite3 ODBC and on the TDS peer through ODBC
   Driver 18 (started here, eng/peers/tdspeer.py). With CI=true a missing driver or peer fails.

Prints `wheel check: N passed, N failed` and exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "eng" / "peers"))

import tdspeer  # noqa: E402

CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# Runs inside the fresh venv: imports only what the wheel installed.
PROBE = r"""
import json, sys
import ferrodbc
conn_strs = json.loads(sys.argv[1])
out = {"file": ferrodbc.__file__, "native": ferrodbc._native.__file__, "results": {}}
for name, cs in conn_strs.items():
    with ferrodbc.connect(cs, autocommit=True) as conn:
        cur = conn.cursor()
        row = cur.execute("SELECT ? + 1 AS n, ? AS s", 41, "h\u00e9").fetchone()
        out["results"][name] = [row.n, row.s]
print(json.dumps(out))
"""


def log(message: str) -> None:
    print(f"wheel check: {message}", flush=True)


def build_wheel(profile: str, into: Path) -> Path:
    cmd = [sys.executable, "-m", "maturin", "build", "-q", "-o", str(into)]
    cmd += ["--release"] if profile == "release" else ["--profile", profile]
    subprocess.run(cmd, check=True, cwd=ROOT)
    wheels = sorted(into.glob("ferrodbc-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"wheel check: expected one wheel in {into}, found {wheels}")
    return wheels[0]


def sqlite_conn_str(work: Path) -> str | None:
    found = subprocess.run(["odbcinst", "-q", "-d", "-n", "SQLite3"], capture_output=True)
    if found.returncode != 0:
        return None
    return f"Driver=SQLite3;Database={work / 'wheel-check.db'}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="dev", help="cargo profile for the wheel (dev or release)")
    ap.add_argument("--wheel", type=Path, help="check this wheel instead of building one")
    args = ap.parse_args()
    passed, failed = 0, 0

    def check(ok: bool, what: str) -> None:
        nonlocal passed, failed
        passed += ok
        failed += not ok
        log(("ok: " if ok else "FAIL: ") + what)

    with tempfile.TemporaryDirectory(prefix="ferrodbc-wheel-") as tmp:
        work = Path(tmp)
        wheel = args.wheel or build_wheel(args.profile, work / "dist")
        log(f"wheel {wheel.name} ({args.profile if not args.wheel else 'given'})")
        names = zipfile.ZipFile(wheel).namelist()
        bundled = [n for n in names if ".so" in n and not n.startswith("ferrodbc/_native")]
        check(not bundled, f"the wheel bundles no shared library besides the extension {bundled or ''}")
        check("ferrodbc/_native.pyi" in names and "ferrodbc/__init__.py" in names,
              "the wheel carries the Python package and the stub")

        venv = work / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        py = venv / "bin" / "python"
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-index", str(wheel)], check=True)

        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        native = subprocess.run(
            [str(py), "-c", "import ferrodbc._native as n; print(n.__file__)"],
            cwd=work, env=env, capture_output=True, text=True, check=True,
        ).stdout.strip()
        check(native.startswith(str(venv)), f"ferrodbc is imported from the venv ({native})")
        ldd = subprocess.run(["ldd", native], capture_output=True, text=True).stdout
        odbc = [line.strip() for line in ldd.splitlines() if "libodbc.so" in line]
        check(len(odbc) == 1 and "=> /" in odbc[0] and str(venv) not in odbc[0],
              f"the extension links the system's unixODBC ({odbc})")

        conn_strs = {}
        cs = sqlite_conn_str(work)
        if cs:
            conn_strs["sqlite"] = cs
        else:
            check(not CI, "SQLite3 ODBC is registered (eng/setup.sh)")
        peer_ok = tdspeer.peer_binary() is not None and tdspeer.drivers_available()["msodbcsql"]
        if not peer_ok:
            check(not CI, "the TDS peer binary and ODBC Driver 18 are there (eng/setup.sh)")
            probe = run_probe(py, conn_strs, work, env)
        else:
            with tdspeer.start_peer() as peer:
                conn_strs["tds-peer"] = tdspeer.conn_str(peer, "msodbcsql")
                probe = run_probe(py, conn_strs, work, env)
        if probe is None:
            check(False, "the probe ran in the venv")
        else:
            for name in conn_strs:
                got = probe["results"].get(name)
                check(got == [42, "h\u00e9"], f"a query through the installed wheel on {name} ({got})")
    print(f"wheel-check: {passed} passed, {failed} failed")
    return 1 if failed else 0


def run_probe(py: Path, conn_strs: dict[str, str], cwd: Path, env: dict[str, str]) -> dict | None:
    proc = subprocess.run([str(py), "-c", PROBE, json.dumps(conn_strs)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        log(f"probe failed (exit {proc.returncode}): {proc.stderr.strip()[-1500:]}")
        return None
    return json.loads(proc.stdout)


if __name__ == "__main__":
    sys.exit(main())
