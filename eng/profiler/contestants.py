"""Every profiler contestant: drivers.py's Python drivers, the ADBC driver (adbc_driver.py) and
the mssql_python face (face_driver.py).

The commands and the worker read DRIVERS from here, not from drivers.py, so drivers.py never
imports adbc_driver.py (which imports drivers.py for `Driver`): no import circle.
"""

from __future__ import annotations

from collections.abc import Callable

from .adbc_driver import AdbcFerrodbc
from .drivers import DRIVERS as _PYTHON_DRIVERS
from .drivers import Driver
from .face_driver import MssqlPythonFace

DRIVERS: dict[str, Callable[[], Driver]] = {
    **_PYTHON_DRIVERS,
    "adbc-ferrodbc": AdbcFerrodbc,
    "mssql-python-face": MssqlPythonFace,
}
