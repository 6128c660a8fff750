"""Load as a web service sees it: many asyncio tasks over a small connection pool.

    .venv/bin/python -m eng.aio_load [--tasks 200] [--pool 16] [--seconds 10] [--runs 3]
        [--drivers ferrodbc.aio,aioodbc,mssql-python] [--stream] [--quick] [--mechanism]

One TDS peer (eng/tds-peer) with a 100,000-row keyed table; each of `--tasks` tasks loops for
`--seconds`: take a connection from a pool of `--pool`, run a point lookup by key (4 of 5
queries) or a 100-row page read, give the connection back, and record the latency (pool wait
included). A watchdog coroutine ticks every millisecond and records the event loop's largest
stall. With `--stream` one more task reads the peer's 1M-row synthetic table with `async for`
over and over meanwhile (ferrodbc.aio only: the others have no streaming fetch off the loop).

Contenders, each through Microsoft ODBC Driver 18 (all in their own process, runs interleaved):
- ferrodbc.aio: a pool of `ferrodbc.aio.connect` connections (a worker thread each);
- aioodbc 0.5 over pyodbc, with its own 16-thread executor (aioodbc's docs advise one; the default
  executor has min(32, cores + 4) threads);
- mssql-python through `asyncio.to_thread`, the loop's default executor set to `--pool` threads.
`--mechanism` adds "ferrodbc+executor": sync ferrodbc connections driven with run_in_executor on
a shared 16-thread pool (what aioodbc does), the alternative to ferrodbc.aio's worker per
connection. `--baseline` adds "baseline": the same tasks, pool and watchdog with no database
(each query is 1 ms of asyncio.sleep), the loop stall the machine itself causes.

Reports, per contender, the median of the runs and their range: queries/s, p50 and p99 latency,
the loop's largest stall, and the peer's CPU (utime + stime from /proc/<pid>/stat over the run,
as a share of one core). The peer must not be the bottleneck: if its CPU is near one core the
figures measure the peer. Exits non-zero only on errors or wrong results (never on timings).
`--quick`: 1 run of 2 s, 50 tasks (the CI pass).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import concurrent.futures
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "eng" / "peers"))

import tdspeer  # noqa: E402

TABLE = "aio_load_keyed"
ROWS = 100_000
PAGE = 100
CONTENDERS = ("ferrodbc.aio", "aioodbc", "mssql-python")
POINT = f"SELECT id, name, amount, ts FROM {TABLE} WHERE id = ?"
PAGE_SQL = f"SELECT TOP {PAGE} id, name, amount, ts FROM {TABLE} WHERE id >= ? ORDER BY id"
STREAM_SQL = "SELECT * FROM peer.mixed_1000000"


def create_table(connstr: str) -> None:
    import datetime as dt
    import decimal

    import ferrodbc

    with ferrodbc.connect(connstr, autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute(f"CREATE TABLE {TABLE} (id INT PRIMARY KEY, name NVARCHAR(50), amount DECIMAL(18,4), ts DATETIME2)")
        base = dt.datetime(2024, 1, 1)
        for start in range(0, ROWS, 20_000):
            cur.executemany(
                f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?)",
                [(i, f"name {i}", decimal.Decimal(i) / 16, base + dt.timedelta(seconds=i))
                 for i in range(start, start + 20_000)],
            )


def cpu_ticks(pid: int) -> int:
    """utime + stime of a process, in clock ticks (fields 14 and 15 of /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


# --- one contender, in its own process -------------------------------------------------------------


class Pool:
    """A fixed set of connections handed out first come, first served (the same for everyone).

    Not an asyncio.Queue: a task that puts a connection back and asks again at once takes it
    before the waiter that was woken for it runs, so a few tasks would keep the connections and
    the latencies of the others (the tail a web service sees) would never be recorded."""

    def __init__(self, conns: list[Any]) -> None:
        self.conns = conns
        self.idle: collections.deque[Any] = collections.deque(conns)
        self.waiters: collections.deque[asyncio.Future[Any]] = collections.deque()

    async def get(self) -> Any:
        if self.idle and not self.waiters:
            return self.idle.popleft()
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiters.append(waiter)
        return await waiter

    def put(self, conn: Any) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return
        self.idle.append(conn)


def expected_point(key: int) -> tuple[int, str]:
    return key, f"name {key}"


async def open_contender(name: str, connstr: str, size: int) -> tuple[Pool, Any, Any]:
    """(pool, query(conn, sql, param) -> rows, close(conn))."""
    if name == "ferrodbc.aio":
        import ferrodbc.aio

        conns = [await ferrodbc.aio.connect(connstr, autocommit=True, pooling=False) for _ in range(size)]

        async def query(conn: Any, sql: str, param: int) -> list[Any]:
            return await conn.fetchall(sql, param)

        async def close(conn: Any) -> None:
            await conn.close()

        return Pool(conns), query, close
    if name == "ferrodbc+executor":
        import ferrodbc

        executor = concurrent.futures.ThreadPoolExecutor(size)
        loop = asyncio.get_running_loop()
        conns = [await loop.run_in_executor(executor, lambda: ferrodbc.connect(connstr, autocommit=True, pooling=False))
                 for _ in range(size)]

        def run(conn: Any, sql: str, param: int) -> list[Any]:
            return conn.cursor().execute(sql, param).fetchall()

        async def query(conn: Any, sql: str, param: int) -> list[Any]:
            return await loop.run_in_executor(executor, run, conn, sql, param)

        async def close(conn: Any) -> None:
            await loop.run_in_executor(executor, conn.close)

        return Pool(conns), query, close
    if name == "aioodbc":
        import aioodbc

        executor = concurrent.futures.ThreadPoolExecutor(size)
        conns = [await aioodbc.connect(dsn=connstr, autocommit=True, executor=executor) for _ in range(size)]

        async def query(conn: Any, sql: str, param: int) -> list[Any]:
            async with conn.cursor() as cur:
                await cur.execute(sql, param)
                return await cur.fetchall()

        async def close(conn: Any) -> None:
            await conn.close()

        return Pool(conns), query, close
    if name == "mssql-python":
        import mssql_python

        asyncio.get_running_loop().set_default_executor(concurrent.futures.ThreadPoolExecutor(size))
        cs = re.sub(r"(?i)(^|;)\s*driver\s*=\s*(\{[^}]*\}|[^;]*)", "", connstr).strip(";")
        conns = [await asyncio.to_thread(mssql_python.connect, cs, autocommit=True) for _ in range(size)]

        def run(conn: Any, sql: str, param: int) -> list[Any]:
            cur = conn.cursor()
            try:
                cur.execute(sql, param)
                return cur.fetchall()
            finally:
                cur.close()

        async def query(conn: Any, sql: str, param: int) -> list[Any]:
            return await asyncio.to_thread(run, conn, sql, param)

        async def close(conn: Any) -> None:
            await asyncio.to_thread(conn.close)

        return Pool(conns), query, close
    if name == "baseline":
        # No database: each "query" is 1 ms of asyncio.sleep returning the expected rows. What
        # the watchdog sees here is the machine (scheduling, other processes), not a driver.
        async def query(conn: Any, sql: str, param: int) -> list[Any]:
            await asyncio.sleep(0.001)
            if sql == PAGE_SQL:
                return [(param + i,) for i in range(PAGE)]
            return [expected_point(param)]

        async def close(conn: Any) -> None:
            pass

        return Pool([object() for _ in range(size)]), query, close
    raise SystemExit(f"unknown contender {name!r}")


async def load(name: str, connstr: str, tasks: int, size: int, seconds: float, stream: bool, peer_pid: int) -> dict[str, Any]:
    pool, query, close = await open_contender(name, connstr, size)
    latencies: list[float] = []
    wrong = 0
    stall = 0.0
    streamed = 0
    stop = asyncio.Event()

    async def watchdog() -> None:
        nonlocal stall
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            stall = max(stall, now - last)
            last = now

    async def worker(seed: int) -> None:
        nonlocal wrong
        rnd = random.Random(seed)
        while not stop.is_set():
            page = rnd.random() < 0.2
            key = rnd.randrange(ROWS - PAGE if page else ROWS)
            t0 = time.perf_counter()
            conn = await pool.get()
            try:
                rows = await query(conn, PAGE_SQL if page else POINT, key)
            finally:
                pool.put(conn)
            latencies.append(time.perf_counter() - t0)
            if page:
                wrong += len(rows) != PAGE or rows[0][0] != key or rows[-1][0] != key + PAGE - 1
            else:
                wrong += len(rows) != 1 or tuple(rows[0][:2]) != expected_point(key)

    async def streamer() -> None:
        nonlocal streamed
        import ferrodbc.aio

        async with await ferrodbc.aio.connect(connstr, autocommit=True, pooling=False) as conn:
            while not stop.is_set():
                cur = await conn.execute(STREAM_SQL)
                async for _ in cur:
                    streamed += 1
                    if stop.is_set():
                        break
                await cur.close()

    # Warm-up: every connection runs each statement once (plans, first-use allocations).
    for c in pool.conns:
        await query(c, POINT, 1)
        await query(c, PAGE_SQL, 1)
    extra = [asyncio.ensure_future(streamer())] if stream else []
    cpu0, t0 = cpu_ticks(peer_pid), time.perf_counter()
    dog = asyncio.ensure_future(watchdog())
    workers = [asyncio.ensure_future(worker(i)) for i in range(tasks)]
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(*workers, *extra)
    elapsed = time.perf_counter() - t0
    cpu1 = cpu_ticks(peer_pid)
    await dog
    for c in pool.conns:
        await close(c)
    latencies.sort()
    return {
        "contender": name,
        "queries": len(latencies),
        "qps": len(latencies) / elapsed,
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p99_ms": 1000 * latencies[int(len(latencies) * 0.99)],
        "stall_ms": 1000 * stall,
        "peer_cpu": (cpu1 - cpu0) / os.sysconf("SC_CLK_TCK") / elapsed,
        "wrong": wrong,
        "streamed": streamed,
    }


# --- the orchestrator --------------------------------------------------------------------------------


def one_run(name: str, args: argparse.Namespace, connstr: str, peer_pid: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "eng.aio_load", "--one", name, "--connstr", connstr, "--peer-pid", str(peer_pid),
           "--tasks", str(args.tasks), "--pool", str(args.pool), "--seconds", str(args.seconds)]
    if args.stream:
        cmd.append("--stream")
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=args.seconds * 4 + 120)
    if out.returncode != 0:
        raise SystemExit(f"{name}: exit {out.returncode}\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_range(values: list[float], fmt: str) -> str:
    med = statistics.median(values)
    if len(values) == 1:
        return format(med, fmt)
    return f"{format(med, fmt)} ({format(min(values), fmt)}-{format(max(values), fmt)})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--pool", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--drivers", default=",".join(CONTENDERS))
    ap.add_argument("--stream", action="store_true", help="one more task streams 1M rows meanwhile")
    ap.add_argument("--mechanism", action="store_true", help="add ferrodbc+executor (sync ferrodbc on a shared pool)")
    ap.add_argument("--baseline", action="store_true", help="add the no-database baseline")
    ap.add_argument("--quick", action="store_true", help="1 run of 2 s with 50 tasks (CI)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--connstr", help=argparse.SUPPRESS)
    ap.add_argument("--peer-pid", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        result = asyncio.run(load(args.one, args.connstr, args.tasks, args.pool, args.seconds, args.stream, args.peer_pid))
        print(json.dumps(result))
        return 0
    if args.quick:
        args.runs, args.seconds, args.tasks = 1, 2.0, 50
    names = [n for n in args.drivers.split(",") if n]
    if args.mechanism:
        names.append("ferrodbc+executor")
    if args.baseline:
        names.append("baseline")
    if tdspeer.peer_binary() is None:
        print("tds-peer binary not built (cargo build --release -p tds-peer)", file=sys.stderr)
        return 2
    results: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    with tdspeer.start_peer() as peer:
        connstr = tdspeer.conn_str(peer, "msodbcsql")
        create_table(connstr)
        for run in range(args.runs):
            for name in names:
                r = one_run(name, args, connstr, peer.proc.pid)
                results[name].append(r)
                print(f"run {run + 1} {name}: {r['qps']:.0f} q/s, p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms, "
                      f"stall {r['stall_ms']:.1f} ms, peer CPU {r['peer_cpu']:.0%}", flush=True)
    bad = 0
    print(f"\n{args.tasks} tasks, pool {args.pool}, {args.seconds:g} s, {args.runs} run(s), median (range)"
          + (", with a 1M-row stream" if args.stream else ""))
    print(f"{'contender':<20} {'queries/s':>22} {'p50 ms':>20} {'p99 ms':>22} {'loop stall ms':>20} {'peer CPU':>16}")
    for name, rs in results.items():
        bad += sum(r["wrong"] for r in rs)
        print(f"{name:<20} {median_range([r['qps'] for r in rs], '.0f'):>22} "
              f"{median_range([r['p50_ms'] for r in rs], '.2f'):>20} {median_range([r['p99_ms'] for r in rs], '.2f'):>22} "
              f"{median_range([r['stall_ms'] for r in rs], '.1f'):>20} {median_range([100 * r['peer_cpu'] for r in rs], '.0f'):>16}%")
    if bad:
        print(f"{bad} queries returned wrong rows", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
