"""mssql-python's parameter styles over ferrodbc's qmark engine: ``?`` with a sequence (or
values as separate arguments), ``%(name)s`` with a dict (pyformat, converted to ``?`` once per
execute; a name may repeat). Placeholders inside quotes, brackets and comments are text."""

from __future__ import annotations

import datetime
import decimal
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from .. import _native

# One token at a time: quoted text, a bracketed name, comments (kept as they are), or a
# placeholder (`%(name)s`, `?`).
_TOKENS = re.compile(
    r"""'(?:[^']|'')*'?|"(?:[^"]|"")*"?|\[(?:[^\]]|\]\])*\]?|--[^\n]*|/\*.*?(?:\*/|$)"""
    r"""|%\((?P<name>[^)]*)\)s|(?P<q>\?)""",
    re.S,
)


@lru_cache(maxsize=512)
def _pyformat(sql: str) -> tuple[str, tuple[str, ...], bool]:
    """(qmark SQL, the parameter names in order, whether unquoted ``?`` appear)."""
    names: list[str] = []
    out: list[str] = []
    last = 0
    qmark = False
    for m in _TOKENS.finditer(sql):
        if m.group("name") is not None:
            out.append(sql[last : m.start()] + "?")
            names.append(m.group("name"))
            last = m.end()
        elif m.group("q") is not None:
            qmark = True
    out.append(sql[last:])
    # `%%` is `%` everywhere, quoted text included (as mssql-python converts it).
    return "".join(out).replace("%%", "%"), tuple(names), qmark


def named_placeholders(sql: str) -> tuple[str, ...]:
    return _pyformat(sql)[1] if "%(" in sql else ()


# A fetched row is a parameter sequence too (ferrodbc's rows and the face's).
_SEQUENCES = (tuple, list, Mapping, _native.Row, _native._ListRow)


def unwrap(parameters: tuple[Any, ...]) -> Any:
    """``execute(sql, (1, 2))``, ``execute(sql, [1, 2])``, ``execute(sql, {...})`` and
    ``execute(sql, 1, 2)`` all mean the same parameters (mssql-python's rule)."""
    if len(parameters) == 1 and isinstance(parameters[0], _SEQUENCES):
        return parameters[0]
    return parameters


def convert(sql: str, params: Any) -> tuple[str, Sequence[Any] | None]:
    """(qmark SQL, positional values) for ferrodbc's execute."""
    if params is None:
        return sql, None
    if isinstance(params, Mapping):
        qsql, names, qmark = _pyformat(sql) if "%(" in sql else (None, (), None)
        if not names:
            # A `%(name)s` in quotes is text: a `?` outside them is still a mismatch.
            if "?" in sql and (qmark if qmark is not None else _pyformat(sql)[2]):
                raise TypeError(
                    "Parameter style mismatch: query uses positional placeholders (?), but dict "
                    "was provided. Use tuple/list for positional parameters. Example: "
                    "cursor.execute(sql, (value1, value2))"
                )
            return sql.replace("%%", "%"), ()
        missing = [n for n in dict.fromkeys(names) if n not in params]
        if missing:
            raise KeyError(
                f"Missing required parameter(s): {', '.join(repr(n) for n in missing)}. "
                f"Query requires: {list(dict.fromkeys(names))}, provided: {list(params)}"
            )
        return qsql, tuple(params[n] for n in names)
    if "%(" in sql and named_placeholders(sql):
        raise TypeError(
            "Parameter style mismatch: query uses named placeholders (%(name)s), but "
            f"{type(params).__name__} was provided. Use dict for named parameters. Example: "
            'cursor.execute(sql, {"param1": value1, "param2": value2})'
        )
    return sql, params


_BIGINT_MIN = -(2**63)
_BIGINT_MAX = 2**63 - 1


def check(params: Sequence[Any]) -> None:
    """mssql-python's refusals before anything reaches the driver (once per execute, on its
    few values): an int outside BIGINT, a non-finite Decimal or one above 38 digits, a time
    with a UTC offset (SQL Server's TIME has none). ValueError, with mssql-python's words."""
    for p in params:
        t = type(p)
        if t is int:
            if not _BIGINT_MIN <= p <= _BIGINT_MAX:
                raise ValueError(f"integer {p} is out of range for SQL BIGINT [-2^63, 2^63-1]")
        elif t is decimal.Decimal:
            _, digits, exponent = p.as_tuple()
            if isinstance(exponent, str):
                raise ValueError("Cannot bind non-finite Decimal (NaN/Infinity) as SQL NUMERIC")
            n = len(digits)
            precision = n + exponent if exponent >= 0 else max(n, -exponent)
            if precision > 38:
                raise ValueError(
                    "Precision of the numeric value is too high. The maximum precision "
                    f"supported by SQL Server is 38, but got {precision}."
                )
        elif t is datetime.time and p.tzinfo is not None:
            raise ValueError("a datetime.time with a UTC offset cannot bind: SQL Server's TIME "
                             "has no offset")
