"""Small-integer and count columns whose private domain broke their rows'
spread silently (``benchmarks/bench_count_columns.py``)."""

import numpy as np
import pytest

from skdp_synth.preprocessing._decoding import _tail_models, decode_fine
from skdp_synth.preprocessing._numeric_domain import FineHistogram


def _year_hist():
    """A year column 2003-2009's released histogram at ε = 1 (seed 13 of
    ``benchmarks.bench_count_columns``): a noise leaf ``[1919, 1948)`` kept
    below the cap (1948), and ``[1961, 2004)`` holding the 2003s."""
    edges = np.array([1919.0, 1948.0, 1961.0, 2004.0, 2005.0, 2008.0, 2014.0])
    counts = np.array([84.1, 0.0, 514.8, 438.7, 1234.2, 851.7])
    finest = np.array([False, False, False, True, False, False])
    return FineHistogram(edges, counts, 0.0, finest, True, (1948.0, 2014.0), True, 48.5)


def test_a_kept_leaf_outside_the_cap_is_not_the_mode():
    """The leaf outside the cap had no width there: its density was infinite,
    it was taken for the mode, and ``[1961, 2004)`` lost its tail model."""
    h = _year_hist()
    tails = _tail_models(h, *h.bounds)
    assert 0 not in tails
    inner, side, *_ = tails[2]
    assert (inner, side) == (2004.0, -1)


def test_the_leaf_next_to_it_decodes_from_its_inner_edge():
    """Its rows come back near 2003, not spread over 1961-2003 (the rows'
    std was 4.90 times the data's)."""
    h = _year_hist()
    n = 5_000
    rng = np.random.default_rng(0)
    v = decode_fine(h, np.full(n, 1961.0), np.full(n, 2004.0), np.zeros(n, bool), rng)
    assert v.min() >= 1961.0 and v.max() < 2004.0
    assert np.mean(v >= 2000.0) > 0.95


def _distance(integer=True, top=475.0, others=1.0):
    """IBM attrition's ``DistanceFromHome`` (whole numbers 1-29, 1,470 rows)
    at ε = 1, seed 6 of ``benchmarks.bench_suite --light``: capped at 11
    with 30 % of its rows past the cap; the release's estimates of its
    bins ``[1, 2)`` .. ``[9, 10]`` and the domain's kept leaves."""
    from types import SimpleNamespace

    hist = FineHistogram(
        np.array([1.0, 2.0, 3.0, 4.0, 8.0, 11.0]),
        np.array([175.0, 144.0, 281.0, 312.0, 197.0]),
        0.0, np.array([True, True, True, False, False]), integer, (1.0, 11.0),
        True, 41.7,
    )  # fmt: skip
    levels = [float(v) for v in range(1, 11)]
    spec = SimpleNamespace(
        kind="numeric", name="d", levels=levels, n_levels=9, fine=hist,
        missing=False, time_unit=None,
    )  # fmt: skip
    ests = [others * e for e in (162.0, 165.0, 112.0, 29.0, 8.0, 37.0, 78.0, 63.0)]
    ests.append(top)
    return spec, [(e, 40.0) for e in ests]


