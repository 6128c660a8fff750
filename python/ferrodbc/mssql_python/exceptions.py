"""mssql-python's exception classes over ferrodbc's: each is a subclass of ferrodbc's class of the
same name (so ``except ferrodbc.Error`` still catches it) with mssql-python's constructor
``(driver_error, ddbc_error)``, its attributes and its message, ``Driver Error: ...; DDBC Error:
...``. The engine's errors become these at the face's boundary: the face's Python methods
translate them, and a face connection's ``_error_hook`` (read by the engine on the error path of
its fetches) does the same, so nothing is added per fetched row.

``driver_error`` is the ODBC description of the SQLSTATE (ODBC's SQLSTATE table), ``ddbc_error``
the driver's message without the driver's name (``[Microsoft][SQL Server]Invalid object name
't'.``); ``sqlstate``, ``native_error`` and ``diagnostics`` are kept from ferrodbc's error."""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .. import _native
from .logging import logger


class Exception(builtins.Exception):
    """mssql-python's common base of ``Warning`` and ``Error``."""

    def __init__(self, driver_error: str, ddbc_error: str) -> None:
        self.driver_error = driver_error
        self.ddbc_error = truncate_error_message(ddbc_error)
        if self.ddbc_error:
            self.message = f"Driver Error: {self.driver_error}; DDBC Error: {self.ddbc_error}"
        else:
            self.message = f"Driver Error: {self.driver_error}"
        builtins.Exception.__init__(self, self.message)

    @classmethod
    def _of(cls, message: str) -> Any:
        """The face's own errors (bad arguments, a closed connection): the message is the
        driver error, as mssql-python's own are."""
        return cls(driver_error=message, ddbc_error="")

    def __reduce__(self) -> Any:
        return (_rebuild, (type(self), self.driver_error, self.ddbc_error, dict(self.__dict__)))


def _rebuild(cls: type, driver_error: str, ddbc_error: str, state: dict[str, Any]) -> Any:
    obj = cls.__new__(cls)
    obj.__dict__.update(state)
    builtins.Exception.__init__(obj, state.get("message", f"Driver Error: {driver_error}"))
    return obj


class Warning(Exception, _native.Warning):
    """Important warnings (data truncated on insert, ...)."""


class Error(Exception, _native.Error):
    """The base of every error."""


class InterfaceError(Error, _native.InterfaceError):
    """Errors of the interface rather than the database."""


class DatabaseError(Error, _native.DatabaseError):
    """Errors of the database."""


class DataError(DatabaseError, _native.DataError):
    """Errors of the processed data (division by zero, value out of range, ...)."""


class OperationalError(DatabaseError, _native.OperationalError):
    """Errors of the database's operation (connection lost, timeout, ...)."""


class IntegrityError(DatabaseError, _native.IntegrityError):
    """Relational integrity violated (a foreign key check failed, ...)."""


class InternalError(DatabaseError, _native.InternalError):
    """Internal errors of the database."""


class ProgrammingError(DatabaseError, _native.ProgrammingError):
    """Programming errors (table not found, syntax error, wrong number of parameters, ...)."""


class NotSupportedError(DatabaseError, _native.NotSupportedError):
    """A method or API the database does not support."""


