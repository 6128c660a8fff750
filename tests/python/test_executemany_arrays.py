"""executemany's parameter arrays when a column's values change mid-batch (src/py/cursor/
execute_many.rs), on SQLite (rows one by one) and PostgreSQL (arrays): None first, a wider
kind, kinds with nothing in common, strings growing past the cells, a bad value raised before
any row is stored. The SQL Server drivers: tests/sqlserver/test_sqlserver_executemany.py."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

import ferrodbc


def _load(conn, table, ddl: str, rows: list) -> list:
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, v {ddl})")
    cur.executemany(f"INSERT INTO {table} (id, v) VALUES (?, ?)", list(enumerate(rows)))
    assert cur.rowcount == len(rows)
    return [r[0] for r in conn.cursor().execute(f"SELECT v FROM {table} ORDER BY id").fetchall()]


def test_none_first_then_ints(peer, conn, table):
    rows = [None, None, 5, None, 2**40]
    assert _load(conn, table, peer.types["bigint"], rows) == rows


def test_int_then_float(peer, conn, table):
    assert _load(conn, table, peer.types["float"], [1, 2.5, True, None]) == [1.0, 2.5, 1.0, None]


def test_strings_growing_past_the_cells(peer, conn, table):
    rows = ["a", None, "bb" * 50, "", "é😀" * 2000, "c"]
    assert _load(conn, table, peer.types["text"], rows) == rows


def test_kinds_with_nothing_in_common(pg_conn, pg_table):
    """int then str in one text column: PostgreSQL takes each run as its own array."""
    rows = [1, "two", 3, None, "five"] * 50
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (id integer, v text)")
    cur.executemany(f"INSERT INTO {pg_table} (id, v) VALUES (?, CAST(? AS text))", list(enumerate(rows)))
    got = [r[0] for r in cur.execute(f"SELECT v FROM {pg_table} ORDER BY id").fetchall()]
    assert got == [None if v is None else str(v) for v in rows]


def test_mixed_columns_mid_batch(pg_conn, pg_table):
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (id integer, d numeric(30,4), ts timestamp, s text)")
    when = dt.datetime(2024, 1, 2, 3, 4, 5, 600000)
    rows = [(0, None, None, None), (1, 1, when, "a"), (2, decimal.Decimal("2.125"), None, "bb" * 300), (3, 2**62, when, None)]
    cur.executemany(f"INSERT INTO {pg_table} VALUES (?, ?, ?, ?)", rows)
    got = [tuple(r) for r in cur.execute(f"SELECT * FROM {pg_table} ORDER BY id").fetchall()]
    assert got == [tuple(decimal.Decimal(v) if isinstance(v, int) and i == 1 else v for i, v in enumerate(r)) for r in rows]


def test_a_nul_in_text_mid_batch_is_a_data_error_before_any_row(pg_conn, pg_table):
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (id integer, v text)")
    with pytest.raises(ferrodbc.DataError, match="U\\+0000"):
        cur.executemany(f"INSERT INTO {pg_table} VALUES (?, ?)", [(1, "a"), (2, "b\x00c")])
    assert cur.execute(f"SELECT COUNT(*) FROM {pg_table}").fetchval() == 0


def test_an_unsupported_value_mid_batch_stores_nothing(conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER)")
    with pytest.raises(ferrodbc.ProgrammingError, match="unsupported type"):
        cur.executemany(f"INSERT INTO {table} (id) VALUES (?)", [(1,), (object(),)])
    assert cur.execute(f"SELECT COUNT(*) FROM {table}").fetchval() == 0
