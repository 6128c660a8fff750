"""ExecuteQuery, ExecuteUpdate, bind, ExecuteSchema, options and errors through the ferrodbc ADBC
driver, loaded by adbc_driver_manager, against the TDS peer (Driver 18 and FreeTDS)."""

from __future__ import annotations

import datetime as dt
import decimal
import subprocess
import threading
import time

import adbc_driver_ferrodbc
import adbc_driver_ferrodbc.dbapi
import adbc_driver_manager
import pyarrow as pa
import pytest

import ferrodbc

from sqlserver_support import synthetic, tname


def test_the_library_has_no_python(library):
    """Loadable by R, DuckDB, Go: the engine is built without PyO3, so no libpython is linked."""
    out = subprocess.run(["ldd", library], capture_output=True, text=True, check=True).stdout
    assert "python" not in out.lower()
    syms = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True).stdout
    assert "AdbcDriverFerrodbcInit" in syms and "AdbcDriverInit" in syms
    assert "Py_" not in syms


def test_select_through_the_driver_manager(conn):
    with conn.cursor() as cur:
        cur.execute("SELECT 1 AS x, N'h\u00e9llo' AS s, CAST(NULL AS int) AS n")
        table = cur.fetch_arrow_table()
        assert table.column_names == ["x", "s", "n"]
        assert table.to_pylist() == [{"x": 1, "s": "h\u00e9llo", "n": None}]


def test_same_arrow_as_fetch_arrow_table(conn, uri):
    """The driver reads through the engine's fetch plan: the schema and values are exactly those of
    ferrodbc's own fetch_arrow_table for the peer's all-types table."""
    # Every column but sql_variant (no Arrow type through Driver 18, in either path).
    cols = ", ".join(name for name, ty in synthetic.columns("types_all") if ty != "sql_variant")
    sql = f"SELECT {cols} FROM peer.types_all_500"
    with conn.cursor() as cur:
        cur.execute(sql)
        adbc_table = cur.fetch_arrow_table()
        with ferrodbc.connect(uri, autocommit=True) as native:
            ours = pa.table(native.cursor().execute(sql).fetch_arrow_table())
        assert adbc_table.schema == ours.schema
        assert adbc_table.equals(ours)
        assert adbc_table.num_rows == 500


def test_streams_in_batches_of_the_option(conn):
    with conn.cursor() as cur:
        cur.adbc_statement.set_options(**{adbc_driver_ferrodbc.StatementOptions.BATCH_ROWS.value: "1000"})
        cur.execute("SELECT * FROM peer.mixed_10000")
        reader = cur.fetch_record_batch()
        sizes = [b.num_rows for b in reader]
        assert sum(sizes) == 10000
        assert max(sizes) == 1000
        expected = synthetic.rows("mixed", 3)
        cur.execute("SELECT * FROM peer.mixed_3")
        got = [tuple(r.values()) for r in cur.fetch_arrow_table().to_pylist()]
        assert [r[0] for r in got] == [r[0] for r in expected]


def test_batch_bytes_option(conn):
    """A byte budget per batch becomes rows from the bound row size (at least one row)."""
    with conn.cursor() as cur:
        cur.adbc_statement.set_options(**{"adbc.ferrodbc.statement.batch_bytes": "100000"})
        assert cur.adbc_statement.get_option("adbc.ferrodbc.statement.batch_bytes") == "100000"
        cur.execute("SELECT * FROM peer.mixed_10000")
        sizes = [b.num_rows for b in cur.fetch_record_batch()]
        assert sum(sizes) == 10000
        assert 1 < max(sizes) < 8192
        cur.adbc_statement.set_options(**{"adbc.ferrodbc.statement.batch_bytes": "1"})
        cur.execute("SELECT * FROM peer.mixed_3")
        assert [b.num_rows for b in cur.fetch_record_batch()] == [1, 1, 1]


def test_fetchall_rows(conn):
    with conn.cursor() as cur:
        cur.execute("SELECT * FROM peer.int_nvarchar_100")
        rows = cur.fetchall()
        assert rows == [tuple(r) for r in synthetic.rows("int_nvarchar", 100)]


