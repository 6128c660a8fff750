"""Where a partitioned read's time goes: wall time, client CPU and peer CPU of
``ferrodbc.read_arrow`` over 1, 2 and 4 partitions of one user table (the ``read_arrow_1_2m_*``
tasks' table), measured around each read.

    flock /work/bench.lock python -m eng.profiler.partition_cpu [--rows 1200000] [--repeat 5]

Client CPU is this process's user+system time (every partition thread is in it); peer CPU is
the TDS peer's, from /proc/PID/stat. On a machine with C cores a read cannot go faster than
(client CPU + peer CPU) / C, whatever the partition count. Prints medians with min..max.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "eng" / "peers"))

import ferrodbc  # noqa: E402

import tdspeer  # noqa: E402
import usertable  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m eng.profiler.partition_cpu")
    ap.add_argument("--rows", type=int, default=1_200_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    import pyarrow  # noqa: F401

    with tdspeer.start_peer() as peer:
        cs = tdspeer.conn_str(peer, "msodbcsql")
        cn = ferrodbc.connect(cs)
        cur = cn.cursor()
        cur.execute("CREATE TABLE part_src (id INT NOT NULL PRIMARY KEY, name NVARCHAR(50), val FLOAT)")
        for sql in usertable.inserts("int_nvarchar_float", "part_src", args.rows):
            cur.execute(sql)
        cn.commit()
        cn.close()
        print(f"{args.rows:,} rows, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
        print("| partitions | wall s | client CPU s | peer CPU s | (client+peer)/wall |")
        print("|---|---|---|---|---|")
        samples: dict[int, list[tuple[float, float, float]]] = {1: [], 2: [], 4: []}
        ferrodbc.read_arrow(cs, "SELECT * FROM part_src", partition_on="id", partitions=1)  # warm-up
        for _ in range(args.repeat):
            for p in samples:  # interleaved, so drift hits every partition count alike
                c0, s0, t0 = own_cpu(), process_cpu(peer.proc.pid), time.perf_counter()
                table = ferrodbc.read_arrow(cs, "SELECT * FROM part_src", partition_on="id", partitions=p)
                wall = time.perf_counter() - t0
                samples[p].append((wall, own_cpu() - c0, process_cpu(peer.proc.pid) - s0))
                assert table.num_rows == args.rows
                del table
        for p, rows in samples.items():
            cells = []
            for k in range(3):
                v = [r[k] for r in rows]
                cells.append(f"{statistics.median(v):.2f} ({min(v):.2f}..{max(v):.2f})")
            ratio = statistics.median((r[1] + r[2]) / r[0] for r in rows)
            print(f"| {p} | {' | '.join(cells)} | {ratio:.2f} |")
        print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
