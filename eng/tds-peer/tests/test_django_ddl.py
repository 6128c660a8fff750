"""What Django's SQL Server back end (mssql-django) sends that the peer answers as SQL Server
does: OBJECT_NAME / COL_NAME over the catalog's ids (introspection of default constraints and
index columns), ALTER TABLE … ADD CONSTRAINT … FOREIGN KEY (migrations add foreign keys after
creating the tables) and table hints of select_for_update()."""

import uuid


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
