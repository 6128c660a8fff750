"""Bulk ingest (``adbc_ingest``) through the ferrodbc ADBC driver: every mode, temporary tables,
target schema, NOT NULL, many batches, the types ``create`` chooses, and pandas ``to_sql`` /
polars ``write_database(engine="adbc")``; against the TDS peer (bcp through Driver 18 and
FreeTDS) and SQLite3 ODBC (parameter arrays)."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid

import adbc_driver_manager
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from sqlserver_support import tname

U = uuid.UUID("6f9619ff-8b86-d011-b42d-00c04fc964ff")


def mixed_table() -> pa.Table:
    return pa.table(
        {
            "i8": pa.array([-128, None, 127], pa.int8()),
            "u8": pa.array([0, 255, None], pa.uint8()),
            "i64": pa.array([-(2**63), 2**63 - 1, None], pa.int64()),
            "u64": pa.array([0, 2**64 - 1, None], pa.uint64()),
            "f64": pa.array([1.5, None, -2.25], pa.float64()),
            "dec": pa.array([decimal.Decimal("12345678901234567890.123456"), None, decimal.Decimal("-0.000001")], pa.decimal128(38, 6)),
            "s": pa.array(["caf\u00e9", None, "x" * 5000], pa.string()),
            "b": pa.array([b"\x00\x01", None, b"z" * 9000], pa.binary()),
            "d": pa.array([dt.date(1, 1, 1), None, dt.date(9999, 12, 31)], pa.date32()),
            "t": pa.array([dt.time(0, 0), dt.time(23, 59, 59, 999999), None], pa.time64("us")),
            "ts": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 123456), None, dt.datetime(1, 1, 1)], pa.timestamp("us")),
            "tz": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc), None, None], pa.timestamp("us", tz="UTC")),
            "flag": pa.array([True, False, None], pa.bool_()),
            "g": pa.array([U.bytes, None, U.bytes], pa.binary(16)).cast(pa.uuid()),
        }
    )


def column_types(conn, table: str) -> dict[str, str]:
    objs = conn.adbc_get_objects(depth="columns", table_name_filter=table).read_all().to_pylist()
    for cat in objs:
        for schema in cat["catalog_db_schemas"] or []:
            for t in schema["db_schema_tables"] or []:
                if t["table_name"] == table:
                    return {c["column_name"]: c["xdbc_type_name"] for c in t["table_columns"]}
    raise AssertionError(f"{table} not found")


def test_create_keeps_every_value_exact(conn):
    t = tname()
    data = mixed_table()
    with conn.cursor() as cur:
        assert cur.adbc_ingest(t, data, mode="create") == 3
        cur.execute(f"SELECT * FROM {t}")
        back = cur.fetch_arrow_table()
    assert back.num_rows == 3
    want = data.to_pylist()
    got = back.to_pylist()
    # Read back as fetch_arrow_table types them: int8 comes back as int16 (smallint), uint64 as
    # decimal(20,0), strings as large_utf8 (nvarchar(max)); values are equal.
    for w, g in zip(want, got):
        for k, v in w.items():
            assert g[k] == v or (v is not None and g[k] == type(g[k])(v)), (k, v, g[k])
    types = column_types(conn, t)
    assert types["i8"] == "smallint"
    assert types["u8"] == "tinyint"
    assert types["u64"] == "decimal"
    assert types["dec"] == "decimal"
    assert types["ts"] == "datetime2"
    assert types["tz"] == "datetimeoffset"
    assert types["g"] == "uniqueidentifier"


def test_more_arrow_types(conn):
    """Dictionary strings, large strings, float16-free narrow types and ferrodbc's own
    datetimeoffset struct (read with the statement option, written back as datetimeoffset)."""
    t = tname()
    data = pa.table(
        {
            "dict": pa.array(["a", "b", None, "a"]).dictionary_encode(),
            "large": pa.array(["x", None, "y" * 10, ""], pa.large_string()),
            "u16": pa.array([0, 65535, None, 1], pa.uint16()),
            "u32": pa.array([0, 2**32 - 1, None, 1], pa.uint32()),
            "t32": pa.array([0, 1000, None, 86_399_000], pa.time32("ms")),
        }
    )
    with conn.cursor() as cur:
        assert cur.adbc_ingest(t, data, mode="create") == 4
        cur.execute(f"SELECT * FROM {t}")
        back = cur.fetch_arrow_table().to_pylist()
    assert [r["dict"] for r in back] == ["a", "b", None, "a"]
    assert [r["large"] for r in back] == ["x", None, "y" * 10, ""]
    assert [r["u32"] for r in back] == [0, 2**32 - 1, None, 1]
    assert back[3]["t32"] == dt.time(23, 59, 59)
    types = column_types(conn, t)
    assert types["u16"] == "int" and types["u32"] == "bigint" and types["t32"] == "time"

    src = tname()
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {src} (v datetimeoffset(7))")
        cur.execute(f"INSERT INTO {src} VALUES ('2024-05-06 07:08:09.1234567 +05:30'), (NULL)")
        cur.adbc_statement.set_options(**{"adbc.ferrodbc.statement.datetimeoffset": "struct"})
        cur.execute(f"SELECT v FROM {src}")
        offsets = cur.fetch_arrow_table()
        dst = tname()
        assert cur.adbc_ingest(dst, offsets, mode="create") == 2
        assert column_types(conn, dst)["v"] == "datetimeoffset"
    with conn.cursor() as cur:
        cur.execute(f"SELECT CONVERT(nvarchar(40), v, 127) FROM {dst}")
        rows = cur.fetchall()
    assert rows[1] == (None,)
    # The local time and its own offset came back (the read was to the microsecond).
    assert "2024-05-06" in rows[0][0] and "07:08:09.123456" in rows[0][0]
    assert rows[0][0].endswith("+05:30")


def test_modes(conn):
    t = tname()
    one = pa.table({"id": pa.array([1, 2], pa.int32())})
    with conn.cursor() as cur:
        cur.adbc_ingest(t, one, mode="create")
        with pytest.raises(adbc_driver_manager.Error) as ei:
            cur.adbc_ingest(t, one, mode="create")
        assert ei.value.status_code == adbc_driver_manager.AdbcStatusCode.ALREADY_EXISTS
        assert cur.adbc_ingest(t, one, mode="append") == 2
        assert cur.adbc_ingest(t, one, mode="create_append") == 2
        cur.execute(f"SELECT COUNT(*) FROM {t}")
        assert cur.fetchone() == (6,)
        assert cur.adbc_ingest(t, pa.table({"other": pa.array(["x"])}), mode="replace") == 1
        cur.execute(f"SELECT * FROM {t}")
        assert cur.fetchall() == [("x",)]
        missing = tname()
        with pytest.raises(adbc_driver_manager.Error) as ei:
            cur.adbc_ingest(missing, one, mode="append")
        assert ei.value.status_code == adbc_driver_manager.AdbcStatusCode.NOT_FOUND
        assert cur.adbc_ingest(missing, one, mode="create_append") == 2


def test_temporary_table_is_the_connections(conn):
    t = tname()
    with conn.cursor() as cur:
        assert cur.adbc_ingest(t, pa.table({"v": [1, 2, 3]}), mode="create", temporary=True) == 3
        cur.execute(f"SELECT SUM(v) FROM #{t}")
        assert cur.fetchone() == (6,)
        with pytest.raises(adbc_driver_manager.Error):
            cur.adbc_ingest(t, pa.table({"v": [1]}), temporary=True, db_schema_name="dbo")


def test_target_schema_and_not_null(conn):
    t = tname()
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
    data = pa.table({"id": [1, 2], "v": ["a", None]}, schema=schema)
    with conn.cursor() as cur:
        cur.adbc_ingest(t, data, mode="create", db_schema_name="dbo")
        cur.execute(f"SELECT id, v FROM dbo.{t} ORDER BY id")
        assert cur.fetchall() == [(1, "a"), (2, None)]
    objs = conn.adbc_get_objects(depth="columns", table_name_filter=t).read_all().to_pylist()
    cols = objs[0]["catalog_db_schemas"][0]["db_schema_tables"][0]["table_columns"]
    assert [c["xdbc_nullable"] for c in cols] == [0, 1]


def test_target_catalog(conn):
    t = tname()
    catalog = conn.adbc_connection.get_option("adbc.connection.catalog")
    with conn.cursor() as cur:
        assert cur.adbc_ingest(t, pa.table({"v": [7]}), catalog_name=catalog, db_schema_name="dbo") == 1
        cur.execute(f"SELECT v FROM {t}")
        assert cur.fetchall() == [(7,)]


def test_a_stream_of_many_batches(conn):
    t = tname()
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    batches = (pa.record_batch([pa.array(range(i * 1000, (i + 1) * 1000)), pa.array(["v"] * 1000)], schema=schema) for i in range(20))
    reader = pa.RecordBatchReader.from_batches(schema, batches)
    with conn.cursor() as cur:
        assert cur.adbc_ingest(t, reader, mode="create") == 20000
        cur.execute(f"SELECT COUNT(*), SUM(id) FROM {t}")
        assert cur.fetchone() == (20000, sum(range(20000)))


def test_ingest_joins_the_transaction(uri):
    import adbc_driver_ferrodbc.dbapi

    t = tname()
    with adbc_driver_ferrodbc.dbapi.connect(uri) as conn, conn.cursor() as cur:
        cur.adbc_ingest(t, pa.table({"v": [1]}), mode="create")
        conn.commit()
        cur.adbc_ingest(t, pa.table({"v": [2, 3]}), mode="append")
        conn.rollback()
        cur.execute(f"SELECT v FROM {t}")
        assert cur.fetchall() == [(1,)]


def test_pandas_to_sql(conn):
    t = tname()
    df = pd.DataFrame({"id": [1, 2, 3], "name": ["a", "b", None], "x": [0.5, None, 2.0]})
    assert df.to_sql(t, conn, index=False) == 3
    back = pd.read_sql(f"SELECT * FROM {t} ORDER BY id", conn)
    assert back["id"].tolist() == [1, 2, 3]
    assert back["name"].tolist()[:2] == ["a", "b"]
    df.to_sql(t, conn, index=False, if_exists="append")
    df.to_sql(t, conn, index=False, if_exists="replace")
    assert pd.read_sql(f"SELECT COUNT(*) AS n FROM {t}", conn)["n"].tolist() == [3]


def test_polars_write_database(conn):
    t = tname()
    df = pl.DataFrame({"id": [1, 2], "s": ["x", "y"]})
    df.write_database(t, conn, engine="adbc")
    df.write_database(t, conn, engine="adbc", if_table_exists="append")
    got = pl.read_database(f"SELECT id, s FROM {t} ORDER BY id, s", connection=conn)
    assert got.rows() == [(1, "x"), (1, "x"), (2, "y"), (2, "y")]
    pl.DataFrame({"id": [9]}).write_database(t, conn, engine="adbc", if_table_exists="replace")
    assert pl.read_database(f"SELECT * FROM {t}", connection=conn).rows() == [(9,)]
    fresh = tname()
    # append to a table that does not exist: polars asks GetTableSchema, sees NOT_FOUND, creates.
    pl.DataFrame({"id": [5]}).write_database(fresh, conn, engine="adbc", if_table_exists="append")
    assert pl.read_database(f"SELECT * FROM {fresh}", connection=conn).rows() == [(5,)]


def test_sqlite_ingest_through_parameter_arrays(sqlite_conn):
    with sqlite_conn.cursor() as cur:
        assert cur.adbc_ingest("t", pa.table({"id": [1, 2], "s": ["a", None]}), mode="create") == 2
        assert cur.adbc_ingest("t", pa.table({"id": [3], "s": ["c"]}), mode="append") == 1
        cur.execute("SELECT id, s FROM t ORDER BY id")
        assert cur.fetchall() == [(1, "a"), (2, None), (3, "c")]
        # temporary: SQLite's own temporary table (the temp schema), not a table in the file.
        assert cur.adbc_ingest("tmp", pa.table({"v": [1, 2]}), mode="create", temporary=True) == 2
        cur.execute("SELECT COUNT(*) FROM temp.sqlite_master WHERE name = 'tmp'")
        assert cur.fetchone() == (1,)
        cur.execute("SELECT COUNT(*) FROM main.sqlite_master WHERE name = 'tmp'")
        assert cur.fetchone() == (0,)
