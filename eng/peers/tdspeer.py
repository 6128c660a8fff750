"""Start the project's TDS peer (eng/tds-peer) and build connection strings for real drivers.

Stable API for tests (ferrodbc's own tests import it too):

    from tdspeer import start_peer, conn_str
    with start_peer(encrypt="notsup") as peer:          # notsup | off | on | strict
        cs = conn_str(peer, driver="msodbcsql")         # or driver="freetds"
        ...

`Peer` has `port`, `cert_path` (PEM of the peer's self-signed certificate), `proc`, `workdir`.
The binary is found via env TDS_PEER_BIN, else <repo>/target/release/tds-peer, else
/work/target-peer/release/tds-peer. With CI=true a missing binary raises (never skips).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Self

REPO = Path(__file__).resolve().parents[2]
MSODBCSQL = "ODBC Driver 18 for SQL Server"
FREETDS = "FreeTDS"


def peer_binary() -> Path | None:
    cands = []
    if os.environ.get("TDS_PEER_BIN"):
        cands.append(Path(os.environ["TDS_PEER_BIN"]))
    cands += [REPO / "target" / "release" / "tds-peer", Path("/work/target-peer/release/tds-peer")]
    for c in cands:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    return None


_FLAG_CACHE: dict = {}


def _supports_stdin_watch(exe: Path) -> bool:
    """Older peer binaries lack --exit-on-stdin-eof; ask --help once per binary."""
    key = (str(exe), exe.stat().st_mtime)
    if key not in _FLAG_CACHE:
        try:
            out = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=10)
            _FLAG_CACHE[key] = "--exit-on-stdin-eof" in (out.stdout + out.stderr)
        except (OSError, subprocess.SubprocessError):
            _FLAG_CACHE[key] = False
    return _FLAG_CACHE[key]


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@dataclass
class Peer:
    proc: subprocess.Popen
    port: int
    cert_path: Path
    workdir: Path
    encrypt: str
    stderr_lines: list = field(default_factory=list)
    threads: list = field(default_factory=list)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for t in self.threads:
            t.join(timeout=2)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        shutil.rmtree(self.workdir, ignore_errors=True)

    def log(self) -> str:
        """What the peer wrote to stderr so far (useful in assertion messages)."""
        return "".join(self.stderr_lines)


def start_peer(encrypt: str = "notsup", extra_args=(), timeout: float = 15.0) -> Peer:
    """Starts tds-peer on a free port of 127.0.0.1 and waits for its `listening` line."""
    exe = peer_binary()
    if exe is None:
        raise FileNotFoundError("tds-peer binary not found: run `cargo build --release -p tds-peer` or set TDS_PEER_BIN")
    workdir = Path(tempfile.mkdtemp(prefix="tds-peer-"))
    # --exit-on-stdin-eof + stdin=PIPE: the peer dies with this process even if it is killed
    # (no orphaned servers after a hung or interrupted test run).
    watch = ["--exit-on-stdin-eof"] if _supports_stdin_watch(exe) else []
    args = [str(exe), "--port", "0", "--encrypt", encrypt, "--cert-dir", str(workdir), *watch, *map(str, extra_args)]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    result: dict = {}

    def read_first() -> None:
        result["line"] = proc.stdout.readline()

    t = threading.Thread(target=read_first, daemon=True)
    t.start()
    t.join(timeout)
    line = result.get("line", "")
    prefix = "tds-peer listening on 127.0.0.1:"
    if not line.startswith(prefix):
        proc.kill()
        err = proc.stderr.read() if proc.stderr else ""
        proc.wait()
        for f in (proc.stdin, proc.stdout, proc.stderr):
            f.close()
        shutil.rmtree(workdir, ignore_errors=True)
        raise RuntimeError(f"tds-peer did not start (first line {line!r}): {err}")
    peer = Peer(proc=proc, port=int(line[len(prefix):].strip()), cert_path=workdir / "tds-peer-cert.pem", workdir=workdir, encrypt=encrypt)

    def drain(stream, sink) -> None:
        for ln in stream:
            if len(sink) < 20000:
                sink.append(ln)

    for stream, sink in ((proc.stderr, peer.stderr_lines), (proc.stdout, [])):
        t = threading.Thread(target=drain, args=(stream, sink), daemon=True)
        t.start()
        peer.threads.append(t)
    return peer


def conn_str(peer: Peer, driver: str = "msodbcsql", encrypt: str | None = None, **extra) -> str:
    """A working connection string for `peer` through the given driver.

    driver: "msodbcsql" (Microsoft ODBC Driver 18) or "freetds".
    encrypt: override of the driver's encryption keyword value; by default it matches the
    peer's mode (msodbcsql: notsup/off -> Encrypt=no, on -> Encrypt=yes +
    TrustServerCertificate=yes, strict -> Encrypt=strict + ServerCertificate=<pem>;
    FreeTDS: notsup -> Encryption=off, off -> request (login-only TLS), on -> require).
    extra: more keywords, e.g. PacketSize=512 (msodbcsql) or `packet_size=512`.
    """
    mode = peer.encrypt
    if driver in ("msodbcsql", "msodbcsql18", MSODBCSQL):
        parts = {"Driver": f"{{{MSODBCSQL}}}", "Server": f"127.0.0.1,{peer.port}", "UID": "sa", "PWD": "x"}
        if encrypt is not None:
            parts["Encrypt"] = encrypt
        elif mode in ("notsup", "off"):
            parts["Encrypt"] = "no"
        elif mode == "on":
            parts["Encrypt"] = "yes"
            parts["TrustServerCertificate"] = "yes"
        elif mode == "strict":
            parts["Encrypt"] = "strict"
            parts["ServerCertificate"] = str(peer.cert_path)
    elif driver in ("freetds", FREETDS):
        parts = {"Driver": f"{{{FREETDS}}}", "Server": "127.0.0.1", "Port": str(peer.port), "UID": "sa", "PWD": "x", "TDS_Version": "7.4"}
        if encrypt is not None:
            parts["Encryption"] = encrypt
        elif mode == "notsup":
            parts["Encryption"] = "off"
        elif mode == "off":
            parts["Encryption"] = "request"
        elif mode == "on":
            parts["Encryption"] = "require"
        elif mode == "strict":
            parts["Encryption"] = "strict"
    else:
        raise ValueError(f"unknown driver {driver!r}")
    parts.update({k: str(v) for k, v in extra.items()})
    return ";".join(f"{k}={v}" for k, v in parts.items())


def drivers_available() -> dict:
    """Which of the two drivers unixODBC knows (by name)."""
    try:
        import pyodbc

        names = set(pyodbc.drivers())
    except Exception:  # noqa: BLE001  (pyodbc missing or its driver manager broken: none known)
        names = set()
    return {"msodbcsql": MSODBCSQL in names, "freetds": FREETDS in names}
