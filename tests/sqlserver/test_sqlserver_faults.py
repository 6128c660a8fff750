"""Network and server faults, through Driver 18 and FreeTDS: a link dropped mid-stream, a stall
past the query timeout, a session killed mid-transaction (the peer's `fault:kill`, `KILL <spid>`
from another session, and the peer process itself SIGKILLed), pooled sessions killed while
parked. Each ends in the right exception within its bound (the suite's per-test deadline, and
bounded joins), `connection.broken` set, the pool never handing a broken session on, the next
connect working, and no uncommitted row applied (checked on a fresh connection)."""

from __future__ import annotations

import threading

import pytest

import ferrodbc

from sqlserver_support import require_peer_binary, synthetic, tdspeer, tname


def count(conn, t) -> int:
    return conn.cursor().execute(f"SELECT COUNT(*) FROM {t}").fetchval()


def spid(conn) -> int:
    return conn.cursor().execute("SELECT @@SPID").fetchval()


@pytest.fixture
def committed_table(connect):
    """A table holding one committed row (1)."""
    t = tname("f")
    admin = connect()
    admin.cursor().execute(f"CREATE TABLE {t} (x INT)")
    admin.cursor().execute(f"INSERT INTO {t} VALUES (1)")
    return t


def write_uncommitted(conn, t, n=50) -> None:
    conn.cursor().executemany(f"INSERT INTO {t} VALUES (?)", [(i,) for i in range(100, 100 + n)])
    assert count(conn, t) == n + 1  # its own uncommitted rows


# --- dropped link ----------------------------------------------------------------------------------

def test_dropped_link_marks_broken_and_the_pool_drops_it(connect, driver):
    """drop_after=500 with pooling on: OperationalError after at most 500 rows, `broken` set,
    close() does not park it, and the next connect (same string) gets a working new session."""
    conn = connect()
    assert conn.broken is False
    before = spid(conn)
    cur = conn.cursor().execute("SELECT * FROM peer.mixed_100000 /* fault:drop_after=500 */")
    expected = [tuple(r) for r in synthetic.rows("mixed", 500)]
    got = []
    with pytest.raises(ferrodbc.OperationalError):
        while batch := cur.fetchmany(100):
            got += [tuple(r) for r in batch]
    assert got == expected[: len(got)]
    assert conn.broken is True
    conn.close()
    assert conn.broken is False and conn.closed
    nxt = connect()
    assert spid(nxt) != before
    assert nxt.cursor().execute("SELECT 9").fetchval() == 9 and nxt.broken is False


def test_error_token_mid_stream_is_not_a_broken_link(conn, driver):
    cur = conn.cursor().execute("SELECT * FROM peer.int_nvarchar_1000 /* fault:error_after=10 */")
    with pytest.raises(ferrodbc.DatabaseError) as ei:
        cur.fetchall()
    assert ei.value.native_error == 50000 and not isinstance(ei.value, ferrodbc.OperationalError)
    assert conn.broken is False
    assert cur.execute("SELECT 4").fetchval() == 4


# --- stalls past the timeout -----------------------------------------------------------------------

@pytest.mark.parametrize("autocommit", [True, False])
def test_write_stalled_past_the_timeout_is_not_applied(connect, driver, committed_table, autocommit):
    """An INSERT the server sits on (stall=5) with a 1 s query timeout: HYT00 OperationalError,
    the server cancels it unrun (ATTENTION), the connection stays usable (not broken), and a
    fresh connection sees none of it, nor (manual commit, rolled back) the rows before it."""
    t = committed_table
    w = connect(autocommit=autocommit)
    if not autocommit:
        write_uncommitted(w, t, 5)
    w.timeout = 1
    with pytest.raises(ferrodbc.OperationalError) as ei:
        w.cursor().execute(f"INSERT INTO {t} VALUES (99) /* fault:stall=5 */")
    assert ei.value.sqlstate == "HYT00"
    assert w.broken is False
    w.timeout = 0
    if not autocommit:
        w.rollback()
    assert count(connect(), t) == 1
    assert w.cursor().execute("SELECT 2").fetchval() == 2


# --- sessions killed mid-transaction -----------------------------------------------------------------

def assert_killed_transaction_not_applied(connect, w, t) -> None:
    assert w.broken is True
    with pytest.raises(ferrodbc.OperationalError):
        w.commit()
    with pytest.raises(ferrodbc.OperationalError):
        w.cursor().execute("SELECT 1")
    w.close()
    fresh = connect()
    assert count(fresh, t) == 1
    assert fresh.broken is False


