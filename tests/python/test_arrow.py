"""Arrow fetch (``fetch_arrow_table`` / ``fetch_record_batch``) on SQLite and PostgreSQL: the
same values as the rows of the same query, NULLs as validity, batch boundaries, the capsule read
by pyarrow and polars, refusals (converters, unmapped types) and errors mid-stream raised.

The SQL Server types and edges are in tests/sqlserver/test_sqlserver_arrow.py.
"""

from __future__ import annotations

import datetime as dt
import math
import subprocess
import sys
import uuid
from decimal import Decimal

import polars as pl
import pyarrow as pa
import pytest

import ferrodbc

ROWS = 10_000

# One row per case; None rows give NULL in every column.
VALUES = {
    "smallint": [-(2**15), 2**15 - 1, 0],
    "int": [-(2**31), 2**31 - 1, 7],
    "bigint": [-(2**63), 2**63 - 1, 2**53 + 1],
    "real": [1.5, -0.25, 3.0],
    "float": [1 / 3, -1e300, 0.0],
    "decimal": [Decimal("9999999999999999999999999999.9999999999"),
                Decimal("-9999999999999999999999999999.9999999999"), Decimal("0.0000000001")],
    "varchar": ["", "a😀b", "é" * 50],
    "text": ["", "𝄞" * 3000, "x"],
    "bytes": [b"", b"\x00\xff" * 1000, b"z"],
    "date": [dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(2024, 2, 29)],
    "time": [dt.time(0), dt.time(23, 59, 59), dt.time(12, 34, 56)],
    "timestamp": [dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
                  dt.datetime(2024, 1, 2, 3, 4, 5, 123456)],
}


def same_value(a, r) -> bool:
    """Arrow value == row value, with the same Python type (Decimal stays Decimal)."""
    if a is None or r is None:
        return a is None and r is None
    if isinstance(r, float) and math.isnan(r):
        return math.isnan(a)
    return type(a) is type(r) and a == r


def assert_table_equals_rows(table: pa.Table, rows: list) -> None:
    assert table.num_rows == len(rows)
    for i, name in enumerate(table.column_names):
        for n, (a, r) in enumerate(zip(table.column(i).to_pylist(), (row[i] for row in rows))):
            assert same_value(a, r), f"{name} row {n}: arrow {a!r} != row {r!r}"


def block_fetches(rows: int, cap: int = 8192) -> int:
    """Row arrays needed for `rows` rows as the row source grows them (32, x8 up to 2,048,
    then x2 up to `cap`)."""
    size, covered, n = 32, 0, 0
    while covered < rows:
        covered += size
        n += 1
        size = min(size * 8 if size < 2048 else size * 2, cap)
    return n


def arrow_and_rows(conn, sql: str, *params):
    rows = conn.cursor().execute(sql, *params).fetchall()
    return pa.table(conn.cursor().execute(sql, *params).fetch_arrow_table()), rows


@pytest.fixture
def ints(conn, table):
    conn.cursor().execute(f"CREATE TABLE {table} (id INTEGER, twice BIGINT, label VARCHAR(20))")
    conn.cursor().executemany(
        f"INSERT INTO {table} (id, twice, label) VALUES (?, ?, ?)",
        [(i, 2 * i, None if i % 5 == 0 else f"L{i}") for i in range(ROWS)],
    )
    conn.commit()
    return table


def test_every_type_equals_the_rows_nulls_included(peer, conn, table):
    kinds = [k for k in VALUES if k in peer.types]
    cols = ", ".join(f"c_{k} {peer.types[k]}" for k in kinds)
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, {cols})")
    marks = ", ".join("?" for _ in range(len(kinds) + 1))
    for i in range(3):
        cur.execute(f"INSERT INTO {table} VALUES ({marks})", i, *(VALUES[k][i] for k in kinds))
    cur.execute(f"INSERT INTO {table} (id) VALUES (3)")
    conn.commit()
    tbl, rows = arrow_and_rows(conn, f"SELECT * FROM {table} ORDER BY id")
    assert_table_equals_rows(tbl, rows)
    assert all(tbl.column(c)[3].is_valid is False for c in range(1, tbl.num_columns))
    if peer.is_pg:
        # text-bound numerics (psqlODBC) parsed exactly into decimal128, never through a float
        assert tbl.schema.field("c_decimal").type == pa.decimal128(38, 10)
        assert tbl.column("c_decimal").to_pylist()[:3] == VALUES["decimal"]
        assert tbl.schema.field("c_timestamp").type == pa.timestamp("us")
        assert tbl.schema.field("c_date").type == pa.date32()
    assert tbl.column("c_int").type == pa.int32() and tbl.column("c_bigint").type == pa.int64()