def test_a_count_tail_cut_at_the_cap_is_named():
    """278 rows more in the top bin ``[9, 10]`` than the domain kept in the
    whole leaf ``[8, 11)`` (3.9 sds at a release sd of 40, a quarter of the
    column's rows) but under twice its 197: the capped-tail rule, reading
    the whole leaf, left it silent (std ratio 0.44), and the count-tail
    rule names it. The bin holds the leaf's part from 9 on only, 0.63 of
    its width in ``t`` (125 rows): read so, the capped-tail rule names it
    too (350 rows, 6.4 sds, past twice 125). The count-tail rule reads
    whole leaves (it has no ``2 K`` guard)."""
    from skdp_synth.preprocessing._count_tail import cut_count_tail_reason
    from skdp_synth.preprocessing._decoding import degenerate_reasons
    from skdp_synth.preprocessing._fences import (
        capped_tail_reason,
        leaf_shares,
        top_bin_excess,
    )

    spec, ests = _distance()
    share = leaf_shares(spec.fine.edges, 9.0, 11.0)
    assert share[-1] == pytest.approx(
        (np.log2(12.0) - np.log2(10.0)) / (np.log2(12.0) - np.log2(9.0))
    )
    assert np.array_equal(share[:-1], np.zeros(4))
    assert "where its domain kept 125" in capped_tail_reason(spec, ests)
    text = cut_count_tail_reason(spec, ests)
    assert "past the cap 10" in text
    # a declared bound leaves the cap inside it private: public bins are the
    # advice (tests/test_capped_tail_warning.py measures both)
    assert "declare public bins, bin_edges=" in text
    assert top_bin_excess(spec, ests, split=False)[4] == 197.0
    reasons = degenerate_reasons(spec, ests, 1129.0, None, False)
    assert any("past the cap" in r for r in reasons)


def test_a_float_column_is_named_and_a_small_excess_is_not():
    """Years of schooling with missing values are floats: named the same;
    only where the excess passes a fifth of the column's rows (here 300
    rows, 4.2 sds, 17 % of a column whose other bins hold twice as many)."""
    from skdp_synth.preprocessing._count_tail import cut_count_tail_reason

    spec, ests = _distance(integer=False)
    assert "past the cap 10" in cut_count_tail_reason(spec, ests)
    spec, ests = _distance(top=197.0 + 300.0, others=2.0)
    assert cut_count_tail_reason(spec, ests) is None


def _vmail(inner=0.0, top=802.0):
    """A zero-inflated count (72 % zero, the rest 4-51) at ε = 0.3, seed 2
    of ``benchmarks.bench_count_columns``: its non-zero part in one leaf
    ``[16, 256)`` past the emptied ``[11, 16)`` (``inner``: that leaf's
    count), the bin ``[1, 16)`` dropped by the release (share 0)."""
    from types import SimpleNamespace

    hist = FineHistogram(
        np.array([0.0, 1.0, 8.0, 11.0, 16.0, 256.0]),
        np.array([2328.0, 0.0, 335.0, inner, 976.0]),
        0.0, np.array([True, False, False, False, False]), True, (0.0, 256.0),
        True, 161.6,
    )  # fmt: skip
    spec = SimpleNamespace(
        kind="numeric", name="v", levels=[0.0, 1.0, 16.0, 255.0], n_levels=3,
        fine=hist, missing=False, time_unit=None, wide=(),
    )  # fmt: skip
    return spec, [2113.0, 0.0, top]


def test_a_wide_outer_leaf_past_an_emptied_stretch_is_named():
    """Drawn uniformly in ``t`` over ``[16, 256)``, the rows' std was 3.72
    times the data's; at the leaf's inner edge it would be a sixth of that."""
    from skdp_synth.preprocessing._count_tail import wide_outer_leaf_reason
    from skdp_synth.preprocessing._decoding import degenerate_reasons

    spec, shares = _vmail()
    assert "[16, 256)" in wide_outer_leaf_reason(spec, shares)
    ests = [(2113.0, 100.0), (133.0, 100.0), (802.0, 100.0)]
    reasons = degenerate_reasons(spec, ests, 3000.0, None, False, shares)
    assert any("one wide leaf [16, 256)" in r for r in reasons)


def test_a_touching_or_a_light_outer_leaf_is_not_named():
    """A kept leaf next to it (a tail model may continue its density), or
    under 5 % of the rows (here 2 %), is not named."""
    from skdp_synth.preprocessing._count_tail import wide_outer_leaf_reason

    spec, shares = _vmail(inner=300.0)
    assert wide_outer_leaf_reason(spec, shares) is None
    spec, shares = _vmail(top=43.0)
    assert wide_outer_leaf_reason(spec, shares) is None
