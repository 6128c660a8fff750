"""Type stubs for the Rust extension `ferrodbc._native` (kept in step with src/py/)."""

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeAlias, final

from typing_extensions import Self, disjoint_base

__all__ = [
    "Connection",
    "Cursor",
    "Row",
    "LazyRow",
    "Output",
    "RecordBatchStream",
    "counters",
    "reset_counters",
    "_decimal_fast_path",
    "clear_pool",
    "Warning",
    "Error",
    "InterfaceError",
    "DatabaseError",
    "DataError",
    "OperationalError",
    "IntegrityError",
    "InternalError",
    "ProgrammingError",
    "NotSupportedError",
    "__version__",
]
# pyodbc compatibility (src/py/mod.rs)
__all__ += ["drivers", "dataSources", "_henv", "_pool_status", "_quote_connection_value", "_redact_connection_string"]
__all__ += ["_ListRow"]

__version__: str

class Warning(Exception): ...

class Error(Exception):
    # Errors from the driver carry their own values; every other error (raised by ferrodbc
    # itself, or by user code) reads the class defaults: None, None, () and None.
    sqlstate: str | None
    """The SQLSTATE of the driver's first diagnostic record (None for errors not from the driver)."""
    native_error: int | None
    """The driver's native error number, e.g. SQL Server's message number (None if not from it)."""
    #: Every diagnostic record of the failed call, as (sqlstate, native_error, message).
    diagnostics: Sequence[tuple[str, int, str]]
    #: fetchall() only: the rows read before the error (fetchone/fetchmany hand them out).
    partial_rows: list[Row] | None
    """`fetchall()` only: the rows read before the error (`fetchone`/`fetchmany` hand them out)."""

class InterfaceError(Error): ...
class DatabaseError(Error): ...
class DataError(DatabaseError): ...
class OperationalError(DatabaseError): ...
class IntegrityError(DatabaseError): ...
class InternalError(DatabaseError): ...
class ProgrammingError(DatabaseError): ...
class NotSupportedError(DatabaseError): ...

_Description: TypeAlias = tuple[tuple[str, type, None, int | None, int | None, int, bool], ...]

@final
class Output:
    """An output (or input/output when `value` is given) parameter of a procedure call."""
    def __new__(
        cls,
        type: type,
        value: Any = None,
        *,
        size: int | None = None,
        precision: int = 38,
        scale: int | None = None,
        tz: bool = False,
    ) -> Self: ...
    @property
    def value(self) -> Any: ...

@final
class RecordBatchStream:
    """Arrow record batches of a result set (`Cursor.fetch_arrow_table`, `fetch_record_batch`):
    the Arrow PyCapsule stream interface, for `pyarrow.table(x)`, `polars.DataFrame(x)`, ..."""
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...
    def __arrow_c_schema__(self) -> object: ...
    @staticmethod
    def concat(parts: Sequence[RecordBatchStream]) -> RecordBatchStream:
        """One table of several `fetch_arrow_table()` tables' batches, in order (no copy)."""
    @property
    def num_rows(self) -> int | None: ...

@final
class Row:
    """A fetched row (not instantiable from Python): column values by index, slice or name."""
    def __len__(self) -> int: ...
    def __getitem__(self, key: int | slice | str, /) -> Any: ...
    # Columns are attributes (`row.name`): tp_getattro looks the name up among the columns
    # first, then among the members below.
    def __getattribute__(self, name: str, /) -> Any: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __contains__(self, key: object, /) -> bool: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[type[tuple[Any, ...]], tuple[tuple[Any, ...]]]: ...
    @property
    def _mapping(self) -> Mapping[str, Any]: ...
    @property
    def cursor_description(self) -> _Description: ...
    @property
    def _fields(self) -> tuple[str, ...]: ...
    def _tuple(self) -> tuple[Any, ...]: ...

    # pyodbc compatibility (src/py/row.rs)
    def __new__(cls, description: Sequence[Any], name_map: dict[str, int], *values: Any) -> Self: ...

#: The `mssql_python` face's rows (`ferrodbc.mssql_python.Row`): `Row`'s layout and methods, and
#: equal to the list of their values too (a sibling type of `Row`, not a subclass).
_ListRow: type[Row]

