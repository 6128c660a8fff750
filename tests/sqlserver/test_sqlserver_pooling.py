"""Connection pooling (on by default, `connect(pooling=...)` / `ferrodbc.pooling`): a closed connection is
parked and the next connect with the same string takes it without logging in again (the
`connects` counter proves it), and the next user finds a reset session: no open transaction, no
temp tables (Driver 18's SQL_COPT_SS_RESET_CONNECTION; the peer honours TDS RESETCONNECTION).
FreeTDS has no session reset, so its connections are never pooled."""

from __future__ import annotations

import os

import pytest

import ferrodbc
from eng.peers import tdspeer

from sqlserver_support import tname


@pytest.fixture
def pooled(peer, driver):
    ferrodbc.clear_pool()
    cs = tdspeer.conn_str(peer, driver)
    yield lambda autocommit=True: ferrodbc.connect(cs, autocommit=autocommit, pooling=True)
    ferrodbc.clear_pool()


def connects() -> int:
    return ferrodbc.counters()["connects"]


def test_a_closed_connection_is_reused_only_through_driver_18(pooled, driver):
    pooled().close()
    before = connects()
    c = pooled()
    assert c.cursor().execute("SELECT 1").fetchval() == 1
    c.close()
    assert connects() - before == (0 if driver == "msodbcsql" else 1)


def test_the_next_user_finds_a_reset_session(pooled, driver):
    t = tname()
    c = pooled(autocommit=False)
    cur = c.cursor()
    cur.execute(f"CREATE TABLE {t} (x INT)")
    c.commit()
    cur.execute(f"INSERT INTO {t} VALUES (1)")  # left uncommitted
    cur.execute("CREATE TABLE #scratch (y INT)")
    c.close()
    before = connects()
    c2 = pooled(autocommit=True)
    assert connects() - before == (0 if driver == "msodbcsql" else 1), "Driver 18 reuses the session"
    cur2 = c2.cursor()
    assert cur2.execute(f"SELECT COUNT(*) FROM {t}").fetchval() == 0, "the open transaction was rolled back"
    with pytest.raises(ferrodbc.ProgrammingError):
        cur2.execute("SELECT * FROM #scratch")
    assert c2.autocommit is True
    c2.close()


def test_session_state_set_in_autocommit_is_reset(pooled, driver):
    """Nothing a transaction rollback would undo: a committed #temp table and SET NOCOUNT ON
    (sp_reset_connection must drop and reset them; seen missing when the attribute number was wrong)."""
    t = tname()
    c = pooled(autocommit=True)
    cur = c.cursor()
    cur.execute(f"CREATE TABLE {t} (x INT)")
    cur.execute("CREATE TABLE #kept (y INT)")
    cur.execute("SET NOCOUNT ON")
    cur.execute(f"INSERT INTO {t} VALUES (1)")
    assert cur.rowcount == (-1 if driver == "msodbcsql" else 0), "no DONE count: Driver 18 -1, FreeTDS 0"
    c.close()
    c2 = pooled(autocommit=True)
    cur2 = c2.cursor()
    cur2.execute(f"INSERT INTO {t} VALUES (2)")
    assert cur2.rowcount == 1, "SET NOCOUNT ON was reset"
    with pytest.raises(ferrodbc.ProgrammingError):
        cur2.execute("SELECT * FROM #kept")
    cur2.execute(f"DROP TABLE {t}")
    c2.close()


def test_module_default_is_on_and_pooling_false_disconnects(peer, driver):
    assert ferrodbc.pooling is True
    ferrodbc.clear_pool()
    cs = tdspeer.conn_str(peer, driver)
    ferrodbc.connect(cs).close()
    before = connects()
    ferrodbc.connect(cs).close()
    assert connects() - before == (0 if driver == "msodbcsql" else 1), "pooled by default"
    ferrodbc.connect(cs, pooling=False).close()
    before = connects()
    ferrodbc.connect(cs, pooling=False).close()
    assert connects() - before == 1, "pooling=False logs in again"
    ferrodbc.clear_pool()


def test_a_forked_child_never_takes_the_parents_sessions(pooled, driver):
    """Two processes on one TDS session would interleave their requests: after fork the child
    logs in anew, and the parent's parked session still works for the parent."""
    pooled().close()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report (new logins, SELECT result), never return into pytest
        code = 1
        try:
            before = connects()
            c = pooled()
            one = c.cursor().execute("SELECT 1").fetchval()
            c.close()
            os.write(write, f"{connects() - before} {one}".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    report = os.read(read, 100).decode()
    os.close(read)
    assert os.waitstatus_to_exitcode(status) == 0
    assert report == "1 1", "the child logged in itself"
    before = connects()
    c = pooled()
    assert c.cursor().execute("SELECT 2").fetchval() == 2
    c.close()
    assert connects() - before == (0 if driver == "msodbcsql" else 1), "the parent's session is intact"
