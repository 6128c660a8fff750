"""Tasks of SQL Server 2025 vectors (issue 33, docs/vectors.md), registered by workloads.py next
to the others. Same contract (task.py): setup untimed, body timed, check untimed.

- ``vector_read_numpy``: ``SELECT id, embedding`` of an ``(id int, embedding vector(768))``
  table into one float32 numpy matrix. ferrodbc asks Driver 18 for native vectors
  (``VectorTypeSupport=v1``) and takes the matrix from one Arrow record batch without a copy
  (``fixed_size_list<float32>[768]``'s values; docs/vectors.md); mssql-python 1.16 and pyodbc read the JSON text
  SQL Server sends them (``str``) and do what their users do: ``json.loads`` + ``numpy.array``.
- ``vector_read_numpy_text``: the same through ferrodbc's text mode (no keyword:
  ``str`` + ``ferrodbc.vectors.from_text``), for the cost of the text form itself.
- ``vector_read_arrow``: the same rows as a pyarrow Table (ferrodbc native only; the text
  drivers: n/a).
- ``vector_bulk``: bulk-load ``n`` 768-dimension embeddings: ferrodbc ``bulkcopy`` of numpy
  rows, mssql-python ``bulkcopy`` of lists (its Rust client sends native vectors), pyodbc
  ``fast_executemany`` of the JSON text.

The source table is loaded once per peer under a fixed name (``vec_src_<n>``) through
ferrodbc and left for the next samples. The check compares every element after rounding to the
8 significant digits of SQL Server's text form (what a correct text reader gets), so the exact
native values and the text drivers' values are checked against one expectation; the native path's
exactness is asserted by the test suite (tests/sqlserver/test_sqlserver_vectors.py).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .digest import Digest
from .drivers import NotApplicable
from .task import Ctx, Size, Task

DIMS = 768
SIZE = Size(100_000, 2_000)


def _data(n: int) -> Any:
    import numpy as np

    return np.random.default_rng(33).standard_normal((n, DIMS)).astype(np.float32)


def _rounded8(m: Any) -> Any:
    """Each float32 rounded to 8 significant digits, as SQL Server's text form keeps them."""
    import numpy as np

    x = m.astype(np.float64)
    a = np.abs(x)
    with np.errstate(divide="ignore"):
        e = np.floor(np.log10(np.where(a > 0, a, 1.0)))
    scale = 10.0 ** (7 - e)
    return (np.round(x * scale) / scale).astype(np.float32)


