"""The Python scenarios eng/memcheck.sh runs under valgrind memcheck (a debug build of the
extension): a representative subset of what the suites test, small enough to finish in a few
minutes at valgrind's speed. Every scenario checks its results, so a plain run is a test too
(tests/python/test_lifetime.py runs `--sqlite-only` without valgrind).

Covered: every fetch shape, parameters of each type, Arrow tables and streams (C stream export
and release), output converters mutating their cursor (refused) or raising, converter cycles
collected by the GC, rows held past their cursor and connection, the connection closed from
another thread mid-fetch, a forked child, and through Driver 18 and FreeTDS against the TDS peer:
fetches large enough that the prefetch thread fills the bound buffers while rows are decoded,
cancel from a converter mid-prefetch, pooled sessions, and exit with a cursor mid-result.

Usage: python eng/memcheck/scenarios.py [--sqlite-only]   (prints "scenarios ok" at the end)
"""

from __future__ import annotations

import datetime as dt
import gc
import os
import struct
import sys
import tempfile
import threading
import uuid
import weakref
from decimal import Decimal
from pathlib import Path

# Before any fetch: numpy's module init (pyarrow imports it) keeps objects for good, some taken
# from CPython's float free list, where a float an earlier fetch freed would make the leak look
# like ferrodbc's (eng/memcheck/valgrind.supp, numpy-module-init-keeps-objects).
import pyarrow  # noqa: F401

import ferrodbc

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "eng" / "peers"))

KEEP = []  # objects left open at exit on purpose (the last scenario)


def ids_query(n: int) -> str:
    return (
        f"WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < {n - 1}) "
        "SELECT i AS id, 'x' || i AS label, i * 0.5 AS half FROM c"
    )


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def fetch_shapes(connstr: str, query: str, n: int) -> None:
    conn = ferrodbc.connect(connstr, autocommit=True)
    cur = conn.cursor()
    check([r[0] for r in cur.execute(query).fetchall()] == list(range(n)), "fetchall")
    cur.execute(query)
    got = [cur.fetchone()[0] for _ in range(100)]
    got.append(cur.fetchval())
    while batch := cur.fetchmany(999):
        got.extend(r[0] for r in batch)
    check(got == list(range(n)), "fetchone/fetchval/fetchmany")
    check([r.id for r in cur.execute(query)] == list(range(n)), "iteration")
    cur.execute(query)
    cur.skip(10)
    check(cur.fetchone()[0] == 10, "skip")
    conn.close()


def parameters(connstr: str) -> None:
    conn = ferrodbc.connect(connstr)  # one transaction: SQLite3 ODBC runs arrays row by row
    cur = conn.cursor()
    values = [None, True, 7, -(2**40), 1.5, "é😀" * 300, b"\x00\xff" * 600, Decimal("-12.345"),
              dt.date(2024, 2, 29), dt.datetime(2024, 1, 2, 3, 4, 5, 123000), uuid.uuid4()]
    for v in values:
        got = cur.execute("SELECT ?", v).fetchval()
        check(got is None if v is None else got is not None, f"parameter {v!r:.30}")
    rows = [(i, f"t{i}", i / 4) for i in range(500)]  # SQLite3 ODBC keeps 15 digits of a double
    cur.execute("CREATE TABLE mc_params (i INTEGER, t VARCHAR(20), f FLOAT)")
    cur.executemany("INSERT INTO mc_params VALUES (?, ?, ?)", rows)
    check(cur.execute("SELECT i, t, f FROM mc_params ORDER BY i").fetchall() == rows, "executemany")
    conn.rollback()
    conn.close()


def arrow(connstr: str, query: str, n: int) -> None:
    import pyarrow as pa

    conn = ferrodbc.connect(connstr, autocommit=True)
    cur = conn.cursor()
    table = pa.table(cur.execute(query).fetch_arrow_table())
    check(table.column("id").to_pylist() == list(range(n)), "arrow table")
    reader = pa.RecordBatchReader.from_stream(cur.execute(query).fetch_record_batch(700))
    first = reader.read_next_batch()
    cur.execute("SELECT 1 AS one")  # the stream is over: its next pull fails
    try:
        reader.read_next_batch()
        check(False, "a stream read after execute")
    except pa.ArrowException:
        pass
    unexported = cur.execute(query).fetch_record_batch(100)  # dropped without being read
    del unexported, reader
    conn.close()
    check(first.column(0).to_pylist() == list(range(700)), "a batch outlives its cursor")


