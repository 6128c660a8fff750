"""`run`: one task, one driver, in THIS process (so callgrind/perf see the work), validated."""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import procs
from .contestants import DRIVERS
from .target import connection_string
from .worker import run_task
from .workloads import REGISTRY


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--task", required=True, choices=list(REGISTRY))
    ap.add_argument("--driver", default="ferrodbc", choices=list(DRIVERS))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--connection-string")
    ap.add_argument("--odbc-driver", default="msodbcsql", choices=["msodbcsql", "freetds"],
                    help="ODBC driver between the Python driver and the peer")
    ap.add_argument("--bulk-discard", action="store_true",
                    help="peer with --bulk-discard: bulk rows counted, not stored")
    ap.add_argument("--insert-discard", action="store_true",
                    help="peer with --insert-discard: INSERT parameter arrays counted, not stored")
    ap.add_argument("--repeat", type=int, default=1, help="run the task this many times (one line each)")
    ap.add_argument("--via-ffi", action="store_true",
                    help="call the body through a C trampoline: with callgrind --collect-atstart=no "
                         "--toggle-collect='ffi_call*' only the body is counted")


def main(args: argparse.Namespace) -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # Digests need a fixed hash seed. Under valgrind set it yourself: an exec'd child is not traced.
        os.execve(sys.executable, [sys.executable, "-m", "eng.profiler", *sys.argv[1:]],
                  {**os.environ, "PYTHONHASHSEED": "0"})
    if args.bulk_discard and not args.connection_string:
        os.environ["PROFILER_BULK_DISCARD"] = "1"  # before the expectations: they depend on it
    if args.insert_discard and not args.connection_string:
        os.environ["PROFILER_INSERT_DISCARD"] = "1"
    exp = procs.expectations([args.task], args.quick)[args.task]
    if isinstance(exp, dict):
        print(f"note: {exp.get('error')}; the digest is reported, not checked", file=sys.stderr)
        exp = None
    driver = DRIVERS[args.driver]()
    ok = True
    with connection_string(args.connection_string, odbc_driver=args.odbc_driver,
                           bulk_discard=args.bulk_discard, insert_discard=args.insert_discard) as cs:
        for _ in range(args.repeat):
            r = run_task(driver, REGISTRY[args.task], cs, args.quick, exp, args.via_ffi)
            print(json.dumps({"task": args.task, "driver": args.driver, **r}))
            ok &= r["status"] in ("ok", "n/a")
    return 0 if ok else 1
