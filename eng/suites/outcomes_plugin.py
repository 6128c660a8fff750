"""A pytest plugin for eng.suites.pyodbc_suites: one JSON line per test event, flushed at once.

Written as the run goes (not at the end like --junitxml) so that a test which kills the
interpreter (real pyodbc 5.5.0 segfaults in one of its own PostgreSQL tests) leaves a file that
says which test was running: the runner records it as crashed and runs the file again without it.
The file is named by the FERRODBC_SUITE_OUTCOMES environment variable.
"""

from __future__ import annotations

import json
import os

_PATH = os.environ.get("FERRODBC_SUITE_OUTCOMES")


def _write(record: dict) -> None:
    if not _PATH:
        return
    with open(_PATH, "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
        out.flush()
        os.fsync(out.fileno())


def pytest_runtest_logstart(nodeid, location):
    _write({"nodeid": nodeid, "event": "start"})


def pytest_runtest_logreport(report):
    message = ""
    if report.failed or report.skipped:
        crash = getattr(report.longrepr, "reprcrash", None)
        if crash is not None:
            message = crash.message
        elif isinstance(report.longrepr, tuple):  # skips: (path, line, reason)
            message = str(report.longrepr[-1])
        else:
            message = str(report.longrepr)
    _write(
        {
            "nodeid": report.nodeid,
            "event": "phase",
            "when": report.when,
            "outcome": report.outcome,
            "message": message.splitlines()[0][:300] if message else "",
        }
    )


def pytest_runtest_logfinish(nodeid, location):
    _write({"nodeid": nodeid, "event": "finish"})
