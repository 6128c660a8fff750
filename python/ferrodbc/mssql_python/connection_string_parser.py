"""mssql-python's connection-string rules: the ODBC grammar (``key=value;``, a value in braces
may hold ``;`` and writes ``}`` as ``}}``), its allow-list of keywords with their synonyms, and
the errors it collects into one ``ConnectionStringParseError`` (incomplete or empty entries,
duplicates, unclosed braces, unknown or reserved keywords). ``connect`` applies them as
mssql-python does, except that ``Driver=`` is accepted (docs/mssql-python.md).

``_ConnectionStringParser`` and ``connection_string_builder._ConnectionStringBuilder`` carry
mssql-python's (private) names because its tests import them; the code is ferrodbc's."""

from __future__ import annotations

from .exceptions import ConnectionStringParseError

#: lower-case keyword -> the name the driver is given (ODBC Driver 18's keywords that
#: mssql-python accepts, with their synonyms).
ALLOWED: dict[str, str] = {
    "server": "Server", "address": "Server", "addr": "Server",
    "uid": "UID", "pwd": "PWD", "authentication": "Authentication",
    "trusted_connection": "Trusted_Connection", "database": "Database",
    "driver": "Driver", "app": "APP",
    "encrypt": "Encrypt", "trustservercertificate": "TrustServerCertificate",
    "trust_server_certificate": "TrustServerCertificate",
    "hostnameincertificate": "HostnameInCertificate", "servercertificate": "ServerCertificate",
    "serverspn": "ServerSPN", "multisubnetfailover": "MultiSubnetFailover",
    "applicationintent": "ApplicationIntent", "connectretrycount": "ConnectRetryCount",
    "connectretryinterval": "ConnectRetryInterval", "keepalive": "KeepAlive",
    "keepaliveinterval": "KeepAliveInterval", "ipaddresspreference": "IpAddressPreference",
    "packet size": "PacketSize", "packetsize": "PacketSize",
}
#: Set by the driver, never by the user (mssql-python's rule; the face lets `Driver` through).
RESERVED = ("Driver", "APP")
SENSITIVE = ("pwd", "password")


def _value(s: str, i: int) -> tuple[str, int]:
    """The value starting at ``s[i]`` (blanks skipped) and the index after it. ValueError for a
    brace never closed."""
    n = len(s)
    while i < n and s[i] in " \t":
        i += 1
    if i < n and s[i] == "{":
        start, i, out = i, i + 1, []
        while i < n:
            if s[i] != "}":
                out.append(s[i])
                i += 1
            elif s[i + 1 : i + 2] == "}":
                out.append("}")
                i += 2
            else:
                return "".join(out), i + 1
        raise ValueError(f"Unclosed braced value starting at position {start}")
    end = s.find(";", i)
    end = n if end < 0 else end
    return s[i:end].rstrip(), end


class _ConnectionStringParser:
    """Parses a connection string into ``{lower-case keyword: value}``, collecting every
    problem; with ``validate_keywords`` also refuses keywords outside the allow-list and the
    reserved ones."""

    def __init__(self, validate_keywords: bool = False) -> None:
        self._validate_keywords = validate_keywords
        self._reserved: tuple[str, ...] = RESERVED

    @classmethod
    def normalize_key(cls, key: str) -> str | None:
        """The driver's name for an allowed keyword (any case), None for any other."""
        return ALLOWED.get(key.strip().lower())

    @staticmethod
    def _normalize_params(params: dict[str, str], warn_rejected: bool = True) -> dict[str, str]:
        """The allowed parameters under the driver's names (the first of synonyms wins),
        without the reserved ones."""
        out: dict[str, str] = {}
        rejected = []
        for key, value in params.items():
            name = ALLOWED.get(key.strip().lower())
            if name is None:
                rejected.append(key)
            elif name not in RESERVED:
                out.setdefault(name, value)
        if rejected and warn_rejected:
            from .helpers import sanitize_user_input
            from .logging import logger

            logger.debug("Connection string parameters not in allow-list and will be ignored: "
                         + ", ".join(sanitize_user_input(k) for k in rejected))
        return out

    def _parse(self, connection_str: str) -> dict[str, str]:
        s = (connection_str or "").strip()
        errors: list[str] = []
        params: dict[str, str] = {}
        i, n = 0, len(s)
        while i < n:
            while i < n and s[i] in " \t;":
                i += 1
            if i >= n:
                break
            eq, semi = s.find("=", i), s.find(";", i)
            if eq < 0 or (0 <= semi < eq):
                text = s[i : semi if semi >= 0 else n].strip()
                if text:
                    errors.append(f"Incomplete specification: keyword '{text}' has no value (missing '=')")
                i = semi if semi >= 0 else n
                continue
            key = s[i:eq].strip().lower()
            if not key:
                errors.append("Empty keyword found (format: =value)")
                i = semi if semi >= 0 else n
                continue
            try:
                value, i = _value(s, eq + 1)
            except ValueError as e:
                errors.append(f"Error parsing value for keyword '{key}': {e}")
                semi = s.find(";", eq + 1)
                i = semi if semi >= 0 else n
                continue
            if not value:
                errors.append(f"Empty value for keyword '{key}' (all connection string parameters must have non-empty values)")
            if key in params:
                errors.append(f"Duplicate keyword '{key}' found")
            else:
                params[key] = value
        if self._validate_keywords:
            names = {k: ALLOWED.get(k) for k in params}
            errors += [f"Reserved keyword '{k}' is controlled by the driver and cannot be specified by the user"
                       for k, v in names.items() if v in self._reserved]
            errors += [f"Unknown keyword '{k}' is not recognized" for k, v in names.items() if v is None]
        if errors:
            raise ConnectionStringParseError(errors)
        return params


def sanitize_connection_string(conn_str: str) -> str:
    """The connection string with password values shown as ``***`` (keywords under the
    driver's names); an unparseable string is replaced whole, so no part of a secret shows."""
    from .connection_string_builder import _ConnectionStringBuilder

    try:
        params = _ConnectionStringParser()._parse(conn_str)
    except ConnectionStringParseError:
        return "<redacted – unparseable connection string>"
    shown = {(ALLOWED.get(k) or k): ("***" if k in SENSITIVE else v) for k, v in params.items()}
    return _ConnectionStringBuilder(shown).build()


__all__ = ["ConnectionStringParseError", "_ConnectionStringParser", "sanitize_connection_string"]
