"""ferrodbc.read_arrow (partitioned parallel Arrow reads) against the TDS peer through Driver 18:
any number of partitions gives the rows of the single read, NULLs and rows outside a given range
included; a list of queries; the errors for what cannot be partitioned."""

from __future__ import annotations

import sys

import pytest

from sqlserver_support import in_ci

try:
    import polars as pl
    import pyarrow as pa
except ImportError:  # eng/setup.sh installs them (eng/requirements.txt): CI fails, never skips
    if in_ci():
        raise
    pytest.skip("pyarrow/polars not installed (eng/requirements.txt)", allow_module_level=True)

import ferrodbc

from sqlserver_support import require_driver, tdspeer, tname, usertable

ROWS = 3000


@pytest.fixture(scope="module")
def loaded(peer):
    """(connection string, table): `mixed` rows 0..2999 plus three rows whose id is NULL, -50
    and 10**9 (outside the range a caller might give)."""
    require_driver("msodbcsql")
    cs = tdspeer.conn_str(peer, "msodbcsql")
    name = tname("part")
    cn = ferrodbc.connect(cs, autocommit=True)
    cur = cn.cursor()
    cur.execute(usertable.ddl("mixed", name))
    for sql in usertable.inserts("mixed", name, ROWS):
        cur.execute(sql)
    cur.execute(f"INSERT INTO {name} (id, name) VALUES (NULL, N'null id'), (-50, N'below'), "
                f"(1000000000, N'above')")
    cn.close()
    return cs, name


def row_set(table) -> list[tuple]:
    rows = [tuple(r.values()) for r in pa.table(table).to_pylist()]
    return sorted(rows, key=lambda r: (r[0] is not None, r[0] or 0, r[3]))


def single_read(cs: str, query: str):
    cn = ferrodbc.connect(cs)
    try:
        return pa.table(cn.cursor().execute(query).fetch_arrow_table())
    finally:
        cn.close()


@pytest.mark.parametrize("partitions", [1, 2, 3, 4, 7])
def test_partitions_give_the_rows_of_the_single_read(loaded, partitions):
    cs, name = loaded
    query = f"SELECT * FROM {name}"
    want = single_read(cs, query)
    assert want.num_rows == ROWS + 3
    got = ferrodbc.read_arrow(cs, query, partition_on="id", partitions=partitions)
    assert isinstance(got, pa.Table)
    assert got.schema == want.schema
    assert row_set(got) == row_set(want)


def test_partitions_come_in_ascending_ranges(loaded):
    cs, name = loaded
    got = ferrodbc.read_arrow(cs, f"SELECT id FROM {name}", partition_on="id", partitions=4,
                              partition_range=(0, 2999))
    ids = got.column("id").to_pylist()
    # Ranges [..750) with NULLs, [750, 1500), [1500, 2250), [2250..]; within one, server order.
    buckets = [0 if i is None or i < 750 else 1 if i < 1500 else 2 if i < 2250 else 3 for i in ids]
    assert buckets == sorted(buckets)
    assert buckets.count(0) == 750 + 2 and buckets.count(3) == 750 + 1


@pytest.mark.parametrize("given", [(0, 2999), (1000, 1200), (5, 8), (2000, 2000)])
def test_a_given_range_only_places_the_splits(loaded, given):
    cs, name = loaded
    query = f"SELECT * FROM {name}"
    got = ferrodbc.read_arrow(cs, query, partition_on="id", partitions=4, partition_range=given)
    assert row_set(got) == row_set(single_read(cs, query))


def test_a_query_with_where_join_and_top_order_by(loaded):
    cs, name = loaded
    query = (f"SELECT TOP 500 a.id, a.name, b.amount FROM {name} a JOIN {name} b ON a.id = b.id "
             f"WHERE a.id % 2 = 0 AND a.name <> N'ORDER BY; x' ORDER BY a.id DESC;")
    want = single_read(cs, query)
    assert want.num_rows == 500
    got = ferrodbc.read_arrow(cs, query, partition_on="id", partitions=3)
    assert sorted(got.column("id").to_pylist()) == sorted(want.column("id").to_pylist())


def test_a_list_of_queries_is_read_one_per_connection(loaded):
    cs, name = loaded
    queries = [f"SELECT * FROM {name} WHERE id < 1000", f"SELECT * FROM {name} WHERE id >= 1000",
               f"SELECT * FROM {name} WHERE id IS NULL"]
    got = ferrodbc.read_arrow(cs, queries)
    assert row_set(got) == row_set(single_read(cs, f"SELECT * FROM {name}"))
    # In list order.
    ids = got.column("id").to_pylist()
    assert ids.index(-50) < ids.index(1000) < ids.index(None) == len(ids) - 1