def test_qmark_parameters(conn):
    with conn.cursor() as cur:
        cur.execute(
            "SELECT ? AS i, ? AS s, ? AS d, ? AS ts, ? AS dec, ? AS n",
            (41, "caf\u00e9", dt.date(2024, 2, 29), dt.datetime(2024, 1, 2, 3, 4, 5, 123456), decimal.Decimal("12.345"), None),
        )
        row = cur.fetchone()
        assert row[0] == 41
        assert row[1] == "caf\u00e9"
        assert row[2] == dt.date(2024, 2, 29)
        assert row[3] == dt.datetime(2024, 1, 2, 3, 4, 5, 123456)
        assert row[4] == decimal.Decimal("12.345")
        assert row[5] is None


def test_executemany_and_rows_affected(conn):
    t = tname()
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {t} (id int, name nvarchar(20))")
        cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(i, f"n{i}") for i in range(250)])
        assert cur.rowcount == 250
        cur.execute(f"SELECT COUNT(*) FROM {t}")
        assert cur.fetchone() == (250,)
        # ExecuteUpdate: the rows an UPDATE touched.
        stmt = cur.adbc_statement
        stmt.set_sql_query(f"UPDATE {t} SET name = N'x' WHERE id < 10")
        assert stmt.execute_update() == 10


def test_rowcount_after_execute(conn):
    """DB-API's rowcount after execute() of a statement without a result set is what it changed
    (the driver writes ExecuteQuery's rows_affected; a SELECT's is -1, unknown)."""
    t = tname()
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {t} (id int)")
        cur.execute(f"INSERT INTO {t} VALUES (1), (2), (3)")
        assert cur.rowcount == 3
        cur.execute(f"UPDATE {t} SET id = id + 1 WHERE id > ?", (1,))
        assert cur.rowcount == 2
        cur.execute(f"SELECT id FROM {t}")
        assert cur.rowcount == -1
        cur.fetchall()


def test_bound_arrow_batch(conn):
    """bind / bind_stream: a many-row Arrow batch runs as a parameter array."""
    t = tname()
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {t} (id bigint, d decimal(10, 3), u uniqueidentifier)")
        import uuid

        u = uuid.UUID("6f9619ff-8b86-d011-b42d-00c04fc964ff")
        batch = pa.record_batch(
            {
                "id": pa.array([1, 2, 3], pa.int64()),
                "d": pa.array([decimal.Decimal("1.500"), None, decimal.Decimal("-2.250")], pa.decimal128(10, 3)),
                "u": pa.array([u.bytes, None, u.bytes], pa.binary(16)).cast(pa.uuid()),
            }
        )
        stmt = cur.adbc_statement
        stmt.set_sql_query(f"INSERT INTO {t} VALUES (?, ?, ?)")
        stmt.bind(batch)
        assert stmt.execute_update() == 3
        cur.execute(f"SELECT id, d, u FROM {t} ORDER BY id")
        rows = cur.fetch_arrow_table().to_pylist()
        assert [r["d"] for r in rows] == [decimal.Decimal("1.500"), None, decimal.Decimal("-2.250")]
        assert rows[0]["u"] == u and rows[1]["u"] is None


def test_execute_schema_does_not_run(conn):
    with conn.cursor() as cur:
        schema = cur.adbc_execute_schema("SELECT CAST(1 AS int) AS a, CAST(N'x' AS nvarchar(10)) AS b")
        assert schema.names == ["a", "b"]
        assert schema.field("a").type == pa.int32()
        assert schema.field("b").type == pa.string()
        # Unbound markers: described with NULLs, nothing run.
        schema = cur.adbc_execute_schema("SELECT CAST(? AS bigint) AS x WHERE 1 = ?")
        assert schema.names == ["x"] and schema.field("x").type == pa.int64()


def test_parameter_schema(conn, driver):
    with conn.cursor() as cur:
        cur.adbc_prepare("SELECT ? + ?")
        schema = pa.schema(cur.adbc_statement.get_parameter_schema())
        assert len(schema) == 2
        # Described by the server before any value is bound (Driver 18); FreeTDS has no
        # SQLDescribeParam (SQL_DESCRIBE_PARAMETER = N): null types, ADBC's "unknown".
        t = tname()
        cur.execute(f"CREATE TABLE {t} (a int, b nvarchar(20), c decimal(10, 2))")
        cur.adbc_prepare(f"INSERT INTO {t} (a, b, c) VALUES (?, ?, ?)")
        schema = pa.schema(cur.adbc_statement.get_parameter_schema())
        assert schema.names == ["0", "1", "2"]
        if driver == "msodbcsql":
            assert schema.types == [pa.int32(), pa.string(), pa.decimal128(10, 2)]
        else:
            assert schema.types == [pa.null()] * 3


