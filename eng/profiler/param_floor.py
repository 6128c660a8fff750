"""Microsoft ODBC Driver 18's own instructions per row of an INSERT parameter array, by binding
form (issue 36 item 4: what bounds `executemany`). `param_floor.c` (built here with `cc`, linked
to unixODBC) binds the narrow rows (INT, BIGINT, FLOAT) and executes the arrays against a TDS peer
started with --insert-discard; callgrind counts its `body()` only, and the report gives the
instructions inside libmsodbcsql per row for each form:

    python -m eng.profiler.param_floor [--rows 100000]

Forms: the C type of the INT column (`SQL_C_SBIGINT`, what ferrodbc bound before, or
`SQL_C_SLONG`), column-wise or row-wise binding (pyodbc's fast_executemany binds row-wise),
indicator arrays or none, SQL_ATTR_PARAMSET_SIZE (1,000 rows or ~62,000, ferrodbc's 16 MiB
requests), prepared once or per array. Every form sends the same RPC bytes (checked by capture
when this was written: docs in CHANGELOG / issue 36's closing note); only the driver's work
differs.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = HERE / "out"

# name -> (array rows, int C type bits, layout, prepare, env)
FORMS = {
    "SBIGINT, column-wise, indicators (ferrodbc before)": (62_000, 64, "col", "each", {}),
    "SBIGINT, row-wise (pyodbc's layout)": (62_000, 64, "row", "each", {}),
    "SBIGINT, prepared once": (62_000, 64, "col", "once", {}),
    "SBIGINT, 1,000-row arrays": (1_000, 64, "col", "each", {}),
    "SLONG for INT": (62_000, 32, "col", "each", {}),
    "SLONG, no indicator arrays (ferrodbc now)": (62_000, 32, "col", "each", {"NOIND": "1"}),
}


def build() -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    exe = OUT / "param_floor"
    src = HERE / "param_floor.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run(["cc", "-O2", "-g", "-o", str(exe), str(src), "-lodbc"], check=True)
    return exe


def driver_ir(path: Path) -> tuple[int, int]:
    """(instructions inside libmsodbcsql, all instructions) of a callgrind file: self costs
    summed per object from the file itself (`ob=`/`cob=` name compression; the line after a
    `calls=` line is a call's inclusive cost, skipped)."""
    names: dict[str, str] = {}
    obj, skip, total, driver = "", False, 0, 0
    for line in path.read_text(errors="replace").splitlines():
        m = re.match(r"c?ob=\((\d+)\)(?: (.*))?", line)
        if m:
            if m.group(2):
                names[m.group(1)] = m.group(2)
            if line.startswith("ob="):
                obj = names.get(m.group(1), "")
            continue
        if line.startswith("calls="):
            skip = True
            continue
        if line[:1].isdigit() or line[:1] in "+-*":
            if skip:
                skip = False
                continue
            parts = line.split()
            if len(parts) >= 2:
                total += int(parts[1])
                if "libmsodbcsql" in obj:
                    driver += int(parts[1])
    return driver, total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eng.profiler.param_floor")
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "eng/peers"))
    import tdspeer
    from .target import _prefer_newest_peer_binary

    exe = build()
    _prefer_newest_peer_binary()
    print(f"| form ({args.rows:,} narrow rows) | Driver 18 Ir/row | all Ir/row |")
    print("| --- | ---: | ---: |")
    with tdspeer.start_peer(encrypt="notsup", extra_args=["--insert-discard"]) as peer:
        cs = tdspeer.conn_str(peer, "msodbcsql")
        for i, (name, (array, bits, layout, prep, env)) in enumerate(FORMS.items()):
            cg = OUT / f"callgrind-param_floor-{i}.out"
            subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=body",
                            f"--callgrind-out-file={cg}", str(exe), cs, str(args.rows), str(array), str(bits),
                            layout, prep], check=True, capture_output=True, env={**os.environ, **env})
            driver, total = driver_ir(cg)
            print(f"| {name} | {driver / args.rows:,.0f} | {total / args.rows:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
