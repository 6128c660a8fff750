"""``ferrodbc.install_as_pyodbc()``: afterwards ``import pyodbc`` anywhere in the process gives
ferrodbc (as PyMySQL's ``install_as_MySQLdb``), so libraries that import pyodbc by name
(SQLAlchemy's ``mssql+pyodbc``, mssql-django, Airflow's and dbt's SQL Server adapters) run on
ferrodbc's engine unchanged.

``sys.modules["pyodbc"]`` becomes a module object named ``pyodbc`` whose attributes are
ferrodbc's: reading one reads ferrodbc's, and setting one (``pyodbc.pooling = False``,
``pyodbc.lowercase = True``, ``pyodbc.native_uuid``) sets ferrodbc's, so the settings act on the
connections and cursors either name opens. The call sets ``native_uuid`` to pyodbc's default,
False (uniqueidentifier as ``str``; ferrodbc's own default is ``uuid.UUID``), since libraries
written for pyodbc parse the string. Only ``version`` differs: libraries compare it with
pyodbc's releases (mssql-django refuses anything before 3.0, SQLAlchemy picks workarounds by
it), so it is the pyodbc release whose API ferrodbc follows with ferrodbc's own version as a
PEP 440 local label (``5.5.0+ferrodbc.0.1.0``); ``ferrodbc.version`` keeps ferrodbc's.

Modules that imported the real pyodbc before the call keep it (their reference is theirs);
call it first, before importing the library.
"""

from __future__ import annotations

import sys
import types
from typing import Any

#: The pyodbc release whose API ``import ferrodbc as pyodbc`` follows (eng/suites/pyodbc_suites.py
#: runs that release's own tests against ferrodbc).
PYODBC_API_VERSION = "5.5.0"


class PyodbcModule(types.ModuleType):
    """``pyodbc`` as ferrodbc: attribute reads and writes go to the ferrodbc module."""

    def __init__(self, target: types.ModuleType) -> None:
        super().__init__("pyodbc", "pyodbc's API over ferrodbc (ferrodbc.install_as_pyodbc())")
        object.__setattr__(self, "_ferrodbc", target)
        object.__setattr__(self, "version", f"{PYODBC_API_VERSION}+ferrodbc.{target.__version__}")

    def __getattr__(self, name: str) -> Any:
        # Only called for names not set on the face itself (everything but version and the
        # module's dunders).
        return getattr(object.__getattribute__(self, "_ferrodbc"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "version" or name.startswith("__"):
            object.__setattr__(self, name, value)
        else:
            setattr(object.__getattribute__(self, "_ferrodbc"), name, value)

    def __delattr__(self, name: str) -> None:
        delattr(object.__getattribute__(self, "_ferrodbc"), name)

    def __dir__(self) -> list[str]:
        return sorted(set(dir(object.__getattribute__(self, "_ferrodbc"))) | {"version"})


def install_as_pyodbc() -> types.ModuleType:
    """Make ``import pyodbc`` give ferrodbc from now on in this process; returns the module
    installed (calling it again returns the same one)."""
    current = sys.modules.get("pyodbc")
    if isinstance(current, PyodbcModule):
        return current
    target = sys.modules[__package__ or "ferrodbc"]
    face = PyodbcModule(target)
    # pyodbc's default: uniqueidentifier as str (ferrodbc's own default is uuid.UUID). Libraries
    # written for pyodbc parse the str (SQLAlchemy's mssql+pyodbc dialect does).
    target.native_uuid = False
    sys.modules["pyodbc"] = face
    return face


__all__ = ["PYODBC_API_VERSION", "PyodbcModule", "install_as_pyodbc"]
