"""Concurrency through Driver 18 and FreeTDS, at the level ferrodbc declares: `threadsafety = 1`
(threads may share the module, not connections). Eight threads with their own connections get
exact results; a connection shared anyway never crashes or mixes rows (each call either returns
the right rows or raises ferrodbc.Error); the GIL is released during driver calls, proven by a
pure-Python counter thread that keeps advancing during a long fetch and a long execute. No timed
assertion: progress is counted in loop iterations, and every wait is a bounded join."""

from __future__ import annotations

import threading
import time

import ferrodbc

from sqlserver_support import Counter, synthetic, tdspeer


def progress_while(action) -> tuple[int, object]:
    """(loop iterations another thread made while `action` ran, its result)."""
    counter = Counter()
    counter.start()
    try:
        while counter.count == 0:
            time.sleep(0.001)
        before = counter.count
        result = action()
        return counter.count - before, result
    finally:
        counter.stop.set()
        counter.join(10)


def yardstick() -> int:
    """The counter's progress while this thread sleeps 0.1 s (GIL released): a call that held the
    GIL throughout would leave the counter at most a switch interval or two, far below this."""
    n, _ = progress_while(lambda: time.sleep(0.1))
    assert n > 0
    return n


def test_threadsafety_is_1():
    assert ferrodbc.threadsafety == 1


def test_eight_threads_with_their_own_connections(peer, driver):
    expected = [tuple(r) for r in synthetic.rows("mixed", 3000)]
    cs = tdspeer.conn_str(peer, driver)
    results: dict[int, object] = {}

    def work(i: int) -> None:
        try:
            with ferrodbc.connect(cs, autocommit=True, timeout=10) as cn:
                cur = cn.cursor()
                ok = True
                for k in range(3):
                    ok &= [tuple(r) for r in cur.execute("SELECT * FROM peer.mixed_3000").fetchall()] == expected
                    ok &= cur.execute("SELECT ?", i * 100 + k).fetchval() == i * 100 + k
                results[i] = ok
        except Exception as e:  # noqa: BLE001  (reported by the assert)
            results[i] = e

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert results == {i: True for i in range(8)}


def test_a_connection_shared_by_threads_never_crashes_or_mixes_rows(conn, driver):
    """Beyond the declared level: four threads, each with its own cursor on one connection.
    Without MARS the drivers refuse overlapping statements ("connection is busy"), which is an
    Error; what must never happen is a crash, a hang, or another statement's rows."""
    outcomes: list[str] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        cur = conn.cursor()
        for k in range(15):
            n = 50 + i * 10 + k
            try:
                rows = cur.execute(f"SELECT * FROM peer.int_nvarchar_{n}").fetchall()
                got = "exact" if [tuple(r) for r in rows] == list(synthetic.rows("int_nvarchar", n)) else "WRONG"
            except ferrodbc.Error:
                got = "error"
            with lock:
                outcomes.append(got)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert len(outcomes) == 60 and "WRONG" not in outcomes
    assert "exact" in outcomes
    assert conn.broken is False


def test_gil_released_during_a_long_fetch(conn, driver):
    """fetchall of 200,000 rows with the server pausing 0.5 s mid-stream (after 20,000 rows, so
    inside a SQLFetch, on this thread or the prefetch thread this one waits for): the counter
    thread advances more than in 0.1 s of sleep. Without the pause the fetch itself proves
    little: decoding holds the GIL and overlaps the driver's next fetch, so the time spent in
    driver calls alone shrinks as the fetch gets faster (and on a loaded machine it fell below
    the 0.1 s yardstick)."""
    baseline = yardstick()
    cur = conn.cursor().execute("SELECT * FROM peer.mixed_200000 /* fault:pause_after=20000 */")
    progress, rows = progress_while(cur.fetchall)
    assert len(rows) == 200_000
    assert progress > baseline, f"counter advanced {progress} during the fetch, {baseline} in 0.1 s of sleep"


def test_gil_released_during_a_long_execute(conn, driver):
    """An execute the server answers after 1.5 s (stall): the counter advances meanwhile."""
    baseline = yardstick()
    progress, _ = progress_while(lambda: conn.cursor().execute("SELECT * FROM peer.int_nvarchar_10 /* fault:stall=1.5 */"))
    assert progress > baseline, f"counter advanced {progress} during the execute, {baseline} in 0.1 s of sleep"


def test_gil_released_while_a_new_timeout_waits_for_a_prefetch(conn, driver):
    """A new query timeout is put on the statement at the next execute, after the prefetch still
    fetching ahead has finished. Here that prefetch waits on the server's 2 s pause: fetchmany
    reads the first three row arrays (32 + 256 + 2,048 rows), the third came back full, so the
    next array (rows 2,336..6,432) is being fetched on the prefetch thread and stops at row 3,000.
    The execute that applies the new timeout waits for it with the GIL released: the counter
    thread keeps advancing."""
    baseline = yardstick()
    cur = conn.cursor().execute("SELECT * FROM peer.mixed_20000 /* fault:pause_after=3000 fault:pause=2 */")
    ferrodbc.reset_counters()
    assert len(cur.fetchmany(2336)) == 2336
    assert ferrodbc.counters()["prefetches"] == 1, "the prefetch this test waits on was not started"
    conn.timeout = 30
    progress, _ = progress_while(lambda: cur.execute("SELECT 1 AS one"))
    assert cur.fetchall() == [(1,)]
    assert progress > baseline, f"counter advanced {progress} while the execute waited, {baseline} in 0.1 s of sleep"


def test_gil_released_while_closing_the_connection_waits_for_a_prefetch(connect, driver):
    """Closing a connection frees its cursors' statements, each after its running prefetch: the
    prefetch here waits on the server's 2 s pause, and the counter thread keeps advancing."""
    baseline = yardstick()
    conn = connect()
    cur = conn.cursor().execute("SELECT * FROM peer.mixed_20000 /* fault:pause_after=3000 fault:pause=2 */")
    ferrodbc.reset_counters()
    assert len(cur.fetchmany(2336)) == 2336
    assert ferrodbc.counters()["prefetches"] == 1, "the prefetch this test waits on was not started"
    progress, _ = progress_while(conn.close)
    assert cur.closed
    assert progress > baseline, f"counter advanced {progress} while close waited, {baseline} in 0.1 s of sleep"
