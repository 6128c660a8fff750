"""The PEP 249 module interface: globals, exceptions, type objects, constructors, connect()."""

from __future__ import annotations

import datetime
import decimal
import time
import uuid

import pytest

import ferrodbc

EXCEPTION_PARENTS = {
    "Warning": Exception,
    "Error": Exception,
    "InterfaceError": ferrodbc.Error,
    "DatabaseError": ferrodbc.Error,
    "DataError": ferrodbc.DatabaseError,
    "OperationalError": ferrodbc.DatabaseError,
    "IntegrityError": ferrodbc.DatabaseError,
    "InternalError": ferrodbc.DatabaseError,
    "ProgrammingError": ferrodbc.DatabaseError,
    "NotSupportedError": ferrodbc.DatabaseError,
}


def test_module_globals_declare_dbapi_2_qmark_and_module_level_thread_safety():
    """Generic DB-API code reads these three globals to decide how to talk to the driver."""
    assert ferrodbc.apilevel == "2.0"
    assert ferrodbc.threadsafety == 1
    assert ferrodbc.paramstyle == "qmark"
    assert isinstance(ferrodbc.__version__, str) and ferrodbc.__version__


@pytest.mark.parametrize("name,parent", sorted(EXCEPTION_PARENTS.items()))
def test_every_exception_class_has_its_pep249_parent(name, parent):
    """`except ferrodbc.DatabaseError` must catch every database-side error, and so on."""
    cls = getattr(ferrodbc, name)
    assert issubclass(cls, parent)
    assert cls.__bases__ == (parent,), f"{name} should derive directly from {parent.__name__}"
    # The exceptions are also reachable as connection-independent module attributes.
    assert name in ferrodbc.__all__


def test_warning_is_not_an_error():
    """PEP 249: Warning is a sibling of Error, so `except Error` does not swallow warnings."""
    assert not issubclass(ferrodbc.Warning, ferrodbc.Error)
    assert not issubclass(ferrodbc.Error, ferrodbc.Warning)


def test_database_errors_carry_sqlstate_native_error_and_diagnostics(conn):
    """Callers branch on SQLSTATE and log every driver record, not just the message text."""
    cur = conn.cursor()
    with pytest.raises(ferrodbc.DatabaseError) as info:
        cur.execute("SELECT * FROM no_such_table_here")
    err = info.value
    assert isinstance(err.sqlstate, str) and len(err.sqlstate) == 5
    assert isinstance(err.native_error, int)
    assert isinstance(err.diagnostics, list) and err.diagnostics
    state, native, message = err.diagnostics[0]
    assert state == err.sqlstate
    assert native == err.native_error
    assert "no_such_table_here" in message
    assert "no_such_table_here" in str(err)


def test_interface_errors_raised_by_the_driver_layer_also_carry_the_attributes():
    """Even errors found before the database is reached expose the same attributes."""
    with pytest.raises(ferrodbc.InterfaceError) as info:
        ferrodbc.connect("DSN=ferrodbc_no_such_dsn")
    assert info.value.sqlstate == "IM002"
    assert isinstance(info.value.diagnostics, list)


def test_errors_raised_without_the_driver_still_have_every_attribute(conn):
    """An error ferrodbc raises itself (no driver record) or user code raises reads the class
    defaults: `except ferrodbc.Error as e: log(e.sqlstate)` never fails with AttributeError."""
    cur = conn.cursor()
    with pytest.raises(ferrodbc.ProgrammingError) as info:
        cur.fetchone()  # no statement executed
    for err in (info.value, ferrodbc.DataError("raised by user code")):
        assert err.sqlstate is None
        assert err.native_error is None
        assert err.diagnostics == ()
        assert err.partial_rows is None
    # The defaults are the class's: an instance's own values never leak into them.
    with pytest.raises(ferrodbc.DatabaseError):
        cur.execute("SELECT * FROM no_such_table_here")
    assert ferrodbc.Error.sqlstate is None and ferrodbc.Error.diagnostics == ()


@pytest.mark.parametrize(
    "type_object,codes",
    [
        (ferrodbc.STRING, [str]),
        (ferrodbc.BINARY, [bytes, bytearray]),
        (ferrodbc.NUMBER, [int, float, decimal.Decimal, bool]),
        (ferrodbc.DATETIME, [datetime.date, datetime.time, datetime.datetime]),
        (ferrodbc.ROWID, [int, uuid.UUID]),
    ],
    ids=lambda v: getattr(v, "name", None) or "codes",
)
def test_type_objects_compare_equal_to_their_type_codes_only(type_object, codes):
    """`description[i][1] == ferrodbc.NUMBER` is how generic code classifies columns."""
    everything = {str, bytes, bytearray, int, float, decimal.Decimal, bool, datetime.date,
                  datetime.time, datetime.datetime, uuid.UUID}
    for code in codes:
        assert code == type_object
        assert type_object == code
        assert not (type_object != code)
    for other in everything - set(codes):
        assert type_object != other, f"{type_object} must not match {other}"
    assert hash(type_object) == hash(type_object)


