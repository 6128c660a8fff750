"""Row: what every fetch returns. Indexable like a tuple, addressable by column name, and
independent of the cursor that produced it."""

from __future__ import annotations

import copy
import gc
import pickle
import sys

import pytest

import ferrodbc


@pytest.fixture
def row(conn):
    return conn.cursor().execute("SELECT 1 AS a, 'two' AS b, 3 AS c").fetchone()


def test_rows_are_row_objects(row):
    assert isinstance(row, ferrodbc.Row)
    assert len(row) == 3


def test_index_and_negative_index(row):
    assert (row[0], row[1], row[2]) == (1, "two", 3)
    assert (row[-1], row[-2], row[-3]) == (3, "two", 1)
    with pytest.raises(IndexError):
        row[3]
    with pytest.raises(IndexError):
        row[-4]


def test_slices_return_tuples(row):
    assert row[1:] == ("two", 3)
    assert row[:2] == (1, "two")
    assert row[::-1] == (3, "two", 1)
    assert row[5:] == ()


def test_attribute_and_column_name_access(row):
    assert row.a == 1 and row.b == "two" and row.c == 3
    assert row["a"] == 1 and row["b"] == "two"
    with pytest.raises(AttributeError):
        _ = row.nope
    with pytest.raises(KeyError):
        row["nope"]
    with pytest.raises(TypeError):
        row[1.5]


def test_mapping_gives_name_to_value_and_is_read_only(row):
    mapping = row._mapping
    assert dict(mapping) == {"a": 1, "b": "two", "c": 3}
    assert list(mapping) == ["a", "b", "c"], "column order is kept"
    with pytest.raises(TypeError):
        mapping["a"] = 10  # type: ignore[index]
    with pytest.raises(TypeError):
        del mapping["a"]  # type: ignore[attr-defined]
    assert row.a == 1, "the row is unchanged"


def test_rows_are_immutable(row):
    with pytest.raises((TypeError, AttributeError)):
        row[0] = 5  # type: ignore[index]
    with pytest.raises(AttributeError):
        row.a = 5


def test_fields_and_cursor_description(conn):
    cur = conn.cursor()
    row = cur.execute("SELECT 1 AS x, 2 AS y").fetchone()
    assert row._fields == ("x", "y")
    assert row.cursor_description == cur.description


def test_rows_compare_equal_to_tuples_and_rows_with_the_same_values(row, conn):
    assert row == (1, "two", 3)
    assert (1, "two", 3) == row
    assert row != (1, "two", 4)
    assert row != (1, "two")
    other = conn.cursor().execute("SELECT 1 AS p, 'two' AS q, 3 AS r").fetchone()
    assert row == other, "equality is by value, like tuples"
    assert row < (1, "two", 4)
    assert hash(row) == hash((1, "two", 3))
    assert (row == [1, "two", 3]) is False, "not equal to a list (tuples aren't either)"


def test_repr_looks_like_the_tuple(row):
    assert repr(row) == repr((1, "two", 3))


def test_tuple_list_unpacking_and_membership(row):
    assert tuple(row) == (1, "two", 3)
    assert list(row) == [1, "two", 3]
    a, b, c = row
    assert (a, b, c) == (1, "two", 3)
    assert "two" in row and 4 not in row
    assert row._tuple() == (1, "two", 3)


def test_rows_pickle_and_copy_as_plain_tuples(row):
    assert pickle.loads(pickle.dumps(row)) == (1, "two", 3)
    assert copy.copy(row) == (1, "two", 3)


def test_duplicate_column_names_resolve_to_the_last_one(conn):
    row = conn.cursor().execute("SELECT 1 AS v, 2 AS v").fetchone()
    assert tuple(row) == (1, 2)
    assert row.v == 2


