"""Every SQL Server type decoded exactly, through both drivers.

Table-driven over the columns of the peer's synthetic ``peer.types_all_<n>`` (expected values from
eng/peers/synthetic.py; every 7th row, i % 7 == 3, is NULL in every column), then values at the
edges through literal SELECT / CAST on the peer.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from decimal import Decimal

import pytest

import ferrodbc

from sqlserver_support import synthetic, tname

N = 60  # rows of types_all per column test: covers NULL rows 3, 10, 17, ... and both LOB sizes

TYPES_ALL = synthetic.columns("types_all")
COLUMNS = [name for name, _ in TYPES_ALL if name != "id"]
SQLTYPE = dict(TYPES_ALL)
EXPECTED = list(synthetic.rows("types_all", N))

# What each SQL Server type must become in Python (the README's mapping table).
PY_TYPE = {
    "bit": bool,
    "tinyint": int,
    "smallint": int,
    "int": int,
    "bigint": int,
    "money": Decimal,
    "smallmoney": Decimal,
    "real": float,
    "float": float,
    "date": dt.date,
    "datetime": dt.datetime,
    "smalldatetime": dt.datetime,
    "binary": bytes,
    "varbinary": bytes,
    "uniqueidentifier": uuid.UUID,
    "xml": str,
    "sql_variant": int,  # the synthetic variant column holds INT values
}


def base(sqltype: str) -> str:
    return re.split(r"[ (]", sqltype, maxsplit=1)[0]


def py_type(sqltype: str) -> type:
    b = base(sqltype)
    if b in ("decimal", "numeric"):
        return Decimal
    if b == "time":
        return dt.time
    if b.startswith("datetime2"):
        return dt.datetime
    if b.startswith("datetimeoffset"):
        return dt.datetime
    if b in ("char", "varchar", "nchar", "nvarchar"):
        return str
    return PY_TYPE[b]


def scale_of(sqltype: str) -> int | None:
    """The exact number of decimal places a Decimal of this type must carry."""
    b = base(sqltype)
    if b in ("money", "smallmoney"):
        return 4
    m = re.match(r"(?:decimal|numeric)\((\d+),(\d+)\)", sqltype)
    return int(m.group(2)) if m else None


def variant_text(value):
    """FreeTDS renders a sql_variant cell as text (see FREETDS_VARIANT_TEXT)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.hex().upper()
    return str(value)


def expected_through(driver: str, sqltype: str, value):
    """The expected value through `driver`: identical, except sql_variant through FreeTDS."""
    if driver == "freetds" and base(sqltype) == "sql_variant":
        return variant_text(value)
    return value


def assert_same(got, exp, sqltype: str, where: str, driver: str = "msodbcsql") -> None:
    """Value equality AND the exact Python type, plus the type-specific exactness checks."""
    exp = expected_through(driver, sqltype, exp)
    if exp is None:
        assert got is None, f"{where}: expected NULL, got {got!r}"
        return
    want = str if driver == "freetds" and base(sqltype) == "sql_variant" else py_type(sqltype)
    assert type(got) is want, f"{where}: {sqltype} became {type(got).__name__}, want {want.__name__}"
    assert got == exp, f"{where}: {got!r} != {exp!r}"
    scale = scale_of(sqltype)
    if scale is not None:
        # Decimal('1.50') == Decimal('1.5'): the scale must be checked separately.
        assert got.as_tuple().exponent == -scale, f"{where}: {got!r} has exponent {got.as_tuple().exponent}, want {-scale}"
        assert str(got) == str(exp), f"{where}: str {got} != {exp}"
    if isinstance(exp, dt.datetime) and exp.tzinfo is not None:
        assert got.utcoffset() == exp.utcoffset(), f"{where}: offset {got.utcoffset()} != {exp.utcoffset()}"
        assert got.replace(tzinfo=None) == exp.replace(tzinfo=None), f"{where}: wall time differs"
    if isinstance(exp, dt.datetime) and exp.tzinfo is None:
        assert got.tzinfo is None, f"{where}: naive expected"


