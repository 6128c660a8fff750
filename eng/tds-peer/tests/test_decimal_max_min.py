"""MAX / MIN of decimal, numeric and money columns: compared as numbers (not as the stored
text, where '9.75' > '62.25'), exact to 38 digits, and typed as the column (Django's
aggregate(Max("price")))."""

import uuid
from decimal import Decimal as D

import pytest


def tname(prefix="tdm"):
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def table(connect):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, g INT, v DECIMAL(38,10), n NUMERIC(10,2), m MONEY, sm SMALLMONEY, s NVARCHAR(20))")
    rows = [
        (1, 1, "9.75", "9.75", "9.75", "9.75", "9.75"),
        (2, 1, "62.25", "62.25", "62.25", "62.25", "62.25"),
        (3, 2, "-100.5", "-100.5", "-100.5", "-1", "-100.5"),
        (4, 2, "1234567890123456789012345678.0123456789", "1", "922337203685477.5807", "214748.3647", "1"),
        (5, 2, None, None, None, None, None),
    ]
    for r in rows:
        vals = ", ".join("NULL" if x is None else str(x) for x in r[:6])
        cur.execute(f"INSERT INTO {t} VALUES ({vals}, {'NULL' if r[6] is None else repr(r[6])})")
    return cur, t


def test_max_min_compare_numbers(table):
    cur, t = table
    row = cur.execute(f"SELECT MAX(v), MIN(v), MAX(n), MIN(n), MAX(m), MIN(m), MAX(sm), MIN(sm) FROM {t}").fetchone()
    assert tuple(row) == (
        D("1234567890123456789012345678.0123456789"), D("-100.5"),
        D("62.25"), D("-100.50"),
        D("922337203685477.5807"), D("-100.5"),
        D("214748.3647"), D("-1"),
    )
    # Character columns keep comparing as text.
    assert tuple(cur.execute(f"SELECT MAX(s), MIN(s) FROM {t}").fetchone()) == ("9.75", "-100.5")


def test_max_min_are_typed_as_the_column(table):
    cur, t = table
    cur.execute(f"SELECT MAX(v) AS a, MIN(n) AS b, MAX(m) AS c, MIN(sm) AS d FROM {t} WHERE id < 4")
    desc = [(d[0], d[1], d[4], d[5]) for d in cur.description]
    assert desc[0] == ("a", D, 38, 10)
    assert desc[1] == ("b", D, 10, 2)
    assert desc[2][:2] == ("c", D) and desc[3][:2] == ("d", D)
    assert tuple(cur.fetchone()) == (D("62.25"), D("-100.50"), D("62.25"), D("-1"))


def test_grouped_qualified_and_empty(table):
    cur, t = table
    rows = cur.execute(
        f"SELECT [{t}].[g], MAX([{t}].[n]) AS hi, MIN(x.v) FROM [{t}] INNER JOIN {t} x ON x.id = [{t}].[id] "
        f"GROUP BY [{t}].[g] ORDER BY [{t}].[g]"
    ).fetchall()
    assert [tuple(r) for r in rows] == [(1, D("62.25"), D("9.75")), (2, D("1.00"), D("-100.5"))]
    # No rows: NULL. Parameters, as Django sends them.
    assert cur.execute(f"SELECT MAX(v) FROM {t} WHERE id > ?", 99).fetchval() is None
    assert cur.execute(f"SELECT MAX([{t}].[n]) AS [top] FROM [{t}] WHERE [{t}].[g] = ?", 1).fetchval() == D("62.25")


def test_max_over_a_window_and_in_an_expression(table):
    cur, t = table
    # A window MAX keeps SQLite's own (no error); an expression around MAX still works.
    rows = cur.execute(f"SELECT id, MAX(id) OVER (PARTITION BY g) FROM {t} ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [(1, 2), (2, 2), (3, 5), (4, 5), (5, 5)]
    assert cur.execute(f"SELECT COUNT(*) FROM {t} WHERE n = (SELECT MAX(n) FROM {t})").fetchval() == 1
