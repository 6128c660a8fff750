"""The native floor (eng/floor, binary odbc-floor): build once, run a fetch query, read its JSON."""

from __future__ import annotations

import json
import os
import subprocess
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


def run(exe: Path, conn_str: str, query: str, expected_rows: int, timeout: float = 600) -> dict:
    """One fresh process, one execution. Validated by row count (it builds no Python values)."""
    try:
        p = subprocess.run([str(exe), "--connection-string", conn_str, "--query", query, "--batch", "10000"],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "failed", "ms": None, "error": f"timed out after {timeout:.0f} s"}
    if p.returncode != 0:
        return {"status": "failed", "ms": None, "error": p.stderr.strip()[-500:]}
    r = json.loads(p.stdout.strip().splitlines()[-1])
    if r["rows"] != expected_rows:
        return {"status": "failed", "ms": None, "error": f"wrong result: {r['rows']} rows, expected {expected_rows}"}
    return {"status": "ok", "ms": r["ms"], "digest": [r["rows"], r["checksum"]]}