@final
class LazyRow:
    """A fetched row (`row_factory = LazyRow`) that decodes a cell only when it is read."""
    def __len__(self) -> int: ...
    def __getitem__(self, key: int | slice | str, /) -> Any: ...
    # Columns are attributes (`row.name`) after the members below (PyO3's `__getattr__` is
    # a tp_getattro slot: `__getattribute__` at runtime).
    def __getattribute__(self, name: str, /) -> Any: ...
    def raw(self, key: int | str) -> bytes | None: ...
    def is_null(self, key: int | str) -> bool: ...
    def _tuple(self) -> tuple[Any, ...]: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __contains__(self, value: object, /) -> bool: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __ne__(self, other: object, /) -> bool: ...
    def __lt__(self, other: object, /) -> bool: ...
    def __le__(self, other: object, /) -> bool: ...
    def __gt__(self, other: object, /) -> bool: ...
    def __ge__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[type[tuple[Any, ...]], tuple[tuple[Any, ...]]]: ...
    @property
    def _fields(self) -> tuple[str, ...]: ...
    @property
    def cursor_description(self) -> _Description: ...

#: `row_factory`: None (`Row`), `dict`, `tuple`, `LazyRow`, or `factory(description)` returning a
#: callable of each row's values (a tuple).
_RowFactory: TypeAlias = Callable[..., Any]

@disjoint_base
class Connection:
    """A connection (`ferrodbc.connect()` opens one); a context manager that commits or rolls back."""
    def __new__(
        cls,
        connection_string: str,
        autocommit: bool = False,
        timeout: int | None = None,
        pooling: bool = False,
        attrs_before: dict[int, Any] | None = None,
        pool_identity: str | None = None,
    ) -> Self: ...
    def cursor(self) -> Cursor:
        """A new cursor on this connection."""
    def execute(self, sql: str, *params: Any) -> Cursor: ...
    def commit(self) -> None:
        """Commit the open transaction."""
    def rollback(self) -> None:
        """Roll back the open transaction."""
    def close(self) -> None: ...
    autocommit: bool
    """Each statement commits by itself when true (PEP 249: off unless `connect(autocommit=True)`)."""
    timeout: int
    decode_errors: str
    native_uuid: bool
    row_factory: _RowFactory | None
    max_lob_bytes: int | None
    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
    @property
    def broken(self) -> bool: ...
    @property
    def dbms_name(self) -> str: ...
    @property
    def driver_name(self) -> str: ...
    def add_output_converter(self, sqltype: int, func: Callable[[bytes | None], Any] | None) -> None: ...
    def get_output_converter(self, sqltype: int) -> Callable[[bytes], Any] | None:
        """The output converter registered for `sqltype`, or None (pyodbc)."""
    def remove_output_converter(self, sqltype: int) -> None:
        """Remove the output converter of `sqltype` (pyodbc)."""
    def clear_output_converters(self) -> None:
        """Remove every output converter (pyodbc)."""
    def __enter__(self) -> Self: ...
    def __exit__(self, exc_type: object, exc: object, tb: object) -> bool: ...

    # pyodbc compatibility (src/py/connection.rs, src/py/compat.rs)
    def getinfo(self, info_type: int) -> str | bool | int: ...
    def set_attr(self, attr: int, value: int | str | bytes | bytearray) -> None: ...
    def setdecoding(self, sqltype: int, encoding: str | None = None, ctype: int | None = None) -> None: ...
    def setencoding(self, encoding: str | None = None, ctype: int | None = None) -> None: ...
    @property
    def searchescape(self) -> str: ...
    @property
    def hdbc(self) -> Any: ...
    decimal_mode: str
    fetch_decimal_as_string: bool
    readvar_initsize: int
    maxwrite: int

