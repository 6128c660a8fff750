"""Run cursor.cancel()-during-fetch rounds in a child process (a hang must only fail its test).

usage: python sqlserver_cancel_probe.py CONNSTR ROUNDS
Prints one JSON line per round: {"shape", "error", "sqlstate", "seconds", "usable"}.
"""

from __future__ import annotations

import json
import sys
import threading
import time

import ferrodbc


def main() -> None:
    connstr, rounds = sys.argv[1], int(sys.argv[2])
    conn = ferrodbc.connect(connstr, autocommit=True, timeout=10)
    for i in range(rounds):
        shape = ("fetchall", "fetchmany")[i % 2]
        cur = conn.cursor()
        cur.execute("SELECT * FROM peer.mixed_1000000")
        threading.Timer(0.3, cur.cancel).start()
        t0 = time.monotonic()
        error = sqlstate = None
        try:
            if shape == "fetchall":
                cur.fetchall()
            else:
                while cur.fetchmany(1000):
                    pass
        except ferrodbc.Error as e:
            error, sqlstate = type(e).__name__, e.sqlstate
        seconds = round(time.monotonic() - t0, 2)
        try:
            usable = conn.cursor().execute("SELECT 11").fetchval() == 11
        except ferrodbc.Error as e:
            usable = f"{type(e).__name__} {e.sqlstate}"
        print(json.dumps({"shape": shape, "error": error, "sqlstate": sqlstate, "seconds": seconds, "usable": usable}), flush=True)


if __name__ == "__main__":
    main()
