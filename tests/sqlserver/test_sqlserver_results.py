"""Result-set mechanics: multiple result sets and count-only results, messages (PRINT,
low-severity RAISERROR), errors (RAISERROR 16, errors mid-stream), rowcount, procedures."""

from __future__ import annotations

import decimal

import pytest

import ferrodbc

from sqlserver_support import synthetic, tname


def drain(cur):
    """[(has_result_set, rowcount, rows or None)] for every result of the last execute."""
    out = []
    while True:
        if cur.description is not None:
            out.append((True, cur.rowcount, [tuple(r) for r in cur.fetchall()]))
        else:
            out.append((False, cur.rowcount, None))
        if not cur.nextset():
            return out


@pytest.fixture
def counted(conn):
    t = tname()
    conn.cursor().execute(f"CREATE TABLE {t} (x INT)")
    return t


def test_nextset_with_count_only_result_between(conn, driver, counted):
    """`SELECT 1; INSERT ...; SELECT 2` without NOCOUNT: both drivers surface the INSERT as a
    count-only result (no description, rowcount 2) between the two result sets, as pyodbc sees
    them. (Through FreeTDS an extra SQLFetch after a short row array used to step over the
    INSERT's DONE and fold the count away.)"""
    cur = conn.cursor()
    cur.execute(f"SELECT 1 AS a; INSERT INTO {counted} VALUES (1), (2); SELECT 2 AS b")
    assert drain(cur) == [(True, -1, [(1,)]), (False, 2, None), (True, -1, [(2,)])]
    assert not cur.nextset()
    assert conn.cursor().execute(f"SELECT COUNT(*) FROM {counted}").fetchval() == 2


def test_nextset_with_nocount_on(conn, driver, counted):
    """SET NOCOUNT ON: no count-only result, the INSERT still happens."""
    cur = conn.cursor()
    cur.execute(f"SET NOCOUNT ON; SELECT 1 AS a; INSERT INTO {counted} VALUES (1), (2); SELECT 2 AS b")
    assert drain(cur) == [(True, -1, [(1,)]), (True, -1, [(2,)])]
    assert conn.cursor().execute(f"SELECT COUNT(*) FROM {counted}").fetchval() == 2


def test_nextset_skips_unfetched_rows_and_describes_each_set(conn, driver):
    cur = conn.cursor()
    cur.execute("SELECT 1 AS a, N'x' AS b; SELECT TOP 3 id, name FROM peer.int_nvarchar_100; SELECT 2.5 AS c")
    assert [d[0] for d in cur.description] == ["a", "b"]
    assert tuple(cur.fetchone()) == (1, "x")
    assert cur.nextset()
    assert [d[0] for d in cur.description] == ["id", "name"]
    assert [tuple(r) for r in cur.fetchall()] == list(synthetic.rows("int_nvarchar", 3))
    assert cur.nextset()
    assert [d[0] for d in cur.description] == ["c"]
    assert cur.fetchall()[0][0] is not None
    assert not cur.nextset()
    assert cur.description is None


def test_print_goes_to_messages(conn, driver):
    cur = conn.cursor()
    cur.execute("PRINT 'hello from peer'; SELECT 1")
    assert len(cur.messages) == 1
    state, text = cur.messages[0]
    assert state == "[01000] (0)"
    assert text.endswith("hello from peer")
    assert cur.fetchval() == 1


@pytest.mark.parametrize("severity", [0, 10])
def test_low_severity_raiserror_is_a_message(conn, driver, severity):
    cur = conn.cursor()
    cur.execute(f"RAISERROR('info %d', {severity}, 1, 42); SELECT 2")
    assert [(s, t.rsplit("]", 1)[-1]) for s, t in cur.messages] == [("[01000] (50000)", "info 42")]
    assert cur.fetchval() == 2


def test_messages_of_each_result_set(conn, driver):
    """PRINT before, between and after result sets: each message is collected with the result
    it precedes (after nextset() for the later ones), as pyodbc does through both drivers.
    Through FreeTDS this needs the short row array to end the result: one more SQLFetch reads
    past the PRINT and its record is lost behind SQL_NO_DATA."""
    cur = conn.cursor()
    cur.execute("PRINT 'first'; SELECT 1 AS a; PRINT 'between'; SELECT 2 AS b; PRINT 'last'")
    seen = []
    while True:
        seen.append(([t.rsplit("]", 1)[-1] for _, t in cur.messages], [tuple(r) for r in cur.fetchall()] if cur.description else None))
        if not cur.nextset():
            break
    texts = [m for msgs, _ in seen for m in msgs] + [t.rsplit("]", 1)[-1] for _, t in cur.messages]
    assert seen[0] == (["first"], [(1,)])
    assert seen[1] == (["between"], [(2,)])
    assert texts == ["first", "between", "last"]


