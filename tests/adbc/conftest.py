"""Fixtures of the ADBC suite: the ferrodbc ADBC driver (the built ``libadbc_driver_ferrodbc.so``)
loaded through ``adbc_driver_manager``, against the TDS peer through Driver 18 and FreeTDS, and
against SQLite3 ODBC where a function applies there too.

The library is the one ``adbc_driver_ferrodbc._driver_path()`` finds: the installed package's
(eng/setup.sh), or ``$ADBC_FERRODBC_LIBRARY`` (a development build). Outside CI a missing peer,
driver or library skips; with CI=true it fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "sqlserver"))

import adbc_driver_ferrodbc  # noqa: E402
import adbc_driver_ferrodbc.dbapi  # noqa: E402
import adbc_driver_manager  # noqa: E402
import adbc_driver_manager.dbapi  # noqa: E402

from sqlserver_support import DRIVERS, missing, require_driver, require_peer_binary, tdspeer  # noqa: E402


@pytest.fixture(scope="session")
def library() -> str:
    try:
        path = adbc_driver_ferrodbc._driver_path()
    except FileNotFoundError as e:
        missing(str(e))
    if not os.path.exists(path):
        missing(f"the ADBC driver library {path} does not exist")
    return path


@pytest.fixture(scope="session")
def peer():
    require_peer_binary()
    try:
        p = tdspeer.start_peer()
    except (OSError, RuntimeError) as e:
        missing(f"tds-peer did not start: {e}")
    with p:
        yield p


@pytest.fixture(params=[d for d, _ in DRIVERS], ids=[i for _, i in DRIVERS])
def driver(request) -> str:
    require_driver(request.param)
    return request.param


@pytest.fixture
def uri(peer, driver, library) -> str:
    """An ODBC connection string to the peer through `driver`."""
    return tdspeer.conn_str(peer, driver)


@pytest.fixture
def conn(uri):
    """A DB-API connection (autocommit on, so each test's DDL stands on its own)."""
    with adbc_driver_ferrodbc.dbapi.connect(uri, autocommit=True) as c:
        yield c


@pytest.fixture
def sqlite_uri(library) -> str:
    with tempfile.TemporaryDirectory(prefix="adbc-sqlite-") as d:
        yield f"Driver={{SQLite3}};Database={d}/t.db"


@pytest.fixture
def sqlite_conn(sqlite_uri):
    try:
        c = adbc_driver_ferrodbc.dbapi.connect(sqlite_uri, autocommit=True)
    except adbc_driver_manager.Error as e:
        missing(f"SQLite3 ODBC does not connect: {e}")
    with c:
        yield c


PG_SCRIPT = ROOT / "eng" / "peers" / "postgres.sh"


@pytest.fixture(scope="session")
def pg_uri(library) -> str:
    """psqlODBC's connection string to the shared PostgreSQL (``FERRODBC_PG_CONNSTR``, or the one
    ``eng/peers/postgres.sh`` starts or finds, as tests/python does)."""
    connstr = os.environ.get("FERRODBC_PG_CONNSTR", "").strip()
    if not connstr:
        try:
            proc = subprocess.run(["bash", str(PG_SCRIPT)], capture_output=True, text=True, timeout=180)
        except (OSError, subprocess.TimeoutExpired) as e:
            missing(f"{PG_SCRIPT.name} did not run: {e}")
        if proc.returncode != 0 or not proc.stdout.strip():
            missing(f"{PG_SCRIPT.name} exited with {proc.returncode}: {proc.stderr.strip()[-300:]}")
        connstr = proc.stdout.strip().splitlines()[-1]
    return connstr


@pytest.fixture
def pg_conn(pg_uri):
    """A DB-API connection to PostgreSQL through psqlODBC (autocommit on)."""
    try:
        c = adbc_driver_ferrodbc.dbapi.connect(pg_uri, autocommit=True)
    except adbc_driver_manager.Error as e:
        missing(f"psqlODBC does not connect: {e}")
    with c:
        yield c
