"""Driver resources are released: connections and cursors closed explicitly or dropped by the
garbage collector give back their sockets and handles."""

from __future__ import annotations

import gc
import os

import ferrodbc


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_connections_closed_or_dropped_release_their_sockets(pg):
    for _ in range(3):  # warm up: driver libraries, caches
        pg.connect().close()
    gc.collect()
    before = open_fds()
    for i in range(40):
        conn = pg.connect()
        cur = conn.cursor()
        cur.execute("SELECT generate_series(1, 100)")
        cur.fetchone()  # leave rows pending
        if i % 2:
            conn.close()
        del conn, cur
    gc.collect()
    assert open_fds() - before <= 2, "sockets of closed or dropped connections stay open"


def test_many_cursors_dropped_without_close(conn):
    """Thousands of short-lived cursors (statement handles) are freed as they go."""
    for i in range(2000):
        cur = conn.cursor()
        assert cur.execute("SELECT ?", i).fetchval() == i
    gc.collect()
    assert conn.cursor().execute("SELECT 1").fetchval() == 1


def test_a_cursor_outliving_its_connection_object(peer):
    """Dropping the last reference to a connection while a cursor is still alive is safe: the
    cursor keeps the connection alive, and works."""
    cur = peer.connect().cursor()
    gc.collect()
    assert isinstance(cur.connection, ferrodbc.Connection) and not cur.connection.closed
    assert cur.execute("SELECT 3").fetchval() == 3
    cur.connection.close()
    assert cur.closed
