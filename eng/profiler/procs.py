"""Starting worker, expectation and floor subprocesses with a controlled environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from .worker import MARKER

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "out"


def env(pythonpath: list[str] | None = None) -> dict[str, str]:
    """Fixed hash seed (digests use hash()); PYTHONPATH puts a revision's ferrodbc first.

    One OpenBLAS thread: no task does linear algebra, but a worker that imports numpy (pyarrow
    and pandas do) starts OpenBLAS's thread pool, whose threads spin while waiting. Under
    `instructions --threads` callgrind counted that spinning for every driver (8-17 M of a
    300-740 M Arrow task, varying with scheduling), and in timed runs it takes a core from the
    driver's own threads."""
    e = dict(os.environ)
    e["PYTHONHASHSEED"] = "0"
    e["OPENBLAS_NUM_THREADS"] = "1"
    e["PYTHONPATH"] = os.pathsep.join([*(pythonpath or []), str(ROOT)])
    e.pop("PYTHONDEVMODE", None)
    return e


def expectations(task_names: list[str], quick: bool) -> dict:
    """Expected digests (cached), computed in a subprocess so this process's hash seed is moot."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as f:
        cmd = [sys.executable, "-m", "eng.profiler.expect", f"--tasks={','.join(task_names)}", "--out", f.name]
        subprocess.run(cmd + (["--quick"] if quick else []), env=env(), cwd=ROOT, check=True)
        return json.load(f)


def worker(
    driver: str,
    conn_str: str,
    task_names: list[str],
    quick: bool,
    expect_file: Path | None,
    pythonpath: list[str] | None = None,
    timeout: float = 1800,
    prefix: list[str] | None = None,
    via_ffi: bool = False,
) -> dict:
    """Run one worker; a crash or timeout becomes FAILED for every task it had, never a time.
    `prefix` wraps the interpreter (e.g. valgrind); `via_ffi` makes bodies countable by callgrind."""
    cmd = [*(prefix or []), sys.executable, "-m", "eng.profiler.worker", "--driver", driver, "--conn", conn_str,
           f"--tasks={','.join(task_names)}"]
    if via_ffi:
        cmd.append("--via-ffi")
    if quick:
        cmd.append("--quick")
    if expect_file:
        cmd += ["--expect", str(expect_file)]
    try:
        p = subprocess.run(cmd, env=env(pythonpath), cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        for line in reversed(p.stdout.splitlines()):
            if line.startswith(MARKER):
                return json.loads(line[len(MARKER):])
        why = f"worker exited {p.returncode} without a result: {p.stderr.strip()[-800:]}"
    except subprocess.TimeoutExpired:
        why = f"worker timed out after {timeout:.0f} s"
    return {"driver": driver, "crashed": why,
            "tasks": {t: {"status": "failed", "ms": None, "error": why} for t in task_names}}
