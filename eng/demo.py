"""The main job: connect, run a few queries, print rows and fetch throughput.

Default target: the project's TDS peer (a SQL-Server-compatible server, started here) through
Microsoft ODBC Driver 18. `--sqlite` (or a missing peer) uses the embedded SQLite3 ODBC driver.
`--connection-string` points it anywhere.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import ferrodbc


def throughput(cur: ferrodbc.Cursor, sql: str) -> None:
    ferrodbc.reset_counters()
    start = time.perf_counter()
    cur.execute(sql)
    rows = cur.fetchall()
    elapsed = time.perf_counter() - start
    counters = ferrodbc.counters()
    print(
        f"  fetchall: {len(rows):,} rows x {len(rows[0]) if rows else 0} columns in {elapsed * 1000:.1f} ms "
        f"({len(rows) / elapsed:,.0f} rows/s); driver fetch calls {counters['fetch_calls']}, "
        f"SQLGetData calls {counters['getdata_calls']}, plans {counters['plans_built']}"
    )


def run(conn: ferrodbc.Connection, big_query: str, setup: list[str]) -> None:
    print(f"connected: {conn.dbms_name} via {conn.driver_name}")
    cur = conn.cursor()
    for sql in setup:
        cur.execute(sql)
    cur.execute("CREATE TABLE demo_people (id INT, name NVARCHAR(40), height FLOAT)")
    cur.executemany(
        "INSERT INTO demo_people VALUES (?, ?, ?)",
        [(1, "Ada Lovelace", 1.65), (2, "Grace Hopper", 1.68), (3, "Édouard Lucas", 1.74)],
    )
    print(f"  inserted {cur.rowcount} rows")
    conn.commit()
    cur.execute("SELECT id, name, height FROM demo_people WHERE height > ? ORDER BY id", 1.66)
    print("  columns:", [d[0] for d in cur.description])
    for row in cur:
        print(f"  row: {row}  (row.name = {row.name!r})")
    print("  fetchval:", cur.execute("SELECT COUNT(*) FROM demo_people").fetchval())
    # Twice: the first run includes the server producing the rows (the TDS peer encodes and
    # caches a synthetic result on first use); the second is the client's fetch throughput.
    throughput(cur, big_query)
    throughput(cur, big_query)
    cur.execute("DROP TABLE demo_people")
    conn.commit()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sqlite", action="store_true", help="use the embedded SQLite3 ODBC driver")
    parser.add_argument("--connection-string", help="any ODBC connection string")
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()

    if args.connection_string:
        with contextlib.closing(ferrodbc.connect(args.connection_string)) as conn:
            run(conn, "SELECT 1", [])
        return 0

    peer_ctx = None
    if not args.sqlite:
        try:
            sys.path.insert(0, os.path.join(os.path.dirname(__file__), "peers"))
            import tdspeer  # type: ignore[import-not-found]

            peer_ctx = tdspeer.start_peer(encrypt="notsup")
        except Exception as exc:  # noqa: BLE001  (the peer is optional for the demo: use SQLite)
            print(f"TDS peer unavailable ({exc}); using SQLite", file=sys.stderr)
            peer_ctx = None

    if peer_ctx is not None:
        with peer_ctx as peer:
            cs = tdspeer.conn_str(peer, driver="msodbcsql")
            print(f"TDS peer on port {peer.port}; {cs}")
            with contextlib.closing(ferrodbc.connect(cs)) as conn:
                run(conn, f"SELECT * FROM peer.mixed_{args.rows}", [])
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        cs = f"Driver={{SQLite3}};Database={os.path.join(tmp, 'demo.sqlite')}"
        print(cs)
        with contextlib.closing(ferrodbc.connect(cs)) as conn:
            setup = [
                "CREATE TABLE nums (n INTEGER, x DOUBLE)",
                f"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < {args.rows}) "
                "INSERT INTO nums SELECT n, n * 0.5 FROM c",
            ]
            run(conn, "SELECT n, x FROM nums", setup)
    return 0


if __name__ == "__main__":
    sys.exit(main())
