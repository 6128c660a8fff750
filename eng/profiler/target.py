"""Where the tasks run: the project's TDS peer (started here) or a given connection string."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEER_CANDIDATES = [ROOT / "target/release/tds-peer", Path("/work/target-peer/release/tds-peer")]


def _prefer_newest_peer_binary() -> None:
    """tdspeer.py takes the first existing candidate; a stale one from an old build can shadow a
    fresh one, so unless TDS_PEER_BIN is set we point it at the most recently built binary."""
    if os.environ.get("TDS_PEER_BIN"):
        return
    found = [p for p in PEER_CANDIDATES if p.is_file() and os.access(p, os.X_OK)]
    if found:
        os.environ["TDS_PEER_BIN"] = str(max(found, key=lambda p: p.stat().st_mtime))


def _pin(peer_pid: int) -> str:
    """Peer on the last CPU, this process (and so every worker it starts) on the others: the
    client and the server stop trading one core. Returns a note for the report."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return "not pinned (one CPU)"
    os.sched_setaffinity(peer_pid, {cpus[-1]})
    os.sched_setaffinity(0, set(cpus[:-1]))
    return f"peer pinned to CPU {cpus[-1]}, clients to CPU {','.join(map(str, cpus[:-1]))}"


@contextmanager
def connection_string(
    given: str | None, pin: bool = False, notes: list[str] | None = None, odbc_driver: str = "msodbcsql",
    bulk_discard: bool = False,
    insert_discard: bool = False,
) -> Iterator[str]:
    """Yield the connection string every driver uses (mssql-python drops Driver=).
    `odbc_driver`: "msodbcsql" (Microsoft ODBC Driver 18, the default) or "freetds".
    `bulk_discard`: start the peer with --bulk-discard (bulk rows checked and counted, not
    stored) and tell the workers (the bulk tasks' checks and expectations depend on it).
    The peer's pid goes to the workers too (PROFILER_PEER_PID: the bulk tasks' peer CPU)."""
    if bulk_discard:
        if given:
            raise SystemExit("--bulk-discard needs the profiler's own peer, not --connection-string")
        os.environ["PROFILER_BULK_DISCARD"] = "1"
    if insert_discard:
        if given:
            raise SystemExit("--insert-discard needs the profiler's own peer, not --connection-string")
        os.environ["PROFILER_INSERT_DISCARD"] = "1"
    if given:
        yield given
        return
    _prefer_newest_peer_binary()
    from eng.peers import tdspeer

    extra = (["--bulk-discard"] if bulk_discard else []) + (["--insert-discard"] if insert_discard else [])
    with tdspeer.start_peer(encrypt="notsup", extra_args=extra) as peer:
        if pin:
            note = _pin(peer.proc.pid)
            if notes is not None:
                notes.append(note)
        if bulk_discard and notes is not None:
            notes.append("peer started with --bulk-discard: bulk loads are checked and counted, not stored "
                         "(INSERT paths still store); bulk checks are the driver's rows_copied and an empty table")
        if insert_discard and notes is not None:
            notes.append("peer started with --insert-discard: INSERTs run by RPC (parameter arrays) are "
                         "parsed and counted, not stored; *_executemany checks: an empty table")
        os.environ["PROFILER_PEER_PID"] = str(peer.proc.pid)
        try:
            yield tdspeer.conn_str(peer, driver=odbc_driver)
        finally:
            os.environ.pop("PROFILER_PEER_PID", None)


def describe(conn_str: str) -> str:
    """The connection string without secrets, for reports."""
    parts = [p for p in conn_str.split(";") if p and not p.strip().upper().startswith(("PWD=", "PASSWORD="))]
    return ";".join(parts)


def load_note() -> str:
    """Machine load when a run starts or ends: the first thing to read when spreads are wide."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) / {five:.1f} (5 min) on {os.cpu_count()} CPUs"
