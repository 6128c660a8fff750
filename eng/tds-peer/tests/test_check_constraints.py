"""CHECK constraints (src/sql/checks.rs, check_text.rs): enforced with SQL Server's 547, listed by
sys.check_constraints and INFORMATION_SCHEMA.CHECK_CONSTRAINTS with SQL Server's normalised
definition text, column and table checks, CREATE TABLE and ALTER TABLE ... ADD CHECK."""

import pyodbc
import pytest


def rows(cur, sql):
    return [tuple(r) for r in cur.execute(sql).fetchall()]


def test_checks_are_enforced_and_listed(connect, driver):
    cur = connect().cursor()
    t = f"ck_{driver}"
    cur.execute(
        f"CREATE TABLE {t} (id int PRIMARY KEY, qty int CHECK (qty > 0), lo int, hi int, "
        f"st varchar(5) CONSTRAINT ck_{t}_st CHECK (st IN ('a', 'b')), CONSTRAINT ck_{t}_range CHECK (lo <= hi))"
    )
    cur.execute(f"ALTER TABLE {t} ADD CONSTRAINT ck_{t}_id CHECK (id BETWEEN 1 AND 1000)")
    cur.execute(f"INSERT INTO {t} VALUES (1, 5, 1, 2, 'a')")
    with pytest.raises(pyodbc.IntegrityError) as ei:
        cur.execute(f"INSERT INTO {t} VALUES (2, 0, 1, 2, 'a')")
    msg = ei.value.args[1]
    assert "(547)" in msg and "The INSERT statement conflicted with the CHECK constraint \"CK__" in msg
    assert f'table "dbo.{t}", column \'qty\'' in msg
    with pytest.raises(pyodbc.IntegrityError) as ei:
        cur.execute(f"UPDATE {t} SET st = 'z'")
    assert f'The UPDATE statement conflicted with the CHECK constraint "ck_{t}_st"' in ei.value.args[1]
    with pytest.raises(pyodbc.IntegrityError) as ei:
        cur.execute(f"INSERT INTO {t} VALUES (5000, 1, 1, 2, 'a')")
    assert f'"ck_{t}_id"' in ei.value.args[1]
    # ADD CHECK tests the rows already there, unless WITH NOCHECK (then the check is untrusted).
    with pytest.raises(pyodbc.IntegrityError) as ei:
        cur.execute(f"ALTER TABLE {t} ADD CONSTRAINT ck_{t}_big CHECK (qty > 10)")
    assert "The ALTER TABLE statement conflicted" in ei.value.args[1]
    cur.execute(f"ALTER TABLE {t} WITH NOCHECK ADD CONSTRAINT ck_{t}_big CHECK (qty > 10)")
    got = rows(
        cur,
        "SELECT name, parent_column_id, definition, is_system_named, is_not_trusted, type, type_desc "
        f"FROM sys.check_constraints WHERE parent_object_id = OBJECT_ID('{t}') ORDER BY name",
    )
    generated = [r for r in got if r[0].startswith(f"CK__{t[:9]}__qty__")]
    assert len(generated) == 1 and len(generated[0][0]) == len(f"CK__{t[:9]}__qty__") + 8
    assert generated[0][1:] == (2, "([qty]>(0))", True, False, "C", "CHECK_CONSTRAINT")
    named = {r[0]: r[1:5] for r in got if not r[0].startswith("CK__")}
    assert named == {
        f"ck_{t}_big": (0, "([qty]>(10))", False, True),
        f"ck_{t}_id": (0, "([id]>=(1) AND [id]<=(1000))", False, False),
        f"ck_{t}_range": (0, "([lo]<=[hi])", False, False),
        f"ck_{t}_st": (5, "([st]='b' OR [st]='a')", False, False),
    }
    info = rows(cur, f"SELECT CONSTRAINT_NAME, CHECK_CLAUSE FROM INFORMATION_SCHEMA.CHECK_CONSTRAINTS WHERE CONSTRAINT_NAME = 'ck_{t}_range'")
    assert info == [(f"ck_{t}_range", "([lo]<=[hi])")]
    # A table created anew under the name has only its own checks.
    cur.execute(f"DROP TABLE {t}")
    cur.execute(f"CREATE TABLE {t} (id int)")
    assert rows(cur, f"SELECT COUNT(*) FROM sys.check_constraints WHERE parent_object_id = OBJECT_ID('{t}')") == [(0,)]
    cur.execute(f"DROP TABLE {t}")


def test_foreign_key_violations_are_547_integrity_errors(connect, driver):
    """SQL Server answers a broken FOREIGN KEY with 547 (SQLSTATE 23000, so IntegrityError):
    INSERT/UPDATE name the FOREIGN KEY constraint, DELETE of a referenced row the REFERENCE one."""
    cur = connect().cursor()
    parent, child = f"fkp_{driver}", f"fkc_{driver}"
    cur.execute(f"CREATE TABLE {parent} (id int PRIMARY KEY)")
    cur.execute(
        f"CREATE TABLE {child} (id int PRIMARY KEY, pid int CONSTRAINT fk_{child} REFERENCES {parent}(id))"
    )
    cur.execute(f"INSERT INTO {parent} VALUES (1)")
    cur.execute(f"INSERT INTO {child} VALUES (1, 1)")
    cases = [
        (f"INSERT INTO {child} VALUES (2, 99)", "The INSERT statement conflicted with the FOREIGN KEY constraint"),
        (f"UPDATE {child} SET pid = 42", "The UPDATE statement conflicted with the FOREIGN KEY constraint"),
        (f"DELETE FROM {parent} WHERE id = 1", "The DELETE statement conflicted with the REFERENCE constraint"),
    ]
    for sql, text in cases:
        with pytest.raises(pyodbc.IntegrityError) as ei:
            cur.execute(sql)
        assert ei.value.args[0] == "23000" and "(547)" in ei.value.args[1] and text in ei.value.args[1]
    assert rows(cur, f"SELECT id, pid FROM {child}") == [(1, 1)]
    assert rows(cur, f"SELECT id FROM {parent}") == [(1,)]
    cur.execute(f"DROP TABLE {child}")
    cur.execute(f"DROP TABLE {parent}")
