"""Lifetime (issue 15, point 2), on SQLite3 ODBC and PostgreSQL: connections, cursors, rows and
Arrow streams dropped in every order with results pending; reference cycles through converters
collected; the interpreter exiting with cursors mid-result; fork with connections open; 10,000
connect/execute/fetch/close cycles with flat memory. Through Driver 18 and FreeTDS (pooled
sessions, the prefetch thread mid-fetch): tests/sqlserver/test_sqlserver_lifetime.py.
"""

from __future__ import annotations

import gc
import itertools
import subprocess
import sys
import tracemalloc
import weakref
from pathlib import Path

import pytest

import ferrodbc

ROOT = Path(__file__).resolve().parents[2]


def ids_query(n: int) -> str:
    return (
        f"WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < {n - 1}) "
        "SELECT i AS id, 'x' || i AS label FROM c"
    )


OBJECTS = ("conn", "cur", "rows", "stream")


@pytest.mark.parametrize("order", list(itertools.permutations(OBJECTS)), ids="-".join)
def test_objects_dropped_in_any_order_with_results_pending(peer, order):
    conn = peer.connect()
    cur = conn.cursor()
    cur.execute(ids_query(20_000))
    rows = cur.fetchmany(3000)  # row arrays of 2,048 came back full: the next is fetched ahead
    expected = [tuple(r) for r in rows]
    stream = conn.cursor().execute(ids_query(20_000)).fetch_record_batch(1000)
    objects = {"conn": conn, "cur": cur, "rows": rows, "stream": stream}
    del conn, cur, stream
    kept_rows = rows
    del rows
    for name in order:
        if name == "rows":
            assert [tuple(r) for r in kept_rows] == expected
            kept_rows = None
        del objects[name]
        gc.collect()
    fresh = peer.connect()
    assert fresh.cursor().execute("SELECT 5").fetchval() == 5
    fresh.close()


def test_a_connection_dropped_without_close_while_its_cursor_is_mid_result(peer):
    cur = peer.connect().cursor()
    cur.execute(ids_query(20_000))
    first = cur.fetchmany(3000)
    gc.collect()
    rest = cur.fetchall()
    assert [r.id for r in first + rest] == list(range(20_000))
    del cur
    gc.collect()


def test_a_converter_holding_its_connection_is_collected(peer):
    """connection -> converter -> closure -> cursor -> connection: the cyclic GC sees through
    the connection and cursor (tp_traverse), so the cycle is collected and the session closed."""

    class Holder:
        pass

    def make():
        conn = peer.connect()
        h = Holder()
        h.conn, h.cur = conn, conn.cursor()
        conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda raw, h=h: h)
        h.cur.execute(ids_query(100))
        h.cur.fetchone()  # the cursor's plan holds the converter too
        h.stream = conn.cursor().execute("SELECT 'a' AS s").fetch_record_batch(10)  # -> its cursor
        h.stream_ref = weakref.ref(h.stream)
        return weakref.ref(h), weakref.ref(conn), weakref.ref(h.cur), h.stream_ref

    refs = [make() for _ in range(3)]
    gc.collect()
    assert [r() for group in refs for r in group] == [None] * 12, "a cycle stayed uncollected"


def test_finalizers_closing_connections_run_by_gc_inside_a_fetch(peer):
    """A converter triggers a collection whose finalizers close other connections (one with a
    cursor mid-result): the fetch goes on, the closed cursor says so."""
    conn = peer.connect()
    victim = peer.connect()
    victim_cur = victim.cursor()
    victim_cur.execute(ids_query(5000))
    victim_cur.fetchmany(100)

    class Token:
        pass

    def convert(raw):
        if not convert.done:
            convert.done = True
            token = Token()
            token.cycle = token
            weakref.finalize(token, victim.close)
            del token
            gc.collect()
        return int.from_bytes(raw, sys.byteorder, signed=True)

    convert.done = False
    conn.add_output_converter(ferrodbc.SQL_INTEGER, convert)
    ids = [r.id for r in conn.cursor().execute(ids_query(5000)).fetchall()]
    assert ids == list(range(5000))
    assert victim.closed
    with pytest.raises(ferrodbc.ProgrammingError, match="closed"):
        victim_cur.fetchone()
    conn.close()


EXIT_SCRIPT = r"""
import sys, threading, time
import ferrodbc
import pyarrow as pa

cs, n = sys.argv[1], 20_000
query = (f"WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < {n - 1}) "
         "SELECT i AS id, 'x' || i AS label FROM c")
conn = ferrodbc.connect(cs)
cur = conn.cursor()
cur.execute(query)
cur.fetchmany(3000)                       # mid-result, the next row array fetched ahead
lazy = conn.cursor().execute(query).fetch_record_batch(500)
reader = pa.RecordBatchReader.from_stream(conn.cursor().execute(query).fetch_record_batch(500))
reader.read_next_batch()                  # an exported stream, half read, never released
pooled = ferrodbc.connect(cs, pooling=True)
pooled.cursor().execute("SELECT 1").fetchall()
pooled.close()                            # parked where the driver allows pooling
dropped = ferrodbc.connect(cs).cursor()
dropped.execute(query).fetchone()         # a cursor whose connection object is gone
started = threading.Event()

def fetch_forever():
    c = ferrodbc.connect(cs).cursor()
    while True:
        c.execute(query)
        started.set()
        while c.fetchmany(100):
            pass

threading.Thread(target=fetch_forever, daemon=True).start()
started.wait(30)
time.sleep(0.05)
print("exiting", flush=True)
{exit}
"""