def test_error_between_result_sets(conn, driver):
    """`SELECT 1; RAISERROR(16); SELECT 2`: the first result set is whole, the error is raised by
    the nextset() that reaches it (both drivers, as pyodbc), and the batch goes on to the last
    result set."""
    cur = conn.cursor()
    cur.execute("SELECT 1 AS a; RAISERROR('mid', 16, 1); SELECT 2 AS b")
    assert [tuple(r) for r in cur.fetchall()] == [(1,)]
    with pytest.raises(ferrodbc.ProgrammingError) as ei:
        cur.nextset()
    assert ei.value.native_error == 50000 and "mid" in str(ei.value)
    rest = []
    while cur.nextset():
        if cur.description is not None:
            rest += [tuple(r) for r in cur.fetchall()]
    assert rest == [(2,)]


def test_messages_reset_per_execute(conn, driver):
    cur = conn.cursor()
    cur.execute("PRINT 'one'; SELECT 1")
    cur.fetchall()
    assert cur.messages
    cur.execute("SELECT 2")
    assert cur.messages == []


def test_raiserror_16_raises_programming_error(conn, driver):
    cur = conn.cursor()
    with pytest.raises(ferrodbc.ProgrammingError) as ei:
        cur.execute("RAISERROR('boom %s', 16, 1, 'x')")
    e = ei.value
    assert isinstance(e, ferrodbc.DatabaseError)
    assert e.native_error == 50000
    assert e.sqlstate == "42000"
    assert "boom x" in str(e)
    # the connection stays usable
    assert cur.execute("SELECT 5").fetchval() == 5


def test_unknown_object_is_programming_error_208(conn, driver):
    with pytest.raises(ferrodbc.ProgrammingError) as ei:
        conn.cursor().execute("SELECT * FROM no_such_table_xyz")
    assert ei.value.native_error == 208 and ei.value.sqlstate == "42S02"
    assert "Invalid object name" in str(ei.value)


# --- errors mid-stream: all N rows delivered first, then the error -----------------------------

N_BEFORE_ERROR = 100
FAULT = f"SELECT * FROM peer.int_nvarchar_1000 /* fault:error_after={N_BEFORE_ERROR} */"
EXPECTED_PREFIX = list(synthetic.rows("int_nvarchar", N_BEFORE_ERROR))


def assert_fault(e: BaseException) -> None:
    assert isinstance(e, ferrodbc.DatabaseError), type(e)
    assert e.native_error == 50000
    assert f"error after {N_BEFORE_ERROR} rows" in str(e)


@pytest.mark.parametrize("shape", ["fetchone", "fetchmany7", "fetchmany1", "iterate"])
def test_error_after_n_rows_delivers_n_rows_then_raises(conn, driver, shape):
    cur = conn.cursor()
    cur.execute(FAULT)
    got = []
    with pytest.raises(ferrodbc.Error) as ei:
        if shape == "fetchone":
            while (r := cur.fetchone()) is not None:
                got.append(r)
        elif shape.startswith("fetchmany"):
            size = int(shape[len("fetchmany"):])
            while batch := cur.fetchmany(size):
                got += batch
        else:
            for r in cur:
                got.append(r)
    assert_fault(ei.value)
    assert [tuple(r) for r in got] == EXPECTED_PREFIX
    assert conn.cursor().execute("SELECT 5").fetchval() == 5
    assert cur.execute("SELECT 6").fetchval() == 6


def test_error_after_n_rows_fetchall_carries_the_rows(conn, driver):
    """fetchall cannot return every row: it raises, with the N good rows as `partial_rows`;
    the result set is over afterwards."""
    cur = conn.cursor()
    cur.execute(FAULT)
    with pytest.raises(ferrodbc.Error) as ei:
        cur.fetchall()
    assert_fault(ei.value)
    assert [tuple(r) for r in ei.value.partial_rows] == EXPECTED_PREFIX
    assert cur.fetchone() is None


