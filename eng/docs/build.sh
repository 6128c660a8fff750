#!/usr/bin/env bash
# The documentation, built and checked as CI does (eng/test.sh calls this; it needs the venv and
# builds that eng/setup.sh makes):
#   1. mkdocs build --strict: any warning fails (a link to a missing page or heading, a nav entry
#      without its file, an API reference object that cannot be found);
#   2. eng/docs/check_links.py over the built HTML: internal links and anchors resolve, external
#      ones are well formed (no internet here) and listed;
#   3. tests/docs: every ```python example of README.md and docs/ runs (TDS peer, SQLite3 ODBC).
# Usage: bash eng/docs/build.sh [SITE_DIR]   (default: a temporary directory, removed after)
# `.venv/bin/mkdocs serve` shows the site at http://127.0.0.1:8000 while you write.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
site=${1:-}
if [ -z "$site" ]; then
  site=$(mktemp -d)
  trap 'rm -rf "$site"' EXIT
fi
# Material prints a banner about MkDocs 2.0 on every build; it is not a warning about this site.
export NO_MKDOCS_2_WARNING=1
echo "-- mkdocs build --strict"
"$PY" -m mkdocs build --strict --quiet --site-dir "$site"
echo "-- links"
"$PY" eng/docs/check_links.py "$site"
echo "-- examples"
"$PY" -m pytest -q -p no:cacheprovider tests/docs
