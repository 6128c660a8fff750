#!/usr/bin/env python3
"""Peer throughput and peer CPU: the synthetic replay and a user table, next to the clients.

Two results of the same `mixed` shape (int, bigint, float, nvarchar(50), datetime2(7),
decimal(18,4), bit, nullable nvarchar(100)):

- `peer.mixed_<rows>`: synthetic, replayed from pre-encoded bytes after the first run;
- a user table made with CREATE TABLE + INSERT (`eng/peers/usertable.py`, the same rows), which
  the peer reads from SQLite and encodes row by row — measured with the peer's result cache off
  (`--result-cache-mb 0`: every query does that work) and on (repeated queries replay it).

For each, the raw Rust client `tds-peer-drain` (login + query, no ODBC) drains the result, and
ferrodbc / pyodbc (ODBC Driver 18, and FreeTDS for pyodbc) `fetchall` it. Around every run the
peer's CPU time is read from /proc/<pid>/task/*/schedstat (ns, all threads), so the report
shows peer CPU per 100,000 rows and the share of each client's wall time the peer spends.
Figures are medians over `--repeat` runs with [min–max]; the machine is shared, so read the
spread before the median.

    .venv/bin/python eng/tds-peer/bench.py [--rows 1000000] [--user-rows 100000] [--repeat 5]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "peers"))
import tdspeer  # noqa: E402
import usertable  # noqa: E402

USER_TABLE = "bench_mixed"


def drain_bin() -> Path:
    exe = tdspeer.peer_binary()
    d = exe.parent / "tds-peer-drain" if exe else None
    if not d or not d.exists():
        sys.exit("tds-peer-drain not built next to tds-peer (cargo build --release -p tds-peer)")
    return d


def thread_cpu(pid: int) -> dict[str, int]:
    """CPU ns of every live thread of `pid` (the peer runs a thread per open connection)."""
    out = {}
    for t in Path(f"/proc/{pid}/task").iterdir():
        try:
            out[t.name] = int((t / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that just ended
    return out


def cpu_since(pid: int, before: dict[str, int]) -> float:
    """ms of peer CPU since `before`, over the threads alive now (a connection closed meanwhile
    took its time with it; the measured query's thread stays alive)."""
    return sum(ns - before.get(tid, 0) for tid, ns in thread_cpu(pid).items()) / 1e6


def spread(xs: list[float], unit: str = "", fmt: str = "{:.1f}") -> str:
    med = statistics.median(xs)
    return f"{fmt.format(med)}{unit} [{fmt.format(min(xs))}–{fmt.format(max(xs))}]"


def drain(peer, sql: str, repeat: int) -> list[dict]:
    """`repeat` runs on one drain connection (`--step`: one run per line on its stdin), so the
    connection's thread lives across runs and each run's peer CPU is read on its own."""
    p = subprocess.Popen([str(drain_bin()), str(peer.port), sql, "--packet-size", "4096", "--repeat", str(repeat),
                          "--step"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    runs = []
    try:
        for _ in range(repeat):
            c0 = thread_cpu(peer.proc.pid)
            p.stdin.write("\n")
            p.stdin.flush()
            line = p.stdout.readline()
            if not line.startswith("bytes="):
                raise RuntimeError(f"tds-peer-drain failed: {line!r}")
            run = {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", line)}
            run["cpu_ms"] = cpu_since(peer.proc.pid, c0)
            runs.append(run)
    finally:
        p.stdin.close()
        p.wait(timeout=30)
    return runs


def fetchall_runs(peer, mod, cs: str, sql: str, rows: int, repeat: int) -> list[dict]:
    """Wall time of execute + fetchall and the peer CPU spent meanwhile, per run."""
    cn = mod.connect(cs, autocommit=True)
    runs = []
    for _ in range(repeat):
        cur = cn.cursor()
        c0 = thread_cpu(peer.proc.pid)
        t = time.perf_counter()
        cur.execute(sql)
        got = cur.fetchall()
        wall = time.perf_counter() - t
        cpu = cpu_since(peer.proc.pid, c0)
        if len(got) != rows:
            raise AssertionError(f"{mod.__name__} fetched {len(got)} rows, expected {rows}")
        del got
        cur.close()
        runs.append({"wall_ms": wall * 1e3, "cpu_ms": cpu})
    cn.close()
    return runs


def clients() -> list[tuple[str, object, str]]:
    """(label, module, driver) for every installed client."""
    out = []
    avail = tdspeer.drivers_available()
    for name in ("ferrodbc", "pyodbc"):
        try:
            mod = __import__(name)
        except ImportError:
            print(f"({name} not importable: skipped)")
            continue
        for drv in ("msodbcsql", "freetds"):
            if avail.get(drv) and not (name == "ferrodbc" and drv == "freetds"):
                out.append((f"{name} + {drv}", mod, drv))
    return out


def report_clients(peer, sql: str, rows: int, repeat: int) -> None:
    per = 100_000 / rows
    for label, mod, drv in clients():
        runs = fetchall_runs(peer, mod, tdspeer.conn_str(peer, drv), sql, rows, repeat + 1)[1:]
        walls = [r["wall_ms"] for r in runs]
        cpus = [r["cpu_ms"] * per for r in runs]
        shares = [r["cpu_ms"] / r["wall_ms"] * 100 for r in runs]
        print(f"  {label:22s} fetchall {spread(walls, ' ms')}   peer CPU {spread(cpus, ' ms')} per 100k rows"
              f"   peer CPU / client wall {spread(shares, ' %', '{:.0f}')}")


def synthetic_section(peer, rows: int, repeat: int) -> None:
    sql = f"SELECT * FROM peer.mixed_{rows}"
    print(f"== synthetic peer.mixed_{rows} (replayed bytes after the first run)")
    first, *cached = drain(peer, sql, repeat + 1)
    per = 100_000 / rows
    print(f"  {rows} rows, {first['bytes'] / 1e6:.1f} MB on the wire (packet size 4096)")
    print(f"  drain, first run (generate+encode+send): {first['secs'] * 1e3:.0f} ms  {first['mb_s']:.0f} MB/s"
          f"   peer CPU {first['cpu_ms'] * per:.1f} ms per 100k rows")
    print(f"  drain, cached replay: {spread([r['secs'] * 1e3 for r in cached], ' ms')}"
          f"   peer CPU {spread([r['cpu_ms'] * per for r in cached], ' ms')} per 100k rows")
    report_clients(peer, sql, rows, repeat)


def user_table_section(rows: int, repeat: int, peer_args: tuple, title: str) -> None:
    import pyodbc

    with tdspeer.start_peer(extra_args=peer_args) as peer:
        print(f"== user table {USER_TABLE}: {rows} mixed rows made with CREATE TABLE + INSERT; {title}")
        t = time.perf_counter()
        cn = pyodbc.connect(tdspeer.conn_str(peer, "msodbcsql"), autocommit=False)
        usertable.load(cn, "mixed", USER_TABLE, rows)
        cn.close()
        print(f"  loaded in {time.perf_counter() - t:.1f} s")
        sql = f"SELECT * FROM {USER_TABLE}"
        runs = drain(peer, sql, repeat + 1)[1:]
        per = 100_000 / rows
        print(f"  drain: {spread([r['secs'] * 1e3 for r in runs], ' ms')}"
              f"   peer CPU {spread([r['cpu_ms'] * per for r in runs], ' ms')} per 100k rows")
        report_clients(peer, sql, rows, repeat)


def has_result_cache() -> bool:
    exe = tdspeer.peer_binary()
    out = subprocess.run([str(exe), "--help"], check=False, capture_output=True, text=True, timeout=10)
    return "--result-cache-mb" in out.stdout + out.stderr


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of the synthetic result (0: skip)")
    ap.add_argument("--user-rows", type=int, default=100_000, help="rows of the user table (0: skip)")
    ap.add_argument("--repeat", type=int, default=5, help="measured runs per figure (after one warm-up)")
    a = ap.parse_args()
    load = os.getloadavg()
    print(f"peer {tdspeer.peer_binary()}  load average {load[0]:.2f} at start")
    if a.rows:
        with tdspeer.start_peer() as peer:
            synthetic_section(peer, a.rows, a.repeat)
    if a.user_rows:
        if has_result_cache():
            user_table_section(a.user_rows, a.repeat, ("--result-cache-mb", "0"),
                               "result cache off: SQLite read and rows encoded on every query")
            user_table_section(a.user_rows, a.repeat, (), "result cache on: repeated queries replay the encoded result")
        else:
            user_table_section(a.user_rows, a.repeat, (), "this peer has no result cache")
    print(f"load average {os.getloadavg()[0]:.2f} at end; figures are median [min–max] of {a.repeat} runs")


if __name__ == "__main__":
    main()
