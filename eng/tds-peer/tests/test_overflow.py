"""Numbers out of their target type's range raise SQL Server's arithmetic overflow errors
(8115, 220, 232; SQLSTATE 22003) and store nothing: from literals (INSERT … VALUES, UPDATE …
SET, CAST/CONVERT, DECLARE) and from bound parameters. The peer used to store such values
saturated (9223372036854775808 into a bigint came back as 2^63-1) or unchecked (money)."""

import uuid
from decimal import Decimal

import pyodbc
import pytest

COLUMNS = "b BIGINT, i INT, si SMALLINT, ti TINYINT, m MONEY, sm SMALLMONEY, d DECIMAL(5,2), n NUMERIC(38,0)"

# The extremes each type holds: stored and read back exactly.
LIMITS = {
    "b": (-(2**63), 2**63 - 1),
    "i": (-(2**31), 2**31 - 1),
    "si": (-32768, 32767),
    "ti": (0, 255),
    "m": (Decimal("-922337203685477.5808"), Decimal("922337203685477.5807")),
    "sm": (Decimal("-214748.3648"), Decimal("214748.3647")),
    "d": (Decimal("-999.99"), Decimal("999.99")),
    "n": (-(10**38 - 1), 10**38 - 1),
}

BIGINT_MSG = "Arithmetic overflow error converting expression to data type bigint."

# (column, T-SQL literal one step past the range, error number, message)
LITERALS = [
    ("b", "9223372036854775808", 8115, BIGINT_MSG),
    ("b", "-9223372036854775809", 8115, BIGINT_MSG),
    ("i", "2147483648", 8115, "Arithmetic overflow error converting expression to data type int."),
    ("i", "-2147483649", 8115, "Arithmetic overflow error converting expression to data type int."),
    ("si", "32768", 220, "Arithmetic overflow error for data type smallint, value = 32768."),
    ("ti", "-1", 220, "Arithmetic overflow error for data type tinyint, value = -1."),
    ("ti", "256", 220, "Arithmetic overflow error for data type tinyint, value = 256."),
    ("m", "922337203685477.5808", 8115, "Arithmetic overflow error converting numeric to data type money."),
    ("m", "-922337203685477.5809", 8115, "Arithmetic overflow error converting numeric to data type money."),
    ("sm", "214748.3648", 8115, "Arithmetic overflow error converting numeric to data type smallmoney."),
    ("sm", "-214748.3649", 8115, "Arithmetic overflow error converting numeric to data type smallmoney."),
    ("d", "1234.5", 8115, "Arithmetic overflow error converting numeric to data type numeric."),
    ("d", "999.995", 8115, "Arithmetic overflow error converting numeric to data type numeric."),
    ("n", "1" + "0" * 38, 8115, "Arithmetic overflow error converting numeric to data type numeric."),
]

TYPES = {"b": "BIGINT", "i": "INT", "si": "SMALLINT", "ti": "TINYINT", "m": "MONEY", "sm": "SMALLMONEY",
         "d": "DECIMAL(5,2)", "n": "NUMERIC(38,0)"}


def table(cur):
    t = f"ovf_{uuid.uuid4().hex[:10]}"
    cur.execute(f"CREATE TABLE {t} (id INT, {COLUMNS})")
    return t


# SQLSTATE 22003 (numeric value out of range). FreeTDS's ODBC 2 → 3 state table maps 22003 to
# HY019, so FreeTDS reports HY019 for these errors whatever the server is.
SQLSTATE = {"msodbcsql": "22003", "freetds": "HY019"}


@pytest.fixture
def sqlstate(driver):
    return SQLSTATE[driver]


def assert_overflow(ei, number, message, state):
    err = ei.value
    assert err.args[0] == state, err.args
    assert f"({number})" in err.args[1] and message in err.args[1], err.args


def test_range_limits_are_stored_exactly(connect):
    cur = connect().cursor()
    t = table(cur)
    lows, highs = zip(*LIMITS.values())
    for k, row in enumerate((lows, highs)):
        cur.execute(f"INSERT INTO {t} (id, {', '.join(LIMITS)}) VALUES ({k}, {', '.join(str(v) for v in row)})")
    rows = cur.execute(f"SELECT {', '.join(LIMITS)} FROM {t} ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [tuple(lo for lo, _ in LIMITS.values()), tuple(hi for _, hi in LIMITS.values())]


@pytest.mark.parametrize("col,lit,number,message", LITERALS, ids=[f"{c}={v}" for c, v, *_ in LITERALS])
def test_literal_out_of_range(connect, sqlstate, col, lit, number, message):
    cur = connect().cursor()
    t = table(cur)
    cur.execute(f"INSERT INTO {t} (id, {col}) VALUES (1, 0)")
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"INSERT INTO {t} (id, {col}) VALUES (2, {lit})")
    assert_overflow(ei, number, message, sqlstate)
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"UPDATE {t} SET {col} = {lit} WHERE id = 1")
    assert_overflow(ei, number, message, sqlstate)
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"SELECT CAST({lit} AS {TYPES[col]})")
    assert_overflow(ei, number, message, sqlstate)
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"SELECT CONVERT({TYPES[col]}, {lit})")
    assert_overflow(ei, number, message, sqlstate)
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"DECLARE @v {TYPES[col]} = {lit}; SELECT @v")
    assert_overflow(ei, number, message, sqlstate)
    assert [tuple(r) for r in cur.execute(f"SELECT id, {col} FROM {t}").fetchall()] == [(1, 0)]


