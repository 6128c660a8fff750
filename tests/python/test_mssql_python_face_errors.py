"""The mssql_python face's rows, row counters, exception classes and connection-string rules
(mssql-python's, over ferrodbc's engine), on SQLite3 ODBC."""

from __future__ import annotations

import pickle

import pytest

import ferrodbc
from ferrodbc import mssql_python as face
from ferrodbc.mssql_python import exceptions
from ferrodbc.mssql_python.connection_string_builder import _ConnectionStringBuilder
from ferrodbc.mssql_python.connection_string_parser import (
    _ConnectionStringParser,
    sanitize_connection_string,
)


@pytest.fixture
def cn(sqlite):
    c = face.connect(sqlite.connstr, autocommit=True)
    yield c
    c.close()


def test_rows_equal_lists_and_stay_engine_rows(cn):
    row = cn.cursor().execute("SELECT 1 AS a, 'x' AS b").fetchone()
    assert row == [1, "x"] and row != [1, "y"] and row == (1, "x")
    assert isinstance(row, face.Row) and row.b == "x" and row[0] == 1
    assert row.cursor_description[0][0] == "a"
    with pytest.raises(TypeError):
        row < [2, "x"]  # noqa: B015 - lists are not ordered against rows
    # ferrodbc's own rows keep pyodbc's rule.
    plain = ferrodbc.connect("Driver=SQLite3;Database=:memory:")
    assert plain.cursor().execute("SELECT 1").fetchone() != [1]
    plain.close()


def test_face_rows_are_parameters(cn):
    cur = cn.cursor()
    cur.execute("CREATE TABLE t (a INTEGER, b TEXT)")
    row = cur.execute("SELECT 1, 'x'").fetchone()
    cur.execute("INSERT INTO t VALUES (?, ?)", row)
    assert cur.execute("SELECT a, b FROM t").fetchall() == [[1, "x"]]


def test_rownumber_and_rowcount_as_mssql_python(cn):
    cur = cn.cursor()
    cur.execute("CREATE TABLE n (a INTEGER)")
    cur.executemany("INSERT INTO n VALUES (?)", [(i,) for i in range(5)])
    cur.execute("SELECT a FROM n ORDER BY a")
    assert cur.rownumber == -1 and cur.rowcount == -1
    cur.fetchone()
    assert cur.rownumber == 0 and cur.rowcount == 1
    cur.fetchmany(2)
    assert cur.rownumber == 2 and cur.rowcount == 3
    cur.fetchall()
    assert cur.rownumber == 4 and cur.rowcount == 5
    cur.execute("UPDATE n SET a = a + 1")
    assert cur.rowcount == 5 and cur.rownumber == -1
    cur.close()
    assert cur.rowcount == -1 and cur.rownumber == -1


def test_engine_errors_become_the_faces(cn):
    cur = cn.cursor()
    with pytest.raises(face.DatabaseError) as info:
        cur.execute("SELECT * FROM no_such_table")
    e = info.value
    # SQLite3 ODBC reports HY000, which mssql-python raises as OperationalError.
    assert type(e) is face.OperationalError and isinstance(e, ferrodbc.Error)
    assert str(e).startswith("Driver Error: ") and "; DDBC Error: " in str(e)
    assert "no such table" in e.ddbc_error and e.driver_error
    assert e.sqlstate and e.diagnostics
    cur.close()
    with pytest.raises(face.ProgrammingError) as info:
        cur.execute("SELECT 1")
    assert str(info.value).startswith("Driver Error: ") and "DDBC Error" not in str(info.value)
    with pytest.raises(ValueError, match="info_type must be an integer"):
        cn.getinfo("x")


def test_closed_connection_is_an_interface_error(sqlite):
    c = face.connect(sqlite.connstr)
    c.close()
    with pytest.raises(face.InterfaceError, match="Cannot create cursor on closed connection"):
        c.cursor()


