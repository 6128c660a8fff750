"""connectorx (TDS through the tiberius 0.7 crate) reads what pyodbc reads through Driver 18.

A third TDS client, independent of ODBC: connectorx's own Rust TDS stack logs in (PRELOGIN,
TDS 7.x TLS, LOGIN7), runs `sp_executesql` and decodes every column itself. Each value is
compared with the one pyodbc + Driver 18 returns for the same query, through connectorx's type
mapping (its MsSQL -> Arrow transport, `return_type="arrow"`):

| SQL Server | Arrow (connectorx) | compared with pyodbc's value as |
|---|---|---|
| tinyint, smallint, int, bigint | int64 | equal |
| bit | bool | equal |
| float, real | double | equal (a real is widened from float32 on both sides) |
| decimal(p,s), numeric(p,s) | decimal128(38, 10) | rounded to 10 fractional digits (connectorx's fixed scale) |
| money, smallmoney | double | within 1e-15 relative (float64 has ~16 digits, money 19) |
| (n)varchar, (n)char, nvarchar(max) | string | equal (char padding kept by both) |
| (var)binary | large_binary | equal bytes |
| uniqueidentifier | string | equal ignoring case (connectorx prints lower case) |
| date | date32 | equal |
| time(7), datetime2(7), smalldatetime | time64[us] / timestamp[us] | equal (both cut to microseconds) |
| datetime | timestamp[us] | the same 1/300 s tick (connectorx gives the exact tick time, Driver 18 rounds to ms) |
| datetimeoffset | timestamp[us, UTC] | UTC minus the offset once more: tiberius 0.7's `DateTime<Utc>` decoding subtracts the offset from the UTC value on the wire (a tiberius bug, asserted as such here) |

What connectorx cannot represent at all is left out of the table, not hidden: a decimal with
more than 28 significant digits panics inside rust_decimal ("Number exceeds maximum value"),
and xml / sql_variant / udt columns hit `unimplemented!` in its type mapping.

connectorx with `encrypt=false` sends ENCRYPT_OFF and expects what SQL Server answers (OFF, then
a login-only TLS handshake in PRELOGIN packets), so these tests run the peer in `--encrypt off`
(SQL Server with a certificate, no "force encryption") and `on`; without `encrypt` connectorx
sends ENCRYPT_NOT_SUP (plaintext) and works against `off` and `notsup`.
"""

import datetime
import math
import struct
from decimal import ROUND_HALF_UP, Decimal

import pyodbc
import pytest

import tdspeer

if tdspeer.in_ci():
    import connectorx as cx  # CI: a missing connectorx fails the run (eng/requirements.txt)
else:
    cx = pytest.importorskip("connectorx")
pa = pytest.importorskip("pyarrow") if not tdspeer.in_ci() else __import__("pyarrow")

UTC = datetime.timezone.utc


def _start(encrypt: str):
    if tdspeer.peer_binary() is None:
        msg = "tds-peer binary not built (cargo build --release -p tds-peer)"
        pytest.fail(msg) if tdspeer.in_ci() else pytest.skip(msg)
    if not tdspeer.drivers_available().get("msodbcsql"):
        msg = "ODBC Driver 18 is not registered with unixODBC (run eng/setup.sh)"
        pytest.fail(msg) if tdspeer.in_ci() else pytest.skip(msg)
    return tdspeer.start_peer(encrypt=encrypt)


@pytest.fixture(scope="module")
def peer_off():
    with _start("off") as p:
        yield p


