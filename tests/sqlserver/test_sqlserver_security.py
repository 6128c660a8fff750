"""Security defaults (issue 15, point 7), through both real drivers against the TDS peer:

- parameters are bound, never interpolated: a hostile value arrives as data, and the SQL text
  the driver sends (the peer's --verbose log) holds markers, never the value;
- encryption is passed through unchanged: when the server demands encryption the session is
  encrypted whatever the client asked (a relay on loopback sees only ciphertext), a client that
  requires encryption (Encrypt=yes/mandatory/strict, FreeTDS Encryption=require) never falls
  back to plaintext against a server without TLS, and a certificate that does not match (an
  untrusted issuer, a wrong HostNameInCertificate, another ServerCertificate pin) fails with
  OperationalError;
- passwords and access tokens never appear in reprs, error messages, tracebacks, the pool's
  debug output or DEBUG logging;
- connection-string values with ';', '}', '{' and '=' reach the server exactly (the peer checks
  the password);
- callproc refuses hostile procedure names with ProgrammingError before anything is sent.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import traceback
import uuid

import pytest

import ferrodbc

from sqlserver_support import require_driver, require_peer_binary, tdspeer, tname

HOSTILE = "'; DROP TABLE {victim}; --"


def wait_for_line(peer, start: int, predicate, deadline_s: float = 20.0) -> list[str]:
    """The peer's stderr lines from index `start`, once one of them satisfies `predicate` (the
    drain thread appends them a moment after the peer writes them)."""
    end = time.monotonic() + deadline_s
    while True:
        lines = list(peer.stderr_lines[start:])
        if any(predicate(ln) for ln in lines) or time.monotonic() > end:
            return lines
        time.sleep(0.05)


# --- parameters are bound, never interpolated ---------------------------------------------------

@pytest.fixture(scope="module")
def verbose_peer():
    """A peer that logs every batch and RPC statement text it receives."""
    require_peer_binary()
    with tdspeer.start_peer(extra_args=["--verbose"]) as p:
        yield p


def test_hostile_value_is_bound_as_data_and_never_in_the_sql_text(verbose_peer, driver):
    """`'; DROP TABLE victim; --` as a parameter of execute and executemany comes back as the
    same string, the victim table survives, and the statement text the driver sent (RPC
    sp_executesql/sp_prepexec, logged by the peer) is `... @P1 ...` with no trace of the value."""
    with ferrodbc.connect(tdspeer.conn_str(verbose_peer, driver), autocommit=True, timeout=10) as cn:
        cur = cn.cursor()
        victim = tname("victim")
        cur.execute(f"CREATE TABLE {victim} (id INT)")
        cur.execute(f"INSERT INTO {victim} VALUES (1)")
        hostile = HOSTILE.format(victim=victim)
        marker = f"marker_{uuid.uuid4().hex[:8]}"
        start = len(verbose_peer.stderr_lines)
        assert cur.execute(f"SELECT ? AS {marker}", hostile).fetchval() == hostile
        t = tname()
        cur.execute(f"CREATE TABLE {t} (s NVARCHAR(200))")
        cur.executemany(f"INSERT INTO {t} (s) VALUES (?)", [(hostile,), (hostile + "x",)])
        assert [r[0] for r in cur.execute(f"SELECT s FROM {t} ORDER BY s").fetchall()] == [hostile, hostile + "x"]
        assert cur.execute(f"SELECT COUNT(*) FROM {victim}").fetchval() == 1
    lines = wait_for_line(verbose_peer, start, lambda ln: marker in ln)
    sent = [ln for ln in lines if marker in ln]
    assert sent, f"the peer logged no statement with {marker}: {lines[-10:]}"
    # The statement text carries a parameter marker where the value goes...
    assert all("@P1" in ln or "?" in ln for ln in sent), sent
    # ...and no batch or RPC statement text the peer received holds the hostile text. (The
    # peer's `stmt=` of an sp_execute line is its first text *parameter*: sp_execute carries a
    # prepared handle and the bound values, no statement text; FreeTDS's executemany sends one
    # per row.)
    def statement_text(ln: str) -> bool:
        return not (" rpc sp_execute " in ln or " rpc #12 " in ln)

    assert not [ln for ln in lines if "DROP TABLE" in ln and statement_text(ln)], lines


# --- encryption: passed through, never downgraded -------------------------------------------------

class Relay:
    """A loopback TCP relay in front of the peer that records every byte in both directions."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.seen = bytearray()
        self.lock = threading.Lock()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                with self.lock:
                    self.seen += data
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def saw(self, text: str) -> bool:
        with self.lock:
            return text.encode("utf-16-le") in self.seen

    def close(self) -> None:
        self.server.close()
        for s in self.sockets:
            s.close()


