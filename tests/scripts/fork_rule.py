"""The fork rule, end to end (tests/*/test_*lifetime.py run this in a child process).

argv: connection string, a query of `n` rows with ids 0..n-1 first, n, what the child does with
the inherited connection at the end ("close" or "leave" it to the exit). The parent is
mid-result (its next row array fetched ahead on the prefetch thread) when it forks. The child
tries the inherited connection (every use must raise InterfaceError), opens its own, and exits
normally (finalizers run). The parent then reads the rest of its result and queries again.
Prints one line per process.
"""

import os
import sys

import ferrodbc

connstr, query, n, at_exit = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
conn = ferrodbc.connect(connstr, autocommit=True)
cur = conn.cursor()
cur.execute(query)
ids = [r[0] for r in cur.fetchmany(3000)]
pid = os.fork()
if pid == 0:
    report = []
    uses = [
        ("fetch", cur.fetchone),
        ("execute", lambda: cur.execute("SELECT 1")),
        ("commit", conn.commit),
        ("connection_execute", lambda: conn.execute("SELECT 1")),
    ]
    for name, use in uses:
        try:
            use()
            report.append(f"{name}:worked")
        except ferrodbc.InterfaceError:
            report.append(f"{name}:InterfaceError")
    cur.cancel()  # a no-op in the child (an attention would cancel the parent's fetch)
    own = ferrodbc.connect(connstr, autocommit=True)
    report.append(f"own:{own.cursor().execute('SELECT 42').fetchval()}")
    own.close()
    if at_exit == "close":
        cur.close()
        conn.close()
        report.append(f"closed:{conn.closed}")
    print(" ".join(report), flush=True)
    sys.exit(0)
_, status = os.waitpid(pid, 0)
ids += [r[0] for r in cur.fetchall()]
again = cur.execute("SELECT 7").fetchval()
print(f"child {os.waitstatus_to_exitcode(status)} parent rows ok {ids == list(range(n))} "
      f"parent again {again}", flush=True)
conn.close()
