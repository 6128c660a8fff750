"""Mutation during a fetch (issue 15, point 1), on SQLite3 ODBC and PostgreSQL: output converters
that execute, fetch, skip, move to the next set, close the cursor or the connection, change the
converters, collect garbage or cancel, in the middle of every fetch shape; rows held while their
cursor executes again, closes, or its connection goes. Every row arrives exactly once, or the
mutation is refused with ProgrammingError (then the fetch goes on as before); rows already
returned stay what they were. The same scenarios with the prefetch thread mid-fetch, through
Driver 18 and FreeTDS: tests/sqlserver/test_sqlserver_mutation.py.
"""

from __future__ import annotations

import gc
import struct
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import ferrodbc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fetch_shapes import ROW_SHAPES, drain, plain

N = 12_000
# The converter acts at this call (one call per row: the id column is the only integer).
AT = 5_000


def ids_query(n: int = N) -> str:
    """n rows (id, label), ids 0..n-1 in order, on SQLite and PostgreSQL alike."""
    return (
        f"WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < {n - 1}) "
        "SELECT i AS id, 'x' || i AS label FROM c"
    )


def int_from_raw(raw: bytes) -> int:
    return struct.unpack("=i", raw)[0]


def acting_converter(action, raised: list, *, at: int = AT, catch: bool = True):
    """A SQL_INTEGER converter tagging ids `("c", id)`; at call `at` it runs `action()`, and
    records what that raised (or lets it propagate, `catch=False`)."""
    calls = [0]

    def convert(raw):
        calls[0] += 1
        if calls[0] == at:
            try:
                action()
            except Exception as e:
                raised.append(e)
                if not catch:
                    raise
        return ("c", int_from_raw(raw))

    return convert


REFUSED = {
    "execute_same_cursor": lambda conn, cur: cur.execute("SELECT 1"),
    "fetch_same_cursor": lambda conn, cur: cur.fetchone(),
    "skip_same_cursor": lambda conn, cur: cur.skip(1),
    "nextset": lambda conn, cur: cur.nextset(),
    "arrow_same_cursor": lambda conn, cur: cur.fetch_arrow_table(),
    "close_cursor": lambda conn, cur: cur.close(),
    "close_connection": lambda conn, cur: conn.close(),
}


@pytest.mark.parametrize("shape", ROW_SHAPES)
@pytest.mark.parametrize("mutation", list(REFUSED))
def test_a_converter_mutating_its_own_cursor_is_refused_and_every_row_arrives(conn, shape, mutation):
    cur = conn.cursor()
    raised: list = []
    conn.add_output_converter(ferrodbc.SQL_INTEGER, acting_converter(lambda: REFUSED[mutation](conn, cur), raised))
    cur.execute(ids_query())
    values, errors = drain(cur, shape)
    assert errors == []
    assert [plain(v) for v in values] == list(range(N)), "every row exactly once, in order"
    assert all(isinstance(v, tuple) for v in values), "the converter applied to every row"
    assert len(raised) == 1 and isinstance(raised[0], ferrodbc.ProgrammingError), raised
    assert not conn.closed and not cur.closed
    conn.clear_output_converters()
    assert cur.execute("SELECT 7").fetchval() == 7, "the cursor works after the fetch"


@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_a_refused_mutation_that_propagates_consumes_one_row_and_keeps_the_rest(conn, shape):
    """The converter lets the ProgrammingError out: the fetch raises it; the rows before are
    delivered (fetchall: on the exception), the failing row is consumed, and fetching on
    serves every row after it once."""
    cur = conn.cursor()
    raised: list = []
    conn.add_output_converter(
        ferrodbc.SQL_INTEGER, acting_converter(lambda: cur.execute("SELECT 1"), raised, catch=False)
    )
    cur.execute(ids_query())
    held: list = []
    values, errors = drain(cur, shape, on_rows=held.extend)
    copies = [tuple(r) for r in held]
    assert len(errors) == 1 and isinstance(errors[0], ferrodbc.ProgrammingError), errors
    assert errors[0] is raised[0] or str(errors[0]) == str(raised[0])
    failed = AT - 1
    assert [plain(v) for v in values] == [i for i in range(N) if i != failed]
    assert copies[:10] == [(("c", i), f"x{i}") for i in range(10)] or shape == "fetchval"
    cur.execute(ids_query(10))
    cur.fetchall()
    gc.collect()
    assert [tuple(r) for r in held] == copies, "rows returned earlier are unchanged"