def through_relay(peer, driver: str, relay: Relay, **kw) -> str:
    return tdspeer.conn_str(dataclasses.replace(peer, port=relay.port), driver, **kw)


def secret_round_trip(cs: str) -> tuple[str, str]:
    """Connect, send a marker as SQL text and as a parameter, read both back."""
    in_text, in_param = f"text_{uuid.uuid4().hex}", f"param_{uuid.uuid4().hex}"
    with ferrodbc.connect(cs, autocommit=True, timeout=10, pooling=False) as cn:
        row = cn.cursor().execute(f"SELECT N'{in_text}', ?", in_param).fetchone()
        assert tuple(row) == (in_text, in_param)
    return in_text, in_param


@pytest.fixture(scope="module")
def peer_plain():
    require_peer_binary()
    with tdspeer.start_peer(encrypt="notsup") as p:
        yield p


@pytest.fixture(scope="module")
def peer_tls_on():
    require_peer_binary()
    with tdspeer.start_peer(encrypt="on") as p:
        yield p


@pytest.fixture(scope="module")
def peer_tls_strict():
    require_peer_binary()
    with tdspeer.start_peer(encrypt="strict") as p:
        yield p


def test_relay_sees_plaintext_when_nobody_encrypts(peer_plain, driver):
    """The control for the test below: without TLS the relay does see the query text and the
    parameter, so not seeing them means the session was encrypted."""
    relay = Relay(peer_plain.port)
    try:
        in_text, in_param = secret_round_trip(through_relay(peer_plain, driver, relay))
        assert relay.saw(in_text) and relay.saw(in_param)
    finally:
        relay.close()


# The weakest setting each driver has short of refusing TLS outright: Driver 18 `Encrypt=no`
# (optional); FreeTDS `Encryption=off` and `request`.
WEAK_SETTINGS = {
    "msodbcsql": ["no", "optional"],
    "freetds": ["off", "request"],
}


@pytest.mark.parametrize("weak", [0, 1], ids=["weakest", "weak"])
def test_server_demanding_encryption_is_never_downgraded(peer_tls_on, driver, weak):
    """The peer with --encrypt on answers PRELOGIN with ENCRYPT_ON (force encryption). A client
    asking for less either encrypts the whole session (the relay sees no query text, no
    parameter) or refuses with OperationalError: it never goes on in plaintext."""
    setting = WEAK_SETTINGS[driver][weak]
    relay = Relay(peer_tls_on.port)
    try:
        extra = {"TrustServerCertificate": "yes"} if driver == "msodbcsql" else {}
        cs = through_relay(peer_tls_on, driver, relay, encrypt=setting, **extra)
        try:
            in_text, in_param = secret_round_trip(cs)
        except ferrodbc.OperationalError:
            return  # refused: no plaintext session either
        assert relay.seen, "the relay carried nothing"
        assert not relay.saw(in_text), f"{setting}: query text in plaintext on the wire"
        assert not relay.saw(in_param), f"{setting}: parameter in plaintext on the wire"
    finally:
        relay.close()


