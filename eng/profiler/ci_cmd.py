"""`ci`: a quick drivers pass for .ci/run. Prints the report; the exit status reflects only
errors and wrong results of ferrodbc and the native floor, never timings. Other drivers'
failures are findings about them, reported but not fatal."""

from __future__ import annotations

import argparse

from . import drivers_cmd, report
from .rounds import summarize

GATED = ("ferrodbc", drivers_cmd.FLOOR)


def add_arguments(ap: argparse.ArgumentParser) -> None:
    drivers_cmd.add_arguments(ap)
    ap.set_defaults(quick=True)


def main(args: argparse.Namespace) -> int:
    args.quick = True
    text, data, _ = drivers_cmd.run(args)
    md, js = report.write("ci-drivers", text, data)
    print(text)
    print(f"(written to {md} and {js})")
    failed = [
        f"{label} {task}: {s['reason']}"
        for label, per_task in data["summaries"].items()
        if label in GATED
        for task, s in per_task.items()
        if s["status"] == "FAILED"
    ]
    if failed:
        print("profiler ci: FAILED (errors or wrong results):\n  " + "\n  ".join(failed))
        return 1
    print("profiler ci: ok (timings are informational)")
    return 0
