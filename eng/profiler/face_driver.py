"""The `mssql_python` face (``ferrodbc.install_as_mssql_python()``) as a profiler contestant:
mssql-python's API over ferrodbc's engine, through the same ODBC driver as the `ferrodbc`
contestant, so a fetch task's difference between the two is what the face adds (issue 35: none
per row; the face's fetch methods are the engine's own, inherited unchanged).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

from .drivers import Driver, MssqlPython, NotApplicable

#: Prefixes of the tasks that fetch rows (workloads.py): the ones the face is measured on.
FETCH_TASKS = ("fetch", "iterate_", "wide32_fetchall", "arrow_mixed", "arrow_batches_")


class MssqlPythonFace(Driver):
    name = "mssql-python-face"
    module_name = "ferrodbc"
    dialect = "mssqlpython"
    notes = (
        "mssql-python-face: `import mssql_python` after ferrodbc.install_as_mssql_python(); the "
        "connection string as the ferrodbc contestant's (Driver= kept); mssql-python's connect "
        "defaults (pooling on); output converters as mssql-python's (none registered in the tasks)",
    )

    def __init__(self) -> None:
        super().__init__()
        self.engine = self.mod
        self.engine.install_as_mssql_python()
        self.mod = importlib.import_module("mssql_python")

    def require(self, task: str) -> None:
        # The claim is about fetching; other tasks (parameters, bulk, connect) would only
        # lengthen `drivers --quick` in CI.
        if not task.startswith(FETCH_TASKS):
            raise NotApplicable("the face is measured on fetch tasks only")

    def version(self) -> str:
        return str(self.mod.__version__)

    def connect(self, conn_str: str, autocommit: bool = False) -> Any:
        return self.mod.connect(conn_str, autocommit=autocommit, native_uuid=True)

    def connect_pooled(self, conn_str: str) -> Any:
        return self.connect(conn_str)  # pooling is mssql-python's default, and the face's

    pooling_off = MssqlPython.pooling_off
    sqlalchemy_engine = MssqlPython.sqlalchemy_engine
    fast_executemany = MssqlPython.fast_executemany
    def counters(self) -> dict[str, int] | None:
        return dict(sorted(self.engine.counters().items()))

    def lazy_rows(self, cursor: Any) -> None:
        cursor.row_factory = self.engine.LazyRow

    def arrow_table(self, conn: Any, sql: str) -> Any:
        cur = conn.cursor()
        cur.execute(sql)
        return cur.arrow()

    def arrow_batches(self, conn: Any, sql: str, rows: int) -> Iterator[Any]:
        cur = conn.cursor()
        cur.execute(sql)
        return iter(cur.arrow_reader(batch_size=rows))
