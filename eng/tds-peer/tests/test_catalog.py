"""Catalog answers as SQL Server gives them: session functions, SERVERPROPERTY, xp_msver,
multi-part procedure names, OBJECT_ID/sysobjects, and the catalog procedures behind ODBC's
SQLStatistics / SQLPrimaryKeys / SQLForeignKeys / SQLTablePrivileges / SQLProcedures."""

import datetime as dt
import uuid

import pyodbc
import pytest


def tname(prefix="tc"):
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def test_session_functions(connect, driver):
    cur = connect().cursor()
    row = cur.execute("SELECT SCHEMA_NAME(), DB_NAME(), USER_NAME(), SUSER_SNAME(), SCHEMA_NAME(1), DB_ID('tempdb')").fetchone()
    assert tuple(row) == ("dbo", "master", "dbo", "sa", "dbo", 2)
    assert cur.execute("SELECT @@SPID").fetchone()[0] >= 50
    assert cur.execute("SELECT @@TRANCOUNT").fetchone()[0] == 0


def test_database_follows_login_and_use(peer, driver):
    import tdspeer
    kw = {"Database": "appdb"}
    cn = pyodbc.connect(tdspeer.conn_str(peer, driver, **kw), autocommit=True, timeout=10)
    cur = cn.cursor()
    assert cur.execute("SELECT DB_NAME(), DB_ID()").fetchone()[0] == "appdb"
    cur.execute("USE master")
    assert cur.execute("SELECT DB_NAME()").fetchone()[0] == "master"
    cn.close()


@pytest.mark.parametrize("driver", ["msodbcsql"], indirect=True)  # FreeTDS: pyodbc cannot describe a sql_variant column (client limit)
def test_serverproperty_product_version(connect, driver):
    cur = connect().cursor()
    assert cur.execute("SELECT CAST(SERVERPROPERTY('ProductVersion') AS NVARCHAR(128))").fetchone()[0] == "16.0.4096.0"
    assert cur.execute("SELECT CAST(SERVERPROPERTY('ProductMajorVersion') AS NVARCHAR(10))").fetchone()[0] == "16"


def test_xp_msver_with_three_part_names(connect, driver):
    cur = connect().cursor()
    row = cur.execute("exec master..xp_msver 'ProductVersion'").fetchone()
    assert [d[0] for d in cur.description] == ["Index", "Name", "Internal_Value", "Character_Value"]
    assert (row.Name, row.Character_Value, row.Internal_Value) == ("ProductVersion", "16.0.4096.0", 16 << 16)
    assert len(cur.execute("EXEC master.dbo.xp_msver").fetchall()) > 5
    with pytest.raises(pyodbc.ProgrammingError, match="Could not find stored procedure"):
        cur.execute("EXEC master..xp_nosuch")


def test_object_id_and_sysobjects(connect, driver):
    cur = connect().cursor()
    t, p = tname(), tname("p")
    cur.execute(f"CREATE TABLE {t} (id INT)")
    cur.execute(f"CREATE PROCEDURE {p} AS SELECT 1")
    tid, pid, none = cur.execute(f"SELECT OBJECT_ID('{t}'), OBJECT_ID('dbo.{p}'), OBJECT_ID('{t}', 'P')").fetchone()
    assert tid != pid and none is None
    assert cur.execute(f"SELECT object_id FROM sys.objects WHERE name = '{t}'").fetchone()[0] == tid
    rows = cur.execute(f"SELECT name, id, xtype, refdate FROM sysobjects WHERE name IN ('{t}', '{p}') ORDER BY id").fetchall()
    assert [(r.name, r.id, r.xtype) for r in rows] == [(t, tid, "U "), (p, pid, "P ")]
    assert isinstance(rows[0].refdate, dt.datetime)
    assert tuple(cur.execute(f"SELECT OBJECTPROPERTY({pid}, 'IsProcedure'), OBJECTPROPERTY({tid}, 'IsProcedure')").fetchone()) == (1, 0)
    assert len(cur.execute("SELECT TOP 10 name FROM sysobjects").fetchall()) == 10
    cur.execute(f"if exists (select * from dbo.sysobjects where id = object_id(N'[{p}]') and OBJECTPROPERTY(id, N'IsProcedure') = 1) drop procedure [dbo].[{p}]")
    assert cur.execute(f"SELECT OBJECT_ID('{p}')").fetchone()[0] is None


