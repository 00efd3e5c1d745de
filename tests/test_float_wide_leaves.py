"""A heavy, wide PrivTree leaf of a float column becomes coarse bins the
release measures; the unresolved test ignores noise leaves; a column whose
rows rest on two cut parts, and one whose rows hold a missing share its
release cannot tell from none, are named (``preprocessing._wide_leaves``,
``._spread.wide_parts_reason``, ``._decoding.degenerate_reasons``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _default_fit import fit_default
from _fine_hist import fine_hist

from skdp_synth.preprocessing._column_spec import _ColumnSpec
from skdp_synth.preprocessing._numeric_domain import FineHistogram


def _hist(edges, counts, scale=10.0, integer=False):
    return fine_hist(edges, counts, scale=scale, integer=integer)


def test_a_heavy_wide_float_leaf_far_from_0_is_cut_into_float_parts():
    """A latitude-like float column whose only kept leaf is ``[41.33,
    42.24)`` (depth 7 of its cell ``[16, 256)``): cut into FLOAT_PARTS bins
    of equal width, all marked for the release's support test, the cut
    bins listed by ``cut_bins``. A leaf as wide in ``t`` near 0 (depth 3 of
    ``[2^-10, 1)``: a normal(0, 1) column's) is kept whole."""
    from skdp_synth.preprocessing._wide_leaves import (
        FLOAT_PARTS,
        cut_bins,
        split_wide_leaves,
    )

    assert FLOAT_PARTS == 16
    hist = _hist([41.3333, 42.2411], [2180.0], scale=94.0)
    edges, split = split_wide_leaves(hist, [41.3333, 42.2411], [], 10)
    assert len(edges) == FLOAT_PARTS + 1 and split == list(range(FLOAT_PARTS))
    assert edges[0] == 41.3333 and edges[-1] == 42.2411
    assert np.allclose(np.diff(edges), (42.2411 - 41.3333) / FLOAT_PARTS)
    assert cut_bins([41.3333, 42.2411], edges) == list(range(FLOAT_PARTS))
    near0 = _hist([-2.0, -0.8342, -0.6822, 0.0], [300.0, 900.0, 1200.0])
    cuts = [-2.0, -0.8342, -0.6822, 0.0]
    assert split_wide_leaves(near0, cuts, [], 10) == (cuts, [])


def test_the_unresolved_test_ignores_a_noise_leaf():
    """A year column's ``[1961, 2004)`` (2003's rows) and ``[2004, 2049)``
    beside a noise leaf ``[1580, 1649)`` of 2.5 b: the noise leaf's distance
    made the leaves look resolved and nothing was cut; leaves under
    LEAF_CONFIRM_Z noise sds are now left out of the test, and the heavy
    inner leaf is cut."""
    from skdp_synth.preprocessing._wide_leaves import (
        LEAF_CONFIRM_Z,
        _unresolved,
        split_wide_leaves,
    )

    assert LEAF_CONFIRM_Z == 3.0
    b = 83.3
    hist = _hist(
        [1580, 1649, 1961, 2004, 2049], [2.5 * b, 0.0, 1300.0, 2060.0], b, True
    )
    hist = FineHistogram(
        hist.edges,
        np.array([2.5 * b, 0.0, 1300.0, 2060.0]),
        0.0,
        np.zeros(4, dtype=bool),
        True,
        (1580.0, 2049.0),
        True,
        b,
        np.zeros(4, dtype=bool),
    )
    assert _unresolved(hist, *hist.cap)
    edges, split = split_wide_leaves(hist, [1580.0, 1961.0, 2004.0, 2048.0], [], 10)
    assert 2004.0 in edges and len(edges) > 4 and split


def test_rows_on_two_cut_parts_are_named():
    """A float column cut into 16 parts, its rows on two adjacent ones
    (0.13 and 0.87): named; the same rows spread over six parts are not."""
    from skdp_synth.preprocessing._decoding import degenerate_reasons
    from skdp_synth.preprocessing._spread import WIDE_PARTS_SHARE, wide_parts_reason

    assert WIDE_PARTS_SHARE == pytest.approx(0.95)
    levels = list(np.linspace(40.4445, 42.2411, 17))
    spec = _ColumnSpec("lat", "numeric", levels, False, np.dtype(float))
    spec.fine = _hist([40.4445, 42.2411], [2400.0], scale=94.0)
    spec.split = spec.wide = tuple(range(16))
    two = np.zeros(16)
    two[13:15] = [0.13, 0.87]
    text = wide_parts_reason(spec, two)
    assert text is not None and "42.2411" not in text and "wide leaf" in text
    reasons = degenerate_reasons(spec, None, None, None, False, two)
    assert any("wide leaf" in r for r in reasons)
    six = np.zeros(16)
    six[8:14] = 1.0 / 6.0
    assert wide_parts_reason(spec, six) is None
    spec.wide = ()
    assert wide_parts_reason(spec, two) is None


def test_a_missing_share_the_release_cannot_tell_from_none_is_named():
    """A kept missing level released at 1.5 sds (``45 ± 30`` of 2,400)
    whose rows hold 4 sds (120 rows): within MISSING_ROWS_Z sds of the
    release's estimate, so not named before, but more than a column
    without missing values allows; rows at 1 sd are not named."""
    from skdp_synth.preprocessing._decoding import degenerate_reasons

    levels = [0.0, 8.0, 12.0, 16.0]
    spec = _ColumnSpec("momed", "numeric", levels, True, np.dtype(float))
    est = [(600.0, 30.0), (1200.0, 30.0), (555.0, 30.0), (45.0, 30.0)]
    got = degenerate_reasons(spec, est, 2400.0, 120.0 / 2400.0, True)
    assert any("cannot tell its missing share" in r for r in got), got
    assert degenerate_reasons(spec, est, 2400.0, 30.0 / 2400.0, True) == []
    sure = est[:3] + [(100.0, 30.0)]
    assert degenerate_reasons(spec, sure, 2400.0, 120.0 / 2400.0, True) == []
    # released at 2.83 sds: rows at 3.07 sds follow the release (within one
    # sd of its estimate) and are not named; rows at 4 sds are
    edge = est[:3] + [(85.0, 30.0)]
    assert degenerate_reasons(spec, edge, 2400.0, 92.0 / 2400.0, True) == []
    got = degenerate_reasons(spec, edge, 2400.0, 120.0 / 2400.0, True)
    assert any("cannot tell its missing share" in r for r in got), got


def _latitude(seed):
    rng = np.random.default_rng(0)
    n = 2300
    df = pd.DataFrame(
        {"lat": 42.0 + 0.06 * rng.beta(3, 3, n)}
        | {f"c{i}": rng.normal(size=n) for i in range(30)}
    )
    pipe = fit_default(df, 1.0, seed)
    rows = pipe.sample(n, random_state=seed)
    return rows["lat"].std() / df["lat"].std(), pipe


@pytest.mark.parametrize("seed", [0, 3, 6])
def test_a_narrow_float_column_far_from_0_keeps_its_spread_or_is_named(seed):
    """A latitude-like column (42.0-42.06, 2,300 rows, 30 other columns,
    ε = 1): its PrivTree stops on leaves 2-30 times wider than its rows,
    and the rows came back with 3.2 (seed 0) and 11.7 (seed 3) times the
    data's std, unnamed; now in [0.5, 2] or named."""
    ratio, pipe = _latitude(seed)
    assert 0.5 <= ratio <= 2.0 or "lat" in pipe.degenerate_columns_, ratio


@pytest.mark.parametrize("seed", [8, 9])
def test_a_year_column_beside_noise_leaves_keeps_its_spread_or_is_named(seed):
    """Years 2003-2009 (2,400 rows, 10 other columns, ε = 0.5): noise
    leaves beside ``[2004, 2049)`` kept it whole, rows' std 2.8 (seed 8)
    and 8.1 (seed 9) times the data's, unnamed; now in [0.5, 2] or named."""
    rng = np.random.default_rng(0)
    n = 2400
    df = pd.DataFrame(
        {
            "year": rng.integers(2003, 2010, n),
            "age": np.clip(rng.normal(42, 11, n).round(), 18, 80).astype(int),
        }
        | {f"k{i}": rng.choice(list("abcde"), n) for i in range(7)}
        | {"lw": rng.normal(4.6, 0.35, n), "w": np.exp(rng.normal(4.6, 0.35, n))}
    )
    pipe = fit_default(df, 0.5, seed)
    rows = pipe.sample(n, random_state=seed)
    ratio = rows["year"].std() / df["year"].std()
    assert 0.5 <= ratio <= 2.0 or "year" in pipe.degenerate_columns_, ratio


class _Release:
    """A release's model rows and 1-way estimates (``(T̂, σ)`` per level)."""

    invariants = None
    random_state = 0

    def __init__(self, rows, found):
        self._model_rows = rows
        self._found = found

    def _one_way_level_estimate(self, j, level):
        return self._found[int(level)]


def test_a_wide_leaf_whose_parts_the_release_cannot_locate_is_decoded_whole():
    """A float column's wide leaf cut into 16 parts (bins 1-16) holding
    ~45 rows each, released with σ = 140 (mlc_churn's charges at ε = 0.3):
    one part passes TENTATIVE_SUPPORT_Z, carrying under UNCUT_SHARE of the
    leaf's estimate, so no part is tested and the model's rows, which the
    noise put on two parts, are spread over the whole leaf; the parts of a
    leaf whose rows rest on two parts that pass (a latitude's) stay cut."""
    from skdp_synth._pipeline_levels import UNCUT_SHARE, _uncut_leaves

    assert UNCUT_SHARE == 0.5
    levels = list(np.linspace(16.0, 17.5, 17)) + [30.0]
    spec = _ColumnSpec("charge", "numeric", levels, False, np.dtype(float))
    spec.fine = _hist([16.0, 17.5, 30.0], [720.0, 2000.0], scale=140.0)
    spec.wide = tuple(range(16))
    rows = np.zeros((2720, 1), dtype=np.int64)
    rows[:600, 0], rows[600:720, 0], rows[720:, 0] = 3, 4, 16
    est = [(45.0 + 140.0 * z, 140.0) for z in np.tile([-1.0, 1.0], 8)]
    est[5] = (500.0, 140.0)
    final = _Release(rows, est + [(2000.0, 140.0)])
    assert _uncut_leaves(final, spec, 0) == set(range(16))
    got = np.bincount(final._model_rows[:720, 0], minlength=17)
    assert got[16] == 0 and got[:16].min() >= 20 and got[:16].max() <= 80
    assert (final._model_rows[720:, 0] == 16).all()
    located = [(0.0, 94.0)] * 16
    located[3], located[4] = (600.0, 94.0), (120.0, 94.0)
    final = _Release(rows, located + [(2000.0, 140.0)])
    assert _uncut_leaves(final, spec, 0) == set()
    assert final._model_rows is rows


def test_two_touching_float_leaves_that_hold_the_rows_are_both_cut_in_parts_of_t():
    """nhefs' ``tax71`` (0.52-1.52, 1,303 rows, 66 columns, ε = 1, seed 1
    of ``benchmarks/bench_suite.py``, ``b = 69.7``) kept only the float
    leaves ``[0.68, 1.0)`` and ``[1.0, 2.41)`` (6.1 and 8.7 ``b``) and its
    rows came back over both, std x2.30 with no warning. Both leaves of
    such a pair are cut into WIDE_PARTS parts of equal width in ``t`` (not
    floored: a float column), every part marked for the release's test
    (that fit's rows: x0.52); with FLOAT_PAIR_CUT off (the earlier
    behaviour), neither is. Below 0, or with a partner under
    ``LEAF_CONFIRM_Z`` noise sds, nothing is cut."""
    from skdp_synth.preprocessing import _wide_leaves as wl
    from skdp_synth.preprocessing._numeric_domain import _t, _x

    assert wl.FLOAT_PAIR_CUT is True and wl.WIDE_PARTS == 4
    b = 69.7
    hist = _hist([0.68, 1.0, 2.41], [423.8, 607.7], scale=b)
    coarse = [0.68, 1.0, 2.41]
    edges, split = wl.split_wide_leaves(hist, coarse, [], 10)

    def parts(lo, hi):
        step = (float(_t(hi)) - float(_t(lo))) / 4
        return [lo] + [float(_x(float(_t(lo)) + i * step)) for i in (1, 2, 3)]

    assert edges == parts(0.68, 1.0) + parts(1.0, 2.41) + [2.41]
    assert split == list(range(8))
    assert 1.25 < edges[5] < 1.35 and edges[5] != round(edges[5])  # not floored
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wl, "FLOAT_PAIR_CUT", False)
        assert wl.split_wide_leaves(hist, coarse, [], 10) == (coarse, [])
    neg = _hist([-2.41, -1.0, -0.68], [607.7, 423.8], scale=b)
    assert wl.split_wide_leaves(neg, [-2.41, -1.0, -0.68], [], 10)[1] == []
    weak = _hist([0.68, 1.0, 2.41], [423.8, 2.0 * b], scale=b)
    assert wl.split_wide_leaves(weak, coarse, [], 10)[1] == []


