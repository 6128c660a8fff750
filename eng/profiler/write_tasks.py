"""The other ways users reach ``executemany`` (issue 36 item 4: "executemany of tuples, of Rows
and through SQLAlchemy's ORM bulk insert no slower than before"), registered by workloads.py.
Same contract (task.py); each records client and peer CPU (``Task.cpu``).

- ``executemany_rows``: rows a cursor of the same driver fetched (``ferrodbc.Row``,
  ``pyodbc.Row``, mssql-python's ``Row``: not tuples) fed straight back to ``executemany`` INSERT
  + commit, the copy-a-query's-result idiom. Set-up loads the item rows into a source table and
  fetches them (untimed). Driver defaults, as the ``executemany`` task (pyodbc: fast_executemany
  off). With ``--insert-discard`` the check is the empty table, as for ``bulk_*_executemany``.
- ``orm_bulk_insert``: SQLAlchemy 2's ORM bulk INSERT, ``session.execute(insert(Item), dicts)``
  + ``session.commit()``, through each driver's dialect with its defaults: mssql+ferrodbc sends
  one ``executemany`` (its dialect sets ``use_insertmanyvalues_wo_returning = False``);
  mssql+pyodbc (fast_executemany off) and mssql+mssqlpython send insertmanyvalues batches
  (multi-row VALUES of up to 2,099 parameters).
- ``orm_add_all``: the unit of work: ``session.add_all(objects)`` + ``session.commit()`` of
  mapped objects built at set-up (primary keys given, no server defaults, so the flush batches
  every INSERT into one ``executemany`` / insertmanyvalues as above; no RETURNING).

The ORM tasks map a fresh declarative class onto the worker's own table at set-up; the engine's
pool holds its first connection (dialect initialisation) before the timing. Checks read the
table back through the task's DB-API connection.
"""

from __future__ import annotations

from typing import Any

from . import workdata as wd
from .bulk_tasks import insert_check, insert_expect
from .digest import Digest, of_rows
from .task import Ctx, Size, Task

INSERT_SQL = "INSERT INTO {t} (id, name, val) VALUES (?, ?, ?)"


def items_check(ctx: Ctx, _: Any) -> Digest:
    return of_rows(ctx.read_back(ctx.table))


def items_expect(n: int) -> Digest:
    return of_rows(wd.item_rows(n))


# ---- executemany of fetched Rows -----------------------------------------------------------


def rows_setup(ctx: Ctx) -> None:
    source = ctx.create_table("isrc", wd.ITEM_DDL, wd.item_rows(ctx.n))
    cur = ctx.conn.cursor()
    cur.execute(f"SELECT id, name, val FROM {source} ORDER BY id")
    rows = cur.fetchall()
    cur.close()
    ctx.items = rows
    ctx.table = ctx.create_table("items", wd.ITEM_DDL)


def rows_body(ctx: Ctx) -> None:
    cur = ctx.conn.cursor()
    cur.executemany(INSERT_SQL.format(t=ctx.table), ctx.items)
    ctx.conn.commit()


# ---- SQLAlchemy ORM ------------------------------------------------------------------------


def _mapped(table: str) -> Any:
    from sqlalchemy import Float, Integer, Unicode
    from sqlalchemy.orm import DeclarativeBase, mapped_column

    class Base(DeclarativeBase):
        pass

    class Item(Base):
        __tablename__ = table
        id = mapped_column(Integer, primary_key=True, autoincrement=False)
        name = mapped_column(Unicode(50))
        val = mapped_column(Float)

    return Item


def orm_setup(ctx: Ctx) -> None:
    ctx.table = ctx.create_table("items", wd.ITEM_DDL)
    ctx.items = wd.item_rows(ctx.n)
    engine = ctx.driver.sqlalchemy_engine(ctx.conn_str)
    with engine.connect() as c:  # dialect initialisation and the pool's first connection
        c.exec_driver_sql("SELECT 1").scalar()
    ctx.extra["engine"] = engine
    ctx.extra["model"] = _mapped(ctx.table)


def bulk_insert_setup(ctx: Ctx) -> None:
    orm_setup(ctx)
    ctx.extra["dicts"] = [{"id": i, "name": name, "val": val} for i, name, val in ctx.items]


def bulk_insert_body(ctx: Ctx) -> None:
    from sqlalchemy import insert
    from sqlalchemy.orm import Session

    with Session(ctx.extra["engine"]) as session:
        session.execute(insert(ctx.extra["model"]), ctx.extra["dicts"])
        session.commit()


def add_all_setup(ctx: Ctx) -> None:
    orm_setup(ctx)
    item = ctx.extra["model"]
    ctx.extra["objects"] = [item(id=i, name=name, val=val) for i, name, val in ctx.items]


def add_all_body(ctx: Ctx) -> None:
    from sqlalchemy.orm import Session

    with Session(ctx.extra["engine"]) as session:
        session.add_all(ctx.extra["objects"])
        session.commit()


TASKS = [
    Task("executemany_rows", "executemany inserts of fetched Rows (not tuples)", Size(10_000, 1000), rows_body,
         insert_check(items_check), insert_expect(items_expect), rows_setup, cpu=True),
    Task("orm_bulk_insert", "SQLAlchemy ORM bulk insert: session.execute(insert(Model), dicts)",
         Size(10_000, 1000), bulk_insert_body, items_check, items_expect, bulk_insert_setup, cpu=True),
    Task("orm_add_all", "SQLAlchemy ORM unit of work: session.add_all(objects) + commit", Size(10_000, 1000),
         add_all_body, items_check, items_expect, add_all_setup, cpu=True),
]
