"""Microsoft Entra ID access tokens (python/ferrodbc/entra.py) through Driver 18 against the
peer's FEDAUTH check (`--fedauth-key`, eng/tds-peer/src/fedauth.rs), with a fake
TokenCredential (no network):

- `connect(credential=...)` / `access_token=` log in as the token's identity (SUSER_SNAME()),
  also in TDS 8 strict mode, and through SQLAlchemy's `connect_args` without event hooks;
- tokens are cached per credential and asked again 5 minutes before they expire, across pooled
  connects; pooled sessions are keyed by identity and never handed to another identity;
- expired, badly signed, unsigned and wrong-audience tokens are refused with 18456;
- `Authentication=ActiveDirectoryDefault` uses azure-identity's credential, or says which extra
  to install; modes Driver 18 does itself are passed on unchanged;
- a token never appears in a repr, error, log record, pool status or connection attribute.
"""

from __future__ import annotations

import logging
import sys
import time
import traceback
import uuid
import warnings
from types import SimpleNamespace

import pytest
from entra_tokens import fedauth_args, make_token  # eng/peers: on sys.path via conftest

import ferrodbc
from ferrodbc import entra

from sqlserver_support import require_driver, require_peer_binary, tdspeer


class FakeCredential:
    """azure-identity's TokenCredential protocol: `get_token(*scopes) -> AccessToken`. Each call
    makes a fresh token for the same identity (as a refresh does), valid `lifetime` seconds."""

    def __init__(self, lifetime: float = 3600, **claims: object) -> None:
        self.claims = claims
        self.lifetime = lifetime
        self.scopes: list[tuple[str, ...]] = []
        self.issued: list[str] = []

    def get_token(self, *scopes: str, **kwargs: object) -> SimpleNamespace:
        self.scopes.append(scopes)
        token = make_token(lifetime=self.lifetime, jti=uuid.uuid4().hex, **self.claims)
        self.issued.append(token)
        return SimpleNamespace(token=token, expires_on=int(time.time() + self.lifetime))


def person(name: str) -> FakeCredential:
    return FakeCredential(upn=f"{name}@contoso.com", tid="tenant-1", oid=f"oid-{name}-{uuid.uuid4().hex[:6]}")


@pytest.fixture(scope="module", params=["notsup", "strict"])
def fed_peer(request):
    require_peer_binary()
    require_driver("msodbcsql")
    with tdspeer.start_peer(encrypt=request.param, extra_args=fedauth_args()) as p:
        yield p


@pytest.fixture(scope="module")
def plain_fed_peer():
    require_peer_binary()
    require_driver("msodbcsql")
    with tdspeer.start_peer(extra_args=fedauth_args()) as p:
        yield p


@pytest.fixture(autouse=True)
def fresh_pool_and_cache():
    ferrodbc.clear_pool()
    entra.tokens.clear()
    yield
    ferrodbc.clear_pool()
    entra.tokens.clear()


def token_cs(peer) -> str:
    return ";".join(p for p in tdspeer.conn_str(peer, "msodbcsql").split(";") if not p.startswith(("UID=", "PWD=")))


def login_and_spid(cn) -> tuple[str, int]:
    row = cn.cursor().execute("SELECT SUSER_SNAME(), @@SPID").fetchone()
    return row[0], row[1]


def test_credential_login_names_the_identity(fed_peer):
    cred = person("ana")
    with ferrodbc.connect(token_cs(fed_peer), credential=cred, timeout=10, pooling=False) as cn:
        assert cn.cursor().execute("SELECT SUSER_SNAME(), ORIGINAL_LOGIN()").fetchone() == ("ana@contoso.com",) * 2
    assert cred.scopes == [("https://database.windows.net/.default",)]


def test_access_token_string_logs_in(fed_peer):
    token = make_token(appid="app-7", tid="tenant-2", oid="oid-app-7")
    with ferrodbc.connect(token_cs(fed_peer), access_token=token, timeout=10, pooling=False) as cn:
        assert cn.cursor().execute("SELECT SUSER_SNAME()").fetchval() == "app-7@tenant-2"


