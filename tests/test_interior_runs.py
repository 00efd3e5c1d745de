"""A hole inside a numeric column's body: split bins between two kept bins
that each fail the release's level test but together pass
``RUN_SUPPORT_Z`` are kept whole (``_pipeline_levels.INTERIOR_RUNS``).

The figures are attrition's ``MonthlyRate`` at ε = 0.3, seed 0 of the TUNE
half of ``benchmarks/bench_suite.py``: 1,176 training rows close to
uniform on 2,094-26,999, the domain cut into parts at powers of sqrt(2)
from 4,096, the release's estimates of the parts at an sd of 105.8 rows.
Bins 2 and 3 (166 and 225 real rows) came back at 1.6 and 1.7 sds and were
dropped, so a third of the rows went to the bins beside them."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from _fine_hist import fine_hist

from skdp_synth import _pipeline_levels
from skdp_synth._pipeline_levels import (
    RUN_SUPPORT_Z,
    PipelineLevelsMixin,
    _interior_runs,
)

LEVELS = [4096, 5792, 8192, 11586, 16385, 23171, 32769, 46341, 65535]
ESTIMATES = [25.9, 220.9, 169.7, 180.2, 528.3, 83.4, -92.2, -53.4]
SD = 105.8


def _release(estimates, sd=SD):
    return SimpleNamespace(
        _one_way_level_estimate=lambda j, b: (estimates[b], sd),
        _rules=SimpleNamespace(level_support_z=2.0),
    )


#: the released fine histogram's leaves (after the pipeline's reconcile):
#: kept leaves on both sides of the hole
FINE = ([4096, 5792, 16385, 23171, 65536], [0.0, 567.4, 537.9, 0.0])


def _spec(split=range(8), fine=FINE, levels=LEVELS):
    return SimpleNamespace(
        levels=[float(v) for v in levels],
        split=list(split),
        n_levels=len(levels) - 1,
        fine=fine_hist(*fine, scale=111.1),
    )


def test_a_hole_between_kept_bins_is_kept_whole():
    """Bins 2 and 3 fail ``2 σ`` (1.60 and 1.70 σ) between bins 1 (2.09 σ)
    and 4 that pass; their sum, 349.9, is 2.34 of the run's ``sqrt(2) σ``,
    past ``RUN_SUPPORT_Z`` (0.5). Bin 0 and bins 5-7 fail too, but at the
    domain's ends: a tail, not a hole, and each keeps its own test."""
    assert max(ESTIMATES[2:4]) < 2.0 * SD < ESTIMATES[1]
    assert sum(ESTIMATES[2:4]) > RUN_SUPPORT_Z * np.sqrt(2.0) * SD
    assert _interior_runs(_release(ESTIMATES), _spec(), 0, set(), set()) == {2, 3}


def test_a_hole_the_release_measures_as_empty_keeps_its_test():
    """The run's estimates summing under ``0.5 sqrt(2) σ`` (74.8): a gap
    in the rows, tested bin by bin."""
    est = ESTIMATES[:2] + [60.0, 10.0] + ESTIMATES[4:]
    assert sum(est[2:4]) < RUN_SUPPORT_Z * np.sqrt(2.0) * SD
    assert _interior_runs(_release(est), _spec(), 0, set(), set()) == set()


def test_a_strict_bin_fails_at_three_sds_and_may_end_a_hole():
    """A strict bin (tentative, a tail leaf's part) between 2 and 3 σ
    fails its own test, so a hole can hold it; a bin that passes ends a
    hole (bin 2 alone, 1.6 σ, is then the hole), and so does a bin
    already kept whole (``whole``)."""
    est = ESTIMATES[:3] + [250.0] + ESTIMATES[4:]  # bin 3 at 2.36 σ
    assert _interior_runs(_release(est), _spec(), 0, set(), set()) == {2}
    assert _interior_runs(_release(est), _spec(), 0, {3}, set()) == {2, 3}
    assert _interior_runs(_release(est), _spec(), 0, {3}, {3}) == {2}


