"""A connection string without ``Driver=`` reaches the peer through each driver of the search
order (ferrodbc.driver_pick): a registered Driver 18, the library inside the mssql-python-odbc
wheel (by path, unregistered), and FreeTDS (with its spellings of the port and of Encrypt)."""

from __future__ import annotations

import pytest

import ferrodbc
from ferrodbc import driver_pick

from sqlserver_support import missing, require_driver


def _driverless(peer) -> str:
    # As mssql-python users write it: no driver, the port after a comma, Driver 18's Encrypt.
    return f"Server=tcp:127.0.0.1,{peer.port};UID=sa;PWD=x;Encrypt=no;TrustServerCertificate=yes"


def _query(cs: str) -> tuple[str, int]:
    with ferrodbc.connect(cs, autocommit=True, timeout=10) as cn:
        return cn.driver_name, cn.execute("SELECT 40 + 2").fetchval()


def test_a_registered_driver_18_is_picked_first(peer):
    require_driver("msodbcsql")
    name, value = _query(_driverless(peer))
    assert value == 42
    assert "msodbcsql" in name.lower()


def test_the_wheel_library_when_no_microsoft_driver_is_registered(peer, monkeypatch):
    path, _ = driver_pick._wheel_library()
    if path is None:
        missing("mssql-python-odbc is not installed in the venv")
    monkeypatch.setattr(ferrodbc, "drivers", lambda: ["FreeTDS", "SQLite3"])
    assert driver_pick.pick()[1] == path
    name, value = _query(_driverless(peer))
    assert value == 42
    assert "msodbcsql" in name.lower()


def test_freetds_when_no_microsoft_driver_is_found(peer, monkeypatch):
    require_driver("freetds")
    monkeypatch.setattr(ferrodbc, "drivers", lambda: ["FreeTDS"])
    monkeypatch.setattr(driver_pick, "_wheel_library", lambda: (None, "(hidden by the test)"))
    name, value = _query(_driverless(peer))
    assert value == 42
    assert "tdsodbc" in name.lower()


def test_no_driver_at_all_is_an_interface_error(monkeypatch):
    monkeypatch.setattr(ferrodbc, "drivers", lambda: [])
    monkeypatch.setattr(driver_pick, "_wheel_library", lambda: (None, "(hidden by the test)"))
    with pytest.raises(ferrodbc.InterfaceError, match="searched, in order") as info:
        ferrodbc.connect("Server=127.0.0.1,1;UID=sa;PWD=hunter2-secret")
    assert "hunter2-secret" not in str(info.value)
