"""A user table loaded by plain SQL with the rows of a synthetic shape.

The peer's `peer.<shape>_<rows>` tables replay pre-encoded bytes, so reading them measures the
client alone. A table made with CREATE TABLE + INSERT makes the peer do real work per row
(SQLite steps the table, the peer encodes every value), which is what a user's table costs.
The rows are those of `synthetic.rows(shape, n)` (the expectation stays the generator's), as
T-SQL literals that SQL Server would store exactly:

    ddl, inserts = load_sql("mixed", name, 100_000)
    cur.execute(ddl); for sql in inserts: cur.execute(sql)

`SELECT * FROM name` returns them in insertion order on the peer (SQLite's rowid order).
"""

from __future__ import annotations

import datetime as _dt
import functools
from decimal import Decimal
from typing import Any

try:  # as a package (eng.peers.usertable) or from a script that put eng/peers on sys.path
    from . import synthetic
except ImportError:  # pragma: no cover
    import synthetic  # type: ignore[no-redef]

# SQL Server allows at most 1000 rows in one VALUES list.
ROWS_PER_INSERT = 1000


def _text(v: str) -> str:
    return "N'" + v.replace("'", "''") + "'"


def _datetime(v: _dt.datetime) -> str:
    return "'" + v.isoformat(sep=" ", timespec="microseconds") + "'"


# By exact type (bool before int matters: a bool is an int).
_LITERALS = {
    type(None): lambda v: "NULL",
    bool: lambda v: "1" if v else "0",
    int: str,
    # Never exponent form: '0E-4' would be a float literal.
    Decimal: lambda v: format(v, "f"),
    # Shortest round-trip text: exact for the generators' values.
    float: repr,
    _dt.datetime: _datetime,
    str: _text,
}


def literal(v: Any) -> str:
    """A T-SQL literal that converts to the column's type without loss."""
    try:
        return _LITERALS[type(v)](v)
    except KeyError:
        raise TypeError(f"no literal for {type(v).__name__}") from None


def ddl(shape: str, name: str) -> str:
    cols = ", ".join(f"{c} {t.upper()}" for c, t in synthetic.columns(shape))
    return f"CREATE TABLE {name} ({cols})"


@functools.lru_cache(maxsize=4)
def _values_lists(shape: str, n: int) -> tuple[str, ...]:
    """The VALUES lists, built once per process (a worker that loads the table for several
    tasks pays the literal formatting once)."""
    rows = [synthetic.row(shape, i) for i in range(n)]
    return tuple(
        ", ".join("(" + ", ".join(literal(v) for v in r) + ")" for r in rows[i : i + ROWS_PER_INSERT])
        for i in range(0, n, ROWS_PER_INSERT)
    )


def inserts(shape: str, name: str, n: int) -> list[str]:
    return [f"INSERT INTO {name} VALUES {values}" for values in _values_lists(shape, n)]


def load_sql(shape: str, name: str, n: int) -> tuple[str, list[str]]:
    return ddl(shape, name), inserts(shape, name, n)


def load(conn: Any, shape: str, name: str, n: int) -> None:
    """Creates and fills the table through a DB-API connection, then commits."""
    cur = conn.cursor()
    create, rows = load_sql(shape, name, n)
    cur.execute(create)
    for sql in rows:
        cur.execute(sql)
    conn.commit()
    cur.close()
