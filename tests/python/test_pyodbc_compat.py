"""pyodbc's API on ferrodbc: module functions, connection settings, catalog functions, Row.

Each test states what a pyodbc program relies on and checks ferrodbc's answer against the
database itself (what the test created), never against a hard-coded driver answer. pyodbc 5.5.0's
own test files run against ferrodbc too: eng/suites/pyodbc_suites.py.
"""

from __future__ import annotations

import ctypes
import decimal
import pickle
import subprocess
import sys
import warnings

import pytest

import ferrodbc

# ---------------------------------------------------------------------------------------------
# module


def test_module_settings_and_constants():
    assert len(ferrodbc.version.split(".")) == 3
    assert ferrodbc.odbcversion == "3.8"
    assert ferrodbc.lowercase is False and ferrodbc.native_uuid is True
    # ODBC header values: SQL_DBMS_NAME 17, SQL_ATTR_ACCESS_MODE 101, SQL_WMETADATA -888.
    assert ferrodbc.SQL_DBMS_NAME == 17
    assert ferrodbc.SQL_ATTR_ACCESS_MODE == 101
    assert ferrodbc.SQL_WMETADATA == -888
    for name in (
        "SQL_DBMS_NAME",
        "SQL_ATTR_CURRENT_CATALOG",
        "SQL_WMETADATA",
        "SQL_WVARCHAR",
    ):
        assert name in ferrodbc.__all__


def test_drivers_and_data_sources_list_what_unixodbc_knows(peer):
    drivers = ferrodbc.drivers()
    assert isinstance(drivers, list)
    # The peer's own driver is registered (the suite connects through it).
    assert ("SQLite3" if peer.is_sqlite else "PostgreSQL Unicode") in drivers
    sources = ferrodbc.dataSources()
    assert isinstance(sources, dict)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in sources.items())


def test_decimal_separator_round_trips_and_never_changes_values(pg_conn):
    # PostgreSQL: a real NUMERIC (SQLite's CAST to NUMERIC gives a REAL).
    saved = ferrodbc.getDecimalSeparator()
    assert saved == "."
    try:
        ferrodbc.setDecimalSeparator(",")
        assert ferrodbc.getDecimalSeparator() == ","
        value = (
            pg_conn.cursor().execute("SELECT CAST(3656.88 AS NUMERIC(10,2))").fetchval()
        )
        assert value == decimal.Decimal("3656.88")
        with pytest.raises(TypeError):
            ferrodbc.setDecimalSeparator(1)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            ferrodbc.setDecimalSeparator("")
    finally:
        ferrodbc.setDecimalSeparator(saved)


def test_lowercase_applies_to_result_sets_described_after_it(conn):
    cur = conn.cursor()
    try:
        ferrodbc.lowercase = True
        cur.execute('SELECT 1 AS "Abc", 2 AS "dEf"')
        assert [d[0] for d in cur.description] == ["abc", "def"]
        assert cur.fetchone().abc == 1
    finally:
        ferrodbc.lowercase = False
    cur.execute('SELECT 1 AS "Abc"')
    assert cur.description[0][0] == "Abc"


