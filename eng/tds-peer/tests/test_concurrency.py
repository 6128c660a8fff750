"""Concurrent transactions as SQL Server serves them (row locks; src/sql/locks.rs).

Two connections with autocommit off (pyodbc: a transaction is open after the first statement)
write the same table from threads. Order is proven with events, not timing: "the second writer
finished while the first transaction was still open" is checked before the first one commits.
Where a test shows that a statement *waits*, it waits longer than the 3 s SQLite busy timeout the
peer used to give up after, and a statement that does not wait fails the test at once.
"""

import select
import threading
import time

import pytest
import rawtds

import tdspeer
from conftest import pyodbc

# Longer than the old 3 s busy timeout: a statement still blocked after it is waiting on a lock.
BLOCKED = 4.0
# Generous bound for a statement that must finish (no timing claim: only that it ends).
FINISH = 30.0


def _table(connect, name, rows=((1, 1), (2, 2), (3, 3))):
    cn = connect()
    cn.execute(f"DROP TABLE IF EXISTS {name}")
    cn.execute(f"CREATE TABLE {name} (id INT PRIMARY KEY, v INT)")
    for r in rows:
        cn.execute(f"INSERT INTO {name} (id, v) VALUES (?, ?)", *r)
    return cn


def _txn(connect):
    cn = connect(autocommit=False)
    cn.timeout = 60  # a statement blocked past this fails instead of hanging the suite
    return cn


def _rows(cn, name):
    return [tuple(r) for r in cn.execute(f"SELECT id, v FROM {name} ORDER BY id").fetchall()]


class Background:
    """Runs one statement on a connection in a thread; `.done` is set when it returns."""

    def __init__(self, cn, sql, *params):
        self.done = threading.Event()
        self.error = None
        self.rowcount = None

        def run():
            try:
                self.rowcount = cn.execute(sql, *params).rowcount
            except pyodbc.Error as e:
                self.error = e
            finally:
                self.done.set()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def wait(self):
        assert self.done.wait(FINISH), "statement did not finish"
        self.thread.join(FINISH)
        return self


def test_writers_of_different_rows_do_not_block(connect):
    reader = _table(connect, "cc_rows")
    a, b = _txn(connect), _txn(connect)
    a.execute("UPDATE cc_rows SET v = 10 WHERE id = 1")
    # b's statements end while a's transaction is open (a has not committed yet).
    w = Background(b, "UPDATE cc_rows SET v = 20 WHERE id = 2").wait()
    assert w.error is None and w.rowcount == 1
    w = Background(b, "DELETE FROM cc_rows WHERE id = 3").wait()
    assert w.error is None and w.rowcount == 1
    # a goes on after b wrote (its own writes still there), and b still sees its own.
    assert _rows(a, "cc_rows") == [(1, 10), (2, 2), (3, 3)]
    assert _rows(b, "cc_rows") == [(1, 1), (2, 20)]
    b.commit()
    a.execute("UPDATE cc_rows SET v = 11 WHERE id = 1")
    a.commit()
    assert _rows(reader, "cc_rows") == [(1, 11), (2, 20)]


def test_inserts_of_different_keys_do_not_block(connect):
    reader = _table(connect, "cc_ins", rows=())
    reader.execute("DROP TABLE IF EXISTS cc_ident")
    reader.execute("CREATE TABLE cc_ident (id INT IDENTITY(1,1) PRIMARY KEY, s NVARCHAR(10))")
    a, b = _txn(connect), _txn(connect)
    a.execute("INSERT INTO cc_ins (id, v) VALUES (1, 1)")
    a.execute("INSERT INTO cc_ident (s) VALUES ('a')")
    assert Background(b, "INSERT INTO cc_ins (id, v) VALUES (2, 2)").wait().error is None
    assert Background(b, "INSERT INTO cc_ident (s) VALUES ('b')").wait().error is None
    # Identity values are not handed out twice while both transactions are open.
    ida = a.execute("SELECT id FROM cc_ident").fetchall()
    idb = b.execute("SELECT id FROM cc_ident").fetchall()
    assert len(ida) == len(idb) == 1 and ida[0][0] != idb[0][0]
    a.commit()
    b.commit()
    assert _rows(reader, "cc_ins") == [(1, 1), (2, 2)]
    assert sorted(r[1] for r in reader.execute("SELECT id, s FROM cc_ident")) == ["a", "b"]


