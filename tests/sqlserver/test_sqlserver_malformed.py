"""Malformed data from the server, through Driver 18 and FreeTDS: the peer's value faults
(`fault:<kind>_at=N` corrupts row N of peer.mixed_*; README "Fault modes") and (MAX) values of
unknown length. Every case ends in the rows before the bad one delivered exactly, then a clear
DataError naming the column and row (or the driver's own error for the cell), or the documented
replacement policy; never a wrong value. Expected rows come from eng/peers/synthetic.py."""

from __future__ import annotations

from decimal import Decimal

import pytest

import ferrodbc

from sqlserver_support import synthetic

MIXED = [tuple(r) for r in synthetic.rows("mixed", 10)]
BAD = 3  # the corrupted row


def fault(kind: str, table: str = "peer.mixed_10") -> str:
    return f"SELECT * FROM {table} /* fault:{kind}={BAD} */"


def fetch_until_error(cur) -> tuple[list[tuple], BaseException | None]:
    """Rows one by one until the end or the first error (rows before it stay delivered)."""
    got: list[tuple] = []
    try:
        while (row := cur.fetchone()) is not None:
            got.append(tuple(row))
    except ferrodbc.Error as e:
        return got, e
    return got, None


def assert_usable(conn) -> None:
    assert conn.broken is False
    assert conn.cursor().execute("SELECT 41 + 1").fetchval() == 42


def assert_names_cell(e: BaseException, column: str, index: int, row: int) -> None:
    assert isinstance(e, ferrodbc.DataError), repr(e)
    assert f'column "{column}" (index {index}), row {row}:' in str(e), str(e)


# --- text ----------------------------------------------------------------------------------------

def test_lone_surrogate_is_data_error_naming_the_cell(conn, driver):
    cur = conn.cursor().execute(fault("surrogate_at"))
    got, err = fetch_until_error(cur)
    assert got == MIXED[:BAD]
    assert_names_cell(err, "name", 3, BAD)
    assert "lone surrogate 0xD800" in str(err)
    # The bad row is consumed; the rows after it still arrive.
    assert [tuple(r) for r in cur.fetchall()] == MIXED[BAD + 1:]
    assert_usable(conn)


@pytest.mark.parametrize(("policy", "expected"), [("replace", "name\ufffd3"), ("surrogatepass", "name\ud8003")])
def test_lone_surrogate_replacement_policies(conn, driver, policy, expected):
    """The documented policies: U+FFFD, or the surrogate kept (Python's surrogatepass)."""
    conn.decode_errors = policy
    rows = [tuple(r) for r in conn.cursor().execute(fault("surrogate_at")).fetchall()]
    assert rows[BAD][3] == expected
    assert rows[:BAD] + rows[BAD + 1:] == MIXED[:BAD] + MIXED[BAD + 1:]
    assert rows[BAD][:3] + rows[BAD][4:] == MIXED[BAD][:3] + MIXED[BAD][4:]


def test_fetchall_carries_the_rows_before_a_bad_cell(conn, driver):
    with pytest.raises(ferrodbc.DataError) as ei:
        conn.cursor().execute(fault("surrogate_at")).fetchall()
    assert [tuple(r) for r in ei.value.partial_rows] == MIXED[:BAD]


@pytest.mark.parametrize("policy", ["strict", "replace"])
def test_odd_utf16_byte_count_is_data_error(conn, driver, policy):
    """Both drivers hand over 13 bytes for the 13-byte nvarchar the peer sent: half a code unit
    is never dropped silently (it was, before: 'name 3' came back), under every policy."""
    conn.decode_errors = policy
    got, err = fetch_until_error(conn.cursor().execute(fault("oddlen_at")))
    assert got == MIXED[:BAD]
    assert_names_cell(err, "name", 3, BAD)
    assert "13 bytes, an odd count" in str(err)
    assert_usable(conn)


