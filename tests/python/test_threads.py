"""Threads: a long driver call releases the GIL, queries on separate connections overlap,
cursor.cancel() from another thread stops a running query, and no mix of threads, callbacks and
close() deadlocks. Every wait is bounded (scenarios that could hang run in a child process with a
timeout) so a regression fails a test instead of hanging the suite.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

import ferrodbc

SLEEP_SQL = "SELECT pg_sleep(10) AS slept"


class Counter(threading.Thread):
    """Increments `count` in a pure-Python loop until stopped: it only advances with the GIL."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.count = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.count += 1


def progress_while(action) -> int:
    counter = Counter()
    counter.start()
    try:
        time.sleep(0.05)  # let it get going
        before = counter.count
        action()
        return counter.count - before
    finally:
        counter.stop.set()
        counter.join(5)


def test_a_long_query_releases_the_gil(pg_conn):
    """Another Python thread keeps running while pg_sleep(1) runs in this one.

    The yardstick is the counter's own progress during 0.2 s of time.sleep (which releases the
    GIL): holding the GIL for the whole query would leave at most a switch interval or two."""
    yardstick = progress_while(lambda: time.sleep(0.2))
    assert yardstick > 0
    cur = pg_conn.cursor()
    during_query = progress_while(lambda: cur.execute("SELECT pg_sleep(1)").fetchall())
    assert during_query > yardstick, (
        f"the other thread advanced {during_query} during a 1 s query but {yardstick} during 0.2 s "
        "of sleep: the GIL was held"
    )


def wait_until_running(monitor, needle: str, timeout: float = 10.0) -> bool:
    """Whether a backend other than the monitor is running a query containing `needle`."""
    deadline = time.monotonic() + timeout
    cur = monitor.cursor()
    while time.monotonic() < deadline:
        n = cur.execute(
            "SELECT COUNT(*) FROM pg_stat_activity "
            "WHERE state = 'active' AND pid <> pg_backend_pid() AND position(? in query) > 0",
            needle,
        ).fetchval()
        if n:
            return True
        time.sleep(0.05)
    return False


def run_and_cancel(pg):
    """Run SLEEP_SQL in a worker thread, cancel it from this one once the server runs it.
    Returns (exception raised in the worker or None, seconds the worker took, conn, cursor)."""
    conn = pg.connect()
    monitor = pg.connect(autocommit=True)
    cur = conn.cursor()
    outcome: dict = {}

    def worker():
        start = time.monotonic()
        try:
            cur.execute(SLEEP_SQL).fetchall()
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            outcome["error"] = e
        outcome["seconds"] = time.monotonic() - start

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    try:
        assert wait_until_running(monitor, "pg_sleep(10)"), "the query never started"
        cur.cancel()
        thread.join(15)
        assert not thread.is_alive(), "cancel() did not stop the query within 15 s"
    finally:
        monitor.close()
    return outcome.get("error"), outcome["seconds"], conn, cur


def test_cancel_from_another_thread_stops_a_running_query(pg):
    error, seconds, conn, cur = run_and_cancel(pg)
    try:
        assert error is not None, "pg_sleep(10) finished instead of being cancelled"
        assert isinstance(error, ferrodbc.OperationalError)
        assert seconds < 8, f"took {seconds:.1f} s: the cancel came late or was ignored"
        assert error.sqlstate in ("57014", "HY008")
        # The cursor and the connection stay usable after a cancel.
        conn.rollback()
        assert cur.execute("SELECT 2").fetchval() == 2
    finally:
        conn.close()


def test_a_cancelled_query_raises_operational_error(pg):
    error, _, conn, _ = run_and_cancel(pg)
    conn.close()
    assert isinstance(error, ferrodbc.OperationalError), f"{type(error).__name__}: {error}"


def test_cancel_with_nothing_running_is_harmless(conn):
    cur = conn.cursor()
    cur.cancel()  # no statement yet
    cur.execute("SELECT 1")
    assert cur.fetchall() == [(1,)]
    cur.cancel()  # nothing running
    assert cur.execute("SELECT 3").fetchval() == 3


