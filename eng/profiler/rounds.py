"""Interleaved rounds of fresh-process samples, and folding them into per-task summaries.

Round 0 is a warm-up (peer caches, page cache, CPU frequency) and is discarded. In every later
round each contestant runs once, in an order that changes every round, so slow drift of the
machine lands on all contestants alike.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from .stats import median, spread


def alternating(labels: list[str], k: int) -> list[str]:
    """Pairs for two contestants: base, head | head, base | base, head ..."""
    return labels if k % 2 == 0 else labels[::-1]


def rotating(labels: list[str], k: int) -> list[str]:
    s = k % len(labels)
    return labels[s:] + labels[:s]


def run_rounds(
    runners: dict[str, Callable[[], dict]],
    measured: int,
    order: Callable[[list[str], int], list[str]],
    warmups: int = 1,
) -> dict[str, list[dict]]:
    """Returns label -> one {task: result} per measured round."""
    labels = list(runners)
    samples: dict[str, list[dict]] = {label: [] for label in labels}
    for k in range(warmups + measured):
        kind = "warm-up" if k < warmups else f"round {k - warmups + 1}/{measured}"
        for label in order(labels, k):
            print(f"[profiler] {kind}: {label}", file=sys.stderr, flush=True)
            report = runners[label]()
            if k >= warmups:
                samples[label].append(report)
    return samples


@dataclass
class Summary:
    status: str  # "ok" | "n/a" | "FAILED"
    ms: list[float] = field(default_factory=list)
    reason: str = ""
    counters: dict | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def median(self) -> float:
        return median(self.ms)

    @property
    def spread(self) -> float:
        return spread(self.ms)


def summarize(reports: list[dict], task: str) -> Summary:
    """All measured rounds must be ok for a time; any failure makes the task FAILED."""
    results = [r["tasks"].get(task, {"status": "failed", "error": "missing from the worker's report"}) for r in reports]
    notes = sorted({n for r in results for n in r.get("notes", [])})
    na = [r for r in results if r["status"] == "n/a"]
    if na:
        return Summary("n/a", reason=na[0].get("error", ""), notes=notes)
    bad = [r for r in results if r["status"] != "ok" or not r.get("ms")]
    if bad or not results:
        reason = bad[0].get("error", "no result") if bad else "no measured rounds"
        return Summary("FAILED", reason=reason, notes=notes)
    counters = results[-1].get("counters")
    if counters is not None and any(r.get("counters") != counters for r in results):
        notes.append("counter deltas varied between rounds")
    return Summary("ok", ms=[r["ms"] for r in results], counters=counters, notes=notes)
