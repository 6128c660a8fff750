"""The ferrodbc ADBC driver against PostgreSQL through psqlODBC (the shared server on port 54329
that eng/setup.sh and eng/peers/postgres.sh start): every ADBC function that applies to another
DBMS through ODBC. Each test works in a schema of its own (the server is shared), dropped at the
end; the connection's search_path points there, so unqualified names land in it."""

from __future__ import annotations

import datetime as dt
import decimal
import threading
import time
import uuid

import adbc_driver_ferrodbc.dbapi
import adbc_driver_manager
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest


@pytest.fixture
def pg(pg_conn):
    """(connection, schema): a fresh schema, first on the connection's search_path."""
    schema = f"adbc_{uuid.uuid4().hex[:10]}"
    with pg_conn.cursor() as cur:
        cur.execute(f"CREATE SCHEMA {schema}")
        cur.execute(f"SET search_path TO {schema}, public")
    try:
        yield pg_conn, schema
    finally:
        with pg_conn.cursor() as cur:
            cur.execute(f"DROP SCHEMA {schema} CASCADE")


def tables_of(conn, schema: str, depth: str = "all", **filters) -> dict:
    objs = conn.adbc_get_objects(depth=depth, db_schema_filter=schema, **filters).read_all().to_pylist()
    return {t["table_name"]: t for cat in objs for s in cat["catalog_db_schemas"] or [] for t in s["db_schema_tables"] or []}


def test_info_and_connection_options(pg):
    conn, schema = pg
    info = conn.adbc_get_info()
    assert info["vendor_name"] == "PostgreSQL"
    assert info["vendor_version"]
    c = conn.adbc_connection
    assert c.get_option("adbc.connection.catalog") == "odbcdb"
    assert c.get_option("adbc.connection.db_schema") == schema
    assert c.get_option("adbc.connection.autocommit") == "true"
    c.set_options(**{"adbc.connection.transaction.isolation_level": "adbc.connection.transaction.isolation.serializable"})
    assert c.get_option("adbc.connection.transaction.isolation_level").endswith("serializable")


def test_query_parameters_and_rows_affected(pg):
    conn, _ = pg
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id int, name varchar(20), amount numeric(10, 2), at timestamp)")
        rows = [(i, f"n{i}", decimal.Decimal(f"{i}.25"), dt.datetime(2024, 1, 2, 3, 4, 5, i)) for i in range(300)]
        cur.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
        assert cur.rowcount == 300
        cur.execute("SELECT id, name, amount, at FROM t WHERE id >= ? AND name <> ? ORDER BY id", (298, "x"))
        assert cur.fetchall() == rows[298:]
        cur.execute("SELECT id, name, amount, at FROM t ORDER BY id")
        table = cur.fetch_arrow_table()
        assert table.schema.field("amount").type == pa.decimal128(10, 2)
        assert table.schema.field("at").type == pa.timestamp("us")
        assert table.num_rows == 300
        cur.execute("UPDATE t SET name = 'y' WHERE id < ?", (7,))
        assert cur.rowcount == 7
        stmt = cur.adbc_statement
        stmt.set_sql_query("DELETE FROM t WHERE id >= 290")
        assert stmt.execute_update() == 10


def test_bound_arrow_batch_is_parameter_arrays(pg):
    conn, _ = pg
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE b (id bigint, s text, f double precision)")
        data = pa.table({"id": pa.array(range(1000), pa.int64()), "s": [f"s{i}" if i % 7 else None for i in range(1000)], "f": [i / 4 for i in range(1000)]})
        cur.adbc_prepare("INSERT INTO b VALUES (?, ?, ?)")
        cur.adbc_statement.bind(data.to_batches()[0])
        assert cur.adbc_statement.execute_update() == 1000
        cur.execute("SELECT id, s, f FROM b ORDER BY id")
        assert cur.fetch_arrow_table().to_pylist() == data.to_pylist()


