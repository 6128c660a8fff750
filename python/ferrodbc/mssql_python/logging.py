"""mssql-python's ``setup_logging(output, log_file_path)``: ferrodbc's DEBUG records (connects
with secrets replaced, failures) to a file, stdout or both. ``logger`` is the ``ferrodbc``
logger."""

from __future__ import annotations

import logging as _logging
import os
import sys
import tempfile
from typing import Any

FILE = "file"
STDOUT = "stdout"
BOTH = "both"
DEBUG = _logging.DEBUG
logger = _logging.getLogger("ferrodbc")
driver_logger = logger
_handlers: list[_logging.Handler] = []


def setup_logging(output: str = FILE, log_file_path: str | None = None) -> Any:
    """Send ferrodbc's log records at DEBUG to ``output`` (``"file"``, ``"stdout"`` or
    ``"both"``); the file is ``log_file_path`` or a new one in the temporary directory.
    Returns the file's path (None for stdout only)."""
    if output not in (FILE, STDOUT, BOTH):
        raise ValueError(f"Invalid output mode: {output}. Must be one of: file, stdout, both")
    for h in _handlers:
        logger.removeHandler(h)
        h.close()
    _handlers.clear()
    fmt = _logging.Formatter("%(asctime)s, %(threadName)s, %(levelname)s, %(name)s: %(message)s")
    path = None
    if output in (FILE, BOTH):
        path = log_file_path or os.path.join(tempfile.gettempdir(), f"mssql_python_trace_{os.getpid()}.log")
        _handlers.append(_logging.FileHandler(path, encoding="utf-8"))
    if output in (STDOUT, BOTH):
        _handlers.append(_logging.StreamHandler(sys.stdout))
    for h in _handlers:
        h.setFormatter(fmt)
        logger.addHandler(h)
    logger.setLevel(DEBUG)
    return path


__all__ = ["BOTH", "DEBUG", "FILE", "STDOUT", "driver_logger", "logger", "setup_logging"]
