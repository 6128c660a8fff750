"""A cancel that stops a statement before it ran is an error, never a silent success (found by
eng/chaos.py: through Driver 18 a cancelled INSERT returned like one that ran, and the row was
not there; pyodbc does the same)."""

from __future__ import annotations

import threading

import pytest

import ferrodbc

from sqlserver_support import tname


@pytest.mark.parametrize(
    "sql", ["INSERT INTO {t} VALUES (1)", "SELECT COUNT(*) FROM {t}", "DELETE FROM {t}"]
)
def test_a_statement_cancelled_unrun_raises_hy008(conn, sql):
    t = tname("unrun")
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {t} (i int)")
    cur.execute(f"INSERT INTO {t} VALUES (7)")
    timer = threading.Timer(0.3, cur.cancel)
    timer.start()
    try:
        with pytest.raises(ferrodbc.OperationalError) as err:
            cur.execute(sql.format(t=t) + " /* fault:stall=3 */")
    finally:
        timer.join()
    assert err.value.args[0] == "HY008"
    assert cur.execute(f"SELECT i FROM {t}").fetchall() == [(7,)]
    # Without a cancel, a statement with no rows and no count still succeeds.
    cur.execute(f"CREATE TABLE {t}_2 (i int)")
    assert cur.description is None