# (column, bound value one step past the range, error number). pyodbc binds a Decimal as
# NUMERIC and an int within 64 bits as BIGINT; both drivers send them as RPC parameters.
PARAMS = [
    ("b", Decimal(2**63), 8115),
    ("b", Decimal(-(2**63) - 1), 8115),
    ("i", 2**31, 8115),
    ("si", -32769, 220),
    ("ti", 256, 220),
    ("m", Decimal("922337203685477.5808"), 8115),
    ("sm", Decimal("214748.3648"), 8115),
    ("d", Decimal("1234.5"), 8115),
]


@pytest.mark.parametrize("col,value,number", PARAMS, ids=[f"{c}={v}" for c, v, _ in PARAMS])
def test_parameter_out_of_range(connect, sqlstate, col, value, number):
    cur = connect().cursor()
    t = table(cur)
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"INSERT INTO {t} (id, {col}) VALUES (?, ?)", 1, value)
    assert_overflow(ei, number, "Arithmetic overflow error", sqlstate)
    cur.execute(f"INSERT INTO {t} (id, {col}) VALUES (?, ?)", 2, 1)
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"UPDATE {t} SET {col} = ? WHERE id = ?", value, 2)
    assert_overflow(ei, number, "Arithmetic overflow error", sqlstate)
    assert [tuple(r) for r in cur.execute(f"SELECT id, {col} FROM {t}").fetchall()] == [(2, 1)]


def test_sp_executesql_parameter_into_bigint(connect, sqlstate):
    """A numeric parameter declared in sp_executesql's own list, as an application would send it."""
    cur = connect().cursor()
    t = table(cur)
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"EXEC sp_executesql N'INSERT INTO {t} (id, b) VALUES (1, @p)', N'@p numeric(20,0)', "
                    "@p = 9223372036854775808")
    assert_overflow(ei, 8115, BIGINT_MSG, sqlstate)
    assert cur.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == 0


def test_arithmetic_past_bigint_is_not_stored(connect, sqlstate):
    cur = connect().cursor()
    t = table(cur)
    cur.execute(f"INSERT INTO {t} (id, b) VALUES (1, 9223372036854775807)")
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"UPDATE {t} SET b = b + 1")
    assert_overflow(ei, 8115, BIGINT_MSG, sqlstate)
    assert cur.execute(f"SELECT b FROM {t}").fetchone()[0] == 2**63 - 1


def test_float_to_integer(connect, sqlstate):
    """A float past an integer type is 232 naming the value (C %f), not a saturated integer."""
    cur = connect().cursor()
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute("SELECT CAST(1e10 AS INT)")
    assert_overflow(ei, 232, "Arithmetic overflow error for type int, value = 10000000000.000000.", sqlstate)
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute("SELECT CAST(CAST(1e19 AS FLOAT) AS BIGINT)")
    assert_overflow(ei, 232, "Arithmetic overflow error for type bigint, value = 10000000000000000000.000000.", sqlstate)
    # In range: truncated toward zero, as SQL Server does.
    assert tuple(cur.execute("SELECT CAST(-2.9e0 AS INT), CAST(255.9e0 AS TINYINT)").fetchone()) == (-2, 255)


