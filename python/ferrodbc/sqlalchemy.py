"""SQLAlchemy dialect ``mssql+ferrodbc``: SQL Server through ferrodbc.

Registered by the package under the ``sqlalchemy.dialects`` entry point (pyproject.toml), so
``create_engine("mssql+ferrodbc://...")`` finds it once ferrodbc is installed. It is SQLAlchemy's
own SQL Server dialect (``MSDialect``: the T-SQL compiler, reflection from the sys.* views, the
type system) with the DB-API specifics of ferrodbc. The facts it relies on were read from
SQLAlchemy 2.1's ``mssql+pyodbc`` and ``mssql+mssqlpython`` dialects; where ferrodbc behaves
differently from pyodbc the difference is stated below.

URL forms::

    mssql+ferrodbc://user:pw@host:port/db?driver=ODBC+Driver+18+for+SQL+Server&Encrypt=no
    mssql+ferrodbc://user:pw@host:port/db?driver=/opt/microsoft/msodbcsql18/lib64/libmsodbcsql-18.so
    mssql+ferrodbc:///?odbc_connect=<url-encoded ODBC connection string>

**asyncio.** ``create_async_engine("mssql+ferrodbc://...")`` takes the same URL: SQLAlchemy asks
the dialect for its async variant (``get_async_dialect_cls``), ``MSDialectAsync_ferrodbc``, which
drives ``ferrodbc.aio`` through SQLAlchemy's async adapters (``AsyncAdaptedQueuePool``; a task
cancelled while SQLAlchemy awaits the driver cancels the statement on the server, see
``ferrodbc.aio``). ``mssql+ferrodbc_async://`` names it directly (for tools that pick the dialect
from the URL alone, such as SQLAlchemy's test plugin).

Every other query key is passed on as an ODBC keyword (``Encrypt=no``, ``TrustServerCertificate=
yes``, ``ServerCertificate=...``), except ``autocommit`` (a ``connect`` argument) and ``pooling``.

**Pooling: SQLAlchemy pools, ferrodbc does not.** Connections the dialect opens are made with
``ferrodbc.connect(..., pooling=False)``: SQLAlchemy's QueuePool already keeps them open, resets
them on return (rollback) and throws away the ones it invalidates after a disconnect. With
ferrodbc's pool underneath, a connection SQLAlchemy closes (pool overflow, recycle, invalidation)
would be parked in a second pool instead of disconnected, so "close" would not mean close and the
two pools' sizes would add up. ``create_engine(..., poolclass=NullPool, ferrodbc_pooling=True)``
(or ``?pooling=true`` in the URL) is the reverse choice for short-lived engines: SQLAlchemy opens
and closes per checkout, and ferrodbc's pool (with ``sp_reset_connection`` on reuse) keeps the
sessions.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import util
from sqlalchemy.connectors.asyncio import (
    AsyncAdapt_dbapi_connection,
    AsyncAdapt_dbapi_cursor,
    AsyncAdapt_dbapi_module,
    AsyncAdapt_dbapi_ss_cursor,
    AsyncAdapt_terminate,
)
from sqlalchemy.dialects.mssql.base import MSDialect, MSExecutionContext
from sqlalchemy.sql import sqltypes
from sqlalchemy.util.concurrency import await_

from . import _native

# SQLSTATEs after which the connection is gone: ODBC's connection-class states (08xxx), 01002
# (disconnect error), HYT01 (connection timeout) and HY010 (function sequence error: the
# driver's handle state is broken). SQLAlchemy's pyodbc dialect also lists HYT00, but that is
# the *query* timeout too (ferrodbc's `timeout`): the statement is cancelled and the connection
# stays usable, so throwing the pool away for it would be wrong. ferrodbc puts the state on
# `.sqlstate` (and every diagnostic on `.diagnostics`) rather than in `args[0]`.
DISCONNECT_SQLSTATES = frozenset(
    {"08S01", "01002", "08003", "08007", "08S02", "08001", "HYT01", "HY010", "10054"}
)

# ferrodbc's own messages for a handle that is already closed (ProgrammingError, no SQLSTATE).
_CLOSED_MESSAGES = (
    "Attempt to use a closed connection.",
    "The cursor's connection has been closed.",
)


def _quote_odbc(value: str) -> str:
    """One ODBC attribute value, quoted as ``ferrodbc.connect(**attrs)`` quotes it."""
    return _native._quote_connection_value(value)


class MSExecutionContext_ferrodbc(MSExecutionContext):
    def create_default_cursor(self) -> Any:
        # SQLAlchemy copies every DB-API row into its own Row, keeping a plain tuple as it is and
        # converting anything else with tuple(row): rows as tuples skip building a ferrodbc Row
        # and that copy (pandas.read_sql of 100,000 mixed rows: see docs/dataframes.md, "Which
        # path to take"). Cursors users open on the raw connection keep ferrodbc's Row.
        cursor = super().create_default_cursor()
        cursor.row_factory = tuple
        return cursor

    # No rowcount override: SQLAlchemy reads `result.rowcount` after a fully fetched result has
    # closed its cursor, and a closed ferrodbc cursor answers -1 there, as pyodbc's does
    # (tests/python/test_errors.py::test_rowcount_of_a_closed_cursor_is_minus_one).


class MSDialect_ferrodbc(MSDialect):
    driver = "ferrodbc"
    supports_statement_cache = True
    execution_ctx_cls = MSExecutionContext_ferrodbc

    # ferrodbc returns uuid.UUID for uniqueidentifier and binds uuid.UUID as SQL_GUID.
    supports_native_uuid = True
    # Decimal both ways, exactly (ferrodbc binds Decimal as SQL_NUMERIC with its own precision
    # and scale: no string workaround as in pyodbc's dialect for old pyodbc versions).
    supports_native_decimal = True
    # ferrodbc reports the rows of each statement, also for UPDATE/DELETE ... OUTPUT, and the
    # sum over a parameter array after executemany (Driver 18 counts each parameter set).
    supports_sane_rowcount_returning = True
    supports_sane_multi_rowcount = True
    # SELECT SCOPE_IDENTITY() in a separate statement would run outside the INSERT's scope
    # (the driver runs parameterized statements through sp_executesql), so it is appended to
    # the INSERT and read with nextset(), as for pyodbc.
    scope_identity_must_be_embedded = True

    # executemany() is one parameter array: one round trip for all rows (SQL Server runs the
    # statement once per parameter set). So INSERT without RETURNING goes to executemany as is,
    # and insertmanyvalues (a multi-row VALUES batch) is only used where rows must come back
    # (INSERT ... OUTPUT inserted.*), as with pyodbc's fast_executemany.
    use_insertmanyvalues = True
    use_insertmanyvalues_wo_returning = False

    # SQL Server 2025's json columns reflect as JSON (docs/vectors.md); SQLAlchemy's own
    # mssql dialect does not know the type name yet and would reflect NullType.
    ischema_names = {**MSDialect.ischema_names, "json": sqltypes.JSON}

    def __init__(self, ferrodbc_pooling: bool = False, **kw: Any) -> None:
        super().__init__(**kw)
        self.ferrodbc_pooling = ferrodbc_pooling

    @classmethod
    def load_provisioning(cls) -> None:
        # SQLAlchemy's test provisioning for SQL Server (temp table names, schema set-up) lives
        # with its own mssql dialect; the default would look for ferrodbc.provision.
        __import__("sqlalchemy.dialects.mssql.provision")

    @classmethod
    def import_dbapi(cls) -> Any:
        import ferrodbc

        return ferrodbc

    def create_connect_args(self, url: Any) -> Any:
        opts = url.translate_connect_args(username="user")
        query = dict(url.query)
        connect_args: dict[str, Any] = {"pooling": self.ferrodbc_pooling}
        if "autocommit" in query:
            connect_args["autocommit"] = util.asbool(query.pop("autocommit"))
        if "pooling" in query:
            connect_args["pooling"] = util.asbool(query.pop("pooling"))

        if "odbc_connect" in query:
            return ((query.pop("odbc_connect"),), connect_args)

        parts: list[str] = []
        driver = query.pop("driver", None)
        if driver:
            # A driver name from odbcinst.ini or the path of the driver's shared library: the
            # driver manager takes both in Driver=.
            braced = str(driver).replace("}", "}}")
            parts.append(f"Driver={{{braced}}}")
        port = f",{int(opts.pop('port'))}" if "port" in opts and "port" not in query else ""
        if "host" in opts:
            parts.append(f"Server={_quote_odbc(str(opts.pop('host')))}{port}")
        if "database" in opts:
            parts.append(f"Database={_quote_odbc(str(opts.pop('database')))}")
        user = opts.pop("user", None)
        if user:
            parts.append(f"UID={_quote_odbc(str(user))}")
            password = opts.pop("password", "")
            if password:
                parts.append(f"PWD={_quote_odbc(str(password))}")
        elif "authentication" in query:
            parts.append(f"Authentication={_quote_odbc(str(query.pop('authentication')))}")
        else:
            parts.append("Trusted_Connection=Yes")
        parts += [f"{_quote_odbc(k)}={_quote_odbc(str(v))}" for k, v in query.items()]
        return ((";".join(parts),), connect_args)

    def _get_server_version_info(self, connection: Any) -> Any:
        raw = connection.exec_driver_sql(
            "SELECT CAST(SERVERPROPERTY('ProductVersion') AS VARCHAR)"
        ).scalar()
        if not raw:
            return super()._get_server_version_info(connection)
        return tuple(int(part) for part in re.split(r"[.\-]", raw) if part.isdigit())

    def get_isolation_level_values(self, dbapi_connection: Any) -> list[Any]:
        return [*super().get_isolation_level_values(dbapi_connection), "AUTOCOMMIT"]

    def set_isolation_level(self, dbapi_connection: Any, level: Any) -> None:
        if level == "AUTOCOMMIT":
            dbapi_connection.autocommit = True
        else:
            dbapi_connection.autocommit = False
            super().set_isolation_level(dbapi_connection, level)

    def detect_autocommit_setting(self, dbapi_conn: Any) -> bool:
        return bool(dbapi_conn.autocommit)

    def is_disconnect(self, e: Exception, connection: Any, cursor: Any) -> bool:
        dbapi = self.loaded_dbapi
        if not isinstance(e, dbapi.Error):
            return False
        if getattr(e, "sqlstate", None) in DISCONNECT_SQLSTATES:
            return True
        # A batch can end in several diagnostics; the link failure is not always the first.
        for state, _code, _text in getattr(e, "diagnostics", ()) or ():
            if state in DISCONNECT_SQLSTATES:
                return True
        return isinstance(e, dbapi.ProgrammingError) and any(
            text in str(e) for text in _CLOSED_MESSAGES
        )

    @classmethod
    def get_async_dialect_cls(cls, url: Any) -> Any:
        return MSDialectAsync_ferrodbc


# --- asyncio: the same dialect over ferrodbc.aio --------------------------------------------------


class AsyncAdapt_ferrodbc_cursor(AsyncAdapt_dbapi_cursor):
    """SQLAlchemy's async cursor adapter (rows are read whole right after execute, under the
    connection's mutex) plus the attributes the ferrodbc execution context uses."""

    __slots__ = ()

    @property
    def row_factory(self) -> Any:
        return self._cursor.row_factory

    @row_factory.setter
    def row_factory(self, value: Any) -> None:
        self._cursor.row_factory = value

    @property
    def closed(self) -> bool:
        return bool(self._soft_closed_memoized) or self._cursor.closed

    @property
    def lastrowid(self) -> Any:
        return None


