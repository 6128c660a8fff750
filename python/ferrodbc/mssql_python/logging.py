"""mssql-python's ``setup_logging(output, log_file_path)`` and its ``logger`` object, with its
log format: the ``mssql_python`` logger (not propagated; off, CRITICAL, until set up, so until
then nothing is written, warnings and errors included: mssql-python's stderr handler for WARNING
and above sits behind the same level), CSV rows ``Timestamp, ThreadID, Level, Location, Source,
Message`` under a ``#`` metadata line, files in ``./mssql_python_logs/`` unless a path is given.

The face's records carry the source ``Python``; those about the engine and driver (what
mssql-python's C++ layer logs) ``DDBC``. Every record is written by the face's own code, once
per call (connect, execute, fetchall, commit, ...), never per row, and only with values that
carry no secret: connection strings go through ``sanitize_connection_string`` first, statements
are logged by length and parameter count, and errors by class and codes, never their message
(which can quote data)."""

from __future__ import annotations

import atexit
import datetime
import logging as _logging
import os
import platform
import sys
import threading
from logging.handlers import RotatingFileHandler
from typing import Any

FILE = "file"
STDOUT = "stdout"
BOTH = "both"
DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARNING = _logging.WARNING
ERROR = _logging.ERROR
CRITICAL = _logging.CRITICAL

ALLOWED_LOG_EXTENSIONS = {".txt", ".log", ".csv"}
_OUTPUTS = (FILE, STDOUT, BOTH)


def _bad_output(mode: object) -> ValueError:
    return ValueError(f"Invalid output mode: {mode}. Must be one of: {FILE}, {STDOUT}, {BOTH}")


class ThreadIDFilter(_logging.Filter):
    """Adds the OS thread id (``thread_id``) to every record, as mssql-python does."""

    def filter(self, record: _logging.LogRecord) -> bool:
        record.thread_id = threading.get_native_id()
        return True


class CSVFormatter(_logging.Formatter):
    """mssql-python's row: the source is the message's ``[Source]`` prefix."""

    def format(self, record: _logging.LogRecord) -> str:
        msg = record.getMessage()
        if record.funcName == "py-core":
            source, message = "py-core", msg
        elif msg.startswith("[") and "]" in msg:
            end = msg.index("]")
            source, message = msg[1:end], msg[end + 2:].strip()
        else:
            source, message = "Unknown", msg
        stamp = f"{self.formatTime(record, '%Y-%m-%d %H:%M:%S')}.{int(record.msecs):03d}"
        thread_id = getattr(record, "thread_id", 0)
        return (f"{stamp}, {thread_id}, {record.levelname}, {record.filename}:{record.lineno}, "
                f"{source}, {message}")


