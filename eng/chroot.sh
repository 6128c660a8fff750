#!/usr/bin/env bash
# The Debian matrix in one command: bash eng/chroot.sh [RELEASE ...]   (default: bookworm trixie sid)
# The sdist in the same systems:     bash eng/chroot.sh --sdist [RELEASE ...]
#
# Builds the release wheels for the releases' Pythons with eng/wheels.sh (bookworm 3.11, trixie
# 3.13, sid 3.14) into target/wheelhouse, unless FERRODBC_WHEELS names a folder that already holds
# them, then runs eng/chroot.py: each release debootstrapped (cached outside the clone), the wheel
# installed with pip, tests/python on SQLite3 and PostgreSQL, and a round trip and a fork through
# Driver 18 and FreeTDS to the TDS peer running outside the chroot.
#
# --sdist: the sdist (eng/wheels.sh DIR sdist, or FERRODBC_SDIST=FILE) built by pip in each
# release with only gcc, libc6-dev and unixodbc-dev added and the host's Rust toolchain bound in
# read-only (eng/chroot.py says why), then the same checks on what it built. The cold fat-LTO
# build took 13 min in bookworm and 7 min in sid on the shared 2-core machine (2026-12-06).
#
# FERRODBC_WHEEL_PROFILE=dev builds the wheels unoptimised (CI's one chroot: the packaging and
# the gate are the release ones, without fat LTO's build time).
# Needs root, debootstrap and zstd (eng/setup.sh installs them), the peer (target/release/tds-peer)
# and PostgreSQL (FERRODBC_PG_CONNSTR, else eng/peers/postgres.sh starts it).
set -euo pipefail
cd "$(dirname "$0")/.."
sdist=
if [ "${1:-}" = --sdist ]; then
  shift
  sdist=${FERRODBC_SDIST:-}
  if [ -z "$sdist" ]; then
    bash eng/wheels.sh target/sdist sdist
    sdist=$(ls -t target/sdist/ferrodbc-*.tar.gz | head -n1)
  fi
fi
releases=("$@")
[ ${#releases[@]} -gt 0 ] || releases=(bookworm trixie sid)
declare -A PYTHON=([bullseye]=3.9 [bookworm]=3.11 [trixie]=3.13 [sid]=3.14 [forky]=3.14)
WHEELS=${FERRODBC_WHEELS:-}
if [ -n "$sdist" ]; then
  :
elif [ -z "$WHEELS" ]; then
  WHEELS=$PWD/target/wheelhouse
  [ "${FERRODBC_WHEEL_PROFILE:-release}" = release ] || WHEELS=$PWD/target/wheelhouse-${FERRODBC_WHEEL_PROFILE}
  versions=()
  for r in "${releases[@]}"; do
    v=${PYTHON[$r]:-}
    [ -n "$v" ] || { echo "chroot: no Python known for $r (add it to PYTHON in $0)" >&2; exit 2; }
    [[ " ${versions[*]} " == *" $v "* ]] || versions+=("$v")
  done
  bash eng/wheels.sh "$WHEELS" "${versions[@]}"
fi
if [ -z "${FERRODBC_PG_CONNSTR:-}" ]; then
  FERRODBC_PG_CONNSTR=$(bash eng/peers/postgres.sh)
  export FERRODBC_PG_CONNSTR
fi
if [ -n "$sdist" ]; then
  exec .venv/bin/python eng/chroot.py --sdist "$sdist" "${releases[@]}"
fi
exec .venv/bin/python eng/chroot.py --wheels "$WHEELS" "${releases[@]}"