def test_token_is_cached_and_refreshed_five_minutes_before_expiry(plain_fed_peer, monkeypatch):
    """A token valid for 10 minutes serves every connect until 5 minutes before it expires;
    then the credential is asked again, and the pooled session of the same identity is reused
    (the key is the identity, not the token that changed)."""
    clock = [time.time()]
    monkeypatch.setattr(entra.tokens, "clock", lambda: clock[0])
    cred = FakeCredential(lifetime=600, upn="ana@contoso.com", tid="tenant-1", oid="oid-ana")
    cs = token_cs(plain_fed_peer)
    spids = []
    for _ in range(3):
        cn = ferrodbc.connect(cs, credential=cred, timeout=10)
        spids.append(login_and_spid(cn))
        cn.close()
    assert len(cred.issued) == 1, "the cached token was asked for again"
    clock[0] += 299  # 301 s left: still served from the cache
    ferrodbc.connect(cs, credential=cred, timeout=10).close()
    assert len(cred.issued) == 1
    clock[0] += 2  # 299 s left: inside the 5-minute window
    cn = ferrodbc.connect(cs, credential=cred, timeout=10)
    spids.append(login_and_spid(cn))
    cn.close()
    assert len(cred.issued) == 2, "the token was not refreshed 5 minutes before expiry"
    assert cred.issued[0] != cred.issued[1]
    assert len(set(spids)) == 1, f"the pooled session was not reused across the refresh: {spids}"
    assert spids[0][0] == "ana@contoso.com"


def test_two_identities_never_share_a_pooled_session(plain_fed_peer):
    cs = token_cs(plain_fed_peer)
    ana, bob = person("ana"), person("bob")
    first = ferrodbc.connect(cs, credential=ana, timeout=10)
    ana_login = login_and_spid(first)
    first.close()  # parked under ana's identity
    assert [n for key, n in ferrodbc.pool_status() if "Identity=" in key] == [1]
    for _ in range(2):
        cn = ferrodbc.connect(cs, credential=bob, timeout=10)
        login, spid = login_and_spid(cn)
        assert login == "bob@contoso.com" and spid != ana_login[1]
        cn.close()
    again = ferrodbc.connect(cs, credential=ana, timeout=10)
    assert login_and_spid(again) == ana_login
    again.close()
    # A token string of another identity with the same connection string: not ana's session.
    other = ferrodbc.connect(cs, access_token=make_token(upn="eve@contoso.com", tid="tenant-1", oid="oid-eve"), timeout=10)
    assert login_and_spid(other)[0] == "eve@contoso.com" and login_and_spid(other)[1] != ana_login[1]
    other.close()


@pytest.mark.parametrize(
    "claims, message",
    [
        ({"lifetime": -120}, "Token is expired."),
        ({"key": b"not the peer's key"}, "Incorrect or invalid token."),
        ({"alg": "none"}, "Incorrect or invalid token."),
        ({"aud": "https://management.azure.com/"}, "Incorrect or invalid token."),
    ],
    ids=["expired", "bad-signature", "unsigned", "wrong-audience"],
)
def test_refused_tokens_raise_18456_without_the_token(fed_peer, claims, message, caplog):
    token = make_token(upn="ana@contoso.com", tid="t", oid="o", **claims)
    with caplog.at_level(logging.DEBUG, logger="ferrodbc"):
        with pytest.raises(ferrodbc.DatabaseError) as ei:
            ferrodbc.connect(token_cs(fed_peer), access_token=token, timeout=10)
    err = ei.value
    assert err.native_error == 18456
    assert "Login failed for user '<token-identified principal>'." in str(err) and message in str(err)
    said = "\n".join([str(err), repr(err), repr(err.args), repr(err.diagnostics), "".join(traceback.format_exception(err))])
    assert token not in said
    assert caplog.records and token not in caplog.text
    assert ferrodbc.pool_status() == []