def test_errors_carry_sqlstate_and_native_error(conn):
    with conn.cursor() as cur:
        with pytest.raises(adbc_driver_manager.ProgrammingError) as ei:
            cur.execute("SELECT * FROM no_such_table_here")
        e = ei.value
        assert e.sqlstate == "42S02"
        assert e.vendor_code == 208
        assert "no_such_table_here" in str(e)
        # The connection goes on.
        cur.execute("SELECT 2")
        assert cur.fetchone() == (2,)


def test_error_mid_stream_is_an_error_not_a_short_result(conn):
    with conn.cursor() as cur:
        with pytest.raises(Exception) as ei:
            cur.execute("SELECT 1/0 AS x")
            cur.fetch_arrow_table()
        assert "8134" in str(ei.value) or "divide" in str(ei.value).lower()


def test_transactions(uri):
    t = tname()
    with adbc_driver_ferrodbc.dbapi.connect(uri) as conn:  # DB-API: autocommit off
        with conn.cursor() as cur:
            cur.execute(f"CREATE TABLE {t} (id int)")
            conn.commit()
            cur.execute(f"INSERT INTO {t} VALUES (1)")
            conn.rollback()
            cur.execute(f"SELECT COUNT(*) FROM {t}")
            assert cur.fetchone() == (0,)
            cur.execute(f"INSERT INTO {t} VALUES (2)")
            conn.commit()
            assert conn.adbc_connection.get_option("adbc.connection.autocommit") == "false"
    with adbc_driver_ferrodbc.dbapi.connect(uri, autocommit=True) as conn:
        with conn.cursor() as cur:
            cur.execute(f"SELECT id FROM {t}")
            assert cur.fetchall() == [(2,)]


def test_connection_options(conn):
    c = conn.adbc_connection
    assert c.get_option("adbc.connection.autocommit") == "true"
    catalog = c.get_option("adbc.connection.catalog")
    assert catalog
    c.set_options(**{"adbc.connection.catalog": catalog})
    assert c.get_option("adbc.connection.catalog") == catalog
    c.set_options(**{"adbc.connection.readonly": "true"})
    assert c.get_option("adbc.connection.readonly") == "true"
    c.set_options(**{"adbc.connection.readonly": "false"})
    assert c.get_option("adbc.connection.db_schema") == "dbo"
    c.set_options(**{"adbc.connection.transaction.isolation_level": "adbc.connection.transaction.isolation.read_committed"})
    assert c.get_option("adbc.connection.transaction.isolation_level").endswith("read_committed")
    with pytest.raises(adbc_driver_manager.NotSupportedError):
        c.set_options(**{"adbc.connection.db_schema": "elsewhere"})
    with pytest.raises(adbc_driver_manager.NotSupportedError):
        c.set_options(**{"adbc.connection.transaction.isolation_level": "adbc.connection.transaction.isolation.linearizable"})


def test_unknown_option_is_refused(conn):
    with pytest.raises(adbc_driver_manager.Error):
        conn.adbc_connection.set_options(**{"adbc.ferrodbc.nope": "1"})


def test_substrait_and_partitions_are_not_implemented(conn):
    with conn.cursor() as cur:
        with pytest.raises(adbc_driver_manager.NotSupportedError):
            cur.adbc_statement.set_substrait_plan(b"x")
        cur.adbc_statement.set_sql_query("SELECT 1")
        with pytest.raises(adbc_driver_manager.NotSupportedError):
            cur.adbc_statement.execute_partitions()


def test_query_timeout_option(conn):
    with conn.cursor() as cur:
        cur.adbc_statement.set_options(**{adbc_driver_ferrodbc.StatementOptions.QUERY_TIMEOUT.value: "1"})
        started = time.monotonic()
        with pytest.raises(adbc_driver_manager.Error) as ei:
            cur.execute("SELECT * FROM peer.mixed_100 /* fault:stall=60 */")
            cur.fetchall()
        assert ei.value.sqlstate in ("HYT00", "HY008")
        assert time.monotonic() - started < 30


