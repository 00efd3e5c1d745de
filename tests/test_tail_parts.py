"""A wide outermost tail leaf of a private numeric domain cut into coarse
bins the release measures (``_wide_leaves.cut_tail_leaves``; off by
default, ``TAIL_PARTS = 1``: ``benchmarks/results/bench_tail_parts.md``),
and a coarse bin holding part of a tail leaf decoded from the leaf's decay
inside it (``_decoding._in_bin``)."""

import numpy as np
import pytest
from _fine_hist import fine_hist

from skdp_synth.preprocessing._decoding import _tail_models, decode_fine

# openintro ``loans_full_schema``'s ``total_collection_amount_ever`` at ε = 1,
# seed 5 of ``benchmarks.bench_suite --light``: 0 for 86.5 % of the rows, a
# kept tail leaf [256, 4096) (598 real rows, mean 1,078) next to [129, 256)
EDGES = [0, 1, 16, 65, 129, 256, 4096]
COUNTS = [6993.5, 0.0, 105.9, 146.9, 342.5, 638.8]


def _loans_hist():
    return fine_hist(EDGES, COUNTS, scale=97.0, finest=[True] + [False] * 5)


@pytest.fixture
def parts(monkeypatch):
    """The parts turned on, as ``benchmarks/bench_tail_parts.py --parts 4``."""
    from skdp_synth.preprocessing import _wide_leaves

    monkeypatch.setattr(_wide_leaves, "TAIL_PARTS", 4)


def test_by_default_no_tail_leaf_is_cut():
    from skdp_synth.preprocessing._wide_leaves import cut_tail_leaves, tail_part_bins

    h = _loans_hist()
    assert cut_tail_leaves(h, [0.0, 1.0, 256.0, 4095.0], [1]) == (
        [0.0, 1.0, 256.0, 4095.0],
        [1],
    )
    assert tail_part_bins(h, [0.0, 1.0, 256.0, 513.0, 4095.0]) == []


def test_a_wide_tail_leaf_is_cut_into_parts_of_equal_width_in_t(parts):
    """``[256, 4096)`` is 4 wide in ``t``: cut at 513, 1026 and 2050 (the
    integers at its powers of two in ``1 + x``), the three outer parts
    tested against the release, the part at its inner edge not."""
    from skdp_synth.preprocessing._wide_leaves import cut_tail_leaves

    h = _loans_hist()
    assert 5 in _tail_models(h, *h.bounds)
    edges, split = cut_tail_leaves(h, [0.0, 1.0, 256.0, 4095.0], [])
    assert edges == [0.0, 1.0, 256.0, 513.0, 1026.0, 2050.0, 4095.0]
    assert split == [3, 4, 5]


def test_a_tail_leaf_no_wider_than_gap_t_and_an_inner_leaf_are_not_cut(parts):
    from skdp_synth.preprocessing._wide_leaves import cut_tail_leaves

    narrow = fine_hist([0, 1, 256, 384], [900.0, 500.0, 40.0], scale=5.0)
    assert 2 in _tail_models(narrow, *narrow.bounds)
    assert cut_tail_leaves(narrow, [0.0, 1.0, 256.0, 383.0], [1]) == (
        [0.0, 1.0, 256.0, 383.0],
        [1],
    )
    # the same wide leaf without a fall: decoded uniformly in t, not a tail
    flat = fine_hist([0, 256, 4096], [10.0, 150.0], scale=1.0)
    assert cut_tail_leaves(flat, [0.0, 256.0, 4095.0], []) == ([0.0, 256.0, 4095.0], [])


def test_a_lower_tail_leaf_is_cut_and_its_outer_parts_tested(parts):
    """A lower tail (a mirrored column): the parts below the one at the
    leaf's inner edge are tested, the first starting the column."""
    from skdp_synth.preprocessing._wide_leaves import cut_tail_leaves

    h = fine_hist([-4096, -256, -129, 0, 1], [638.8, 342.5, 400.0, 6000.0], scale=97.0)
    assert 0 in _tail_models(h, *h.bounds)
    edges, split = cut_tail_leaves(h, [-4096.0, -256.0, 0.0, 1.0], [])
    assert edges[:5] == [-4096.0, -2049.0, -1025.0, -512.0, -256.0]
    assert split == [0, 1, 2]


