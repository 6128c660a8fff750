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

    def add_upper_converter(self, conn: Any) -> str | None:
        """Register a converter that upper-cases NVARCHAR values. Returns a note if it differs."""
        # pyodbc semantics (ferrodbc follows them): the converter receives the raw UTF-16LE bytes.
        conn.add_output_converter(SQL_WVARCHAR, _upper_from_utf16)
        return None

    def prepare_datetimeoffset(self, conn: Any) -> str | None:
        """Make DATETIMEOFFSET readable. Returns a note if that needed a workaround."""
        return None

    def mapping(self, row: Any) -> dict[str, Any]:
        return dict(row._mapping)

    def arrow_table(self, cursor: Any) -> Any:
        """The rest of the result set as a pyarrow Table (`arrow_*` tasks)."""
        raise NotApplicable(f"{self.name} has no Arrow fetch")

    def arrow_stream(self, cursor: Any) -> Any:
        """The rest of the result set as an Arrow stream (`arrow_polars_*`)."""
        return self.arrow_table(cursor)

    #: The SQLAlchemy dialect of this driver (`pandas_*` tasks).
    dialect = ""

    def sqlalchemy_engine(self, conn_str: str) -> Any:
        """An engine of the driver's SQLAlchemy dialect with its defaults, from the ODBC string."""
        import urllib.parse

        from sqlalchemy import create_engine

        return create_engine(f"mssql+{self.dialect}:///?odbc_connect={urllib.parse.quote_plus(conn_str)}")


def _upper_from_utf16(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("utf-16-le").upper()


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

    def arrow_table(self, cursor: Any) -> Any:
        if not hasattr(cursor, "fetch_arrow_table"):
            raise NotApplicable("this revision has no Arrow fetch")
        import pyarrow as pa

        return pa.table(cursor.fetch_arrow_table())

    def arrow_stream(self, cursor: Any) -> Any:
        if not hasattr(cursor, "fetch_record_batch"):
            raise NotApplicable("this revision has no Arrow fetch")
        return cursor.fetch_record_batch()

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
        "(fast_executemany off: to_sql goes through insertmanyvalues batches)",
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

    def arrow_table(self, cursor: Any) -> Any:
        return cursor.arrow()  # its default batch_size (8,192)


def _upper_any(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-16-le")
    return None if value is None else value.upper()


DRIVERS: dict[str, Callable[[], Driver]] = {
    "ferrodbc": Ferrodbc,
    "pyodbc": Pyodbc,
    "mssql-python": MssqlPython,
}
