"""Parameters of every type round-tripped: `SELECT ?` and INSERT into a table of declared SQL
Server types then SELECT; executemany; setinputsizes."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest

import ferrodbc

from sqlserver_support import tname

TZ = lambda minutes: dt.timezone(dt.timedelta(minutes=minutes))  # noqa: E731


SELECT_VALUES = [
    ("none", None),
    ("true", True),
    ("false", False),
    ("int_zero", 0),
    ("int32_min", -(2**31)),
    ("int32_max", 2**31 - 1),
    ("int64_min", -(2**63)),
    ("int64_max", 2**63 - 1),
    ("float", 1.5),
    ("float_neg_huge", -1e308),
    ("float_denormal", 5e-324),
    ("decimal38_10", Decimal("-1234567890123456789012345678.0123456789")),
    ("decimal38_0", Decimal("99999999999999999999999999999999999999")),
    ("decimal38_9", Decimal("12345678901234567890123456789.012345678")),
    ("decimal_scale_kept", Decimal("1.500")),
    ("decimal_1e-38", Decimal("1E-38")),
    ("str_empty", ""),
    ("str_1", "a"),
    ("str_4000", "x" * 4000),
    ("str_4001", "y" * 4001),
    ("str_astral", "😀" * 3000),
    ("str_mixed_astral", "a😀中é" * 1500),
    ("str_1e6", "é" * 1_000_000),
    ("bytes_empty", b""),
    ("bytes_small", b"\x00\xff"),
    ("bytes_8000", bytes(range(256)) * 31 + bytes(64)),
    ("bytes_10240", bytes(range(256)) * 40),
    ("date", dt.date(2023, 12, 31)),
    ("date_max", dt.date(9999, 12, 31)),
    ("date_1753", dt.date(1753, 1, 1)),
    ("time", dt.time(13, 14, 15, 123456)),
    ("time_max", dt.time(23, 59, 59, 999999)),
    ("datetime", dt.datetime(2024, 2, 29, 23, 59, 58, 123456)),
    ("datetime_max", dt.datetime(9999, 12, 31, 23, 59, 59, 999999)),
    ("aware_plus14", dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=TZ(840))),
    ("aware_minus14", dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=TZ(-840))),
    ("aware_utc", dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)),
    ("uuid", uuid.UUID("6f9619ff-8b86-d011-b42d-00c04fc964ff")),
]


def exact(got, value) -> None:
    assert type(got) is type(value), f"{type(got).__name__} for {type(value).__name__}"
    assert got == value
    if isinstance(value, Decimal):
        assert str(got) == str(value)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        assert got.utcoffset() == value.utcoffset()
        assert got.replace(tzinfo=None) == value.replace(tzinfo=None)


@pytest.mark.parametrize("value", [v for _, v in SELECT_VALUES], ids=[i for i, _ in SELECT_VALUES])
def test_select_param(request, conn, driver, value):
    """`SELECT ?` returns the value with its own Python type (tz-aware datetime → datetimeoffset)."""
    aware = isinstance(value, dt.datetime) and value.tzinfo is not None
    got = conn.cursor().execute("SELECT ?", value).fetchval()
    if value is None:
        assert got is None
    elif aware and driver == "freetds":
        # DRIVER DIFFERENCE: FreeTDS has no DATETIMEOFFSET parameter type (SQL_SS_TIMESTAMPOFFSET
        # is HY004 there), so ferrodbc sends an aware datetime as text; into a DATETIMEOFFSET
        # column it converts (test_insert_select_declared_type), but `SELECT ?` echoes the text.
        assert type(got) is str
        assert got[-7] == " " and got[-6] in "+-"
        assert dt.datetime.fromisoformat(got[:-7] + got[-6:]) == value
        assert dt.datetime.fromisoformat(got[:-7] + got[-6:]).utcoffset() == value.utcoffset()
    else:
        exact(got, value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "-inf"])
def test_non_finite_float_is_rejected(conn, driver, value):
    with pytest.raises(ferrodbc.Error):
        got = conn.cursor().execute("SELECT ?", value).fetchval()
        pytest.fail(f"{value!r} came back as {got!r}")  # (pytest.fail is no ferrodbc.Error)


# (id, declared SQL Server type, parameter, expected value read back)
COLUMN_VALUES = [
    ("bit", "BIT", True, True),
    ("tinyint", "TINYINT", 255, 255),
    ("smallint", "SMALLINT", -32768, -32768),
    ("int", "INT", -(2**31), -(2**31)),
    ("bigint", "BIGINT", 2**63 - 1, 2**63 - 1),
    ("real", "REAL", 1.5, 1.5),
    ("float", "FLOAT", -2.75e300, -2.75e300),
    ("decimal38_10", "DECIMAL(38,10)", Decimal("1234567890123456789012345678.0000000001"), Decimal("1234567890123456789012345678.0000000001")),
    ("decimal_rescaled", "DECIMAL(18,4)", Decimal("-99.12"), Decimal("-99.1200")),
    ("numeric_int", "NUMERIC(10,3)", 7, Decimal("7.000")),
    ("money", "MONEY", Decimal("12.34"), Decimal("12.3400")),
    ("smallmoney", "SMALLMONEY", Decimal("-214748.3648"), Decimal("-214748.3648")),
    ("date", "DATE", dt.date(1999, 1, 2), dt.date(1999, 1, 2)),
    ("time7", "TIME(7)", dt.time(1, 2, 3, 456789), dt.time(1, 2, 3, 456789)),
    ("time0", "TIME(0)", dt.time(23, 59, 59), dt.time(23, 59, 59)),
    ("datetime", "DATETIME", dt.datetime(2020, 5, 6, 7, 8, 9, 120000), dt.datetime(2020, 5, 6, 7, 8, 9, 120000)),
    ("smalldatetime", "SMALLDATETIME", dt.datetime(2020, 5, 6, 7, 8), dt.datetime(2020, 5, 6, 7, 8)),
    ("datetime2_7", "DATETIME2(7)", dt.datetime(2021, 1, 2, 3, 4, 5, 678901), dt.datetime(2021, 1, 2, 3, 4, 5, 678901)),
    ("datetime2_0", "DATETIME2(0)", dt.datetime(2021, 1, 2, 3, 4, 5), dt.datetime(2021, 1, 2, 3, 4, 5)),
    ("dto_from_aware", "DATETIMEOFFSET(7)", dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=TZ(-840)), dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=TZ(-840))),
    ("dto_plus14", "DATETIMEOFFSET(0)", dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=TZ(840)), dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=TZ(840))),
    ("char", "CHAR(5)", "ab", "ab   "),
    ("varchar_cp1252", "VARCHAR(50)", "café €Š", "café €Š"),
    ("varchar_utf8", "VARCHAR(50) COLLATE Latin1_General_100_CI_AS_SC_UTF8", "中文 ü😀", "中文 ü😀"),
    ("nchar", "NCHAR(4)", "ж", "ж   "),
    ("nvarchar_astral", "NVARCHAR(50)", "ñandú 中 😀", "ñandú 中 😀"),
    ("nvarchar_max_4001", "NVARCHAR(MAX)", "é" * 4001, "é" * 4001),
    ("nvarchar_max_astral", "NVARCHAR(MAX)", "😀" * 5000, "😀" * 5000),
    ("varchar_max", "VARCHAR(MAX)", "v" * 9000, "v" * 9000),
    ("binary", "BINARY(4)", b"\x01\x02", b"\x01\x02\x00\x00"),
    ("varbinary", "VARBINARY(50)", b"\x10\x20", b"\x10\x20"),
    ("varbinary_max_9000", "VARBINARY(MAX)", b"\xab" * 9000, b"\xab" * 9000),
    ("uniqueidentifier", "UNIQUEIDENTIFIER", uuid.UUID("6F9619FF-8B86-D011-B42D-00C04FC964FF"), uuid.UUID("6F9619FF-8B86-D011-B42D-00C04FC964FF")),
    ("uniqueidentifier_from_str", "UNIQUEIDENTIFIER", "6F9619FF-8B86-D011-B42D-00C04FC964FF", uuid.UUID("6F9619FF-8B86-D011-B42D-00C04FC964FF")),
    ("xml", "XML", "<a>1</a>", "<a>1</a>"),
]


@pytest.mark.parametrize("sqltype,param,expected", [c[1:] for c in COLUMN_VALUES], ids=[c[0] for c in COLUMN_VALUES])
def test_insert_select_declared_type(request, conn, driver, sqltype, param, expected):
    """INSERT the parameter into a column of the declared type, SELECT it back (and a NULL)."""
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, v {sqltype})")
    cur.execute(f"INSERT INTO {t} (id, v) VALUES (?, ?)", 1, param)
    assert cur.rowcount == 1
    cur.execute(f"INSERT INTO {t} (id, v) VALUES (?, ?)", 2, None)
    rows = cur.execute(f"SELECT id, v FROM {t} ORDER BY id").fetchall()
    assert [r[0] for r in rows] == [1, 2]
    exact(rows[0][1], expected)
    assert rows[1][1] is None




def test_executemany_1000_rows(conn, driver):
    """1,000 parameter sets in one executemany (one array: Driver 18 sends a batch of RPCs),
    then COUNT(*) and every value back."""
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, name NVARCHAR(20), amount DECIMAL(18,4), ts DATETIME2(3))")
    rows = [(i, f"n{i} é", Decimal(i).scaleb(-2), dt.datetime(2024, 1, 1) + dt.timedelta(seconds=i)) for i in range(1000)]
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?, ?, ?)", rows)
    assert cur.rowcount == 1000  # the sum over the array (pyodbc says -1)
    assert cur.execute(f"SELECT COUNT(*) FROM {t}").fetchval() == 1000
    got = [tuple(r) for r in cur.execute(f"SELECT id, name, amount, ts FROM {t} ORDER BY id").fetchall()]
    assert got == [(i, n, a.quantize(Decimal("0.0001")), ts) for i, n, a, ts in rows]


def test_executemany_single_row_set(conn, driver):
    """One parameter set (no array on the wire) goes through both drivers."""
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, name NVARCHAR(20))")
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(7, "seven 😀")])
    assert [tuple(r) for r in cur.execute(f"SELECT * FROM {t}").fetchall()] == [(7, "seven 😀")]


def test_executemany_error_is_raised(request, conn, driver):
    """A server error on a parameter array raises; it must not end up as a mere message."""
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT)")
    try:
        cur.executemany(f"INSERT INTO {t} VALUES (?)", [(1,), (2,), (3,)])
    except ferrodbc.DatabaseError:
        return  # raised: the caller knows
    errors = [m for m in cur.messages if not m[0].startswith("[01")]
    assert not errors, f"executemany returned normally with server errors in messages: {errors}"


def test_executemany_into_missing_table_raises(conn, driver):
    cur = conn.cursor()
    with pytest.raises(ferrodbc.ProgrammingError) as ei:
        cur.executemany("INSERT INTO no_such_table_zz VALUES (?)", [(1,)])
    assert ei.value.native_error == 208


def test_setinputsizes_is_honoured(conn, driver):
    """A declared (SQL_DECIMAL, 20, 6) makes the server see decimal(20,6): the echo carries scale 6;
    (SQL_DECIMAL, 10, 2) turns an int into Decimal('7.00'); SQL_VARCHAR turns an int into str."""
    cur = conn.cursor()
    cur.setinputsizes([(ferrodbc.SQL_DECIMAL, 20, 6)])
    got = cur.execute("SELECT ?", Decimal("1.25")).fetchval()
    assert str(got) == "1.250000"
    assert cur.description[0][4:6] == (20, 6)
    cur.setinputsizes([(ferrodbc.SQL_DECIMAL, 10, 2)])
    assert str(cur.execute("SELECT ?", 7).fetchval()) == "7.00"
    cur.setinputsizes([(ferrodbc.SQL_VARCHAR,)])
    assert cur.execute("SELECT ?", 5).fetchval() == "5"
    cur.setinputsizes([(ferrodbc.SQL_WVARCHAR, 10)])
    assert cur.execute("SELECT ?", "abc").fetchval() == "abc"
    assert cur.description[0][3] == 10
    # A bare int is a column size, as in pyodbc: the type stays the value's (nvarchar).
    cur.setinputsizes([12])
    assert cur.execute("SELECT ?", "abc").fetchval() == "abc"
    assert cur.description[0][3] == 12
    # sizes apply to one execute only: the next one infers again
    assert cur.execute("SELECT ?", Decimal("1.25")).fetchval().as_tuple().exponent == -2
    assert cur.description[0][4:6] == (3, 2)


def test_setinputsizes_into_declared_table(conn, driver):
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (d DECIMAL(10,2), s NVARCHAR(10))")
    cur.setinputsizes([(ferrodbc.SQL_DECIMAL, 10, 2), (ferrodbc.SQL_WVARCHAR, 10)])
    cur.execute(f"INSERT INTO {t} VALUES (?, ?)", Decimal("3.14"), "hi")
    assert tuple(cur.execute(f"SELECT d, s FROM {t}").fetchone()) == (Decimal("3.14"), "hi")


def test_param_count_mismatch_is_programming_error(conn, driver):
    with pytest.raises(ferrodbc.ProgrammingError):
        conn.cursor().execute("SELECT ?, ?", 1)


def test_executemany_mixed_nulls_lengths_and_scales(conn, driver):
    """One parameter array whose columns mix NULLs, lengths (text up to 6,000 units, binary up to
    14,700 bytes) and Decimal scales (the column is sent at the widest scale): every row exact."""
    import decimal

    # FreeTDS 1.3 sends a parameter array as one text batch and writes each DATETIME2 parameter
    # as a literal without its fraction ('2024-01-01 00:00:01' for 00:00:01.001000): ferrodbc
    # sends arrays with timestamps row by row through FreeTDS, so every microsecond arrives.
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, s NVARCHAR(MAX), d DECIMAL(38,10), b VARBINARY(MAX), dd DATE, "
                "g UNIQUEIDENTIFIER, f BIT, fl FLOAT, ts DATETIME2(7), big BIGINT)")
    decs = [Decimal("1.5"), Decimal("2.25"), Decimal("-3"), Decimal("12345678901234567890.0123456789")]
    rows = [(i,
             None if i % 7 == 0 else ("é😀" * (i * 100) if i % 5 == 0 else f"s{i}"),
             None if i % 6 == 0 else decs[i % 4],
             None if i % 4 == 0 else bytes([i]) * (i * 300),
             None if i % 3 == 0 else dt.date(2000 + i, 1, 1),
             None if i % 2 == 0 else uuid.UUID(int=i),
             None if i % 9 == 0 else bool(i % 2),
             None if i % 8 == 0 else i / 3,
             None if i % 10 == 0 else dt.datetime(2024, 1, 1, 0, 0, i, i * 1000),
             None if i % 11 == 0 else 2**40 + i) for i in range(50)]
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    ctx = decimal.Context(prec=60)
    exp = [tuple(v.quantize(Decimal("1E-10"), context=ctx) if isinstance(v, Decimal) else v for v in r) for r in rows]
    got = [tuple(r) for r in cur.execute(f"SELECT * FROM {t} ORDER BY id").fetchall()]
    assert got == exp
    assert all(str(r[2]).split(".")[1].__len__() == 10 for r in got if r[2] is not None)


class _DecimalSubclass(Decimal):
    """Takes the as_tuple() path: only the exact Decimal type is read through str()."""


DECIMAL_TEXTS = ["0", "-0", "0.00", "0.05", "-0.0500", "100", "1E+2", "1.5E-7", "-12.340", "7",
                 "123456789012345678901234567890.12345678", "1E-38", "9.99E+20", "0E-10", "00012.50"]


@pytest.mark.parametrize("text", DECIMAL_TEXTS)
def test_a_decimal_read_through_str_binds_as_through_as_tuple(conn, driver, text):
    """Both ways of reading a Decimal give the same precision, scale and value: what SELECT ?
    returns (decimal(p, s) as described to the server) is identical, digit for digit."""
    cur = conn.cursor()
    exact = cur.execute("SELECT ?", Decimal(text)).fetchval()
    via_tuple = cur.execute("SELECT ?", _DecimalSubclass(text)).fetchval()
    assert str(exact) == str(via_tuple)
    assert exact == Decimal(text)
