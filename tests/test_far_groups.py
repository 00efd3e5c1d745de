"""A coarse bin's far groups of kept leaves are emptied while its kept
leaves claim more rows than the release's estimate of the bin, so the
decoder draws none of the bin's rows there
(``_bin_mass.drop_unneeded_far_groups``, run by the pipeline's level
rules). Released quantities only (post-processing)."""

from __future__ import annotations

import numpy as np
from _fine_hist import fine_hist
from test_bin_support import _run_levels, _spec

from skdp_synth.preprocessing._decoding import decode_fine

B = 70.0
#: a zero-inflated column's positive bin [1, 2^29): two kept leaves next to
#: the 0s' side, then, past emptied stretches, two noise leaves near 1e5 and
#: 4e8 (the shape of the fit that exploded: std x139,105)
EDGES = [0, 1, 65, 256, 4096, 65536, 262145, 2.0**28, 2.0**29]
COUNTS = [2100.0, 0.0, 187.0, 214.0, 0.0, 159.0, 0.0, 151.0]
FINEST = [True] + [False] * 7
TENT = [False] + [True] * 7
LEVELS = [0.0, 1.0, 2.0**29 - 1]


def _zero_inflated():
    return fine_hist(EDGES, COUNTS, scale=B, finest=FINEST, tentative=TENT)


def _decoded(hist, n=20000):
    rng = np.random.default_rng(0)
    return decode_fine(
        hist, np.full(n, 1.0), np.full(n, LEVELS[-1]), np.ones(n, bool), rng
    )


def test_far_noise_groups_are_not_decoded():
    """The release puts the positive bin at 287 ± 71 rows; its kept leaves
    claim 711, more than ``FAR_EXCESS_Z`` sds of the difference above it,
    so through the pipeline's level rules the outermost groups are emptied
    until the rest (401 noisy rows by the 0s) is within the noise: no row
    of the bin decodes at or beyond 4,096. Before, about 3 % of the bin's
    rows decoded near 1e5 and 4e8."""
    spec = _spec("porch", LEVELS, _zero_inflated())
    before = _decoded(spec.fine)
    # the decoder alone draws the group near 1e5; the one at 2^28 is ten
    # doublings past it, a far tail (_far_tail.FAR_TAIL_T) it no longer draws
    assert 65536 <= before.max() < 2.0**28
    _run_levels([spec], [[(2107.0, 71.0), (287.0, 71.0)]])
    np.testing.assert_allclose(spec.fine.counts, [2100, 0, 187, 214, 0, 0, 0, 0])
    assert _decoded(spec.fine).max() < 4096


def test_far_groups_the_release_sees_stay():
    """Where the kept leaves' sum is within ``FAR_EXCESS_Z`` sds of the
    release's estimate of the bin (650 rows: 711 claimed), the far groups
    hold rows the release measured and stay (a real group past noise leaves
    by the 0s, as a zero-inflated column's far tail at a small ε); at 480
    rows only the outermost group goes. A far leaf confirmed by its own
    count (``b ln(L / 0.01)``) stays, and the bin that holds the core's
    densest leaf is never touched."""
    from skdp_synth.preprocessing._bin_mass import (
        FAR_EXCESS_Z,
        drop_unneeded_far_groups,
    )

    def sd(m):
        return np.sqrt(71.0**2 + 2 * m * B * B)

    hist = _zero_inflated()
    assert 711.0 - 650.0 < FAR_EXCESS_Z * sd(4)
    out = drop_unneeded_far_groups(hist, LEVELS, [(2107.0, 71.0), (650.0, 71.0)])
    assert out is hist
    assert 711.0 - 480.0 > FAR_EXCESS_Z * sd(4)
    assert 560.0 - 480.0 < FAR_EXCESS_Z * sd(3)
    out = drop_unneeded_far_groups(hist, LEVELS, [(2107.0, 71.0), (480.0, 71.0)])
    np.testing.assert_allclose(out.counts, [2100, 0, 187, 214, 0, 159, 0, 0])
    strong = COUNTS[:7] + [B * np.log(len(COUNTS) / 0.01) + 1.0]
    hist = fine_hist(EDGES, strong, scale=B, finest=FINEST, tentative=TENT)
    out = drop_unneeded_far_groups(hist, LEVELS, [(2107.0, 71.0), (287.0, 71.0)])
    assert out is hist
    # one bin over everything, the core's: its outer group is confirmed
    one = drop_unneeded_far_groups(hist, [0.0, LEVELS[-1]], [(2500.0, 71.0)])
    assert one is hist