# Integer arithmetic has an integer result type (int + int is int, the wider type wins:
# bigint > int > smallint > tinyint; an integer literal is int); leaving it is 8115 state 2,
# as SQL Server raises it, where SQLite would compute in 64 bits (or turn a bigint overflow
# into a float).
ARITHMETIC = [
    ("SELECT 2147483647 + 1", "int"),
    ("SELECT -2147483647 - 2", "int"),
    ("SELECT 65536 * 65536", "int"),
    ("DECLARE @a int = 2147483647; SELECT @a + 1", "int"),
    ("DECLARE @a int = -2147483648; SELECT @a - 1", "int"),
    ("DECLARE @a int = -2147483648; SELECT -@a", "int"),
    ("DECLARE @a int = 2; SELECT @a * 1073741824", "int"),
    ("DECLARE @a int = 5; SET @a += 2147483647", "int"),
    ("DECLARE @a int = 2147483647; DECLARE @b int = @a + 1", "int"),
    ("SELECT (2147483647 + 0) + 1", "int"),
    ("SELECT 2147483647 + 1 - 1", "int"),
    ("DECLARE @a tinyint = 200; SELECT @a + @a", "tinyint"),
    ("SELECT CAST(200 AS tinyint) * CAST(2 AS tinyint)", "tinyint"),
    ("DECLARE @a smallint = 32767; SELECT @a + CAST(1 AS smallint)", "smallint"),
    ("DECLARE @a smallint = -32768; SELECT -@a", "smallint"),
    ("DECLARE @a bigint = 9223372036854775807; SELECT @a + 1", "bigint"),
    ("SELECT CAST(9223372036854775807 AS bigint) + 1", "bigint"),
    ("SELECT CAST(4611686018427387904 AS bigint) * 2", "bigint"),
    ("SELECT -CAST(-9223372036854775808 AS bigint)", "bigint"),
    ("DECLARE @a bigint = -9223372036854775808; SELECT @a - 1", "bigint"),
]


@pytest.mark.parametrize("sql,ty", ARITHMETIC, ids=[s for s, _ in ARITHMETIC])
def test_integer_arithmetic_overflow(connect, sqlstate, sql, ty):
    cur = connect().cursor()
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(sql)
        cur.fetchall()
    assert_overflow(ei, 8115, f"Arithmetic overflow error converting expression to data type {ty}.", sqlstate)


def test_integer_arithmetic_in_range_and_widening(connect):
    cur = connect().cursor()
    # In range: plain results. A wider operand widens the result (tinyint + int literal is int,
    # int + bigint is bigint); a literal past int is numeric, not int.
    assert tuple(cur.execute("SELECT 2147483646 + 1, 1 + 2 * 3 - 4, 10 - 2 - 3, 2 * 3 + 4 * 5").fetchone()) == (
        2147483647, 3, 5, 26)
    assert cur.execute("DECLARE @a tinyint = 200; SELECT @a + 100").fetchone()[0] == 300
    assert cur.execute("DECLARE @a int = 2147483647; SELECT @a + CAST(1 AS bigint)").fetchone()[0] == 2**31
    assert cur.execute("SELECT 2147483648 + 1").fetchone()[0] == 2147483649
    assert tuple(cur.execute("DECLARE @a int = 3; SELECT -@a * 2, @a - -1").fetchone()) == (-6, 4)
    assert cur.execute("SELECT CAST(9223372036854775806 AS bigint) + 1").fetchone()[0] == 2**63 - 1


def test_integer_arithmetic_overflow_error_token(peer):
    """Number, class (level) and state as SQL Server sends them: Msg 8115, Level 16, State 2."""
    import rawtds

    s = rawtds.connect(peer.port)
    try:
        s.sendall(rawtds.packet(0x01, rawtds.sql_batch("SELECT 2147483647 + 1")))
        assert rawtds.errors(rawtds.message(s)) == [
            (8115, 16, 2, "Arithmetic overflow error converting expression to data type int.")]
        s.sendall(rawtds.packet(0x01, rawtds.sql_batch("DECLARE @b bigint = 9223372036854775807; SELECT @b + 1")))
        assert rawtds.errors(rawtds.message(s)) == [
            (8115, 16, 2, "Arithmetic overflow error converting expression to data type bigint.")]
    finally:
        s.close()


# A bound float past an integer column: 232 naming the target type and the value as C `%f`
# prints it (Msg 232, Level 16, State 1), as SQL Server reports a float source; past a decimal
# or money column, 8115 "converting float to data type numeric|money". The peer used to
# report 8115 "converting expression to data type int" / "converting numeric to …" here.
FLOAT_PARAMS = [
    ("i", 1e20, 232, "Arithmetic overflow error for type int, value = 100000000000000000000.000000."),
    ("i", -3e9, 232, "Arithmetic overflow error for type int, value = -3000000000.000000."),
    ("b", 1e19, 232, "Arithmetic overflow error for type bigint, value = 10000000000000000000.000000."),
    ("si", 40000.5, 232, "Arithmetic overflow error for type smallint, value = 40000.500000."),
    ("ti", 256.25, 232, "Arithmetic overflow error for type tinyint, value = 256.250000."),
    ("d", 1e20, 8115, "Arithmetic overflow error converting float to data type numeric."),
    ("d", 1234.5, 8115, "Arithmetic overflow error converting float to data type numeric."),
    ("m", 1e16, 8115, "Arithmetic overflow error converting float to data type money."),
]


