"""Peers and fixtures shared by the ferrodbc Python suite.

Every test that takes the ``peer`` fixture (directly, or through ``conn`` / ``table``) runs once per
peer:

* ``sqlite``: the SQLite3 ODBC driver on a fresh database file per test.
* ``postgres``: psqlODBC ("PostgreSQL Unicode") against the server from ``FERRODBC_PG_CONNSTR``,
  or the private server ``eng/peers/postgres.sh`` starts (and prints the connection string of).

Behaviour only one peer has uses ``pg`` / ``pg_conn`` / ``pg_table`` or ``sqlite`` /
``sqlite_conn`` instead (nextset, cancel, server errors; SQLite driver specifics).

A peer that cannot be reached skips its tests with the reason and how to start it, except in CI
(``CI=true``), where it fails them: CI never silently skips a peer.

Run: ``.venv/bin/python -m pytest tests/python -q`` (PostgreSQL is started on demand).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import ferrodbc

ROOT = Path(__file__).resolve().parents[2]
PG_SCRIPT = ROOT / "eng" / "peers" / "postgres.sh"
PEERS = ("sqlite", "postgres")


def _redact(connstr: str) -> str:
    return re.sub(r"(?i)(pwd|password)=(\{[^}]*\}|[^;]*)", r"\1=***", connstr)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _unavailable(peer: str, reason: str, how: str) -> None:
    """Skip (locally) or fail (in CI) a test whose peer cannot be reached."""
    message = f"{peer} peer unavailable: {reason}. {how}"
    if _in_ci():
        pytest.fail(f"CI=true and the {message}", pytrace=False)
    pytest.skip(message)


@dataclass
class Peer:
    """One database behind one ODBC driver, and the SQL spelling of the types the suite uses."""

    name: str
    connstr: str
    types: dict[str, str] = field(default_factory=dict)

    @property
    def is_pg(self) -> bool:
        return self.name == "postgres"

    @property
    def is_sqlite(self) -> bool:
        return self.name == "sqlite"

    def connect(self, **kwargs) -> ferrodbc.Connection:
        return ferrodbc.connect(self.connstr, **kwargs)

    def variant(self, **options: str | None) -> str:
        """The connection string with `options` replaced (a None value removes the keyword)."""
        connstr = self.connstr
        for key, value in options.items():
            connstr = re.sub(rf"(?i)(^|;)\s*{key}\s*=(\{{[^}}]*\}}|[^;]*)", "", connstr)
            if value is not None:
                connstr = f"{connstr.rstrip(';')};{key}={value}"
        return connstr

    def __repr__(self) -> str:  # shows up in assertion messages
        return f"Peer({self.name})"


SQLITE_TYPES = {
    "smallint": "SMALLINT",
    "int": "INTEGER",
    "bigint": "BIGINT",
    "real": "REAL",
    "float": "DOUBLE",
    "decimal": "NUMERIC(38,10)",
    "bool": "BOOLEAN",
    "text": "TEXT",
    "varchar": "VARCHAR(50)",
    "bytes": "BLOB",
    "date": "DATE",
    "time": "TIME",
    "timestamp": "TIMESTAMP",
}

PG_TYPES = {
    "smallint": "smallint",
    "int": "integer",
    "bigint": "bigint",
    "real": "real",
    "float": "double precision",
    "decimal": "numeric(38,10)",
    "bool": "boolean",
    "text": "text",
    "varchar": "varchar(50)",
    "bytes": "bytea",
    "date": "date",
    "time": "time",
    "timestamp": "timestamp",
    "uuid": "uuid",
}


# ---------------------------------------------------------------------------------------------
# Peer discovery (once per session; the outcome, failure included, is cached by pytest).


def _check_connect(connstr: str) -> None:
    conn = ferrodbc.connect(connstr, timeout=10)
    try:
        conn.cursor().execute("SELECT 1").fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="session")
def sqlite_available() -> bool:
    try:
        _check_connect("Driver={SQLite3};Database=:memory:")
    except ferrodbc.Error as e:
        _unavailable(
            "sqlite",
            f"cannot open an in-memory database with Driver={{SQLite3}} ({e})",
            "Install it with eng/setup.sh (Debian package libsqliteodbc).",
        )
    return True


@pytest.fixture(scope="session")
def pg_connstr() -> str:
    how = f"Start it with `{PG_SCRIPT.relative_to(ROOT)}` or set FERRODBC_PG_CONNSTR."
    connstr = os.environ.get("FERRODBC_PG_CONNSTR", "").strip()
    if not connstr:
        if shutil.which("bash") is None or not PG_SCRIPT.exists():
            _unavailable("postgres", f"{PG_SCRIPT} is missing", how)
        try:
            proc = subprocess.run(
                ["bash", str(PG_SCRIPT)],
                capture_output=True,
                text=True,
                timeout=180,
            )
        except subprocess.TimeoutExpired:
            _unavailable("postgres", f"{PG_SCRIPT.name} did not finish within 180 s", how)
        if proc.returncode != 0 or not proc.stdout.strip():
            detail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            _unavailable(
                "postgres",
                f"{PG_SCRIPT.name} exited with {proc.returncode}: {' | '.join(detail)}",
                how,
            )
        connstr = proc.stdout.strip().splitlines()[-1]
    try:
        _check_connect(connstr)
    except ferrodbc.Error as e:
        _unavailable("postgres", f"cannot connect with {_redact(connstr)!r} ({e})", how)
    return connstr


@pytest.fixture(params=PEERS)
def peer(request, tmp_path) -> Peer:
    """The database under test: each test using it runs once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        request.getfixturevalue("sqlite_available")
        return Peer("sqlite", f"Driver={{SQLite3}};Database={tmp_path / 'test.sqlite'}", SQLITE_TYPES)
    return Peer("postgres", request.getfixturevalue("pg_connstr"), PG_TYPES)


