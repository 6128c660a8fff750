"""Settings for mssql-django's own test app (eng/suites/django_suite.py --testapp DIR): its
testapp/settings.py, with both SQL Server aliases pointed at TDS peers (one peer each, as two
databases of a server would be) and nothing else changed that a test reads.

- DJANGO_PEER_PORT / DJANGO_OTHER_PEER_PORT: the peers of the "default" and "other" aliases
- DJANGO_PYTHON_DRIVER: "mssql_python" for mssql-django's mssql-python path (as settings.py)
- DJANGO_TESTAPP_SYNCDB=1: create the tables from the models (MIGRATION_MODULES = None) instead
  of running testapp's migrations, several of which ALTER COLUMN (the peer has no ALTER COLUMN)
"""

import os

from testapp.settings import *  # noqa: F403
from testapp.settings import DATABASES, INSTALLED_APPS


def _peer(port_env: str) -> dict:
    return {
        "ENGINE": "mssql",
        "NAME": "master",
        "USER": "sa",
        "PASSWORD": "x",
        "HOST": "127.0.0.1",
        "PORT": os.environ[port_env],
        "OPTIONS": {
            "driver": "ODBC Driver 18 for SQL Server",
            "extra_params": "Encrypt=no;TrustServerCertificate=yes",
            "return_rows_bulk_insert": True,
            **({"python_driver": os.environ["DJANGO_PYTHON_DRIVER"]}
               if os.environ.get("DJANGO_PYTHON_DRIVER") else {}),
        },
        # The peer has one database: keepdb (set by the runner) uses it as the test database.
        "TEST": {"NAME": "master"},
    }


DATABASES["default"] = _peer("DJANGO_PEER_PORT")
DATABASES["other"] = _peer("DJANGO_OTHER_PEER_PORT")
# testapp logs every query to files at DEBUG level: costly and not what is tested.
LOGGING = {"version": 1, "disable_existing_loggers": False}
if os.environ.get("DJANGO_TESTAPP_SYNCDB"):
    MIGRATION_MODULES = {app.rsplit(".", 1)[-1]: None for app in INSTALLED_APPS}
