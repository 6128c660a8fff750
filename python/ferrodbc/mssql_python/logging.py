"""mssql-python's ``setup_logging(output, log_file_path)`` and its ``logger`` object, over
ferrodbc's ``ferrodbc`` logger: DEBUG records (connects with secrets replaced, failures) go to a
file, stdout or both. Off (CRITICAL) until set up, as in mssql-python."""

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
INFO = _logging.INFO
WARNING = _logging.WARNING
ERROR = _logging.ERROR
CRITICAL = _logging.CRITICAL


class MSSQLLogger:
    """mssql-python's logger interface (level, handlers, output mode, log file) over the
    standard ``ferrodbc`` logger."""

    def __init__(self) -> None:
        self._logger = _logging.getLogger("ferrodbc")
        self._output = FILE
        self._log_file: str | None = None
        self._own: list[_logging.Handler] = []

    # Records
    def debug(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self._logger.debug(msg, *args, **kwargs)

    def info(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self._logger.info(msg, *args, **kwargs)

    def warning(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self._logger.warning(msg, *args, **kwargs)

    def error(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self._logger.error(msg, *args, **kwargs)

    def log(self, level: int, msg: str, *args: Any, **kwargs: Any) -> None:
        self._logger.log(level, msg, *args, **kwargs)

    # Level
    def setLevel(self, level: int) -> None:
        self._logger.setLevel(level)

    def getLevel(self) -> int:
        return self._logger.level

    @property
    def level(self) -> int:
        return self._logger.level

    def isEnabledFor(self, level: int) -> bool:
        return self._logger.isEnabledFor(level)

    @property
    def is_debug_enabled(self) -> bool:
        return self._logger.isEnabledFor(DEBUG)

    # Handlers and output
    def addHandler(self, handler: _logging.Handler) -> None:
        self._logger.addHandler(handler)

    def removeHandler(self, handler: _logging.Handler) -> None:
        self._logger.removeHandler(handler)

    @property
    def handlers(self) -> list[_logging.Handler]:
        return list(self._logger.handlers)

    def reset_handlers(self) -> None:
        for h in self._own:
            self._logger.removeHandler(h)
            h.close()
        self._own.clear()

    @property
    def output(self) -> str:
        return self._output

    @output.setter
    def output(self, mode: str) -> None:
        if mode not in (FILE, STDOUT, BOTH):
            raise ValueError(f"Invalid output mode: {mode}. Must be one of: file, stdout, both")
        self._output = mode

    @property
    def log_file(self) -> str | None:
        return self._log_file

    def _setLevel(self, level: int, output: str | None = None, log_file_path: str | None = None) -> None:
        if output is not None:
            self.output = output
        self.reset_handlers()
        fmt = _logging.Formatter("%(asctime)s, %(threadName)s, %(levelname)s, %(name)s: %(message)s")
        self._log_file = None
        if self._output in (FILE, BOTH):
            if log_file_path:
                ext = os.path.splitext(log_file_path)[1].lower()
                if ext and ext not in (".txt", ".log", ".csv"):
                    raise ValueError(f"Invalid log file extension '{ext}'. Allowed extensions: .txt, .log, .csv")
            self._log_file = log_file_path or os.path.join(
                tempfile.gettempdir(), f"mssql_python_trace_{os.getpid()}.log"
            )
            self._own.append(_logging.FileHandler(self._log_file, encoding="utf-8"))
        if self._output in (STDOUT, BOTH):
            self._own.append(_logging.StreamHandler(sys.stdout))
        for h in self._own:
            h.setFormatter(fmt)
            self._logger.addHandler(h)
        self._logger.setLevel(level)


logger = MSSQLLogger()
driver_logger = logger


def setup_logging(output: str = FILE, log_file_path: str | None = None) -> Any:
    """Send ferrodbc's log records at DEBUG to ``output`` (``"file"``, ``"stdout"`` or
    ``"both"``); the file is ``log_file_path`` or a new one in the temporary directory.
    Returns the file's path (None for stdout only)."""
    if output not in (FILE, STDOUT, BOTH):
        raise ValueError(f"Invalid output mode: {output}. Must be one of: file, stdout, both")
    logger._setLevel(DEBUG, output, log_file_path)
    return logger.log_file


__all__ = ["BOTH", "DEBUG", "FILE", "STDOUT", "MSSQLLogger", "driver_logger", "logger", "setup_logging"]
