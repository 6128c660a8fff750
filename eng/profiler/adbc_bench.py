"""The ADBC driver side by side with ferrodbc's own Arrow paths and the other Python routes to SQL
Server, in one run, with the peer's CPU beside each figure (issue 34, item 6):

    python -m eng.profiler.adbc_bench [--quick] [--large] [--rounds N] [--odbc-driver msodbcsql|freetds]
                                      [--tasks T ...]

Tasks (each contestant in a fresh process per round, the first round discarded; ``--large`` adds
the 1M-row size):

- ``fetch_mixed``: ``SELECT * FROM peer.mixed_<n>`` into a pyarrow Table: ferrodbc's
  ``fetch_arrow_table`` against the ADBC driver's ``fetch_arrow_table``, adbcbridge (PyPI) and
  turbodbc's ``fetchallarrow`` (when each is installed), with the peak RSS above the start.
- ``stream_mixed`` / ``stream_max``: the same rows (``stream_max``: ``peer.lob_nvarcharmax_1k``, an
  nvarchar(max) column of 1,024 characters) as record batches, each dropped once summed
  (``fetch_record_batch`` on both sides): the peak RSS says whether memory stays bounded by a batch.
- ``ingest_narrow``: n (int, bigint, float) rows from Arrow: ferrodbc's ``bulkcopy_arrow`` against
  ``adbc_ingest(mode="append")`` (both Driver 18's bcp API), adbcbridge's ``adbc_ingest``
  (parameter arrays), mssql-python's ``bulkcopy_arrow`` (its own TDS client), and ``bcp-floor``:
  Driver 18's bcp_sendrow in a C loop on one fixed bound row (eng/profiler/bcp_floor.py, mode
  ``fixed``), the least a row costs through the bcp API, measured against the same peer in the
  same run.
- ``ingest_mixed``: the peer's ``mixed`` 8-column rows (int, bigint, float, nvarchar(50),
  datetime2(7), decimal(18,4), bit, nvarchar(100)) from Arrow, the same contestants but the floor.
- ``ingest_max``: (int, nvarchar(max) of 100 characters) rows from Arrow (large_string): ferrodbc
  and ADBC, for the peak RSS of a (MAX) load.
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
peer_pid, task, who, n, cs, root = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
sys.path.insert(0, root)
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
    elif who == "turbodbc":
        import turbodbc
        conn = turbodbc.connect(connection_string=cs, turbodbc_options=turbodbc.make_options(
            prefer_unicode=True, autocommit=True))
        def body():
            cur = conn.cursor(); cur.execute(sql)
            return cur.fetchallarrow()
    check = lambda t: (t.num_rows, pc.sum(t.column(0)).as_py())
    want = (n, sum(range(n)))
elif task in ("stream_mixed", "stream_max"):
    sql = f"SELECT * FROM peer.{'mixed' if task == 'stream_mixed' else 'lob_nvarcharmax_1k'}_{n}"
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
elif task in ("ingest_narrow", "ingest_mixed", "ingest_max"):
    import numpy as np
    import ferrodbc
    if task == "ingest_narrow":
        i = np.arange(n, dtype=np.int64)
        data = pa.table({"id": pa.array(i.astype(np.int32)), "big": pa.array(i * 3), "val": pa.array(i * 0.5)})
        ddl = "(id INT NOT NULL, big BIGINT NOT NULL, val FLOAT NOT NULL)"
    elif task == "ingest_mixed":
        from eng.profiler.bulk_tasks import MIXED_DDL, mixed_arrow
        data, ddl = mixed_arrow(n), MIXED_DDL
    else:
        body_text = "abcdefghijklmnopqrstuvwxyz0123456789" * 4
        data = pa.table({"id": pa.array(np.arange(n, dtype=np.int32)),
                         "v": pa.array([f"{k:010d}" + body_text[k % 36:k % 36 + 90] for k in range(n)], pa.large_string())})
        ddl = "(id INT NOT NULL, v NVARCHAR(MAX) NULL)"
    setup = ferrodbc.connect(cs, autocommit=True)
    table = "bcp_floor_t" if who == "bcp-floor" else f"bench_{os.getpid()}"
    setup.cursor().execute(f"IF OBJECT_ID('{table}') IS NOT NULL DROP TABLE {table}")
    setup.cursor().execute(f"CREATE TABLE {table} {ddl}")
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
    elif who == "mssql-python":
        import re
        import mssql_python
        conn = mssql_python.connect(re.sub(r"(?i)(^|;)\s*driver\s*=\s*(\{[^}]*\}|[^;]*)", "", cs).strip(";"),
                                    autocommit=True)
        def body():
            return conn.cursor().bulkcopy_arrow(table, data.to_reader(max_chunksize=8192))["rows_copied"]
    elif who == "bcp-floor":
        # Driver 18's bcp_sendrow in a C loop on one fixed row (7, 2**33, 0.5): the driver's own
        # per-row cost, no encoding (eng/profiler/bcp_floor.py, mode `fixed`).
        sys.path.insert(0, os.path.join(root, "eng", "tds-peer", "tests"))
        import bcp_driver18 as b18
        from eng.profiler import bcp_floor
        floor = bcp_floor.build()
        conn = ferrodbc.connect(cs, attrs_before={bcp_floor.SQL_COPT_SS_BCP: 1}, autocommit=True)
        def body():
            bcp_floor.one_load(conn, b18, floor, "fixed", n, None)
            return n
    def check(copied):
        c = setup.cursor(); c.execute(f"SELECT COUNT(*), SUM(CAST(id AS BIGINT)) FROM {table}")
        got = tuple(c.fetchone())
        c.execute(f"DROP TABLE {table}")
        return got
    want = (n, 7 * n if who == "bcp-floor" else sum(range(n)))
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
if task in ("fetch_mixed", "stream_mixed", "stream_max", "read_sql"):
    sql_full, sql = sql, sql.rsplit("_", 1)[0] + "_1"
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

#: task -> (contestants, rows, rows with --large, rows with --quick, contestants at the large size
#: (None: the same)). adbcbridge's parameter arrays take ~45 s for 1M narrow rows: it runs the
#: large mixed and (MAX) loads only where the RSS question needs it (not at all).
INGEST = ["bcp-floor", "ferrodbc", "adbc-ferrodbc", "mssql-python", "adbcbridge"]
TASKS = {
    "fetch_mixed": (["ferrodbc", "adbc-ferrodbc", "adbcbridge", "turbodbc"], 100_000, 1_000_000, 20_000, None),
    "stream_mixed": (["ferrodbc", "adbc-ferrodbc", "adbcbridge"], 100_000, 1_000_000, 20_000, None),
    "stream_max": (["ferrodbc", "adbc-ferrodbc"], 100_000, 1_000_000, 2_000, None),
    "ingest_narrow": (INGEST, 100_000, 1_000_000, 20_000, None),
    "ingest_mixed": (INGEST[1:], 100_000, 1_000_000, 10_000, ["ferrodbc", "adbc-ferrodbc"]),
    "ingest_max": (["ferrodbc", "adbc-ferrodbc"], 100_000, 1_000_000, 2_000, None),
    "read_sql": (["adbc-ferrodbc", "pyodbc+sqlalchemy"], 100_000, None, 10_000, None),
}
#: The CI quick pass: the tasks of the ADBC driver's own paths, small (adbcbridge's parameter
#: arrays load slowly: its ingest is left to the full run).
QUICK_TASKS = ["fetch_mixed", "stream_mixed", "ingest_narrow", "ingest_mixed", "read_sql"]
QUICK_SKIP = {("ingest_narrow", "adbcbridge"), ("ingest_mixed", "adbcbridge")}

#: `--full`: the issue's table in one run. (task, rows, contestants, kind): "speed" rows take the
#: median of the measured rounds; "rss" rows answer "is peak RSS flat from 100k to 1M rows?" for
#: the ADBC driver (and ferrodbc), one measured round each (`--rss-rounds`).
FULL = [
    ("fetch_mixed", 1_000_000, ["ferrodbc", "adbc-ferrodbc", "adbcbridge", "turbodbc"], "speed"),
    ("ingest_narrow", 1_000_000, INGEST, "speed"),
    ("ingest_mixed", 100_000, INGEST[1:], "speed"),
    ("read_sql", 100_000, ["adbc-ferrodbc", "pyodbc+sqlalchemy"], "speed"),
    ("fetch_mixed", 100_000, ["ferrodbc", "adbc-ferrodbc"], "rss"),
    ("stream_mixed", 100_000, ["ferrodbc", "adbc-ferrodbc"], "rss"),
    ("stream_mixed", 1_000_000, ["ferrodbc", "adbc-ferrodbc"], "rss"),
    ("stream_max", 100_000, ["adbc-ferrodbc"], "rss"),
    ("stream_max", 1_000_000, ["adbc-ferrodbc"], "rss"),
    ("ingest_narrow", 100_000, ["ferrodbc", "adbc-ferrodbc"], "rss"),
    ("ingest_mixed", 1_000_000, ["ferrodbc", "adbc-ferrodbc"], "rss"),
    ("ingest_max", 100_000, ["adbc-ferrodbc"], "rss"),
    ("ingest_max", 1_000_000, ["adbc-ferrodbc"], "rss"),
]


#: --turbodbc-python: turbodbc 5.3 builds against pyarrow < 25 only, so it may live in a venv
#: of its own (the child needs only pyarrow and turbodbc there).
TURBODBC_PYTHON: str | None = None


def available(who: str, odbc_driver: str) -> str | None:
    """Why `who` cannot run here (None: it can)."""
    if who == "adbcbridge":
        try:
            import adbcbridge

            adbcbridge.connect(uri="Driver={SQLite3};Database=:memory:").close()
        except Exception as e:  # noqa: BLE001  (any failure means "not installed here")
            return f"adbcbridge not loadable ({type(e).__name__}; pip install adbcbridge)"
    if who == "turbodbc":
        python = TURBODBC_PYTHON or sys.executable
        probe = subprocess.run([python, "-c", "import turbodbc, pyarrow"], capture_output=True, text=True)
        if probe.returncode != 0:
            return f"turbodbc is not importable by {python} (pip install turbodbc; see docs/adbc.md)"
    if who == "mssql-python":
        import importlib.util

        if importlib.util.find_spec("mssql_python") is None:
            return "mssql-python is not installed"
        if odbc_driver != "msodbcsql":
            return "mssql-python has its own TDS client, not FreeTDS"
    if who == "bcp-floor" and odbc_driver != "msodbcsql":
        return "the floor loop calls Driver 18's bcp API"
    return None


def run_one(peer, task: str, who: str, n: int, cs: str) -> dict:
    python = TURBODBC_PYTHON if (who == "turbodbc" and TURBODBC_PYTHON) else sys.executable
    p = subprocess.run(
        [python, "-c", CHILD, str(peer.proc.pid), task, who, str(n), cs, str(ROOT)],
        capture_output=True, text=True, timeout=900, env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, 1 measured round")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--odbc-driver", default="msodbcsql", choices=["msodbcsql", "freetds"])
    ap.add_argument("--tasks", nargs="*", default=None)
    ap.add_argument("--large", action="store_true", help="also the 1M-row sizes")
    ap.add_argument("--full", action="store_true", help="the issue's table: FULL's rows")
    ap.add_argument("--rss-rounds", type=int, default=1, help="measured rounds of FULL's rss rows")
    ap.add_argument("--turbodbc-python", default=os.environ.get("TURBODBC_PYTHON"),
                    help="a Python with turbodbc (and pyarrow) installed, for the turbodbc contestant")
    args = ap.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 5)
    tasks = args.tasks or (QUICK_TASKS if args.quick else list(TASKS))
    plan: list[tuple[str, int, list[str], int]] = []
    if args.full:
        plan = [(t, n, w, rounds if kind == "speed" else args.rss_rounds) for t, n, w, kind in FULL
                if t in tasks]
    else:
        for task in tasks:
            whos, n, n_large, n_quick, whos_large = TASKS[task]
            sizes = [n_quick] if args.quick else [n] + ([n_large] if args.large and n_large else [])
            for size in sizes:
                who_here = whos_large if (whos_large and size == n_large and not args.quick) else whos
                if args.quick:
                    who_here = [w for w in who_here if (task, w) not in QUICK_SKIP]
                plan.append((task, size, who_here, rounds))
    global TURBODBC_PYTHON
    TURBODBC_PYTHON = args.turbodbc_python
    failed = False
    cmd = " ".join(["python -m eng.profiler.adbc_bench", *(argv if argv is not None else sys.argv[1:])])
    with tdspeer.start_peer() as peer:
        cs = tdspeer.conn_str(peer, args.odbc_driver)
        print(f"`{cmd}`: peer pid {peer.proc.pid}, {args.odbc_driver}, {rounds} measured rounds (+1 discarded "
              f"warm-up), contestants interleaved per round; load average {os.getloadavg()[0]:.1f} at start\n")
        print("| task | rows | contestant | wall ms median (min..max) | client CPU ms median (min..max) | peer CPU ms median | peak RSS MiB |")
        print("|---|---|---|---|---|---|---|")
        for task, size, who_here, task_rounds in plan:
            runnable = []
            for who in who_here:
                why = available(who, args.odbc_driver)
                if why:
                    print(f"| {task} | {size:,} | {who} | n/a ({why}) | | | |")
                else:
                    runnable.append(who)
            samples: dict[str, list] = {w: [] for w in runnable}
            broken: dict[str, dict] = {}
            # Round 0 warms the peer (its result cache, SQLite's pages) with the first contestant,
            # discarded; then each measured round runs every contestant, the order rotated so
            # none always runs first (or last).
            for r in range(task_rounds + 1):
                k = (r - 1) % len(runnable) if runnable else 0
                order = runnable[:1] if r == 0 else runnable[k:] + runnable[:k]
                for who in order:
                    if who in broken:
                        continue
                    s = run_one(peer, task, who, size, cs)
                    if "error" in s or not s.get("ok"):
                        broken[who] = s
                        failed = failed or who not in ("adbcbridge", "turbodbc")
                    elif r > 0:
                        samples[who].append(s)
            for who in runnable:
                if who in broken:
                    b = broken[who]
                    reason = b.get("error") or f"wrong result {b.get('got')}"
                    print(f"| {task} | {size:,} | {who} | FAILED: {reason} | | | |")
                    continue
                ss = samples[who]
                wall = [x["wall"] * 1000 for x in ss]
                cpus = [x["client_cpu"] * 1000 for x in ss]
                peer_cpu, rss = (statistics.median(x[k] for x in ss) for k in ("peer_cpu", "peak_rss_mib"))
                print(f"| {task} | {size:,} | {who} | {statistics.median(wall):.0f} ({min(wall):.0f}..{max(wall):.0f}) "
                      f"| {statistics.median(cpus):.0f} ({min(cpus):.0f}..{max(cpus):.0f}) | {peer_cpu * 1000:.0f} "
                      f"| {rss:.1f} |")
                sys.stdout.flush()
        print(f"\nload average {os.getloadavg()[0]:.1f} at end")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
