"""Bad input gets the right PEP 249 exception, promptly: never a hang, a crash or a wrong answer.
After each error the connection stays usable."""

from __future__ import annotations

import time

import pytest

import ferrodbc


def still_works(conn) -> None:
    conn.rollback()
    assert conn.cursor().execute("SELECT 1").fetchval() == 1


# --- connecting --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "connstr",
    [
        "Driver={SQLite3;Database=x",
        "Driver={SQLite3}};Database={unclosed",
        "Driver={PostgreSQL Unicode};Server={127.0.0.1",
    ],
)
def test_malformed_connection_string_is_an_interface_error(connstr):
    with pytest.raises(ferrodbc.InterfaceError):
        ferrodbc.connect(connstr)


def test_unknown_dsn_is_an_interface_error_with_im002():
    with pytest.raises(ferrodbc.InterfaceError) as info:
        ferrodbc.connect("DSN=ferrodbc_no_such_dsn;Uid=x")
    assert info.value.sqlstate == "IM002"


def test_unknown_driver_is_an_interface_error():
    with pytest.raises(ferrodbc.InterfaceError):
        ferrodbc.connect("Driver={No Such ODBC Driver ferrodbc};Database=x")


def test_unknown_driver_fails_with_a_clear_message():
    """Whatever its class, the error names the driver that could not be loaded."""
    with pytest.raises(ferrodbc.Error, match="No Such ODBC Driver ferrodbc"):
        ferrodbc.connect("Driver={No Such ODBC Driver ferrodbc};Database=x")


def test_wrong_password_is_an_error_not_a_hang(pg):
    with pytest.raises(ferrodbc.Error) as info:
        ferrodbc.connect(pg.variant(Pwd="wrong", PASSWORD=None), timeout=10)
    assert isinstance(info.value, (ferrodbc.OperationalError, ferrodbc.InterfaceError,
                                   ferrodbc.DatabaseError))
    assert "password" in str(info.value).lower()


def test_unreachable_server_is_an_operational_error(pg):
    bad = pg.variant(Port="1")
    with pytest.raises(ferrodbc.OperationalError):
        ferrodbc.connect(bad, timeout=5)


# --- parameters --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql,params",
    [("SELECT ?", ()), ("SELECT ?", (1, 2)), ("SELECT ?, ?", (1,)), ("SELECT 1", (1,))],
)
def test_wrong_parameter_count_is_a_programming_error(conn, sql, params):
    with pytest.raises(ferrodbc.ProgrammingError, match="parameter"):
        conn.cursor().execute(sql, *params)
    still_works(conn)


def test_question_marks_inside_literals_are_not_parameters(conn):
    assert conn.cursor().execute("SELECT '?', ?", 5).fetchone() == ("?", 5)


@pytest.mark.parametrize(
    "sql,params,expected",
    [
        ("SELECT $$is it?$$", (), ("is it?",)),
        ("SELECT $tag$?$tag$, CAST(? AS integer)", (5,), ("?", 5)),
        ("SELECT E'it\\'s?'", (), ("it's?",)),
    ],
    ids=["dollar", "tagged-dollar", "escape-string"],
)
def test_question_marks_inside_postgres_string_forms_are_not_parameters(pg_conn, sql, params, expected):
    assert tuple(pg_conn.cursor().execute(sql, *params).fetchone()) == expected