def test_same_row_waits_for_commit(connect):
    reader = _table(connect, "cc_same")
    a, b = _txn(connect), _txn(connect)
    a.execute("UPDATE cc_same SET v = 10 WHERE id = 1")
    w = Background(b, "UPDATE cc_same SET v = v + 100 WHERE id = 1")
    assert not w.done.wait(BLOCKED), "the second writer of row 1 did not wait"
    a.commit()
    assert w.wait().error is None and w.rowcount == 1
    b.commit()
    # The waiting UPDATE ran against a's committed value.
    assert _rows(reader, "cc_same")[0] == (1, 110)


def test_duplicate_key_waits_then_2627_or_proceeds(connect):
    reader = _table(connect, "cc_dup", rows=())
    a, b = _txn(connect), _txn(connect)
    a.execute("INSERT INTO cc_dup (id, v) VALUES (5, 1)")
    w = Background(b, "INSERT INTO cc_dup (id, v) VALUES (5, 2)")
    assert not w.done.wait(BLOCKED), "an insert of a key another transaction inserted did not wait"
    a.commit()
    assert w.wait().error is not None and "2627" in str(w.error)
    b.rollback()
    a.execute("INSERT INTO cc_dup (id, v) VALUES (6, 1)")
    w = Background(b, "INSERT INTO cc_dup (id, v) VALUES (6, 2)")
    assert not w.done.wait(BLOCKED)
    a.rollback()
    assert w.wait().error is None
    b.commit()
    assert _rows(reader, "cc_dup") == [(5, 1), (6, 2)]


def test_lock_timeout_raises_1222_and_keeps_the_transaction(connect):
    reader = _table(connect, "cc_timeout")
    a, b = _txn(connect), _txn(connect)
    a.execute("UPDATE cc_timeout SET v = 10 WHERE id = 1")
    b.execute("SET LOCK_TIMEOUT 500")
    b.execute("UPDATE cc_timeout SET v = 30 WHERE id = 3")
    with pytest.raises(pyodbc.Error, match=r"Lock request time out period exceeded\. \(1222\)"):
        b.execute("UPDATE cc_timeout SET v = 20 WHERE id = 1")
    # The statement failed, the transaction did not: it goes on and commits.
    assert b.execute("SELECT @@TRANCOUNT").fetchone()[0] == 1
    b.execute("UPDATE cc_timeout SET v = 21 WHERE id = 2")
    b.commit()
    a.commit()
    assert _rows(reader, "cc_timeout") == [(1, 10), (2, 21), (3, 30)]


def test_deadlock_makes_one_victim(connect):
    reader = _table(connect, "cc_dead")
    a, b = _txn(connect), _txn(connect)
    a.execute("UPDATE cc_dead SET v = 11 WHERE id = 1")
    b.execute("UPDATE cc_dead SET v = 22 WHERE id = 2")
    wa = Background(a, "UPDATE cc_dead SET v = 12 WHERE id = 2")
    assert not wa.done.wait(1.0), "a did not wait for b's row"
    wb = Background(b, "UPDATE cc_dead SET v = 21 WHERE id = 1")
    # The victim gets its error, and its rolled-back transaction lets the other one go on.
    assert wb.done.wait(FINISH) and wa.done.wait(FINISH)
    errors = [w.error for w in (wa, wb) if w.error is not None]
    assert len(errors) == 1, errors
    assert "(1205)" in str(errors[0]) and "chosen as the deadlock victim" in str(errors[0])
    winner, loser = (a, b) if wb.error else (b, a)
    loser.rollback()
    winner.commit()
    expected = [(1, 11), (2, 12), (3, 3)] if winner is a else [(1, 21), (2, 22), (3, 3)]
    assert _rows(reader, "cc_dead") == expected


def test_readers_see_only_committed_rows_and_rollback_restores(connect):
    reader = _table(connect, "cc_read")
    a, b = _txn(connect), _txn(connect)
    a.execute("UPDATE cc_read SET v = 10 WHERE id = 1")
    a.execute("DELETE FROM cc_read WHERE id = 2")
    a.execute("INSERT INTO cc_read (id, v) VALUES (4, 4)")
    assert Background(b, "UPDATE cc_read SET v = 30 WHERE id = 3").wait().error is None
    # Neither open transaction shows to a reader, nor does one to the other.
    assert _rows(reader, "cc_read") == [(1, 1), (2, 2), (3, 3)]
    assert _rows(b, "cc_read") == [(1, 1), (2, 2), (3, 30)]
    assert _rows(a, "cc_read") == [(1, 10), (3, 3), (4, 4)]
    b.commit()
    assert _rows(reader, "cc_read") == [(1, 1), (2, 2), (3, 30)]
    assert _rows(a, "cc_read") == [(1, 10), (3, 30), (4, 4)]
    a.rollback()
    assert _rows(reader, "cc_read") == [(1, 1), (2, 2), (3, 30)]
    assert _rows(a, "cc_read") == [(1, 1), (2, 2), (3, 30)]


