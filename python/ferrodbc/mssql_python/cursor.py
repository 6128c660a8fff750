"""mssql-python's ``Cursor`` over ferrodbc's: a subclass of the native cursor, so fetching
(fetchone/fetchmany/fetchall, iteration, Arrow) is the engine's own call with no Python layer
per row. What differs from ``ferrodbc.Cursor`` is done once per call: parameters
(``%(name)s`` with a dict, ``?`` with a sequence or separate values), ``execute`` keywords,
``messages`` cleared per execute, and the Arrow names ``arrow()``, ``arrow_batch()`` and
``arrow_reader()``."""

from __future__ import annotations

import decimal
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from .. import _native
from .exceptions import translating
from .params import convert, unwrap

# The ranges of money and smallmoney (mssql-python's names).
SMALLMONEY_MIN = decimal.Decimal("-214748.3648")
SMALLMONEY_MAX = decimal.Decimal("214748.3647")
MONEY_MIN = decimal.Decimal("-922337203685477.5808")
MONEY_MAX = decimal.Decimal("922337203685477.5807")


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError as e:  # pragma: no cover - the message is mssql-python's
        raise ImportError(
            "pyarrow is required for Arrow fetch methods. Please install pyarrow."
        ) from e
    return pyarrow


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
        if params:
            super().execute(sql, params)
        else:
            super().execute(sql)
        return self

    @translating
    def executemany(  # type: ignore[override]
        self, operation: str, seq_of_parameters: Iterable[Any]
    ) -> None:
        rows = list(seq_of_parameters)
        if rows and isinstance(rows[0], Mapping):
            converted = [convert(operation, r) for r in rows]
            sql = converted[0][0]
            super().executemany(sql, [p or () for _, p in converted])
        else:
            super().executemany(operation, rows)

    def bulkcopy(self, table_name: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        # mssql-python raises ValueError for an empty name; ferrodbc's cursor a ProgrammingError.
        if table_name == "":
            raise ValueError("table_name must be a non-empty string")
        return super().bulkcopy(table_name, *args, **kwargs)

    @property
    def rownumber(self) -> int:  # type: ignore[override]
        """The 0-based index of the last row fetched from the result set, -1 before the first
        (mssql-python's; ferrodbc's own counts the rows fetched)."""
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

    # mssql-python's Arrow names (ferrodbc's engine builds the batches) and its Arrow types:
    # large_string / large_binary, time64[ns], GUIDs as upper-case text, fields non-null where
    # the column is. Converted once per batch, in Arrow's C code: nothing per row in Python.
    def arrow_reader(self, batch_size: int = 8192) -> Any:
        """A ``pyarrow.RecordBatchReader`` over the rest of the result set."""
        return _mssql_reader(self, max(batch_size, 1))

    def arrow_batch(self, batch_size: int = 8192) -> Any:
        """One ``pyarrow.RecordBatch`` of up to ``batch_size`` rows (0 rows at the end)."""
        reader = self.arrow_reader(max(batch_size, 1))
        if batch_size <= 0:
            return _empty(reader)
        try:
            return reader.read_next_batch()
        except StopIteration:
            return _empty(reader)

    def arrow(self, batch_size: int = 8192) -> Any:
        """The rest of the result set as one ``pyarrow.Table`` (batches of ``batch_size``)."""
        return self.arrow_reader(batch_size).read_all()


def _mssql_reader(cur: Cursor, batch_size: int) -> Any:
    pa = _pyarrow()
    # Read through a RecordBatchReader, not pa.table(stream): pa.table first asks whether its
    # argument is a pandas DataFrame, importing pandas (and numpy) the first time in a process.
    # The engine builds large_string/large_binary itself (large_types): no cast, no second copy.
    stream = cur.fetch_record_batch(batch_size, uuid="string", large_types=True)
    src = pa.RecordBatchReader.from_stream(stream)
    desc = cur.description or ()
    fields, guids = [], []
    for i, f in enumerate(src.schema):
        t = f.type
        if pa.types.is_string(t):
            t = pa.large_string()
        elif pa.types.is_binary(t):
            t = pa.large_binary()
        elif pa.types.is_time64(t):
            t = pa.time64("ns")
        d = desc[i] if i < len(desc) else None
        guids.append(d is not None and d[1] is uuid.UUID)
        nullable = f.nullable if d is None or d[6] is None else bool(d[6])
        fields.append(pa.field(f.name, t, nullable=nullable, metadata=f.metadata))
    schema = pa.schema(fields, metadata=src.schema.metadata)
    if schema.equals(src.schema, check_metadata=True) and not any(guids):
        return src

    def batches() -> Any:
        import pyarrow.compute as pc

        for batch in src:
            cols = []
            for col, field, guid in zip(batch.columns, schema, guids):
                if guid:
                    col = pc.utf8_upper(col)
                cols.append(col if col.type == field.type else col.cast(field.type))
            yield pa.RecordBatch.from_arrays(cols, schema=schema)

    return pa.RecordBatchReader.from_batches(schema, batches())


def _empty(reader: Any) -> Any:
    pa = _pyarrow()
    schema = reader.schema
    return pa.RecordBatch.from_arrays([pa.array([], type=f.type) for f in schema], schema=schema)


# The engine's methods that raise, per call (fetches are not here: the connection's
# `_error_hook` gives their errors the face's classes without a Python layer per row).
for _name in ("nextset", "callproc", "cancel", "close", "commit", "rollback", "setinputsizes",
              "skip", "bulkcopy", "bulkcopy_arrow", "tables", "columns", "statistics",
              "primaryKeys", "foreignKeys", "procedures", "procedureColumns", "rowIdColumns",
              "rowVerColumns", "getTypeInfo", "tablePrivileges", "fetch_record_batch",
              "fetch_arrow_table", "arrow", "arrow_batch", "arrow_reader"):
    setattr(Cursor, _name, translating(getattr(Cursor, _name)))
