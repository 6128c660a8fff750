"""Fetch shapes stay native, proven by the engine's counters (ferrodbc.counters()).

On a result with (MAX) columns after bounded ones, the bounded prefix is bound once and the
suffix (the first (MAX) column and every column after it, a SQL Server driver rule) is read with
SQLGetData, one call per streamed cell when a value fits one chunk (32 KiB); fetchone and
fetchmany(1) reuse the same plan and buffers (nothing rebuilt or rebound per row).
"""

from __future__ import annotations

import pytest

import ferrodbc

from sqlserver_support import synthetic, tname

ROWS = 30
PREFIX = 3  # id INT, name NVARCHAR(20), val FLOAT: bound
STREAMED = 3  # body NVARCHAR(MAX), blob VARBINARY(MAX), tail INT (after the first MAX): SQLGetData


def snapshot(run):
    ferrodbc.reset_counters()
    out = run()
    return out, ferrodbc.counters()


@pytest.fixture
def lob_table(conn):
    """Bounded columns, then two (MAX) columns, then a bounded one; values < 32 KiB; NULLs too."""
    t = tname("lob")
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {t} (id INT, name NVARCHAR(20), val FLOAT, body NVARCHAR(MAX), blob VARBINARY(MAX), tail INT)")
    values = []
    for i in range(ROWS):
        body = None if i % 5 == 4 else "é😀" * (i * 50)
        blob = None if i % 7 == 6 else bytes([i % 256]) * (i * 100)
        values.append((i, f"n{i}", i * 0.5, body, blob, -i))
    for i in range(0, ROWS, 10):  # a few multi-row INSERTs (no parameter arrays: see test_params)
        chunk = values[i:i + 10]
        cur.execute(f"INSERT INTO {t} VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(chunk)),
                    *[v for row in chunk for v in row])
    return t, values


FETCH_SHAPES = {
    "fetchall": lambda cur: cur.fetchall(),
    "fetchone": lambda cur: list(iter(cur.fetchone, None)),
    "fetchmany1": lambda cur: [r for b in iter(lambda: cur.fetchmany(1), []) for r in b],
    "iterate": lambda cur: list(cur),
}


@pytest.mark.parametrize("shape", list(FETCH_SHAPES))
def test_lob_suffix_streamed_prefix_bound(conn, driver, lob_table, shape):
    t, values = lob_table
    cur = conn.cursor()

    def run():
        cur.execute(f"SELECT id, name, val, body, blob, tail FROM {t} ORDER BY id")
        return FETCH_SHAPES[shape](cur)

    rows, c = snapshot(run)
    assert [tuple(r) for r in rows] == values
    assert c["executes"] == 1
    assert c["plans_built"] == 1
    assert c["binds"] == PREFIX, c
    assert c["getdata_calls"] == ROWS * STREAMED, c
    # row array of one: one SQLFetch per row plus the one that says SQL_NO_DATA
    assert c["fetch_calls"] == ROWS + 1, c


def test_lob_costs_do_not_grow_per_row_beyond_getdata(conn, driver, lob_table):
    """Twice the rows: the same plans/binds/allocations, only fetches and SQLGetData scale
    (a fresh cursor each time, so neither run reuses the other's buffers)."""
    t, _ = lob_table
    per = {}
    for n in (10, 20):
        cur = conn.cursor()

        def run(n=n, cur=cur):
            cur.execute(f"SELECT TOP {n} id, name, val, body, blob, tail FROM {t} ORDER BY id")
            return [r for b in iter(lambda: cur.fetchmany(1), []) for r in b]
        rows, per[n] = snapshot(run)
        assert len(rows) == n
    a, b = per[10], per[20]
    assert a["plans_built"] == b["plans_built"] == 1
    assert a["binds"] == b["binds"]
    assert a["buffer_allocs"] == b["buffer_allocs"]
    assert b["getdata_calls"] - a["getdata_calls"] == 10 * STREAMED
    assert b["fetch_calls"] - a["fetch_calls"] == 10


def test_synthetic_lob_shape(conn, driver):
    """peer.lob_nvarcharmax_4k_50: id bound, body (4 KiB of text) streamed in one call per row."""
    cur = conn.cursor()

    def run():
        cur.execute("SELECT * FROM peer.lob_nvarcharmax_4k_50")
        return [r for b in iter(lambda: cur.fetchmany(1), []) for r in b]

    rows, c = snapshot(run)
    assert [tuple(r) for r in rows] == list(synthetic.rows("lob_nvarcharmax_4k", 50))
    assert c["plans_built"] == 1 and c["binds"] == 1
    assert c["getdata_calls"] == 50
    assert c["fetch_calls"] == 51