def test_constructors_build_the_python_values_the_driver_accepts():
    """Date/Time/Timestamp/Binary and the *FromTicks variants return standard Python objects."""
    assert ferrodbc.Date(2024, 2, 29) == datetime.date(2024, 2, 29)
    assert ferrodbc.Time(23, 59, 58) == datetime.time(23, 59, 58)
    assert ferrodbc.Timestamp(2024, 2, 29, 1, 2, 3, 4) == datetime.datetime(2024, 2, 29, 1, 2, 3, 4)
    assert ferrodbc.Binary(b"\x00\x01") == b"\x00\x01"
    ticks = time.mktime((2021, 7, 4, 12, 30, 45, 0, 0, -1))
    assert ferrodbc.DateFromTicks(ticks) == datetime.date(2021, 7, 4)
    assert ferrodbc.TimeFromTicks(ticks) == datetime.time(12, 30, 45)
    assert ferrodbc.TimestampFromTicks(ticks) == datetime.datetime(2021, 7, 4, 12, 30, 45)


def test_sql_type_codes_are_exported_like_pyodbc():
    """Output converters are keyed by ODBC SQL type codes, exported under pyodbc's names."""
    assert ferrodbc.SQL_WVARCHAR == -9
    assert ferrodbc.SQL_INTEGER == 4
    assert ferrodbc.SQL_WLONGVARCHAR == -10
    assert ferrodbc.SQL_FLOAT == 6


def test_connect_appends_keyword_arguments_to_the_connection_string(peer):
    """`connect(base, key=value)` is the same as writing `key=value` in the string (pyodbc)."""
    driver, _, rest = peer.connstr.partition(";")
    attrs = dict(part.split("=", 1) for part in rest.split(";") if part)
    conn = ferrodbc.connect(driver, **attrs)
    try:
        assert conn.cursor().execute("SELECT 42").fetchval() == 42
        assert conn.autocommit is False
    finally:
        conn.close()


def test_connect_keyword_values_with_separators_are_brace_quoted(pg):
    """A password containing ';' or '}' must reach the driver intact, not split the string."""
    with pytest.raises(ferrodbc.Error) as info:
        ferrodbc.connect(pg.variant(Pwd=None, PASSWORD=None), Pwd="p;w}x")
    # The quoted value reached the server as a (wrong) password: an authentication failure, not a
    # parse error of the connection string.
    assert "password" in str(info.value).lower()


def test_connect_autocommit_and_timeout_arguments(peer):
    """`autocommit=True` opens the connection in autocommit mode; `timeout` is accepted."""
    conn = ferrodbc.connect(peer.connstr, autocommit=True, timeout=5)
    try:
        assert conn.autocommit is True
        conn.autocommit = False
        assert conn.autocommit is False
    finally:
        conn.close()
    assert conn.closed


def test_connect_rejects_a_non_string_connection_string():
    with pytest.raises(ferrodbc.InterfaceError):
        ferrodbc.connect(b"Driver={SQLite3}")  # type: ignore[arg-type]


def test_type_objects_compare_unequal_to_anything_else_without_raising():
    """Comparing a type object with arbitrary values (even unhashable ones) is just False."""
    for other in ([], {}, set(), "str", None, 0, object()):
        assert (ferrodbc.STRING == other) is False
        assert (ferrodbc.STRING != other) is True
    assert ferrodbc.STRING == ferrodbc.STRING
    assert ferrodbc.STRING != ferrodbc.NUMBER
    assert str in [ferrodbc.STRING] and ferrodbc.NUMBER in (int,)


def test_brace_quoted_connection_string_values_are_unwrapped(pg):
    """`Key={value}` is ODBC's quoting: the braces are not part of the value."""
    import re

    match = re.search(r"(?i)(?:^|;)\s*(?:pwd|password)=([^;{][^;]*)", pg.connstr)
    if match is None:
        pytest.skip("the PostgreSQL connection string has no plain Pwd=... to re-quote")
    password = match.group(1)
    conn = ferrodbc.connect(pg.variant(Pwd="{" + password.replace("}", "}}") + "}", PASSWORD=None))
    try:
        assert conn.cursor().execute("SELECT 1").fetchval() == 1
    finally:
        conn.close()


def test_connection_and_cursor_can_be_subclassed(peer):
    """Frameworks wrap the DB-API classes: subclasses keep working and execute returns self."""

    class MyConnection(ferrodbc.Connection):
        def ping(self) -> int:
            return self.cursor().execute("SELECT 1").fetchval()

    class MyCursor(ferrodbc.Cursor):
        def value(self, sql):
            return self.execute(sql).fetchval()

    conn = MyConnection(peer.connstr)
    try:
        assert conn.ping() == 1
        cur = MyCursor(conn)
        assert cur.value("SELECT 5") == 5
        assert type(cur.execute("SELECT 1")) is MyCursor
        assert isinstance(conn, ferrodbc.Connection) and isinstance(cur, ferrodbc.Cursor)
    finally:
        conn.close()
