"""cursor.bulkcopy on drivers without a bcp API (SQLite3 ODBC, psqlODBC): INSERT parameter
arrays on the caller's connection, chunked; the counters prove the path. The SQL Server suite
(tests/sqlserver/test_sqlserver_bulkcopy.py) covers the bcp path."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

import ferrodbc


def loads() -> tuple[int, int]:
    c = ferrodbc.counters()
    return c["bulk_array_loads"], c["bulk_bcp_loads"]


def test_rows_go_in_as_parameter_arrays(peer, conn, table):
    t = peer.types
    cur = conn.cursor()
    cur.execute(
        f"CREATE TABLE {table} (i {t['int']}, s {t['varchar']}, f {t['float']}, d {t['date']}, "
        f"ts {t['timestamp']}, n {t['decimal']})"
    )
    rows = [
        (1, "é€", 0.5, dt.date(2020, 2, 29), dt.datetime(2020, 1, 2, 3, 4, 5, 123000), Decimal("12.5")),
        (2, None, None, None, None, None),
    ]
    arrays, bcp = loads()
    result = cur.bulkcopy(table, rows)
    assert loads() == (arrays + 1, bcp)
    assert result["rows_copied"] == 2 and result["batch_count"] == 1
    got = cur.execute(f"SELECT i, s, f, d, ts, n FROM {table} ORDER BY i").fetchall()
    assert [tuple(r[:5]) for r in got] == [row[:5] for row in rows]
    assert Decimal(str(got[0][5])) == Decimal("12.5") and got[1][5] is None


def test_batches_and_a_generator_source(peer, conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (i {peer.types['int']} NOT NULL, s {peer.types['varchar']})")
    r = cur.bulkcopy(table, ((i, f"r{i}") for i in range(2500)), batch_size=1000)
    assert r["rows_copied"] == 2500 and r["batch_count"] == 3
    assert cur.execute(f"SELECT COUNT(*), MAX(i) FROM {table}").fetchone() == (2500, 2499)


def test_a_failing_array_leaves_none_of_its_rows_in_autocommit(peer, table):
    cn = peer.connect(autocommit=True)
    try:
        cur = cn.cursor()
        cur.execute(f"CREATE TABLE {table} (i {peer.types['int']} PRIMARY KEY)")
        # SQLite3 ODBC reports a UNIQUE failure as HY000 (DatabaseError), psqlODBC as 23505.
        error = ferrodbc.DatabaseError if peer.is_sqlite else ferrodbc.IntegrityError
        with pytest.raises(error, match=r"source rows 2\.\.4 \(2 rows copied before them\)"):
            cur.bulkcopy(table, [(1,), (2,), (3,), (3,)], batch_size=2)
        assert cur.execute(f"SELECT i FROM {table} ORDER BY i").fetchall() == [(1,), (2,)]
        assert cn.autocommit
    finally:
        cn.close()


def test_manual_commit_rows_are_in_the_callers_transaction(peer, conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (i {peer.types['int']})")
    conn.commit()
    cur.bulkcopy(table, [(1,), (2,)])
    conn.rollback()
    assert cur.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0
    cur.bulkcopy(table, [(3,)])
    conn.commit()
    assert cur.execute(f"SELECT i FROM {table}").fetchall() == [(3,)]


def test_mappings_and_errors(peer, conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (a {peer.types['int']}, b {peer.types['varchar']})")
    cur.bulkcopy(table, [("x", 7)], column_mappings=["b", "a"])
    assert cur.execute(f"SELECT a, b FROM {table}").fetchall() == [(7, "x")]
    with pytest.raises(ferrodbc.ProgrammingError, match='no column "zz"'):
        cur.bulkcopy(table, [(1,)], column_mappings=["zz"])
    with pytest.raises(ferrodbc.ProgrammingError, match="source row 1 has 1 fields; row 0 has 2"):
        cur.bulkcopy(table, [(1, "a"), (2,)])
    with pytest.raises(ferrodbc.DataError, match=r'column "a", source row 0.*a bytes value'):
        cur.bulkcopy(table, [(b"x", "a")])


def test_batch_size_0_is_one_transaction_and_cancel_rolls_it_back(peer, table):
    cn = peer.connect(autocommit=True)
    try:
        cur = cn.cursor()
        cur.execute(f"CREATE TABLE {table} (i {peer.types['int']})")

        def rows():
            for i in range(25_000):
                if i == 20_000:  # two arrays of 10,000 already sent
                    cur.cancel()
                yield (i,)

        with pytest.raises(ferrodbc.OperationalError, match="cancelled after 0 rows"):
            cur.bulkcopy(table, rows())
        assert cur.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0
        assert cn.autocommit
        r = cur.bulkcopy(table, ((i,) for i in range(25_000)))
        assert (r["rows_copied"], r["batch_count"]) == (25_000, 1)
    finally:
        cn.close()


def test_values_of_the_wrong_kind_are_data_errors_naming_column_and_row(peer, conn, table):
    """A Python value no column takes (a dict), a Decimal with a fraction into an integer
    column, and Arrow text into an integer column are DataErrors with column and source row; a
    whole Decimal goes into an integer column."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (a {peer.types['int']}, b {peer.types['varchar']})")
    with pytest.raises(ferrodbc.DataError, match=r'column "a", source row 1'):
        cur.bulkcopy(table, [(1, "x"), ({"k": 1}, "y")])
    with pytest.raises(ferrodbc.DataError, match=r'column "a", source row 0.*12\.5 has a fraction'):
        cur.bulkcopy(table, [(Decimal("12.5"), "x")])
    cur.bulkcopy(table, [(Decimal("12.000"), "whole")])
    assert cur.execute(f"SELECT a FROM {table} WHERE b = 'whole'").fetchone()[0] == 12
    pa = pytest.importorskip("pyarrow")
    with pytest.raises(ferrodbc.DataError, match=r'column "a", source row 1'):
        cur.bulkcopy_arrow(table, pa.table({"a": pa.array(["1", "two"]), "b": pa.array(["p", "q"])}))


def test_use_internal_transaction_in_manual_commit_mode(peer, conn, table):
    """Refused in manual-commit mode (a batch's own commit would commit the caller's work);
    the caller's transaction is left as it was."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (i {peer.types['int']})")
    conn.commit()
    cur.execute(f"INSERT INTO {table} VALUES (0)")
    with pytest.raises(ferrodbc.ProgrammingError, match="use_internal_transaction=True needs autocommit"):
        cur.bulkcopy(table, [(1,)], use_internal_transaction=True)
    conn.rollback()
    assert cur.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0
    assert not conn.autocommit


def test_a_callback_using_the_connection_is_refused_not_a_hang(peer, conn, table):
    """progress (and the rows' iterator) run while the load holds the connection: a call on
    the connection from there is a ProgrammingError, not a wait for itself."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (i {peer.types['int']})")
    conn.commit()
    with pytest.raises(ferrodbc.ProgrammingError, match="The connection is busy"):
        cur.bulkcopy(table, ((i,) for i in range(10)), progress=lambda n: conn.commit(), notify_after=5)

    def rows():
        yield (1,)
        conn.rollback()
        yield (2,)

    with pytest.raises(ferrodbc.ProgrammingError, match="The connection is busy"):
        cur.bulkcopy(table, rows())
    conn.rollback()
    cur.bulkcopy(table, [(7,)])
    conn.commit()
    assert cur.execute(f"SELECT i FROM {table}").fetchall() == [(7,)]
