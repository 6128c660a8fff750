"""``mssql_python.connection_string_parser.sanitize_connection_string`` (mssql-python's test
fixtures import it from here). mssql-python's own parser and allow-list are private and not
reproduced: ferrodbc passes the string to the driver (docs/mssql-python.md)."""

from .helpers import sanitize_connection_string

__all__ = ["sanitize_connection_string"]
