"""``ferrodbc.read_arrow``: one query read as Arrow over several connections at once.

Each partition is read on its own connection in its own thread. The Arrow fetch runs without
the GIL (driver calls and the decoding into Arrow builders: src/py/cursor/fetch.rs), so the
threads' reads overlap, and the server evaluates the partitions side by side. The gathered table
reuses every partition's buffers (``RecordBatchStream.concat``: no value is copied).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from . import _native
from ._native import ProgrammingError, RecordBatchStream
from .partition_sql import check_wrappable, partition_queries, range_probe, split, type_probe


def _connect(connection_string: str, connect_kwargs: dict[str, Any]) -> _native.Connection:
    from . import connect

    kwargs = {"autocommit": True, **connect_kwargs}
    return connect(connection_string, **kwargs)


def _read_one(connection_string: str, query: str, arrow_options: dict[str, str],
              connect_kwargs: dict[str, Any]) -> RecordBatchStream:
    """`arrow_options`: the keywords of `Cursor.fetch_arrow_table` (datetimeoffset, ...)."""
    cn = _connect(connection_string, connect_kwargs)
    try:
        cur = cn.cursor()
        cur.execute(query)
        return cur.fetch_arrow_table(**arrow_options)
    finally:
        cn.close()


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_arguments(partition_on: str | None, partitions: object,
                     partition_range: object) -> tuple[int, tuple[int, int] | None]:
    if not _is_int(partitions):
        raise TypeError(f"partitions must be an int, not {type(partitions).__name__}")
    assert isinstance(partitions, int)
    if partitions < 1:
        raise ValueError(f"partitions must be at least 1, not {partitions}")
    if partition_range is None:
        return partitions, None
    if partition_on is None:
        raise ValueError("partition_range needs partition_on (the column it ranges over)")
    if (not isinstance(partition_range, (tuple, list)) or len(partition_range) != 2
            or not all(_is_int(v) for v in partition_range)):
        raise ValueError(f"partition_range must be (low, high) of two ints, not {partition_range!r}")
    low, high = partition_range
    if low > high:
        raise ValueError(f"partition_range: low {low} is above high {high}")
    return partitions, (low, high)


def _plan(connection_string: str, query: str, partition_on: str, partitions: int,
          partition_range: tuple[int, int] | None, connect_kwargs: dict[str, Any]) -> list[str]:
    """The partition queries: the column's type checked and, unless given, its range probed."""
    query = check_wrappable(query)
    cn = _connect(connection_string, connect_kwargs)
    try:
        cur = cn.cursor()
        cur.execute(type_probe(query, partition_on))
        type_code = cur.description[0][1]
        if type_code is not int:
            name = getattr(type_code, "__name__", type_code)
            raise ProgrammingError(
                f"partition_on {partition_on!r} must be an integer column (tinyint, smallint, "
                f"int, bigint); it reads as {name}")
        if partition_range is None:
            if partitions == 1:
                return [query]
            low, high = cur.execute(range_probe(query, partition_on)).fetchone()
            if low is None:  # no row (or only NULLs): one partition, the query itself
                return [query]
            partition_range = (low, high)
    finally:
        cn.close()
    return partition_queries(query, partition_on, split(*partition_range, partitions))


def read_arrow(connection_string: str, query: str | Sequence[str], partition_on: str | None = None,
               partitions: int = 1, partition_range: tuple[int, int] | None = None, *,
               datetimeoffset: str = "utc", timestamp_unit: str = "us", **connect_kwargs: Any) -> Any:
    """Read `query` as one Arrow table, over `partitions` connections read in parallel.

    - ``partition_on``: an integer column of the query's result. Its range is probed with
      MIN/MAX (or taken from ``partition_range=(low, high)``) and split into ``partitions``
      contiguous ranges; each range is a query ``SELECT * FROM (<query>) AS ferrodbc_partition
      WHERE <range>`` on its own connection and thread. The first range also takes the rows
      below ``low`` and the NULLs, the last those above ``high``, so every row is read once.
      ``partition_on`` is put into the SQL as written (quote it if it needs quoting).
    - ``datetimeoffset`` and ``timestamp_unit``: as for ``Cursor.fetch_arrow_table``.
    - ``query`` may be a list of queries instead: each is read as is on its own connection
      (``partition_on`` and ``partitions`` must then be left out); their columns must match.

    Returns a ``pyarrow.Table`` when pyarrow is installed, else a ferrodbc
    ``RecordBatchStream`` table (``__arrow_c_stream__``: polars, DuckDB, ... take it). The rows
    equal those of a single-connection read as a set: they come partition by partition (ranges
    in ascending order, queries in list order), in each partition as the server returns them.
    The partitions are separate reads at almost the same moment, not one snapshot: rows changed
    during the read may be seen in one partition's state and not another's.

    Bad input: ``ValueError`` (partitions < 1, a bad partition_range, partition_on with a list),
    ``ProgrammingError`` (a query that cannot be wrapped: several statements, not a SELECT, a
    top-level ORDER BY without TOP/OFFSET; a non-integer ``partition_on``), and every database
    error with its own class. ``connect_kwargs`` go to ``ferrodbc.connect`` (autocommit is on
    unless given).
    """
    partitions, given_range = _check_arguments(partition_on, partitions, partition_range)
    options = {"datetimeoffset": datetimeoffset, "timestamp_unit": timestamp_unit}
    if isinstance(query, str):
        queries = ([query] if partition_on is None and partitions == 1 else None)
        if queries is None:
            if partition_on is None:
                raise ValueError("partitions > 1 needs partition_on (an integer column)")
            queries = _plan(connection_string, query, partition_on, partitions, given_range,
                            connect_kwargs)
    else:
        queries = list(query)
        if not queries or not all(isinstance(q, str) for q in queries):
            raise ValueError("query must be a str or a non-empty list of str")
        if partition_on is not None or partitions != 1:
            raise ValueError("a list of queries is read one query per connection: leave "
                             "partition_on and partitions out")
    if len(queries) == 1:
        parts = [_read_one(connection_string, queries[0], options, connect_kwargs)]
    else:
        with ThreadPoolExecutor(max_workers=len(queries), thread_name_prefix="ferrodbc-read") as pool:
            futures = [pool.submit(_read_one, connection_string, q, options, connect_kwargs)
                       for q in queries]
            parts = []
            for i, f in enumerate(futures):
                try:
                    parts.append(f.result())
                except Exception as e:
                    if hasattr(e, "add_note"):  # Python 3.11+
                        e.add_note(f"ferrodbc.read_arrow: partition {i} of {len(queries)}: "
                                   f"{queries[i]}")
                    raise
    table = RecordBatchStream.concat(parts)
    try:
        import pyarrow
    except ImportError:
        return table
    return pyarrow.table(table)
