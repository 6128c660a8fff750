"""ferrodbc: fast, exact SQL Server reads from Python.

A DB-API 2.0 (PEP 249) driver whose fetch engine is Rust: each result set is described once into a
fetch plan, rows are fetched in blocks into bound buffers, and every fetch shape (fetchone,
fetchmany, fetchall, fetchval, iteration) is served from that one native batch.
"""

from __future__ import annotations

import atexit
from typing import Any

from . import _native, sqltypes
from ._native import (
    Connection,
    Cursor,
    DatabaseError,
    DataError,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    Output,
    ProgrammingError,
    RecordBatchStream,
    Row,
    Warning,
)
from .dbapi import (
    BINARY,
    DATETIME,
    NUMBER,
    ROWID,
    STRING,
    Binary,
    Date,
    DateFromTicks,
    Time,
    TimeFromTicks,
    Timestamp,
    TimestampFromTicks,
)
from .sqltypes import *  # noqa: F403  (SQL_* type codes, as pyodbc exports them)

apilevel = "2.0"
# PEP 249 level 1: threads may share the module, not connections or cursors. Beyond that promise,
# misuse is still safe (tests/python/test_threads.py): each cursor call holds that cursor's lock
# and each connection call (commit, rollback, close, ...) the connection's, so nothing crashes and
# rows never mix. Not level 2, because a shared connection is one transaction (one thread's
# commit, rollback or close ends the others' work) and its cursors run statements on it at the
# same time, which rests on the ODBC driver's own thread safety.
threadsafety = 1
paramstyle = "qmark"
__version__ = _native.__version__


def _quote(value: Any) -> str:
    text = str(value)
    if any(c in text for c in ";{}") or text != text.strip():
        return "{" + text.replace("}", "}}") + "}"
    return text


#: Pool connections by default (see ``connect(pooling=...)``), as mssql-python does and as
#: pyodbc's ``pooling`` asks of the driver manager. Off: ``close()`` disconnects.
pooling: bool = True


def connect(
    connection_string: str = "",
    autocommit: bool = False,
    timeout: int | None = None,
    pooling: bool | None = None,
    **attrs: Any,
) -> Connection:
    """Open a connection.

    ``connection_string`` is a full ODBC connection string, e.g.
    ``"Driver={ODBC Driver 18 for SQL Server};Server=host,1433;UID=sa;PWD=...;TrustServerCertificate=yes"``.
    Keyword arguments are appended as ``key=value`` pairs (pyodbc style: ``server="host"``).
    ``timeout`` is the login timeout in seconds. Transactions are manual unless ``autocommit``.
    ``pooling`` (default: the module's ``ferrodbc.pooling``, on): ``close()`` parks the
    connection for the next ``connect`` with the same string instead of disconnecting. Only SQL
    Server sessions through Microsoft's driver are pooled: the transaction is rolled back and the
    next request resets the session (``sp_reset_connection``: temp tables, SET options). Other
    drivers always disconnect. A forked child never takes its parent's pooled sessions.
    """
    if not isinstance(connection_string, str):
        raise InterfaceError("the connection string must be a str")
    parts = [connection_string.rstrip(";")] if connection_string else []
    parts += [f"{key}={_quote(value)}" for key, value in attrs.items()]
    use_pool = pooling if pooling is not None else globals()["pooling"]
    return Connection(";".join(parts), autocommit=autocommit, timeout=timeout, pooling=bool(use_pool))


def clear_pool() -> None:
    """Disconnect every pooled connection (also done at interpreter exit)."""
    _native.clear_pool()


atexit.register(clear_pool)


def counters() -> dict[str, int]:
    """The engine's path counters (driver fetch calls, SQLGetData calls, plans built, binds...)."""
    return _native.counters()


def reset_counters() -> None:
    _native.reset_counters()


__all__ = [
    "BINARY",
    "DATETIME",
    "NUMBER",
    "ROWID",
    "STRING",
    "Binary",
    "Connection",
    "Cursor",
    "DataError",
    "DatabaseError",
    "Date",
    "DateFromTicks",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "Output",
    "ProgrammingError",
    "RecordBatchStream",
    "Row",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "Warning",
    "apilevel",
    "clear_pool",
    "connect",
    "counters",
    "paramstyle",
    "pooling",
    "reset_counters",
    "threadsafety",
]
__all__ += sqltypes.__all__
