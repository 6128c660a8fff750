"""Retry on Azure SQL's transient faults: ``RetryPolicy`` and the decision it makes.

``connect(..., retry=RetryPolicy())`` (or ``retry=True`` for the defaults) retries a connect that
fails with a transient error; ``policy.execute(cursor, sql, *params)`` retries a statement the
caller says is safe to repeat on the same connection, never inside a transaction (autocommit
off); ``policy.transaction(connect, work)`` redoes a whole unit of work on a new connection
when the session is lost (40197, 40501 and the other class-20 errors end it). The decision is a
pure function, ``policy.should_retry(err, attempt, elapsed) -> delay | None``, so an asyncio
caller (``ferrodbc.aio``) reuses it with ``asyncio.sleep`` instead of ``time.sleep``.

Transient error numbers (``TRANSIENT_ERRORS``), from Microsoft's documentation:

- "Troubleshooting connectivity issues and other errors with Azure SQL Database and Azure SQL
  Managed Instance", section "Transient fault error messages" (4060 is left out: it is also a
  wrong database name): 40613 (database not currently available), 40197 (error processing the
  request, e.g. a failover), 40501 (service busy), 49918, 49919, 49920 (not enough resources /
  too many operations), 4221 (read-secondary login wait), and the resource-governance errors
  10928 and 10929 (request/session limits reached);
  https://learn.microsoft.com/azure/azure-sql/database/troubleshoot-common-errors-issues
- Microsoft.Data.SqlClient's ``SqlConfigurableRetryFactory.BaselineTransientErrors`` lists the
  same numbers (among others) for its built-in retry providers.

Network-level failures are retried on connect only, by SQLSTATE: ``08S01`` (communication link
failure) and ``08001`` (client unable to establish connection), as ODBC defines them. A
statement whose connection was lost is not retried here: that session is gone (see docs/connecting.md on
Driver 18's ``ConnectRetryCount``).

Defaults (``RetryPolicy()``): 5 tries in all, the first retry after 5 s, each later one after
twice the previous wait, at most 60 s apart, plus up to 20 % random jitter, none starting after
120 s. Azure SQL's guidance on transient connection errors ("Troubleshoot transient connection
errors") advises at least 5 s before the first retry (sooner risks overwhelming a service that is
reconfiguring) and exponential growth up to 60 s; reconfigurations usually end within 60 s.
Microsoft.Data.SqlClient's documented example provider also tries 5 times, and Entity
Framework's SqlAzureExecutionStrategy retries 5 times by default. Tests use small delays.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from ._native import Error, ProgrammingError

#: Azure SQL's documented transient error numbers (module docstring has the sources).
TRANSIENT_ERRORS = frozenset({40613, 40197, 40501, 49918, 49919, 49920, 4221, 10928, 10929})
#: SQLSTATEs of network-level failures retried on connect.
NETWORK_SQLSTATES = frozenset({"08S01", "08001"})

_log = logging.getLogger("ferrodbc")


def error_numbers(err: BaseException) -> list[int]:
    """Every native error number an error carries (its diagnostic records, then its own)."""
    found = [rec[1] for rec in getattr(err, "diagnostics", None) or () if len(rec) > 1]
    native = getattr(err, "native_error", None)
    if isinstance(native, int):
        found.append(native)
    return [n for n in found if isinstance(n, int)]


#: Transient errors of class 20, after which SQL Server ends the session (Driver 18 reports the
#: connection dead at once; FreeTDS only at its next use): never retried on the same connection.
SESSION_ENDING_ERRORS = frozenset({40197, 40501, 10928, 10929})
#: SQLSTATEs that say the session is gone (communication link failure, no connection).
LOST_LINK_SQLSTATES = frozenset({"08S01", "08003", "08007"})


def lost_link(err: BaseException) -> bool:
    """Whether ``err`` reports the connection lost, or ended by a class-20 error (a retry on it
    cannot run)."""
    return any(s in LOST_LINK_SQLSTATES for s in sqlstates(err)) or any(
        n in SESSION_ENDING_ERRORS for n in error_numbers(err)
    )


def sqlstates(err: BaseException) -> list[str]:
    found = [rec[0] for rec in getattr(err, "diagnostics", None) or () if rec]
    state = getattr(err, "sqlstate", None)
    if isinstance(state, str):
        found.append(state)
    return found


class RetryPolicy:
    """When and how often to try again after a transient fault.

    ``attempts``: tries in all (1 = never retry). The n-th retry waits
    ``min(max_delay, base_delay * 2 ** (n - 1))`` plus a random share of at most ``jitter``
    (0..1) of it (never more than ``max_delay``): clients failed by one outage do not all come
    back at once, and none sooner than ``base_delay``. No retry starts once ``total_timeout`` seconds have passed since the first try
    (or would have, after its delay). ``retry_on``: the error numbers that are transient
    (default ``TRANSIENT_ERRORS``); ``network_sqlstates``: the SQLSTATEs retried on connect.
    ``predicate(err) -> bool``, when given, decides instead of the numbers (statements too).
    """

    def __init__(
        self,
        attempts: int = 5,
        base_delay: float = 5.0,
        max_delay: float = 60.0,
        total_timeout: float = 120.0,
        jitter: float = 0.2,
        retry_on: Collection[int] = TRANSIENT_ERRORS,
        network_sqlstates: Collection[str] = NETWORK_SQLSTATES,
        predicate: Callable[[BaseException], bool] | None = None,
        rng: Callable[[], float] = random.random,
    ) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        if base_delay < 0 or max_delay < 0 or total_timeout < 0:
            raise ValueError("delays and total_timeout must not be negative")
        if not 0 <= jitter <= 1:
            raise ValueError("jitter must be between 0 and 1")
        self.attempts = attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.total_timeout = total_timeout
        self.jitter = jitter
        self.retry_on = frozenset(retry_on)
        self.network_sqlstates = frozenset(network_sqlstates)
        self.predicate = predicate
        self.rng = rng

    def __repr__(self) -> str:
        return (
            f"RetryPolicy(attempts={self.attempts}, base_delay={self.base_delay}, "
            f"max_delay={self.max_delay}, total_timeout={self.total_timeout}, "
            f"jitter={self.jitter})"
        )

    def is_transient(self, err: BaseException, connecting: bool = False) -> bool:
        if not isinstance(err, Error):
            return False
        if self.predicate is not None:
            return bool(self.predicate(err))
        if any(n in self.retry_on for n in error_numbers(err)):
            return True
        return connecting and any(s in self.network_sqlstates for s in sqlstates(err))

    def delay(self, attempt: int) -> float:
        """The wait before retry number ``attempt`` (1 = the first retry)."""
        full = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return min(self.max_delay, full * (1 + self.jitter * self.rng()))

    def should_retry(
        self, err: BaseException, attempt: int, elapsed: float = 0.0, connecting: bool = False
    ) -> float | None:
        """After try number ``attempt`` (1-based) failed with ``err``, ``elapsed`` seconds after
        the first began: the seconds to wait before the next try, or None to give up. Pure
        (apart from the jitter's random draw): sync and async callers sleep as they do."""
        if attempt >= self.attempts or not self.is_transient(err, connecting):
            return None
        wait = self.delay(attempt)
        if elapsed + wait > self.total_timeout:
            return None
        return wait

    def run(
        self,
        what: str,
        call: Callable[[], Any],
        connecting: bool = False,
        sleep: Callable[[float], Any] = time.sleep,
        usable: Callable[[BaseException], bool] = lambda err: True,
    ) -> Any:
        """``call()`` until it succeeds or the policy gives up (also when ``usable(err)`` says
        the connection the call needs is gone); the error raised then carries ``attempts``: every
        try's error, first to last."""
        errors: list[BaseException] = []
        start = time.monotonic()
        while True:
            try:
                return call()
            except Error as err:
                wait = self._next_wait(what, err, errors, start, connecting, usable)
                if wait is None:
                    raise
                sleep(wait)

    async def run_async(
        self,
        what: str,
        call: Callable[[], Awaitable[Any]],
        connecting: bool = False,
        usable: Callable[[BaseException], bool] = lambda err: True,
    ) -> Any:
        """``run`` for a coroutine: ``await call()`` until it succeeds or the policy gives up,
        waiting with ``asyncio.sleep`` (the event loop runs meanwhile, and cancelling the task
        ends the waiting)."""
        errors: list[BaseException] = []
        start = time.monotonic()
        while True:
            try:
                return await call()
            except Error as err:
                wait = self._next_wait(what, err, errors, start, connecting, usable)
                if wait is None:
                    raise
                await asyncio.sleep(wait)

    def _next_wait(
        self,
        what: str,
        err: BaseException,
        errors: list[BaseException],
        start: float,
        connecting: bool,
        usable: Callable[[BaseException], bool],
    ) -> float | None:
        """After ``err``: the wait before the next try (logged at INFO), or None to give up,
        with every try's error attached to ``err``."""
        errors.append(err)
        wait = self.should_retry(err, len(errors), time.monotonic() - start, connecting)
        if wait is None or not usable(err):
            _attach(err, errors)
            return None
        _log.info(
            "%s failed with transient error %s (SQLSTATE %s), attempt %d of %d: "
            "retrying in %.2f s",
            what,
            _number(err),
            getattr(err, "sqlstate", None),
            len(errors),
            self.attempts,
            wait,
        )
        return wait

    def execute(self, cursor: Any, sql: str, *params: Any) -> Any:
        """``cursor.execute(sql, *params)``, retried on the same connection after a transient
        error: the caller says the statement is safe to repeat by calling this. Refused
        (ProgrammingError, nothing run) in manual-commit mode: a retry inside a transaction
        would repeat one statement of a transaction the fault may have rolled back. Not retried
        once the connection is gone (40501 and the other class-20 errors end the session; so
        does 40197): use ``transaction`` to redo the work on a new connection."""
        connection = cursor.connection
        if not connection.autocommit:
            raise ProgrammingError(
                "a statement is not retried inside a transaction (autocommit is off): retry the "
                "whole transaction (RetryPolicy.transaction), or run it with autocommit on"
            )
        return self.run(
            "execute",
            lambda: cursor.execute(sql, *params),
            usable=lambda err: not connection.broken and not lost_link(err),
        )

    def transaction(self, connect: Callable[[], Any], work: Callable[[Any], Any]) -> Any:
        """Run ``work(connection)`` on a new connection from ``connect()`` and commit; after a
        transient error or a lost connection (the session and its open transaction are gone,
        e.g. 40197 in a failover), roll back, close, and run it all again on a new connection.
        The caller says the whole unit is safe to repeat by calling this; nothing of a failed
        try is kept (its transaction was rolled back). Returns what ``work`` returned."""

        def once() -> Any:
            connection = connect()
            try:
                result = work(connection)
                connection.commit()
                return result
            except BaseException:
                _quietly(connection.rollback)
                raise
            finally:
                _quietly(connection.close)

        # A lost link is what a retry on a new connection is for: treated like a connect's.
        return self.run("transaction", once, connecting=True)


def _quietly(call: Callable[[], Any]) -> None:
    try:
        call()
    except Error:
        pass


def _number(err: BaseException) -> Any:
    numbers = error_numbers(err)
    return numbers[0] if numbers else None


def _attach(err: BaseException, errors: list[BaseException]) -> None:
    try:
        err.attempts = list(errors)  # type: ignore[attr-defined]
    except AttributeError:
        pass


def policy_of(retry: Any) -> RetryPolicy | None:
    """``connect(retry=...)``: None/False = no retries, True = the defaults, or a policy."""
    if retry is None or retry is False:
        return None
    if retry is True:
        return RetryPolicy()
    if isinstance(retry, RetryPolicy):
        return retry
    raise TypeError(f"retry must be a bool or a ferrodbc.RetryPolicy, not {type(retry).__name__}")
