"""Retry on Azure SQL's transient faults (python/ferrodbc/retry.py) through the real drivers against
the peer's switches (eng/tds-peer/src/transient.rs):

- a login refused with 40613 the first N times connects within the policy's attempts, one INFO
  record per retry with the error number; past the bound the last error carries every attempt;
- statements answered with 40501 / 49918 the first N times succeed when the caller asks for a
  retry (`policy.execute`), and run exactly once (rows counted at the peer);
- a statement is never repeated unless asked, never inside a transaction, and not after the
  connection is dropped mid-transaction (40197: the transaction is rolled back, not replayed).
"""

from __future__ import annotations

import logging
import uuid

import pytest

import ferrodbc
from ferrodbc import RetryPolicy

from sqlserver_support import require_driver, require_peer_binary, tdspeer, tname

FAST = {"base_delay": 0.01, "max_delay": 0.05, "jitter": 0.2, "total_timeout": 30}


@pytest.fixture
def flaky_login_peer(request):
    """A peer whose first `request.param` logins fail with 40613."""
    require_peer_binary()
    require_driver("msodbcsql")
    with tdspeer.start_peer(extra_args=["--fail-logins", f"40613:{request.param}"]) as p:
        yield p


@pytest.mark.parametrize("flaky_login_peer", [2], indirect=True)
def test_connect_retries_40613_to_success(flaky_login_peer, caplog):
    cs = tdspeer.conn_str(flaky_login_peer, "msodbcsql")
    with caplog.at_level(logging.INFO, logger="ferrodbc"):
        cn = ferrodbc.connect(cs, timeout=10, pooling=False, retry=RetryPolicy(attempts=3, **FAST))
    assert cn.cursor().execute("SELECT 1").fetchval() == 1
    cn.close()
    retries = [r for r in caplog.records if r.name == "ferrodbc" and r.levelno == logging.INFO]
    assert len(retries) == 2 and all("40613" in r.getMessage() for r in retries), caplog.text


@pytest.mark.parametrize("flaky_login_peer", [3], indirect=True)
def test_connect_gives_up_after_attempts_with_every_error(flaky_login_peer):
    cs = tdspeer.conn_str(flaky_login_peer, "msodbcsql")
    with pytest.raises(ferrodbc.Error) as ei:
        ferrodbc.connect(cs, timeout=10, pooling=False, retry=RetryPolicy(attempts=3, **FAST))
    attempts = ei.value.attempts
    assert len(attempts) == 3 and attempts[-1] is ei.value
    assert all(40613 in [rec[1] for rec in e.diagnostics] for e in attempts)


@pytest.mark.parametrize("flaky_login_peer", [1], indirect=True)
def test_connect_without_a_policy_does_not_retry(flaky_login_peer):
    cs = tdspeer.conn_str(flaky_login_peer, "msodbcsql")
    with pytest.raises(ferrodbc.Error) as ei:
        ferrodbc.connect(cs, timeout=10, pooling=False)
    assert "40613" in str(ei.value)
    ferrodbc.connect(cs, timeout=10, pooling=False).close()  # the fault is spent: connects


def counted_table(connect) -> str:
    t = tname("retry")
    connect().cursor().execute(f"CREATE TABLE {t} (id int)")
    return t


def rows(connect, table: str) -> int:
    return connect().cursor().execute(f"SELECT COUNT(*) FROM {table}").fetchval()


def test_statement_retried_when_the_caller_says_it_is_safe(peer, driver, connect, caplog):
    """49918 (class 16) the first two times: `policy.execute` retries on the same connection,
    and the INSERT runs exactly once (failed twice unrun, then ran)."""
    table = counted_table(lambda: connect())
    cn = connect()
    sql = f"INSERT INTO {table} VALUES (1) /* {uuid.uuid4().hex} fault:transient=49918 fault:times=2 */"
    with caplog.at_level(logging.INFO, logger="ferrodbc"):
        RetryPolicy(attempts=3, **FAST).execute(cn.cursor(), sql)
    assert rows(lambda: connect(), table) == 1
    assert sum("49918" in r.getMessage() for r in caplog.records if r.name == "ferrodbc") == 2


def test_statement_bound_by_attempts(peer, driver, connect):
    cn = connect()
    sql = f"SELECT 1 /* {uuid.uuid4().hex} fault:transient=49918 fault:times=5 */"
    with pytest.raises(ferrodbc.Error) as ei:
        RetryPolicy(attempts=2, **FAST).execute(cn.cursor(), sql)
    assert [e.native_error for e in ei.value.attempts] == [49918, 49918]
    # Three more failures are left at the peer: the policy stopped at its bound.
    for _ in range(3):
        with pytest.raises(ferrodbc.Error):
            cn.cursor().execute(sql)
    assert cn.cursor().execute(sql).fetchval() == 1


def test_plain_execute_never_repeats(peer, driver, connect):
    """Without the caller's say-so (plain `cursor.execute`, even on a connection opened with a
    retry policy) a transient failure is raised at once and the INSERT is not run again."""
    table = counted_table(lambda: connect())
    cn = ferrodbc.connect(tdspeer.conn_str(peer, driver), autocommit=True, timeout=10, retry=RetryPolicy(**FAST))
    sql = f"INSERT INTO {table} VALUES (1) /* {uuid.uuid4().hex} fault:transient=49918 */"
    with pytest.raises(ferrodbc.Error) as ei:
        cn.cursor().execute(sql)
    assert ei.value.native_error == 49918
    assert rows(lambda: connect(), table) == 0
    cn.close()


