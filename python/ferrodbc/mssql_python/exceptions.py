"""mssql-python's exception names: ferrodbc's own classes (so ``except mssql_python.Error``
catches what the engine raises, with no translation per error). Messages are ferrodbc's
(pyodbc's form: ``('SQLSTATE', '[SQLSTATE] message')``), not mssql-python's ``Driver Error: …;
DDBC Error: …`` (docs/mssql-python.md)."""

from __future__ import annotations

from .._native import (
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


class ConnectionStringParseError(Exception):
    """mssql-python's error for a connection string it cannot parse (its own parser; ferrodbc
    raises InterfaceError for a malformed string)."""


__all__ = [
    "ConnectionStringParseError",
    "DataError",
    "DatabaseError",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "Warning",
]
