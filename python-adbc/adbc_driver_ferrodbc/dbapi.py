"""DB-API 2.0 over the ferrodbc ADBC driver (``adbc_driver_manager.dbapi``, as
``adbc_driver_sqlite.dbapi``): ``connect(uri)`` gives a connection whose cursors also have the ADBC
extras (``fetch_arrow_table``, ``adbc_ingest``, ``adbc_get_objects``, ...). pandas >= 2.2
(``read_sql``/``to_sql``) and polars (``read_database``/``write_database(engine="adbc")``) take it
as is. Parameters are ``?`` (qmark).
"""

from __future__ import annotations

from typing import Any

import adbc_driver_manager
import adbc_driver_manager.dbapi
from adbc_driver_manager.dbapi import (  # noqa: F401  (the DB-API module surface)
    BINARY,
    DATETIME,
    NUMBER,
    ROWID,
    STRING,
    Connection,
    Cursor,
    DatabaseError,
    DataError,
    Date,
    DateFromTicks,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    Time,
    TimeFromTicks,
    Timestamp,
    TimestampFromTicks,
    Warning,
)

import adbc_driver_ferrodbc

apilevel = "2.0"
threadsafety = 1
paramstyle = "qmark"


def connect(
    uri: str | None = None,
    *,
    db_kwargs: dict[str, str] | None = None,
    conn_kwargs: dict[str, str] | None = None,
    autocommit: bool = False,
    **kwargs: Any,
) -> Connection:
    """A DB-API connection. ``autocommit=False`` (DB-API's default) opens a transaction that
    ``commit()``/``rollback()`` end."""
    db = None
    conn = None
    try:
        db = adbc_driver_ferrodbc.connect(uri, db_kwargs=db_kwargs)
        conn = adbc_driver_manager.AdbcConnection(db, **(conn_kwargs or {}))
        return adbc_driver_manager.dbapi.Connection(db, conn, autocommit=autocommit, **kwargs)
    except Exception:
        if conn is not None:
            conn.close()
        if db is not None:
            db.close()
        raise
