"""FEDAUTH (LOGIN7 feature extension 0x02, SECURITYTOKEN) through Driver 18's
SQL_COPT_SS_ACCESS_TOKEN, against the peer's `--fedauth-key`, and the transient-fault switches
(`--fail-logins`, `fault:transient=`) through pyodbc, so the peer is proven apart from ferrodbc.
"""

import time
import uuid

import pyodbc
import pytest
from entra_tokens import SQL_COPT_SS_ACCESS_TOKEN, fedauth_args, make_token, pack_token

import tdspeer  # eng/peers: on sys.path via conftest

MODES = ["notsup", "on", "strict"]



@pytest.fixture(scope="module", params=MODES)
def fed_peer(request, msodbcsql):
    with tdspeer.start_peer(encrypt=request.param, extra_args=fedauth_args()) as p:
        yield p


def token_conn_str(peer) -> str:
    """Driver 18's string for `peer` without UID/PWD (a token login names no user)."""
    return ";".join(p for p in tdspeer.conn_str(peer, "msodbcsql").split(";") if not p.startswith(("UID=", "PWD=")))


def connect_with(peer, token: str):
    return pyodbc.connect(token_conn_str(peer), timeout=10, autocommit=True, attrs_before={SQL_COPT_SS_ACCESS_TOKEN: pack_token(token)})


def test_token_login_names_the_identity(fed_peer):
    """A valid token logs in (plaintext, TLS 1.2 and TDS 8 strict) and the session's login is
    the token's UPN; an application's token (no UPN) is `appid@tid`."""
    cn = connect_with(fed_peer, make_token(upn="ana@contoso.com", oid=str(uuid.uuid4()), tid="t1"))
    row = cn.cursor().execute("SELECT SUSER_SNAME(), ORIGINAL_LOGIN(), SYSTEM_USER, SUSER_NAME()").fetchone()
    assert list(row) == ["ana@contoso.com"] * 4
    cn.close()
    app = connect_with(fed_peer, make_token(appid="11111111-2222", tid="tenant-9", oid="o"))
    assert app.cursor().execute("SELECT SUSER_SNAME()").fetchval() == "11111111-2222@tenant-9"
    app.close()


@pytest.mark.parametrize(
    "token, message",
    [
        (lambda: make_token(lifetime=-60, upn="a@b"), "Token is expired."),
        (lambda: make_token(key=b"another key", upn="a@b"), "Incorrect or invalid token."),
        (lambda: make_token(alg="none", upn="a@b"), "Incorrect or invalid token."),
        (lambda: make_token(aud="https://management.azure.com/", upn="a@b"), "Incorrect or invalid token."),
        (lambda: "not-a-jwt", "Incorrect or invalid token."),
    ],
    ids=["expired", "bad-signature", "unsigned", "wrong-audience", "garbage"],
)
def test_bad_tokens_are_refused_with_18456(fed_peer, token, message):
    with pytest.raises(pyodbc.Error) as ei:
        connect_with(fed_peer, token())
    text = str(ei.value)
    assert "18456" in text and "Login failed for user '<token-identified principal>'." in text, text
    assert message in text, text


def test_peer_without_a_key_refuses_tokens(msodbcsql):
    with tdspeer.start_peer() as p:
        with pytest.raises(pyodbc.Error) as ei:
            connect_with(p, make_token(upn="a@b"))
    assert "18456" in str(ei.value)


def test_sql_login_still_answers_sa(peer, msodbcsql):
    cn = pyodbc.connect(tdspeer.conn_str(peer, "msodbcsql"), timeout=10, autocommit=True)
    assert tuple(cn.cursor().execute("SELECT SUSER_SNAME(), SYSTEM_USER").fetchone()) == ("sa", "sa")
    cn.close()


def test_fail_logins_refuses_the_first_n_logins(msodbcsql):
    """--fail-logins 40613:2: the first two logins get Azure SQL's 40613, the third logs in."""
    with tdspeer.start_peer(extra_args=["--fail-logins", "40613:2"]) as p:
        cs = tdspeer.conn_str(p, "msodbcsql")
        for _ in range(2):
            with pytest.raises(pyodbc.Error) as ei:
                pyodbc.connect(cs, timeout=10)
            assert "40613" in str(ei.value) and "is not currently available" in str(ei.value)
        pyodbc.connect(cs, timeout=10).close()


def test_statement_fault_answers_the_first_n_runs(peer, msodbcsql):
    """`fault:transient=49918 fault:times=2`: the first two runs of that statement text fail
    with 49918 (counted across sessions), the third runs; the session survives (class 16)."""
    cn = pyodbc.connect(tdspeer.conn_str(peer, "msodbcsql"), timeout=10, autocommit=True)
    sql = f"SELECT 7 /* {uuid.uuid4().hex} fault:transient=49918 fault:times=2 */"
    for _ in range(2):
        with pytest.raises(pyodbc.Error) as ei:
            cn.cursor().execute(sql)
        assert "(49918)" in str(ei.value), str(ei.value)
    assert cn.cursor().execute(sql).fetchval() == 7
    cn.close()


def test_class_20_fault_ends_the_session(peer, msodbcsql):
    """40501 (class 20): the error, then the session is gone; the next session runs the text."""
    cs = tdspeer.conn_str(peer, "msodbcsql")
    cn = pyodbc.connect(cs, timeout=10, autocommit=True)
    sql = f"SELECT 7 /* {uuid.uuid4().hex} fault:transient=40501 */"
    with pytest.raises(pyodbc.Error) as ei:
        cn.cursor().execute(sql)
    assert "(40501)" in str(ei.value) and "The service is currently busy" in str(ei.value)
    with pytest.raises(pyodbc.Error):
        cn.cursor().execute("SELECT 1").fetchall()
    again = pyodbc.connect(cs, timeout=10, autocommit=True)
    assert again.cursor().execute(sql).fetchval() == 7
    again.close()


def test_40197_drops_the_connection_and_rolls_back(peer, msodbcsql):
    table = f"t40197_{uuid.uuid4().hex[:8]}"
    cs = tdspeer.conn_str(peer, "msodbcsql")
    setup = pyodbc.connect(cs, timeout=10, autocommit=True)
    setup.cursor().execute(f"CREATE TABLE {table} (id int)")
    cn = pyodbc.connect(cs, timeout=10, autocommit=False)
    cur = cn.cursor()
    cur.execute(f"INSERT INTO {table} VALUES (1)")
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"SELECT 1 /* fault:transient=40197 {table} */")
    assert "40197" in str(ei.value)
    with pytest.raises(pyodbc.Error):
        cur.execute("SELECT 1").fetchall()
    time.sleep(0.2)
    assert setup.cursor().execute(f"SELECT COUNT(*) FROM {table}").fetchval() == 0
    setup.close()
