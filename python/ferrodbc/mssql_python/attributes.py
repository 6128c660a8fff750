"""mssql-python's connection-attribute rules: which ``SQL_ATTR_*`` ``set_attr`` takes, which
only before connecting (``attrs_before``), and the value checks, with its words
(``helpers.validate_attribute_value``, ``constants.get_attribute_set_timing``)."""

from __future__ import annotations

import re
from enum import Enum
from typing import Any

from .constants import ConstantsDDBC as _C


class AttributeSetTime(Enum):
    """When a connection attribute may be set."""

    BEFORE_ONLY = 1
    AFTER_ONLY = 2
    EITHER = 3


ATTRIBUTE_SET_TIMING = {
    **{a.value: AttributeSetTime.BEFORE_ONLY
       for a in (_C.SQL_ATTR_LOGIN_TIMEOUT, _C.SQL_ATTR_ODBC_CURSORS, _C.SQL_ATTR_PACKET_SIZE)},
    **{a.value: AttributeSetTime.AFTER_ONLY
       for a in (_C.SQL_ATTR_CONNECTION_DEAD, _C.SQL_ATTR_ENLIST_IN_DTC, _C.SQL_ATTR_TRANSLATE_LIB,
                 _C.SQL_ATTR_TRANSLATE_OPTION)},
    **{a.value: AttributeSetTime.EITHER
       for a in (_C.SQL_ATTR_ACCESS_MODE, _C.SQL_ATTR_ASYNC_DBC_EVENT,
                 _C.SQL_ATTR_ASYNC_DBC_FUNCTIONS_ENABLE, _C.SQL_ATTR_ASYNC_ENABLE,
                 _C.SQL_ATTR_AUTOCOMMIT, _C.SQL_ATTR_CONNECTION_TIMEOUT, _C.SQL_ATTR_CURRENT_CATALOG,
                 _C.SQL_ATTR_QUIET_MODE, _C.SQL_ATTR_TRACE, _C.SQL_ATTR_TRACEFILE,
                 _C.SQL_ATTR_TXN_ISOLATION)},
}


def get_attribute_set_timing(attribute: int) -> AttributeSetTime:
    """When ``attribute`` may be set (an unknown one: after connecting)."""
    return ATTRIBUTE_SET_TIMING.get(attribute, AttributeSetTime.AFTER_ONLY)


# The attributes set_attr takes, and those of them only attrs_before may set.
_SUPPORTED = frozenset(a.value for a in (
    _C.SQL_ATTR_ACCESS_MODE, _C.SQL_ATTR_CONNECTION_TIMEOUT, _C.SQL_ATTR_CURRENT_CATALOG,
    _C.SQL_ATTR_LOGIN_TIMEOUT, _C.SQL_ATTR_PACKET_SIZE, _C.SQL_ATTR_TXN_ISOLATION))
_BEFORE_ONLY = frozenset((_C.SQL_ATTR_LOGIN_TIMEOUT.value, _C.SQL_ATTR_PACKET_SIZE.value))
_MAX_STRING = 8192
_MAX_BINARY = 32768


def sanitize_user_input(user_input: str, max_length: int = 50) -> str:
    """``user_input`` made safe to log: only letters, digits, ``_``, ``-`` and ``.`` kept, cut
    to ``max_length`` characters (then ``...``); ``<invalid>`` when nothing is left,
    ``<non-string>`` for anything not a str. (Public as ``helpers.sanitize_user_input``.)"""
    if not isinstance(user_input, str):
        return "<non-string>"
    kept = re.sub(r"[^\w\-\.]", "", user_input)
    if not kept:
        return "<invalid>"
    return kept[:max_length] + "..." if len(kept) > max_length else kept


def _for_log(value: Any, max_length: int) -> str:
    try:
        text = value if isinstance(value, str) else str(value)
    except (TypeError, ValueError):
        return "<non-string>"
    return sanitize_user_input(text, max_length)


def validate_attribute_value(
    attribute: Any,
    value: Any,
    is_connected: bool = True,
    sanitize_logs: bool = True,
    max_log_length: int = 50,
) -> tuple[bool, str | None, str, str]:
    """``(is_valid, error_message, attribute for a log, value for a log)``."""
    shown_attr = _for_log(attribute, max_log_length) if sanitize_logs else str(attribute)
    shown_val = _for_log(value, max_log_length) if sanitize_logs else str(value)

    def bad(message: str) -> tuple[bool, str | None, str, str]:
        return False, message, shown_attr, shown_val

    if not isinstance(attribute, int):
        return bad(f"Attribute must be an integer, got {type(attribute).__name__}")
    if attribute not in _SUPPORTED:
        return bad(f"Unsupported attribute: {attribute}")
    if is_connected and attribute in _BEFORE_ONLY:
        return bad(f"Attribute {attribute} must be set before connection establishment. "
                   "Use the attrs_before parameter when creating the connection.")
    if isinstance(value, int):
        if value < 0 and attribute != _C.SQL_ATTR_LOGIN_TIMEOUT.value:
            return bad(f"Integer value cannot be negative: {value}")
    elif isinstance(value, str):
        if len(value) > _MAX_STRING:
            return bad(f"String value too large: {len(value)} bytes (max {_MAX_STRING})")
    elif isinstance(value, (bytes, bytearray)):
        if len(value) > _MAX_BINARY:
            return bad(f"Binary value too large: {len(value)} bytes (max {_MAX_BINARY})")
    else:
        return bad(f"Unsupported attribute value type: {type(value).__name__}")
    return True, None, shown_attr, shown_val


__all__ = ["ATTRIBUTE_SET_TIMING", "AttributeSetTime", "get_attribute_set_timing",
           "validate_attribute_value"]
