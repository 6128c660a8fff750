"""Lifetime (issue 15, point 2) through Driver 18 and FreeTDS against the TDS peer: objects dropped
in every order while the prefetch thread is mid-fetch, the interpreter exiting with cursors
mid-result and parked pooled sessions, fork with connections open (the rule: a connection
belongs to the process that opened it), and memory over thousands of connect cycles, pooled and
not. The driver-neutral versions: tests/python/test_lifetime.py.
"""

from __future__ import annotations

import gc
import itertools
import os
import subprocess
import sys

import pytest

import ferrodbc
from eng.peers import tdspeer

from sqlserver_support import ROOT, require_driver

sys.path.insert(0, str(ROOT / "tests"))
from memory_cycles import cycles_memory

SCRIPTS = ROOT / "tests" / "scripts"
N = 60_000
QUERY = f"SELECT * FROM peer.int_nvarchar_{N}"


@pytest.mark.parametrize(
    "order", list(itertools.permutations(("conn", "cur", "rows", "stream"))), ids="-".join
)
def test_objects_dropped_in_any_order_while_prefetching(connect, order):
    conn = connect()
    cur = conn.cursor()
    cur.execute(QUERY)
    rows = cur.fetchmany(3000)  # the next row array is being fetched on the prefetch thread
    expected = [tuple(r) for r in rows]
    stream = connect().cursor().execute(QUERY).fetch_record_batch(1000)
    objects = {"conn": conn, "cur": cur, "rows": rows, "stream": stream}
    del conn, cur, rows, stream
    for name in order:
        if name == "rows":
            assert [tuple(r) for r in objects["rows"]] == expected
        del objects[name]
        gc.collect()
    assert connect().cursor().execute("SELECT 5").fetchval() == 5


@pytest.mark.parametrize("how", ["end", "sys_exit", "raise_systemexit"])
def test_interpreter_exit_mid_result_with_parked_sessions(peer, driver, how):
    """Exit code 0, nothing on stderr, no hang (tests/scripts/exit_mid_result.py): cursors
    mid-result with the prefetch thread running, Arrow streams, parked pooled sessions (Driver
    18 pools; FreeTDS disconnects), a daemon thread inside a fetch."""
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "exit_mid_result.py"), tdspeer.conn_str(peer, driver), QUERY, how],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "exiting\n"
    assert proc.stderr == ""


@pytest.mark.parametrize("at_exit", ["close", "leave"])
def test_fork_child_never_touches_the_parents_session(peer, driver, at_exit):
    """Before the fix, a child that exited normally logged the parent's session out (the
    parent's next fetch: 08S01 through both drivers) and hung joining a prefetch thread that
    does not exist in the child."""
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "fork_rule.py"), tdspeer.conn_str(peer, driver), QUERY, str(N), at_exit],
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


def test_forks_at_many_points_of_a_prefetching_fetch(connect, peer, driver):
    """Twenty forks while a 1,000,000-row result is read (the prefetch thread inside SQLFetch at
    some of them): every child connects and queries on its own, and the parent's result is
    whole."""
    cur = connect().cursor()
    cur.execute("SELECT id FROM peer.int_nvarchar_1000000")
    connstr = tdspeer.conn_str(peer, driver)
    ids: list = []
    for k in range(20):
        ids.extend(r[0] for r in cur.fetchmany(7000 + 131 * k))
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                own = ferrodbc.connect(connstr, autocommit=True)
                code = 0 if own.cursor().execute("SELECT 42").fetchval() == 42 else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, f"child {k}"
    ids.extend(r[0] for r in cur.fetchall())
    assert ids == list(range(1_000_000))


@pytest.mark.parametrize(
    "which,pooling,cycles",
    [
        # 10,000 cycles each, as issue 15 asks, pooled and unpooled. A parked Driver 18 session
        # is taken in ~0.2 ms; a login through the peer costs ~3 ms, so an unpooled run takes
        # about half a minute. FreeTDS is never pooled.
        ("msodbcsql", True, 10_000),
        ("msodbcsql", False, 10_000),
        ("freetds", False, 10_000),
    ],
    ids=["msodbcsql18-pooled", "msodbcsql18-unpooled", "freetds-unpooled"],
)
def test_connect_cycles_leave_memory_flat(peer, which, pooling, cycles):
    require_driver(which)
    ferrodbc.clear_pool()
    try:
        rss_growth, traced_growth, top = cycles_memory(tdspeer.conn_str(peer, which), pooling, cycles)
    finally:
        ferrodbc.clear_pool()
    assert rss_growth < 4, f"RSS grew {rss_growth:.1f} MiB over {cycles} cycles"
    assert traced_growth < 64 * 1024, f"Python memory grew {traced_growth} B over each half of {cycles} cycles:\n{top}"


def test_fork_mid_prefetch_ends_the_prefetch_thread_first(peer, driver):
    """Python 3.12+ warns when a process with threads forks (gunicorn --preload,
    multiprocessing's fork): ferrodbc's prefetch thread, the only one it starts, finishes its
    fetch and ends before the fork, and starts again on the next prefetch
    (tests/scripts/fork_threads.py; the child connects and queries on its own)."""
    proc = subprocess.run(
        [sys.executable, "-W", "error", str(SCRIPTS / "fork_threads.py"), tdspeer.conn_str(peer, driver), QUERY, str(N)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "before 2 at_fork 1 child 0 rows ok True again 2\n", proc.stdout
    assert proc.stderr == ""
