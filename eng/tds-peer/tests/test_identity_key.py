"""IDENTITY on a PRIMARY KEY column, whichever of the two the column definition names first."""

import pytest


@pytest.mark.parametrize("table", ["#idk", "idk_user"])
def test_primary_key_before_identity(connect, driver, table):
    cur = connect().cursor()
    name = f"{table}_{driver}"
    cur.execute(f"CREATE TABLE {name} (id INT PRIMARY KEY IDENTITY(1,1), x XML NULL, n NVARCHAR(10))")
    cur.execute(f"INSERT INTO {name} (n) VALUES (N'a')")
    cur.execute(f"INSERT INTO {name} (n) VALUES (N'b')")
    assert [tuple(r) for r in cur.execute(f"SELECT id, n FROM {name} ORDER BY id").fetchall()] == [(1, "a"), (2, "b")]
    cur.execute(f"CREATE TABLE {name}2 (id BIGINT PRIMARY KEY CLUSTERED IDENTITY(10, 1) NOT NULL, v INT)")
    cur.execute(f"INSERT INTO {name}2 (v) VALUES (1), (2)")
    assert [r[0] for r in cur.execute(f"SELECT id FROM {name}2 ORDER BY id").fetchall()] == [10, 11]
