"""mssql-python's public helpers that programs use: ``sanitize_connection_string`` (secrets
replaced, as mssql-python shows them)."""

from __future__ import annotations

from .connection_string_parser import sanitize_connection_string

__all__ = ["sanitize_connection_string"]