@pytest.mark.parametrize("column", COLUMNS)
def test_types_all_column(request, conn, driver, column):
    """Each column of peer.types_all_60 equals synthetic.rows(), value, Python type and scale."""
    sqltype = SQLTYPE[column]
    k = [n for n, _ in TYPES_ALL].index(column)
    cur = conn.cursor()
    cur.execute(f"SELECT id, {column} FROM peer.types_all_{N}")
    rows = cur.fetchall()
    assert len(rows) == N
    assert cur.description[1][0] == column
    for i, row in enumerate(rows):
        assert row[0] == i
        assert_same(row[1], EXPECTED[i][k], sqltype, f"row {i} {column} {sqltype}", driver)
    # the NULL rows really were NULL and the others not (the table is not all-NULL)
    assert rows[3][1] is None and rows[10][1] is None
    assert sum(r[1] is not None for r in rows) == len([i for i in range(N) if i % 7 != 3])


def test_types_all_whole_rows(request, conn, driver):
    """SELECT * over every type at once (bound prefix, streamed LOBs, the columns after them)."""
    cur = conn.cursor()
    cur.execute("SELECT * FROM peer.types_all_300")
    rows = cur.fetchall()
    assert [d[0] for d in cur.description] == [n for n, _ in TYPES_ALL]
    assert len(rows) == 300
    for i, (row, exp) in enumerate(zip(rows, synthetic.rows("types_all", 300))):
        for (name, sqltype), g, e in zip(TYPES_ALL, row, exp):
            assert_same(g, e, sqltype, f"row {i} {name}", driver)


def test_description_types_and_sizes(conn, driver):
    cur = conn.cursor()
    cur.execute("SELECT TOP 1 c_dec38, c_dec9, c_money, c_nvarchar, c_varbinary50, c_bit, c_guid, c_date FROM peer.types_all_5")
    d = {c[0]: c for c in cur.description}
    assert d["c_dec38"][1] is Decimal and d["c_dec38"][4:6] == (38, 10)
    assert d["c_dec9"][4:6] == (9, 2)
    assert d["c_money"][5] == 4
    assert d["c_nvarchar"][1] is str and d["c_nvarchar"][3] == 50
    assert d["c_varbinary50"][1] is bytes
    assert d["c_bit"][1] is bool
    assert d["c_guid"][1] is uuid.UUID
    assert d["c_date"][1] is dt.date
    cur.fetchall()


def test_non_ascii_column_names(conn, driver):
    cur = conn.cursor()
    cur.execute("SELECT 1 AS [é x], 2 AS [ñ], 3 AS [中文], 4 AS [" + "c" * 128 + "]")
    assert [d[0] for d in cur.description] == ["é x", "ñ", "中文", "c" * 128]
    row = cur.fetchone()
    assert row["中文"] == 3 and row[1] == 2


def test_astral_column_name(conn, driver):
    cur = conn.cursor()
    cur.execute("SELECT 1 AS [😀], 2 AS [a😀b]")
    assert [d[0] for d in cur.description] == ["😀", "a😀b"]


def test_uniqueidentifier_as_str_when_native_uuid_off(conn, driver):
    assert conn.native_uuid is True
    cur = conn.cursor()
    exp = [r[38] for r in synthetic.rows("types_all", 12)]
    got = [r[0] for r in cur.execute("SELECT c_guid FROM peer.types_all_12").fetchall()]
    assert got == exp and all(type(g) is uuid.UUID for g in got if g is not None)
    conn.native_uuid = False
    got = [r[0] for r in cur.execute("SELECT c_guid FROM peer.types_all_12").fetchall()]
    # SQL Server's canonical text: upper case, with hyphens (what pyodbc returns)
    assert got == [None if e is None else str(e).upper() for e in exp]
    assert cur.description[0][1] is str
    conn.native_uuid = True
    assert type(cur.execute("SELECT c_guid FROM peer.types_all_2").fetchone()[0]) is uuid.UUID


# --- values at the edges ----------------------------------------------------------------------

TZ = lambda minutes: dt.timezone(dt.timedelta(minutes=minutes))  # noqa: E731