def test_fetch_errors_become_the_faces_through_the_hook(cn):
    cur = cn.cursor()
    cur.execute("CREATE TABLE d (a INTEGER)")
    cur.close()
    for fetch in ("fetchone", "fetchall", "fetchmany", "fetchval"):
        with pytest.raises(face.ProgrammingError) as info:
            getattr(cur, fetch)()
        assert str(info.value).startswith("Driver Error: "), fetch
    with pytest.raises(face.ProgrammingError):
        next(iter(cur))
    # A ferrodbc connection has no hook: its errors stay ferrodbc's.
    plain = ferrodbc.connect("Driver=SQLite3;Database=:memory:")
    c = plain.cursor()
    c.close()
    with pytest.raises(ferrodbc.ProgrammingError) as info:
        c.fetchone()
    assert not isinstance(info.value, exceptions.Exception)
    plain.close()


def test_exceptions_by_sqlstate_and_pickled():
    with pytest.raises(face.ProgrammingError) as info:
        exceptions.raise_exception("42S02", "Base table or view not found")
    assert str(info.value) == ("Driver Error: Base table or view not found; "
                               "DDBC Error: Base table or view not found")
    with pytest.raises(face.DatabaseError) as info:
        exceptions.raise_exception("99999", "")
    assert info.value.driver_error == "An error occurred with SQLSTATE code: 99999"
    e = face.DataError("driver msg", "[Microsoft][ODBC Driver 18 for SQL Server][SQL Server]x")
    assert e.ddbc_error == "[Microsoft][SQL Server]x"
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is face.DataError and str(back) == str(e) and back.ddbc_error == e.ddbc_error
    p = face.ConnectionStringParseError(["a", "b"])
    assert pickle.loads(pickle.dumps(p)).errors == ["a", "b"]


def test_connection_string_rules():
    parse = _ConnectionStringParser(validate_keywords=True)._parse
    assert parse("Server={a;b}};c};PWD=x") == {"server": "a;b};c", "pwd": "x"}
    with pytest.raises(face.ConnectionStringParseError) as info:
        parse("Server=a;server=b;Nope=1;APP=x;Database=;Broken;UID={open")
    errors = info.value.errors
    assert "Duplicate keyword 'server' found" in errors
    assert "Unknown keyword 'nope' is not recognized" in errors
    assert any(m.startswith("Reserved keyword 'app'") for m in errors)
    assert any(m.startswith("Empty value for keyword 'database'") for m in errors)
    assert any(m.startswith("Incomplete specification: keyword 'Broken'") for m in errors)
    assert any(m.startswith("Error parsing value for keyword 'uid'") for m in errors)
    assert _ConnectionStringBuilder({"Server": "a b", "Driver": "x}", "APP": "y"}).build() == (
        "Driver={x}}};APP=y;Server={a b}")
    assert sanitize_connection_string("Server=s;PWD={p;w}") == "PWD=***;Server=s"


def test_connect_refuses_what_mssql_python_refuses(sqlite):
    with pytest.raises(face.ConnectionStringParseError):
        face.connect(sqlite.connstr + ";Bogus=1")
    with pytest.raises(ValueError):
        face.connect(sqlite.connstr, APP="x")
    # Driver= is accepted (the face lets a program name its driver).
    face.connect(sqlite.connstr).close()


def test_settings_and_helpers():
    from ferrodbc.mssql_python.helpers import sanitize_user_input

    settings = face.get_settings()
    assert settings is face.get_settings() and settings.native_uuid is bool(ferrodbc.native_uuid)
    assert sanitize_user_input("utf-8; DROP") == "utf-8DROP"
    assert sanitize_user_input("a" * 60) == "a" * 50 + "..."
    assert sanitize_user_input(";;") == "<invalid>" and sanitize_user_input(3) == "<non-string>"
    # A PEP 249 type object equals its type codes (ferrodbc's), and is callable (mssql-python's).
    assert face.STRING == str  # noqa: E721
    assert face.STRING() == "" and face.NUMBER() == 0.0
