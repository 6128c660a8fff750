#!/usr/bin/env bash
# valgrind memcheck over a representative subset of the tests (issue 15): the core's Rust unit
# tests, then eng/memcheck/scenarios.py (every fetch shape, parameters, Arrow export, converters
# mutating their cursor, GC cycles, close from another thread, fork, and through Driver 18 and
# FreeTDS the prefetch thread mid-fetch, cancel, pooled sessions, exit mid-result) against a
# DEBUG build of the extension (debug assertions, no inlining to hide frames). Any error fails.
# Suppressions (eng/memcheck/valgrind.supp) cover CPython, unixODBC and driver internals only,
# each with the reason. Run by eng/test.sh after the suites; about 3 minutes here.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
VALGRIND=(valgrind --tool=memcheck --error-exitcode=97 --num-callers=40
          --suppressions=eng/memcheck/valgrind.supp --track-origins=no
          --child-silent-after-fork=yes
          --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite
          -s)
command -v valgrind >/dev/null || { echo "valgrind is not installed (eng/setup.sh installs it)" >&2; exit 1; }

echo "-- Rust: the core's unit tests under memcheck"
test_bin=$(cargo test -q -p ferrodbc --lib --no-run --message-format=json 2>/dev/null \
  | "$PY" -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "_native":
        print(m["executable"])')
[ -x "$test_bin" ] || { echo "could not build the core's test binary" >&2; exit 1; }
"${VALGRIND[@]}" -q "$test_bin" -q --test-threads=2

echo "-- Python: eng/memcheck/scenarios.py under memcheck (debug extension)"
cargo build -q --lib --features python
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/ferrodbc"
ln -s "$PWD"/python/ferrodbc/*.py "$PWD/python/ferrodbc/py.typed" "$stage/ferrodbc/"
suffix=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
ln -s "$PWD/target/debug/lib_native.so" "$stage/ferrodbc/_native$suffix"
# PYTHONMALLOC=malloc: every Python allocation goes through malloc, where memcheck sees it.
# MEMCHECK_PACKAGE_DIR: scenarios.py checks it imported the debug build staged here.
MEMCHECK_PACKAGE_DIR="$stage" PYTHONPATH="$stage" PYTHONMALLOC=malloc \
  "${VALGRIND[@]}" "$PY" eng/memcheck/scenarios.py
echo "memcheck: no errors"
