"""The release gate for Linux wheels (eng/wheels.sh runs it with its pinned auditwheel).

    python eng/wheels_gate.py --plat manylinux_2_17 [--arch x86_64] WHEEL [WHEEL ...]

Each wheel fails the gate, and the run exits 1, when:
- its file name's platform tag is not `<plat>_<arch>`;
- it carries any shared library besides ferrodbc/_native*.so (a bundled driver manager,
  libodbc or libltdl, or anything else auditwheel would have grafted);
- its extension links (DT_NEEDED) anything beyond libodbc.so.2 and the libraries every manylinux
  system has (glibc's and libgcc_s);
- its extension serves Rust's `_Unwind_*` calls from a private static unwinder (zig's libunwind)
  instead of the system's libgcc_s.so.1 (a crash when a thread exits through ferrodbc's frames);
- its extension needs a glibc symbol version newer than the tag allows (read from the ELF's
  version requirements, and again as auditwheel's `sym_tag` with no library paths, so nothing
  on this machine is consulted);
- `auditwheel repair --exclude libodbc.so.2 --plat <plat>_<arch> --only-plat` refuses it or
  would graft anything into it.
Prints one line per wheel: name, tag, the highest glibc symbol version, size.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from elftools.elf.elffile import ELFFile  # auditwheel's own dependency (pyelftools)

# The manylinux policy's libraries (PEP 600: glibc's and libgcc_s), plus the driver manager the
# user's system provides (documented in docs/install.md).
ALLOWED_NEEDED = {
    "libodbc.so.2",
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libutil.so.1",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "libgcc_s.so.1",
}
DRIVER_MANAGERS = re.compile(r"lib(odbc|odbcinst|iodbc|ltdl)[^/]*\.so", re.I)


def version_key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def elf_facts(data: bytes) -> tuple[list[str], str, bool]:
    """DT_NEEDED entries, the highest GLIBC_x.y the file's version requirements name, and whether
    Rust's unwinder calls are imported (from libgcc_s) rather than served by a private copy."""
    import io

    elf = ELFFile(io.BytesIO(data))
    needed = [t.needed for t in elf.get_section_by_name(".dynamic").iter_tags() if t.entry.d_tag == "DT_NEEDED"]
    imported = {sym.name for sym in elf.get_section_by_name(".dynsym").iter_symbols()
                if sym["st_shndx"] == "SHN_UNDEF"}
    shared_unwinder = {"_Unwind_GetLanguageSpecificData", "_Unwind_RaiseException"} <= imported
    glibc = ["0.0"]
    verneed = elf.get_section_by_name(".gnu.version_r")
    if verneed is not None:
        for _, auxes in verneed.iter_versions():
            for aux in auxes:
                m = re.fullmatch(r"GLIBC_(\d+\.\d+(?:\.\d+)?)", aux.name)
                if m:
                    glibc.append(m.group(1))
    return needed, max(glibc, key=version_key), shared_unwinder


