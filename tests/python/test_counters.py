"""The engine's path counters prove which path ran: block fetches into bound buffers (few driver
calls, growing row arrays 32 → 256 → 2048 → 8192, the end confirmed by one SQL_NO_DATA fetch),
one plan per result set, buffers reused on re-execute, SQLGetData only for unbounded columns.

Text with a declared length is bound on every peer, SQLite included (SQLite does not enforce the
length: the few cells longer than declared are read again whole, see test_reread.py). Unbounded
text (TEXT) is streamed with SQLGetData, one row per fetch.
"""

from __future__ import annotations

import math

import pytest

import ferrodbc

ROWS = 10_000
FIRST_BATCH_ROWS = 32


def delta(before: dict[str, int]) -> dict[str, int]:
    after = ferrodbc.counters()
    return {k: after[k] - before.get(k, 0) for k in after}


@pytest.fixture
def ints(conn, table):
    """`table` with ids 0..ROWS-1 and their doubles, integer columns only, committed."""
    conn.cursor().execute(f"CREATE TABLE {table} (id INTEGER, twice BIGINT)")
    conn.cursor().executemany(
        f"INSERT INTO {table} (id, twice) VALUES (?, ?)", [(i, 2 * i) for i in range(ROWS)]
    )
    conn.commit()
    return table


def test_counters_report_every_path_counter_and_reset_to_zero():
    names = {"fetch_calls", "getdata_calls", "plans_built", "binds", "buffer_allocs", "executes", "connects",
             "pinned_batches", "pool_checks", "prefetches", "bulk_bcp_loads", "bulk_array_loads"}
    assert set(ferrodbc.counters()) == names
    ferrodbc.reset_counters()
    assert all(v == 0 for v in ferrodbc.counters().values())


def test_fetchmany_1_over_10000_rows_builds_one_plan_and_few_block_fetches(conn, ints):
    """fetchmany(1) is served from the row array: the driver is called per block, not per row."""
    cur = conn.cursor()
    ferrodbc.reset_counters()
    cur.execute(f"SELECT id, twice FROM {ints} ORDER BY id")
    got = []
    while rows := cur.fetchmany(1):
        assert len(rows) == 1
        got.append(rows[0][0])
    c = ferrodbc.counters()
    assert got == list(range(ROWS))
    assert c["plans_built"] == 1
    assert c["executes"] == 1
    assert c["getdata_calls"] == 0
    assert c["fetch_calls"] <= math.ceil(ROWS / FIRST_BATCH_ROWS) + 1
    # 32 + 256 + 2048 + 8192 rows cover 10,000: four row arrays (the last one short), then one
    # SQLFetch that answers SQL_NO_DATA.
    assert c["fetch_calls"] <= 6, c


def test_fetchall_of_10000_int_rows_uses_a_handful_of_fetches(conn, ints):
    cur = conn.cursor()
    ferrodbc.reset_counters()
    rows = cur.execute(f"SELECT id, twice FROM {ints} ORDER BY id").fetchall()
    c = ferrodbc.counters()
    assert len(rows) == ROWS
    assert rows[0] == (0, 0) and rows[-1] == (ROWS - 1, 2 * (ROWS - 1))
    assert c["plans_built"] == 1
    assert c["getdata_calls"] == 0
    assert c["fetch_calls"] <= 6, c
    assert c["binds"] >= 2, "both columns are bound"
    # Arrays of 32 and 256 rows are fetched in line (2 columns: prefetch starts at 8,192 cells),
    # the 2,048-row array starts the prefetch of the next two (4,096 full, then 3,568 rows);
    # the end (SQL_NO_DATA after a short array) is fetched in line.
    assert c["prefetches"] == 2, c


def test_prefetch_starts_by_cells_not_rows(conn, table):
    """32 columns reach 8,192 cells at 256 rows: the array after it is fetched ahead already."""
    cols = ", ".join(f"c{k} INTEGER" for k in range(32))
    conn.cursor().execute(f"CREATE TABLE {table} ({cols})")
    conn.cursor().executemany(
        f"INSERT INTO {table} VALUES ({', '.join('?' * 32)})", [tuple(range(i, i + 32)) for i in range(1000)]
    )
    conn.commit()
    cur = conn.cursor()
    ferrodbc.reset_counters()
    rows = cur.execute(f"SELECT * FROM {table} ORDER BY c0").fetchall()
    c = ferrodbc.counters()
    assert [tuple(r) for r in rows] == [tuple(range(i, i + 32)) for i in range(1000)]
    # 32 (in line), 256 (in line, full: 8,192 cells), then 712 rows fetched ahead into a
    # 2,048-row array, then SQL_NO_DATA in line.
    assert (c["fetch_calls"], c["prefetches"]) == (4, 1), c



