"""Bulk load (SQL Server's TDS bulk protocol): what the drivers' bcp APIs ask the server first.

Driver 18's `bcp_initW` sends `sp_describe_first_result_set @tsql = N'select * from t'` and
reads `is_updateable` (a column not updateable makes `bcp_sendrow` fail with "All bound columns
are read-only"), `is_computed_column`, and for text columns `tds_collation_id` /
`tds_collation_sort_id` (see eng/tds-peer/captures/bulk-load.md)."""

import uuid

import pytest


def tname(prefix="tb"):
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize("driver", ["msodbcsql"], indirect=True)
def test_describe_first_result_set_as_bcp_init_reads_it(connect, driver):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT NOT NULL PRIMARY KEY, name NVARCHAR(50), code VARCHAR(10))")
    cur.execute("EXEC sp_describe_first_result_set @tsql = ?", f"select id, name, code, id + 1 AS nxt from {t}")
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    got = [(r["name"], r["is_updateable"], r["is_computed_column"], r["source_schema"], r["source_table"],
            r["source_column"], r["tds_collation_id"], r["tds_collation_sort_id"]) for r in rows]
    assert got == [
        ("id", True, False, "dbo", t, "id", None, None),
        ("name", True, False, "dbo", t, "name", 0x00D00409, 52),
        ("code", True, False, "dbo", t, "code", 0x00D00409, 52),
        # An expression: no source, not updateable (SQL Server answers so).
        ("nxt", False, False, None, None, None, None, None),
    ]
    cur.execute("SELECT DB_NAME()")
    db = cur.fetchone()[0]
    assert {r["source_database"] for r in rows[:3]} == {db}
    assert rows[3]["source_database"] is None
