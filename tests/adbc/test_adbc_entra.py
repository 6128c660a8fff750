"""An Entra ID access token through the ADBC driver (`adbc.ferrodbc.access_token`, sent as Driver
18's SQL_COPT_SS_ACCESS_TOKEN), against the peer's FEDAUTH check: the login is the token's
identity; a refreshed token set on the database applies to its next connection; the token is
never given back."""

from __future__ import annotations

import sys

import adbc_driver_ferrodbc
import adbc_driver_ferrodbc.dbapi
import adbc_driver_manager
import pyarrow as pa
import pytest

from sqlserver_support import ROOT, require_driver, require_peer_binary, tdspeer

sys.path.insert(0, str(ROOT / "eng" / "peers"))
from entra_tokens import fedauth_args, make_token

TOKEN = adbc_driver_ferrodbc.DatabaseOptions.ACCESS_TOKEN.value


@pytest.fixture(scope="module")
def fed_peer():
    require_peer_binary()
    require_driver("msodbcsql")
    with tdspeer.start_peer(extra_args=fedauth_args()) as p:
        yield p


def token_uri(peer) -> str:
    return ";".join(p for p in tdspeer.conn_str(peer, "msodbcsql").split(";") if not p.startswith(("UID=", "PWD=")))


def whoami(conn) -> str:
    with conn.cursor() as cur:
        cur.execute("SELECT SUSER_SNAME()")
        return cur.fetchone()[0]


def test_token_login_and_refresh(fed_peer, library):
    first = make_token(appid="app-1", tid="tenant-1", oid="oid-1")
    with adbc_driver_ferrodbc.dbapi.connect(token_uri(fed_peer), db_kwargs={TOKEN: first}) as conn:
        assert whoami(conn) == "app-1@tenant-1"
        db = conn.adbc_database
        # A refreshed token on the database: its next connection logs in with it.
        db.set_options(**{TOKEN: make_token(appid="app-2", tid="tenant-1", oid="oid-2")})
        with adbc_driver_manager.AdbcConnection(db) as raw, adbc_driver_manager.AdbcStatement(raw) as stmt:
            stmt.set_sql_query("SELECT SUSER_SNAME() AS who")
            stream, _ = stmt.execute_query()
            assert pa.RecordBatchReader.from_stream(stream).read_all()["who"].to_pylist() == ["app-2@tenant-1"]
        with pytest.raises(adbc_driver_manager.Error):
            db.get_option(TOKEN)


def test_refused_token_is_18456_without_the_token(fed_peer, library):
    bad = make_token(appid="app-x", tid="tenant-1", oid="oid-x", lifetime=-60)
    with pytest.raises(adbc_driver_manager.Error) as ei:
        adbc_driver_ferrodbc.dbapi.connect(token_uri(fed_peer), db_kwargs={TOKEN: bad})
    assert ei.value.vendor_code == 18456
    assert bad not in str(ei.value)
