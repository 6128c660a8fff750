"""Server-side describe procedures the drivers call: sp_describe_undeclared_parameters (Driver
18's SQLDescribeParam) and sp_describe_first_result_set, with SQL Server's result layout."""

import uuid

import pyodbc
import pytest


def tname(prefix="td"):
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize("driver", ["msodbcsql"], indirect=True)  # FreeTDS: pyodbc fast_executemany crashes inside it (client bug)
def test_fast_executemany_keeps_non_latin_text(connect, driver):
    """pyodbc binds fast_executemany text by the type SQLDescribeParam reports; Driver 18 asks
    sp_describe_undeclared_parameters. Without it pyodbc bound narrow text: 'é中😀' -> 'é??'."""
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, name NVARCHAR(50))")
    cur.fast_executemany = True
    cur.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(1, "é中😀"), (2, "Ж")])
    cur.fast_executemany = False
    assert [tuple(r) for r in cur.execute(f"SELECT id, name FROM {t} ORDER BY id")] == [(1, "é中😀"), (2, "Ж")]


def _describe_params(cur, sql):
    cur.execute("EXEC sp_describe_undeclared_parameters @tsql = ?", sql)
    cols = [d[0] for d in cur.description]
    return cols, [dict(zip(cols, r)) for r in cur.fetchall()]


def test_describe_undeclared_parameters_layout_and_types(connect, driver):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT, name NVARCHAR(50), amount DECIMAL(18,4), code VARCHAR(10), ts DATETIME2(3))")
    cols, rows = _describe_params(cur, f"INSERT INTO {t} (name, id, amount, code, ts) VALUES (@P1, @P2, @P3, @P4, @P5)")
    assert cols[:8] == ["parameter_ordinal", "name", "suggested_system_type_id", "suggested_system_type_name",
                        "suggested_max_length", "suggested_precision", "suggested_scale", "suggested_user_type_id"]
    assert len(cols) == 24
    assert cols[-3:] == ["formal_parameter_name", "suggested_tds_type_id", "suggested_tds_length"]
    got = [(r["parameter_ordinal"], r["name"], r["suggested_system_type_id"], r["suggested_system_type_name"],
            r["suggested_max_length"], r["suggested_precision"], r["suggested_scale"]) for r in rows]
    assert got == [
        (1, "@P1", 231, "nvarchar(50)", 100, 0, 0),
        (2, "@P2", 56, "int", 4, 10, 0),
        (3, "@P3", 106, "decimal(18,4)", 9, 18, 4),
        (4, "@P4", 167, "varchar(10)", 10, 0, 0),
        (5, "@P5", 42, "datetime2(3)", 7, 23, 3),
    ]


def test_describe_undeclared_parameters_from_where_and_set(connect, driver):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id BIGINT, name NVARCHAR(20), flag BIT)")
    _, rows = _describe_params(cur, f"UPDATE {t} SET name = @P1 WHERE id = @P2 AND flag = @P3")
    assert [(r["name"], r["suggested_system_type_name"]) for r in rows] == [
        ("@P1", "nvarchar(20)"), ("@P2", "bigint"), ("@P3", "bit")]
    _, rows = _describe_params(cur, f"SELECT * FROM {t} WHERE name = @P1")
    assert [(r["name"], r["suggested_system_type_name"]) for r in rows] == [("@P1", "nvarchar(20)")]


def test_describe_undeclared_parameters_unknown_table(connect, driver):
    cur = connect().cursor()
    with pytest.raises(pyodbc.ProgrammingError, match="Invalid object name"):
        _describe_params(cur, "INSERT INTO no_such_table_xyz VALUES (@P1)")


def test_describe_first_result_set(connect, driver):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT NOT NULL, name NVARCHAR(50), amount DECIMAL(18,4))")
    cur.execute("EXEC sp_describe_first_result_set @tsql = ?", f"SELECT id, name, amount FROM {t}")
    cols = [d[0] for d in cur.description]
    assert cols[:11] == ["is_hidden", "column_ordinal", "name", "is_nullable", "system_type_id", "system_type_name",
                         "max_length", "precision", "scale", "collation_name", "user_type_id"]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    got = [(r["column_ordinal"], r["name"], r["is_nullable"], r["system_type_id"], r["system_type_name"], r["max_length"])
           for r in rows]
    assert got == [(1, "id", False, 56, "int", 4), (2, "name", True, 231, "nvarchar(50)", 100),
                   (3, "amount", True, 106, "decimal(18,4)", 9)]


def test_describe_first_result_set_with_parameters(connect, driver):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (id INT NOT NULL, name NVARCHAR(20))")
    cur.execute("EXEC sp_describe_first_result_set @tsql = ?, @params = N'@P1 int'", f"SELECT name FROM {t} WHERE id = @P1")
    rows = cur.fetchall()
    assert [(r.name, r.system_type_name) for r in rows] == [("name", "nvarchar(20)")]
