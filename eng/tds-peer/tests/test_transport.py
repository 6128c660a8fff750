"""Transport: encryption modes, packet sizes, cancel mid-stream, faults, mssql-python."""

import socket
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
        pytest.skip("FreeTDS 1.3.17 cannot connect in TDS 8 strict mode")
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