def converters(connstr: str, query: str, n: int) -> None:
    conn = ferrodbc.connect(connstr, autocommit=True)
    cur = conn.cursor()
    refused = []

    def mutating(raw):
        if not refused:
            for action in (lambda: cur.execute("SELECT 1"), cur.close, conn.close, cur.nextset):
                try:
                    action()
                except ferrodbc.ProgrammingError as e:
                    refused.append(e)
        return struct.unpack("=i", raw)[0] * 2

    conn.add_output_converter(ferrodbc.SQL_INTEGER, mutating)
    check([r[0] for r in cur.execute(query).fetchall()] == [2 * i for i in range(n)], "converted")
    check(len(refused) == 4, "mutations from a converter are refused")

    def failing(raw):
        if struct.unpack("=i", raw)[0] == 50:
            raise ValueError("converter failed")
        return 0

    conn.add_output_converter(ferrodbc.SQL_INTEGER, failing)
    cur.execute(query)
    try:
        cur.fetchall()
        check(False, "a failing converter")
    except ValueError:
        pass
    conn.clear_output_converters()
    check(cur.fetchone()[0] == 51, "the failing row is consumed, the next follows")
    conn.close()


def gc_cycles(connstr: str) -> None:
    class Holder:
        pass

    refs = []
    for _ in range(3):
        conn = ferrodbc.connect(connstr, autocommit=True)
        h = Holder()
        h.conn, h.cur = conn, conn.cursor()
        conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda raw, h=h: h)
        h.cur.execute("SELECT 1 AS i").fetchone()
        refs.append(weakref.ref(conn))
        del conn, h
    gc.collect()
    check(all(r() is None for r in refs), "converter cycles collected")


def rows_outlive(connstr: str, query: str) -> None:
    conn = ferrodbc.connect(connstr, autocommit=True)
    cur = conn.cursor()
    rows = cur.execute(query).fetchmany(3000)
    snapshot = [tuple(r) for r in rows]
    cur.execute(query).fetchone()
    cur.close()
    conn.close()
    del cur, conn
    gc.collect()
    check([tuple(r) for r in rows] == snapshot and rows[5].label == "x5", "rows outlive")
    orphan = ferrodbc.connect(connstr).cursor()
    orphan.execute(query).fetchmany(3000)
    del orphan  # a cursor mid-result, its connection object already gone
    gc.collect()


def close_from_thread(connstr: str, query: str) -> None:
    conn = ferrodbc.connect(connstr, autocommit=True)
    cur = conn.cursor()
    cur.execute(query)
    started = threading.Event()
    got: list = []
    outcome: list = []

    def fetch():
        try:
            while batch := cur.fetchmany(500):
                got.extend(r[0] for r in batch)
                started.set()
        except ferrodbc.ProgrammingError as e:
            outcome.append(e)
        started.set()

    t = threading.Thread(target=fetch)
    t.start()
    started.wait(120)
    conn.close()
    t.join(300)
    check(not t.is_alive() and got == list(range(len(got))), "close from another thread")


def fork_child(connstr: str, query: str) -> None:
    conn = ferrodbc.connect(connstr, autocommit=True)
    cur = conn.cursor()
    cur.execute(query)
    cur.fetchmany(3000)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        # The verdict goes through a pipe: under valgrind the child's exit code is valgrind's
        # (its error count is the parent's copy, and a leak check of a process that leaves
        # with os._exit means nothing).
        verdict = b"failed"
        try:
            try:
                cur.fetchone()
            except ferrodbc.InterfaceError:
                own = ferrodbc.connect(connstr, autocommit=True)
                if own.cursor().execute("SELECT 3").fetchval() == 3:
                    verdict = b"ok"
                own.close()
            cur.close()
            conn.close()
        finally:
            os.write(write, verdict)
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    verdict = os.read(read, 16)
    os.close(read)
    check(verdict == b"ok", "forked child")
    if not os.environ.get("MEMCHECK_PACKAGE_DIR"):
        check(os.waitstatus_to_exitcode(status) == 0, "forked child's exit")
    check(cur.fetchone() is not None, "the parent's result survives the child")
    conn.close()