def test_untrusted_self_signed_certificate_fails(peer_tls_on):
    """Driver 18, Encrypt=yes;TrustServerCertificate=no (spelled out): the peer's self-signed
    certificate is refused with OperationalError, with or without HostNameInCertificate."""
    require_driver("msodbcsql")
    for extra in ({}, {"HostNameInCertificate": "localhost"}):
        cs = tdspeer.conn_str(peer_tls_on, "msodbcsql", encrypt="yes", TrustServerCertificate="no", **extra)
        with pytest.raises(ferrodbc.OperationalError):
            ferrodbc.connect(cs, timeout=10, pooling=False)


def test_pinned_certificate_mismatch_fails(peer_tls_strict, peer_tls_on):
    """Driver 18, Encrypt=strict: ServerCertificate pins the peer's own PEM (connects); another
    peer's PEM fails with OperationalError."""
    require_driver("msodbcsql")
    ok = tdspeer.conn_str(peer_tls_strict, "msodbcsql")
    with ferrodbc.connect(ok, timeout=10, pooling=False) as cn:
        assert cn.cursor().execute("SELECT 1").fetchval() == 1
    wrong = tdspeer.conn_str(peer_tls_strict, "msodbcsql", ServerCertificate=str(peer_tls_on.cert_path))
    with pytest.raises(ferrodbc.OperationalError):
        ferrodbc.connect(wrong, timeout=10, pooling=False)


def test_encryption_required_by_the_client_is_never_downgraded(peer_plain, driver):
    """A server that refuses TLS (the peer's `--encrypt notsup` answers ENCRYPT_NOT_SUP) with a
    client that requires encryption: an OperationalError, never a plaintext session. Driver 18
    with Encrypt=yes, mandatory and strict (TDS 8: TLS before any TDS byte); FreeTDS with
    Encryption=require (its strict mode cannot connect to anything in 1.3.17)."""
    settings = {"msodbcsql": ["yes", "mandatory", "strict"], "freetds": ["require"]}[driver]
    for setting in settings:
        extra = {"TrustServerCertificate": "yes"} if driver == "msodbcsql" and setting != "strict" else {}
        cs = tdspeer.conn_str(peer_plain, driver, encrypt=setting, **extra)
        with pytest.raises(ferrodbc.OperationalError) as ei:
            ferrodbc.connect(cs, timeout=10, pooling=False)
        assert ei.value.sqlstate == "08001", (setting, str(ei.value))
        if driver == "msodbcsql" and setting != "strict":
            assert "Encryption not supported on SQL Server" in str(ei.value)


def test_strict_trusts_only_the_pinned_certificate(peer_tls_strict):
    """Driver 18, Encrypt=strict: ServerCertificate is an exact pin (the connection is made
    whatever HostNameInCertificate says, and to Server=localhost as to 127.0.0.1), while
    TrustServerCertificate=yes does not switch validation off (strict always validates)."""
    require_driver("msodbcsql")
    pinned = tdspeer.conn_str(peer_tls_strict, "msodbcsql")
    for cs in (pinned + ";HostNameInCertificate=wrong.example", pinned.replace("127.0.0.1", "localhost")):
        with ferrodbc.connect(cs, timeout=10, pooling=False) as cn:
            assert cn.cursor().execute("SELECT 1").fetchval() == 1
    unpinned = ";".join(p for p in pinned.split(";") if not p.startswith("ServerCertificate="))
    with pytest.raises(ferrodbc.OperationalError, match="certificate verify failed"):
        ferrodbc.connect(unpinned + ";TrustServerCertificate=yes", timeout=10, pooling=False)


def test_server_certificate_is_no_pin_in_tds_7_mode(peer_tls_on):
    """Driver 18, Encrypt=yes (TLS inside TDS 7.4): ServerCertificate does not stand in for the
    chain check; the self-signed certificate is still refused, the peer's own PEM or not."""
    require_driver("msodbcsql")
    cs = tdspeer.conn_str(peer_tls_on, "msodbcsql", encrypt="yes", TrustServerCertificate="no", ServerCertificate=str(peer_tls_on.cert_path))
    with pytest.raises(ferrodbc.OperationalError, match="certificate verify failed"):
        ferrodbc.connect(cs, timeout=10, pooling=False)