@disjoint_base
class Cursor:
    """A cursor (`Connection.cursor()`): executes statements and fetches their results."""
    def __new__(cls, connection: Connection) -> Self: ...
    def execute(self, sql: str, *params: Any) -> Cursor: ...
    def executemany(self, sql: str, seq_of_params: Sequence[Sequence[Any]]) -> Cursor: ...
    def callproc(self, procname: str, parameters: Sequence[Any] | None = None) -> Any: ...
    # Rows are `Row`s unless `row_factory` says otherwise.
    def fetchone(self) -> Any:
        """The next row, or None when the result set is used up."""
    def fetchmany(self, size: int | None = None) -> list[Any]:
        """The next `size` rows (default `arraysize`); fewer at the end of the result set."""
    def fetchall(self) -> list[Any]:
        """Every remaining row; on an error the rows read before it are on the exception's `partial_rows`."""
    def fetchval(self) -> Any: ...
    def fetch_record_batch(
        self,
        rows_per_batch: int | None = None,
        *,
        datetimeoffset: str = "utc",
        uuid: str = "uuid",
        timestamp_unit: str = "us",
        large_types: bool = False,
    ) -> RecordBatchStream: ...
    def fetch_arrow_table(
        self,
        *,
        datetimeoffset: str = "utc",
        uuid: str = "uuid",
        timestamp_unit: str = "us",
        large_types: bool = False,
    ) -> RecordBatchStream: ...
    # mssql-python 1.16's bulk copy, on this connection (bcp API, or parameter arrays).
    def bulkcopy(
        self,
        table_name: str,
        data: Iterable[Sequence[Any]],
        batch_size: int | None = None,
        timeout: int | None = None,
        column_mappings: Sequence[str] | Sequence[tuple[int, str]] | None = None,
        keep_identity: bool = False,
        check_constraints: bool = False,
        table_lock: bool = False,
        keep_nulls: bool = False,
        fire_triggers: bool = False,
        use_internal_transaction: bool = False,
        *,
        progress: Callable[[int], object] | None = None,
        notify_after: int = 10000,
    ) -> dict[str, Any]: ...
    # `source`: any object with __arrow_c_stream__ or __arrow_c_array__.
    def bulkcopy_arrow(
        self,
        table_name: str,
        source: Any,
        batch_size: int | None = None,
        timeout: int | None = None,
        column_mappings: Sequence[str] | Sequence[tuple[int, str]] | None = None,
        keep_identity: bool = False,
        check_constraints: bool = False,
        table_lock: bool = False,
        keep_nulls: bool = False,
        fire_triggers: bool = False,
        use_internal_transaction: bool = False,
        *,
        progress: Callable[[int], object] | None = None,
        notify_after: int = 10000,
    ) -> dict[str, Any]: ...
    def nextset(self) -> bool: ...
    def setinputsizes(self, sizes: Sequence[Any] | None) -> None: ...
    def setoutputsize(self, size: int, column: int | None = None) -> None:
        """Does nothing, as PEP 249 allows: (MAX) columns are streamed whole."""
    def cancel(self) -> None: ...
    def close(self) -> None: ...
    def __iter__(self) -> Cursor: ...
    def __next__(self) -> Any: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, exc_type: object, exc: object, tb: object) -> bool: ...
    @property
    def description(self) -> _Description | None: ...
    @property
    def rowcount(self) -> int: ...
    @property
    def rownumber(self) -> int | None: ...
    @property
    def messages(self) -> list[tuple[str, str]]: ...
    @property
    def connection(self) -> Connection:
        """The connection this cursor belongs to."""
    @property
    def closed(self) -> bool:
        """Whether the cursor (or its connection) is closed."""
    arraysize: int
    """`fetchmany()`'s default row count (PEP 249; 1 unless set)."""
    row_factory: _RowFactory | None

    # pyodbc compatibility (src/py/cursor.rs, src/py/catalog.rs)
    fast_executemany: bool
    """pyodbc's switch: `executemany` always sends parameter arrays; True keeps pyodbc's numeric errors."""
    noscan: bool
    rows_as_dicts: bool
    @property
    def hstmt(self) -> Any: ...
    def skip(self, count: int) -> None: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def tables(
        self, table: str | None = None, catalog: str | None = None, schema: str | None = None, tableType: str | None = None
    ) -> Cursor: ...
    def columns(
        self, table: str | None = None, catalog: str | None = None, schema: str | None = None, column: str | None = None
    ) -> Cursor: ...
    def statistics(
        self, table: str, catalog: str | None = None, schema: str | None = None, unique: bool = False, quick: bool = True
    ) -> Cursor: ...
    def rowIdColumns(
        self, table: str, catalog: str | None = None, schema: str | None = None, nullable: bool = True
    ) -> Cursor: ...
    def rowVerColumns(
        self, table: str, catalog: str | None = None, schema: str | None = None, nullable: bool = True
    ) -> Cursor: ...
    def primaryKeys(self, table: str, catalog: str | None = None, schema: str | None = None) -> Cursor: ...
    def foreignKeys(
        self,
        table: str | None = None,
        catalog: str | None = None,
        schema: str | None = None,
        foreignTable: str | None = None,
        foreignCatalog: str | None = None,
        foreignSchema: str | None = None,
    ) -> Cursor: ...
    def procedures(self, procedure: str | None = None, catalog: str | None = None, schema: str | None = None) -> Cursor: ...
    def procedureColumns(
        self, procedure: str | None = None, catalog: str | None = None, schema: str | None = None
    ) -> Cursor: ...
    def tablePrivileges(self, table: str | None = None, catalog: str | None = None, schema: str | None = None) -> Cursor: ...
    def getTypeInfo(self, sqlType: int | None = None) -> Cursor: ...

def counters() -> dict[str, int]: ...
def reset_counters() -> None: ...
def _decimal_fast_path() -> bool: ...
def clear_pool() -> None: ...
def _pool_status() -> list[tuple[str, int]]: ...
def _quote_connection_value(value: str) -> str: ...
def _redact_connection_string(connection_string: str) -> str: ...

# pyodbc compatibility (src/py/mod.rs)
def drivers() -> list[str]: ...
def dataSources() -> dict[str, str]: ...
def _henv() -> Any: ...
