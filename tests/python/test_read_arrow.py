"""ferrodbc.read_arrow on SQLite and PostgreSQL: the partitioned read is driver-neutral SQL (a
derived table with a range predicate), so it gives the single read's rows there too. The SQL
Server cases (and the full error list) are in tests/sqlserver/test_sqlserver_read_arrow.py."""

from __future__ import annotations

import pyarrow as pa
import pytest

import ferrodbc

ROWS = 2000


@pytest.fixture
def filled(peer, conn, table):
    """`table` with ids 0..1999 (and one NULL id), committed: read_arrow opens its own
    connections, which see only committed rows."""
    t = peer.types
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id {t['bigint']}, name {t['varchar']}, amount {t['decimal']})")
    cur.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)",
                    [(i, f"n{i}", i * 3) for i in range(ROWS)] + [(None, "null id", None)])
    conn.commit()
    return peer.connstr, table


def row_set(table) -> list[tuple]:
    return sorted((tuple(r.values()) for r in pa.table(table).to_pylist()), key=lambda r: r[1])


@pytest.mark.parametrize("partitions", [1, 3, 8])
def test_partitions_give_the_rows_of_the_single_read(conn, filled, partitions):
    cs, name = filled
    want = pa.table(conn.cursor().execute(f"SELECT * FROM {name}").fetch_arrow_table())
    got = ferrodbc.read_arrow(cs, f"SELECT * FROM {name}", partition_on="id", partitions=partitions)
    assert got.num_rows == ROWS + 1
    assert row_set(got) == row_set(want)


def test_order_by_with_limit_is_wrapped_and_without_is_refused(conn, filled):
    cs, name = filled
    got = ferrodbc.read_arrow(cs, f"SELECT id FROM {name} WHERE id IS NOT NULL ORDER BY id DESC LIMIT 10",
                              partition_on="id", partitions=3)
    assert sorted(got.column("id").to_pylist()) == list(range(ROWS - 10, ROWS))
    with pytest.raises(ferrodbc.ProgrammingError, match="ORDER BY"):
        ferrodbc.read_arrow(cs, f"SELECT id FROM {name} ORDER BY id", partition_on="id", partitions=3)


def test_a_text_partition_column_is_refused(filled):
    cs, name = filled
    with pytest.raises(ferrodbc.ProgrammingError, match="must be an integer column"):
        ferrodbc.read_arrow(cs, f"SELECT * FROM {name}", partition_on="name", partitions=2)


def test_a_list_of_queries(filled):
    cs, name = filled
    got = ferrodbc.read_arrow(cs, [f"SELECT * FROM {name} WHERE id < 100", f"SELECT * FROM {name} WHERE id >= 1900"])
    assert sorted(got.column("id").to_pylist()) == [*range(100), *range(1900, ROWS)]


def test_a_trailing_comment_or_semicolon_does_not_break_the_wrapper(conn, filled):
    cs, name = filled
    for query in (f"SELECT * FROM {name} -- every row", f"SELECT * FROM {name}; /* done */"):
        got = ferrodbc.read_arrow(cs, query, partition_on="id", partitions=3)
        assert got.num_rows == ROWS + 1