class AsyncAdapt_ferrodbc_ss_cursor(AsyncAdapt_ferrodbc_cursor, AsyncAdapt_dbapi_ss_cursor):
    """``stream_results`` / ``AsyncConnection.stream``: rows are awaited from the driver as
    they are read (ferrodbc's cursors always stream; this only skips the read-all)."""

    __slots__ = ()


class AsyncAdapt_ferrodbc_connection(AsyncAdapt_terminate, AsyncAdapt_dbapi_connection):
    _cursor_cls = AsyncAdapt_ferrodbc_cursor
    _ss_cursor_cls = AsyncAdapt_ferrodbc_ss_cursor
    __slots__ = ()

    @property
    def autocommit(self) -> bool:
        return bool(self._connection.autocommit)

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        await_(self._connection.set_autocommit(value))

    @property
    def closed(self) -> bool:
        return bool(self._connection.closed)

    @property
    def broken(self) -> bool:
        return bool(self._connection.broken)

    def add_output_converter(self, sqltype: int, func: Any) -> None:
        self._connection.add_output_converter(sqltype, func)

    def cursor(self, server_side: bool = False) -> Any:
        if self._connection.closed:
            # The sync API's words, which is_disconnect() recognises.
            raise self.dbapi.ProgrammingError("Attempt to use a closed connection.")
        return super().cursor(server_side=server_side)

    def close(self) -> None:
        if not self._connection.closed:
            super().close()

    async def _terminate_graceful_close(self) -> None:
        await self._connection.close()

    def _terminate_force_close(self) -> None:
        self._connection.terminate()


