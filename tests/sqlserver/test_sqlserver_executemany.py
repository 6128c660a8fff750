"""executemany's parameter arrays when a column's values change mid-batch (src/py/cursor/
execute_many.rs): a None column that gets a value, a wider kind (int -> float, int -> Decimal,
a big int), a kind with nothing in common (int -> str: the array ends and the next starts),
strings longer than the cells so far, rows as lists and Rows, and a value that cannot be sent
(raised before any row is stored). Every row is read back, through Driver 18 and FreeTDS."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import NamedTuple

import pytest

import ferrodbc

from sqlserver_support import tname


class Item(NamedTuple):
    """A tuple subclass row (copied before binding, unlike an exact tuple or a Row)."""

    id: int
    v: float | int
    s: str


def _load(conn, ddl: str, rows: list, fast: bool = False) -> list[tuple]:
    cur = conn.cursor()
    cur.fast_executemany = fast
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, {ddl})")
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(i, v) for i, v in enumerate(rows)])
    assert cur.rowcount == len(rows)
    return [r[0] for r in cur.execute(f"SELECT v FROM {t} ORDER BY id").fetchall()]


@pytest.mark.parametrize("fast", [False, True], ids=["plain", "fast"])
def test_none_first_then_values(conn, driver, fast):
    assert _load(conn, "v INT", [None, None, 5, None, 7], fast) == [None, None, 5, None, 7]
    assert _load(conn, "v NVARCHAR(20)", [None, "é😀", None, "x"], fast) == [None, "é😀", None, "x"]
    when = dt.datetime(2024, 5, 6, 7, 8, 9, 123000)
    assert _load(conn, "v DATETIME2(3)", [None, when], fast) == [None, when]
    assert _load(conn, "v INT", [None, None], fast) == [None, None]


def test_int_then_float_widens_the_column(conn, driver):
    assert _load(conn, "v FLOAT", [1, 2, 2.5, True, 3]) == [1.0, 2.0, 2.5, 1.0, 3.0]


def test_bool_then_int_widens_the_column(conn, driver):
    assert _load(conn, "v INT", [True, False, 2, None]) == [1, 0, 2, None]


def test_int_then_decimal_and_big_ints_are_exact(conn, driver):
    rows = [1, Decimal("2.5"), 3, 2**70, -(2**63), Decimal("-0.0001")]
    want = [Decimal(v) for v in rows]
    assert _load(conn, "v DECIMAL(38,4)", rows) == want


def test_ints_past_int32_mid_batch(conn, driver):
    rows = [1, 2**31, -(2**63), 2**63 - 1, 5]
    assert _load(conn, "v BIGINT", rows) == rows


def test_kinds_with_nothing_in_common_end_the_array(conn, driver):
    """int, then str, then int again in one NVARCHAR column: each run its own array."""
    rows = [1, 2, "three", "four", 5, None, "six"] * 300
    assert _load(conn, "v NVARCHAR(20)", rows) == [None if v is None else str(v) for v in rows]


def test_type_change_every_row(conn, driver):
    rows = [i if i % 2 else f"s{i}" for i in range(200)]
    assert _load(conn, "v NVARCHAR(20)", rows) == [str(v) for v in rows]


def test_strings_growing_past_the_cells(conn, driver):
    rows = ["a", "bb", "c" * 100, "", None, "d" * 5000, "é😀" * 3000, "e", "f" * 4001]
    assert _load(conn, "v NVARCHAR(MAX)", rows) == rows
    blobs = [b"a", b"b" * 300, b"", None, bytes(range(256)) * 40, b"z"]
    assert _load(conn, "v VARBINARY(MAX)", blobs) == blobs


def test_mixed_columns_mid_batch(conn, driver):
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, n FLOAT, s NVARCHAR(50), d DECIMAL(18,4), ts DATETIME2(6), b BIT)")
    when = dt.datetime(2024, 1, 2, 3, 4, 5, 600000)
    rows = [
        (0, None, None, None, None, None),
        (1, 1, "a", 1, when, True),
        (2, 2.25, "bb" * 20, Decimal("2.125"), None, False),
        (3, None, "c", Decimal("-3.5"), when, None),
        (4, 4, None, 4, when, 1),
    ]
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?, ?, ?, ?, ?)", rows)
    got = [tuple(r) for r in cur.execute(f"SELECT * FROM {t} ORDER BY id").fetchall()]
    assert got == [
        (0, None, None, None, None, None),
        (1, 1.0, "a", Decimal("1.0000"), when, True),
        (2, 2.25, "bb" * 20, Decimal("2.1250"), None, False),
        (3, None, "c", Decimal("-3.5000"), when, None),
        (4, 4.0, None, Decimal("4.0000"), when, True),
    ]


def test_rows_as_lists_and_rows(conn, driver):
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, s NVARCHAR(20))")
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [[1, "a"], (2, "b"), [3, None]])
    rows = cur.execute(f"SELECT id + 10, s FROM {t} ORDER BY id").fetchall()
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", rows)
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", (r for r in [(20, "gen")]))
    got = [tuple(r) for r in cur.execute(f"SELECT * FROM {t} ORDER BY id").fetchall()]
    assert got == [(1, "a"), (2, "b"), (3, None), (11, "a"), (12, "b"), (13, None), (20, "gen")]


def test_a_bad_value_mid_batch_raises_before_any_row_is_stored(conn, driver):
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, v DECIMAL(38,0))")
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(1, 1), (2, object())])
    with pytest.raises(ferrodbc.DataError, match="DECIMAL\\(38\\)"):
        cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(1, 1), (2, 10**40)])
    cur.fast_executemany = True
    with pytest.raises(ferrodbc.ProgrammingError, match="Numeric overflow"):
        cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(1, 1), (2, Decimal("1" * 39))])
    with pytest.raises(ferrodbc.ProgrammingError, match="parameter markers"):
        cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(1, 1), (2,)])
    assert cur.execute(f"SELECT COUNT(*) FROM {t}").fetchval() == 0


def test_many_rows_cut_into_requests_keep_every_value(conn, driver):
    """More rows than one request holds, with a type change and a long string late on."""
    n = 30_000
    rows = [(i, f"v{i}" if i != 25_000 else "w" * 3000) for i in range(n)]
    rows[20_000] = (20_000, 20_000)
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, v NVARCHAR(MAX))")
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", rows)
    assert cur.rowcount == n
    got = cur.execute(f"SELECT id, v FROM {t} ORDER BY id").fetchall()
    assert [tuple(r) for r in got] == [(i, str(v)) for i, v in rows]


@pytest.mark.parametrize("factory", ["row", "list_row"])
def test_rows_are_read_in_place_and_widen_like_tuples(conn, driver, factory):
    """Fetched Rows (ferrodbc.Row, the mssql_python face's row) go in without a tuple copy
    (src/py/cursor/execute_rows.rs): a column widened mid-batch rewrites earlier Rows' values,
    a namedtuple (a tuple subclass) is copied, and a Row of the wrong length is refused."""
    if factory == "list_row":
        conn.row_factory = ferrodbc._native._ListRow
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, v FLOAT, s NVARCHAR(20))")
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?, ?)", [(1, 1, "a"), (2, None, "bb")])
    fetched = cur.execute(f"SELECT id + 10, CAST(v AS INT), s FROM {t} ORDER BY id").fetchall()
    assert type(fetched[0]).__name__ == "Row"
    rows = [*fetched, (13, 2.5, "ccc"), Item(14, 3, "d" * 20)]
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?, ?)", (r for r in rows))
    assert cur.rowcount == 4
    got = [tuple(r) for r in cur.execute(f"SELECT * FROM {t} WHERE id > 10 ORDER BY id").fetchall()]
    assert got == [(11, 1.0, "a"), (12, None, "bb"), (13, 2.5, "ccc"), (14, 3.0, "d" * 20)]
    short = cur.execute(f"SELECT id, v FROM {t} WHERE id = 11").fetchall()
    with pytest.raises(ferrodbc.ProgrammingError, match="parameter markers"):
        cur.executemany(f"INSERT INTO {t} VALUES (?, ?, ?)", short)


def test_null_free_number_columns_then_a_late_null_and_a_cut(conn, driver):
    """Int and float columns keep no indicators until their first NULL (params/array.rs
    `dense`; Driver 18 binds none): a NULL late in the array writes them out, and an array cut
    by a later column's kind change (int then str) forgets the partly written row of both."""
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, big BIGINT, f FLOAT, v NVARCHAR(10))")
    rows = [(i, 2**40 + i, i / 4, i) for i in range(10)]
    rows[6] = (6, None, 1.5, 6)
    rows[8] = (8, 2**40 + 8, None, "eight")
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?, ?, ?)", rows)
    assert cur.rowcount == 10
    got = [tuple(r) for r in cur.execute(f"SELECT * FROM {t} ORDER BY id").fetchall()]
    assert got == [(i, b, f, None if v is None else str(v)) for i, b, f, v in rows]
