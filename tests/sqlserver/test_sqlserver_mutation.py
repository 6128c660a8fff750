"""Mutation during a fetch (issue 15, point 1) through Driver 18 and FreeTDS against the TDS peer,
with results large enough that the prefetch thread is fetching the next row array while the
mutation happens (each converter scenario checks that the thread exists at that moment).

Every row arrives exactly once, or the mutation is refused with ProgrammingError and the fetch
goes on; rows already returned stay valid; the connection closed from another thread mid-fetch
ends the fetch with ProgrammingError (or after every row), in every fetch shape including Arrow.
The driver-neutral versions: tests/python/test_mutation.py.
"""

from __future__ import annotations

import gc
import os
import struct
import sys
import threading
import time
import weakref

import pyarrow as pa
import pytest

import ferrodbc

from sqlserver_support import ROOT

sys.path.insert(0, str(ROOT / "tests"))
from fetch_shapes import ROW_SHAPES, drain, plain

N = 60_000
QUERY = f"SELECT * FROM peer.int_nvarchar_{N}"
# Row arrays of 32, 256, then 2,048 rows: the third comes back full at row 2,336 and from then
# on the next array is fetched on the prefetch thread while these rows are decoded.
AT = 5_000


def prefetch_thread_running() -> bool:
    """Whether a ferrodbc prefetch thread exists in this process (Linux thread names: 15 chars)."""
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                if f.read().startswith("ferrodbc-pre"):
                    return True
        except OSError:
            continue
    return False


def int_from_raw(raw: bytes) -> int:
    return struct.unpack("=i", raw)[0]


def acting_converter(action, seen: dict, *, catch: bool = True):
    """Tags ids `("c", id)`; at call AT notes whether the prefetch thread runs, then runs
    `action()` and records what it raised (re-raised with `catch=False`)."""
    calls = [0]
    seen.setdefault("raised", [])

    def convert(raw):
        calls[0] += 1
        if calls[0] == AT:
            seen["prefetching"] = prefetch_thread_running()
            try:
                action()
            except Exception as e:
                seen["raised"].append(e)
                if not catch:
                    raise
        return ("c", int_from_raw(raw))

    return convert


REFUSED = {
    "execute_same_cursor": lambda conn, cur: cur.execute("SELECT 1"),
    "fetch_same_cursor": lambda conn, cur: cur.fetchmany(10),
    "nextset": lambda conn, cur: cur.nextset(),
    "close_cursor": lambda conn, cur: cur.close(),
    "close_connection": lambda conn, cur: conn.close(),
}


@pytest.mark.parametrize("shape", ROW_SHAPES)
@pytest.mark.parametrize("mutation", list(REFUSED))
def test_mutating_the_cursor_from_a_converter_while_prefetching(conn, shape, mutation):
    cur = conn.cursor()
    seen: dict = {}
    conn.add_output_converter(ferrodbc.SQL_INTEGER, acting_converter(lambda: REFUSED[mutation](conn, cur), seen))
    cur.execute(QUERY)
    values, errors = drain(cur, shape)
    assert seen["prefetching"], "the prefetch thread was not running at the mutation"
    assert errors == []
    assert [plain(v) for v in values] == list(range(N)), "every row exactly once, in order"
    assert len(seen["raised"]) == 1 and isinstance(seen["raised"][0], ferrodbc.ProgrammingError)
    conn.clear_output_converters()
    assert cur.execute("SELECT 7").fetchval() == 7


@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_a_propagated_refusal_consumes_one_row_and_the_rest_follow(conn, shape):
    cur = conn.cursor()
    seen: dict = {}
    conn.add_output_converter(
        ferrodbc.SQL_INTEGER, acting_converter(lambda: cur.execute("SELECT 1"), seen, catch=False)
    )
    cur.execute(QUERY)
    held: list = []
    values, errors = drain(cur, shape, on_rows=held.extend)
    copies = [tuple(r) for r in held]
    assert len(errors) == 1 and isinstance(errors[0], ferrodbc.ProgrammingError), errors
    assert [plain(v) for v in values] == [i for i in range(N) if i != AT - 1]
    cur.execute("SELECT 1").fetchall()
    gc.collect()
    assert [tuple(r) for r in held] == copies, "rows returned earlier changed"


