"""ferrodbc: fast, exact SQL Server reads from Python.

A DB-API 2.0 (PEP 249) driver whose fetch engine is Rust: each result set is described once into a
fetch plan, rows are fetched in blocks into bound buffers, and every fetch shape (fetchone,
fetchmany, fetchall, fetchval, iteration) is served from that one native batch.
"""

from __future__ import annotations

import atexit
import codecs
import logging
from typing import Any

try:
    from . import _native
except ImportError as _err:  # the loader's bare "libodbc.so.2: cannot open shared object file"
    from ._install_help import advice, is_missing_driver_manager

    if is_missing_driver_manager(_err):
        raise ImportError(advice(_err)) from _err
    raise
from . import bulk as bulk  # ferrodbc.bulk.to_sql_method without a second import
from . import driver_pick, entra, sqlconstants, sqltypes
from ._native import (
    Connection,
    Cursor,
    DatabaseError,
    DataError,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    LazyRow,
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
from .partitioned import read_arrow
from .pyodbc_face import install_as_pyodbc
from .retry import TRANSIENT_ERRORS, RetryPolicy, policy_of
from .rows import namedtuple_row
from .sqlconstants import *  # noqa: F403  (the other SQL_* constants pyodbc exports)
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
#: pyodbc's ``version`` (a "major.minor.patch" string): ferrodbc's own version.
version = __version__
#: The ODBC version the environment asks of the driver manager (ferrodbc sets 3.80).
odbcversion = "3.8"
#: pyodbc: column names in lower case in ``description`` and on rows (read when a result set
#: is described).
lowercase: bool = False
#: pyodbc: uniqueidentifier columns as ``uuid.UUID`` (True) or upper-case ``str``; read when a
#: result set is described, together with ``Connection.native_uuid``.
native_uuid: bool = True

_decimal_separator = "."


def setDecimalSeparator(separator: str) -> None:
    """pyodbc's decimal separator for reading decimal text. ferrodbc reads decimals from the
    driver's locale-independent text (SQL_C_CHAR numerics always use '.'), so the value only
    round-trips through ``getDecimalSeparator``; it never changes a value read."""
    global _decimal_separator
    if not isinstance(separator, str):
        raise TypeError("the decimal separator must be a str")
    if not separator:
        raise ValueError("the decimal separator must not be empty")
    _decimal_separator = separator


def getDecimalSeparator() -> str:
    return _decimal_separator


def drivers() -> list[str]:
    """The names of the ODBC drivers the driver manager knows (SQLDrivers)."""
    return _native.drivers()


def dataSources() -> dict[str, str]:
    """The configured data sources, ``{name: driver description}`` (SQLDataSources)."""
    return _native.dataSources()


def __getattr__(name: str) -> Any:
    # pyodbc's `henv`: the process's ODBC environment handle as a ctypes.c_void_p.
    if name == "henv":
        return _native._henv()
    raise AttributeError(f"module 'ferrodbc' has no attribute {name!r}")


#: DEBUG records for connects; connection strings appear only with secrets replaced (PWD=***).
_log = logging.getLogger("ferrodbc")


def _quote(value: Any) -> str:
    # Braces only where the ODBC grammar needs them (src/connstr.rs says why: FreeTDS 1.3 keeps
    # the closing brace of a braced value).
    return _native._quote_connection_value(str(value))


def pool_status() -> list[tuple[str, int]]:
    """The pooled (parked) connections: ``[(connection string, idle count)]``, each string with
    its password and token values replaced by ``***``."""
    return _native._pool_status()


#: Pool connections by default (see ``connect(pooling=...)``), as mssql-python does and as
#: pyodbc's ``pooling`` asks of the driver manager. Off: ``close()`` disconnects.
pooling: bool = True


# pyodbc's keyword spellings that ODBC connection strings name differently.
_KEYWORD_ALIASES = {"user": "uid", "password": "pwd", "host": "server"}
_SQL_ATTR_ACCESS_MODE = 101
_SQL_MODE_READ_ONLY = 1


def connect(
    connection_string: str = "",
    autocommit: bool = False,
    timeout: int | None = None,
    pooling: bool | None = None,
    *,
    attrs_before: dict[int, Any] | None = None,
    encoding: str | None = None,
    readonly: bool = False,
    ansi: bool = False,
    credential: Any = None,
    access_token: str | None = None,
    retry: bool | RetryPolicy | None = None,
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

    Microsoft Entra ID (Azure SQL; docs/connecting.md, "Azure SQL: Entra ID tokens"):
    ``credential`` is any object with azure-identity's ``TokenCredential`` protocol (its token
    for ``https://database.windows.net/.default`` is cached and asked again 5 minutes before
    it expires); ``access_token`` a token string. Either becomes Driver 18's
    ``SQL_COPT_SS_ACCESS_TOKEN``; such sessions are pooled by the token's identity, never by
    the token. ``Authentication=ActiveDirectoryDefault`` (also ``ActiveDirectoryDeviceCode``,
    and ``ActiveDirectoryInteractive`` off Windows), which Driver 18 cannot do on Linux, uses
    azure-identity's matching credential (``pip install 'ferrodbc[entra]'``).
    ``retry``: ``True`` or a ``ferrodbc.RetryPolicy`` retries a connect failed by a transient
    fault (Azure SQL's documented error numbers, lost or refused links) with exponential
    backoff; the last error's ``attempts`` lists every try's error.
    """
    if not isinstance(connection_string, str):
        raise InterfaceError("the connection string must be a str")
    if encoding is not None:
        # pyodbc encodes the connection string with it for the ANSI entry point; ferrodbc
        # always connects through SQLDriverConnectW, which carries any text, so the name is
        # only checked (a bad one raises as in pyodbc).
        codecs.lookup(encoding)
    parts = [connection_string.rstrip(";")] if connection_string else []
    parts += [
        f"{_KEYWORD_ALIASES.get(key.lower(), key)}={_quote(value)}"
        for key, value in attrs.items()
    ]
    # `del ferrodbc.pooling` means the default (as pyodbc).
    use_pool = pooling if pooling is not None else globals().get("pooling", True)
    # No Driver/DSN named: Microsoft's driver, else FreeTDS (ferrodbc.driver_pick).
    full = driver_pick.with_driver(";".join(parts))
    policy = policy_of(retry)

    def attempt() -> Connection:
        # A token is asked of the credential (or its cache) at each try: a retry after a long
        # wait never sends one that expired meanwhile.
        login = entra.resolve(full, credential, access_token, attrs_before)
        if _log.isEnabledFor(logging.DEBUG):
            _log.debug(
                "connect %s (pooling=%s, attrs_before=%s, identity=%s)",
                _native._redact_connection_string(login.connection_string),
                bool(use_pool),
                list(login.attrs_before) if login.attrs_before else [],
                login.pool_identity,
            )
        try:
            return Connection(
                login.connection_string,
                autocommit=autocommit,
                timeout=timeout,
                pooling=bool(use_pool),
                attrs_before=login.attrs_before,
                pool_identity=login.pool_identity,
            )
        except Error as e:
            _log.debug("connect failed: %s", e)
            raise

    cnxn = attempt() if policy is None else policy.run("connect", attempt, connecting=True)
    if readonly:
        cnxn.set_attr(_SQL_ATTR_ACCESS_MODE, _SQL_MODE_READ_ONLY)
    return cnxn


def install_as_mssql_python() -> Any:
    """Make ``import mssql_python`` give mssql-python's API over ferrodbc (ferrodbc.mssql_python)."""
    from .mssql_python import install

    return install()


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
    "LazyRow",
    "NotSupportedError",
    "OperationalError",
    "Output",
    "ProgrammingError",
    "RecordBatchStream",
    "RetryPolicy",
    "Row",
    "TRANSIENT_ERRORS",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "Warning",
    "apilevel",
    "clear_pool",
    "pool_status",
    "connect",
    "counters",
    "dataSources",
    "drivers",
    "getDecimalSeparator",
    "install_as_mssql_python",
    "install_as_pyodbc",
    "lowercase",
    "namedtuple_row",
    "native_uuid",
    "odbcversion",
    "paramstyle",
    "pooling",
    "read_arrow",
    "reset_counters",
    "setDecimalSeparator",
    "threadsafety",
    "version",
]
__all__ += sqltypes.__all__
__all__ += sqlconstants.__all__
