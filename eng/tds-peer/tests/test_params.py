"""Parameters of every type round-trip: `SELECT ?` and insert/select through a typed table."""

import datetime as dt
import signal
import subprocess
import sys
import uuid
from decimal import Decimal

import pyodbc
import pytest

import tdspeer

VALUES = [
    ("int", 42),
    ("bigint", 2**40 + 3),
    ("negative", -17),
    ("bool", True),
    ("float", 3.25),
    ("decimal", Decimal("12345.6789")),
    ("decimal38", Decimal("-1234567890123456789012345678.0123456789")),
    ("str", "héllo 中文 😀"),
    ("long_str", "x" * 5000),
    ("bytes", b"\x00\x01\xfe\xff"),
    ("long_bytes", bytes(range(256)) * 40),
    ("date", dt.date(2023, 12, 31)),
    ("time", dt.time(13, 14, 15)),
    ("datetime", dt.datetime(2024, 2, 29, 23, 59, 58, 123456)),
    ("uuid", uuid.UUID("6F9619FF-8B86-D011-B42D-00C04FC964FF")),
    ("decimal_tiny", Decimal("0.000001")),
    ("none", None),
]


@pytest.mark.parametrize("name,value", VALUES, ids=[v[0] for v in VALUES])
def test_select_param(connect, driver, name, value):
    cur = connect().cursor()
    cur.execute("SELECT ?", value)
    got = cur.fetchone()[0]
    if isinstance(got, bytearray):
        got = bytes(got)
    if name == "time" and isinstance(got, str):
        got = dt.time.fromisoformat(got)
    if isinstance(value, uuid.UUID) and isinstance(got, str):
        got = uuid.UUID(got)
    assert got == value


COLS = [
    ("c_int", "INT", 7),
    ("c_big", "BIGINT", -(2**50)),
    ("c_small", "SMALLINT", -300),
    ("c_tiny", "TINYINT", 200),
    ("c_bit", "BIT", False),
    ("c_real", "REAL", 1.5),
    ("c_float", "FLOAT", -2.75e10),
    ("c_dec", "DECIMAL(18,4)", Decimal("-99.1234")),
    ("c_num", "NUMERIC(38,10)", Decimal("1234567890123456789012345678.0000000001")),
    ("c_money", "MONEY", Decimal("12.3400")),
    ("c_date", "DATE", dt.date(1999, 1, 2)),
    ("c_time", "TIME(7)", dt.time(1, 2, 3)),  # pyodbc binds time as SQL_TIME_STRUCT: no fraction
    ("c_dt", "DATETIME", dt.datetime(2020, 5, 6, 7, 8, 9, 120000)),
    ("c_sdt", "SMALLDATETIME", dt.datetime(2020, 5, 6, 7, 8)),
    ("c_dt2", "DATETIME2(7)", dt.datetime(2021, 1, 2, 3, 4, 5, 678901)),
    ("c_nv", "NVARCHAR(50)", "ñandú 中"),
    ("c_nvmax", "NVARCHAR(MAX)", "é" * 4000),  # FreeTDS + pyodbc truncate str params at 4000
    ("c_vc", "VARCHAR(50)", "plain ascii"),
    ("c_vb", "VARBINARY(50)", b"\x10\x20"),
    ("c_vbmax", "VARBINARY(MAX)", b"\xab" * 9000),
    ("c_guid", "UNIQUEIDENTIFIER", "6F9619FF-8B86-D011-B42D-00C04FC964FF"),
]


def test_insert_select_every_type(connect):
    cur = connect().cursor()
    t = f"tp_{uuid.uuid4().hex[:8]}"
    cur.execute(f"CREATE TABLE {t} ({', '.join(f'{n} {ty}' for n, ty, _ in COLS)})")
    cols = ", ".join(n for n, _, _ in COLS)
    cur.execute(f"INSERT INTO {t} ({cols}) VALUES ({', '.join('?' for _ in COLS)})", *[v for _, _, v in COLS])
    assert cur.rowcount == 1
    cur.execute(f"INSERT INTO {t} ({cols}) VALUES ({', '.join('?' for _ in COLS)})", *[None for _ in COLS])
    got = cur.execute(f"SELECT {cols} FROM {t}").fetchall()
    first = [bytes(v) if isinstance(v, bytearray) else v for v in got[0]]
    for (n, _, exp), g in zip(COLS, first):
        assert g == exp, (n, g, exp)
    assert tuple(got[1]) == tuple([None] * len(COLS))