# (id, T-SQL expression, expected value); type checked with the exact Python type of `expected`.
EDGES = [
    ("tinyint_min", "CAST(0 AS TINYINT)", 0),
    ("tinyint_max", "CAST(255 AS TINYINT)", 255),
    ("smallint_min", "CAST(-32768 AS SMALLINT)", -32768),
    ("smallint_max", "CAST(32767 AS SMALLINT)", 32767),
    ("int_min", "CAST(-2147483648 AS INT)", -(2**31)),
    ("int_max", "CAST(2147483647 AS INT)", 2**31 - 1),
    ("bigint_min", "CAST(-9223372036854775808 AS BIGINT)", -(2**63)),
    ("bigint_max", "CAST(9223372036854775807 AS BIGINT)", 2**63 - 1),
    ("bit_1", "CAST(1 AS BIT)", True),
    ("bit_0", "CAST(0 AS BIT)", False),
    ("dec38_max", "CAST('99999999999999999999999999999999999999' AS DECIMAL(38,0))", Decimal("99999999999999999999999999999999999999")),
    ("dec38_10_min", "CAST('-9999999999999999999999999999.9999999999' AS DECIMAL(38,10))", Decimal("-9999999999999999999999999999.9999999999")),
    ("dec38_38_tiny", "CAST('0.00000000000000000000000000000000000001' AS DECIMAL(38,38))", Decimal("1E-38")),
    ("numeric_trailing_zeros", "CAST(1.5 AS NUMERIC(5,3))", Decimal("1.500")),
    ("decimal_zero_scale4", "CAST(0 AS DECIMAL(10,4))", Decimal("0.0000")),
    ("money_max", "CAST(922337203685477.5807 AS MONEY)", Decimal("922337203685477.5807")),
    ("money_one", "CAST(1 AS MONEY)", Decimal("1.0000")),
    ("smallmoney_max", "CAST(214748.3647 AS SMALLMONEY)", Decimal("214748.3647")),
    ("smallmoney_min", "CAST(-214748.3648 AS SMALLMONEY)", Decimal("-214748.3648")),
    ("real_max", "CAST(3.4e38 AS REAL)", 3.3999999521443642e38),
    ("real_tenth", "CAST(0.1 AS REAL)", 0.10000000149011612),
    ("float_max", "CAST(1.7976931348623157e308 AS FLOAT)", 1.7976931348623157e308),
    ("float_min_normal", "CAST(-2.2250738585072014e-308 AS FLOAT)", -2.2250738585072014e-308),
    ("date_min", "CAST('0001-01-01' AS DATE)", dt.date(1, 1, 1)),
    ("date_max", "CAST('9999-12-31' AS DATE)", dt.date(9999, 12, 31)),
    ("time7_max_truncated", "CAST('23:59:59.9999999' AS TIME(7))", dt.time(23, 59, 59, 999999)),
    ("time7_7th_digit_dropped", "CAST('12:34:56.1234567' AS TIME(7))", dt.time(12, 34, 56, 123456)),
    ("time0_midnight", "CAST('00:00:00' AS TIME(0))", dt.time(0, 0)),
    ("time3", "CAST('12:34:56.123' AS TIME(3))", dt.time(12, 34, 56, 123000)),
    ("time1", "CAST('12:34:56.1' AS TIME(1))", dt.time(12, 34, 56, 100000)),
    ("datetime_min", "CAST('1753-01-01 00:00:00' AS DATETIME)", dt.datetime(1753, 1, 1)),
    ("datetime_max", "CAST('9999-12-31 23:59:59.997' AS DATETIME)", dt.datetime(9999, 12, 31, 23, 59, 59, 997000)),
    ("smalldatetime_min", "CAST('1900-01-01 00:00' AS SMALLDATETIME)", dt.datetime(1900, 1, 1)),
    ("smalldatetime_max", "CAST('2079-06-06 23:59' AS SMALLDATETIME)", dt.datetime(2079, 6, 6, 23, 59)),
    ("datetime2_min", "CAST('0001-01-01 00:00:00' AS DATETIME2(0))", dt.datetime(1, 1, 1)),
    ("datetime2_7_max", "CAST('9999-12-31 23:59:59.9999999' AS DATETIME2(7))", dt.datetime(9999, 12, 31, 23, 59, 59, 999999)),
    ("dto7_plus14", "CAST('2024-01-02 03:04:05.1234567 +14:00' AS DATETIMEOFFSET(7))", dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=TZ(840))),
    ("dto0_minus14", "CAST('2024-01-02 03:04:05 -14:00' AS DATETIMEOFFSET(0))", dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=TZ(-840))),
    ("dto1_plus0530", "CAST('2024-01-02 03:04:05.5 +05:30' AS DATETIMEOFFSET(1))", dt.datetime(2024, 1, 2, 3, 4, 5, 500000, tzinfo=TZ(330))),
    ("dto3_minus0345", "CAST('2024-01-02 03:04:05 -03:45' AS DATETIMEOFFSET(3))", dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=TZ(-225))),
    ("dto_min_utc", "CAST('0001-01-01 00:00:00 +00:00' AS DATETIMEOFFSET(0))", dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc)),
    ("dto_max_utc", "CAST('9999-12-31 23:59:59.9999999 +00:00' AS DATETIMEOFFSET(7))", dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc)),
    ("empty_varchar", "''", ""),
    ("empty_nvarchar", "N''", ""),
    ("empty_nvarchar_max", "CAST(N'' AS NVARCHAR(MAX))", ""),
    ("char3_blank_padded", "CAST('' AS CHAR(3))", "   "),
    ("empty_varbinary", "CAST('' AS VARBINARY(10))", b""),
    ("empty_varbinary_max", "CAST('' AS VARBINARY(MAX))", b""),
    ("one_char", "N'b'", "b"),
    ("emoji_nvarchar", "N'😀'", "😀"),
    ("emoji_nvarchar_max", "CAST(N'a😀b' AS NVARCHAR(MAX))", "a😀b"),
    ("emoji_nvarchar10", "CAST(N'a😀b' AS NVARCHAR(10))", "a😀b"),
    ("cp1252_varchar", "CAST('café €Š' AS VARCHAR(20))", "café €Š"),
    ("utf8_varchar", "CAST(N'中文 ü😀' AS VARCHAR(20) COLLATE Latin1_General_100_CI_AS_SC_UTF8)", "中文 ü😀"),
    ("guid", "CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS UNIQUEIDENTIFIER)", uuid.UUID("6f9619ff-8b86-d011-b42d-00c04fc964ff")),
    ("xml", "CAST(N'<a b=\"1\">x</a>' AS XML)", '<a b="1">x</a>'),
]


