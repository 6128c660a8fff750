"""The object half of the floor: CPython building the rows' Python objects from memory.

`python -m eng.profiler.floor_objects --shape mixed --rows 100000 [--chunk 10000]` generates the
expected rows of `peer.<shape>_<rows>` (eng/peers/synthetic.py), pickles them as tuples in chunks
of the task's fetch size (untimed), then times unpickling every chunk and keeping the rows, with
the cyclic GC off: the same ints, floats, strs, datetimes and Decimals a driver must create, built
by CPython's own C code with no driver, no buffers and no row type. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import gc
import json
import pickle
import time

from eng.peers import synthetic


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", required=True)
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--chunk", type=int, default=0, help="rows per fetch call (0: all at once)")
    args = ap.parse_args()
    rows = [tuple(r) for r in synthetic.rows(args.shape, args.rows)]
    chunk = args.chunk or len(rows)
    blobs = [pickle.dumps(rows[i:i + chunk], protocol=5) for i in range(0, len(rows), chunk)]
    del rows
    gc.collect()
    gc.disable()
    t0 = time.perf_counter_ns()
    out: list = []
    for blob in blobs:
        out += pickle.loads(blob)
    ms = (time.perf_counter_ns() - t0) / 1e6
    print(json.dumps({"ms": ms, "rows": len(out)}))


if __name__ == "__main__":
    main()
