"""mssql-python's Arrow fetches over the engine's batches: its Arrow types (``large_string``,
``large_binary``, ``time64[ns]``, GUIDs as upper-case text, fields non-null where the column is),
converted once per batch in Arrow's C code, and its reader, whose ``close()`` ends the fetch and
after which every use raises ``pyarrow.ArrowInvalid``."""

from __future__ import annotations

import sys
import uuid
from typing import Any


def pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError as e:  # pragma: no cover - the message is mssql-python's
        raise ImportError(
            "pyarrow is required for Arrow fetch methods. Please install pyarrow."
        ) from e
    return pyarrow


def reader(cur: Any, batch_size: int) -> Any:
    """The result set as a pyarrow reader of mssql-python's Arrow types."""
    pa = pyarrow()
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


def bulk_source(source: Any, mappings: Any) -> tuple[Any, Any]:
    """``(source, column_mappings)`` for the engine's bulkcopy_arrow: an iterable of
    RecordBatches as one reader; ``(name, destination)`` pairs as ``(index, destination)``."""
    if source is None or isinstance(source, (str, bytes)):
        got = "None" if source is None else type(source).__name__
        raise TypeError("source must be a pyarrow Table/RecordBatch/RecordBatchReader, an iterable "
                        "of RecordBatch, or an object implementing "
                        f"__arrow_c_stream__/__arrow_c_array__, got {got}")
    pa = None
    if not (hasattr(source, "__arrow_c_stream__") or hasattr(source, "__arrow_c_array__")):
        pa = pyarrow()
        batches = list(source)
        if not batches or not all(isinstance(b, pa.RecordBatch) for b in batches):
            raise TypeError("source must be a pyarrow Table/RecordBatch/RecordBatchReader, an "
                            "iterable of RecordBatch, or an object implementing "
                            "__arrow_c_stream__/__arrow_c_array__")
        source = pa.RecordBatchReader.from_batches(batches[0].schema, batches)
    if mappings and any(isinstance(m, tuple) and m and isinstance(m[0], str) for m in mappings):
        schema = getattr(source, "schema", None)
        if schema is None:
            source = (pa or pyarrow()).RecordBatchReader.from_stream(source)
            schema = source.schema
        names = list(schema.names)
        out = []
        for m in mappings:
            if isinstance(m, tuple) and m and isinstance(m[0], str):
                if m[0] not in names:
                    raise ValueError(f"Source column '{m[0]}' not found in the Arrow schema "
                                     f"(columns: {names})")
                m = (names.index(m[0]), *m[1:])
            out.append(m)
        mappings = out
    return source, mappings


_NAIVE = ("datetime2", "datetime", "smalldatetime")


def refuse_aware_into_naive(cur: Any, table_name: Any, source: Any, mappings: Any) -> None:
    """mssql-python's refusal of a timestamp with a time zone for a datetime/datetime2 column
    (its offset would be lost): only when the source has one, by the destination's catalog
    entry (a #temp table, or a name the catalog does not find, is not checked)."""
    schema = getattr(source, "schema", None)
    if schema is None or not isinstance(table_name, str) or table_name.lstrip("[").startswith("#"):
        return
    pa = pyarrow()
    aware = [i for i, f in enumerate(schema) if pa.types.is_timestamp(f.type) and f.type.tz]
    if not aware:
        return
    parts = [p.strip("[]") for p in table_name.split(".")]
    probe = cur.connection.cursor()
    try:
        cols = [(r[3], str(r[5]).lower()) for r in probe.columns(
            table=parts[-1], schema=parts[-2] if len(parts) > 1 else None).fetchall()]
    finally:
        probe.close()
    types = dict(cols)
    for i in aware:
        if mappings:
            m = mappings[i] if i < len(mappings) and not isinstance(mappings[0], tuple) else next(
                (t[1] for t in mappings if isinstance(t, tuple) and t[0] == i), None)
            dest = m
        else:
            dest = cols[i][0] if i < len(cols) else None
        kind = types.get(dest)
        if kind in _NAIVE:
            raise ValueError(
                f"Column '{dest}' is {kind}, which has no time zone: a timestamp with time zone "
                f"'{schema[i].type.tz}' would lose its offset. Use a datetimeoffset column, or "
                "make the timestamps naive first."
            )


def empty(schema: Any) -> Any:
    pa = pyarrow()
    return pa.RecordBatch.from_arrays([pa.array([], type=f.type) for f in schema], schema=schema)


class ArrowReader:
    """mssql-python's reader: a ``pyarrow.RecordBatchReader``'s methods (delegated), the Arrow
    PyCapsule stream protocol, iteration, ``with``, and ``close()``/``closed``."""

    __slots__ = ("_inner", "_closed")

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._closed = False

    def _refuse(self) -> Exception:
        return pyarrow().ArrowInvalid("Reader is closed")

    @property
    def closed(self) -> bool:
        return self._closed

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if self._closed:
            raise self._refuse()
        return getattr(self._inner, name)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        if self._closed:
            raise self._refuse()
        export = getattr(self._inner, "__arrow_c_stream__", None)
        if export is None:
            raise pyarrow().ArrowInvalid(
                "Arrow PyCapsule Protocol requires pyarrow>=14; the installed pyarrow version "
                "does not expose RecordBatchReader.__arrow_c_stream__."
            )
        return export(requested_schema)

    def __iter__(self) -> ArrowReader:
        return self

    def __next__(self) -> Any:
        if self._closed:
            raise self._refuse()
        return self._inner.read_next_batch()

    def __enter__(self) -> ArrowReader:  # noqa: PYI034
        if self._closed:
            raise self._refuse()
        return self

    def __exit__(self, *exc: object) -> bool:
        self.close()
        return False

    def close(self) -> None:
        """Stop reading (idempotent); the cursor stays usable."""
        if not self._closed:
            self._closed = True
            close = getattr(self._inner, "close", None)
            if close is not None:
                close()

    def __del__(self) -> None:
        # Best effort, as mssql-python's: never during interpreter shutdown, never raising.
        try:
            if not sys.is_finalizing():
                self.close()
        except Exception:  # noqa: BLE001 - a finalizer must not raise
            pass