CHANGES = {
    "clear": lambda conn: conn.clear_output_converters(),
    "remove": lambda conn: conn.remove_output_converter(ferrodbc.SQL_INTEGER),
    "replace": lambda conn: conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda raw: ("r", int_from_raw(raw))),
    "add_other_type": lambda conn: conn.add_output_converter(ferrodbc.SQL_WVARCHAR, lambda raw: "w"),
    "decode_errors": lambda conn: setattr(conn, "decode_errors", "replace"),
}


@pytest.mark.parametrize("shape", ROW_SHAPES)
@pytest.mark.parametrize("change", list(CHANGES))
def test_converters_changed_by_a_converter_apply_from_the_next_call(conn, shape, change):
    """The plan of a call in progress stays; the next call uses the new converters. The tags
    switch once, never back, and every row arrives once."""
    cur = conn.cursor()
    raised: list = []
    conn.add_output_converter(ferrodbc.SQL_INTEGER, acting_converter(lambda: CHANGES[change](conn), raised))
    cur.execute(ids_query())
    values, errors = drain(cur, shape)
    assert errors == [] and raised == []
    assert [plain(v) for v in values] == list(range(N))
    tags = [v[0] if isinstance(v, tuple) else "plain" for v in values]
    switches = [i for i in range(1, N) if tags[i] != tags[i - 1]]
    assert len(switches) <= 1, f"converters switched back and forth at rows {switches[:5]}"
    assert tags[:AT] == ["c"] * AT, "rows up to the change were converted by the first converter"
    expected_after = {"clear": "plain", "remove": "plain", "replace": "r"}.get(change, "c")
    if shape != "fetchall":  # fetchall is one call: its plan holds to the end
        assert tags[-1] == expected_after


@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_gc_from_a_converter_with_cursors_and_connections_in_cycles(peer, conn, shape):
    """gc.collect() inside a fetch, while garbage holds cursors, connections, streams and
    weak references in cycles (their finalizers close them): every row arrives once."""
    cur = conn.cursor()

    class Holder:
        pass

    def make_garbage():
        other = peer.connect()
        h = Holder()
        h.conn, h.cur = other, other.cursor()
        h.cur.execute(ids_query(3000))
        h.cur.fetchmany(10)  # a result left pending
        h.stream = h.cur.fetch_record_batch(100)
        other.add_output_converter(ferrodbc.SQL_SMALLINT, lambda raw, h=h: h)  # conn -> h -> conn
        h.self = h
        h.ref = __import__("weakref").ref(cur)  # a weak reference to the cursor being fetched
        return h

    calls = [0]

    def convert(raw):
        calls[0] += 1
        if calls[0] % 4000 == 1:
            make_garbage()
            gc.collect()
        return int_from_raw(raw)

    conn.add_output_converter(ferrodbc.SQL_INTEGER, convert)
    cur.execute(ids_query())
    values, errors = drain(cur, shape)
    assert errors == []
    assert values == list(range(N))
    gc.collect()


@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_cancel_from_a_converter_ends_the_fetch_cleanly(conn, shape):
    """cancel() from a converter: either the whole result was already read (every row) or the
    fetch stops with OperationalError HY008 after an unbroken run of rows; the cursor then
    executes again."""
    cur = conn.cursor()
    raised: list = []
    conn.add_output_converter(ferrodbc.SQL_INTEGER, acting_converter(cur.cancel, raised))
    cur.execute(ids_query())
    values, errors = drain(cur, shape, keep_going=False)
    assert raised == []
    assert [plain(v) for v in values] == list(range(len(values))), "no row lost or repeated"
    if len(values) < N:
        assert len(errors) == 1 and isinstance(errors[0], ferrodbc.OperationalError), errors
        assert errors[0].sqlstate == "HY008"
    else:
        assert errors == []
    conn.clear_output_converters()
    assert cur.execute("SELECT 8").fetchval() == 8