def test_query_timeout_stops_a_long_query(pg_conn):
    """connection.timeout (seconds) bounds each execute: a timeout is an OperationalError
    (psqlODBC reports the server's 57014, like a cancel)."""
    pg_conn.timeout = 1
    assert pg_conn.timeout == 1
    cur = pg_conn.cursor()
    start = time.monotonic()
    with pytest.raises(ferrodbc.OperationalError):
        cur.execute("SELECT pg_sleep(10)").fetchall()
    assert time.monotonic() - start < 8
    pg_conn.rollback()
    pg_conn.timeout = 0
    assert cur.execute("SELECT 1").fetchval() == 1


def test_connections_can_be_used_from_several_threads_at_once(peer, table, conn):
    """threadsafety 1: threads may share the module; each uses its own connection."""
    conn.cursor().execute(f"CREATE TABLE {table} (id INTEGER)")
    conn.cursor().executemany(f"INSERT INTO {table} (id) VALUES (?)", [(i,) for i in range(500)])
    conn.commit()
    results: list = []
    errors: list = []

    def reader():
        try:
            c = peer.connect()
            try:
                for _ in range(5):
                    results.append(c.cursor().execute(f"SELECT SUM(id) FROM {table}").fetchval())
            finally:
                c.close()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    assert results == [sum(range(500))] * 20


def test_a_cursor_shared_by_threads_never_crashes_or_mixes_rows(peer, conn, table):
    """threadsafety 1 does not promise sharing cursors, but misuse must not crash: each call is
    serialised, so every fetched row is a whole, valid row."""
    conn.cursor().execute(f"CREATE TABLE {table} (id INTEGER, label VARCHAR(20))")
    conn.cursor().executemany(
        f"INSERT INTO {table} (id, label) VALUES (?, ?)", [(i, f"v{i}") for i in range(300)]
    )
    conn.commit()
    cur = conn.cursor()
    bad: list = []

    def hammer():
        for _ in range(40):
            try:
                cur.execute(f"SELECT id, label FROM {table}")
                rows = cur.fetchmany(50) + cur.fetchall()
            except ferrodbc.ProgrammingError:
                continue  # e.g. fetch after another thread's execute of a statement: allowed
            bad.extend(r for r in rows if r.label != f"v{r.id}")

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert bad == []


def test_closing_the_connection_while_another_thread_fetches(peer, conn, table):
    """The fetching thread gets ProgrammingError (closed), never a crash or a hang."""
    conn.cursor().execute(f"CREATE TABLE {table} (id INTEGER)")
    conn.cursor().executemany(f"INSERT INTO {table} (id) VALUES (?)", [(i,) for i in range(5000)])
    conn.commit()
    other = peer.connect()
    cur = other.cursor()
    cur.execute(f"SELECT a.id FROM {table} a")
    outcome: dict = {"rows": 0}
    started = threading.Event()

    def fetcher():
        try:
            while True:
                rows = cur.fetchmany(5)
                started.set()
                if not rows:
                    break
                outcome["rows"] += len(rows)
                time.sleep(0.001)
        except ferrodbc.Error as e:
            outcome["error"] = e
        finally:
            started.set()

    thread = threading.Thread(target=fetcher)
    thread.start()
    assert started.wait(10)
    other.close()
    thread.join(30)
    assert not thread.is_alive()
    assert other.closed and cur.closed
    if "error" in outcome:
        assert isinstance(outcome["error"], ferrodbc.ProgrammingError)
        assert "closed" in str(outcome["error"])
    else:
        assert outcome["rows"] == 5000, "finished before the close: every row was read"


def test_queries_on_separate_connections_run_in_parallel(pg):
    """No process-wide lock serialises driver calls: four 0.5 s queries on four connections
    in four threads overlap (serialised they would take at least 2 s)."""
    conns = [pg.connect() for _ in range(4)]
    try:
        errors: list = []

        def run(c):
            try:
                c.cursor().execute("SELECT pg_sleep(0.5)").fetchall()
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=run, args=(c,)) for c in conns]
        start = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        elapsed = time.monotonic() - start
        assert not errors
        assert elapsed < 1.9, f"4 x 0.5 s took {elapsed:.2f} s: the queries ran one after another"
    finally:
        for c in conns:
            c.close()


def test_cancel_stops_a_long_sqlite_query(sqlite_conn):
    """sqlite3odbc cancels through sqlite3_interrupt: the query stops with OperationalError."""
    cur = sqlite_conn.cursor()
    sql = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000) "
        "SELECT COUNT(*) FROM n"
    )
    outcome: dict = {}

    def worker():
        try:
            outcome["rows"] = cur.execute(sql).fetchall()
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            outcome["error"] = e

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    # Keep cancelling until it takes: a cancel that lands before the query starts does nothing.
    while thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.2)
        cur.cancel()
    thread.join(5)
    assert not thread.is_alive(), "cancel() did not stop the query"
    assert isinstance(outcome.get("error"), ferrodbc.OperationalError), outcome
    assert cur.execute("SELECT 1").fetchval() == 1