def _datetimeoffset(raw: bytes) -> datetime.datetime:
    """Driver 18's SQL_SS_TIMESTAMPOFFSET struct (pyodbc has no converter of its own)."""
    y, mo, d, h, mi, s, ns, oh, om = struct.unpack("<6hI2h", raw)
    tz = datetime.timezone(datetime.timedelta(hours=oh, minutes=om))
    return datetime.datetime(y, mo, d, h, mi, s, ns // 1000, tzinfo=tz)


def odbc_rows(peer, sql: str) -> list[tuple]:
    cn = pyodbc.connect(tdspeer.conn_str(peer, "msodbcsql"), timeout=10, autocommit=True)
    try:
        cn.add_output_converter(-155, _datetimeoffset)
        return [tuple(r) for r in cn.cursor().execute(sql).fetchall()]
    finally:
        cn.close()


def cx_url(peer, encrypt: str | None = "false") -> str:
    q = f"?encrypt={encrypt}&trust_server_certificate=true" if encrypt else ""
    return f"mssql://sa:x@127.0.0.1:{peer.port}/master{q}"


def cx_table(peer, sql: str, encrypt: str | None = "false", **kw):
    return cx.read_sql(cx_url(peer, encrypt), sql, return_type="arrow", **kw)


def _ticks300(v: datetime.datetime) -> int:
    """A datetime's 1/300 s tick of its day: where Driver 18's ms and tiberius' exact time meet."""
    us = (v.hour * 3600 + v.minute * 60 + v.second) * 1_000_000 + v.microsecond
    return round(us * 300 / 1_000_000)


def as_connectorx(sqltype: str, v):
    """pyodbc's value as connectorx represents it (the table in the module docstring)."""
    if v is None:
        return None
    base = sqltype.split("(")[0]
    if base in ("decimal", "numeric"):
        return v.quantize(Decimal("1e-10"), rounding=ROUND_HALF_UP)
    if base in ("varbinary", "binary"):
        return bytes(v)
    if base == "uniqueidentifier":
        return v.lower()
    if base == "datetimeoffset":
        return v.astimezone(UTC) - v.utcoffset()
    if base == "datetime":
        return (v.date(), _ticks300(v))
    return v


def same(sqltype: str, got, want) -> bool:
    if want is None or got is None:
        return got is None and want is None
    base = sqltype.split("(")[0]
    if base in ("money", "smallmoney"):
        return math.isclose(got, float(want), rel_tol=1e-15)
    if base == "datetime":
        return (got.date(), _ticks300(got)) == want
    # Same Python type too: a bit must not come back as 1, an int as 1.0.
    return type(got) is type(want) and got == want


def assert_same_rows(types: list[tuple[str, str]], cx_rows: list[dict], odbc: list[tuple]) -> None:
    assert len(cx_rows) == len(odbc) > 0
    for i, (c, o) in enumerate(zip(cx_rows, odbc)):
        assert list(c) == [n for n, _ in types]
        for (name, sqltype), want in zip(types, o):
            exp = as_connectorx(sqltype, want)
            assert same(sqltype, c[name], exp), (
                f"row {i} column {name} ({sqltype}): connectorx {c[name]!r}, pyodbc {want!r}"
            )


# peer.mixed_1000: int, bigint, float, nvarchar(50), datetime2(7), decimal(18,4), bit, nvarchar(100).
MIXED = [
    ("id", "int"),
    ("big", "bigint"),
    ("f", "float"),
    ("name", "nvarchar(50)"),
    ("ts", "datetime2(7)"),
    ("amount", "decimal(18,4)"),
    ("flag", "bit"),
    ("note", "nvarchar(100)"),
]
MIXED_ARROW = [
    "int64",
    "int64",
    "double",
    "string",
    "timestamp[us]",
    "decimal128(38, 10)",
    "bool",
    "string",
]


@pytest.mark.parametrize(
    ("mode", "encrypt"),
    [("off", "false"), ("on", "true"), ("notsup", None), ("off", None)],
    ids=["login-only-tls", "full-tls", "plaintext", "plaintext-vs-off-server"],
)
def test_mixed_1000_same_as_pyodbc(mode, encrypt):
    with _start(mode) as p:
        sql = "SELECT * FROM peer.mixed_1000"
        t = cx_table(p, sql, encrypt)
        assert [str(f.type) for f in t.schema] == MIXED_ARROW
        rows = t.to_pylist()
        assert_same_rows(MIXED, rows, odbc_rows(p, sql))
        assert [r["id"] for r in rows] == list(range(1000))


# A table made by SQL: the common types, edge values, NULLs, non-Latin text, a (max) value
# longer than a packet, and 300 generated rows so results span many packets.
COMMON = [
    ("id", "int"),
    ("ti", "tinyint"),
    ("si", "smallint"),
    ("bi", "bigint"),
    ("b", "bit"),
    ("f", "float"),
    ("r", "real"),
    ("d", "decimal(18,4)"),
    ("n", "numeric(10,2)"),
    ("dw", "decimal(28,12)"),
    ("m", "money"),
    ("sm", "smallmoney"),
    ("nv", "nvarchar(50)"),
    ("v", "varchar(50)"),
    ("nc", "nchar(6)"),
    ("c", "char(6)"),
    ("nvm", "nvarchar(max)"),
    ("vb", "varbinary(50)"),
    ("bn", "binary(4)"),
    ("dt", "date"),
    ("tm", "time(7)"),
    ("dtt", "datetime"),
    ("dt2", "datetime2(7)"),
    ("sdt", "smalldatetime"),
    ("dto", "datetimeoffset(7)"),
    ("g", "uniqueidentifier"),
]
COMMON_ARROW = {
    "int": "int64",
    "tinyint": "int64",
    "smallint": "int64",
    "bigint": "int64",
    "bit": "bool",
    "float": "double",
    "real": "double",
    "decimal": "decimal128(38, 10)",
    "numeric": "decimal128(38, 10)",
    "money": "double",
    "smallmoney": "double",
    "nvarchar": "string",
    "varchar": "string",
    "nchar": "string",
    "char": "string",
    "varbinary": "large_binary",
    "binary": "large_binary",
    "date": "date32[day]",
    "time": "time64[us]",
    "datetime": "timestamp[us]",
    "datetime2": "timestamp[us]",
    "smalldatetime": "timestamp[us]",
    "datetimeoffset": "timestamp[us, tz=+00:00]",
    "uniqueidentifier": "string",
}

EDGE_ROWS = [
    "(1, 255, -32768, 9223372036854775807, 1, 1.5e300, 3.25, 12345678901234.5678, 12345678.91,"
    " 1234567890123456.123456789099, 922337203685477.5807, 214748.3647,"
    " N'é中😀', 'abc', N'Ж', 'xy', REPLICATE(N'ж', 5000), 0x00FF10, 0xDEADBEEF,"
    " '0001-01-01', '23:59:59.1234567', '2020-02-29 12:34:56.787', '9999-12-31 23:59:59.1234567',"
    " '2020-01-01 10:30:00', '2020-06-01 12:00:00.1234567 +05:30', '6F9619FF-8B86-D011-B42D-00C04FC964FF')",
    "(2, 0, 0, -9223372036854775808, 0, -2.5e-308, 0.1, -0.0001, 0.00, -0.000000000099,"
    " -922337203685477.5808, -214748.3648, N'', '', N'', '', N'', 0x, 0x00000000,"
    " '9999-12-31', '00:00:00', '1753-01-01 00:00:00', '0001-01-01 00:00:00',"
    " '1900-01-01 00:00:00', '0001-01-01 00:00:00 -14:00', '00000000-0000-0000-0000-000000000000')",
    "(3" + ", NULL" * 25 + ")",
]


def _generated_row(i: int) -> str:
    return (
        f"({100 + i}, {i % 256}, {i * 7 - 1000}, {i * 1_000_000_007}, {i % 2}, {i * 0.125 - 3}, {i / 4},"
        f" {i * 12.3456 - 1000:.4f}, {i * 3.21:.2f}, {i}.{i:012d}, {i * 1.5:.4f}, {-i * 0.25:.4f},"
        f" N'name {i} é中', 'row {i}', N'n{i % 1000}', 'c{i % 100}', REPLICATE(N'x{i}', {i % 40}),"
        f" 0x{i:08X}, 0x{i * 3:08X}, '2024-{1 + i % 12:02d}-{1 + i % 28:02d}',"
        f" '{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}.{i * 1234567 % 10_000_000:07d}',"
        f" '2001-02-03 04:05:{i % 60:02d}.{(i * 37) % 1000:03d}', '1999-12-31 23:59:59.{i:07d}',"
        f" '2010-05-06 07:{i % 60:02d}:00', '2021-03-04 05:06:07.{i:07d} {'+' if i % 2 else '-'}0{i % 10}:{(i % 4) * 15:02d}',"
        f" '{i:08X}-0000-4000-8000-{i * 11:012X}')"
    )


@pytest.fixture(scope="module")
def common_table(peer_off):
    cols = ", ".join(
        f"{n} {t.upper()}{' NOT NULL PRIMARY KEY' if n == 'id' else ''}" for n, t in COMMON
    )
    cn = pyodbc.connect(tdspeer.conn_str(peer_off, "msodbcsql"), timeout=10, autocommit=True)
    cur = cn.cursor()
    cur.execute(f"CREATE TABLE dbo.cx_common ({cols})")
    cur.execute("INSERT INTO dbo.cx_common VALUES " + ", ".join(EDGE_ROWS))
    cur.execute(
        "INSERT INTO dbo.cx_common VALUES " + ", ".join(_generated_row(i) for i in range(300))
    )
    cn.close()
    return "dbo.cx_common"


def test_user_table_same_as_pyodbc(peer_off, common_table):
    sql = f"SELECT * FROM {common_table} ORDER BY id"
    t = cx_table(peer_off, sql)
    assert [str(f.type) for f in t.schema] == [COMMON_ARROW[ty.split("(")[0]] for _, ty in COMMON]
    odbc = odbc_rows(peer_off, sql)
    assert len(odbc) == 303
    assert_same_rows(COMMON, t.to_pylist(), odbc)


def test_user_table_partitioned_read(peer_off, common_table):
    """partition_on: connectorx's MIN/MAX query and range queries over a derived table."""
    sql = f"SELECT id, nv, d, dt2 FROM {common_table}"
    t = cx_table(peer_off, sql, partition_on="id", partition_num=3)
    got = sorted(t.to_pylist(), key=lambda r: r["id"])
    odbc = sorted(odbc_rows(peer_off, sql))
    types = dict(COMMON)
    assert_same_rows([(n, types[n]) for n in ("id", "nv", "d", "dt2")], got, odbc)


@pytest.mark.parametrize(
    ("literal", "decl", "error"),
    [
        # 38 significant digits: rust_decimal holds 28 and panics.
        ("12345678901234567890.123456789012345678", "DECIMAL(38,18)", "maximum value"),
        # 19 integer digits: with the 10 fractional digits connectorx rescales to, past 7.9e28.
        ("9999999999999999999", "DECIMAL(19,0)", "scale is not equal to expected scale"),
    ],
)
def test_decimal_beyond_rust_decimal_is_a_connectorx_limit(peer_off, literal, decl, error):
    """pyodbc reads these exactly; connectorx cannot represent them (a stated limit)."""
    sql = f"SELECT CAST({literal} AS {decl}) AS d"
    assert odbc_rows(peer_off, sql) == [(Decimal(literal),)]
    with pytest.raises(BaseException, match=error):
        cx_table(peer_off, sql)
