"""Row factories for ``cursor.row_factory`` and ``connection.row_factory``.

A row factory is called once per result set with ``cursor.description`` and returns a *maker*,
which is called with each row's values as a tuple and returns the row (the protocol of
psycopg's row factories, with the description as the argument). ``None`` (``ferrodbc.Row``),
``dict``, ``tuple`` and ``ferrodbc.LazyRow`` are recognised by the engine and not called.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any


@functools.lru_cache(maxsize=256)
def _namedtuple_type(names: tuple[str, ...]) -> Any:
    # rename=True: names that are not identifiers (or repeat) become _0, _1, ... as namedtuple
    # does; the same names make the same class, so a query run again builds no new type.
    return namedtuple("Row", names, rename=True)  # noqa: PYI024 (names known only at run time)


def namedtuple_row(description: Sequence[Sequence[Any]]) -> Callable[[tuple[Any, ...]], Any]:
    """Rows as ``collections.namedtuple`` instances named after the columns."""
    return _namedtuple_type(tuple(str(d[0]) for d in description))._make