#: a latitude's lower coarse bin [38.72, 42.01): two noise leaves, an
#: emptied leaf 0.015 wide in ``t``, the real thin edge [41.78, 42.01), then
#: the body above 42.01 (ames' ``Latitude`` at ε = 1, the fit that came
#: back with a std ratio of 15.8)
LAT_EDGES = [38.72, 39.57, 40.44, 41.33, 41.78, 42.01, 42.03, 42.06]
LAT_COUNTS = [0.0, 76.0, 134.0, 0.0, 148.0, 1200.0, 900.0]
LAT_LEVELS = [38.72, 42.01, 42.06]
LAT_FOUND = [(164.0, 52.0), (2100.0, 52.0)]


def test_a_float_columns_noise_leaves_by_its_edge_are_emptied():
    """A float column's groups part at an emptied stretch wider than
    ``FLOAT_GAP_SHARE`` of its kept leaves' span in ``t`` (here 0.18 of
    it), not only past ``GAP_T``: the bin's
    kept leaves claim 358 rows where the release measured 164 ± 52, more
    than ``FAR_EXCESS_Z`` sds of the difference, so the outer group (the two
    noise leaves, 2.5 to 3.3 below the body) is emptied and the edge leaf by
    the body stays. Through the pipeline's level rules no row of the bin
    decodes under 41.78; before, the two noise leaves were kept (one group
    with the edge, 0.015 apart in ``t``) and most of the bin's rows decoded
    on them."""
    from skdp_synth.preprocessing._bin_mass import FLOAT_GAP_SHARE
    from skdp_synth.preprocessing._numeric_domain import GAP_T, _t

    gap, span = _t(41.78) - _t(41.33), _t(42.06) - _t(39.57)
    assert gap < GAP_T and FLOAT_GAP_SHARE * span < gap
    hist = fine_hist(LAT_EDGES, LAT_COUNTS, scale=B, integer=False)
    spec = _spec("Latitude", LAT_LEVELS, hist)
    rng = np.random.default_rng(0)
    n = 20000
    rows = decode_fine(
        hist, np.full(n, 38.72), np.full(n, 42.01), np.zeros(n, bool), rng
    )
    assert np.mean(rows < 41.78) > 0.2  # the parent's decoding
    _run_levels([spec], [LAT_FOUND])
    np.testing.assert_allclose(spec.fine.counts, [0, 0, 0, 0, 148, 1200, 900])
    rows = decode_fine(
        spec.fine, np.full(n, 38.72), np.full(n, 42.01), np.zeros(n, bool), rng
    )
    assert rows.min() >= 41.78


def test_an_integer_columns_groups_still_part_at_gap_t():
    """The same leaves on an integer column: the emptied stretch is
    narrower than ``GAP_T``, so the bin's kept leaves form one group and
    nothing is emptied (integer columns as before: their far groups are
    tuned on the zero-inflated columns of ``bench_far_groups``)."""
    from skdp_synth.preprocessing._bin_mass import drop_unneeded_far_groups

    hist = fine_hist(LAT_EDGES, LAT_COUNTS, scale=B, integer=True)
    assert drop_unneeded_far_groups(hist, LAT_LEVELS, LAT_FOUND) is hist


