"""A logging TCP proxy for plaintext TDS: what a real client sends, before the peer answers it.

    python eng/peers/tdsproxy.py LISTEN_PORT PEER_PORT LOG_FILE

Point a client at LISTEN_PORT; every message it sends to the peer on PEER_PORT is appended to
LOG_FILE: SQL batches as their whole text, RPCs as the procedure name and the first bytes of the
parameters in hex, bulk-load (0x07) messages in hex, ATTENTIONs, and the type and size of any
other message. Replies pass through untouched and are not logged.

Plaintext only: start the peer with `--encrypt notsup` (with `off`, the LOGIN7 travels inside
TLS records and the framing below is lost). Used to record what Driver 18's and FreeTDS's bcp
and mssql-python's bulkcopy send (eng/tds-peer/captures/).
"""

from __future__ import annotations

import socket
import struct
import sys
import threading

SQL_BATCH, RPC, ATTENTION, BULK_LOAD = 0x01, 0x03, 0x06, 0x07


def describe(mtype: int, msg: bytes) -> str:
    if mtype in (SQL_BATCH, RPC):
        # Both start with ALL_HEADERS (its total length first).
        body = msg[struct.unpack("<I", msg[:4])[0] :]
        if mtype == SQL_BATCH:
            return "SQL: " + body.decode("utf-16le", "replace")
        name_len = struct.unpack("<H", body[:2])[0]
        if name_len == 0xFFFF:
            return f"RPC proc id {struct.unpack('<H', body[2:4])[0]}: {body[4:604].hex()}"
        name = body[2 : 2 + 2 * name_len].decode("utf-16le", "replace")
        return f"RPC {name}: {body[2 + 2 * name_len : 2 + 2 * name_len + 600].hex()}"
    if mtype == BULK_LOAD:
        return f"BULK LOAD {len(msg)} bytes: {msg[:4000].hex()}"
    if mtype == ATTENTION:
        return "ATTENTION"
    return f"message type {mtype:#04x}, {len(msg)} bytes"


def client_to_peer(src: socket.socket, dst: socket.socket, conn_id: int, log) -> None:
    pending = b""
    message = b""
    while data := src.recv(65536):
        dst.sendall(data)
        pending += data
        # Packets: type, status (bit 0: end of message), big-endian length including the header.
        while len(pending) >= 8:
            length = struct.unpack(">H", pending[2:4])[0]
            if len(pending) < length:
                break
            packet, pending = pending[:length], pending[length:]
            message += packet[8:]
            if packet[1] & 1:
                log(f"[{conn_id}] {describe(packet[0], message)}")
                message = b""
    dst.close()


def peer_to_client(src: socket.socket, dst: socket.socket) -> None:
    while data := src.recv(65536):
        dst.sendall(data)
    dst.close()


def main() -> None:
    listen_port, peer_port, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    out = open(path, "a", buffering=1)  # open for the life of the process
    lock = threading.Lock()

    def log(line: str) -> None:
        with lock:
            print(line, file=out)

    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", listen_port))
    listener.listen()
    conn_id = 0
    while True:
        client, _ = listener.accept()
        conn_id += 1
        peer = socket.create_connection(("127.0.0.1", peer_port))
        threading.Thread(target=client_to_peer, args=(client, peer, conn_id, log), daemon=True).start()
        threading.Thread(target=peer_to_client, args=(peer, client), daemon=True).start()


if __name__ == "__main__":
    main()