def decode_errors(connstr: str) -> None:
    conn = ferrodbc.connect(connstr, autocommit=True)
    cur = conn.cursor()
    try:
        cur.execute("SELECT ?", "a\ud800b").fetchall()
    except (ferrodbc.DataError, UnicodeEncodeError):
        pass
    conn.close()


def tds_scenarios(driver: str, connstr: str) -> None:
    n = 20_000
    query = f"SELECT * FROM peer.int_nvarchar_{n}"
    fetch_shapes(connstr, query, n)  # arrays of 2,048 come back full: the prefetch thread runs
    parameters_tds(connstr)
    bulk_loads(connstr, sql_server=True)
    arrow(connstr, query, n)
    close_from_thread(connstr, query)
    fork_child(connstr, query)
    lazy_rows(connstr, "SELECT * FROM peer.mixed_5000", 5000)
    conn = ferrodbc.connect(connstr, autocommit=True)
    cur = conn.cursor()
    calls = [0]

    def cancelling(raw):
        calls[0] += 1
        if calls[0] == 5000:
            cur.cancel()
        return 0

    conn.add_output_converter(ferrodbc.SQL_INTEGER, cancelling)
    cur.execute(query)
    try:
        cur.fetchall()
        check(False, f"{driver}: cancel from a converter")
    except ferrodbc.OperationalError as e:
        check(e.sqlstate == "HY008", f"{driver}: HY008")
    conn.close()
    for _ in range(3):
        pooled = ferrodbc.connect(connstr, pooling=True)
        pooled.cursor().execute("SELECT 1").fetchall()
        pooled.close()  # Driver 18: parked (and still parked at exit)
    open_at_exit = ferrodbc.connect(connstr).cursor()
    open_at_exit.execute(query).fetchmany(3000)
    KEEP.append(open_at_exit)


def lazy_rows(connstr: str, query: str, n: int) -> None:
    """Lazy rows pin their row arrays, so every array after the first is a fresh batch whose
    text buffers are not zeroed: reading every cell, raw and decoded, must only ever touch
    bytes the driver wrote (a NULL cell's element and a short value's tail stay unwritten)."""
    conn = ferrodbc.connect(connstr, autocommit=True)
    cur = conn.cursor()
    eager = cur.execute(query).fetchall()
    cur.row_factory = ferrodbc.LazyRow
    lazy = cur.execute(query).fetchall()
    check(len(lazy) == len(eager) == n, "lazy rows: count")
    check(all(lz == e for lz, e in zip(lazy, eager)), "lazy rows equal eager rows")
    raws = [lz.raw(k) for lz in lazy[::97] for k in range(len(lz))]
    check(len({hash(r) for r in raws}) > 1, "raw cells")
    cur.execute(query)
    while batch := cur.fetchmany(700):  # rows dropped as they go: batches refilled in place
        check(batch[-1][0] is not None, "lazy fetchmany")
    conn.close()


