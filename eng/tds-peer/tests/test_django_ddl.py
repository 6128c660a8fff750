"""What Django's SQL Server back end (mssql-django) sends that the peer answers as SQL Server
does: OBJECT_NAME / COL_NAME over the catalog's ids (introspection of default constraints and
index columns), ALTER TABLE … ADD CONSTRAINT … FOREIGN KEY (migrations add foreign keys after
creating the tables) and table hints of select_for_update()."""

import uuid

import pyodbc
import pytest


def tname(prefix="tj"):
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def test_object_name_and_col_name(connect, driver):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY, flag INT NOT NULL DEFAULT 3, note NVARCHAR(10))")
    assert cur.execute(f"SELECT OBJECT_NAME(OBJECT_ID('{t}'))").fetchval() == t
    assert cur.execute(f"SELECT COL_NAME(OBJECT_ID('{t}'), 3)").fetchval() == "note"
    row = cur.execute(f"SELECT COL_NAME(OBJECT_ID('{t}'), 9), OBJECT_NAME(-12345)").fetchone()
    assert tuple(row) == (None, None)
    # mssql-django's introspection of default constraints, verbatim.
    rows = cur.execute(
        "SELECT [name], COL_NAME([parent_object_id], [parent_column_id]) FROM [sys].[default_constraints] "
        "WHERE OBJECT_NAME([parent_object_id]) = ?",
        t,
    ).fetchall()
    assert [tuple(r) for r in rows] == [(f"DF__{t}__flag", "flag")]


def test_alter_table_add_foreign_key(connect, driver):
    cur = connect().cursor()
    parent, child = tname("tp"), tname("tch")
    cur.execute(f"CREATE TABLE [{parent}] ([id] int NOT NULL PRIMARY KEY IDENTITY (1, 1), [name] nvarchar(20) NOT NULL)")
    cur.execute(f"CREATE TABLE [{child}] ([id] int NOT NULL PRIMARY KEY IDENTITY (1, 1), [parent_id] int NOT NULL)")
    fk = f"{child}_parent_id_fk_{parent}_id"
    cur.execute(f"ALTER TABLE [{child}] ADD CONSTRAINT [{fk}] FOREIGN KEY ([parent_id]) REFERENCES [{parent}] ([id])")
    got = cur.execute(
        "SELECT fk.name, OBJECT_NAME(fk.referenced_object_id) FROM sys.foreign_keys fk WHERE fk.parent_object_id = OBJECT_ID(?)",
        child,
    ).fetchall()
    assert [tuple(r) for r in got] == [(fk, parent)]
    # The table keeps its rows and takes new ones (on other connections too).
    cur.execute(f"INSERT INTO [{parent}] (name) VALUES ('p')")
    cur.execute(f"INSERT INTO [{child}] (parent_id) VALUES (1)")
    other = connect().cursor()
    assert other.execute(f"SELECT COUNT(*) FROM [{child}]").fetchval() == 1
    keys = [(r.fktable_name, r.fkcolumn_name) for r in other.foreignKeys(table=parent)]
    assert keys == [(child, "parent_id")]


def test_table_hints_of_select_for_update(connect, driver):
    cn = connect(autocommit=False)
    cur = cn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY, v INT)")
    cur.execute(f"INSERT INTO {t} VALUES (1, 10)")
    for hint in ("ROWLOCK, UPDLOCK", "ROWLOCK, UPDLOCK, READPAST", "NOWAIT, ROWLOCK, UPDLOCK", "HOLDLOCK"):
        assert cur.execute(f"SELECT [{t}].[v] FROM [{t}] WITH ({hint}) WHERE [{t}].[id] = 1").fetchval() == 10
    cn.rollback()


def test_flush_statements(connect, driver):
    """mssql-django's flush (every TransactionTestCase): NOCHECK CONSTRAINT, DELETE parents and
    children in any order, DBCC CHECKIDENT RESEED, CHECK CONSTRAINT."""
    cur = connect().cursor()
    parent, child, fresh = tname("tp"), tname("tch"), tname("tfr")
    cur.execute(f"CREATE TABLE [{parent}] ([id] int NOT NULL PRIMARY KEY IDENTITY (1, 1), [name] nvarchar(20))")
    cur.execute(f"CREATE TABLE [{child}] ([id] int NOT NULL PRIMARY KEY IDENTITY (1, 1), [parent_id] int NOT NULL)")
    cur.execute(f"CREATE TABLE [{fresh}] ([id] int NOT NULL PRIMARY KEY IDENTITY (1, 1), [v] int)")
    fk = f"{child}_parent_id_fk"
    cur.execute(f"ALTER TABLE [{child}] ADD CONSTRAINT [{fk}] FOREIGN KEY ([parent_id]) REFERENCES [{parent}] ([id])")
    cur.execute(f"INSERT INTO [{parent}] (name) VALUES ('a'), ('b')")
    cur.execute(f"INSERT INTO [{child}] (parent_id) VALUES (2)")
    with pytest.raises(pyodbc.Error):
        cur.execute(f"DELETE FROM [{parent}]")
    cur.execute(f"ALTER TABLE [{child}] NOCHECK CONSTRAINT [{fk}];")
    cur.execute(f"DELETE FROM [{parent}];")
    cur.execute(f"DELETE FROM [{child}];")
    cur.execute(f"DBCC CHECKIDENT ('[{parent}]', RESEED, 0) WITH NO_INFOMSGS;")
    cur.execute(f"DBCC CHECKIDENT ('{fresh}', RESEED, 1) WITH NO_INFOMSGS;")
    cur.execute(f"ALTER TABLE [{child}] CHECK CONSTRAINT [{fk}];")
    cur.execute(f"INSERT INTO [{parent}] (name) VALUES ('c')")
    cur.execute(f"INSERT INTO [{fresh}] (v) VALUES (7)")
    # A table that had rows continues at the value + 1; one that never had any starts at it.
    assert cur.execute(f"SELECT id FROM [{parent}]").fetchval() == 1
    assert cur.execute(f"SELECT id FROM [{fresh}]").fetchval() == 1
    with pytest.raises(pyodbc.Error):
        cur.execute(f"INSERT INTO [{child}] (parent_id) VALUES (99)")
    with pytest.raises(pyodbc.Error, match=r"\(4917\)"):
        cur.execute(f"ALTER TABLE [{child}] NOCHECK CONSTRAINT [no_such_fk]")
    with pytest.raises(pyodbc.Error, match=r"\(4902\)"):
        cur.execute("ALTER TABLE [no_such_table] NOCHECK CONSTRAINT ALL")
    with pytest.raises(pyodbc.Error, match=r"\(2501\)"):
        cur.execute("DBCC CHECKIDENT ('no_such_table', RESEED, 0)")
