"""The mssql_python face (ferrodbc.install_as_mssql_python()) against the peer through both
drivers: connect without a driver as mssql-python users write it, pyformat parameters,
cursor.messages, getinfo, searchescape, description type codes and uniqueidentifier."""

from __future__ import annotations

import uuid

import pytest

import ferrodbc
from ferrodbc import driver_pick
from ferrodbc import mssql_python as face

from sqlserver_support import require_driver


@pytest.fixture
def face_conn(peer, driver, monkeypatch):
    require_driver(driver)
    if driver == "freetds":
        # Only FreeTDS to be found: the driverless string goes to FreeTDS.
        monkeypatch.setattr(ferrodbc, "drivers", lambda: ["FreeTDS"])
        monkeypatch.setattr(driver_pick, "_wheel_library", lambda: (None, "(hidden by the test)"))
    cn = face.connect(f"Server=127.0.0.1,{peer.port};UID=sa;PWD=x;Encrypt=no;TrustServerCertificate=yes",
                      autocommit=True, timeout=10)
    yield cn
    cn.close()


def test_driverless_connect_and_pyformat(face_conn, driver):
    want = "msodbcsql" if driver == "msodbcsql" else "tdsodbc"
    assert want in face_conn.driver_name.lower()
    cur = face_conn.cursor()
    row = cur.execute("SELECT %(a)s + 1 AS n, %(s)s AS s, %(a)s AS again", {"a": 41, "s": "é"}).fetchone()
    assert tuple(row) == (42, "é", 41)
    assert [d[1] for d in cur.description] == [int, str, int]


def test_messages_getinfo_and_searchescape(face_conn):
    cur = face_conn.cursor()
    cur.execute("PRINT 'hello from the peer'")
    assert any("hello from the peer" in m[1] for m in cur.messages)
    cur.execute("SELECT 1")
    assert cur.messages == []
    assert face_conn.getinfo(face.GetInfoConstants.SQL_DRIVER_NAME.value) == face_conn.driver_name
    assert face_conn.searchescape == "\\"


def test_native_uuid_switch(face_conn):
    u = uuid.uuid4()
    cur = face_conn.cursor()
    assert cur.execute("SELECT CAST(%(u)s AS uniqueidentifier)", {"u": str(u)}).fetchval() == u
    face_conn.native_uuid = False
    assert cur.execute("SELECT CAST(? AS uniqueidentifier)", str(u)).fetchval() == str(u).upper()


def test_bulkcopy_empty_table_name_is_mssql_pythons_value_error(face_conn):
    """mssql-python raises ValueError for an empty table name; ferrodbc's own cursor raises
    ProgrammingError (a PEP 249 class), tests/sqlserver/test_sqlserver_bulkcopy.py."""
    with pytest.raises(ValueError, match="non-empty") as e:
        face_conn.cursor().bulkcopy("", [(1,)])
    assert not isinstance(e.value, ferrodbc.Error)
