"""Connection options: encryption (yes + TrustServerCertificate, strict + ServerCertificate),
login timeout, query timeout, autocommit/transactions seen from a second connection, and
cursor.cancel() from another thread."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import ferrodbc

from sqlserver_support import require_driver, require_peer_binary, synthetic, tdspeer, tname


def roundtrip(conn: ferrodbc.Connection) -> None:
    """Data, parameters and a LOB through the (encrypted) connection."""
    cur = conn.cursor()
    rows = cur.execute("SELECT id, name, val FROM peer.int_nvarchar_float_3000").fetchall()
    assert len(rows) == 3000
    assert tuple(rows[2999]) == synthetic.row("int_nvarchar_float", 2999)
    assert cur.execute("SELECT ?", "param é😀").fetchval() == "param é😀"
    body = cur.execute("SELECT body FROM peer.lob_nvarcharmax_64k_1").fetchval()
    assert body == synthetic.row("lob_nvarcharmax_64k", 0)[1]


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


def test_encrypt_yes_trust_server_certificate(peer_tls_on, driver):
    """--encrypt on: Driver 18 Encrypt=yes;TrustServerCertificate=yes, FreeTDS Encryption=require."""
    cs = tdspeer.conn_str(peer_tls_on, driver)
    assert ("Encrypt=yes" in cs and "TrustServerCertificate=yes" in cs) if driver == "msodbcsql" else "Encryption=require" in cs
    with ferrodbc.connect(cs, autocommit=True, timeout=10) as conn:
        roundtrip(conn)


def test_encrypt_yes_without_trust_rejects_self_signed(peer_tls_on):
    """Driver 18 verifies the certificate when TrustServerCertificate is not set: the peer's
    self-signed certificate is refused with OperationalError (08001)."""
    require_driver("msodbcsql")
    cs = tdspeer.conn_str(peer_tls_on, "msodbcsql", encrypt="yes")
    assert "TrustServerCertificate" not in cs
    with pytest.raises(ferrodbc.OperationalError) as ei:
        ferrodbc.connect(cs, timeout=10)
    assert ei.value.sqlstate == "08001"


def test_encrypt_strict_with_server_certificate(peer_tls_strict):
    """--encrypt strict (TDS 8.0, TLS before prelogin): Driver 18 with Encrypt=strict and
    ServerCertificate=<the peer's PEM>. (msodbcsql only: FreeTDS 1.3 has no strict mode.)"""
    require_driver("msodbcsql")
    cs = tdspeer.conn_str(peer_tls_strict, "msodbcsql")
    assert "Encrypt=strict" in cs and f"ServerCertificate={peer_tls_strict.cert_path}" in cs
    assert peer_tls_strict.cert_path.is_file()
    with ferrodbc.connect(cs, autocommit=True, timeout=10) as conn:
        roundtrip(conn)


def test_encrypt_strict_with_wrong_certificate_fails(peer_tls_strict, peer_tls_on):
    """ServerCertificate pins the certificate: another peer's PEM is refused."""
    require_driver("msodbcsql")
    cs = tdspeer.conn_str(peer_tls_strict, "msodbcsql", ServerCertificate=str(peer_tls_on.cert_path))
    with pytest.raises(ferrodbc.OperationalError):
        ferrodbc.connect(cs, timeout=10)


# --- timeouts ----------------------------------------------------------------------------------

def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_login_timeout_closed_port(driver):
    require_driver(driver)
    port = closed_port()
    if driver == "msodbcsql":
        cs = f"Driver={{{tdspeer.MSODBCSQL}}};Server=127.0.0.1,{port};UID=sa;PWD=x;Encrypt=no"
    else:
        cs = f"Driver={{{tdspeer.FREETDS}}};Server=127.0.0.1;Port={port};UID=sa;PWD=x;TDS_Version=7.4"
    t0 = time.monotonic()
    with pytest.raises(ferrodbc.OperationalError):
        ferrodbc.connect(cs, timeout=2)
    assert time.monotonic() - t0 < 6


