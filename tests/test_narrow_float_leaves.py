"""A float column's rows nearly all in one heavy PrivTree leaf, cut into
parts whatever the leaf's depth at the measured alternative ``SOLE_SHARE =
0.9`` (``preprocessing._wide_leaves``; off by default): a coordinate at
-93.63 (sd 0.026) whose tree stalled two levels into ``[-256, -16)`` came
back uniform over ``[-129.3, -65.1)``."""

from __future__ import annotations

import numpy as np
import pytest
from _fine_hist import fine_hist

from skdp_synth.preprocessing import _wide_leaves as wide_leaves
from skdp_synth.preprocessing._coarse_bins import coarse_edges
from skdp_synth.preprocessing._fences import _t
from skdp_synth.preprocessing._wide_leaves import (
    FLOAT_PARTS,
    _deep_t,
    split_wide_leaves,
)

#: the kept leaves and noisy counts of the synthetic ``area`` table's
#: ``longitude`` at ε = 0.3, seed 2 (``benchmarks/bench_tail_past_cap.py
#: --synthetic``; 2,344 rows, ``b = 151.5``): two noise leaves and the
#: stalled leaf holding every row
EDGES = [-362.2869, -256.0, -129.3353, -65.0984]
COUNTS = [408.0, 155.0, 2212.0]
B = 151.5


@pytest.fixture
def rule_on(monkeypatch):
    monkeypatch.setattr(wide_leaves, "SOLE_SHARE", 0.9)


def test_the_rule_is_off_by_default():
    """``SOLE_SHARE`` is ``None`` (it cut smooth TUNE columns too, see its
    comment): the stalled leaf stays whole, as before the rule."""
    assert wide_leaves.SOLE_SHARE is None
    hist = fine_hist(EDGES, COUNTS, scale=B, integer=False)
    edges = coarse_edges(hist, 10)
    assert split_wide_leaves(hist, edges, [], 10) == (edges, [])


def test_a_leaf_holding_the_column_is_cut_past_the_depth_limit(rule_on):
    """The stalled leaf is 0.98 wide in ``t``, 8 times the depth-5 limit
    (``_deep_t``): it is cut into ``FLOAT_PARTS`` coarse bins of equal width,
    each marked for the release's test."""
    hist = fine_hist(EDGES, COUNTS, scale=B, integer=False)
    assert _t(EDGES[3]) - _t(EDGES[2]) > 4 * _deep_t(EDGES[2], EDGES[3])
    edges = coarse_edges(hist, 10)
    assert np.allclose(edges, [EDGES[0], EDGES[2], EDGES[3]])
    out, marks = split_wide_leaves(hist, edges, [], 10)
    parts = np.asarray(out[1:])
    assert parts.size == FLOAT_PARTS + 1
    assert np.allclose(np.diff(parts), (EDGES[3] - EDGES[2]) / FLOAT_PARTS)
    assert marks == list(range(1, FLOAT_PARTS + 1))


def test_two_heavy_leaves_keep_the_depth_limit(rule_on):
    """A smooth density split over two wide leaves, neither above
    ``SOLE_SHARE`` of the confirmed mass, is left whole."""
    counts = [0.0, 1250.0, 1150.0]
    assert max(counts) <= 0.9 * sum(counts)
    hist = fine_hist(EDGES, counts, scale=B, integer=False)
    edges = coarse_edges(hist, 10)
    assert split_wide_leaves(hist, edges, [], 10) == (edges, [])


def test_integer_columns_keep_the_depth_limit(rule_on):
    """An integer column's heavy wide leaf beside comparable ones is not cut
    past ``DEEP_T`` (its ages and counts cost TV1 when cut, see ``DEEP_T``);
    one holding every row (its run's sole leaf) is cut, but in equal parts
    of ``t`` (``WIDE_SOLE_CUT``; equal integer widths, the rule for
    narrower leaves, put a wide leaf's rows in one quarter). Two comparable
    leaves that hold every row between them are a pair that ``INT_PAIR_CUT``
    cuts, both of them; the rule for one leaf is read with it off, and three
    comparable leaves are no pair."""
    e = [0.0, 16.0, 256.0, 4096.0]
    shared = fine_hist(e, [1500.0, 2300.0, 0.0], scale=B, integer=True)
    edges = coarse_edges(shared, 10)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wide_leaves, "INT_PAIR_CUT", False)
        assert split_wide_leaves(shared, edges, [], 10) == (edges, [])
    assert split_wide_leaves(shared, edges, [], 10)[1] != []
    three = fine_hist(
        e + [65536.0], [1500.0, 2300.0, 1500.0, 0.0], scale=B, integer=True
    )
    edges3 = coarse_edges(three, 10)
    assert split_wide_leaves(three, edges3, [], 10) == (edges3, [])
    hist = fine_hist(e, [0.0, 2300.0, 0.0], scale=B, integer=True)
    edges = coarse_edges(hist, 10)
    cut, split = split_wide_leaves(hist, edges, [], 10)
    assert cut == [16.0, 32.0, 65.0, 129.0, 255.0] and split == [0, 1, 2, 3]