def test_deleted_module_settings_mean_their_defaults(peer):
    script = (
        "import sys, ferrodbc\n"
        "del ferrodbc.pooling, ferrodbc.odbcversion, ferrodbc.lowercase, ferrodbc.native_uuid\n"
        "row = ferrodbc.connect(sys.argv[1]).execute('select 1 as \"Abc\"').fetchone()\n"
        "print(row.Abc)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, peer.connstr],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"


def test_ticks_out_of_range_are_overflow_errors():
    assert ferrodbc.TimeFromTicks(1.5).second in (1, 0)
    with pytest.raises(OverflowError):
        ferrodbc.TimeFromTicks(2**62)
    with pytest.raises(OverflowError):
        ferrodbc.DateFromTicks(2**100)


# ---------------------------------------------------------------------------------------------
# connect and connection settings


@pytest.mark.parametrize("key", [2**31, -(2**31) - 1, 2**40 + 102, 2**64])
def test_attrs_before_keys_must_fit_an_sqlinteger(peer, key):
    # 2**40 + 102 truncated would be 102, SQL_ATTR_AUTOCOMMIT.
    with pytest.raises(OverflowError):
        peer.connect(attrs_before={key: 1})


def test_attrs_before_values_are_checked_before_connecting(peer):
    with pytest.raises(UnicodeEncodeError):
        peer.connect(attrs_before={ferrodbc.SQL_ATTR_CURRENT_CATALOG: "\ud800"})

    class BadSequence:
        def __len__(self):
            return 1

        def __getitem__(self, i):
            raise ValueError("no items")

    with pytest.raises(ValueError, match="no items"):
        peer.connect(attrs_before={ferrodbc.SQL_ATTR_CURRENT_CATALOG: BadSequence()})
    with pytest.raises(TypeError):
        peer.connect(attrs_before={ferrodbc.SQL_ATTR_CURRENT_CATALOG: 1.5})


def test_attrs_before_reach_the_driver(peer):
    # SQL_ATTR_ACCESS_MODE = SQL_MODE_READ_ONLY before connecting: both drivers accept it, and
    # an attribute number the driver manager does not know is refused by it (so the call was
    # made, not dropped).
    conn = peer.connect(attrs_before={ferrodbc.SQL_ATTR_ACCESS_MODE: 1})
    assert conn.cursor().execute("SELECT 1").fetchval() == 1
    conn.close()
    with pytest.raises(ferrodbc.Error):
        peer.connect(attrs_before={ferrodbc.SQL_ATTR_AUTOCOMMIT: 12345})


def test_bad_encoding_name_raises(peer):
    with pytest.raises(UnicodeEncodeError):
        peer.connect(encoding="\udcff")
    with pytest.raises(LookupError):
        peer.connect(encoding="no-such-codec")


def test_readonly_connect_sets_the_access_mode(peer, monkeypatch):
    # Neither SQLite3 ODBC nor psqlODBC enforces SQL_MODE_READ_ONLY (real pyodbc can write
    # through both too), so what is checked is the call pyodbc makes: SQL_ATTR_ACCESS_MODE =
    # SQL_MODE_READ_ONLY right after connecting, accepted by the driver.
    calls = []
    real = ferrodbc.Connection.set_attr

    def spy(self, attr, value):
        calls.append((attr, value))
        return real(self, attr, value)

    monkeypatch.setattr(ferrodbc.Connection, "set_attr", spy)
    conn = peer.connect(readonly=True)
    try:
        assert calls == [(ferrodbc.SQL_ATTR_ACCESS_MODE, 1)]  # 1: SQL_MODE_READ_ONLY
        assert conn.cursor().execute("SELECT 1").fetchval() == 1
    finally:
        conn.close()
    peer.connect().close()
    assert len(calls) == 1


def test_getinfo_types(conn):
    assert conn.getinfo(ferrodbc.SQL_DBMS_NAME) == conn.dbms_name
    assert isinstance(conn.getinfo(ferrodbc.SQL_CATALOG_NAME_SEPARATOR), str)
    assert isinstance(conn.getinfo(ferrodbc.SQL_ACCESSIBLE_TABLES), bool)
    assert isinstance(conn.getinfo(ferrodbc.SQL_DEFAULT_TXN_ISOLATION), int)
    assert isinstance(conn.getinfo(ferrodbc.SQL_CONCAT_NULL_BEHAVIOR), int)
    with pytest.raises(ferrodbc.ProgrammingError):
        conn.getinfo(65000)
    conn.close()
    with pytest.raises(ferrodbc.ProgrammingError, match="closed connection"):
        conn.getinfo(ferrodbc.SQL_DBMS_NAME)


def test_set_attr(conn):
    conn.set_attr(ferrodbc.SQL_ATTR_ACCESS_MODE, 0)
    with pytest.raises(UnicodeEncodeError):
        conn.set_attr(ferrodbc.SQL_ATTR_CURRENT_CATALOG, "\ud800")
    with pytest.raises(OverflowError):
        conn.set_attr(ferrodbc.SQL_ATTR_CURRENT_CATALOG, 2**100)
    with pytest.raises(OverflowError):
        conn.set_attr(2**40, 1)
    conn.close()
    with pytest.raises(ferrodbc.ProgrammingError, match="closed connection"):
        conn.set_attr(ferrodbc.SQL_ATTR_CURRENT_CATALOG, "x")


def test_searchescape_is_the_drivers_escape(conn):
    escape = conn.searchescape
    assert escape == conn.getinfo(ferrodbc.SQL_SEARCH_PATTERN_ESCAPE)
    conn.close()
    with pytest.raises(ferrodbc.ProgrammingError, match="closed connection"):
        _ = conn.searchescape


def test_handles_are_ctypes_pointers(conn):
    cur = conn.cursor()
    assert cur.hstmt is None  # no statement before first use
    cur.execute("SELECT 1")
    for handle in (ferrodbc.henv, conn.hdbc, cur.hstmt):
        assert isinstance(handle, ctypes.c_void_p) and handle.value
    cur.close()
    assert cur.hstmt is None
    conn.close()
    assert conn.hdbc is None


def test_decimal_mode_and_its_deprecated_flag(peer, conn):
    assert conn.decimal_mode == ("text" if peer.is_pg else "binary")
    for mode in ("text", "locale", "binary"):
        conn.decimal_mode = mode
        assert conn.decimal_mode == mode
    with pytest.raises(ValueError):
        conn.decimal_mode = "strict"
    with pytest.raises(TypeError):
        conn.decimal_mode = 1
    with pytest.raises(TypeError):
        del conn.decimal_mode
    with pytest.warns(FutureWarning, match="decimal_mode"):
        conn.decimal_mode = True
    assert conn.decimal_mode == "locale"
    with pytest.warns(FutureWarning, match="fetch_decimal_as_string"):
        assert conn.fetch_decimal_as_string is True
    conn.decimal_mode = "text"
    with pytest.warns(FutureWarning):
        conn.fetch_decimal_as_string = True  # what it reads: no change
    assert conn.decimal_mode == "text"
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        with pytest.raises(FutureWarning):
            conn.fetch_decimal_as_string = False
    assert conn.decimal_mode == "text"
    if peer.is_pg:  # a real NUMERIC (SQLite's CAST to NUMERIC gives a REAL)
        values = set()
        for mode in ("binary", "text", "locale"):
            conn.decimal_mode = mode
            values.add(
                conn.cursor().execute("SELECT CAST(12.345 AS NUMERIC(10,3))").fetchval()
            )
        assert values == {decimal.Decimal("12.345")}


def test_size_settings_are_kept_and_checked(conn):
    assert conn.readvar_initsize == 4096
    conn.readvar_initsize = 1
    assert conn.readvar_initsize == 1
    conn.maxwrite = 300
    assert conn.maxwrite == 300
    with pytest.raises(ValueError):
        conn.readvar_initsize = -1
    with pytest.raises(TypeError):
        conn.maxwrite = "big"
    with pytest.raises(TypeError):
        del conn.readvar_initsize
    long_text = "x" * 1000
    value = conn.cursor().execute("SELECT ?", long_text).fetchval()
    assert value == long_text


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16le", "UTF-16"])
def test_setdecoding_and_setencoding_accept_what_ferrodbc_reads(conn, encoding):
    conn.setdecoding(ferrodbc.SQL_CHAR, encoding=encoding)
    conn.setdecoding(ferrodbc.SQL_WCHAR, encoding=encoding, ctype=ferrodbc.SQL_WCHAR)
    conn.setencoding(encoding=encoding)
    text = "ä€😀"
    assert conn.cursor().execute("SELECT ?", text).fetchval() == text


def test_setdecoding_refuses_what_it_cannot_honour(conn):
    for sqltype, encoding in [
        (ferrodbc.SQL_CHAR, "latin-1"),
        (ferrodbc.SQL_WCHAR, "ascii"),
        (ferrodbc.SQL_WMETADATA, "utf-8"),
    ]:
        with pytest.raises(ferrodbc.NotSupportedError):
            conn.setdecoding(sqltype, encoding=encoding)
    with pytest.raises(ferrodbc.NotSupportedError):
        conn.setencoding(encoding="cp1252")
    with pytest.raises(ValueError):
        conn.setdecoding(12345, encoding="utf-8")
    with pytest.raises(ValueError):
        conn.setdecoding(ferrodbc.SQL_CHAR, encoding="utf-8", ctype=99)
    with pytest.raises(LookupError):
        conn.setdecoding(ferrodbc.SQL_CHAR, encoding="no-such-codec")


# ---------------------------------------------------------------------------------------------
# cursor


def test_catalog_functions_describe_what_was_created(peer, conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name VARCHAR(20))")
    conn.commit()
    names = [row.table_name for row in cur.tables(table=table)]
    assert names == [table]
    # Catalog result sets have lower-case column names, whatever the driver says (pyodbc).
    assert all(d[0] == d[0].lower() for d in cur.description)
    columns = {row.column_name: row for row in cur.columns(table=table)}
    assert sorted(columns) == ["id", "name"]
    assert columns["name"].column_size == 20
    assert [row.column_name for row in cur.primaryKeys(table)] == ["id"]
    stats = cur.statistics(table).fetchall()
    assert isinstance(stats, list)
    # Each driver's own answer (the same as pyodbc's): SQLite3 ODBC names the rowid alias,
    # psqlODBC gives xmin as the row version and, as row identifier, nothing (13.02, Debian 12)
    # or the primary key (Debian sid's, eng/chroot.py).
    ids = [r.column_name for r in cur.rowIdColumns(table)]
    versions = [r.column_name for r in cur.rowVerColumns(table)]
    assert (ids, versions) in {"sqlite": [(["_ROWID_"], [])], "postgres": [([], ["xmin"]), (["id"], ["xmin"])]}[peer.name]
    assert isinstance(cur.foreignKeys(table=table).fetchall(), list)
    assert isinstance(cur.procedures().fetchall(), list)
    assert isinstance(cur.procedureColumns().fetchall(), list)
    privileges = cur.tablePrivileges(table=table)
    assert [d[0] for d in privileges.description] == [
        "table_cat",
        "table_schem",
        "table_name",
        "grantor",
        "grantee",
        "privilege",
        "is_grantable",
    ]
    types = cur.getTypeInfo(ferrodbc.SQL_INTEGER).fetchall()
    assert types and all(row.data_type == ferrodbc.SQL_INTEGER for row in types)
    # The next execute is an ordinary result set again (original column-name case).
    assert cur.execute('SELECT 1 AS "Abc"').description[0][0] == "Abc"


def test_catalog_arguments_are_checked(conn):
    cur = conn.cursor()
    with pytest.raises(ValueError):
        cur.tablePrivileges("x" * 32768)
    with pytest.raises(UnicodeEncodeError):
        cur.columns(table="t\ud800")
    cur.close()
    with pytest.raises(ferrodbc.ProgrammingError, match="closed cursor"):
        cur.tables()


def test_skip_discards_rows_without_building_them(conn):
    cur = conn.cursor()
    cur.execute(
        "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 ORDER BY 1"
    )
    assert cur.fetchone()[0] == 1
    cur.skip(2)
    assert cur.fetchone()[0] == 4
    cur.skip(10)  # past the end: nothing left, no error
    assert cur.fetchone() is None
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.skip(-1)


def test_cursor_commit_and_rollback(peer, conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (n INTEGER)")
    cur.commit()
    cur.execute(f"INSERT INTO {table} VALUES (1)")
    cur.rollback()
    assert cur.execute(f"SELECT COUNT(*) FROM {table}").fetchval() == 0
    cur.execute(f"INSERT INTO {table} VALUES (2)")
    cur.commit()
    other = peer.connect()
    try:
        assert other.cursor().execute(f"SELECT n FROM {table}").fetchval() == 2
    finally:
        other.close()


def test_fast_executemany_and_noscan_flags(peer, conn, table):
    cur = conn.cursor()
    assert cur.fast_executemany is False and cur.noscan is False
    cur.fast_executemany = True
    assert cur.fast_executemany is True
    if peer.is_sqlite:
        # SQLite3 ODBC does not support SQL_ATTR_NOSCAN: refused when set, never ignored.
        with pytest.raises(ferrodbc.NotSupportedError):
            cur.noscan = True
        assert cur.noscan is False
    else:
        cur.noscan = True
        assert cur.noscan is True
    cur.execute(f"CREATE TABLE {table} (n INTEGER, s VARCHAR(10))")
    cur.executemany(f"INSERT INTO {table} VALUES (?, ?)", [(1, "a"), (2, "b")])
    assert cur.execute(f"SELECT COUNT(*) FROM {table}").fetchval() == 2


def test_executemany_rows_must_be_sequences(conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (s VARCHAR(10))")
    with pytest.raises(TypeError):
        cur.executemany(f"INSERT INTO {table} VALUES (?)", [{"a"}])
    # The rows themselves in a set: unordered, refused (pyodbc: ProgrammingError).
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.executemany(f"INSERT INTO {table} VALUES (?)", {("a",), ("b",)})
    assert cur.execute(f"SELECT COUNT(*) FROM {table}").fetchval() == 0


def test_setinputsizes_lists_and_negative_scale(conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (n NUMERIC(18, 2))")
    cur.setinputsizes([[ferrodbc.SQL_DECIMAL, 18, 2]])
    cur.execute(f"INSERT INTO {table} VALUES (?)", decimal.Decimal("1.25"))
    assert cur.execute(f"SELECT n FROM {table}").fetchval() == decimal.Decimal("1.25")
    cur.setinputsizes([(ferrodbc.SQL_DECIMAL, 18, -1)])
    with pytest.raises(ferrodbc.ProgrammingError, match="Numeric overflow"):
        cur.executemany(f"INSERT INTO {table} VALUES (?)", [(123,)])


def test_rows_as_dicts(conn):
    cur = conn.cursor()
    assert cur.rows_as_dicts is False
    cur.rows_as_dicts = True
    assert cur.execute("SELECT 42 AS a, 'x' AS b").fetchone() == {"a": 42, "b": "x"}
    assert cur.execute("SELECT 1 AS a UNION ALL SELECT 2 ORDER BY 1").fetchall() == [
        {"a": 1},
        {"a": 2},
    ]
    assert cur.execute("SELECT 42 AS a, 1 AS b").fetchval() == 42
    assert list(cur.execute("SELECT 7 AS a")) == [{"a": 7}]
    cur.rows_as_dicts = False
    assert isinstance(cur.execute("SELECT 1 AS a").fetchone(), ferrodbc.Row)


# ---------------------------------------------------------------------------------------------
# rows


def test_row_as_parameters_and_whole_slice(conn):
    cur = conn.cursor()
    row = cur.execute("SELECT 1 AS n, 'a' AS s").fetchone()
    assert row[:] is row and row[0:2] is row
    assert row[:1] == (1,)
    assert cur.execute("SELECT ?, ?", row).fetchone() == (1, "a")


def test_row_constructor_and_pickling():
    row = ferrodbc.Row((("a", int, None, None, None, 0, True),), {"a": 0}, 5)
    assert row.a == 5 and row[0] == 5 and len(row) == 1
    assert row.cursor_description[0][0] == "a"
    for index in (100000, -5):
        with pytest.raises(IndexError):
            _ = ferrodbc.Row(("x",), {"a": index}, 1).a
    with pytest.raises(TypeError):
        del row.a
    with pytest.raises(AttributeError):
        row.a = 1
    assert pickle.loads(pickle.dumps(row)) == row

    class Uncomparable:
        def __eq__(self, other):
            raise ValueError("no comparing")

    left = ferrodbc.Row(("a",), {"a": 0}, Uncomparable())
    right = ferrodbc.Row(("a",), {"a": 0}, Uncomparable())
    with pytest.raises(ValueError, match="no comparing"):
        _ = left == right


def test_fast_executemany_keeps_pyodbcs_numeric_errors(pg_conn, pg_table):
    # pyodbc binds Decimals as SQL_NUMERIC_STRUCT under fast_executemany and refuses what it
    # cannot hold; ferrodbc keeps those errors when the flag is on, and stores the exact value
    # when it is off. Trailing zeros and 0E-50 are no loss of precision.
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (n INTEGER, v NUMERIC)")
    sql = f"INSERT INTO {pg_table} VALUES (?, ?)"
    cur.fast_executemany = True
    for value, match in [
        (decimal.Decimal("1" * 39), "Numeric overflow"),
        (int("1" * 39), "Numeric overflow"),
        (decimal.Decimal("1E-40"), "loses precision"),
        (decimal.Decimal("NaN"), "NaN"),
    ]:
        with pytest.raises(ferrodbc.ProgrammingError, match=match):
            cur.executemany(sql, [(1, decimal.Decimal("1.5")), (2, value)])
    assert cur.execute(f"SELECT COUNT(*) FROM {pg_table}").fetchval() == 0
    fits = [
        decimal.Decimal("1." + "0" * 40),
        decimal.Decimal("0E-50"),
        decimal.Decimal("1E-38"),
    ]
    cur.executemany(sql, list(enumerate(fits)))
    cur.fast_executemany = False
    cur.executemany(sql, [(9, decimal.Decimal("1" * 39))])
    got = [row[0] for row in cur.execute(f"SELECT v FROM {pg_table} ORDER BY n")]
    assert got == [*fits, decimal.Decimal("1" * 39)]


def test_driver_errors_carry_the_sqlstate_first_like_pyodbc(conn):
    # pyodbc: e.args == (sqlstate, "[sqlstate] [driver]message (native) (function)").
    with pytest.raises(ferrodbc.Error) as info:
        conn.cursor().execute("SELECT * FROM no_such_table_anywhere")
    error = info.value
    assert len(error.args) == 2
    assert error.args[0] == error.sqlstate and len(error.sqlstate) == 5
    assert error.args[1].startswith(f"[{error.sqlstate}] ")
    assert error.args[1].endswith("(SQLExecDirect)")
    # ferrodbc's own errors carry the message alone (as pyodbc's own do).
    with pytest.raises(ferrodbc.ProgrammingError) as info:
        conn.cursor().fetchone()
    assert len(info.value.args) == 1


def test_a_decimal_with_a_huge_exponent_is_an_error_not_a_crash(peer, conn):
    # Written out as plain text, 1E+999999999999999999 would be an exabyte: the allocation used
    # to abort the interpreter (found by pyodbc's sqlserver_test.py).
    # ProgrammingError before anything is sent, with pyodbc's words.
    for value, words in (
        (decimal.Decimal(f"1E+{decimal.MAX_EMAX}"), "Numeric overflow"),
        (decimal.Decimal("1E-999999999"), "digits after the decimal point"),
    ):
        with pytest.raises(ferrodbc.ProgrammingError, match=words):
            conn.cursor().execute("SELECT ?", value)
    cur = conn.cursor()
    cur.fast_executemany = True
    with pytest.raises(ferrodbc.ProgrammingError, match="Numeric overflow"):
        cur.executemany("SELECT ?", [(decimal.Decimal(f"1E+{decimal.MAX_EMAX}"),)])
    if peer.is_pg:  # a 1001-digit value is still sent, as exact text (SQLite: 64-bit at most)
        value = conn.cursor().execute("SELECT CAST(? AS NUMERIC)", decimal.Decimal("1E+1000"))
        assert value.fetchval() == decimal.Decimal("1E+1000")
