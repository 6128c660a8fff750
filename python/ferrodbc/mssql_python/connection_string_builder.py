"""The connection string from ``{keyword: value}``: ``Driver`` first, the others sorted, a value
in braces (``}`` doubled) when it holds ``;``, ``{``, ``}``, ``=`` or a space (mssql-python's
layout; its private name, which its tests import)."""

from __future__ import annotations


class _ConnectionStringBuilder:
    def __init__(self, initial_params: dict[str, str] | None = None) -> None:
        self._params: dict[str, str] = dict(initial_params or {})

    def add_param(self, key: str, value: object) -> _ConnectionStringBuilder:
        self._params[key] = str(value)
        return self

    def build(self) -> str:
        keys = sorted(self._params, key=lambda k: (k != "Driver", k))
        return ";".join(f"{k}={self._escape_value(self._params[k])}" for k in keys)

    def _escape_value(self, value: str) -> str:
        if value and any(c in value for c in ";{}= "):
            return "{" + value.replace("}", "}}") + "}"
        return value


__all__ = ["_ConnectionStringBuilder"]