@pytest.mark.parametrize("sql,expected", [e[1:] for e in EDGES], ids=[e[0] for e in EDGES])
def test_edge_literal(request, conn, driver, sql, expected):
    got = conn.cursor().execute(f"SELECT {sql}").fetchval()
    assert type(got) is type(expected), f"{sql}: {type(got).__name__}"
    assert got == expected
    if isinstance(expected, Decimal):
        assert str(got) == str(expected) and got.as_tuple().exponent == expected.as_tuple().exponent
    if isinstance(expected, dt.datetime) and expected.tzinfo is not None:
        assert got.utcoffset() == expected.utcoffset()
        assert got.replace(tzinfo=None) == expected.replace(tzinfo=None)


def test_money_min(conn, driver):
    """The MONEY minimum is i64::MIN / 10^4 exactly (the peer used to saturate at -i64::MAX)."""
    got = conn.cursor().execute("SELECT CAST(-922337203685477.5808 AS MONEY), CAST(-214748.3648 AS SMALLMONEY)").fetchone()
    assert [str(v) for v in got] == ["-922337203685477.5808", "-214748.3648"]


NULL_TYPES = ["BIT", "TINYINT", "SMALLINT", "INT", "BIGINT", "DECIMAL(38,10)", "NUMERIC(5,2)", "MONEY", "SMALLMONEY",
              "REAL", "FLOAT", "DATE", "TIME(7)", "DATETIME", "SMALLDATETIME", "DATETIME2(7)", "DATETIMEOFFSET(7)",
              "CHAR(5)", "VARCHAR(10)", "NCHAR(5)", "NVARCHAR(10)", "VARCHAR(MAX)", "NVARCHAR(MAX)", "VARBINARY(MAX)",
              "BINARY(4)", "VARBINARY(10)", "UNIQUEIDENTIFIER", "XML", "SQL_VARIANT"]


@pytest.mark.parametrize("sqltype", NULL_TYPES)
def test_null_of_every_type(request, conn, driver, sqltype):
    """A typed NULL is None, through both drivers."""
    cur = conn.cursor()
    cur.execute(f"SELECT CAST(NULL AS {sqltype}) AS v, 1 AS k")
    row = cur.fetchone()
    assert row[0] is None and row[1] == 1
    assert cur.fetchone() is None


