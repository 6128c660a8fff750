"""The floor a fetch task is compared with: the native fetch (eng/floor, binary odbc-floor: drain
the driver into bound buffers, no Python objects) plus the object half (floor_objects.py: CPython
building the same rows' objects from memory). Both run in fresh processes each round."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build() -> Path:
    """cargo build --release -p odbc-floor (incremental; honours CARGO_TARGET_DIR)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "odbc-floor"], cwd=ROOT, check=True)
    exe = target / "release" / "odbc-floor"
    if not exe.is_file():
        raise FileNotFoundError(f"odbc-floor not found at {exe}")
    return exe


def _json_run(cmd: list[str], expected_rows: int, what: str, timeout: float, **kw) -> dict:
    """Run one fresh process that prints a JSON line with `rows` and `ms`; failed unless it
    exits cleanly with the expected row count."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return {"status": "failed", "ms": None, "error": f"{what} timed out after {timeout:.0f} s"}
    if p.returncode != 0:
        return {"status": "failed", "ms": None, "error": p.stderr.strip()[-500:]}
    r = json.loads(p.stdout.strip().splitlines()[-1])
    if r["rows"] != expected_rows:
        return {"status": "failed", "ms": None, "error": f"{what}: {r['rows']} rows, expected {expected_rows}"}
    return {"status": "ok", **r}


def run(exe: Path, conn_str: str, query: str, expected_rows: int, timeout: float = 600) -> dict:
    """One fresh process, one execution. Validated by row count (it builds no Python values)."""
    r = _json_run([str(exe), "--connection-string", conn_str, "--query", query],
                  expected_rows, "native fetch", timeout)
    if r["status"] != "ok":
        return r
    return {"status": "ok", "ms": r["ms"], "digest": [r["rows"], r["checksum"]]}


def objects(shape: str, rows: int, chunk: int, timeout: float = 600) -> dict:
    """Time CPython building the expected rows of peer.<shape>_<rows> from memory (see
    floor_objects.py), in a fresh process."""
    cmd = [sys.executable, "-m", "eng.profiler.floor_objects", "--shape", shape, "--rows", str(rows),
           "--chunk", str(chunk)]
    r = _json_run(cmd, rows, "objects", timeout, cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": "0"})
    return {"status": "ok", "ms": r["ms"]} if r["status"] == "ok" else r
