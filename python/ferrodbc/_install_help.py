"""What to install when ferrodbc's extension cannot load its ODBC driver manager.

ferrodbc's wheels link the system's unixODBC (``libodbc.so.2`` on Linux, ``libodbc.2.dylib`` on
macOS) and bundle none: the driver manager must be the one the system's drivers are registered
with (``odbcinst.ini``). Without it, importing the extension fails with the dynamic loader's bare
message; this turns that into what to install, for the system at hand first (docs/install.md).
"""

from __future__ import annotations

import platform
import re

# (ids in /etc/os-release's ID / ID_LIKE, the command that installs unixODBC's runtime library)
_LINUX = [
    (("debian", "ubuntu"), "sudo apt-get install unixodbc"),
    (("rhel", "fedora", "centos", "rocky", "almalinux", "amzn", "ol"), "sudo dnf install unixODBC"),
    (("suse", "opensuse", "sles"), "sudo zypper install unixODBC"),
    (("arch",), "sudo pacman -S unixodbc"),
    (("alpine",), "apk add unixodbc"),
]
_DRIVERS = (
    "Then a driver for your database, for SQL Server: Microsoft ODBC Driver 18 (package "
    "msodbcsql18 from Microsoft's repository) or FreeTDS (Debian/Ubuntu: tdsodbc; RHEL/Fedora: "
    "freetds; macOS: brew install freetds)."
)


def is_missing_driver_manager(err: ImportError) -> bool:
    """Whether `err` is the loader failing to find unixODBC (not some other import problem)."""
    return re.search(r"libodbc[.\w]*\.(so|dylib)", str(err)) is not None


def _os_release_ids(path: str = "/etc/os-release") -> set[str]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return set()
    ids: set[str] = set()
    for key in ("ID", "ID_LIKE"):
        m = re.search(rf"^{key}=\"?([^\"\n]*)\"?$", text, re.M)
        if m:
            ids.update(m.group(1).lower().split())
    return ids


def advice(err: ImportError, system: str | None = None, ids: set[str] | None = None) -> str:
    """The message an ImportError of a missing driver manager is raised again with."""
    system = system or platform.system()
    lines = [
        f"ferrodbc needs the unixODBC driver manager, which is not installed ({err}).",
        "Install it with your system's package manager, then import ferrodbc again:",
    ]
    if system == "Darwin":
        lines.append("  brew install unixodbc   (Homebrew; ferrodbc uses unixODBC, not iODBC)")
    else:
        ids = _os_release_ids() if ids is None else ids
        ordered = sorted(_LINUX, key=lambda entry: not ids.intersection(entry[0]))
        for names, command in ordered:
            lines.append(f"  {command:<32} ({', '.join(names)})")
    lines.append(_DRIVERS)
    lines.append("More: docs/install.md in ferrodbc's source (the install guide).")
    return "\n".join(lines)