def check(wheel: Path, plat: str, arch: str = "x86_64") -> list[str]:
    problems: list[str] = []
    want = f"{plat}_{arch}"
    tag = wheel.name[:-4].split("-")[-1]
    if want not in tag.split("."):
        problems.append(f"tag {tag}, not {want}")
    with zipfile.ZipFile(wheel) as z:
        libs = [n for n in z.namelist() if re.search(r"\.so(\.|$)", n)]
        ext = [n for n in libs if re.fullmatch(r"ferrodbc/_native\.[^/]*\.so", n)]
        others = sorted(set(libs) - set(ext))
        if len(ext) != 1:
            problems.append(f"expected one extension ferrodbc/_native*.so, found {ext}")
        if others:
            dm = [n for n in others if DRIVER_MANAGERS.search(n)]
            problems.append(("bundles a driver manager " if dm else "bundles ") + ", ".join(others))
        needed, glibc, shared_unwinder = elf_facts(z.read(ext[0])) if ext else ([], "0.0", True)
    if not shared_unwinder:
        # zig links its own static libunwind unless told otherwise (eng/wheels.sh): then glibc's
        # pthread_exit (a daemon thread at interpreter exit, Python <= 3.13) unwinds with
        # libgcc_s into Rust frames whose personality uses the private copy: SIGSEGV.
        problems.append("carries a private unwinder instead of importing _Unwind_* from libgcc_s.so.1")
    extra = sorted(set(needed) - ALLOWED_NEEDED)
    if extra:
        problems.append(f"links {', '.join(extra)} beyond libodbc.so.2 and glibc")
    if "libodbc.so.2" not in needed:
        problems.append("does not link libodbc.so.2")
    limit = ".".join(plat.split("_")[1:3])
    if version_key(glibc) > version_key(limit):
        problems.append(f"needs GLIBC_{glibc}, newer than its tag's {limit}")

    with tempfile.TemporaryDirectory() as tmp:
        show = subprocess.run(
            ["auditwheel", "show", "--json", "--ldpaths", tmp, str(wheel)], capture_output=True, text=True
        )
        if show.returncode != 0:
            problems.append(f"auditwheel show failed: {show.stderr.strip()[-300:]}")
        else:
            sym_tag = json.loads(show.stdout).get("sym_tag", "")
            m = re.match(r"manylinux_(\d+)_(\d+)_", sym_tag)
            if not m or version_key(f"{m[1]}.{m[2]}") > version_key(limit):
                problems.append(f"auditwheel's symbol policy is {sym_tag!r}, beyond {want}")
        out = Path(tmp) / "repaired"
        repair = subprocess.run(
            ["auditwheel", "repair", "--exclude", "libodbc.so.2", "--plat", want, "--only-plat", "-w", str(out),
             str(wheel)],
            capture_output=True, text=True,
        )
        if repair.returncode != 0:
            last = (repair.stderr or repair.stdout).strip().splitlines()[-1:]
            problems.append(f"auditwheel repair refuses it for {want}: {' '.join(last)}")
        else:
            for fixed in out.glob("*.whl"):
                grafted = [n for n in zipfile.ZipFile(fixed).namelist() if ".libs/" in n]
                if grafted:
                    problems.append(f"auditwheel would graft {', '.join(grafted)}")
    size = wheel.stat().st_size / 2**20
    print(f"{wheel.name}  tag {tag}  highest GLIBC_{glibc}  {size:.1f} MiB  "
          + ("ok" if not problems else "FAIL: " + "; ".join(problems)), flush=True)
    return problems


def self_test(good: Path, plat: str, host_so: Path) -> int:
    """(x86_64.) The gate must refuse two wheels made from a good one: one that bundles the host's
    libodbc, and one whose extension is `host_so` (built by the host's own linker, so it needs
    the host's newer glibc) under the good wheel's manylinux name."""
    import shutil

    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        libodbc = subprocess.run(["sh", "-c", "ldconfig -p | awk '/libodbc.so.2 .*x86-64/ {print $NF; exit}'"],
                                 capture_output=True, text=True).stdout.strip()
        for case in ("bundles libodbc", "newer glibc"):
            bad = Path(tmp) / case.replace(" ", "-") / good.name
            bad.parent.mkdir()
            with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as dst:
                for item in src.infolist():
                    data = src.read(item)
                    if case == "newer glibc" and re.fullmatch(r"ferrodbc/_native\.[^/]*\.so", item.filename):
                        data = host_so.read_bytes()
                    dst.writestr(item, data)
                if case == "bundles libodbc":
                    dst.writestr("ferrodbc.libs/libodbc-0123abcd.so.2.0.0", Path(libodbc).read_bytes())
            problems = check(bad, plat)
            refused = bool(problems)
            print(f"self-test ({case}): {'refused, as it must be' if refused else 'PASSED THE GATE'}")
            failures += not refused
        shutil.rmtree(tmp, ignore_errors=True)
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plat", default="manylinux_2_17")
    ap.add_argument("--arch", default="x86_64", help="x86_64 or aarch64")
    ap.add_argument("--self-test", type=Path, metavar="HOST_SO",
                    help="also check that the gate refuses bad copies of the first wheel (HOST_SO: an "
                         "extension linked by the host's toolchain)")
    ap.add_argument("wheels", nargs="+", type=Path)
    args = ap.parse_args()
    if args.self_test and self_test(args.wheels[0], args.plat, args.self_test):
        print("wheel gate: the self-test failed (the gate let a bad wheel through)")
        return 1
    failed = [w for w in args.wheels if check(w, args.plat, args.arch)]
    print(f"wheel gate: {len(args.wheels) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
