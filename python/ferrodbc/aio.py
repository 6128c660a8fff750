"""ferrodbc.aio: asyncio access to ferrodbc, with cancellation that reaches the server.

::

    import ferrodbc.aio

    async with await ferrodbc.aio.connect(connection_string, autocommit=True) as conn:
        cur = conn.cursor()                       # plain call: no driver work
        await cur.execute("SELECT id, name FROM people WHERE id > ?", 10)
        async for row in cur:
            ...
        async with asyncio.timeout(2):            # cancels the statement on the server
            await cur.execute("EXEC slow_report")
        rows = await cur.fetchall(timeout=5)      # OperationalError HYT00 after 5 s

**Mechanism: one worker thread per connection.** Every call that may wait on the driver (connect,
execute, every fetch shape, commit, rollback, autocommit, close) runs on the connection's own
thread; the event loop only queues the call and is woken when it returns. The blocking calls
release the GIL (the Rust engine does so on every driver call and wait), so the loop keeps
running while the driver waits. Measured before choosing (``python -m eng.aio_load --mechanism``:
200 tasks over 16 connections, point lookups and 100-row pages against the TDS peer through
Driver 18, 3 runs of 10 s on a shared 2-core machine, median and range): a worker per connection
gave 6,290 (5,792-6,722) queries/s, p99 116 ms; sync ferrodbc on a shared 16-thread
``ThreadPoolExecutor`` (``run_in_executor``, aioodbc's mechanism) 4,744 (4,642-5,595), p99 149 ms.
One call costs a queue put and one ``call_soon_threadsafe`` (no ``concurrent.futures`` future
chained to an asyncio one); each connection's ODBC handles stay on one thread; a connection never
waits for a free executor thread behind other connections' work; and a cancelled call's clean-up
is queued behind it on the same thread, so nothing runs beside it. ODBC's asynchronous (polling)
mode was not chosen: Microsoft's Driver 18 allows one asynchronous statement per connection,
connect and commit are always synchronous there (so a thread is needed anyway), work only
advances while the caller polls (one poll may block up to a second mid-parse), and the Linux
driver manager and FreeTDS support for it is unverified; it would also need the Rust engine's
fetch loop rebuilt around ``SQL_STILL_EXECUTING``.

**Two operations on one connection at once are serialised** (an ``asyncio.Lock`` per connection,
as SQLAlchemy's adapters and psycopg do): tasks may share a connection, and each call runs whole,
in the order the tasks got the lock. The unit is the call, not the result set: a statement on one
cursor while another cursor of the connection still has rows pending is what it is in the sync
API (without MARS, SQL Server's drivers refuse it: ``Error`` "Connection is busy with results for
another command"). Tasks that share a connection should read with the connection's
``fetchall``/``fetchone``/``fetchval(sql, *params)``, which execute and fetch in one call, or
take connections from a pool (one per task).

**Cancellation.** A task cancelled while it awaits a call (``task.cancel()``, ``asyncio.timeout``,
``asyncio.wait_for``) gets ``asyncio.CancelledError`` (or the context's ``TimeoutError``) at once,
and the statement is cancelled with the sync cursor's ``cancel()`` (SQLCancel from another
thread: Driver 18 sends the server an ATTENTION at once). ``timeout=`` on a call does the same and
raises ``OperationalError`` with SQLSTATE ``HYT00``. The cancel is repeated every 50 ms until the
driver call has returned (a cancel that arrives before the statement started is otherwise lost),
and the connection's next call waits for that return: the worker never runs two calls at once and
the next statement runs normally. The cancelled call's sync cursor is then closed on the worker
(whatever the cancel left pending must not keep the connection busy) and the ``AsyncCursor`` goes
on with a fresh one: its result set is gone, it can execute again.
Through FreeTDS a cancel during a fetch is cooperative (its SQLCancel against a running fetch
hung or corrupted memory in tests): the fetch stops before the next row array, so a server that
stalls inside one driver call is only cut short by the query timeout (``connection.timeout``);
a cancel during an execute is a real SQLCancel with both drivers, through FreeTDS once the
execute has run 100 ms (a FreeTDS 1.3 SQLCancel that lands while its executing thread is still
writing the request or reading a packet can leave that thread waiting for ever; after that it
waits for the server, where a cancel is safe). A task cancelled sooner still gets its
``CancelledError`` at once; the statement's end is then only awaited by the connection's next
call.
"""

from __future__ import annotations

import asyncio
import functools
import queue
import threading
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

