"""mssql-python's public helpers that programs use: ``sanitize_connection_string`` (secrets
replaced, as mssql-python shows them), ``validate_attribute_value`` (``set_attr``'s checks)."""

from __future__ import annotations

import ferrodbc

from .attributes import sanitize_user_input, validate_attribute_value
from .connection_string_parser import sanitize_connection_string


class Settings:
    """mssql-python's module settings (``lowercase``, ``native_uuid``, ``decimal_separator``):
    a view of ferrodbc's, which the engine reads."""

    @property
    def lowercase(self) -> bool:
        return bool(ferrodbc.lowercase)

    @lowercase.setter
    def lowercase(self, value: bool) -> None:
        ferrodbc.lowercase = value

    @property
    def native_uuid(self) -> bool:
        return bool(ferrodbc.native_uuid)

    @native_uuid.setter
    def native_uuid(self, value: bool) -> None:
        ferrodbc.native_uuid = value

    @property
    def decimal_separator(self) -> str:
        return str(ferrodbc.getDecimalSeparator())

    @decimal_separator.setter
    def decimal_separator(self, value: str) -> None:
        ferrodbc.setDecimalSeparator(value)


_SETTINGS = Settings()


def get_settings() -> Settings:
    """The module settings (one object, shared)."""
    return _SETTINGS



__all__ = ["Settings", "get_settings", "sanitize_connection_string", "sanitize_user_input",
           "validate_attribute_value"]
