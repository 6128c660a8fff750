"""PEP 249 type objects and constructors.

``cursor.description`` type codes are Python types (``str``, ``int``, ``decimal.Decimal``, ...),
as in pyodbc; the type objects below compare equal to the codes of their group.
"""

from __future__ import annotations

import datetime
import decimal
import time
import uuid
from typing import Any

Date = datetime.date
Time = datetime.time
Timestamp = datetime.datetime
Binary = bytes


def _localtime(ticks: float) -> time.struct_time:
    # A timestamp the platform's localtime() cannot represent raises OSError (EOVERFLOW) or
    # ValueError depending on the size; both are an out-of-range argument (OverflowError, as
    # pyodbc raises).
    try:
        return time.localtime(ticks)
    except (OSError, ValueError) as e:
        raise OverflowError(
            f"timestamp {ticks!r} is out of the platform's range"
        ) from e


def DateFromTicks(ticks: float) -> datetime.date:
    return Date(*_localtime(ticks)[:3])


def TimeFromTicks(ticks: float) -> datetime.time:
    return Time(*_localtime(ticks)[3:6])


def TimestampFromTicks(ticks: float) -> datetime.datetime:
    return Timestamp(*_localtime(ticks)[:6])


class DBAPITypeObject:
    """Equal to every type code in its group (PEP 249 type objects)."""

    def __init__(self, name: str, *codes: Any) -> None:
        self.name = name
        self.codes = frozenset(codes)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DBAPITypeObject):
            return self.codes == other.codes
        try:
            return other in self.codes
        except TypeError:  # unhashable: never one of our type codes
            return False

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"<DBAPITypeObject {self.name}>"


STRING = DBAPITypeObject("STRING", str)
BINARY = DBAPITypeObject("BINARY", bytes, bytearray)
NUMBER = DBAPITypeObject("NUMBER", int, float, decimal.Decimal, bool)
DATETIME = DBAPITypeObject("DATETIME", datetime.date, datetime.time, datetime.datetime)
ROWID = DBAPITypeObject("ROWID", int, uuid.UUID)
