"""Every fetch shape as one loop, for the mutation and lifetime tests of both suites
(tests/python and tests/sqlserver import it from here: it is not a test module).

`drain(cur, shape)` reads the rest of the current result set with one fetch shape and returns
the first column of every row it got, in order, and the ferrodbc errors raised on the way. After
an error it goes on fetching (a row that failed is consumed; the rows after it are served by the
next call), so a caller can check that every row arrived exactly once, or which did not.
"""

from __future__ import annotations

from collections.abc import Callable

import ferrodbc

ROW_SHAPES = ("fetchone", "fetchmany", "fetchall", "iter", "fetchval")


def _step(cur: ferrodbc.Cursor, shape: str) -> tuple[list, bool]:
    """One call of `shape`: (the rows it returned, or fetchval's values; whether the result set
    is over)."""
    if shape == "fetchone":
        row = cur.fetchone()
        return ([] if row is None else [row]), row is None
    if shape == "fetchmany":
        rows = cur.fetchmany(777)
        return rows, not rows
    if shape == "fetchall":
        return cur.fetchall(), True
    if shape == "iter":
        try:
            return [next(cur)], False
        except StopIteration:
            return [], True
    if shape == "fetchval":
        value = cur.fetchval()
        return ([] if value is None else [(value,)]), value is None
    raise ValueError(shape)


def drain(
    cur: ferrodbc.Cursor,
    shape: str,
    *,
    keep_going: bool = True,
    max_errors: int = 5,
    on_rows: Callable[[list], None] | None = None,
) -> tuple[list, list[ferrodbc.Error]]:
    """Values of the first column of the remaining rows, and the errors raised. `keep_going`:
    fetch on after an error (at most `max_errors`), else stop at the first. `on_rows` sees
    the rows of each call as they arrive (fetchval: 1-tuples of its values)."""
    values: list = []
    errors: list[ferrodbc.Error] = []
    while True:
        try:
            got, over = _step(cur, shape)
        except ferrodbc.Error as e:
            errors.append(e)
            partial = getattr(e, "partial_rows", None) or []
            if on_rows is not None:
                on_rows(partial)
            values.extend(r[0] for r in partial)
            if not keep_going or len(errors) >= max_errors:
                return values, errors
            continue
        if on_rows is not None:
            on_rows(got)
        values.extend(r[0] for r in got)
        if over:
            return values, errors


def plain(value):
    """An id as the tests' converters tag it (`("c", id)`) or untagged."""
    return value[1] if isinstance(value, tuple) else value


def rest(cur: ferrodbc.Cursor, shape: str, many: int = 777) -> list:
    """The remaining rows as one fetch shape returns them ("fetchone", "iter", "fetchall"; any
    other shape, e.g. a row factory's name, reads with fetchmany(`many`)). Errors propagate."""
    if shape == "fetchone":
        rows = []
        while (row := cur.fetchone()) is not None:
            rows.append(row)
        return rows
    if shape == "iter":
        return list(cur)
    if shape == "fetchall":
        return cur.fetchall()
    rows = []
    while batch := cur.fetchmany(many):
        rows.extend(batch)
    return rows


def cursor_for(conn: ferrodbc.Connection, shape: str) -> ferrodbc.Cursor:
    """A cursor for `shape`: the row factory it names ("lazy": LazyRow, "dict": dict), if any."""
    cur = conn.cursor()
    if shape == "lazy":
        cur.row_factory = ferrodbc.LazyRow
    elif shape == "dict":
        cur.row_factory = dict
    return cur
