"""A worker: one driver, one fresh process, each selected task once. Prints one JSON line.

    python -m eng.profiler.worker --driver ferrodbc --conn CS --tasks a,b [--quick] [--expect FILE]

The orchestrators (drivers, compare) start one worker per driver (or revision) per round, so no
state (warm caches, leaked handles, GC pressure) crosses from one sample to the next.
A task that errors, or whose digest differs from the expectation, is FAILED, never a time.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import sys
import time
import traceback
from typing import Any

from .contestants import DRIVERS
from .digest import require_fixed_hash_seed
from .drivers import Driver, NotApplicable
from .task import Ctx, Task
from .trampoline import call_via_ffi
from .workloads import select

MARKER = "PROFILER-RESULT "


def _counter_delta(before: dict | None, after: dict | None) -> dict | None:
    if before is None or after is None:
        return None
    return {k: after[k] - before.get(k, 0) for k in after}


def _teardown(ctx: Ctx) -> None:
    _close(ctx)
    for cleanup in ctx.cleanups:
        try:
            cleanup()
        except Exception:  # noqa: BLE001
            pass


def _close(ctx: Ctx) -> None:
    if ctx.conn is None:
        return
    try:
        ctx.conn.rollback()
        cur = ctx.conn.cursor()
        for table in ctx.tables:
            cur.execute(f"DROP TABLE {table}")
        ctx.conn.commit()
    # Best effort, whatever the driver under test raises (ferrodbc, pyodbc, mssql-python): a
    # failed task may have left the connection unusable.
    except Exception:  # noqa: BLE001
        pass
    try:
        ctx.conn.close()
    except Exception:  # noqa: BLE001
        pass


#: Set by target.connection_string when it starts the peer: whose CPU time `Task.cpu` reads.
PEER_PID_ENV = "PROFILER_PEER_PID"
_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_now() -> tuple[float, float | None]:
    """(this process's user+system seconds, all threads; the peer's, or None if unknown)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    peer = None
    pid = os.environ.get(PEER_PID_ENV)
    if pid:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            peer = (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime
        except (OSError, IndexError, ValueError):
            peer = None
    return r.ru_utime + r.ru_stime, peer


def run_task(driver: Driver, task: Task, conn_str: str, quick: bool, expected: Any, via_ffi: bool = False) -> dict:
    """Setup, time the body, validate. `expected` is [rows, checksum], or None to only report.
    `via_ffi`: call the body through a C trampoline so callgrind can count just the body."""
    ctx = Ctx(driver=driver, conn_str=conn_str, n=task.size.pick(quick), task_name=task.name)
    result: dict[str, Any] = {"status": "failed", "ms": None, "n": ctx.n}
    try:
        driver.require(task.name)
        if task.needs_connection:
            ctx.conn = ctx.connect()
        task.setup(ctx)
        gc.collect()
        before = driver.counters()
        cpu0 = _cpu_now() if task.cpu else None
        t0 = time.perf_counter_ns()
        out = call_via_ffi(lambda: task.body(ctx)) if via_ffi else task.body(ctx)
        elapsed = time.perf_counter_ns() - t0
        if cpu0 is not None:
            cpu1 = _cpu_now()
            ctx.metrics["rows_per_s"] = round(ctx.n / (elapsed / 1e9))
            ctx.metrics["client_cpu_ms"] = round((cpu1[0] - cpu0[0]) * 1000)
            if cpu0[1] is not None and cpu1[1] is not None:
                ctx.metrics["peer_cpu_ms"] = round((cpu1[1] - cpu0[1]) * 1000)
        result["counters"] = _counter_delta(before, driver.counters())
        got = task.check(ctx, out)
        del out
        result["digest"] = [got.rows, got.checksum]
        if expected is not None and list(expected) != result["digest"]:
            result["error"] = (
                f"wrong result: got {got.rows} rows / {got.checksum}, "
                f"expected {expected[0]} rows / {expected[1]}"
            )
        elif elapsed <= 0:
            result["error"] = "zero elapsed time: the body did no work"
        else:
            result.update(status="ok", ms=elapsed / 1e6)
    except NotApplicable as e:
        result.update(status="n/a", error=str(e))
    except Exception as e:  # noqa: BLE001  (any driver's error is this task's result, not a crash)
        result["error"] = f"{type(e).__name__}: {e}".strip()[:500]
        result["trace"] = traceback.format_exc(limit=4)[-1500:]
    finally:
        _teardown(ctx)
    if ctx.notes:
        result["notes"] = ctx.notes
    if ctx.metrics and result["status"] == "ok":
        result["metrics"] = {k: v for k, v in ctx.metrics.items() if not k.endswith("_kib")}
    return result


def run(
    driver_name: str, conn_str: str, task_names: list[str], quick: bool, expectations: dict | None,
    via_ffi: bool = False,
) -> dict:
    """Run the tasks once each. `expectations` None: report digests without judging them."""
    require_fixed_hash_seed()
    driver = DRIVERS[driver_name]()
    tasks = select(task_names)
    report = {
        "driver": driver_name,
        "version": driver.version(),
        "module_file": driver.module_file(),
        "quick": quick,
        "tasks": {},
    }
    for task in tasks:
        exp = None if expectations is None else expectations.get(task.name, {"error": "no expectation"})
        if isinstance(exp, dict):  # no expectation could be computed: say so, do not guess
            report["tasks"][task.name] = {"status": "failed", "ms": None, "error": exp.get("error")}
            continue
        report["tasks"][task.name] = run_task(driver, task, conn_str, quick, exp, via_ffi)
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eng.profiler.worker")
    ap.add_argument("--driver", required=True, choices=sorted(DRIVERS))
    ap.add_argument("--conn", required=True)
    ap.add_argument("--tasks", required=True, help="comma-separated task names")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--expect", help="JSON file of expected digests; without it, digests are only reported")
    ap.add_argument("--via-ffi", action="store_true", help="call bodies through a C trampoline (callgrind)")
    args = ap.parse_args(argv)
    expectations = None
    if args.expect:
        with open(args.expect) as f:
            expectations = json.load(f)
    names = [n for n in args.tasks.split(",") if n]
    report = run(args.driver, args.conn, names, args.quick, expectations, args.via_ffi)
    sys.stdout.write(MARKER + json.dumps(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
