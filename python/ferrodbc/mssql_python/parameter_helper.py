"""mssql-python's parameter helpers under their names (``mssql_python.parameter_helper``),
over the face's converter (params.py): programs and tests call them to see what a statement
will be sent as. ``convert_pyformat_to_qmark`` leaves ``%(name)s`` inside quotes, brackets
and comments as text (docs/mssql-python.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import params

_CLOSERS = {"'": "'", '"': '"', "[": "]"}


def _skip_quoted_context(sql: str, i: int, length: int) -> int:
    """The position after the comment, string literal or quoted identifier starting at ``i``;
    -1 when none starts there. Block comments nest, a doubled closer is part of the text."""
    ch = sql[i]
    nxt = sql[i + 1] if i + 1 < length else ""
    if ch == "-" and nxt == "-":
        end = sql.find("\n", i + 2)
        return length if end < 0 else end
    if ch == "/" and nxt == "*":
        depth, j = 1, i + 2
        while j < length and depth:
            pair = sql[j : j + 2]
            if pair == "/*":
                depth, j = depth + 1, j + 2
            elif pair == "*/":
                depth, j = depth - 1, j + 2
            else:
                j += 1
        return min(j, length)
    close = _CLOSERS.get(ch)
    if close is None:
        return -1
    j = i + 1
    while j < length:
        if sql[j] == close:
            if j + 1 < length and sql[j + 1] == close:
                j += 2
                continue
            break
        j += 1
    return min(j + 1, length)


def _has_unquoted_question_marks(sql: str) -> bool:
    """Whether a ``?`` appears outside quotes, brackets and comments."""
    i, n = 0, len(sql)
    while i < n:
        skip = _skip_quoted_context(sql, i, n)
        if skip >= 0:
            i = skip
            continue
        if sql[i] == "?":
            return True
        i += 1
    return False


def parse_pyformat_params(sql: str) -> list[str]:
    """The ``%(name)s`` names outside quotes, brackets and comments, in order (repeats kept)."""
    return list(params.named_placeholders(sql))


def convert_pyformat_to_qmark(sql: str, param_dict: Mapping[str, Any]) -> tuple[str, tuple[Any, ...]]:
    """``(sql with ? for each %(name)s, the values in order)``; KeyError for a missing name."""
    if not isinstance(param_dict, Mapping):
        raise TypeError(f"param_dict must be a dict, not {type(param_dict).__name__}")
    qsql, values = params.convert(sql, param_dict)
    return qsql, tuple(values or ())


def detect_and_convert_parameters(sql: str, parameters: Any) -> tuple[str, Any]:
    """``(sql, parameters)`` in qmark form: a dict converts, a sequence passes through; a
    mismatch with the placeholders is TypeError."""
    if parameters is None:
        return sql, None
    if not isinstance(parameters, (tuple, list, Mapping)):
        raise TypeError(
            f"Parameters must be tuple, list, dict, or None, got {type(parameters).__name__}"
        )
    return params.convert(sql, parameters)


__all__ = ["convert_pyformat_to_qmark", "detect_and_convert_parameters", "parse_pyformat_params"]
