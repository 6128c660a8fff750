"""mssql-python's exception names: ferrodbc's own classes (so ``except mssql_python.Error``
catches what the engine raises, with no translation per error). Messages are ferrodbc's
(pyodbc's form: ``('SQLSTATE', '[SQLSTATE] message')``), not mssql-python's ``Driver Error: …;
DDBC Error: …`` (docs/mssql-python.md)."""

from __future__ import annotations

import builtins

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

#: mssql-python's common base of Warning and Error: Python's (ferrodbc's classes derive from it).
Exception = builtins.Exception

# SQLSTATE class (first two characters, or the whole state) -> the PEP 249 class, as the ODBC
# driver's states map in mssql-python and in ferrodbc's engine.
_BY_STATE = {
    "01": Warning,
    "07": ProgrammingError,
    "08": OperationalError,
    "21": ProgrammingError,
    "22": DataError,
    "23": IntegrityError,
    "24": ProgrammingError,
    "25": ProgrammingError,
    "28": ProgrammingError,
    "34": ProgrammingError,
    "3C": ProgrammingError,
    "3D": ProgrammingError,
    "3F": ProgrammingError,
    "40": OperationalError,
    "42": ProgrammingError,
    "44": ProgrammingError,
    "HY": DatabaseError,
    "HYT": OperationalError,
    "IM": InterfaceError,
}
_PREFIX = "[Microsoft]"


def sqlstate_to_exception(sqlstate: str, ddbc_error: str) -> builtins.Exception | None:
    """The exception instance for an ODBC SQLSTATE (mssql-python's helper)."""
    state = (sqlstate or "").upper()
    cls = _BY_STATE.get(state[:3]) or _BY_STATE.get(state[:2])
    if cls is None:
        return None
    return cls(state, f"[{state}] {ddbc_error}")


def truncate_error_message(error_message: str) -> str:
    """The message without the driver's ``[Microsoft][ODBC Driver 18 for SQL Server]`` prefix
    (mssql-python keeps the server's own part)."""
    if error_message.startswith(_PREFIX):
        parts = error_message.split("]")
        # [Microsoft][ODBC Driver 18 for SQL Server][SQL Server]text: keep "[SQL Server]text".
        if len(parts) > 2:
            return "]".join(parts[2:]).lstrip() if parts[2].startswith("[") else error_message
    return error_message


def raise_exception(sqlstate: str, ddbc_error: str) -> None:
    """Raise the exception for ``sqlstate`` (DatabaseError for an unknown one)."""
    raise sqlstate_to_exception(sqlstate, ddbc_error) or DatabaseError(sqlstate, ddbc_error)


class ConnectionStringParseError(Exception):
    """mssql-python's error for a connection string it cannot parse (its own parser; ferrodbc
    raises InterfaceError for a malformed string)."""


__all__ = [
    "ConnectionStringParseError",
    "Exception",
    "raise_exception",
    "sqlstate_to_exception",
    "truncate_error_message",
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
