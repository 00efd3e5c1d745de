"""One-integer bins of a thin tail, each under the release's level test but
supported as a run (``_pipeline_levels.RUN_SUPPORT_Z``, off by default; at
its measured alternative 1.0 here): weeks of gestation
27-35 of the synthetic ``births`` table (``benchmarks/bench_int_levels.py``,
ε = 0.3, seed 17) lost every bin and came back at std ratio 0.46."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from skdp_synth import _pipeline_levels
from skdp_synth._pipeline_levels import _supported_runs

#: the release's estimates of the column's one-integer bins 26..40 (the
#: last closed, 40-41) and their noise sd (one for the column)
ESTIMATES = [
    -12.1, -30.7, 22.8, 71.7, -20.3, 57.5, 55.8, 20.0, 81.6, 86.8,
    163.8, 686.9, 1790.3, 2271.9, 2686.0,
]  # fmt: skip
SD = 79.94


@pytest.fixture(autouse=True)
def rule_on(request, monkeypatch):
    if "off" not in request.node.name:
        monkeypatch.setattr(_pipeline_levels, "RUN_SUPPORT_Z", 1.0)


def _release(estimates, sd=SD):
    return SimpleNamespace(
        _one_way_level_estimate=lambda j, b: (estimates[b], sd),
        _rules=SimpleNamespace(level_support_z=2.0),
    )


def _spec(levels, split):
    return SimpleNamespace(levels=[float(v) for v in levels], split=list(split))


def test_a_thin_tail_is_kept_as_a_run():
    """Bins 26-35 each fail ``2 σ`` but sum to 334 rows, 1.3 of their
    ``sqrt(10) σ``: none is tested alone; 36 (163.8 > 2 σ) is no part."""
    spec = _spec(range(26, 42), range(15))
    total = sum(ESTIMATES[:10])
    assert total > np.sqrt(10) * SD and max(ESTIMATES[:10]) < 2 * SD
    assert _supported_runs(_release(ESTIMATES), spec, 0, set()) == set(range(10))


def test_empty_integers_beside_a_heap_keep_their_test():
    """A heap at 48 with empty integers either side: their estimates sum
    under ``1 σ`` of the run, so each is tested (and dropped) as before."""
    est = [-40.0, 30.0, -20.0, 10.0, 900.0, 25.0, -60.0, 5.0]
    spec = _spec(range(44, 53), range(8))
    assert _supported_runs(_release(est), spec, 0, set()) == set()


def test_wide_parts_and_strict_bins_are_in_no_run():
    """Bins wider than one integer (a cut leaf's parts) and tentative bins
    keep their own tests."""
    spec = _spec([0, 40, 80, 120, 160], range(4))
    assert _supported_runs(_release([60.0] * 4), spec, 0, set()) == set()
    spec = _spec(range(26, 42), range(15))
    strict = set(range(5))
    assert _supported_runs(_release(ESTIMATES), spec, 0, strict) == set(range(5, 10))


def test_the_rule_is_off_by_default():
    """``RUN_SUPPORT_Z`` is ``None`` (it made some TUNE columns worse, see
    its comment): every bin keeps its own test, as before the rule."""
    assert _pipeline_levels.RUN_SUPPORT_Z is None
    spec = _spec(range(26, 42), range(15))
    assert _supported_runs(_release(ESTIMATES), spec, 0, set()) == set()