def test_an_empty_result_and_the_datetimeoffset_option(loaded):
    cs, name = loaded
    got = ferrodbc.read_arrow(cs, f"SELECT * FROM {name} WHERE id > 2000000000", partition_on="id",
                              partitions=4)
    assert got.num_rows == 0 and got.schema == single_read(cs, f"SELECT * FROM {name}").schema
    got = ferrodbc.read_arrow(cs, ["SELECT CAST('2024-01-02 03:04:05 +05:30' AS datetimeoffset) AS t"],
                              datetimeoffset="struct")
    assert pa.types.is_struct(got.schema.field("t").type)


def test_without_pyarrow_the_result_is_an_arrow_stream(loaded, monkeypatch):
    cs, name = loaded
    query = f"SELECT * FROM {name}"
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` raises ImportError
    got = ferrodbc.read_arrow(cs, query, partition_on="id", partitions=3)
    assert isinstance(got, ferrodbc.RecordBatchStream)
    assert got.num_rows == ROWS + 3
    monkeypatch.undo()
    frame = pl.DataFrame(got)
    assert sorted(frame.rows(), key=lambda r: (r[0] is not None, r[0] or 0, r[3])) == row_set(single_read(cs, query))


@pytest.mark.parametrize("column, kind", [("name", "str"), ("amount", "Decimal"), ("flag", "bool"),
                                          ("ts", "datetime"), ("f", "float")])
def test_a_non_integer_partition_column_is_refused(loaded, column, kind):
    cs, name = loaded
    with pytest.raises(ferrodbc.ProgrammingError, match=f"partition_on '{column}' must be an integer column.*{kind}"):
        ferrodbc.read_arrow(cs, f"SELECT * FROM {name}", partition_on=column, partitions=2)


@pytest.mark.parametrize("query, message", [
    ("SELECT * FROM {t} ORDER BY id", "ORDER BY"),
    ("SELECT * FROM {t} WHERE id < 5; SELECT * FROM {t}", "several"),
    ("WITH x AS (SELECT * FROM {t}) SELECT * FROM x", "WITH common table expression"),
    ("EXEC sp_who", "starts with EXEC"),
    ("DELETE FROM {t}", "starts with DELETE"),
    ("SELECT * INTO copy_of FROM {t}", "INTO"),
])
def test_a_query_that_cannot_be_wrapped_is_refused(loaded, query, message):
    cs, name = loaded
    with pytest.raises(ferrodbc.ProgrammingError, match=message):
        ferrodbc.read_arrow(cs, query.format(t=name), partition_on="id", partitions=2)
    # Nothing ran: the table still has every row.
    assert single_read(cs, f"SELECT COUNT(*) AS n FROM {name}").column("n").to_pylist() == [ROWS + 3]


def test_bad_arguments(loaded):
    cs, name = loaded
    q = f"SELECT * FROM {name}"
    with pytest.raises(ValueError, match="at least 1"):
        ferrodbc.read_arrow(cs, q, partition_on="id", partitions=0)
    with pytest.raises(TypeError, match="partitions must be an int"):
        ferrodbc.read_arrow(cs, q, partition_on="id", partitions=2.0)
    with pytest.raises(ValueError, match="needs partition_on"):
        ferrodbc.read_arrow(cs, q, partitions=2)
    with pytest.raises(ValueError, match="low 9 is above high 1"):
        ferrodbc.read_arrow(cs, q, partition_on="id", partitions=2, partition_range=(9, 1))
    with pytest.raises(ValueError, match="leave partition_on and partitions out"):
        ferrodbc.read_arrow(cs, [q, q], partition_on="id")
    with pytest.raises(ValueError, match="non-empty list"):
        ferrodbc.read_arrow(cs, [])
    # A database error keeps its class (unknown column: the server's 207).
    with pytest.raises(ferrodbc.ProgrammingError, match="no_such_col|Invalid column"):
        ferrodbc.read_arrow(cs, q, partition_on="no_such_col", partitions=2)
    # Parts whose columns differ cannot be one table.
    with pytest.raises(ferrodbc.ProgrammingError, match="columns differ"):
        ferrodbc.read_arrow(cs, [f"SELECT id FROM {name}", f"SELECT name FROM {name}"])


def test_arrow_options_reach_every_partition(loaded):
    """timestamp_unit and datetimeoffset are passed to each partition's fetch."""
    cs, name = loaded
    table = pa.table(ferrodbc.read_arrow(cs, f"SELECT id, ts FROM {name}", partition_on="id",
                                         partitions=3, timestamp_unit="ns"))
    assert table.schema.field("ts").type == pa.timestamp("ns")
    assert table.num_rows == ROWS + 3
    single = single_read(cs, f"SELECT id, ts FROM {name}").cast(table.schema)
    assert sorted(table.to_pylist(), key=repr) == sorted(single.to_pylist(), key=repr)
    with pytest.raises(ferrodbc.ProgrammingError, match="timestamp_unit"):
        ferrodbc.read_arrow(cs, f"SELECT id FROM {name}", timestamp_unit="s")
