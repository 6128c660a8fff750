"""mssql-python's ``connect`` and ``Connection`` over ferrodbc's: a subclass of the native
connection whose cursors are the face's ``Cursor``; encodings are remembered so
``getencoding``/``getdecoding`` answer as mssql-python does."""

from __future__ import annotations

import codecs
from typing import Any

from .. import _native, driver_pick, entra
from . import exceptions as _exc
from .attributes import validate_attribute_value
from .connection_string_builder import _ConnectionStringBuilder
from .connection_string_parser import _ConnectionStringParser, sanitize_connection_string
from .converters import engine_converters
from .cursor import Cursor
from .exceptions import error_summary, translate, translating
from .logging import DEBUG, INFO
from .logging import logger as _log

SQL_CHAR = 1
SQL_WCHAR = -8
SQL_WMETADATA = -99
_TXN_ISOLATION = 108  # SQL_ATTR_TXN_ISOLATION
_READ_COMMITTED = 2  # SQL_TXN_READ_COMMITTED


def _norm_encoding(encoding: str) -> str:
    """The encoding's name as given, lower-cased (as mssql-python reports it), once Python
    knows it."""
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError) as e:
        raise _exc.ProgrammingError._of(f"Unsupported encoding: {encoding}") from e
    return encoding.strip().lower()


def _native_wmetadata() -> int:
    from .. import SQL_WMETADATA as native

    return int(native)


def _is_utf16(encoding: str) -> bool:
    # Byte order named: plain "utf-16" (a BOM) is refused for SQL_WCHAR, as in mssql-python.
    return codecs.lookup(encoding).name in ("utf-16-le", "utf-16-be")


def _check_wchar(encoding: str, ctype_context: bool) -> None:
    """SQL_WCHAR takes UTF-16 with a named byte order only (mssql-python's rule and words)."""
    if encoding == "utf-16":
        raise _exc.ProgrammingError(
            driver_error="UTF-16 with Byte Order Mark not supported for SQL_WCHAR",
            ddbc_error="Cannot use 'utf-16' encoding with SQL_WCHAR due to Byte Order Mark ambiguity. "
            "Use 'utf-16le' or 'utf-16be' instead for explicit byte order.",
        )
    if not _is_utf16(encoding):
        what = "SQL_WCHAR ctype" if ctype_context else "SQL_WCHAR"
        raise _exc.ProgrammingError(
            driver_error=f"{what} only supports UTF-16 encodings",
            ddbc_error=f"Cannot use encoding '{encoding}' with {what}. "
            "SQL_WCHAR requires UTF-16 encodings (utf-16le, utf-16be)",
        )


def _bad_ctype(ctype: object) -> Exception:
    return _exc.ProgrammingError(driver_error=f"Invalid ctype: {ctype}",
                                 ddbc_error=f"ctype must be SQL_CHAR ({SQL_CHAR}) or SQL_WCHAR ({SQL_WCHAR})")


