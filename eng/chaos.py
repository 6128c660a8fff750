"""Chaos under load (issue 36 item 2): N asyncio tasks and M threads per driver doing point
reads, streaming reads, explicit transactions, executemany, bulkcopy_arrow, cancels, ATTENTION
storms and timeouts through Driver 18 and FreeTDS, against a TDS peer that injects faults at
random (`tds-peer --chaos`: dropped connections, transient 40613/40501/40197 at login and
mid-transaction, slow and stalled answers, malformed packets). It stops by itself after
``--seconds`` and then checks:

- every transaction the client saw committed is in the database exactly once, and none it saw
  fail or roll back is (each writes rows tagged with its own id; no untagged row appears);
- every call ended in rows or a PEP 249 error (anything else is a violation), with right data;
- no call ran past its bound (``--op-limit``; a hung call is reported with every thread's stack
  and the run ends with exit 1 instead of hanging);
- RSS and open file descriptors are flat (steady-state growth under ``--rss-slack-mb``, the
  descriptors back at their baseline once every connection is closed);
- the connection pool holds no broken connection (each parked one runs a statement).

Usage: ``python eng/chaos.py --seconds 60`` (report on stdout, ``--json FILE`` for the data).
docs/chaos.md says more. Exit 0 when nothing was violated.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import json
import os
import random
import re
import sys
import threading
import time
import traceback
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "eng" / "peers"))

import pyarrow as pa  # noqa: E402

import ferrodbc  # noqa: E402
import ferrodbc.aio  # noqa: E402

import tdspeer  # noqa: E402

KV_ROWS = 200
STREAM_ROWS = 3000
STALL = "/* fault:stall=1.5 */"
DRIVERS = {"msodbcsql": "Driver 18", "freetds": "FreeTDS"}


class Run:
    """The shared books of one run: outcomes, the ledger of writes, running calls, violations."""

    def __init__(self, op_limit: float) -> None:
        self.lock = threading.Lock()
        self.outcomes: dict[str, Counter[str]] = defaultdict(Counter)
        self.ledger: dict[str, tuple[str, int]] = {}  # op id -> (status, rows)
        self.violations: list[str] = []
        self.running: dict[int, tuple[str, float]] = {}  # worker id -> (op, started)
        self.op_limit = op_limit
        self.stop = threading.Event()
        self.cancels_sent = 0
        self.samples: dict[str, str] = {}  # outcome -> its first error's text

    def outcome(
        self, driver: str, kind: str, result: str, error: BaseException | None = None
    ) -> None:
        with self.lock:
            self.outcomes[f"{driver}:{kind}"][result] += 1
            if error is not None and result not in self.samples:
                self.samples[result] = str(error)[:300]

    def record(self, op: str, status: str, rows: int) -> None:
        with self.lock:
            self.ledger[op] = (status, rows)

    def violate(self, what: str) -> None:
        with self.lock:
            if len(self.violations) < 200:
                self.violations.append(what)

    def started(self, worker: int, op: str) -> None:
        with self.lock:
            self.running[worker] = (op, time.monotonic())

    def ended(self, worker: int) -> None:
        with self.lock:
            self.running.pop(worker, None)

    def overdue(self) -> list[str]:
        now = time.monotonic()
        with self.lock:
            return [
                f"worker {w}: {op} running for {now - t:.0f} s"
                for w, (op, t) in self.running.items()
                if now - t > self.op_limit
            ]


def classify(e: BaseException) -> str:
    """The outcome name of a failed call: a PEP 249 class and its SQLSTATE, else None."""
    state = ""
    m = re.search(r"\[([0-9A-Z]{5})\]", str(e))
    if m:
        state = m.group(1)
    return f"{type(e).__name__}:{state}" if state else type(e).__name__


def ledger_rows(op: str, n: int) -> list[tuple[str, int, str]]:
    return [(op, k, f"{op}/{k}") for k in range(n)]


# ---------------------------------------------------------------------------------------------
# Threads: one connection each, reconnecting when it breaks or at random (pool churn).


class SyncWorker:
    KINDS = [
        "point",
        "point",
        "stream",
        "txn",
        "txn",
        "executemany",
        "bulk_arrow",
        "cancel",
        "storm",
        "timeout",
    ]

    def __init__(self, run: Run, wid: int, driver: str, connstr: str, seed: int) -> None:
        self.run, self.wid, self.driver, self.connstr = run, wid, driver, connstr
        self.rng = random.Random(seed)
        self.cn: ferrodbc.Connection | None = None

    def connect(self) -> ferrodbc.Connection:
        policy = ferrodbc.RetryPolicy(attempts=10, base_delay=0.05, max_delay=0.5, total_timeout=30)
        cn = ferrodbc.connect(self.connstr, autocommit=True, timeout=10, retry=policy)
        cn.timeout = 10
        return cn

    def drop(self) -> None:
        if self.cn is not None:
            try:
                self.cn.close()
            except ferrodbc.Error:
                pass
        self.cn = None

    def loop(self) -> None:
        while not self.run.stop.is_set():
            kind = self.rng.choice(self.KINDS)
            self.run.started(self.wid, f"{self.driver}:{kind}")
            try:
                if self.cn is None:
                    self.cn = self.connect()
                getattr(self, kind)(self.cn)
                result, error = "ok", None
            except ferrodbc.Error as e:
                result, error = classify(e), e
            except Exception as e:  # noqa: BLE001 - anything else is what the run looks for
                error = e
                result = f"NOT-PEP249:{type(e).__name__}"
                self.run.violate(
                    f"{self.driver}:{kind}: {type(e).__name__}: {e}\n{traceback.format_exc()}"
                )
            finally:
                self.run.ended(self.wid)
            self.run.outcome(self.driver, kind, result, error)
            # A failed call may leave the connection broken or mid-transaction: start again
            # (close parks a healthy Driver 18 session in the pool); sometimes churn anyway.
            if result != "ok" or self.rng.random() < 0.05:
                self.drop()
        self.drop()

    def point(self, cn: ferrodbc.Connection) -> None:
        i = self.rng.randrange(KV_ROWS)
        v = cn.cursor().execute("SELECT v FROM chaos_kv WHERE id = ?", i).fetchval()
        if v != f"v{i}":
            self.run.violate(f"{self.driver}: point read of {i} gave {v!r}")

    def stream(self, cn: ferrodbc.Connection) -> None:
        cur = cn.cursor()
        cur.execute(f"SELECT id, name FROM peer.mixed_{STREAM_ROWS}")
        n = 0
        while batch := cur.fetchmany(500):
            n += len(batch)
        if n != STREAM_ROWS:
            self.run.violate(f"{self.driver}: streaming read gave {n} rows of {STREAM_ROWS}")

    def _txn(self, cn: ferrodbc.Connection, body: Callable[[Any, str], int]) -> None:
        op = f"{self.driver[:2]}{self.wid}-{uuid.uuid4().hex[:12]}"
        cn.autocommit = False
        rows = 0
        try:
            rows = body(cn.cursor(), op)
            if self.rng.random() < 0.15:
                cn.rollback()
                self.run.record(op, "rolled_back", rows)
            else:
                cn.commit()
                self.run.record(op, "committed", rows)
        except BaseException:
            self.run.record(op, "failed", rows)
            raise
        cn.autocommit = True

    def txn(self, cn: ferrodbc.Connection) -> None:
        def body(cur: Any, op: str) -> int:
            n = self.rng.randint(1, 3)
            for op_, k, p in ledger_rows(op, n):
                cur.execute("INSERT INTO chaos_ledger (op, k, payload) VALUES (?, ?, ?)", op_, k, p)
            return n

        self._txn(cn, body)

    def executemany(self, cn: ferrodbc.Connection) -> None:
        def body(cur: Any, op: str) -> int:
            rows = ledger_rows(op, self.rng.randint(5, 40))
            cur.executemany("INSERT INTO chaos_ledger (op, k, payload) VALUES (?, ?, ?)", rows)
            return len(rows)

        self._txn(cn, body)

    def bulk_arrow(self, cn: ferrodbc.Connection) -> None:
        op = f"{self.driver[:2]}{self.wid}-{uuid.uuid4().hex[:12]}"
        rows = ledger_rows(op, self.rng.randint(10, 200))
        table = pa.table({c: list(v) for c, v in zip(["op", "k", "payload"], zip(*rows))})
        try:
            cn.cursor().bulkcopy_arrow("chaos_ledger", table)
        except BaseException:
            self.run.record(op, "failed", len(rows))
            raise
        self.run.record(op, "committed", len(rows))

    def _cancelled_call(self, cn: ferrodbc.Connection, storm: bool) -> None:
        cur = cn.cursor()
        delay = self.rng.uniform(0, 0.3)

        def canceller() -> None:
            time.sleep(delay)
            for _ in range(25 if storm else 1):
                try:
                    cur.cancel()
                except ferrodbc.Error:
                    pass
                with self.run.lock:
                    self.run.cancels_sent += 1
                if storm:
                    time.sleep(0.002)

        t = threading.Thread(target=canceller, daemon=True)
        t.start()
        try:
            n = cur.execute(f"SELECT COUNT(*) FROM chaos_kv {STALL}").fetchval()
            if n != KV_ROWS:
                self.run.violate(f"{self.driver}: a cancelled count gave {n}")
        finally:
            t.join()

    def cancel(self, cn: ferrodbc.Connection) -> None:
        self._cancelled_call(cn, storm=False)

    def storm(self, cn: ferrodbc.Connection) -> None:
        self._cancelled_call(cn, storm=True)

    def timeout(self, cn: ferrodbc.Connection) -> None:
        cn.timeout = 1
        try:
            cn.cursor().execute(f"SELECT COUNT(*) FROM chaos_kv {STALL}").fetchval()
        finally:
            cn.timeout = 10


# ---------------------------------------------------------------------------------------------
# asyncio tasks: the same operations through ferrodbc.aio, cancels as per-call timeouts and
# task cancellation.


class AsyncWorker:
    KINDS = [
        "point",
        "point",
        "stream",
        "txn",
        "executemany",
        "bulk_arrow",
        "timeout",
        "task_cancel",
    ]

    def __init__(self, run: Run, wid: int, driver: str, connstr: str, seed: int) -> None:
        self.run, self.wid, self.driver, self.connstr = run, wid, driver, connstr
        self.rng = random.Random(seed)
        self.cn: ferrodbc.aio.AsyncConnection | None = None

    async def drop(self) -> None:
        if self.cn is not None:
            try:
                await self.cn.close()
            except ferrodbc.Error:
                pass
        self.cn = None

    async def loop(self) -> None:
        policy = ferrodbc.RetryPolicy(attempts=10, base_delay=0.05, max_delay=0.5, total_timeout=30)
        while not self.run.stop.is_set():
            kind = self.rng.choice(self.KINDS)
            self.run.started(self.wid, f"{self.driver}:aio:{kind}")
            try:
                if self.cn is None:
                    self.cn = await ferrodbc.aio.connect(
                        self.connstr, autocommit=True, timeout=10, retry=policy
                    )
                await getattr(self, kind)(self.cn)
                result, error = "ok", None
            except ferrodbc.Error as e:
                result, error = classify(e), e
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001
                error = e
                result = f"NOT-PEP249:{type(e).__name__}"
                self.run.violate(
                    f"{self.driver}:aio:{kind}: {type(e).__name__}: {e}\n{traceback.format_exc()}"
                )
            finally:
                self.run.ended(self.wid)
            self.run.outcome(self.driver, f"aio:{kind}", result, error)
            if result != "ok" or self.rng.random() < 0.05:
                await self.drop()
        await self.drop()

    async def point(self, cn: Any) -> None:
        i = self.rng.randrange(KV_ROWS)
        v = await cn.fetchval("SELECT v FROM chaos_kv WHERE id = ?", i, timeout=10)
        if v != f"v{i}":
            self.run.violate(f"{self.driver}: aio point read of {i} gave {v!r}")

    async def stream(self, cn: Any) -> None:
        cur = await cn.execute(f"SELECT id, name FROM peer.mixed_{STREAM_ROWS}", timeout=10)
        n = 0
        while batch := await cur.fetchmany(500, timeout=10):
            n += len(batch)
        if n != STREAM_ROWS:
            self.run.violate(f"{self.driver}: aio streaming read gave {n} rows of {STREAM_ROWS}")

    async def _txn(self, cn: Any, rows: list[tuple[str, int, str]], op: str, many: bool) -> None:
        await cn.set_autocommit(False)
        try:
            cur = cn.cursor()
            if many:
                await cur.executemany(
                    "INSERT INTO chaos_ledger (op, k, payload) VALUES (?, ?, ?)", rows
                )
            else:
                for r in rows:
                    await cur.execute(
                        "INSERT INTO chaos_ledger (op, k, payload) VALUES (?, ?, ?)", *r, timeout=10
                    )
            await cn.commit()
        except BaseException:
            self.run.record(op, "failed", len(rows))
            raise
        self.run.record(op, "committed", len(rows))
        await cn.set_autocommit(True)

    async def txn(self, cn: Any) -> None:
        op = f"a{self.driver[:2]}{self.wid}-{uuid.uuid4().hex[:12]}"
        await self._txn(cn, ledger_rows(op, self.rng.randint(1, 3)), op, many=False)

    async def executemany(self, cn: Any) -> None:
        op = f"a{self.driver[:2]}{self.wid}-{uuid.uuid4().hex[:12]}"
        await self._txn(cn, ledger_rows(op, self.rng.randint(5, 40)), op, many=True)

    async def bulk_arrow(self, cn: Any) -> None:
        op = f"a{self.driver[:2]}{self.wid}-{uuid.uuid4().hex[:12]}"
        rows = ledger_rows(op, self.rng.randint(10, 200))
        table = pa.table({c: list(v) for c, v in zip(["op", "k", "payload"], zip(*rows))})
        try:
            await cn.cursor().bulkcopy_arrow("chaos_ledger", table)
        except BaseException:
            self.run.record(op, "failed", len(rows))
            raise
        self.run.record(op, "committed", len(rows))

    async def timeout(self, cn: Any) -> None:
        await cn.fetchval(
            f"SELECT COUNT(*) FROM chaos_kv {STALL}", timeout=self.rng.uniform(0.05, 0.5)
        )

    async def task_cancel(self, cn: Any) -> None:
        task = asyncio.ensure_future(cn.fetchval(f"SELECT COUNT(*) FROM chaos_kv {STALL}"))
        await asyncio.sleep(self.rng.uniform(0, 0.3))
        task.cancel()
        try:
            n = await task
            if n != KV_ROWS:
                self.run.violate(f"{self.driver}: a cancelled aio count gave {n}")
        except asyncio.CancelledError:
            if asyncio.current_task().cancelling():  # type: ignore[union-attr]
                raise
            # The task's own cancel: its connection stays usable (aio cancels the call).


# ---------------------------------------------------------------------------------------------
# Process resources.


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def admin_connect(connstr: str) -> ferrodbc.Connection:
    policy = ferrodbc.RetryPolicy(attempts=20, base_delay=0.05, max_delay=0.5, total_timeout=60)
    return ferrodbc.connect(connstr, autocommit=True, timeout=10, retry=policy, pooling=False)


def admin(connstr: str, sql: str, *params: Any, tries: int = 20) -> Any:
    """A statement that must get through the chaos (retried on a fresh connection)."""
    for i in range(tries):
        try:
            cn = admin_connect(connstr)
            try:
                cur = cn.cursor().execute(sql, *params)
                return cur.fetchall() if cur.description else None
            finally:
                cn.close()
        except ferrodbc.Error:
            if i == tries - 1:
                raise
            time.sleep(0.05)
    return None


def setup(connstr: str) -> None:
    cn = admin_connect(connstr)
    cur = cn.cursor()
    cur.execute("CREATE TABLE chaos_kv (id int PRIMARY KEY, v nvarchar(40))")
    cur.executemany("INSERT INTO chaos_kv VALUES (?, ?)", [(i, f"v{i}") for i in range(KV_ROWS)])
    cur.execute(
        "CREATE TABLE chaos_ledger (op nvarchar(40) NOT NULL, k int NOT NULL, payload nvarchar(80))"
    )
    cn.close()


def check_ledger(run: Run, connstr: str) -> dict[str, int]:
    rows = admin(connstr, "SELECT op, COUNT(*), COUNT(DISTINCT k) FROM chaos_ledger GROUP BY op")
    found = {op: (n, distinct) for op, n, distinct in rows}
    books: Counter[str] = Counter()
    for op, (status, n) in run.ledger.items():
        have, distinct = found.pop(op, (0, 0))
        books[status] += 1
        if status == "committed":
            books["committed_rows"] += n
            if have < n:
                books["lost"] += 1
                run.violate(f"transaction {op} was committed with {n} rows, {have} are stored")
            elif have > n or distinct != n:
                books["duplicated"] += 1
                run.violate(f"transaction {op} was committed with {n} rows, {have} are stored")
        elif have:
            books["failed_but_stored"] += 1
            run.violate(f"transaction {op} was seen {status}, yet {have} of its rows are stored")
    for op, (have, _) in found.items():
        books["phantom"] += 1
        run.violate(f"{have} rows of {op}, which no call reported, are stored")
    return dict(books)


def check_pool(run: Run, connstrs: list[str]) -> dict[str, int]:
    """Every parked connection must work: take as many as are parked, run a statement on each."""
    parked = sum(n for _, n in ferrodbc.pool_status())
    held, bad = [], 0
    for cs in connstrs:
        for _ in range(parked):
            try:
                cn = ferrodbc.connect(cs, autocommit=True, timeout=10)
                held.append(cn)
                if cn.cursor().execute("SELECT 1").fetchval() != 1:
                    bad += 1
            except ferrodbc.Error as e:
                bad += 1
                run.violate(f"a pooled connection failed: {e}")
    for cn in held:
        cn.close()
    ferrodbc.clear_pool()
    return {"parked": parked, "broken": bad}


def peer_counts(peer: tdspeer.Peer, timeout: float = 15.0) -> dict[str, int]:
    """The counts the peer printed at the last pause (its stderr is read by another thread,
    behind a line per dropped session: wait for the line to come through)."""
    until = time.monotonic() + timeout
    while True:
        for line in reversed(peer.log().splitlines()):
            if line.startswith("tds-peer: chaos {"):
                counts = json.loads(line.split("chaos ", 1)[1])
                if counts.get("requests") or time.monotonic() > until:
                    return counts
                break
        if time.monotonic() > until:
            return {}
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60, help="how long the load runs")
    ap.add_argument("--drivers", default="msodbcsql,freetds")
    ap.add_argument("--threads", type=int, default=3, help="threads per driver")
    ap.add_argument("--tasks", type=int, default=3, help="asyncio tasks per driver")
    ap.add_argument("--rate", type=float, default=0.04, help="fault probability per request")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument(
        "--op-limit", type=float, default=60, help="seconds before a call counts as hung"
    )
    ap.add_argument("--rss-slack-mb", type=float, default=48)
    ap.add_argument("--json", help="write the report's data here")
    a = ap.parse_args(argv)
    seed = a.seed if a.seed is not None else random.randrange(2**31)
    drivers = [d for d in a.drivers.split(",") if d]
    run = Run(a.op_limit)
    started = time.monotonic()
    peer = tdspeer.start_peer(extra_args=["--chaos", f"{a.rate},seed={seed},stall=4"])
    report: dict[str, Any] = {
        "seed": seed,
        "seconds": a.seconds,
        "drivers": drivers,
        "rate": a.rate,
    }
    try:
        connstrs = {d: tdspeer.conn_str(peer, d) for d in drivers}
        first = connstrs[drivers[0]]
        admin(first, "SELECT 1 /* chaos:pause */")
        setup(first)
        # Warm both drivers once (their first load maps libraries: not a leak).
        for cs in connstrs.values():
            admin(cs, "SELECT COUNT(*) FROM chaos_kv")
        ferrodbc.clear_pool()
        fds0, rss0 = open_fds(), rss_mb()
        admin(first, "SELECT 1 /* chaos:resume */")

        workers: list[threading.Thread] = []
        wid = 0
        for d in drivers:
            for _ in range(a.threads):
                w = SyncWorker(run, wid, d, connstrs[d], seed + wid)
                workers.append(
                    threading.Thread(target=w.loop, name=f"chaos-{d}-{wid}", daemon=True)
                )
                wid += 1
        aws = []
        for d in drivers:
            for _ in range(a.tasks):
                aws.append(AsyncWorker(run, wid, d, connstrs[d], seed + wid))
                wid += 1

        def aio_main() -> None:
            async def all_tasks() -> None:
                await asyncio.gather(*(w.loop() for w in aws))

            asyncio.run(all_tasks())

        workers.append(threading.Thread(target=aio_main, name="chaos-aio", daemon=True))
        for t in workers:
            t.start()
        samples: list[tuple[float, float, int]] = []
        deadline = time.monotonic() + a.seconds
        hung: list[str] = []
        while time.monotonic() < deadline and not hung:
            time.sleep(1)
            samples.append((time.monotonic() - started, rss_mb(), open_fds()))
            hung = run.overdue()
        run.stop.set()
        end_by = time.monotonic() + a.op_limit
        for t in workers:
            t.join(timeout=max(0.0, end_by - time.monotonic()))
        alive = [t.name for t in workers if t.is_alive()]
        hung += run.overdue()
        if alive or hung:
            for h in hung:
                run.violate(f"hang: {h}")
            run.violate(f"threads still running {a.op_limit:.0f} s after the stop: {alive}")
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        admin(first, "SELECT 1 /* chaos:pause */")
        report["faults"] = peer_counts(peer)
        if not alive:
            report["ledger"] = check_ledger(run, first)
            report["pool"] = check_pool(run, list(connstrs.values()))
        # Steady state: from a third of the run to its end (the first moments load libraries
        # and fill caches).
        steady = [s for s in samples if s[0] >= samples[-1][0] / 3] if samples else []
        rss_growth = (steady[-1][1] - steady[0][1]) if len(steady) > 1 else 0.0
        fds1 = open_fds()
        report["resources"] = {
            "rss_mb_before": round(rss0, 1),
            "rss_mb_steady_start": round(steady[0][1], 1) if steady else None,
            "rss_mb_end": round(rss_mb(), 1),
            "rss_mb_max": round(max((s[1] for s in samples), default=rss0), 1),
            "rss_mb_steady_growth": round(rss_growth, 1),
            "fds_before": fds0,
            "fds_max": max((s[2] for s in samples), default=fds0),
            "fds_after": fds1,
        }
        if rss_growth > a.rss_slack_mb:
            run.violate(
                f"RSS grew {rss_growth:.1f} MB in the steady state (slack {a.rss_slack_mb})"
            )
        if not alive and fds1 > fds0 + 2:
            run.violate(
                f"{fds1 - fds0} file descriptors more than before the load, with every connection closed"
            )
    finally:
        if not run.violations or not [
            t for t in threading.enumerate() if t.name.startswith("chaos-")
        ]:
            peer.close()
    ops: Counter[str] = Counter()
    for key, c in run.outcomes.items():
        ops[key.split(":", 1)[0]] += sum(c.values())
    report["operations"] = {k: dict(v) for k, v in sorted(run.outcomes.items())}
    report["operations_total"] = sum(ops.values())
    report["cancels_sent"] = run.cancels_sent
    report["error_samples"] = dict(sorted(run.samples.items()))
    report["violations"] = run.violations
    report["wall_s"] = round(time.monotonic() - started, 1)
    print_report(report)
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1))
    code = 1 if run.violations else 0
    if [t for t in threading.enumerate() if t.name.startswith("chaos-") and t.is_alive()]:
        sys.stdout.flush()
        os._exit(code or 1)  # a hung driver call cannot be joined
    return code


def print_report(r: dict[str, Any]) -> None:
    print(
        f"== chaos: {r['wall_s']} s wall, load {r['seconds']:.0f} s, drivers {','.join(r['drivers'])}, "
        f"fault rate {r['rate']}, seed {r['seed']}"
    )
    print(f"operations: {r['operations_total']} (cancels sent: {r['cancels_sent']})")
    for key, c in r["operations"].items():
        total = sum(c.values())
        parts = ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: -kv[1]))
        print(f"  {key:28} {total:6}  {parts}")
    print("errors (first text of each):")
    for k, v in r["error_samples"].items():
        print(f"  {k}: {v}")
    print(f"faults injected by the peer: {r.get('faults')}")
    print(f"ledger: {r.get('ledger')}")
    print(f"pool: {r.get('pool')}")
    print(f"resources: {r.get('resources')}")
    if r["violations"]:
        print(f"VIOLATIONS ({len(r['violations'])}):")
        for v in r["violations"]:
            print("  " + v.replace("\n", "\n    "))
    else:
        print("violations: none")


if __name__ == "__main__":
    sys.exit(main())