def test_uuid_is_fixed_size_binary_with_the_arrow_uuid_extension(pg_conn):
    u = uuid.UUID("6f9619ff-8b86-d011-b42d-00c04fc964ff")
    tbl, rows = arrow_and_rows(pg_conn, f"SELECT '{u}'::uuid AS g, NULL::uuid AS n")
    assert tbl.schema.field("g").type == pa.uuid()
    assert tbl.column("g").to_pylist() == [u] and rows[0][0] == u
    assert tbl.column("g").chunk(0).storage.to_pylist() == [u.bytes], "RFC 4122 byte order"
    assert tbl.column("n").to_pylist() == [None]


def test_unconstrained_numeric_that_does_not_fit_the_reported_scale_raises(pg_conn, pg_table):
    """psqlODBC describes an unconstrained numeric as numeric(28,6): values that fit are exact,
    one with more digits raises DataError naming the cell, never rounded to fit."""
    cur = pg_conn.cursor()
    cur.execute(f"CREATE TABLE {pg_table} (id integer, v numeric)")
    cur.execute(f"INSERT INTO {pg_table} VALUES (1, 1.5), (2, 2.25), (3, 1.2345678)")
    sql = f"SELECT v FROM {pg_table} ORDER BY id"
    tbl = pa.table(cur.execute(sql + " LIMIT 2").fetch_arrow_table())
    assert tbl.schema.field("v").type == pa.decimal128(28, 6)
    assert tbl.column("v").to_pylist() == [Decimal("1.5"), Decimal("2.25")]
    with pytest.raises(ferrodbc.DataError, match=r'"v".*row 2.*1\.2345678.*never rounded'):
        cur.execute(sql).fetch_arrow_table()


@pytest.mark.parametrize("rows_per_batch", [1, 31, 32, 33, 999, 2048, 5000, 20_000])
def test_batch_boundaries_smaller_and_larger_than_the_row_array(conn, ints, rows_per_batch):
    sql = f"SELECT id, twice, label FROM {ints} ORDER BY id"
    rows = conn.cursor().execute(sql).fetchall()
    stream = conn.cursor().execute(sql).fetch_record_batch(rows_per_batch)
    batches = list(pa.RecordBatchReader.from_stream(stream))
    sizes = [b.num_rows for b in batches]
    assert sum(sizes) == ROWS
    assert all(s == rows_per_batch for s in sizes[:-1]) and 0 < sizes[-1] <= rows_per_batch
    assert_table_equals_rows(pa.Table.from_batches(batches), rows)


def test_rows_already_fetched_are_not_in_the_table(conn, ints):
    cur = conn.cursor().execute(f"SELECT id FROM {ints} ORDER BY id")
    head = cur.fetchmany(10)
    tbl = pa.table(cur.fetch_arrow_table())
    assert [r[0] for r in head] == list(range(10))
    assert tbl.column("id").to_pylist() == list(range(10, ROWS))
    assert cur.fetchone() is None


def test_bound_row_arrays_feed_arrow(conn, ints):
    """Arrow reads the bound row arrays: one driver call per array (and at most one more to see
    the end), one plan, no SQLGetData (label is a bounded VARCHAR)."""
    cur = conn.cursor()
    ferrodbc.reset_counters()
    cur.execute(f"SELECT id, twice, label FROM {ints} ORDER BY id")
    tbl = pa.table(cur.fetch_arrow_table())
    c = ferrodbc.counters()
    assert tbl.num_rows == ROWS
    assert c["plans_built"] == 1 and c["getdata_calls"] == 0
    assert block_fetches(ROWS) <= c["fetch_calls"] <= block_fetches(ROWS) + 1


def test_pyarrow_and_polars_read_the_capsule(conn, ints):
    sql = f"SELECT id, twice, label FROM {ints} ORDER BY id"
    rows = conn.cursor().execute(sql).fetchall()
    table = conn.cursor().execute(sql).fetch_arrow_table()
    assert table.num_rows == ROWS
    assert_table_equals_rows(pa.table(table), rows)
    assert pa.table(table).equals(pa.table(table)), "a table can be exported again"
    assert pa.schema(table) == pa.table(table).schema
    df = pl.DataFrame(conn.cursor().execute(sql).fetch_record_batch(1000))
    assert df.shape == (ROWS, 3) and df["id"].to_list() == list(range(ROWS))
    assert df["label"].null_count() == ROWS // 5