CONNECT_EACH = r"""
import sys, ferrodbc
for cs in sys.argv[1:]:
    try:
        ferrodbc.connect(cs, timeout=10, pooling=False).close()
        print("ok")
    except ferrodbc.Error as e:
        print(type(e).__name__, str(e).replace(chr(10), " "))
"""


def connect_each_in_child(env_extra: dict, *conn_strs: str) -> list[str]:
    """Connect with each string in a fresh interpreter with `env_extra` set (a driver reads its
    trust store or freetds.conf from the environment when it first needs it, so a child process
    keeps this from leaking into other tests). One line per string: 'ok' or the error."""
    env = dict(os.environ, **env_extra)
    out = subprocess.run([sys.executable, "-c", CONNECT_EACH, *conn_strs], env=env, capture_output=True, text=True, timeout=120)
    lines = out.stdout.splitlines()
    assert len(lines) == len(conn_strs), (out.stdout, out.stderr)
    return lines


def test_wrong_host_name_in_certificate_fails(peer_tls_on):
    """Driver 18, Encrypt=yes;TrustServerCertificate=no, with the peer's certificate in the
    trust store (SSL_CERT_FILE): HostNameInCertificate=localhost (the certificate's name)
    connects, HostNameInCertificate=wrong.example fails with OperationalError naming the
    mismatch. So the host-name check is what refuses it, not an untrusted issuer."""
    require_driver("msodbcsql")
    base = tdspeer.conn_str(peer_tls_on, "msodbcsql", encrypt="yes", TrustServerCertificate="no")
    right, wrong = connect_each_in_child(
        {"SSL_CERT_FILE": str(peer_tls_on.cert_path)},
        base + ";HostNameInCertificate=localhost",
        base + ";HostNameInCertificate=wrong.example",
    )
    assert right == "ok"
    assert wrong.startswith("OperationalError") and "does not match" in wrong, wrong


def test_strict_host_name_in_certificate_with_a_trusted_ca(peer_tls_strict):
    """Driver 18, Encrypt=strict without a pin, the peer's certificate trusted as a CA
    (SSL_CERT_FILE): HostNameInCertificate=localhost (its name) connects, wrong.example fails."""
    require_driver("msodbcsql")
    base = ";".join(p for p in tdspeer.conn_str(peer_tls_strict, "msodbcsql").split(";") if not p.startswith("ServerCertificate="))
    right, wrong = connect_each_in_child(
        {"SSL_CERT_FILE": str(peer_tls_strict.cert_path)},
        base + ";HostNameInCertificate=localhost",
        base + ";HostNameInCertificate=wrong.example",
    )
    assert right == "ok", right
    assert wrong.startswith("OperationalError"), wrong


def test_freetds_certificate_from_another_ca_fails(peer_tls_on, peer_tls_strict):
    """FreeTDS, Encryption=require with `ca file` (freetds.conf, FREETDSCONF): the peer's own
    certificate as CA connects; another peer's certificate as CA fails with OperationalError."""
    require_driver("freetds")
    lines = []
    for ca in (peer_tls_on.cert_path, peer_tls_strict.cert_path):
        conf = peer_tls_on.workdir / f"freetds-{ca.parent.name}.conf"
        conf.write_text(
            f"[peer]\n\thost = 127.0.0.1\n\tport = {peer_tls_on.port}\n\ttds version = 7.4\n"
            f"\tencryption = require\n\tca file = {ca}\n\tcheck certificate hostname = yes\n"
        )
        lines += connect_each_in_child({"FREETDSCONF": str(conf)}, f"Driver={{{tdspeer.FREETDS}}};Servername=peer;UID=sa;PWD=x")
    assert lines[0] == "ok", lines
    assert lines[1].startswith("OperationalError"), lines


# --- secrets never shown ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def password() -> str:
    return f"Pw{uuid.uuid4().hex}"


