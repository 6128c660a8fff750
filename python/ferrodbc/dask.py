"""``ferrodbc.dask.read_sql``: a SQL query as a Dask DataFrame whose partitions the workers read
themselves, each through ferrodbc's Arrow fetch on its own connection.

Optional: ``pip install ferrodbc[dask]`` (dask[dataframe], distributed, pandas and pyarrow).
Only this module imports them; ``import ferrodbc`` never does.

The client does three small things: it checks the partition column and probes its MIN/MAX (as
``ferrodbc.read_arrow`` does), and reads the first rows of the query for the frame's ``meta``.
Everything else happens in the tasks: a task holds the connection string and its partition's
query, connects on the worker, reads the partition as Arrow and converts it to pandas. No row
of a partition passes through the client (until you ``compute()``). The connection string,
credentials included, is part of each task (it travels to the scheduler and the workers).
"""

from __future__ import annotations

from typing import Any

import dask.dataframe as dd
import pandas as pd
import pyarrow as pa

from .partitioned import _check_arguments, _connect, _plan, _read_one

#: Rows read on the client to learn the schema (the frame's `meta`).
META_ROWS = 100


class _ReadPartition:
    """The task function: one partition query -> a pandas DataFrame with Arrow dtypes.
    A plain class (not a closure) so that it pickles by reference to this module."""

    def __init__(self, connection_string: str, arrow_options: dict[str, str],
                 connect_kwargs: dict[str, Any]):
        self.connection_string = connection_string
        self.arrow_options = arrow_options
        self.connect_kwargs = connect_kwargs

    def __call__(self, query: str) -> pd.DataFrame:
        table = _read_one(self.connection_string, query, self.arrow_options, self.connect_kwargs)
        return _to_pandas(pa.table(table))


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    # Arrow dtypes: every partition has the same dtypes whatever its NULLs (numpy dtypes would
    # make an int column float64 in the partitions that have a NULL), and decimals stay exact.
    return table.to_pandas(types_mapper=pd.ArrowDtype)


def _meta(connection_string: str, query: str, arrow_options: dict[str, str],
          connect_kwargs: dict[str, Any]) -> pd.DataFrame:
    """An empty frame with the dtypes of the query's first rows."""
    cn = _connect(connection_string, connect_kwargs)
    try:
        cur = cn.cursor()
        cur.execute(query)
        reader = pa.RecordBatchReader.from_stream(
            cur.fetch_record_batch(META_ROWS, **arrow_options))
        try:
            first = pa.Table.from_batches([reader.read_next_batch()])
        except StopIteration:  # no row: the schema alone
            first = reader.schema.empty_table()
    finally:
        cn.close()  # the rest of the result is never read
    return _to_pandas(first).iloc[:0]


def read_sql(connection_string: str, query: str, partition_on: str, npartitions: int, *,
             partition_range: tuple[int, int] | None = None, datetimeoffset: str = "utc",
             timestamp_unit: str = "us", meta: pd.DataFrame | None = None,
             **connect_kwargs: Any) -> dd.DataFrame:
    """`query` as a Dask DataFrame of (up to) `npartitions` partitions over the integer column
    `partition_on`, split as ``ferrodbc.read_arrow`` splits it (contiguous ranges of its
    MIN..MAX or of `partition_range`; the first range also takes NULLs and the rows below, the
    last those above). The same query rules and errors as ``read_arrow``.

    Columns have pandas Arrow dtypes (``pd.ArrowDtype``); `datetimeoffset` and `timestamp_unit`
    as for ``Cursor.fetch_arrow_table``. `meta` (an empty DataFrame) skips
    reading the first rows on the client. `connect_kwargs` go to ``ferrodbc.connect`` on each
    worker. The partitions are read when the graph runs, each at its own moment: not one
    snapshot of the data."""
    partitions, given_range = _check_arguments(partition_on, npartitions, partition_range)
    if not isinstance(query, str):
        raise TypeError("query must be a str (one SELECT)")
    queries = _plan(connection_string, query, partition_on, partitions, given_range, connect_kwargs)
    options = {"datetimeoffset": datetimeoffset, "timestamp_unit": timestamp_unit}
    if meta is None:
        meta = _meta(connection_string, query, options, connect_kwargs)
    reader = _ReadPartition(connection_string, options, connect_kwargs)
    return dd.from_map(reader, queries, meta=meta, label="ferrodbc-read-sql",
                       enforce_metadata=False)
