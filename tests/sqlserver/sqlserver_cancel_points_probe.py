"""A cursor cancel from another thread that lands at a chosen point of a fetch, with its
`SQLCancel` held back (the child process of test_sqlserver_cancel_points.py).

Run with FERRODBC_CANCEL_DELAY_MS=N (the engine's test hook, src/odbc/cancel.rs): a cancel
records its request, says so on stderr, then waits N ms before its `SQLCancel`, as a cancelling
thread descheduled under load does. This process reads its own stderr to know when the request
is recorded, so the statement's thread meets the pending cancel at the chosen point every time:

- `before_fetch`: after the execute, before any fetch;
- `between_fetches`: after `fetchmany(10)`, rows still pending (no driver call running);
- `in_fetch`: while a fetch waits in the peer's 60 s pause (a thread of this process is seen
  blocked reading its socket first).

Then the awaiting fetch must raise OperationalError HY008 and the cursor's next statement must
run normally, its rows fetched once the cancel call has returned (a cancel still running when
the cursor moved on used to close that statement's result behind its back). Prints one JSON object: {"fetch": what the fetch did, "next": what SELECT 17
returned or raised}.

    FERRODBC_CANCEL_DELAY_MS=300 python sqlserver_cancel_points_probe.py CONNSTR POINT
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from pathlib import Path

import ferrodbc
import ferrodbc.aio as aio

# 3,000 rows, then the peer pauses 60 s mid-stream.
PAUSED_FETCH = "SELECT * FROM peer.mixed_100000 /* fault:pause_after=3000 pause=60 */"
POINTS = ("before_fetch", "between_fetches", "in_fetch")

recorded = threading.Event()


def watch_own_stderr() -> None:
    """Route fd 2 through a pipe read here: lines pass on to the real stderr, and the hook's
    "ferrodbc cancel: recorded" line sets `recorded`."""
    real = os.dup(2)
    r, w = os.pipe()
    os.dup2(w, 2)
    os.close(w)

    def pump() -> None:
        with os.fdopen(r, "rb") as src, os.fdopen(real, "wb", buffering=0) as dst:
            for line in src:
                dst.write(line)
                if line.startswith(b"ferrodbc cancel: recorded"):
                    recorded.set()

    threading.Thread(target=pump, daemon=True).start()


def blocked_on_a_socket() -> bool:
    """Whether a thread of this process (not the main one: its event loop waits in epoll) is
    blocked in a read or poll system call on a socket: the driver waiting for rows."""
    me = threading.main_thread().native_id
    for task in Path("/proc/self/task").iterdir():
        if int(task.name) == me:
            continue
        try:
            call = (task / "syscall").read_text().split()
        except OSError:
            continue
        if len(call) < 2 or not call[0].isdigit():
            continue
        # read, recvfrom, recvmsg: the socket is the first argument; poll, ppoll: any.
        if call[0] in ("7", "271"):
            return True
        if call[0] in ("0", "45", "47"):
            try:
                if os.readlink(f"/proc/self/fd/{int(call[1], 16)}").startswith("socket:"):
                    return True
            except (OSError, ValueError):
                continue
    return False


async def until(check) -> None:
    while not check():
        await asyncio.sleep(0.005)


async def run(cs: str, point: str) -> dict:
    async with await aio.connect(cs, autocommit=True) as conn:
        cur = await conn.execute(PAUSED_FETCH)
        if point == "between_fetches":
            assert len(await cur.fetchmany(10)) == 10
        fetch = None
        if point == "in_fetch":
            fetch = asyncio.ensure_future(cur.fetchall())
            await until(blocked_on_a_socket)
        # The sync cursor's cancel, as AsyncCursor.cancel() calls it (no lock with the worker).
        canceller = threading.Thread(target=cur.sync.cancel, daemon=True)
        canceller.start()
        await until(recorded.is_set)
        if fetch is None:
            fetch = asyncio.ensure_future(cur.fetchall())
        out: dict = {}
        try:
            rows = await fetch
            out["fetch"] = f"{len(rows)} rows"
        except ferrodbc.OperationalError as e:
            out["fetch"] = e.sqlstate
        except ferrodbc.Error as e:
            out["fetch"] = repr(e)
        try:
            await cur.execute("SELECT 17")
            # Its first fetch only once the cancel has returned: a `SQLCancel` still running
            # when the cursor moved on would have closed this result in the driver manager's
            # eyes on its return (src/odbc/cancel.rs, `wait_for_cancel_call`).
            await until(lambda: not canceller.is_alive())
            out["next"] = await cur.fetchval()
        except ferrodbc.Error as e:
            out["next"] = repr(e)
        return out


def main() -> None:
    cs, point = sys.argv[1], sys.argv[2]
    assert point in POINTS, point
    assert os.environ.get("FERRODBC_CANCEL_DELAY_MS"), "run with FERRODBC_CANCEL_DELAY_MS set"
    watch_own_stderr()
    print(json.dumps(asyncio.run(run(cs, point))), flush=True)


if __name__ == "__main__":
    main()