def _error(reply: bytes, number: int):
    """(state, class) of ERROR `number` in a reply, or None."""
    i = reply.find(b"\xaa")
    while i >= 0:
        if int.from_bytes(reply[i + 3 : i + 7], "little") == number:
            return reply[i + 7], reply[i + 8]
        i = reply.find(b"\xaa", i + 1)
    return None


def _raw(port):
    s = rawtds.connect(port, "test_concurrency")
    s.settimeout(FINISH)
    return s


def _batch(s, sql):
    s.sendall(rawtds.packet(0x01, rawtds.sql_batch(sql)))


def test_lock_errors_carry_sql_servers_class_and_state(peer, msodbcsql):
    setup = pyodbc.connect(tdspeer.conn_str(peer, "msodbcsql"), autocommit=True)
    setup.execute("DROP TABLE IF EXISTS cc_raw")
    setup.execute("CREATE TABLE cc_raw (id INT PRIMARY KEY, v INT)")
    setup.execute("INSERT INTO cc_raw (id, v) VALUES (1, 1), (2, 2)")
    with _raw(peer.port) as a, _raw(peer.port) as b:
        _batch(a, "BEGIN TRAN; UPDATE cc_raw SET v = 10 WHERE id = 1")
        assert _error(rawtds.message(a), 1222) is None
        _batch(b, "SET LOCK_TIMEOUT 0; BEGIN TRAN; UPDATE cc_raw SET v = 20 WHERE id = 2; UPDATE cc_raw SET v = 20 WHERE id = 1")
        assert _error(rawtds.message(b), 1222) == (51, 16)
        # a waits for row 2 (b holds it); b's wait for row 1 closes the cycle: b is the victim,
        # its transaction rolled back (ENVCHANGE 10), and a's statement goes on.
        _batch(a, "UPDATE cc_raw SET v = 12 WHERE id = 2")
        # a must be waiting before b asks: sent back to back, b could ask first and a would be
        # the one closing the cycle (seen on a loaded machine).
        assert select.select([a], [], [], BLOCKED)[0] == [], "a did not wait for b's row"
        _batch(b, "SET LOCK_TIMEOUT -1; UPDATE cc_raw SET v = 21 WHERE id = 1")
        reply = rawtds.message(b)
        assert _error(reply, 1205) == (51, 13)
        assert b"\xe3\x0b\x00\x0a" in reply  # ENVCHANGE rollback transaction
        assert _error(rawtds.message(a), 1205) is None
        _batch(a, "COMMIT")
        rawtds.message(a)
    assert [tuple(r) for r in setup.execute("SELECT id, v FROM cc_raw ORDER BY id")] == [(1, 10), (2, 12)]
    setup.close()


def test_a_client_gone_while_waiting_frees_its_locks(peer, msodbcsql):
    cs = tdspeer.conn_str(peer, "msodbcsql")
    setup = pyodbc.connect(cs, autocommit=True)
    setup.execute("DROP TABLE IF EXISTS cc_gone")
    setup.execute("CREATE TABLE cc_gone (id INT PRIMARY KEY, v INT)")
    setup.execute("INSERT INTO cc_gone (id, v) VALUES (1, 1), (2, 2)")
    a = pyodbc.connect(cs, autocommit=False)
    a.timeout = 60
    a.execute("UPDATE cc_gone SET v = 10 WHERE id = 1")
    s = _raw(peer.port)
    _batch(s, "BEGIN TRAN; UPDATE cc_gone SET v = 20 WHERE id = 2; UPDATE cc_gone SET v = 20 WHERE id = 1")
    time.sleep(0.5)  # the raw session now holds row 2 and waits for row 1
    s.close()
    # Its session ends and rolls back, freeing row 2: an autocommit writer (which holds no
    # locks, so it closes no cycle) gets 1222 until then.
    setup.execute("SET LOCK_TIMEOUT 0")
    deadline = time.monotonic() + FINISH
    while True:
        try:
            setup.execute("UPDATE cc_gone SET v = v WHERE id = 2")
            break
        except pyodbc.Error as e:
            assert "(1222)" in str(e) and time.monotonic() < deadline, e
            time.sleep(0.05)
    a.execute("UPDATE cc_gone SET v = 11 WHERE id = 2")
    a.commit()
    assert [tuple(r) for r in setup.execute("SELECT id, v FROM cc_gone ORDER BY id")] == [(1, 10), (2, 11)]
    setup.close()
