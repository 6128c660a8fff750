#!/usr/bin/env bash
# The main job on a fresh machine: set everything up, then run the demo (TDS peer through
# Microsoft ODBC Driver 18; pass --sqlite for the embedded SQLite3 driver).
set -euo pipefail
cd "$(dirname "$0")/.."
bash eng/setup.sh
exec .venv/bin/python eng/demo.py "$@"
