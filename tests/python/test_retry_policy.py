"""ferrodbc.RetryPolicy's decision (python/ferrodbc/retry.py), apart from any server: which
errors are transient, the backoff and jitter, the bounds by attempts and total time, and the
`attempts` list on the final error. (Through Driver 18 against the peer's fault switches:
tests/sqlserver/test_sqlserver_retry.py.)"""

from __future__ import annotations

import pytest

import ferrodbc
from ferrodbc.retry import TRANSIENT_ERRORS, RetryPolicy, policy_of


def odbc_error(number: int, sqlstate: str = "42000", cls: type = ferrodbc.OperationalError) -> ferrodbc.Error:
    err = cls(sqlstate, f"[Microsoft][ODBC Driver 18 for SQL Server][SQL Server]fault ({number})")
    err.sqlstate = sqlstate
    err.native_error = number
    err.diagnostics = [(sqlstate, number, "fault")]
    return err


def test_documented_transient_numbers():
    assert TRANSIENT_ERRORS == {40613, 40197, 40501, 49918, 49919, 49920, 4221, 10928, 10929}


def test_decision_is_pure_and_bounded_by_attempts():
    p = RetryPolicy(attempts=3, base_delay=1, max_delay=10, jitter=0, total_timeout=100)
    assert p.should_retry(odbc_error(40613), 1) == 1
    assert p.should_retry(odbc_error(40613), 2) == 2
    assert p.should_retry(odbc_error(40613), 3) is None  # three tries made
    assert p.should_retry(odbc_error(18456), 1) is None  # a refused login is not transient
    assert p.should_retry(ValueError("x"), 1) is None  # only driver errors


def test_backoff_doubles_up_to_max_delay_and_total_timeout():
    p = RetryPolicy(attempts=10, base_delay=5, max_delay=60, jitter=0, total_timeout=120)
    assert [p.delay(n) for n in range(1, 6)] == [5, 10, 20, 40, 60]
    assert p.should_retry(odbc_error(40501), 4, elapsed=81) is None  # 81 + 40 > 120
    assert p.should_retry(odbc_error(40501), 4, elapsed=80) == 40


def test_jitter_adds_at_most_its_share_and_never_passes_max_delay():
    low = RetryPolicy(base_delay=5, jitter=0.2, rng=lambda: 0.0)
    high = RetryPolicy(base_delay=5, jitter=0.2, rng=lambda: 1.0)
    assert low.delay(1) == 5 and high.delay(1) == 6
    assert RetryPolicy(base_delay=50, max_delay=60, jitter=1, rng=lambda: 1.0).delay(1) == 60


def test_network_failures_are_retried_on_connect_only():
    lost = odbc_error(0, "08S01")
    p = RetryPolicy(base_delay=0, jitter=0)
    assert p.should_retry(lost, 1, connecting=True) == 0
    assert p.should_retry(lost, 1) is None
    assert p.should_retry(odbc_error(10054, "08001"), 1, connecting=True) == 0


def test_the_number_is_found_in_any_record():
    err = odbc_error(18456)
    err.diagnostics = [("42000", 40613, "not currently available"), ("28000", 18456, "login failed")]
    assert RetryPolicy().is_transient(err)


def test_predicate_decides_instead():
    p = RetryPolicy(predicate=lambda e: getattr(e, "native_error", None) == 1205)
    assert p.is_transient(odbc_error(1205)) and not p.is_transient(odbc_error(40613))


def test_run_retries_then_raises_with_every_attempt(caplog):
    errors = [odbc_error(40613), odbc_error(40501), odbc_error(49918)]
    calls = []

    def fail():
        calls.append(1)
        raise errors[len(calls) - 1]

    slept = []
    p = RetryPolicy(attempts=3, base_delay=0.5, jitter=0)
    with caplog.at_level("INFO", logger="ferrodbc"), pytest.raises(ferrodbc.OperationalError) as ei:
        p.run("connect", fail, sleep=slept.append)
    assert ei.value is errors[2] and ei.value.attempts == errors
    assert slept == [0.5, 1.0]
    logged = [r.getMessage() for r in caplog.records if r.name == "ferrodbc"]
    assert len(logged) == 2 and "40613" in logged[0] and "40501" in logged[1]


def test_run_returns_the_first_success():
    outcomes = [odbc_error(40197), "ok"]

    def call():
        o = outcomes.pop(0)
        if isinstance(o, Exception):
            raise o
        return o

    assert RetryPolicy(base_delay=0).run("execute", call, sleep=lambda s: None) == "ok"


def test_bad_arguments():
    assert policy_of(None) is None and policy_of(False) is None
    assert isinstance(policy_of(True), RetryPolicy)
    with pytest.raises(TypeError):
        policy_of(3)
    for bad in ({"attempts": 0}, {"jitter": 2}, {"base_delay": -1}):
        with pytest.raises(ValueError):
            RetryPolicy(**bad)
