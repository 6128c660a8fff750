"""Table-valued parameters through ferrodbc (pyodbc's form: a list or tuple as one parameter,
optionally starting with the table type's name and schema), Driver 18 against the TDS peer.

Driver 18 only: FreeTDS has no table-valued parameters (a client limit), so its case is not
generated (see eng/tds-peer/tests/test_tvp.py for the same choice).
"""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest

import ferrodbc

pytestmark = pytest.mark.parametrize("driver", ["msodbcsql"], indirect=True)


@pytest.fixture
def tvp(conn):
    """A table type of every common column type and a procedure echoing its rows by n."""
    h = uuid.uuid4().hex[:8]
    tt, tp = f"ftt_{h}", f"ftp_{h}"
    cur = conn.cursor()
    cur.execute(
        f"CREATE TYPE {tt} AS TABLE (n INT, s NVARCHAR(20), v VARCHAR(MAX), b VARBINARY(100), "
        "d DECIMAL(18, 4), f FLOAT, on_ BIT, day DATE, at DATETIME2(6), g UNIQUEIDENTIFIER)"
    )
    cur.execute(f"CREATE PROCEDURE {tp} @rows {tt} READONLY AS SELECT * FROM @rows ORDER BY n")
    return cur, tt, tp


ROWS = [
    (2, "é中", "x" * 10_000, b"\x00\x01", Decimal("1.5000"), 2.5, True, dt.date(2024, 2, 29),
     dt.datetime(2024, 2, 29, 12, 0, 0, 123456), uuid.UUID(int=7)),
    (1, None, None, None, None, None, None, None, None, None),
    (3, "", "", b"", Decimal("-99999999999999.9999"), -1e308, False, dt.date(1, 1, 1),
     dt.datetime(9999, 12, 31, 23, 59, 59, 999999), uuid.UUID(int=2**128 - 1)),
]


def test_rows_reach_the_procedure_described_named_and_with_schema(tvp):
    cur, tt, tp = tvp
    expected = sorted(ROWS)
    for sql, param in (
        (f"exec {tp} ?", ROWS),  # no type name: the parameter is described
        (f"{{call {tp}(?)}}", [tt, *ROWS]),
        (f"exec {tp} ?", (tt, "dbo", *ROWS)),
    ):
        got = [tuple(r) for r in cur.execute(sql, [param]).fetchall()]
        assert got == expected, sql
    # Executing again on the same cursor after a prepared (described) one.
    assert cur.execute("SELECT 1").fetchval() == 1


def test_an_empty_table_reaches_the_procedure(tvp):
    cur, tt, tp = tvp
    assert cur.execute(f"exec {tp} ?", [[]]).fetchall() == []
    assert cur.execute(f"exec {tp} ?", [[tt, "dbo"]]).fetchall() == []


def test_shape_and_type_errors_are_raised_before_anything_is_sent(tvp):
    cur, tt, tp = tvp
    with pytest.raises(ferrodbc.ProgrammingError, match="same size"):
        cur.execute(f"exec {tp} ?", [[tt, (1,), (1, 2)]])
    with pytest.raises(TypeError, match="must be str"):
        cur.execute(f"exec {tp} ?", [[tt.encode(), (1,)]])
    with pytest.raises(TypeError, match="Expected Decimal"):
        cur.execute(f"exec {tp} ?", [[(1, None, None, None, Decimal(1)), (2, None, None, None, 5)]])
    with pytest.raises(ferrodbc.ProgrammingError, match="executemany"):
        cur.executemany(f"exec {tp} ?", [([(1,)],), ([(2,)],)])
    assert cur.execute("SELECT 1").fetchval() == 1