def test_login_timeout_silent_server(driver):
    """A server that accepts TCP but never answers the prelogin: the login timeout (2 s) ends it."""
    require_driver(driver)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    port = srv.getsockname()[1]
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                pass

    th = threading.Thread(target=accept, daemon=True)
    th.start()
    try:
        if driver == "msodbcsql":
            cs = f"Driver={{{tdspeer.MSODBCSQL}}};Server=127.0.0.1,{port};UID=sa;PWD=x;Encrypt=no"
        else:
            cs = f"Driver={{{tdspeer.FREETDS}}};Server=127.0.0.1;Port={port};UID=sa;PWD=x;TDS_Version=7.4"
        t0 = time.monotonic()
        with pytest.raises(ferrodbc.OperationalError):
            ferrodbc.connect(cs, timeout=2)
        elapsed = time.monotonic() - t0
        assert 1.0 <= elapsed < 8, elapsed
    finally:
        stop.set()
        th.join(2)
        for s in held:
            s.close()
        srv.close()


def test_query_timeout(conn, driver):
    """conn.timeout = 1 against a 5 s stall: OperationalError (HYT00) after ~1 s; the connection
    stays usable and timeout 0 disables it again."""
    conn.timeout = 1
    assert conn.timeout == 1
    cur = conn.cursor()
    t0 = time.monotonic()
    with pytest.raises(ferrodbc.OperationalError) as ei:
        cur.execute("SELECT * FROM peer.int_nvarchar_10 /* fault:stall=5 */")
        cur.fetchall()
    elapsed = time.monotonic() - t0
    assert ei.value.sqlstate == "HYT00"
    assert 0.8 <= elapsed < 4, elapsed
    conn.timeout = 0
    t0 = time.monotonic()
    rows = conn.cursor().execute("SELECT * FROM peer.int_nvarchar_10 /* fault:stall=1 */").fetchall()
    assert len(rows) == 10 and time.monotonic() - t0 >= 0.9


# --- autocommit and transactions ---------------------------------------------------------------

def count(conn, t) -> int:
    return conn.cursor().execute(f"SELECT COUNT(*) FROM {t}").fetchval()


def test_manual_commit_visible_from_second_connection(connect, driver):
    t = tname()
    connect().cursor().execute(f"CREATE TABLE {t} (x INT)")
    writer = connect(autocommit=False)
    reader = connect()
    assert writer.autocommit is False
    writer.cursor().execute(f"INSERT INTO {t} VALUES (1)")
    assert count(writer, t) == 1  # own uncommitted row
    assert count(reader, t) == 0
    writer.commit()
    assert count(reader, t) == 1
    writer.cursor().execute(f"INSERT INTO {t} VALUES (2)")
    writer.rollback()
    assert count(reader, t) == 1
    assert count(writer, t) == 1
    writer.rollback()


def test_autocommit_on_is_immediately_visible(connect, driver):
    t = tname()
    writer = connect(autocommit=True)
    reader = connect()
    writer.cursor().execute(f"CREATE TABLE {t} (x INT)")
    writer.cursor().execute(f"INSERT INTO {t} VALUES (1)")
    assert count(reader, t) == 1
    writer.rollback()  # nothing to roll back
    assert count(reader, t) == 1


def test_switching_autocommit_on_commits_pending_work(connect, driver):
    """ODBC: turning autocommit on commits the open transaction. Driver 18 does; FreeTDS 1.3 does
    not send anything on the switch (pyodbc through FreeTDS leaves the transaction open), so
    ferrodbc commits explicitly: both drivers behave the same."""
    t = tname()
    connect().cursor().execute(f"CREATE TABLE {t} (x INT)")
    writer = connect(autocommit=False)
    reader = connect()
    writer.cursor().execute(f"INSERT INTO {t} VALUES (1)")
    assert count(reader, t) == 0
    writer.autocommit = True
    assert writer.autocommit is True
    assert count(reader, t) == 1
    writer.autocommit = False
    writer.cursor().execute(f"INSERT INTO {t} VALUES (2)")
    writer.rollback()
    assert count(reader, t) == 1


def test_context_manager_commits_or_rolls_back(connect, driver, connstr):
    t = tname()
    reader = connect()
    reader.cursor().execute(f"CREATE TABLE {t} (x INT)")
    with ferrodbc.connect(connstr) as w:
        w.cursor().execute(f"INSERT INTO {t} VALUES (1)")
    assert count(reader, t) == 1
    with pytest.raises(RuntimeError):
        with ferrodbc.connect(connstr) as w:
            w.cursor().execute(f"INSERT INTO {t} VALUES (2)")
            raise RuntimeError("abort")
    assert count(reader, t) == 1


# --- cancel from another thread ----------------------------------------------------------------

