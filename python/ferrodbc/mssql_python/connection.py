"""mssql-python's ``connect`` and ``Connection`` over ferrodbc's: a subclass of the native
connection whose cursors are the face's ``Cursor``; encodings are remembered so
``getencoding``/``getdecoding`` answer as mssql-python does."""

from __future__ import annotations

import codecs
from typing import Any

from .. import _native, driver_pick, entra
from .cursor import Cursor

SQL_CHAR = 1
SQL_WCHAR = -8
SQL_WMETADATA = -99


def _norm_encoding(encoding: str) -> str:
    """The encoding's name as given, lower-cased (as mssql-python reports it), once Python
    knows it."""
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError) as e:
        raise _native.ProgrammingError(f"Unsupported encoding: {encoding}") from e
    return encoding.strip().lower()


def _native_wmetadata() -> int:
    from .. import SQL_WMETADATA as native

    return int(native)


def _is_utf16(encoding: str) -> bool:
    # Byte order named: plain "utf-16" (a BOM) is refused for SQL_WCHAR, as in mssql-python.
    return codecs.lookup(encoding).name in ("utf-16-le", "utf-16-be")


_WCHAR_ONLY = "SQL_WCHAR only supports UTF-16 encodings (utf-16le, utf-16be), not {!r}"


class Connection(_native.Connection):
    """A ferrodbc connection with mssql-python's cursor, encoding and autocommit methods."""

    # PEP 249's optional extension: the exception classes on the connection.
    Warning = _native.Warning
    Error = _native.Error
    InterfaceError = _native.InterfaceError
    DatabaseError = _native.DatabaseError
    DataError = _native.DataError
    OperationalError = _native.OperationalError
    IntegrityError = _native.IntegrityError
    InternalError = _native.InternalError
    ProgrammingError = _native.ProgrammingError
    NotSupportedError = _native.NotSupportedError

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

    def getinfo(self, info_type: int) -> Any:  # type: ignore[override]
        """As ferrodbc's, with "Y"/"N" for the yes/no answers (mssql-python's form) and None for
        an info type the driver does not know."""
        if not isinstance(info_type, int) or isinstance(info_type, bool):
            raise _native.ProgrammingError(f"Invalid info_type: {info_type!r}")
        if self.closed:
            raise _native.InterfaceError("Connection is closed")
        try:
            value = super().getinfo(info_type)
        except (OverflowError, _native.DatabaseError):
            return None
        if isinstance(value, bool):
            return "Y" if value else "N"
        return value

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
        return Cursor(self)

    def execute(self, sql: str, *params: Any) -> Cursor:  # type: ignore[override]
        return self.cursor().execute(sql, *params)

    def batch_execute(
        self,
        statements: list[str],
        params: list[Any] | None = None,
        reuse_cursor: Cursor | None = None,
        auto_close: bool = False,
    ) -> tuple[list[Any], Cursor]:
        """Each statement with its parameters on one cursor: ``(results, cursor)`` where a
        result is the rows of a query or the row count of anything else."""
        cur = reuse_cursor or self.cursor()
        results: list[Any] = []
        for i, sql in enumerate(statements):
            p = params[i] if params and i < len(params) else None
            cur.execute(sql, p) if p is not None else cur.execute(sql)
            results.append(cur.fetchall() if cur.description else cur.rowcount)
        if auto_close:
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
            raise _native.ProgrammingError(f"Invalid ctype: {ctype}. Must be SQL_CHAR (1) or SQL_WCHAR (-8).")
        if ctype == SQL_WCHAR and not _is_utf16(enc):
            raise _native.ProgrammingError(_WCHAR_ONLY.format(encoding))
        self._engine(super().setencoding, enc, ctype)
        self.__dict__["_encoding"] = {"encoding": enc, "ctype": ctype}

    def getencoding(self) -> dict[str, Any]:
        self._check_open()
        return dict(self.__dict__.get("_encoding", {"encoding": "utf-16le", "ctype": SQL_WCHAR}))

    def setdecoding(self, sqltype: int, encoding: str | None = None, ctype: int | None = None) -> None:  # type: ignore[override]
        self._check_open()
        if sqltype not in (SQL_CHAR, SQL_WCHAR, SQL_WMETADATA):
            raise _native.ProgrammingError(
                f"Invalid sqltype: {sqltype}. Must be SQL_CHAR (1), SQL_WCHAR (-8) or SQL_WMETADATA (-99)."
            )
        enc = _norm_encoding(encoding or "utf-16le")
        if ctype is None:
            ctype = SQL_WCHAR if _is_utf16(enc) else SQL_CHAR
        if ctype not in (SQL_CHAR, SQL_WCHAR):
            raise _native.ProgrammingError(f"Invalid ctype: {ctype}. Must be SQL_CHAR (1) or SQL_WCHAR (-8).")
        if (sqltype in (SQL_WCHAR, SQL_WMETADATA) or ctype == SQL_WCHAR) and not _is_utf16(enc):
            raise _native.ProgrammingError(_WCHAR_ONLY.format(encoding))
        # mssql-python numbers metadata -99, pyodbc (and ferrodbc's engine) -888.
        engine_type = _native_wmetadata() if sqltype == SQL_WMETADATA else sqltype
        self._engine(super().setdecoding, engine_type, enc, ctype)
        self.__dict__.setdefault("_decoding", {})[sqltype] = {"encoding": enc, "ctype": ctype}

    def getdecoding(self, sqltype: int) -> dict[str, Any]:
        self._check_open()
        if sqltype not in (SQL_CHAR, SQL_WCHAR, SQL_WMETADATA):
            raise _native.ProgrammingError(
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
            raise _native.InterfaceError("Connection is closed")


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
        raise _native.InterfaceError("the connection string must be a str")
    if token_provider is not None:
        raise _native.NotSupportedError(
            "token_provider= is mssql-python's; use ferrodbc.connect(credential=...) or access_token="
        )
    parts = [connection_str.rstrip(";")] if connection_str else []
    aliases = {"user": "UID", "password": "PWD", "host": "Server", "server": "Server", "database": "Database"}
    parts += [
        f"{aliases.get(k.lower(), k)}={_native._quote_connection_value(str(v))}" for k, v in kwargs.items()
    ]
    full = driver_pick.with_driver(";".join(parts))
    login = entra.resolve(full, None, None, attrs_before)
    cnxn = Connection(
        login.connection_string,
        autocommit=autocommit,
        timeout=timeout or None,
        pooling=_pooling_enabled(),
        attrs_before=login.attrs_before,
        pool_identity=login.pool_identity,
    )
    if native_uuid is not None:
        cnxn.native_uuid = native_uuid
    return cnxn