def test_big_lob_is_read_in_few_chunks(conn, driver):
    """A 4 MiB varbinary(max) cell: the driver announces the total after the first chunk, so the
    rest comes in one more call (not one per 32 KiB)."""
    cur = conn.cursor()

    def run():
        cur.execute("SELECT * FROM peer.lob_varbinarymax_4096k_2")
        return cur.fetchall()

    rows, c = snapshot(run)
    assert [tuple(r) for r in rows] == list(synthetic.rows("lob_varbinarymax_4096k", 2))
    assert c["getdata_calls"] <= 2 * 3, c


@pytest.mark.parametrize("shape", ["fetchmany1", "fetchone", "fetchall"])
def test_bounded_result_in_blocks(conn, driver, shape):
    """int_nvarchar_10000 without LOBs: rows come in blocks whatever the fetch shape:
    fetchmany(1) over all 10,000 rows makes at most 6 driver fetches and builds 1 plan."""
    cur = conn.cursor()

    def run():
        cur.execute("SELECT * FROM peer.int_nvarchar_10000")
        return FETCH_SHAPES[shape](cur)

    rows, c = snapshot(run)
    assert len(rows) == 10000
    assert tuple(rows[9999]) == synthetic.row("int_nvarchar", 9999)
    assert c["fetch_calls"] <= 6, c
    assert c["plans_built"] == 1
    assert c["getdata_calls"] == 0


def test_wide_rows_are_fetched_ahead_from_the_third_array(conn, driver):
    """32 columns: the 256-row array holds 8,192 cells, so every array after it is fetched on
    the prefetch thread; only the first two are fetched in line, and the closing SQL_NO_DATA
    when the array before it came back short (Driver 18 here; FreeTDS's last array is full)."""
    cur = conn.cursor()
    ferrodbc.reset_counters()
    rows = cur.execute("SELECT * FROM peer.wide32_10000").fetchall()
    c = ferrodbc.counters()
    assert len(rows) == 10_000
    assert tuple(rows[9999]) == synthetic.row("wide32", 9999)
    assert c["fetch_calls"] - 3 <= c["prefetches"] <= c["fetch_calls"] - 2, c
    assert c["prefetches"] >= 4, c



def test_arrow_fetch_of_wide_rows_fetches_in_line(conn, driver):
    """The same 10,000 x 32 result read as Arrow: no array is fetched ahead (Arrow's conversion
    is too small a share of the driver's work for the overlap to pay), and the values are the
    generator's."""
    pa = pytest.importorskip("pyarrow")
    cur = conn.cursor()
    ferrodbc.reset_counters()
    table = pa.table(cur.execute("SELECT * FROM peer.wide32_10000").fetch_arrow_table())
    c = ferrodbc.counters()
    assert table.num_rows == 10_000
    assert tuple(table.slice(9999).to_pylist()[0].values()) == synthetic.row("wide32", 9999)
    assert c["prefetches"] == 0, c
    assert c["fetch_calls"] >= 5 and c["getdata_calls"] == 0, c


def test_reexecute_reuses_buffers(conn, driver):
    """The same query again on the same cursor allocates nothing once the pair of row arrays
    has settled (the first run grows the array, the second gives the grown array its twin for
    the prefetch). Binds: one SQLBindCol per column when the prefetch swaps in the other batch
    of the pair after the full 8,192-row array; the 1,808 rows after it come back short."""
    cur = conn.cursor()
    cur.execute("SELECT * FROM peer.int_nvarchar_10000")
    first = cur.fetchall()
    cur.execute("SELECT * FROM peer.int_nvarchar_10000").fetchall()

    def run():
        cur.execute("SELECT * FROM peer.int_nvarchar_10000")
        return cur.fetchall()

    again, c = snapshot(run)
    assert [tuple(r) for r in again] == [tuple(r) for r in first]
    assert c["binds"] == len(first[0]), c
    assert c["buffer_allocs"] == 0, c
    assert c["executes"] == 1
    assert c["getdata_calls"] == 0


