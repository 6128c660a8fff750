"""A TCP relay in front of the TDS peer that records every ATTENTION a client sends.

The proof that a cancel reached the server: the relay sits between the driver and the peer
(TLS off, `start_peer(encrypt="notsup")`, so packet headers are readable), forwards every byte
unchanged, and notes the arrival time (`time.monotonic()`, one clock for every process of the
machine) of each client packet of type 0x06 (ATTENTION, MS-TDS 2.2.1.7). It runs in its own
process so that nothing the client process does with its GIL can delay the count.

    from tdsrelay import start_relay
    with start_peer() as peer, start_relay(peer) as relay:
        cs = conn_str(relay, "msodbcsql")      # a relay has the peer's `port`/`encrypt` shape
        ...
        relay.attentions()                     # [monotonic arrival time, ...]
        relay.cut()                            # close every relayed connection (a lost link)

Run directly: `python tdsrelay.py TARGET_PORT [--log FILE]` prints `listening PORT`, then one
line `attention TIME` per ATTENTION; a line `cut` on its stdin closes every relayed connection,
and it ends when its stdin closes (by hand: `sleep infinity | python tdsrelay.py PORT ...`).
With `--log FILE` it also records what the clients send, before the peer answers it: every whole
client message is appended to FILE, SQL batches as their text, RPCs as the procedure name and
the first bytes of the parameters in hex, bulk-load (0x07) messages in hex, other messages as
their type and size (how `eng/tds-peer/captures/` were recorded). Replies are not logged.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self

PACKET_SQL_BATCH, PACKET_RPC, PACKET_ATTENTION, PACKET_BULK_LOAD = 0x01, 0x03, 0x06, 0x07
HEADER_LEN = 8


class Relay:
    """The parent's handle on a relay process."""

    def __init__(self, proc: subprocess.Popen[str], port: int, encrypt: str) -> None:
        self.proc = proc
        self.port = port
        self.encrypt = encrypt
        self._times: list[float] = []
        self._seen = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            word, _, value = line.partition(" ")
            if word == "attention":
                with self._seen:
                    self._times.append(float(value))
                    self._seen.notify_all()

    def attentions(self) -> list[float]:
        """Arrival times of the ATTENTION packets so far."""
        with self._seen:
            return list(self._times)

    def wait_attentions(self, count: int, timeout: float = 10.0) -> list[float]:
        """The arrival times once `count` ATTENTIONs arrived (or all there are after `timeout`:
        the relay's report travels through a pipe, so a count is read with a short wait)."""
        with self._seen:
            self._seen.wait_for(lambda: len(self._times) >= count, timeout)
            return list(self._times)

    def cut(self) -> None:
        """Close every relayed connection at once (both sides see the link drop)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("cut\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=5)
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                f.close()
        self._reader.join(timeout=2)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_relay(peer: Any) -> Relay:
    """A relay process in front of `peer` (anything with `port` and `encrypt`)."""
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), str(peer.port)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if not first.startswith("listening "):
        proc.kill()
        proc.wait()
        raise RuntimeError(f"tdsrelay did not start (first line {first!r})")
    return Relay(proc, int(first.split()[1]), peer.encrypt)


# --- the relay process ---------------------------------------------------------------------------

_out_lock = threading.Lock()
_open: set[socket.socket] = set()
_open_lock = threading.Lock()
_log: Any = None  # the --log file, when given
_connections = iter(range(1, 1 << 62))


def _say(line: str) -> None:
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def describe(packet_type: int, message: bytes) -> str:
    """One client message in a line: SQL text, RPC name and parameter bytes, or its size."""
    if packet_type in (PACKET_SQL_BATCH, PACKET_RPC) and len(message) >= 4:
        # Both start with ALL_HEADERS, its total length first.
        body = message[int.from_bytes(message[:4], "little") :]
        if packet_type == PACKET_SQL_BATCH:
            return "SQL: " + body.decode("utf-16le", "replace")
        name_len = int.from_bytes(body[:2], "little")
        if name_len == 0xFFFF:
            return f"RPC proc id {int.from_bytes(body[2:4], 'little')}: {body[4:604].hex()}"
        name = body[2 : 2 + 2 * name_len].decode("utf-16le", "replace")
        return f"RPC {name}: {body[2 + 2 * name_len : 2 + 2 * name_len + 600].hex()}"
    if packet_type == PACKET_BULK_LOAD:
        return f"BULK LOAD {len(message)} bytes: {message[:4000].hex()}"
    if packet_type == PACKET_ATTENTION:
        return "ATTENTION"
    return f"message type {packet_type:#04x}, {len(message)} bytes"


def _pump(src: socket.socket, dst: socket.socket, watch: bool) -> None:
    pending = b""
    message = b""
    connection = next(_connections)
    try:
        while True:
            chunk = src.recv(65536)
            if not chunk:
                break
            now = time.monotonic()
            dst.sendall(chunk)
            if not watch:
                continue
            pending += chunk
            while len(pending) >= HEADER_LEN:
                length = int.from_bytes(pending[2:4], "big")
                if length < HEADER_LEN or len(pending) < length:
                    break
                if pending[0] == PACKET_ATTENTION:
                    _say(f"attention {now!r}")
                if _log is not None:
                    message += pending[HEADER_LEN:length]
                    if pending[1] & 1:  # status bit 0: the message's last packet
                        with _out_lock:
                            print(f"[{connection}] {describe(pending[0], message)}", file=_log)
                        message = b""
                pending = pending[length:]
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _serve(client: socket.socket, target_port: int) -> None:
    try:
        server = socket.create_connection(("127.0.0.1", target_port))
    except OSError:
        client.close()
        return
    for s in (client, server):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with _open_lock:
        _open.update((client, server))
    up = threading.Thread(target=_pump, args=(client, server, True), daemon=True)
    up.start()
    _pump(server, client, False)
    up.join()
    with _open_lock:
        _open.difference_update((client, server))
    client.close()
    server.close()


def _commands() -> None:
    for line in sys.stdin:
        if line.strip() == "cut":
            with _open_lock:
                for s in list(_open):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
    # The parent is gone (stdin closed): end with it.
    os._exit(0)


def main() -> None:
    global _log
    target_port = int(sys.argv[1])
    if sys.argv[2:3] == ["--log"]:
        _log = open(sys.argv[3], "a", buffering=1)  # kept open for the life of the process
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    _say(f"listening {listener.getsockname()[1]}")
    threading.Thread(target=_commands, daemon=True).start()
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_serve, args=(client, target_port), daemon=True).start()


if __name__ == "__main__":
    main()