EXITS = {
    "end_of_script": "",
    "sys_exit": "sys.exit(0)",
    "raise_systemexit": "raise SystemExit(0)",
}


@pytest.mark.parametrize("how", list(EXITS))
def test_interpreter_exit_with_cursors_mid_result(peer, how):
    """Exit code 0, nothing on stderr, no hang: open cursors mid-result, lazy and exported
    Arrow streams, a parked connection, and a daemon thread inside a fetch."""
    proc = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT.replace("{exit}", EXITS[how]), peer.connstr],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "exiting\n"
    assert proc.stderr == ""


FORK_SCRIPT = r"""
import os, sys
import ferrodbc

cs, n = sys.argv[1], 20_000
query = (f"WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < {n - 1}) "
         "SELECT i AS id, 'x' || i AS label FROM c")
conn = ferrodbc.connect(cs, autocommit=True)
cur = conn.cursor()
cur.execute(query)
ids = [r.id for r in cur.fetchmany(3000)]  # mid-result, a row array fetched ahead
pid = os.fork()
if pid == 0:
    report = []
    for name, use in [("fetch", cur.fetchone), ("execute", lambda: cur.execute("SELECT 1")),
                      ("commit", conn.commit), ("cursor_execute", lambda: conn.execute("SELECT 1"))]:
        try:
            use()
            report.append(f"{name}:worked")
        except ferrodbc.InterfaceError:
            report.append(f"{name}:InterfaceError")
    own = ferrodbc.connect(cs, autocommit=True)
    report.append(f"own:{own.cursor().execute('SELECT 42').fetchval()}")
    own.close()
    if sys.argv[2] == "close":
        cur.close()
        conn.close()
        report.append(f"closed:{conn.closed}")
    print(" ".join(report), flush=True)
    sys.exit(0)                             # a normal exit: finalizers run in the child
_, status = os.waitpid(pid, 0)
ids += [r.id for r in cur.fetchall()]
print("child", os.waitstatus_to_exitcode(status), "parent rows ok", ids == list(range(n)),
      "parent again", cur.execute("SELECT 7").fetchval(), flush=True)
conn.close()
"""


@pytest.mark.parametrize("child", ["close", "leave"])
def test_fork_child_uses_its_own_connection_and_never_the_parents(peer, child):
    """The rule: a connection belongs to the process that opened it. In a forked child every
    use of an inherited one raises InterfaceError; closing or dropping it there sends nothing,
    so the parent's session (its socket, its pending rows) is untouched; the child connects
    anew. (PostgreSQL: the child's logout on the shared socket would end the parent's session.)"""
    proc = subprocess.run(
        [sys.executable, "-c", FORK_SCRIPT, peer.connstr, child],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    expected_child = "fetch:InterfaceError execute:InterfaceError commit:InterfaceError cursor_execute:InterfaceError own:42"
    if child == "close":
        expected_child += " closed:True"
    assert lines == [expected_child, "child 0 parent rows ok True parent again 7"], proc.stdout
    assert proc.stderr == ""


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def cycles_memory(connstr: str, pooling: bool, n: int, warmup: int = 300) -> tuple[float, int]:
    """Run n connect/execute/fetch/close cycles after `warmup` ones: (RSS growth in MiB, growth
    of the memory tracemalloc traces in bytes). Printed for the record (pytest -s)."""

    def cycle(i: int) -> None:
        conn = ferrodbc.connect(connstr, pooling=pooling)
        cur = conn.cursor()
        rows = cur.execute("SELECT ?, 'label'", i).fetchall()
        assert rows[0][0] == i
        conn.close()

    for i in range(warmup):
        cycle(i)
    gc.collect()
    tracemalloc.start()
    try:
        rss0, (traced0, _) = rss_mib(), tracemalloc.get_traced_memory()
        for i in range(n):
            cycle(i)
        gc.collect()
        rss1, (traced1, _) = rss_mib(), tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"\n{n} cycles pooling={pooling}: RSS {rss0:.1f} -> {rss1:.1f} MiB, traced {traced0} -> {traced1} B")
    return rss1 - rss0, traced1 - traced0


@pytest.mark.parametrize("pooling", [False, True], ids=["unpooled", "pooled"])
def test_ten_thousand_connect_cycles_leave_memory_flat(sqlite, pooling):
    rss_growth, traced_growth = cycles_memory(sqlite.connstr, pooling, 10_000)
    assert rss_growth < 4, f"RSS grew {rss_growth:.1f} MiB over 10,000 cycles"
    assert traced_growth < 64 * 1024, f"Python memory grew {traced_growth} B over 10,000 cycles"


def test_memcheck_script_runs_clean_without_valgrind(sqlite):
    """eng/memcheck/scenarios.py (what eng/memcheck.sh runs under valgrind) passes as a plain run."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "eng" / "memcheck" / "scenarios.py"), "--sqlite-only"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "scenarios ok" in proc.stdout