def test_wrong_parameter_count_in_executemany_is_a_programming_error(conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (a INTEGER, b INTEGER)")
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.executemany(f"INSERT INTO {table} (a, b) VALUES (?, ?)", [(1, 2), (3,)])
    assert conn.cursor().execute(f"SELECT COUNT(*) FROM {table}").fetchval() == 0


@pytest.mark.parametrize(
    "value", [object(), {"a": 1}, {1, 2}, 1 + 2j], ids=["object", "dict", "set", "complex"]
)
def test_unsupported_parameter_type_is_a_programming_error(conn, value):
    with pytest.raises(ferrodbc.ProgrammingError, match="unsupported type"):
        conn.cursor().execute("SELECT ?, ?", 1, value)
    still_works(conn)


def test_a_list_parameter_is_a_table_valued_parameter_which_only_sql_server_has(conn):
    # pyodbc's rule: a list or tuple as one parameter is a TVP (tests/sqlserver sends them),
    # unless its first item is a number: then it is a vector (docs/vectors.md), sent as JSON
    # text to every backend but Driver 18 with VectorTypeSupport=v1.
    with pytest.raises(ferrodbc.ProgrammingError, match="not a sequence of column values"):
        conn.cursor().execute("SELECT ?, ?", 1, [None, 2])
    assert conn.cursor().execute("SELECT ?", ([1, 2.5],)).fetchval() == "[1.0,2.5]"
    with pytest.raises(ferrodbc.NotSupportedError, match="only SQL Server"):
        conn.cursor().execute("SELECT ?, ?", 1, [(1,), (2,)])
    still_works(conn)


def test_an_integer_sqlite_cannot_hold_exactly_is_refused_or_kept_exact(sqlite_conn):
    """SQLite has nothing exact beyond 64 bits. A 40-digit int sent to an INTEGER column must be
    refused (DataError) or come back exactly: never as another number. (PostgreSQL numeric holds
    it: see test_pg_numeric_parameters_wider_than_38_digits.)"""
    cur = sqlite_conn.cursor()
    cur.execute("CREATE TABLE wide_int (i INTEGER)")
    try:
        cur.execute("INSERT INTO wide_int (i) VALUES (?)", 10**40)
    except ferrodbc.DataError:
        return
    assert cur.execute("SELECT i FROM wide_int").fetchval() == 10**40


def test_a_huge_integer_parameter_is_a_data_error(conn):
    with pytest.raises(ferrodbc.DataError):
        conn.cursor().execute("SELECT ?", 10**5000)


def test_decimal_snan_is_a_programming_error_and_nan_is_sent_as_text(peer, conn, table):
    # pyodbc's rules: no database stores a signaling NaN (ProgrammingError before anything is
    # sent); a quiet NaN or an infinity is sent as text, which PostgreSQL stores and SQL Server's
    # driver refuses (DataError, pyodbc's sqlserver_test.py).
    import decimal

    with pytest.raises(ferrodbc.ProgrammingError, match="signaling NaN"):
        conn.cursor().execute("SELECT ?", decimal.Decimal("sNaN"))
    if peer.is_pg:
        cur = conn.cursor()
        cur.execute(f"CREATE TABLE {table} (v numeric)")
        cur.execute(f"INSERT INTO {table} VALUES (?)", decimal.Decimal("NaN"))
        assert cur.execute(f"SELECT v::text FROM {table}").fetchval() == "NaN"


def test_string_with_lone_surrogate_parameter_is_a_data_error(conn):
    with pytest.raises(ferrodbc.DataError):
        conn.cursor().execute("SELECT ?", "bad \ud800 surrogate")


# --- fetching in the wrong state ---------------------------------------------------------------


@pytest.mark.parametrize("method", ["fetchone", "fetchall", "fetchmany", "fetchval"])
def test_fetch_before_execute_is_a_programming_error(conn, method):
    with pytest.raises(ferrodbc.ProgrammingError, match="[Ee]xecute"):
        getattr(conn.cursor(), method)()


@pytest.mark.parametrize("method", ["fetchone", "fetchall", "fetchmany", "fetchval"])
def test_fetch_after_a_statement_without_results_is_a_programming_error(conn, table, method):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER)")
    with pytest.raises(ferrodbc.ProgrammingError, match="not a query"):
        getattr(cur, method)()
    cur.execute(f"INSERT INTO {table} (id) VALUES (1)")
    with pytest.raises(ferrodbc.ProgrammingError):
        getattr(cur, method)()


def test_iterating_before_execute_is_a_programming_error(conn):
    with pytest.raises(ferrodbc.ProgrammingError):
        next(iter(conn.cursor()))


def test_fetchmany_with_a_negative_size_is_a_programming_error(conn):
    cur = conn.cursor()
    cur.execute("SELECT 1")
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.fetchmany(-1)
    assert cur.fetchall() == [(1,)], "the failed call consumed nothing"