def test_statistics_primary_and_foreign_keys(connect, driver):
    cur = connect().cursor()
    parent, child = tname("par"), tname("chi")
    cur.execute(f"CREATE TABLE {parent} (id INT PRIMARY KEY, foo INT)")
    cur.execute(f"CREATE INDEX ix_{parent} ON {parent} (foo)")
    cur.execute(f"CREATE TABLE {child} (cid INT IDENTITY(1,1) PRIMARY KEY, pid INT REFERENCES {parent}(id) ON DELETE CASCADE)")
    stats = [tuple(r)[3:9] for r in cur.statistics(parent).fetchall()]
    assert stats[0][3] == 0, "the SQL_TABLE_STAT row comes first"
    assert (1, parent, f"ix_{parent}", 3, 1, "foo") in stats
    assert (0, parent, f"PK__{parent}", 1, 1, "id") in stats
    assert [(r.column_name, r.key_seq) for r in cur.primaryKeys(parent).fetchall()] == [("id", 1)]
    assert [r.column_name for r in cur.primaryKeys(child).fetchall()] == ["cid"]
    fks = [(r.pktable_name, r.pkcolumn_name, r.fktable_name, r.fkcolumn_name, r.delete_rule) for r in cur.foreignKeys(foreignTable=child).fetchall()]
    assert fks == [(parent, "id", child, "pid", 0)]


def test_table_privileges_and_procedures(connect, driver):
    cur = connect().cursor()
    t, p = tname(), tname("p")
    cur.execute(f"CREATE TABLE {t} (id INT)")
    cur.execute(f"CREATE PROCEDURE {p} @a INT AS SELECT @a")
    privs = sorted(r.privilege for r in cur.tablePrivileges(t).fetchall())
    assert privs == ["DELETE", "INSERT", "REFERENCES", "SELECT", "UPDATE"]
    assert [r.procedure_name for r in cur.procedures(p).fetchall()] == [f"{p};1"]


def test_select_alias_by_assignment_and_values_table(connect, driver):
    from decimal import Decimal
    cur = connect().cursor()
    assert tuple(cur.execute("select i = 1, [j] = N'x'").fetchone()) == (1, "x")
    assert [d[0] for d in cur.description] == ["i", "j"]
    rows = cur.execute("select v from (values (1, cast('1.5' as decimal(10,2))), (2, cast('-2.25' as decimal(10,2)))) t(n, v) order by n").fetchall()
    assert [r[0] for r in rows] == [Decimal("1.50"), Decimal("-2.25")]


def test_procedure_created_in_rolled_back_transaction_is_gone(connect, driver):
    cn = connect(autocommit=False)
    cur = cn.cursor()
    p = tname("p")
    cur.execute(f"CREATE PROCEDURE {p} AS SELECT 1")
    cn.rollback()
    assert cur.execute(f"SELECT OBJECT_ID('{p}')").fetchone()[0] is None


def test_three_part_and_db_dot_dot_names(connect, driver):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE master.dbo.{t} (id INT)")
    cur.execute(f"INSERT INTO [master].[dbo].[{t}] VALUES (1)")
    cur.execute(f"INSERT INTO master..{t} VALUES (2)")
    assert [r[0] for r in cur.execute(f"SELECT x.id FROM master..{t} x ORDER BY x.id")] == [1, 2]
    assert cur.execute(f"SELECT COUNT(*) FROM master.sys.objects WHERE name = '{t}'").fetchone()[0] == 1
    assert cur.execute(f"SELECT COUNT(*) FROM master.INFORMATION_SCHEMA.TABLES WHERE TABLE_NAME = '{t}'").fetchone()[0] == 1


def test_procedure_columns(connect, driver):
    cur = connect().cursor()
    p = tname("p")
    cur.execute(f"CREATE PROCEDURE {p} @a INT, @b NVARCHAR(20) OUTPUT AS SELECT @a")
    rows = [(r.column_name, r.column_type, r.type_name, r.ordinal_position) for r in cur.procedureColumns(p).fetchall()]
    # SQL_RETURN_VALUE (5) first, then SQL_PARAM_INPUT (1) and SQL_PARAM_INPUT_OUTPUT (2).
    assert rows == [("@RETURN_VALUE", 5, "int", 0), ("@a", 1, "int", 1), ("@b", 2, "nvarchar", 2)]


def test_columns_buffer_length_as_sql_server(connect, driver):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (a INT, b DECIMAL(18,4), c NVARCHAR(50), d DATETIME2(7))")
    got = [(r.column_name, r.column_size, r.buffer_length) for r in cur.columns(t).fetchall()]
    assert got == [("a", 10, 4), ("b", 18, 20), ("c", 50, 100), ("d", 27, 16)]


@pytest.mark.parametrize("driver", ["msodbcsql"], indirect=True)  # FreeTDS: pyodbc cannot describe a sql_variant column (client limit)
def test_sql_variant_column_keeps_base_types(connect, driver):
    from decimal import Decimal
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT IDENTITY(1,1), a SQL_VARIANT)")
    for v in ("456.7", "'a string'", "CAST('2024-06-03' AS DATE)", "CAST(0x0102 AS VARBINARY(10))"):
        cur.execute(f"INSERT INTO {t} (a) VALUES ({v})")
    got = [r[0] for r in cur.execute(f"SELECT a FROM {t} ORDER BY id").fetchall()]
    assert got == [Decimal("456.7"), "a string", dt.date(2024, 6, 3), b"\x01\x02"]