def test_error_after_n_rows_fetchall_raises(conn, driver):
    cur = conn.cursor()
    cur.execute(FAULT)
    with pytest.raises(ferrodbc.Error) as ei:
        cur.fetchall()
    assert_fault(ei.value)


def test_error_after_zero_rows_raises_at_execute_or_first_fetch(conn, driver):
    cur = conn.cursor()
    with pytest.raises(ferrodbc.Error) as ei:
        cur.execute("SELECT * FROM peer.int_nvarchar_1000 /* fault:error_after=0 */")
        cur.fetchone()
    assert ei.value.native_error == 50000


def test_dropped_connection_mid_stream_is_operational_error(request, connect, driver):
    conn = connect()
    cur = conn.cursor()
    cur.execute("SELECT * FROM peer.mixed_100000 /* fault:drop_after=500 */")
    got = 0
    with pytest.raises(ferrodbc.Error) as ei:
        while batch := cur.fetchmany(100):
            got += len(batch)
    assert isinstance(ei.value, ferrodbc.OperationalError), repr(ei.value)
    assert got <= 500


def test_lost_connection_stays_operational_error(request, connect, driver):
    """After the link is gone every further use of the connection (same cursor or a new one)
    raises OperationalError, not an unrelated error; other connections are unaffected."""
    conn = connect()
    cur = conn.cursor()
    cur.execute("SELECT * FROM peer.mixed_100000 /* fault:drop_after=500 */")
    with pytest.raises(ferrodbc.OperationalError):
        cur.fetchall()
    with pytest.raises(ferrodbc.OperationalError):
        cur.execute("SELECT 1")
    with pytest.raises(ferrodbc.OperationalError):
        conn.cursor().execute("SELECT 1")
    assert connect().cursor().execute("SELECT 2").fetchval() == 2


# --- rowcount ----------------------------------------------------------------------------------

def test_rowcount_insert_update_delete_select(conn, driver, counted):
    cur = conn.cursor()
    cur.execute(f"INSERT INTO {counted} VALUES (1), (2), (3)")
    assert cur.rowcount == 3
    cur.execute(f"INSERT INTO {counted} VALUES (?)", 4)
    assert cur.rowcount == 1
    cur.execute(f"UPDATE {counted} SET x = x + 10 WHERE x >= 2")
    assert cur.rowcount == 3
    cur.execute(f"UPDATE {counted} SET x = 0 WHERE x = -1")
    assert cur.rowcount == 0
    cur.execute(f"DELETE FROM {counted} WHERE x > 12")
    assert cur.rowcount == 2
    cur.execute(f"SELECT * FROM {counted}")
    assert cur.rowcount == -1
    assert len(cur.fetchall()) == 2
    assert cur.rowcount == -1
    cur.execute(f"DELETE FROM {counted}")
    assert cur.rowcount == 2


def test_rowcount_of_synthetic_select_is_minus_one(conn, driver):
    cur = conn.cursor()
    cur.execute("SELECT * FROM peer.int_nvarchar_50")
    assert cur.rowcount == -1
    cur.fetchall()
    assert cur.rowcount == -1


# --- stored procedures -------------------------------------------------------------------------

def test_stored_procedure_with_output_parameter(conn, driver):
    """CREATE PROCEDURE with an OUTPUT parameter; EXEC it in a batch: the procedure's own result
    set, then the output value selected after it."""
    cur = conn.cursor()
    p = tname("p")
    cur.execute(f"CREATE PROCEDURE {p} @a INT, @b INT OUTPUT AS BEGIN SET @b = @a * 2; SELECT @a AS a END")
    cur.execute(f"DECLARE @out INT; EXEC {p} 21, @out OUTPUT; SELECT @out AS out")
    results = [(r[0], r[2]) for r in drain(cur) if r[0]]
    assert results == [(True, [(21,)]), (True, [(42,)])]


def test_stored_procedure_odbc_call_escape_with_parameters(conn, driver):
    """{CALL p(?, ?)} with the output parameter passed as a plain None (an input): the
    procedure's result set comes back (output binding: test_sqlserver_output_params.py)."""
    cur = conn.cursor()
    p = tname("p")
    cur.execute(f"CREATE PROCEDURE {p} @a INT, @b INT OUTPUT AS BEGIN SET @b = @a * 2; SELECT @a AS a, N'é😀' AS s END")
    cur.execute(f"{{CALL {p}(?, ?)}}", 5, None)
    assert [tuple(r) for r in cur.fetchall()] == [(5, "é😀")]