def test_cancel_from_another_thread(conn):
    """cursor.adbc_cancel() from another thread reaches the server (SQLCancel -> ATTENTION): the
    stalled execute ends as cancelled and the connection runs the next statement."""
    with conn.cursor() as cur:
        errors: list[BaseException] = []

        def run() -> None:
            try:
                cur.execute("SELECT * FROM peer.mixed_100 /* fault:stall=60 */")
                cur.fetchall()
            except BaseException as e:  # noqa: BLE001 (recorded for the assertion)
                errors.append(e)

        started = time.monotonic()
        t = threading.Thread(target=run)
        t.start()
        # Cancel until the execute ends: a cancel that comes before the execute starts (a slow
        # machine) finds nothing to cancel.
        while t.is_alive() and time.monotonic() - started < 30:
            time.sleep(0.3)
            cur.adbc_cancel()
            t.join(0.5)
        t.join(30)
        assert not t.is_alive()
        assert errors, "the stalled execute was not interrupted"
        assert getattr(errors[0], "status_code", None) == adbc_driver_manager.AdbcStatusCode.CANCELLED, errors[0]
        assert errors[0].sqlstate == "HY008"
        assert time.monotonic() - started < 30
        with conn.cursor() as cur2:
            cur2.execute("SELECT 5")
            assert cur2.fetchone() == (5,)


def test_a_second_statement_while_a_stream_is_open(conn):
    """No MARS: a second execute while a stream is unread is an error, and the stream reads on."""
    with conn.cursor() as first, conn.cursor() as second:
        first.execute("SELECT * FROM peer.mixed_100000")
        reader = first.fetch_record_batch()
        rows = reader.read_next_batch().num_rows
        with pytest.raises(adbc_driver_manager.Error) as ei:
            second.execute("SELECT 1")
        assert ei.value.sqlstate in ("HY000", "24000")
        rows += sum(b.num_rows for b in reader)
        assert rows == 100000
        second.execute("SELECT 1")
        assert second.fetchone() == (1,)


def test_a_stream_ends_when_its_statement_executes_again(conn):
    """The low-level API: a stream still unread when its statement executes again ends with an
    error (never another result's rows); a stream outlives its released statement."""
    raw = conn.adbc_connection
    with adbc_driver_manager.AdbcStatement(raw) as stmt:
        stmt.set_sql_query("SELECT * FROM peer.mixed_100000")
        handle, _ = stmt.execute_query()
        first = pa.RecordBatchReader.from_stream(handle)
        assert first.read_next_batch().num_rows > 0
        stmt.set_sql_query("SELECT 1 AS one")
        handle, _ = stmt.execute_query()
        second = pa.RecordBatchReader.from_stream(handle)
        with pytest.raises(Exception, match="executed again"):
            first.read_all()
        assert second.read_all().to_pylist() == [{"one": 1}]
    stmt = adbc_driver_manager.AdbcStatement(raw)
    stmt.set_sql_query("SELECT * FROM peer.mixed_20000")
    handle, _ = stmt.execute_query()
    stmt.close()
    assert pa.RecordBatchReader.from_stream(handle).read_all().num_rows == 20000


def test_url_form(peer, driver, library):
    if driver == "msodbcsql":
        url = f"mssql://sa:x@127.0.0.1:{peer.port}/?Encrypt=no"
    else:
        url = f"ferrodbc://sa:x@127.0.0.1:{peer.port}/?driver=FreeTDS&TDS_Version=7.4&Encryption=off"
    with adbc_driver_ferrodbc.dbapi.connect(url) as conn:
        with conn.cursor() as cur:
            cur.execute("SELECT 3")
            assert cur.fetchone() == (3,)


def test_username_password_options(peer, library):
    from sqlserver_support import require_driver

    require_driver("msodbcsql")
    uri = f"Driver={{ODBC Driver 18 for SQL Server}};Server=127.0.0.1,{peer.port};Encrypt=no"
    with adbc_driver_ferrodbc.dbapi.connect(uri, db_kwargs={"username": "sa", "password": "x"}) as conn:
        with conn.cursor() as cur:
            cur.execute("SELECT 4")
            assert cur.fetchone() == (4,)


def test_manifest_lets_loaders_find_it_by_name(tmp_path, uri, monkeypatch):
    from adbc_driver_ferrodbc import manifest

    path = manifest.write(tmp_path)
    assert path.name == "ferrodbc.toml"
    monkeypatch.setenv("ADBC_DRIVER_PATH", str(tmp_path))
    with adbc_driver_manager.dbapi.connect(driver="ferrodbc", uri=uri) as conn:
        with conn.cursor() as cur:
            cur.execute("SELECT 6")
            assert cur.fetchone() == (6,)