def test_a_float_pairs_lighter_leaf_needs_two_noise_sds():
    """nhefs' ``price71`` (1.51-2.69, 1,303 rows, ε = 1, seed 0 of
    ``benchmarks/bench_suite.py``, ``b = 69.7``) kept ``[1, 2.41)`` (1,115
    noisy rows) and ``[2.41, 4.83)`` (210.5: 3.02 ``b``, 2.14 noise sds,
    under ``LEAF_CONFIRM_Z``) and its rows came back over both, std x2.69
    with no warning. The lighter leaf of a float pair needs only
    ``FLOAT_PAIR_PARTNER_Z`` = 2 noise sds (``2 sqrt(2) b``) where the other
    passes ``LEAF_CONFIRM_Z``: both are cut in WIDE_PARTS parts of ``t``.
    Just under 2 sds, or with neither leaf confirmed, nothing is cut; an
    integer pair keeps ``LEAF_CONFIRM_Z`` for both."""
    from skdp_synth.preprocessing import _wide_leaves as wl

    assert wl.FLOAT_PAIR_PARTNER_Z == 2.0 and wl.LEAF_CONFIRM_Z == 3.0
    b = 69.7
    coarse = [1.0, 2.41, 4.83]
    sd2 = 2.0 * np.sqrt(2.0) * b
    assert sd2 < 210.5 < wl.LEAF_CONFIRM_Z * np.sqrt(2.0) * b
    hist = _hist(coarse, [1115.3, 210.5], scale=b)
    edges, split = wl.split_wide_leaves(hist, coarse, [], 10)
    assert split == list(range(8)) and len(edges) == 9
    assert edges[0] == 1.0 and edges[4] == 2.41 and edges[-1] == 4.83
    under = _hist(coarse, [1115.3, sd2 - 1.0], scale=b)
    assert wl.split_wide_leaves(under, coarse, [], 10) == (coarse, [])
    # neither leaf confirmed: each 2.5 noise sds
    both = _hist(coarse, [2.5 * np.sqrt(2.0) * b] * 2, scale=b)
    assert wl.split_wide_leaves(both, coarse, [], 10) == (coarse, [])
    ints = _hist([1, 16, 65], [1115.3, 210.5], scale=b, integer=True)
    assert not wl._pair_in_run(ints, 1) and not wl._pair_in_run(ints, 0)


