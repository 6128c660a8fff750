"""GetInfo, GetObjects (every depth, filters, constraints), GetTableSchema and GetTableTypes
through the ferrodbc ADBC driver, against the TDS peer (Driver 18, FreeTDS) and SQLite3 ODBC."""

from __future__ import annotations

import adbc_driver_manager
import pyarrow as pa
import pytest

from sqlserver_support import tname


def test_get_info(conn):
    info = conn.adbc_get_info()
    assert info["vendor_name"] == "Microsoft SQL Server"
    assert info["vendor_version"]
    # adbc_driver_manager names only some codes: 3 is vendor_sql, 4 vendor_substrait.
    assert info[3] is True
    assert info[4] is False
    assert info["driver_name"] == "ADBC ferrodbc Driver"
    assert info["driver_version"] == "0.1.0"
    assert info["driver_adbc_version"] == 1_001_000


def make_tables(cur) -> tuple[str, str]:
    parent, child = tname("p"), tname("c")
    cur.execute(f"CREATE TABLE {parent} (id int NOT NULL PRIMARY KEY, code nvarchar(10) NOT NULL UNIQUE)")
    cur.execute(
        f"CREATE TABLE {child} (id int NOT NULL, parent_id int NULL, amount decimal(10, 2), "
        f"CONSTRAINT pk_{child} PRIMARY KEY (id), "
        f"CONSTRAINT fk_{child} FOREIGN KEY (parent_id) REFERENCES {parent} (id))"
    )
    return parent, child


def find_table(objects: list, name: str) -> dict:
    for cat in objects:
        for schema in cat["catalog_db_schemas"] or []:
            for table in schema["db_schema_tables"] or []:
                if table["table_name"] == name:
                    return table
    raise AssertionError(f"{name} not in GetObjects")


def test_get_objects_every_depth(conn):
    with conn.cursor() as cur:
        parent, child = make_tables(cur)

        cats = conn.adbc_get_objects(depth="catalogs").read_all().to_pylist()
        assert cats and all(x["catalog_db_schemas"] is None for x in cats)

        schemas = conn.adbc_get_objects(depth="db_schemas").read_all().to_pylist()
        names = [s["db_schema_name"] for x in schemas for s in x["catalog_db_schemas"]]
        assert "dbo" in names
        assert all(s["db_schema_tables"] is None for x in schemas for s in x["catalog_db_schemas"])

        tables = conn.adbc_get_objects(depth="tables", table_name_filter=child).read_all().to_pylist()
        t = find_table(tables, child)
        assert t["table_type"] == "TABLE"
        assert t["table_columns"] is None and t["table_constraints"] is None

        full = conn.adbc_get_objects(depth="all", table_name_filter=child).read_all().to_pylist()
        t = find_table(full, child)
        cols = t["table_columns"]
        assert [col["column_name"] for col in cols] == ["id", "parent_id", "amount"]
        assert [col["ordinal_position"] for col in cols] == [1, 2, 3]
        assert cols[0]["xdbc_nullable"] == 0 and cols[1]["xdbc_nullable"] == 1
        assert cols[2]["xdbc_type_name"] == "decimal"
        assert cols[2]["xdbc_column_size"] == 10 and cols[2]["xdbc_decimal_digits"] == 2
        kinds = {con["constraint_type"]: con for con in t["table_constraints"]}
        assert kinds["PRIMARY KEY"]["constraint_column_names"] == ["id"]
        fk = kinds["FOREIGN KEY"]
        assert fk["constraint_column_names"] == ["parent_id"]
        assert fk["constraint_column_usage"][0]["fk_table"] == parent
        assert fk["constraint_column_usage"][0]["fk_column_name"] == "id"


def test_get_objects_unique_constraint(conn):
    with conn.cursor() as cur:
        parent, _ = make_tables(cur)
        full = conn.adbc_get_objects(depth="all", table_name_filter=parent).read_all().to_pylist()
        cons = find_table(full, parent)["table_constraints"]
        uniques = [c for c in cons if c["constraint_type"] == "UNIQUE"]
        assert [u["constraint_column_names"] for u in uniques] == [["code"]]