import ferrodbc

from ._native import Connection, Cursor, OperationalError, ProgrammingError, RecordBatchStream
from .retry import RetryPolicy, policy_of

if TYPE_CHECKING:
    from types import TracebackType

    from typing_extensions import Self

_T = TypeVar("_T")

#: Rows an ``async for`` takes from the driver per hand-off to the worker: large enough that the
#: hand-off (tens of microseconds) is a small share, small enough that the GIL is never held long
#: turning them into Python objects (the event loop needs it to run).
ITER_CHUNK = 1024
#: How often a cancel is repeated while the cancelled driver call has not returned.
_CANCEL_EVERY_S = 0.05


class _Job(Generic[_T]):
    """One blocking call queued on a worker: the asyncio future it settles, what to run on the
    loop once the call has returned (whether or not anyone still awaits the future), and the flag
    the canceller reads (under the worker's lock, so no cancel can land on the next call)."""

    __slots__ = ("args", "finished", "fn", "future", "loop", "on_return")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        fn: Callable[..., _T],
        args: tuple[Any, ...],
        on_return: Callable[[], None] | None,
    ) -> None:
        self.loop = loop
        self.future: asyncio.Future[_T] = loop.create_future()
        self.fn = fn
        self.args = args
        self.on_return = on_return
        self.finished = False


def _settle(job: _Job[Any], ok: bool, value: Any) -> None:
    # A cancelled future (its task left) takes no result: nobody reads it.
    if not job.future.done():
        if ok:
            job.future.set_result(value)
        else:
            job.future.set_exception(value)
    if job.on_return is not None:
        job.on_return()


class _Worker:
    """The OS thread that runs one connection's blocking calls, one at a time, in order."""

    def __init__(self) -> None:
        # SimpleQueue: its get() waits with the GIL released and costs one C call per job.
        self._jobs: queue.SimpleQueue[_Job[Any] | None] = queue.SimpleQueue()
        #: Held to mark a job finished and by the canceller while it cancels, so a cancel meant
        #: for one call never reaches the statement of the next.
        self.cancel_lock = threading.Lock()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="ferrodbc.aio worker", daemon=True)
        self._thread.start()

    def submit(
        self, fn: Callable[..., _T], *args: Any, on_return: Callable[[], None] | None = None
    ) -> _Job[_T]:
        if self._stopped:
            raise ProgrammingError("Attempt to use a closed connection.")
        job: _Job[_T] = _Job(asyncio.get_running_loop(), fn, args, on_return)
        self._jobs.put(job)
        return job

    def stop(self) -> None:
        """Let the thread end after the calls already queued (never waits for it)."""
        if not self._stopped:
            self._stopped = True
            self._jobs.put(None)

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                value, ok = job.fn(*job.args), True
            except BaseException as e:  # noqa: BLE001  (handed to the awaiting task, whatever it is)
                value, ok = e, False
            with self.cancel_lock:
                job.finished = True
            try:
                job.loop.call_soon_threadsafe(_settle, job, ok, value)
            except RuntimeError:
                # The loop was closed with this call in flight: nobody awaits the result.
                pass
            del job, value


def _cancel_until_returned(worker: _Worker, job: _Job[Any], cursor: Cursor) -> None:
    """Runs on a short-lived thread: cancel the statement, again every 50 ms, until the driver
    call has returned (an execute that had not yet started when the first cancel came clears
    it; FreeTDS's cooperative cancel acts at the next row array)."""
    wait = threading.Event()
    while True:
        with worker.cancel_lock:
            if job.finished:
                return
            try:
                cursor.cancel()
            except ferrodbc.Error:
                # The statement is closed or the link is gone: the call ends on its own.
                pass
        wait.wait(_CANCEL_EVERY_S)


def _start_cancel(worker: _Worker, job: _Job[Any], cursor: Cursor | None) -> None:
    if cursor is None or job.finished:
        return
    threading.Thread(
        target=_cancel_until_returned,
        args=(worker, job, cursor),
        name="ferrodbc.aio cancel",
        daemon=True,
    ).start()


def _close_quietly(cursor: Cursor) -> None:
    try:
        cursor.close()
    except ferrodbc.Error:
        pass  # a lost link or a closed connection: nothing is pending any more


def _timeout_error(seconds: float) -> OperationalError:
    error = OperationalError(f"[HYT00] the call did not finish within its timeout ({seconds} s)")
    error.sqlstate = "HYT00"
    return error


