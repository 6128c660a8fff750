#!/usr/bin/env python3
"""Peer throughput vs pyodbc: 1M-row `mixed` result.

Starts tds-peer, drains the result with the raw Rust client `tds-peer-drain` (login + query,
no ODBC; first run encodes and caches, later runs replay cached bytes), then fetches the same
result with pyodbc + ODBC Driver 18 (and FreeTDS) `fetchall`. Prints MB/s and rows/s.

    .venv/bin/python eng/tds-peer/bench.py [--rows 1000000] [--repeat 3]
"""

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "peers"))
import tdspeer  # noqa: E402


def drain_bin() -> Path:
    exe = tdspeer.peer_binary()
    d = exe.parent / "tds-peer-drain" if exe else None
    if not d or not d.exists():
        sys.exit("tds-peer-drain not built next to tds-peer (cargo build --release -p tds-peer)")
    return d


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shape", default="mixed")
    a = ap.parse_args()
    sql = f"SELECT * FROM peer.{a.shape}_{a.rows}"
    with tdspeer.start_peer() as peer:
        out = subprocess.run([str(drain_bin()), str(peer.port), sql, "--packet-size", "4096", "--repeat", str(a.repeat + 1)],
                             check=True, capture_output=True, text=True).stdout
        runs = [dict(re.findall(r"(\w+)=([\d.]+)", ln)) for ln in out.splitlines() if ln.startswith("bytes=")]
        first, cached = runs[0], runs[1:]
        best = min(cached, key=lambda r: float(r["secs"]))
        nbytes = int(best["bytes"])
        print(f"result: {a.rows} rows, {nbytes / 1e6:.1f} MB on the wire (packet size 4096)")
        print(f"peer first run (generate+encode+send): {float(first['secs']):.3f} s  {float(first['mb_s']):.0f} MB/s  {a.rows / float(first['secs']) / 1e6:.2f} M rows/s")
        print(f"peer cached replay (best of {len(cached)}):       {float(best['secs']):.3f} s  {float(best['mb_s']):.0f} MB/s  {a.rows / float(best['secs']) / 1e6:.2f} M rows/s")
        try:
            import pyodbc
        except ImportError:
            return
        avail = tdspeer.drivers_available()
        for drv in ("msodbcsql", "freetds"):
            if not avail.get(drv):
                continue
            cn = pyodbc.connect(tdspeer.conn_str(peer, drv), autocommit=True, timeout=10)
            times = []
            for _ in range(a.repeat):
                cur = cn.cursor()
                t = time.perf_counter()
                cur.execute(sql)
                rows = cur.fetchall()
                times.append(time.perf_counter() - t)
                assert len(rows) == a.rows
                del rows
            cn.close()
            t = min(times)
            print(f"pyodbc + {drv} fetchall (best of {a.repeat}): {t:.3f} s  {a.rows / t / 1e6:.2f} M rows/s  "
                  f"-> peer replay is {t / float(best['secs']):.0f}x faster")


if __name__ == "__main__":
    main()