def test_retry_inside_a_transaction_is_refused(peer, driver, connect):
    table = counted_table(lambda: connect())
    cn = ferrodbc.connect(tdspeer.conn_str(peer, driver), autocommit=False, timeout=10, pooling=False)
    cn.cursor().execute(f"INSERT INTO {table} VALUES (1)")
    sql = f"INSERT INTO {table} VALUES (2) /* {uuid.uuid4().hex} fault:transient=49918 */"
    with pytest.raises(ferrodbc.ProgrammingError, match="inside a transaction"):
        RetryPolicy(**FAST).execute(cn.cursor(), sql)
    cn.commit()
    assert rows(lambda: connect(), table) == 1  # the refused statement never ran
    cn.close()


@pytest.mark.parametrize("code", [40501, 40197])
def test_session_ending_fault_is_not_retried_on_the_dead_connection(peer, driver, connect, code):
    """40501 and 40197 (class 20) end the session: `policy.execute` gives up after the one try
    (the connection is gone) instead of running the statement on a dead link."""
    table = counted_table(lambda: connect())
    cn = ferrodbc.connect(tdspeer.conn_str(peer, driver), autocommit=True, timeout=10, pooling=False)
    sql = f"INSERT INTO {table} VALUES (1) /* {uuid.uuid4().hex} fault:transient={code} fault:times=3 */"
    with pytest.raises(ferrodbc.Error) as ei:
        RetryPolicy(**FAST).execute(cn.cursor(), sql)
    assert len(ei.value.attempts) == 1 and code in [rec[1] for rec in ei.value.diagnostics]
    if driver == "msodbcsql":
        assert cn.broken  # Driver 18 marks it dead at a class-20 error; FreeTDS at its next use
    assert rows(lambda: connect(), table) == 0
    cn.close()


@pytest.mark.parametrize("code", [40501, 40197])
def test_transaction_dropped_midway_is_redone_on_a_new_connection(peer, driver, connect, code, caplog):
    """A transaction whose session is dropped after its first INSERT (40197 in a failover, 40501
    when the service is busy): the peer rolls it back, `policy.transaction` runs the whole unit
    again on a new connection and commits it. The table holds exactly one transaction's rows."""
    table = counted_table(lambda: connect())
    fault = f"/* {uuid.uuid4().hex} fault:transient={code} fault:times=2 */"
    sessions = []

    def work(cn):
        cur = cn.cursor()
        sessions.append(cur.execute("SELECT @@SPID").fetchval())
        cur.execute(f"INSERT INTO {table} VALUES (1)")
        cur.execute(f"INSERT INTO {table} VALUES (2) {fault}")
        return "done"

    def open_connection():
        return ferrodbc.connect(tdspeer.conn_str(peer, driver), autocommit=False, timeout=10, pooling=False)

    with caplog.at_level(logging.INFO, logger="ferrodbc"):
        assert RetryPolicy(attempts=3, **FAST).transaction(open_connection, work) == "done"
    assert len(set(sessions)) == 3, sessions  # a new session for each try
    assert sorted(connect().cursor().execute(f"SELECT id FROM {table}").fetchall()) == [(1,), (2,)]
    assert sum(str(code) in r.getMessage() for r in caplog.records if r.name == "ferrodbc") == 2


def test_transaction_gives_up_on_a_lasting_fault(peer, driver, connect):
    table = counted_table(lambda: connect())
    fault = f"/* {uuid.uuid4().hex} fault:transient=40197 fault:times=9 */"

    def work(cn):
        cn.cursor().execute(f"INSERT INTO {table} VALUES (1)")
        cn.cursor().execute(f"SELECT 1 {fault}")

    with pytest.raises(ferrodbc.Error) as ei:
        RetryPolicy(attempts=2, **FAST).transaction(
            lambda: ferrodbc.connect(tdspeer.conn_str(peer, driver), autocommit=False, timeout=10, pooling=False), work
        )
    assert len(ei.value.attempts) == 2
    assert rows(lambda: connect(), table) == 0


@pytest.mark.parametrize("flaky_login_peer", [2], indirect=True)
def test_async_connect_retries_with_the_loop_running(flaky_login_peer, caplog):
    """ferrodbc.aio.connect takes the same policy and waits between tries with asyncio.sleep:
    another task keeps ticking through the waits (a time.sleep on the loop would stop it)."""
    import asyncio

    import ferrodbc.aio

    cs = tdspeer.conn_str(flaky_login_peer, "msodbcsql")
    policy = RetryPolicy(attempts=3, base_delay=0.2, max_delay=0.2, jitter=0, total_timeout=30)

    async def main() -> tuple[int, int]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.create_task(tick())
        try:
            async with await ferrodbc.aio.connect(cs, timeout=10, pooling=False, retry=policy) as cn:
                value = await cn.fetchval("SELECT 1")
        finally:
            ticker.cancel()
        return value, ticks

    with caplog.at_level(logging.INFO, logger="ferrodbc"):
        value, ticks = asyncio.run(main())
    assert value == 1
    retries = [r for r in caplog.records if r.name == "ferrodbc" and r.levelno == logging.INFO]
    assert len(retries) == 2 and all("40613" in r.getMessage() for r in retries), caplog.text
    # Two waits of 0.2 s with the loop free: the 10 ms ticker ran through them.
    assert ticks >= 10, ticks


@pytest.mark.parametrize("flaky_login_peer", [3], indirect=True)
def test_async_connect_gives_up_with_every_error(flaky_login_peer):
    import asyncio

    import ferrodbc.aio

    cs = tdspeer.conn_str(flaky_login_peer, "msodbcsql")
    with pytest.raises(ferrodbc.Error) as ei:
        asyncio.run(ferrodbc.aio.connect(cs, timeout=10, pooling=False, retry=RetryPolicy(attempts=3, **FAST)))
    assert len(ei.value.attempts) == 3 and ei.value.attempts[-1] is ei.value
