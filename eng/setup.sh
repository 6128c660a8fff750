#!/usr/bin/env bash
# One idempotent set-up for a fresh Debian 12 machine (and a no-op-ish re-run on a warm one):
#   1. Debian packages: unixODBC, FreeTDS, SQLite3 ODBC, PostgreSQL + psqlODBC, valgrind
#      (eng/memcheck.sh).
#   2. A project venv (.venv) with maturin, pytest, ruff, mypy and the comparison drivers (pyodbc,
#      mssql-python).
#   3. Microsoft ODBC Driver 18, copied out of the `mssql-python-odbc` wheel into /opt and registered
#      with unixODBC. It is proprietary: installed here at set-up time, never committed or bundled.
#   4. Builds the TDS peer and the ferrodbc extension (release) into the venv.
# Everything a test or the demo needs comes from here; nothing is assumed to be pre-installed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
log() { printf '\n== setup: %s\n' "$*" >&2; }

APT_PACKAGES=(unixodbc unixodbc-dev odbcinst tdsodbc freetds-bin libsqliteodbc odbc-postgresql
              postgresql libssl-dev pkg-config valgrind
              debootstrap zstd)  # the last two: eng/chroot.sh
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  log "creating .venv"
  python3 -m venv .venv
fi
PY=$ROOT/.venv/bin/python
# Installed again whenever eng/requirements.txt changes (its hash is kept in the venv): a venv
# made before a requirement was added gets it too, not only a fresh one.
REQ_STAMP=.venv/.requirements.sha256
if [ "$(sha256sum eng/requirements.txt | cut -d' ' -f1)" != "$(cat "$REQ_STAMP" 2>/dev/null)" ]; then
  log "pip install -r eng/requirements.txt"
  "$PY" -m pip install -q --upgrade pip
  "$PY" -m pip install -q -r eng/requirements.txt
  sha256sum eng/requirements.txt | cut -d' ' -f1 > "$REQ_STAMP"
fi

# Microsoft ODBC Driver 18 from the mssql-python-odbc wheel (pulled in by mssql-python).
MS_DIR=/opt/microsoft/msodbcsql18
if ! odbcinst -q -d -n "ODBC Driver 18 for SQL Server" >/dev/null 2>&1 || [ ! -d "$MS_DIR/lib64" ]; then
  log "installing Microsoft ODBC Driver 18 from mssql-python-odbc"
  LIBS=$("$PY" -c 'import mssql_python_odbc as m; print(m.get_libs_dir())' 2>/dev/null || true)
  if [ -z "$LIBS" ] || [ ! -d "$LIBS" ]; then
    LIBS=$("$PY" -c 'import mssql_python_odbc, os; print(os.path.join(os.path.dirname(mssql_python_odbc.__file__), "libs/linux/debian_ubuntu/x86_64"))')
  fi
  SO=$(find "$LIBS" -name 'libmsodbcsql-18*.so*' | head -n1)
  RLL=$(find "$LIBS" -name 'msodbcsqlr18.rll' | head -n1)
  [ -n "$SO" ] || { echo "setup: libmsodbcsql not found under $LIBS" >&2; exit 1; }
  mkdir -p "$MS_DIR/lib64" "$MS_DIR/share/resources/en_US"
  cp "$SO" "$MS_DIR/lib64/"
  [ -n "$RLL" ] && cp "$RLL" "$MS_DIR/share/resources/en_US/"
  printf '[ODBC Driver 18 for SQL Server]\nDescription=Microsoft ODBC Driver 18 for SQL Server (from mssql-python-odbc)\nDriver=%s\nUsageCount=1\n' \
    "$MS_DIR/lib64/$(basename "$SO")" > /tmp/ferrodbc-msodbcsql18.ini
  odbcinst -i -d -f /tmp/ferrodbc-msodbcsql18.ini >/dev/null
fi
# FreeTDS and SQLite3 registered with absolute paths (the Debian entries are relative).
ODBC_LIB=/usr/lib/x86_64-linux-gnu/odbc
if ! grep -q "$ODBC_LIB/libtdsodbc.so" /etc/odbcinst.ini; then
  log "registering FreeTDS with an absolute path"
  odbcinst -u -d -n FreeTDS >/dev/null 2>&1 || true
  printf '[FreeTDS]\nDescription=FreeTDS\nDriver=%s/libtdsodbc.so\nUsageCount=1\n' "$ODBC_LIB" > /tmp/ferrodbc-freetds.ini
  odbcinst -i -d -f /tmp/ferrodbc-freetds.ini >/dev/null
fi

# cargo-fuzz for eng/fuzz.sh (from crates.io, built once into ~/.cargo/bin; a re-run skips it).
CARGO_FUZZ_VERSION=0.13.2
if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
  log "cargo install cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install -q --locked cargo-fuzz --version "$CARGO_FUZZ_VERSION"
fi

log "building tds-peer and ferrodbc (release)"
cargo build --release -q -p tds-peer
( source .venv/bin/activate && maturin develop --release -q >/dev/null )
# The ADBC driver (adbc/, docs/adbc.md): its shared library (release, no Python in it) copied into
# the Python package python-adbc/, which is installed into the venv, and a driver manifest written
# into the venv's etc/adbc/drivers so loaders find it by the name "ferrodbc".
log "building the ADBC driver (release) and installing adbc-driver-ferrodbc"
cargo build --release -q -p adbc_driver_ferrodbc
install -m 755 target/release/libadbc_driver_ferrodbc.so python-adbc/adbc_driver_ferrodbc/
"$PY" -m pip install -q --no-deps --force-reinstall ./python-adbc
"$PY" -m adbc_driver_ferrodbc.manifest >/dev/null
# CPython 3.10 (pyenv's) and its test venv, for eng/test.sh's oldest-Python step.
bash eng/oldest_python.sh --setup
log "done"
