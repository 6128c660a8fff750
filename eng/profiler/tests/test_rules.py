"""The profiler's own logic: verdict rule, digests, summaries. No timings are asserted.

Run: PYTHONHASHSEED=0 .venv/bin/python -m pytest eng/profiler/tests -q
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from decimal import Decimal

import pytest

from eng.profiler.digest import of_rows, of_sets
from eng.profiler.rounds import summarize
from eng.profiler.stats import headline, verdict
from eng.profiler.workloads import REGISTRY

needs_seed = pytest.mark.skipif(os.environ.get("PYTHONHASHSEED") != "0", reason="digests need PYTHONHASHSEED=0")


def test_consistent_slowdown_needs_ratio_delta_and_agreement():
    assert verdict([10.0] * 5, [13.0] * 5).label == "consistent slowdown"
    # 1 of 5 pairs not beyond the threshold: 4/5 = ceil(80 %) still agrees.
    assert verdict([10.0] * 5, [13.0, 13.0, 13.0, 13.0, 10.5]).label == "consistent slowdown"
    # Only 3 of 5 pairs slower by > 20 %: a slowdown without agreement.
    assert verdict([10.0] * 5, [13.0, 13.0, 13.0, 10.5, 10.5]).label == "inconsistent"


def test_sub_millisecond_moves_are_no_signal():
    assert verdict([0.5] * 5, [0.9] * 5).label == "no signal"
    assert verdict([1.0] * 5, [0.5] * 5).label == "no signal"


def test_improvement_and_headline():
    v = verdict([20.0] * 5, [10.0] * 5)
    assert v.label == "consistent improvement" and v.median_ratio == pytest.approx(0.5)
    assert headline(["no signal", "consistent improvement"]) == "Performance improved"
    assert headline(["inconsistent", "consistent improvement"]).startswith("Performance needs review")
    assert headline(["consistent slowdown", "inconsistent"]) == "Performance regression detected"


def test_failed_or_na_rounds_never_become_times():
    ok = {"tasks": {"t": {"status": "ok", "ms": 5.0}}}
    bad = {"tasks": {"t": {"status": "failed", "ms": None, "error": "wrong result"}}}
    zero = {"tasks": {"t": {"status": "ok", "ms": 0.0}}}
    na = {"tasks": {"t": {"status": "n/a", "error": "no _mapping"}}}
    assert summarize([ok, bad, ok], "t").status == "FAILED"
    assert summarize([ok, zero], "t").status == "FAILED"
    assert summarize([na, na], "t").status == "n/a"
    assert summarize([ok, ok], "t").ms == [5.0, 5.0]


@needs_seed
def test_digest_is_value_based_across_driver_representations():
    a = [(1, Decimal("1.5000"), True, None, uuid.UUID(int=7), dt.datetime(2020, 1, 1))]
    b = [(1, Decimal("1.5"), 1, None, uuid.UUID(int=7), dt.datetime(2020, 1, 1))]
    assert of_rows(a) == of_rows(b)
    assert of_rows(a) != of_rows([(1, Decimal("1.5001"), True, None, uuid.UUID(int=7), dt.datetime(2020, 1, 1))])
    assert of_rows(a).rows == 1
    assert of_sets([a, a]) != of_sets([a])


def test_registry_covers_the_brief():
    assert len(REGISTRY) >= 26
    for task in REGISTRY.values():
        assert task.size.quick <= task.size.full


def test_trampoline_returns_results_and_carries_exceptions():
    from eng.profiler.trampoline import call_via_ffi

    assert call_via_ffi(lambda: [1, 2]) == [1, 2]
    with pytest.raises(ZeroDivisionError):
        call_via_ffi(lambda: 1 / 0)