CHANGES = {
    "clear": lambda conn: conn.clear_output_converters(),
    "replace": lambda conn: conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda raw: ("r", int_from_raw(raw))),
    "add_other_type": lambda conn: conn.add_output_converter(ferrodbc.SQL_WVARCHAR, lambda raw: "w"),
}


@pytest.mark.parametrize("shape", ROW_SHAPES)
@pytest.mark.parametrize("change", list(CHANGES))
def test_converters_changed_while_prefetching(conn, shape, change):
    cur = conn.cursor()
    seen: dict = {}
    conn.add_output_converter(ferrodbc.SQL_INTEGER, acting_converter(lambda: CHANGES[change](conn), seen))
    cur.execute(QUERY)
    values, errors = drain(cur, shape)
    assert seen["prefetching"] and seen["raised"] == [] and errors == []
    assert [plain(v) for v in values] == list(range(N))
    tags = [v[0] if isinstance(v, tuple) else "plain" for v in values]
    assert sum(tags[i] != tags[i - 1] for i in range(1, N)) <= 1, "converters switched back"
    if shape != "fetchall":
        assert tags[-1] == {"clear": "plain", "replace": "r"}.get(change, "c")


@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_gc_with_cycles_from_a_converter_while_prefetching(connect, conn, shape):
    """gc.collect() mid-fetch while garbage cycles hold other connections (with results
    pending and prefetching), their cursors, streams, and weak references to this cursor."""
    cur = conn.cursor()

    class Holder:
        pass

    def make_garbage():
        h = Holder()
        h.conn = connect()
        h.cur = h.conn.cursor()
        h.stream = connect().cursor().execute("SELECT 'a' AS s").fetch_record_batch(10)
        h.cur.execute("SELECT * FROM peer.int_nvarchar_20000")
        h.cur.fetchmany(3000)  # pending, prefetching (no MARS: nothing else on h.conn now)
        h.conn.add_output_converter(ferrodbc.SQL_BIGINT, lambda raw, h=h: h)
        h.ref = weakref.ref(cur)
        h.self = h

    calls = [0]

    def convert(raw):
        calls[0] += 1
        if calls[0] % 15_000 == AT:
            make_garbage()
            gc.collect()
        return int_from_raw(raw)

    conn.add_output_converter(ferrodbc.SQL_INTEGER, convert)
    cur.execute(QUERY)
    values, errors = drain(cur, shape)
    assert errors == [] and values == list(range(N))


@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_cancel_from_a_converter_while_prefetching(conn, shape):
    cur = conn.cursor()
    seen: dict = {}
    conn.add_output_converter(ferrodbc.SQL_INTEGER, acting_converter(cur.cancel, seen))
    cur.execute(QUERY)
    values, errors = drain(cur, shape, keep_going=False)
    assert seen["prefetching"] and seen["raised"] == []
    assert [plain(v) for v in values] == list(range(len(values))), "no row lost or repeated"
    assert AT <= len(values) < N, "the cancel ended the result"
    assert len(errors) == 1 and isinstance(errors[0], ferrodbc.OperationalError), errors
    assert errors[0].sqlstate == "HY008"
    conn.clear_output_converters()
    assert cur.execute("SELECT 8").fetchval() == 8


