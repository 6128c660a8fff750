"""Tasks of the pandas / SQLAlchemy / partitioned-read paths (issue 14), registered by
workloads.py next to the DB-API tasks. Same contract (task.py): setup untimed, body timed,
check untimed against the generators.

- ``read_arrow_1_2m_p1/_p2/_p4``: ``ferrodbc.read_arrow`` of a 1,200,000-row user table
  (int/nvarchar/float, ``id`` the primary key) over 1, 2 and 4 partitions. The table is loaded
  once per peer (1.2M rows by SQL take ~15 s) under a fixed name and left for the next samples:
  it lives as long as the profiler run's peer. Other drivers: n/a (no partitioned read).
- ``pandas_read_sql_mixed``: ``pandas.read_sql`` of 100,000 mixed rows through each driver's
  SQLAlchemy dialect (mssql+ferrodbc, mssql+pyodbc, mssql+mssqlpython), ``coerce_float=False``
  so the decimals stay exact (the check compares them with the generator's).
- ``arrow_pandas_mixed`` / ``arrow_polars_mixed``: the same 100,000 rows through the Arrow
  fetch into a pandas DataFrame (the driver's Arrow table, then ``.to_pandas()``, numpy dtypes, decimals as
  Decimal objects) and a polars DataFrame (``pl.DataFrame(cursor.fetch_record_batch())``);
  mssql-python through its ``cursor.arrow()``; pyodbc: n/a.
- ``pandas_to_sql``: ``DataFrame.to_sql`` (default method, one call) of 100,000 item rows
  into an existing table through each dialect, defaults as a user gets them: mssql+ferrodbc
  sends one parameter array, mssql+pyodbc (fast_executemany off) insertmanyvalues batches.
"""

from __future__ import annotations

from typing import Any

from . import workdata as wd
from .digest import Digest, of_rows
from .drivers import NotApplicable
from .task import Ctx, Size, Task

PART_SHAPE = "int_nvarchar_float"


def _synthetic(shape: str, n: int) -> list[tuple]:
    from eng.peers import synthetic as syn

    return [tuple(r) for r in syn.rows(shape, n)]


# ---- ferrodbc.read_arrow over partitions ---------------------------------------------------


def _part_table(n: int) -> str:
    return f"part_src_{n}"


def part_setup(ctx: Ctx) -> None:
    if not hasattr(ctx.driver.mod, "read_arrow"):
        raise NotApplicable(f"{ctx.driver.name} has no partitioned read (ferrodbc.read_arrow)")
    import pyarrow  # noqa: F401  (its first import is not the read's cost)

    from eng.peers import usertable

    name = _part_table(ctx.n)
    cur = ctx.conn.cursor()
    cur.execute("SELECT COUNT(*) FROM sys.tables WHERE name = ?", name)
    if cur.fetchone()[0] == 0:
        cur.execute(f"CREATE TABLE {name} (id INT NOT NULL PRIMARY KEY, name NVARCHAR(50), val FLOAT)")
        for sql in usertable.inserts(PART_SHAPE, name, ctx.n):
            cur.execute(sql)
        ctx.conn.commit()
    ctx.table = name


def part_body(partitions: int):
    def body(ctx: Ctx) -> Any:
        return ctx.driver.mod.read_arrow(ctx.conn_str, f"SELECT * FROM {ctx.table}", partition_on="id",
                                         partitions=partitions)

    return body


def arrow_rows_check(ctx: Ctx, table: Any) -> Digest:
    # Ranges come in ascending order and the peer reads each by the primary key: generator order.
    return of_rows(list(zip(*(col.to_pylist() for col in table.columns))))


# ---- pandas through SQLAlchemy -------------------------------------------------------------


def _engine(ctx: Ctx) -> Any:
    import pandas  # noqa: F401  (imported before the timing)

    engine = ctx.driver.sqlalchemy_engine(ctx.conn_str)
    with engine.connect() as c:  # dialect initialisation and the pool's first connection
        c.exec_driver_sql("SELECT 1").scalar()
    return engine


def read_sql_setup(ctx: Ctx) -> None:
    ctx.extra["engine"] = _engine(ctx)


def read_sql_body(ctx: Ctx) -> Any:
    import pandas as pd

    return pd.read_sql(f"SELECT * FROM peer.mixed_{ctx.n}", ctx.extra["engine"], coerce_float=False)


def _cell(value: Any) -> Any:
    import pandas as pd

    if value is None or value is pd.NaT or (not isinstance(value, (str, bytes)) and _is_na(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    return value.item() if hasattr(value, "item") else value


def _is_na(value: Any) -> bool:
    import pandas as pd

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def frame_check(ctx: Ctx, frame: Any) -> Digest:
    return of_rows([tuple(_cell(v) for v in row) for row in frame.itertuples(index=False)])


def to_sql_setup(ctx: Ctx) -> None:
    import pandas as pd

    ctx.table = ctx.create_table("items", wd.ITEM_DDL)
    ctx.items = wd.item_rows(ctx.n)
    ctx.extra["frame"] = pd.DataFrame(ctx.items, columns=["id", "name", "val"])
    ctx.extra["engine"] = _engine(ctx)


def to_sql_body(ctx: Ctx) -> None:
    ctx.extra["frame"].to_sql(ctx.table, ctx.extra["engine"], if_exists="append", index=False)


def items_check(ctx: Ctx, _: Any) -> Digest:
    return of_rows(ctx.read_back(ctx.table))


# ---- the Arrow path into pandas and polars --------------------------------------------------


def arrow_frame_setup(ctx: Ctx) -> None:
    import pandas  # noqa: F401  (first imports are not the read's cost)
    import polars  # noqa: F401
    import pyarrow  # noqa: F401


def arrow_pandas_body(ctx: Ctx) -> Any:
    return ctx.driver.arrow_table(ctx.conn, f"SELECT * FROM peer.mixed_{ctx.n}").to_pandas()


def arrow_polars_body(ctx: Ctx) -> Any:
    import polars as pl

    return pl.DataFrame(ctx.driver.arrow_stream(ctx.conn, f"SELECT * FROM peer.mixed_{ctx.n}"))


def polars_check(ctx: Ctx, frame: Any) -> Digest:
    return of_rows(frame.rows())


TASKS = [
    *(Task(f"read_arrow_1_2m_p{p}", f"ferrodbc.read_arrow of a 1.2M-row table, {p} partition(s)",
           Size(1_200_000, 100_000), part_body(p), arrow_rows_check,
           lambda n: of_rows(_synthetic(PART_SHAPE, n)), part_setup) for p in (1, 2, 4)),
    Task("pandas_read_sql_mixed", "pandas.read_sql of mixed rows through the SQLAlchemy dialect",
         Size(100_000, 10_000), read_sql_body, frame_check, lambda n: of_rows(_synthetic("mixed", n)),
         read_sql_setup),
    Task("arrow_pandas_mixed", "mixed rows into pandas through Arrow (table.to_pandas())",
         Size(100_000, 10_000), arrow_pandas_body, frame_check, lambda n: of_rows(_synthetic("mixed", n)),
         arrow_frame_setup),
    Task("arrow_polars_mixed", "mixed rows into polars through the Arrow stream (pl.DataFrame(...))",
         Size(100_000, 10_000), arrow_polars_body, polars_check, lambda n: of_rows(_synthetic("mixed", n)),
         arrow_frame_setup),
    Task("pandas_to_sql", "DataFrame.to_sql of item rows through the SQLAlchemy dialect",
         Size(100_000, 5000), to_sql_body, items_check, lambda n: of_rows(wd.item_rows(n)), to_sql_setup),
]
