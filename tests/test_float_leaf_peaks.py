"""A float column's heavy, deep PrivTree leaf is cut into parts only where
the released histogram says its rows may sit in a narrow band: its density
stands out of its neighbours' (``FLOAT_PEAK_RATIO``), or its count may be
noise (``preprocessing._wide_leaves._peaked``)."""

from __future__ import annotations

import numpy as np
from _fine_hist import fine_hist
from scipy.stats import norm

from skdp_synth.preprocessing import _wide_leaves as wide_leaves
from skdp_synth.preprocessing._coarse_bins import coarse_edges
from skdp_synth.preprocessing._wide_leaves import (
    FLOAT_PEAK_RATIO,
    LEAF_CONFIRM_Z,
    _unresolved,
    split_wide_leaves,
)

#: the leaves PrivTree kept on a normal(200, 50) float column of 4,000 rows
#: at ε = 1 (a churn-like table's minutes, ``benchmarks/bench_float_cut.py``)
SMOOTH = [0.0, 129.335, 153.447, 167.127, 182.02, 198.231, 215.878, 235.088, 256.0]
SMOOTH = np.array([*SMOOTH, 1025.123])
B = 42.4


def _normal_counts(edges, n=4000, mean=200.0, sd=50.0):
    return np.round(n * np.diff(norm.cdf(edges, mean, sd)))


def test_the_peak_rule_is_off_by_default():
    """``FLOAT_PEAK_RATIO`` is 0 (the rule off: it regressed synthetic
    latitudes, see its comment): a smooth column's heavy leaves are cut as
    before the rule."""
    assert FLOAT_PEAK_RATIO == 0.0
    hist = fine_hist(SMOOTH, _normal_counts(SMOOTH), scale=B, integer=False)
    edges = coarse_edges(hist, 10)
    assert split_wide_leaves(hist, edges, [], 10) != (edges, [])


def test_a_smooth_float_columns_leaves_stay_whole(monkeypatch):
    """At the measured alternative ``FLOAT_PEAK_RATIO = 3``: the leaves of a
    normal column, each holding 8-14 % of its rows at densities at most 1.5
    times their neighbours' mean, are left whole (they are cut into 16
    parts each with the rule off, the release then measuring ~30 rows a
    part under its noise), though the column's spread is open
    (``_unresolved``)."""
    monkeypatch.setattr(wide_leaves, "FLOAT_PEAK_RATIO", 3.0)
    hist = fine_hist(SMOOTH, _normal_counts(SMOOTH), scale=B, integer=False)
    assert _unresolved(hist, *hist.cap)
    edges = coarse_edges(hist, 10)
    assert split_wide_leaves(hist, edges, [], 10) == (edges, [])


def test_a_leaf_standing_out_of_its_neighbours_is_cut(monkeypatch):
    """The same column with one leaf's count 4 times what its width holds
    (a band of rows inside it) is cut into parts; so is a leaf whose rows sit
    at its edge beside a dense neighbour and an empty one (a percent column
    at 100: density 4 times the neighbours' mean), and a leaf under
    ``LEAF_CONFIRM_Z`` noise sds whatever its neighbours (it may be noise:
    the release's test of its parts drops it where it is empty). At the
    measured alternative ``FLOAT_PEAK_RATIO = 3``."""
    monkeypatch.setattr(wide_leaves, "FLOAT_PEAK_RATIO", 3.0)
    counts = _normal_counts(SMOOTH)
    peak = counts.copy()
    peak[4] *= 4.0  # [182.02, 198.231)
    hist = fine_hist(SMOOTH, peak, scale=B, integer=False)
    edges, split = split_wide_leaves(hist, coarse_edges(hist, 10), [], 10)
    assert 182.02 in edges and 198.231 in edges
    inside = [v for v in edges if 182.02 < v < 198.231]
    assert len(inside) == 15 and len(split) == 16
    pct = fine_hist(
        [65.098, 91.817, 93.807, 95.84, 100.038, 108.988],
        [1900.0, 1700.0, 840.0, 5200.0, 0.0],
        scale=323.2,
        integer=False,
    )
    edges, split = split_wide_leaves(pct, coarse_edges(pct, 10), [], 10)
    assert len([v for v in edges if 95.84 < v < 100.038]) == 15
    # a leaf of 600 rows at b = 150 (2.8 sds), as dense as its neighbours
    low = [1500.0, 100.0, 100.0, 500.0, 600.0, 500.0, 100.0, 100.0, 1500.0]
    assert low[4] < LEAF_CONFIRM_Z * np.sqrt(2.0) * 150.0
    hist = fine_hist(SMOOTH, low, scale=150.0, integer=False)
    assert _unresolved(hist, *hist.cap)
    edges, split = split_wide_leaves(hist, coarse_edges(hist, 10), [], 10)
    assert len([v for v in edges if 182.02 < v < 198.231]) == 15
