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


def cycles_memory(connstr: str, pooling: bool, n: int, warmup: int = 300) -> tuple[float, int]:
    """Run n connect/execute/fetch/close cycles after `warmup` ones: (RSS growth in MiB, growth
    of the memory tracemalloc traces in bytes). Printed for the record (pytest -s)."""

    def cycle(i: int) -> None:
        conn = ferrodbc.connect(connstr, pooling=pooling)
        cur = conn.cursor()
        rows = cur.execute("SELECT ?, 'label'", i).fetchall()
        assert rows[0][0] == i
        conn.close()

    for i in range(warmup):
        cycle(i)
    gc.collect()
    tracemalloc.start()
    try:
        rss0, (traced0, _) = rss_mib(), tracemalloc.get_traced_memory()
        for i in range(n):
            cycle(i)
        gc.collect()
        rss1, (traced1, _) = rss_mib(), tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"\n{n} cycles pooling={pooling}: RSS {rss0:.1f} -> {rss1:.1f} MiB, "
          f"traced {traced0} -> {traced1} B")
    return rss1 - rss0, traced1 - traced0