def test_session_killed_mid_transaction_by_the_server(connect, driver, committed_table):
    """fault:kill=1: the server closes the session instead of running the statement."""
    w = connect(autocommit=False)
    write_uncommitted(w, committed_table)
    with pytest.raises(ferrodbc.OperationalError):
        w.cursor().execute("SELECT 1 /* fault:kill=1 */")
    assert_killed_transaction_not_applied(connect, w, committed_table)


def test_session_killed_mid_transaction_by_kill_spid(connect, driver, committed_table):
    """KILL <spid> from another session, between two statements of a transaction."""
    w = connect(autocommit=False)
    write_uncommitted(w, committed_table)
    connect().cursor().execute(f"KILL {spid(w)}")
    with pytest.raises(ferrodbc.OperationalError):
        w.cursor().execute(f"INSERT INTO {committed_table} VALUES (7)")
    assert_killed_transaction_not_applied(connect, w, committed_table)


def test_kill_errors_are_sql_servers(conn, driver):
    with pytest.raises(ferrodbc.ProgrammingError) as ei:
        conn.cursor().execute(f"KILL {spid(conn)}")
    assert ei.value.native_error == 6104
    with pytest.raises(ferrodbc.ProgrammingError) as ei:
        conn.cursor().execute("KILL 32000")
    assert ei.value.native_error == 6106


def test_a_parked_session_killed_is_never_handed_on(connect, driver):
    """A pooled session the server ends while it is parked: the pool checks it (a round trip)
    and hands on a new session instead. Only Driver 18 sessions are pooled; a FreeTDS session is
    disconnected on close, so its SPID is gone or going (6106, or a KILL of a session ending)."""
    killer = connect()
    a = connect()
    old = spid(a)
    a.close()
    if driver == "msodbcsql":
        killer.cursor().execute(f"KILL {old}")
    else:
        # Disconnected on close; the server may not have noticed yet (then KILL ends it).
        try:
            killer.cursor().execute(f"KILL {old}")
        except ferrodbc.ProgrammingError as e:
            assert e.native_error == 6106
    b = connect()
    assert b.broken is False
    assert spid(b) != old
    assert b.cursor().execute("SELECT 11").fetchval() == 11


# --- the server process killed ---------------------------------------------------------------------

def test_server_killed_mid_transaction_and_mid_stream(driver, tmp_path):
    """The peer process SIGKILLed while one connection holds an uncommitted transaction and
    another streams a large result: both get OperationalError (bounded joins), both are broken;
    a peer restarted on the same database file has only the committed row, and connects work."""
    require_peer_binary()
    db = tmp_path / "killed.sqlite3"
    t = tname("k")
    with tdspeer.start_peer(extra_args=["--db", str(db)]) as p:
        cs = tdspeer.conn_str(p, driver)
        admin = ferrodbc.connect(cs, autocommit=True, timeout=10)
        admin.cursor().execute(f"CREATE TABLE {t} (x INT)")
        admin.cursor().execute(f"INSERT INTO {t} VALUES (1)")
        w = ferrodbc.connect(cs, autocommit=False, timeout=10)
        write_uncommitted(w, t)
        reader = ferrodbc.connect(cs, autocommit=True, timeout=10)
        cur = reader.cursor().execute("SELECT * FROM peer.mixed_1000000")
        assert cur.fetchone() is not None
        outcome: list[BaseException | None] = []

        def stream():
            try:
                while cur.fetchmany(5000):
                    pass
                outcome.append(None)
            except BaseException as e:  # noqa: BLE001  (reported by the assert below)
                outcome.append(e)

        th = threading.Thread(target=stream, daemon=True)
        th.start()
        p.proc.kill()
        p.proc.wait(10)
        th.join(60)
        assert not th.is_alive(), "the fetch did not end after the server died"
        assert len(outcome) == 1 and isinstance(outcome[0], ferrodbc.OperationalError), outcome
        assert reader.broken is True
        with pytest.raises(ferrodbc.OperationalError):
            w.cursor().execute(f"INSERT INTO {t} VALUES (2)")
        assert w.broken is True
        with pytest.raises(ferrodbc.OperationalError):
            w.commit()
        for c in (w, reader, admin):
            c.close()
    with tdspeer.start_peer(extra_args=["--db", str(db)]) as p2:
        fresh = ferrodbc.connect(tdspeer.conn_str(p2, driver), autocommit=True, timeout=10)
        assert count(fresh, t) == 1
        fresh.close()
