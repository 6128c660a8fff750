"""mssql-python's type constructors and PEP 249 type objects (ferrodbc's)."""

from __future__ import annotations

import datetime
from typing import Any

from .. import dbapi
from ..dbapi import (
    Date,
    DateFromTicks,
    Time,
    TimeFromTicks,
    Timestamp,
    TimestampFromTicks,
)


class _TypeObject(dbapi.DBAPITypeObject):
    """ferrodbc's PEP 249 type object (equal to the type codes of its group), callable as
    mssql-python's are: ``STRING()`` is ``""``, ``DATETIME(2025, 1, 1)`` a datetime."""

    def __init__(self, base: dbapi.DBAPITypeObject, make: Any) -> None:
        super().__init__(base.name, *base.codes)
        self._make = make

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._make(*args, **kwargs)


STRING = _TypeObject(dbapi.STRING, str)
BINARY = _TypeObject(dbapi.BINARY, bytearray)
NUMBER = _TypeObject(dbapi.NUMBER, float)
DATETIME = _TypeObject(dbapi.DATETIME, lambda year=1, month=1, day=1, *rest, **kw: datetime.datetime(year, month, day, *rest, **kw))
ROWID = _TypeObject(dbapi.ROWID, int)


def Binary(value: Any) -> bytes:
    """bytes of ``value``: a str is UTF-8 encoded, bytes-like values are copied (mssql-python)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(f"Cannot convert type {type(value).__name__} to bytes")


__all__ = [
    "BINARY",
    "DATETIME",
    "NUMBER",
    "ROWID",
    "STRING",
    "Binary",
    "Date",
    "DateFromTicks",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
]
