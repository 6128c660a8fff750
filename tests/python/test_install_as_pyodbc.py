"""``ferrodbc.install_as_pyodbc()``: ``import pyodbc`` gives ferrodbc afterwards (ferrodbc.pyodbc_face).
Each test runs the import in a fresh interpreter, so the real pyodbc (if installed) is never
mixed with the face in this process."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str, connstr: str) -> str:
    prog = textwrap.dedent(code)
    out = subprocess.run([sys.executable, "-c", prog, connstr], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_pyodbc_gives_ferrodbc(sqlite):
    out = _run(
        """
        import sys, ferrodbc
        face = ferrodbc.install_as_pyodbc()
        assert ferrodbc.install_as_pyodbc() is face
        import pyodbc
        assert pyodbc is face and pyodbc.__name__ == "pyodbc"
        cn = pyodbc.connect(sys.argv[1], autocommit=True)
        assert type(cn) is ferrodbc.Connection
        assert cn.execute("SELECT 41 + 1").fetchval() == 42
        assert pyodbc.Row is ferrodbc.Row and pyodbc.Error is ferrodbc.Error
        try:
            cn.execute("SELECT * FROM no_such_table_here")
        except pyodbc.DatabaseError as e:  # SQLite says HY000
            assert isinstance(e, ferrodbc.Error)
        else:
            raise AssertionError("no error")
        print(pyodbc.version, ferrodbc.version)
        """,
        sqlite.connstr,
    )
    face_version, own = out.split()
    # pyodbc's release first (libraries compare it with pyodbc's), ferrodbc's as the local label.
    assert face_version == f"5.5.0+ferrodbc.{own}"


def test_settings_on_the_face_are_ferrodbcs(sqlite):
    _run(
        """
        import sys, ferrodbc
        ferrodbc.install_as_pyodbc()
        import pyodbc
        assert ferrodbc.native_uuid is False  # pyodbc's default, set by install_as_pyodbc()
        pyodbc.pooling = False
        assert ferrodbc.pooling is False
        pyodbc.lowercase = True
        cn = pyodbc.connect(sys.argv[1], autocommit=True)
        cur = cn.execute("SELECT 1 AS MixedCase")
        assert cur.description[0][0] == "mixedcase", cur.description
        assert "connect" in dir(pyodbc) and "version" in dir(pyodbc)
        from pyodbc import connect, SQL_WVARCHAR, drivers
        assert connect is ferrodbc.connect and SQL_WVARCHAR == ferrodbc.SQL_WVARCHAR
        """,
        sqlite.connstr,
    )


def test_libraries_version_checks_accept_it(sqlite):
    """mssql-django compares with Django's get_version_tuple, SQLAlchemy with its own regex."""
    _run(
        """
        import re, ferrodbc
        ferrodbc.install_as_pyodbc()
        import pyodbc
        m = re.match(r"(?:py.*-)?([\\d\\.]+)(?:-(\\w+))?", pyodbc.version)
        assert tuple(int(x) for x in m.group(1).split(".")) == (5, 5, 0)
        """,
        sqlite.connstr,
    )