class AsyncAdapt_ferrodbc_dbapi(AsyncAdapt_dbapi_module):
    """``ferrodbc.aio`` as a DB-API module for SQLAlchemy: ``connect`` awaits
    ``ferrodbc.aio.connect``; exceptions, type objects and constants are ferrodbc's own."""

    def __init__(self, aio: Any, dbapi: Any) -> None:
        super().__init__(aio, dbapi_module=dbapi)
        self.aio = aio
        self.ferrodbc = dbapi
        self.paramstyle = dbapi.paramstyle

    def __getattr__(self, key: str) -> Any:
        # Error classes, type objects, SQL_* codes: the sync module's (only reached for names
        # this object does not have itself).
        return getattr(self.ferrodbc, key)

    def connect(self, *arg: Any, **kw: Any) -> Any:
        creator_fn = kw.pop("async_creator_fn", self.aio.connect)
        return await_(AsyncAdapt_ferrodbc_connection.create(self, creator_fn(*arg, **kw)))


class MSExecutionContextAsync_ferrodbc(MSExecutionContext_ferrodbc):
    def create_server_side_cursor(self) -> Any:
        cursor = self._dbapi_connection.cursor(server_side=True)
        cursor.row_factory = tuple
        return cursor


class MSDialectAsync_ferrodbc(MSDialect_ferrodbc):
    """``mssql+ferrodbc`` under ``create_async_engine`` (or ``mssql+ferrodbc_async``)."""

    is_async = True
    supports_statement_cache = True
    supports_server_side_cursors = True
    execution_ctx_cls = MSExecutionContextAsync_ferrodbc

    @classmethod
    def import_dbapi(cls) -> Any:
        import ferrodbc
        import ferrodbc.aio

        return AsyncAdapt_ferrodbc_dbapi(ferrodbc.aio, ferrodbc)

    def get_driver_connection(self, connection: Any) -> Any:
        return connection._connection


dialect = MSDialect_ferrodbc
dialect_async = MSDialectAsync_ferrodbc