def test_rows_stay_valid_after_the_cursor_fetches_more_closes_and_is_collected(conn, table):
    """Rows own their values: reusing the batch buffers, closing and freeing the cursor
    (and the connection) never changes a row already handed out."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, name VARCHAR(20))")
    conn.cursor().executemany(
        f"INSERT INTO {table} (id, name) VALUES (?, ?)", [(i, f"name-{i}") for i in range(3000)]
    )
    cur.execute(f"SELECT id, name FROM {table} ORDER BY id")
    first = cur.fetchone()
    early = cur.fetchmany(40)  # spans the first row array's refill
    later = cur.fetchall()
    cur.close()
    del cur
    gc.collect()
    conn.close()
    gc.collect()
    assert first == (0, "name-0") and first.name == "name-0"
    assert [tuple(r) for r in early] == [(i, f"name-{i}") for i in range(1, 41)]
    assert len(later) == 3000 - 41
    assert later[-1].id == 2999 and later[-1]["name"] == "name-2999"
    assert dict(early[0]._mapping) == {"id": 1, "name": "name-1"}
    assert early[0].cursor_description[0][0] == "id"


def test_non_ascii_column_names(peer, conn, table):
    """Column names in any script work for description, attribute and name access."""
    cur = conn.cursor()
    cur.execute(f'CREATE TABLE {table} ("naïve" INTEGER, "日本" INTEGER, plain INTEGER)')
    cur.execute(f'INSERT INTO {table} VALUES (1, 2, 3)')
    row = cur.execute(f'SELECT "naïve", "日本", plain FROM {table}').fetchone()
    assert [d[0] for d in cur.description] == ["naïve", "日本", "plain"]
    assert row.naïve == 1 and row["日本"] == 2 and row.plain == 3


@pytest.mark.parametrize("name", ["b" * 128, "c" * 300, "é" * 100], ids=["128", "300", "100-non-ascii"])
def test_long_column_names_are_not_cut(sqlite_conn, name):
    """SQLite has no identifier length limit: a long column name comes back whole."""
    cur = sqlite_conn.cursor()
    row = cur.execute(f'SELECT 1 AS "{name}"').fetchone()
    assert cur.description[0][0] == name
    assert row[name] == 1


def _rss_mb() -> float:
    import os

    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


def test_repeated_fetches_do_not_leak(conn, table):
    """300,000 rows built and dropped (with mappings, converters and short-lived cursors along
    the way) leave the process no bigger: a leak of even 100 bytes a row would show 30 MB."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, label VARCHAR(20), x DOUBLE PRECISION)")
    conn.cursor().executemany(
        f"INSERT INTO {table} VALUES (?, ?, ?)", [(i, f"label{i}", i * 1.5) for i in range(10_000)]
    )
    conn.commit()
    sql = f"SELECT id, label, x FROM {table}"

    def churn(times):
        for _ in range(times):
            rows = cur.execute(sql).fetchall()
            assert len(rows) == 10_000
            _ = [dict(r._mapping) for r in rows[:50]]
            conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda raw: raw)
            conn.clear_output_converters()
            other = conn.cursor()
            other.execute("SELECT 1").fetchall()
            other.close()

    churn(5)  # warm up caches and allocator pools
    gc.collect()
    before = _rss_mb()
    churn(30)
    gc.collect()
    assert _rss_mb() - before < 25


def test_rows_are_one_untracked_object(row):
    """One allocation per row (values inline, like pyodbc's Row), invisible to the cyclic GC, and
    constructible from Python only as pyodbc's Row(description, name_map, *values)."""
    assert gc.is_tracked(row) is False
    # header (refcount, type, size) + schema pointer + one pointer per value; no GC header
    assert sys.getsizeof(row) == 32 + 8 * len(row)
    with pytest.raises(TypeError):
        ferrodbc.Row()  # type: ignore[call-arg]


def test_tuple_factory_gives_plain_tuples_of_the_same_values(conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, name VARCHAR(20), amount NUMERIC(10,2))")
    cur.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)",
                    [(i, None if i % 3 == 0 else f"n{i}", i * 1.5) for i in range(50)])
    query = f"SELECT id, name, amount FROM {table} ORDER BY id"
    want = [tuple(r) for r in cur.execute(query).fetchall()]
    assert cur.row_factory is None
    cur.row_factory = tuple
    for fetch in (lambda c: c.fetchall(), lambda c: c.fetchmany(7) + c.fetchmany(100),
                  lambda c: [c.fetchone() for _ in range(50)], list):
        got = fetch(cur.execute(query))
        assert {type(r) for r in got} == {tuple}
        assert got == want
        # Off the GC's lists when no value is a tracked object, as CPython's collector would
        # leave them: int, str, None, datetime, and Decimal up to 3.12 (a GC type from 3.13 on,
        # its instances tracked, so a row holding one stays tracked, as CPython's would).
        assert [gc.is_tracked(r) for r in got] == [any(map(gc.is_tracked, r)) for r in got]
        assert not all(gc.is_tracked(r) for r in got) or sys.version_info >= (3, 13)
        gc.collect()
    cur.row_factory = None
    assert isinstance(cur.execute(query).fetchone(), ferrodbc.Row)


def test_a_tuple_row_holding_a_container_stays_tracked(pg_conn):
    cur = pg_conn.cursor()
    cur.row_factory = tuple
    (row,) = cur.execute("SELECT 1, CAST('12345678-1234-5678-1234-567812345678' AS uuid)").fetchall()
    assert type(row[1]).__name__ == "UUID" and gc.is_tracked(row)
    assert gc.is_tracked(cur.execute("SELECT CAST('12345678-1234-5678-1234-567812345678' AS uuid)").fetchone())