@pytest.fixture(scope="module")
def peer_password(password):
    require_peer_binary()
    with tdspeer.start_peer(extra_args=["--password", password]) as p:
        yield p


def cs_with_password(peer, driver: str, password: str, **extra) -> str:
    return tdspeer.conn_str(peer, driver, PWD=password, **extra)


def everything_said(e: BaseException) -> str:
    """Every text an exception can show: str, repr, args, the formatted traceback."""
    return "\n".join([str(e), repr(e), repr(e.args), "".join(traceback.format_exception(e))])


def test_repr_never_shows_the_password(peer_password, driver, password):
    cs = cs_with_password(peer_password, driver, password)
    cn = ferrodbc.connect(cs, autocommit=True, timeout=10, pooling=False)
    shown = repr(cn)
    assert "PWD=***" in shown and "UID=sa" in shown and " open>" in shown
    assert password not in shown
    cn.close()
    assert " closed>" in repr(cn) and password not in repr(cn)
    # The keyword form is redacted the same way.
    base = ";".join(p for p in tdspeer.conn_str(peer_password, driver).split(";") if not p.startswith("PWD="))
    with ferrodbc.connect(base, autocommit=True, timeout=10, pooling=False, PWD=password) as cn:
        assert password not in repr(cn) and "PWD=***" in repr(cn)


def test_failed_login_messages_never_show_the_password(peer_password, driver, password):
    """A wrong password, and the right one with a wrong user: neither password appears in the
    exception's message, repr, args or traceback."""
    wrong = f"Wrong{uuid.uuid4().hex}"
    cases = [
        cs_with_password(peer_password, driver, wrong),
        cs_with_password(peer_password, driver, password).replace("UID=sa", "UID=nobody"),
    ]
    for cs in cases:
        with pytest.raises(ferrodbc.DatabaseError) as ei:
            ferrodbc.connect(cs, timeout=10, pooling=False)
        assert ei.value.native_error == 18456
        said = everything_said(ei.value)
        assert wrong not in said and password not in said, said


def test_pool_debug_output_never_shows_the_password(peer_password, password):
    """Driver 18 sessions are pooled: the parked connection's key, as ferrodbc.pool_status()
    prints it, has PWD=*** (and it is there: the entry is checked)."""
    require_driver("msodbcsql")
    ferrodbc.clear_pool()
    cs = cs_with_password(peer_password, "msodbcsql", password)
    ferrodbc.connect(cs, autocommit=True, timeout=10, pooling=True).close()
    try:
        status = ferrodbc.pool_status()
        mine = [(key, n) for key, n in status if f"127.0.0.1,{peer_password.port}" in key]
        assert mine and mine[0][1] == 1, status
        assert "PWD=***" in mine[0][0]
        assert password not in repr(status)
    finally:
        ferrodbc.clear_pool()


def test_debug_logging_never_shows_the_password(peer_password, driver, password, caplog):
    """With every logger at DEBUG, a connect and a failed connect log their connection strings
    redacted (the records exist: checked) and never the password."""
    wrong = f"Wrong{uuid.uuid4().hex}"
    with caplog.at_level(logging.DEBUG):
        ferrodbc.connect(cs_with_password(peer_password, driver, password), timeout=10, pooling=False).close()
        with pytest.raises(ferrodbc.DatabaseError):
            ferrodbc.connect(cs_with_password(peer_password, driver, wrong), timeout=10, pooling=False)
    mine = [r for r in caplog.records if r.name == "ferrodbc"]
    assert any("connect" in r.getMessage() and "PWD=***" in r.getMessage() for r in mine), caplog.text
    assert any("connect failed" in r.getMessage() for r in mine), caplog.text
    assert password not in caplog.text and wrong not in caplog.text


SQL_COPT_SS_ACCESS_TOKEN = 1256


def access_token_struct(token: str) -> bytes:
    """ACCESSTOKEN as Driver 18 takes it: a 4-byte length, then each byte of the token followed
    by a zero byte."""
    expanded = b"".join(bytes([b, 0]) for b in token.encode())
    return len(expanded).to_bytes(4, "little") + expanded


