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
    MiB, growth of the memory tracemalloc traces over n/2 cycles in bytes, the allocation sites
    that grew most). Printed for the record (pytest -s).

    Python memory is measured over each half and the smaller growth counts: a leak grows in
    both halves, while a table allocated before tracing started and resized once during it
    shows in one half only. Seen: CPython's interned-strings dict, grown large by the tests
    before and refilled with the dummies of column names interned and freed, was reallocated
    once (+1.9 MB, one block) inside the second half."""

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
        gc.collect()
        first = tracemalloc.take_snapshot()
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
    halves = [b.compare_to(a, "traceback") for a, b in ((first, middle), (middle, end))]
    grown = [sum(d.size_diff for d in diffs) for diffs in halves]
    diffs = halves[grown.index(min(grown))]
    top = "\n".join(
        f"{d.size_diff:+} B {d.count_diff:+} blocks at\n  " + "\n  ".join(d.traceback.format()[-6:])
        for d in diffs[:3]
        if d.size_diff > 0
    )
    print(f"\n{n} cycles pooling={pooling}: RSS {rss0:.1f} -> {rss1:.1f} MiB, "
          f"traced over each half: {grown[0]:+} B, {grown[1]:+} B")
    return rss1 - rss0, min(grown), top