def test_value_longer_than_its_declared_size(connect, driver):
    """120 bytes in an nvarchar(50) (at most 100). Driver 18 rejects the stream: protocol error,
    connection unusable, so OperationalError and `broken`. DRIVER DIFFERENCE: FreeTDS cuts the
    value to the declared 50 characters itself and reports nothing (the indicator says 100
    bytes), so ferrodbc cannot tell; the cut value is what the driver hands over."""
    conn = connect()
    got, err = fetch_until_error(conn.cursor().execute(fault("overlen_at")))
    if driver == "msodbcsql":
        assert got == MIXED[:BAD]
        assert isinstance(err, ferrodbc.OperationalError), repr(err)
        assert "Protocol error in TDS stream" in str(err)
        assert conn.broken is True
        with pytest.raises(ferrodbc.OperationalError):
            conn.cursor().execute("SELECT 1")
        assert_usable(connect())
    else:
        assert err is None
        assert got[BAD][3] == "x" * 50
        assert got[:BAD] + got[BAD + 1:] == MIXED[:BAD] + MIXED[BAD + 1:]
        assert_usable(conn)


# --- temporal and decimal beyond range ------------------------------------------------------------

def test_datetime2_past_year_9999(conn, driver):
    """Day number 0xFFFFFF in a datetime2 (past 9999-12-31): Driver 18 refuses the cell itself
    (22007 DataError, after the good rows; the cursor's rownumber is the bad row's index);
    FreeTDS converts it to year -19601, which ferrodbc refuses naming the cell."""
    cur = conn.cursor().execute(fault("bigdate_at"))
    got, err = fetch_until_error(cur)
    assert got == MIXED[:BAD]
    assert isinstance(err, ferrodbc.DataError), repr(err)
    if driver == "msodbcsql":
        assert err.sqlstate == "22007"
        assert cur.rownumber == BAD
    else:
        assert_names_cell(err, "ts", 4, BAD)
        assert "cannot be represented in Python" in str(err)
    assert_usable(conn)


def test_decimal_beyond_its_declared_precision_arrives_exact(conn, driver):
    """Magnitude 2^64-1 in a decimal(18,4): 20 digits. Both drivers pass the digits on and
    Python's Decimal holds them: ferrodbc returns exactly the value the bytes encode (sign
    negative as row 3's own), never a rounded or clipped one."""
    rows = [tuple(r) for r in conn.cursor().execute(fault("bigdec_at")).fetchall()]
    assert rows[BAD][5] == Decimal("-1844674407370955.1615")
    assert rows[:BAD] == MIXED[:BAD] and rows[BAD + 1:] == MIXED[BAD + 1:]


def test_decimal_38_digits_and_datetime2_edges(conn, driver):
    """The widest values SQL Server can send: 38-digit decimals at both ends of the range and
    datetime2 at 0001-01-01 / 9999-12-31 23:59:59.9999999, the last truncated (never rounded
    into year 10000) to Python's microseconds."""
    import datetime as dt

    nines = "9" * 38
    cur = conn.cursor()
    row = cur.execute(
        f"SELECT CAST('{nines}' AS DECIMAL(38,0)), CAST('-{nines}' AS DECIMAL(38,0)),"
        f" CAST('0.{nines}' AS DECIMAL(38,38)),"
        " CAST('0001-01-01 00:00:00' AS DATETIME2(7)), CAST('9999-12-31 23:59:59.9999999' AS DATETIME2(7))"
    ).fetchone()
    assert tuple(row) == (
        Decimal(nines), Decimal("-" + nines), Decimal("0." + nines),
        dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
    )


# --- truncated stream, unknown-length LOBs ---------------------------------------------------------

def test_row_truncated_mid_value(connect, driver):
    """The row ends inside a value, the message ends, the socket closes: OperationalError after
    the good rows, the connection broken, a new one works."""
    conn = connect()
    got, err = fetch_until_error(conn.cursor().execute(fault("truncated_at")))
    assert got == MIXED[:BAD]
    assert isinstance(err, ferrodbc.OperationalError), repr(err)
    assert conn.broken is True
    assert_usable(connect())