def test_transaction_statements_in_a_batch(conn, driver, counted):
    cur = conn.cursor()
    cur.execute(f"BEGIN TRANSACTION; INSERT INTO {counted} VALUES (1); ROLLBACK")
    assert cur.execute(f"SELECT COUNT(*) FROM {counted}").fetchval() == 0
    cur.execute(f"BEGIN TRAN; INSERT INTO {counted} VALUES (1); COMMIT")
    assert cur.execute(f"SELECT COUNT(*) FROM {counted}").fetchval() == 1


def test_identity_and_scope_identity(request, conn, driver):
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT IDENTITY(1,1), v INT)")
    cur.execute(f"INSERT INTO {t} (v) VALUES (10); SELECT SCOPE_IDENTITY() AS id")
    assert cur.rowcount == 1
    assert cur.nextset()
    got = cur.fetchval()
    # SCOPE_IDENTITY() is numeric(38,0) in SQL Server: Decimal('1')
    assert str(got) == "1"


@pytest.mark.parametrize("consume", ["fetchone", "fetchmany10", "nothing"])
def test_nextset_after_partial_fetch_keeps_next_set(conn, driver, consume):
    """Leaving rows of a 1,000-row result unread and calling nextset() discards them and the next
    result set arrives whole (through FreeTDS too)."""
    cur = conn.cursor()
    cur.execute("SELECT * FROM peer.int_nvarchar_1000; SELECT * FROM peer.int_nvarchar_float_5")
    if consume == "fetchone":
        assert tuple(cur.fetchone()) == synthetic.row("int_nvarchar", 0)
    elif consume == "fetchmany10":
        assert len(cur.fetchmany(10)) == 10
    assert cur.nextset()
    assert [tuple(r) for r in cur.fetchall()] == list(synthetic.rows("int_nvarchar_float", 5))
    assert not cur.nextset()


def test_rownumber_and_arraysize(conn, driver):
    cur = conn.cursor()
    cur.execute("SELECT * FROM peer.int_nvarchar_100")
    assert cur.rownumber == 0
    assert cur.arraysize == 1 and len(cur.fetchmany()) == 1
    cur.arraysize = 25
    assert len(cur.fetchmany()) == 25
    assert cur.rownumber == 26
    assert len(cur.fetchall()) == 74
    assert cur.rownumber == 100


# --- server errors map to the PEP 249 classes ------------------------------------------------------

# The drivers' SQLSTATEs for these are wrong (2628 -> 42000 in Driver 18 and FreeTDS 1.3; 220/8115
# -> HY019 in FreeTDS): ferrodbc classes SQL Server's data errors by their native number
# (src/error.rs, sql_server_data_error), so each is a DataError through both drivers.


# (id, setup-free statement on table {t} (s NVARCHAR(5), d DECIMAL(5,2), i TINYINT, b VARBINARY(2),
#  id INT PRIMARY KEY, n INT NOT NULL), parameters, exception class, SQL Server native errors)
SERVER_ERRORS = [
    pytest.param("INSERT INTO {t} (id, n) VALUES (1, NULL)", (), ferrodbc.IntegrityError, (515,), id="not_null_515"),
    # the second statement fails: raised by execute or by the nextset() that reaches it
    pytest.param("INSERT INTO {t} (id, n) VALUES (2, 1); INSERT INTO {t} (id, n) VALUES (2, 1)", (), ferrodbc.IntegrityError, (2627,), id="primary_key_2627"),
    pytest.param("INSERT INTO {t} (s, id, n) VALUES (?, 3, 1)", ("abcdefgh",), ferrodbc.DataError, (2628, 8152), id="nvarchar_truncation_2628"),
    pytest.param("INSERT INTO {t} (b, id, n) VALUES (?, 4, 1)", (b"abcd",), ferrodbc.DataError, (2628, 8152), id="varbinary_truncation_2628"),
    pytest.param("INSERT INTO {t} (d, id, n) VALUES (?, 5, 1)", (12345.6,), ferrodbc.DataError, (8115,), id="decimal_overflow_8115"),
    pytest.param("INSERT INTO {t} (i, id, n) VALUES (?, 6, 1)", (300,), ferrodbc.DataError, (220,), id="tinyint_overflow_220"),
    pytest.param("SELECT 1/0", (), ferrodbc.DataError, (8134,), id="divide_by_zero_8134"),
    pytest.param("SELECT CAST('abc' AS INT)", (), ferrodbc.DataError, (245,), id="conversion_245"),
    pytest.param("SELECT CAST(1e10 AS INT)", (), ferrodbc.DataError, (232,), id="float_overflow_232"),
    pytest.param("SELECT CAST('abc' AS MONEY)", (), ferrodbc.DataError, (235,), id="money_conversion_235"),
]


