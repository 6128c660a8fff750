"""Driver-neutral reliability, on SQLite3 ODBC and PostgreSQL (psqlODBC): the memory limit for
LOBs (`connection.max_lob_bytes`), `connection.broken` on healthy and closed connections, the
declared `threadsafety` tested at its level (eight threads, own connections), and the GIL
released during a long fetch. The SQL Server faults (dropped links, kills, malformed streams)
are in tests/sqlserver, against the TDS peer."""

from __future__ import annotations

import threading
import time

import pytest

import ferrodbc

BIG_TEXT = "é" * 150_000 + "end"  # 300,006 bytes as UTF-16
BIG_BLOB = bytes(range(256)) * 800  # 204,800 bytes


def blob_type(peer) -> str:
    return "BYTEA" if peer.is_pg else "BLOB"


@pytest.fixture
def lob_table(peer, conn, table):
    conn.cursor().execute(f"CREATE TABLE {table} (id INTEGER, body TEXT, bin {blob_type(peer)})")
    conn.cursor().executemany(
        f"INSERT INTO {table} VALUES (?, ?, ?)",
        [(0, "small", b"s"), (1, BIG_TEXT, BIG_BLOB), (2, "after", b"a")],
    )
    conn.commit()
    return table


def test_max_lob_bytes_default_and_validation(conn):
    assert conn.max_lob_bytes is None
    conn.max_lob_bytes = 10
    assert conn.max_lob_bytes == 10
    conn.max_lob_bytes = 0
    assert conn.max_lob_bytes is None
    with pytest.raises(ValueError, match="max_lob_bytes"):
        conn.max_lob_bytes = -1


@pytest.mark.parametrize(("column", "small", "big"), [("body", "small", BIG_TEXT), ("bin", b"s", BIG_BLOB)])
def test_a_lob_above_max_lob_bytes_is_data_error_naming_the_cell(conn, lob_table, column, small, big):
    """A value above the limit: DataError naming column and row; rows before it arrive; no
    memory for the whole value is taken. Raising the limit reads it whole."""
    cur = conn.cursor()
    conn.max_lob_bytes = 100_000
    cur.execute(f"SELECT id, {column} FROM {lob_table} ORDER BY id")
    assert tuple(cur.fetchone()) == (0, small)
    with pytest.raises(ferrodbc.DataError) as ei:
        cur.fetchone()
    message = str(ei.value)
    assert f'column "{column}" (index 1), row 1:' in message, message
    assert "max_lob_bytes = 100000" in message
    conn.max_lob_bytes = 1_000_000
    rows = [tuple(r) for r in cur.execute(f"SELECT id, body, bin FROM {lob_table} ORDER BY id").fetchall()]
    assert rows == [(0, "small", b"s"), (1, BIG_TEXT, BIG_BLOB), (2, "after", b"a")]


def test_only_the_column_over_the_limit_fails(conn, lob_table):
    """A limit between the two sizes: the 204,800-byte blob passes, the 300,006-byte text fails."""
    conn.max_lob_bytes = 250_000
    cur = conn.cursor()
    assert cur.execute(f"SELECT bin FROM {lob_table} WHERE id = 1").fetchval() == BIG_BLOB
    with pytest.raises(ferrodbc.DataError, match=r'column "body" \(index 0\), row 0:'):
        cur.execute(f"SELECT body FROM {lob_table} WHERE id = 1").fetchall()
    assert cur.execute("SELECT 1").fetchval() == 1


def test_broken_is_false_on_healthy_and_closed_connections(peer):
    cn = peer.connect()
    assert cn.broken is False
    cn.cursor().execute("SELECT 1").fetchall()
    assert cn.broken is False
    cn.close()
    assert cn.broken is False and cn.closed is True


def test_threadsafety_level_1_eight_threads_own_connections(peer, conn, table):
    assert ferrodbc.threadsafety == 1
    conn.cursor().execute(f"CREATE TABLE {table} (id INTEGER, label VARCHAR(20))")
    conn.cursor().executemany(f"INSERT INTO {table} VALUES (?, ?)", [(i, f"v{i}") for i in range(2000)])
    conn.commit()
    expected = [(i, f"v{i}") for i in range(2000)]
    results: dict[int, object] = {}

    def work(i: int) -> None:
        try:
            c = peer.connect()
            try:
                ok = True
                for _ in range(3):
                    rows = c.cursor().execute(f"SELECT id, label FROM {table} ORDER BY id").fetchall()
                    ok &= [tuple(r) for r in rows] == expected
                results[i] = ok
            finally:
                c.close()
        except Exception as e:  # noqa: BLE001  (reported by the assert)
            results[i] = e

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert results == {i: True for i in range(8)}


class Counter(threading.Thread):
    """Counts pure-Python loop iterations until stopped: it advances only with the GIL."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.count = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.count += 1


def progress_while(action):
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


def test_gil_released_during_a_long_fetch(sqlite):
    """A fetch whose rows the driver computes inside SQLFetch (SQLite3 ODBC with StepAPI=1: each
    row is a sqlite3_step of a recursive query) leaves the counter thread running: its progress
    beats what it makes in 0.05 s of sleep, ~10 switch intervals (holding the GIL throughout
    would leave it one). psqlODBC (UseDeclareFetch=0) and SQLite's default static cursor read the
    whole result at execute: tests/python/test_threads.py covers a long execute with pg_sleep."""
    conn = ferrodbc.connect(sqlite.variant(StepAPI="1"))
    try:
        baseline, _ = progress_while(lambda: time.sleep(0.05))
        assert baseline > 0
        cur = conn.cursor().execute(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000)"
            " SELECT x, printf('label %d', x) FROM c"
        )
        progress, rows = progress_while(cur.fetchall)
        assert len(rows) == 300_000 and tuple(rows[-1]) == (300_000, "label 300000")
        assert progress > baseline, f"counter advanced {progress} during the fetch, {baseline} in 0.05 s of sleep"
    finally:
        conn.close()
