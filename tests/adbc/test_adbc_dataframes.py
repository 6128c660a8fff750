"""pandas and polars over the ferrodbc ADBC driver's DB-API connection: pandas >= 2.2 detects an
ADBC connection and reads Arrow (``read_sql``); polars reads with ``read_database`` and, for the
URL form, ``read_database_uri(engine="adbc")`` (which imports ``adbc_driver_<scheme>``: the
scheme is ``ferrodbc``)."""

from __future__ import annotations

import pandas as pd
import polars as pl

from sqlserver_support import synthetic


def test_pandas_read_sql(conn):
    df = pd.read_sql("SELECT * FROM peer.int_nvarchar_float_200", conn)
    assert len(df) == 200
    expected = list(synthetic.rows("int_nvarchar_float", 200))
    got = [tuple(None if pd.isna(v) else v for v in r) for r in df.itertuples(index=False)]
    assert got == [tuple(r) for r in expected]


def test_polars_read_database(conn):
    df = pl.read_database("SELECT * FROM peer.int_nvarchar_100", connection=conn)
    assert df.height == 100
    assert df.rows() == [tuple(r) for r in synthetic.rows("int_nvarchar", 100)]


def test_polars_read_database_uri(peer, driver, library):
    if driver == "msodbcsql":
        url = f"ferrodbc://sa:x@127.0.0.1:{peer.port}/?Encrypt=no"
    else:
        url = f"ferrodbc://sa:x@127.0.0.1:{peer.port}/?driver=FreeTDS&TDS_Version=7.4&Encryption=off"
    df = pl.read_database_uri("SELECT * FROM peer.int_nvarchar_10", url, engine="adbc")
    assert df.rows() == [tuple(r) for r in synthetic.rows("int_nvarchar", 10)]
