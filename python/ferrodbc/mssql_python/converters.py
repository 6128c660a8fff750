"""mssql-python's output converters over the engine's: a converter is keyed by an ODBC SQL type
code or by a Python type (``str``, ``decimal.Decimal``, ...), and called with the value already
decoded (text as its UTF-16LE bytes), never for NULL; when it raises, the value stays as it was.

The engine calls a converter with the driver's bytes of each value (pyodbc's rule), per SQL type
code. So each code a result set can carry gets, when a converter applies to it, a small wrapper
that decodes those bytes as mssql-python would have given them, then calls the program's
function. Which one applies follows mssql-python: the code's own converter, else the one of the
code's Python type, else (text and binary only) the ``SQL_WVARCHAR`` one. Nothing of this runs
unless a converter is registered, and then once per value, as the converter itself does."""

from __future__ import annotations

import datetime
import decimal
import struct
import uuid
from collections.abc import Callable
from typing import Any

SQL_WVARCHAR = -9


def _int(raw: bytes) -> int:
    return int.from_bytes(raw, "little", signed=True)


def _float(raw: bytes) -> float:
    return struct.unpack("<f" if len(raw) == 4 else "<d", raw)[0]


def _decimal(raw: bytes) -> decimal.Decimal:
    return decimal.Decimal(raw.decode("ascii"))


def _date(raw: bytes) -> datetime.date:
    return datetime.date(*struct.unpack_from("<hHH", raw))


# The engine hands a time or datetimeoffset over in the C struct it bound, or as the ISO text the
# driver rendered where it binds text (every TYPE_TIME column; time and datetimeoffset through
# FreeTDS): UTF-16LE, "12:34:56[.fffffff]" / "2024-01-02 12:34:56[.fffffff] +01:00". The struct
# sizes (12 and 20 bytes) are never those of such text. Fractions past the microsecond are cut,
# as mssql-python's datetime values cut them.
_TIME2_STRUCT = 12  # SQL_SS_TIME2_STRUCT: hour, minute, second, (pad), fraction in ns
_OFFSET_STRUCT = 20  # SQL_SS_TIMESTAMPOFFSET_STRUCT


def _clock(text: str) -> tuple[int, int, int, int]:
    hms, _, frac = text.partition(".")
    h, m, s = (int(part) for part in hms.split(":"))
    return h, m, s, int((frac + "000000")[:6])


def _time(raw: bytes) -> datetime.time:
    if len(raw) == _TIME2_STRUCT:
        h, m, s, _, frac = struct.unpack_from("<HHHHI", raw)
        return datetime.time(h, m, s, frac // 1000)
    return datetime.time(*_clock(raw.decode("utf-16-le").strip()))


def _timestamp(raw: bytes) -> datetime.datetime:
    y, mo, d, h, mi, s, frac = struct.unpack_from("<hHHHHHI", raw)
    return datetime.datetime(y, mo, d, h, mi, s, frac // 1000)


def _offset(raw: bytes) -> datetime.datetime:
    if len(raw) == _OFFSET_STRUCT:
        y, mo, d, h, mi, s, frac, th, tm = struct.unpack_from("<hHHHHHIhh", raw)
        tz = datetime.timezone(datetime.timedelta(hours=th, minutes=tm))
        return datetime.datetime(y, mo, d, h, mi, s, frac // 1000, tzinfo=tz)
    day, clock, zone = raw.decode("utf-16-le").split()
    sign = -1 if zone.startswith("-") else 1
    zh, zm = (int(part) for part in zone[1:].split(":"))
    tz = datetime.timezone(sign * datetime.timedelta(hours=zh, minutes=zm))
    return datetime.datetime.combine(
        datetime.date.fromisoformat(day), datetime.time(*_clock(clock)), tzinfo=tz
    )


def _narrow_text(raw: bytes) -> bytes:
    # A char/varchar column's code-page bytes; mssql-python hands text over as UTF-16LE. The
    # code page is the driver's to know: UTF-8 (SQL Server's _UTF8 collations), else
    # Windows-1252 (the Latin1_General collations).
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", errors="replace")
    return text.encode("utf-16-le")


def _same(raw: bytes) -> bytes:
    return raw


# SQL type code -> (the Python type its values have, the decoder of the driver's bytes).
_CODES: dict[int, tuple[type, Callable[[bytes], Any]]] = {
    **{c: (str, _narrow_text) for c in (1, 12, -1)},
    **{c: (str, _same) for c in (-8, -9, -10)},
    **{c: (bytes, _same) for c in (-2, -3, -4)},
    **{c: (int, _int) for c in (4, -5, 5, -6)},
    -7: (bool, lambda raw: raw != b"\x00"),
    **{c: (float, _float) for c in (6, 7, 8)},
    **{c: (decimal.Decimal, _decimal) for c in (2, 3)},
    91: (datetime.date, _date),
    **{c: (datetime.time, _time) for c in (92, -154)},
    93: (datetime.datetime, _timestamp),
    -155: (datetime.datetime, _offset),
    -11: (uuid.UUID, lambda raw: uuid.UUID(bytes_le=raw)),
}


def _wrapped(code: int, func: Callable[[Any], Any]) -> Callable[[bytes | None], Any]:
    kind, decode = _CODES[code]

    def convert(raw: bytes | None) -> Any:
        if raw is None:
            return None
        value = decode(raw)
        try:
            return func(value)
        except Exception:  # noqa: BLE001 - mssql-python keeps the value when a converter fails
            return value.decode("utf-16-le") if kind is str else value

    return convert


def _wrapped_raw(func: Callable[[Any], Any]) -> Callable[[bytes | None], Any]:
    def convert(raw: bytes | None) -> Any:
        if raw is None:
            return None
        try:
            return func(raw)
        except Exception:  # noqa: BLE001 - as above
            return raw

    return convert


def engine_converters(keyed: dict[Any, Callable[[Any], Any]]) -> dict[int, Callable[[bytes | None], Any]]:
    """The engine's converter of each SQL type code, from the program's converters (``keyed``:
    SQL type codes and Python types)."""
    out = {}
    fallback = keyed.get(SQL_WVARCHAR)
    for code, (kind, _) in _CODES.items():
        func = keyed.get(code) or keyed.get(kind)
        if func is None and kind in (str, bytes):
            func = fallback
        if func is not None:
            out[code] = _wrapped(code, func)
    for key, func in keyed.items():  # another type code (geometry's -151, ...): its bytes
        if isinstance(key, int) and not isinstance(key, bool) and key not in out and -32768 <= key < 32768:
            out[key] = _wrapped_raw(func)
    return out


__all__ = ["engine_converters"]
