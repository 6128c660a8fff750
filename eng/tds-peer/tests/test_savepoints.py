"""Savepoints as SQL Server has them: SAVE TRAN[SACTION] name inside a transaction, ROLLBACK
TRAN[SACTION] name undoing the work after it with the transaction left open, 628 / 6401, a
reused name, and ROLLBACK TRAN of BEGIN TRAN's own name (Django's nested atomic() blocks)."""

import uuid

import pyodbc
import pytest


def tname(prefix="tsp"):
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def table_in_a_transaction(connect):
    """A connection with autocommit off, a cursor, and the name of a fresh committed (a INT)
    table: the next statement opens the transaction."""
    cn = connect(autocommit=False)
    cur = cn.cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (a INT)")
    cn.commit()
    return cn, cur, t


def values(cur, t):
    return [r[0] for r in cur.execute(f"SELECT a FROM {t} ORDER BY a").fetchall()]


def test_rollback_to_savepoint_keeps_the_transaction(connect, driver):
    cn, cur, t = table_in_a_transaction(connect)
    cur.execute(f"INSERT INTO {t} VALUES (1)")
    cur.execute("SAVE TRANSACTION sp1")
    cur.execute(f"INSERT INTO {t} VALUES (2)")
    cur.execute("ROLLBACK TRANSACTION sp1")
    assert cur.execute("SELECT @@TRANCOUNT").fetchval() == 1
    assert values(cur, t) == [1]
    # The transaction goes on after the rollback to the savepoint, and COMMIT keeps it all.
    cur.execute(f"INSERT INTO {t} VALUES (3)")
    cn.commit()
    other = connect().cursor()
    assert values(other, t) == [1, 3]


def test_nested_and_reused_savepoints(connect, driver):
    cn, cur, t = table_in_a_transaction(connect)
    cur.execute(f"INSERT INTO {t} VALUES (1); SAVE TRAN a1; INSERT INTO {t} VALUES (2); SAVE TRAN b2")
    cur.execute(f"INSERT INTO {t} VALUES (3); SAVE TRAN a1; INSERT INTO {t} VALUES (4)")
    # A reused name: the latest savepoint of that name wins.
    cur.execute("ROLLBACK TRAN a1")
    assert values(cur, t) == [1, 2, 3]
    # A savepoint can be rolled back to again; rolling back to an earlier one drops the later.
    cur.execute(f"INSERT INTO {t} VALUES (5)")
    cur.execute("ROLLBACK TRAN a1")
    assert values(cur, t) == [1, 2, 3]
    cur.execute("ROLLBACK TRANSACTION b2")
    assert values(cur, t) == [1, 2]
    cur.execute("ROLLBACK TRAN a1")  # the first a1 is still there
    assert values(cur, t) == [1]
    cn.commit()
    assert values(connect().cursor(), t) == [1]


def test_save_outside_a_transaction_is_628(connect, driver):
    cur = connect().cursor()
    with pytest.raises(pyodbc.Error, match=r"Cannot issue SAVE TRANSACTION when there is no active transaction"):
        cur.execute("SAVE TRANSACTION nowhere")


def test_unknown_savepoint_is_6401_and_the_transaction_stays(connect, driver):
    cn, cur, t = table_in_a_transaction(connect)
    cur.execute(f"INSERT INTO {t} VALUES (1)")
    cur.execute("SAVE TRANSACTION known")
    with pytest.raises(pyodbc.Error, match=r"Cannot roll back unknown\. No transaction or savepoint of that name"):
        cur.execute("ROLLBACK TRANSACTION unknown")
    # Names are case-sensitive, as SQL Server's transaction names are.
    with pytest.raises(pyodbc.Error, match=r"Cannot roll back KNOWN\."):
        cur.execute("ROLLBACK TRANSACTION KNOWN")
    assert cur.execute("SELECT @@TRANCOUNT").fetchval() == 1
    assert values(cur, t) == [1]
    cn.rollback()
    assert values(cur, t) == []


def test_begin_tran_name_in_a_batch(connect, driver):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (a INT)")
    cur.execute(
        f"BEGIN TRANSACTION outer1; INSERT INTO {t} VALUES (1); SAVE TRANSACTION s; "
        f"INSERT INTO {t} VALUES (2); ROLLBACK TRANSACTION s; INSERT INTO {t} VALUES (3); COMMIT"
    )
    assert values(cur, t) == [1, 3]
    # ROLLBACK TRAN with the transaction's own name rolls everything back.
    cur.execute(f"BEGIN TRAN t2; INSERT INTO {t} VALUES (4); SAVE TRAN s; ROLLBACK TRAN t2")
    assert cur.execute("SELECT @@TRANCOUNT").fetchval() == 0
    assert values(cur, t) == [1, 3]
    # A savepoint does not outlive its transaction.
    cur.execute("BEGIN TRAN")
    with pytest.raises(pyodbc.Error, match=r"Cannot roll back s\."):
        cur.execute("ROLLBACK TRAN s")
    cur.execute("ROLLBACK")


def test_savepoint_transaction_and_another_writer(connect, driver):
    """A transaction with a savepoint keeps the writer: another session's write waits for it
    and then goes through."""
    cn, cur, t = table_in_a_transaction(connect)
    cur.execute(f"INSERT INTO {t} VALUES (1)")
    cur.execute("SAVE TRANSACTION s1")
    cur.execute(f"INSERT INTO {t} VALUES (2)")
    other_cn = connect()
    other = other_cn.cursor()
    other.execute("SET LOCK_TIMEOUT 100")
    with pytest.raises(pyodbc.Error, match=r"Lock request time out period exceeded"):
        other.execute(f"INSERT INTO {t} VALUES (10)")
    assert values(other, t) == []
    cur.execute("ROLLBACK TRANSACTION s1")
    cn.commit()
    other.execute(f"INSERT INTO {t} VALUES (10)")
    assert values(other, t) == [1, 10]


def test_savepoint_after_an_autocommit_write_in_the_batch(connect, driver):
    cur = connect().cursor()
    t = tname()
    cur.execute(f"CREATE TABLE {t} (a INT)")
    cur.execute(
        f"INSERT INTO {t} VALUES (1); BEGIN TRAN; SAVE TRAN s; INSERT INTO {t} VALUES (2); "
        f"ROLLBACK TRAN s; INSERT INTO {t} VALUES (3); COMMIT"
    )
    assert cur.execute("SELECT @@TRANCOUNT").fetchval() == 0
    assert values(connect().cursor(), t) == [1, 3]