# --- closed objects ----------------------------------------------------------------------------

CURSOR_CALLS = {
    "execute": lambda c: c.execute("SELECT 1"),
    "executemany": lambda c: c.executemany("SELECT ?", [(1,)]),
    "fetchone": lambda c: c.fetchone(),
    "fetchmany": lambda c: c.fetchmany(2),
    "fetchall": lambda c: c.fetchall(),
    "fetchval": lambda c: c.fetchval(),
    "next": lambda c: next(c),
    "nextset": lambda c: c.nextset(),
    "description": lambda c: c.description,
    "setinputsizes": lambda c: c.setinputsizes([None]),
}


@pytest.mark.parametrize("call", sorted(CURSOR_CALLS))
def test_using_a_closed_cursor_is_a_programming_error(conn, call):
    cur = conn.cursor()
    cur.execute("SELECT 1")
    cur.close()
    with pytest.raises(ferrodbc.ProgrammingError, match="closed"):
        CURSOR_CALLS[call](cur)
    assert cur.closed
    still_works(conn)


def test_rowcount_of_a_closed_cursor_is_minus_one(peer):
    """pyodbc's answer (rowcount is a plain attribute there): SQLAlchemy's mssql+pyodbc dialect
    reads it after a fully fetched result closed its cursor."""
    conn = peer.connect()
    cur = conn.cursor()
    cur.execute("SELECT 1")
    cur.close()
    assert cur.rowcount == -1
    other = conn.cursor()
    other.execute("SELECT 1")
    conn.close()
    assert other.rowcount == -1


@pytest.mark.parametrize("call", sorted(CURSOR_CALLS))
def test_using_a_cursor_of_a_closed_connection_is_a_programming_error(conn, call):
    cur = conn.cursor()
    cur.execute("SELECT 1")
    conn.close()
    with pytest.raises(ferrodbc.ProgrammingError, match="closed"):
        CURSOR_CALLS[call](cur)
    assert cur.closed


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.cursor(),
        lambda c: c.execute("SELECT 1"),
        lambda c: c.commit(),
        lambda c: c.rollback(),
        lambda c: c.autocommit,
        lambda c: c.dbms_name,
    ],
    ids=["cursor", "execute", "commit", "rollback", "autocommit", "dbms_name"],
)
def test_using_a_closed_connection_is_a_programming_error(conn, call):
    conn.close()
    with pytest.raises(ferrodbc.ProgrammingError, match="closed"):
        call(conn)


def test_cursor_close_after_connection_close_is_harmless(conn):
    cur = conn.cursor()
    cur.execute("SELECT 1")
    conn.close()
    cur.close()
    conn.close()
    assert cur.closed and conn.closed


# --- SQL errors from the database --------------------------------------------------------------


def test_syntax_error_is_a_programming_error_with_a_sqlstate(peer, conn):
    with pytest.raises(ferrodbc.DatabaseError) as info:
        conn.cursor().execute("SELEC 1 FROM")
    err = info.value
    assert err.sqlstate and len(err.sqlstate) == 5
    assert err.diagnostics
    if peer.is_pg:
        assert isinstance(err, ferrodbc.ProgrammingError)
        assert err.sqlstate == "42601"
    still_works(conn)


def test_syntax_error_on_sqlite_keeps_the_drivers_sqlstate(sqlite_conn):
    """The SQLite ODBC driver reports every SQLite error as SQLSTATE HY000 (pyodbc sees the same),
    which ODBC defines as a general error: DatabaseError, with SQLite's message intact."""
    with pytest.raises(ferrodbc.DatabaseError, match="syntax error") as info:
        sqlite_conn.cursor().execute("SELEC 1 FROM")
    assert info.value.sqlstate == "HY000"


def test_unknown_table_is_a_programming_error_on_postgres(pg_conn):
    with pytest.raises(ferrodbc.ProgrammingError) as info:
        pg_conn.cursor().execute("SELECT * FROM ferrodbc_missing_table")
    assert info.value.sqlstate == "42P01"


