#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo-fuzz, libFuzzer + AddressSanitizer) of fuzz/fuzz_targets/*.
#
#   bash eng/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]    default: 18 s each, every target
#   FUZZ_RUNS=10000000 bash eng/fuzz.sh 900 utf16        a long run: stops at N runs or the time
#   FUZZ_SANITIZER=none bash eng/fuzz.sh 900 peer_sql   without ASan (own build directory)
#   FUZZ_MAX_LEN=512 ...                                 longest input (default 4096)
#
# FUZZ_MAX_LEN is for long runs on a shared 2-core machine: the cost of an execution grows with
# the input (utf16 fell from ~15,000 to ~2,000 executions/s once its corpus held 4 KiB inputs).
# The bounded runs in eng/test.sh keep 4096, so long inputs are still tried on every CI run.
#
# FUZZ_SANITIZER=none is for long runs of the peer's targets: the peer has no `unsafe` code, and
# ASan's allocator makes these allocation-heavy parsers several times slower (peer_sql: ~1,000
# executions/s with ASan on a loaded core). But without ASan libFuzzer's malloc limit is blind:
# a none run missed a 4 GiB reservation from a 180-byte TVP that the ASan run in CI caught. Run
# the targets with ASan too. The engine's targets keep ASan: the UTF-16 decoder writes CPython
# strings through raw pointers.
#
# Runs on the stable toolchain: cargo-fuzz passes nightly-only flags (-Zsanitizer=address, ...),
# which RUSTC_BOOTSTRAP=1 allows on stable. Builds go to ~/.cache/ferrodbc/fuzz-target (kept
# across fresh clones, so a re-run only rebuilds what changed). Each target starts from the
# seeds in fuzz/seeds/<target>/ plus whatever corpus earlier runs left in the cache. A crash
# fails the run and leaves its input under fuzz/artifacts/<target>/: turn it into a unit test.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-18}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  mapfile -t TARGETS < <(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^ferrodbc-fuzz$')
fi
export RUSTC_BOOTSTRAP=1
SANITIZER=${FUZZ_SANITIZER:-address}
TARGET_DIR=${FUZZ_TARGET_DIR:-$HOME/.cache/ferrodbc/fuzz-target}
# Other RUSTFLAGS: a build directory of its own, so neither build invalidates the other.
[ "$SANITIZER" = address ] || TARGET_DIR=$TARGET_DIR-$SANITIZER
CORPUS_ROOT=${FUZZ_CORPUS_DIR:-$HOME/.cache/ferrodbc/fuzz-corpus}
# The Python-backed targets embed the project venv's interpreter (pyo3 links libpython).
if [ -x .venv/bin/python ]; then
  export PYO3_PYTHON=$PWD/.venv/bin/python
fi
# CPython keeps its allocations until exit: leak reports there are noise, not findings.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
# cargo-fuzz's default build: optimised, debug assertions and overflow checks on, ASan.
echo "== fuzz: build"
cargo fuzz build -s "$SANITIZER" --target-dir "$TARGET_DIR"
failed=0
for t in "${TARGETS[@]}"; do
  corpus=$CORPUS_ROOT/$t
  mkdir -p "$corpus" "fuzz/artifacts/$t"
  seeds=()
  [ -d "fuzz/seeds/$t" ] && seeds=("fuzz/seeds/$t")
  runs=()
  [ -n "${FUZZ_RUNS:-}" ] && runs=(-runs="$FUZZ_RUNS")
  log=$(mktemp)
  started=$SECONDS
  set +e
  cargo fuzz run -s "$SANITIZER" --target-dir "$TARGET_DIR" "$t" "$corpus" "${seeds[@]}" -- \
    -max_total_time="$SECS" "${runs[@]}" -max_len="${FUZZ_MAX_LEN:-4096}" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t/" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  if [ "$rc" -ne 0 ]; then
    echo "fuzz $t: FAILED (exit $rc)" >&2
    grep -E "panicked|ERROR: |SUMMARY|Test unit written" "$log" | head -n 20 >&2 || tail -n 40 "$log" >&2
    failed=1
  else
    echo "fuzz $t: ok, ${execs:-?} executions (${secs:-?}/s) in $((SECONDS - started)) s, sanitizer $SANITIZER, max_len ${FUZZ_MAX_LEN:-4096}, limit ${SECS}s${FUZZ_RUNS:+ or $FUZZ_RUNS runs}"
  fi
  rm -f "$log"
done
exit "$failed"