@pytest.mark.parametrize("col,value,number,message", FLOAT_PARAMS, ids=[f"{c}={v}" for c, v, *_ in FLOAT_PARAMS])
def test_float_parameter_out_of_range(connect, sqlstate, col, value, number, message):
    cur = connect().cursor()
    t = table(cur)
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"INSERT INTO {t} (id, {col}) VALUES (?, ?)", 1, value)
    assert_overflow(ei, number, message, sqlstate)
    cur.execute(f"INSERT INTO {t} (id, {col}) VALUES (?, ?)", 2, 1.0)
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"UPDATE {t} SET {col} = ? WHERE id = ?", value, 2)
    assert_overflow(ei, number, message, sqlstate)
    assert cur.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == 1


def test_float_parameter_overflow_error_token(peer):
    """Msg 232, Level 16, State 1 on the wire (a FLTN parameter through sp_executesql)."""
    import struct

    import rawtds

    with rawtds.connect(peer.port) as s:
        s.sendall(rawtds.packet(0x01, rawtds.sql_batch("CREATE TABLE fp_tok (i int)")))
        rawtds.message(s)
        body = b"\x6d\x08\x08" + struct.pack("<d", 1e20)  # FLTN(8), length 8, value
        s.sendall(rawtds.packet(0x03, rawtds.rpc_executesql("INSERT INTO fp_tok VALUES (@f)", "@f float", [("@f", body)])))
        assert rawtds.errors(rawtds.message(s)) == [
            (232, 16, 1, "Arithmetic overflow error for type int, value = 100000000000000000000.000000.")]


# A DATEN / DATETIME2N / DATETIMEOFFSETN value whose day count is past 9999-12-31 (day
# 3,652,058 from 0001-01-01) is no valid value of its type: SQL Server rejects the RPC with
# 8023 before running anything. Drivers never send one, so the bytes are sent raw.
BAD_DAY = (3652059).to_bytes(3, "little")
BAD_DATES = [
    ("date", b"\x28\x03" + BAD_DAY),
    ("datetime2", b"\x2a\x07\x08" + bytes(5) + BAD_DAY),
    ("datetimeoffset", b"\x2b\x07\x0a" + bytes(5) + BAD_DAY + bytes(2)),
]


@pytest.mark.parametrize("type_name,body", BAD_DATES, ids=[n for n, _ in BAD_DATES])
def test_rpc_date_past_9999_is_8023(peer, type_name, body):
    import rawtds

    with rawtds.connect(peer.port) as s:
        s.sendall(rawtds.packet(0x03, rawtds.rpc_executesql("SELECT @d", f"@d {type_name}", [("@d", body)])))
        assert rawtds.errors(rawtds.message(s)) == [(8023, 16, 1, (
            "The incoming tabular data stream (TDS) remote procedure call (RPC) protocol stream is incorrect. "
            f"Parameter 3 (\"@d\"): The supplied value is not a valid instance of data type {type_name}. "
            "Check the source data for invalid values. An example of an invalid value is data of numeric type "
            "with scale greater than precision."))]
        # The last valid day goes through, and the session is still usable.
        last = (3652058).to_bytes(3, "little")
        s.sendall(rawtds.packet(0x03, rawtds.rpc_executesql("SELECT @d", "@d date", [("@d", b"\x28\x03" + last)])))
        assert rawtds.errors(rawtds.message(s)) == []


def test_a_default_reads_back_as_written_not_as_checked(connect):
    """A column DEFAULT with integer arithmetic or a division is checked for overflow and zero
    when it runs, but the catalog shows it as written (SQLAlchemy's server-default reflection
    read '__ck3*5,int' for `DEFAULT 3*5`)."""
    cur = connect().cursor()
    t = f"dflt_{uuid.uuid4().hex[:8]}"
    cur.execute(f"CREATE TABLE {t} (id int, a int DEFAULT (3*5), b int DEFAULT (10/2))")
    cur.execute(f"INSERT INTO {t} (id) VALUES (1)")
    assert tuple(cur.execute(f"SELECT a, b FROM {t}").fetchone()) == (15, 5)
    defaults = dict(cur.execute(
        f"SELECT COLUMN_NAME, COLUMN_DEFAULT FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = '{t}' AND COLUMN_DEFAULT IS NOT NULL").fetchall())
    assert set(defaults) == {"a", "b"}
    assert all("__" not in v for v in defaults.values()), defaults
    assert "3*5" in defaults["a"].replace(" ", "") and "10/2" in defaults["b"].replace(" ", "")
    definitions = [r[0] for r in cur.execute(
        f"SELECT definition FROM sys.default_constraints WHERE parent_object_id = OBJECT_ID('{t}')").fetchall()]
    assert len(definitions) == 2 and all("__" not in d for d in definitions), definitions
