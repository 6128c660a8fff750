"""`instructions`: callgrind instruction counts of each task's timed body.

Wall clock on 2 shared cores moves by tens of percent; instruction counts of the same code on the
same data repeat to a fraction of a percent, so they are the signal for small changes. One
valgrind run per task and revision; only the body is counted (see trampoline.py). The worker
still validates the result, so a count is never reported for a wrong answer.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

from . import builds, procs, report
from .contestants import DRIVERS
from .expectations import for_run
from .target import connection_string, describe
from .workloads import REGISTRY, select

OUT = Path(__file__).resolve().parent / "out"


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--tasks", nargs="*", help="task names (default: all)")
    ap.add_argument("--drivers", nargs="+", default=["ferrodbc"], choices=list(DRIVERS),
                    help="one column per driver (default ferrodbc); ratios are each column / the first")
    ap.add_argument("--rev", action="append", help="git revision(s) of ferrodbc to build and count "
                    "(repeat: --rev BASE --rev HEAD); default: the installed ferrodbc")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--connection-string")
    ap.add_argument("--odbc-driver", default="msodbcsql", choices=["msodbcsql", "freetds"])
    ap.add_argument("--threads", action="store_true",
                    help="count the threads the body starts too (ferrodbc's prefetch thread, arrow-odbc's "
                         "concurrent fetch): needed to compare drivers that fetch on another thread")


def valgrind(out_file: Path, threads: bool = False) -> list[str]:
    # callgrind's collection state is per thread: `ffi_call*` switches it on for the body's
    # thread only. `start_thread` (glibc's entry of every new thread) switches it on for each
    # other thread's whole life; threads that exist before the body (pyarrow's pool) idle.
    extra = ["--toggle-collect=start_thread"] if threads else []
    return ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=ffi_call*", *extra,
            f"--callgrind-out-file={out_file}"]


def total_ir(out_file: Path) -> int | None:
    for line in out_file.read_text(errors="replace").splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    return None


def run(args: argparse.Namespace) -> tuple[str, dict]:
    names = [t.name for t in select(args.tasks)]
    log = partial(print, file=sys.stderr, flush=True)
    # Columns: (label, driver, PYTHONPATH) — revisions of ferrodbc, or installed drivers.
    if args.rev:
        if args.drivers != ["ferrodbc"]:
            raise SystemExit("--rev builds ferrodbc; use it without --drivers")
        shas = {rev: builds.resolve(rev) for rev in args.rev}
        columns = [(sha[:10] if sha.startswith(rev) else f"{rev} ({sha[:10]})", "ferrodbc",
                    [str(builds.build(sha, log))]) for rev, sha in shas.items()]
    else:
        columns = [(d, d, None) for d in args.drivers]
    counts: dict[str, dict[str, str]] = {n: {} for n in names}
    data: dict = {}
    OUT.mkdir(parents=True, exist_ok=True)
    with connection_string(args.connection_string, odbc_driver=args.odbc_driver) as cs:
        server = describe(cs)
        expect_file, _ = for_run(names, args.quick, cs)
        try:
            for n in names:
                for label, driver, pythonpath in columns:
                    log(f"[profiler] callgrind: {n} / {label}")
                    out_file = OUT / f"callgrind-{driver}-{n}-{len(data)}.out"
                    r = procs.worker(driver, cs, [n], args.quick, expect_file, pythonpath,
                                     timeout=3600, prefix=valgrind(out_file, args.threads), via_ffi=True)
                    t = r["tasks"][n]
                    ir = total_ir(out_file) if t["status"] == "ok" and out_file.exists() else None
                    counts[n][label] = (f"{ir / 1e6:,.2f} M" if ir else
                                        f"n/a ({t.get('error')})" if t["status"] == "n/a" else
                                        f"**FAILED** ({report.short(t.get('error', 'no count'), 40)})")
                    data[f"{n}/{label}"] = {"ir": ir, "status": t["status"], "error": t.get("error"),
                                            "file": str(out_file), "counters": t.get("counters")}
        finally:
            expect_file.unlink(missing_ok=True)
    labels = [label for label, _, _ in columns]
    rows = []
    for n in names:
        row = [f"`{n}` {REGISTRY[n].title}", *(counts[n][label] for label in labels)]
        first = data[f"{n}/{labels[0]}"]["ir"]
        for other in labels[1:]:
            ir = data[f"{n}/{other}"]["ir"]
            row.append(f"{ir / first:.3f}" if first and ir else "–")
        rows.append(row)
    headers = ["task", *labels, *(f"{other} / {labels[0]}" for other in labels[1:])]
    mode = "QUICK sizes" if args.quick else "full sizes"
    text = "\n".join([
        f"# Instructions per task body (callgrind Ir) — {mode}",
        "",
        "Counted inside the timed body only (setup, validation, imports and connecting excluded)"
        + ("; every thread the body starts counted too (--threads); " if args.threads else
           " on the body's own thread (work a driver does on threads of its own is not counted; see --threads); ")
        +
        "one run each, validated like every other run. Files: eng/profiler/out/callgrind-*.out "
        "(`callgrind_annotate FILE`).",
        "",
        report.table(headers, rows),
        "",
        f"- server: {server}",
    ]) + "\n"
    return text, {"columns": labels, "quick": args.quick, "counts": data}


def main(args: argparse.Namespace) -> int:
    text, data = run(args)
    md, js = report.write("instructions", text, data)
    print(text)
    print(f"(written to {md} and {js})")
    failed = [k for k, v in data["counts"].items() if v["status"] == "failed"]
    return 1 if failed else 0