def test_get_objects_check_constraints(conn):
    """CHECK constraints (read from sys.check_constraints: ODBC has no catalog function for them):
    a column's check names its column, a table-level one the columns its definition mentions."""
    t = tname("ck")
    with conn.cursor() as cur:
        cur.execute(
            f"CREATE TABLE {t} (id int NOT NULL PRIMARY KEY, qty int CHECK (qty > 0), lo int, hi int, "
            f"CONSTRAINT ck_{t}_range CHECK (lo <= hi))"
        )
        cur.execute(f"ALTER TABLE {t} ADD CONSTRAINT ck_{t}_id CHECK (id BETWEEN 1 AND 1000)")
        with pytest.raises(adbc_driver_manager.IntegrityError) as ei:
            cur.execute(f"INSERT INTO {t} VALUES (1, 0, 1, 2)")
        assert "547" in str(ei.value) and ei.value.sqlstate == "23000"
    table = find_table(conn.adbc_get_objects(depth="all", table_name_filter=t).read_all().to_pylist(), t)
    checks = {c["constraint_name"]: c["constraint_column_names"] for c in table["table_constraints"] if c["constraint_type"] == "CHECK"}
    generated = [n for n in checks if n.startswith(f"CK__{t[:9]}__qty__")]
    assert len(generated) == 1, checks
    assert checks == {generated[0]: ["qty"], f"ck_{t}_range": ["lo", "hi"], f"ck_{t}_id": ["id"]}
    assert all(not c["constraint_column_usage"] for c in table["table_constraints"] if c["constraint_type"] == "CHECK")


def test_get_objects_filters(conn):
    with conn.cursor() as cur:
        _, child = make_tables(cur)
        got = conn.adbc_get_objects(depth="columns", table_name_filter=child, column_name_filter="par%").read_all().to_pylist()
        assert [c["column_name"] for c in find_table(got, child)["table_columns"]] == ["parent_id"]
        none = conn.adbc_get_objects(depth="tables", table_name_filter="no_such_%").read_all().to_pylist()
        assert all(not s["db_schema_tables"] for x in none for s in x["catalog_db_schemas"])
        views = conn.adbc_get_objects(depth="tables", table_name_filter=child, table_types_filter=["VIEW"]).read_all().to_pylist()
        assert all(not s["db_schema_tables"] for x in views for s in x["catalog_db_schemas"])
        nothing = conn.adbc_get_objects(depth="all", catalog_filter="no_such_catalog").read_all()
        assert nothing.num_rows == 0


def test_get_table_schema(conn):
    with conn.cursor() as cur:
        _, child = make_tables(cur)
        schema = conn.adbc_get_table_schema(child)
        assert schema.names == ["id", "parent_id", "amount"]
        assert schema.field("id").type == pa.int32()
        assert schema.field("amount").type == pa.decimal128(10, 2)
        assert conn.adbc_get_table_schema(child, db_schema_filter="dbo") == schema
        with pytest.raises(adbc_driver_manager.Error) as ei:
            conn.adbc_get_table_schema("no_such_table_x")
        assert isinstance(ei.value, adbc_driver_manager.ProgrammingError) or "208" in str(ei.value)


def test_get_statistics_row_counts(conn):
    t = tname()
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {t} (id int PRIMARY KEY)")
        cur.executemany(f"INSERT INTO {t} VALUES (?)", [(i,) for i in range(17)])
    c = conn.adbc_connection
    names = pa.RecordBatchReader.from_stream(c.get_statistic_names()).read_all()
    assert names.num_rows == 0
    for approximate in (False, True):
        stats = pa.RecordBatchReader.from_stream(c.get_statistics(table_name=t, approximate=approximate)).read_all()
        rows = [
            s
            for cat in stats.to_pylist()
            for schema in cat["catalog_db_schemas"]
            for s in schema["db_schema_statistics"]
        ]
        assert [(r["table_name"], r["statistic_key"], r["statistic_value"]) for r in rows] == [(t, 6, 17)]
        assert rows[0]["statistic_is_approximate"] is approximate


def test_get_table_types(conn):
    types = conn.adbc_get_table_types()
    assert "TABLE" in types and "VIEW" in types


# --- SQLite3 ODBC: the same functions on another driver --------------------------------------


def test_sqlite_query_params_and_metadata(sqlite_conn):
    with sqlite_conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        cur.executemany("INSERT INTO t VALUES (?, ?)", [(1, "a"), (2, "b")])
        cur.execute("SELECT id, name FROM t WHERE id > ? ORDER BY id", (0,))
        assert cur.fetchall() == [(1, "a"), (2, "b")]
        info = sqlite_conn.adbc_get_info()
        assert info["vendor_name"].lower().startswith("sqlite")
        objs = sqlite_conn.adbc_get_objects(depth="all", table_name_filter="t").read_all().to_pylist()
        t = find_table(objs, "t")
        assert [c["column_name"] for c in t["table_columns"]] == ["id", "name"]
        assert sqlite_conn.adbc_get_table_schema("t").names == ["id", "name"]
        assert "TABLE" in sqlite_conn.adbc_get_table_types()
        # SQLite keeps CHECK constraints only in the table's text: GetObjects lists none.
        cur.execute("CREATE TABLE c (x INTEGER CHECK (x > 0))")
        objs = sqlite_conn.adbc_get_objects(depth="all", table_name_filter="c").read_all().to_pylist()
        assert find_table(objs, "c")["table_constraints"] == []
