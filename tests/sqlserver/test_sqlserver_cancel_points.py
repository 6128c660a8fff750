"""A cursor cancel from another thread, landing at each point of a fetch, leaves the cursor usable
(Driver 18 and FreeTDS, through `tdsrelay`, which counts the ATTENTIONs).

The flake this pins down (`test_cursor_cancel_from_another_task[msodbcsql18]`, once in a loaded
CI run): a cancel that found no driver call running (the fetching thread, slow under load, had
not started its fetch yet, or was between two fetches) recorded its request and called
`SQLCancel`; the fetching thread saw the request, closed the cursor and raised HY008, and the
cursor executed `SELECT 17` while that `SQLCancel` was still running. unixODBC's `SQLCancel`,
once the driver's returned, treats a statement with an open cursor as `SQLFreeStmt(SQL_CLOSE)`
(state S1, no columns): `SELECT 17`'s first `SQLFetch` failed with the driver manager's HY010
"Function sequence error". Now the statement's thread waits for a recorded cancel's `SQLCancel`
to return before its next call (src/odbc/cancel.rs, `wait_for_cancel_call`).

Each case runs sqlserver_cancel_points_probe.py in a child process with the engine's test hook
FERRODBC_CANCEL_DELAY_MS: the cancel holds its `SQLCancel` back after recording the request, so
the statement's thread meets the pending cancel at the chosen point every time (before the fix,
Driver 18 failed `before_fetch` and `between_fetches` every run). No timed assertion: the
delay orders the threads; the child's timeout only turns a hang into a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tdsrelay
from sqlserver_support import tdspeer

PROBE = Path(__file__).with_name("sqlserver_cancel_points_probe.py")


@pytest.fixture(scope="module")
def relay(peer):
    with tdsrelay.start_relay(peer) as r:
        yield r


@pytest.mark.parametrize("point", ["before_fetch", "between_fetches", "in_fetch"])
def test_cancel_at_each_point_leaves_the_cursor_usable(relay, driver, point):
    before = len(relay.attentions())
    proc = subprocess.run(
        [sys.executable, str(PROBE), tdspeer.conn_str(relay, driver), point],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "FERRODBC_CANCEL_DELAY_MS": "300"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    # The hook said it held the request back: the point was met with the cancel pending.
    assert "ferrodbc cancel: recorded, delaying 300 ms" in proc.stderr
    assert json.loads(proc.stdout) == {"fetch": "HY008", "next": 17}
    # The statement was cancelled on the server (an ATTENTION went out: SQLCancel's, or the
    # cursor's close discarding the rest of the result).
    assert len(relay.wait_attentions(before + 1)) >= before + 1