class Connection(_native.Connection):
    """A ferrodbc connection with mssql-python's cursor, encoding and autocommit methods."""

    # PEP 249's optional extension: the exception classes on the connection.
    Warning = _exc.Warning
    Error = _exc.Error
    InterfaceError = _exc.InterfaceError
    DatabaseError = _exc.DatabaseError
    DataError = _exc.DataError
    OperationalError = _exc.OperationalError
    IntegrityError = _exc.IntegrityError
    InternalError = _exc.InternalError
    ProgrammingError = _exc.ProgrammingError
    NotSupportedError = _exc.NotSupportedError

    def __exit__(self, exc_type: object, exc: object, tb: object) -> bool:  # type: ignore[override]
        """mssql-python's: commit on success, roll back on an exception (without autocommit),
        and always close."""
        if self.closed:
            return False
        try:
            if not self.autocommit:
                if exc_type is None:
                    self.commit()
                else:
                    try:
                        self.rollback()
                    except _native.Error:
                        pass
        finally:
            try:
                self.close()
            except _native.Error:
                if exc_type is None:
                    raise
        return False

    def close(self) -> None:  # type: ignore[override]
        if self.__dict__.pop("_isolation_set", False) and not self.closed:
            # mssql-python gives a pooled connection back at READ COMMITTED (a driver's session
            # reset keeps the isolation level); only a connection whose level was set pays.
            # Closing rolls back anyway; the attribute cannot change inside a transaction.
            try:
                _native.Connection.rollback(self)
                _native.Connection.set_attr(self, _TXN_ISOLATION, _READ_COMMITTED)
            except _native.Error as e:
                _log.debug("isolation level not reset: %s", e)
        super().close()
        _log.info("Connection closed successfully.")

    def commit(self) -> None:  # type: ignore[override]
        super().commit()
        _log.info("Transaction committed successfully.")

    def rollback(self) -> None:  # type: ignore[override]
        super().rollback()
        _log.info("Transaction rolled back successfully.")

    def getinfo(self, info_type: int) -> Any:  # type: ignore[override]
        """As ferrodbc's, with "Y"/"N" for the yes/no answers (mssql-python's form) and None for
        an info type the driver does not know."""
        if not isinstance(info_type, int) or isinstance(info_type, bool):
            raise ValueError(f"info_type must be an integer, got {type(info_type).__name__}")
        if self.closed:
            raise _exc.InterfaceError._of("Connection is closed")
        try:
            value = super().getinfo(info_type)
        except (OverflowError, _native.DatabaseError):
            return None
        if isinstance(value, bool):
            return "Y" if value else "N"
        return value

    # Output converters: mssql-python's keys (SQL type codes and Python types) and values
    # (decoded), given to the engine per SQL type code (converters.py).
    def add_output_converter(self, sqltype: Any, func: Any) -> None:  # type: ignore[override]
        """``func(value)`` for each non-NULL value of the columns of ``sqltype`` (an ODBC SQL
        type code, or a Python type: every column whose values are of that type)."""
        if func is None:
            self.remove_output_converter(sqltype)
            return
        self.__dict__.setdefault("_output_converters", {})[sqltype] = func
        self._give_converters()

    def get_output_converter(self, sqltype: Any) -> Any:  # type: ignore[override]
        return self.__dict__.get("_output_converters", {}).get(sqltype)

    def remove_output_converter(self, sqltype: Any) -> None:  # type: ignore[override]
        if self.__dict__.get("_output_converters", {}).pop(sqltype, None) is not None:
            self._give_converters()

    def clear_output_converters(self) -> None:  # type: ignore[override]
        self.__dict__.pop("_output_converters", None)
        super().clear_output_converters()

    def _give_converters(self) -> None:
        super().clear_output_converters()
        for code, func in engine_converters(self.__dict__.get("_output_converters", {})).items():
            super().add_output_converter(code, func)

    def set_attr(self, attribute: int, value: Any) -> None:  # type: ignore[override]
        """mssql-python's checks first (the attributes it takes, before-only ones, value types
        and sizes: ProgrammingError), then the driver's."""
        if self.closed:
            raise _exc.InterfaceError(driver_error="Cannot set attribute on closed connection",
                                      ddbc_error="Connection is closed")
        ok, message, shown, _ = validate_attribute_value(attribute, value, is_connected=True)
        if not ok:
            raise _exc.ProgrammingError(driver_error=f"Invalid attribute or value: {message}",
                                        ddbc_error=message or "")
        super().set_attr(attribute, value)
        if attribute == _TXN_ISOLATION:
            self.__dict__["_isolation_set"] = value != _READ_COMMITTED
        _log.info("Connection attribute %s set successfully", shown)

    @property
    def timeout(self) -> int:  # type: ignore[override]
        return _native.Connection.timeout.__get__(self)

    @timeout.setter
    def timeout(self, value: int) -> None:
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError("Timeout must be an integer")
        if value < 0:
            raise ValueError("Timeout cannot be negative")
        _native.Connection.timeout.__set__(self, value)

    def cursor(self) -> Cursor:  # type: ignore[override]
        if self.closed:
            raise _exc.InterfaceError(driver_error="Cannot create cursor on closed connection",
                                      ddbc_error="Cannot create cursor on closed connection")
        return Cursor(self)

    def execute(self, sql: str, *params: Any) -> Cursor:  # type: ignore[override]
        """A new cursor with ``sql`` executed; closed again if that fails (mssql-python's)."""
        cur = self.cursor()
        try:
            return cur.execute(sql, *params)
        except BaseException:
            try:
                cur.close()
            except _native.Error:
                pass
            raise

    def batch_execute(
        self,
        statements: list[str],
        params: list[Any] | None = None,
        reuse_cursor: Cursor | None = None,
        auto_close: bool = False,
    ) -> tuple[list[Any], Cursor]:
        """Each statement with its parameters on one cursor: ``(results, cursor)`` where a
        result is the rows of a query or the row count of anything else. ``auto_close`` closes
        a cursor made here after the batch, and any cursor when a statement fails
        (mssql-python's rules)."""
        if not isinstance(statements, list):
            raise TypeError("statements must be a list of SQL statements")
        if params is None:
            params = [None] * len(statements)
        elif not isinstance(params, list):
            raise TypeError("params must be a list of parameter sets")
        elif len(params) != len(statements):
            raise ValueError("params list must have the same length as statements list")
        cur = self.cursor() if reuse_cursor is None else reuse_cursor
        results: list[Any] = []
        try:
            for sql, p in zip(statements, params):
                cur.execute(sql, p) if p is not None else cur.execute(sql)
                results.append(cur.fetchall() if cur.description is not None else cur.rowcount)
        except BaseException:
            if auto_close:
                try:
                    cur.close()
                except _native.Error:
                    pass
            raise
        if auto_close and reuse_cursor is None:
            cur.close()
        return results, cur

    def setautocommit(self, value: bool = False) -> None:
        self.autocommit = value

    # setencoding / setdecoding: the engine's, with the settings kept for the getters.
    def setencoding(self, encoding: str | None = None, ctype: int | None = None) -> None:  # type: ignore[override]
        self._check_open()
        enc = _norm_encoding(encoding or "utf-16le")
        if ctype is None:
            ctype = SQL_WCHAR if _is_utf16(enc) else SQL_CHAR
        if ctype not in (SQL_CHAR, SQL_WCHAR):
            raise _bad_ctype(ctype)
        if ctype == SQL_WCHAR:
            _check_wchar(enc, ctype_context=False)
        self._engine(super().setencoding, enc, ctype)
        self.__dict__["_encoding"] = {"encoding": enc, "ctype": ctype}

    def getencoding(self) -> dict[str, Any]:
        self._check_open()
        return dict(self.__dict__.get("_encoding", {"encoding": "utf-16le", "ctype": SQL_WCHAR}))

    def setdecoding(self, sqltype: int, encoding: str | None = None, ctype: int | None = None) -> None:  # type: ignore[override]
        self._check_open()
        if sqltype not in (SQL_CHAR, SQL_WCHAR, SQL_WMETADATA):
            raise _exc.ProgrammingError._of(
                f"Invalid sqltype: {sqltype}. Must be SQL_CHAR (1), SQL_WCHAR (-8) or SQL_WMETADATA (-99)."
            )
        enc = _norm_encoding(encoding or "utf-16le")
        if ctype is None:
            ctype = SQL_WCHAR if _is_utf16(enc) else SQL_CHAR
        if sqltype == SQL_WCHAR:
            _check_wchar(enc, ctype_context=False)
        if ctype not in (SQL_CHAR, SQL_WCHAR):
            raise _bad_ctype(ctype)
        if ctype == SQL_WCHAR:
            _check_wchar(enc, ctype_context=True)
        # mssql-python numbers metadata -99, pyodbc (and ferrodbc's engine) -888.
        engine_type = _native_wmetadata() if sqltype == SQL_WMETADATA else sqltype
        self._engine(super().setdecoding, engine_type, enc, ctype)
        self.__dict__.setdefault("_decoding", {})[sqltype] = {"encoding": enc, "ctype": ctype}

    def getdecoding(self, sqltype: int) -> dict[str, Any]:
        self._check_open()
        if sqltype not in (SQL_CHAR, SQL_WCHAR, SQL_WMETADATA):
            raise _exc.ProgrammingError._of(
                f"Invalid sqltype: {sqltype}. Must be SQL_CHAR (1), SQL_WCHAR (-8) or SQL_WMETADATA (-99)."
            )
        # mssql-python reads every text column as UTF-16 by default (SQL_CHAR too).
        default = {
            SQL_CHAR: {"encoding": "utf-16le", "ctype": SQL_WCHAR},
            SQL_WCHAR: {"encoding": "utf-16le", "ctype": SQL_WCHAR},
            SQL_WMETADATA: {"encoding": "utf-16le", "ctype": SQL_WCHAR},
        }[sqltype]
        return dict(self.__dict__.get("_decoding", {}).get(sqltype, default))

    @staticmethod
    def _engine(setter: Any, *args: Any) -> None:
        # ferrodbc exchanges text with the driver as UTF-16 and the driver converts from the
        # column's code page, so an 8-bit codec mssql-python would decode with gives the same
        # text here: it is remembered for the getters, the engine keeps UTF-16.
        try:
            setter(*args)
        except _native.NotSupportedError:
            pass

    def _check_open(self) -> None:
        if self.closed:
            raise _exc.InterfaceError._of("Connection is closed")