class _Forward(Generic[_T]):
    """An attribute of the wrapped sync object (``.sync``), read and written as it is there:
    settings the sync connection or cursor keeps, whose access never calls the driver."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _Forward[_T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> _T | _Forward[_T]:
        if obj is None:
            return self
        value: _T = getattr(obj.sync, self.name)  # type: ignore[attr-defined]
        return value

    def __set__(self, obj: object, value: _T) -> None:
        setattr(obj.sync, self.name, value)  # type: ignore[attr-defined]


class AsyncConnection:
    """A ferrodbc ``Connection`` driven from asyncio (see the module documentation).

    Made by ``await ferrodbc.aio.connect(...)``. ``sync`` is the underlying connection (its
    blocking methods must not be called from the event loop)."""

    def __init__(self, sync: Connection, worker: _Worker) -> None:
        self.sync = sync
        self._worker = worker
        self._lock = asyncio.Lock()
        self._closed = False
        #: The call on the worker and its cursor (what ``terminate`` cancels).
        self._running: tuple[_Job[Any], Cursor | None] | None = None
        # A connection dropped without close() lets its thread end (the ODBC handles are freed
        # with the sync connection, on whichever thread drops it last).
        self._finalizer = weakref.finalize(self, worker.stop)

    async def _call(
        self,
        fn: Callable[..., _T],
        *args: Any,
        cursor: Cursor | None = None,
        timeout: float | None = None,
        on_abandon: Callable[[Cursor], None] | None = None,
    ) -> _T:
        """Run ``fn(*args)`` on the worker, serialised with the connection's other calls."""
        await self._lock.acquire()
        try:
            # The lock is held until the driver call has returned (on_return), also when the
            # awaiting task was cancelled and left: the next call waits for it instead of
            # running beside it.
            job = self._worker.submit(fn, *args, on_return=self._returned)
        except BaseException:
            self._lock.release()
            raise
        self._running = (job, cursor)
        try:
            if timeout is None:
                return await job.future
            return await asyncio.wait_for(job.future, timeout)
        except asyncio.CancelledError:
            self._abandon(job, cursor, on_abandon)
            raise
        except asyncio.TimeoutError:
            if not job.future.cancelled():
                raise  # not ours: the call itself raised TimeoutError
            self._abandon(job, cursor, on_abandon)
            raise _timeout_error(timeout or 0) from None

    def _abandon(
        self, job: _Job[Any], cursor: Cursor | None, on_abandon: Callable[[Cursor], None] | None
    ) -> None:
        """The awaiting task left: cancel the statement, and close its cursor on the worker
        right after the call (queued now, so before any later call): whatever the cancel left
        pending (rows, a result the server finished anyway) must not keep the connection busy."""
        if cursor is None:
            return
        _start_cancel(self._worker, job, cursor)
        try:
            self._worker.submit(_close_quietly, cursor)
        except ferrodbc.Error:
            pass  # the worker is stopping: the connection is being closed anyway
        if on_abandon is not None:
            on_abandon(cursor)

    def _returned(self) -> None:
        self._running = None
        self._lock.release()

    # --- the DB-API surface ------------------------------------------------------------------

    def cursor(self) -> AsyncCursor:
        """A new cursor (no driver call: the statement is allocated on first use)."""
        return AsyncCursor(self, self.sync.cursor())

    async def execute(self, sql: str, *params: Any, timeout: float | None = None) -> AsyncCursor:
        """A new cursor with ``sql`` executed on it."""
        return await self.cursor().execute(sql, *params, timeout=timeout)

    async def fetchall(self, sql: str, *params: Any, timeout: float | None = None) -> list[Any]:
        """Execute ``sql`` and read all its rows in one call on the worker (so tasks sharing the
        connection can never find another cursor's rows pending)."""
        return await self._one_shot(Cursor.fetchall, sql, params, timeout)

    async def fetchone(self, sql: str, *params: Any, timeout: float | None = None) -> Any:
        """The first row of ``sql``'s result (``None`` if none), in one call on the worker."""
        return await self._one_shot(Cursor.fetchone, sql, params, timeout)

    async def fetchval(self, sql: str, *params: Any, timeout: float | None = None) -> Any:
        """The first column of the first row of ``sql``'s result, in one call on the worker."""
        return await self._one_shot(Cursor.fetchval, sql, params, timeout)

    async def _one_shot(
        self, fetch: Callable[[Cursor], _T], sql: str, params: tuple[Any, ...], timeout: float | None
    ) -> _T:
        cursor = self.sync.cursor()

        def run() -> _T:
            try:
                cursor.execute(sql, *params)
                return fetch(cursor)
            finally:
                cursor.close()

        return await self._call(run, cursor=cursor, timeout=timeout)

    async def commit(self) -> None:
        await self._call(self.sync.commit)

    async def rollback(self) -> None:
        await self._call(self.sync.rollback)

    async def close(self) -> None:
        """Close (or, with pooling, park) the connection. Idempotent."""
        if self._closed:
            return
        try:
            await self._call(self.sync.close)
        finally:
            self._closed = True
            self._worker.stop()

    def terminate(self) -> None:
        """Close without waiting (for SQLAlchemy's ``terminate``, e.g. from garbage collection
        or a connection found broken): the running statement, if any, is cancelled, and the
        close is queued on the worker behind it."""
        if self._closed:
            return
        self._closed = True
        if self._running is not None:
            _start_cancel(self._worker, *self._running)
        sync = self.sync

        def close_quietly() -> None:
            try:
                sync.close()
            except ferrodbc.Error:
                pass  # a broken link: the handles are freed all the same

        try:
            self._worker.submit(close_quietly)
        except (RuntimeError, ferrodbc.Error):
            # No running loop (gc) or worker already stopped: close on this thread's behalf
            # from a short-lived one, never blocking the caller.
            threading.Thread(target=close_quietly, daemon=True).start()
        self._worker.stop()

    @property
    def autocommit(self) -> bool:
        return self.sync.autocommit

    async def set_autocommit(self, value: bool) -> None:
        """Switch autocommit (a driver call, so awaited; psycopg spells it the same way)."""
        await self._call(setattr, self.sync, "autocommit", bool(value))

    @property
    def closed(self) -> bool:
        return self._closed or self.sync.closed

    @property
    def broken(self) -> bool:
        return self.sync.broken

    # Settings the sync connection keeps (no driver call to read or write them).
    #: The query timeout in seconds (0: none), enforced by the driver, as ``Connection.timeout``.
    timeout: _Forward[int] = _Forward()
    decode_errors: _Forward[str] = _Forward()
    row_factory: _Forward[Any] = _Forward()
    native_uuid: _Forward[bool] = _Forward()
    max_lob_bytes: _Forward[int | None] = _Forward()

    def add_output_converter(self, sqltype: int, func: Callable[[bytes | None], Any] | None) -> None:
        self.sync.add_output_converter(sqltype, func)

    def get_output_converter(self, sqltype: int) -> Callable[[bytes], Any] | None:
        return self.sync.get_output_converter(sqltype)

    def remove_output_converter(self, sqltype: int) -> None:
        self.sync.remove_output_converter(sqltype)

    def clear_output_converters(self) -> None:
        self.sync.clear_output_converters()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Commit on success, roll back on an error (as ``Connection``'s ``with``), then close."""
        try:
            if not self.closed and not self.sync.autocommit:
                if exc_type is None:
                    await self.commit()
                else:
                    await self.rollback()
        finally:
            await self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<ferrodbc.aio.AsyncConnection {state} {self.sync!r}>"


class AsyncCursor:
    """A ferrodbc ``Cursor`` driven from asyncio. Calls that may reach the driver are awaited
    and take ``timeout=`` (seconds; see the module documentation); ``description``, ``rowcount``
    and the other attributes are plain."""

    def __init__(self, connection: AsyncConnection, sync: Cursor) -> None:
        self.connection = connection
        self.sync = sync
        #: Rows an ``async for`` took from the driver and has not handed out yet; every fetch
        #: serves them first.
        self._ahead: deque[Any] = deque()

    async def _call(self, fn: Callable[..., _T], *args: Any, timeout: float | None = None) -> _T:
        return await self.connection._call(
            fn, *args, cursor=self.sync, timeout=timeout, on_abandon=self._abandoned
        )

    def _abandoned(self, sync: Cursor) -> None:
        """The connection closes this cursor's sync cursor behind a cancelled call; go on with
        a fresh one (same settings, no result set)."""
        if sync is not self.sync:
            return
        self._ahead.clear()
        try:
            fresh = self.connection.sync.cursor()
        except ferrodbc.Error:
            return  # the connection is closed: so is every cursor of it, this one included
        fresh.arraysize = sync.arraysize
        fresh.row_factory = sync.row_factory
        self.sync = fresh

    async def execute(self, sql: str, *params: Any, timeout: float | None = None) -> Self:
        self._ahead.clear()
        await self._call(self.sync.execute, sql, *params, timeout=timeout)
        return self

    async def executemany(
        self, sql: str, seq_of_params: Sequence[Sequence[Any]], *, timeout: float | None = None
    ) -> Self:
        self._ahead.clear()
        await self._call(self.sync.executemany, sql, seq_of_params, timeout=timeout)
        return self

    async def bulkcopy(self, table_name: str, data: Any, **options: Any) -> dict[str, Any]:
        """``Cursor.bulkcopy`` on the connection's worker thread (the rows are read there: a
        plain iterable or generator, not an async one). ``timeout`` is the load's own limit in
        seconds, as in the sync call; cancelling the awaiting task cancels the load."""
        self._ahead.clear()
        call = functools.partial(self.sync.bulkcopy, table_name, data, **options)
        return await self._call(call)

    async def bulkcopy_arrow(self, table_name: str, source: Any, **options: Any) -> dict[str, Any]:
        """``Cursor.bulkcopy_arrow`` on the connection's worker thread."""
        self._ahead.clear()
        call = functools.partial(self.sync.bulkcopy_arrow, table_name, source, **options)
        return await self._call(call)

    async def callproc(
        self, procname: str, parameters: Sequence[Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        self._ahead.clear()
        return await self._call(self.sync.callproc, procname, parameters, timeout=timeout)

    async def fetchone(self, *, timeout: float | None = None) -> Any:
        if self._ahead:
            return self._ahead.popleft()
        return await self._call(self.sync.fetchone, timeout=timeout)

    async def fetchmany(self, size: int | None = None, *, timeout: float | None = None) -> list[Any]:
        want = self.sync.arraysize if size is None else size
        if self._ahead:
            rows = [self._ahead.popleft() for _ in range(min(want, len(self._ahead)))]
            if len(rows) < want:
                rows += await self._call(self.sync.fetchmany, want - len(rows), timeout=timeout)
            return rows
        return await self._call(self.sync.fetchmany, want, timeout=timeout)

    async def fetchall(self, *, timeout: float | None = None) -> list[Any]:
        rows = list(self._ahead)
        self._ahead.clear()
        rows += await self._call(self.sync.fetchall, timeout=timeout)
        return rows

    async def fetchval(self, *, timeout: float | None = None) -> Any:
        self._refuse_rows_ahead()
        return await self._call(self.sync.fetchval, timeout=timeout)

    async def nextset(self, *, timeout: float | None = None) -> bool:
        self._ahead.clear()
        return await self._call(self.sync.nextset, timeout=timeout)

    async def setinputsizes(self, sizes: Sequence[Any] | None) -> None:
        """Bookkeeping only (no driver call); a coroutine as SQLAlchemy's adapters expect."""
        self.sync.setinputsizes(sizes)

    def setoutputsize(self, size: int, column: int | None = None) -> None:
        self.sync.setoutputsize(size, column)

    async def fetch_arrow_table(
        self,
        *,
        datetimeoffset: str = "utc",
        uuid: str = "uuid",
        timestamp_unit: str = "us",
        large_types: bool = False,
        timeout: float | None = None,
    ) -> RecordBatchStream:
        """The rest of the result set as one Arrow table (see ``Cursor.fetch_arrow_table``)."""
        self._refuse_rows_ahead()
        fetch = functools.partial(
            self.sync.fetch_arrow_table,
            datetimeoffset=datetimeoffset,
            uuid=uuid,
            timestamp_unit=timestamp_unit,
            large_types=large_types,
        )
        return await self._call(fetch, timeout=timeout)

    async def fetch_record_batches(
        self,
        rows_per_batch: int | None = None,
        *,
        datetimeoffset: str = "utc",
        uuid: str = "uuid",
        timestamp_unit: str = "us",
        large_types: bool = False,
        timeout: float | None = None,
    ) -> AsyncIterator[Any]:
        """``async for batch in cursor.fetch_record_batches(n)``: the rest of the result set as
        ``pyarrow.RecordBatch``es of ``n`` rows (default 8,192), each read on the worker when
        the loop asks for it (needs pyarrow). ``timeout`` applies to each batch."""
        try:
            import pyarrow  # type: ignore[import-untyped,unused-ignore]
        except ImportError as e:
            raise ferrodbc.InterfaceError(
                "fetch_record_batches needs pyarrow (pip install pyarrow); fetch_arrow_table "
                "and the sync cursor's fetch_record_batch do not"
            ) from e
        self._refuse_rows_ahead()

        def open_reader() -> Any:
            stream = self.sync.fetch_record_batch(
                rows_per_batch,
                datetimeoffset=datetimeoffset,
                uuid=uuid,
                timestamp_unit=timestamp_unit,
                large_types=large_types,
            )
            return pyarrow.RecordBatchReader.from_stream(stream)

        def next_batch(reader: Any) -> Any:
            try:
                return reader.read_next_batch()
            except StopIteration:
                return None

        reader = await self._call(open_reader, timeout=timeout)
        try:
            while True:
                batch = await self._call(next_batch, reader, timeout=timeout)
                if batch is None:
                    return
                yield batch
        finally:
            del reader

    def _refuse_rows_ahead(self) -> None:
        if self._ahead:
            raise ProgrammingError(
                "rows taken ahead by `async for` are not handed out yet: fetch them with "
                "fetchone/fetchmany/fetchall before fetchval or an Arrow fetch"
            )

    def cancel(self) -> None:
        """Ask the driver to cancel what this cursor is running (never waits)."""
        threading.Thread(target=self._cancel_quietly, daemon=True).start()

    def _cancel_quietly(self) -> None:
        try:
            self.sync.cancel()
        except ferrodbc.Error:
            pass  # nothing is running, or the link is gone

    async def close(self) -> None:
        """Close the cursor (pending rows are discarded: a driver call). Idempotent."""
        self._ahead.clear()
        if self.sync.closed:
            return
        await self._call(self.sync.close)

    def __aiter__(self) -> AsyncCursor:
        return self

    async def __anext__(self) -> Any:
        if not self._ahead:
            chunk = await self._call(self.sync.fetchmany, max(self.sync.arraysize, ITER_CHUNK))
            if not chunk:
                raise StopAsyncIteration
            self._ahead.extend(chunk)
        return self._ahead.popleft()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # --- plain attributes of the sync cursor ---------------------------------------------------

    @property
    def description(self) -> Any:
        return self.sync.description

    @property
    def rowcount(self) -> int:
        return self.sync.rowcount

    @property
    def rownumber(self) -> int | None:
        number = self.sync.rownumber
        return None if number is None else number - len(self._ahead)

    @property
    def messages(self) -> list[tuple[str, str]]:
        return self.sync.messages

    @property
    def closed(self) -> bool:
        return self.sync.closed

    arraysize: _Forward[int] = _Forward()
    row_factory: _Forward[Any] = _Forward()

    @property
    def lastrowid(self) -> None:
        """PEP 249's optional attribute: SQL Server's drivers have no row id to give."""
        return None

    def __repr__(self) -> str:
        return f"<ferrodbc.aio.AsyncCursor of {self.connection!r}>"


async def connect(
    connection_string: str = "",
    autocommit: bool = False,
    timeout: int | None = None,
    pooling: bool | None = None,
    retry: bool | RetryPolicy | None = None,
    **kwargs: Any,
) -> AsyncConnection:
    """``ferrodbc.connect`` with the same arguments, run on the new connection's worker thread
    (ODBC's connect is always synchronous). Cancelling the task leaves the connect to finish on
    that thread, and the connection it makes is closed. ``retry`` retries transient faults as
    ``ferrodbc.connect`` does, waiting with ``asyncio.sleep`` between tries (a cancel during the
    wait ends it)."""
    once = functools.partial(
        _connect_once,
        connection_string,
        autocommit=autocommit,
        timeout=timeout,
        pooling=pooling,
        **kwargs,
    )
    policy = policy_of(retry)
    if policy is None:
        return await once()
    connection: AsyncConnection = await policy.run_async("connect", once, connecting=True)
    return connection


async def _connect_once(connection_string: str, **kwargs: Any) -> AsyncConnection:
    """One connect on a new worker thread."""
    worker = _Worker()
    job = worker.submit(functools.partial(ferrodbc.connect, connection_string, **kwargs))
    try:
        sync = await asyncio.shield(job.future)
    except asyncio.CancelledError:

        def close_when_made(future: asyncio.Future[Connection]) -> None:
            if not future.cancelled() and future.exception() is None:
                threading.Thread(target=future.result().close, daemon=True).start()
            worker.stop()

        job.future.add_done_callback(close_when_made)
        raise
    except BaseException:
        worker.stop()
        raise
    return AsyncConnection(sync, worker)


__all__ = ["ITER_CHUNK", "AsyncConnection", "AsyncCursor", "connect"]