def test_unique_violation_is_an_integrity_error(pg_conn, pg_table):
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (id integer PRIMARY KEY)")
    cur.execute(f"INSERT INTO {pg_table} (id) VALUES (1)")
    with pytest.raises(ferrodbc.IntegrityError) as info:
        cur.execute(f"INSERT INTO {pg_table} (id) VALUES (?)", 1)
    assert info.value.sqlstate == "23505"
    assert cur.execute(f"SELECT COUNT(*) FROM {pg_table}").fetchval() == 1


def test_not_null_violation_is_an_integrity_error(pg_conn, pg_table):
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (id integer NOT NULL)")
    with pytest.raises(ferrodbc.IntegrityError) as info:
        cur.execute(f"INSERT INTO {pg_table} (id) VALUES (?)", None)
    assert info.value.sqlstate == "23502"


def test_unique_violation_on_sqlite_is_reported(sqlite_conn):
    cur = sqlite_conn.cursor()
    cur.execute("CREATE TABLE u (id INTEGER PRIMARY KEY)")
    cur.execute("INSERT INTO u (id) VALUES (1)")
    with pytest.raises(ferrodbc.DatabaseError, match="UNIQUE"):
        cur.execute("INSERT INTO u (id) VALUES (1)")


def test_division_by_zero_is_a_data_error(pg_conn):
    cur = pg_conn.cursor()
    with pytest.raises(ferrodbc.DataError) as info:
        cur.execute("SELECT 1 / 0").fetchall()
    assert info.value.sqlstate == "22012"
    still_works(pg_conn)


def test_numeric_overflow_is_a_data_error(pg_conn):
    with pytest.raises(ferrodbc.DataError) as info:
        pg_conn.cursor().execute("SELECT CAST(100000 AS smallint)").fetchall()
    assert info.value.sqlstate == "22003"


def test_invalid_text_for_a_type_is_a_data_error(pg_conn):
    with pytest.raises(ferrodbc.DataError):
        pg_conn.cursor().execute("SELECT CAST(? AS integer)", "not a number").fetchall()


def test_error_in_the_middle_of_a_result_set_is_raised_by_fetch(pg_conn):
    """Rows before the failure are delivered; the error comes from the fetch that reaches it."""
    cur = pg_conn.cursor()
    with pytest.raises(ferrodbc.DataError):
        cur.execute("SELECT 10 / (5 - i) FROM generate_series(1, 10) AS s(i)")
        cur.fetchall()
    still_works(pg_conn)


