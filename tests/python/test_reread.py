"""Cells longer than their column's declared size, where the database stores them (SQLite).

SQLite's VARCHAR(n), BLOB and untyped columns are bound in the row array by their declared
size; a cell the bound buffer cut is fetched again alone and read whole with SQLGetData. These
tests put such cells everywhere a row array has an edge (first and last row of an array, of the
result, next to NULLs and empty strings, several in one row, in the arrays a background
prefetch fills) and check every value comes back whole with every fetch shape. Nothing may ever
come back cut: a value either arrives whole or raises.
"""

from __future__ import annotations

import pytest

import ferrodbc

# Row arrays grow 32 -> 256 -> 2048 -> 8192; the prefetch worker starts after a full 2048.
ARRAY_EDGES = [0, 1, 30, 31, 32, 33, 287, 288, 2335, 2336, 2337, 5000]


def read(cur, sql: str, shape: str) -> list[tuple]:
    cur.execute(sql)
    if shape == "fetchall":
        rows = cur.fetchall()
    elif shape == "fetchmany1":
        rows = []
        while batch := cur.fetchmany(1):
            rows.extend(batch)
    elif shape == "fetchmany7":
        rows = []
        while batch := cur.fetchmany(7):
            rows.extend(batch)
    elif shape == "iter":
        rows = list(cur)
    else:
        rows = []
        while (row := cur.fetchone()) is not None:
            rows.append(row)
    return [tuple(r) for r in rows]


SHAPES = ["fetchone", "fetchmany1", "fetchmany7", "fetchall", "iter"]


def fill(conn, ddl: str, rows: list[tuple]) -> None:
    cur = conn.cursor()
    cur.execute(ddl)
    marks = ", ".join("?" * len(rows[0]))
    name = ddl.split()[2]
    cur.executemany(f"INSERT INTO {name} VALUES ({marks})", rows)
    conn.commit()


def long_text(i: int) -> str:
    # Mixed widths: ASCII, 2-byte UTF-8, and astral characters (two UTF-16 units each).
    return f"{i}:" + "é😀x" * (40 + 997 * (i % 5))


@pytest.mark.parametrize("shape", SHAPES)
def test_long_cells_at_every_row_array_edge_come_back_whole(sqlite_conn, shape):
    total = 6000
    rows = [
        (i, long_text(i) if i in ARRAY_EDGES or i == total - 1 else f"short {i}")
        for i in range(total)
    ]
    fill(sqlite_conn, "CREATE TABLE edges (id INTEGER PRIMARY KEY, name VARCHAR(20))", rows)
    got = read(sqlite_conn.cursor(), "SELECT id, name FROM edges ORDER BY id", shape)
    assert got == rows


@pytest.mark.parametrize("shape", SHAPES)
def test_mixed_cells_in_one_array_nulls_empty_and_non_bmp(sqlite_conn, shape):
    """Every kind of cell next to each other in the first row array, two columns cut in the
    same row, and values filling the buffer exactly (astral characters count twice)."""
    values = [
        None,
        "",
        "a",
        "x" * 10,
        "x" * 11,
        "😀" * 10,  # 20 UTF-16 units: exactly the buffer of a VARCHAR(10)
        "😀" * 11,
        "é" * 10_000,
        None,
        "",
        # Plane 14; SQLite3 ODBC 0.9998 mangles plane 16 (U+10FFFF reads back as U+FFFF) on
        # every path, streamed included.
        "\U000e0001" * 3 + "z" * 50,
    ]
    rows = [(i, v, values[(i + 3) % len(values)], i * 2) for i, v in enumerate(values * 3)]
    fill(
        sqlite_conn,
        "CREATE TABLE cells (id INTEGER PRIMARY KEY, a VARCHAR(10), b NVARCHAR(5), n INTEGER)",
        rows,
    )
    got = read(sqlite_conn.cursor(), "SELECT id, a, b, n FROM cells ORDER BY id", shape)
    assert got == rows


@pytest.mark.parametrize("shape", SHAPES)
def test_binary_longer_than_declared_comes_back_whole(sqlite_conn, shape):
    blobs = [None, b"", b"\x00", b"\x01" * 4, b"\x02" * 5, bytes(range(256)) * 400, b"\x00" * 255]
    rows = [(i, blobs[i % len(blobs)], blobs[(i + 2) % len(blobs)]) for i in range(300)]
    fill(sqlite_conn, "CREATE TABLE bins (id INTEGER PRIMARY KEY, v VARBINARY(4), b BLOB)", rows)
    got = read(sqlite_conn.cursor(), "SELECT id, v, b FROM bins ORDER BY id", shape)
    assert got == rows


def test_untyped_and_default_sized_columns_hold_any_length(sqlite_conn):
    """SQLite describes an untyped column (and VARCHAR, CLOB) as VARCHAR(255)."""
    rows = [(i, "u" * (i * 37), "v" * (300 - i)) for i in range(300)]
    fill(sqlite_conn, "CREATE TABLE untyped (id INTEGER PRIMARY KEY, u, v VARCHAR)", rows)
    got = read(sqlite_conn.cursor(), "SELECT id, u, v FROM untyped ORDER BY id", "fetchall")
    assert got == rows


def test_a_cut_cell_before_a_streamed_column(sqlite_conn):
    """A TEXT column makes the row array one row long: the cut cell is read on the spot, then
    the streamed column after it."""
    rows = [(i, "n" * (i * 3), "body" * i) for i in range(40)]
    fill(sqlite_conn, "CREATE TABLE lob (id INTEGER PRIMARY KEY, name VARCHAR(8), body TEXT)", rows)
    got = read(sqlite_conn.cursor(), "SELECT id, name, body FROM lob ORDER BY id", "fetchall")
    assert got == rows


