"""Exit the interpreter with everything open (tests/*/test_*lifetime.py run this in a child and
expect exit code 0, "exiting" on stdout and nothing on stderr).

argv: connection string, a query of many rows (id first), how to exit ("end", "sys_exit",
"raise_systemexit"). Left open at exit: a cursor mid-result with its next row array fetched
ahead, a lazy Arrow stream, an exported stream half read and never released, a parked pooled
connection (where the driver pools), a cursor whose connection object is gone, and a daemon
thread inside a fetch.
"""

import sys
import threading
import time

import pyarrow as pa

import ferrodbc

connstr, query, how = sys.argv[1], sys.argv[2], sys.argv[3]
# Each pending result on a connection of its own (SQL Server without MARS allows one).
conn = ferrodbc.connect(connstr)
cur = conn.cursor()
cur.execute(query)
cur.fetchmany(3000)
lazy = ferrodbc.connect(connstr).cursor().execute(query).fetch_record_batch(500)
reader = pa.RecordBatchReader.from_stream(
    ferrodbc.connect(connstr).cursor().execute(query).fetch_record_batch(500)
)
reader.read_next_batch()
for _ in range(2):
    pooled = [ferrodbc.connect(connstr, pooling=True) for _ in range(2)]
    for p in pooled:
        p.cursor().execute("SELECT 1").fetchall()
        p.close()
orphan = ferrodbc.connect(connstr).cursor()
orphan.execute(query).fetchone()
started = threading.Event()


def fetch_forever():
    c = ferrodbc.connect(connstr).cursor()
    while True:
        c.execute(query)
        started.set()
        while c.fetchmany(100):
            pass


threading.Thread(target=fetch_forever, daemon=True).start()
started.wait(30)
time.sleep(0.05)
print("exiting", flush=True)
if how == "sys_exit":
    sys.exit(0)
if how == "raise_systemexit":
    raise SystemExit(0)
