"""A driver for connection strings that name none (``Server=...;UID=...`` as mssql-python users
write them).

``connect`` hands every connection string through :func:`with_driver`. One that names a
``Driver``, a ``DSN`` or a ``FileDSN`` is returned unchanged; one that names none gets the first
driver found in this order (:data:`SEARCH_ORDER`):

1. ``ODBC Driver 18 for SQL Server``, registered with the driver manager (``ferrodbc.drivers()``)
2. ``ODBC Driver 17 for SQL Server``, registered
3. the Driver 18 library inside the ``mssql-python-odbc`` wheel (``pip install mssql-python``
   brings it), named by its path, so no registration is needed
4. ``FreeTDS``, registered (its spellings of the server's port and of ``Encrypt`` are translated)

When none is found, ``InterfaceError`` lists what was searched and how to install one. The
messages name drivers and paths only: the connection string (and so any secret) never appears.

This lives in the Python surface because ``connect`` builds the final string here (keyword
arguments, Entra ID tokens) before the engine sees it; the engine keeps passing strings through
unchanged.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import platform
import sys
from collections.abc import Callable, Sequence

from ._native import InterfaceError
from .entra import split_connection_string

MSODBC18 = "ODBC Driver 18 for SQL Server"
MSODBC17 = "ODBC Driver 17 for SQL Server"
FREETDS = "FreeTDS"
WHEEL = "mssql-python-odbc wheel"
#: What is searched, in order (the wheel's library is found by path, the others by name).
SEARCH_ORDER: tuple[str, ...] = (MSODBC18, MSODBC17, WHEEL, FREETDS)

_NAMING_KEYS = frozenset({"driver", "dsn", "filedsn"})

INSTALL_HINT = (
    "install one: `pip install mssql-python-odbc` (Microsoft's ODBC Driver 18 as a wheel), "
    "Microsoft's msodbcsql18 package (https://learn.microsoft.com/sql/connect/odbc/linux-mac/"
    "installing-the-microsoft-odbc-driver-for-sql-server), or FreeTDS (`apt-get install tdsodbc` "
    "and register it with odbcinst); or name one with Driver={...}"
)


def names_driver(connection_string: str) -> bool:
    """Whether the string says which driver to load (``Driver``, ``DSN`` or ``FileDSN``)."""
    return any(key in _NAMING_KEYS for key, _ in split_connection_string(connection_string))


def _wheel_library() -> tuple[str | None, str]:
    """(path of libmsodbcsql inside mssql-python-odbc or None, where it was looked for)."""
    try:
        spec = importlib.util.find_spec("mssql_python_odbc")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        return None, "the mssql_python_odbc package (not installed)"
    libs = os.path.join(os.path.dirname(spec.origin), "libs")
    if sys.platform == "win32":
        patterns = [os.path.join(libs, "windows", "*", "msodbcsql18.dll")]
    elif sys.platform == "darwin":
        patterns = [os.path.join(libs, "macos", "*", "lib", "libmsodbcsql.18.dylib")]
    else:
        arch = {"aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(), "x86_64")
        # musl (Alpine) first only where the interpreter is built on it; Debian's build first
        # otherwise (the wheel ships one per distribution family, all the same driver).
        libc = platform.libc_ver()[0]
        families = ("alpine",) if libc not in ("glibc", "") else ("debian_ubuntu", "rhel", "suse")
        patterns = [
            os.path.join(libs, "linux", fam, arch, "lib", "libmsodbcsql-18*.so*") for fam in families
        ]
    for pattern in patterns:
        found = sorted(glob.glob(pattern))
        if found:
            return found[-1], pattern
    return None, patterns[0] if patterns else libs


def pick(registered: Sequence[str] | None = None) -> tuple[str, str]:
    """``(name, Driver= value)`` of the first driver of :data:`SEARCH_ORDER` found.

    ``registered``: the driver manager's driver names (default ``ferrodbc.drivers()``).
    Raises ``InterfaceError`` naming everything searched when none is found."""
    if registered is None:
        from . import drivers

        registered = drivers()
    known = set(registered)
    searched = []
    for name in SEARCH_ORDER:
        if name == WHEEL:
            path, where = _wheel_library()
            if path is not None:
                return name, path
            searched.append(f"the Driver 18 library of the mssql-python-odbc wheel ({where})")
        elif name in known:
            return name, name
        else:
            searched.append(f"{name!r} registered with the ODBC driver manager")
    raise InterfaceError(
        "the connection string names no Driver and no SQL Server ODBC driver was found; "
        f"searched, in order: {'; '.join(searched)} (registered: {sorted(known) or 'none'}). "
        + INSTALL_HINT
    )


def _for_freetds(pairs: list[tuple[str, str]]) -> list[str]:
    """FreeTDS's spellings: ``Server=tcp:host,port`` -> ``Server=host;Port=port``; ``Encrypt``
    -> ``Encryption`` (FreeTDS ignores Driver 18's keyword and would not encrypt)."""
    out = []
    for key, raw in pairs:
        value = raw.split("=", 1)[1].strip() if "=" in raw else ""
        if key in ("server", "address", "addr", "data source") and not value.startswith("{"):
            host = value[4:] if value.lower().startswith("tcp:") else value
            if "," in host:
                host, port = host.split(",", 1)
                out += [f"Server={host.strip()}", f"Port={port.strip()}"]
            else:
                out.append(f"Server={host}")
        elif key == "encrypt":
            mode = {"yes": "require", "true": "require", "mandatory": "require", "strict": "strict"}
            out.append(f"Encryption={mode.get(value.lower(), 'request')}")
        elif key == "trustservercertificate":
            continue  # FreeTDS does not check the certificate without a CA file anyway
        else:
            out.append(raw)
    return out


def with_driver(
    connection_string: str, registered: Callable[[], Sequence[str]] | None = None
) -> str:
    """The connection string, with the picked ``Driver`` first when it names none."""
    if names_driver(connection_string):
        return connection_string
    name, driver = pick(registered() if registered is not None else None)
    pairs = split_connection_string(connection_string)
    rest = _for_freetds(pairs) if name == FREETDS else [raw for _, raw in pairs]
    return ";".join([f"Driver={{{driver.replace('}', '}}')}}}", *rest])


__all__ = ["SEARCH_ORDER", "names_driver", "pick", "with_driver"]
