"""Expected digests, computed once per (task, size) and cached under eng/profiler/out/.

Expectations come from the generators (eng/peers/synthetic.py for peer tables, workdata.py for
what the tasks write), never from a driver under test. If they cannot be computed (e.g. the peer's
synthetic.py is missing), the entry says why and the orchestrator falls back to a reference
driver's result, labelled as such.

    python -m eng.profiler.expect --tasks a,b [--quick] --out FILE
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

from .digest import require_fixed_hash_seed
from .workloads import select

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SOURCES = [HERE / "task.py", HERE / "workloads.py", HERE / "arrow_tasks.py", HERE / "bulk_tasks.py", HERE / "workdata.py",
           HERE / "vector_tasks.py",
           HERE / "digest.py", ROOT / "eng/peers/synthetic.py"]


def cache_key(quick: bool) -> str:
    """Changes whenever a generator or a task definition does."""
    h = hashlib.sha256(b"quick" if quick else b"full")
    # The bulk tasks expect (n, "rows_copied") when the peer discards bulk rows.
    h.update(b"bulk-discard" if os.environ.get("PROFILER_BULK_DISCARD") == "1" else b"")
    h.update(b"insert-discard" if os.environ.get("PROFILER_INSERT_DISCARD") == "1" else b"")
    for p in SOURCES:
        h.update(p.read_bytes() if p.exists() else b"missing:" + p.name.encode())
    return h.hexdigest()[:16]


def compute(names: list[str] | None, quick: bool) -> dict:
    require_fixed_hash_seed()
    out: dict = {}
    for task in select(names):
        try:
            d = task.expect(task.size.pick(quick))
            out[task.name] = [d.rows, d.checksum]
        except Exception as e:  # noqa: BLE001  (reported per task, never fatal for the others)
            out[task.name] = {"error": f"no expectation: {type(e).__name__}: {e}"[:300]}
    return out


def cached(names: list[str] | None, quick: bool, out_dir: Path) -> dict:
    """Load the cached expectations for these tasks, computing the missing ones."""
    path = out_dir / f"expect-{cache_key(quick)}.json"
    have = json.loads(path.read_text()) if path.exists() else {}
    wanted = [t.name for t in select(names)]
    missing = [n for n in wanted if n not in have or isinstance(have[n], dict)]
    if missing:
        have.update(compute(missing, quick))
        out_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(have, indent=1))
    return {n: have[n] for n in wanted}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eng.profiler.expect")
    ap.add_argument("--tasks", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", required=True, help="write the expectations JSON here")
    ap.add_argument("--cache-dir", default=str(HERE / "out"))
    args = ap.parse_args(argv)
    names = [n for n in args.tasks.split(",") if n] or None
    result = cached(names, args.quick, Path(args.cache_dir))
    Path(args.out).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
