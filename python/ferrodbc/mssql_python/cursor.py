"""mssql-python's ``Cursor`` over ferrodbc's: a subclass of the native cursor, so fetching
(fetchone/fetchmany/fetchall, iteration, Arrow) is the engine's own call with no Python layer
per row. What differs from ``ferrodbc.Cursor`` is done once per call: parameters
(``%(name)s`` with a dict, ``?`` with a sequence or separate values), ``execute`` keywords,
``messages`` cleared per execute, and the Arrow names ``arrow()``, ``arrow_batch()`` and
``arrow_reader()``."""

from __future__ import annotations

import decimal
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .. import _native
from . import arrow as _arrow
from . import exceptions as _exc
from . import inputsizes
from .exceptions import translating
from .logging import DEBUG
from .logging import logger as _log
from .params import check, convert, unwrap

# The ranges of money and smallmoney (mssql-python's names).
SMALLMONEY_MIN = decimal.Decimal("-214748.3648")
SMALLMONEY_MAX = decimal.Decimal("214748.3647")
MONEY_MIN = decimal.Decimal("-922337203685477.5808")
MONEY_MAX = decimal.Decimal("922337203685477.5807")


class Cursor(_native.Cursor):
    """A cursor with mssql-python's parameter styles, method names and exception classes."""

    @translating
    def execute(  # type: ignore[override]
        self,
        operation: str,
        *parameters: Any,
        use_prepare: bool = True,
        reset_cursor: bool = True,
    ) -> Cursor:
        # use_prepare / reset_cursor: the engine prepares and reuses statements itself.
        sql, params = convert(operation, unwrap(parameters) if parameters else None)
        if _log._cached_level <= DEBUG:
            # Not the text itself: a statement may carry a secret (CREATE LOGIN ... PASSWORD).
            _log.debug("execute: Starting - operation_length=%d, param_count=%d, use_prepare=%s",
                       len(operation), len(params or ()), use_prepare)
        state = self.__dict__
        if state:  # what the face keeps per result set, and sizes for this execute
            state.pop("_messages", None)
            sizes = state.get("_inputsizes")
            if sizes is not None:
                return self._execute_sized(sizes, sql, params)
        if params:
            check(params)
            self._bind_execute(sql, params)
        else:
            super().execute(sql)
        return self

    def _bind_execute(self, sql: str, params: Any) -> None:
        try:
            super().execute(sql, params)
        except _native.ProgrammingError as e:
            # A value of no SQL type: mssql-python's TypeError (the error path only).
            m = _UNSUPPORTED.match(str(e.args[0]) if e.args else "")
            if m is None:
                raise
            raise TypeError(f"Unsupported parameter type: {m.group(1)}: The driver cannot "
                            "safely convert it to a SQL type.") from None

    def _execute_sized(self, sizes: list[Any], sql: str, params: Any) -> Cursor:
        # mssql-python warns when the counts differ and forgets the sizes after the execute.
        try:
            if params:
                inputsizes.warn_count(sizes, len(params))
                check(params)
                self._bind_execute(sql, params)
            else:
                super().execute(sql)
        finally:
            self.setinputsizes(None)
        return self

    def setinputsizes(self, sizes: Any) -> None:  # type: ignore[override]
        """mssql-python's: each entry an SQL type or ``(sql_type, size[, digits])``, checked
        now; they apply to the next execute only."""
        parsed = inputsizes.parse(sizes)
        super().setinputsizes(parsed)
        self.__dict__["_inputsizes"] = parsed or None

    @translating
    def executemany(  # type: ignore[override]
        self, operation: str, seq_of_parameters: Iterable[Any]
    ) -> None:
        rows = list(seq_of_parameters)
        self._fresh()
        sizes = self.__dict__.get("_inputsizes")
        try:
            if rows and isinstance(rows[0], Mapping):
                for r in rows:
                    if not isinstance(r, Mapping):
                        raise TypeError("Mixed parameter types in executemany: first row is dict, "
                                        f"but row has {type(r).__name__}")
                converted = [convert(operation, r) for r in rows]
                operation = converted[0][0]
                rows = [p or () for _, p in converted]
            if sizes is not None and rows:
                inputsizes.warn_count(sizes, len(rows[0]))
                rows = inputsizes.decimal_rows(sizes, rows)
            if _log._cached_level <= DEBUG and rows:
                # The batch's shape only: values may be personal data (mssql-python's rule).
                _log.debug("Executing batch query with %d parameter sets (%d columns per row)",
                           len(rows), len(rows[0]))
            super().executemany(operation, rows)
        finally:
            if sizes is not None:
                self.setinputsizes(None)

    def bulkcopy(self, table_name: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        # mssql-python raises ValueError for an empty name; ferrodbc's cursor a ProgrammingError.
        if table_name == "":
            raise ValueError("table_name must be a non-empty string")
        return super().bulkcopy(table_name, *args, **kwargs)

    def bulkcopy_arrow(  # type: ignore[override]
        self,
        table_name: Any,
        source: Any,
        batch_size: int | None = None,
        timeout: int | None = None,
        column_mappings: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        """As ferrodbc's, with mssql-python's other source and mapping forms: an iterable of
        RecordBatches, and ``(source column name, destination column)`` pairs."""
        source, column_mappings = _arrow.bulk_source(source, column_mappings)
        _arrow.refuse_aware_into_naive(self, table_name, source, column_mappings)
        return super().bulkcopy_arrow(table_name, source, batch_size, timeout, column_mappings,
                                      *args, **kwargs)

    def _fresh(self) -> None:
        self.__dict__.pop("_messages", None)

    def nextset(self) -> bool | None:  # type: ignore[override]
        self._fresh()
        return super().nextset()

    @property
    def messages(self) -> list[tuple[str, str]]:
        """The informational messages of the last execute or nextset: one list, which a
        program may clear (``del cursor.messages[:]``) or replace, as in mssql-python."""
        kept = self.__dict__.get("_messages")
        if kept is None:
            kept = self.__dict__["_messages"] = _native.Cursor.messages.__get__(self)
        return kept

    @messages.setter
    def messages(self, value: list[tuple[str, str]]) -> None:
        self.__dict__["_messages"] = value

    def scroll(self, value: int, mode: str = "relative") -> None:
        """mssql-python's forward-only scroll: ``relative`` by ``value`` >= 0 rows (IndexError
        past the end); ``absolute`` and backward moves are NotSupportedError."""
        self._fresh()
        self.__dict__["_messages"] = []
        if mode not in ("relative", "absolute"):
            raise _exc.ProgrammingError("Invalid scroll mode",
                                        f"mode must be 'relative' or 'absolute', got '{mode}'")
        if self.closed:
            raise _exc.ProgrammingError._of("Cursor is closed")
        if self.description is None:
            raise _exc.ProgrammingError("No active result set",
                                        "Cannot scroll: no result set available. Execute a query first.")
        if not isinstance(value, int):
            raise _exc.ProgrammingError("Invalid scroll value type",
                                        f"scroll value must be an integer, got {type(value).__name__}")
        if mode == "relative" and value < 0:
            raise _exc.NotSupportedError("Backward scrolling not supported",
                                         f"Cannot move backward by {value} rows on a forward-only cursor")
        if mode == "absolute":
            raise _exc.NotSupportedError("Absolute positioning not supported",
                                         "Forward-only cursors do not support absolute positioning")
        if value == 0:
            return
        before = _native.Cursor.rownumber.__get__(self) or 0
        _skip(self, value)
        if (_native.Cursor.rownumber.__get__(self) or 0) - before < value:
            raise IndexError("Cannot scroll to specified position: end of result set reached")

    def skip(self, count: int) -> None:  # type: ignore[override]
        """Skip ``count`` rows (mssql-python's: ``scroll(count, "relative")``)."""
        self.scroll(count, "relative")

    def foreignKeys(self, table: str | None = None, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if table is None and (args[2] if len(args) > 2 else kwargs.get("foreignTable")) is None:
            raise _exc.ProgrammingError("Either table or foreignTable must be specified", "HY000")
        return super().foreignKeys(table, *args, **kwargs)

    @property
    def rownumber(self) -> int:  # type: ignore[override]
        """The 0-based index of the last row fetched from the result set, -1 before the first
        (mssql-python's; ferrodbc's own counts the rows fetched). Logs a warning, as
        mssql-python does: it is a DB-API extension."""
        _log.warning("DB-API extension cursor.rownumber used")
        try:
            served = _native.Cursor.rownumber.__get__(self)
        except _native.Error:  # closed
            return -1
        return -1 if served is None else served - 1

    @property
    def rowcount(self) -> int:  # type: ignore[override]
        """For a result set, the rows fetched from it so far (-1 before a row is fetched);
        otherwise the rows the statement affected (mssql-python's)."""
        try:
            served = _native.Cursor.rownumber.__get__(self)
        except _native.Error:  # closed: the engine's -1
            served = None
        if served:
            return served
        if served == 0 and self.description is not None:
            return -1  # a result set nothing was fetched from yet
        return _native.Cursor.rowcount.__get__(self)

    # mssql-python's Arrow names (ferrodbc's engine builds the batches, .arrow converts them
    # to mssql-python's Arrow types once per batch: nothing per row in Python).
    def arrow_reader(self, batch_size: int = 8192) -> Any:
        """A RecordBatchReader-like reader over the rest of the result set (``close()`` ends
        it; a closed reader raises ``pyarrow.ArrowInvalid``)."""
        self._arrow_check()
        return _arrow.ArrowReader(_arrow.reader(self, max(batch_size, 1)))

    def arrow_batch(self, batch_size: int = 8192) -> Any:
        """One ``pyarrow.RecordBatch`` of up to ``batch_size`` rows (0 rows at the end)."""
        self._arrow_check()
        reader = _arrow.reader(self, max(batch_size, 1))
        if batch_size <= 0:
            return _arrow.empty(reader.schema)
        try:
            return reader.read_next_batch()
        except StopIteration:
            return _arrow.empty(reader.schema)

    def arrow(self, batch_size: int = 8192) -> Any:
        """The rest of the result set as one ``pyarrow.Table`` (batches of ``batch_size``;
        none fetched for a ``batch_size`` <= 0, as in mssql-python)."""
        self._arrow_check()
        reader = _arrow.reader(self, max(batch_size, 1))
        if batch_size <= 0:
            return _arrow.pyarrow().Table.from_batches([_arrow.empty(reader.schema)])
        return reader.read_all()

    def _arrow_check(self) -> None:
        if not self.closed and self.description is None:
            raise _exc.ProgrammingError("No active result set.",
                                        "The statement returned no result set to fetch.")


_skip = _native.Cursor.skip
_UNSUPPORTED = re.compile(r"parameter \d+: unsupported type (\S+)")
_fetchall = _native.Cursor.fetchall


def _logged_fetchall(self: Cursor) -> list[Any]:
    if _log._is_debug_enabled:
        _log.debug("FetchAll: Fetching all remaining rows")
    return _fetchall(self)


def _fetch_logging(on: bool) -> None:
    """mssql-python logs each fetchall: while logging is on (setup_logging), fetchall is a
    Python method that does; otherwise it is the engine's own, with nothing added."""
    Cursor.fetchall = _logged_fetchall if on else _fetchall  # type: ignore[method-assign]


_log.on_debug_change(_fetch_logging)


# The engine's methods that raise, per call (fetches are not here: the connection's
# `_error_hook` gives their errors the face's classes without a Python layer per row).
for _name in ("nextset", "callproc", "cancel", "close", "commit", "rollback", "setinputsizes",
              "skip", "bulkcopy", "bulkcopy_arrow", "tables", "columns", "statistics",
              "primaryKeys", "foreignKeys", "procedures", "procedureColumns", "rowIdColumns",
              "rowVerColumns", "getTypeInfo", "tablePrivileges", "fetch_record_batch",
              "fetch_arrow_table", "arrow", "arrow_batch", "arrow_reader"):
    setattr(Cursor, _name, translating(getattr(Cursor, _name)))
