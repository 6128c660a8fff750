"""One adapter per Python driver: how to import it, connect, and where its APIs differ.

Everything driver-specific the tasks need lives here, so a task body reads like user code.
A driver that cannot do something raises ``NotApplicable`` with the reason; the report shows
"n/a (reason)", never a time.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib
import re
import struct
from collections.abc import Callable, Iterator
from typing import Any

# ODBC SQL type codes (same numbers in every driver's constants).
SQL_INTEGER = 4
SQL_DOUBLE = 8
SQL_VARCHAR = 12
SQL_WVARCHAR = -9
SQL_SS_TIMESTAMPOFFSET = -155

# setinputsizes for (INT, NVARCHAR(50), FLOAT) parameters, as (sql_type, column_size, digits).
INPUT_SIZES = [(SQL_INTEGER, 0, 0), (SQL_WVARCHAR, 50, 0), (SQL_DOUBLE, 0, 0)]


class NotApplicable(Exception):
    """The driver has no way to do what the task measures."""


class Driver:
    name = ""
    module_name = ""
    #: Printed under the drivers table: how this driver was configured, so ratios can be read.
    notes: tuple[str, ...] = ()

    def __init__(self) -> None:
        self.mod = importlib.import_module(self.module_name)

    def version(self) -> str:
        return str(getattr(self.mod, "__version__", getattr(self.mod, "version", "?")))

    def module_file(self) -> str:
        return str(getattr(self.mod, "__file__", "?"))

    def connect(self, conn_str: str, autocommit: bool = False) -> Any:
        return self.mod.connect(conn_str, autocommit=autocommit)

    def connect_pooled(self, conn_str: str) -> Any:
        """A connection from the driver's own pool (`connect_pooled` task)."""
        raise NotApplicable(f"{self.name} has no connection pool of its own")

    def connect_unpooled(self, conn_str: str) -> Any:
        """A connection that logs in and `close()` logs out (`connect_unpooled` task)."""
        return self.connect(conn_str)

    @contextlib.contextmanager
    def pooling_off(self) -> Iterator[None]:
        """Process-wide pooling switched off for the block (drivers that pool globally)."""
        yield

    def counters(self) -> dict[str, int] | None:
        """Engine path counters (ferrodbc only)."""
        return None

    def require(self, task: str) -> None:
        """Raise NotApplicable when this driver cannot run `task` at all (before connecting)."""

    def add_upper_converter(self, conn: Any) -> str | None:
        """Register a converter that upper-cases NVARCHAR values. Returns a note if it differs."""
        # pyodbc semantics (ferrodbc follows them): the converter receives the raw UTF-16LE bytes.
        conn.add_output_converter(SQL_WVARCHAR, _upper_from_utf16)
        return None

    def prepare_datetimeoffset(self, conn: Any) -> str | None:
        """Make DATETIMEOFFSET readable. Returns a note if that needed a workaround."""
        return None

    def add_upper_varchar_converter(self, conn: Any) -> str | None:
        """A converter on SQL_VARCHAR columns that upper-cases the raw bytes' text (pyodbc
        semantics: the converter receives the driver's bytes of a SQL_C_BINARY read)."""
        if not hasattr(conn, "add_output_converter"):
            raise NotApplicable(f"{self.name} has no output converters")
        conn.add_output_converter(SQL_VARCHAR, _upper_from_narrow)
        return None

    def column_names(self, cursor: Any, table: str) -> list[str]:
        """`cursor.columns(table=...)` (SQLColumns): the names, in the catalog's order."""
        if not hasattr(cursor, "columns"):
            raise NotApplicable(f"{self.name} has no cursor.columns()")
        return [row[3] for row in cursor.columns(table=table).fetchall()]

    def fast_executemany(self, cursor: Any) -> str | None:
        """Turn on pyodbc's `fast_executemany` where the driver has it."""
        cursor.fast_executemany = True
        return None

    def mapping(self, row: Any) -> dict[str, Any]:
        return dict(row._mapping)

    def arrow_table(self, conn: Any, sql: str) -> Any:
        """The result of `sql` as a pyarrow Table (`arrow_*` tasks)."""
        raise NotApplicable(f"{self.name} has no Arrow fetch")

    def arrow_batches(self, conn: Any, sql: str, rows: int) -> Iterator[Any]:
        """The result of `sql` as pyarrow RecordBatches of up to `rows` rows, read as consumed."""
        raise NotApplicable(f"{self.name} has no Arrow fetch")

    def lazy_rows(self, cursor: Any) -> None:
        """Make `cursor` return rows that decode a cell only when read (`*_lazy` tasks)."""
        raise NotApplicable(f"{self.name} has no lazy rows")

    def dict_rows(self, cursor: Any) -> list[dict[str, Any]]:
        """The rest of the result set as `{column: value}` dicts, the driver's fastest way."""
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]

    def arrow_stream(self, conn: Any, sql: str) -> Any:
        """The result of `sql` as an Arrow stream (`arrow_polars_*`)."""
        return self.arrow_table(conn, sql)

    # ---- bulk loads (bulk_tasks.py) ----

    def require_bulk(self, task: str) -> None:
        """Raise NotApplicable when this driver has no way to run the bulk task `task`."""
        if task.endswith("_tuples") and self.name == "arrow-odbc":
            raise NotApplicable("arrow-odbc loads Arrow only")
        if task.endswith("_executemany") and self.name == "arrow-odbc":
            raise NotApplicable("arrow-odbc has no executemany")
        if "_arrow" in task and self.name == "pyodbc":
            raise NotApplicable("pyodbc has no Arrow load")

    def insert_arrays(self, conn: Any, table: str, columns: str, rows: list) -> None:
        """`executemany` of an INSERT over `rows` (pyodbc: with fast_executemany), then commit.
        Returns None: the rows are stored whatever the peer's bulk mode."""
        cur = conn.cursor()
        self.fast_executemany(cur)
        marks = ", ".join("?" * len(columns.split(",")))
        cur.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)
        conn.commit()
        return None

    def bulk_rows(self, conn: Any, table: str, columns: str, rows: list) -> Any:
        """Load tuples the driver's fastest way; returns the rows it says it copied (bulk copy)
        or None (INSERT paths)."""
        cur = conn.cursor()
        if not hasattr(cur, "bulkcopy"):
            raise NotApplicable(f"this {self.name} has no cursor.bulkcopy")
        copied = cur.bulkcopy(table, rows)["rows_copied"]
        conn.commit()
        return copied

    def bulk_arrow(self, conn: Any, table: str, reader: Any) -> Any:
        cur = conn.cursor()
        if not hasattr(cur, "bulkcopy_arrow"):
            raise NotApplicable(f"this {self.name} has no cursor.bulkcopy_arrow")
        copied = cur.bulkcopy_arrow(table, reader)["rows_copied"]
        conn.commit()
        return copied

    #: The SQLAlchemy dialect of this driver (`pandas_*` tasks).
    dialect = ""

    def sqlalchemy_engine(self, conn_str: str) -> Any:
        """An engine of the driver's SQLAlchemy dialect with its defaults, from the ODBC string."""
        import urllib.parse

        from sqlalchemy import create_engine

        return create_engine(f"mssql+{self.dialect}:///?odbc_connect={urllib.parse.quote_plus(conn_str)}")