def test_plus_between_character_columns_concatenates(connect, driver):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (a VARCHAR(10), b NVARCHAR(10), n INT)")
    cur.execute(f"INSERT INTO {t} VALUES ('12', N'34', 5)")
    assert tuple(cur.execute(f"SELECT a + b, x.a + x.b, n + n FROM {t} x").fetchone()) == ("1234", "1234", 10)


def test_table_variable_lives_for_its_batch(connect, driver):
    cur = connect().cursor()
    cur.execute("DECLARE @t TABLE (name VARCHAR(10), id INT); INSERT INTO @t VALUES ('a', 1), ('b', 2); "
                "SELECT name FROM @t WHERE id > 1")
    while cur.description is None:
        assert cur.nextset()
    assert [r[0] for r in cur.fetchall()] == ["b"]
    with pytest.raises(pyodbc.ProgrammingError):
        cur.execute("SELECT * FROM @t")


def test_cast_without_length_is_30_and_sysname_is_128(connect, driver):
    """SQLAlchemy's server-version query: CAST(SERVERPROPERTY('ProductVersion') AS VARCHAR)."""
    cur = connect().cursor()
    assert cur.execute("SELECT CAST(SERVERPROPERTY('ProductVersion') AS VARCHAR)").fetchone()[0] == "16.0.4096.0"
    assert cur.execute("SELECT CAST(REPLICATE('x', 40) AS VARCHAR)").fetchone()[0] == "x" * 30
    assert cur.execute("DECLARE @n sysname = REPLICATE(N'y', 100); SELECT @n").fetchone()[0] == "y" * 100


def test_catalog_patterns_escapes_and_qualifiers(connect, driver):
    """SQLTables / SQLColumns / SQLPrimaryKeys / SQLProcedures / SQLStatistics as the drivers
    send them: `_` and `%` are LIKE wildcards, an ODBC-escaped `\\_` arrives as `[_]` (both
    drivers rewrite it so) and matches only `_`; sp_pkeys and sp_statistics take an exact name;
    an empty schema or catalog (Driver 18 sends '' for it) lists nothing; another catalog is
    called as `[db].[sys].sp_tables` and answered in that database's name; a qualifier naming
    another database in the call itself is SQL Server's 15250."""
    cur = connect().cursor()
    u = uuid.uuid4().hex[:6]
    a_b, axb = f"q{u}_b", f"q{u}xb"
    cur.execute(f"CREATE TABLE {a_b} (id int PRIMARY KEY, v int)")
    cur.execute(f"CREATE TABLE {axb} (id int PRIMARY KEY, w int)")
    cur.execute(f"CREATE PROCEDURE p{u}_1 AS SELECT 1")
    cur.execute(f"CREATE PROCEDURE p{u}x1 AS SELECT 1")

    def names(rows, k=2):
        return sorted({r[k] for r in rows})

    assert names(cur.tables(table=f"q{u}_b").fetchall()) == sorted([a_b, axb])
    assert names(cur.tables(table=f"q{u}\\_b").fetchall()) == [a_b]
    assert names(cur.tables(table=f"q{u}%", catalog="master", schema="dbo").fetchall()) == sorted([a_b, axb])
    assert names(cur.tables(table=f"q{u}%", schema="d%").fetchall()) == sorted([a_b, axb])
    assert cur.tables(table=f"q{u}%", schema="other").fetchall() == []
    assert [r[3] for r in cur.columns(table=f"q{u}\\_b").fetchall()] == ["id", "v"]
    assert names(cur.columns(table=f"q{u}_b").fetchall()) == sorted([a_b, axb])
    assert [(r[2], r[3]) for r in cur.primaryKeys(a_b).fetchall()] == [(a_b, "id")]
    assert names(cur.statistics(a_b).fetchall()) == [a_b]
    assert names(cur.procedures(procedure=f"p{u}\\_1").fetchall()) == [f"p{u}_1;1"]
    assert names(cur.procedures(procedure=f"p{u}_1").fetchall()) == sorted([f"p{u}_1;1", f"p{u}x1;1"])
    assert [(r[0], r[2]) for r in cur.tables(table=f"q{u}\\_b", catalog="tempdb").fetchall()] == [("tempdb", a_b)]
    if driver == "msodbcsql":
        # FreeTDS sends NULL for an empty string here, which means "any".
        assert cur.tables(table=a_b, schema="").fetchall() == []
        assert cur.tables(table=a_b, catalog="").fetchall() == []
        assert cur.procedures(procedure=f"p{u}_1", catalog="").fetchall() == []
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"EXEC sp_tables @table_name = '{a_b}', @table_qualifier = 'otherdb'")
        cur.fetchall()
    assert "(15250)" in ei.value.args[1]
    assert "The database name component of the object qualifier must be the name of the current database." in ei.value.args[1]
    with pytest.raises(pyodbc.Error) as ei:
        cur.execute(f"EXEC sp_pkeys @table_name = '{a_b}', @table_qualifier = 'otherdb'")
        cur.fetchall()
    assert "(15250)" in ei.value.args[1]