def test_a_stream_is_read_once_and_not_past_a_new_execute(conn, ints):
    cur = conn.cursor().execute(f"SELECT id FROM {ints} ORDER BY id")
    stream = cur.fetch_record_batch(100)
    reader = pa.RecordBatchReader.from_stream(stream)
    assert reader.read_next_batch().num_rows == 100
    with pytest.raises(ferrodbc.ProgrammingError, match="already consumed"):
        stream.__arrow_c_stream__()
    cur.execute("SELECT 1")
    with pytest.raises(pa.ArrowException, match="executed again"):
        reader.read_next_batch()


def test_no_result_set_and_bad_batch_size_are_programming_errors(conn):
    cur = conn.cursor()
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.fetch_arrow_table()
    cur.execute("SELECT 1 AS one")
    with pytest.raises(ferrodbc.ProgrammingError, match="rows_per_batch"):
        cur.fetch_record_batch(0)


def test_output_converters_refuse_arrow(conn, ints):
    conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda raw: raw)
    cur = conn.cursor().execute(f"SELECT id FROM {ints}")
    with pytest.raises(ferrodbc.NotSupportedError, match="converter"):
        cur.fetch_arrow_table()
    with pytest.raises(ferrodbc.NotSupportedError, match="converter"):
        cur.fetch_record_batch()
    conn.clear_output_converters()
    cur.execute(f"SELECT id FROM {ints}")
    assert pa.table(cur.fetch_arrow_table()).num_rows == ROWS


# SQLite hands the UTF-8 encoding of a lone surrogate over as the UTF-16 unit D800 (see
# test_converters.py): malformed text in row 500 of 1,000.
LONE = (
    "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999) "
    "SELECT i, CASE WHEN i = 500 THEN CAST(x'61eda08062' AS TEXT) ELSE 'ok' END AS t FROM n"
)


def test_lone_surrogate_mid_stream_raises_not_a_short_table(sqlite_conn):
    cur = sqlite_conn.cursor().execute(LONE)
    with pytest.raises(ferrodbc.DataError, match=r"row 500.*decode_errors"):
        cur.fetch_arrow_table()
    # as with rows, the failing row is consumed and reading goes on after it
    assert pa.table(cur.fetch_arrow_table()).column("i").to_pylist() == list(range(501, 1000))
    stream = sqlite_conn.cursor().execute(LONE).fetch_record_batch(100)
    with pytest.raises(pa.ArrowException, match="DataError"):
        pa.RecordBatchReader.from_stream(stream).read_all()


def test_lone_surrogate_follows_decode_errors(sqlite_conn):
    sqlite_conn.decode_errors = "replace"
    t = pa.table(sqlite_conn.cursor().execute(LONE).fetch_arrow_table())
    assert t.column("t").to_pylist()[500] == "a\ufffdb"
    sqlite_conn.decode_errors = "surrogatepass"
    with pytest.raises(ferrodbc.DataError, match="cannot hold"):
        sqlite_conn.cursor().execute(LONE).fetch_arrow_table()


def test_ferrodbc_never_imports_pyarrow(sqlite):
    code = (
        "import sys, ferrodbc\n"
        f"c = ferrodbc.connect({sqlite.connstr!r})\n"
        "s = c.cursor().execute('SELECT 1 AS a').fetch_arrow_table()\n"
        "s.__arrow_c_stream__()\n"
        "assert 'pyarrow' not in sys.modules and 'polars' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_default_record_batches_are_8192_rows(conn, ints):
    stream = conn.cursor().execute(f"SELECT id FROM {ints} ORDER BY id").fetch_record_batch()
    assert stream.num_rows is None, "a lazy stream does not know its length"
    sizes = [b.num_rows for b in pa.RecordBatchReader.from_stream(stream)]
    assert sizes == [8192, ROWS - 8192]


def test_large_types_builds_every_text_and_binary_column_with_64_bit_offsets(peer, conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, label VARCHAR(20), blob {peer.types['bytes']})")
    cur.executemany(
        f"INSERT INTO {table} VALUES (?, ?, ?)",
        [(1, "a", b"\x00\x01"), (2, None, None), (3, "ünï", b"\xff" * 5)],
    )
    conn.commit()
    sql = f"SELECT label, blob FROM {table} ORDER BY id"
    small = pa.table(conn.cursor().execute(sql).fetch_arrow_table())
    large = pa.table(conn.cursor().execute(sql).fetch_arrow_table(large_types=True))
    batches = pa.RecordBatchReader.from_stream(
        conn.cursor().execute(sql).fetch_record_batch(2, large_types=True)
    ).read_all()
    # By default a bound VARCHAR(20) is utf8 (the byte column may be streamed, so large already).
    assert small.schema.field("label").type == pa.string()
    for tbl in (large, batches):
        assert tbl.schema.types == [pa.large_string(), pa.large_binary()]
        assert tbl.to_pylist() == small.to_pylist()
    assert large.column("label").to_pylist() == ["a", None, "ünï"]
