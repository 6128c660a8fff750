"""Microsoft Entra ID access tokens for Azure SQL (``connect(credential=...)``, ``access_token=``
and the ``Authentication=`` modes Driver 18 cannot do itself on Linux).

A token login is ODBC Driver 18's ``SQL_COPT_SS_ACCESS_TOKEN`` (1256) set before connecting: an
``ACCESSTOKEN`` struct, a 4-byte little-endian length then the token as UTF-16LE ("each byte
followed by a zero byte" in Microsoft's description of the ASCII token; pyodbc users pack it by
hand). The driver sends it in LOGIN7's FEDAUTH feature extension; the connection string must then
name no UID, PWD, Authentication or Trusted_Connection (Driver 18 refuses the mix).

Rules (docs/connecting.md, "Azure SQL: Entra ID tokens"):

- ``credential`` is anything with azure-identity's ``TokenCredential`` protocol:
  ``get_token(*scopes) -> AccessToken(token, expires_on)``, asked for ``SCOPE``. Its token is
  cached per credential object and asked again ``REFRESH_MARGIN`` seconds (5 minutes) before
  ``expires_on``, the window azure-core's bearer-token policy refreshes in.
- Pooled sessions are keyed by identity, never by the token: the JWT's ``tid`` + ``oid`` claims
  (read, not verified: the server verifies), else the credential object, else a digest of a bare
  token string. A parked session is only handed to the same identity.
- A token is never put in a repr, a log record or an error message.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import platform
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

from ._native import InterfaceError

#: The scope Azure SQL's tokens are asked for (audience ``https://database.windows.net/``).
SCOPE = "https://database.windows.net/.default"
#: ``SQL_COPT_SS_ACCESS_TOKEN`` (msodbcsql.h).
SQL_COPT_SS_ACCESS_TOKEN = 1256
#: Seconds before ``expires_on`` a cached token is asked for again (azure-core's
#: BearerTokenCredentialPolicy refreshes 300 s ahead; mssql-python takes azure-identity's token).
REFRESH_MARGIN = 300.0

#: ``Authentication=`` modes ODBC Driver 18 does not implement on Linux, done here with the
#: matching azure-identity credential (the class name in ``azure.identity``). Interactive is
#: Driver 18's own on Windows only. ActiveDirectoryPassword, ActiveDirectoryServicePrincipal,
#: ActiveDirectoryMsi and ActiveDirectoryIntegrated are Driver 18's on Linux: passed on unchanged.
AZURE_IDENTITY_MODES = {
    "activedirectorydefault": "DefaultAzureCredential",
    "activedirectorydevicecode": "DeviceCodeCredential",
    "activedirectoryinteractive": "InteractiveBrowserCredential",
}
_EXTRA_HINT = "pip install 'ferrodbc[entra]'"
# Connection-string keywords a token login must not carry (Driver 18 refuses them with a token).
_LOGIN_KEYWORDS = ("uid", "user id", "pwd", "password", "authentication")


def pack_token(token: str) -> bytes:
    """The ``SQL_COPT_SS_ACCESS_TOKEN`` value for ``token``: length, then UTF-16LE."""
    data = token.encode("utf-16-le")
    return len(data).to_bytes(4, "little") + data


def token_claims(token: str) -> dict[str, Any]:
    """The claims of a JWT (its middle part), unverified; ``{}`` when ``token`` is not a JWT."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    try:
        padded = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(padded))
    except (ValueError, TypeError):
        return {}
    return claims if isinstance(claims, dict) else {}


_object_ids: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_object_strong: dict[int, tuple[Any, int]] = {}
_next_object_id = itertools.count(1)
_ids_lock = threading.Lock()


def _object_key(obj: Any) -> int:
    """A number for ``obj`` that no other object ever gets (``id()`` is reused after a free)."""
    with _ids_lock:
        try:
            found = _object_ids.get(obj)
            if found is None:
                found = _object_ids[obj] = next(_next_object_id)
            return found
        except TypeError:  # not weak-referenceable or not hashable: kept alive, by id
            held = _object_strong.get(id(obj))
            if held is None or held[0] is not obj:
                held = _object_strong[id(obj)] = (obj, next(_next_object_id))
            return held[1]


