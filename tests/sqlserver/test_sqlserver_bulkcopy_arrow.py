"""cursor.bulkcopy_arrow through Driver 18 and FreeTDS against the TDS peer: every Arrow type the
load takes, into matching SQL Server columns, read back with fetchall equal value for value;
streams in several batches, polars, dictionaries, views, nulls, column_mappings, the errors, and
the counter that proves the bcp path ran.

FreeTDS: its bcp loads fail against the peer in the bcp layer (the tuple `bulkcopy` fails the
same way), so the cases that send rows are strict xfails for FreeTDS only.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from decimal import Decimal

import polars as pl
import pyarrow as pa
import pytest

import ferrodbc

from sqlserver_support import Counter, tname

FREETDS_BCP = (
    "FreeTDS bcp against the peer fails in the bcp layer (tuple bulkcopy alike): bcp_batch/bcp_done "
    "20017 'Unexpected EOF from the server', or bcp_sendrow 22018 'Invalid character value for cast "
    "specification' for a datetimeoffset column, or bcp_done HY000 'General driver error' for "
    "zero rows"
)


@pytest.fixture
def sends_rows(request, driver):
    """Marks a test that sends rows: a strict xfail through FreeTDS (see FREETDS_BCP)."""
    del request, driver


def bcp_loads() -> int:
    return ferrodbc.counters()["bulk_bcp_loads"]


UTC = dt.timezone.utc
IST = dt.timezone(dt.timedelta(hours=5, minutes=30))
G1 = uuid.UUID("12345678-1234-5678-9abc-def012345678")
G2 = uuid.UUID("00000000-0000-0000-0000-000000000001")
MAX_TEXT = "ünïcode text " * 100  # (MAX) columns; values past 8000 bytes: test_long_max_values
MAX_BYTES = bytes(range(256)) * 10
FREETDS_LONG_MAX = (
    "FreeTDS bcp corrupts the heap on a (MAX) value past 8000 bytes ('double free or corruption', "
    "'free(): invalid size'; tuple bulkcopy too): the process dies, so this is skipped, not xfailed"
)

# (column, SQL type, Arrow array of [value, NULL], the value fetchall returns)
CASES = [
    ("c_i8", "smallint", pa.array([-128, None], pa.int8()), -128),
    ("c_i16", "smallint", pa.array([-32768, None], pa.int16()), -32768),
    ("c_i32", "int", pa.array([2**31 - 1, None], pa.int32()), 2**31 - 1),
    ("c_i64", "bigint", pa.array([-(2**63), None], pa.int64()), -(2**63)),
    ("c_u8", "tinyint", pa.array([255, None], pa.uint8()), 255),
    ("c_u16", "int", pa.array([65535, None], pa.uint16()), 65535),
    ("c_u32", "bigint", pa.array([2**32 - 1, None], pa.uint32()), 2**32 - 1),
    ("c_u64", "bigint", pa.array([2**63 - 1, None], pa.uint64()), 2**63 - 1),
    ("c_u64big", "decimal(20,0)", pa.array([2**64 - 1, None], pa.uint64()), Decimal(2**64 - 1)),
    ("c_bit", "bit", pa.array([True, None]), True),
    ("c_f16", "real", pa.array([1.5, None], pa.float16()), 1.5),
    ("c_f32", "real", pa.array([0.25, None], pa.float32()), 0.25),
    ("c_f64", "float", pa.array([1e300, None], pa.float64()), 1e300),
    (
        "c_dec",
        "decimal(38,10)",
        pa.array([Decimal("-1234567890123456789012345678.0123456789"), None], pa.decimal128(38, 10)),
        Decimal("-1234567890123456789012345678.0123456789"),
    ),
    (
        "c_dec256",
        "decimal(38,10)",
        pa.array([Decimal("12.5"), None], pa.decimal256(40, 10)),
        Decimal("12.5"),
    ),
    ("c_decneg", "decimal(10,0)", pa.array([Decimal("1.2E+4"), None], pa.decimal128(5, -3)), Decimal(12000)),
    ("c_money", "money", pa.array([Decimal("-922337203685477.5808"), None], pa.decimal128(19, 4)),
     Decimal("-922337203685477.5808")),
    ("c_date", "date", pa.array([dt.date(1, 1, 1), None], pa.date32()), dt.date(1, 1, 1)),
    ("c_date64", "date", pa.array([dt.date(9999, 12, 31), None], pa.date64()), dt.date(9999, 12, 31)),
    ("c_t32s", "time(7)", pa.array([dt.time(23, 59, 59), None], pa.time32("s")), dt.time(23, 59, 59)),
    ("c_t32ms", "time(7)", pa.array([dt.time(1, 2, 3, 456000), None], pa.time32("ms")), dt.time(1, 2, 3, 456000)),
    ("c_t64us", "time(7)", pa.array([dt.time(0, 0, 0, 1), None], pa.time64("us")), dt.time(0, 0, 0, 1)),
    # 100 ns digit kept by the server; the row path's `time` truncates it to microseconds.
    ("c_t64ns", "time(7)", pa.array([3_723_123_456_700, None], pa.time64("ns")), dt.time(1, 2, 3, 123456)),
    ("c_ts_s", "datetime2(7)", pa.array([dt.datetime(1, 1, 1), None], pa.timestamp("s")), dt.datetime(1, 1, 1)),
    (
        "c_ts_ms",
        "datetime2(7)",
        pa.array([dt.datetime(1969, 12, 31, 23, 59, 59, 999000), None], pa.timestamp("ms")),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999000),
    ),
    (
        "c_ts_us",
        "datetime2(7)",
        pa.array([dt.datetime(9999, 12, 31, 23, 59, 59, 999999), None], pa.timestamp("us")),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
    ),
    (
        "c_ts_ns",
        "datetime2(7)",
        pa.array([1_700_000_000_123_456_700, None], pa.timestamp("ns")),
        dt.datetime(2023, 11, 14, 22, 13, 20, 123456),
    ),
    ("c_dt", "datetime", pa.array([dt.datetime(2024, 2, 29, 12, 0, 1, 500000), None], pa.timestamp("ms")),
     dt.datetime(2024, 2, 29, 12, 0, 1, 500000)),
    ("c_sdt", "smalldatetime", pa.array([dt.datetime(2024, 3, 1, 8, 30), None], pa.timestamp("s")),
     dt.datetime(2024, 3, 1, 8, 30)),
    (
        "c_dto",
        "datetimeoffset(7)",
        pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC), None], pa.timestamp("us", tz="+05:30")),
        dt.datetime(2024, 1, 2, 8, 34, 5, 678901, tzinfo=IST),
    ),
    (
        "c_dto_utc",
        "datetimeoffset(7)",
        pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), None], pa.timestamp("ns", tz="UTC")),
        dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
    ),
    (
        # A named zone: the instant, at +00:00.
        "c_dto_named",
        "datetimeoffset(3)",
        pa.array([dt.datetime(2024, 7, 1, 10, 0, tzinfo=UTC), None], pa.timestamp("ms", tz="Europe/Paris")),
        dt.datetime(2024, 7, 1, 10, 0, tzinfo=UTC),
    ),
    ("c_nv", "nvarchar(50)", pa.array(["é€😀 ok", None]), "é€😀 ok"),
    ("c_vc", "varchar(50)", pa.array(["plain ascii", None], pa.large_string()), "plain ascii"),
    ("c_sv", "nvarchar(50)", pa.array(["a view past twelve bytes", None], pa.string_view()), "a view past twelve bytes"),
    ("c_nvmax", "nvarchar(max)", pa.array([MAX_TEXT, None]), MAX_TEXT),
    ("c_vcmax", "varchar(max)", pa.array(["x" * 3000, None], pa.string_view()), "x" * 3000),
    ("c_vb", "varbinary(50)", pa.array([b"\x00\x01\xff", None], pa.binary()), b"\x00\x01\xff"),
    ("c_bv", "varbinary(50)", pa.array([b"view bytes", None], pa.binary_view()), b"view bytes"),
    ("c_vbmax", "varbinary(max)", pa.array([MAX_BYTES, None], pa.large_binary()), MAX_BYTES),
    ("c_fsb", "binary(4)", pa.array([b"abcd", None], pa.binary(4)), b"abcd"),
    ("c_uid", "uniqueidentifier", pa.array([G1.bytes, None], pa.binary(16)), G1),
    ("c_uid_text", "uniqueidentifier", pa.array([str(G2), None]), G2),
    (
        "c_dict",
        "nvarchar(20)",
        pa.array(["déjà", None]).dictionary_encode(),
        "déjà",
    ),
]


def make_table(cur, name: str, columns) -> None:
    cur.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {t}' for c, t in columns)})")


def test_every_arrow_type_round_trips(connect, driver):
    cur = connect().cursor()
    name = tname("arrow_types")
    make_table(cur, name, [(c, t) for c, t, _, _ in CASES])
    source = pa.table({c: a for c, _, a, _ in CASES})
    # FreeTDS's bcp takes no (MAX) or datetimeoffset column: such a load goes as parameter
    # arrays on the same connection.
    path = "bulk_array_loads" if driver == "freetds" else "bulk_bcp_loads"
    before = ferrodbc.counters()[path]
    result = cur.bulkcopy_arrow(name, source)
    assert ferrodbc.counters()[path] == before + 1
    assert result["rows_copied"] == 2
    assert result["batch_count"] == 1
    assert set(result) == {"rows_copied", "batch_count", "elapsed_time", "rows_per_second"}
    cols = ", ".join(c for c, _, _, _ in CASES)
    rows = cur.execute(f"SELECT {cols} FROM {name} ORDER BY c_i8 DESC").fetchall()
    assert len(rows) == 2
    values, nulls = rows[0], rows[1]
    for (column, _, _, expected), got in zip(CASES, values):
        assert got == expected, column
        if isinstance(expected, dt.datetime) and expected.tzinfo is not None:
            assert got.utcoffset() == expected.utcoffset(), column
    assert list(nulls) == [None] * len(CASES)


def test_long_max_values(connect, driver):
    """(MAX) values past 8000 bytes (sent in parts), up to 64 KiB."""
    cur = connect().cursor()
    name = tname("arrow_long_max")
    make_table(cur, name, [("id", "int"), ("b", "varbinary(max)"), ("t", "nvarchar(max)"), ("v", "varchar(max)")])
    big, text, ascii_text = bytes(range(256)) * 200, "ünïcode text " * 2000, "x" * 30_000
    source = pa.table(
        {
            "id": pa.array([1, 2], pa.int32()),
            "b": pa.array([big, None], pa.large_binary()),
            "t": pa.array([text, None], pa.string_view()),
            "v": pa.array([ascii_text, None], pa.large_string()),
        }
    )
    assert cur.bulkcopy_arrow(name, source)["rows_copied"] == 2
    assert cur.execute(f"SELECT b, t, v FROM {name} ORDER BY id").fetchall() == [
        (big, text, ascii_text),
        (None, None, None),
    ]


def test_max_values_past_64_kib(connect, driver):
    cur = connect().cursor()
    name = tname("arrow_big")
    make_table(cur, name, [("b", "varbinary(max)"), ("t", "nvarchar(max)")])
    big, text = bytes(range(256)) * 400, "ü" * 40_000
    cur.bulkcopy_arrow(name, pa.table({"b": pa.array([big], pa.large_binary()), "t": [text]}))
    assert cur.execute(f"SELECT DATALENGTH(b), DATALENGTH(t) FROM {name}").fetchone() == (len(big), 2 * len(text))


def test_stream_in_several_batches_with_batch_size_and_progress(connect, sends_rows):
    cur = connect().cursor()
    name = tname("arrow_stream")
    make_table(cur, name, [("id", "int NOT NULL"), ("label", "nvarchar(20)")])
    schema = pa.schema([("id", pa.int32()), ("label", pa.string())])

    def batches():
        for b in range(5):
            ids = list(range(b * 1000, (b + 1) * 1000))
            yield pa.record_batch([pa.array(ids, pa.int32()), pa.array([f"row {i}" for i in ids])], schema=schema)

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    seen = []
    result = cur.bulkcopy_arrow(name, reader, batch_size=1500, progress=seen.append, notify_after=1000)
    assert result["rows_copied"] == 5000
    assert result["batch_count"] == 4  # 1500 + 1500 + 1500 + 500
    assert seen == [1000, 2000, 3000, 4000, 5000]
    assert cur.execute(f"SELECT COUNT(*), SUM(CAST(id AS bigint)) FROM {name}").fetchone() == (5000, sum(range(5000)))
    assert cur.execute(f"SELECT label FROM {name} WHERE id = 4321").fetchone()[0] == "row 4321"


def test_polars_dataframe(connect, driver):
    cur = connect().cursor()
    name = tname("arrow_polars")
    make_table(
        cur,
        name,
        [("i", "bigint"), ("s", "nvarchar(30)"), ("f", "float"), ("d", "date"), ("ts", "datetime2(6)"), ("k", "nvarchar(5)")],
    )
    df = pl.DataFrame(
        {
            "i": [1, None, 3],
            "s": ["polars ✓", "b", None],
            "f": [0.5, None, -2.0],
            "d": [dt.date(2020, 1, 1), None, dt.date(1900, 3, 1)],
            "ts": [dt.datetime(2021, 5, 6, 7, 8, 9, 123456), None, dt.datetime(1, 1, 1)],
            # Categorical: exported as dictionary<string_view, uint32>.
            "k": pl.Series(["cat", "cat", None], dtype=pl.Categorical),
        }
    )
    if driver == "freetds":
        # FreeTDS's bcp turns a date before 1753 into another date: refused, nothing kept.
        with pytest.raises(ferrodbc.DataError, match=r'source row 2.*before 1753-01-01.*column "ts"'):
            cur.bulkcopy_arrow(name, df)
        assert cur.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0] == 0
        return
    assert cur.bulkcopy_arrow(name, df)["rows_copied"] == 3
    assert cur.execute(f"SELECT i, s, f, d, ts, k FROM {name} ORDER BY f DESC").fetchall() == [
        (1, "polars ✓", 0.5, dt.date(2020, 1, 1), dt.datetime(2021, 5, 6, 7, 8, 9, 123456), "cat"),
        (3, None, -2.0, dt.date(1900, 3, 1), dt.datetime(1, 1, 1), None),
        (None, "b", None, None, None, "cat"),
    ]


def test_record_batch_through_the_array_interface(connect, sends_rows):
    """An object with only __arrow_c_array__ (a RecordBatch's struct array)."""

    class OnlyArray:
        def __init__(self, batch):
            self.batch = batch

        def __arrow_c_array__(self, requested_schema=None):
            return self.batch.__arrow_c_array__(requested_schema)

    cur = connect().cursor()
    name = tname("arrow_array")
    make_table(cur, name, [("a", "int"), ("b", "nvarchar(10)")])
    batch = pa.record_batch([pa.array([1, 2], pa.int32()), pa.array(["x", None])], names=["a", "b"])
    assert cur.bulkcopy_arrow(name, OnlyArray(batch))["rows_copied"] == 2
    assert cur.execute(f"SELECT a, b FROM {name} ORDER BY a").fetchall() == [(1, "x"), (2, None)]


def test_column_mappings_by_name_and_by_pairs(connect, sends_rows):
    cur = connect().cursor()
    name = tname("arrow_map")
    make_table(cur, name, [("a", "int"), ("b", "nvarchar(10)"), ("c", "int")])
    source = pa.table({"x": pa.array([1], pa.int32()), "y": ["one"], "z": pa.array([100], pa.int32())})
    # Names: source field i -> column names[i].
    cur.bulkcopy_arrow(name, source, column_mappings=["c", "b", "a"])
    # Pairs: (source index, column); field 1 skipped.
    cur.bulkcopy_arrow(name, source, column_mappings=[(2, "a"), (0, "c")])
    assert cur.execute(f"SELECT a, b, c FROM {name} ORDER BY b").fetchall() == [(100, None, 1), (100, "one", 1)]


def test_round_trip_of_fetch_arrow_table(connect, sends_rows):
    """A table read with fetch_arrow_table (both datetimeoffset forms) and copied back."""
    cur = connect().cursor()
    src, dst = tname("arrow_src"), tname("arrow_dst")
    columns = [
        ("id", "int"), ("m", "money"), ("d", "decimal(18,4)"), ("t", "time(7)"), ("dt2", "datetime2(7)"),
        ("dto", "datetimeoffset(7)"), ("g", "uniqueidentifier"), ("s", "nvarchar(40)"), ("b", "varbinary(20)"),
        ("bt", "bit"), ("r", "real"),
    ]
    make_table(cur, src, columns)
    make_table(cur, dst, columns)
    cur.execute(
        f"INSERT INTO {src} VALUES (1, 12.3456, -99.0001, '01:02:03.1234567', '2001-02-03 04:05:06.1234567', "
        f"'2001-02-03 04:05:06.1234567 -07:30', '{G1}', N'ünï', 0x0102, 1, 0.5), "
        f"(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
    )
    expected = cur.execute(f"SELECT * FROM {src} ORDER BY id").fetchall()
    for form in ("utc", "struct"):
        cur.execute(f"DELETE FROM {dst}")
        table = cur.execute(f"SELECT * FROM {src}").fetch_arrow_table(datetimeoffset=form, timestamp_unit="ns")
        assert cur.bulkcopy_arrow(dst, table)["rows_copied"] == 2
        got = cur.execute(f"SELECT * FROM {dst} ORDER BY id").fetchall()
        assert got == expected, form
        offset = got[0][5].utcoffset()
        assert offset == (dt.timedelta(0) if form == "utc" else -dt.timedelta(hours=7, minutes=30)), form
        # time(7) and datetime2(7) keep the 100 ns digit the row path cannot show (timestamp_unit="ns").
        assert cur.execute(f"SELECT CAST(t AS nvarchar(30)), CAST(dt2 AS nvarchar(30)) FROM {dst} WHERE id = 1").fetchone() == (
            "01:02:03.1234567",
            "2001-02-03 04:05:06.1234567",
        )


def test_empty_stream_copies_nothing(connect, sends_rows):
    cur = connect().cursor()
    name = tname("arrow_empty")
    make_table(cur, name, [("a", "int")])
    schema = pa.schema([("a", pa.int32())])
    result = cur.bulkcopy_arrow(name, pa.RecordBatchReader.from_batches(schema, []))
    assert result["rows_copied"] == 0
    assert cur.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0] == 0