def test_nulls_between_values_in_one_column(request, conn, driver):
    """NULL and non-NULL cells alternate in one bound buffer without leaking values."""
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, d DECIMAL(38,10), s NVARCHAR(20), b VARBINARY(MAX), g UNIQUEIDENTIFIER)")
    vals = [(i, Decimal(i).scaleb(-10) if i % 2 else None, None if i % 3 == 0 else f"s{i}",
             bytes([i]) * i if i % 4 else None, uuid.UUID(int=i) if i % 5 else None) for i in range(1, 13)]
    for v in vals:
        cur.execute(f"INSERT INTO {t} VALUES (?, ?, ?, ?, ?)", *v)
    got = [tuple(r) for r in cur.execute(f"SELECT id, d, s, b, g FROM {t} ORDER BY id").fetchall()]
    assert got == vals


# --- sql_variant ------------------------------------------------------------------------------

VARIANTS = [
    ("int", "CAST(42 AS SQL_VARIANT)", 42),
    ("negative_int", "CAST(CAST(-7 AS INT) AS SQL_VARIANT)", -7),
    ("bigint", "CAST(CAST(5000000000 AS BIGINT) AS SQL_VARIANT)", 5000000000),
    ("tinyint", "CAST(CAST(3 AS TINYINT) AS SQL_VARIANT)", 3),
    ("bit", "CAST(CAST(1 AS BIT) AS SQL_VARIANT)", True),
    ("float", "CAST(CAST(2.5 AS FLOAT) AS SQL_VARIANT)", 2.5),
    ("decimal", "CAST(CAST(1.25 AS DECIMAL(5,2)) AS SQL_VARIANT)", Decimal("1.25")),
    ("numeric_literal", "CAST(1.5 AS SQL_VARIANT)", Decimal("1.5")),
    ("money", "CAST(CAST(1.5 AS MONEY) AS SQL_VARIANT)", Decimal("1.5000")),
    ("date", "CAST(CAST('2024-01-02' AS DATE) AS SQL_VARIANT)", dt.date(2024, 1, 2)),
    ("datetime2", "CAST(CAST('2024-01-02 03:04:05.1234567' AS DATETIME2(7)) AS SQL_VARIANT)", dt.datetime(2024, 1, 2, 3, 4, 5, 123456)),
    ("guid", "CAST(CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS UNIQUEIDENTIFIER) AS SQL_VARIANT)", uuid.UUID("6F9619FF-8B86-D011-B42D-00C04FC964FF")),
    ("nvarchar_astral", "CAST(N'😀x' AS SQL_VARIANT)", "😀x"),
    ("varchar", "CAST('abc' AS SQL_VARIANT)", "abc"),
    ("varbinary", "CAST(0x0102 AS SQL_VARIANT)", b"\x01\x02"),
]

# FreeTDS's rendering of a variant cell as text, where it differs from str(value)
FREETDS_VARIANT_TEXT = {
    "bit": "1",
    "datetime2": "2024-01-02 03:04:05.1234567",
    "guid": "6F9619FF-8B86-D011-B42D-00C04FC964FF",
    "varbinary": "0102",
}


@pytest.mark.parametrize("sql,expected", [v[1:] for v in VARIANTS], ids=[v[0] for v in VARIANTS])
def test_sql_variant_value(conn, driver, request, sql, expected):
    """Through Driver 18 a sql_variant cell is the value of its underlying type (the engine asks
    SQL_CA_SS_VARIANT_TYPE per cell): int, bool, float, Decimal with its scale, date, datetime,
    UUID, str, bytes. DRIVER DIFFERENCE: FreeTDS cannot name the base type (that attribute is
    msodbcsql-only, HY091; pyodbc through FreeTDS fails the query), so ferrodbc returns the
    cell's text rendering, a str, and the description type is str."""
    cur = conn.cursor()
    got = cur.execute(f"SELECT {sql}, CAST(NULL AS SQL_VARIANT)").fetchone()
    assert got[1] is None
    if driver == "msodbcsql":
        assert type(got[0]) is type(expected)
        assert got[0] == expected
        if isinstance(expected, Decimal):
            assert str(got[0]) == str(expected)
        assert cur.description[0][1] is object
    else:
        key = request.node.callspec.id.split("-", 1)[1]
        assert got[0] == FREETDS_VARIANT_TEXT.get(key, str(expected))
        assert cur.description[0][1] is str


