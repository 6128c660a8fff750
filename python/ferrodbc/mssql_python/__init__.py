"""mssql-python 1.16's public API over ferrodbc's engine: ``ferrodbc.install_as_mssql_python()``
makes ``import mssql_python`` (and ``mssql_python.exceptions``, ``.constants``, ``.cursor``,
``.connection``, ``.row``, ``.type``, ``.pooling``, ``.logging``) give this package.

Where mssql-python's and pyodbc's conventions conflict, this face follows mssql-python while
``import ferrodbc`` keeps pyodbc's: ``paramstyle`` is ``pyformat`` (``%(name)s`` with a dict,
``?`` with a sequence), ``pooling(...)`` is a function, ``connect`` needs no driver. The
connection and cursor are subclasses of ferrodbc's native ones, so rows are fetched by the
engine with nothing added per row. docs/mssql-python.md lists the deliberate differences.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import ferrodbc

from . import (  # noqa: F401  (install() maps them)
    connection_string_builder,
    connection_string_parser,
    constants,
    db_connection,
    helpers,
    parameter_helper,
    params,
)
from .connection import Connection, connect
from .constants import *  # noqa: F403  (mssql-python's top-level SQL_* names)
from .constants import AuthType, ConstantsDDBC, GetInfoConstants, SQLTypes, get_info_constants
from .cursor import Cursor
from .exceptions import (
    ConnectionStringParseError,
    DatabaseError,
    DataError,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    Warning,
)
from .helpers import Settings, get_settings
from .logging import driver_logger, logger, setup_logging
from .pooling import PoolingManager, pooling
from .row import Row
from .type import (
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

#: The mssql-python release whose API this face follows, with ferrodbc's version as the
#: PEP 440 local label (mssql-django requires 1.15 or newer).
__version__ = f"1.16.0+ferrodbc.{ferrodbc.__version__}"
apilevel = "2.0"
paramstyle = "pyformat"
threadsafety = 1


def _pooling_enabled() -> bool:
    return PoolingManager.is_enabled()


def getDecimalSeparator() -> str:
    return ferrodbc.getDecimalSeparator()


def setDecimalSeparator(separator: str) -> None:
    if not isinstance(separator, str):
        raise ValueError("Decimal separator must be a string")
    if not separator:
        raise ValueError("Decimal separator cannot be empty")
    if len(separator) > 1:
        raise ValueError("Decimal separator must be a single character")
    if separator.isspace():
        raise ValueError("Whitespace characters are not allowed as decimal separators")
    ferrodbc.setDecimalSeparator(separator)


# Module settings that act on the engine: `mssql_python.lowercase = True` sets ferrodbc's
# (read when a result set is described), as mssql-python's module __setattr__ does for its own.
_SHARED = ("lowercase", "native_uuid")


class _FaceModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name in _SHARED:
            return getattr(ferrodbc, name)
        raise AttributeError(f"module 'mssql_python' has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SHARED:
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be a boolean value")
            setattr(ferrodbc, name, value)
        else:
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _FaceModule

_SUBMODULES = (
    "connection",
    "connection_string_builder",
    "connection_string_parser",
    "constants",
    "cursor",
    "db_connection",
    "exceptions",
    "helpers",
    "logging",
    "parameter_helper",
    "params",
    "pooling",
    "row",
    "type",
)


def install() -> types.ModuleType:
    """``import mssql_python`` gives this package from now on (and its submodules under
    mssql-python's names). Returns the package; calling it again changes nothing."""
    me = sys.modules[__name__]
    sys.modules["mssql_python"] = me
    for sub in _SUBMODULES:
        sys.modules[f"mssql_python.{sub}"] = sys.modules[f"{__name__}.{sub}"]
    return me


__all__ = [
    "BINARY",
    "DATETIME",
    "NUMBER",
    "ROWID",
    "STRING",
    "AuthType",
    "Settings",
    "driver_logger",
    "get_settings",
    "logger",
    "Binary",
    "Connection",
    "ConnectionStringParseError",
    "ConstantsDDBC",
    "Cursor",
    "DataError",
    "DatabaseError",
    "Date",
    "DateFromTicks",
    "Error",
    "GetInfoConstants",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "PoolingManager",
    "ProgrammingError",
    "Row",
    "SQLTypes",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "Warning",
    "apilevel",
    "connect",
    "constants",
    "getDecimalSeparator",
    "get_info_constants",
    "install",
    "paramstyle",
    "pooling",
    "setDecimalSeparator",
    "setup_logging",
    "threadsafety",
]
__all__ += constants.__all__
