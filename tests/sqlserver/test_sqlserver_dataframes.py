"""pandas and polars on SQL Server through ferrodbc, against the TDS peer through Driver 18: a typed
frame (ints, exact decimals, NVARCHAR with non-Latin text, datetime2, datetimeoffset, bit, NULLs)
written with ``DataFrame.to_sql`` (default and ``method="multi"``, in chunks) through the
``mssql+ferrodbc`` dialect and read back with ``read_sql`` / ``read_sql_query`` /
``read_sql_table``; the Arrow path into pandas (``types_mapper=pd.ArrowDtype``) and polars
(``pl.DataFrame(cursor.fetch_record_batch())``, ``pl.read_database``)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from sqlserver_support import in_ci

try:
    import pandas as pd
    import polars as pl
    import pyarrow as pa
    import sqlalchemy
except ImportError:  # eng/setup.sh installs them (eng/requirements.txt): CI fails, never skips
    if in_ci():
        raise
    pytest.skip("pandas/polars/pyarrow/SQLAlchemy not installed (eng/requirements.txt)", allow_module_level=True)

from polars.testing import assert_frame_equal
from sqlalchemy import BigInteger, Boolean, Integer, Numeric, create_engine
from sqlalchemy.dialects.mssql import DATETIME2, DATETIMEOFFSET, NVARCHAR

import ferrodbc

from sqlserver_support import require_driver, tdspeer, tname

IST = datetime.timezone(datetime.timedelta(hours=5, minutes=30))
PST = datetime.timezone(datetime.timedelta(hours=-8))
UTC = datetime.timezone.utc

# Five rows so that chunksize=2 writes three chunks (the last one short); row 2 is all NULLs.
IDS = [1, 2, 3, 4, 5]
SMALL = [7, None, -3, 2**31 - 1, -(2**31)]
AMOUNT = [Decimal("12345678901234.5678"), None, Decimal("-0.0001"), Decimal("0.0000"), Decimal("-99999999999999.9999")]
NAME = ["Grüße 日本語", None, "Ελληνικά ✓", "emoji 😀 beyond the BMP", ""]
TS = [datetime.datetime(2024, 1, 2, 3, 4, 5, 123456), None, datetime.datetime(1999, 12, 31, 23, 59, 59, 999999),
      datetime.datetime(1, 1, 1), datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)]
TSO = [datetime.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=IST), None, datetime.datetime(2000, 1, 1, tzinfo=UTC),
       datetime.datetime(2020, 2, 29, 12, 0, tzinfo=PST), datetime.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC)]
FLAG = [True, None, False, True, False]
COLUMNS = ["id", "small", "amount", "name", "ts", "tso", "flag"]
ROWS = list(zip(IDS, SMALL, AMOUNT, NAME, TS, TSO, FLAG))

# The SQL types to_sql creates. Without them pandas picks BIGINT/FLOAT/VARCHAR(max)/DATETIME:
# Decimal objects would go to a text column, non-Latin text to VARCHAR and datetime2 precision to
# DATETIME's 1/300 s (SQLAlchemy's generic types on SQL Server), whatever the driver.
SQL_TYPES = {
    "id": BigInteger(), "small": Integer(), "amount": Numeric(18, 4), "name": NVARCHAR(50),
    "ts": DATETIME2(7), "tso": DATETIMEOFFSET(7), "flag": Boolean(),
}


def typed_frame() -> pd.DataFrame:
    # datetime2 outside datetime64[ns]'s years (0001, 9999): microsecond units hold them.
    return pd.DataFrame({
        "id": pd.array(IDS, dtype="Int64"),
        "small": pd.array(SMALL, dtype="Int32"),
        "amount": pd.Series(AMOUNT, dtype=object),
        "name": pd.Series(NAME, dtype=object),
        "ts": pd.Series(TS, dtype="datetime64[us]"),
        # Several offsets in one column: object dtype (pandas' datetime64 has one zone a column).
        "tso": pd.Series(TSO, dtype=object),
        "flag": pd.array(FLAG, dtype="boolean"),
    })


@pytest.fixture
def engine(peer):
    require_driver("msodbcsql")
    eng = create_engine(f"mssql+ferrodbc://sa:x@127.0.0.1:{peer.port}/master"
                        "?driver=ODBC+Driver+18+for+SQL+Server&Encrypt=no")
    yield eng
    eng.dispose()


@pytest.fixture
def raw(peer):
    require_driver("msodbcsql")
    cn = ferrodbc.connect(tdspeer.conn_str(peer, "msodbcsql"), autocommit=True)
    yield cn
    cn.close()


@pytest.fixture
def table(engine):
    """A table holding the typed frame, written by to_sql (default method, one chunk)."""
    name = tname("pd")
    assert typed_frame().to_sql(name, engine, index=False, dtype=SQL_TYPES) == len(ROWS)
    return name


def stored_rows(raw, name) -> list[tuple]:
    return [tuple(r) for r in raw.cursor().execute(f"SELECT {', '.join(COLUMNS)} FROM {name} ORDER BY id").fetchall()]


def cell(value):
    """A frame cell as a plain Python value (NaN/NaT/NA -> None, Timestamp -> datetime)."""
    if value is None or value is pd.NaT or (not isinstance(value, (str, Decimal)) and pd.isna(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def frame_rows(df: pd.DataFrame) -> list[tuple]:
    return [tuple(cell(v) for v in row) for row in df[COLUMNS].itertuples(index=False)]


@pytest.mark.parametrize("method", [None, "multi"])
@pytest.mark.parametrize("chunksize", [None, 2])
def test_to_sql_stores_every_value_exactly(engine, raw, method, chunksize):
    name = tname("pd")
    written = typed_frame().to_sql(name, engine, index=False, dtype=SQL_TYPES, method=method, chunksize=chunksize)
    assert written == len(ROWS)
    # Read back through ferrodbc's own rows: exact decimals, each datetimeoffset's own offset.
    assert stored_rows(raw, name) == ROWS
    for (*_, tso, _flag), (*_, want, _) in zip(stored_rows(raw, name), ROWS):
        assert tso is None or tso.utcoffset() == want.utcoffset()
    # The column types to_sql created are the ones asked for (NVARCHAR keeps non-Latin text).
    types = raw.cursor().execute(
        "SELECT c.name, t.name FROM sys.columns c JOIN sys.types t ON c.user_type_id = t.user_type_id "
        "WHERE c.object_id = OBJECT_ID(?) ORDER BY c.column_id", name).fetchall()
    assert [tuple(r) for r in types] == [("id", "bigint"), ("small", "int"), ("amount", "numeric"),
                                         ("name", "nvarchar"), ("ts", "datetime2"),
                                         ("tso", "datetimeoffset"), ("flag", "bit")]


def test_to_sql_append_and_replace(engine, raw):
    name = tname("pd")
    frame = typed_frame()
    frame.to_sql(name, engine, index=False, dtype=SQL_TYPES)
    assert frame.assign(id=frame.id + 10).to_sql(name, engine, index=False, if_exists="append", chunksize=3) == 5
    assert len(stored_rows(raw, name)) == 10
    frame.to_sql(name, engine, index=False, dtype=SQL_TYPES, if_exists="replace", method="multi")
    assert stored_rows(raw, name) == ROWS


def test_read_sql_query_returns_the_typed_values(engine, table):
    df = pd.read_sql_query(f"SELECT * FROM {table} ORDER BY id", engine, coerce_float=False)
    assert list(df.columns) == COLUMNS
    assert frame_rows(df) == ROWS
    assert df["id"].dtype == "int64" and df["ts"].dtype == "datetime64[us]"
    # Exact decimals stay Decimal (coerce_float=False), each tso keeps its own offset.
    assert [type(v) for v in df["amount"] if v is not None] == [Decimal] * 4
    assert [v.utcoffset() for v in df["tso"] if v is not None] == [t.utcoffset() for t in TSO if t is not None]


def test_read_sql_with_a_string_a_text_clause_and_params(engine, table):
    df = pd.read_sql(f"SELECT * FROM {table} ORDER BY id", engine, coerce_float=False)
    assert frame_rows(df) == ROWS
    df = pd.read_sql(sqlalchemy.text(f"SELECT * FROM {table} WHERE id > :low ORDER BY id"), engine,
                     params={"low": 2}, coerce_float=False)
    assert frame_rows(df) == ROWS[2:]
    chunks = list(pd.read_sql(f"SELECT * FROM {table} ORDER BY id", engine, chunksize=2, coerce_float=False))
    assert [len(c) for c in chunks] == [2, 2, 1]
    assert frame_rows(pd.concat(chunks)) == ROWS


def test_read_sql_table_reflects_and_reads(engine, table):
    # parse_dates utc=True for datetimeoffset: without it pandas 3.1.1 makes one zone of the
    # first value's offset and turns every value with another offset into NaT (the same with
    # mssql+pyodbc: pandas' column harmonisation, not the driver).
    # And read_sql_table casts every reflected NUMERIC column to float64 whatever coerce_float
    # says (its column harmonisation again; also with mssql+pyodbc and dtype_backend="pyarrow"):
    # exact decimals come through read_sql_query / read_sql, or the Arrow path.
    df = pd.read_sql_table(table, engine, coerce_float=False, parse_dates={"tso": {"utc": True}})
    df = df.sort_values("id")
    want = [r[:2] + ((None if r[2] is None else float(r[2])),) + r[3:5]
            + ((None if r[5] is None else r[5].astimezone(UTC)),) + r[6:] for r in ROWS]
    assert frame_rows(df) == want
    assert str(df["tso"].dtype) == "datetime64[us, UTC]"
    df = pd.read_sql_table(table, engine, columns=["id", "name"]).sort_values("id")
    assert [cell(v) for v in df["name"]] == NAME


def test_arrow_into_pandas_with_arrow_dtypes(raw, table):
    cur = raw.cursor().execute(f"SELECT {', '.join(COLUMNS)} FROM {table} ORDER BY id")
    df = pa.table(cur.fetch_arrow_table()).to_pandas(types_mapper=pd.ArrowDtype)
    assert [str(t) for t in df.dtypes] == [
        "int64[pyarrow]", "int32[pyarrow]", "decimal128(18, 4)[pyarrow]", "string[pyarrow]",
        "timestamp[us][pyarrow]", "timestamp[us, tz=UTC][pyarrow]", "bool[pyarrow]"]
    want = [r[:5] + ((None if r[5] is None else r[5].astimezone(UTC)),) + r[6:] for r in ROWS]
    assert frame_rows(df) == want


def arrow_polars(raw, table) -> pl.DataFrame:
    cur = raw.cursor().execute(f"SELECT {', '.join(COLUMNS)} FROM {table} ORDER BY id")
    return pl.DataFrame(cur.fetch_record_batch(rows_per_batch=2))


def test_arrow_into_polars(raw, table):
    df = arrow_polars(raw, table)
    assert df.schema == pl.Schema({
        "id": pl.Int64, "small": pl.Int32, "amount": pl.Decimal(18, 4), "name": pl.String,
        "ts": pl.Datetime("us"), "tso": pl.Datetime("us", "UTC"), "flag": pl.Boolean})
    want = [r[:5] + ((None if r[5] is None else r[5].astimezone(UTC)),) + r[6:] for r in ROWS]
    assert df.rows() == want


# polars' read_database takes its Arrow path only for drivers it lists by module name (ADBC,
# DuckDB, turbodbc, ...); for ferrodbc, as for pyodbc, it reads rows and infers the schema: ints
# become Int64 and datetimeoffset values (several offsets) naive UTC datetimes unless
# schema_overrides says otherwise. With the overrides the frame equals the Arrow one.
OVERRIDES = {"small": pl.Int32, "tso": pl.Datetime("us", "UTC")}


@pytest.mark.parametrize("through", ["raw_connection", "engine", "sqlalchemy_connection"])
def test_polars_read_database(engine, raw, table, through):
    query = f"SELECT {', '.join(COLUMNS)} FROM {table} ORDER BY id"
    if through == "raw_connection":
        df = pl.read_database(query, raw, schema_overrides=OVERRIDES)
    elif through == "engine":
        df = pl.read_database(query, engine, schema_overrides=OVERRIDES)
    else:
        with engine.connect() as c:
            df = pl.read_database(query, c, schema_overrides=OVERRIDES)
    assert_frame_equal(df, arrow_polars(raw, table))
    # In batches too.
    frames = list(pl.read_database(query, raw, iter_batches=True, batch_size=2, schema_overrides=OVERRIDES))
    assert [len(f) for f in frames] == [2, 2, 1]
    assert_frame_equal(pl.concat(frames), arrow_polars(raw, table))


# ---- bulk loads: pandas to_sql(method=...) and polars write_database through Cursor.bulkcopy


def test_pandas_to_sql_with_the_bulkcopy_method(engine, raw):
    name = tname("pdbulk")
    # The table first (to_sql with if_exists="append" needs it), then the rows by bulk copy.
    typed_frame().head(0).to_sql(name, engine, index=False, dtype=SQL_TYPES)
    before = ferrodbc.counters()["bulk_bcp_loads"]
    written = typed_frame().to_sql(
        name, engine, index=False, if_exists="append", method=ferrodbc.bulk.to_sql_method
    )
    assert ferrodbc.counters()["bulk_bcp_loads"] == before + 1
    assert written == len(ROWS)
    assert stored_rows(raw, name) == ROWS


def test_polars_write_database_with_the_bulkcopy_method(engine, raw):
    name = tname("plbulk")
    typed_frame().head(0).to_sql(name, engine, index=False, dtype=SQL_TYPES)
    frame = pl.from_pandas(typed_frame().drop(columns=["tso"]))
    before = ferrodbc.counters()["bulk_bcp_loads"]
    frame.write_database(
        name, engine, if_table_exists="append", engine_options={"method": ferrodbc.bulk.to_sql_method}
    )
    assert ferrodbc.counters()["bulk_bcp_loads"] == before + 1
    got = [tuple(r) for r in raw.cursor().execute(f"SELECT id, small, amount, name, ts, flag FROM {name} ORDER BY id").fetchall()]
    assert got == [(i, s, a, n, t, f) for i, s, a, n, t, _, f in ROWS]


def test_polars_frame_straight_into_bulkcopy_arrow(raw):
    name = tname("plarrow")
    cur = raw.cursor()
    cur.execute(f"CREATE TABLE {name} (id bigint, name nvarchar(50), ts datetime2(6))")
    frame = pl.DataFrame({"id": IDS, "name": NAME, "ts": TS})
    assert cur.bulkcopy_arrow(name, frame)["rows_copied"] == len(IDS)
    got = [tuple(r) for r in cur.execute(f"SELECT id, name, ts FROM {name} ORDER BY id").fetchall()]
    assert got == list(zip(IDS, NAME, TS))