@pytest.mark.parametrize("after", [0, 5])
def test_malformed_token_is_never_a_short_result(connect, driver, after):
    """An invalid token byte mid-stream. Driver 18: protocol error. FreeTDS ends the result as if
    it were complete (no diagnostic until the next SQLMoreResults): ferrodbc asks at once, so both
    raise OperationalError after the rows received, never a silently short result."""
    conn = connect()
    cur = conn.cursor()
    try:
        cur.execute(f"SELECT * FROM peer.mixed_10 /* fault:malformed_after={after} */")
        got, err = fetch_until_error(cur)
    except ferrodbc.Error as e:  # with no row before it, the execute itself may raise
        got, err = [], e
    assert got == MIXED[:after]
    assert isinstance(err, ferrodbc.OperationalError), repr(err)
    assert conn.broken is True
    with pytest.raises(ferrodbc.OperationalError):
        cur.execute("SELECT 1")
    assert_usable(connect())


@pytest.mark.parametrize("table", ["lob_nvarcharmax_300k_3", "lob_varbinarymax_100k_4", "lob_nvarcharmax_1k_5"])
def test_max_values_of_unknown_length_arrive_whole(conn, driver, table):
    """(MAX) values sent as PLP of unknown total length (the drivers answer SQLGetData with
    SQL_NO_TOTAL): every value whole."""
    shape, n = table.rsplit("_", 1)
    rows = conn.cursor().execute(f"SELECT * FROM peer.{table} /* fault:plp_unknown=1 */").fetchall()
    assert [tuple(r) for r in rows] == list(synthetic.rows(shape, int(n)))


# --- a memory limit for LOBs -----------------------------------------------------------------------

@pytest.mark.parametrize("unknown_length", [False, True])
def test_lob_above_max_lob_bytes_is_data_error(conn, driver, unknown_length):
    """connection.max_lob_bytes: a value above it is a DataError naming the column and row, read
    no further; below it values arrive whole; None lifts the limit. With SQL_NO_TOTAL the read
    stops as soon as it passes the limit."""
    extra = " /* fault:plp_unknown=1 */" if unknown_length else ""
    expected = list(synthetic.rows("lob_nvarcharmax_300k", 2))
    assert conn.max_lob_bytes is None
    conn.max_lob_bytes = 400_000
    assert conn.max_lob_bytes == 400_000
    cur = conn.cursor()
    assert [tuple(r) for r in cur.execute(f"SELECT * FROM peer.lob_nvarcharmax_300k_2{extra}").fetchall()] == expected
    conn.max_lob_bytes = 100_000
    got, err = fetch_until_error(cur.execute(f"SELECT * FROM peer.lob_nvarcharmax_300k_2{extra}"))
    assert got == []
    assert_names_cell(err, "body", 1, 0)
    assert "max_lob_bytes = 100000" in str(err)
    assert cur.execute("SELECT 3").fetchval() == 3
    conn.max_lob_bytes = None
    assert [tuple(r) for r in cur.execute(f"SELECT * FROM peer.lob_nvarcharmax_300k_2{extra}").fetchall()] == expected


# --- the Arrow path: the same checks ---------------------------------------------------------------

@pytest.mark.parametrize(("sql", "limit", "cell", "why"), [
    ("SELECT * FROM peer.lob_nvarcharmax_300k_2", 100_000, ("body", 1, 0), "max_lob_bytes = 100000"),
    (fault("oddlen_at"), None, ("name", 3, BAD), "an odd count"),
    (fault("surrogate_at"), None, ("name", 3, BAD), "lone surrogate 0xD800"),
])
def test_arrow_fetch_refuses_the_same_cells(conn, driver, sql, limit, cell, why):
    import pyarrow as pa  # installed by eng/setup.sh
    conn.max_lob_bytes = limit
    with pytest.raises(ferrodbc.DataError) as ei:
        pa.table(conn.cursor().execute(sql).fetch_arrow_table())
    assert_names_cell(ei.value, *cell)
    assert why in str(ei.value)
    assert_usable(conn)
