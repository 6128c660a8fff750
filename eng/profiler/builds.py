"""Build one git revision of ferrodbc into its own importable directory.

git worktree (temp dir) -> maturin build --release -o WHEELS -> pip install --no-deps --target SITE.
Workers then run with PYTHONPATH=SITE, so each revision's extension is isolated from the
other's and from whatever the venv has installed (the worker reports ferrodbc.__file__ and the
comparison refuses to run if it is not inside SITE). Builds are cached by commit SHA.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILDS = Path(__file__).resolve().parent / "out" / "builds"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def resolve(rev: str) -> str:
    return git("rev-parse", "--verify", f"{rev}^{{commit}}")


def site_dir(sha: str) -> Path:
    return BUILDS / sha / "site"


def build(sha: str, log=print) -> Path:
    """Return SITE for `sha`, building it if needed."""
    site = site_dir(sha)
    if (site / ".built").exists():
        log(f"[profiler] reusing build of {sha[:10]}")
        return site
    wheels = BUILDS / sha / "wheels"
    shutil.rmtree(BUILDS / sha, ignore_errors=True)
    wheels.mkdir(parents=True)
    work = Path(tempfile.mkdtemp(prefix="ferrodbc-rev-")) / "tree"
    git("worktree", "add", "--detach", str(work), sha)
    try:
        log(f"[profiler] building {sha[:10]} (maturin build --release)")
        env = dict(os.environ)
        # One target dir for all revisions: dependencies compile once; each revision's crate is
        # rebuilt because its sources differ. libodbc stays out of the wheel (--auditwheel skip).
        env.setdefault("CARGO_TARGET_DIR", str(BUILDS / "cargo-target"))
        subprocess.run([sys.executable, "-m", "maturin", "build", "--release", "-i", sys.executable,
                        "--auditwheel", "skip", "-o", str(wheels)], cwd=work, env=env, check=True)
        (wheel,) = wheels.glob("ferrodbc-*.whl")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                        "--target", str(site), str(wheel)], check=True)
        (site / ".built").write_text(sha + "\n")
    except (subprocess.CalledProcessError, ValueError) as e:
        raise SystemExit(f"profiler: building {sha[:10]} failed ({e}); see the output above") from e
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(work)], cwd=ROOT, capture_output=True)
        subprocess.run(["git", "worktree", "prune"], cwd=ROOT, capture_output=True)
        shutil.rmtree(work.parent, ignore_errors=True)
    return site