def test_arrow_fetch_reads_in_line_and_the_next_result_set_prefetches_again(conn, table):
    """Arrow's conversion is a small share of a fetch: it never fetches ahead (the row source's
    per-consumer choice), and the choice ends with the result set: the same query read as rows
    afterwards is fetched ahead as in the test above."""
    pa = pytest.importorskip("pyarrow")
    cols = ", ".join(f"c{k} INTEGER" for k in range(32))
    conn.cursor().execute(f"CREATE TABLE {table} ({cols})")
    values = [tuple(range(i, i + 32)) for i in range(1000)]
    conn.cursor().executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * 32)})", values)
    conn.commit()
    cur = conn.cursor()
    sql = f"SELECT * FROM {table} ORDER BY c0"
    ferrodbc.reset_counters()
    arrow = pa.table(cur.execute(sql).fetch_arrow_table())
    c = ferrodbc.counters()
    assert arrow.column("c31").to_pylist() == [v[31] for v in values]
    assert (c["fetch_calls"], c["prefetches"]) == (4, 0), c
    # One more column, so the cursor lays out new buffers and grows them from 32 rows again.
    ferrodbc.reset_counters()
    rows = cur.execute(f"SELECT *, c0 AS again FROM {table} ORDER BY c0").fetchall()
    c = ferrodbc.counters()
    assert [tuple(r) for r in rows] == [v + (v[0],) for v in values]
    assert (c["fetch_calls"], c["prefetches"]) == (4, 1), c


def test_re_executing_the_same_select_reuses_the_bound_buffers(conn, ints):
    """A new plan per run (the result set could differ), but no new buffers once the pair of
    row arrays has settled: the first run grows the array to 8,192 rows, the second gives the
    grown array its twin (the other batch of the prefetch pair), and from then on a run only
    rebinds: one SQLBindCol per column when the prefetch swaps in the other batch after the
    full 8,192-row array (the 1,808 rows after it come back short, and nothing is prefetched)."""
    cur = conn.cursor()
    sql = f"SELECT id, twice FROM {ints} ORDER BY id"
    first = cur.execute(sql).fetchall()
    cur.execute(sql).fetchall()
    before = ferrodbc.counters()
    third = cur.execute(sql).fetchall()
    d = delta(before)
    assert third == first and len(third) == ROWS
    assert d["plans_built"] == 1
    assert d["buffer_allocs"] == 0, d
    assert d["binds"] == 2, d
    assert d["executes"] == 1


def test_re_executing_with_parameters_reuses_the_bound_buffers(conn, ints):
    cur = conn.cursor()
    sql = f"SELECT id, twice FROM {ints} WHERE id >= ? ORDER BY id"
    assert len(cur.execute(sql, 0).fetchall()) == ROWS
    before = ferrodbc.counters()
    rows = cur.execute(sql, ROWS - 5).fetchall()
    d = delta(before)
    assert [r[0] for r in rows] == list(range(ROWS - 5, ROWS))
    assert (d["binds"], d["buffer_allocs"], d["plans_built"]) == (0, 0, 1), d


def test_a_short_row_array_is_confirmed_by_one_more_fetch(conn, ints):
    """A short array is not taken as the end: SQL Server's Driver 18 returns the rows before a
    mid-stream error as a short, successful array and reports the error on the next SQLFetch.
    So 10 rows cost two driver calls (the array, then SQL_NO_DATA), never more."""
    cur = conn.cursor()
    ferrodbc.reset_counters()
    rows = cur.execute(f"SELECT id FROM {ints} WHERE id < 10").fetchall()
    assert len(rows) == 10
    assert ferrodbc.counters()["fetch_calls"] == 2


