"""Hostile numbers from a broken server, through Driver 18 and FreeTDS (issue 36): the peer's
`fault:rowcount=N` makes a statement's DONE report N rows. A count that an SQLLEN cannot hold
(2^63 and up) ends in a PEP 249 error naming it (or the driver's own answer, never read as a
wrong count); counts that fit arrive exactly. Never a panic or a crash; the connection stays
usable. The engine's own checks (src/checked.rs, batch indicators) have unit tests in Rust."""

from __future__ import annotations

import pytest

import ferrodbc


def table(conn) -> ferrodbc.Cursor:
    cur = conn.cursor()
    cur.execute("CREATE TABLE #hostile_rc (id int)")
    cur.execute("INSERT INTO #hostile_rc VALUES (1), (2)")
    return cur


def assert_usable(conn) -> None:
    assert conn.broken is False
    assert conn.cursor().execute("SELECT 41 + 1").fetchval() == 42


@pytest.mark.parametrize("n", [0, 7, 2**31, 2**63 - 1])
def test_row_counts_that_fit_arrive_exactly(conn, driver, n):
    cur = table(conn)
    cur.execute(f"UPDATE #hostile_rc SET id = id /* fault:rowcount={n} */")
    assert cur.rowcount == n
    assert_usable(conn)


@pytest.mark.parametrize("n", [2**63, 2**63 + 5, 2**64 - 2])
def test_row_count_past_sqllen_is_an_interface_error_naming_it(conn, driver, n):
    # Both drivers hand the DONE token's u64 on as SQLLEN bits: negative, below -1.
    cur = table(conn)
    with pytest.raises(ferrodbc.InterfaceError) as e:
        cur.execute(f"UPDATE #hostile_rc SET id = id /* fault:rowcount={n} */")
    assert f"impossible row count ({n - 2**64})" in str(e.value), str(e.value)
    assert_usable(conn)


def test_row_count_of_all_ones_is_unknown_not_a_count(conn, driver):
    # 2^64 - 1 has SQLLEN's bits of -1, ODBC's "unknown": the only honest reading.
    cur = table(conn)
    cur.execute(f"UPDATE #hostile_rc SET id = id /* fault:rowcount={2**64 - 1} */")
    assert cur.rowcount == -1
    assert_usable(conn)
