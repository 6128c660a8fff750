"""Lazy rows (`row_factory = ferrodbc.LazyRow`): cells decoded only when read, from the row array
they were served from, equal to eager rows for every type; valid after the cursor fetches on,
executes again, closes or is collected (they pin their batch: the row set takes a fresh buffer
instead of refilling it, counted by `pinned_batches`); `raw(i)` as the driver delivered the cell.
"""

from __future__ import annotations

import datetime
import decimal
import gc
import pickle
import sys
import uuid

import pytest

import ferrodbc

D = decimal.Decimal
ROWS = 5000

# One value per type key of conftest's Peer.types (a NULL row follows in every test).
SAMPLES = {
    "smallint": -12345,
    "int": 2_000_000_001,
    "bigint": -(2**62) + 7,
    "real": 1.5,
    "float": -2.25e100,
    "decimal": D("-12345678901234567890.0123456789"),
    "bool": True,
    "text": "long text, ünïcødé, 😀",
    "varchar": "short ü",
    "bytes": b"\x00\x01\xfe\xff",
    "date": datetime.date(2024, 2, 29),
    "time": datetime.time(12, 34, 56),
    "timestamp": datetime.datetime(2024, 1, 2, 3, 4, 5, 678000),
    "uuid": uuid.UUID("6f9619ff-8b86-d011-b42d-00c04fc964ff"),
}

# SQL text types, for a converter that counts the cells it is called for.
TEXT_SQL_TYPES = (1, 12, -1, -8, -9, -10)


def every_type_table(peer, conn, table) -> list[str]:
    kinds = [k for k in SAMPLES if k in peer.types]
    cols = ", ".join(f"c_{k} {peer.types[k]}" for k in kinds)
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, {cols})")
    marks = ", ".join("?" for _ in range(len(kinds) + 1))
    cur.execute(f"INSERT INTO {table} VALUES ({marks})", 0, *[SAMPLES[k] for k in kinds])
    cur.execute(f"INSERT INTO {table} VALUES ({marks})", 1, *[None for _ in kinds])
    conn.commit()
    return kinds


def ints_table(peer, conn, table, n=ROWS) -> None:
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (id INTEGER, name VARCHAR(20), b {peer.types['bytes']})")
    cur.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)", [(i, f"n{i}", bytes([i % 256])) for i in range(n)])
    conn.commit()


def lazy_cursor(conn):
    cur = conn.cursor()
    cur.row_factory = ferrodbc.LazyRow
    return cur


def test_lazy_rows_equal_eager_rows_for_every_type(peer, conn, table):
    kinds = every_type_table(peer, conn, table)
    sql = f"SELECT * FROM {table} ORDER BY id"
    eager = conn.cursor().execute(sql).fetchall()
    lazy = lazy_cursor(conn).execute(sql).fetchall()
    assert len(lazy) == len(eager) == 2
    assert all(type(r) is ferrodbc.LazyRow for r in lazy)
    for e, lz in zip(eager, lazy):
        assert len(lz) == len(e) == len(kinds) + 1
        assert lz == e and lz._tuple() == e._tuple() and tuple(lz) == tuple(e)
        for i in range(len(e)):
            assert lz[i] == e[i] and type(lz[i]) is type(e[i]), (peer, i, lz[i], e[i])
        for name in e._fields:
            assert lz[name] == e[name] and getattr(lz, name) == getattr(e, name)
    assert lazy[1]._tuple() == (1, *[None] * len(kinds))
    assert lazy[0]._fields == eager[0]._fields
    assert lazy[0].cursor_description == eager[0].cursor_description


def test_every_fetch_shape_gives_lazy_rows_equal_to_eager(peer, conn, table):
    ints_table(peer, conn, table)
    sql = f"SELECT id, name, b FROM {table} ORDER BY id"
    expected = [tuple(r) for r in conn.cursor().execute(sql).fetchall()]
    cur = lazy_cursor(conn)
    shapes = {
        "fetchall": lambda c: c.fetchall(),
        "fetchone": lambda c: list(iter(c.fetchone, None)),
        "fetchmany": lambda c: [r for batch in iter(lambda: c.fetchmany(333), []) for r in batch],
        "iteration": lambda c: list(c),
    }
    for name, fetch in shapes.items():
        rows = fetch(cur.execute(sql))
        assert all(type(r) is ferrodbc.LazyRow for r in rows), name
        assert [tuple(r) for r in rows] == expected, name


def test_lazy_rows_stay_valid_after_the_cursor_moves_on_reexecutes_closes_and_is_collected(peer, conn, table):
    ints_table(peer, conn, table)
    cur = lazy_cursor(conn)
    sql = f"SELECT id, name, b FROM {table} ORDER BY id"
    ferrodbc.reset_counters()
    kept = []
    cur.execute(sql)
    # One row at a time: each kept row pins the row array it came from.
    for i, row in enumerate(cur):
        if i % 97 == 0:
            kept.append(row)
    first = cur.execute(sql).fetchmany(10)  # the same query again: same plan, buffers reused
    cur.execute(f"SELECT name FROM {table} WHERE id < 3")  # another shape: rebound
    other = cur.fetchall()
    cur.close()
    del cur
    gc.collect()
    conn.close()
    gc.collect()
    assert [tuple(r) for r in kept] == [(i, f"n{i}", bytes([i % 256])) for i in range(0, ROWS, 97)]
    assert [r.id for r in first] == list(range(10))
    assert [r[0] for r in other] == ["n0", "n1", "n2"]
    assert ferrodbc.counters()["pinned_batches"] >= 1


