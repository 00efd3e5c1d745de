"""Small-integer and count columns whose private domain broke their rows'
spread silently (``benchmarks/bench_count_columns.py``)."""

import numpy as np

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
