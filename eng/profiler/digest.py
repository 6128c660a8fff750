"""Row count + checksum of a result, computed outside the timed window.

Drivers return different but equal Python values for the same cell (``Decimal('1.5000')`` vs
``Decimal('1.5')``, ``True`` vs ``1``); Python's ``hash`` is equal for equal values across numeric
types, so hashing each column as a tuple gives one checksum at C speed, with no per-cell Python
code. ``hash`` of str/bytes/datetime is salted per process: every process that computes or
checks a digest runs with ``PYTHONHASHSEED=0`` (``require_fixed_hash_seed``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple


class Digest(NamedTuple):
    rows: int
    checksum: str

    def describe(self) -> str:
        return f"{self.rows} rows, checksum {self.checksum}"


def require_fixed_hash_seed() -> None:
    if os.environ.get("PYTHONHASHSEED") != "0":
        raise RuntimeError("digests need PYTHONHASHSEED=0 (workers are started with it)")


# Before Python 3.12, hash(None) is its address, which differs between processes (ASLR).
_NULL = ("\x00NULL",)


def _column_hash(column: tuple[Any, ...]) -> int:
    if None in column:
        column = tuple(_NULL if v is None else v for v in column)
    try:
        return hash(column)
    except TypeError:
        # bytearray and other unhashable cells: compare by bytes value.
        return hash(tuple(bytes(v) if isinstance(v, (bytearray, memoryview)) else v for v in column))


def of_rows(rows: Iterable[Sequence[Any]]) -> Digest:
    """Digest of rows (any sequences: tuples, pyodbc/ferrodbc/mssql-python Row objects)."""
    require_fixed_hash_seed()
    rows = rows if isinstance(rows, list) else list(rows)
    h = hashlib.sha256()
    widths = {len(r) for r in rows[:1]}
    for column in zip(*rows):  # column-wise: one C-level hash per column
        h.update(_column_hash(column).to_bytes(8, "little", signed=True))
    h.update(repr(sorted(widths)).encode())
    return Digest(len(rows), h.hexdigest()[:16])


def of_sets(sets: Sequence[Iterable[Sequence[Any]]]) -> Digest:
    """Digest of several result sets (multiple-result-set tasks): rows summed, checksums chained."""
    parts = [of_rows(s) for s in sets]
    h = hashlib.sha256("|".join(p.checksum for p in parts).encode())
    return Digest(sum(p.rows for p in parts), h.hexdigest()[:16])


def of_values(values: Sequence[Any]) -> Digest:
    """Digest of a flat list of scalars (fetchval loops, counts)."""
    return of_rows([(v,) for v in values])
