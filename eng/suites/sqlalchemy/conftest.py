"""SQLAlchemy's testing plugin, loaded the way third-party dialects load it.

eng/suites/sqlalchemy_suite.py runs pytest in this folder with `--dburi` at a TDS peer; the
requirements class is SQLAlchemy's own (test/requirements.py of the hash-checked sdist, put on
sys.path by the script), so which tests run is SQLAlchemy's statement of what SQL Server does.
"""

import os

import pytest
from sqlalchemy.dialects import registry

if os.environ.get("FERRODBC_INSTALL_AS_PYODBC") == "1":
    # The --as-pyodbc run: SQLAlchemy's mssql+pyodbc dialect imports pyodbc when it first
    # connects, and gets ferrodbc.
    import ferrodbc

    ferrodbc.install_as_pyodbc()
    import pyodbc

    assert pyodbc.Connection is ferrodbc.Connection

# Also registered by the package's entry point; explicit here so the suite does not depend on
# the installed metadata being current.
registry.register("mssql.ferrodbc", "ferrodbc.sqlalchemy", "MSDialect_ferrodbc")
registry.register("mssql.ferrodbc_async", "ferrodbc.sqlalchemy", "MSDialectAsync_ferrodbc")

pytest.register_assert_rewrite("sqlalchemy.testing.assertions")

from sqlalchemy.testing.plugin.pytestplugin import *  # noqa: E402,F403