# --- long and astral strings / binaries -------------------------------------------------------

REPLICATED = [
    ("nvarchar_4000", "REPLICATE(N'x', 4000)", "x" * 4000),
    ("nvarchar_max_4001", "REPLICATE(CAST(N'x' AS NVARCHAR(MAX)), 4001)", "x" * 4001),
    ("nvarchar_max_1e6", "REPLICATE(CAST(N'é' AS NVARCHAR(MAX)), 1000000)", "é" * 1_000_000),
    ("nvarchar_max_astral", "REPLICATE(CAST(N'😀' AS NVARCHAR(MAX)), 300000)", "😀" * 300_000),
    ("varchar_8000", "REPLICATE('y', 8000)", "y" * 8000),
    ("varchar_max_1e6", "REPLICATE(CAST('y' AS VARCHAR(MAX)), 1000000)", "y" * 1_000_000),
    pytest.param("CAST(REPLICATE(CAST(0xAB AS VARBINARY(MAX)), 9000) AS VARBINARY(MAX))", b"\xab" * 9000,
                 id="varbinary_max_9000"),
]


@pytest.mark.parametrize("sql,expected", [pytest.param(*r[1:], id=r[0]) if type(r) is tuple else r for r in REPLICATED])
def test_long_literal(conn, driver, sql, expected):
    """Long values built on the server (REPLICATE), returned whole: 4000/4001/10^6 characters,
    astral ones (2 UTF-16 units each) in nvarchar(max), > 8000 bytes."""
    got = conn.cursor().execute(f"SELECT {sql} AS v, 1 AS after").fetchone()
    assert type(got[0]) is type(expected)
    assert len(got[0]) == len(expected)
    assert got[0] == expected
    assert got[1] == 1


LONG_TEXT = [
    ("len1", "z"),
    ("len4000", "x" * 4000),
    ("len4001", "y" * 4001),
    ("len1e6", "é" * 1_000_000),
    ("astral_4001", "😀" * 4001),
    ("astral_mixed_1e6", ("a😀中é" * 250_000)),
]


@pytest.mark.parametrize("text", [t for _, t in LONG_TEXT], ids=[i for i, _ in LONG_TEXT])
def test_long_text_in_nvarchar_max(conn, driver, text):
    """Whole values (never truncated) of 1, 4000, 4001 and 10^6 characters, astral ones included,
    through an NVARCHAR(MAX) column (streamed) and back as a parameter echo."""
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, body NVARCHAR(MAX), tail INT)")
    cur.execute(f"INSERT INTO {t} VALUES (1, ?, 7)", text)
    row = cur.execute(f"SELECT id, body, tail FROM {t}").fetchone()
    assert row[0] == 1 and row[2] == 7
    assert len(row[1]) == len(text)
    assert row[1] == text


def test_long_binary_and_varchar_max(conn, driver):
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (v VARCHAR(MAX), b VARBINARY(MAX), b8 VARBINARY(8000))")
    v = "café;" * 200_000
    b = bytes(range(256)) * 4000 + b"\x00"
    b8 = bytes(range(256)) * 31 + bytes(64)
    cur.execute(f"INSERT INTO {t} VALUES (?, ?, ?)", v, b, b8)
    got = cur.execute(f"SELECT v, b, b8 FROM {t}").fetchone()
    assert got[0] == v
    assert got[1] == b and type(got[1]) is bytes
    assert got[2] == b8 and len(got[2]) == 8000


def test_text_ending_in_nul_is_kept(conn, driver):
    """U+0000 is an ordinary character to SQL Server: a value ending in (or holding) one keeps it,
    in bound and in streamed (MAX) columns, because lengths come from the length indicators,
    never from a terminator. (SQLite3 ODBC and PostgreSQL cannot carry it: the first reads text
    as C strings, the second rejects NUL in text.)"""
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (a NVARCHAR(10), b VARCHAR(10), c NVARCHAR(MAX), d VARCHAR(MAX))")
    for value in ("ab\0", "a\0b", "\0"):
        cur.execute(f"DELETE FROM {t}")
        cur.execute(f"INSERT INTO {t} VALUES (?, ?, ?, ?)", value, value, value, value)
        got = tuple(cur.execute(f"SELECT a, b, c, d FROM {t}").fetchone())
        assert got == (value,) * 4, f"{value!r} through {driver}"
    assert cur.execute("SELECT 'ab' + CHAR(0)").fetchval() == "ab\0"


