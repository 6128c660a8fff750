"""Opt-in connection pooling (`connect(pooling=True)` / `ferrodbc.pooling`): a closed connection is
parked and the next connect with the same string takes it without logging in again (the
`connects` counter proves it), and the next user finds a reset session: no open transaction, no
temp tables (Driver 18's SQL_COPT_SS_RESET_CONNECTION; the peer honours TDS RESETCONNECTION).
FreeTDS has no session reset, so its connections are never pooled."""

from __future__ import annotations

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


def test_module_default_is_off_and_close_disconnects(peer, driver):
    assert ferrodbc.pooling is False
    ferrodbc.clear_pool()
    cs = tdspeer.conn_str(peer, driver)
    ferrodbc.connect(cs).close()
    before = connects()
    ferrodbc.connect(cs).close()
    assert connects() - before == 1
