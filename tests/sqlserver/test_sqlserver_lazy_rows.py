"""Lazy rows and row factories through Driver 18 and FreeTDS: every SQL Server type read lazily
equals the eager row (value and Python type), on the bound path (multi-row arrays, prefetch) and
on the streamed path ((MAX) columns: one-row arrays, each lazy row pinning its own); rows stay
valid across many row arrays; `raw` gives the ODBC C structs the driver wrote.
"""

from __future__ import annotations

import struct
import uuid
from decimal import Decimal

import ferrodbc

from sqlserver_support import synthetic

TYPES_ALL = synthetic.columns("types_all")
NAMES = [n for n, _ in TYPES_ALL]
LONG = {"varchar(max)", "nvarchar(max)", "varbinary(max)", "xml", "sql_variant"}
BOUND = [n for n, t in TYPES_ALL if t not in LONG]


def lazy_cursor(conn):
    cur = conn.cursor()
    cur.row_factory = ferrodbc.LazyRow
    return cur


def assert_rows_equal(lazy, eager, names, where):
    assert len(lazy) == len(eager), where
    for i, (lz, e) in enumerate(zip(lazy, eager)):
        assert type(lz) is ferrodbc.LazyRow
        # Read back to front: a lazy cell does not depend on the cells before it being read.
        for k in reversed(range(len(names))):
            got, exp = lz[k], e[k]
            assert got == exp and type(got) is type(exp), f"{where}: row {i} {names[k]}: {got!r} != {exp!r}"
        assert lz == e


def test_lazy_rows_equal_eager_rows_for_every_type_streamed_plan(conn, driver):
    sql = "SELECT * FROM peer.types_all_300"
    eager = conn.cursor().execute(sql).fetchall()
    lazy = lazy_cursor(conn).execute(sql).fetchall()
    assert_rows_equal(lazy, eager, NAMES, f"{driver} types_all (streamed)")
    assert lazy[3]._tuple()[1:] == (None,) * (len(NAMES) - 1), "row 3 is NULL in every column"


def test_lazy_rows_equal_eager_rows_for_every_bound_type_across_row_arrays(conn, driver):
    sql = f"SELECT {', '.join(BOUND)} FROM peer.types_all_5000"
    eager = conn.cursor().execute(sql).fetchall()
    ferrodbc.reset_counters()
    lazy = lazy_cursor(conn).execute(sql).fetchall()
    fetches = ferrodbc.counters()["fetch_calls"]
    assert fetches <= 12, f"block fetches (32, 256, 2048, ... rows), not 5,000 row by row: {fetches}"
    assert ferrodbc.counters()["pinned_batches"] >= 1
    assert_rows_equal(lazy, eager, BOUND, f"{driver} types_all bound")


def test_lazy_rows_kept_across_many_row_arrays_and_a_closed_cursor(connect, driver):
    conn = connect()
    cur = lazy_cursor(conn)
    ferrodbc.reset_counters()
    cur.execute("SELECT * FROM peer.int_nvarchar_float_100000")
    kept = [row for i, row in enumerate(cur) if i % 997 == 0]
    cur.execute("SELECT * FROM peer.int_nvarchar_float_100000")  # same plan: buffers reused
    again = cur.fetchmany(3)
    cur.close()
    conn.close()
    expected = list(synthetic.rows("int_nvarchar_float", 100_000))
    assert [tuple(r) for r in kept] == [tuple(expected[i]) for i in range(0, 100_000, 997)]
    assert [tuple(r) for r in again] == [tuple(e) for e in expected[:3]]
    assert ferrodbc.counters()["pinned_batches"] >= 1


def test_lazy_rows_dropped_before_the_next_fetch_pin_nothing(conn, driver):
    """Each row let go before the next fetch: every row array (bound, and the shadow copy the
    prefetch serves from) is refilled in place, none is left pinned."""
    cur = lazy_cursor(conn)
    ferrodbc.reset_counters()
    cur.execute("SELECT * FROM peer.int_nvarchar_float_20000")
    n = 0
    while (row := cur.fetchone()) is not None:
        n += row.id
        del row
    assert n == sum(range(20_000))
    assert ferrodbc.counters()["pinned_batches"] == 0


def test_raw_cells_are_the_odbc_c_values(conn, driver):
    cur = lazy_cursor(conn)
    g = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
    cur.execute(
        "SELECT CAST(-5 AS INT), N'héllo', 0x0102, CAST(? AS UNIQUEIDENTIFIER), CAST(NULL AS INT), "
        "CAST(1.25 AS DECIMAL(5,2)), CAST('2024-01-02 03:04:05.1234567 +05:30' AS DATETIMEOFFSET(7)), "
        "CAST(1 AS BIT), CAST(2.5 AS FLOAT), CAST('2024-02-29 01:02:03.456' AS DATETIME2(3))",
        g,
    )
    r = cur.fetchone()
    assert struct.unpack("=i", r.raw(0)) == (-5,)
    assert r.raw(1) == "héllo".encode("utf-16-le")
    assert r.raw(2) == b"\x01\x02"
    assert uuid.UUID(bytes_le=r.raw(3)) == r[3] == uuid.UUID(g)  # SQL_GUID, native byte order
    assert r.raw(4) is None and r.is_null(4)
    dec = r.raw(5)
    if len(dec) == 19:  # SQL_NUMERIC_STRUCT: precision, scale, sign (1 = +), 16-byte magnitude
        assert (dec[1], dec[2], int.from_bytes(dec[3:], "little")) == (2, 1, 125)
    else:  # bound as text: the digits
        assert dec == b"1.25"
    assert r[5] == Decimal("1.25")
    dto = r.raw(6)
    if len(dto) == 20:  # SQL_SS_TIMESTAMPOFFSET_STRUCT
        assert struct.unpack("=6hI2h", dto) == (2024, 1, 2, 3, 4, 5, 123456700, 5, 30)
    else:  # a driver that sends it as text
        assert dto.decode("utf-16-le").startswith("2024-01-02 03:04:05.1234567 +05:30")
    assert r.raw(7) == b"\x01"
    assert struct.unpack("=d", r.raw(8)) == (2.5,)
    ts = r.raw(9)  # SQL_TIMESTAMP_STRUCT: y m d h mi s (16-bit), fraction in ns (32-bit)
    assert struct.unpack("=6HI", ts) == (2024, 2, 29, 1, 2, 3, 456_000_000)


def test_dict_and_namedtuple_rows_of_every_type(conn, driver):
    sql = "SELECT * FROM peer.types_all_60"
    eager = conn.cursor().execute(sql).fetchall()
    cur = conn.cursor()
    cur.row_factory = dict
    dicts = cur.execute(sql).fetchall()
    assert dicts == [dict(zip(NAMES, e)) for e in eager]
    cur.row_factory = ferrodbc.namedtuple_row
    named = cur.execute(sql).fetchall()
    assert [tuple(n) for n in named] == [tuple(e) for e in eager]
    assert named[5].c_nvarchar == eager[5].c_nvarchar
