#!/usr/bin/env bash
# Called by .ci/run: a quick drivers pass (ferrodbc, pyodbc, mssql-python, native floor) against
# the TDS peer. Prints the Markdown report. Exits non-zero only if ferrodbc or the native floor
# errors or returns wrong data; timings never fail CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-.venv/bin/python}
exec "$PY" -m eng.profiler ci "$@"