def test_execute_schema_and_parameter_schema(pg):
    conn, _ = pg
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE p (a int, b varchar(20))")
        schema = cur.adbc_execute_schema("SELECT a, b FROM p")
        assert schema.names == ["a", "b"]
        assert schema.field("a").type == pa.int32()
        cur.adbc_prepare("INSERT INTO p (a, b) VALUES (?, ?)")
        assert len(pa.schema(cur.adbc_statement.get_parameter_schema())) == 2


def test_ingest_every_mode(pg):
    conn, schema = pg
    data = pa.table(
        {
            "i": pa.array([1, None, 3], pa.int32()),
            "big": pa.array([2**62, None, -1], pa.int64()),
            "dec": pa.array([decimal.Decimal("1.50"), None, decimal.Decimal("-2.25")], pa.decimal128(12, 2)),
            "s": ["caf\u00e9", None, "x" * 3000],
            "d": pa.array([dt.date(2024, 2, 29), None, dt.date(1, 1, 1)], pa.date32()),
            "ts": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 6), None, None], pa.timestamp("us")),
            "flag": [True, None, False],
        }
    )
    with conn.cursor() as cur:
        assert cur.adbc_ingest("ing", data, mode="create") == 3
        cur.execute("SELECT * FROM ing ORDER BY i NULLS LAST")
        got = cur.fetch_arrow_table()
        assert got.column("dec").to_pylist() == [decimal.Decimal("1.50"), decimal.Decimal("-2.25"), None]
        assert got.column("s").to_pylist()[1] == "x" * 3000
        with pytest.raises(adbc_driver_manager.Error):
            cur.adbc_ingest("ing", data, mode="create")
        assert cur.adbc_ingest("ing", data, mode="append") == 3
        assert cur.adbc_ingest("ing", data.slice(0, 1), mode="replace") == 1
        assert cur.adbc_ingest("ing", data, mode="create_append") == 3
        assert cur.adbc_ingest("ing2", data, mode="create_append") == 3
        assert cur.adbc_ingest("ing4", data, mode="replace") == 3
        cur.execute("SELECT (SELECT COUNT(*) FROM ing), (SELECT COUNT(*) FROM ing2)")
        assert cur.fetchone() == (4, 3)
        # target schema, and a temporary table (PostgreSQL's pg_temp schema, this session's).
        assert cur.adbc_ingest("ing3", data, mode="create", db_schema_name=schema) == 3
    with conn.cursor() as cur:  # (a statement keeps its ingest options: a fresh one)
        assert cur.adbc_ingest("tmp", data, mode="create", temporary=True) == 3
        cur.execute("SELECT n.nspname LIKE 'pg_temp%' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'tmp'")
        assert cur.fetchone() == (True,)
        # create chose the exact types.
        cols = {c["column_name"]: c["xdbc_type_name"] for c in tables_of(conn, schema, "columns", table_name_filter="ing")["ing"]["table_columns"]}
        assert cols["dec"] == "numeric" and cols["big"] == "int8" and cols["ts"] == "timestamp"