def test_a_float_columns_short_gap_inside_its_span_parts_nothing():
    """A float column whose emptied stretch is a small share of its kept
    span (under ``FLOAT_GAP_SHARE``): one group, nothing emptied although
    the leaves claim more than the release measured (a real body's leaves
    around a noisy hole, as loans' ``interest_rate``)."""
    from skdp_synth.preprocessing._bin_mass import drop_unneeded_far_groups

    edges = [1.0, *LAT_EDGES[1:], 500.0]
    counts = [*LAT_COUNTS, 300.0]
    hist = fine_hist(edges, counts, scale=B, integer=False)
    levels = [1.0, 42.01, 500.0]
    found = [(164.0, 52.0), (2400.0, 52.0)]
    assert drop_unneeded_far_groups(hist, levels, found) is hist


#: an integer column's confirmed leaves 0-4, then a tentative run: its real
#: thin edge [5, 8), an emptied stretch, and a far noise leaf [1024, 2048)
RUN_EDGES = [0, 1, 2, 3, 4, 5, 8, 16, 1024, 2048]
RUN_COUNTS = [1000.0, 800.0, 600.0, 400.0, 200.0, 60.0, 0.0, 0.0, 150.0]
RUN_TENT = [False] * 5 + [True] * 4


def test_a_tentative_runs_far_groups_are_bins_of_their_own():
    """The tentative run's two groups of kept leaves (parted by an emptied
    stretch wider than ``GAP_T`` in ``t``) become two coarse bins, cut at
    the far group's first leaf, so the release tests the far noise leaf on
    its own estimate: it fails ``TENTATIVE_SUPPORT_Z`` and no row decodes
    past the edge. Before, the run was one bin ``[5, 2047]``: the edge's
    rows passed its test, and the decoder drew most of them on the noise
    leaf (60 : 150 noisy rows; attrition's ``YearsSinceLastPromotion`` at
    ε = 0.3, seed 0, std x40,900)."""
    from skdp_synth.preprocessing import _coarse_bins

    hist = fine_hist(RUN_EDGES, RUN_COUNTS, scale=20.0, tentative=RUN_TENT)
    levels = _coarse_bins.coarse_edges(hist, 8)
    assert levels == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 1024.0, 2047.0]
    split = hist.tentative_bins(levels)
    assert split == [5, 6]
    spec = _spec("years", levels, hist, split=split)
    found = [(1000.0, 30.0), (800.0, 30.0), (600.0, 30.0), (400.0, 30.0)]
    found += [(200.0, 30.0), (120.0, 30.0), (20.0, 30.0)]
    pipe, _ = _run_levels([spec], [found])
    assert pipe.integer_bins_dropped_ == {"years": [1024.0]}
    rng = np.random.default_rng(0)
    n = 4000
    rows = decode_fine(
        spec.fine, np.full(n, 5.0), np.full(n, 1024.0), np.zeros(n, bool), rng
    )
    assert rows.max() < 1024


def test_a_tentative_run_below_the_confirmed_leaves_cuts_on_its_far_side():
    """A run below the confirmed leaves is cut after its far group's last
    leaf (at 4), so the emptied stretch stays with the near group's bin
    ``[4, 1000)`` and the far group's bin ``[0, 4)`` holds only its own
    leaf; the parent cut nothing inside the run."""
    from skdp_synth.preprocessing import _coarse_bins

    edges = [0, 4, 512, 1000, 1008, 1016, 1024, 1032]
    counts = [150.0, 0.0, 60.0, 1000.0, 800.0, 600.0, 400.0]
    tent = [True] * 3 + [False] * 4
    hist = fine_hist(edges, counts, scale=20.0, tentative=tent)
    levels = _coarse_bins.coarse_edges(hist, 8)
    assert levels == [0.0, 4.0, 1000.0, 1008.0, 1016.0, 1024.0, 1031.0]
    assert hist.tentative_bins(levels) == [0, 1]