@pytest.fixture
def sqlite(request, tmp_path) -> Peer:
    """SQLite only, for behaviour specific to the SQLite ODBC driver."""
    request.getfixturevalue("sqlite_available")
    return Peer("sqlite", f"Driver={{SQLite3}};Database={tmp_path / 'test.sqlite'}", SQLITE_TYPES)


@pytest.fixture
def pg(request) -> Peer:
    """PostgreSQL only, for behaviour the SQLite driver does not have (cancel, server errors...)."""
    return Peer("postgres", request.getfixturevalue("pg_connstr"), PG_TYPES)


def _open(p: Peer):
    conn = p.connect()
    yield conn
    if not conn.closed:
        try:
            conn.rollback()
        finally:
            conn.close()


@pytest.fixture
def conn(peer: Peer):
    """A ferrodbc connection to the peer (manual commit), rolled back and closed at teardown."""
    yield from _open(peer)


@pytest.fixture
def pg_conn(pg: Peer):
    yield from _open(pg)


@pytest.fixture
def sqlite_conn(sqlite: Peer):
    yield from _open(sqlite)


def _drop(p: Peer, name: str, conn: ferrodbc.Connection | None) -> None:
    """Drop `name`, on `conn` when still open (it may hold locks on it), else on a new one."""
    own = conn is None or conn.closed
    c = p.connect() if own else conn
    try:
        if not own:
            c.rollback()
        cur = c.cursor()
        if p.is_pg:
            # Never hang the suite on a lock a leaked connection still holds.
            cur.execute("SET lock_timeout = '5s'")
        cur.execute(f"DROP TABLE IF EXISTS {name}")
        c.commit()
    finally:
        if own:
            c.close()


def _table(p: Peer, conn: ferrodbc.Connection):
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    _drop(p, name, conn)


@pytest.fixture
def table(peer: Peer, conn):
    """A unique table name (the test creates the table); dropped at teardown."""
    yield from _table(peer, conn)


@pytest.fixture
def pg_table(pg: Peer, pg_conn):
    yield from _table(pg, pg_conn)


# ---------------------------------------------------------------------------------------------
# Header and markers.


def _package_version(package: str) -> str:
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", package],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return out.stdout.strip() or "not installed"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def pytest_report_header(config) -> list[str]:
    try:
        unixodbc = subprocess.run(
            ["odbcinst", "--version"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        unixodbc = "unixODBC: unknown"
    pg_source = (
        "FERRODBC_PG_CONNSTR"
        if os.environ.get("FERRODBC_PG_CONNSTR")
        else f"{PG_SCRIPT.relative_to(ROOT)} (started on demand)"
    )
    return [
        f"ferrodbc {ferrodbc.__version__} ({Path(ferrodbc.__file__).parent}), Python {sys.version.split()[0]}",
        f"{unixodbc}; SQLite3 ODBC (libsqliteodbc) {_package_version('libsqliteodbc')}; "
        f"psqlODBC (odbc-postgresql) {_package_version('odbc-postgresql')}",
        f"peers: {', '.join(PEERS)}; postgres from {pg_source}; CI={'yes' if _in_ci() else 'no'}",
    ]


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "slow: takes more than a second")
