"""The ferrodbc ADBC driver as a profiler contestant ("adbc-ferrodbc"): the same engine loaded as
`libadbc_driver_ferrodbc.so` through `adbc_driver_manager`'s DB-API, so the `arrow_*`,
`bulk_*_arrow` and `pandas_*` tasks time it beside ferrodbc's own `fetch_arrow_table` /
`bulkcopy_arrow`. Registered in contestants.py (the commands' DRIVERS). It runs the Arrow read
tasks (`arrow_*`) and the Arrow load tasks (`bulk_*_arrow*`); the row tasks measure Python row
APIs this contestant shares with every ADBC driver (adbc_driver_manager's DB-API), not ferrodbc.

The connection string is passed as the ADBC `uri` as is. Reads are `cursor.fetch_arrow_table()` /
`fetch_record_batch()` (the driver's stream of 8,192-row batches, or the task's size through the
`adbc.ferrodbc.statement.batch_rows` option); loads are `adbc_ingest(mode="append")` into the
task's table, which goes through the same bulk path (bcp) as `bulkcopy_arrow`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .drivers import Driver, NotApplicable

BATCH_ROWS = "adbc.ferrodbc.statement.batch_rows"


class AdbcFerrodbc(Driver):
    name = "adbc-ferrodbc"
    module_name = "adbc_driver_ferrodbc.dbapi"
    notes = ("adbc-ferrodbc: libadbc_driver_ferrodbc.so through adbc_driver_manager's DB-API",)

    def require(self, task: str) -> None:
        if not (task.startswith("arrow_") or (task.startswith("bulk_") and "_arrow" in task)):
            raise NotApplicable("the ADBC contestant runs the Arrow read and Arrow load tasks")

    def version(self) -> str:
        import adbc_driver_ferrodbc
        import adbc_driver_manager

        return f"{adbc_driver_ferrodbc.__version__} (adbc-driver-manager {adbc_driver_manager.__version__})"

    def connect(self, conn_str: str, autocommit: bool = False) -> Any:
        return self.mod.connect(conn_str, autocommit=autocommit)

    def arrow_table(self, conn: Any, sql: str) -> Any:
        cur = conn.cursor()
        cur.execute(sql)
        return cur.fetch_arrow_table()

    def arrow_batches(self, conn: Any, sql: str, rows: int) -> Iterator[Any]:
        # A generator, so the cursor lives as long as its stream (a closed cursor closes it).
        with conn.cursor() as cur:
            cur.adbc_statement.set_options(**{BATCH_ROWS: str(rows)})
            cur.execute(sql)
            yield from cur.fetch_record_batch()

    def arrow_stream(self, conn: Any, sql: str) -> Any:
        cur = conn.cursor()
        cur.execute(sql)
        reader = cur.fetch_record_batch()
        # The stream is read after this returns: the cursor stays with it.
        self._open = cur
        return reader

    def bulk_rows(self, conn: Any, table: str, columns: str, rows: list) -> Any:
        raise NotApplicable("ADBC ingests Arrow (adbc_ingest), not tuples")

    def bulk_arrow(self, conn: Any, table: str, reader: Any) -> Any:
        cur = conn.cursor()
        copied = cur.adbc_ingest(table, reader, mode="append")
        conn.commit()
        return copied

    def counters(self) -> dict[str, int] | None:
        # The engine inside the shared library keeps its own counters, out of Python's reach.
        return None
