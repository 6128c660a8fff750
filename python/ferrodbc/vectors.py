"""SQL Server 2025 vectors as text: the opt-in parse and the text form of a parameter.

Without Driver 18's ``VectorTypeSupport=v1`` (its default) and always through FreeTDS, SQL Server
sends a ``VECTOR(n)`` column as ``varchar(max)`` JSON text, ``[1.0000000e+000,...]``, and the
column reads as ``str`` (as in pyodbc). ``from_text`` turns such a value into the float32 array
a native read gives (``array.array('f')``, which ``numpy.asarray`` shares without a copy).
SQL Server's text keeps 8 significant digits, so a value read this way is the float32 nearest
to the text, not always the stored one; a native read is exact (docs/vectors.md).

    from ferrodbc.vectors import from_text
    rows = [(id_, from_text(v)) for id_, v in cursor.execute("SELECT id, embedding FROM t")]
"""

from __future__ import annotations

import array
import math
import struct
from collections.abc import Iterable

__all__ = ["from_text", "to_text"]


def _f32(v: float, i: int) -> float:
    """v rounded to float32, or ValueError: NaN, infinities and finite values past float32's
    range (they would become infinities) are not vector elements."""
    if math.isnan(v) or math.isinf(v):
        raise ValueError(f"vector element {i} is {v}, which SQL Server's vectors cannot hold")
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:
        raise ValueError(f"vector element {i} ({v}) is outside float32's range (±3.4028235e38)") from None


def from_text(text: str | bytes | None) -> array.array | None:
    """A vector's JSON text (or its bytes, ASCII) as ``array('f')``; None stays None.

    ValueError for text that is not a JSON array of finite numbers within float32's range."""
    if text is None:
        return None
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("ascii")
    inner = text.strip()
    if not (inner.startswith("[") and inner.endswith("]")):
        raise ValueError(f"not a JSON array of numbers: {text[:40]!r}")
    inner = inner[1:-1].strip()
    if not inner:
        return array.array("f")
    parts = inner.split(",")
    try:
        # One C-level pass; float() takes the JSON number forms (and a few words, refused below).
        out = array.array("f", map(float, parts))
    except ValueError:
        bad = next(i for i, p in enumerate(parts) if not _is_number(p))
        raise ValueError(f"vector element {bad} is not a number: {parts[bad].strip()[:40]!r}") from None
    if not all(map(math.isfinite, out)):
        # NaN and infinities written as words, or numbers past float32's range (stored as inf).
        bad = next(i for i, f in enumerate(out) if not math.isfinite(f))
        _f32(float(parts[bad]), bad)
        raise ValueError(f"vector element {bad} ({parts[bad].strip()}) is not a finite float32")
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def to_text(values: Iterable[float]) -> str:
    """The JSON text of a vector that SQL Server converts back to exactly these float32 values
    (each element rounded to float32 first, then written with as many digits as it needs)."""
    parts = []
    for i, v in enumerate(values):
        parts.append(_shortest(_f32(float(v), i)))
    return "[" + ",".join(parts) + "]"


def _shortest(f32: float) -> str:
    """The shortest decimal that reads back as the same float32."""
    for digits in range(6, 10):
        s = f"{f32:.{digits}g}"
        if struct.unpack("<f", struct.pack("<f", float(s)))[0] == f32:
            return s
    return repr(f32)
