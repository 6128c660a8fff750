#!/usr/bin/env bash
# tests/python on the oldest supported CPython, 3.10 (issue 37: CI runs the Python suites on the
# oldest and the newest supported versions; the newest, 3.14, runs in the sid chroot of
# eng/chroot.sh, and the main .venv is 3.11).
#
#   bash eng/oldest_python.sh --setup   # the interpreter and its venv only (eng/setup.sh calls this)
#   bash eng/oldest_python.sh           # build ferrodbc for it and run tests/python (eng/test.sh)
#
# The interpreter: FERRODBC_PY310 if set, else pyenv's newest 3.10.x (the project's machines carry
# CPython 3.10 to 3.13 under pyenv, as they carry the 3.11 that makes .venv; where pyenv lacks
# 3.10, `pyenv install 3.10` builds it from python.org's source), else a python3.10 on PATH.
# Its venv, target/py3.10/venv, holds pytest, pyarrow and polars at eng/requirements.txt's pins,
# the same tools eng/chroot.py gives each chroot.
# The module: `maturin build --profile dev -i <that python>` (unoptimised: this step checks
# behaviour, not speed; the same target/ as eng/wheel_check.py's dev build, so on a fresh machine
# only pyo3 and the crate are compiled again), then pip-installed into the venv (not editable:
# the tests import the installed package). PostgreSQL comes from FERRODBC_PG_CONNSTR (eng/test.sh's
# peers step); with CI=true a missing one fails. About 3 minutes on the 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYV=3.10
DIR=$ROOT/target/py$PYV
VENV=$DIR/venv
log() { printf '== oldest Python: %s\n' "$*" >&2; }

find_python() {
  if [ -n "${FERRODBC_PY310:-}" ]; then
    echo "$FERRODBC_PY310"
    return
  fi
  local root=${PYENV_ROOT:-$HOME/.pyenv} found
  if command -v pyenv >/dev/null 2>&1; then
    root=$(pyenv root)
  fi
  found=$(ls -d "$root"/versions/"$PYV".[0-9]* 2>/dev/null | sort -V | tail -n1 || true)
  if [ -z "$found" ] && command -v pyenv >/dev/null 2>&1; then
    log "pyenv install $PYV"
    pyenv install -s "$PYV" >&2
    found=$(ls -d "$root"/versions/"$PYV".[0-9]* 2>/dev/null | sort -V | tail -n1 || true)
  fi
  if [ -n "$found" ] && [ -x "$found/bin/python$PYV" ]; then
    echo "$found/bin/python$PYV"
  elif command -v "python$PYV" >/dev/null 2>&1; then
    command -v "python$PYV"
  else
    echo "oldest_python: no CPython $PYV (pyenv or python$PYV on PATH; or set FERRODBC_PY310)" >&2
    exit 1
  fi
}

setup() {
  local py pins stamp
  py=$(find_python)
  # eng/requirements.txt's pins, except where that release dropped 3.10: pyarrow 26 and polars
  # 2.1 need 3.11, so 3.10 gets their last releases for it, pyarrow 25.0.1 and polars 2.0.0.
  pins=$(grep -iE '^(pytest|pyarrow|polars)\b' eng/requirements.txt \
    | sed -e 's/^polars==.*/polars==2.0.0/' -e 's/^pyarrow==.*/pyarrow==25.0.1/' | sort)
  stamp=$( (echo "$py"; "$py" -VV; echo "$pins") | sha256sum | cut -c1-16)
  if [ "$(cat "$VENV/.stamp" 2>/dev/null)" != "$stamp" ]; then
    log "venv $VENV ($("$py" -V)) with $(echo "$pins" | tr '\n' ' ')"
    rm -rf "$VENV"
    "$py" -m venv "$VENV"
    # shellcheck disable=SC2086
    "$VENV/bin/pip" install -q --disable-pip-version-check $pins
    echo "$stamp" > "$VENV/.stamp"
  fi
}

setup
[ "${1:-}" = --setup ] && exit 0

start=$SECONDS
rm -rf "$DIR/wheel"
"$ROOT/.venv/bin/maturin" build -q --profile dev -i "$VENV/bin/python" -o "$DIR/wheel"
"$VENV/bin/pip" install -q --disable-pip-version-check --no-index --force-reinstall "$DIR"/wheel/ferrodbc-*.whl
log "$("$VENV/bin/python" -V) ferrodbc built (dev) and installed in $((SECONDS - start)) s"
start=$SECONDS
set +e
PYTHONDONTWRITEBYTECODE=1 "$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/python
rc=$?
set -e
log "tests/python in $((SECONDS - start)) s, exit $rc"
exit "$rc"
