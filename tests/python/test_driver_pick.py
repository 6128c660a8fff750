"""Connection strings without ``Driver=`` (ferrodbc.driver_pick): the documented search order,
FreeTDS's spellings, and the error when nothing is found (it names what was searched and never
the connection string's secrets). Connecting for real through each pick is in
tests/sqlserver/test_sqlserver_driverless.py."""

from __future__ import annotations

import pytest

import ferrodbc
from ferrodbc import driver_pick

SECRET = "s3cr3t-Pa55"


@pytest.fixture
def no_wheel(monkeypatch):
    monkeypatch.setattr(driver_pick, "_wheel_library", lambda: (None, "/nowhere/libs"))


@pytest.fixture
def fake_wheel(monkeypatch):
    monkeypatch.setattr(driver_pick, "_wheel_library", lambda: ("/w/libmsodbcsql-18.6.so.2.1", "/w"))


@pytest.mark.parametrize(
    "cs",
    [
        "Driver={SQLite3};Database=x.db",
        "DRIVER=FreeTDS;Server=h",
        "DSN=prod;UID=u",
        "FileDSN=/etc/x.dsn",
        " driver = {ODBC Driver 18 for SQL Server};Server=h",
    ],
)
def test_a_string_that_names_a_driver_or_dsn_is_unchanged(cs):
    assert driver_pick.names_driver(cs)
    assert driver_pick.with_driver(cs, lambda: []) == cs


def test_a_value_mentioning_driver_is_not_a_driver_keyword():
    assert not driver_pick.names_driver("Server=h;APP={Driver=x};PWD={a;Driver=b}")


@pytest.mark.parametrize(
    ("registered", "wheel", "expected"),
    [
        (["FreeTDS", "ODBC Driver 17 for SQL Server", "ODBC Driver 18 for SQL Server"], True,
         "ODBC Driver 18 for SQL Server"),
        (["FreeTDS", "ODBC Driver 17 for SQL Server"], True, "ODBC Driver 17 for SQL Server"),
        (["FreeTDS", "SQLite3"], True, "/w/libmsodbcsql-18.6.so.2.1"),
        (["FreeTDS", "SQLite3"], False, "FreeTDS"),
    ],
)
def test_the_search_order(monkeypatch, registered, wheel, expected):
    found = ("/w/libmsodbcsql-18.6.so.2.1", "/w") if wheel else (None, "/nowhere")
    monkeypatch.setattr(driver_pick, "_wheel_library", lambda: found)
    assert driver_pick.pick(registered)[1] == expected
    out = driver_pick.with_driver("Server=h,1433;UID=u", lambda: registered)
    assert out.startswith("Driver={" + expected + "};")


def test_the_order_is_documented():
    assert driver_pick.SEARCH_ORDER == (
        "ODBC Driver 18 for SQL Server",
        "ODBC Driver 17 for SQL Server",
        "mssql-python-odbc wheel",
        "FreeTDS",
    )


def test_microsoft_drivers_get_the_string_unchanged(fake_wheel):
    cs = f"Server=tcp:h,1433;Database=d;UID=u;PWD={SECRET};Encrypt=no"
    out = driver_pick.with_driver(cs, lambda: ["ODBC Driver 18 for SQL Server"])
    assert out == "Driver={ODBC Driver 18 for SQL Server};" + cs


def test_freetds_gets_its_own_spellings(no_wheel):
    cs = f"Server=tcp:h,1533;Database=d;UID=u;PWD={SECRET};Encrypt=yes;TrustServerCertificate=yes"
    out = driver_pick.with_driver(cs, lambda: ["FreeTDS"])
    assert out == (
        f"Driver={{FreeTDS}};Server=h;Port=1533;Database=d;UID=u;PWD={SECRET};Encryption=require"
    )
    assert "Encryption=request" in driver_pick.with_driver("Server=h;Encrypt=no", lambda: ["FreeTDS"])


def test_nothing_found_lists_the_search_and_how_to_install(no_wheel, monkeypatch):
    monkeypatch.setattr(ferrodbc, "drivers", lambda: ["SQLite3"])
    with pytest.raises(ferrodbc.InterfaceError) as info:
        ferrodbc.connect(f"Server=h;UID=sa;PWD={SECRET}")
    msg = str(info.value)
    for searched in ("ODBC Driver 18 for SQL Server", "ODBC Driver 17 for SQL Server",
                     "mssql-python-odbc", "FreeTDS", "/nowhere/libs", "SQLite3"):
        assert searched in msg
    assert "pip install mssql-python-odbc" in msg
    assert SECRET not in msg and SECRET not in repr(info.value)
    # PEP 249: InterfaceError is an Error.
    assert isinstance(info.value, ferrodbc.Error)


def test_keyword_arguments_count_as_the_string(no_wheel, monkeypatch):
    """connect(server=..., driver=...) names a driver the pyodbc way: nothing is added."""
    monkeypatch.setattr(ferrodbc, "drivers", lambda: [])
    with pytest.raises(ferrodbc.InterfaceError) as info:
        ferrodbc.connect(server="h", pwd=SECRET)
    assert "no SQL Server ODBC driver was found" in str(info.value)
    assert SECRET not in str(info.value)
    with pytest.raises(ferrodbc.Error) as info:
        ferrodbc.connect(driver="No Such Driver Here", server="h", pwd=SECRET)
    assert "no SQL Server ODBC driver was found" not in str(info.value)


def test_the_wheel_library_is_found_when_installed():
    path, where = driver_pick._wheel_library()
    try:
        import mssql_python_odbc  # noqa: F401
    except ImportError:
        assert path is None and "not installed" in where
    else:
        assert path is not None and "libmsodbcsql" in path