def test_unknown_table_is_programming_error(connect):
    cur = connect().cursor()
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.bulkcopy_arrow(tname("no_such_table"), pa.table({"a": [1]}))


def test_value_too_long_names_column_and_row(connect):
    cur = connect().cursor()
    name = tname("arrow_long")
    make_table(cur, name, [("a", "int"), ("s", "nvarchar(3)")])
    source = pa.table({"a": pa.array([1, 2, 3], pa.int32()), "s": ["abc", "xy", "abcd"]})
    with pytest.raises(ferrodbc.DataError, match=r'column "s", source row 2') as e:
        cur.bulkcopy_arrow(name, source)
    assert "longer than the column's 3" in str(e.value)
    assert cur.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0] == 0


def test_integer_out_of_range_names_column_and_row(connect):
    cur = connect().cursor()
    name = tname("arrow_range")
    make_table(cur, name, [("t", "tinyint"), ("b", "bigint")])
    with pytest.raises(ferrodbc.DataError, match=r'column "t", source row 1'):
        cur.bulkcopy_arrow(name, pa.table({"t": pa.array([1, -1], pa.int8()), "b": pa.array([1, 2], pa.int64())}))
    # u64 past i64::MAX: refused by bigint as an overflow.
    with pytest.raises(ferrodbc.DataError, match=r'column "b", source row 0.*out of range for bigint'):
        cur.bulkcopy_arrow(name, pa.table({"t": pa.array([1], pa.uint8()), "b": pa.array([2**63], pa.uint64())}))