#: connect() keywords mssql-python programs pass that are not connection-string keywords.
_KWARG_ALIASES = {"user": "UID", "password": "PWD", "host": "Server"}


def _connection_string(connection_str: str, kwargs: dict[str, Any]) -> str:
    """mssql-python's rules (connection_string_parser): the string parsed and checked against
    the allow-list, keywords under the driver's names, keyword arguments over the string's;
    ``Driver=`` is accepted (the face lets a program name its driver)."""
    if "\x00" in connection_str or any(isinstance(v, str) and "\x00" in v for v in kwargs.values()):
        raise _exc.InterfaceError(driver_error="Connection string must not contain a NUL (\\x00) character.",
                                  ddbc_error="Embedded NUL in connection string.")
    parser = _ConnectionStringParser(validate_keywords=True)
    parser._reserved = ("APP",)
    parsed = parser._parse(connection_str)
    params = _ConnectionStringParser._normalize_params(parsed)
    if "driver" in parsed:
        params["Driver"] = parsed["driver"]
    for key, value in kwargs.items():
        name = _ConnectionStringParser.normalize_key(_KWARG_ALIASES.get(key.lower(), key))
        if name == "APP":
            raise ValueError(f"Connection parameter '{key}' is reserved and controlled by the driver. "
                             "It cannot be set by the user.")
        if name is None:
            _log.warning("Ignoring unknown connection parameter from kwargs: %s", key)
            continue
        params[name] = str(value)
    return _ConnectionStringBuilder(params).build()


