"""Medians, paired ratios and the decision rule (mssql-python's profiler, prior-art §2.8).

Per pair i: ratio_i = head_i / base_i. The reported change is the median of the paired ratios.
  consistent slowdown:     median ratio > 1 + T, median(head) - median(base) >= 1 ms,
                           and >= ceil(80 %) of pairs have ratio > 1 + T
  consistent improvement:  the mirror image (< 1 - T, base - head >= 1 ms, >= ceil(80 %) < 1 - T)
  inconsistent:            a slowdown by ratio and delta whose pairs do not agree
  no signal:               everything else
T = 0.20. Wall-clock noise on a shared 2-core machine is ~10-25 %, hence the wide threshold.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

THRESHOLD = 0.20
MIN_DELTA_MS = 1.0
AGREEMENT = 0.80


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def spread(xs: list[float]) -> float:
    """(max - min) / median: how much one configuration's samples disagree (noise)."""
    return (max(xs) - min(xs)) / median(xs) if xs and median(xs) > 0 else float("nan")


def paired_ratios(base: list[float], head: list[float]) -> list[float]:
    return [h / b for b, h in zip(base, head, strict=True)]


@dataclass(frozen=True)
class Verdict:
    label: str
    median_ratio: float
    agreeing: int  # pairs beyond the threshold in the direction of the median
    pairs: int
    delta_ms: float  # median(head) - median(base)


def verdict(base: list[float], head: list[float]) -> Verdict:
    ratios = paired_ratios(base, head)
    r = median(ratios)
    delta = median(head) - median(base)
    need = math.ceil(AGREEMENT * len(ratios))
    slower = sum(x > 1 + THRESHOLD for x in ratios)
    faster = sum(x < 1 - THRESHOLD for x in ratios)
    if r > 1 + THRESHOLD and delta >= MIN_DELTA_MS:
        label = "consistent slowdown" if slower >= need else "inconsistent"
        return Verdict(label, r, slower, len(ratios), delta)
    if r < 1 - THRESHOLD and -delta >= MIN_DELTA_MS and faster >= need:
        return Verdict("consistent improvement", r, faster, len(ratios), delta)
    return Verdict("no signal", r, max(slower, faster), len(ratios), delta)


def headline(labels: list[str]) -> str:
    if "consistent slowdown" in labels:
        return "Performance regression detected"
    if "inconsistent" in labels:
        return "Performance needs review (inconsistent slowdown)"
    if "consistent improvement" in labels:
        return "Performance improved"
    return "No regression detected"
