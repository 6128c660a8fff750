"""The bulk-load tasks: rows a program already holds (Python tuples, or an Arrow table) loaded
into a table, each driver its fastest documented way (registered by workloads.py).

- tuples: ferrodbc and mssql-python ``cursor.bulkcopy(table, rows)`` (ferrodbc: the ODBC
  driver's bcp API on the caller's connection; mssql-python 1.16: its own TDS client),
  pyodbc ``executemany`` with ``fast_executemany = True`` (it has no bulk copy), arrow-odbc n/a;
- Arrow: ferrodbc and mssql-python ``cursor.bulkcopy_arrow(table, reader)``, arrow-odbc
  ``Connection.insert_into_table(reader, table, chunk_size=8192)`` (INSERT parameter arrays),
  pyodbc n/a. The source is a pyarrow Table built at set-up, handed over as a
  RecordBatchReader of 8,192-row batches (``Table.to_reader``), so the peak RSS above the
  start (reset at the end of set-up) is the driver's own buffering, not the source;
- ``bulk_narrow_executemany``, ``bulk_mixed_executemany``: INSERT parameter arrays, for the
  ratio bulk copy / executemany (ferrodbc ``executemany``, pyodbc ``fast_executemany``,
  mssql-python ``executemany``).

Set-up (untimed) creates the target table through a separate pyodbc connection (arrow-odbc's
connection has no cursor; one reader for every contender keeps the checks comparable), which
also reads the table back in the check and drops it afterwards. The body ends with a commit
where the driver's connection is in manual-commit mode.

Checks: the narrow tasks compare COUNT(*) and sums of each column with the generator's (a
fingerprint: reading a million rows back would cost more than loading them); the mixed and
NVARCHAR(MAX) tasks read every row back and compare the harness's row digest.

``--bulk-discard`` (``drivers``/``run``): the peer checks and counts bulk rows but stores none,
so a bulk contender's check is the count the driver returns (``rows_copied``, from the server's
DONE counts) and an empty table (proof the peer did discard); INSERT contenders (executemany,
arrow-odbc) still store their rows and are checked as above, then reported in the same form.
The expected digest of every bulk task is then ``(n, "rows_copied")``.

Every bulk task records figures besides its time (``Task.cpu``): rows/s, the client's CPU time
(all its threads) and the TDS peer's CPU time over the body.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import Any

from . import arrow_tasks as at
from . import workdata as wd
from .digest import Digest, of_rows
from .task import Ctx, Size, Task

#: Set by `drivers --bulk-discard` / `run --bulk-discard` for the peer and every worker.
DISCARD_ENV = "PROFILER_BULK_DISCARD"
DISCARDED = "rows_copied"
#: Rows per Arrow record batch handed to the drivers, and arrow-odbc's chunk_size.
ARROW_BATCH = 8192


def discard_mode() -> bool:
    return os.environ.get(DISCARD_ENV) == "1"


#: Set by `drivers --insert-discard` / `run --insert-discard`: the peer counts INSERTs run by RPC
#: (parameter arrays) and stores none, so the *_executemany tasks measure the client.
INSERT_DISCARD_ENV = "PROFILER_INSERT_DISCARD"
INSERTS_DISCARDED = "inserts_discarded"


def insert_discard_mode() -> bool:
    return os.environ.get(INSERT_DISCARD_ENV) == "1"


def insert_check(check: Callable[[Ctx, Any], Digest]) -> Callable[[Ctx, Any], Digest]:
    """An executemany task's check: with --insert-discard, an empty table (the peer parsed and
    counted every row but stored none; the rows sent are what the body's driver reported where
    it reports a count: pyodbc's fast_executemany says -1)."""

    def checked(ctx: Ctx, copied: Any) -> Digest:
        if not insert_discard_mode():
            return check(ctx, copied)
        left = _count(ctx)
        if left:
            raise AssertionError(f"--insert-discard, yet {left} rows were stored: the peer did not discard")
        return Digest(ctx.n, INSERTS_DISCARDED)

    return checked