def test_a_full_row_array_needs_one_more_fetch_to_see_the_end(conn, ints):
    cur = conn.cursor()
    ferrodbc.reset_counters()
    rows = cur.execute(f"SELECT id FROM {ints} WHERE id < {FIRST_BATCH_ROWS}").fetchall()
    assert len(rows) == FIRST_BATCH_ROWS
    assert ferrodbc.counters()["fetch_calls"] == 2


def test_fetchone_of_a_single_row_result_does_not_fetch_ahead(conn, ints):
    """Taking the first row only needs the first array; the end is checked when asked for."""
    cur = conn.cursor()
    ferrodbc.reset_counters()
    cur.execute(f"SELECT id FROM {ints} WHERE id = 7")
    assert cur.fetchone() == (7,)
    assert ferrodbc.counters()["fetch_calls"] == 1
    assert cur.fetchone() is None
    assert ferrodbc.counters()["fetch_calls"] == 2


def test_an_empty_result_costs_one_fetch(conn, ints):
    cur = conn.cursor()
    ferrodbc.reset_counters()
    assert cur.execute(f"SELECT id FROM {ints} WHERE id < 0").fetchall() == []
    assert cur.fetchall() == []
    assert ferrodbc.counters()["fetch_calls"] == 1


def test_bounded_columns_never_use_sqlgetdata_on_postgres(pg_conn):
    """Every fixed-size and bounded type is bound in the row array."""
    cur = pg_conn.cursor()
    ferrodbc.reset_counters()
    rows = cur.execute(
        "SELECT i, CAST(i AS bigint) * 3, CAST(i AS smallint), CAST(i AS float8) / 4, "
        "CAST(i AS real), CAST(i AS numeric(12,2)), CAST(('v' || i) AS varchar(20)), "
        "i % 2 = 0, DATE '2020-01-01' + i, TIMESTAMP '2020-01-01 00:00:00.5' + i * INTERVAL '1 second', "
        "CAST(md5(CAST(i AS text)) AS uuid), CAST(NULL AS integer) "
        "FROM generate_series(1, 3000) AS s(i)"
    ).fetchall()
    c = ferrodbc.counters()
    assert len(rows) == 3000
    assert rows[9][6] == "v10" and rows[9][3] == 2.5
    assert c["getdata_calls"] == 0, c
    assert c["fetch_calls"] <= 5, c  # arrays of 32, 256, 2048, 8192 (short), then SQL_NO_DATA


def test_text_columns_are_streamed_with_sqlgetdata_and_come_back_whole(conn, table):
    """TEXT is unbounded (LONGVARCHAR): one row per fetch, each value read whole by SQLGetData."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, body TEXT)")
    sizes = [0, 1, 8190, 8191, 40_000, 70_001, 300_000]
    values = [("é" * (n % 3) + "x" * n)[:n] for n in sizes]
    for i, v in enumerate(values):
        cur.execute(f"INSERT INTO {table} (id, body) VALUES (?, ?)", i, v)
    conn.commit()
    ferrodbc.reset_counters()
    rows = conn.cursor().execute(f"SELECT id, body FROM {table} ORDER BY id").fetchall()
    c = ferrodbc.counters()
    assert [r[1] for r in rows] == values
    assert [len(r[1]) for r in rows] == sizes
    assert c["getdata_calls"] >= len(values), c
    assert c["fetch_calls"] >= len(values), "the streamed path fetches one row at a time"


def test_pg_unbounded_varchar_is_streamed_whole(pg_conn):
    """`varchar` without a length has no bound PostgreSQL enforces: it must not be cut."""
    cur = pg_conn.cursor()
    ferrodbc.reset_counters()
    value = cur.execute("SELECT CAST(repeat('ab', 50000) AS varchar)").fetchval()
    assert value == "ab" * 50000
    assert ferrodbc.counters()["getdata_calls"] > 0


def test_wide_rows_stay_bound_within_the_byte_budget_and_come_back_whole(pg_conn):
    """Two varchar(4000) columns filled with astral characters (8,000 UTF-16 units each, the
    most a bound text column holds) are still bound, the row array growth stops at the 2 MiB
    budget (65 rows of 32 KB here), and every value arrives whole."""
    cur = pg_conn.cursor()
    ferrodbc.reset_counters()
    rows = cur.execute(
        "SELECT i, CAST(repeat(chr(128512), 4000) AS varchar(4000)) AS full_astral, "
        "CAST(repeat('x', i % 4000) AS varchar(4000)) AS ragged "
        "FROM generate_series(1, 1500) AS s(i)"
    ).fetchall()
    c = ferrodbc.counters()
    assert len(rows) == 1500
    assert all(r.full_astral == "😀" * 4000 for r in rows)
    assert all(r.ragged == "x" * (r.i % 4000) for r in rows)
    assert c["getdata_calls"] == 0, c
    # Row arrays of 32, then 22 of 65, one of 38, then SQL_NO_DATA.
    assert c["fetch_calls"] <= 25, c


@pytest.fixture
def names(conn, table):
    """`table` (id INTEGER PRIMARY KEY, name VARCHAR(50)) with ROWS short names, committed."""
    conn.cursor().execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name VARCHAR(50))")
    conn.cursor().executemany(
        f"INSERT INTO {table} (id, name) VALUES (?, ?)", [(i, f"name {i}") for i in range(ROWS)]
    )
    conn.commit()
    return table


def drain(cur, shape: str) -> list[tuple]:
    """Every row of the cursor's result, read with one fetch shape."""
    rows = []
    if shape == "fetchall":
        rows = cur.fetchall()
    elif shape == "fetchmany1":
        while batch := cur.fetchmany(1):
            rows.extend(batch)
    else:
        while (row := cur.fetchone()) is not None:
            rows.append(row)
    return [tuple(r) for r in rows]


