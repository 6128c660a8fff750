"""Shared helpers of the SQL Server suite (a uniquely named module: the suites run together in
one pytest process, where every directory's conftest.py is a module named `conftest`)."""

from __future__ import annotations

import os
import sys
import threading
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "eng" / "peers"))

import synthetic  # noqa: E402,F401  (re-exported for the test modules)
import tdspeer  # noqa: E402
import usertable  # noqa: E402,F401  (re-exported for the test modules)

# (tdspeer driver key, readable test id)
DRIVERS = [("msodbcsql", "msodbcsql18"), ("freetds", "freetds")]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(message: str) -> None:
    """Skip locally, fail in CI."""
    if in_ci():
        pytest.fail(f"CI=true and {message}", pytrace=False)
    pytest.skip(message)


def require_driver(driver: str) -> None:
    if not tdspeer.drivers_available().get(driver):
        missing(f"ODBC driver {driver!r} is not registered with unixODBC (run eng/setup.sh)")


def require_peer_binary() -> None:
    if tdspeer.peer_binary() is None:
        missing("the tds-peer binary is not built (cargo build --release -p tds-peer, or set TDS_PEER_BIN)")


def tname(prefix: str = "t") -> str:
    """A unique table name (the peer's database lives as long as the session's peer)."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"




class Counter(threading.Thread):
    """Counts pure-Python loop iterations until stopped: it advances only while it has the GIL."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.count = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.count += 1
