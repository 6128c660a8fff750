"""mssql-python's ``setinputsizes`` rules: entries checked when set (ValueError with its
words), a warning when their number differs from the parameters', sizes forgotten after each
execute, and DECIMAL/NUMERIC entries turning executemany's values into Decimals, with errors
that name the row, column and type but never the value (it may be personal data)."""

from __future__ import annotations

import decimal
import warnings
from collections.abc import Sequence
from typing import Any

from .constants import ConstantsDDBC, SQLTypes

_DECIMALS = (ConstantsDDBC.SQL_DECIMAL.value, ConstantsDDBC.SQL_NUMERIC.value)


def _sql_type(sql_type: Any) -> int:
    if not isinstance(sql_type, int) or sql_type not in SQLTypes.get_valid_types():
        raise ValueError(f"Invalid SQL type: {sql_type}. Must be a valid SQL type constant.")
    return sql_type


def parse(sizes: Any) -> list[tuple[int, int, int]]:
    """``sizes`` as ``(sql_type, column_size, decimal_digits)`` entries, checked."""
    out: list[tuple[int, int, int]] = []
    for entry in sizes or ():
        if not isinstance(entry, tuple):
            out.append((_sql_type(entry), 0, 0))
            continue
        sql_type, column_size, digits = (tuple(entry) + (0, 0))[:3] if entry else (None, 0, 0)
        _sql_type(sql_type)
        if not isinstance(column_size, int) or column_size < 0:
            raise ValueError(f"Invalid column size: {column_size}. Must be a non-negative integer.")
        if not isinstance(digits, int) or digits < 0:
            raise ValueError(f"Invalid decimal digits: {digits}. Must be a non-negative integer.")
        out.append((sql_type, column_size, digits))
    return out


def warn_count(sizes: Sequence[Any], params: int) -> None:
    if len(sizes) != params:
        warnings.warn(
            f"Number of input sizes ({len(sizes)}) does not match number of parameters "
            f"({params}). This may lead to unexpected behavior.",
            Warning,
            stacklevel=4,
        )


def _to_decimal(value: Any, row: int, column: int) -> decimal.Decimal:
    message = (f"Failed to convert parameter to Decimal at row {row}, column {column} "
               f"(value type: {type(value).__name__})")
    try:
        text = str(value)
    except Exception:  # noqa: BLE001 - any error of str() may carry the value: never chained
        raise ValueError(message) from None
    try:
        parsed = decimal.Decimal(text)
        format(parsed, "f")  # an expansion too large to bind fails here, as in mssql-python
        return parsed
    except decimal.DecimalException as e:  # its message never holds the value
        raise ValueError(message) from e
    except Exception:  # noqa: BLE001 - e.g. MemoryError's text is not known to be value-free
        raise ValueError(message) from None


def decimal_rows(sizes: Sequence[tuple[int, int, int]], rows: list[Any]) -> list[Any]:
    """``rows`` with the values of DECIMAL/NUMERIC columns as Decimals (executemany only,
    when such sizes are set)."""
    cols = [i for i, s in enumerate(sizes) if s[0] in _DECIMALS]
    if not cols:
        return rows
    out = []
    for r, row in enumerate(rows):
        values = list(row)
        for i in cols:
            v = values[i] if i < len(values) else None
            if v is not None and not isinstance(v, decimal.Decimal):
                values[i] = _to_decimal(v, r, i)
        out.append(values)
    return out