def test_closing_a_connection_while_another_thread_runs_a_query_does_not_deadlock(pg):
    """close() waits for the running call (it holds the statement) without holding the GIL, so
    the query thread can finish; both threads come back."""
    conn = pg.connect()
    cur = conn.cursor()
    outcome: dict = {}

    def worker():
        try:
            outcome["rows"] = cur.execute("SELECT pg_sleep(1)").fetchall()
        except ferrodbc.Error as e:
            outcome["error"] = e

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    time.sleep(0.3)
    closer = threading.Thread(target=conn.close, daemon=True)
    closer.start()
    closer.join(20)
    thread.join(20)
    assert not closer.is_alive() and not thread.is_alive(), "deadlock between close() and a query"
    assert conn.closed
    if "error" in outcome:
        assert isinstance(outcome["error"], ferrodbc.ProgrammingError)
    else:
        assert len(outcome["rows"]) == 1, "the query finished before the close"



def run_child(script: str, connstr: str, timeout: float = 8) -> str:
    """Run `script` in a child process (a hang it tests for fails the test, not the suite):
    its standard output, once it exited with 0."""
    proc = subprocess.run(
        [sys.executable, "-c", script, connstr], capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


REENTRANT_CONVERTER_SCRIPT = r"""
import sys
import ferrodbc

conn = ferrodbc.connect(sys.argv[1])
cur = conn.cursor()
cur.execute("CREATE TABLE t (i INTEGER)")
cur.execute("INSERT INTO t VALUES (1)")
conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda raw: cur.rowcount)
try:
    print("rows", cur.execute("SELECT i FROM t").fetchall())
except ferrodbc.ProgrammingError as e:
    print("ProgrammingError", e)
"""


def test_a_converter_touching_its_own_cursor_does_not_hang(sqlite):
    """Run in a child process: a regression would otherwise hang the whole suite."""
    stdout = run_child(REENTRANT_CONVERTER_SCRIPT, sqlite.connstr)
    assert stdout.startswith(("rows", "ProgrammingError")), stdout


CLOSED_WHILE_RUNNING_SCRIPT = r"""
import sys, threading, time
import ferrodbc

conn = ferrodbc.connect(sys.argv[1])
cur = conn.cursor()
worker = threading.Thread(target=lambda: cur.execute("SELECT pg_sleep(1)").fetchall())
worker.start()
time.sleep(0.3)
print("closed", cur.closed, "rowcount", cur.rowcount, flush=True)
worker.join()
print("done", flush=True)
"""


def test_reading_cursor_closed_while_another_thread_queries_does_not_deadlock(pg):
    stdout = run_child(CLOSED_WHILE_RUNNING_SCRIPT, pg.connstr)
    assert "closed False" in stdout and "done" in stdout, stdout


def test_other_cursor_getters_wait_for_a_running_query(pg, pg_conn):
    """rowcount, description and messages wait for the query thread instead of deadlocking."""
    cur = pg_conn.cursor()
    worker = threading.Thread(target=lambda: cur.execute("SELECT pg_sleep(0.5) AS s").fetchall())
    worker.start()
    monitor = pg.connect(autocommit=True)
    try:
        assert wait_until_running(monitor, "pg_sleep(0.5)")
    finally:
        monitor.close()
    assert cur.rowcount == 1  # psqlODBC's count of the SELECT's rows
    assert [d[0] for d in cur.description] == ["s"]
    assert cur.messages == []
    worker.join(10)
    assert not worker.is_alive()


def test_threads_sharing_a_connection_with_their_own_cursors(peer, conn, table):
    """Beyond threadsafety 1, but common: threads share one connection, each with its own
    cursor. Nothing crashes and every result is whole and unmixed."""
    conn.cursor().execute(f"CREATE TABLE {table} (i INTEGER, t VARCHAR(20))")
    conn.cursor().executemany(f"INSERT INTO {table} VALUES (?, ?)", [(i, f"t{i}") for i in range(500)])
    conn.commit()
    problems: list = []

    def work():
        cur = conn.cursor()
        for _ in range(50):
            try:
                rows = cur.execute(f"SELECT i, t FROM {table} ORDER BY i").fetchall()
                if len(rows) != 500 or any(r.t != f"t{r.i}" for r in rows):
                    problems.append("mixed or short result")
            except Exception as e:  # noqa: BLE001
                problems.append(repr(e))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert problems == []



def test_threads_starting_statements_at_once_on_one_connection(peer, conn, table):
    """Each round starts outside a transaction and four threads execute at the same moment.
    sqlite3odbc begins a transaction inside the first statement's execute and checks one
    connection-wide flag for it: without ferrodbc's per-connection gate for that driver, two
    threads both began one and the second failed with "cannot start a transaction within a
    transaction" (seen in 2 of 4 runs of 500 rounds, and once as a segfault under load)."""
    conn.cursor().execute(f"CREATE TABLE {table} (i INTEGER, t VARCHAR(20))")
    conn.cursor().executemany(f"INSERT INTO {table} VALUES (?, ?)", [(i, f"t{i}") for i in range(50)])
    conn.commit()
    problems: list = []
    barrier = threading.Barrier(4, action=conn.commit, timeout=60)

    def work():
        cur = conn.cursor()
        for _ in range(2000):
            barrier.wait()
            try:
                if len(cur.execute(f"SELECT i, t FROM {table}").fetchall()) != 50:
                    problems.append("short result")
            except Exception as e:  # noqa: BLE001
                problems.append(repr(e))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert problems == []

CLOSE_FROM_CONVERTER_SCRIPT = r"""
import sys
import ferrodbc

conn = ferrodbc.connect(sys.argv[1])
cur = conn.cursor()
cur.execute("CREATE TABLE t (i INTEGER)")
cur.execute("INSERT INTO t VALUES (1)")

def closing_converter(raw):
    conn.close()
    return 42

conn.add_output_converter(ferrodbc.SQL_INTEGER, closing_converter)
try:
    print("rows", cur.execute("SELECT i FROM t").fetchall(), flush=True)
except ferrodbc.Error as e:
    print(type(e).__name__, e, flush=True)
print("closed", conn.closed, flush=True)
"""


def test_closing_the_connection_from_a_converter_does_not_hang(sqlite):
    stdout = run_child(CLOSE_FROM_CONVERTER_SCRIPT, sqlite.connstr)
    assert "closed True" in stdout or "ProgrammingError" in stdout, stdout


SETTINGS_WHILE_RUNNING_SCRIPT = r"""
import sys, threading
import ferrodbc

conn = ferrodbc.connect(sys.argv[1])
cur = conn.cursor()
cur.execute("CREATE TABLE t (i INTEGER)")
cur.execute("INSERT INTO t VALUES (1)")
inside, release = threading.Event(), threading.Event()
released = []

def converter(raw):
    inside.set()
    # Not released in time: the settings below waited for this call.
    released.append(release.wait(5))
    return int.from_bytes(raw, "little")

conn.add_output_converter(ferrodbc.SQL_INTEGER, converter)
fetched = []
worker = threading.Thread(target=lambda: fetched.extend(cur.execute("SELECT i FROM t").fetchall()))
worker.start()
inside.wait(10)
# The fetch holds the cursor: its settings are read and set without waiting for it.
print("during", cur.row_factory, cur.rows_as_dicts, cur.arraysize, flush=True)
cur.row_factory = dict
print("set", cur.row_factory is dict, cur.rows_as_dicts, flush=True)
release.set()
worker.join()
print("fetched", [tuple(r) for r in fetched], "released", released, flush=True)
print("next", cur.execute("SELECT i FROM t").fetchall(), flush=True)
"""


def test_cursor_settings_never_wait_for_a_running_call(sqlite):
    """asyncio's clean-up of a cancelled call reads `row_factory` on the event loop while the
    call still runs on the worker: reading or setting it must not wait for the call (it did,
    blocking the loop until the cancel landed; with FreeTDS for ever). Run in a child process:
    a regression would hang the suite."""
    stdout = run_child(SETTINGS_WHILE_RUNNING_SCRIPT, sqlite.connstr, timeout=20)
    assert stdout.splitlines() == [
        "during None False 1",
        "set True True",
        # The running fetch keeps the shape it started with; the next result set takes dict.
        "fetched [(1,)] released [True]",
        "next [{'i': 1}]",
    ], stdout
