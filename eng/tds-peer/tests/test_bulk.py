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
import rawtds

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


# ---- SQL Server's bulk-load semantics ---------------------------------------------------------

def test_bcp_null_takes_the_default_unless_keep_nulls(bcp_conn):
    cn = bcp_conn()
    cur = cn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id int NOT NULL, name nvarchar(10) NULL DEFAULT N'dflt', n int NULL DEFAULT 7)")
    types = [b18.SQLINT4, b18.SQLNCHAR, b18.SQLINT4]
    assert b18.load(cn, t, types, [(1, None, None), (2, "x", None), (3, None, 5)]) == 3
    assert b18.load(cn, t, types, [(4, None, None)], keep_nulls=True) == 1
    cur.execute(f"SELECT id, name, n FROM {t} ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == [(1, "dflt", 7), (2, "x", 7), (3, "dflt", 5), (4, None, None)]


def test_bcp_checks_check_constraints_only_when_asked(bcp_conn):
    cn = bcp_conn()
    cur = cn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id int NOT NULL, v int NULL CHECK (v > 0))")
    assert b18.load(cn, t, [b18.SQLINT4, b18.SQLINT4], [(1, -1)]) == 1
    with pytest.raises(b18.BcpError, match="CHECK constraint"):
        b18.load(cn, t, [b18.SQLINT4, b18.SQLINT4], [(2, 5), (3, -3)], hints="CHECK_CONSTRAINTS")
    cur.execute(f"SELECT id, v FROM {t} ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == [(1, -1)]
    # An ordinary INSERT is checked again after a load.
    with pytest.raises(Exception, match="CHECK constraint"):
        cur.execute(f"INSERT INTO {t} VALUES (4, -4)")


def test_bcp_identity_takes_the_servers_values(bcp_conn):
    cn = bcp_conn()
    cur = cn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id int IDENTITY(1,1) NOT NULL, name nvarchar(10) NULL)")
    assert b18.load(cn, t, [b18.SQLINT4, b18.SQLNCHAR], [(100, "a"), (200, "b")]) == 2
    cur.execute(f"SELECT id, name FROM {t} ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == [(1, "a"), (2, "b")]
    # Driver 18 sends the same INSERT BULK and rows with bcp_control(BCPKEEPIDENTITY) as
    # without it (captured); `SET IDENTITY_INSERT t ON` in the session keeps the values sent.
    cur.execute(f"SET IDENTITY_INSERT {t} ON")
    assert b18.load(cn, t, [b18.SQLINT4, b18.SQLNCHAR], [(100, "c")]) == 1
    cur.execute(f"SET IDENTITY_INSERT {t} OFF")
    assert b18.load(cn, t, [b18.SQLINT4, b18.SQLNCHAR], [(300, "d")]) == 1
    cur.execute(f"SELECT id, name FROM {t} ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == [(1, "a"), (2, "b"), (100, "c"), (101, "d")]


def _bulk_message(columns, rows) -> bytes:
    """COLMETADATA, one ROW per row, DONE: `columns` as (name, TYPE_INFO), values encoded."""
    m = bytes([0x81]) + len(columns).to_bytes(2, "little")
    for name, ti in columns:
        m += bytes(4) + (9).to_bytes(2, "little") + ti + bytes([len(name)]) + name.encode("utf-16-le")
    for row in rows:
        m += bytes([0xD1]) + b"".join(row)
    return m + bytes([0xFD]) + bytes(12)


INTN = bytes([0x26, 4])
NVARCHAR_100 = bytes([0xE7, 200, 0, 0x09, 0x04, 0xD0, 0x00, 0x34])


def _int(v):
    return bytes([4]) + v.to_bytes(4, "little", signed=True)


def _nvarchar(s):
    b = s.encode("utf-16-le")
    return len(b).to_bytes(2, "little") + b


def _raw_load(port, statement, message, packet_size=None):
    """INSERT BULK as a SQL batch, then the BULK LOAD message (split into packets of
    `packet_size` payload bytes): the two replies."""
    with rawtds.connect(port, "test_bulk") as s:
        s.sendall(rawtds.packet(0x01, rawtds.sql_batch(statement)))
        first = rawtds.message(s)
        step = packet_size or len(message)
        parts = [message[i:i + step] for i in range(0, len(message), step)]
        for k, part in enumerate(parts):
            s.sendall(rawtds.packet(0x07, part, last=k == len(parts) - 1))
        return first, rawtds.message(s)


def _errors(reply):
    """(number, class) of each ERROR token (0xAA) of a reply made of messages and DONEs."""
    out, i = [], 0
    while i < len(reply):
        tok = reply[i]
        if tok in (0xAA, 0xAB, 0xE3):
            n = int.from_bytes(reply[i + 1:i + 3], "little")
            if tok == 0xAA:
                out.append((int.from_bytes(reply[i + 3:i + 7], "little"), reply[i + 8]))
            i += 3 + n
        elif tok in (0xFD, 0xFE, 0xFF):
            i += 13
        else:
            raise AssertionError(f"unexpected token {tok:#x} in {reply!r}")
    return out


def _done(reply):
    """(status, curcmd, count) of the reply's last DONE."""
    d = reply[-12:]
    return int.from_bytes(d[0:2], "little"), int.from_bytes(d[2:4], "little"), int.from_bytes(d[4:12], "little")


@pytest.mark.parametrize("packet_size", [None, 7, 8])
def test_raw_bulk_load_over_any_packets(peer, connect, packet_size):
    """The BULK LOAD message (72 bytes) in one packet, or split over packets of 7 bytes
    (boundaries inside values and tokens) or 8 (the last packet full to its end), is read
    whole; DONE says INSERT (0xC3) with the count."""
    t = tname()
    connect().cursor().execute(f"CREATE TABLE {t} (id int NOT NULL, name nvarchar(50) NULL)")
    msg = _bulk_message([("id", INTN), ("name", NVARCHAR_100)], [[_int(1), _nvarchar("ab")], [_int(2), _nvarchar("")]])
    assert len(msg) == 72
    first, reply = _raw_load(peer.port, f"insert bulk {t}([id] int,[name] nvarchar(50))", msg, packet_size)
    assert _errors(first) == [] and _errors(reply) == []
    assert _done(reply) == (0x10, 0xC3, 2)
    cur = connect().cursor()
    cur.execute(f"SELECT id, name FROM {t} ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == [(1, "ab"), (2, "")]


def test_raw_bulk_load_value_too_long_is_4815(peer, connect):
    t = tname()
    connect().cursor().execute(f"CREATE TABLE {t} (id int NOT NULL, name nvarchar(3) NULL)")
    msg = _bulk_message([("id", INTN), ("name", NVARCHAR_100)], [[_int(1), _nvarchar("abc")], [_int(2), _nvarchar("abcd")]])
    _, reply = _raw_load(peer.port, f"insert bulk {t}([id] int,[name] nvarchar(3))", msg)
    assert _errors(reply) == [(4815, 17)]
    assert "for colid 2.".encode("utf-16-le") in reply
    assert _done(reply)[0] & 0x02  # DONE_ERROR
    cur = connect().cursor()
    cur.execute(f"SELECT COUNT(*) FROM {t}")
    assert cur.fetchone()[0] == 0


def test_raw_bulk_load_wrong_type_is_4816(peer, connect):
    t = tname()
    connect().cursor().execute(f"CREATE TABLE {t} (id int NOT NULL, n int NULL)")
    varbinary = bytes([0xA5, 10, 0])
    msg = _bulk_message([("id", INTN), ("n", varbinary)], [[_int(1), (2).to_bytes(2, "little") + b"\1\2"]])
    _, reply = _raw_load(peer.port, f"insert bulk {t}([id] int,[n] int)", msg)
    assert _errors(reply) == [(4816, 16)]
    assert "Invalid column type from bcp client for colid 2.".encode("utf-16-le") in reply


def test_raw_bulk_message_without_insert_bulk_is_a_protocol_error(peer):
    with rawtds.connect(peer.port, "test_bulk") as s:
        s.sendall(rawtds.packet(0x07, _bulk_message([("id", INTN)], [[_int(1)]])))
        assert s.recv(1) == b""  # the peer ends the session


# ---- ATTENTION --------------------------------------------------------------------------------

ATTENTION = rawtds.packet(0x06, b"")


def _count(connect, t):
    cur = connect().cursor()
    cur.execute(f"SELECT COUNT(*) FROM {t}")
    return cur.fetchone()[0]


def _two_rows(connect):
    t = tname()
    connect().cursor().execute(f"CREATE TABLE {t} (id int NOT NULL, name nvarchar(50) NULL)")
    msg = _bulk_message([("id", INTN), ("name", NVARCHAR_100)], [[_int(1), _nvarchar("ab")], [_int(2), _nvarchar("cd")]])
    return t, f"insert bulk {t}([id] int,[name] nvarchar(50))", msg


def test_attention_right_after_the_rows_rolls_the_load_back(peer, connect):
    t, statement, msg = _two_rows(connect)
    with rawtds.connect(peer.port, "test_bulk") as s:
        s.sendall(rawtds.packet(0x01, rawtds.sql_batch(statement)))
        rawtds.message(s)
        s.sendall(rawtds.packet(0x07, msg) + ATTENTION)
        reply = rawtds.message(s)
        assert _done(reply)[0] & 0x20  # DONE_ATTN
        assert _errors(reply) == []
        # The session goes on.
        s.sendall(rawtds.packet(0x01, rawtds.sql_batch("SELECT 1")))
        assert _done(rawtds.message(s))[0] & 0x20 == 0
    assert _count(connect, t) == 0


@pytest.mark.parametrize("midway", [True, False], ids=["mid-message", "before-the-rows"])
def test_attention_before_the_rows_are_whole(peer, connect, midway):
    """ATTENTION after part of the BULK LOAD message, or right after INSERT BULK: answered
    DONE_ATTN, and nothing is pending any more (a BULK LOAD message then is a protocol error)."""
    t, statement, msg = _two_rows(connect)
    with rawtds.connect(peer.port, "test_bulk") as s:
        s.sendall(rawtds.packet(0x01, rawtds.sql_batch(statement)))
        rawtds.message(s)
        s.sendall((rawtds.packet(0x07, msg[:20], last=False) if midway else b"") + ATTENTION)
        assert _done(rawtds.message(s))[0] & 0x20
        s.sendall(rawtds.packet(0x07, msg))
        assert s.recv(1) == b""
    assert _count(connect, t) == 0


# ---- --bulk-discard: the speed-only mode for benchmarks ---------------------------------------

def test_bulk_discard_counts_and_checks_but_stores_nothing(msodbcsql):
    ferrodbc = pytest.importorskip("ferrodbc") if not tdspeer.in_ci() else __import__("ferrodbc")
    with tdspeer.start_peer(extra_args=["--bulk-discard"]) as p:
        cn = ferrodbc.connect(tdspeer.conn_str(p, "msodbcsql"), attrs_before={b18.SQL_COPT_SS_BCP: 1}, autocommit=True)
        try:
            cur = cn.cursor()
            t = tname()
            cur.execute(f"CREATE TABLE {t} (id int NOT NULL PRIMARY KEY, name nvarchar(3) NULL)")
            rows = [(i, "abc") for i in range(1000)] + [(1, "dup")]  # a duplicate key is not looked for
            assert b18.load(cn, t, [b18.SQLINT4, b18.SQLNCHAR], rows) == 1001
            cur.execute(f"SELECT COUNT(*) FROM {t}")
            assert cur.fetchone()[0] == 0
            # Still checked: a value longer than its column.
            msg = _bulk_message([("id", INTN), ("name", NVARCHAR_100)], [[_int(1), _nvarchar("abcd")]])
            _, reply = _raw_load(p.port, f"insert bulk {t}([id] int,[name] nvarchar(3))", msg)
            assert _errors(reply) == [(4815, 17)]
            # A wrong announced type is 4816, and wins over a row's error, as when storing.
            msg = _bulk_message([("id", INTN), ("name", bytes([0xA5, 10, 0]))],
                                [[_int(1), (4).to_bytes(2, "little") + b"abcd"]])
            _, reply = _raw_load(p.port, f"insert bulk {t}([id] int,[name] nvarchar(3))", msg)
            assert _errors(reply) == [(4816, 16)]
            # Rows are counted one by one: the DONE of a good load carries how many.
            msg = _bulk_message([("id", INTN), ("name", NVARCHAR_100)], [[_int(i), _nvarchar("ab")] for i in range(5)])
            _, reply = _raw_load(p.port, f"insert bulk {t}([id] int,[name] nvarchar(3))", msg)
            assert _errors(reply) == [] and _done(reply)[2] == 5
        finally:
            cn.close()


# ---- mssql-python 1.16's bulk copy: its own TDS client on a second login -------------------

@pytest.fixture
def mssql_python_conn(peer):
    """A mssql-python connection to the session peer (its bulkcopy logs in once more itself)."""
    mssql_python = pytest.importorskip("mssql_python") if not tdspeer.in_ci() else __import__("mssql_python")
    cn = mssql_python.connect(f"Server=127.0.0.1,{peer.port};UID=sa;PWD=x;Encrypt=no;TrustServerCertificate=yes",
                              autocommit=True)
    yield cn
    cn.close()


MP_TABLE = "(id int NOT NULL PRIMARY KEY, name nvarchar(50) NULL, amt decimal(18,4) NULL, ts datetime2(7) NULL, big bigint NULL)"
MP_ROWS = [
    (1, "a", decimal.Decimal("12.3400"), datetime.datetime(2024, 5, 6, 7, 8, 9, 123456), 2**40),
    (2, "b é中", None, None, None),
    (3, None, decimal.Decimal("-99999999999999.9999"), datetime.datetime(1, 1, 1), -(2**63)),
]


def test_mssql_python_bulkcopy_metadata_batch(mssql_python_conn):
    """The batch mssql-python sends before a load (captures/bulk-load.md), answered as SQL
    Server does: @@TRANCOUNT, the FMTONLY column metadata of the column list it built from
    sys.all_columns, then sp_tablecollations_100 (colid, name, tds_collation, collation)."""
    cur = mssql_python_conn.cursor()
    t = tname("mp")
    cur.execute(f"CREATE TABLE {t} {MP_TABLE}")
    cur.execute(f"""SELECT @@TRANCOUNT;

DECLARE @Column_Names NVARCHAR(MAX) = NULL;
DECLARE @object_id INT = OBJECT_ID(N'[{t}]');
DECLARE @sql NVARCHAR(MAX);
SET @sql = N'SELECT @CN = COALESCE(@CN + N'', '', N'''') + QUOTENAME([name]) FROM sys.all_columns WHERE [object_id] = @ObjId';
IF EXISTS (SELECT TOP 1 * FROM sys.all_columns WHERE [object_id] = OBJECT_ID('sys.all_columns') AND [name] = 'graph_type')
    SET @sql = @sql + N' AND COALESCE([graph_type], 0) NOT IN (1, 3, 4, 6, 7)';
SET @sql = @sql + N' ORDER BY [column_id] ASC';
EXEC sp_executesql @sql, N'@CN NVARCHAR(MAX) OUTPUT, @ObjId INT', @CN = @Column_Names OUTPUT, @ObjId = @object_id;

SELECT @Column_Names = COALESCE(@Column_Names, '*');

SET FMTONLY ON;
EXEC(N'SELECT ' + @Column_Names + N' FROM [{t}]');
SET FMTONLY OFF;

EXEC sp_tablecollations_100 N'[{t}]';
""")
    assert [tuple(r) for r in cur.fetchall()] == [(0,)]
    assert cur.nextset()
    assert [d[0] for d in cur.description] == ["id", "name", "amt", "ts", "big"]
    assert cur.fetchall() == []
    assert cur.nextset()
    assert [d[0] for d in cur.description] == ["colid", "name", "tds_collation", "collation"]
    rows = [tuple(r) for r in cur.fetchall()]
    assert rows == [
        (1, "id", None, None),
        (2, "name", bytes.fromhex("0904d00034"), "SQL_Latin1_General_CP1_CI_AS"),
        (3, "amt", None, None),
        (4, "ts", None, None),
        (5, "big", None, None),
    ]


def test_mssql_python_bulkcopy(mssql_python_conn):
    cur = mssql_python_conn.cursor()
    t = tname("mp")
    cur.execute(f"CREATE TABLE {t} {MP_TABLE}")
    res = cur.bulkcopy(t, MP_ROWS)
    assert res["rows_copied"] == 3
    cur.execute(f"SELECT id, name, amt, ts, big FROM {t} ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == MP_ROWS
    # Twice more, small: the rows of a second load go in after the first.
    cur.execute(f"CREATE TABLE {t}_2 (id int NOT NULL PRIMARY KEY, name nvarchar(50) NULL)")
    assert cur.bulkcopy(f"{t}_2", [(1, "a"), (2, "b")])["rows_copied"] == 2
    assert cur.bulkcopy(f"{t}_2", [(3, "c")])["rows_copied"] == 1
    cur.execute(f"SELECT id, name FROM {t}_2 ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == [(1, "a"), (2, "b"), (3, "c")]


def test_mssql_python_bulkcopy_arrow(mssql_python_conn):
    pa = pytest.importorskip("pyarrow") if not tdspeer.in_ci() else __import__("pyarrow")
    cur = mssql_python_conn.cursor()
    t = tname("mp")
    cur.execute(f"CREATE TABLE {t} (id int NOT NULL PRIMARY KEY, name nvarchar(50) NULL, big bigint NULL, f float NULL)")
    table = pa.table({
        "id": pa.array([1, 2, 3], pa.int32()),
        "name": pa.array(["a", None, "c ü"], pa.string()),
        "big": pa.array([2**40, None, -5], pa.int64()),
        "f": pa.array([0.25, 1.5, None], pa.float64()),
    })
    assert cur.bulkcopy_arrow(t, table)["rows_copied"] == 3
    cur.execute(f"SELECT id, name, big, f FROM {t} ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == [(1, "a", 2**40, 0.25), (2, None, None, 1.5), (3, "c ü", -5, None)]