def test_token_never_shown(plain_fed_peer, caplog):
    """Every place a token could leak: the connection's repr and attributes, the pool's status,
    DEBUG logging (all loggers), a failed statement's error, the resolved login's repr."""
    cred = person("ana")
    with caplog.at_level(logging.DEBUG):
        cn = ferrodbc.connect(token_cs(plain_fed_peer), credential=cred, timeout=10)
        with pytest.raises(ferrodbc.Error) as ei:
            cn.cursor().execute("SELECT * FROM no_such_table_here")
        shown = [repr(cn), str(ferrodbc.pool_status()), str(ei.value), repr(ei.value), repr(entra.tokens)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated pyodbc attributes warn when read
            for name in dir(cn):
                if not name.startswith("__"):
                    try:
                        shown.append(repr(getattr(cn, name)))
                    except ferrodbc.Error:
                        pass
        cn.close()
        shown.append(str(ferrodbc.pool_status()))
        shown.append(repr(entra.resolve(token_cs(plain_fed_peer), credential=cred)))
    token = cred.issued[0]
    assert len(cred.issued) == 1
    assert [r for r in caplog.records if r.name == "ferrodbc"], "no DEBUG record from connect"
    for text in [*shown, caplog.text]:
        assert token not in text
        assert token.split(".")[2] not in text  # not even its signature


def test_sqlalchemy_connect_args_credential(plain_fed_peer):
    sqlalchemy = pytest.importorskip("sqlalchemy")
    cred = person("ana")
    url = f"mssql+ferrodbc://@127.0.0.1:{plain_fed_peer.port}/master?driver=ODBC+Driver+18+for+SQL+Server&Encrypt=no"
    engine = sqlalchemy.create_engine(url, connect_args={"credential": cred})
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT SUSER_SNAME()").scalar() == "ana@contoso.com"
    finally:
        engine.dispose()
    assert len(cred.issued) == 1


def test_active_directory_default_uses_azure_identity(plain_fed_peer, monkeypatch):
    """Authentication=ActiveDirectoryDefault: azure-identity's DefaultAzureCredential (replaced
    by the fake: no network) gives the token; the keyword is not passed to Driver 18."""
    identity = pytest.importorskip("azure.identity")
    made: list[FakeCredential] = []

    def fake_default(**kwargs: object) -> FakeCredential:
        made.append(person("default"))
        return made[-1]

    monkeypatch.setattr(identity, "DefaultAzureCredential", fake_default)
    monkeypatch.setattr(entra, "_mode_credentials", {})
    cs = token_cs(plain_fed_peer) + ";Authentication=ActiveDirectoryDefault"
    for _ in range(2):
        with ferrodbc.connect(cs, timeout=10, pooling=False) as cn:
            assert cn.cursor().execute("SELECT SUSER_SNAME()").fetchval() == "default@contoso.com"
            assert "Authentication" not in repr(cn)
    assert len(made) == 1 and len(made[0].issued) == 1  # one credential, its token cached


def test_active_directory_default_without_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "azure.identity", None)  # import fails as if not installed
    monkeypatch.setattr(entra, "_mode_credentials", {})
    for mode in ("ActiveDirectoryDefault", "ActiveDirectoryDeviceCode"):
        with pytest.raises(ferrodbc.InterfaceError, match=r"ferrodbc\[entra\]"):
            ferrodbc.connect(f"Driver={{{tdspeer.MSODBCSQL}}};Server=127.0.0.1,1;Authentication={mode}", timeout=1)


@pytest.mark.parametrize(
    "mode",
    ["ActiveDirectoryMsi", "ActiveDirectoryServicePrincipal", "ActiveDirectoryPassword", "ActiveDirectoryIntegrated", "SqlPassword"],
)
def test_driver_modes_pass_through_unchanged(mode):
    cs = f"Driver={{{tdspeer.MSODBCSQL}}};Server=tcp:x.database.windows.net,1433;UID=u;PWD={{p;w}};Authentication={mode}"
    login = entra.resolve(cs)
    assert login.connection_string == cs and login.attrs_before is None and login.pool_identity is None


def test_token_and_password_together_is_refused():
    cs = f"Driver={{{tdspeer.MSODBCSQL}}};Server=127.0.0.1,1;UID=sa;PWD=x"
    with pytest.raises(ferrodbc.InterfaceError, match="UID"):
        ferrodbc.connect(cs, access_token=make_token(oid="o"))
    with pytest.raises(ferrodbc.InterfaceError, match="not both"):
        ferrodbc.connect(cs, access_token="t", credential=person("x"))
    with pytest.raises(ferrodbc.InterfaceError, match="get_token"):
        ferrodbc.connect(f"Driver={{{tdspeer.MSODBCSQL}}};Server=127.0.0.1,1", credential=object())


def test_pack_and_identity_rules():
    token = make_token(upn="a@b", tid="T", oid="O")
    packed = entra.pack_token(token)
    assert packed[:4] == (2 * len(token)).to_bytes(4, "little") and packed[4:] == token.encode("utf-16-le")
    assert entra.token_identity(token) == "T/O"
    assert entra.token_identity(make_token(upn="a@b", tid="T", oid="O", lifetime=5)) == "T/O"  # a refresh
    cred = object()
    assert entra.token_identity("opaque", cred) == entra.token_identity("other", cred) != entra.token_identity("opaque", object())
    assert entra.token_identity("opaque").startswith("token#") and "opaque" not in entra.token_identity("opaque")
