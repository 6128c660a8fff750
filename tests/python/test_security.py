"""Security defaults that need no SQL Server (issue 15, point 7): the connection-string quoting
and redaction ferrodbc applies (src/connstr.rs), secrets kept out of reprs and DEBUG logs on
SQLite and PostgreSQL, callproc names refused before anything is sent, and hostile parameter
values kept as data. tests/sqlserver/test_sqlserver_security.py has the driver-level half."""

from __future__ import annotations

import logging
import uuid

import pytest

import ferrodbc
from ferrodbc import _native


@pytest.mark.parametrize(
    "value, quoted",
    [
        ("plain", "plain"),
        ("a=b", "a=b"),  # '=' needs no braces: both SQL Server drivers read it exactly
        ("x}y", "x}y"),
        ("a{b", "a{b"),
        (" lead", " lead"),
        ("p;w}d", "{p;w}}d}"),  # ';' would end the value: braces, '}' doubled
        ("{start", "{{start}"),  # a leading '{' would open braces
        ("  {x", "{  {x}"),
        ("", ""),
    ],
)
def test_quoting_braces_only_where_the_grammar_needs_them(value, quoted):
    assert _native._quote_connection_value(value) == quoted
    # And the quoted form reads back as the value (redaction parses it).
    assert _native._redact_connection_string(f"UID={quoted};X=1") == f"UID={_native._quote_connection_value(value)};X=1"


def test_redaction_replaces_every_secret_and_hides_malformed_strings():
    cs = "Driver={X};UID=sa;PWD={s3;cr}}et};Password=two;AccessToken=tok3n;ClientSecret=cs1;Server=h"
    shown = _native._redact_connection_string(cs)
    assert shown == "Driver=X;UID=sa;PWD=***;Password=***;AccessToken=***;ClientSecret=***;Server=h"
    for secret in ("s3", "cr}", "two", "tok3n", "cs1"):
        assert secret not in shown
    # A string whose braces do not close cannot be split reliably: nothing of it is shown.
    assert "hunter2" not in _native._redact_connection_string("UID=sa;PWD={hunter2")


def test_repr_and_debug_log_never_show_the_password(sqlite, caplog):
    """A connection string with a password (SQLite3 ODBC ignores it): repr(connection) and every
    DEBUG record show PWD=*** instead, for a connect and for a failed connect, whose error text
    does not hold it either."""
    secret = f"S3cret{uuid.uuid4().hex}"
    cs = f"{sqlite.connstr};PWD={secret}"
    with caplog.at_level(logging.DEBUG):
        cn = ferrodbc.connect(cs, PWD=secret + "kw")
        shown = repr(cn)
        cn.close()
        with pytest.raises(ferrodbc.Error) as ei:
            ferrodbc.connect("Driver={No Such Driver};PWD=" + secret)
    assert "PWD=***" in shown and secret not in shown and shown.endswith(" open>")
    assert secret not in repr(cn) and repr(cn).endswith(" closed>")
    assert any(r.name == "ferrodbc" and "PWD=***" in r.getMessage() for r in caplog.records), caplog.text
    assert any(r.name == "ferrodbc" and "connect failed" in r.getMessage() for r in caplog.records)
    assert secret not in caplog.text
    assert secret not in str(ei.value) and secret not in repr(ei.value.args)


@pytest.mark.parametrize(
    "name",
    ["p; DROP TABLE t", "p--", "p(1)", "[x}; DROP TABLE t; --]", '"x}"', "[it's]", "p\n", ""],
)
def test_callproc_refuses_hostile_names(conn, name):
    with pytest.raises(ferrodbc.ProgrammingError):
        conn.cursor().callproc(name, [1])


def test_hostile_parameter_values_are_data(conn, table):
    """The classic injection string, bound, is stored and read back as itself; the table it
    names survives."""
    t = table
    hostile = f"'; DROP TABLE {t}; --"
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {t} (s VARCHAR(100))")
    cur.execute(f"INSERT INTO {t} (s) VALUES (?)", hostile)
    cur.executemany(f"INSERT INTO {t} (s) VALUES (?)", [(hostile + "1",), (hostile + "2",)])
    assert sorted(r[0] for r in cur.execute(f"SELECT s FROM {t}").fetchall()) == [hostile, hostile + "1", hostile + "2"]
    assert cur.execute("SELECT ?", hostile).fetchval() == hostile