def test_a_batch_no_lazy_row_pins_is_refilled_in_place(peer, conn, table):
    """Counters prove the path: rows dropped before the next fetch pin nothing, so the row set
    refills its buffers; rows kept make it take fresh ones; eager rows never pin."""
    ints_table(peer, conn, table, n=20_000)
    sql = f"SELECT id, name FROM {table} ORDER BY id"
    cur = lazy_cursor(conn)
    ferrodbc.reset_counters()
    cur.execute(sql)
    total = 0
    while (row := cur.fetchone()) is not None:
        total += row[0]
        del row
    assert total == sum(range(20_000))
    assert ferrodbc.counters()["pinned_batches"] == 0

    eager = conn.cursor()
    ferrodbc.reset_counters()
    assert len(eager.execute(sql).fetchall()) == 20_000
    assert ferrodbc.counters()["pinned_batches"] == 0

    ferrodbc.reset_counters()
    rows = cur.execute(sql).fetchall()
    assert len(rows) == 20_000
    assert ferrodbc.counters()["pinned_batches"] >= 1


def test_a_cell_is_decoded_only_when_read(peer, conn, table):
    ints_table(peer, conn, table, n=100)
    calls = []

    # Which bytes a driver hands a text converter (narrow or UTF-16LE, whatever SQL type it
    # reports) is not this test's subject: the converter marks the value it was given.
    for t in TEXT_SQL_TYPES:
        conn.add_output_converter(t, lambda raw: (calls.append(raw), f"converted {len(calls)}")[1])
    cur = lazy_cursor(conn)
    rows = cur.execute(f"SELECT id, name FROM {table} ORDER BY id").fetchall()
    assert len(rows) == 100
    assert sum(r[0] for r in rows) == sum(range(100))
    assert calls == [], "the text column was never read"
    assert [rows[i].name for i in range(5)] == [f"converted {k}" for k in range(1, 6)]
    assert len(calls) == 5
    assert not rows[7].is_null(1) and len(calls) == 5, "is_null decodes nothing"


def test_lazy_rows_decode_with_the_converters_of_their_fetch(peer, conn, table):
    """The epoch rule: a lazy row keeps the plan (converters) it was fetched under; rows fetched
    after a change use the new converters, as eager rows do."""
    ints_table(peer, conn, table, n=10)
    for t in TEXT_SQL_TYPES:
        conn.add_output_converter(t, lambda raw: "first")
    cur = lazy_cursor(conn)
    cur.execute(f"SELECT id, name FROM {table} ORDER BY id")
    before = cur.fetchmany(5)
    # Replaced: the column bound as the driver's bytes for the first converter gives the second
    # the same bytes (clearing and adding mid-result: test_converters.py).
    for t in TEXT_SQL_TYPES:
        conn.add_output_converter(t, lambda raw: "second")
    after = cur.fetchall()
    assert [r.name for r in before] == ["first"] * 5
    assert [r.name for r in after] == ["second"] * 5


def test_raw_is_the_cell_as_the_driver_delivered_it(peer, conn, table):
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (i INTEGER, s VARCHAR(20), b {peer.types['bytes']})")
    cur.execute(f"INSERT INTO {table} VALUES (?, ?, ?)", -5, "héllo", b"\x00\x01\x02")
    cur.execute(f"INSERT INTO {table} VALUES (?, ?, ?)", None, "", b"")
    conn.commit()
    rows = lazy_cursor(conn).execute(f"SELECT i, s, b FROM {table} ORDER BY s DESC").fetchall()
    r = rows[0]
    assert int.from_bytes(r.raw(0), sys.byteorder, signed=True) == -5  # native C integer
    assert len(r.raw(0)) in (4, 8)
    assert r.raw("s") == "héllo".encode("utf-16-le")  # UTF-16LE, no terminator
    assert r.raw(2) == b"\x00\x01\x02"
    r = rows[1]
    assert r.raw(0) is None and r.is_null(0) and r[0] is None
    assert r.raw(1) == b"" and not r.is_null(1)
    assert r.raw(-1) == b""


def test_lazy_row_errors_pickle_and_comparison(peer, conn, table):
    ints_table(peer, conn, table, n=3)
    rows = lazy_cursor(conn).execute(f"SELECT id, name FROM {table} ORDER BY id").fetchall()
    r = rows[1]
    with pytest.raises(IndexError):
        r[2]
    with pytest.raises(KeyError):
        r["nope"]
    with pytest.raises(AttributeError, match="no column named nope"):
        _ = r.nope
    with pytest.raises(TypeError):
        r[1.5]
    with pytest.raises(IndexError):
        r.raw(5)
    assert r[-1] == "n1" and r[0:2] == (1, "n1") and r[::-1] == ("n1", 1)
    assert pickle.loads(pickle.dumps(r)) == (1, "n1")
    assert r == (1, "n1") and r != (1, "n2") and r == rows[1] and r != rows[2]
    assert r < rows[2] and hash(r) == hash((1, "n1"))
    assert "n1" in r and 7 not in r
    assert repr(r) == "LazyRow(1, 'n1')"
    eager = conn.cursor().execute(f"SELECT id, name FROM {table} ORDER BY id").fetchall()
    assert rows == eager and eager[1] == r


def test_the_lazy_row_type_is_not_constructible():
    with pytest.raises(TypeError):
        ferrodbc.LazyRow()
