"""The peer's result cache (src/result_cache.rs) never serves a result the database no longer has.

Every test first proves that the query is being served from the cache (the peer logs each hit
with --verbose), then changes the data in one way — this connection, another connection, DDL,
a transaction committed or rolled back, a procedure, a temp table — and checks that the next
read returns exactly the new data. Without invalidation each of them reads the stale rows.
Results must be at least 256 KiB to be cached: the tables hold 3000 rows of ~180 bytes.
"""

import time

import pyodbc
import pytest

import tdspeer
from conftest import _missing, require_driver

ROWS = 3000
PAD = "x" * 80


def tname(prefix):
    return f"rc_{prefix}_{time.monotonic_ns() % 10**9}"


@pytest.fixture(scope="module")
def vpeer():
    """A peer of its own, logging cache hits."""
    if tdspeer.peer_binary() is None:
        _missing("tds-peer binary not built (cargo build --release -p tds-peer)")
    with tdspeer.start_peer(extra_args=["--verbose"]) as p:
        yield p


@pytest.fixture(params=["msodbcsql", "freetds"])
def conn(vpeer, request):
    require_driver(request.param)
    opened = []

    def _connect(autocommit=True):
        cn = pyodbc.connect(tdspeer.conn_str(vpeer, request.param), timeout=10, autocommit=autocommit)
        opened.append(cn)
        return cn

    yield _connect
    for cn in opened:
        try:
            cn.close()
        except pyodbc.Error:
            pass


def hits(peer) -> int:
    return peer.log().count("result cache hit")


def rows_of(cn, sql, *params):
    cur = cn.cursor()
    cur.execute(sql, *params)
    out = [tuple(r) for r in cur.fetchall()]
    cur.close()
    return out


def expected(n, start=0, tag="v"):
    return [(i, f"{tag}{i} {PAD}") for i in range(start, start + n)]


def load(cn, table, data, temp=False):
    cur = cn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INT NOT NULL, s NVARCHAR(100))")
    for k in range(0, len(data), 1000):
        cur.execute(f"INSERT INTO {table} VALUES " + ", ".join(f"({i}, N'{s}')" for i, s in data[k : k + 1000]))
    if not cn.autocommit:
        cn.commit()
    cur.close()


def read_cached(peer, cn, sql, want, *params):
    """Reads `sql` twice; both return `want` and the second is a cache hit."""
    assert rows_of(cn, sql, *params) == want
    before = hits(peer)
    assert rows_of(cn, sql, *params) == want
    deadline = time.monotonic() + 3
    while hits(peer) == before and time.monotonic() < deadline:
        time.sleep(0.02)  # stderr is read by a thread
    assert hits(peer) > before, f"{sql} was not served from the cache:\n{peer.log()[-2000:]}"


@pytest.fixture
def table(conn):
    cn = conn()
    t = tname("t")
    load(cn, t, expected(ROWS))
    return cn, t


def test_own_insert_update_delete(vpeer, table):
    cn, t = table
    sql = f"SELECT * FROM {t}"
    read_cached(vpeer, cn, sql, expected(ROWS))
    cn.cursor().execute(f"INSERT INTO {t} VALUES ({ROWS}, N'v{ROWS} {PAD}')")
    read_cached(vpeer, cn, sql, expected(ROWS + 1))
    cn.cursor().execute(f"UPDATE {t} SET s = N'w7 {PAD}' WHERE id = 7")
    want = expected(ROWS + 1)
    want[7] = (7, f"w7 {PAD}")
    read_cached(vpeer, cn, sql, want)
    cn.cursor().execute(f"DELETE FROM {t} WHERE id = 0")
    assert rows_of(cn, sql) == want[1:]


def test_other_connections_writes(vpeer, table, conn):
    cn, t = table
    other = conn()
    sql = f"SELECT * FROM {t}"
    read_cached(vpeer, cn, sql, expected(ROWS))
    # Same row count, one value changed: only the other connection's commit tells.
    other.cursor().execute(f"UPDATE {t} SET s = N'other {PAD}' WHERE id = 5")
    want = expected(ROWS)
    want[5] = (5, f"other {PAD}")
    read_cached(vpeer, cn, sql, want)
    other.cursor().execute(f"DELETE FROM {t} WHERE id >= 10")
    assert rows_of(cn, sql) == want[:10]


def test_other_connections_transaction_counts_when_committed(vpeer, table, conn):
    cn, t = table
    sql = f"SELECT * FROM {t}"
    read_cached(vpeer, cn, sql, expected(ROWS))
    other = conn(autocommit=False)
    other.cursor().execute(f"UPDATE {t} SET s = N'pending {PAD}' WHERE id = 3")
    # Not committed: invisible (READ COMMITTED-like), cached or not.
    assert rows_of(cn, sql) == expected(ROWS)
    other.commit()
    want = expected(ROWS)
    want[3] = (3, f"pending {PAD}")
    assert rows_of(cn, sql) == want
    other.cursor().execute(f"UPDATE {t} SET s = N'undone {PAD}' WHERE id = 4")
    other.rollback()
    assert rows_of(cn, sql) == want


