"""The SQLAlchemy dialect mssql+ferrodbc (python/ferrodbc/sqlalchemy.py) against the TDS peer
through Driver 18: every URL form, a Core round trip of the types users store, isolation levels
and AUTOCOMMIT, disconnect detection. (SQLAlchemy's own compliance suite runs separately:
eng/suites/sqlalchemy_suite.py.)"""

from __future__ import annotations

import datetime
import subprocess
import urllib.parse
import uuid
from decimal import Decimal

import pytest

from sqlserver_support import in_ci

try:
    import sqlalchemy
except ImportError:  # eng/setup.sh installs it (eng/requirements.txt): CI fails, never skips
    if in_ci():
        raise
    pytest.skip("SQLAlchemy is not installed (eng/requirements.txt)", allow_module_level=True)

from sqlalchemy import (
    Boolean,
    Column,
    Integer,
    MetaData,
    Numeric,
    Table,
    Unicode,
    Uuid,
    create_engine,
    select,
)
from sqlalchemy.dialects.mssql import DATETIME2, DATETIMEOFFSET
from sqlalchemy.engine import make_url

from ferrodbc.sqlalchemy import MSDialect_ferrodbc

from sqlserver_support import require_driver, tdspeer, tname

DRIVER_PARAM = "driver=ODBC+Driver+18+for+SQL+Server&Encrypt=no"


def driver_library() -> str:
    """The path of Driver 18's shared library, as unixODBC has it registered."""
    out = subprocess.run(["odbcinst", "-q", "-d", "-n", tdspeer.MSODBCSQL], capture_output=True, text=True).stdout
    for line in out.splitlines():
        key, _, value = line.partition("=")
        if key.strip().lower() == "driver":
            return value.strip()
    pytest.fail(f"odbcinst lists no Driver= for {tdspeer.MSODBCSQL!r}")


@pytest.fixture
def url(peer) -> str:
    require_driver("msodbcsql")
    return f"mssql+ferrodbc://sa:x@127.0.0.1:{peer.port}/master?{DRIVER_PARAM}"


@pytest.fixture
def engine(url):
    eng = create_engine(url)
    yield eng
    eng.dispose()


def test_connect_args_of_each_url_form():
    dialect = MSDialect_ferrodbc()
    (cs,), kw = dialect.create_connect_args(make_url(
        "mssql+ferrodbc://sa:p%3Bw@db.example:1444/sales?driver=ODBC+Driver+18+for+SQL+Server&Encrypt=no"))
    assert cs == "Driver={ODBC Driver 18 for SQL Server};Server=db.example,1444;Database=sales;UID=sa;PWD={p;w};Encrypt=no"
    # SQLAlchemy's pool keeps the connections: ferrodbc's own pool stays out of its way.
    assert kw == {"pooling": False}
    (cs,), _ = dialect.create_connect_args(make_url("mssql+ferrodbc://sa:x@h/db?driver=/opt/lib/libmsodbcsql-18.so"))
    assert cs.startswith("Driver={/opt/lib/libmsodbcsql-18.so};Server=h;Database=db;")
    raw = "Driver={ODBC Driver 18 for SQL Server};Server=h,1;UID=sa;PWD=x"
    (cs,), kw = dialect.create_connect_args(make_url(
        "mssql+ferrodbc:///?odbc_connect=" + urllib.parse.quote_plus(raw) + "&autocommit=true"))
    assert (cs, kw) == (raw, {"pooling": False, "autocommit": True})
    _, kw = MSDialect_ferrodbc(ferrodbc_pooling=True).create_connect_args(make_url("mssql+ferrodbc://sa:x@h/db"))
    assert kw == {"pooling": True}


