"""sys.databases, DB_ID / DB_NAME and SQL_VARIANT_PROPERTY as SQL Server answers them."""


def test_sys_databases_lists_the_system_databases(connect):
    cur = connect().cursor()
    rows = cur.execute(
        "SELECT name, database_id, collation_name, compatibility_level, state_desc FROM sys.databases ORDER BY database_id"
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        ("master", 1, "SQL_Latin1_General_CP1_CI_AS", 160, "ONLINE"),
        ("tempdb", 2, "SQL_Latin1_General_CP1_CI_AS", 160, "ONLINE"),
        ("model", 3, "SQL_Latin1_General_CP1_CI_AS", 160, "ONLINE"),
        ("msdb", 4, "SQL_Latin1_General_CP1_CI_AS", 160, "ONLINE"),
    ]
    assert cur.execute("SELECT name FROM sys.databases WHERE database_id = DB_ID()").fetchval() == "master"
    assert tuple(cur.execute("SELECT DB_ID('master'), DB_NAME(), DB_NAME(2)").fetchone()) == (1, "master", "tempdb")


def test_sql_variant_property(connect):
    cur = connect().cursor()
    got = cur.execute(
        "SELECT CAST(SQL_VARIANT_PROPERTY(CAST(1 AS sql_variant), 'BaseType') AS NVARCHAR(30)),"
        " CAST(SQL_VARIANT_PROPERTY(CAST(CAST(12.345 AS DECIMAL(7,3)) AS sql_variant), 'Precision') AS INT),"
        " CAST(SQL_VARIANT_PROPERTY(CAST(CAST(12.345 AS DECIMAL(7,3)) AS sql_variant), 'Scale') AS INT),"
        " CAST(SQL_VARIANT_PROPERTY(CAST(N'abc' AS sql_variant), 'BaseType') AS NVARCHAR(30)),"
        " CAST(SQL_VARIANT_PROPERTY(CAST(CAST('x' AS NVARCHAR(20)) AS sql_variant), 'MaxLength') AS INT),"
        " CAST(SQL_VARIANT_PROPERTY(CAST(CAST(5 AS BIGINT) AS sql_variant), 'MaxLength') AS INT)"
    ).fetchone()
    assert tuple(got) == ("int", 7, 3, "nvarchar", 40, 8)
    # A value of no known type: decided from the value at run time.
    sql = "SELECT CAST(SQL_VARIANT_PROPERTY((SELECT 3000000000), 'BaseType') AS NVARCHAR(30))"
    assert cur.execute(sql).fetchval() == "bigint"
    assert cur.execute("SELECT CAST(SQL_VARIANT_PROPERTY(NULL, 'BaseType') AS NVARCHAR(30))").fetchval() is None
