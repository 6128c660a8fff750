"""Catalog calls through both drivers against the TDS peer, where a driver's own behaviour
decides what the user gets back."""

from __future__ import annotations

from sqlserver_support import tname


def test_row_id_columns_are_the_primary_key_and_row_ver_the_rowversion(conn, driver):
    """SQLSpecialColumns asks for the current-row scope: Microsoft's drivers answer SQL_BEST_ROWID
    with no rows for any other scope (Driver 18 sends the table name as N'+'), which is why
    pyodbc's rowIdColumns, asking for SQL_SCOPE_TRANSACTION, finds nothing on SQL Server."""
    t = tname()
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {t} (a INT NOT NULL, b VARCHAR(10) NOT NULL, v INT, rv ROWVERSION, "
                f"PRIMARY KEY (a, b))")
    ids = cur.rowIdColumns(t).fetchall()
    assert [(r.column_name, r.type_name) for r in ids] == [("a", "int"), ("b", "varchar")]
    assert all(r.pseudo_column == 1 for r in ids)  # SQL_PC_NOT_PSEUDO: SQL Server has none
    assert all(r.scope == 0 for r in ids)  # SQL_SCOPE_CURROW: SQL Server always says 0
    # Catalog and schema are exact names: the current database and dbo find the table, any
    # other schema finds nothing.
    assert len(cur.rowIdColumns(t, catalog="master", schema="dbo").fetchall()) == 2
    assert cur.rowIdColumns(t, schema="other").fetchall() == []
    assert cur.rowVerColumns(t, schema="other").fetchall() == []
    vers = cur.rowVerColumns(t).fetchall()
    assert [(r.column_name, r.type_name, r.column_size) for r in vers] == [("rv", "timestamp", 8)]


def test_row_id_columns_of_a_table_without_a_key_are_none(conn, driver):
    t = tname()
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {t} (v INT)")
    assert cur.rowIdColumns(t).fetchall() == []
    assert cur.rowVerColumns(t).fetchall() == []
