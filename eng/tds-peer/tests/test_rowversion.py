"""rowversion / timestamp columns: every row gets an 8-byte big-endian value from one
database-wide counter on INSERT and a new one on each UPDATE; @@DBTS is the last value used;
an explicit value is refused (273), an UPDATE assigning the column too (272, whether or not a
row matches); the catalog calls the column timestamp (type 189), binary(8) in size, NOT NULL,
and so do result sets: COLMETADATA sends UserType 80 (timestamp), not nullable, and
sp_describe_first_result_set says timestamp. The peer used to return NULL for these columns."""

import uuid

import pyodbc
import pytest
import rawtds


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
    assert d[1] is bytearray and d[3] == 8 and d[6] is False, d
    assert len(cur.fetchone()[0]) == 8


def test_update_of_the_column_is_refused(table):
    """272 when the statement compiles: no row needs to match, nothing changes, no value is
    taken from the counter."""
    cur, t = table
    cur.execute(f"INSERT INTO {t} (id, name) VALUES (1, N'a'), (2, N'b')")
    before, last = versions(cur, t), dbts(cur)
    for sql, params in ((f"UPDATE {t} SET rv = 0x01 WHERE 1 = 0", ()),
                        (f"UPDATE {t} SET name = N'z', rv = ? WHERE id = ?", (b"\0" * 8, 1)),
                        (f"UPDATE x SET x.name = N'z', x.rv = 0x01 FROM {t} AS x WHERE x.id = 2", ()),
                        # The target is the FROM clause's own t, not a subquery's.
                        (f"UPDATE {t} SET rv = 0x01 FROM {t} WHERE {t}.id IN (SELECT {t}.id FROM {t})",
                         ()),
                        # A left-out schema (`db..t`) is the default one.
                        (f"UPDATE master..{t} SET rv = 0x01", ())):
        with pytest.raises(pyodbc.Error) as ei:
            cur.execute(sql, *params)
        msg = ei.value.args[1]
        assert "(272)" in msg and "Cannot update a timestamp column." in msg, msg
    assert versions(cur, t) == before
    assert [r.name for r in cur.execute(f"SELECT name FROM {t} ORDER BY id")] == ["a", "b"]
    assert dbts(cur) == last
    # The batch stops there, as after any compile error.
    with pytest.raises(pyodbc.Error):
        cur.execute(f"UPDATE {t} SET rv = 0x01; UPDATE {t} SET name = N'y'")
    assert [r.name for r in cur.execute(f"SELECT name FROM {t} ORDER BY id")] == ["a", "b"]


def test_describe_first_result_set_says_timestamp(table):
    cur, t = table
    cur.execute("EXEC sp_describe_first_result_set @tsql = ?", f"SELECT id, rv FROM {t}")
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    got = [(r["name"], r["is_nullable"], r["system_type_id"], r["system_type_name"], r["max_length"],
            r["tds_type_id"], r["tds_length"]) for r in rows]
    assert got == [("id", False, 56, "int", 4, 56, 4), ("rv", False, 189, "timestamp", 8, 173, 8)]


def _colmetadata(port, sql):
    """[(UserType, flags, TDS type)] of the first result of `sql`, read off the wire."""
    with rawtds.connect(port, "test_rowversion") as s:
        s.sendall(rawtds.packet(0x01, rawtds.sql_batch(sql)))
        m = rawtds.message(s)
    assert m[0] == 0x81, m[:16]
    cols, i = [], 3
    for _ in range(int.from_bytes(m[1:3], "little")):
        user_type, flags, ty = int.from_bytes(m[i:i + 4], "little"), int.from_bytes(m[i + 4:i + 6], "little"), m[i + 6]
        i += 7
        i += {0x38: 0, 0x26: 1, 0xAD: 2, 0xA5: 2, 0xE7: 7}[ty]  # TYPE_INFO after the type byte
        i += 1 + 2 * m[i]  # column name (B_VARCHAR)
        cols.append((user_type, flags & 1, ty))
    return cols


def test_colmetadata_sends_usertype_80(peer, table):
    """SQL Server sends a timestamp column as BIGBINARY(8) with UserType 80, not nullable;
    Driver 18 names its type `timestamp` from it. A CAST of it is plain binary(8)."""
    cur, t = table
    cur.execute(f"INSERT INTO {t} (id) VALUES (1)")
    cols = _colmetadata(peer.port, f"SELECT id, rv, name, CAST(rv AS BINARY(8)) AS b FROM {t}")
    assert cols[:3] == [(0, 0, 0x38), (80, 0, 0xAD), (0, 1, 0xE7)]
    assert (cols[3][0], cols[3][2]) == (0, 0xAD)


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
