"""Dynamic SQL (`EXEC ('…')`) through the real drivers, with SQL Server's scoping rules."""

import pyodbc
import pytest


def test_exec_string_runs_in_if_and_batch(connect):
    # Migration scripts: CREATE SCHEMA must be alone in its batch, so it is wrapped in EXEC.
    cn = connect()
    cur = cn.cursor()
    sql = "IF NOT EXISTS (SELECT * FROM sys.schemas WHERE name = 'dyn_s') EXEC('CREATE SCHEMA dyn_s')"
    cur.execute(sql)
    cur.execute(sql)  # the second time the IF is false: nothing runs, nothing fails
    assert cur.execute("SELECT COUNT(*) FROM sys.schemas WHERE name = 'dyn_s'").fetchval() == 1
    cur.execute("SET NOCOUNT ON; DECLARE @n INT = 2; IF @n > 1 BEGIN EXECUTE ('SELECT 40 + 2 AS v') END")
    assert cur.fetchall()[0][0] == 42


def test_exec_concatenates_literals_and_variables(connect):
    cur = connect().cursor()
    cur.execute("CREATE TABLE #dyn_t (id INT, name NVARCHAR(10))")
    cur.execute("INSERT INTO #dyn_t VALUES (1, N'a'), (2, N'b')")
    cur.execute(
        "SET NOCOUNT ON; DECLARE @cols NVARCHAR(100) = N'name'; "
        "DECLARE @w NVARCHAR(10) = N'2'; "
        "EXEC(N'SELECT ' + @cols + N' FROM [#dyn_t] WHERE id = ' + @w)"
    )
    assert [tuple(r) for r in cur.fetchall()] == [("b",)]
    assert cur.description[0][0] == "name"
    # A parameter of the outer statement is evaluated in the caller's scope too.
    cur.execute("EXEC(N'SELECT COUNT(*) FROM #dyn_t WHERE name = ''' + ? + N'''')", "a")
    assert cur.fetchval() == 1


def test_outer_variables_are_not_visible_inside(connect):
    cur = connect().cursor()
    with pytest.raises(pyodbc.Error, match=r"Must declare the scalar variable \"@x\"") as e:
        cur.execute("DECLARE @x INT = 1; EXEC('SELECT @x')")
        while cur.nextset():
            pass
    assert "42000" in str(e.value)
    # A variable declared inside the dynamic text is its own.
    cur.execute("EXEC('DECLARE @y INT = 5; SELECT @y * 2')")
    assert cur.fetchval() == 10


def test_temp_table_made_inside_is_dropped_after(connect):
    cur = connect().cursor()
    cur.execute("SET NOCOUNT ON; EXEC('CREATE TABLE #dyn_tmp (a INT); INSERT INTO #dyn_tmp VALUES (1); SELECT COUNT(*) FROM #dyn_tmp')")
    assert cur.fetchval() == 1
    with pytest.raises(pyodbc.Error, match="Invalid object name '#dyn_tmp'"):
        cur.execute("SELECT * FROM #dyn_tmp")
    # A #temp of the caller is visible inside, and stays.
    cur.execute("CREATE TABLE #dyn_outer (a INT)")
    cur.execute("EXEC('INSERT INTO #dyn_outer VALUES (7)')")
    assert cur.execute("SELECT a FROM #dyn_outer").fetchval() == 7


def test_null_string_runs_nothing(connect):
    cur = connect().cursor()
    cur.execute("SET NOCOUNT ON; DECLARE @n NVARCHAR(10); EXEC(N'SELECT 1' + @n); SELECT 2")
    assert cur.fetchval() == 2


def test_fmtonly_exec_returns_columns_and_no_rows(connect):
    # mssql-python's bulk copy reads the target's columns this way.
    cur = connect().cursor()
    cur.execute("CREATE TABLE #fmt (id INT, name NVARCHAR(20))")
    cur.execute("INSERT INTO #fmt VALUES (1, N'a')")
    cur.execute(
        "SET NOCOUNT ON; DECLARE @cols NVARCHAR(100) = N'[id], [name]'; "
        "SET FMTONLY ON; EXEC(N'SELECT ' + @cols + N' FROM [#fmt]'); SET FMTONLY OFF;"
    )
    assert [d[0] for d in cur.description] == ["id", "name"]
    assert cur.description[0][1] is int and cur.description[1][1] is str
    assert cur.fetchall() == []
    # FMTONLY OFF again: rows come back.
    assert cur.execute("SELECT COUNT(*) FROM #fmt").fetchval() == 1


def test_fmtonly_runs_no_insert_update_delete(connect):
    """Under SET FMTONLY ON SQL Server returns metadata only: INSERT, UPDATE, DELETE and MERGE
    are not run (FreeTDS's bcp_init sends `SET FMTONLY ON select * from t SET FMTONLY OFF`)."""
    import uuid

    cur = connect().cursor()
    t = f"fmt_{uuid.uuid4().hex[:8]}"
    cur.execute(f"CREATE TABLE {t} (id INT, v NVARCHAR(10))")
    cur.execute(f"INSERT INTO {t} VALUES (1, N'a')")
    cur.execute(f"SET NOCOUNT ON; SET FMTONLY ON; INSERT INTO {t} VALUES (2, N'b'); UPDATE {t} SET v = N'z'; "
                f"DELETE FROM {t} WHERE id = 1; SELECT id, v FROM {t}; SET FMTONLY OFF")
    assert [d[0] for d in cur.description] == ["id", "v"]
    assert cur.fetchall() == []
    cur.execute("SET FMTONLY ON")
    cur.execute(f"INSERT INTO {t} VALUES (?, ?)", 3, "c")
    cur.execute(f"EXEC(N'INSERT INTO {t} VALUES (4, N''d'')')")
    cur.execute("SET FMTONLY OFF")
    assert [tuple(r) for r in cur.execute(f"SELECT id, v FROM {t}").fetchall()] == [(1, "a")]