def test_null_into_not_null_is_integrity_error(connect):
    cur = connect().cursor()
    name = tname("arrow_notnull")
    make_table(cur, name, [("a", "int NOT NULL"), ("b", "int")])
    source = pa.table({"a": pa.array([1, 2, None], pa.int32()), "b": pa.array([1, None, 3], pa.int32())})
    with pytest.raises(ferrodbc.IntegrityError, match=r'column "a", source row 2'):
        cur.bulkcopy_arrow(name, source)


def test_struct_column_is_refused_naming_its_type(connect):
    cur = connect().cursor()
    name = tname("arrow_struct")
    make_table(cur, name, [("a", "int"), ("b", "nvarchar(20)")])
    source = pa.table({"a": pa.array([1], pa.int32()), "b": pa.array([{"x": 1}])})
    with pytest.raises((ferrodbc.NotSupportedError, ferrodbc.DataError), match=r'column "b".*Struct'):
        cur.bulkcopy_arrow(name, source)


def test_a_field_no_column_takes_is_not_looked_at(connect, sends_rows):
    cur = connect().cursor()
    name = tname("arrow_skip")
    make_table(cur, name, [("a", "int"), ("b", "nvarchar(20)")])
    source = pa.table({"a": pa.array([1], pa.int32()), "s": pa.array([{"x": 1}]), "b": ["x"]})
    assert cur.bulkcopy_arrow(name, source, column_mappings=[(0, "a"), (2, "b")])["rows_copied"] == 1
    assert cur.execute(f"SELECT a, b FROM {name}").fetchall() == [(1, "x")]


