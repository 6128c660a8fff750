"""Table types and table-valued parameters: CREATE TYPE … AS TABLE, a procedure with a
READONLY table parameter, pyodbc passing a list of rows (Driver 18 sends a TVP, type 0xF3)."""

import uuid
from decimal import Decimal

import pyodbc
import pytest

# Driver 18 only: FreeTDS has no table-valued parameters (client limit), so its case is not
# generated at all (a skip would hide nothing about the peer, but would still read as a skip).
pytestmark = pytest.mark.parametrize("driver", ["msodbcsql"], indirect=True)


def names():
    h = uuid.uuid4().hex[:8]
    return f"tt_{h}", f"tp_{h}"


@pytest.fixture
def tvp_proc(connect, driver):
    cur = connect().cursor()
    tt, tp = names()
    cur.execute(f"CREATE TYPE {tt} AS TABLE (n INT, s NVARCHAR(10), d DECIMAL(10,2))")
    cur.execute(f"CREATE PROCEDURE {tp} @rows {tt} READONLY AS SELECT n, s, d FROM @rows ORDER BY n")
    return cur, tt, tp


def test_tvp_rows_reach_the_procedure(tvp_proc):
    cur, _, tp = tvp_proc
    rows = [(2, "é中", Decimal("1.50")), (1, None, Decimal("-3.25"))]
    for sql in (f"{{call {tp}(?)}}", f"exec {tp} ?"):
        got = [tuple(r) for r in cur.execute(sql, (rows,)).fetchall()]
        assert got == [(1, None, Decimal("-3.25")), (2, "é中", Decimal("1.50"))], sql


def test_tvp_type_checks_and_catalog(tvp_proc):
    cur, tt, tp = tvp_proc
    assert cur.execute(f"SELECT TYPE_ID('dbo.{tt}')").fetchone()[0] > 256
    assert cur.execute("SELECT TYPE_ID('int')").fetchone()[0] == 56
    cur.execute("EXEC sp_describe_undeclared_parameters @tsql = ?", f"EXEC {tp} @P1")
    row = cur.fetchone()
    assert (row.name, row.suggested_system_type_id, row.suggested_user_type_name) == ("@P1", 243, tt)
    with pytest.raises(pyodbc.ProgrammingError, match="already exists"):
        cur.execute(f"CREATE TYPE {tt} AS TABLE (x INT)")
    cur.execute(f"DROP PROCEDURE {tp}")
    cur.execute(f"DROP TYPE {tt}")
    assert cur.execute(f"SELECT TYPE_ID('{tt}')").fetchone()[0] is None
    cur.execute(f"DROP TYPE IF EXISTS {tt}")
