"""Memory over many connect/execute/fetch/close cycles, for the lifetime tests of both suites
(not a test module)."""

from __future__ import annotations

import gc
import tracemalloc

import ferrodbc


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def cycles_memory(connstr: str, pooling: bool, n: int, warmup: int = 300) -> tuple[float, int, str]:
    """Run `warmup` connect/execute/fetch/close cycles, then n more: (RSS growth over the n in
    MiB, growth of the memory tracemalloc traces over their second half in bytes, the allocation
    sites that grew most). Printed for the record (pytest -s).

    Python memory is compared between the middle and the end: a table allocated before tracing
    started and resized once during it (CPython's interned-strings dict, after a column name was
    interned and freed many times) shows as a one-time jump, not as growth; a leak grows in both
    halves."""

    def cycle(i: int) -> None:
        conn = ferrodbc.connect(connstr, pooling=pooling)
        cur = conn.cursor()
        rows = cur.execute("SELECT ?, 'label'", i).fetchall()
        assert rows[0][0] == i
        conn.close()

    for i in range(warmup):
        cycle(i)
    gc.collect()
    rss0 = rss_mib()
    tracemalloc.start(8)
    try:
        for i in range(n // 2):
            cycle(i)
        gc.collect()
        middle = tracemalloc.take_snapshot()
        for i in range(n // 2, n):
            cycle(i)
        gc.collect()
        end = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    rss1 = rss_mib()
    diffs = end.compare_to(middle, "traceback")
    grown = sum(d.size_diff for d in diffs)
    top = "\n".join(
        f"{d.size_diff:+} B {d.count_diff:+} blocks at\n  " + "\n  ".join(d.traceback.format()[-6:])
        for d in diffs[:3]
        if d.size_diff > 0
    )
    print(f"\n{n} cycles pooling={pooling}: RSS {rss0:.1f} -> {rss1:.1f} MiB, "
          f"traced over the last {n - n // 2}: {grown:+} B")
    return rss1 - rss0, grown, top