@pytest.mark.parametrize("shape", ["fetchone", "fetchmany1", "fetchall"])
def test_bounded_text_is_fetched_in_row_arrays_on_every_peer(conn, names, shape):
    """VARCHAR(50) stays on the block path: 10,000 rows cost the handful of row arrays integers
    cost, and no SQLGetData. (On SQLite it was 10,001 fetches and 10,000 SQLGetData calls.)"""
    cur = conn.cursor()
    ferrodbc.reset_counters()
    cur.execute(f"SELECT id, name FROM {names} ORDER BY id")
    rows = drain(cur, shape)
    c = ferrodbc.counters()
    assert rows == [(i, f"name {i}") for i in range(ROWS)]
    assert c["getdata_calls"] == 0, c
    assert c["binds"] >= 2, c
    # 32 + 256 + 2048 + 8192 rows, then SQL_NO_DATA.
    assert c["fetch_calls"] <= 6, c


def test_re_executing_a_bounded_text_select_stays_bound(conn, names):
    cur = conn.cursor()
    sql = f"SELECT id, name FROM {names} ORDER BY id"
    first = cur.execute(sql).fetchall()
    cur.execute(sql).fetchall()
    ferrodbc.reset_counters()
    third = cur.execute(sql).fetchall()
    c = ferrodbc.counters()
    assert third == first and len(third) == ROWS
    # No re-layout and no LOB path: the only binds are the prefetch's swap to the other batch
    # of the pair after the full 8,192-row array (see the test above), one per column.
    assert (c["binds"], c["buffer_allocs"], c["getdata_calls"]) == (2, 0, 0), c
    assert c["fetch_calls"] <= 6, c


def test_sqlite_binary_with_a_declared_size_is_fetched_in_row_arrays(sqlite_conn):
    """BLOB (described as BINARY(255)) and VARBINARY(16) are bound too."""
    cur = sqlite_conn.cursor()
    cur.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, b BLOB, v VARBINARY(16))")
    values = [(i, i.to_bytes(4, "little") * 8, bytes([i % 256]) * (i % 17)) for i in range(ROWS)]
    cur.executemany("INSERT INTO blobs (id, b, v) VALUES (?, ?, ?)", values)
    sqlite_conn.commit()
    ferrodbc.reset_counters()
    rows = cur.execute("SELECT id, b, v FROM blobs ORDER BY id").fetchall()
    c = ferrodbc.counters()
    assert [tuple(r) for r in rows] == values
    assert c["getdata_calls"] == 0, c
    assert c["fetch_calls"] <= 6, c


