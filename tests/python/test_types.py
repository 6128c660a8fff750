"""Values both ways: Python parameters → INSERT → SELECT → the same Python values, for the
driver-neutral type set, on every peer; plus values the server computes itself.

Where a peer cannot hold a value, the test says so (skip with the reason) instead of weakening
what it checks.
"""

from __future__ import annotations

import datetime
import decimal
import math
import random
import uuid

import pytest

import ferrodbc

D = decimal.Decimal
MB = 1 << 20


def roundtrip(conn, table, sql_type, values):
    """Insert `values` (one row each, as parameters) into a `sql_type` column, read them back."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, v {sql_type})")
    for i, value in enumerate(values):
        cur.execute(f"INSERT INTO {table} (id, v) VALUES (?, ?)", i, value)
        assert cur.rowcount == 1
    conn.commit()
    got = conn.cursor().execute(f"SELECT v FROM {table} ORDER BY id").fetchall()
    return [row[0] for row in got]


def assert_same(got, expected):
    """Equal values *and* equal types (True must not come back as 1, Decimal not as float)."""
    assert got == expected
    for g, e in zip(got, expected):
        assert type(g) is type(e), f"{g!r} came back as {type(g).__name__}, not {type(e).__name__}"


# --- integers ----------------------------------------------------------------------------------

INTEGER_CASES = {
    "smallint": [-(2**15), 2**15 - 1, 0, -1, 1, None],
    "int": [-(2**31), 2**31 - 1, 0, -1, 123456789, None],
    "bigint": [-(2**63), 2**63 - 1, 0, -1, 2**53 + 1, None],
}


@pytest.mark.parametrize("kind", sorted(INTEGER_CASES))
def test_integers_of_every_width_round_trip_including_boundaries(peer, conn, table, kind):
    values = INTEGER_CASES[kind]
    got = roundtrip(conn, table, peer.types[kind], values)
    assert_same(got, values)


def test_server_computed_integer_boundaries(pg_conn):
    row = pg_conn.cursor().execute(
        "SELECT CAST(-32768 AS smallint), CAST(32767 AS smallint), CAST(-2147483648 AS integer), "
        "CAST(2147483647 AS integer), CAST(-9223372036854775808 AS bigint), "
        "CAST(9223372036854775807 AS bigint)"
    ).fetchone()
    assert tuple(row) == (-32768, 32767, -(2**31), 2**31 - 1, -(2**63), 2**63 - 1)
    assert all(type(v) is int for v in row)


def test_integers_beyond_64_bits_are_sent_exactly(pg_conn, pg_table):
    """Python ints have no width: a 30-digit one travels as an exact numeric, not a float."""
    values = [10**30, -(10**37) + 1, 2**64]
    got = roundtrip(pg_conn, pg_table, "numeric(38,0)", values)
    assert got == values
    assert all(type(v) is D for v in got)


# --- floats ------------------------------------------------------------------------------------

DOUBLES = [0.1, 1 / 3, -2.5, 1e308, -1.7976931348623157e308, 2.2250738585072014e-308, 2.0**53 + 2, 0.0]


# The SQLite ODBC driver converts doubles through text with 15 significant digits, both ways
# (pyodbc gets 0.333333333333333 for 1/3 too): there, only values exact in 15 digits round-trip.
DOUBLES_15_DIGITS = [0.1, -2.5, 1e308, 123456789.012345, 2.0**49, 0.0]


def test_double_precision_round_trips_bit_exact(peer, conn, table):
    """Doubles come back as the same 64-bit value (never narrowed through float32)."""
    values = DOUBLES if peer.is_pg else DOUBLES_15_DIGITS
    got = roundtrip(conn, table, peer.types["float"], values + [None])
    assert_same(got, values + [None])
    for g, e in zip(got, values):
        assert math.copysign(1, g) == math.copysign(1, e)


def test_pg_float8_computed_by_the_server_is_exact(pg_conn):
    """psqlODBC describes float8 as SQL_FLOAT with precision 17: it must still be a double."""
    cur = pg_conn.cursor()
    row = cur.execute(
        "SELECT CAST(0.1 AS float8) AS a, CAST(1 AS float8) / 3 AS b, "
        "CAST('1e308' AS double precision) AS c"
    ).fetchone()
    assert tuple(row) == (0.1, 1 / 3, 1e308)
    assert [d[1] for d in cur.description] == [float, float, float]


def test_pg_float8_special_values(pg_conn):
    row = pg_conn.cursor().execute(
        "SELECT CAST('Infinity' AS float8), CAST('-Infinity' AS float8), CAST('NaN' AS float8)"
    ).fetchone()
    assert row[0] == math.inf and row[1] == -math.inf and math.isnan(row[2])


def test_real_is_single_precision_widened_exactly(peer, conn, table):
    """A PostgreSQL `real` keeps float32 precision; values exact in float32 come back exact.
    (SQLite's REAL is a double: there 0.1 stays 0.1.)"""
    got = roundtrip(conn, table, peer.types["real"], [1.5, -0.25, 0.1, None])
    assert got[:2] == [1.5, -0.25]
    assert got[3] is None
    if peer.is_pg:
        assert got[2] == 0.10000000149011612, "float32(0.1) widened to double"
    else:
        assert got[2] == 0.1


# --- exact decimals ----------------------------------------------------------------------------

DECIMALS = [
    D("1234567890123456789012345678.0123456789"),
    D("-1234567890123456789012345678.0123456789"),
    D("9999999999999999999999999999.9999999999"),
    D("0"),
    D("0.0000000001"),
    D("-0.0000000001"),
    D("-1.5"),
]


def test_decimals_round_trip_exactly_with_their_scale(peer, conn, table):
    got = roundtrip(conn, table, peer.types["decimal"], DECIMALS + [None])
    if peer.is_sqlite:
        # The backend's limit, asserted so that the test says when it is gone: SQLite has no
        # exact decimal (NUMERIC(38,10) stores REAL/INTEGER) and the SQLite ODBC driver describes
        # the column as SQL_DOUBLE, so the values come back as rounded floats.
        assert [type(g) for g in got] == [float] * len(DECIMALS) + [type(None)], got
        assert D(got[0]) != DECIMALS[0] and got[0] == pytest.approx(float(DECIMALS[0]), rel=1e-14), got
        return
    assert_same(got, DECIMALS + [None])
    for g in got[:-1]:
        assert g.as_tuple().exponent == -10, f"{g!r}: numeric(38,10) keeps 10 decimal places"


def test_server_computed_decimals_are_exact(pg_conn):
    cur = pg_conn.cursor()
    row = cur.execute(
        "SELECT CAST('-0.0000000001' AS numeric(38,10)), CAST(1 AS numeric) / 3, "
        "CAST('12345678901234567890123456789012345678' AS numeric(38,0)), "
        "CAST(repeat('9', 60) AS numeric)"
    ).fetchone()
    assert row[0] == D("-0.0000000001")
    assert row[1] == D("0.33333333333333333333")
    assert row[2] == D("12345678901234567890123456789012345678")
    assert row[3] == D("9" * 60)
    assert all(type(v) is D for v in row)


def test_unconstrained_numeric_of_unknown_size_is_read_whole(pg):
    conn = ferrodbc.connect(pg.variant(UnknownSizes="1"))
    try:
        value = conn.cursor().execute("SELECT CAST(repeat('7', 100) AS numeric)").fetchval()
        assert value == D("7" * 100)
    finally:
        conn.close()


def test_pg_numeric_special_values_come_back_as_decimal_specials(pg_conn):
    row = pg_conn.cursor().execute(
        "SELECT CAST('NaN' AS numeric), CAST('Infinity' AS numeric), CAST('-Infinity' AS numeric)"
    ).fetchone()
    assert row[0].is_nan()
    assert row[1] == D("Infinity") and row[2] == D("-Infinity")
    assert all(type(v) is D for v in row)


@pytest.mark.parametrize(
    "value",
    [D("1E+40"), D("1." + "1" * 45), D("-" + "9" * 50 + ".5"), 10**40],
    ids=["1E+40", "45-decimals", "51-digits", "int-10**40"],
)
def test_pg_numeric_parameters_wider_than_38_digits(pg_conn, value):
    got = pg_conn.cursor().execute("SELECT CAST(? AS numeric)", value).fetchval()
    assert got == value


def test_sqlite_decimal_parameters_are_accepted(sqlite_conn, tmp_path):
    """SQLite stores NUMERIC as a double; a Decimal parameter still lands as that number."""
    cur = sqlite_conn.cursor()
    cur.execute("CREATE TABLE t_dec (v NUMERIC(10,2))")
    cur.execute("INSERT INTO t_dec (v) VALUES (?)", D("-12.25"))
    assert cur.execute("SELECT v FROM t_dec").fetchval() == -12.25


# --- bool --------------------------------------------------------------------------------------


def test_booleans_round_trip_as_bool(peer, conn, table):
    got = roundtrip(conn, table, peer.types["bool"], [True, False, None])
    assert_same(got, [True, False, None])


def test_server_computed_booleans(pg_conn):
    cur = pg_conn.cursor()
    row = cur.execute("SELECT true, false, 1 < 2").fetchone()
    assert_same(list(row), [True, False, True])
    assert cur.description[0][1] is bool


# --- text --------------------------------------------------------------------------------------

TEXTS = [
    "plain ascii",
    "héllo wörld ñ ß",
    "中文字符 日本語 한국어",
    "astral: 😀🎉 𝄞 🏳️‍🌈",
    "",
    "   padded   ",
    "tab\tnewline\nquote'\"backslash\\",
    None,
]


@pytest.mark.parametrize("kind", ["varchar", "text"])
def test_text_round_trips_including_non_ascii_and_astral_characters(peer, conn, table, kind):
    got = roundtrip(conn, table, peer.types[kind], TEXTS)
    assert_same(got, TEXTS)


def test_empty_string_and_null_stay_distinct(peer, conn, table):
    got = roundtrip(conn, table, peer.types["varchar"], ["", None, ""])
    assert got == ["", None, ""]
    assert got[0] is not None and got[1] is None


def test_varchar_filled_to_its_declared_length_with_astral_characters(peer, conn, table):
    """50 emoji in VARCHAR(50) are 100 UTF-16 code units: the bound buffer must hold them all."""
    values = ["😀" * 50, "é" * 50, "x" * 50]
    got = roundtrip(conn, table, peer.types["varchar"], values)
    assert got == values


def test_one_megabyte_of_text_is_streamed_whole(peer, conn, table):
    pattern = "abc€😀xyz-"
    big = (pattern * (MB // len(pattern) + 1))[:MB]
    got = roundtrip(conn, table, peer.types["text"], [big, "small", big[::-1]])
    assert len(got[0]) == MB
    assert got[0] == big and got[1] == "small" and got[2] == big[::-1]


def test_server_computed_long_text(pg_conn):
    value = pg_conn.cursor().execute("SELECT repeat('é😀', 300000)").fetchval()
    assert value == "é😀" * 300000


def test_char_columns_are_blank_padded(pg_conn):
    assert pg_conn.cursor().execute("SELECT CAST('ab' AS char(5))").fetchval() == "ab   "


# --- bytes -------------------------------------------------------------------------------------


def test_bytes_round_trip_including_empty_nul_and_one_megabyte(peer, conn, table):
    big = random.Random(1234).randbytes(MB)
    values = [b"", b"\x00", bytes(range(256)), b"ends in nul\x00", big, None]
    got = roundtrip(conn, table, peer.types["bytes"], values)
    assert got[0] == b"" and got[0] is not None
    assert_same(got, values)


def test_bytearray_and_memoryview_parameters_are_sent_as_bytes(peer, conn, table):
    got = roundtrip(conn, table, peer.types["bytes"], [bytearray(b"\x01\x02"), memoryview(b"\x03")])
    assert got == [b"\x01\x02", b"\x03"]


# --- dates and times ---------------------------------------------------------------------------


def test_dates_round_trip(peer, conn, table):
    values = [datetime.date(1, 1, 1), datetime.date(2024, 2, 29), datetime.date(9999, 12, 31), None]
    got = roundtrip(conn, table, peer.types["date"], values)
    assert_same(got, values)


def test_times_keep_microseconds(peer, conn, table):
    values = [
        datetime.time(0, 0, 0),
        datetime.time(12, 34, 56, 789012),
        datetime.time(23, 59, 59, 999999),
        datetime.time(1, 2, 3, 1),
        None,
    ]
    got = roundtrip(conn, table, peer.types["time"], values)
    assert_same(got, values)


TIMESTAMPS = [
    datetime.datetime(2024, 2, 29, 23, 59, 59, 999999),
    datetime.datetime(1970, 1, 1, 0, 0, 0),
    datetime.datetime(2001, 9, 9, 1, 46, 40, 123456),
    datetime.datetime(1, 1, 1, 0, 0, 0, 1),
]


def test_timestamps_keep_microseconds(peer, conn, table):
    got = roundtrip(conn, table, peer.types["timestamp"], TIMESTAMPS + [None])
    if peer.is_sqlite:
        # The SQLite ODBC driver writes timestamp parameters as text with milliseconds only
        # (pyodbc gets the same); reading keeps microseconds (next test).
        expected = [t.replace(microsecond=t.microsecond // 1000 * 1000) for t in TIMESTAMPS]
    else:
        expected = TIMESTAMPS
    assert_same(got, expected + [None])


def test_timestamps_written_as_sql_literals_read_back_with_microseconds(peer, conn, table):
    """Reading keeps every microsecond the database holds (on SQLite too)."""
    t = peer.types
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (ts {t['timestamp']}, d {t['date']}, tm {t['time']})")
    cur.execute(
        f"INSERT INTO {table} (ts, d, tm) VALUES "
        "('2020-01-02 03:04:05.678901', '2020-01-02', '23:59:59.123456')"
    )
    cur.execute(f"SELECT ts, d, tm FROM {table}")
    assert tuple(cur.fetchone()) == (
        datetime.datetime(2020, 1, 2, 3, 4, 5, 678901),
        datetime.date(2020, 1, 2),
        datetime.time(23, 59, 59, 123456),
    )
    assert [d[1] for d in cur.description] == [datetime.datetime, datetime.date, datetime.time]


# --- uuid --------------------------------------------------------------------------------------


def test_uuids_round_trip_as_uuid_objects(pg_conn, pg_table):
    values = [
        uuid.UUID("12345678-1234-5678-1234-567812345678"),
        uuid.UUID(int=0),
        uuid.UUID(int=2**128 - 1),
        uuid.UUID("00112233-4455-6677-8899-aabbccddeeff"),
        None,
    ]
    got = roundtrip(pg_conn, pg_table, "uuid", values)
    assert_same(got, values)


def test_server_generated_uuid_matches_its_text(pg_conn):
    cur = pg_conn.cursor()
    row = cur.execute(
        "SELECT u, CAST(u AS text) FROM (SELECT CAST('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' AS uuid) AS u) s"
    ).fetchone()
    assert row[0] == uuid.UUID(row[1])
    assert cur.description[0][1] is uuid.UUID


# --- NULL everywhere ---------------------------------------------------------------------------


def test_null_comes_back_as_none_in_every_type(peer, conn, table):
    kinds = sorted(peer.types)
    cur = conn.cursor()
    cols = ", ".join(f"c_{k} {peer.types[k]}" for k in kinds)
    cur.execute(f"CREATE TABLE {table} (id INTEGER, {cols})")
    names = ", ".join(f"c_{k}" for k in kinds)
    marks = ", ".join("?" for _ in kinds)
    cur.execute(f"INSERT INTO {table} (id, {names}) VALUES (1, {marks})", *([None] * len(kinds)))
    cur.execute(f"INSERT INTO {table} (id) VALUES (2)")
    rows = conn.cursor().execute(f"SELECT {names} FROM {table} ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [(None,) * len(kinds)] * 2


def test_typed_nulls_computed_by_the_server(pg_conn):
    row = pg_conn.cursor().execute(
        "SELECT CAST(NULL AS integer), CAST(NULL AS text), CAST(NULL AS bytea), "
        "CAST(NULL AS numeric), CAST(NULL AS timestamp), CAST(NULL AS uuid), CAST(NULL AS boolean)"
    ).fetchone()
    assert tuple(row) == (None,) * 7


# --- parameters of every type in one statement -------------------------------------------------


def test_all_parameter_types_in_one_row(peer, conn, table):
    t = peer.types
    values = {
        "smallint": -5,
        "int": 2**31 - 1,
        "bigint": -(2**63),
        "float": 0.1,
        "bool": True,
        "varchar": "ünïcode 😀",
        "text": "t" * 10000,
        "bytes": b"\x00\x01\xff",
        "date": datetime.date(2000, 1, 1),
        "time": datetime.time(1, 2, 3, 400000),
        "timestamp": datetime.datetime(2000, 1, 1, 12, 0, 0, 500000),
    }
    if peer.is_pg:
        values["decimal"] = D("-3.1415926535")
        values["uuid"] = uuid.UUID(int=42)
    kinds = list(values)
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} ({', '.join(f'c_{k} {t[k]}' for k in kinds)})")
    cur.execute(
        f"INSERT INTO {table} VALUES ({', '.join('?' for _ in kinds)})", [values[k] for k in kinds]
    )
    row = conn.cursor().execute(f"SELECT {', '.join(f'c_{k}' for k in kinds)} FROM {table}").fetchone()
    assert dict(zip(kinds, row)) == values


def test_every_type_after_a_streamed_column_is_read_correctly(peer, conn, table):
    """Columns after an unbounded one are read with SQLGetData too (SQL Server's ordering rule):
    values and NULLs of every type must come out the same as on the bound path."""
    t = peer.types
    kinds = ["int", "bigint", "float", "bool", "varchar", "bytes", "date", "time", "timestamp"]
    if peer.is_pg:
        kinds += ["decimal", "uuid"]
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, body {t['text']}, "
                + ", ".join(f"c_{k} {t[k]}" for k in kinds) + ")")
    sample = {
        "int": -7, "bigint": 2**40, "float": 0.5, "bool": True, "varchar": "vé😀",
        "bytes": b"\x00\xff", "date": datetime.date(2020, 2, 29),
        "time": datetime.time(13, 14, 15, 161718),
        "timestamp": datetime.datetime(2020, 2, 29, 13, 14, 15, 161000),
        "decimal": D("-12.5000000000"), "uuid": uuid.UUID(int=7),
    }
    marks = ", ".join("?" for _ in kinds)
    names = ", ".join(f"c_{k}" for k in kinds)
    sql = f"INSERT INTO {table} (id, body, {names}) VALUES (?, ?, {marks})"
    cur.execute(sql, 1, "x" * 70000, *[sample[k] for k in kinds])
    cur.execute(sql, 2, None, *[None] * len(kinds))
    cur.execute(sql, 3, "", *[sample[k] for k in kinds])
    rows = conn.cursor().execute(f"SELECT body, {names} FROM {table} ORDER BY id").fetchall()
    expected_values = [sample[k] for k in kinds]
    assert tuple(rows[0]) == ("x" * 70000, *expected_values)
    assert tuple(rows[1]) == (None,) * (len(kinds) + 1)
    assert tuple(rows[2]) == ("", *expected_values)


def test_aware_datetime_parameters_keep_their_utc_offset(pg_conn, pg_table):
    """An aware datetime is sent with its offset: PostgreSQL stores the right instant."""
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (v timestamptz)")
    plus_two = datetime.timezone(datetime.timedelta(hours=2))
    cur.execute(f"INSERT INTO {pg_table} (v) VALUES (?)",
                datetime.datetime(2020, 1, 1, 12, 0, 0, 123456, tzinfo=plus_two))
    utc = cur.execute(f"SELECT v AT TIME ZONE 'UTC' FROM {pg_table}").fetchval()
    assert utc == datetime.datetime(2020, 1, 1, 10, 0, 0, 123456)


def test_non_ascii_and_astral_characters_in_the_sql_text(pg_conn):
    """The statement itself travels as UTF-16: literals and aliases in any script survive."""
    cur = pg_conn.cursor()
    row = cur.execute("""SELECT 'é😀 中文' AS "ключ", ? AS "😀" """, "p😀").fetchone()
    assert tuple(row) == ("é😀 中文", "p😀")
    assert [d[0] for d in cur.description] == ["ключ", "😀"]


def test_sqlite_declared_lengths_are_not_limits(sqlite_conn):
    """SQLite stores 100,000 characters in a VARCHAR(10): they must all come back."""
    cur = sqlite_conn.cursor()
    cur.execute("CREATE TABLE short_decl (v VARCHAR(10), b VARBINARY(4))")
    cur.execute("INSERT INTO short_decl (v, b) VALUES (?, ?)", "é" * 100_000, b"\x01" * 50_000)
    v, b = cur.execute("SELECT v, b FROM short_decl").fetchone()
    assert v == "é" * 100_000
    assert b == b"\x01" * 50_000


def test_postgres_enforces_declared_lengths_with_a_data_error(pg_conn, pg_table):
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (v varchar(10))")
    with pytest.raises(ferrodbc.DataError) as info:
        cur.execute(f"INSERT INTO {pg_table} (v) VALUES (?)", "x" * 11)
    assert info.value.sqlstate == "22001"


def test_pg_types_without_a_python_equivalent_come_back_as_their_text(pg_conn):
    """json, arrays, intervals, xml...: their text form, whole, however long."""
    cur = pg_conn.cursor()
    row = cur.execute(
        "SELECT CAST(? AS json), ARRAY[1, 2, 3], INTERVAL '1 day 02:03:04', "
        "CAST('<a>é</a>' AS xml), CAST(? AS jsonb)",
        '{"k": "' + "v" * 5000 + '"}',
        '{"x": [1, 2]}',
    ).fetchone()
    assert row[0] == '{"k": "' + "v" * 5000 + '"}'
    assert row[1] == "{1,2,3}"
    assert row[2] == "1 day 02:03:04"
    assert row[3] == "<a>é</a>"
    assert row[4] == '{"x": [1, 2]}'


def test_sqlite_time_strings_without_seconds(sqlite_conn):
    cur = sqlite_conn.cursor()
    cur.execute("CREATE TABLE hm (t TIME)")
    cur.execute("INSERT INTO hm (t) VALUES ('01:02')")
    assert cur.execute("SELECT t FROM hm").fetchval() == datetime.time(1, 2)


def test_streamed_values_at_sqlgetdata_chunk_boundaries(peer, conn, table):
    """Streamed cells are read in 32 KiB chunks: lengths around 1x, 2x and 3x the chunk, with a
    surrogate pair or a 2-byte character straddling the edge, come back exact."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, t {peer.types['text']}, b {peer.types['bytes']})")
    texts = []
    for units in (16383, 16384, 16385, 32767, 32768, 32769, 49152, 65536):
        for tail in ("", "😀", "é", "😀😀"):
            texts.append("x" * (units - len(tail.encode("utf-16-le")) // 2) + tail)
            texts.append("x" * (units - 1) + tail)
    blobs = [bytes([n % 251]) * n for n in (32767, 32768, 32769, 65535, 65536, 65537, 98304)]
    for i, t in enumerate(texts):
        cur.execute(f"INSERT INTO {table} (id, t) VALUES (?, ?)", i, t)
    for j, b in enumerate(blobs):
        cur.execute(f"INSERT INTO {table} (id, b) VALUES (?, ?)", 1000 + j, b)
    rows = conn.cursor().execute(f"SELECT id, t, b FROM {table} ORDER BY id").fetchall()
    assert [r.t for r in rows if r.id < 1000] == texts
    assert [r.b for r in rows if r.id >= 1000] == blobs
