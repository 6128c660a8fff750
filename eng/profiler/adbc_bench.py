"""The ADBC driver side by side with ferrodbc's own Arrow paths, in one run, with the peer's CPU
beside each figure (issue 34, item 6):

    python -m eng.profiler.adbc_bench [--quick] [--rounds N] [--odbc-driver msodbcsql|freetds]

Tasks (each contestant in a fresh process per round, the first round discarded):

- ``fetch_mixed``: ``SELECT * FROM peer.mixed_<n>`` into a pyarrow Table: ferrodbc's
  ``fetch_arrow_table`` against the ADBC driver's ``fetch_arrow_table`` (and adbcbridge when it is
  installed: ``pip install adbcbridge``), with the peak RSS above the start.
- ``stream_mixed``: the same rows as record batches, each dropped once summed (``fetch_record_batch``
  on both sides): the peak RSS says whether memory stays bounded by a batch.
- ``ingest_narrow``: n (int, bigint, float) rows from Arrow: ferrodbc's ``bulkcopy_arrow`` against
  ``adbc_ingest(mode="append")`` (both bcp).
- ``read_sql``: ``pandas.read_sql`` of ``peer.mixed_<n>`` through the ADBC connection against
  pyodbc through SQLAlchemy.

Timings are printed, never asserted; every result is checked (row count and a sum), so a wrong
answer is an error, not a time. The peer is this repository's TDS peer through Driver 18.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "eng" / "peers"))

import tdspeer  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")

CHILD = r'''
import json, os, sys, time, resource
peer_pid, task, who, n, cs = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
TICK = os.sysconf("SC_CLK_TCK")
def peer_cpu():
    f = open(f"/proc/{peer_pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK
def rss_kib(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
import pyarrow as pa, pyarrow.compute as pc
out = {}
if task == "fetch_mixed":
    sql = f"SELECT * FROM peer.mixed_{n}"
    if who == "ferrodbc":
        import ferrodbc
        conn = ferrodbc.connect(cs, autocommit=True)
        def body():
            cur = conn.cursor(); cur.execute(sql)
            return pa.RecordBatchReader.from_stream(cur.fetch_arrow_table()).read_all()
    elif who == "adbc-ferrodbc":
        import adbc_driver_ferrodbc.dbapi
        conn = adbc_driver_ferrodbc.dbapi.connect(cs, autocommit=True)
        def body():
            with conn.cursor() as cur:
                cur.execute(sql)
                return cur.fetch_arrow_table()
    elif who == "adbcbridge":
        import adbcbridge
        conn = adbcbridge.connect(uri=cs, autocommit=True)
        def body():
            with conn.cursor() as cur:
                cur.execute(sql)
                return cur.fetch_arrow_table()
    check = lambda t: (t.num_rows, pc.sum(t.column(0)).as_py())
    want = (n, sum(range(n)))
elif task == "stream_mixed":
    sql = f"SELECT * FROM peer.mixed_{n}"
    def consume(reader):
        rows = total = 0
        for b in reader:
            rows += b.num_rows
            total += pc.sum(b.column(0)).as_py() or 0
        return rows, total
    if who == "ferrodbc":
        import ferrodbc
        conn = ferrodbc.connect(cs, autocommit=True)
        def body():
            cur = conn.cursor(); cur.execute(sql)
            return consume(pa.RecordBatchReader.from_stream(cur.fetch_record_batch()))
    else:
        if who == "adbc-ferrodbc":
            import adbc_driver_ferrodbc.dbapi
            conn = adbc_driver_ferrodbc.dbapi.connect(cs, autocommit=True)
        else:
            import adbcbridge
            conn = adbcbridge.connect(uri=cs, autocommit=True)
        def body():
            with conn.cursor() as cur:
                cur.execute(sql)
                return consume(cur.fetch_record_batch())
    check = lambda r: r
    want = (n, sum(range(n)))
elif task == "ingest_narrow":
    import numpy as np
    i = np.arange(n, dtype=np.int64)
    data = pa.table({"id": pa.array(i.astype(np.int32)), "big": pa.array(i * 3), "val": pa.array(i * 0.5)})
    import ferrodbc
    setup = ferrodbc.connect(cs, autocommit=True)
    table = f"bench_{os.getpid()}"
    setup.cursor().execute(f"CREATE TABLE {table} (id INT NOT NULL, big BIGINT NOT NULL, val FLOAT NOT NULL)")
    if who == "ferrodbc":
        conn = ferrodbc.connect(cs, autocommit=True)
        def body():
            return conn.cursor().bulkcopy_arrow(table, data.to_reader(max_chunksize=8192))["rows_copied"]
    elif who == "adbc-ferrodbc":
        import adbc_driver_ferrodbc.dbapi
        conn = adbc_driver_ferrodbc.dbapi.connect(cs, autocommit=True)
        def body():
            with conn.cursor() as cur:
                return cur.adbc_ingest(table, data.to_reader(max_chunksize=8192), mode="append")
    elif who == "adbcbridge":
        import adbcbridge
        conn = adbcbridge.connect(uri=cs, autocommit=True)
        def body():
            with conn.cursor() as cur:
                return cur.adbc_ingest(table, data.to_reader(max_chunksize=8192), mode="append")
    def check(copied):
        c = setup.cursor(); c.execute(f"SELECT COUNT(*), SUM(CAST(id AS BIGINT)) FROM {table}")
        return tuple(c.fetchone())
    want = (n, sum(range(n)))
elif task == "read_sql":
    import pandas as pd
    sql = f"SELECT * FROM peer.mixed_{n}"
    if who == "adbc-ferrodbc":
        import adbc_driver_ferrodbc.dbapi
        conn = adbc_driver_ferrodbc.dbapi.connect(cs, autocommit=True)
    elif who == "pyodbc+sqlalchemy":
        import urllib.parse
        from sqlalchemy import create_engine
        conn = create_engine("mssql+pyodbc:///?odbc_connect=" + urllib.parse.quote_plus(cs)).connect()
    def body():
        return pd.read_sql(sql, conn)
    check = lambda df: (len(df), int(df[df.columns[0]].sum()))
    want = (n, sum(range(n)))
# One untimed read of one row first, through the same path: the imports each path makes on its
# first call (pandas' Arrow conversion, pyarrow's modules) are not the driver's time.
if task in ("fetch_mixed", "stream_mixed", "read_sql"):
    sql_full, sql = sql, "SELECT * FROM peer.mixed_1"
    body()
    sql = sql_full
import gc
gc.collect()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
rss0 = rss_kib("VmRSS")
p0, c0, t0 = peer_cpu(), resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
result = body()
t1 = time.perf_counter(); c1 = resource.getrusage(resource.RUSAGE_SELF); p1 = peer_cpu()
out = {"wall": t1 - t0, "peer_cpu": p1 - p0, "client_cpu": (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime),
       "peak_rss_mib": (rss_kib("VmHWM") - rss0) / 1024}
got = check(result)
out["ok"] = tuple(got) == tuple(want)
out["got"] = list(got)
print(json.dumps(out))
'''

TASKS = {
    "fetch_mixed": (["ferrodbc", "adbc-ferrodbc", "adbcbridge"], 100_000, 1_000_000, 20_000),
    "stream_mixed": (["ferrodbc", "adbc-ferrodbc", "adbcbridge"], 100_000, 1_000_000, 20_000),
    "ingest_narrow": (["ferrodbc", "adbc-ferrodbc", "adbcbridge"], 200_000, 1_000_000, 20_000),
    "read_sql": (["adbc-ferrodbc", "pyodbc+sqlalchemy"], 100_000, None, 10_000),
}


def available(who: str) -> str | None:
    """Why `who` cannot run here (None: it can)."""
    if who == "adbcbridge":
        try:
            import adbcbridge

            adbcbridge.connect(uri="Driver={SQLite3};Database=:memory:").close()
        except Exception as e:  # noqa: BLE001  (any failure means "not installed here")
            return f"adbcbridge not loadable ({type(e).__name__}; pip install adbcbridge)"
    return None


def run_one(peer, task: str, who: str, n: int, cs: str) -> dict:
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(peer.proc.pid), task, who, str(n), cs],
        capture_output=True, text=True, timeout=900, env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, 2 measured rounds")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--odbc-driver", default="msodbcsql", choices=["msodbcsql", "freetds"])
    ap.add_argument("--tasks", nargs="*", default=list(TASKS))
    ap.add_argument("--large", action="store_true", help="also the 1M-row sizes")
    args = ap.parse_args(argv)
    rounds = args.rounds or (2 if args.quick else 5)
    failed = False
    with tdspeer.start_peer() as peer:
        cs = tdspeer.conn_str(peer, args.odbc_driver)
        print(f"peer pid {peer.proc.pid}, {args.odbc_driver}, {rounds} measured rounds (+1 discarded)\n")
        print("| task | rows | contestant | wall ms median (min..max) | client CPU ms | peer CPU ms | peak RSS MiB |")
        print("|---|---|---|---|---|---|---|")
        for task in args.tasks:
            whos, n, n_large, n_quick = TASKS[task]
            sizes = [n_quick] if args.quick else [n] + ([n_large] if args.large and n_large else [])
            for size in sizes:
                for who in whos:
                    why = available(who)
                    if why:
                        print(f"| {task} | {size:,} | {who} | n/a ({why}) | | | |")
                        continue
                    samples = []
                    for r in range(rounds + 1):
                        s = run_one(peer, task, who, size, cs)
                        if "error" in s or not s.get("ok"):
                            failed = failed or who != "adbcbridge"
                            samples = [s]
                            break
                        if r > 0:
                            samples.append(s)
                    if "error" in samples[0] or not samples[0].get("ok"):
                        reason = samples[0].get("error") or f"wrong result {samples[0].get('got')}"
                        print(f"| {task} | {size:,} | {who} | FAILED: {reason} | | | |")
                        continue
                    wall = [s["wall"] * 1000 for s in samples]
                    cpu, peer_cpu, rss = (statistics.median(s[k] for s in samples)
                                          for k in ("client_cpu", "peer_cpu", "peak_rss_mib"))
                    print(f"| {task} | {size:,} | {who} | {statistics.median(wall):.1f} ({min(wall):.1f}..{max(wall):.1f}) "
                          f"| {cpu * 1000:.0f} | {peer_cpu * 1000:.0f} | {rss:.1f} |")
                    sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