def test_error_raised_by_a_later_block_fetch_keeps_the_rows_already_fetched(pg):
    """With a server-side cursor (UseDeclareFetch=1) the failure surfaces in SQLFetch. fetchall
    promises every row, so it raises (a short list would be silently truncated data) and hands
    the rows read before the failure over as `partial_rows`; nothing is made up."""
    conn = ferrodbc.connect(pg.variant(UseDeclareFetch="1", Fetch="10"))
    try:
        cur = conn.cursor()
        cur.execute("SELECT i, 100 / (50 - i) FROM generate_series(1, 100) AS s(i)")
        with pytest.raises(ferrodbc.DataError) as info:
            cur.fetchall()
        assert info.value.sqlstate == "22012"
        first = info.value.partial_rows
        assert 0 < len(first) < 50
        assert [tuple(r) for r in first] == [(i, 100 // (50 - i)) for i in range(1, len(first) + 1)]
        assert cur.fetchall() == [], "the failed result set is over"
        still_works(conn)
    finally:
        conn.close()


def test_fetchmany_delivers_the_rows_before_a_later_block_fetch_fails(pg):
    """fetchmany hands out the rows it has, then raises on the next call."""
    conn = ferrodbc.connect(pg.variant(UseDeclareFetch="1", Fetch="10"))
    try:
        cur = conn.cursor()
        cur.execute("SELECT i, 100 / (50 - i) FROM generate_series(1, 100) AS s(i)")
        got = []
        with pytest.raises(ferrodbc.DataError) as info:
            while batch := cur.fetchmany(7):
                got += batch
        assert info.value.sqlstate == "22012"
        assert [tuple(r) for r in got] == [(i, 100 // (50 - i)) for i in range(1, len(got) + 1)]
        assert 0 < len(got) < 50
    finally:
        conn.close()


@pytest.fixture
def bad_text_rows(sqlite_conn):
    """SQLite rows 0..9 where row 4's text holds a lone surrogate (malformed UTF-16)."""
    cur = sqlite_conn.cursor()
    cur.execute("CREATE TABLE m (id INTEGER, t TEXT)")
    for i in range(10):
        if i == 4:
            cur.execute("INSERT INTO m (id, t) VALUES (4, CAST(x'61eda080' AS TEXT))")
        else:
            cur.execute("INSERT INTO m (id, t) VALUES (?, ?)", i, f"t{i}")
    sqlite_conn.commit()
    return sqlite_conn


def test_a_row_that_cannot_be_decoded_is_reported_between_the_good_rows(bad_text_rows):
    """fetchmany/fetchone: rows before the bad one are delivered, the bad row raises DataError,
    rows after it follow."""
    cur = bad_text_rows.cursor()
    cur.execute("SELECT id, t FROM m ORDER BY id")
    assert [r[0] for r in cur.fetchmany(100)] == [0, 1, 2, 3]
    with pytest.raises(ferrodbc.DataError, match="lone surrogate"):
        cur.fetchmany(100)
    assert [r[0] for r in cur.fetchmany(100)] == [5, 6, 7, 8, 9]
    assert cur.fetchall() == []


def test_fetchall_over_a_bad_row_raises_with_the_rows_before_it(bad_text_rows):
    """fetchall cannot return every row, so it raises; the rows before the bad one ride along
    as `partial_rows` and a later fetch continues after the bad row."""
    cur = bad_text_rows.cursor()
    cur.execute("SELECT id, t FROM m ORDER BY id")
    with pytest.raises(ferrodbc.DataError, match="lone surrogate") as info:
        cur.fetchall()
    assert [r[0] for r in info.value.partial_rows] == [0, 1, 2, 3]
    assert [r[0] for r in cur.fetchall()] == [5, 6, 7, 8, 9]


def test_a_decode_error_names_the_row_by_its_position_in_the_result_set(bad_text_rows):
    cur = bad_text_rows.cursor()
    cur.execute("SELECT id, t FROM m ORDER BY id")
    cur.fetchmany(4)
    with pytest.raises(ferrodbc.DataError) as info:
        cur.fetchone()
    assert "row 4" in str(info.value), str(info.value)


def test_a_value_longer_than_the_declared_size_is_an_error_never_silently_cut(pg):
    """psqlODBC's default MaxVarcharSize=255 under-reports `varchar` without a length: the value
    does not fit the bound buffer. ferrodbc must say so (DataError naming the column), not cut it."""
    connstr = pg.variant(MaxVarcharSize=None)
    assert "maxvarcharsize" not in connstr.lower()
    conn = ferrodbc.connect(connstr)
    try:
        cur = conn.cursor()
        cur.execute("SELECT 1 AS id, CAST(repeat('x', 1000) AS varchar) AS long_one")
        with pytest.raises(ferrodbc.DataError, match="long_one"):
            cur.fetchall()
        short = cur.execute("SELECT CAST(repeat('y', 200) AS varchar)").fetchval()
        assert short == "y" * 200, "values that fit are unaffected"
    finally:
        conn.close()


def test_a_failed_execute_leaves_no_result_set_behind(conn):
    """After execute raises, nothing of the previous query can be fetched by mistake."""
    cur = conn.cursor()
    cur.execute("SELECT 1 UNION ALL SELECT 2")
    cur.fetchone()
    with pytest.raises(ferrodbc.DatabaseError):
        cur.execute("SELEC 1")
    assert cur.description is None
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.fetchone()


@pytest.mark.parametrize(
    "bad_call",
    [
        lambda cur: cur.execute("SELECT ?", 1, 2),
        lambda cur: cur.execute("SELECT ?", object()),
        lambda cur: cur.executemany("SELECT ?", [(1, 2)]),
    ],
    ids=["wrong-count", "unsupported-type", "executemany-wrong-count"],
)
def test_a_rejected_execute_leaves_no_stale_result_set(conn, bad_call):
    cur = conn.cursor()
    cur.execute("SELECT 1 UNION ALL SELECT 2")
    cur.fetchone()
    with pytest.raises(ferrodbc.ProgrammingError):
        bad_call(cur)
    assert cur.description is None
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.fetchone()


def test_a_timestamp_python_cannot_represent_is_a_data_error(pg_conn):
    cur = pg_conn.cursor()
    cur.execute("SELECT CAST('-infinity' AS timestamp) AS ts")
    with pytest.raises(ferrodbc.DataError, match="ts"):
        cur.fetchone()


def test_a_time_python_cannot_represent_is_a_data_error(pg_conn):
    cur = pg_conn.cursor()
    cur.execute("SELECT CAST('24:00:00' AS time)")
    with pytest.raises(ferrodbc.DataError, match="24:00:00"):
        cur.fetchone()


@pytest.fixture
def silent_server():
    """A TCP port that accepts connections and never says a word (a hung server)."""
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held = []
    stop = threading.Event()

    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield srv.getsockname()[1]
    stop.set()
    thread.join(5)
    for s in held:
        s.close()
    srv.close()


def test_login_timeout_bounds_a_connect_to_a_server_that_never_answers(pg, silent_server):
    start = time.monotonic()
    with pytest.raises(ferrodbc.OperationalError) as info:
        ferrodbc.connect(pg.variant(Server="127.0.0.1", Port=str(silent_server)), timeout=2)
    assert time.monotonic() - start < 10
    assert info.value.sqlstate.startswith("08")


def test_a_str_parameter_with_nul_is_rejected_by_postgres_not_truncated(pg_conn, pg_table):
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (t text)")
    try:
        cur.execute(f"INSERT INTO {pg_table} (t) VALUES (?)", "a\x00b")
    except ferrodbc.DataError:
        pass
    stored = [r[0] for r in cur.execute(f"SELECT t FROM {pg_table}").fetchall()]
    assert stored == [], f"the value was stored as {stored!r}"


def test_executemany_with_rows_that_are_not_sequences_raises(conn):
    for bad in ([1, 2], 5, None):
        with pytest.raises((TypeError, ferrodbc.ProgrammingError)):
            conn.cursor().executemany("SELECT ?", bad)
    still_works(conn)


def test_a_terminated_server_session_is_an_operational_error_and_close_still_works(pg):
    """The server drops the connection (pg_terminate_backend): every later call says so with
    OperationalError, none hangs, and close() cleans up."""
    conn = pg.connect()
    monitor = pg.connect(autocommit=True)
    try:
        cur = conn.cursor()
        pid = cur.execute("SELECT pg_backend_pid()").fetchval()
        watch = monitor.cursor()
        assert watch.execute("SELECT pg_terminate_backend(?)", pid).fetchval() is True
        for _ in range(100):  # the backend exits asynchronously
            if not watch.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ?", pid).fetchval():
                break
            time.sleep(0.05)
        for _ in range(2):
            with pytest.raises(ferrodbc.OperationalError) as info:
                cur.execute("SELECT 1")
            assert info.value.sqlstate[:2] in ("57", "08")
    finally:
        monitor.close()
        conn.close()
    assert conn.closed


def test_a_parameter_out_of_range_for_its_column_is_a_data_error(pg_conn, pg_table):
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (s smallint, n numeric(5,2))")
    with pytest.raises(ferrodbc.DataError) as info:
        cur.execute(f"INSERT INTO {pg_table} (s) VALUES (?)", 40000)
    assert info.value.sqlstate == "22003"
    import decimal

    with pytest.raises(ferrodbc.DataError):
        cur.execute(f"INSERT INTO {pg_table} (n) VALUES (?)", decimal.Decimal("1234.5"))
    assert cur.execute(f"SELECT COUNT(*) FROM {pg_table}").fetchval() == 0