def _upper_from_utf16(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("utf-16-le").upper()


def _upper_from_narrow(raw: bytes | str | None) -> str | None:
    # The varchar task's rows are ASCII: the same bytes in the server's code page and UTF-8.
    if isinstance(raw, (bytes, bytearray)):
        raw = bytes(raw).decode("cp1252")
    return None if raw is None else raw.upper()


class Ferrodbc(Driver):
    name = "ferrodbc"
    module_name = "ferrodbc"
    dialect = "ferrodbc"

    def sqlalchemy_engine(self, conn_str: str) -> Any:
        try:
            importlib.import_module("ferrodbc.sqlalchemy")
        except ImportError as e:  # compare --base with a revision before the dialect
            raise NotApplicable("this revision has no SQLAlchemy dialect") from e
        return super().sqlalchemy_engine(conn_str)

    def connect_pooled(self, conn_str: str) -> Any:
        if not hasattr(self.mod, "clear_pool"):
            raise NotApplicable("this revision has no connection pool")
        return self.mod.connect(conn_str, pooling=True)

    def connect_unpooled(self, conn_str: str) -> Any:
        if not hasattr(self.mod, "clear_pool"):
            return self.mod.connect(conn_str)  # revisions before pooling: never pooled
        return self.mod.connect(conn_str, pooling=False)

    def arrow_table(self, conn: Any, sql: str) -> Any:
        import pyarrow as pa

        cur = conn.cursor()
        if not hasattr(cur, "fetch_arrow_table"):
            raise NotApplicable("this revision has no Arrow fetch")
        cur.execute(sql)
        # What `pa.table(x)` does with a PyCapsule stream, without its first step: asking whether
        # x is a pandas DataFrame, which imports pandas (and numpy, whose OpenBLAS threads then
        # spin) the first time in a process, inside the timed body. callgrind counted 544 M of
        # the 841 M instructions of ferrodbc's arrow_wide32 in that import; drivers that return
        # a pyarrow Table never pay it.
        return pa.RecordBatchReader.from_stream(cur.fetch_arrow_table()).read_all()

    def arrow_batches(self, conn: Any, sql: str, rows: int) -> Iterator[Any]:
        import pyarrow as pa

        cur = conn.cursor()
        if not hasattr(cur, "fetch_record_batch"):
            raise NotApplicable("this revision has no Arrow fetch")
        cur.execute(sql)
        return iter(pa.RecordBatchReader.from_stream(cur.fetch_record_batch(rows)))

    def lazy_rows(self, cursor: Any) -> None:
        if not hasattr(self.mod, "LazyRow"):
            raise NotApplicable("this revision has no lazy rows")
        cursor.row_factory = self.mod.LazyRow

    def dict_rows(self, cursor: Any) -> list[dict[str, Any]]:
        # Revisions before row_factory had pyodbc's rows_as_dicts.
        if hasattr(type(cursor), "row_factory"):
            cursor.row_factory = dict
        else:
            cursor.rows_as_dicts = True
        return cursor.fetchall()

    def arrow_stream(self, conn: Any, sql: str) -> Any:
        cur = conn.cursor()
        if not hasattr(cur, "fetch_record_batch"):
            raise NotApplicable("this revision has no Arrow fetch")
        cur.execute(sql)
        return cur.fetch_record_batch()

    def counters(self) -> dict[str, int] | None:
        # Old revisions (compare --base) may predate the counters; then there is nothing to show.
        if not hasattr(self.mod, "counters"):
            return None
        return dict(sorted(self.mod.counters().items()))


class Pyodbc(Driver):
    name = "pyodbc"
    module_name = "pyodbc"
    dialect = "pyodbc"
    notes = (
        "pyodbc: defaults (row-by-row SQLGetData, executemany without fast_executemany, "
        "no pooling: unixODBC's is not configured), "
        "native_uuid=True so GUIDs compare as uuid.UUID; mssql+pyodbc with its defaults "
        "(fast_executemany off: to_sql goes through insertmanyvalues batches); "
        "bulk_*_tuples: executemany INSERT with fast_executemany=True (pyodbc has no bulk copy)",
    )

    def __init__(self) -> None:
        super().__init__()
        self.mod.native_uuid = True

    def prepare_datetimeoffset(self, conn: Any) -> str:
        # pyodbc raises "ODBC SQL type -155 is not yet supported"; this converter is the
        # documented workaround users apply (pyodbc wiki, issue #134).
        conn.add_output_converter(SQL_SS_TIMESTAMPOFFSET, _dto_from_struct)
        return "datetimeoffset via the documented output converter"

    def mapping(self, row: Any) -> dict[str, Any]:
        raise NotApplicable("pyodbc.Row has no _mapping")

    def connect_pooled(self, conn_str: str) -> Any:
        raise NotApplicable("pyodbc pools only through unixODBC (Pooling=Yes in odbcinst.ini), not set up here")

    # connect_unpooled: the default connect (unixODBC pooling is not configured here).

    def bulk_rows(self, conn: Any, table: str, columns: str, rows: list) -> Any:
        # No bulk copy in pyodbc: its documented fast path is fast_executemany (parameter arrays).
        return self.insert_arrays(conn, table, columns, rows)


def _dto_from_struct(raw: bytes | None) -> dt.datetime | None:
    if raw is None:
        return None
    y, mo, d, h, mi, s, ns, oh, om = struct.unpack("<6hI2h", raw)
    tz = dt.timezone(dt.timedelta(hours=oh, minutes=om))
    return dt.datetime(y, mo, d, h, mi, s, ns // 1000, tzinfo=tz)


class MssqlPython(Driver):
    name = "mssql-python"
    module_name = "mssql_python"
    dialect = "mssqlpython"

    def sqlalchemy_engine(self, conn_str: str) -> Any:
        from sqlalchemy import create_engine

        # Its own connect (the Driver= keyword removed) under SQLAlchemy's mssql+mssqlpython.
        return create_engine("mssql+mssqlpython://", creator=lambda: self.connect(conn_str))
    notes = (
        "mssql-python: native_uuid=True; its own Driver (the Driver= keyword is removed); "
        "connection pooling on by default (it shows in `connect`; `connect_unpooled` turns it off); "
        "output converters receive decoded str, not raw bytes",
    )

    def connect(self, conn_str: str, autocommit: bool = False) -> Any:
        if "freetds" in conn_str.lower():
            raise NotApplicable("mssql-python always uses its bundled Microsoft driver, not FreeTDS")
        # mssql-python always loads its bundled driver and rejects a Driver= keyword.
        cs = re.sub(r"(?i)(^|;)\s*driver\s*=\s*(\{[^}]*\}|[^;]*)", "", conn_str).strip(";")
        return self.mod.connect(cs, autocommit=autocommit, native_uuid=True)

    def connect_pooled(self, conn_str: str) -> Any:
        return self.connect(conn_str)  # pooling is its default

    @contextlib.contextmanager
    def pooling_off(self) -> Iterator[None]:
        self.mod.pooling(enabled=False)
        try:
            yield
        finally:
            self.mod.pooling()  # back to its default (what later tasks in this process get)

    def add_upper_converter(self, conn: Any) -> str:
        conn.add_output_converter(SQL_WVARCHAR, _upper_any)
        return "converter receives decoded str (no raw-bytes converters)"

    def add_upper_varchar_converter(self, conn: Any) -> str:
        # Seen with 1.16: a VARCHAR column's converter is given UTF-16LE bytes (a wide read).
        conn.add_output_converter(SQL_VARCHAR, _upper_any)
        return "VARCHAR converter receives UTF-16LE bytes (a wide read), not the driver's narrow bytes"

    def fast_executemany(self, cursor: Any) -> str:
        return "no fast_executemany switch: executemany binds parameter arrays by default"

    def arrow_table(self, conn: Any, sql: str) -> Any:
        cur = conn.cursor()
        cur.execute(sql)
        return cur.arrow()  # its default batch_size (8,192)

    def arrow_batches(self, conn: Any, sql: str, rows: int) -> Iterator[Any]:
        cur = conn.cursor()
        cur.execute(sql)
        return iter(cur.arrow_reader(batch_size=rows))


def _upper_any(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-16-le")
    return None if value is None else value.upper()


class ArrowOdbc(Driver):
    """arrow-odbc (odbc-api + arrow-rs behind a Python API, no DB-API): only the Arrow tasks.
    One connection per task, opened before the timed body and reused by it, as an application
    that keeps its connection would."""

    name = "arrow-odbc"
    module_name = "arrow_odbc"
    #: arrow-odbc binds every column, so (MAX) columns need an upper bound for their buffers.
    MAX_TEXT_BYTES = 8192
    notes = (
        "arrow-odbc: reused connection (`arrow_odbc.connect` before the timed body), batch_size=8192, "
        "its default concurrent fetch; (MAX) columns bound with max_text_size/max_binary_size="
        f"{MAX_TEXT_BYTES} (without one it refuses them); only the arrow_* tasks (it has no DB-API) and "
        "the bulk_*_arrow tasks (insert_into_table, chunk_size=8192: INSERT parameter arrays)",
    )

    def version(self) -> str:
        from importlib.metadata import version

        return version("arrow-odbc")

    def require(self, task: str) -> None:
        if not task.startswith(("arrow_", "bulk_")):
            raise NotApplicable("arrow-odbc reads Arrow only")

    def bulk_arrow(self, conn: Any, table: str, reader: Any) -> Any:
        # INSERT parameter arrays of chunk_size rows (autocommit): stored even with --bulk-discard.
        conn.insert_into_table(reader, table, chunk_size=8192)
        return None

    def connect(self, conn_str: str, autocommit: bool = False) -> Any:
        return self.mod.connect(conn_str, autocommit=True)

    def _reader(self, conn: Any, sql: str, rows: int) -> Any:
        return conn.read_arrow_batches(sql, batch_size=rows, max_text_size=self.MAX_TEXT_BYTES,
                                       max_binary_size=self.MAX_TEXT_BYTES)

    def arrow_table(self, conn: Any, sql: str) -> Any:
        import pyarrow as pa

        reader = self._reader(conn, sql, 8192)
        return pa.Table.from_batches(list(reader), reader.schema)

    def arrow_batches(self, conn: Any, sql: str, rows: int) -> Iterator[Any]:
        return iter(self._reader(conn, sql, rows))


DRIVERS: dict[str, Callable[[], Driver]] = {
    "ferrodbc": Ferrodbc,
    "pyodbc": Pyodbc,
    "mssql-python": MssqlPython,
    "arrow-odbc": ArrowOdbc,
}
