"""commit, rollback and autocommit really end transactions, as seen from a second connection.

SQLite runs on a database file (never ``:memory:``), so a second connection sees only what the
first committed; PostgreSQL runs each test on its own table.
"""

from __future__ import annotations

import pytest

import ferrodbc


@pytest.fixture
def ids(peer, conn, table):
    """`table` created and committed, empty."""
    conn.cursor().execute(f"CREATE TABLE {table} (id INTEGER)")
    conn.commit()
    return table


def count_from_another_connection(peer, table) -> int:
    other = peer.connect()
    try:
        return other.cursor().execute(f"SELECT COUNT(*) FROM {table}").fetchval()
    finally:
        other.close()


def test_connections_start_in_manual_commit_mode(conn):
    """PEP 249: autocommit is off by default."""
    assert conn.autocommit is False


def test_uncommitted_insert_is_invisible_to_other_connections_until_commit(peer, conn, ids):
    cur = conn.cursor()
    cur.execute(f"INSERT INTO {ids} (id) VALUES (1)")
    assert cur.execute(f"SELECT COUNT(*) FROM {ids}").fetchval() == 1, "own changes are visible"
    if peer.is_pg:
        # SQLite's writer holds a lock that would make the reader wait: only PG reads concurrently.
        assert count_from_another_connection(peer, ids) == 0
    conn.commit()
    assert count_from_another_connection(peer, ids) == 1


def test_rollback_discards_the_transaction(peer, conn, ids):
    cur = conn.cursor()
    cur.execute(f"INSERT INTO {ids} (id) VALUES (1)")
    cur.execute(f"INSERT INTO {ids} (id) VALUES (2)")
    conn.rollback()
    assert cur.execute(f"SELECT COUNT(*) FROM {ids}").fetchval() == 0
    assert count_from_another_connection(peer, ids) == 0


def test_rollback_keeps_what_was_committed_before(peer, conn, ids):
    cur = conn.cursor()
    cur.execute(f"INSERT INTO {ids} (id) VALUES (1)")
    conn.commit()
    cur.execute(f"INSERT INTO {ids} (id) VALUES (2)")
    conn.rollback()
    assert cur.execute(f"SELECT id FROM {ids}").fetchall() == [(1,)]
    assert count_from_another_connection(peer, ids) == 1


def test_autocommit_makes_each_statement_durable_immediately(peer, conn, ids):
    conn.autocommit = True
    assert conn.autocommit is True
    conn.cursor().execute(f"INSERT INTO {ids} (id) VALUES (1)")
    assert count_from_another_connection(peer, ids) == 1
    conn.rollback()  # nothing to roll back: the row stays
    assert count_from_another_connection(peer, ids) == 1


def test_switching_autocommit_back_off_restores_transactions(peer, conn, ids):
    conn.autocommit = True
    conn.autocommit = False
    conn.cursor().execute(f"INSERT INTO {ids} (id) VALUES (1)")
    conn.rollback()
    assert count_from_another_connection(peer, ids) == 0


def test_connect_with_autocommit_true(peer, ids):
    c = peer.connect(autocommit=True)
    try:
        c.cursor().execute(f"INSERT INTO {ids} (id) VALUES (7)")
        assert count_from_another_connection(peer, ids) == 1
    finally:
        c.close()


def test_closing_a_connection_rolls_back_its_open_transaction(peer, ids):
    c = peer.connect()
    c.cursor().execute(f"INSERT INTO {ids} (id) VALUES (1)")
    c.close()
    assert c.closed
    assert count_from_another_connection(peer, ids) == 0


def test_pg_transaction_survives_a_failed_statement(pg, pg_conn, pg_table):
    """psqlODBC rolls back only the failed statement: earlier work in the transaction commits."""
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (id integer PRIMARY KEY)")
    cur.execute(f"INSERT INTO {pg_table} VALUES (1)")
    with pytest.raises(ferrodbc.IntegrityError):
        cur.execute(f"INSERT INTO {pg_table} VALUES (1)")
    cur.execute(f"INSERT INTO {pg_table} VALUES (2)")
    pg_conn.commit()
    assert count_from_another_connection(pg, pg_table) == 2


def test_commit_and_rollback_on_a_closed_connection_raise(conn):
    conn.close()
    with pytest.raises(ferrodbc.ProgrammingError):
        conn.commit()
    with pytest.raises(ferrodbc.ProgrammingError):
        conn.rollback()
    with pytest.raises(ferrodbc.ProgrammingError):
        conn.autocommit = True
    conn.close()  # idempotent


def test_switching_autocommit_on_commits_the_open_transaction(peer, conn, ids):
    """ODBC: turning autocommit on commits what the transaction did so far."""
    conn.cursor().execute(f"INSERT INTO {ids} (id) VALUES (1)")
    conn.autocommit = True
    assert count_from_another_connection(peer, ids) == 1


def test_a_connection_dropped_without_close_rolls_back_and_releases_its_locks(peer, ids):
    """Garbage-collecting an open connection (with cursors and an open transaction) must roll
    back and free it: afterwards others can read and write the table."""
    import gc

    c = peer.connect()
    cur = c.cursor()
    cur.execute(f"INSERT INTO {ids} (id) VALUES (1)")
    reader = c.cursor()
    reader.execute(f"SELECT id FROM {ids}")
    del c, cur, reader
    gc.collect()
    other = peer.connect()
    try:
        assert other.cursor().execute(f"SELECT COUNT(*) FROM {ids}").fetchval() == 0
        other.cursor().execute(f"INSERT INTO {ids} (id) VALUES (2)")
        other.commit()
    finally:
        other.close()
    assert count_from_another_connection(peer, ids) == 1


def test_leaving_a_with_block_after_closing_the_connection_is_harmless(peer):
    with peer.connect() as c:
        c.cursor().execute("SELECT 1").fetchall()
        c.close()
    assert c.closed


def test_a_failed_statement_then_rollback_in_a_with_block(peer, conn, ids):
    """The with block sees the database error, rolls back, and re-raises it unchanged."""
    with pytest.raises(ferrodbc.DatabaseError):
        with conn:
            conn.cursor().execute(f"INSERT INTO {ids} (id) VALUES (1)")
            conn.cursor().execute("SELECT * FROM ferrodbc_no_such_table")
    assert count_from_another_connection(peer, ids) == 0
    assert conn.cursor().execute(f"SELECT COUNT(*) FROM {ids}").fetchval() == 0


@pytest.mark.parametrize("end", ["commit", "rollback"])
def test_a_result_being_read_survives_the_end_of_the_transaction(peer, conn, ids, end):
    """Both drivers preserve open cursors across commit/rollback: the rows keep coming, past
    the first row array, in order."""
    conn.cursor().executemany(f"INSERT INTO {ids} (id) VALUES (?)", [(i,) for i in range(100)])
    conn.commit()
    cur = conn.cursor()
    cur.execute(f"SELECT id FROM {ids} ORDER BY id")
    first = cur.fetchmany(10)
    getattr(conn, end)()
    rest = cur.fetchall()
    assert [r[0] for r in first + rest] == list(range(100))