def test_sqlite_cells_longer_than_declared_cost_a_fetch_each_not_the_whole_result(sqlite_conn):
    """Five 1,000-character names among 10,000 in a VARCHAR(50): the first ones are fetched
    again alone, then the column is bound for 1,024 units; the rows stay in row arrays."""
    cur = sqlite_conn.cursor()
    cur.execute("CREATE TABLE mixed (id INTEGER PRIMARY KEY, name VARCHAR(50))")
    long_ids = {0, 31, 32, 5000, ROWS - 1}
    values = [(i, ("x" * 1000 + str(i)) if i in long_ids else f"n{i}") for i in range(ROWS)]
    cur.executemany("INSERT INTO mixed (id, name) VALUES (?, ?)", values)
    sqlite_conn.commit()
    ferrodbc.reset_counters()
    rows = cur.execute("SELECT id, name FROM mixed ORDER BY id").fetchall()
    c = ferrodbc.counters()
    assert [tuple(r) for r in rows] == values
    # Rows 0 and 31 (the first 32-row array) are re-read; then ~2 KB rows in arrays of up to
    # 1,024 rows hold every other name whole.
    assert c["getdata_calls"] == 2, c
    assert c["fetch_calls"] <= 30, c


def test_pg_bounded_text_stays_bound_after_long_text_and_a_failed_statement(pg_conn, pg_table):
    """Once seen on psqlODBC (not reproduced): after 1,000,000-character TEXT values read with
    every fetch shape and a failed statement rolled back, the second execute of a VARCHAR(50)
    query took 10,001 fetches and 10,000 SQLGetData. Nothing of the earlier result sets may
    survive into its plan or buffers. (Those exact counts do come from a connection with
    psqlODBC's MaxVarcharSize=0, which describes every varchar(n) as SQL_WLONGVARCHAR: an
    option, not state; eng/peers/postgres.sh sets MaxVarcharSize=10485760.)"""
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (id INTEGER PRIMARY KEY, name VARCHAR(50), body TEXT)")
    cur.executemany(
        f"INSERT INTO {pg_table} (id, name, body) VALUES (?, ?, ?)",
        [(i, f"name {i}", "b" * 1_000_000 if i < 3 else None) for i in range(ROWS)],
    )
    pg_conn.commit()
    lob = f"SELECT id, body FROM {pg_table} WHERE id < 3 ORDER BY id"
    for shape in ("fetchone", "fetchmany1", "fetchall"):
        cur.execute(lob)
        assert [len(r[1]) for r in drain(cur, shape)] == [1_000_000] * 3
    assert cur.execute(f"SELECT body FROM {pg_table} WHERE id = 1").fetchval() == "b" * 1_000_000
    assert sum(len(r[1]) for r in cur.execute(lob)) == 3_000_000
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.execute("SELECT no_such_column FROM " + pg_table)
    pg_conn.rollback()
    sql = f"SELECT id, name FROM {pg_table} ORDER BY id"
    for run in ("first", "second"):
        ferrodbc.reset_counters()
        rows = cur.execute(sql).fetchall()
        c = ferrodbc.counters()
        assert len(rows) == ROWS and rows[-1] == (ROWS - 1, f"name {ROWS - 1}")
        assert c["getdata_calls"] == 0, (run, c)
        assert c["fetch_calls"] <= 6, (run, c)


def test_pg_varchar_described_as_long_varchar_stays_bound(pg, pg_conn, pg_table):
    """psqlODBC's MaxVarcharSize=0 describes varchar(n) as SQL_WLONGVARCHAR of size n: the exact
    10,001 fetches / 10,000 SQLGetData once seen on PostgreSQL. PostgreSQL enforces n, so the
    column is bound in row arrays by n like any varchar(n)."""
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (id INTEGER PRIMARY KEY, name VARCHAR(50))")
    cur.executemany(f"INSERT INTO {pg_table} VALUES (?, ?)", [(i, f"name {i} 😀") for i in range(ROWS)])
    pg_conn.commit()
    connstr = ";".join(p for p in pg.connstr.split(";") if not p.lower().startswith("maxvarcharsize="))
    other = ferrodbc.connect(connstr + ";MaxVarcharSize=0", autocommit=True, pooling=False)
    try:
        ferrodbc.reset_counters()
        rows = other.cursor().execute(f"SELECT id, name FROM {pg_table} ORDER BY id").fetchall()
        c = ferrodbc.counters()
    finally:
        other.close()
    assert [tuple(r) for r in rows] == [(i, f"name {i} 😀") for i in range(ROWS)]
    assert c["getdata_calls"] == 0, c
    assert c["fetch_calls"] <= 6, c