def test_a_part_of_a_tail_leaf_decodes_from_the_leaf_decay_inside_it():
    """The rows the release puts in the part ``[1026, 2050)`` of the tail leaf
    follow the leaf's decay from 256 conditioned on the part; drawn from the
    whole leaf's decay and clipped to the part (before), every one of them
    came back at 1026. A bin holding the whole leaf is decoded as before."""
    h = _loans_hist()
    rng = np.random.default_rng(0)
    n = 4000
    ones = np.ones(n, bool)
    v = decode_fine(h, np.full(n, 1026.0), np.full(n, 2050.0), ~ones, rng)
    assert v.min() >= 1026 and v.max() <= 2049
    assert np.median(v) > 1100 and v.std() > 100
    whole = decode_fine(h, np.full(n, 256.0), np.full(n, 4095.0), ones, rng)
    assert np.median(whole) < 513  # the leaf's decay from 256, as before


def test_the_closed_last_bin_of_a_split_tail_leaf_reaches_its_last_integer():
    """An integer tail leaf ``[4, 8)`` split into one-integer bins, the last
    bin ``[6, 7]`` closed (loans' ``inquiries_last_12m`` at ε = 1, seed 3 of
    ``benchmarks.bench_suite --light``, its rows past the cap clipped to 7):
    7 gets its share of the leaf's decay inside the bin, 45 %; drawn from
    the whole leaf's decay and clipped to the bin (before), 17 %."""
    h = fine_hist([0, 1, 4, 8], [2000.0, 3000.0, 1161.5], scale=40.0)
    assert _tail_models(h, *h.bounds)[2][4] == "t"
    n = 20000
    rng = np.random.default_rng(0)
    v = decode_fine(h, np.full(n, 6.0), np.full(n, 7.0), np.ones(n, bool), rng)
    assert set(np.unique(v)) == {6.0, 7.0}
    assert 0.35 < np.mean(v == 7.0) < 0.55


def test_the_copula_quantiles_stay_increasing_inside_a_part():
    """The copula's quantile ``u`` reads the part's own decay: increasing in
    ``u`` and spread over the part (clipped from the whole leaf's decay,
    two thirds of them came back at 513)."""
    h = _loans_hist()
    u = np.linspace(0.0, 1.0, 101)
    n = u.size
    v = decode_fine(
        h, np.full(n, 513.0), np.full(n, 1026.0), np.zeros(n, bool), None, u=u
    )
    assert np.all(np.diff(v) >= 0) and v[0] == 513 and v[-1] <= 1025
    assert np.mean(v == 513) < 0.1


def test_the_pipeline_tests_the_tail_parts_strictly(parts):
    """The outer parts are tested at ``TENTATIVE_SUPPORT_Z``: one kept on
    noise puts rows far past the data (credit's ``Debt``, ε = 1, seed 2)."""
    from skdp_synth._pipeline_levels import _tail_parts
    from skdp_synth.preprocessing._column_spec import _ColumnSpec

    levels = [0.0, 1.0, 256.0, 513.0, 1026.0, 2050.0, 4095.0]
    spec = _ColumnSpec("c", "numeric", levels, False, np.dtype(int), integer=True)
    spec.fine = _loans_hist()
    assert _tail_parts(spec) == {3, 4, 5}


@pytest.mark.slow
def test_a_heavy_tail_in_one_wide_leaf_keeps_its_rows_far_from_the_inner_edge(parts):
    """``benchmarks/bench_tail_parts.py``'s table at ε = 1, seed 7: the kept
    tail leaf ``[256, 1025)`` is 2 wide in ``t``; the rows at or above 256
    come back with a mean over a third of the real rows' there (1,682; before
    the parts: 280, the rows' std 0.09 times the real one)."""
    from benchmarks.bench_tail_parts import COLUMN, fit, table

    df = table()
    rows, _, _ = fit(df, 1.0, 7)
    real = df[COLUMN].to_numpy(np.float64)
    x = rows[COLUMN].to_numpy(np.float64)
    assert x[x >= 256].mean() > real[real >= 256].mean() / 3