def test_reexecute_lob_query_reuses_buffers(conn, driver, lob_table):
    t, values = lob_table
    cur = conn.cursor()
    q = f"SELECT id, name, val, body, blob, tail FROM {t} ORDER BY id"
    cur.execute(q).fetchall()

    def run():
        cur.execute(q)
        return cur.fetchall()

    rows, c = snapshot(run)
    assert [tuple(r) for r in rows] == values
    assert c["binds"] == 0, c
    assert c["getdata_calls"] == ROWS * STREAMED


def test_fetchval_builds_no_rows(conn, driver):
    cur = conn.cursor()
    _, c = snapshot(lambda: cur.execute("SELECT TOP 1 id, name FROM peer.int_nvarchar_100").fetchval())
    assert c["plans_built"] == 1 and c["executes"] == 1 and c["getdata_calls"] == 0


def test_executemany_is_one_execute(conn, driver):
    """executemany sends one parameter array: one SQLExecute for 500 rows, not 500."""
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, name NVARCHAR(20))")
    _, c = snapshot(lambda: cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(i, f"n{i}") for i in range(500)]))
    assert c["executes"] == 1, c
    assert cur.execute(f"SELECT COUNT(*) FROM {t}").fetchval() == 500


def test_long_executemany_is_cut_into_requests(conn, driver):
    """A parameter array whose request would pass the engine's 16 MiB budget goes as several
    requests (a million narrow rows made one of over 256 MiB, more than SQL Server takes);
    every row arrives once, in order, and rowcount is the total."""
    cur = conn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, body NVARCHAR(MAX))")
    rows = [(i, chr(0x41 + i) * (1 << 20)) for i in range(20)]  # 2 MiB of UTF-16 each
    _, c = snapshot(lambda: cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", rows))
    assert c["executes"] == 3, c  # 7 + 7 + 6 rows
    assert cur.rowcount == 20
    got = cur.execute(f"SELECT id, LEN(body), LEFT(body, 1) FROM {t} ORDER BY id").fetchall()
    assert [tuple(r) for r in got] == [(i, 1 << 20, chr(0x41 + i)) for i in range(20)]


def test_reused_plan_never_serves_stale_metadata(conn, driver):
    """The same cursor re-executing differently named / sized / scaled result sets, and the same
    query around converter and native_uuid changes: names, description and values follow."""
    import uuid

    cur = conn.cursor()
    r1 = cur.execute("SELECT 1 AS a, N'x' AS b").fetchone()
    r2 = cur.execute("SELECT 2 AS c, N'y' AS d").fetchone()
    assert r1._fields == ("a", "b") and r2._fields == ("c", "d") and r2.c == 2
    assert [d[0] for d in cur.description] == ["c", "d"]
    assert str(cur.execute("SELECT CAST(1.25 AS DECIMAL(10,2)) AS v").fetchval()) == "1.25"
    assert str(cur.execute("SELECT CAST(1.2345 AS DECIMAL(10,4)) AS v").fetchval()) == "1.2345"
    assert cur.description[0][4:6] == (10, 4)
    assert cur.execute("SELECT CAST(N'abc' AS NVARCHAR(3)) AS v").fetchval() == "abc"
    assert cur.execute("SELECT CAST(N'abcdefghij' AS NVARCHAR(10)) AS v").fetchval() == "abcdefghij"
    assert cur.description[0][3] == 10
    assert cur.execute("SELECT 5 AS n").fetchval() == 5
    conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda b: "converted")
    assert cur.execute("SELECT 5 AS n").fetchval() == "converted"
    conn.clear_output_converters()
    assert cur.execute("SELECT 5 AS n").fetchval() == 5
    q = "SELECT CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS UNIQUEIDENTIFIER)"
    conn.native_uuid = False
    assert cur.execute(q).fetchval() == "6F9619FF-8B86-D011-B42D-00C04FC964FF"
    conn.native_uuid = True
    assert cur.execute(q).fetchval() == uuid.UUID("6F9619FF-8B86-D011-B42D-00C04FC964FF")


@pytest.mark.parametrize("shape", ["lob_varbinarymax_71680k", "lob_nvarcharmax_71680k"])
def test_lob_over_64_mib_whole_in_two_calls(conn, driver, shape):
    """70 MiB cells (past any 64 MiB chunk cap), binary and text: whole, in 2 SQLGetData calls."""
    rows, c = snapshot(lambda: conn.cursor().execute(f"SELECT * FROM peer.{shape}_1").fetchall())
    assert tuple(rows[0]) == synthetic.row(shape, 0)
    assert c["getdata_calls"] == 2, c
