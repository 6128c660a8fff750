"""Stored procedures with output parameters: `ferrodbc.Output` bound through `{CALL p(?, ?)}`
and `callproc`, through both real drivers. pyodbc and mssql-python have no output parameters
(pyodbc's wiki: "use SELECT"; mssql-python's callproc raises NotSupportedError), so there is no
differential here: every expected value is computed by the procedure from its inputs."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest

import ferrodbc

from sqlserver_support import tname


def make_proc(conn, params: str, body: str) -> str:
    p = tname("p")
    conn.cursor().execute(f"CREATE PROCEDURE {p} {params} AS BEGIN {body} END")
    return p


def test_callproc_without_result_sets_returns_the_outputs(conn, driver):
    p = make_proc(conn, "@a INT, @b INT OUTPUT, @s NVARCHAR(50) OUTPUT",
                  "SET NOCOUNT ON; SET @b = @a * 2; SET @s = N'é😀' + CAST(@a AS NVARCHAR(10))")
    b, s = ferrodbc.Output(int), ferrodbc.Output(str)
    got = cur_callproc = conn.cursor().callproc(p, [21, b, s])
    assert got == [21, 42, "é😀21"]
    assert isinstance(cur_callproc, list)
    assert (b.value, s.value) == (42, "é😀21")
    assert repr(b) == "Output(int, value=42)"
    # a tuple in, a tuple out
    assert conn.cursor().callproc(p, (1, ferrodbc.Output(int), ferrodbc.Output(str))) == (1, 2, "é😀1")


def test_callproc_skips_row_counts_before_the_first_result_set(conn, driver):
    t = tname()
    conn.cursor().execute(f"CREATE TABLE {t} (x INT)")
    p = make_proc(conn, "@a INT, @n INT OUTPUT",
                  f"INSERT INTO {t} VALUES (@a), (@a); SELECT x FROM {t}; SET @n = (SELECT COUNT(*) FROM {t})")
    n = ferrodbc.Output(int)
    cur = conn.cursor()
    got = cur.callproc(p, [7, n])
    # The rows come first; the output value arrives after them.
    assert got[0] == 7 and got[1] is n
    assert [tuple(r) for r in cur.fetchall()] == [(7,), (7,)]
    with pytest.raises(ferrodbc.ProgrammingError, match="nextset"):
        _ = n.value
    while cur.nextset():
        pass
    assert n.value == 2


def test_call_escape_output_after_the_result_set(conn, driver):
    p = make_proc(conn, "@a INT, @b INT OUTPUT", "SET @b = @a * 2; SELECT @a AS a, N'é😀' AS s")
    b = ferrodbc.Output(int)
    cur = conn.cursor()
    cur.execute(f"{{CALL {p}(?, ?)}}", 5, b)
    assert repr(b) == "Output(int, pending)"
    assert [tuple(r) for r in cur.fetchall()] == [(5, "é😀")]
    assert cur.nextset() is False
    assert b.value == 10


def test_input_output_parameter_sends_its_value(conn, driver):
    p = make_proc(conn, "@x INT OUTPUT, @t NVARCHAR(20) OUTPUT",
                  "SET NOCOUNT ON; SET @x = @x + 1; SET @t = @t + N'!'")
    assert conn.cursor().callproc(p, [ferrodbc.Output(int, 41), ferrodbc.Output(str, "hé")]) == [42, "hé!"]


def test_null_output(conn, driver):
    p = make_proc(conn, "@b INT OUTPUT, @s NVARCHAR(10) OUTPUT", "SET NOCOUNT ON; SET @b = NULL; SET @s = NULL")
    assert conn.cursor().callproc(p, [ferrodbc.Output(int, 3), ferrodbc.Output(str)]) == [None, None]


OUTPUT_TYPES = [
    # (SQL type of the formal parameter, SQL expression, Output(...), expected Python value)
    ("BIT", "1", ferrodbc.Output(bool), True),
    ("BIGINT", "-9223372036854775808", ferrodbc.Output(int), -9223372036854775808),
    ("FLOAT", "CAST('-1.5e300' AS FLOAT)", ferrodbc.Output(float), -1.5e300),
    ("DECIMAL(38, 10)", "CAST('-1234567890123456789012345678.0123456789' AS DECIMAL(38, 10))",
     ferrodbc.Output(Decimal, scale=10), Decimal("-1234567890123456789012345678.0123456789")),
    ("MONEY", "CAST('-922337203685477.5808' AS MONEY)", ferrodbc.Output(Decimal, precision=19, scale=4),
     Decimal("-922337203685477.5808")),
    ("NVARCHAR(4000)", "REPLICATE(N'é', 4000)", ferrodbc.Output(str), "é" * 4000),
    ("VARBINARY(100)", "0x00FF10", ferrodbc.Output(bytes), b"\x00\xff\x10"),
    ("DATE", "CAST('0001-01-01' AS DATE)", ferrodbc.Output(dt.date), dt.date(1, 1, 1)),
    ("TIME(7)", "CAST('23:59:59.1234567' AS TIME(7))", ferrodbc.Output(dt.time), dt.time(23, 59, 59, 123456)),
    ("DATETIME2(7)", "CAST('9999-12-31 23:59:59.9999999' AS DATETIME2(7))", ferrodbc.Output(dt.datetime),
     dt.datetime(9999, 12, 31, 23, 59, 59, 999999)),
    ("DATETIMEOFFSET(7)", "CAST('2024-02-29 12:30:00.5 -05:30' AS DATETIMEOFFSET(7))",
     ferrodbc.Output(dt.datetime, tz=True),
     dt.datetime(2024, 2, 29, 12, 30, 0, 500000, tzinfo=dt.timezone(-dt.timedelta(hours=5, minutes=30)))),
    ("UNIQUEIDENTIFIER", "CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS UNIQUEIDENTIFIER)",
     ferrodbc.Output(uuid.UUID), uuid.UUID("6F9619FF-8B86-D011-B42D-00C04FC964FF")),
]


@pytest.mark.parametrize("sql_type, expr, out, expected", OUTPUT_TYPES, ids=[t[0] for t in OUTPUT_TYPES])
def test_every_output_type(conn, driver, sql_type, expr, out, expected):
    p = make_proc(conn, f"@v {sql_type} OUTPUT", f"SET NOCOUNT ON; SET @v = {expr}")
    got = conn.cursor().callproc(p, [out])[0]
    assert got == expected
    assert type(got) is type(expected)
    if isinstance(expected, dt.datetime) and expected.tzinfo is not None:
        assert got.utcoffset() == expected.utcoffset()


def test_too_long_output_is_an_error_not_a_cut_value(conn, driver):
    p = make_proc(conn, "@s NVARCHAR(50) OUTPUT", "SET NOCOUNT ON; SET @s = N'abcdefghij'")
    short = ferrodbc.Output(str, size=3)
    with pytest.raises(ferrodbc.DataError, match="larger size"):
        conn.cursor().callproc(p, [short])
    with pytest.raises(ferrodbc.ProgrammingError):
        _ = short.value  # never a truncated 'abc'
    assert conn.cursor().callproc(p, [ferrodbc.Output(str, size=10)]) == ["abcdefghij"]


def test_discarded_results_leave_the_output_unset(conn, driver):
    p = make_proc(conn, "@b INT OUTPUT", "SET @b = 5; SELECT 1 AS one")
    b = ferrodbc.Output(int)
    cur = conn.cursor()
    cur.execute(f"{{CALL {p}(?)}}", b)
    cur.execute("SELECT 2")
    with pytest.raises(ferrodbc.ProgrammingError, match="discarded"):
        _ = b.value
    # The same Output object can be bound again.
    cur.execute(f"{{CALL {p}(?)}}", b)
    cur.fetchall()
    assert cur.nextset() is False
    assert b.value == 5


def test_bad_uses_are_clear_errors(conn, driver):
    cur = conn.cursor()
    for name in ["p; DROP TABLE x", "p--", "p(1)", "[p", "", "a..b.", "a.b.c.d.e"]:
        with pytest.raises(ferrodbc.ProgrammingError, match="not a procedure name"):
            cur.callproc(name, [])
    # `db..p` is SQL Server's spelling for the default schema: the name passes, the server answers.
    with pytest.raises(ferrodbc.Error) as e:
        cur.callproc("nosuchdb..nosuchproc", [])
    assert "not a procedure name" not in str(e.value)
    with pytest.raises(ferrodbc.ProgrammingError, match="executemany"):
        cur.executemany("{CALL p(?)}", [[ferrodbc.Output(int)], [ferrodbc.Output(int)]])
    with pytest.raises(ferrodbc.ProgrammingError, match="must be of that type"):
        cur.execute("{CALL p(?)}", ferrodbc.Output(int, "x"))
    with pytest.raises(ferrodbc.ProgrammingError, match="Output type"):
        ferrodbc.Output(list)


def test_callproc_with_quoted_schema_name_and_no_parameters(conn, driver):
    p = make_proc(conn, "", "SELECT 3 AS three")
    cur = conn.cursor()
    assert cur.callproc(f"[dbo].[{p}]") == ()
    assert cur.fetchval() == 3


def test_return_status_with_call_escape(conn, driver):
    """`{? = CALL p(?, ?)}`: the first marker receives the procedure's RETURN value (the
    RETURNSTATUS token), next to an ordinary output parameter and a result set."""
    p = make_proc(conn, "@a INT, @b INT OUTPUT",
                  "SET NOCOUNT ON; SET @b = @a * 3; SELECT 1 AS x; RETURN @a + 1")
    status, b = ferrodbc.Output(int), ferrodbc.Output(int)
    cur = conn.cursor()
    cur.execute(f"{{? = CALL {p}(?, ?)}}", status, 41, b)
    assert cur.fetchval() == 1
    assert cur.nextset() is False
    assert (status.value, b.value) == (42, 123)
