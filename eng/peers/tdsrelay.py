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

Run directly: `python tdsrelay.py TARGET_PORT` prints `listening PORT`, then one line
`attention TIME` per ATTENTION; a line `cut` on its stdin closes every relayed connection.
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

PACKET_ATTENTION = 0x06
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


def _say(line: str) -> None:
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _pump(src: socket.socket, dst: socket.socket, watch: bool) -> None:
    pending = b""
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
    target_port = int(sys.argv[1])
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
