"""A bare TDS client for the tests that need bytes no driver sends: PRELOGIN, LOGIN7 (sa, the
peer's default empty password, TDS 7.4), SQL batches and other messages, whole replies."""

import socket


def packet(typ: int, payload: bytes, last: bool = True) -> bytes:
    return bytes([typ, 1 if last else 0]) + (len(payload) + 8).to_bytes(2, "big") + b"\0\0\1\0" + payload


def message(s: socket.socket) -> bytes:
    """One whole TDS message's payload."""
    out = b""
    while True:
        hdr = b""
        while len(hdr) < 8:
            chunk = s.recv(8 - len(hdr))
            # A closed connection must fail the test, not spin here for ever.
            assert chunk, "peer closed the connection"
            hdr += chunk
        n = int.from_bytes(hdr[2:4], "big") - 8
        body = b""
        while len(body) < n:
            chunk = s.recv(n - len(body))
            assert chunk, "peer closed the connection"
            body += chunk
        out += body
        if hdr[1] & 1:
            return out


def login7(app: str = "rawtds") -> bytes:
    """LOGIN7 for user sa, empty password (the peer's default), TDS 7.4."""
    fields = ["raw", "sa", "", app, "127.0.0.1", "", app, "", ""]
    data, offsets, off = b"", b"", 94
    for f in fields:
        b = f.encode("utf-16-le")
        offsets += off.to_bytes(2, "little") + len(f).to_bytes(2, "little")
        off += len(b)
        data += b
    head = (0x74000004).to_bytes(4, "big") + (4096).to_bytes(4, "little") + bytes(12) + bytes([0xE0, 3, 0, 0]) + bytes(8)
    body = head + offsets + bytes(6) + bytes(16) + data
    return (len(body) + 4).to_bytes(4, "little") + body


def connect(port: int, app: str = "rawtds") -> socket.socket:
    """A logged-in plaintext session (PRELOGIN answered NOT_SUP)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(packet(0x12, bytes([0, 0, 11, 0, 6, 1, 0, 17, 0, 1, 0xFF]) + bytes(6) + bytes([2])))
    message(s)
    s.sendall(packet(0x10, login7(app)))
    assert 0xAD in message(s)  # LOGINACK
    return s


def sql_batch(sql: str) -> bytes:
    """A SQL batch payload: ALL_HEADERS (transaction descriptor, no transaction) + the text."""
    headers = (22).to_bytes(4, "little") + (18).to_bytes(4, "little") + (2).to_bytes(2, "little") + bytes(8) + (1).to_bytes(4, "little")
    return headers + sql.encode("utf-16-le")


def errors(msg: bytes) -> list[tuple[int, int, int, str]]:
    """The ERROR tokens (0xAA) of a reply with no result set: (number, class, state, text)."""
    out, p = [], 0
    while p < len(msg):
        tok = msg[p]
        if tok in (0xAA, 0xAB, 0xE3):  # ERROR, INFO, ENVCHANGE: u16 length
            n = int.from_bytes(msg[p + 1:p + 3], "little")
            body = msg[p + 3:p + 3 + n]
            if tok == 0xAA:
                number = int.from_bytes(body[0:4], "little")
                state, cls = body[4], body[5]
                chars = int.from_bytes(body[6:8], "little")
                out.append((number, cls, state, body[8:8 + 2 * chars].decode("utf-16-le")))
            p += 3 + n
        elif tok in (0xFD, 0xFE, 0xFF):  # DONE*
            p += 13
        elif tok == 0x79:  # RETURNSTATUS
            p += 5
        else:
            break
    return out


def rpc_executesql(stmt: str, decl: str, params: list[tuple[str, bytes]]) -> bytes:
    """An RPC payload calling sp_executesql (ProcID 10): the statement and declaration as
    NVARCHAR(4000), then `params` as (name, TYPE_INFO + value bytes)."""
    headers = (22).to_bytes(4, "little") + (18).to_bytes(4, "little") + (2).to_bytes(2, "little") + bytes(8) + (1).to_bytes(4, "little")
    out = headers + b"\xff\xff" + (10).to_bytes(2, "little") + b"\x00\x00"

    def nvarchar(name: str, text: str) -> bytes:
        v = text.encode("utf-16-le")
        return (bytes([len(name)]) + name.encode("utf-16-le") + b"\x00" + b"\xe7" + (8000).to_bytes(2, "little")
                + bytes([0x09, 0x04, 0xD0, 0x00, 0x34]) + len(v).to_bytes(2, "little") + v)

    out += nvarchar("", stmt) + nvarchar("", decl)
    for name, body in params:
        out += bytes([len(name)]) + name.encode("utf-16-le") + b"\x00" + body
    return out
