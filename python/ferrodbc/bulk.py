"""One-call bulk loads from dataframes, through ``Cursor.bulkcopy`` (the driver's bulk-copy API on
SQL Server, parameter arrays elsewhere).

pandas::

    df.to_sql("t", engine, index=False, if_exists="append", method=ferrodbc.bulk.to_sql_method)

polars (its ``sqlalchemy`` engine writes through pandas' ``to_sql``)::

    df.write_database("t", engine, if_table_exists="append",
                      engine_options={"method": ferrodbc.bulk.to_sql_method})

or, with no pandas in between, straight from the frame's Arrow data::

    cursor.bulkcopy_arrow("t", df)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def _dbapi_connection(conn: Any) -> Any:
    """The ferrodbc connection under a SQLAlchemy ``Connection`` (or a ferrodbc connection)."""
    from . import _native

    if isinstance(conn, _native.Connection):
        return conn
    fairy = getattr(conn, "connection", None)
    for attr in ("driver_connection", "dbapi_connection"):
        inner = getattr(fairy, attr, None)
        if isinstance(inner, _native.Connection):
            return inner
    raise TypeError(
        f"to_sql_method needs a SQLAlchemy connection of the mssql+ferrodbc dialect (or a ferrodbc "
        f"connection), not {type(conn).__name__}"
    )


def _quoted(name: str) -> str:
    return "[" + name.replace("]", "]]") + "]"


def to_sql_method(table: Any, conn: Any, keys: list[str], data_iter: Iterable[tuple[Any, ...]]) -> int:
    """``pandas.DataFrame.to_sql(method=...)``: the frame's rows into the table with
    ``Cursor.bulkcopy``, columns matched by name. Returns the rows copied (what pandas sums)."""
    dbapi = _dbapi_connection(conn)
    name = _quoted(table.name) if not table.schema else f"{_quoted(table.schema)}.{_quoted(table.name)}"
    cursor = dbapi.cursor()
    try:
        result = cursor.bulkcopy(name, data_iter, column_mappings=list(keys))
    finally:
        cursor.close()
    return int(result["rows_copied"])