def test_the_core_bins_far_noise_groups_are_emptied():
    """One coarse bin over the whole zero-inflated column (the core's own
    bin): its kept leaves claim 811 rows more than the release's 2,500 ±
    71, so its end groups away from the densest leaf (the 0s) are emptied,
    the farthest first, until the rest is within ``FAR_EXCESS_Z`` sds of the
    difference; the group of the 0s is never emptied. Before, the core's
    bin was left as it is, and its rows decoded up to 4e8 (credit_card's
    ``active`` at ε = 0.3, seed 7: std x181,000)."""
    from skdp_synth.preprocessing._bin_mass import (
        FAR_EXCESS_Z,
        drop_unneeded_far_groups,
    )

    def sd(m):
        return np.sqrt(71.0**2 + 2 * m * B * B)

    hist = _zero_inflated()
    levels, found = [0.0, LEVELS[-1]], [(2500.0, 71.0)]
    assert 2811.0 - 2500.0 > FAR_EXCESS_Z * sd(5)
    assert 2660.0 - 2500.0 > FAR_EXCESS_Z * sd(4)
    assert 2501.0 - 2500.0 < FAR_EXCESS_Z * sd(3)
    out = drop_unneeded_far_groups(hist, levels, found)
    np.testing.assert_allclose(out.counts, [2100, 0, 187, 214, 0, 0, 0, 0])
    # the release sees the rows: nothing is emptied
    assert drop_unneeded_far_groups(hist, levels, [(2800.0, 71.0)]) is hist


#: N(0, 1)'s lower coarse bin [-16, -1.613): a noise leaf [-16, -4.83) at
#: 6 b touching the real tail leaves (no emptied stretch between, so no
#: second group), then the body (the shape of bench_odd_columns' "Float64
#: with NA" at seed 0, whose rows came back down to -9.43)
TAIL_B = 16.7
TAIL_EDGES = [-16.0, -4.83, -2.415, -1.613, -1.0, 0.0, 1.0, 2.415]
TAIL_COUNTS = [100.0, 70.9, 152.2, 291.6, 1100.0, 1100.0, 200.0]
TAIL_LEVELS = [-16.0, -1.613, 2.415]


def test_an_outer_leaf_by_the_tail_the_release_refutes_is_emptied():
    """The bin's three kept leaves claim 323 rows where the release measured
    140 ± 25: past ``OUTER_LEAF_EXCESS_Z`` sds of the difference, so its
    outermost leaf (not confirmed on its own count) is emptied, and then the
    two left are within it (223 claimed). Through the pipeline's level rules
    no row of the bin decodes under -4.83; before, about 100 / 323 of them
    did. The same bin at 260 ± 25 is left as it is."""
    from skdp_synth.preprocessing._bin_mass import (
        OUTER_LEAF_EXCESS_Z,
        drop_unneeded_far_groups,
    )
    from skdp_synth.preprocessing._spread import _confirmed_count

    def sd(m):
        return np.sqrt(25.0**2 + 2 * m * TAIL_B * TAIL_B)

    hist = fine_hist(TAIL_EDGES, TAIL_COUNTS, scale=TAIL_B, integer=False)
    assert TAIL_COUNTS[0] < _confirmed_count(hist)
    assert 323.1 - 140.0 > OUTER_LEAF_EXCESS_Z * sd(3)
    assert 223.1 - 140.0 < OUTER_LEAF_EXCESS_Z * sd(2)
    found = [(140.0, 25.0), (2700.0, 25.0)]
    out = drop_unneeded_far_groups(hist, TAIL_LEVELS, found)
    np.testing.assert_allclose(out.counts, [0.0] + TAIL_COUNTS[1:])
    assert 323.1 - 260.0 < OUTER_LEAF_EXCESS_Z * sd(3)
    seen = drop_unneeded_far_groups(hist, TAIL_LEVELS, [(260.0, 25.0), found[1]])
    assert seen is hist
    spec = _spec("x", TAIL_LEVELS, hist)
    rng = np.random.default_rng(0)
    n = 20000
    lo, hi = np.full(n, -16.0), np.full(n, -1.613)

    def below(h):
        return np.mean(decode_fine(h, lo, hi, np.zeros(n, bool), rng) < -4.83)

    assert below(hist) > 0.25  # the parent's decoding
    _run_levels([spec], [found])
    assert below(spec.fine) == 0.0
