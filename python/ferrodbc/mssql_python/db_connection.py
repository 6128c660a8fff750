"""``mssql_python.db_connection``: where mssql-python defines ``connect``."""

from .connection import Connection, connect

__all__ = ["Connection", "connect"]