def insert_expect(full: Callable[[int], Digest]) -> Callable[[int], Digest]:
    expect = make_expect(full)
    return lambda n: Digest(n, INSERTS_DISCARDED) if insert_discard_mode() else expect(n)


# ---- shapes: DDL, rows, Arrow schema ---------------------------------------------------------

BIG0 = 1 << 33  # bigints beyond 32 bits; 1M rows' sum stays far below 2**63

NARROW_DDL = "(id INT NOT NULL, big BIGINT NOT NULL, val FLOAT NOT NULL)"
NARROW_COLS = "id, big, val"
MIXED_DDL = ("(id INT NOT NULL, big BIGINT NULL, f FLOAT NULL, name NVARCHAR(50) NULL, ts DATETIME2(7) NULL, "
             "amount DECIMAL(18, 4) NULL, flag BIT NULL, note NVARCHAR(100) NULL)")
MIXED_COLS = "id, big, f, name, ts, amount, flag, note"
MAX_DDL = "(v NVARCHAR(MAX) NULL)"
MAX_COLS = "v"
MAX_CHARS = 4096


def narrow_rows(n: int) -> list[tuple]:
    return [(i, BIG0 + i * 1_000_003, i * 0.5) for i in range(n)]


def mixed_rows(n: int) -> list[tuple]:
    """The peer's `mixed` shape (the fetch tasks' rows): int, bigint, float, nvarchar(50),
    datetime2(7), decimal(18,4), bit, nullable nvarchar(100)."""
    from eng.peers import synthetic as syn

    return [tuple(r) for r in syn.rows("mixed", n)]


