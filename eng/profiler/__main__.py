"""python -m eng.profiler {run,drivers,compare,ci,instructions} — see README.md."""

from __future__ import annotations

import argparse
import sys

from . import ci_cmd, compare_cmd, drivers_cmd, instructions_cmd, run_cmd


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eng.profiler", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    for name, module, help_ in [
        ("run", run_cmd, "one task, one driver, in this process (for callgrind/perf)"),
        ("drivers", drivers_cmd, "ferrodbc vs pyodbc vs mssql-python (+ native floor), side by side"),
        ("compare", compare_cmd, "paired base/head comparison of two revisions of ferrodbc"),
        ("ci", ci_cmd, "quick drivers pass for .ci/run: fails only on errors or wrong results"),
        ("instructions", instructions_cmd, "callgrind instruction counts of task bodies (optionally per revision)"),
    ]:
        p = sub.add_parser(name, help=help_)
        module.add_arguments(p)
        p.set_defaults(func=module.main)
    args = ap.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
