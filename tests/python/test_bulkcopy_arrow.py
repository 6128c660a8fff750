"""cursor.bulkcopy_arrow on a driver without a bcp API (the SQLite3 ODBC driver): the
parameter-array path, fed from Arrow arrays through the same per-type loops as the bcp path.
The SQL Server suite (tests/sqlserver/test_bulkcopy_arrow.py) covers the bcp path and every type.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import polars as pl
import pyarrow as pa
import pytest

import ferrodbc


def loads() -> tuple[int, int]:
    c = ferrodbc.counters()
    return c["bulk_array_loads"], c["bulk_bcp_loads"]


def test_types_go_in_as_parameter_arrays(sqlite_conn):
    cur = sqlite_conn.cursor()
    cur.execute(
        "CREATE TABLE t (i INTEGER, s VARCHAR(20), f DOUBLE, b BLOB, d DATE, ts TIMESTAMP, "
        "n NUMERIC(20,4), bo BIT, tm TIME, u BIGINT, k VARCHAR(10))"
    )
    source = pa.table(
        {
            "i": pa.array([1, None], pa.int16()),
            "s": pa.array(["é€", None], pa.string_view()),
            "f": pa.array([0.5, None], pa.float32()),
            "b": pa.array([b"\x00\x01", None], pa.binary_view()),
            "d": pa.array([dt.date(2020, 2, 29), None], pa.date32()),
            "ts": pa.array([dt.datetime(2020, 1, 2, 3, 4, 5, 123000), None], pa.timestamp("ms")),
            "n": pa.array([Decimal("12.3400"), None], pa.decimal128(20, 4)),
            "bo": pa.array([True, None]),
            "tm": pa.array([dt.time(1, 2, 3), None], pa.time32("s")),
            "u": pa.array([2**63 - 1, None], pa.uint64()),
            "k": pa.array(["key", None]).dictionary_encode(),
        }
    )
    arrays, bcp = loads()
    result = cur.bulkcopy_arrow("t", source)
    assert loads() == (arrays + 1, bcp)
    assert result["rows_copied"] == 2
    assert result["batch_count"] == 1
    rows = cur.execute("SELECT * FROM t ORDER BY i DESC").fetchall()
    first = list(rows[0])
    assert float(first.pop(6)) == 12.34  # NUMERIC affinity: SQLite keeps a REAL
    assert first == [
        1, "é€", 0.5, b"\x00\x01", dt.date(2020, 2, 29), dt.datetime(2020, 1, 2, 3, 4, 5, 123000),
        True, dt.time(1, 2, 3), 2**63 - 1, "key",
    ]
    assert list(rows[1]) == [None] * 11


def test_stream_batches_fill_parameter_arrays_of_batch_size(sqlite_conn):
    cur = sqlite_conn.cursor()
    cur.execute("CREATE TABLE t (id INTEGER, label VARCHAR(20))")
    schema = pa.schema([("id", pa.int64()), ("label", pa.string())])

    def batches():
        for b in range(5):
            ids = list(range(b * 1000, (b + 1) * 1000))
            yield pa.record_batch([pa.array(ids), pa.array([f"row {i}" for i in ids])], schema=schema)

    seen = []
    result = cur.bulkcopy_arrow(
        "t", pa.RecordBatchReader.from_batches(schema, batches()), batch_size=1500, progress=seen.append,
        notify_after=2000,
    )
    # Parameter arrays of 1500 rows span the 1000-row record batches: 1500 * 3 + 500.
    assert (result["rows_copied"], result["batch_count"]) == (5000, 4)
    # Called after the record batch that passes each multiple of notify_after.
    assert seen == [2000, 4000]
    assert cur.execute("SELECT COUNT(*), SUM(id) FROM t").fetchone() == (5000, sum(range(5000)))
    assert cur.execute("SELECT label FROM t WHERE id = 4999").fetchone()[0] == "row 4999"


def test_polars_and_column_mappings(sqlite_conn):
    cur = sqlite_conn.cursor()
    cur.execute("CREATE TABLE t (a INTEGER, b VARCHAR(20), c DOUBLE)")
    df = pl.DataFrame({"x": [1.5, None], "y": ["polars", "z"], "z": [7, 8]})
    assert cur.bulkcopy_arrow("t", df, column_mappings=[(2, "a"), (1, "b"), (0, "c")])["rows_copied"] == 2
    assert cur.bulkcopy_arrow("t", df, column_mappings=["c", "b"])["rows_copied"] == 2
    assert cur.execute("SELECT a, b, c FROM t ORDER BY a, b").fetchall() == [
        (None, "polars", 1.5), (None, "z", None), (7, "polars", 1.5), (8, "z", None),
    ]


def test_array_interface_source(sqlite_conn):
    class OnlyArray:
        def __init__(self, batch):
            self.batch = batch

        def __arrow_c_array__(self, requested_schema=None):
            return self.batch.__arrow_c_array__(requested_schema)

    cur = sqlite_conn.cursor()
    cur.execute("CREATE TABLE t (a INTEGER, b VARCHAR(10))")
    batch = pa.record_batch([pa.array([1, 2]), pa.array(["x", None])], names=["a", "b"])
    assert cur.bulkcopy_arrow("t", OnlyArray(batch))["rows_copied"] == 2
    assert cur.execute("SELECT a, b FROM t ORDER BY a").fetchall() == [(1, "x"), (2, None)]


def test_null_into_not_null(sqlite_conn):
    cur = sqlite_conn.cursor()
    cur.execute("CREATE TABLE t (a INTEGER NOT NULL, b INTEGER)")
    sqlite_conn.commit()
    source = pa.table({"a": pa.array([1, None]), "b": pa.array([1, 2])})
    # The SQLite driver describes no column as NOT NULL, so the database refuses the row
    # (SQL Server's columns are refused before sending: the SQL Server suite).
    with pytest.raises(ferrodbc.DatabaseError, match=r"source rows 0\.\.2.*NOT NULL constraint failed"):
        cur.bulkcopy_arrow("t", source)
    # The rows of the array before the refused one are in the open transaction (SQLite's
    # parameter arrays stop at the failing row); a rollback removes them.
    sqlite_conn.rollback()
    assert cur.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0


def test_unsupported_arrow_type_and_non_arrow_source(sqlite_conn):
    cur = sqlite_conn.cursor()
    cur.execute("CREATE TABLE t (a INTEGER, b VARCHAR(10))")
    with pytest.raises(ferrodbc.NotSupportedError, match=r'column "b".*List'):
        cur.bulkcopy_arrow("t", pa.table({"a": [1], "b": pa.array([[1, 2]])}))
    with pytest.raises(TypeError, match="__arrow_c_stream__"):
        cur.bulkcopy_arrow("t", {"a": [1]})
    with pytest.raises(ferrodbc.DatabaseError, match="cannot be read"):
        cur.bulkcopy_arrow("no_such_table", pa.table({"a": [1]}))
