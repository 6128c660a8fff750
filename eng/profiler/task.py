"""The task contract: sizes, the per-task context, and the four functions a task is made of.

  setup(ctx)          untimed: tables, converters
  body(ctx) -> result TIMED: the user's code, nothing else
  check(ctx, result)  untimed: the Digest (row count + checksum) of what the driver returned
  expect(n)           the Digest it must equal, from eng/peers/synthetic.py or workdata.py
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import workdata as wd
from .digest import Digest
from .drivers import Driver


@dataclass(frozen=True)
class Size:
    full: int
    quick: int

    def pick(self, quick: bool) -> int:
        return self.quick if quick else self.full


@dataclass
class Ctx:
    driver: Driver
    conn_str: str
    n: int
    conn: Any = None
    tables: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Filled by setups, read by bodies and checks:
    table: str = ""  # the write tasks' target table
    items: list[tuple] = field(default_factory=list)  # rows to insert / parameters to send
    shop: dict[str, str] = field(default_factory=dict)  # join tables: {"c": ..., "p": ..., "o": ...}
    #: Figures a task measures besides its time (e.g. peak RSS): copied into the worker's result.
    metrics: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # dataframe tasks: engine, frame
    task_name: str = ""
    #: Run by the worker's teardown, after the connection's tables are dropped (best effort).
    cleanups: list[Callable[[], None]] = field(default_factory=list)

    def connect(self, autocommit: bool = False) -> Any:
        return self.driver.connect(self.conn_str, autocommit=autocommit)

    def connect_pooled(self) -> Any:
        return self.driver.connect_pooled(self.conn_str)

    def create_table(self, prefix: str, ddl: str, rows: list[tuple] | None = None) -> str:
        """Create (and fill with literal VALUES) a table this worker owns; dropped afterwards."""
        name = wd.table_name(prefix)
        cur = self.conn.cursor()
        cur.execute(f"CREATE TABLE {name} {ddl}")
        self.tables.append(name)
        for values in wd.values_batches(rows or []):
            cur.execute(f"INSERT INTO {name} VALUES {values}")
        self.conn.commit()
        cur.close()
        return name

    def read_back(self, table: str, columns: str = "id, name, val") -> list:
        cur = self.conn.cursor()
        cur.execute(f"SELECT {columns} FROM {table} ORDER BY id")
        rows = cur.fetchall()
        cur.close()
        return rows


@dataclass(frozen=True)
class Task:
    name: str
    title: str
    size: Size
    body: Callable[[Ctx], Any]
    check: Callable[[Ctx, Any], Digest]
    expect: Callable[[int], Digest]
    setup: Callable[[Ctx], None] = lambda ctx: None
    #: For fetch tasks: the query the native floor drains for comparison...
    floor_query: Callable[[int], str] | None = None
    #: ... and the synthetic shape and rows per fetch call of the floor's object half.
    floor_shape: str | None = None
    floor_chunk: int = 0
    #: False for tasks that time connecting itself: the worker then opens no connection for them.
    needs_connection: bool = True
    #: Also record rows/s, the client's and the TDS peer's CPU time over the body (bulk tasks).
    cpu: bool = False