def test_cancel_stalled_execute(request, conn, driver):
    """cancel() while the server has not answered yet (a 5 s stall) interrupts the execute."""
    cur = conn.cursor()
    threading.Timer(0.5, cur.cancel).start()
    t0 = time.monotonic()
    with pytest.raises(ferrodbc.OperationalError) as ei:
        cur.execute("SELECT * FROM peer.int_nvarchar_10 /* fault:stall=5 */")
        cur.fetchall()
    assert time.monotonic() - t0 < 3
    assert ei.value.sqlstate == "HY008"
    assert cur.execute("SELECT 7").fetchval() == 7
    assert conn.cursor().execute("SELECT 8").fetchval() == 8


CANCEL_ROUNDS = 30
CANCEL_PROBE = Path(__file__).with_name("sqlserver_cancel_probe.py")


def test_cancel_big_fetch(connstr, driver):
    """cancel() from another thread 0.3 s into a fetch of peer.mixed_1000000 (fetchall and a
    fetchmany loop, alternating, 30 rounds on one connection) stops it promptly with
    OperationalError HY008 and leaves the connection usable. The rounds run in a child process
    so that a hang fails this test, not the suite."""
    t0 = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, str(CANCEL_PROBE), connstr, str(CANCEL_ROUNDS)],
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as e:
        done = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        pytest.fail(f"cancel rounds hung after {len(done.splitlines())} good rounds ({time.monotonic() - t0:.0f} s)")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rounds = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rounds) == CANCEL_ROUNDS
    for r in rounds:
        assert (r["error"], r["sqlstate"]) == ("OperationalError", "HY008"), r
        assert r["seconds"] < 5, r
        assert r["usable"] is True, r


def test_cancel_idle_cursor_is_harmless(conn, driver):
    cur = conn.cursor()
    cur.cancel()
    assert cur.execute("SELECT 12").fetchval() == 12
    cur.cancel()
    assert cur.execute("SELECT 13").fetchval() == 13


# --- login-only TLS, authentication ------------------------------------------------------------

@pytest.fixture(scope="module")
def peer_tls_off_password():
    """--encrypt off (TLS for the login packet only) and a real password check."""
    require_peer_binary()
    with tdspeer.start_peer(encrypt="off", extra_args=["--password", "s3cret"]) as p:
        yield p


def test_login_only_tls_and_password(peer_tls_off_password, driver):
    """Encrypt=no (Driver 18) / Encryption=request (FreeTDS) against --encrypt off: the login is
    encrypted, the rest is not; the right password connects."""
    require_driver(driver)
    cs = tdspeer.conn_str(peer_tls_off_password, driver, PWD="s3cret")
    with ferrodbc.connect(cs, autocommit=True, timeout=10) as conn:
        roundtrip(conn)


def test_wrong_password_is_login_failed_18456(peer_tls_off_password, driver):
    """A wrong password raises a DatabaseError carrying SQL Server's 18456. DRIVER DIFFERENCE:
    Driver 18 labels it SQLSTATE 28000 (DatabaseError), FreeTDS 42000 (so ProgrammingError),
    followed by 08001."""
    require_driver(driver)
    with pytest.raises(ferrodbc.DatabaseError) as ei:
        ferrodbc.connect(tdspeer.conn_str(peer_tls_off_password, driver, PWD="wrong"), timeout=10)
    e = ei.value
    assert e.native_error == 18456
    assert "Login failed for user 'sa'" in str(e)
    assert e.sqlstate == ("28000" if driver == "msodbcsql" else "42000")
    assert "wrong" not in str(e)  # the password never shows up in the message


def test_output_converters_get_the_raw_bytes(conn, driver):
    """pyodbc-compatible output converters, through SQL Server drivers: the function receives the
    cell's raw bytes (UTF-16LE for nvarchar, little-endian for int); NULL stays None."""
    conn.add_output_converter(ferrodbc.SQL_WVARCHAR, lambda b: ("conv", b))
    conn.add_output_converter(ferrodbc.SQL_INTEGER, lambda b: int.from_bytes(b, "little", signed=True) * 10)
    row = conn.cursor().execute("SELECT N'hé', 5, CAST(NULL AS INT), CAST(-3 AS INT)").fetchone()
    assert tuple(row) == (("conv", "hé".encode("utf-16-le")), 50, None, -30)
    conn.clear_output_converters()
    assert tuple(conn.cursor().execute("SELECT N'hé', 5").fetchone()) == ("hé", 5)


# --- threads -----------------------------------------------------------------------------------