def bulk_loads(connstr: str, sql_server: bool) -> None:
    """bulkcopy and bulkcopy_arrow: the driver reads each cell through a pointer into the chunk
    (bcp_colptr), so every value it reads must be bytes ferrodbc wrote; a cancelled and a
    refused load on the way."""
    import pyarrow as pa

    conn = ferrodbc.connect(connstr, autocommit=True)
    cur = conn.cursor()
    text, blob = ("nvarchar(max)", "varbinary(max)") if sql_server else ("TEXT", "BLOB")
    cur.execute(f"CREATE TABLE bk_mem (id int NOT NULL PRIMARY KEY, s {text}, b {blob}, d date, f float)")
    rows = [(i, "é" * (i % 50), b"\x01" * (i % 30), dt.date(2024, 1, 1 + i % 28), i / 4) for i in range(3000)]
    rows[5] = (5, None, b"", None, None)
    check(cur.bulkcopy("bk_mem", rows, batch_size=1000)["rows_copied"] == 3000, "bulkcopy rows")
    got = cur.execute("SELECT id, s, b, d, f FROM bk_mem ORDER BY id").fetchall()
    check([tuple(r) for r in got] == rows, "bulkcopy round trip")
    table = pa.table({"id": pa.array(range(3000, 4000), pa.int32()), "s": ["x" * 10] * 1000})
    check(cur.bulkcopy_arrow("bk_mem", table, column_mappings=["id", "s"])["rows_copied"] == 1000, "arrow")
    try:
        cur.bulkcopy("bk_mem", [(1, "dup", b"", None, None)])
        check(False, "a duplicate key is refused")
    except ferrodbc.DatabaseError:
        pass

    def cancelled():
        for i in range(10_000, 30_000):
            if i == 20_000:
                cur.cancel()
            yield (i, None, None, None, None)

    try:
        cur.bulkcopy("bk_mem", cancelled())
    except ferrodbc.OperationalError:
        pass
    check(cur.execute("SELECT COUNT(*) FROM bk_mem").fetchval() == 4000, "nothing of the refused loads")
    cur.execute("DROP TABLE bk_mem")
    conn.close()


def parameters_tds(connstr: str) -> None:
    conn = ferrodbc.connect(connstr, autocommit=True)
    cur = conn.cursor()
    for v in [None, 7, 2**70, 1.5, "é😀" * 3000, b"\x01" * 9000, Decimal("1.25"),
              dt.date(2024, 2, 29), dt.datetime(2024, 1, 2, 3, 4, 5, 123456),
              dt.datetime(2024, 1, 2, tzinfo=dt.timezone(dt.timedelta(hours=2))), uuid.uuid4()]:
        got = cur.execute("SELECT ?", v).fetchval()
        check((got is None) == (v is None), f"parameter {v!r:.30}")
    conn.close()


def main() -> None:
    staged = os.environ.get("MEMCHECK_PACKAGE_DIR")
    if staged and not ferrodbc.__file__.startswith(staged):
        raise SystemExit(f"imported {ferrodbc.__file__}, not the debug build staged in {staged}")
    sqlite_only = "--sqlite-only" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        connstr = f"Driver={{SQLite3}};Database={tmp}/memcheck.sqlite"
        query, n = ids_query(5000), 5000
        for scenario in (
            lambda: fetch_shapes(connstr, query, n),
            lambda: parameters(connstr),
            lambda: arrow(connstr, query, n),
            lambda: converters(connstr, query, n),
            lambda: gc_cycles(connstr),
            lambda: rows_outlive(connstr, query),
            lambda: lazy_rows(connstr, query, n),
            lambda: close_from_thread(connstr, query),
            lambda: fork_child(connstr, query),
            lambda: decode_errors(connstr),
            lambda: bulk_loads(connstr, sql_server=False),
        ):
            scenario()
        print("sqlite ok", flush=True)
        if not sqlite_only:
            import tdspeer

            with tdspeer.start_peer() as peer:
                available = ferrodbc.drivers()
                for driver, name in (("msodbcsql", tdspeer.MSODBCSQL), ("freetds", tdspeer.FREETDS)):
                    if name not in available:
                        raise SystemExit(f"ODBC driver {name!r} is not registered (run eng/setup.sh)")
                    tds_scenarios(driver, tdspeer.conn_str(peer, driver))
                    print(f"{driver} ok", flush=True)
                KEEP.clear()  # the cursors mid-result go before the peer does
                gc.collect()
        KEEP.append(ferrodbc.connect(connstr).cursor().execute(query))  # open at exit
        print("scenarios ok", flush=True)


if __name__ == "__main__":
    main()