@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_a_converter_using_another_cursor_of_the_connection(conn, shape):
    """Another cursor of the same connection, mid-fetch: its query runs (or the driver refuses
    it with a ferrodbc error); the first result is whole either way."""
    cur = conn.cursor()
    raised: list = []
    other_result: list = []
    conn.add_output_converter(
        ferrodbc.SQL_INTEGER,
        acting_converter(lambda: other_result.append(conn.cursor().execute("SELECT 'other'").fetchall()), raised),
    )
    cur.execute(ids_query())
    values, errors = drain(cur, shape)
    assert errors == []
    assert [plain(v) for v in values] == list(range(N))
    assert other_result == [[("other",)]] or (raised and isinstance(raised[0], ferrodbc.Error)), raised


def snapshot(rows):
    return [(tuple(r), r.id, r.label, r[-1], r[0:1]) for r in rows]


HELD_SHAPES = {
    "fetchone": lambda cur: [cur.fetchone() for _ in range(3)],
    "fetchmany": lambda cur: cur.fetchmany(2500),
    "fetchall": lambda cur: cur.fetchall(),
    "iter": lambda cur: [r for _, r in zip(range(2500), cur)],
}


@pytest.mark.parametrize("shape", list(HELD_SHAPES))
def test_rows_held_across_execute_close_and_connection_close_stay_valid(peer, shape):
    conn = peer.connect()
    cur = conn.cursor()
    cur.execute(ids_query(5000))
    rows = HELD_SHAPES[shape](cur)
    value = cur.fetchval()  # fetchval's value is held too
    before = snapshot(rows)
    cur.execute("SELECT 'again' AS label, 1 AS id")
    assert snapshot(rows) == before, "the next execute changed rows of the old result"
    assert cur.fetchall()[0].label == "again"
    cur.execute(ids_query(100))
    cur.fetchone()  # a pending result, then the cursor and connection go
    cur.close()
    conn.close()
    del cur, conn
    gc.collect()
    assert snapshot(rows) == before
    assert value == (None if shape == "fetchall" else len(rows)) and rows[0].id == 0 and rows[-1].label == f"x{len(rows) - 1}"


def test_arrow_results_held_across_execute_and_close_stay_valid(peer):
    conn = peer.connect()
    cur = conn.cursor()
    cur.execute(ids_query(5000))
    table = pa.table(cur.fetch_arrow_table())
    cur.execute(ids_query(5000))
    unread = cur.fetch_arrow_table()  # the capsule object, exported only after the close
    cur.execute(ids_query(5000))
    reader = pa.RecordBatchReader.from_stream(cur.fetch_record_batch(1000))
    first = reader.read_next_batch()
    cur.execute("SELECT 1 AS id")
    with pytest.raises(pa.ArrowException, match="executed again"):
        reader.read_next_batch()
    cur.close()
    conn.close()
    del cur, conn
    gc.collect()
    assert table.column("id").to_pylist() == list(range(5000))
    assert pa.table(unread).column("label").to_pylist()[-1] == "x4999"
    assert first.column(0).to_pylist() == list(range(1000))


def test_a_lazy_stream_pulled_while_converters_change_reads_every_row_once(conn):
    """Arrow never applies converters (one registered for a column's type refuses the fetch at
    its start); one added while a lazy stream is being read changes nothing in the stream."""
    cur = conn.cursor()
    cur.execute(ids_query())
    reader = pa.RecordBatchReader.from_stream(cur.fetch_record_batch(3000))
    ids = []
    for i, batch in enumerate(reader):
        if i == 1:
            conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda raw: "converted")
            gc.collect()
        ids.extend(batch.column(0).to_pylist())
    assert ids == list(range(N))
