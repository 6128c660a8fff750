"""Transport: encryption modes, packet sizes, cancel mid-stream, faults, mssql-python."""

import socket
import ssl
import time

import pyodbc
import pytest

import tdspeer
from conftest import require_driver


def _roundtrip(cs):
    cn = pyodbc.connect(cs, timeout=10, autocommit=True)
    try:
        cur = cn.cursor()
        cur.execute("SELECT id, name FROM peer.int_nvarchar_float_3000")
        rows = cur.fetchall()
        assert len(rows) == 3000 and rows[2999][1] == "row 2999 é中"
        cur.execute("SELECT ?", "param")
        assert cur.fetchone()[0] == "param"
    finally:
        cn.close()


@pytest.mark.parametrize("mode", ["notsup", "off", "on", "strict"])
def test_encryption_modes_msodbcsql(mode):
    require_driver("msodbcsql")
    with tdspeer.start_peer(encrypt=mode) as p:
        assert p.cert_path.is_file()
        _roundtrip(tdspeer.conn_str(p, "msodbcsql"))
        if mode == "on":
            # Driver 18 default (Encrypt omitted = mandatory) + TrustServerCertificate.
            cs = tdspeer.conn_str(p, "msodbcsql").replace(";Encrypt=yes", "")
            _roundtrip(cs)


@pytest.mark.parametrize("mode", ["notsup", "off", "on"])
def test_encryption_modes_freetds(mode):
    require_driver("freetds")
    with tdspeer.start_peer(encrypt=mode) as p:
        _roundtrip(tdspeer.conn_str(p, "freetds"))


@pytest.mark.parametrize("size", [512, 4096, 32767])
def test_packet_sizes(peer, driver, size):
    key = "PacketSize" if driver == "msodbcsql" else "packet_size"
    cn = pyodbc.connect(tdspeer.conn_str(peer, driver, **{key: size}), timeout=10, autocommit=True)
    cur = cn.cursor()
    cur.execute("SELECT * FROM peer.lob_nvarcharmax_16k_3")
    rows = cur.fetchall()
    assert [len(r[1]) for r in rows] == [8192] * 3
    cur.execute("SELECT * FROM peer.mixed_2000")
    assert len(cur.fetchall()) == 2000
    cn.close()


def test_cancel_mid_stream(connect):
    cn = connect()
    cur = cn.cursor()
    cur.execute("SELECT * FROM peer.mixed_1000000")
    assert cur.fetchone()[0] == 0
    t0 = time.monotonic()
    cur.close()
    assert time.monotonic() - t0 < 5
    cur = cn.cursor()
    cur.execute("SELECT 3")
    assert cur.fetchone()[0] == 3


def test_fault_drop_connection(connect):
    cur = connect().cursor()
    with pytest.raises(pyodbc.Error):
        cur.execute("SELECT * FROM peer.mixed_100000 /* fault:drop_after=500 */")
        cur.fetchall()


def test_fault_malformed(connect, driver):
    cur = connect().cursor()
    try:
        cur.execute("SELECT * FROM peer.mixed_1000 /* fault:malformed_after=10 */")
        rows = cur.fetchall()
    except pyodbc.Error:
        return
    # FreeTDS skips the unknown token silently and reports the dropped socket as end of data.
    assert driver == "freetds" and len(rows) < 1000


def test_fault_stall_then_rows(connect):
    cur = connect().cursor()
    t0 = time.monotonic()
    cur.execute("SELECT * FROM peer.int_nvarchar_10 /* fault:stall=1 */")
    assert len(cur.fetchall()) == 10
    assert time.monotonic() - t0 >= 0.9


def test_wrong_password_rejected():
    require_driver("msodbcsql")
    with tdspeer.start_peer(extra_args=["--password", "secret"]) as p:
        with pytest.raises(pyodbc.Error) as ei:
            pyodbc.connect(tdspeer.conn_str(p, "msodbcsql"), timeout=5)
        assert "18456" in str(ei.value)
        cn = pyodbc.connect(tdspeer.conn_str(p, "msodbcsql", PWD="secret"), timeout=5)
        cn.close()


def test_garbage_client_gets_disconnected(peer):
    s = socket.create_connection(("127.0.0.1", peer.port), timeout=5)
    s.sendall(b"\x47\x45\x54\x20/ HTTP/1.0\r\n\r\n")
    try:
        assert s.recv(100) == b""  # orderly close…
    except ConnectionResetError:
        pass  # …or a reset, when unread request bytes were still queued: both mean "closed"
    s.close()



