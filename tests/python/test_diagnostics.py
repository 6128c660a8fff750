"""Diagnostic records: error messages and informational messages reach Python whole, one record
per database message, in any script."""

from __future__ import annotations

import pytest

import ferrodbc


def raise_exception(conn, expr: str) -> ferrodbc.Error:
    with pytest.raises(ferrodbc.DatabaseError) as info:
        conn.cursor().execute(f"DO $$ BEGIN RAISE EXCEPTION '%', {expr}; END $$")
    return info.value


def test_a_short_error_is_one_record_with_the_whole_message(pg_conn):
    err = raise_exception(pg_conn, "'é😀 short message'")
    assert err.sqlstate == "P0001"
    assert len(err.diagnostics) == 1
    state, native, message = err.diagnostics[0]
    assert state == "P0001"
    assert "é😀 short message" in message
    assert "é😀 short message" in str(err)


def test_a_long_error_message_is_one_whole_record(pg_conn):
    err = raise_exception(pg_conn, "repeat('x', 3000) || 'THE-END'")
    assert len(err.diagnostics) == 1, f"{len(err.diagnostics)} records for one error"
    assert "x" * 3000 + "THE-END" in err.diagnostics[0][2]


def test_a_long_non_ascii_error_message_is_not_replaced(pg_conn):
    err = raise_exception(pg_conn, "repeat('ü', 1000)")
    assert "ü" * 1000 in err.diagnostics[0][2], err.diagnostics[0][2][:80]


def test_a_long_notice_is_one_whole_message(pg_conn):
    cur = pg_conn.cursor()
    cur.execute("DO $$ BEGIN RAISE NOTICE '%', repeat('y', 2000) || 'THE-END'; END $$")
    assert len(cur.messages) == 1
    assert cur.messages[0][1].endswith("THE-END")


def test_sqlite_error_messages_are_whole(sqlite_conn):
    # (The SQLite driver cuts its own messages near 512 bytes, whoever reads them.)
    name = "t_" + "q" * 300
    with pytest.raises(ferrodbc.DatabaseError) as info:
        sqlite_conn.cursor().execute(f"SELECT * FROM {name}")
    assert name in info.value.diagnostics[0][2]


def test_a_notice_with_its_own_sqlstate_is_a_message_not_an_error(pg_conn):
    # psqlODBC files this NOTICE under SUCCESS_WITH_INFO with SQLSTATE 42P07; pyodbc reports
    # success, and so must we (it used to raise ProgrammingError).
    cur = pg_conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE t_notice_twice (x int)")
    cur.execute("CREATE TEMPORARY TABLE IF NOT EXISTS t_notice_twice (x int)")
    assert any("already exists" in m[1] for m in cur.messages), cur.messages
    cur.execute("SELECT count(*) FROM t_notice_twice")
    assert cur.fetchone()[0] == 0