@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_another_cursor_of_the_connection_from_a_converter(conn, shape):
    """No MARS: both drivers refuse a second statement while rows are pending (Driver 18:
    HY000 "Connection is busy", FreeTDS: 24000) with a ferrodbc error; the result is whole."""
    cur = conn.cursor()
    seen: dict = {}
    conn.add_output_converter(
        ferrodbc.SQL_INTEGER, acting_converter(lambda: conn.cursor().execute("SELECT 1").fetchall(), seen)
    )
    cur.execute(QUERY)
    values, errors = drain(cur, shape)
    assert errors == [] and [plain(v) for v in values] == list(range(N))
    assert len(seen["raised"]) == 1 and isinstance(seen["raised"][0], ferrodbc.Error), seen["raised"]
    conn.clear_output_converters()
    assert conn.cursor().execute("SELECT 9").fetchval() == 9


CLOSE_SHAPES = (*ROW_SHAPES, "arrow_table", "arrow_stream")


def consume(cur, shape: str, got: list) -> None:
    if shape == "arrow_table":
        got.extend(pa.table(cur.fetch_arrow_table()).column(0).to_pylist())
    elif shape == "arrow_stream":
        for batch in pa.RecordBatchReader.from_stream(cur.fetch_record_batch(5000)):
            got.extend(batch.column(0).to_pylist())
    else:
        values, errors = drain(cur, shape, keep_going=False, on_rows=None)
        got.extend(values)
        if errors:
            raise errors[0]


@pytest.mark.parametrize("shape", CLOSE_SHAPES)
@pytest.mark.parametrize("target", ["connection", "cursor"])
def test_closed_from_another_thread_mid_fetch(connect, shape, target):
    """The fetching thread gets every row, or an unbroken run of them and then ProgrammingError
    (Arrow streams: the consumer's error naming it); never a crash, a hang, or a repeated row."""
    conn = connect()
    cur = conn.cursor()
    cur.execute("SELECT * FROM peer.int_nvarchar_200000")
    got: list = []
    outcome: dict = {}

    def fetch():
        try:
            consume(cur, shape, got)
        except Exception as e:  # noqa: BLE001  (the error is the outcome under test)
            outcome["error"] = e

    thread = threading.Thread(target=fetch)
    thread.start()
    time.sleep(0.05)  # let it get going (either outcome is correct; only the mix varies)
    (conn if target == "connection" else cur).close()
    thread.join(60)
    assert not thread.is_alive()
    assert got == list(range(len(got))), "rows lost or repeated"
    error = outcome.get("error")
    if error is None:
        assert len(got) == 200_000
    elif isinstance(error, pa.ArrowException):
        assert "ferrodbc.ProgrammingError" in str(error) and "closed" in str(error)
    else:
        assert isinstance(error, ferrodbc.ProgrammingError) and "closed" in str(error), error
    assert cur.closed
    with pytest.raises(ferrodbc.ProgrammingError):
        cur.execute("SELECT 1")


@pytest.mark.parametrize("shape", ["fetchone", "fetchmany", "fetchall", "iter", "arrow"])
def test_results_held_while_the_cursor_executes_again_mid_prefetch(connect, shape):
    conn = connect()
    cur = conn.cursor()
    cur.execute(QUERY)
    if shape == "arrow":
        cur.fetchmany(3000)
        held = pa.table(cur.fetch_arrow_table())
        snapshot = held.column(1).to_pylist()
    else:
        if shape == "fetchone":
            held = [cur.fetchone() for _ in range(3000)]
        elif shape == "fetchmany":
            held = cur.fetchmany(5000)
        elif shape == "fetchall":
            held = cur.fetchall()
        else:
            held = [r for _, r in zip(range(5000), cur)]
        snapshot = [(tuple(r), r.id, r.name) for r in held]
    cur.execute(QUERY)
    cur.fetchmany(3000)  # a new result, prefetching into the same bound buffers
    cur.close()
    conn.close()
    del cur, conn
    gc.collect()
    if shape == "arrow":
        assert held.column(1).to_pylist() == snapshot and held.num_rows == N - 3000
    else:
        assert [(tuple(r), r.id, r.name) for r in held] == snapshot
        assert held[1].name == "row 1 é中"