def test_source_without_the_arrow_interface_is_type_error(connect):
    cur = connect().cursor()
    with pytest.raises(TypeError, match="__arrow_c_stream__"):
        cur.bulkcopy_arrow("t", [(1, 2)])
    with pytest.raises(TypeError, match="bulkcopy_arrow"):
        cur.bulkcopy("t", pa.table({"a": [1]}))


def test_arguments_are_checked_as_bulkcopy_checks_them(connect):
    cur = connect().cursor()
    source = pa.table({"a": [1]})
    with pytest.raises(ferrodbc.ProgrammingError, match="table_name"):
        cur.bulkcopy_arrow("", source)
    with pytest.raises(TypeError, match="batch_size"):
        cur.bulkcopy_arrow("t", source, batch_size="10")
    with pytest.raises(ValueError, match="timeout"):
        cur.bulkcopy_arrow("t", source, timeout=-1)


def test_one_big_batch_is_sent_in_chunks_and_errors_name_the_source_row(connect, sends_rows):
    """20,000 rows in one record batch: several bcp chunks, rows numbered across them."""
    cur = connect().cursor()
    name = tname("arrow_chunks")
    make_table(cur, name, [("id", "int"), ("s", "nvarchar(8)")])
    n = 20_000
    ids = pa.array(range(n), pa.int32())
    labels = [f"r{i}" for i in range(n)]
    assert cur.bulkcopy_arrow(name, pa.table({"id": ids, "s": labels}), batch_size=7000)["batch_count"] == 3
    assert cur.execute(f"SELECT COUNT(*), SUM(CAST(id AS bigint)), MAX(s) FROM {name}").fetchone() == (
        n,
        sum(range(n)),
        "r9999",
    )
    cur.execute(f"DELETE FROM {name}")
    labels[17_003] = "too long for it"
    with pytest.raises(ferrodbc.DataError, match=r'column "s", source row 17003 \(0 rows copied'):
        cur.bulkcopy_arrow(name, pa.table({"id": ids, "s": labels}))