def test_reading_cut_cells_again_leaves_no_truncation_warning(sqlite_conn):
    fill(sqlite_conn, "CREATE TABLE warn (id INTEGER PRIMARY KEY, v VARCHAR(2))", [(1, "abcdef")])
    cur = sqlite_conn.cursor()
    assert cur.execute("SELECT v FROM warn").fetchall() == [("abcdef",)]
    assert cur.messages == []


def test_parameters_and_re_execution_keep_the_positions_right(sqlite_conn):
    """With parameters, and executed again on the same cursor (bound buffers reused), the
    re-fetch positions count from the start of each result."""
    rows = [(i, ("p" * 100 + str(i)) if i % 50 == 49 else str(i)) for i in range(1000)]
    fill(sqlite_conn, "CREATE TABLE params (id INTEGER PRIMARY KEY, v VARCHAR(3))", rows)
    cur = sqlite_conn.cursor()
    sql = "SELECT id, v FROM params WHERE id >= ? ORDER BY id"
    for start in (0, 49, 500, 0):
        assert [tuple(r) for r in cur.execute(sql, start).fetchall()] == rows[start:]


def test_forward_only_cursor_streams_instead(sqlite):
    """`StepAPI=1` gives forward-only cursors, which cannot go back to a row: such columns are
    then streamed row by row, and still whole."""
    conn = ferrodbc.connect(sqlite.variant(StepAPI="1"))
    try:
        cur = conn.cursor()
        cur.execute("CREATE TABLE fwd (id INTEGER PRIMARY KEY, v VARCHAR(3))")
        rows = [(i, "w" * (i % 7)) for i in range(100)]
        cur.executemany("INSERT INTO fwd VALUES (?, ?)", rows)
        conn.commit()
        ferrodbc.reset_counters()
        assert [tuple(r) for r in cur.execute("SELECT id, v FROM fwd ORDER BY id")] == rows
        c = ferrodbc.counters()
        assert c["getdata_calls"] >= len(rows), c
    finally:
        conn.close()


@pytest.mark.parametrize("shape", SHAPES)
def test_values_up_to_the_declared_length_on_every_peer(peer, conn, table, shape):
    """Where the database enforces the length (PostgreSQL) the same values fit as declared."""
    values = [None, "", "a", "é" * 20, "😀" * 20, "x" * 19, None]
    rows = [(i, values[i % len(values)]) for i in range(500)]
    fill(conn, f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, v VARCHAR(20))", rows)
    got = read(conn.cursor(), f"SELECT id, v FROM {table} ORDER BY id", shape)
    assert got == rows


@pytest.mark.parametrize("shape", SHAPES)
def test_a_column_routinely_longer_than_declared_is_bound_for_what_it_holds(sqlite_conn, shape):
    """2,000 characters in every cell of a VARCHAR(10): after the first row array (every cell
    re-read) the column is bound for 2,048 units, so the rest costs row arrays, not re-reads."""
    rows = [(i, f"{i:05d}" + "q" * 1995) for i in range(3000)]
    fill(sqlite_conn, "CREATE TABLE routine (id INTEGER PRIMARY KEY, v VARCHAR(10))", rows)
    ferrodbc.reset_counters()
    got = read(sqlite_conn.cursor(), "SELECT id, v FROM routine ORDER BY id", shape)
    c = ferrodbc.counters()
    assert got == rows
    assert c["getdata_calls"] <= 32, c  # the cells of the first 32-row array only
    assert c["fetch_calls"] <= 60, c  # 32 re-fetches, then ~4 KB rows in 512-row arrays


def test_a_column_beyond_the_bound_limit_is_streamed_after_the_first_array(sqlite_conn):
    """20,000 characters in every cell: too wide to bind, so after the first row array the
    column is streamed, as it was before cut cells were re-read."""
    rows = [(i, "z" * 20_000 + str(i)) for i in range(300)]
    fill(sqlite_conn, "CREATE TABLE wide (id INTEGER PRIMARY KEY, v VARCHAR(10), n INTEGER)",
         [(i, v, i) for i, v in rows])
    ferrodbc.reset_counters()
    got = read(sqlite_conn.cursor(), "SELECT id, v, n FROM wide ORDER BY id", "fetchall")
    c = ferrodbc.counters()
    assert got == [(i, v, i) for i, v in rows]
    # One fetch per streamed row plus the first array's 32 re-fetches, never more.
    assert c["fetch_calls"] <= len(rows) + 40, c


@pytest.mark.parametrize("shape", SHAPES)
def test_relayout_in_the_middle_of_a_result_and_re_execution(sqlite_conn, shape):
    """Short values for 3,000 rows, then only long ones: the layout changes mid-result (after
    the prefetched arrays have started), and the next execute starts from the declared size."""
    rows = [(i, f"s{i}" if i < 3000 else "L" * (300 + i % 700)) for i in range(6000)]
    fill(sqlite_conn, "CREATE TABLE midway (id INTEGER PRIMARY KEY, v VARCHAR(10))", rows)
    cur = sqlite_conn.cursor()
    for _ in range(2):
        assert read(cur, "SELECT id, v FROM midway ORDER BY id", shape) == rows
    assert read(cur, "SELECT id, v FROM midway WHERE id < 100 ORDER BY id", shape) == rows[:100]
