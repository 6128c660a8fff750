"""rowversion / timestamp columns: every row gets an 8-byte big-endian value from one
database-wide counter on INSERT and a new one on each UPDATE; @@DBTS is the last value used;
an explicit value is refused (273); the catalog calls the column timestamp (type 189), binary(8)
in size, NOT NULL. The peer used to return NULL for these columns."""

import uuid

import pyodbc
import pytest


def rv_int(b):
    assert isinstance(b, bytes) and len(b) == 8, b
    return int.from_bytes(b, "big")


def dbts(cur):
    return rv_int(cur.execute("SELECT @@DBTS").fetchone()[0])


@pytest.fixture
def table(connect):
    cur = connect().cursor()
    t = f"rv_{uuid.uuid4().hex[:10]}"
    cur.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY, name NVARCHAR(10), rv ROWVERSION)")
    return cur, t


def versions(cur, t):
    return {r.id: rv_int(r.rv) for r in cur.execute(f"SELECT id, rv FROM {t}").fetchall()}


def test_insert_stamps_increasing_values(table):
    cur, t = table
    before = dbts(cur)
    cur.execute(f"INSERT INTO {t} (id, name) VALUES (1, N'a')")
    cur.execute(f"INSERT INTO {t} (id, name) VALUES (2, N'b'), (3, N'c')")
    cur.execute(f"INSERT INTO {t} (id, name) VALUES (?, ?)", 4, "d")
    v = versions(cur, t)
    order = [v[i] for i in (1, 2, 3, 4)]
    assert order == sorted(set(order)), v  # distinct and in insert order
    assert order[0] > before
    assert dbts(cur) == order[-1]


def test_update_takes_a_new_value(table):
    cur, t = table
    cur.execute(f"INSERT INTO {t} (id, name) VALUES (1, N'a'), (2, N'b')")
    v1 = versions(cur, t)
    cur.execute(f"UPDATE {t} SET name = N'z' WHERE id = 1")
    assert cur.rowcount == 1
    v2 = versions(cur, t)
    assert v2[1] > max(v1.values()) and v2[2] == v1[2], (v1, v2)
    assert dbts(cur) == v2[1]
    # An UPDATE that changes nothing visible still versions the row, as in SQL Server.
    cur.execute(f"UPDATE {t} SET name = name")
    v3 = versions(cur, t)
    assert min(v3.values()) > v2[1], (v2, v3)


def test_counter_is_database_wide(connect, table):
    cur, t = table
    other = connect().cursor()
    t2 = f"rv_{uuid.uuid4().hex[:10]}"
    other.execute(f"CREATE TABLE {t2} (id INT, ts TIMESTAMP)")
    cur.execute(f"INSERT INTO {t} (id) VALUES (1)")
    other.execute(f"INSERT INTO {t2} (id) VALUES (1)")
    cur.execute(f"INSERT INTO {t} (id) VALUES (2)")
    a = versions(cur, t)
    b = rv_int(other.execute(f"SELECT ts FROM {t2}").fetchone()[0])
    assert a[1] < b < a[2]
    assert dbts(other) == a[2]


def test_explicit_value_is_refused(table):
    cur, t = table
    for sql, params in ((f"INSERT INTO {t} (id, rv) VALUES (1, 0x0000000000000001)", ()),
                        (f"INSERT INTO {t} (id, name, rv) VALUES (?, ?, ?)", (1, "a", b"\0" * 7 + b"\1"))):
        with pytest.raises(pyodbc.Error) as ei:
            cur.execute(sql, *params)
        msg = ei.value.args[1]
        assert "(273)" in msg and "Cannot insert an explicit value into a timestamp column." in msg, msg
    assert cur.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == 0


def test_result_column_is_binary8(table):
    cur, t = table
    cur.execute(f"INSERT INTO {t} (id) VALUES (1)")
    cur.execute(f"SELECT rv FROM {t}")
    d = cur.description[0]
    assert d[1] is bytearray and d[3] == 8, d
    assert len(cur.fetchone()[0]) == 8


def test_catalog_describes_timestamp(table):
    cur, t = table
    rows = cur.execute("SELECT name, system_type_id, user_type_id, max_length, is_nullable FROM sys.columns "
                       f"WHERE object_id = OBJECT_ID('{t}') AND name = 'rv'").fetchall()
    assert [tuple(r) for r in rows] == [("rv", 189, 189, 8, False)]
    rows = cur.execute("SELECT DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, IS_NULLABLE, COLUMN_DEFAULT "
                       f"FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = '{t}' AND COLUMN_NAME = 'rv'").fetchall()
    assert [tuple(r) for r in rows] == [("timestamp", None, "NO", None)]
    col = cur.columns(table=t, column="rv").fetchone()
    assert (col.type_name, col.data_type, col.column_size, col.buffer_length, col.nullable, col.column_def) == \
        ("timestamp", pyodbc.SQL_BINARY, 8, 8, 0, None)
    rv = cur.rowVerColumns(t).fetchall()
    assert [(r.column_name, r.type_name, r.data_type, r.column_size) for r in rv] == \
        [("rv", "timestamp", pyodbc.SQL_BINARY, 8)]