def token_identity(token: str, credential: Any = None) -> str:
    """The pool identity of a token login: ``tid/oid`` of a JWT (``sub`` or ``appid`` when it
    has no ``oid``), else the credential object, else a digest of the token."""
    claims = token_claims(token)
    who = claims.get("oid") or claims.get("sub") or claims.get("appid")
    if isinstance(who, str) and who:
        tid = claims.get("tid")
        return f"{tid if isinstance(tid, str) else ''}/{who}"
    if credential is not None:
        return f"credential#{_object_key(credential)}"
    return "token#" + hashlib.sha256(token.encode()).hexdigest()[:32]


@dataclass
class _Cached:
    token: str = field(repr=False)
    expires_on: float
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class TokenCache:
    """Tokens per credential object, asked again ``margin`` seconds before they expire."""

    def __init__(self, margin: float = REFRESH_MARGIN, clock: Any = time.time) -> None:
        self.margin = margin
        self.clock = clock
        self._entries: dict[int, _Cached] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<ferrodbc.entra.TokenCache {len(self._entries)} credential(s)>"

    def token(self, credential: Any) -> tuple[str, float]:
        key = _object_key(credential)
        with self._lock:
            entry = self._entries.setdefault(key, _Cached("", 0.0))
        # One refresh per credential at a time; other credentials are not held up.
        with entry.lock:
            if not entry.token or entry.expires_on - self.clock() <= self.margin:
                entry.token, entry.expires_on = _ask(credential)
            return entry.token, entry.expires_on

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _ask(credential: Any) -> tuple[str, float]:
    get_token = getattr(credential, "get_token", None)
    if not callable(get_token):
        raise InterfaceError(
            f"credential= needs azure-identity's TokenCredential protocol (get_token(*scopes)); "
            f"a {type(credential).__name__} has no get_token"
        )
    try:
        result = get_token(SCOPE)
    except Exception as e:  # the credential's own failure (network, sign-in, configuration)
        raise InterfaceError(
            f"the credential ({type(credential).__name__}) could not get a token for {SCOPE}: "
            f"{type(e).__name__}: {e}"
        ) from e
    if hasattr(result, "__await__"):
        close = getattr(result, "close", None)
        if callable(close):
            close()
        raise InterfaceError(
            "credential.get_token returned an awaitable (an azure.identity.aio credential): "
            "ferrodbc.connect needs the synchronous credential"
        )
    token = getattr(result, "token", None)
    expires_on = getattr(result, "expires_on", None)
    if not isinstance(token, str) or not token:
        raise InterfaceError("credential.get_token returned no token string (AccessToken.token)")
    if not isinstance(expires_on, (int, float)) or isinstance(expires_on, bool):
        raise InterfaceError("credential.get_token returned no expires_on (AccessToken.expires_on)")
    return token, float(expires_on)


#: The process's token cache (``connect(credential=...)``).
tokens = TokenCache()
# azure-identity credentials made for ``Authentication=`` modes, one per (mode, connection
# target), so their own caches and sign-ins are reused across connects.
_mode_credentials: dict[tuple[str, str], Any] = {}
_mode_lock = threading.Lock()


def credential_for_mode(mode: str, target: str = "") -> Any:
    """azure-identity's credential for an ``Authentication=`` mode of AZURE_IDENTITY_MODES (one
    per mode and ``target``), or InterfaceError naming the extra when it is not installed."""
    class_name = AZURE_IDENTITY_MODES[mode.lower()]
    with _mode_lock:
        found = _mode_credentials.get((mode.lower(), target))
        if found is not None:
            return found
        try:
            import azure.identity as identity
        except ImportError as e:
            raise InterfaceError(
                f"Authentication={mode} needs azure-identity ({class_name}): {_EXTRA_HINT}"
            ) from e
        made = getattr(identity, class_name)()
        _mode_credentials[(mode.lower(), target)] = made
        return made