@translating
def connect(
    connection_str: str = "",
    autocommit: bool = False,
    attrs_before: dict[int, Any] | None = None,
    timeout: int = 0,
    native_uuid: bool | None = None,
    token_provider: Any = None,
    **kwargs: Any,
) -> Connection:
    """mssql-python's ``connect``: no ``Driver`` needed (ferrodbc.driver_pick picks one);
    keyword arguments are connection string attributes; ``timeout`` is the login timeout
    (0: the driver's default)."""
    from . import _pooling_enabled

    if not isinstance(connection_str, str):
        raise _exc.InterfaceError._of("the connection string must be a str")
    if native_uuid is not None and not isinstance(native_uuid, bool):
        raise ValueError("native_uuid must be a boolean value or None")
    if token_provider is not None:
        raise _exc.NotSupportedError._of(
            "token_provider= is mssql-python's; use ferrodbc.connect(credential=...) or access_token="
        )
    full = driver_pick.with_driver(_connection_string(connection_str, kwargs))
    if _log._cached_level <= INFO:
        _log.info("Final connection string: %s", sanitize_connection_string(full))
    login = entra.resolve(full, None, None, attrs_before)
    try:
        cnxn = Connection(
            login.connection_string,
            autocommit=autocommit,
            timeout=timeout or None,
            pooling=_pooling_enabled(),
            attrs_before=login.attrs_before,
            pool_identity=login.pool_identity,
        )
    except _native.Error as e:
        # The class and codes only (exceptions.error_summary): a login error's text is the
        # server's, and the record must not depend on what it quotes.
        _log.error("Connection error: %s", error_summary(e))
        raise
    if _log._is_debug_enabled:
        _log_driver(cnxn)
    # The face's rows (equal to lists too) and exception classes, chosen once here: the engine
    # builds the rows and calls the hook on a fetch's error path only.
    cnxn.row_factory = _native._ListRow
    cnxn._error_hook = translate
    if native_uuid is not None:
        cnxn.native_uuid = native_uuid
    return cnxn


def _log_driver(cnxn: Connection) -> None:
    """The driver and server a new connection reached (mssql-python's C++ layer logs them)."""
    try:
        info = [_native.Connection.getinfo(cnxn, i) for i in (6, 7, 17, 18)]
    except _native.Error:
        return
    _log.ddbc(DEBUG, "Connected: driver %s %s, server %s %s", *info)


# The engine's methods that raise, per call.
for _name in ("close", "commit", "rollback", "getinfo", "set_attr", "add_output_converter",
              "setencoding", "setdecoding", "execute", "batch_execute", "cursor", "__exit__"):
    setattr(Connection, _name, translating(getattr(Connection, _name)))
