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
import weakref
from pathlib import Path

import pytest

import ferrodbc

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from memory_cycles import cycles_memory, rss_mib  # noqa: E402


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


def test_a_row_factory_holding_its_connection_is_collected(peer):
    """connection -> row_factory -> closure -> connection, and cursor -> row_factory -> cursor
    (with the maker it returned kept for the result set): both are seen by the cyclic GC."""

    class Holder:
        pass

    def make():
        conn = peer.connect()
        h = Holder()
        h.conn = conn
        conn.row_factory = lambda description, h=h: (lambda values, h=h: values)
        h.cur = conn.cursor()  # starts with the connection's factory
        h.cur.execute(ids_query(10))
        assert h.cur.fetchone() == (0, "x0")
        return weakref.ref(h), weakref.ref(conn), weakref.ref(h.cur)

    refs = [make() for _ in range(3)]
    gc.collect()
    assert [r() for group in refs for r in group] == [None] * 9, "a cycle stayed uncollected"


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


SCRIPTS = ROOT / "tests" / "scripts"


@pytest.mark.parametrize("how", ["end", "sys_exit", "raise_systemexit"])
def test_interpreter_exit_with_cursors_mid_result(peer, how):
    """Exit code 0, nothing on stderr, no hang: open cursors mid-result, lazy and exported
    Arrow streams, parked connections, and a daemon thread inside a fetch
    (tests/scripts/exit_mid_result.py)."""
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "exit_mid_result.py"), peer.connstr, ids_query(20_000), how],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "exiting\n"
    assert proc.stderr == ""


@pytest.mark.parametrize("at_exit", ["close", "leave"])
def test_fork_child_uses_its_own_connection_and_never_the_parents(peer, at_exit):
    """The rule: a connection belongs to the process that opened it. In a forked child every
    use of an inherited one raises InterfaceError; closing or dropping it there sends nothing,
    so the parent's session (its socket, its pending rows) is untouched; the child connects
    anew (tests/scripts/fork_rule.py). PostgreSQL: a logout from the child on the shared socket
    would end the parent's session."""
    n = 20_000
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "fork_rule.py"), peer.connstr, ids_query(n), str(n), at_exit],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    child = (
        "fetch:InterfaceError execute:InterfaceError commit:InterfaceError "
        "connection_execute:InterfaceError own:42"
    )
    if at_exit == "close":
        child += " closed:True"
    assert proc.stdout.splitlines() == [child, "child 0 parent rows ok True parent again 7"], proc.stdout
    assert proc.stderr == ""


@pytest.mark.parametrize("pooling", [False, True], ids=["unpooled", "pooled"])
def test_ten_thousand_connect_cycles_leave_memory_flat(sqlite, pooling):
    """SQLite3 ODBC never pools (pooling=True goes through the pool's paths and disconnects)."""
    rss_growth, traced_growth, top = cycles_memory(sqlite.connstr, pooling, 10_000)
    assert rss_growth < 4, f"RSS grew {rss_growth:.1f} MiB over 10,000 cycles"
    assert traced_growth < 64 * 1024, f"Python memory grew {traced_growth} B over each half of 10,000 cycles:\n{top}"


def test_a_long_lived_connection_making_many_cursors_stays_flat(sqlite_conn):
    """Each cursor leaves its connection's list when dropped (it used to keep ~800 bytes per
    cursor ever made: +80 MiB over 100,000)."""
    for _ in range(2000):
        sqlite_conn.cursor().execute("SELECT 1").fetchall()
    gc.collect()
    before = rss_mib()
    for _ in range(30_000):
        sqlite_conn.cursor().execute("SELECT 1").fetchall()
    gc.collect()
    assert rss_mib() - before < 4


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
