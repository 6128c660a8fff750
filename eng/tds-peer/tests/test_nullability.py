"""Result-set nullability as SQL Server describes it (cursor.description's null_ok, from the
COLMETADATA nullable flag): a NOT NULL, PRIMARY KEY or IDENTITY column read as is and an
expression that cannot be NULL (a literal, COUNT(*), ISNULL(x, literal)) are NOT NULL; a
nullable column, NULL, CAST(NULL AS …), other expressions and the columns of an outer join's
null-extended side are nullable. A NOT NULL int, bit, float, datetime or money column is sent as
its fixed-length TDS type (INT4, …) as SQL Server sends it: Driver 18 reports the nullable INTN
family as nullable whatever the flag says. The peer used to mark every user-table column
nullable."""

import datetime as dt
import uuid
from decimal import Decimal

import pyodbc
import pytest


def tname(prefix="tn"):
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def null_ok(cur):
    return [d[6] for d in cur.description]


@pytest.fixture
def tables(connect):
    """(cursor, a, b): a has one row per kind of column, b a key column and a nullable one."""
    cur = connect().cursor()
    a, b = tname(), tname()
    cur.execute(f"CREATE TABLE {a} (id INT IDENTITY(1,1), code VARCHAR(10) NOT NULL, note NVARCHAR(20), "
                "amount DECIMAL(10,2) NOT NULL, big BIGINT NOT NULL, flag BIT NOT NULL, f FLOAT NOT NULL, "
                "ts DATETIME NOT NULL, m MONEY NOT NULL, n INT)")
    cur.execute(f"CREATE TABLE {b} (k INT PRIMARY KEY, v INT)")
    cur.execute(f"INSERT INTO {a} (code, note, amount, big, flag, f, ts, m, n) VALUES "
                "('x', NULL, 1.5, 9000000000, 1, 2.5, '2024-01-02 03:04:05', 12.3456, NULL), "
                "('y', N'é', -2, -1, 0, -0.25, '1900-01-01', 0, 7)")
    cur.execute(f"INSERT INTO {b} (k, v) VALUES (1, NULL), (3, 30)")
    return cur, a, b


def test_table_columns_follow_their_declaration(tables):
    cur, a, _ = tables
    cur.execute(f"SELECT id, code, note, amount, big, flag, f, ts, m, n FROM {a} ORDER BY id")
    assert null_ok(cur) == [False, False, True, False, False, False, False, False, False, True]
    # The fixed-length encoding of the NOT NULL columns reads back exactly.
    assert [tuple(r) for r in cur.fetchall()] == [
        (1, "x", None, Decimal("1.50"), 9000000000, True, 2.5, dt.datetime(2024, 1, 2, 3, 4, 5), Decimal("12.3456"), None),
        (2, "y", "é", Decimal("-2.00"), -1, False, -0.25, dt.datetime(1900, 1, 1), Decimal("0"), 7),
    ]
    cur.execute(f"SELECT * FROM {a}")
    assert null_ok(cur) == [False, False, True, False, False, False, False, False, False, True]
    assert len(cur.fetchall()) == 2


def test_primary_key_column_is_not_null(tables):
    cur, _, b = tables
    cur.execute(f"SELECT k, v FROM {b} ORDER BY k")
    assert null_ok(cur) == [False, True]
    assert [tuple(r) for r in cur.fetchall()] == [(1, None), (3, 30)]
    # As in SQL Server, the key column refuses NULL (SQLite alone would store it).
    with pytest.raises(pyodbc.IntegrityError) as ei:
        cur.execute(f"INSERT INTO {b} (k, v) VALUES (NULL, 1)")
    assert "(515)" in ei.value.args[1], ei.value.args