def test_a_cut_pair_the_release_cannot_locate_falls_back_leaf_by_leaf():
    """The eight parts of a cut float pair (four of ``[0.68, 1.0)``, four of
    ``[1.0, 2.41)``, as ``tax71``'s) are two leaves, not one run of eight:
    where the release locates neither leaf's rows, each leaf's model rows
    are spread over its own four parts, so the rows keep the model's share
    of each leaf (36 % and 64 % here) instead of half and half."""
    from skdp_synth._pipeline_levels import _leaf_of_parts, _uncut_leaves
    from skdp_synth.preprocessing._wide_leaves import split_wide_leaves

    hist = _hist([0.68, 1.0, 2.41], [423.8, 607.7], scale=69.7)
    levels, split = split_wide_leaves(hist, [0.68, 1.0, 2.41], [], 10)
    assert len(levels) == 9 and split == list(range(8))
    spec = _ColumnSpec("tax71", "numeric", levels, False, np.dtype(float))
    spec.fine = hist
    spec.wide = tuple(range(8))
    assert _leaf_of_parts(spec, range(8)) == {b: b // 4 for b in range(8)}
    rows = np.zeros((1000, 1), dtype=np.int64)
    rows[:360, 0], rows[360:, 0] = 3, 4  # the model's rows on two parts
    weak = [(50.0, 140.0)] * 8  # no part passes: neither leaf located
    final = _Release(rows, weak)
    assert _uncut_leaves(final, spec, 0) == set(range(8))
    got = np.bincount(final._model_rows[:, 0], minlength=8)
    assert got[:4].sum() == 360 and got[4:].sum() == 640
    assert got.min() >= 50  # spread over each leaf's parts