def test_a_failing_stream_raises_data_error(connect):
    cur = connect().cursor()
    name = tname("arrow_broken")
    make_table(cur, name, [("a", "int")])
    schema = pa.schema([("a", pa.int32())])

    def batches():
        yield pa.record_batch([pa.array([1, 2], pa.int32())], schema=schema)
        raise ValueError("the source broke")

    with pytest.raises(ferrodbc.DataError, match="the source broke"):
        cur.bulkcopy_arrow(name, pa.RecordBatchReader.from_batches(schema, batches()))


def test_the_connection_is_usable_after_a_load_stopped_midway(connect):
    cur = connect().cursor()
    name = tname("arrow_stopped")
    make_table(cur, name, [("a", "int")])
    schema = pa.schema([("a", pa.int32())])

    def batches():
        yield pa.record_batch([pa.array([1, 2], pa.int32())], schema=schema)
        raise ValueError("the source broke")

    with pytest.raises(ferrodbc.DataError, match="the source broke"):
        cur.bulkcopy_arrow(name, pa.RecordBatchReader.from_batches(schema, batches()))
    # One batch (batch_size 0): the rows sent before the failure are not committed.
    assert cur.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0] == 0
    assert cur.bulkcopy_arrow(name, pa.table({"a": pa.array([3], pa.int32())}))["rows_copied"] == 1


def progress_while(action) -> int:
    """Loop iterations a pure-Python thread made while `action` ran (it needs the GIL)."""
    counter = Counter()
    counter.start()
    try:
        while counter.count == 0:
            time.sleep(0.001)
        before = counter.count
        action()
        return counter.count - before
    finally:
        counter.stop.set()
        counter.join(10)


def test_the_gil_is_released_while_a_batch_is_encoded_and_sent(connect, sends_rows):
    """One 200,000-row record batch: a load that held the GIL for it would leave the counter at a
    switch interval or two; it advances more than while this thread sleeps 0.1 s."""
    cur = connect().cursor()
    name = tname("arrow_gil")
    make_table(cur, name, [("id", "int"), ("s", "nvarchar(20)")])
    n = 200_000
    source = pa.table({"id": pa.array(range(n), pa.int32()), "s": [f"row {i}" for i in range(n)]})
    yardstick = progress_while(lambda: time.sleep(0.1))
    assert progress_while(lambda: cur.bulkcopy_arrow(name, source)) > yardstick
    assert cur.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0] == n