def test_literals_null_and_aggregates(tables):
    cur, a, _ = tables
    cur.execute("SELECT 1, 'a', N'b', 1.5, 0x0102, NULL, CAST(NULL AS INT)")
    assert null_ok(cur) == [False, False, False, False, False, True, True]
    assert tuple(cur.fetchone()) == (1, "a", "b", Decimal("1.5"), b"\x01\x02", None, None)
    cur.execute(f"SELECT COUNT(*), COUNT(n), MAX(id), MIN(code) FROM {a}")
    assert null_ok(cur) == [False, False, True, True]
    assert tuple(cur.fetchone()) == (2, 1, 2, "x")
    cur.execute(f"SELECT ISNULL(n, 0) AS n0, COUNT(*) AS c FROM {a} GROUP BY n ORDER BY n0")
    assert null_ok(cur) == [False, False]
    assert [tuple(r) for r in cur.fetchall()] == [(0, 1), (7, 1)]


def test_outer_join_side_is_nullable(tables):
    cur, a, b = tables
    cur.execute(f"SELECT x.id, y.k, y.v FROM {a} x LEFT JOIN {b} y ON y.k = x.id ORDER BY x.id")
    assert null_ok(cur) == [False, True, True]
    assert [tuple(r) for r in cur.fetchall()] == [(1, 1, None), (2, None, None)]
    cur.execute(f"SELECT x.id, y.k FROM {a} x INNER JOIN {b} y ON y.k = x.id")
    assert null_ok(cur) == [False, False]
    assert [tuple(r) for r in cur.fetchall()] == [(1, 1)]
    cur.execute(f"SELECT x.id, y.k FROM {a} x RIGHT JOIN {b} y ON y.k = x.id ORDER BY y.k")
    assert null_ok(cur) == [True, False]
    assert [tuple(r) for r in cur.fetchall()] == [(1, 1), (None, 3)]
    cur.execute(f"SELECT * FROM {b} y FULL OUTER JOIN {a} x ON y.k = x.id")
    assert not any(d[6] is False for d in cur.description)
    cur.fetchall()


def test_describe_first_result_set_agrees(tables):
    cur, a, b = tables
    sql = f"SELECT x.id, x.note, y.k, 1 AS one, COUNT(*) OVER () AS c FROM {a} x LEFT JOIN {b} y ON y.k = x.id"
    cur.execute(sql)
    described = null_ok(cur)
    cur.fetchall()
    assert described == [False, True, True, False, False]
    cur.execute("EXEC sp_describe_first_result_set @tsql = ?", sql)
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    assert [r["is_nullable"] for r in rows] == described
    # tds_type_id: INT4 (56) for an int that cannot be NULL, INTN (38) for one that can.
    assert [r["tds_type_id"] for r in rows] == [56, 231, 38, 56, 56]


def test_a_null_the_analysis_did_not_expect_makes_the_column_nullable(tables):
    """The peer runs some statements SQL Server refuses (a column outside GROUP BY next to an
    aggregate: 8120). Over no rows SQLite gives one row with NULL in a NOT NULL column: the
    result is described from its rows (text and fixed-width columns alike, on the streamed
    path too), and SELECT … INTO makes that column nullable instead of failing half-way."""
    cur, a, _ = tables
    cur.execute(f"SELECT code, amount, big, MAX(n) AS mx FROM {a} WHERE 1 = 0")
    assert [tuple(r) for r in cur.fetchall()] == [(None, None, None, None)]
    assert null_ok(cur) == [True, True, True, True]
    # Every column's type known before the first row: the streamed path.
    cur.execute(f"SELECT code, COUNT(*) AS c FROM {a} WHERE 1 = 0")
    assert [tuple(r) for r in cur.fetchall()] == [(None, 0)]
    assert null_ok(cur) == [True, False]
    t = tname()
    cur.execute(f"SELECT code, big, COUNT(*) AS c INTO {t} FROM {a} WHERE 1 = 0")
    assert cur.rowcount == 1
    cur.execute(f"SELECT code, big, c FROM {t}")
    assert [tuple(r) for r in cur.fetchall()] == [(None, None, 0)]