def test_only_split_bins_are_tested():
    """A bin that is not split (a leaf of its own) is never dropped by the
    level test, and a hole of split bins beside it is still a hole."""
    spec = _spec(split=[0, 2, 3, 5, 6, 7])
    assert _interior_runs(_release(ESTIMATES), spec, 0, set(), set()) == {2, 3}


def test_a_run_past_the_kept_leaves_is_no_hole():
    """The same estimates where no kept leaf ends above the run (the
    column's last kept leaf holds it, ``[5792, 16385)``): spread over such a
    leaf, rows came back past the data's end (workinghours' ``education``,
    std x9.4), so its bins keep their own tests, as ``_uncut_leaves``'
    outer leaves do."""
    fine = ([4096, 5792, 16385, 65536], [0.0, 567.4, 0.0])
    spec = _spec(fine=fine)
    assert _interior_runs(_release(ESTIMATES), spec, 0, set(), set()) == set()


def test_one_integer_bins_alone_are_left_to_their_own_rule():
    """A run of one-integer bins only (the empty integers between two heaps)
    is ``_supported_runs``', which tests a single one alone: here the bin
    ``[2, 3)`` at 0.75 σ between heaps at 1 and 3 stays to its own test."""
    levels = [0, 1, 2, 3, 10]
    fine = ([0, 1, 2, 3, 11], [500.0, 520.0, 30.0, 400.0])
    est = [500.0, 520.0, 30.0, 400.0]
    spec = _spec(split=[2], fine=fine, levels=levels)
    assert 0.5 * 40.0 < 30.0 < 2.0 * 40.0
    assert _interior_runs(_release(est, 40.0), spec, 0, set(), set()) == set()
    # wider than one integer, the same bin is a hole: [2, 4) in 0, 1, 2, 4, 10
    wide = _spec(split=[2], fine=([0, 1, 2, 4, 11], fine[1]), levels=[0, 1, 2, 4, 10])
    assert _interior_runs(_release(est, 40.0), wide, 0, set(), set()) == {2}


@pytest.mark.parametrize("flag", ["INTERIOR_RUNS", "RUN_SUPPORT_Z"])
def test_the_rule_off(monkeypatch, flag):
    monkeypatch.setattr(_pipeline_levels, flag, None)
    assert _interior_runs(_release(ESTIMATES), _spec(), 0, set(), set()) == set()


class _Final:
    """A last step whose 1-way estimates are given; it drops a level under
    ``z`` sds (2 unless given), as the Gaussian and damped releases do."""

    def __init__(self, estimates, sd):
        self.blocks_ = SimpleNamespace(names=["MonthlyRate"])
        self.estimates, self.sd = estimates, sd
        self.dropped = []

    def _one_way_level_estimate(self, j, level):
        return self.estimates[level], self.sd

    def _drop_unsupported_level(self, j, level, z=None, keep=()):
        if not self.estimates[level] < (2.0 if z is None else z) * self.sd:
            return False
        self.dropped.append(level)
        return True


def test_the_pipeline_keeps_the_hole_and_drops_the_tails():
    """Through the pipeline's level rules: only the outer bins 0 and 5-7
    are dropped (before, 2 and 3 were too)."""
    spec = SimpleNamespace(
        name="MonthlyRate",
        kind="numeric",
        levels=[float(v) for v in LEVELS],
        n_levels=8,
        fine=fine_hist(LEVELS, [30, 220, 170, 180, 530, 80, 0, 0], scale=111.1),
        split=tuple(range(8)),
        missing=False,
        other=False,
    )
    blocks = object()
    encoder = SimpleNamespace(blocks_=blocks, specs_=[spec])
    final = _Final(ESTIMATES, SD)
    pipe = SimpleNamespace(
        _iter=lambda with_final: [(0, "enc", encoder)],
        _drop_missing_level=lambda *a: False,
        _warn_degenerate=lambda *a: None,
    )
    PipelineLevelsMixin._drop_unsupported_levels(pipe, final, {"blocks": blocks})
    assert sorted(final.dropped) == [0, 5, 6, 7]
