"""Fixtures for the SQL Server suite: ferrodbc against the project's TDS peer (eng/tds-peer)
through the real drivers, Microsoft ODBC Driver 18 ("msodbcsql18") and FreeTDS ("freetds").

One peer process serves the whole session (``peer``); ``driver`` parametrizes a test over both
drivers. Outside CI a missing peer binary or driver skips with the reason; with CI=true it fails
(CI never silently skips a peer).

Expected values come from eng/peers/synthetic.py, the Python mirror of the peer's synthetic
tables ``peer.<shape>_<n>``.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import sys
import threading

import pytest

import ferrodbc

from sqlserver_support import (
    DRIVERS,
    in_ci,
    missing,
    require_driver,
    require_peer_binary,
    tdspeer,
)


@pytest.fixture(scope="session")
def peer():
    """One tds-peer (no TLS) for the whole session."""
    require_peer_binary()
    try:
        p = tdspeer.start_peer()
    except (OSError, RuntimeError) as e:
        missing(f"tds-peer did not start: {e}")
    with p:
        yield p


@pytest.fixture(params=[d for d, _ in DRIVERS], ids=[i for _, i in DRIVERS])
def driver(request) -> str:
    """The ODBC driver under test: 'msodbcsql' (Driver 18) or 'freetds'."""
    require_driver(request.param)
    return request.param


@pytest.fixture
def connstr(peer, driver) -> str:
    return tdspeer.conn_str(peer, driver)


@pytest.fixture
def connect(peer, driver):
    """connect(autocommit=True, **extra) -> a ferrodbc connection through `driver`; closed at teardown."""
    opened: list[ferrodbc.Connection] = []

    def _connect(autocommit: bool = True, target=None, **extra) -> ferrodbc.Connection:
        cn = ferrodbc.connect(tdspeer.conn_str(target or peer, driver, **extra), autocommit=autocommit, timeout=10)
        opened.append(cn)
        return cn

    yield _connect
    for cn in opened:
        if not cn.closed:
            try:
                if not cn.autocommit:
                    cn.rollback()
                cn.close()
            except ferrodbc.Error:
                pass


@pytest.fixture
def conn(connect) -> ferrodbc.Connection:
    """A ferrodbc connection (autocommit on) to the session peer."""
    return connect()


@pytest.fixture
def face_conn(peer, driver, monkeypatch):
    """A connection of the `mssql_python` face (ferrodbc.mssql_python), with mssql-python's
    driverless connection string: through FreeTDS, only FreeTDS is left to be found."""
    from ferrodbc import driver_pick
    from ferrodbc import mssql_python as face

    require_driver(driver)
    if driver == "freetds":
        monkeypatch.setattr(ferrodbc, "drivers", lambda: ["FreeTDS"])
        monkeypatch.setattr(driver_pick, "_wheel_library", lambda: (None, "(hidden by the test)"))
    cn = face.connect(f"Server=127.0.0.1,{peer.port};UID=sa;PWD=x;Encrypt=no;TrustServerCertificate=yes",
                      autocommit=True, timeout=10)
    yield cn
    if not cn.closed:
        cn.close()


@pytest.fixture
def pyodbc_connect(peer, driver):
    """pyodbc.connect through the same driver (for differential tests); closed at teardown."""
    try:
        import pyodbc
    except ImportError:
        missing("pyodbc is not installed in the venv")
    opened = []

    def _connect(**extra):
        cn = pyodbc.connect(tdspeer.conn_str(peer, driver, **extra), autocommit=True, timeout=10)
        opened.append(cn)
        return cn

    yield _connect
    for cn in opened:
        try:
            cn.close()
        except pyodbc.Error:  # already broken by the test: closing it is all that is left
            pass


TEST_DEADLINE_S = float(os.environ.get("SQLSERVER_TEST_DEADLINE", "120"))


@pytest.fixture(autouse=True)
def _deadline(request):
    """A hung fetch must not hang the suite (the directory runs in well under a minute): after
    TEST_DEADLINE_S a watchdog prints every thread's stack past pytest's capture and exits the
    process; if the hang holds the GIL, faulthandler ends it 10 s later."""
    capman = request.config.pluginmanager.getplugin("capturemanager")
    done = threading.Event()
    node = request.node.nodeid

    def watchdog():
        if done.wait(TEST_DEADLINE_S):
            return
        cm = capman.global_and_fixture_disabled() if capman else contextlib.nullcontext()
        with cm:
            sys.stderr.write(f"\n*** {node} exceeded {TEST_DEADLINE_S:.0f} s; stacks:\n")
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
            sys.stderr.flush()
        os._exit(3)

    threading.Thread(target=watchdog, daemon=True, name="sqlserver-deadline").start()
    faulthandler.dump_traceback_later(TEST_DEADLINE_S + 10, exit=True)
    yield
    done.set()
    faulthandler.cancel_dump_traceback_later()


def pytest_report_header(config) -> list[str]:
    exe = tdspeer.peer_binary()
    return [f"sqlserver suite: tds-peer {exe or 'NOT BUILT'}; drivers {tdspeer.drivers_available()}; CI={'yes' if in_ci() else 'no'}"]