def test_access_token_never_shown(peer_plain):
    """Driver 18 with SQL_COPT_SS_ACCESS_TOKEN (the peer has no Azure AD login, so it fails):
    the token appears in no error text, traceback, repr or log record."""
    require_driver("msodbcsql")
    token = f"eyJ{uuid.uuid4().hex}"
    base = ";".join(
        p for p in tdspeer.conn_str(peer_plain, "msodbcsql").split(";") if not p.startswith(("UID=", "PWD="))
    )
    handler_records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            handler_records.append(record)

    h = Keep(level=logging.DEBUG)
    root = logging.getLogger()
    old = root.level
    root.addHandler(h)
    root.setLevel(logging.DEBUG)
    try:
        try:
            cn = ferrodbc.connect(base, timeout=10, attrs_before={SQL_COPT_SS_ACCESS_TOKEN: access_token_struct(token)})
        except ferrodbc.Error as e:
            said = everything_said(e)
        else:
            said = repr(cn)
            cn.close()
    finally:
        root.removeHandler(h)
        root.setLevel(old)
    logged = "\n".join(r.getMessage() for r in handler_records)
    assert handler_records, "no DEBUG record from connect"
    for text in (said, logged):
        assert token not in text


# --- connection-string values reach the server exactly -------------------------------------------

# Values a plain `KEY=value` carries (both drivers read them exactly) and values that need
# braces (`;`, a leading `{`).
PLAIN_VALUES = ["a=b", "x}y", "a{b", "}{=", " lead", "trail ", "=x"]
BRACED_VALUES = ["p;w}d {x} =y", "{start", "a;b"]


@pytest.mark.parametrize("value", PLAIN_VALUES + BRACED_VALUES)
def test_password_with_grammar_characters_reaches_the_server(driver, value):
    """connect(PWD=value) quotes the value (src/connstr.rs); the peer's password check proves
    the server received exactly `value` (and a near miss is refused). DRIVER DIFFERENCE:
    FreeTDS 1.3.17 keeps the closing brace of a braced value, so through FreeTDS the values that
    need braces fail to log in (18456) rather than log in with something else."""
    require_driver(driver)
    require_peer_binary()
    with tdspeer.start_peer(extra_args=["--password", value]) as p:
        base = ";".join(x for x in tdspeer.conn_str(p, driver).split(";") if not x.startswith("PWD="))
        if driver == "freetds" and value in BRACED_VALUES:
            with pytest.raises(ferrodbc.DatabaseError) as ei:
                ferrodbc.connect(base, PWD=value, timeout=10, pooling=False)
            assert ei.value.native_error == 18456
            return
        with ferrodbc.connect(base, PWD=value, timeout=10, pooling=False) as cn:
            assert cn.cursor().execute("SELECT 1").fetchval() == 1
        for near in (value + "}", "{" + value, value.strip() + "x"):
            if near == value:
                continue
            with pytest.raises(ferrodbc.DatabaseError) as ei:
                ferrodbc.connect(base, PWD=near, timeout=10, pooling=False)
            assert ei.value.native_error == 18456


# --- callproc names -----------------------------------------------------------------------------

@pytest.mark.parametrize(
    "name",
    [
        "p; DROP TABLE t",
        "p--",
        "p /* x */",
        "p(1)",
        "[x}; DROP TABLE t; --]",
        '"x}; DROP TABLE t; --"',
        "[it's]",
        "p\x00",
        "{CALL p}",
        "",
    ],
)
def test_callproc_refuses_hostile_names(conn, name):
    """A name that is not a plain dotted procedure name is a ProgrammingError, raised before
    anything reaches the driver (no statement runs: the connection still works)."""
    with pytest.raises(ferrodbc.ProgrammingError):
        conn.cursor().callproc(name, [1])
    assert conn.cursor().execute("SELECT 1").fetchval() == 1
