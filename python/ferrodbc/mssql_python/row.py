"""mssql-python's ``Row``: the engine's row (index, column-name attribute, ``cursor_description``,
``_mapping``), of a type of its own that also equals the list of its values, as mssql-python's
rows do (``row == [1, "x"]``). The face's connections ask the engine for it once
(``row_factory``); the rows are built as ``ferrodbc.Row``'s are, with nothing added per row."""

from .._native import _ListRow as Row

__all__ = ["Row"]