def max_rows(n: int) -> list[tuple]:
    """4,096-character ASCII values (8 KiB as UTF-16 on the wire), each row's different."""
    body = "abcdefghijklmnopqrstuvwxyz0123456789" * (MAX_CHARS // 36 + 1)
    return [(f"{i:010d}" + body[i % 36 : i % 36 + MAX_CHARS - 10],) for i in range(n)]


def narrow_arrow(n: int) -> Any:
    import numpy as np
    import pyarrow as pa

    i = np.arange(n, dtype=np.int64)
    return pa.table({"id": pa.array(i.astype(np.int32)), "big": pa.array(BIG0 + i * 1_000_003),
                     "val": pa.array(i * 0.5)})


def mixed_arrow(n: int) -> Any:
    import pyarrow as pa

    cols = list(zip(*mixed_rows(n)))
    types = [pa.int32(), pa.int64(), pa.float64(), pa.string(), pa.timestamp("us"), pa.decimal128(18, 4),
             pa.bool_(), pa.string()]
    names = [c.strip() for c in MIXED_COLS.split(",")]
    return pa.table([pa.array(c, type=t) for c, t in zip(cols, types)], names=names)


def max_arrow(n: int) -> Any:
    import pyarrow as pa

    return pa.table({"v": pa.array([r[0] for r in max_rows(n)], type=pa.large_string())})


# ---- the verifier connection: DDL, read-back, drop --------------------------------------------


def _verifier(ctx: Ctx) -> Any:
    if "verify" not in ctx.extra:
        import pyodbc

        cn = pyodbc.connect(ctx.conn_str, autocommit=True)
        ctx.extra["verify"] = cn

        def drop() -> None:
            cur = cn.cursor()
            for t in ctx.extra.get("bulk_tables", []):
                try:
                    cur.execute(f"DROP TABLE {t}")
                except Exception:  # noqa: BLE001  (best effort, like the worker's teardown)
                    pass
            cn.close()

        ctx.cleanups.append(drop)
    return ctx.extra["verify"]


def _create(ctx: Ctx, prefix: str, ddl: str) -> None:
    name = wd.table_name(prefix)
    _verifier(ctx).cursor().execute(f"CREATE TABLE {name} {ddl}")
    ctx.extra.setdefault("bulk_tables", []).append(name)
    ctx.table = name


def tuples_setup(prefix: str, ddl: str, rows: Callable[[int], list]) -> Callable[[Ctx], None]:
    def setup(ctx: Ctx) -> None:
        ctx.driver.require_bulk(ctx.task_name)
        _create(ctx, prefix, ddl)
        ctx.items = rows(ctx.n)

    return setup


def arrow_setup(prefix: str, ddl: str, table: Callable[[int], Any]) -> Callable[[Ctx], None]:
    """The table built, then the peak RSS reset: what the body adds is the driver's."""

    def setup(ctx: Ctx) -> None:
        ctx.driver.require_bulk(ctx.task_name)
        _create(ctx, prefix, ddl)
        ctx.extra["source"] = table(ctx.n)
        at.rss_setup(ctx)

    return setup


# ---- bodies ------------------------------------------------------------------------------------


def tuples_body(columns: str) -> Callable[[Ctx], Any]:
    def body(ctx: Ctx) -> Any:
        return ctx.driver.bulk_rows(ctx.conn, ctx.table, columns, ctx.items)

    return body


def arrow_body(ctx: Ctx) -> Any:
    return ctx.driver.bulk_arrow(ctx.conn, ctx.table, ctx.extra["source"].to_reader(max_chunksize=ARROW_BATCH))


def executemany_body(columns: str) -> Callable[[Ctx], Any]:
    def body(ctx: Ctx) -> Any:
        return ctx.driver.insert_arrays(ctx.conn, ctx.table, columns, ctx.items)

    return body


# ---- checks and expectations ---------------------------------------------------------------


def narrow_fingerprint(count: int, ids: int, bigs: int, vals: float) -> Digest:
    text = f"{count}|{ids}|{bigs}|{float(vals)!r}"
    return Digest(count, hashlib.sha256(text.encode()).hexdigest()[:16])


def narrow_expect_full(n: int) -> Digest:
    rows = narrow_rows(n)
    return narrow_fingerprint(n, sum(r[0] for r in rows), sum(r[1] for r in rows), sum(r[2] for r in rows))


def narrow_stored(ctx: Ctx) -> Digest:
    cur = _verifier(ctx).cursor()
    cur.execute(f"SELECT COUNT(*), SUM(CAST(id AS BIGINT)), SUM(big), SUM(val) FROM {ctx.table}")
    count, ids, bigs, vals = cur.fetchone()
    return narrow_fingerprint(count, ids or 0, bigs or 0, vals or 0.0)


def rows_stored(columns: str, order: str | None) -> Callable[[Ctx], Digest]:
    def stored(ctx: Ctx) -> Digest:
        cur = _verifier(ctx).cursor()
        cur.execute(f"SELECT {columns} FROM {ctx.table}" + (f" ORDER BY {order}" if order else ""))
        return of_rows(cur.fetchall())

    return stored


def _count(ctx: Ctx) -> int:
    cur = _verifier(ctx).cursor()
    cur.execute(f"SELECT COUNT(*) FROM {ctx.table}")
    return cur.fetchone()[0]


def make_check(stored: Callable[[Ctx], Digest], full: Callable[[int], Digest]) -> Callable[[Ctx, Any], Digest]:
    """`copied` is the body's result: the rows the driver says it copied (bulk copy) or None
    (INSERT paths, which always store)."""

    def check(ctx: Ctx, copied: Any) -> Digest:
        if "rss_start_kib" in ctx.metrics:  # Arrow tasks: the body's peak, before any read-back
            peak = at._status_kib("VmHWM")
            ctx.metrics["peak_rss_above_start_mib"] = round((peak - ctx.metrics["rss_start_kib"]) / 1024, 1)
        if not discard_mode():
            return stored(ctx)
        if copied is None:  # an INSERT path: stored even now, so checked in full
            got = stored(ctx)
            want = full(ctx.n)
            if got != want:
                raise AssertionError(f"stored rows: {got.describe()}, expected {want.describe()}")
            return Digest(got.rows, DISCARDED)
        left = _count(ctx)
        if left:
            raise AssertionError(f"--bulk-discard, yet {left} rows were stored: the peer did not discard")
        return Digest(int(copied), DISCARDED)

    return check


def make_expect(full: Callable[[int], Digest]) -> Callable[[int], Digest]:
    def expect(n: int) -> Digest:
        return Digest(n, DISCARDED) if discard_mode() else full(n)

    return expect


def _mixed_full(n: int) -> Digest:
    return of_rows(mixed_rows(n))


def _max_full(n: int) -> Digest:
    return of_rows(max_rows(n))


_narrow_check = make_check(narrow_stored, narrow_expect_full)
_mixed_check = make_check(rows_stored(MIXED_COLS, "id"), _mixed_full)
# No key in a one-column table: the peer returns the rows in insertion order.
_max_check = make_check(rows_stored(MAX_COLS, None), _max_full)


def _task(name: str, title: str, size: Size, body, check, full, setup) -> Task:
    if name.endswith("_executemany"):
        return Task(name, title, size, body, insert_check(check), insert_expect(full), setup, cpu=True)
    return Task(name, title, size, body, check, make_expect(full), setup, cpu=True)


TASKS = [
    _task("bulk_narrow_tuples", "load int/bigint/float tuples (bulkcopy; pyodbc fast_executemany)",
          Size(1_000_000, 100_000), tuples_body(NARROW_COLS), _narrow_check, narrow_expect_full,
          tuples_setup("bnarrow", NARROW_DDL, narrow_rows)),
    _task("bulk_narrow_executemany", "the same tuples by INSERT parameter arrays (executemany)",
          Size(1_000_000, 100_000), executemany_body(NARROW_COLS), _narrow_check, narrow_expect_full,
          tuples_setup("bnarrowx", NARROW_DDL, narrow_rows)),
    _task("bulk_narrow_arrow", "load int/bigint/float from Arrow, 8,192-row batches (peak RSS)",
          Size(1_000_000, 100_000), arrow_body, _narrow_check, narrow_expect_full,
          arrow_setup("bnarrowa", NARROW_DDL, narrow_arrow)),
    _task("bulk_narrow_arrow_100k", "bulk_narrow_arrow at 100,000 rows (peak RSS: flat?)",
          Size(100_000, 10_000), arrow_body, _narrow_check, narrow_expect_full,
          arrow_setup("bnarrowa", NARROW_DDL, narrow_arrow)),
    _task("bulk_mixed_tuples", "load mixed 8-column tuples (bulkcopy; pyodbc fast_executemany)",
          Size(100_000, 10_000), tuples_body(MIXED_COLS), _mixed_check, _mixed_full,
          tuples_setup("bmixed", MIXED_DDL, mixed_rows)),
    _task("bulk_mixed_executemany", "the mixed tuples by INSERT parameter arrays (executemany)",
          Size(100_000, 10_000), executemany_body(MIXED_COLS), _mixed_check, _mixed_full,
          tuples_setup("bmixedx", MIXED_DDL, mixed_rows)),
    _task("bulk_mixed_arrow", "load mixed 8-column rows from Arrow", Size(100_000, 10_000), arrow_body,
          _mixed_check, _mixed_full, arrow_setup("bmixeda", MIXED_DDL, mixed_arrow)),
    _task("bulk_nvarcharmax_tuples", "load 4,096-char NVARCHAR(MAX) values from tuples",
          Size(10_000, 1000), tuples_body(MAX_COLS), _max_check, _max_full,
          tuples_setup("bmax", MAX_DDL, max_rows)),
    _task("bulk_nvarcharmax_arrow", "load 4,096-char NVARCHAR(MAX) values from Arrow (large_utf8)",
          Size(10_000, 1000), arrow_body, _max_check, _max_full, arrow_setup("bmaxa", MAX_DDL, max_arrow)),
]
