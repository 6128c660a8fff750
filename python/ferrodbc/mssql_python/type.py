"""mssql-python's type constructors and PEP 249 type objects (ferrodbc's)."""

from __future__ import annotations

from typing import Any

from ..dbapi import (
    BINARY,
    DATETIME,
    NUMBER,
    ROWID,
    STRING,
    Date,
    DateFromTicks,
    Time,
    TimeFromTicks,
    Timestamp,
    TimestampFromTicks,
)


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