@pytest.mark.parametrize("form", ["driver_name", "driver_path", "odbc_connect"])
def test_create_engine_with_each_url_form(peer, form):
    require_driver("msodbcsql")
    base = f"mssql+ferrodbc://sa:x@127.0.0.1:{peer.port}/master"
    if form == "driver_name":
        url = f"{base}?{DRIVER_PARAM}"
    elif form == "driver_path":
        url = f"{base}?driver={urllib.parse.quote_plus(driver_library())}&Encrypt=no"
    else:
        raw = f"Driver={{{tdspeer.MSODBCSQL}}};Server=127.0.0.1,{peer.port};UID=sa;PWD=x;Encrypt=no"
        url = "mssql+ferrodbc:///?odbc_connect=" + urllib.parse.quote_plus(raw)
    # No registry.register: the package's entry point is what finds the dialect.
    eng = create_engine(url)
    try:
        with eng.connect() as c:
            assert c.exec_driver_sql("SELECT 40 + 2").scalar() == 42
        assert eng.dialect.driver == "ferrodbc"
        assert eng.dialect.server_version_info[:2] == (16, 0)
        assert eng.dialect.default_schema_name == "dbo"
    finally:
        eng.dispose()


def test_core_round_trip_of_typed_rows(engine):
    md = MetaData()
    t = Table(
        tname("sa"), md,
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column("amount", Numeric(18, 4)),
        Column("name", Unicode(50)),
        Column("ts", DATETIME2(7)),
        Column("tso", DATETIMEOFFSET(7)),
        Column("flag", Boolean),
        Column("guid", Uuid),
    )
    tz = datetime.timezone(datetime.timedelta(hours=-5, minutes=-30))
    rows = [
        dict(id=1, amount=Decimal("12345678901234.5678"), name="é中😀 Ж", ts=datetime.datetime(2024, 2, 29, 23, 59, 59, 123456),
             tso=datetime.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=tz), flag=True, guid=uuid.UUID(int=2**127 + 12345)),
        dict(id=2, amount=Decimal("-0.0001"), name="", ts=datetime.datetime(1, 1, 1),
             tso=datetime.datetime(9999, 12, 31, 10, 0, tzinfo=datetime.timezone.utc), flag=False, guid=uuid.UUID(int=0)),
        dict(id=3, amount=None, name=None, ts=None, tso=None, flag=None, guid=None),
    ]
    md.create_all(engine)
    try:
        with engine.begin() as c:
            c.execute(t.insert(), rows)  # executemany: one parameter array
        with engine.connect() as c:
            got = [dict(r._mapping) for r in c.execute(select(t).order_by(t.c.id))]
        assert got == rows
        for row, want in zip(got, rows):
            # Exact types, not just equal values: Decimal stays Decimal, the offset is kept.
            assert type(row["amount"]) is type(want["amount"])
            if want["tso"] is not None:
                assert row["tso"].utcoffset() == want["tso"].utcoffset()
    finally:
        md.drop_all(engine)


def test_isolation_level_switch_and_autocommit(engine):
    with engine.connect() as c:
        assert c.get_isolation_level() == "READ COMMITTED"
    with engine.connect().execution_options(isolation_level="SERIALIZABLE") as c:
        assert c.get_isolation_level() == "SERIALIZABLE"
        assert c.connection.dbapi_connection.autocommit is False
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        assert c.connection.dbapi_connection.autocommit is True
    # Given back to the pool, the connection is reset to the engine's default level.
    with engine.connect() as c:
        assert c.connection.dbapi_connection.autocommit is False
        assert c.get_isolation_level() == "READ COMMITTED"


def test_a_dropped_connection_is_detected_and_replaced(engine):
    with engine.connect() as c:
        with pytest.raises(sqlalchemy.exc.DBAPIError) as info:
            c.exec_driver_sql("SELECT * FROM peer.mixed_100000 /* fault:drop_after=10 */").fetchall()
        assert info.value.connection_invalidated
        assert engine.dialect.is_disconnect(info.value.orig, None, None)
    # The pool threw that connection away: the next checkout is a new, working one.
    with engine.connect() as c:
        assert c.exec_driver_sql("SELECT 1").scalar() == 1


def test_a_sql_error_is_not_a_disconnect(engine):
    with engine.connect() as c:
        with pytest.raises(sqlalchemy.exc.ProgrammingError) as info:
            c.exec_driver_sql("SELECT * FROM no_such_table_here")
        assert not info.value.connection_invalidated
        assert c.exec_driver_sql("SELECT 2").scalar() == 2