def test_get_objects_every_depth_and_constraints(pg):
    conn, schema = pg
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE parent (id int PRIMARY KEY, code varchar(10) NOT NULL CONSTRAINT uq_code UNIQUE)")
        cur.execute(
            "CREATE TABLE child (id int NOT NULL, parent_id int, qty int CHECK (qty > 0), lo int, hi int, "
            "CONSTRAINT pk_child PRIMARY KEY (id), "
            "CONSTRAINT fk_child FOREIGN KEY (parent_id) REFERENCES parent (id), "
            "CONSTRAINT ck_range CHECK (lo <= hi))"
        )
        cur.execute("ALTER TABLE child ADD CONSTRAINT ck_id CHECK (id BETWEEN 1 AND 1000)")
    catalogs = conn.adbc_get_objects(depth="catalogs").read_all().to_pylist()
    assert "odbcdb" in [c["catalog_name"] for c in catalogs]
    schemas = conn.adbc_get_objects(depth="db_schemas", db_schema_filter=schema).read_all().to_pylist()
    assert [s["db_schema_name"] for c in schemas for s in c["catalog_db_schemas"]] == [schema]
    tables = tables_of(conn, schema, "tables")
    assert set(tables) == {"parent", "child"} and tables["child"]["table_columns"] is None
    child = tables_of(conn, schema, table_name_filter="chi%")["child"]
    assert [c["column_name"] for c in child["table_columns"]] == ["id", "parent_id", "qty", "lo", "hi"]
    cons = {c["constraint_name"]: c for c in child["table_constraints"]}
    assert cons["pk_child"]["constraint_type"] == "PRIMARY KEY"
    assert cons["fk_child"]["constraint_type"] == "FOREIGN KEY"
    assert cons["fk_child"]["constraint_column_names"] == ["parent_id"]
    assert [(u["fk_table"], u["fk_column_name"]) for u in cons["fk_child"]["constraint_column_usage"]] == [("parent", "id")]
    checks = {n: c["constraint_column_names"] for n, c in cons.items() if c["constraint_type"] == "CHECK"}
    assert checks == {"child_qty_check": ["qty"], "ck_range": ["lo", "hi"], "ck_id": ["id"]}
    parent = tables_of(conn, schema, table_name_filter="parent")["parent"]
    assert ("UNIQUE", ["code"]) in [(c["constraint_type"], c["constraint_column_names"]) for c in parent["table_constraints"]]
    cols = tables_of(conn, schema, "columns", table_name_filter="child", column_name_filter="l_")["child"]["table_columns"]
    assert [c["column_name"] for c in cols] == ["lo"]


def test_get_table_schema_and_types(pg):
    conn, schema = pg
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE ts (id int, amount numeric(10, 2), s text)")
    s = conn.adbc_get_table_schema("ts", db_schema_filter=schema)
    assert s.names == ["id", "amount", "s"]
    assert s.field("amount").type == pa.decimal128(10, 2)
    assert "TABLE" in conn.adbc_get_table_types()


def test_transactions(pg_uri, pg):
    _, schema = pg
    with adbc_driver_ferrodbc.dbapi.connect(pg_uri) as conn, conn.cursor() as cur:  # autocommit off
        cur.execute(f"CREATE TABLE {schema}.tx (id int)")
        conn.commit()
        cur.execute(f"INSERT INTO {schema}.tx VALUES (1)")
        conn.rollback()
        cur.execute(f"INSERT INTO {schema}.tx VALUES (2)")
        conn.commit()
        cur.execute(f"SELECT id FROM {schema}.tx")
        assert cur.fetchall() == [(2,)]
        conn.commit()


def test_cancel_reaches_the_server(pg):
    conn, _ = pg
    with conn.cursor() as cur:
        errors: list[BaseException] = []

        def run() -> None:
            try:
                cur.execute("SELECT pg_sleep(60)")
                cur.fetchall()
            except BaseException as e:  # noqa: BLE001 (recorded for the assertion)
                errors.append(e)

        started = time.monotonic()
        t = threading.Thread(target=run)
        t.start()
        while t.is_alive() and time.monotonic() - started < 30:
            time.sleep(0.3)
            cur.adbc_cancel()
            t.join(0.5)
        t.join(30)
        assert not t.is_alive() and errors
        assert time.monotonic() - started < 30
    with conn.cursor() as cur:
        cur.execute("SELECT 5")
        assert cur.fetchone() == (5,)


def test_pandas_and_polars(pg):
    conn, _ = pg
    pd.DataFrame({"id": [1, 2], "s": ["a", None]}).to_sql("pdt", conn, index=False)
    df = pd.read_sql("SELECT id, s FROM pdt ORDER BY id", conn)
    assert df["id"].tolist() == [1, 2] and df["s"][0] == "a" and pd.isna(df["s"][1])
    pl.DataFrame({"v": [7]}).write_database("plt", conn, engine="adbc")
    assert pl.read_database("SELECT v FROM plt", connection=conn).rows() == [(7,)]


def test_errors_carry_sqlstate(pg):
    conn, _ = pg
    with conn.cursor() as cur, pytest.raises(adbc_driver_manager.Error) as ei:
        cur.execute("SELECT * FROM no_such_table_here")
    assert ei.value.sqlstate == "42P01"