class MSSQLLogger:
    """mssql-python's logger (one per process): level, output mode, log file, handlers."""

    _instance: MSSQLLogger | None = None
    _lock = threading.Lock()

    def __new__(cls) -> MSSQLLogger:  # noqa: PYI034 - one instance, not a Self
        with cls._lock:
            if cls._instance is None:
                cls._instance = super().__new__(cls)
        return cls._instance

    def __init__(self) -> None:
        if getattr(self, "_initialized", False):
            return
        self._initialized = True
        self._logger = _logging.getLogger("mssql_python")
        self._logger.setLevel(CRITICAL)
        self._logger.propagate = False
        self._logger.addFilter(ThreadIDFilter())
        self._output_mode = FILE
        self._file_handler: _logging.Handler | None = None
        self._stdout_handler: _logging.Handler | None = None
        self._log_file: str | None = None
        self._custom_log_path: str | None = None
        self._handlers_initialized = False
        self._handler_lock = threading.RLock()
        self._cleanup_registered = False
        self._cached_level = WARNING
        self._is_debug_enabled = False
        self._debug_hooks: list[Any] = []
        # mssql-python's stderr handler for warnings and errors. As in mssql-python, the logger's
        # own CRITICAL level (until set up) stops them before they reach it.
        default = _logging.StreamHandler(sys.stderr)
        default.setLevel(WARNING)
        default.setFormatter(_logging.Formatter("[%(name)s] %(levelname)s: %(message)s"))
        self._logger.addHandler(default)
        self._default_handler = default

    # Records: "[Python] " is added, bad format arguments never raise into the program.
    def _log(self, level: int, msg: Any, add_prefix: bool = True, *args: Any, **kwargs: Any) -> None:
        try:
            if level < self._cached_level and level < WARNING:
                return
            if add_prefix:
                msg = f"[Python] {msg}"
            if args:
                msg = msg % args
            self._logger.log(level, msg, stacklevel=3, **kwargs)
        except Exception:  # noqa: BLE001 - logging never raises into the program (mssql-python)
            try:
                sys.stderr.write(f"[MSSQL-Python Logging Failed - {_logging.getLevelName(level)}] "
                                 "Unable to format message\n")
            except Exception:  # noqa: BLE001 - stderr itself may be gone
                pass

    def debug(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        self._log(DEBUG, msg, True, *args, **kwargs)

    def info(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        self._log(INFO, msg, True, *args, **kwargs)

    def warning(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        self._log(WARNING, msg, True, *args, **kwargs)

    def error(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        self._log(ERROR, msg, True, *args, **kwargs)

    def log(self, level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
        self._log(level, msg, True, *args, **kwargs)

    def ddbc(self, level: int, msg: str, *args: Any) -> None:
        """A record about the engine or driver (mssql-python's ``[DDBC]`` source)."""
        self._log(level, f"[DDBC] {msg}", False, *args)

    def py_core_log(self, level: int, msg: str, filename: str = "cursor.rs", lineno: int = 0) -> None:
        """A record with a source location of its own (mssql-python's ``py-core`` source)."""
        try:
            if level < self._cached_level and level < WARNING:
                return
            self._logger.handle(_logging.LogRecord(self._logger.name, level, filename, lineno, msg,
                                                   (), None, func="py-core"))
        except Exception:  # noqa: BLE001 - logging never raises into the program
            pass

    # Level
    def _setLevel(self, level: int, output: str | None = None, log_file_path: str | None = None) -> None:
        if output is not None:
            if output not in _OUTPUTS:
                raise _bad_output(output)
            self._output_mode = output
        if log_file_path is not None:
            self._custom_log_path = self._validate_log_file_path(log_file_path)
        if not self._handlers_initialized or output is not None or log_file_path is not None:
            self._setup_handlers()
            self._handlers_initialized = True
            if not self._cleanup_registered:
                atexit.register(self._cleanup_handlers)
                self._cleanup_registered = True
        self.setLevel(level)

    def setLevel(self, level: int) -> None:
        self._logger.setLevel(level)
        self._cached_level = level
        self._is_debug_enabled = level <= DEBUG
        for hook in self._debug_hooks:
            hook(self._is_debug_enabled)

    def on_debug_change(self, hook: Any) -> None:
        """``hook(on)`` each time the level is set: the face's per-call records that cost a
        Python layer (fetchall's) exist only while DEBUG is on."""
        self._debug_hooks.append(hook)

    def getLevel(self) -> int:
        return self._logger.level

    @property
    def level(self) -> int:
        return self._logger.level

    def isEnabledFor(self, level: int) -> bool:
        return self._logger.isEnabledFor(level)

    @property
    def is_debug_enabled(self) -> bool:
        return self._is_debug_enabled

    # Handlers and output
    @staticmethod
    def _validate_log_file_path(file_path: str) -> str:
        """The path resolved; a relative one must stay under the working directory, and the
        extension be .txt, .log or .csv (mssql-python's rules and words)."""
        resolved = os.path.realpath(os.path.abspath(file_path))
        if not os.path.isabs(file_path):
            base = os.path.realpath(os.path.abspath(os.getcwd()))
            try:
                inside = os.path.commonpath([base, resolved]) == base
            except ValueError:
                inside = False
            if not inside:
                raise ValueError("log_file_path resolves outside the current working directory. "
                                 "Path traversal is not permitted for relative paths.")
        ext = os.path.splitext(resolved)[1]
        if ext.lower() not in ALLOWED_LOG_EXTENSIONS:
            allowed = ", ".join(sorted(ALLOWED_LOG_EXTENSIONS))
            raise ValueError(f"Invalid log file extension '{ext}'. Allowed extensions: {allowed}")
        return resolved

    def _close_handlers(self) -> None:
        for h in self._logger.handlers[:]:
            try:
                h.flush()
            except Exception:  # noqa: BLE001 - a handler's stream may be gone: close it anyway
                pass
            h.close()
            self._logger.removeHandler(h)

    def _setup_handlers(self) -> None:
        with self._handler_lock:
            self._close_handlers()
            self._file_handler = self._stdout_handler = None
            fmt = CSVFormatter()
            if self._output_mode in (FILE, BOTH):
                if self._custom_log_path:
                    self._log_file = self._custom_log_path
                    folder = os.path.dirname(self._log_file)
                else:
                    folder = os.path.join(os.getcwd(), "mssql_python_logs")
                    stamp = datetime.datetime.now().strftime("%Y%m%d%H%M%S")
                    self._log_file = os.path.join(folder, f"mssql_python_trace_{stamp}_{os.getpid()}.log")
                if folder:
                    os.makedirs(folder, exist_ok=True)
                self._file_handler = RotatingFileHandler(self._log_file, maxBytes=512 * 1024 * 1024,
                                                         backupCount=5, encoding="utf-8")
                self._file_handler.setFormatter(fmt)
                self._logger.addHandler(self._file_handler)
                self._write_log_header()
            else:
                self._log_file = None
            if self._output_mode in (STDOUT, BOTH):
                self._stdout_handler = _logging.StreamHandler(sys.stdout)
                self._stdout_handler.setFormatter(fmt)
                self._logger.addHandler(self._stdout_handler)

    def _write_log_header(self) -> None:
        if not self._log_file:
            return
        from . import __version__

        try:
            script = os.path.basename(sys.argv[0]) if sys.argv else "<interactive>"
            start = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
            with open(self._log_file, "a", encoding="utf-8") as f:
                f.write(f"# MSSQL-Python Driver Log | Script: {script} | PID: {os.getpid()} | "
                        f"Log Level: DEBUG | Python: {platform.python_version()} | "
                        f"Driver: {__version__} | Start: {start} | OS: {platform.platform()}\n")
                f.write("Timestamp, ThreadID, Level, Location, Source, Message\n")
        except OSError as e:
            sys.stderr.write(f"[MSSQL-Python] Warning: Failed to write log header to "
                             f"{self._log_file}: {type(e).__name__}\n")

    def _cleanup_handlers(self) -> None:
        with self._handler_lock:
            self._close_handlers()

    def _reconfigure_handlers(self) -> None:
        self._setup_handlers()

    def addHandler(self, handler: _logging.Handler) -> None:
        with self._handler_lock:
            self._logger.addHandler(handler)

    def removeHandler(self, handler: _logging.Handler) -> None:
        with self._handler_lock:
            self._logger.removeHandler(handler)

    @property
    def handlers(self) -> list[_logging.Handler]:
        with self._handler_lock:
            return self._logger.handlers[:]

    def reset_handlers(self) -> None:
        self._setup_handlers()

    @property
    def output(self) -> str:
        return self._output_mode

    @output.setter
    def output(self, mode: str) -> None:
        if mode not in _OUTPUTS:
            raise _bad_output(mode)
        self._output_mode = mode
        if self._handlers_initialized:
            self._reconfigure_handlers()

    @property
    def log_file(self) -> str | None:
        return self._log_file


logger = MSSQLLogger()
#: The standard logger under the face's records (mssql-python's ``driver_logger``).
driver_logger = logger._logger


def setup_logging(output: str = FILE, log_file_path: str | None = None) -> MSSQLLogger:
    """Log everything at DEBUG to ``output`` (``"file"``, ``"stdout"`` or ``"both"``); the file
    is ``log_file_path`` (.txt, .log or .csv) or a new one in ``./mssql_python_logs/``.
    Returns the logger."""
    logger._setLevel(DEBUG, output, log_file_path)
    return logger


__all__ = ["BOTH", "DEBUG", "FILE", "STDOUT", "MSSQLLogger", "driver_logger", "logger", "setup_logging"]