def test_where_param_and_executemany(connect):
    cur = connect().cursor()
    t = f"tw_{uuid.uuid4().hex[:8]}"
    cur.execute(f"CREATE TABLE {t} (id INT, name NVARCHAR(20))")
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(i, f"n{i}") for i in range(20)])
    cur.execute(f"SELECT name FROM {t} WHERE id = ?", 13)
    assert cur.fetchone()[0] == "n13"
    cur.execute(f"UPDATE {t} SET name = ? WHERE id >= ?", "big", 15)
    assert cur.rowcount == 5


def test_fast_executemany_parameter_array(connect, driver, peer):
    """msodbcsql sends a parameter array as one request holding many RPCs: all must run."""
    if driver == "freetds":
        assert_fast_executemany_crashes_freetds(peer)
        return
    cur = connect().cursor()
    t = f"tf_{uuid.uuid4().hex[:8]}"
    cur.execute(f"CREATE TABLE {t} (id INT, name NVARCHAR(20), amount DECIMAL(10,2))")
    cur.fast_executemany = True
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?, ?)", [(i, f"n{i}", Decimal(i) / 4) for i in range(1000)])
    cur.fast_executemany = False
    assert tuple(cur.execute(f"SELECT COUNT(*), SUM(id) FROM {t}").fetchone()) == (1000, sum(range(1000)))
    assert cur.execute(f"SELECT amount FROM {t} WHERE id = 999").fetchone()[0] == Decimal("249.75")


def test_repeated_statement_sees_schema_change(connect):
    """The same INSERT text (its SQLite statement cached) after the table was recreated with a
    narrower column: the new CHECK applies, as SQL Server would recompile."""
    cur = connect().cursor()
    t = f"tc_{uuid.uuid4().hex[:8]}"
    insert = f"INSERT INTO {t} (name) VALUES (?)"
    cur.execute(f"CREATE TABLE {t} (name NVARCHAR(5))")
    cur.execute(insert, "abcd")
    cur.execute(f"DROP TABLE {t}")
    cur.execute(f"CREATE TABLE {t} (name NVARCHAR(2))")
    with pytest.raises(pyodbc.Error, match="truncated"):
        cur.execute(insert, "abcd")
    cur.execute(insert, "ab")
    assert [r[0] for r in cur.execute(f"SELECT name FROM {t}").fetchall()] == ["ab"]


def test_repeated_statement_reading_session_state_is_not_reused(connect):
    """A statement that reads @@IDENTITY is rewritten every time it runs (its SQLite text embeds
    the current value), even when the same text repeats row after row (executemany)."""
    cur = connect().cursor()
    t = f"ts_{uuid.uuid4().hex[:8]}"
    cur.execute(f"CREATE TABLE {t} (id INT IDENTITY(1,1) PRIMARY KEY, prev INT, v INT)")
    cur.execute(f"INSERT INTO {t} (prev, v) VALUES (NULL, 0)")
    cur.executemany(f"INSERT INTO {t} (prev, v) VALUES (@@IDENTITY, ?)", [(1,), (2,), (3,)])
    rows = [tuple(r) for r in cur.execute(f"SELECT id, prev, v FROM {t} ORDER BY id").fetchall()]
    assert rows == [(1, None, 0), (2, 1, 1), (3, 2, 2), (4, 3, 3)]


def assert_fast_executemany_crashes_freetds(peer):
    """The client limit that keeps FreeTDS out of the test above: pyodbc's fast_executemany
    through FreeTDS 1.3 dies with SIGSEGV inside the driver (before the peer sees a request), so
    it runs in a child process. When this starts passing, the FreeTDS case above can run."""
    code = (
        "import pyodbc, sys\n"
        "cn = pyodbc.connect(sys.argv[1], autocommit=True, timeout=10)\n"
        "cur = cn.cursor()\n"
        f"t = 'tfc_{uuid.uuid4().hex[:8]}'\n"
        "cur.execute(f'CREATE TABLE {t} (id INT, name NVARCHAR(20))')\n"
        "cur.fast_executemany = True\n"
        "cur.executemany(f'INSERT INTO {t} VALUES (?, ?)', [(i, f'n{i}') for i in range(10)])\n"
        "print(cur.execute(f'SELECT COUNT(*) FROM {t}').fetchone()[0])\n"
    )
    run = subprocess.run([sys.executable, "-c", code, tdspeer.conn_str(peer, "freetds")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == -signal.SIGSEGV, (
        f"pyodbc fast_executemany through FreeTDS no longer crashes (exit {run.returncode}, "
        f"stdout {run.stdout!r}): let test_fast_executemany_parameter_array run its FreeTDS case")
