"""The mssql_python face (ferrodbc.install_as_mssql_python()) against the peer through both
drivers: connect without a driver as mssql-python users write it, pyformat parameters,
cursor.messages, getinfo, searchescape, description type codes and uniqueidentifier."""

from __future__ import annotations

import uuid

import pytest

import ferrodbc
from ferrodbc import mssql_python as face


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
def test_face_errors_rows_and_peer_forms(face_conn):
    """mssql-python's exception form and list-equal rows over a real driver; the peer cuts long
    PRINT and RAISERROR messages as SQL Server does and reads `alias = expr` in every UNION
    branch (mssql-python's suite relies on all three)."""
    cur = face_conn.cursor()
    with pytest.raises(face.ProgrammingError) as info:
        cur.execute("SELECT * FROM no_such_table")
    e = info.value
    assert e.driver_error == "Base table or view not found" and e.sqlstate == "42S02"
    assert "[SQL Server]Invalid object name" in e.ddbc_error and "ODBC Driver" not in e.ddbc_error
    assert str(e) == f"Driver Error: {e.driver_error}; DDBC Error: {e.ddbc_error}"
    rows = cur.execute("SELECT a = 1, b = 'x'\nUNION ALL\nSELECT a = 2, b = 'y'").fetchall()
    assert rows == [[1, "x"], [2, "y"]] and cur.rowcount == 2 and cur.rownumber == 1
    cur.execute("DECLARE @m VARCHAR(MAX) = REPLICATE(CAST('a' AS VARCHAR(MAX)), 80000); PRINT @m")
    assert cur.messages[0][1].endswith("]" + "a" * 8000)
    with pytest.raises(face.DatabaseError) as info:
        cur.execute("DECLARE @m NVARCHAR(MAX) = REPLICATE(N'a', 4000); RAISERROR(@m, 16, 1)")
    assert info.value.ddbc_error.endswith("a" * 2044 + "...")


def test_arrow_in_mssql_pythons_types(face_conn):
    pa = pytest.importorskip("pyarrow")
    cur = face_conn.cursor()
    sql = ("SELECT CAST('58185e0d-3a91-44d8-bc46-7107217e0a6d' AS uniqueidentifier) AS g, "
           "N'x' AS s, CAST(0x01 AS varbinary(3)) AS b UNION ALL SELECT NULL, N'y', NULL")
    t = cur.execute(sql).arrow(batch_size=1)
    assert [f.type for f in t.schema] == [pa.large_string(), pa.large_string(), pa.large_binary()]
    tt = cur.execute("SELECT CAST('12:00:05.1234567' AS time(7)) AS t").arrow()
    assert tt.schema.field("t").type == pa.time64("ns")
    assert t.column("g").to_pylist() == ["58185E0D-3A91-44D8-BC46-7107217E0A6D", None]
    assert [len(b) for b in t.to_batches()] == [1, 1]
    assert cur.execute(sql).arrow_batch(0).num_rows == 0
