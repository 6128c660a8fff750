"""mssql-python's public helpers that programs use: ``sanitize_connection_string`` (secrets
replaced, ferrodbc's redaction)."""

from __future__ import annotations

from .._native import _redact_connection_string


def sanitize_connection_string(conn_str: str) -> str:
    """The connection string with every password and token value shown as ``***``."""
    return _redact_connection_string(conn_str)


__all__ = ["sanitize_connection_string"]
