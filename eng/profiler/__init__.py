"""ferrodbc's profiler: paired base/head comparisons and side-by-side driver runs.

Run from the repository root: ``python -m eng.profiler {run,drivers,compare,ci} ...``.
See README.md for the measurement contract.
"""