@pytest.mark.parametrize("shape,n", [("lob_nvarcharmax_64k", 3), ("lob_varbinarymax_1024k", 2), ("lob_nvarcharmax_2k", 40)])
def test_lob_shapes(conn, driver, shape, n):
    got = [tuple(r) for r in conn.cursor().execute(f"SELECT * FROM peer.{shape}_{n}").fetchall()]
    assert got == list(synthetic.rows(shape, n))


# --- every fractional-second scale 0..7 ---------------------------------------------------------

DIGITS = "1234567"
OFFSETS = ["+01:00", "-01:30", "+14:00", "-14:00", "+05:45", "+00:00", "-09:30", "+12:45"]


def _micro(scale: int) -> int:
    # the value has exactly `scale` digits; a 7th digit is dropped (truncated, never rounded)
    return int((DIGITS[:scale] + "000000")[:6]) if scale else 0


@pytest.mark.parametrize("scale", range(8))
def test_fraction_scales(conn, driver, scale):
    """time(s), datetime2(s) and datetimeoffset(s) for s = 0..7, each with s significant
    fractional digits (and an offset per scale, -14:00..+14:00, quarter hours included)."""
    frac = f".{DIGITS[:scale]}" if scale else ""
    off = OFFSETS[scale]
    row = conn.cursor().execute(
        f"SELECT CAST('12:34:56{frac}' AS TIME({scale})), CAST('2024-05-06 12:34:56{frac}' AS DATETIME2({scale})), "
        f"CAST('2024-05-06 12:34:56{frac} {off}' AS DATETIMEOFFSET({scale}))").fetchone()
    us = _micro(scale)
    sign = -1 if off[0] == "-" else 1
    tz = dt.timezone(sign * dt.timedelta(hours=int(off[1:3]), minutes=int(off[4:6])))
    assert row[0] == dt.time(12, 34, 56, us) and type(row[0]) is dt.time
    assert row[1] == dt.datetime(2024, 5, 6, 12, 34, 56, us) and row[1].tzinfo is None
    assert row[2].replace(tzinfo=None) == dt.datetime(2024, 5, 6, 12, 34, 56, us)
    assert row[2].utcoffset() == tz.utcoffset(None)


def test_seventh_digit_truncated_not_rounded(conn, driver):
    row = conn.cursor().execute(
        "SELECT CAST('12:34:56.9999999' AS TIME(7)), CAST('00:00:00.0000001' AS TIME(7)), "
        "CAST('2024-05-06 23:59:59.9999999' AS DATETIME2(7)), "
        "CAST('2024-05-06 23:59:59.9999999 -14:00' AS DATETIMEOFFSET(7))").fetchone()
    assert row[0] == dt.time(12, 34, 56, 999999)
    assert row[1] == dt.time(0, 0)
    assert row[2] == dt.datetime(2024, 5, 6, 23, 59, 59, 999999)
    assert row[3].replace(tzinfo=None) == dt.datetime(2024, 5, 6, 23, 59, 59, 999999)
    assert row[3].utcoffset() == -dt.timedelta(hours=14)


# --- binary <-> nvarchar and malformed UTF-16 ---------------------------------------------------

def test_binary_nvarchar_casts_are_utf16(conn, driver):
    row = conn.cursor().execute("SELECT CAST(N'é' AS VARBINARY(10)), CAST(0x4100 AS NVARCHAR(10))").fetchone()
    assert tuple(row) == (b"\xe9\x00", "A")


