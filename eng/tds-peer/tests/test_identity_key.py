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


@pytest.mark.parametrize("table", ["#idinc", "idinc_user"])
def test_identity_increment_is_applied(connect, driver, table):
    """IDENTITY(seed, increment) numbers rows seed, seed + increment, … (negative increments
    too), and SCOPE_IDENTITY(), @@IDENTITY, IDENT_CURRENT, IDENT_SEED and IDENT_INCR report it
    as SQL Server does; the peer used to go up by 1 whatever the increment."""
    from decimal import Decimal

    cur = connect().cursor()
    t = f"{table}_{driver}"
    cur.execute(f"CREATE TABLE {t} (id INT IDENTITY(10,5) PRIMARY KEY, v VARCHAR(10))")
    assert tuple(cur.execute(f"SELECT IDENT_CURRENT('{t}'), IDENT_SEED('{t}'), IDENT_INCR('{t}')").fetchone()) == (
        10, 10, 5)
    cur.execute(f"INSERT INTO {t} (v) VALUES ('a')")
    assert tuple(cur.execute("SELECT SCOPE_IDENTITY(), @@IDENTITY").fetchone()) == (Decimal(10), Decimal(10))
    cur.execute(f"INSERT INTO {t} (v) VALUES ('b'), ('c')")
    assert cur.execute("SELECT SCOPE_IDENTITY()").fetchone()[0] == Decimal(20)
    cur.execute(f"INSERT INTO {t} (v) SELECT v FROM {t}")
    assert [tuple(r) for r in cur.execute(f"SELECT id, v FROM {t} ORDER BY id").fetchall()] == [
        (10, "a"), (15, "b"), (20, "c"), (25, "a"), (30, "b"), (35, "c")]
    assert cur.execute(f"SELECT IDENT_CURRENT('{t}')").fetchone()[0] == 35
    # An explicit value past the current one (IDENTITY_INSERT) becomes the current value.
    cur.execute(f"SET IDENTITY_INSERT {t} ON")
    cur.execute(f"INSERT INTO {t} (id, v) VALUES (1000, 'x')")
    cur.execute(f"SET IDENTITY_INSERT {t} OFF")
    cur.execute(f"INSERT INTO {t} (v) VALUES ('y')")
    assert [tuple(r) for r in cur.execute(f"SELECT id, v FROM {t} WHERE id >= 1000 ORDER BY id").fetchall()] == [
        (1000, "x"), (1005, "y")]
    # Negative increments (SQLAlchemy's IDENTITY(42, -47)).
    cur.execute(f"CREATE TABLE {t}_n (id INT IDENTITY(42,-47), v INT)")
    for v in (1, 2, 3):
        cur.execute(f"INSERT INTO {t}_n (v) VALUES (?)", v)
    assert [tuple(r) for r in cur.execute(f"SELECT id, v FROM {t}_n ORDER BY v").fetchall()] == [
        (42, 1), (-5, 2), (-52, 3)]
    assert tuple(cur.execute(f"SELECT SCOPE_IDENTITY(), IDENT_CURRENT('{t}_n'), IDENT_INCR('{t}_n')").fetchone()) == (
        Decimal(-52), -52, -47)
    assert cur.execute("SELECT IDENT_CURRENT('no_such_table')").fetchone()[0] is None
