"""mssql-python's ``Row``: ferrodbc's (index, column-name attribute, ``cursor_description``,
equality with tuples), built by the engine."""

from .._native import Row

__all__ = ["Row"]
