"""cursor.bulkcopy through the drivers' bcp API on the caller's own connection (Driver 18 and
FreeTDS against the TDS peer): every type exact, mssql-python 1.16's arguments and errors,
SqlBulkCopy's commit semantics, #temp tables and transactions, cancel and progress."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest

import ferrodbc

UTC = dt.timezone.utc


def _counters() -> dict[str, int]:
    return ferrodbc.counters()


# (column type, values): each list is copied in, read back and compared value for value.
ROUND_TRIPS = [
    ("tinyint", [0, 255]),
    ("smallint", [-32768, 32767]),
    ("int", [-(2**31), 2**31 - 1]),
    ("bigint", [-(2**63), 2**63 - 1]),
    ("bit", [True, False]),
    ("decimal(38,10)", [Decimal("1234567890123456789012345678.0123456789"), Decimal("-0.0000000001")]),
    ("decimal(18,4)", [Decimal("12.3400"), Decimal("-99999999999999.9999")]),
    ("money", [Decimal("922337203685477.5807"), Decimal("-1.2345")]),
    ("smallmoney", [Decimal("214748.3647"), Decimal("0.0001")]),
    ("real", [1.5, -0.25]),
    ("float", [1e308, -2.2250738585072014e-308]),
    ("date", [dt.date(1, 1, 1), dt.date(9999, 12, 31)]),
    ("time(7)", [dt.time(0, 0), dt.time(23, 59, 59, 999999)]),
    ("datetime2(7)", [dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999)]),
    ("datetime", [dt.datetime(1753, 1, 1), dt.datetime(2024, 2, 29, 12, 30, 45, 123000)]),
    ("smalldatetime", [dt.datetime(1900, 1, 1), dt.datetime(2079, 6, 6, 23, 59)]),
    (
        "datetimeoffset(7)",
        [
            dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
            dt.datetime(1, 1, 1, 12, 0, tzinfo=UTC),
        ],
    ),
    ("nvarchar(10)", ["héllo €", ""]),
    ("varchar(10)", ["plain", ""]),
    ("nchar(3)", ["abc", "x  "]),
    ("nvarchar(max)", ["∑" * 5000, ""]),
    ("varchar(max)", ["y" * 9000, ""]),
    ("varbinary(8)", [b"\x00\x01", b""]),
    ("binary(2)", [b"\x00\xff", b"ab"]),
    ("varbinary(max)", [bytes(range(256)) * 40, b""]),
    ("uniqueidentifier", [uuid.UUID("12345678-1234-5678-9abc-def012345678"), uuid.UUID(int=0)]),
    ("xml", ["<a>1</a>", "<b/>"]),
]


# FreeTDS parses a date's ISO text itself and turns a year before 1753 into another (0001-01-01
# arrived as 2001-01-01, 1000-01-01 as 1900-01-01): such values are refused there (below).
EARLY = ("date", "datetime2(7)")


@pytest.mark.parametrize("sqltype,values", ROUND_TRIPS, ids=[t for t, _ in ROUND_TRIPS])
def test_every_type_round_trips_exactly(conn, driver, sqltype, values):
    if driver == "freetds" and sqltype in EARLY:
        values = [v.replace(year=1753) if v.year < 1753 else v for v in values]
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE #bk (id int NOT NULL PRIMARY KEY, v {sqltype} NULL)")
    before = _counters()
    rows = [(i, v) for i, v in enumerate(values)] + [(len(values), None)]
    result = cur.bulkcopy("#bk", rows)
    # FreeTDS 1.3's bcp aborts the process on (MAX) columns and parses no datetimeoffset
    # text: those loads take parameter arrays on the same connection.
    freetds_cannot = "max" in sqltype or sqltype in ("xml", "datetimeoffset(7)")
    path = "bulk_array_loads" if driver == "freetds" and freetds_cannot else "bulk_bcp_loads"
    assert _counters()[path] == before[path] + 1
    assert result["rows_copied"] == len(rows)
    assert result["batch_count"] == 1
    got = [r[0] for r in cur.execute("SELECT v FROM #bk ORDER BY id").fetchall()]
    want = list(values) + [None]
    if sqltype == "nchar(3)":
        want = ["abc", "x  ", None]
    if sqltype == "real":
        want = [1.5, -0.25, None]
    assert got == want


def test_freetds_refuses_dates_before_1753_instead_of_storing_another_date(conn, driver):
    cur = conn.cursor()
    cur.execute("CREATE TABLE #early (d date NULL)")
    if driver != "freetds":
        cur.bulkcopy("#early", [(dt.date(1, 1, 1),)])
        assert cur.execute("SELECT d FROM #early").fetchval() == dt.date(1, 1, 1)
        return
    with pytest.raises(ferrodbc.DataError, match=r'source row 1.*before 1753-01-01.*column "d"'):
        cur.bulkcopy("#early", [(dt.date(1753, 1, 1),), (dt.date(1752, 12, 31),)])
    assert cur.execute("SELECT COUNT(*) FROM #early").fetchval() == 0


def test_result_dict_matches_mssql_python(conn):
    cur = conn.cursor()
    cur.execute("CREATE TABLE #r (a int)")
    r = cur.bulkcopy("#r", [(i,) for i in range(10)], batch_size=3)
    assert set(r) == {"rows_copied", "batch_count", "elapsed_time", "rows_per_second"}
    assert r["rows_copied"] == 10
    assert r["batch_count"] == 4
    assert r["elapsed_time"] > 0 and r["rows_per_second"] > 0


def test_temp_table_and_the_callers_transaction(connect):
    cn = connect(autocommit=False)
    cur = cn.cursor()
    cur.execute("CREATE TABLE #tx (a int)")
    cn.commit()
    cur.bulkcopy("#tx", [(1,), (2,)])
    assert cur.execute("SELECT COUNT(*) FROM #tx").fetchval() == 2
    cn.rollback()
    assert cur.execute("SELECT COUNT(*) FROM #tx").fetchval() == 0
    cur.bulkcopy("#tx", [(3,)], batch_size=1)
    cn.commit()
    assert cur.execute("SELECT a FROM #tx").fetchall() == [(3,)]


def test_earlier_batches_stay_committed_after_a_failing_batch(conn):
    cur = conn.cursor()
    cur.execute("CREATE TABLE bk_dup (id int NOT NULL PRIMARY KEY)")
    try:
        with pytest.raises(ferrodbc.IntegrityError) as e:
            cur.bulkcopy("bk_dup", [(1,), (2,), (3,), (4,), (5,), (5,)], batch_size=2)
        assert "4 rows copied" in str(e.value)
        assert cur.execute("SELECT COUNT(*) FROM bk_dup").fetchval() == 4
        # The connection stays usable.
        assert cur.execute("SELECT 1").fetchval() == 1
    finally:
        cur.execute("DROP TABLE bk_dup")


def test_bad_values_name_the_column_and_the_source_row(conn):
    cur = conn.cursor()
    cur.execute("CREATE TABLE #bad (id int NOT NULL, s nvarchar(3) NULL, n tinyint NULL, d decimal(4,2) NULL)")
    with pytest.raises(ferrodbc.DataError, match=r'column "s", source row 1.*longer than'):
        cur.bulkcopy("#bad", [(1, "abc", 1, 1), (2, "abcd", 1, 1)])
    with pytest.raises(ferrodbc.DataError, match=r'column "n", source row 0.*out of range for tinyint'):
        cur.bulkcopy("#bad", [(1, "a", 256, 1)])
    with pytest.raises(ferrodbc.DataError, match=r'column "d", source row 0.*does not fit decimal\(4,2\)'):
        cur.bulkcopy("#bad", [(1, "a", 1, Decimal("123.4"))])
    with pytest.raises(ferrodbc.DataError, match=r'column "n", source row 0.*a date value cannot be converted.*tinyint'):
        cur.bulkcopy("#bad", [(1, "a", dt.date(2020, 1, 1), 1)])
    with pytest.raises(ferrodbc.IntegrityError, match=r'column "id", source row 2'):
        cur.bulkcopy("#bad", [(1, None, None, None), (2, None, None, None), (None, "a", 1, 1)], keep_nulls=True)
    assert cur.execute("SELECT COUNT(*) FROM #bad").fetchval() == 0


def test_unknown_table_column_and_closed_cursor_are_programming_errors(conn):
    cur = conn.cursor()
    with pytest.raises(ferrodbc.ProgrammingError, match="no_such_table"):
        cur.bulkcopy("no_such_table", [(1,)])
    cur.execute("CREATE TABLE #m (a int, b int)")
    with pytest.raises(ferrodbc.ProgrammingError, match='no column "c"'):
        cur.bulkcopy("#m", [(1,)], column_mappings=["c"])
    with pytest.raises(ferrodbc.ProgrammingError, match="is not a table name"):
        cur.bulkcopy("#m; DROP TABLE x", [(1,)])
    cur.close()
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.bulkcopy("#m", [(1, 2)])


def test_argument_errors_match_mssql_python(conn):
    cur = conn.cursor()
    with pytest.raises(ferrodbc.ProgrammingError, match="table_name must be a non-empty string"):
        cur.bulkcopy("", [(1,)])  # no table name: a PEP 249 class (the face: ValueError)
    with pytest.raises(TypeError, match="batch_size must be a non-negative integer, got str"):
        cur.bulkcopy("t", [(1,)], batch_size="1")
    with pytest.raises(ValueError, match="batch_size must be non-negative, got -1"):
        cur.bulkcopy("t", [(1,)], batch_size=-1)
    with pytest.raises(TypeError, match="timeout must be a non-negative integer, got bool"):
        cur.bulkcopy("t", [(1,)], timeout=True)
    with pytest.raises(TypeError, match="got None"):
        cur.bulkcopy("t", None)
    with pytest.raises(TypeError, match="Strings and bytes"):
        cur.bulkcopy("t", "abc")
    with pytest.raises(TypeError, match="rows must be tuples"):
        cur.bulkcopy("t", [1, 2])


def test_column_mappings_by_name_and_by_pairs(conn):
    cur = conn.cursor()
    cur.execute("CREATE TABLE #cm (a int NULL, b nvarchar(5) NULL, c int NULL)")
    cur.bulkcopy("#cm", [("x", 1)], column_mappings=["b", "c"])
    cur.bulkcopy("#cm", [(9, "skip", 7, "y")], column_mappings=[(3, "b"), (0, "a")])
    assert cur.execute("SELECT a, b, c FROM #cm ORDER BY b").fetchall() == [(None, "x", 1), (9, "y", None)]


def test_identity_columns_are_numbered_unless_keep_identity(conn):
    # A permanent table: the peer's tempdb.sys.columns does not list #temp tables (its README).
    cur = conn.cursor()
    cur.execute("CREATE TABLE bk_ident (id int IDENTITY(1,1) NOT NULL, v nvarchar(5) NULL)")
    try:
        cur.bulkcopy("bk_ident", [("a",), ("b",)])
        cur.bulkcopy("bk_ident", [(100, "c")], keep_identity=True)
        assert cur.execute("SELECT id, v FROM bk_ident ORDER BY id").fetchall() == [(1, "a"), (2, "b"), (100, "c")]
        with pytest.raises(ferrodbc.ProgrammingError, match="identity column"):
            cur.bulkcopy("bk_ident", [(5, "d")], column_mappings=["id", "v"])
    finally:
        cur.execute("DROP TABLE bk_ident")


def test_progress_is_called_every_notify_after_rows(conn):
    cur = conn.cursor()
    cur.execute("CREATE TABLE #p (a int)")
    seen: list[int] = []
    cur.bulkcopy("#p", ((i,) for i in range(25)), progress=seen.append, notify_after=10)
    assert seen == [10, 20]


def test_cancel_stops_the_load_and_the_connection_stays_usable(conn):
    cur = conn.cursor()
    cur.execute("CREATE TABLE #c (a int)")

    def rows():
        for i in range(100_000):
            if i == 50_000:
                cur.cancel()
            yield (i,)

    with pytest.raises(ferrodbc.OperationalError, match="cancelled"):
        cur.bulkcopy("#c", rows())
    assert cur.execute("SELECT 1").fetchval() == 1


def test_cancel_from_another_thread_while_chunks_are_sent(conn):
    """cursor.cancel() from another thread while the pipe's thread is inside bcp_sendrow: the
    load stops between rows, and the cursor's own (idle) statement is not cancelled meanwhile
    (an SQLCancel on it would enter the driver beside the bcp calls on the same connection).
    Many rounds, each cancelled at a different moment; the connection works after each."""
    import threading

    cur = conn.cursor()
    cur.execute("CREATE TABLE #t (a int, b float)")
    before = ferrodbc.counters()["bulk_bcp_loads"]
    rounds = 12
    def rows(started):
        for i in range(2_000_000):
            if i == 20_000:
                started.set()
            yield (i, i * 0.5)

    def cancel_once(started):
        if started.wait(30):
            cur.cancel()

    for k in range(rounds):
        started = threading.Event()
        canceller = threading.Thread(target=cancel_once, args=(started,))
        canceller.start()
        with pytest.raises(ferrodbc.OperationalError, match="cancelled"):
            cur.bulkcopy("#t", rows(started), batch_size=7_000 + 1_000 * k)
        canceller.join(30)
        assert cur.execute("SELECT 1").fetchval() == 1
    assert ferrodbc.counters()["bulk_bcp_loads"] == before + rounds


def test_a_generator_source_is_streamed_in_chunks(conn):
    cur = conn.cursor()
    cur.execute("CREATE TABLE #g (a int NOT NULL, s nvarchar(20) NOT NULL)")
    r = cur.bulkcopy("#g", ((i, f"row {i}") for i in range(30_000)), batch_size=10_000)
    assert r["rows_copied"] == 30_000 and r["batch_count"] == 3
    assert cur.execute("SELECT COUNT(*), MAX(a) FROM #g").fetchone() == (30_000, 29_999)


def test_timeout_stops_the_load_and_the_connection_stays_usable(conn):
    import time

    cur = conn.cursor()
    cur.execute("CREATE TABLE #slow (a int)")

    def rows():
        for i in range(20_000):
            time.sleep(0.0002)  # 8,192 rows (one chunk) take over a second
            yield (i,)

    with pytest.raises(ferrodbc.OperationalError, match="timed out after 1 s with 0 rows copied"):
        cur.bulkcopy("#slow", rows(), timeout=1)
    assert cur.execute("SELECT COUNT(*) FROM #slow").fetchval() == 0
    # timeout=0: no limit.
    assert cur.bulkcopy("#slow", [(1,)], timeout=0)["rows_copied"] == 1


def test_decimals_are_rounded_to_the_column_scale_as_sql_server_rounds(conn):
    # Driver 18 refuses a longer fraction (22001) and FreeTDS cut it: ferrodbc rounds first.
    cur = conn.cursor()
    cur.execute("CREATE TABLE #dec (i int, d decimal(18,4))")
    cur.bulkcopy("#dec", [
        (1, Decimal("1." + "0" * 80 + "1")), (2, Decimal("3.99995")), (3, Decimal("-2.00005")),
        (4, Decimal("2.00004999")), (5, 1.23456789),
    ])
    got = [r[0] for r in cur.execute("SELECT d FROM #dec ORDER BY i").fetchall()]
    assert got == [Decimal("1.0000"), Decimal("4.0000"), Decimal("-2.0001"), Decimal("2.0000"), Decimal("1.2346")]
    with pytest.raises(ferrodbc.DataError, match=r"does not fit decimal\(18,4\)"):
        cur.bulkcopy("#dec", [(6, Decimal("99999999999999.99995"))])


def test_fractions_are_rounded_to_the_column_scale_as_sql_server_rounds(conn):
    # Driver 18 refuses more fraction digits than the scale (22008): ferrodbc rounds first,
    # half up, into the next second, minute or day when it must.
    cur = conn.cursor()
    cur.execute("CREATE TABLE #frac (i int, a datetime2(3), t time(2), o datetimeoffset(0), s smalldatetime)")
    tz = dt.timezone(dt.timedelta(hours=-3))
    cur.bulkcopy("#frac", [
        (1, dt.datetime(2024, 1, 1, 0, 0, 0, 123500), dt.time(0, 0, 0, 125000),
         dt.datetime(2024, 1, 1, 0, 0, 0, 499999, tzinfo=tz), dt.datetime(2024, 1, 1, 0, 0, 29)),
        (2, dt.datetime(2023, 12, 31, 23, 59, 59, 999600), dt.time(23, 59, 59, 999000),
         dt.datetime(2024, 2, 28, 23, 59, 59, 500000, tzinfo=tz), dt.datetime(2024, 1, 1, 23, 59)),
    ])
    got = [tuple(r) for r in cur.execute("SELECT a, t, o, s FROM #frac ORDER BY i").fetchall()]
    assert got == [
        (dt.datetime(2024, 1, 1, 0, 0, 0, 124000), dt.time(0, 0, 0, 130000),
         dt.datetime(2024, 1, 1, 0, 0, 0, tzinfo=tz), dt.datetime(2024, 1, 1, 0, 0)),
        (dt.datetime(2024, 1, 1, 0, 0), dt.time(0, 0), dt.datetime(2024, 2, 29, 0, 0, tzinfo=tz),
         dt.datetime(2024, 1, 1, 23, 59)),
    ]


def test_use_internal_transaction_needs_autocommit(connect):
    """In manual-commit mode the drivers keep a transaction open at all times (@@TRANCOUNT is 1
    right after a commit), so a batch committing on its own would commit the caller's work:
    refused before anything is sent. In autocommit every batch commits as it ends."""
    cn = connect(autocommit=False)
    cur = cn.cursor()
    cur.execute("CREATE TABLE bk_internal (a int)")
    cn.commit()
    assert cur.execute("SELECT @@TRANCOUNT").fetchval() == 1
    try:
        cur.execute("INSERT INTO bk_internal VALUES (99)")
        with pytest.raises(ferrodbc.ProgrammingError, match="use_internal_transaction=True needs autocommit"):
            cur.bulkcopy("bk_internal", [(6,)], use_internal_transaction=True)
        cn.rollback()
        assert cur.execute("SELECT COUNT(*) FROM bk_internal").fetchval() == 0
        assert not cn.autocommit
        cn.autocommit = True
        r = cur.bulkcopy("bk_internal", [(i,) for i in range(5)], batch_size=2, use_internal_transaction=True)
        assert (r["rows_copied"], r["batch_count"]) == (5, 3)
        assert cur.execute("SELECT COUNT(*) FROM bk_internal").fetchval() == 5
    finally:
        cn.autocommit = True
        cur.execute("DROP TABLE bk_internal")


def test_a_load_freetds_sends_as_inserts_keeps_bulk_semantics(conn, driver):
    """FreeTDS cannot bulk-copy a (MAX) column, so that load goes as INSERT parameter arrays:
    kept identity values still go in (IDENTITY_INSERT), and a NULL into a column with a DEFAULT,
    which a bulk copy turns into the default, is refused rather than stored as NULL."""
    cur = conn.cursor()
    cur.execute("CREATE TABLE bk_fa (id int IDENTITY(1,1) NOT NULL, body nvarchar(max) NULL, d int NULL DEFAULT 5)")
    try:
        before = ferrodbc.counters()
        cur.bulkcopy("bk_fa", [(100, "kept", 1)], keep_identity=True)
        if driver == "freetds":
            with pytest.raises(ferrodbc.IntegrityError, match='column "d", source row 0.*has a DEFAULT'):
                cur.bulkcopy("bk_fa", [("x", None)], column_mappings=["body", "d"])
        else:
            cur.bulkcopy("bk_fa", [("x", None)], column_mappings=["body", "d"])
        cur.bulkcopy("bk_fa", [("y", None)], column_mappings=["body", "d"], keep_nulls=True)
        after = ferrodbc.counters()
        path = "bulk_array_loads" if driver == "freetds" else "bulk_bcp_loads"
        assert after[path] - before[path] >= 2
        got = [tuple(r) for r in cur.execute("SELECT body, d FROM bk_fa ORDER BY body").fetchall()]
        expected = [("kept", 1), ("y", None)] if driver == "freetds" else [("kept", 1), ("x", 5), ("y", None)]
        assert got == expected
        assert cur.execute("SELECT id FROM bk_fa WHERE body = N'kept'").fetchval() == 100
    finally:
        cur.execute("DROP TABLE bk_fa")


@pytest.mark.parametrize("driver", ["freetds"], indirect=True)  # the INSERT-array path on SQL Server
def test_an_array_waiting_on_a_lock_ends_at_cancel_and_at_the_timeout(connect):
    """A load FreeTDS sends as INSERT arrays ((MAX) column) that waits on another session's row
    lock is stopped by cursor.cancel() from another thread, and by the load's own timeout: the
    statement in flight is cancelled on the server, the connection stays usable."""
    import threading
    import time

    holder = connect(autocommit=False)
    hcur = holder.cursor()
    hcur.execute("CREATE TABLE bk_lockwait (id int NOT NULL PRIMARY KEY, body nvarchar(max) NULL)")
    holder.commit()
    try:
        hcur.execute("INSERT INTO bk_lockwait VALUES (1, N'held')")  # row lock until rollback
        cn = connect()
        cur = cn.cursor()
        before = ferrodbc.counters()["bulk_array_loads"]
        threading.Timer(1.0, cur.cancel).start()
        started = time.monotonic()
        with pytest.raises(ferrodbc.OperationalError):
            cur.bulkcopy("bk_lockwait", [(1, "waits")], timeout=0)
        assert time.monotonic() - started < 8  # without the cancel it waits for the lock
        started = time.monotonic()
        with pytest.raises(ferrodbc.OperationalError):
            cur.bulkcopy("bk_lockwait", [(1, "waits")], timeout=2)
        assert 1.5 < time.monotonic() - started < 8
        assert ferrodbc.counters()["bulk_array_loads"] == before + 2
        holder.rollback()
        assert cur.bulkcopy("bk_lockwait", [(1, "after")])["rows_copied"] == 1
        assert cur.execute("SELECT body FROM bk_lockwait").fetchall() == [("after",)]
    finally:
        holder.rollback()
        hcur.execute("DROP TABLE bk_lockwait")
        holder.commit()