class ConnectionStringParseError(builtins.Exception):
    """A connection string the face's parser refuses: every problem found, listed."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__("Connection string parsing failed:\n  " + "\n  ".join(errors))

    def __reduce__(self) -> Any:
        return (type(self), (self.errors,))


# SQLSTATE -> (mssql-python's class, the ODBC description of the state).
_STATES: dict[str, tuple[type[Exception], str]] = {
    "01000": (Warning, "General warning"),
    "01001": (OperationalError, "Cursor operation conflict"),
    "01002": (OperationalError, "Disconnect error"),
    "01003": (DataError, "NULL value eliminated in set function"),
    "01004": (DataError, "String data, right-truncated"),
    "01006": (OperationalError, "Privilege not revoked"),
    "01007": (OperationalError, "Privilege not granted"),
    "01S00": (ProgrammingError, "Invalid connection string attribute"),
    "01S01": (DataError, "Error in row"),
    "01S02": (Warning, "Option value changed"),
    "01S06": (OperationalError, "Attempt to fetch before the result set returned the first rowset"),
    "01S07": (DataError, "Fractional truncation"),
    "01S08": (OperationalError, "Error saving File DSN"),
    "01S09": (ProgrammingError, "Invalid keyword"),
    "07001": (ProgrammingError, "Wrong number of parameters"),
    "07002": (ProgrammingError, "COUNT field incorrect"),
    "07005": (ProgrammingError, "Prepared statement not a cursor-specification"),
    "07006": (ProgrammingError, "Restricted data type attribute violation"),
    "07009": (ProgrammingError, "Invalid descriptor index"),
    "07S01": (ProgrammingError, "Invalid use of default parameter"),
    "08001": (OperationalError, "Client unable to establish connection"),
    "08002": (OperationalError, "Connection name in use"),
    "08003": (OperationalError, "Connection not open"),
    "08004": (OperationalError, "Server rejected the connection"),
    "08007": (OperationalError, "Connection failure during transaction"),
    "08S01": (OperationalError, "Communication link failure"),
    "21S01": (ProgrammingError, "Insert value list does not match column list"),
    "21S02": (ProgrammingError, "Degree of derived table does not match column list"),
    "22001": (DataError, "String data, right-truncated"),
    "22002": (DataError, "Indicator variable required but not supplied"),
    "22003": (DataError, "Numeric value out of range"),
    "22007": (DataError, "Invalid datetime format"),
    "22008": (DataError, "Datetime field overflow"),
    "22012": (DataError, "Division by zero"),
    "22015": (DataError, "Interval field overflow"),
    "22018": (DataError, "Invalid character value for cast specification"),
    "22019": (ProgrammingError, "Invalid escape character"),
    "22025": (ProgrammingError, "Invalid escape sequence"),
    "22026": (DataError, "String data, length mismatch"),
    "23000": (IntegrityError, "Integrity constraint violation"),
    "24000": (ProgrammingError, "Invalid cursor state"),
    "25000": (OperationalError, "Invalid transaction state"),
    "25S01": (OperationalError, "Transaction state"),
    "25S02": (OperationalError, "Transaction is still active"),
    "25S03": (OperationalError, "Transaction is rolled back"),
    "28000": (OperationalError, "Invalid authorization specification"),
    "34000": (ProgrammingError, "Invalid cursor name"),
    "3C000": (ProgrammingError, "Duplicate cursor name"),
    "3D000": (ProgrammingError, "Invalid catalog name"),
    "3F000": (ProgrammingError, "Invalid schema name"),
    "40001": (OperationalError, "Serialization failure"),
    "40002": (IntegrityError, "Integrity constraint violation"),
    "40003": (OperationalError, "Statement completion unknown"),
    "42000": (ProgrammingError, "Syntax error or access violation"),
    "42S01": (ProgrammingError, "Base table or view already exists"),
    "42S02": (ProgrammingError, "Base table or view not found"),
    "42S11": (ProgrammingError, "Index already exists"),
    "42S12": (ProgrammingError, "Index not found"),
    "42S21": (ProgrammingError, "Column already exists"),
    "42S22": (ProgrammingError, "Column not found"),
    "44000": (IntegrityError, "WITH CHECK OPTION violation"),
    "HY000": (OperationalError, "General error"),
    "HY001": (OperationalError, "Memory allocation error"),
    "HY003": (ProgrammingError, "Invalid application buffer type"),
    "HY004": (ProgrammingError, "Invalid SQL data type"),
    "HY007": (ProgrammingError, "Associated statement is not prepared"),
    "HY008": (OperationalError, "Operation canceled"),
    "HY009": (ProgrammingError, "Invalid use of null pointer"),
    "HY010": (ProgrammingError, "Function sequence error"),
    "HY011": (ProgrammingError, "Attribute cannot be set now"),
    "HY012": (ProgrammingError, "Invalid transaction operation code"),
    "HY013": (OperationalError, "Memory management error"),
    "HY014": (OperationalError, "Limit on the number of handles exceeded"),
    "HY015": (ProgrammingError, "No cursor name available"),
    "HY016": (ProgrammingError, "Cannot modify an implementation row descriptor"),
    "HY017": (ProgrammingError, "Invalid use of an automatically allocated descriptor handle"),
    "HY018": (OperationalError, "Server declined cancel request"),
    "HY019": (DataError, "Non-character and non-binary data sent in pieces"),
    "HY020": (DataError, "Attempt to concatenate a null value"),
    "HY021": (ProgrammingError, "Inconsistent descriptor information"),
    "HY024": (ProgrammingError, "Invalid attribute value"),
    "HY090": (ProgrammingError, "Invalid string or buffer length"),
    "HY091": (ProgrammingError, "Invalid descriptor field identifier"),
    "HY092": (ProgrammingError, "Invalid attribute/option identifier"),
    "HY095": (ProgrammingError, "Function type out of range"),
    "HY096": (ProgrammingError, "Invalid information type"),
    "HY097": (ProgrammingError, "Column type out of range"),
    "HY098": (ProgrammingError, "Scope type out of range"),
    "HY099": (ProgrammingError, "Nullable type out of range"),
    "HY100": (ProgrammingError, "Uniqueness option type out of range"),
    "HY101": (ProgrammingError, "Accuracy option type out of range"),
    "HY103": (ProgrammingError, "Invalid retrieval code"),
    "HY104": (ProgrammingError, "Invalid precision or scale value"),
    "HY105": (ProgrammingError, "Invalid parameter type"),
    "HY106": (ProgrammingError, "Fetch type out of range"),
    "HY107": (ProgrammingError, "Row value out of range"),
    "HY109": (ProgrammingError, "Invalid cursor position"),
    "HY110": (ProgrammingError, "Invalid driver completion"),
    "HY111": (ProgrammingError, "Invalid bookmark value"),
    "HYC00": (NotSupportedError, "Optional feature not implemented"),
    "HYT00": (OperationalError, "Timeout expired"),
    "HYT01": (OperationalError, "Connection timeout expired"),
    "IM001": (NotSupportedError, "Driver does not support this function"),
    "IM002": (OperationalError, "Data source name not found and no default driver specified"),
    "IM003": (OperationalError, "Specified driver could not be loaded"),
    "IM004": (OperationalError, "Driver's SQLAllocHandle on SQL_HANDLE_ENV failed"),
    "IM005": (OperationalError, "Driver's SQLAllocHandle on SQL_HANDLE_DBC failed"),
    "IM006": (OperationalError, "Driver's SQLSetConnectAttr failed"),
    "IM007": (OperationalError, "No data source or driver specified; dialog prohibited"),
    "IM008": (OperationalError, "Dialog failed"),
    "IM009": (OperationalError, "Unable to load translation DLL"),
    "IM010": (OperationalError, "Data source name too long"),
    "IM011": (OperationalError, "Driver name too long"),
    "IM012": (OperationalError, "DRIVER keyword syntax error"),
    "IM013": (OperationalError, "Trace file error"),
    "IM014": (OperationalError, "Invalid name of File DSN"),
    "IM015": (OperationalError, "Corrupt file data source"),
}

# ferrodbc's class -> the face's, for errors of a state outside the table (or none).
_TWINS: dict[type, type[Exception]] = {
    _native.Warning: Warning,
    _native.Error: Error,
    _native.InterfaceError: InterfaceError,
    _native.DatabaseError: DatabaseError,
    _native.DataError: DataError,
    _native.OperationalError: OperationalError,
    _native.IntegrityError: IntegrityError,
    _native.InternalError: InternalError,
    _native.ProgrammingError: ProgrammingError,
    _native.NotSupportedError: NotSupportedError,
}


# ferrodbc's own messages -> mssql-python's class and words for the same condition.
_OWN: dict[str, tuple[type[Exception], str]] = {
    "Attempt to use a closed connection.": (InterfaceError, "Connection is closed"),
    "Attempt to use a closed cursor.": (
        ProgrammingError, "Operation cannot be performed: The cursor is closed."),
}


def sqlstate_to_exception(sqlstate: str, ddbc_error: str) -> Exception | None:
    """The exception for an ODBC SQLSTATE (None for a state outside ODBC's table)."""
    known = _STATES.get(sqlstate)
    return None if known is None else known[0](driver_error=known[1], ddbc_error=ddbc_error)


def truncate_error_message(error_message: str) -> str:
    """The driver's message without the driver's own name: ``[Microsoft][ODBC Driver 18 for SQL
    Server][SQL Server]text`` gives ``[Microsoft][SQL Server]text`` (the second bracketed part
    is dropped); a message that does not start with ``[Microsoft]`` is kept."""
    if not error_message.startswith("[Microsoft]"):
        return error_message
    first, _, rest = error_message.partition("]")
    if "]" not in rest:
        return error_message
    return f"{first}]{rest.partition(']')[2]}"


def raise_exception(sqlstate: str, ddbc_error: str) -> None:
    """Raise the exception for ``sqlstate`` (DatabaseError for one outside ODBC's table)."""
    exc = sqlstate_to_exception(sqlstate, ddbc_error)
    if exc is not None:
        raise exc
    raise DatabaseError(
        driver_error=f"An error occurred with SQLSTATE code: {sqlstate}",
        ddbc_error=f"{ddbc_error}" if ddbc_error else "Unknown DDBC error",
    )


def translate(exc: BaseException) -> BaseException:
    """The face's exception for one of ferrodbc's (anything else is returned as it is)."""
    if isinstance(exc, Exception) or not isinstance(exc, (_native.Error, _native.Warning)):
        return exc
    state = getattr(exc, "sqlstate", None)
    if state:
        cls, description = _STATES.get(state, (_TWINS.get(type(exc), Error), None))
        records = getattr(exc, "diagnostics", ()) or ()
        text = records[0][2] if records else str(exc.args[-1]) if exc.args else ""
        new = cls(driver_error=description or f"An error occurred with SQLSTATE code: {state}",
                  ddbc_error=text)
    else:
        # ferrodbc's own errors (a closed cursor, a bad argument): its message is the driver
        # error, as mssql-python's own are.
        text = str(exc.args[0]) if exc.args else ""
        cls = _TWINS.get(type(exc), Error)
        if text in _OWN:
            cls, text = _OWN[text]
        new = cls(driver_error=text, ddbc_error="")
    for name in ("sqlstate", "native_error", "diagnostics", "partial_rows"):
        if name in exc.__dict__:
            new.__dict__[name] = exc.__dict__[name]
    new.__cause__ = exc.__cause__
    # mssql-python logs each error it raises. The record gets the class and the server's codes,
    # not the message: a server's message can quote data (2627's duplicate key, 2628's
    # truncated value), and so can ferrodbc's for a bad cell.
    logger.error("Raising exception: %s", error_summary(new))
    return new


def error_summary(exc: BaseException) -> str:
    """An exception for a log record: its class, SQLSTATE and native error number, never its
    message (which can quote the data)."""
    state = getattr(exc, "sqlstate", None)
    native = getattr(exc, "native_error", None)
    codes = ", ".join(f"{k} {v}" for k, v in (("SQLSTATE", state), ("native error", native)) if v)
    return f"{type(exc).__name__} ({codes})" if codes else type(exc).__name__


F = TypeVar("F", bound=Callable[..., Any])


def translating(func: F) -> F:
    """``func`` raising the face's exceptions instead of ferrodbc's (per call, not per row)."""

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (_native.Error, _native.Warning) as e:
            new = translate(e)
            if new is e:
                raise
            raise new.with_traceback(e.__traceback__) from None

    return call  # type: ignore[return-value]


__all__ = [
    "ConnectionStringParseError",
    "DataError",
    "DatabaseError",
    "Error",
    "Exception",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "Warning",
    "raise_exception",
    "sqlstate_to_exception",
    "translate",
    "truncate_error_message",
]
