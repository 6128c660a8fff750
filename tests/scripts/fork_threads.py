"""Forking mid-result with the prefetch thread running (tests/*/test_*lifetime.py run this in a
child process, which has no other threads).

argv: connection string, a query of `n` rows with ids 0..n-1 first, n. Prints, in the parent:
the threads before the fork (the prefetch worker is running), the threads right after it (an
after_in_parent hook: what Python 3.12+ counts for its "multi-threaded fork" DeprecationWarning),
whether the parent's result is whole, and the threads once it prefetched again. Any warning is an
error (-W error is also passed): a forking server (gunicorn --preload, multiprocessing's fork)
must see none.
"""

import os
import sys
import warnings

import ferrodbc

warnings.simplefilter("error")


def threads() -> int:
    return len(os.listdir("/proc/self/task"))


connstr, query, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
at_fork = []
os.register_at_fork(after_in_parent=lambda: at_fork.append(threads()))
cur = ferrodbc.connect(connstr, autocommit=True).cursor()
cur.execute(query)
ids = [r[0] for r in cur.fetchmany(3000)]
before = threads()
pid = os.fork()
if pid == 0:
    own = ferrodbc.connect(connstr, autocommit=True)
    os._exit(0 if own.cursor().execute("SELECT 42").fetchval() == 42 else 1)
_, status = os.waitpid(pid, 0)
ids += [r[0] for r in cur.fetchmany(5000)]
again = threads()
ids += [r[0] for r in cur.fetchall()]
print(f"before {before} at_fork {at_fork[0]} child {os.waitstatus_to_exitcode(status)} "
      f"rows ok {ids == list(range(n))} again {again}", flush=True)
