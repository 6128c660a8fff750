"""An ADBC driver for SQL Server on ferrodbc's Rust engine, loaded through ``adbc_driver_manager``.

The driver is the shared library ``libadbc_driver_ferrodbc.so`` (entry point
``AdbcDriverFerrodbcInit``); this package finds it and opens databases with it, in the shape of
``adbc_driver_sqlite``::

    import adbc_driver_ferrodbc.dbapi
    with adbc_driver_ferrodbc.dbapi.connect("mssql://sa:secret@host:1433/db?Encrypt=yes") as conn:
        table = conn.cursor().execute("SELECT 1 AS x").fetch_arrow_table()

``uri`` is an ODBC connection string or the URL form ``mssql://user:pass@host:port/db?Keyword=value``
(also spelled ``ferrodbc://``, the scheme polars' ``read_database_uri(engine="adbc")`` needs).
See docs/adbc.md for every option.
"""

from __future__ import annotations

import enum
import os
import pathlib
from typing import Any

import adbc_driver_manager

__all__ = ["DatabaseOptions", "StatementOptions", "connect"]

__version__ = "0.1.0"

_LIBRARY = "libadbc_driver_ferrodbc.so"
_ENTRYPOINT = "AdbcDriverFerrodbcInit"


class DatabaseOptions(enum.Enum):
    """Database options of ferrodbc's own (beside ``uri``, ``username`` and ``password``)."""

    #: An Entra ID access token, sent as Driver 18's SQL_COPT_SS_ACCESS_TOKEN before connecting.
    ACCESS_TOKEN = "adbc.ferrodbc.access_token"
    #: Seconds to wait for the login (SQL_ATTR_LOGIN_TIMEOUT).
    LOGIN_TIMEOUT = "adbc.ferrodbc.login_timeout"


class StatementOptions(enum.Enum):
    """Statement options of ferrodbc's own."""

    #: Rows per record batch of a result stream (default 8,192: the engine's row array).
    BATCH_ROWS = "adbc.ferrodbc.statement.batch_rows"
    #: A byte budget per record batch (0: none), turned into rows from the bound row size.
    BATCH_BYTES = "adbc.ferrodbc.statement.batch_bytes"
    #: Seconds before the server is asked to cancel a statement (0: never).
    QUERY_TIMEOUT = "adbc.ferrodbc.statement.query_timeout"
    #: ``us`` (default; every year 1..9999) or ``ns`` (exact datetime2(7), 1677..2262 only).
    TIMESTAMP_UNIT = "adbc.ferrodbc.statement.timestamp_unit"
    #: ``uuid`` (fixed_size_binary(16), arrow.uuid; default) or ``string``.
    UUID = "adbc.ferrodbc.statement.uuid"
    #: ``utc`` (timestamp[tz=UTC]; default) or ``struct`` (instant and offset minutes).
    DATETIMEOFFSET = "adbc.ferrodbc.statement.datetimeoffset"


def _driver_path() -> str:
    """The path of the driver's shared library, for any ADBC loader.

    ``$ADBC_FERRODBC_LIBRARY`` when set (a development build), else the library installed
    beside this module.
    """
    override = os.environ.get("ADBC_FERRODBC_LIBRARY")
    if override:
        return override
    here = pathlib.Path(__file__).resolve().parent / _LIBRARY
    if here.exists():
        return str(here)
    raise FileNotFoundError(
        f"{_LIBRARY} is not installed beside {__file__}: build it with "
        "`cargo build --release -p adbc_driver_ferrodbc` (eng/setup.sh does) or set "
        "ADBC_FERRODBC_LIBRARY"
    )


def connect(
    uri: str | None = None,
    db_kwargs: dict[str, str] | None = None,
) -> adbc_driver_manager.AdbcDatabase:
    """Open an ADBC database handle (the low-level API; see ``dbapi.connect`` for DB-API)."""
    kwargs: dict[str, Any] = dict(db_kwargs or {})
    if uri is not None:
        kwargs["uri"] = uri
    return adbc_driver_manager.AdbcDatabase(
        driver=_driver_path(), entrypoint=_ENTRYPOINT, **kwargs
    )
