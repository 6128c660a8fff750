"""The Arrow tasks: a result read as one pyarrow Table, or streamed as record batches, by each
driver's own Arrow fetch (ferrodbc's PyCapsule stream, mssql-python's `cursor.arrow()` /
`arrow_reader()`, arrow-odbc's `read_arrow_batches` on a reused connection).

Tables are validated through pyarrow's Python values, outside the timed body. A streamed 1.2
million-row result cannot be kept whole to be hashed (that would measure the keeping), so each
batch leaves a fingerprint of Arrow compute kernels (row count, sums, null count, UTF-8 bytes)
that the generators reproduce; the task also reports the peak RSS above its start.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from .digest import Digest, of_rows
from .task import Ctx


def select_all(shape: str) -> Callable[[int], str]:
    return lambda n: f"SELECT * FROM peer.{shape}_{n}"


def setup(ctx: Ctx) -> None:
    """Import pyarrow before the timed body: its first import costs more than the fetch."""
    import pyarrow.compute  # noqa: F401  (imports pyarrow too)


def warm_setup(shape: str) -> Callable[[Ctx], None]:
    """`setup`, then the same query read once untimed on the task's connection: the body times
    a program's second read of it, as a loop or a server does (each driver's buffers, caches and
    allocator state warmed), where the other tasks time the first query of a fresh process."""
    sql = select_all(shape)

    def set_up(ctx: Ctx) -> None:
        setup(ctx)
        ctx.driver.arrow_table(ctx.conn, sql(ctx.n))

    return set_up


def table_body(shape: str) -> Callable[[Ctx], Any]:
    """The rest of the result as one pyarrow Table, through the driver's Arrow fetch."""
    sql = select_all(shape)

    def body(ctx: Ctx) -> Any:
        return ctx.driver.arrow_table(ctx.conn, sql(ctx.n))

    return body


def table_check(ctx: Ctx, table: Any) -> Digest:
    """The table's values as rows (pyarrow's own Python conversion, outside the timed body)."""
    return of_rows(list(zip(*(col.to_pylist() for col in table.columns))))


# ---- record batches of a large result, memory bounded -----------------------------------

#: Rows per record batch asked of every driver (each one's default, too).
BATCH_ROWS = 8192


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def rss_setup(ctx: Ctx) -> None:
    """pyarrow imported, then the peak RSS reset (Linux: `5` > clear_refs) and the RSS noted."""
    import gc

    setup(ctx)
    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    ctx.metrics["rss_start_kib"] = _status_kib("VmRSS")


def batches_body(shape: str) -> Callable[[Ctx], Any]:
    """Stream the result as record batches, keeping only each batch's fingerprint."""
    sql = select_all(shape)

    def body(ctx: Ctx) -> Any:
        import pyarrow.compute as pc

        prints = []
        for batch in ctx.driver.arrow_batches(ctx.conn, sql(ctx.n), BATCH_ROWS):
            name = batch.column(1)
            prints.append((batch.num_rows, pc.sum(batch.column(0)).as_py(), pc.sum(batch.column(2)).as_py(),
                           name.null_count, pc.sum(pc.binary_length(name)).as_py() or 0))
        return prints

    return body


def batches_check(ctx: Ctx, prints: list) -> Digest:
    peak = _status_kib("VmHWM")
    ctx.metrics["peak_rss_above_start_mib"] = round((peak - ctx.metrics["rss_start_kib"]) / 1024, 1)
    ctx.metrics["batches"] = len(prints)
    ctx.metrics["largest_batch_rows"] = max((p[0] for p in prints), default=0)
    return fingerprint(sum(p[0] for p in prints), sum(p[1] or 0 for p in prints), sum(p[2] or 0 for p in prints),
                       sum(p[3] for p in prints), sum(p[4] for p in prints))


def fingerprint(rows: int, ids: int, vals: float, nulls: int, name_bytes: int) -> Digest:
    text = f"{rows}|{ids}|{vals!r}|{nulls}|{name_bytes}"
    return Digest(rows, hashlib.sha256(text.encode()).hexdigest()[:16])


def batches_expect(shape: str) -> Callable[[int], Digest]:
    """The generator's rows folded like `batches_check` (the float sum in the same batch order:
    every value of int_nvarchar_float is a multiple of 0.5, so the sums are exact anyway)."""

    def expect(n: int) -> Digest:
        from eng.peers import synthetic as syn

        rows = ids = nulls = name_bytes = 0
        vals = 0.0
        for r in syn.rows(shape, n):
            rows += 1
            ids += r[0]
            vals += r[2]
            if r[1] is None:
                nulls += 1
            else:
                name_bytes += len(r[1].encode())
        return fingerprint(rows, ids, vals, nulls, name_bytes)

    return expect