def test_own_transaction_rolled_back(vpeer, conn):
    cn = conn(autocommit=False)
    t = tname("txn")
    load(cn, t, expected(ROWS))
    sql = f"SELECT * FROM {t}"
    read_cached(vpeer, cn, sql, expected(ROWS))
    cn.commit()
    cn.cursor().execute(f"UPDATE {t} SET s = N'in txn {PAD}' WHERE id = 1")
    want = expected(ROWS)
    want[1] = (1, f"in txn {PAD}")
    read_cached(vpeer, cn, sql, want)  # the transaction's own view, cached inside it
    cn.rollback()
    assert rows_of(cn, sql) == expected(ROWS)
    cn.cursor().execute(f"DELETE FROM {t} WHERE id >= 2000")
    read_cached(vpeer, cn, sql, expected(2000))
    cn.rollback()
    # A new transaction whose first write changes nothing: row counts and autocommit state are
    # what they were when the rolled-back rows were cached; only the transaction epoch differs.
    cn.cursor().execute(f"UPDATE {t} SET s = s WHERE id < 0")
    assert rows_of(cn, sql) == expected(ROWS)
    cn.rollback()


def test_ddl_drop_create_truncate(vpeer, table, conn):
    cn, t = table
    sql = f"SELECT * FROM {t}"
    read_cached(vpeer, cn, sql, expected(ROWS))
    # Recreated with the same columns (same key) and no rows, by another connection.
    other = conn()
    other.cursor().execute(f"DROP TABLE {t}")
    other.cursor().execute(f"CREATE TABLE {t} (id INT NOT NULL, s NVARCHAR(100))")
    assert rows_of(cn, sql) == []
    load_rows = expected(ROWS, tag="r")
    cur = cn.cursor()
    cur.execute(f"DROP TABLE {t}")
    load(cn, t, load_rows)
    read_cached(vpeer, cn, sql, load_rows)
    cn.cursor().execute(f"TRUNCATE TABLE {t}")
    assert rows_of(cn, sql) == []
    # This connection's own DDL, no rows changed: only the schema version tells.
    load(cn, t + "_2", expected(ROWS))
    sql2 = f"SELECT * FROM {t}_2"
    read_cached(vpeer, cn, sql2, expected(ROWS))
    cn.cursor().execute(f"DROP TABLE {t}_2")
    cn.cursor().execute(f"CREATE TABLE {t}_2 (id INT NOT NULL, s NVARCHAR(100))")
    assert rows_of(cn, sql2) == []


def test_alter_table_adds_a_column(vpeer, table):
    cn, t = table
    sql = f"SELECT * FROM {t}"
    read_cached(vpeer, cn, sql, expected(ROWS))
    cn.cursor().execute(f"ALTER TABLE {t} ADD extra INT")
    assert rows_of(cn, sql) == [r + (None,) for r in expected(ROWS)]


def test_parameters_are_part_of_the_key(vpeer, table):
    cn, t = table
    sql = f"SELECT * FROM {t} WHERE id >= ?"
    read_cached(vpeer, cn, sql, expected(ROWS - 10, 10), 10)
    assert rows_of(cn, sql, 20) == expected(ROWS - 20, 20)
    assert rows_of(cn, sql, 10) == expected(ROWS - 10, 10)


def test_temp_tables_stay_per_connection(vpeer, conn):
    a, b = conn(), conn()
    load(a, "#rc_tmp", expected(ROWS, tag="a"))
    load(b, "#rc_tmp", expected(ROWS, tag="b"))
    read_cached(vpeer, a, "SELECT * FROM #rc_tmp", expected(ROWS, tag="a"))
    assert rows_of(b, "SELECT * FROM #rc_tmp") == expected(ROWS, tag="b")
    a.cursor().execute("DROP TABLE #rc_tmp")
    a.cursor().execute("CREATE TABLE #rc_tmp (id INT NOT NULL, s NVARCHAR(100))")
    assert rows_of(a, "SELECT * FROM #rc_tmp") == []  # the temp schema's version tells
    a.cursor().execute("DROP TABLE #rc_tmp")
    load(a, "#rc_tmp", expected(ROWS, tag="c"))
    assert rows_of(a, "SELECT * FROM #rc_tmp") == expected(ROWS, tag="c")


def test_write_inside_a_procedure(vpeer, table):
    cn, t = table
    sql = f"SELECT * FROM {t}"
    read_cached(vpeer, cn, sql, expected(ROWS))
    p = tname("p")
    cn.cursor().execute(f"CREATE PROCEDURE {p} AS UPDATE {t} SET s = N'proc {PAD}' WHERE id = 2")
    cn.cursor().execute(f"EXEC {p}")
    want = expected(ROWS)
    want[2] = (2, f"proc {PAD}")
    assert rows_of(cn, sql) == want


@pytest.mark.parametrize("how", ["direct", "view"])
def test_non_deterministic_results_are_not_cached(vpeer, table, how):
    cn, t = table
    expr = "CAST(NEWID() AS UNIQUEIDENTIFIER)"
    if how == "view":
        v = tname("v")
        cn.cursor().execute(f"CREATE VIEW {v} AS SELECT id, {expr} AS g, s FROM {t}")
        sql = f"SELECT id, CAST(g AS UNIQUEIDENTIFIER) AS g, s FROM {v}"
    else:
        sql = f"SELECT id, {expr} AS g, s FROM {t}"
    before = hits(vpeer)
    first = rows_of(cn, sql)
    second = rows_of(cn, sql)
    assert len(first) == len(second) == ROWS
    assert [r[1] for r in first] != [r[1] for r in second]
    assert hits(vpeer) == before