def _recv_exact(s: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        assert chunk, "peer closed the connection"
        buf += chunk
    return buf


def _recv_packet(s: socket.socket) -> tuple[int, bytes]:
    hdr = _recv_exact(s, 8)
    return hdr[0], _recv_exact(s, int.from_bytes(hdr[2:4], "big") - 8)


def _send_packet(s: socket.socket, typ: int, payload: bytes) -> None:
    s.sendall(bytes([typ, 1]) + (len(payload) + 8).to_bytes(2, "big") + b"\0\0\1\0" + payload)


def _prelogin(s: socket.socket, client_enc: int) -> int:
    """Sends PRELOGIN (VERSION, ENCRYPTION, terminator); returns the ENCRYPTION byte answered."""
    _send_packet(s, 0x12, bytes([0, 0, 11, 0, 6, 1, 0, 17, 0, 1, 0xFF]) + bytes(6) + bytes([client_enc]))
    typ, reply = _recv_packet(s)
    assert typ == 0x04
    i = 0
    while reply[i] != 1:
        i += 5
    return reply[int.from_bytes(reply[i + 1 : i + 3], "big")]


# (peer mode, client's ENCRYPTION) -> the answer. `off` is SQL Server with a certificate and
# forceencryption=0: OFF -> OFF (login-only TLS), ON/REQ -> ON, NOT_SUP -> NOT_SUP (plaintext;
# tiberius starts TLS when answered OFF). `on` is forceencryption=1. `notsup` has no TLS at all.
PRELOGIN_ANSWERS = [
    ("off", 0, 0),
    ("off", 1, 1),
    ("off", 2, 2),
    ("off", 3, 1),
    ("on", 0, 1),
    ("on", 1, 1),
    ("notsup", 0, 2),
    ("notsup", 1, 2),
]


@pytest.mark.parametrize(("mode", "client_enc", "answer"), PRELOGIN_ANSWERS)
def test_prelogin_encryption_answer(mode, client_enc, answer):
    with tdspeer.start_peer(encrypt=mode) as p, socket.create_connection(("127.0.0.1", p.port), timeout=10) as s:
        assert _prelogin(s, client_enc) == answer


@pytest.mark.parametrize("client_enc", [0, 1], ids=["login-only", "full"])
def test_tls_handshake_travels_in_prelogin_packets(client_enc):
    """SQL Server answers PRELOGIN with a TABULAR RESULT (0x04) packet, then sends its side of
    the TDS 7.x TLS handshake in PRELOGIN (0x12) packets (MS-TDS 3.2.5.2); tiberius (connectorx)
    asserts that type, go-mssqldb rejects any other."""
    with tdspeer.start_peer(encrypt="off") as p, socket.create_connection(("127.0.0.1", p.port), timeout=10) as s:
        assert _prelogin(s, client_enc) == client_enc  # OFF -> OFF, ON -> ON
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
        server_types = []
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                _send_packet(s, 0x12, outgoing.read())
                typ, data = _recv_packet(s)
                server_types.append(typ)
                incoming.write(data)
        assert server_types and set(server_types) == {0x12}, server_types
        assert tls.version() == "TLSv1.2"


def test_mssql_python(peer):
    mssql_python = pytest.importorskip("mssql_python") if not tdspeer.in_ci() else __import__("mssql_python")
    cn = mssql_python.connect(f"Server=127.0.0.1,{peer.port};UID=sa;PWD=x;Encrypt=no;TrustServerCertificate=yes")
    cur = cn.cursor()
    cur.execute("SELECT id, name, val FROM peer.int_nvarchar_float_100")
    rows = cur.fetchall()
    assert len(rows) == 100 and rows[5][1] == "row 5 é中" and rows[3][1] is None
    cur.execute("SELECT ?", 41)
    assert cur.fetchone()[0] == 41
    cn.close()


@pytest.mark.parametrize("mode", ["on", "strict"])
def test_cancel_mid_stream_over_tls(mode, driver):
    if mode == "strict" and driver == "freetds":
        # The client limit: FreeTDS 1.3.17 has no TDS 8 strict mode, so it cannot connect. When
        # this connects, the test below can run for FreeTDS too.
        with tdspeer.start_peer(encrypt=mode) as p, pytest.raises(pyodbc.Error) as ei:
            pyodbc.connect(tdspeer.conn_str(p, driver), timeout=10, autocommit=True)
        assert ei.value.args[0] == "08001", ei.value.args
        return
    with tdspeer.start_peer(encrypt=mode) as p:
        cn = pyodbc.connect(tdspeer.conn_str(p, driver), timeout=10, autocommit=True)
        cur = cn.cursor()
        cur.execute("SELECT * FROM peer.mixed_1000000")
        assert cur.fetchone()[0] == 0
        t0 = time.monotonic()
        cur.close()
        assert time.monotonic() - t0 < 5
        assert cn.cursor().execute("SELECT 3").fetchone()[0] == 3
        cn.close()
