"""Bulk load (SQL Server's TDS bulk protocol): what the drivers' bcp APIs ask first, then the
`INSERT BULK` statement and the BULK LOAD message (packet type 0x07) with the rows, driven through
Driver 18's bcp API (ctypes, `bcp_driver18.py`) on a ferrodbc connection, read back and compared.

Driver 18's `bcp_initW` sends `sp_describe_first_result_set @tsql = N'select * from t'` and
reads `is_updateable` (a column not updateable makes `bcp_sendrow` fail with "All bound columns
are read-only"), `is_computed_column`, and for text columns `tds_collation_id` /
`tds_collation_sort_id` (see eng/tds-peer/captures/bulk-load.md)."""

import datetime
import decimal
import uuid

import bcp_driver18 as b18
import pyodbc
import pytest

import tdspeer


def tname(prefix="tb"):
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize("driver", ["msodbcsql"], indirect=True)
def test_describe_first_result_set_as_bcp_init_reads_it(connect, driver):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT NOT NULL PRIMARY KEY, name NVARCHAR(50), code VARCHAR(10))")
    cur.execute("EXEC sp_describe_first_result_set @tsql = ?", f"select id, name, code, id + 1 AS nxt from {t}")
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    got = [(r["name"], r["is_updateable"], r["is_computed_column"], r["source_schema"], r["source_table"],
            r["source_column"], r["tds_collation_id"], r["tds_collation_sort_id"]) for r in rows]
    assert got == [
        ("id", True, False, "dbo", t, "id", None, None),
        ("name", True, False, "dbo", t, "name", 0x00D00409, 52),
        ("code", True, False, "dbo", t, "code", 0x00D00409, 52),
        # An expression: no source, not updateable (SQL Server answers so).
        ("nxt", False, False, None, None, None, None, None),
    ]
    cur.execute("SELECT DB_NAME()")
    db = cur.fetchone()[0]
    assert {r["source_database"] for r in rows[:3]} == {db}
    assert rows[3]["source_database"] is None


# ---- the bulk load itself, through Driver 18's bcp API on a ferrodbc connection -------------

@pytest.fixture
def bcp_conn(peer, msodbcsql):
    """A ferrodbc connection through Driver 18 with bcp enabled (SQL_COPT_SS_BCP before connect)."""
    if tdspeer.in_ci():
        import ferrodbc
    else:
        ferrodbc = pytest.importorskip("ferrodbc")
    opened = []

    def _connect(autocommit=True):
        cn = ferrodbc.connect(tdspeer.conn_str(peer, "msodbcsql"), attrs_before={b18.SQL_COPT_SS_BCP: 1},
                              autocommit=autocommit)
        opened.append(cn)
        return cn

    yield _connect
    for cn in opened:
        cn.close()


MIXED = "(id int NOT NULL PRIMARY KEY, name nvarchar(50) NULL, amt decimal(18,4) NULL, ts datetime2(7) NULL, b varbinary(max) NULL)"
MIXED_TYPES = [b18.SQLINT4, b18.SQLNCHAR, b18.SQLCHARACTER, b18.SQLCHARACTER, b18.SQLBIGVARBINARY]


def test_bcp_rows_arrive_exactly(bcp_conn):
    cn = bcp_conn()
    cur = cn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} {MIXED}")
    big = bytes(range(256)) * 40
    rows = [(1, "héllo 中😀", "12.3400", "2024-01-02 03:04:05.123456", b"\x01\x02\x03"),
            (2, None, None, None, None),
            (3, "", "-99999999999999.9999", "0001-01-01 00:00:00", big)]
    assert b18.load(cn, t, MIXED_TYPES, rows) == 3
    cur.execute(f"SELECT id, name, amt, ts, b FROM {t} ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == [
        (1, "héllo 中😀", decimal.Decimal("12.3400"), datetime.datetime(2024, 1, 2, 3, 4, 5, 123456), b"\x01\x02\x03"),
        (2, None, None, None, None),
        (3, "", decimal.Decimal("-99999999999999.9999"), datetime.datetime(1, 1, 1), big),
    ]


def test_bcp_duplicate_key_keeps_nothing_of_the_batch(bcp_conn):
    cn = bcp_conn()
    cur = cn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id int NOT NULL PRIMARY KEY, name nvarchar(10) NULL)")
    cur.execute(f"INSERT INTO {t} VALUES (5, N'before')")
    with pytest.raises(b18.BcpError, match="PRIMARY KEY"):
        b18.load(cn, t, [b18.SQLINT4, b18.SQLNCHAR], [(1, "a"), (2, "b"), (5, "dup")])
    cur.execute(f"SELECT id, name FROM {t} ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == [(5, "before")]
    # The session goes on: the next load works.
    assert b18.load(cn, t, [b18.SQLINT4, b18.SQLNCHAR], [(1, "a")]) == 1
    cur.execute(f"SELECT COUNT(*) FROM {t}")
    assert cur.fetchone()[0] == 2


def test_bcp_not_null_violated(bcp_conn):
    cn = bcp_conn()
    cur = cn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id int NOT NULL, name nvarchar(10) NOT NULL)")
    with pytest.raises(b18.BcpError, match="Cannot insert the value NULL"):
        b18.load(cn, t, [b18.SQLINT4, b18.SQLNCHAR], [(1, "a"), (2, None)])
    cur.execute(f"SELECT COUNT(*) FROM {t}")
    assert cur.fetchone()[0] == 0


def test_bcp_load_rolls_back_with_the_transaction(bcp_conn):
    cn = bcp_conn(autocommit=False)
    cur = cn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id int NOT NULL, name nvarchar(10) NULL)")
    cn.commit()
    cur.execute(f"INSERT INTO {t} VALUES (0, N'zero')")
    assert b18.load(cn, t, [b18.SQLINT4, b18.SQLNCHAR], [(1, "a"), (2, "b")]) == 2
    cur.execute(f"SELECT COUNT(*) FROM {t}")
    assert cur.fetchone()[0] == 3  # seen inside the transaction
    cn.rollback()
    cur.execute(f"SELECT COUNT(*) FROM {t}")
    assert cur.fetchone()[0] == 0


def test_bcp_into_a_temp_table(bcp_conn):
    cn = bcp_conn()
    cur = cn.cursor()
    cur.execute("CREATE TABLE #bulk_target (id int NOT NULL, name nvarchar(10) NULL)")
    assert b18.load(cn, "#bulk_target", [b18.SQLINT4, b18.SQLNCHAR], [(1, "a"), (2, None)]) == 2
    cur.execute("SELECT id, name FROM #bulk_target ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == [(1, "a"), (2, None)]


def test_insert_bulk_checks_its_target(connect, driver):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id int NOT NULL)")
    with pytest.raises(pyodbc.ProgrammingError, match="Invalid object name"):
        cur.execute("insert bulk no_such_table_xyz ([id] int)")
    with pytest.raises(pyodbc.ProgrammingError, match="Invalid column name 'nope'"):
        cur.execute(f"insert bulk {t} ([nope] int)")
    with pytest.raises(pyodbc.ProgrammingError, match="102|syntax"):
        cur.execute(f"insert bulk {t} [id] int")
    cur.execute(f"insert bulk {t} ([id] int)")  # accepted: answered with DONE
