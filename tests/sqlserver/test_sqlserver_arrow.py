"""Arrow fetch (fetch_arrow_table / fetch_record_batch) through Driver 18 and FreeTDS against
the TDS peer: every SQL Server type has its documented Arrow type (README, "Arrow"), and every
value equals the same query read as rows, compared exactly except where the README says
otherwise (time(7): Arrow keeps the 100 ns digit the row path's `time` truncates; datetimeoffset:
Arrow keeps the instant, in UTC, not each value's offset).
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from decimal import Decimal

import polars as pl
import pyarrow as pa
import pytest
from test_sqlserver_types import EDGES

import ferrodbc

from sqlserver_support import synthetic

TYPES_ALL = [(n, t) for n, t in synthetic.columns("types_all") if n != "c_variant"]

# The Arrow type of each SQL Server type (the README's Arrow table). (MAX) types and every
# column after the first (MAX) one are streamed, hence large_*.
UUID = pa.uuid()
ARROW_TYPE = {
    "int": pa.int32(), "bit": pa.bool_(), "tinyint": pa.uint8(), "smallint": pa.int16(),
    "bigint": pa.int64(), "decimal(1,0)": pa.decimal128(1, 0), "decimal(9,2)": pa.decimal128(9, 2),
    "decimal(18,4)": pa.decimal128(18, 4), "decimal(19,0)": pa.decimal128(19, 0),
    "decimal(28,10)": pa.decimal128(28, 10), "decimal(38,10)": pa.decimal128(38, 10),
    "numeric(10,3)": pa.decimal128(10, 3), "money": pa.decimal128(19, 4),
    "smallmoney": pa.decimal128(10, 4), "real": pa.float32(), "float": pa.float64(),
    "date": pa.date32(), "time(0)": pa.time64("us"), "time(3)": pa.time64("us"),
    "time(7)": pa.time64("ns"), "datetime": pa.timestamp("us"), "smalldatetime": pa.timestamp("us"),
    "datetime2(0)": pa.timestamp("us"), "datetime2(3)": pa.timestamp("us"),
    "datetime2(7)": pa.timestamp("us"), "datetimeoffset(0)": pa.timestamp("us", tz="UTC"),
    "datetimeoffset(7)": pa.timestamp("us", tz="UTC"), "char(10)": pa.string(),
    "varchar(50)": pa.string(), "nchar(10)": pa.string(), "nvarchar(50)": pa.string(),
    "varchar(max)": pa.large_string(), "nvarchar(max)": pa.large_string(),
    "varbinary(max)": pa.large_binary(), "binary(8)": pa.large_binary(),
    "varbinary(50)": pa.large_binary(), "uniqueidentifier": UUID, "xml": pa.large_string(),
}


def arrow_type(sqltype: str) -> pa.DataType:
    return ARROW_TYPE[sqltype.split(" collate ")[0]]


def column_values(col: pa.ChunkedArray) -> list:
    """Python values of an Arrow column; time64[ns] as integer nanoseconds (pyarrow's
    datetime.time cannot hold them)."""
    if col.type == pa.time64("ns"):
        return col.cast(pa.int64()).to_pylist()
    return col.to_pylist()  # arrow.uuid values come back as uuid.UUID


def same_value(arrow_value, row_value, arrow_t: pa.DataType) -> bool:
    """Equal, tolerant only where the README says the two paths differ."""
    if row_value is None or arrow_value is None:
        return row_value is None and arrow_value is None
    if arrow_t == pa.time64("ns"):
        # The row path truncates the 7th digit; Arrow keeps it.
        us = ((row_value.hour * 60 + row_value.minute) * 60 + row_value.second) * 10**6 \
            + row_value.microsecond
        return arrow_value // 1000 == us
    if isinstance(arrow_t, pa.TimestampType) and arrow_t.tz == "UTC":
        # The instant is kept exactly; the per-value offset is not.
        return arrow_value.utcoffset() == dt.timedelta(0) and arrow_value == row_value
    if isinstance(arrow_t, pa.UuidType):
        return type(arrow_value) is uuid.UUID and arrow_value == uuid.UUID(str(row_value))
    if isinstance(row_value, Decimal):
        return isinstance(arrow_value, Decimal) and arrow_value == row_value
    if isinstance(row_value, float) and math.isnan(row_value):
        return math.isnan(arrow_value)
    return type(arrow_value) is type(row_value) and arrow_value == row_value


def block_fetches(rows: int, cap: int = 8192) -> int:
    """Row arrays needed for `rows` rows as the row source grows them (32, x8 up to 2,048,
    then x2 up to `cap`)."""
    size, covered, n = 32, 0, 0
    while covered < rows:
        covered += size
        n += 1
        size = min(size * 8 if size < 2048 else size * 2, cap)
    return n


def assert_table_equals_rows(table: pa.Table, rows: list, types: list[pa.DataType] | None = None):
    assert table.num_rows == len(rows)
    for i, name in enumerate(table.column_names):
        col = table.column(i)
        if types is not None:
            assert col.type == types[i], f"{name}: {col.type} is not {types[i]}"
        for r, (a, v) in enumerate(zip(column_values(col), (row[i] for row in rows))):
            assert same_value(a, v, col.type), f"{name} row {r}: arrow {a!r} != row {v!r}"


def test_every_type_has_its_arrow_type_and_the_row_values(conn, driver):
    cols = ", ".join(n for n, _ in TYPES_ALL)
    sql = f"SELECT {cols} FROM peer.types_all_60"
    rows = conn.cursor().execute(sql).fetchall()
    table = pa.table(conn.cursor().execute(sql).fetch_arrow_table())
    assert table.column_names == [n for n, _ in TYPES_ALL]
    assert_table_equals_rows(table, rows, [arrow_type(t) for _, t in TYPES_ALL])
    # every 7th row (i % 7 == 3) is NULL in every column but id: validity, not a zero value
    assert all(table.column(c)[3].is_valid is False for c in range(1, table.num_columns))
    assert table.column("c_guid").type.extension_name == "arrow.uuid"


def test_edge_values_are_exact(conn, driver):
    sql = "SELECT " + ", ".join(f"{expr} AS [{name}]" for name, expr, _ in EDGES)
    rows = conn.cursor().execute(sql).fetchall()
    table = pa.table(conn.cursor().execute(sql).fetch_arrow_table())
    assert_table_equals_rows(table, rows)
    got = {name: column_values(table.column(name))[0] for name, _, _ in EDGES}
    assert got["date_min"] == dt.date(1, 1, 1) and got["date_max"] == dt.date(9999, 12, 31)
    assert got["datetime2_min"] == dt.datetime(1, 1, 1)
    assert got["datetime2_7_max"] == dt.datetime(9999, 12, 31, 23, 59, 59, 999999)
    assert table.column("datetime2_7_max").type == pa.timestamp("us")
    assert got["dto_max_utc"] == dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc)
    assert got["dto7_plus14"] == dt.datetime(2024, 1, 1, 13, 4, 5, 123456, tzinfo=dt.timezone.utc)
    assert got["time7_max_truncated"] == (24 * 3600) * 10**9 - 100, "time(7) keeps 100 ns"
    assert got["dec38_max"] == Decimal("9" * 38)
    assert got["dec38_10_min"] == Decimal("-9999999999999999999999999999.9999999999")
    assert got["dec38_38_tiny"] == Decimal("1E-38")
    assert table.column("dec38_38_tiny").type == pa.decimal128(38, 38)
    assert got["money_max"] == Decimal("922337203685477.5807")
    assert got["tinyint_max"] == 255 and table.column("tinyint_max").type == pa.uint8()
    assert got["empty_nvarchar"] == "" and got["empty_varbinary_max"] == b""
    assert got["emoji_nvarchar_max"] == "a😀b" and got["utf8_varchar"] == "中文 ü😀"
    assert got["guid"] == uuid.UUID("6f9619ff-8b86-d011-b42d-00c04fc964ff")


def test_nanosecond_timestamps_keep_the_7th_digit_and_refuse_what_they_cannot_hold(conn, driver):
    """timestamp_unit='ns': datetime2(7) and datetimeoffset(7) exact to 100 ns, in one unit for
    every timestamp column; a value outside 1677-09-21 .. 2262-04-11 is a DataError naming the
    column and the row, never an overflow. The default ('us') holds 0001..9999."""
    sql = (
        "SELECT CAST('2024-02-29 23:59:59.9999999' AS datetime2(7)) AS d7, "
        "CAST('1900-01-01 00:00:00.003' AS datetime) AS legacy, "
        "CAST('2024-01-01 12:00:00.1234567 -05:30' AS datetimeoffset(7)) AS dto, "
        "CAST(NULL AS datetime2(7)) AS none"
    )
    for read in (lambda c: c.fetch_arrow_table(timestamp_unit="ns"),
                 lambda c: c.fetch_record_batch(timestamp_unit="ns")):
        table = pa.table(read(conn.cursor().execute(sql)))
        assert table.schema.types == [pa.timestamp("ns"), pa.timestamp("ns"),
                                      pa.timestamp("ns", tz="UTC"), pa.timestamp("ns")]
        ns = [table.column(i).cast(pa.int64())[0].as_py() for i in range(3)]
        epoch = dt.datetime(1970, 1, 1)
        assert ns[0] == (dt.datetime(2024, 2, 29, 23, 59, 59) - epoch) // dt.timedelta(microseconds=1) * 1000 + 999_999_900
        assert ns[1] == (dt.datetime(1900, 1, 1, 0, 0, 0, 3000) - epoch) // dt.timedelta(microseconds=1) * 1000
        assert ns[2] == (dt.datetime(2024, 1, 1, 17, 30) - epoch) // dt.timedelta(microseconds=1) * 1000 + 123_456_700
        assert table.column("none").null_count == 1
    conn.cursor().execute("CREATE TABLE #ts_ns (id int, t datetime2(7))")
    for value in ("0001-01-01", "9999-12-31 23:59:59.9999999", "1677-09-21 00:12:43.1452241"):
        conn.cursor().execute("DELETE FROM #ts_ns")
        conn.cursor().executemany("INSERT INTO #ts_ns VALUES (?, ?)",
                                  [(0, dt.datetime(2000, 1, 1)), (1, dt.datetime(2262, 4, 11)), (2, value)])
        cur = conn.cursor().execute("SELECT id, t FROM #ts_ns ORDER BY id")
        with pytest.raises(ferrodbc.DataError, match=r"column \"t\".*row 2: .* is outside timestamp\[ns\]'s range.*timestamp_unit='us'"):
            pa.table(cur.fetch_arrow_table(timestamp_unit="ns"))
        cur = conn.cursor().execute(f"SELECT CAST('{value}' AS datetime2(7)) AS t")
        assert pa.table(cur.fetch_arrow_table()).schema.field(0).type == pa.timestamp("us")
    with pytest.raises(ferrodbc.ProgrammingError, match="timestamp_unit"):
        conn.cursor().execute(sql).fetch_arrow_table(timestamp_unit="ms")


def test_sql_variant_is_refused_through_driver_18_and_text_through_freetds(conn, driver):
    sql = "SELECT c_variant FROM peer.types_all_20"
    rows = conn.cursor().execute(sql).fetchall()
    cur = conn.cursor().execute(sql)
    if driver == "msodbcsql":
        with pytest.raises(ferrodbc.NotSupportedError, match="c_variant"):
            cur.fetch_arrow_table()
    else:
        table = pa.table(cur.fetch_arrow_table())
        assert table.schema.field(0).type == pa.large_string()
        assert_table_equals_rows(table, rows)


@pytest.mark.parametrize("rows_per_batch", [1, 100, 999, 5000, 20000])
def test_record_batches_of_any_size_cover_the_rows_in_order(conn, driver, rows_per_batch):
    """Batch boundaries smaller and larger than the bound row array (32 → 256 → 2,048 → ...)."""
    n = 10_000
    sql = f"SELECT * FROM peer.mixed_{n}"
    rows = conn.cursor().execute(sql).fetchall()
    cur = conn.cursor().execute(sql)
    reader = pa.RecordBatchReader.from_stream(cur.fetch_record_batch(rows_per_batch))
    sizes = []
    batches = []
    for b in reader:
        sizes.append(b.num_rows)
        batches.append(b)
    assert sum(sizes) == n
    assert all(s == rows_per_batch for s in sizes[:-1]) and 0 < sizes[-1] <= rows_per_batch
    assert_table_equals_rows(pa.Table.from_batches(batches), rows)


def test_polars_and_pyarrow_read_the_capsule(conn, driver):
    sql = "SELECT * FROM peer.mixed_3000"
    rows = conn.cursor().execute(sql).fetchall()
    df = pl.DataFrame(conn.cursor().execute(sql).fetch_arrow_table())
    assert df.height == 3000
    assert_table_equals_rows(df.to_arrow(), rows)
    df2 = pl.DataFrame(conn.cursor().execute(sql).fetch_record_batch(700))
    assert df2.equals(df)


def test_fetch_uses_the_bound_row_arrays(conn, driver):
    """Arrow takes rows from the same bound row arrays as tuples: a few block fetches, no
    SQLGetData, one plan."""
    n = 20_000
    cur = conn.cursor()
    ferrodbc.reset_counters()
    cur.execute(f"SELECT * FROM peer.mixed_{n}")
    table = pa.table(cur.fetch_arrow_table())
    c = ferrodbc.counters()
    assert table.num_rows == n
    assert c["getdata_calls"] == 0 and c["plans_built"] == 1
    # one call per row array (the byte budget may cap arrays below 8,192 rows for wide rows:
    # the lower bound uses the smallest cap the growth can reach, 4,096), plus the end
    assert block_fetches(n) <= c["fetch_calls"] <= block_fetches(n, cap=4096) + 1


def test_error_mid_stream_raises_and_never_returns_a_short_table(conn, driver):
    sql = "SELECT * FROM peer.int_nvarchar_1000 /* fault:error_after=100 */"
    with pytest.raises(ferrodbc.DatabaseError) as ei:
        conn.cursor().execute(sql).fetch_arrow_table()
    assert ei.value.native_error == 50000
    stream = conn.cursor().execute(sql).fetch_record_batch(30)
    with pytest.raises(pa.ArrowException, match="error after 100 rows"):
        pa.RecordBatchReader.from_stream(stream).read_all()


def test_output_converters_refuse_arrow(conn, driver):
    conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda raw: raw)
    cur = conn.cursor().execute("SELECT * FROM peer.mixed_10")
    with pytest.raises(ferrodbc.NotSupportedError, match="converter"):
        cur.fetch_arrow_table()
    with pytest.raises(ferrodbc.NotSupportedError, match="converter"):
        cur.fetch_record_batch()
    conn.clear_output_converters()
    cur.execute("SELECT * FROM peer.mixed_10")
    assert pa.table(cur.fetch_arrow_table()).num_rows == 10


def test_datetimeoffset_struct_keeps_each_values_offset(conn, driver):
    dtos = [(name, expr) for name, expr, _ in EDGES if name.startswith("dto")]
    sql = "SELECT " + ", ".join(f"{expr} AS [{name}]" for name, expr in dtos) \
        + ", CAST(NULL AS DATETIMEOFFSET(7)) AS [null_dto]"
    row = conn.cursor().execute(sql).fetchone()
    table = pa.table(conn.cursor().execute(sql).fetch_arrow_table(datetimeoffset="struct"))
    for i, (name, _) in enumerate(dtos):
        col = table.column(name)
        assert col.type == pa.struct([pa.field("instant", pa.timestamp("us", tz="UTC"), nullable=False),
                                      pa.field("offset_minutes", pa.int16(), nullable=False)])
        (value,) = col.to_pylist()
        assert value["instant"] == row[i], name
        assert value["offset_minutes"] * 60 == row[i].utcoffset().total_seconds(), name
    assert table.column("null_dto").to_pylist() == [None]
    with pytest.raises(ferrodbc.ProgrammingError, match="'utc' or 'struct'"):
        conn.cursor().execute("SELECT 1").fetch_arrow_table(datetimeoffset="local")


def test_uuid_as_string_is_the_canonical_text(conn, driver):
    sql = "SELECT c_guid FROM peer.types_all_20"
    rows = conn.cursor().execute(sql).fetchall()
    expected = [None if r[0] is None else str(r[0]) for r in rows]
    assert None in expected and len(set(expected)) > 2
    table = pa.table(conn.cursor().execute(sql).fetch_arrow_table(uuid="string"))
    assert table.schema.field(0).type == pa.string()
    assert table.column(0).to_pylist() == expected
    streamed = pa.table(conn.cursor().execute(sql).fetch_record_batch(7, uuid="string"))
    assert streamed.column(0).to_pylist() == expected
    with pytest.raises(ferrodbc.ProgrammingError, match="'uuid' or 'string'"):
        conn.cursor().execute("SELECT 1").fetch_arrow_table(uuid="bytes")


@pytest.mark.parametrize("shape,arrow_t,value_bytes", [
    ("lob_nvarcharmax_64k", pa.large_string(), 32 * 1024),  # 32,768 ASCII characters
    ("lob_varbinarymax_16k", pa.large_binary(), 16 * 1024),
])
def test_max_columns_stream_into_large_types_one_batch_at_a_time(conn, driver, shape, arrow_t, value_bytes):
    """(MAX) values are read whole (streamed with SQLGetData) into large_utf8/large_binary,
    and a record batch holds only its own rows' values: memory is bounded by the batch."""
    n, per_batch = 50, 8
    sql = f"SELECT * FROM peer.{shape}_{n}"
    rows = conn.cursor().execute(sql).fetchall()
    reader = pa.RecordBatchReader.from_stream(conn.cursor().execute(sql).fetch_record_batch(per_batch))
    assert reader.schema.field("body").type == arrow_t
    batches = list(reader)
    assert [b.num_rows for b in batches] == [per_batch] * (n // per_batch) + [n % per_batch]
    for b in batches:
        body = b.column(1)
        assert body.buffers()[2].size == sum(len(v) for v in body.to_pylist()) == b.num_rows * value_bytes
    assert_table_equals_rows(pa.Table.from_batches(batches), rows)


def test_a_large_result_streams_in_bounded_batches(conn, driver):
    """1.2 million rows as the default record batches: 8,192 rows each (the last shorter), in
    order, every row once. (Peak memory is measured by the profiler's arrow_batches_1_2m.)"""
    import pyarrow.compute as pc

    n = 1_200_000
    cur = conn.cursor().execute(f"SELECT * FROM peer.int_nvarchar_float_{n}")
    sizes, ids, first = [], 0, []
    for b in pa.RecordBatchReader.from_stream(cur.fetch_record_batch()):
        sizes.append(b.num_rows)
        ids += pc.sum(b.column(0)).as_py()
        first.append(b.column(0)[0].as_py())
    assert sum(sizes) == n and len(sizes) == -(-n // 8192)
    assert all(s == 8192 for s in sizes[:-1]) and 0 < sizes[-1] <= 8192
    assert ids == n * (n - 1) // 2
    assert first == [k * 8192 for k in range(len(sizes))]


def test_rowversion_and_the_legacy_lob_types(conn, driver):
    """rowversion → binary; text / ntext / image (streamed like (MAX)) → large_utf8 /
    large_binary, with NULLs, equal to the rows."""
    cur = conn.cursor()
    cur.execute("CREATE TABLE #legacy (id INT, rv ROWVERSION, t TEXT, nt NTEXT, img IMAGE)")
    cur.execute("INSERT INTO #legacy (id, t, nt, img) VALUES (1, 'abc', N'中文 😀', 0x0102), (2, NULL, NULL, NULL)")
    sql = "SELECT * FROM #legacy ORDER BY id"
    rows = cur.execute(sql).fetchall()
    table = pa.table(conn.cursor().execute(sql).fetch_arrow_table())
    assert_table_equals_rows(table, rows, [pa.int32(), pa.binary(), pa.large_string(), pa.large_string(),
                                           pa.large_binary()])
    assert table.column("nt").to_pylist() == ["中文 😀", None]
    assert table.column("img").to_pylist() == [b"\x01\x02", None]


def test_a_converter_for_a_type_the_result_lacks_does_not_refuse_arrow(conn, driver):
    conn.add_output_converter(ferrodbc.SQL_WVARCHAR, lambda raw: raw)
    cur = conn.cursor().execute("SELECT id FROM peer.int_nvarchar_10")
    assert pa.table(cur.fetch_arrow_table()).column(0).to_pylist() == list(range(10))
    cur.execute("SELECT * FROM peer.int_nvarchar_10")
    with pytest.raises(ferrodbc.NotSupportedError, match="converter.*index 1"):
        cur.fetch_record_batch()
