"""Test access tokens for the TDS peer's FEDAUTH support (eng/tds-peer/src/fedauth.rs).

The peer started with ``--fedauth-key HEX`` accepts HS256 JWTs signed with that key whose
``aud`` is Azure SQL's (``https://database.windows.net/``) and whose ``exp`` is in the future, as
Azure SQL accepts Entra ID tokens. ``make_token`` builds one (or a broken one, for refusals);
``pack_token`` is the ``SQL_COPT_SS_ACCESS_TOKEN`` (1256) value Driver 18 takes for it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

#: The key tests sign with (``start_peer(extra_args=fedauth_args())``).
TEST_KEY = bytes.fromhex("7e57c0ffee0123456789abcdef0fedcba98765432100112233445566778899aa")
AUDIENCE = "https://database.windows.net/"
SQL_COPT_SS_ACCESS_TOKEN = 1256


def fedauth_args(key: bytes = TEST_KEY) -> list[str]:
    """The peer's command-line switch that makes it check tokens signed with ``key``."""
    return ["--fedauth-key", key.hex()]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_token(
    key: bytes = TEST_KEY,
    alg: str = "HS256",
    lifetime: float = 3600,
    **claims: object,
) -> str:
    """A JWT with ``aud`` = Azure SQL's and ``exp`` = now + ``lifetime`` unless ``claims`` says
    otherwise; ``alg="none"`` makes an unsigned one."""
    body = {"aud": AUDIENCE, "exp": int(time.time() + lifetime), **claims}
    head = _b64(json.dumps({"alg": alg, "typ": "JWT"}).encode())
    payload = _b64(json.dumps(body).encode())
    signing_input = f"{head}.{payload}".encode()
    sig = b"" if alg == "none" else hmac.new(key, signing_input, hashlib.sha256).digest()
    return f"{head}.{payload}.{_b64(sig)}"


def pack_token(token: str) -> bytes:
    """ACCESSTOKEN: a 4-byte little-endian length, then the token as UTF-16LE."""
    data = token.encode("utf-16-le")
    return len(data).to_bytes(4, "little") + data