def test_lone_surrogate_follows_decode_errors(conn, driver):
    """nvarchar holding a lone high surrogate (U+D83D): strict raises DataError naming the column
    and row, replace gives U+FFFD, surrogatepass keeps the code unit."""
    q = "SELECT 1 AS k, CAST(0x3DD8 AS NVARCHAR(1)) AS bad, CAST(0x41003DD8 AS NVARCHAR(MAX)) AS bad_max"
    conn.decode_errors = "replace"
    assert tuple(conn.cursor().execute(q).fetchone()) == (1, "\ufffd", "A\ufffd")
    conn.decode_errors = "surrogatepass"
    assert tuple(conn.cursor().execute(q).fetchone()) == (1, "\ud83d", "A\ud83d")
    conn.decode_errors = "strict"
    with pytest.raises(ferrodbc.DataError) as ei:
        conn.cursor().execute(q).fetchone()
    assert "bad" in str(ei.value)


def test_lone_surrogate_parameter_is_refused(conn, driver):
    """A str with a lone surrogate cannot be sent as UTF-16: DataError before anything is sent."""
    with pytest.raises(ferrodbc.DataError):
        conn.cursor().execute("SELECT ?", "a\ud800b")
    assert conn.cursor().execute("SELECT ?", "a😀b").fetchval() == "a😀b"


def test_naive_and_aware_datetimes_into_other_temporal_columns(conn, driver):
    """Naive datetime into DATETIMEOFFSET is +00:00; aware into DATETIME2 keeps the wall time
    (SQL Server's datetimeoffset -> datetime2 conversion drops the offset)."""
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (o DATETIMEOFFSET(7), d2 DATETIME2(7), d DATE, tm TIME(7))")
    tz = dt.timezone(dt.timedelta(hours=5, minutes=30))
    cur.execute(f"INSERT INTO {t} VALUES (?, ?, ?, ?)", dt.datetime(2024, 1, 2, 3, 4, 5),
                dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=tz), dt.date(2024, 1, 2), dt.time(3, 4, 5, 6))
    row = cur.execute(f"SELECT o, d2, d, tm FROM {t}").fetchone()
    assert row[0] == dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc) and row[0].utcoffset() == dt.timedelta(0)
    assert row[1] == dt.datetime(2024, 1, 2, 3, 4, 5) and row[1].tzinfo is None
    assert row[2] == dt.date(2024, 1, 2) and type(row[2]) is dt.date
    assert row[3] == dt.time(3, 4, 5, 6)


def test_every_type_after_a_max_column(conn, driver):
    """Columns after the first (MAX) column are read with SQLGetData (a SQL Server driver rule):
    put nvarchar(max) FIRST so every other type goes through the streamed path, and compare
    with the mirror exactly as the bound path is compared."""
    rest = [c for c in COLUMNS if c != "c_nvarchar_max"]
    cur = conn.cursor()
    cur.execute(f"SELECT c_nvarchar_max, {', '.join(rest)}, id FROM peer.types_all_{N}")
    names = ["c_nvarchar_max", *rest, "id"]
    idx = [[n for n, _ in TYPES_ALL].index(c) for c in names]
    rows = cur.fetchall()
    assert len(rows) == N
    for i, row in enumerate(rows):
        for name, j, got in zip(names, idx, row):
            assert_same(got, EXPECTED[i][j], SQLTYPE[name], f"row {i} {name} (streamed)", driver)


def test_bounded_columns_filled_to_capacity(conn, driver):
    """Bound text buffers filled to the last UTF-16 unit: NVARCHAR(4000) of 2,000 emoji (4,000
    units), NCHAR(10) of 5 emoji, a UTF-8 VARCHAR(8) of two 4-byte characters, VARCHAR(8000) of
    8,000 'é' (CP1252), CHAR(5) padded; and 300 columns in one row."""
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (a NVARCHAR(4000), b NCHAR(10), c VARCHAR(8) COLLATE Latin1_General_100_CI_AS_SC_UTF8, d VARCHAR(8000), e CHAR(5))")
    vals = ("😀" * 2000, "😀" * 5, "😀😀", "é" * 8000, "€")
    cur.execute(f"INSERT INTO {t} VALUES (?, ?, ?, ?, ?)", *vals)
    assert tuple(cur.execute(f"SELECT a, b, c, d, e FROM {t}").fetchone()) == vals[:4] + ("€    ",)
    row = cur.execute("SELECT " + ", ".join(f"{i} AS c{i}" for i in range(300))).fetchone()
    assert tuple(row) == tuple(range(300)) and cur.description[299][0] == "c299"
