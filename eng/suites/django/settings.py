"""Settings of the Django project eng/suites/django_suite.py runs against the TDS peer through
mssql-django. Everything that differs between runs comes from the environment:

- DJANGO_PEER_PORT: the peer's port (Driver 18 talks to 127.0.0.1,<port>)
- DJANGO_PYTHON_DRIVER: "" for mssql-django's default pyodbc path, "mssql_python" for its
  mssql-python path (the OPTIONS key mssql-django 2.0 reads)
- FERRODBC_INSTALL_AS: "pyodbc" or "mssql_python": flow.py installs ferrodbc under that name
  before Django imports the driver
"""

import os

SECRET_KEY = "not-secret: a throwaway test project"
DEBUG = False
USE_TZ = False
TIME_ZONE = "UTC"
# Only the project's app: contrib.auth's and contenttypes' migrations alter columns (ALTER TABLE ...
# ALTER COLUMN), which the peer does not do (eng/tds-peer/README.md, "What it does not emulate").
INSTALLED_APPS = ["shop"]
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"

_options = {
    "driver": "ODBC Driver 18 for SQL Server",
    "extra_params": "Encrypt=no;TrustServerCertificate=yes",
}
if os.environ.get("DJANGO_PYTHON_DRIVER"):
    _options["python_driver"] = os.environ["DJANGO_PYTHON_DRIVER"]

DATABASES = {
    "default": {
        "ENGINE": "mssql",
        "NAME": "master",
        "USER": "sa",
        "PASSWORD": "x",
        "HOST": "127.0.0.1",
        "PORT": os.environ.get("DJANGO_PEER_PORT", "1433"),
        "OPTIONS": _options,
    }
}