def _digest(ids: Any, matrix: Any) -> Digest:
    import numpy as np

    h = hashlib.sha256(np.asarray(ids, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(_rounded8(np.asarray(matrix, dtype=np.float32))).tobytes())
    return Digest(len(ids), h.hexdigest()[:16])


def _expect(n: int) -> Digest:
    import numpy as np

    return _digest(np.arange(n), _data(n))


def _native_conn_str(ctx: Ctx) -> str:
    return ctx.conn_str.rstrip(";") + ";VectorTypeSupport=v1"


def _require_vectors() -> None:
    """`compare --base` with a revision before the vector family: n/a, not a failure."""
    try:
        import ferrodbc.vectors  # noqa: F401
    except ImportError as e:
        raise NotApplicable("this ferrodbc revision has no vector support") from e


def _source(ctx: Ctx) -> str:
    """The loaded `vec_src_<n>` table (made once per peer through ferrodbc)."""
    import ferrodbc

    _require_vectors()

    name = f"vec_src_{ctx.n}"
    with ferrodbc.connect(_native_conn_str(ctx), autocommit=True) as c:
        if c.execute("SELECT COUNT(*) FROM sys.tables WHERE name = ?", name).fetchval() == 0:
            c.execute(f"CREATE TABLE {name} (id int NOT NULL PRIMARY KEY, embedding vector({DIMS}) NOT NULL)")
            data = _data(ctx.n)
            cur = c.cursor()
            for start in range(0, ctx.n, 10_000):
                cur.bulkcopy(name, [(i, data[i]) for i in range(start, min(ctx.n, start + 10_000))])
    return name


# ---- reads -----------------------------------------------------------------------------------


def read_setup(ctx: Ctx) -> None:
    import numpy  # noqa: F401  (its first import is not the read's cost)

    ctx.table = _source(ctx)
    if ctx.driver.name == "ferrodbc" and ctx.task_name != "vector_read_numpy_text":
        import pyarrow

        # pyarrow's first to_numpy() imports pandas (~190 ms of CPU in a fresh process): a
        # one-time import, not the read's cost.
        pyarrow.array([0.0], pyarrow.float32()).to_numpy(zero_copy_only=True)
        ctx.extra["native"] = ctx.driver.connect(_native_conn_str(ctx), autocommit=True)
        ctx.cleanups.append(ctx.extra["native"].close)
    elif ctx.task_name == "vector_read_arrow":
        raise NotApplicable(f"{ctx.driver.name} reads vectors as JSON text (no native vectors, no Arrow lists)")
    elif ctx.task_name == "vector_read_numpy_text" and ctx.driver.name != "ferrodbc":
        raise NotApplicable("ferrodbc's text mode only (the text drivers' own path is vector_read_numpy)")


def _native_table(ctx: Ctx) -> Any:
    import pyarrow as pa

    cur = ctx.extra["native"].cursor()
    cur.execute(f"SELECT id, embedding FROM {ctx.table} ORDER BY id")
    return pa.RecordBatchReader.from_stream(cur.fetch_arrow_table()).read_all()


def read_numpy_body(ctx: Ctx) -> Any:
    import numpy as np

    if "native" in ctx.extra:
        # docs/vectors.md's recipe: the rows as one record batch, its list values viewed as the
        # matrix (no per-row objects, no copy after the fetch).
        import pyarrow as pa

        cur = ctx.extra["native"].cursor()
        cur.execute(f"SELECT id, embedding FROM {ctx.table} ORDER BY id")
        b = pa.RecordBatchReader.from_stream(cur.fetch_record_batch(rows_per_batch=1 << 30)).read_next_batch()
        return b.column("id").to_numpy(), b.column("embedding").values.to_numpy(zero_copy_only=True).reshape(-1, DIMS)
    cur = ctx.conn.cursor()
    cur.execute(f"SELECT id, embedding FROM {ctx.table} ORDER BY id")
    rows = cur.fetchall()
    return [r[0] for r in rows], np.array([json.loads(r[1]) for r in rows], dtype=np.float32)


def read_text_body(ctx: Ctx) -> Any:
    import numpy as np

    from ferrodbc.vectors import from_text

    cur = ctx.conn.cursor()
    cur.execute(f"SELECT id, embedding FROM {ctx.table} ORDER BY id")
    rows = cur.fetchall()
    return [r[0] for r in rows], np.array([from_text(r[1]) for r in rows], dtype=np.float32)


def read_arrow_body(ctx: Ctx) -> Any:
    return _native_table(ctx)


def numpy_check(ctx: Ctx, result: Any) -> Digest:
    ids, matrix = result
    return _digest(ids, matrix)


def arrow_check(ctx: Ctx, table: Any) -> Digest:
    emb = table.column("embedding").combine_chunks()
    return _digest(table.column("id").to_numpy(), emb.values.to_numpy(zero_copy_only=True).reshape(-1, DIMS))


# ---- bulk load ---------------------------------------------------------------------------------


def bulk_setup(ctx: Ctx) -> None:
    import uuid

    if ctx.driver.name == "ferrodbc":
        _require_vectors()

    data = _data(ctx.n)
    name = f"vec_bulk_{uuid.uuid4().hex[:8]}"
    cur = ctx.conn.cursor()
    cur.execute(f"CREATE TABLE {name} (id int NOT NULL, embedding vector({DIMS}) NOT NULL)")
    ctx.conn.commit()
    ctx.tables.append(name)
    ctx.table = name
    if ctx.driver.name == "pyodbc":
        # Its users' way: fast_executemany of JSON text (pyodbc cannot bind vectors).
        ctx.items = [(i, json.dumps(data[i].tolist())) for i in range(ctx.n)]
    elif ctx.driver.name == "mssql-python":
        ctx.items = [(i, data[i].tolist()) for i in range(ctx.n)]
    else:
        ctx.items = [(i, data[i]) for i in range(ctx.n)]
        # Native vectors (parameter arrays of the native type), as the read tasks ask for them.
        ctx.extra["native"] = ctx.driver.connect(_native_conn_str(ctx), autocommit=False)
        ctx.cleanups.append(ctx.extra["native"].close)


def bulk_body(ctx: Ctx) -> Any:
    conn = ctx.extra.get("native", ctx.conn)
    cur = conn.cursor()
    if ctx.driver.name == "pyodbc":
        cur.fast_executemany = True
        # In 10,000-row calls, as its users chunk (pandas' chunksize): one call of 100k JSON
        # texts is a request of over 1 GB, which the peer, like SQL Server, refuses.
        for start in range(0, len(ctx.items), 10_000):
            cur.executemany(f"INSERT INTO {ctx.table} (id, embedding) VALUES (?, ?)", ctx.items[start:start + 10_000])
        ctx.conn.commit()
        return len(ctx.items)
    if not hasattr(cur, "bulkcopy"):
        raise NotApplicable(f"{ctx.driver.name} has no bulkcopy")
    result = cur.bulkcopy(ctx.table, ctx.items)
    conn.commit()
    return result["rows_copied"] if isinstance(result, dict) else result


def bulk_check(ctx: Ctx, copied: Any) -> Digest:
    import ferrodbc

    with ferrodbc.connect(_native_conn_str(ctx), autocommit=True) as c:
        t = c.execute(f"SELECT id, embedding FROM {ctx.table} ORDER BY id")
        import pyarrow as pa

        table = pa.RecordBatchReader.from_stream(t.fetch_arrow_table()).read_all()
    return arrow_check(ctx, table)


TASKS = [
    Task("vector_read_numpy", f"{SIZE.full:,} rows of (id, vector({DIMS})) into a float32 numpy matrix",
         SIZE, read_numpy_body, numpy_check, _expect, read_setup, cpu=True),
    Task("vector_read_numpy_text", "the same through ferrodbc's text mode (str + vectors.from_text)",
         SIZE, read_text_body, numpy_check, _expect, read_setup, cpu=True),
    Task("vector_read_arrow", f"the same rows as a pyarrow Table (fixed_size_list<float32>[{DIMS}])",
         SIZE, read_arrow_body, arrow_check, _expect, read_setup, cpu=True),
    Task("vector_bulk", f"bulk-load {SIZE.full:,} {DIMS}-dimension embeddings",
         SIZE, bulk_body, bulk_check, _expect, bulk_setup, cpu=True),
]
