"""Fixtures for the tds-peer conformance tests (real drivers through pyodbc).

Outside CI a missing peer binary or driver skips; with CI=true it fails.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))

import tdspeer

pyodbc = pytest.importorskip("pyodbc") if not tdspeer.in_ci() else __import__("pyodbc")

DRIVERS = ["msodbcsql", "freetds"]


def _missing(msg: str):
    if tdspeer.in_ci():
        pytest.fail(msg)
    pytest.skip(msg)


def require_driver(driver: str) -> None:
    if not tdspeer.drivers_available().get(driver):
        _missing(f"ODBC driver {driver} is not registered with unixODBC (run eng/setup.sh)")


@pytest.fixture(scope="session")
def msodbcsql():
    """For tests of what only Driver 18 does (access tokens): present, or skip / fail in CI."""
    if tdspeer.peer_binary() is None:
        _missing("tds-peer binary not built (cargo build --release -p tds-peer)")
    require_driver("msodbcsql")


@pytest.fixture(scope="session")
def peer():
    if tdspeer.peer_binary() is None:
        _missing("tds-peer binary not built (cargo build --release -p tds-peer)")
    with tdspeer.start_peer() as p:
        yield p


@pytest.fixture(params=DRIVERS)
def driver(request):
    require_driver(request.param)
    return request.param


@pytest.fixture
def connect(peer, driver):
    """connect(**kw) -> pyodbc connection to the session peer through `driver` (autocommit on by default)."""
    opened = []

    def _connect(autocommit=True, target=None, **extra):
        cn = pyodbc.connect(tdspeer.conn_str(target or peer, driver, **extra), timeout=10, autocommit=autocommit)
        opened.append(cn)
        return cn

    yield _connect
    for cn in opened:
        try:
            cn.close()
        except pyodbc.Error:
            pass