def test_parallel_connections_in_threads(connect, driver):
    """Four threads, one connection each, fetch peer.mixed_20000 concurrently: every result exact."""
    expected = list(synthetic.rows("mixed", 20000))
    conns = [connect() for _ in range(4)]
    results: dict[int, object] = {}

    def work(i):
        try:
            results[i] = [tuple(r) for r in conns[i].cursor().execute("SELECT * FROM peer.mixed_20000").fetchall()] == expected
        except Exception as e:  # noqa: BLE001  (a thread's error is reported by the assert)
            results[i] = e

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == {0: True, 1: True, 2: True, 3: True}


def test_gil_released_while_the_driver_waits(connect, driver):
    """A 3 s server stall in one thread does not block Python work on another connection."""
    slow, fast = connect(), connect()
    done = threading.Event()

    def stall():
        slow.cursor().execute("SELECT * FROM peer.int_nvarchar_10 /* fault:stall=3 */").fetchall()
        done.set()

    th = threading.Thread(target=stall)
    t0 = time.monotonic()
    th.start()
    time.sleep(0.2)
    for _ in range(20):
        assert fast.cursor().execute("SELECT * FROM peer.int_nvarchar_100").fetchall()[99][0] == 99
    elapsed = time.monotonic() - t0
    assert not done.is_set() and elapsed < 2.7, elapsed
    th.join(10)
    assert done.is_set()


@pytest.mark.parametrize("size", [512, 32767])
def test_packet_sizes(connect, driver, size):
    """Tiny and maximal TDS packets: LOBs and rows split across many packets arrive whole."""
    conn = connect(**{("PacketSize" if driver == "msodbcsql" else "packet_size"): size})
    cur = conn.cursor()
    assert [tuple(r) for r in cur.execute("SELECT * FROM peer.lob_nvarcharmax_64k_3").fetchall()] == list(synthetic.rows("lob_nvarcharmax_64k", 3))
    assert [tuple(r) for r in cur.execute("SELECT * FROM peer.mixed_2000").fetchall()] == list(synthetic.rows("mixed", 2000))
    big = "😀é" * 50_000
    assert cur.execute("SELECT ?", big).fetchval() == big


def test_query_timeout_applies_to_existing_cursors(conn, driver):
    cur = conn.cursor()
    assert cur.execute("SELECT 1").fetchval() == 1
    conn.timeout = 1
    t0 = time.monotonic()
    with pytest.raises(ferrodbc.OperationalError) as ei:
        cur.execute("SELECT * FROM peer.int_nvarchar_10 /* fault:stall=4 */").fetchall()
    assert ei.value.sqlstate == "HYT00" and time.monotonic() - t0 < 3.5
    conn.timeout = 0
    assert len(cur.execute("SELECT * FROM peer.int_nvarchar_10").fetchall()) == 10


def test_ci_rule_missing_peer_fails_never_skips(monkeypatch):
    """The suite's own rule: with CI=true a missing peer/driver FAILS the test; locally it skips."""
    from sqlserver_support import missing

    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception):
        missing("the peer is gone")
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception):
        missing("the peer is gone")


@pytest.mark.parametrize("password", ["p;w}d {x} =y", "a=b"], ids=["braced", "plain"])
def test_connect_keyword_quoting(driver, password):
    """connect(cs, PWD=...) braces a value holding ';' (or starting with '{') as {...} with }}
    escaping (the ODBC rule); '=' and '}' alone stay plain, which both drivers read exactly.
    Driver 18 reads braced values. DRIVER DIFFERENCE: FreeTDS 1.3.17 keeps a braced value's
    closing brace (pyodbc with the same braced string fails the same way), so through FreeTDS
    only plain values work. More cases: test_sqlserver_security.py."""
    require_driver(driver)
    require_peer_binary()
    with tdspeer.start_peer(extra_args=["--password", password]) as p:
        base = ";".join(x for x in tdspeer.conn_str(p, driver).split(";") if not x.startswith("PWD="))
        if driver == "freetds" and password != "a=b":
            with pytest.raises(ferrodbc.DatabaseError) as ei:
                ferrodbc.connect(base, PWD=password, timeout=10)
            assert ei.value.native_error == 18456
            return
        with ferrodbc.connect(base, PWD=password, timeout=10) as conn:
            assert conn.cursor().execute("SELECT 1").fetchval() == 1
        with pytest.raises(ferrodbc.DatabaseError) as ei:
            ferrodbc.connect(base, PWD=password + "x", timeout=10)
        assert ei.value.native_error == 18456