def split_connection_string(cs: str) -> list[tuple[str, str]]:
    """``[(keyword, raw 'key=value' text)]``: the pairs of an ODBC connection string, braces
    (``{a;b}``, ``}}`` inside) respected."""
    pairs: list[tuple[str, str]] = []
    i, n = 0, len(cs)
    while i < n:
        start = i
        eq = cs.find("=", i)
        if eq < 0:
            rest = cs[i:].strip()
            if rest:
                pairs.append((rest.lower(), rest))
            break
        j = eq + 1
        while j < n and cs[j] == " ":
            j += 1
        if j < n and cs[j] == "{":
            j += 1
            while j < n:
                if cs[j] == "}":
                    if j + 1 < n and cs[j + 1] == "}":
                        j += 2
                        continue
                    j += 1
                    break
                j += 1
        end = cs.find(";", j)
        end = n if end < 0 else end
        text = cs[start:end].strip()
        if text:
            pairs.append((cs[start:eq].strip().lower(), text))
        i = end + 1
    return pairs


def _value(raw: str) -> str:
    v = raw.split("=", 1)[1].strip() if "=" in raw else ""
    if v.startswith("{") and v.endswith("}"):
        v = v[1:-1].replace("}}", "}")
    return v


@dataclass
class Login:
    """What ``connect`` opens: the connection string, the attributes set before connecting (the
    packed token among them: never shown) and the identity pooled sessions are keyed by."""

    connection_string: str
    attrs_before: dict[int, Any] | None = field(default=None, repr=False)
    pool_identity: str | None = None


def resolve(
    connection_string: str,
    credential: Any = None,
    access_token: Any = None,
    attrs_before: dict[int, Any] | None = None,
) -> Login:
    """Turn ``credential=`` / ``access_token=`` / an azure-identity ``Authentication=`` mode into
    Driver 18's token attribute; anything else is passed on unchanged."""
    if credential is not None and access_token is not None:
        raise InterfaceError("pass credential= or access_token=, not both")
    pairs = split_connection_string(connection_string)
    mode = next((_value(raw) for key, raw in pairs if key == "authentication"), "")
    ours = mode.lower() in AZURE_IDENTITY_MODES and not (
        mode.lower() == "activedirectoryinteractive" and platform.system() == "Windows"
    )
    if credential is None and access_token is None:
        if not ours:
            return Login(connection_string, attrs_before)
        server = next((_value(raw) for key, raw in pairs if key in ("server", "address")), "")
        credential = credential_for_mode(mode, server)
    elif mode and not ours:
        raise InterfaceError(
            f"Authentication={mode} and a token (credential= or access_token=) both name a login"
        )
    if attrs_before and SQL_COPT_SS_ACCESS_TOKEN in attrs_before:
        raise InterfaceError(
            "attrs_before already holds SQL_COPT_SS_ACCESS_TOKEN (1256): pass the token once"
        )
    kept = []
    for key, raw in pairs:
        if key in ("uid", "user id", "pwd", "password") and not ours:
            raise InterfaceError(
                f"a token login names no {raw.split('=', 1)[0].strip()} (Driver 18 refuses "
                "UID/PWD with an access token)"
            )
        if key in _LOGIN_KEYWORDS or key in ("trusted_connection", "integrated security"):
            # Driver 18 refuses these with a token; SQLAlchemy's URL without a user adds
            # Trusted_Connection=Yes.
            continue
        kept.append(raw)
    if access_token is not None:
        if not isinstance(access_token, str) or not access_token:
            raise InterfaceError("access_token= must be a non-empty str (the token itself)")
        token = access_token
    else:
        token, _ = tokens.token(credential)
    attrs = dict(attrs_before or {})
    attrs[SQL_COPT_SS_ACCESS_TOKEN] = pack_token(token)
    # Other attributes set before connecting would be inherited by the next user of a parked
    # session: such a session is not pooled at all (pool_identity None).
    identity = None if attrs_before else token_identity(token, credential)
    return Login(";".join(kept), attrs, identity)