@pytest.mark.parametrize("sql,params,exc,natives", SERVER_ERRORS)
def test_server_error_classes(conn, driver, sql, params, exc, natives):
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (s NVARCHAR(5), d DECIMAL(5,2), i TINYINT, b VARBINARY(2), id INT PRIMARY KEY, n INT NOT NULL)")
    with pytest.raises(ferrodbc.DatabaseError) as ei:
        cur.execute(sql.format(t=t), *params)
        while cur.nextset():
            pass
        if cur.description is not None:
            cur.fetchall()
    assert isinstance(ei.value, exc), repr(ei.value)
    assert ei.value.native_error in natives
    assert cur.execute("SELECT 1").fetchval() == 1


def test_numbers_past_a_column_range_are_data_errors_and_not_stored(conn, driver):
    """A Python int past 64 bits goes to the server as an exact decimal; SQL Server (and the peer,
    which used to store 2**63-1) refuses it for a bigint column with 8115, as it does a money
    value past the type's range."""
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, b BIGINT, m MONEY)")
    cases = (("b", 2**63), ("b", -(2**63) - 1), ("m", decimal.Decimal("922337203685477.5808")))
    for col, value in cases:
        with pytest.raises(ferrodbc.DataError) as ei:
            cur.execute(f"INSERT INTO {t} (id, {col}) VALUES (1, ?)", value)
        assert ei.value.native_error == 8115, (col, value, ei.value)
    cur.execute(f"INSERT INTO {t} (id, b) VALUES (2, ?)", 2**63 - 1)
    assert [tuple(r) for r in cur.execute(f"SELECT id, b FROM {t}").fetchall()] == [(2, 2**63 - 1)]


def test_error_and_message_text_is_unicode_and_whole(conn, driver):
    cur = conn.cursor()
    with pytest.raises(ferrodbc.ProgrammingError) as ei:
        cur.execute("RAISERROR(N'bad é😀 中文', 16, 1)")
    assert "bad é😀 中文" in str(ei.value)
    assert ei.value.diagnostics[0][:2] == ("42000", 50000)
    assert ei.value.diagnostics[0][2].endswith("bad é😀 中文")
    with pytest.raises(ferrodbc.ProgrammingError) as ei:
        cur.execute("RAISERROR(N'" + "x" * 1500 + "END', 16, 1)")
    assert "x" * 1500 + "END" in str(ei.value)  # longer than any first diagnostic buffer
    cur.execute("PRINT N'note é😀'; SELECT 1")
    assert cur.messages[0][1].endswith("note é😀")


def test_same_shaped_result_sets_keep_their_own_names(conn, driver):
    cur = conn.cursor()
    cur.execute("SELECT 1 AS a; SELECT 2 AS b; SELECT CAST(3.5 AS DECIMAL(5,1)) AS c; SELECT CAST(4.25 AS DECIMAL(5,2)) AS d")
    seen = []
    while True:
        row = cur.fetchone()
        seen.append((cur.description[0][0], row._fields, str(row[0])))
        if not cur.nextset():
            break
    assert seen == [("a", ("a",), "1"), ("b", ("b",), "2"), ("c", ("c",), "3.5"), ("d", ("d",), "4.25")]


def test_many_messages_are_all_kept(conn, driver):
    cur = conn.cursor()
    cur.execute("; ".join(f"PRINT 'm{i}'" for i in range(100)) + "; SELECT 1")
    assert [m[1].rsplit("]", 1)[-1] for m in cur.messages] == [f"m{i}" for i in range(100)]
    assert cur.fetchval() == 1


def test_fetch_without_result_set_is_programming_error(conn, driver):
    cur = conn.cursor()
    cur.execute("SET NOCOUNT ON")
    assert cur.description is None
    for fetch in (cur.fetchall, cur.fetchone, lambda: cur.fetchmany(3)):
        with pytest.raises(ferrodbc.ProgrammingError):
            fetch()
    assert cur.nextset() is False
