"""Rows the release measured in a numeric column's bottom coarse bin beyond
what the bin's leaves inside the cap hold, placed on the leaves below the
lower cap (``preprocessing._tail_past_cap.place_capped_floor``, run by a
pipeline's level rules after ``place_capped_tail``): released quantities
only (post-processing)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from skdp_synth.preprocessing import _tail_past_cap as tpc
from skdp_synth.preprocessing._bin_mass import fill_emptied_leaves
from skdp_synth.preprocessing._decoding import decode_fine
from skdp_synth.preprocessing._natural_limits import ATOM_CANDIDATES
from skdp_synth.preprocessing._numeric_domain import FineHistogram

B = 40.0
# a zero-inflated amount, shaped on credit_card's ``expenditure`` at ε = 1
# (24 % exact zeros; ``python -m benchmarks.bench_suite --half tune --tables
# credit_card --light``): the leaf at 0 drew 100 (2.5 b), under the 5.99 b
# (240) a candidate point mass needs and under the 2 sqrt(2) b (113) at which
# it confirms the bottom bin's excess on its own (``CANDIDATE_CONFIRMS``,
# tested with the leaf at 200, ``HELD``), and no leaf under 32 was kept
EDGES = [-1.0, 0.0, 2.0**-10, 1.0, 16.0, 32.0, 65.0, 129.0, 256.0, 1025.0]
RAW = [-10.0, 100.0, 10.0, 60.0, 20.0, 100.0, 170.0, 230.0, 180.0]
HELD = [-10.0, 200.0, *RAW[2:]]
KEPT = [0.0, 0.0, 0.0, 0.0, 0.0, 100.0, 170.0, 230.0, 180.0]
LEVELS = [32.0, 65.0, 129.0, 256.0, 1025.0]
SD = 17.0


def _hist(cap=(32.0, 1025.0), kept=KEPT, raw=RAW):
    e = np.asarray(EDGES)
    return FineHistogram(
        edges=e,
        counts=np.asarray(kept, float),
        missing_count=0.0,
        finest=np.diff(e) <= 2.0**-10,
        integer=False,
        cap=cap,
        found=True,
        scale=B,
        tentative=np.zeros(e.size - 1, bool),
        raw=np.asarray(raw, float),
    )


def _estimates(bottom):
    return [(bottom, SD), (170.0, SD), (230.0, SD), (180.0, SD)]


def test_bottom_bin_excess_goes_below_the_cap_and_to_the_zero_leaf():
    hist = _hist()
    out = tpc.place_capped_floor(hist, LEVELS, _estimates(460.0))
    # the excess: the bin's estimate less its leaves' raw counts inside the
    # cap, less FLOOR_MARGIN_Z sds of that difference (one leaf inside)
    noise = np.sqrt(SD**2 + 2 * B**2)
    assert tpc.FLOOR_MARGIN_Z == 2.0
    excess = 460.0 - 100.0 - 2.0 * noise
    assert out.cap == (0.0, 1025.0)
    below = np.asarray(out.edges[:-1]) < 32.0
    assert np.sum(np.asarray(out.counts)[below]) == pytest.approx(excess, rel=1e-12)
    # the leaf at 0 is a public point-mass candidate: its room is not bounded
    # by the body's decay, so it takes its raw share of the excess
    zero = int(np.flatnonzero(np.asarray(out.edges) == 0.0)[0])
    share = RAW[zero] / (RAW[1] + RAW[2] + RAW[3] + RAW[4])
    assert out.counts[zero] > 0.9 * share * excess
    # the leaves inside the cap and the upper cap are as they were
    np.testing.assert_array_equal(out.counts[~below], hist.counts[~below])
    np.testing.assert_array_equal(out.raw, hist.raw)


def test_within_its_noise_nothing_moves():
    raw = [*RAW[:5], 30.0, *RAW[6:]]
    hist = _hist(kept=[*KEPT[:5], 30.0, *KEPT[6:]], raw=raw)
    # noise sd of the difference: sqrt(SD^2 + 2 b^2) for the one leaf inside
    noise = np.sqrt(SD**2 + 2 * B**2)
    est = 30.0 + 2.9 * noise
    assert tpc.place_capped_floor(hist, LEVELS, _estimates(est)) is hist
    est = 30.0 + 3.1 * noise
    assert tpc.place_capped_floor(hist, LEVELS, _estimates(est)) is not hist


def test_an_excess_under_twice_the_bins_raw_rows_moves_nothing():
    hist = _hist()  # 100 raw rows inside the bottom bin
    assert 3 * np.sqrt(SD**2 + 2 * B**2) < 190.0
    assert tpc.place_capped_floor(hist, LEVELS, _estimates(100.0 + 190.0)) is hist
    assert tpc.place_capped_floor(hist, LEVELS, _estimates(100.0 + 210.0)) is not hist


def test_an_excess_far_past_its_noise_moves_however_many_rows_the_bin_holds():
    """Under twice the bin's raw rows (800 here), an excess past
    ``FLOOR_STRONG_Z`` sds is placed below the cap, one under it is not:
    half of loans' ``paid_principal`` at ε = 0.3 lay below its cap at 8.8
    sds and came back above it."""
    assert tpc.FLOOR_STRONG_Z == 6.0
    kept = [*KEPT[:5], 400.0, *KEPT[6:]]
    hist = _hist(kept=kept, raw=[*RAW[:5], 400.0, *RAW[6:]])
    noise = np.sqrt(SD**2 + 2 * B**2)
    assert 400.0 + 6.1 * noise < 400.0 + 2 * 400.0
    out = tpc.place_capped_floor(hist, LEVELS, _estimates(400.0 + 6.1 * noise))
    assert out.cap == (0.0, 1025.0)
    below = np.asarray(out.edges[:-1]) < 32.0
    placed = np.sum(np.asarray(out.counts)[below])
    assert placed == pytest.approx((6.1 - tpc.FLOOR_MARGIN_Z) * noise, rel=1e-12)
    est = _estimates(400.0 + 5.9 * noise)
    assert tpc.place_capped_floor(hist, LEVELS, est) is hist


def test_one_bin_or_no_raw_counts_left_alone():
    hist = _hist()
    assert tpc.place_capped_floor(hist, [32.0, 1025.0], [(900.0, SD)]) is hist
    bare = dataclasses.replace(hist, raw=None)
    assert tpc.place_capped_floor(bare, LEVELS, _estimates(460.0)) is bare


def test_mirror_is_an_involution_and_keeps_integer_leaves_half_open():
    hist = _hist()
    twice = tpc._mirror(tpc._mirror(hist, 0.0), 0.0)
    np.testing.assert_array_equal(twice.edges, hist.edges)
    np.testing.assert_array_equal(twice.counts, hist.counts)
    np.testing.assert_array_equal(twice.raw, hist.raw)
    assert twice.cap == hist.cap
    # an integer leaf [2, 5) holds 2, 3, 4; its values mirrored (x -> -x)
    # are -4, -3, -2, the leaf [-4, -1) = [1 - 5, 1 - 2); the cap [2, 9)
    # (8 the largest) -> [-8, -1)
    ints = dataclasses.replace(
        hist, edges=np.arange(10.0), integer=True, cap=(2.0, 9.0)
    )
    m = tpc._mirror(ints, 1.0)
    assert m.cap == (-8.0, -1.0)
    np.testing.assert_array_equal(m.edges, 1.0 - np.arange(10.0)[::-1])


def test_a_fence_inside_a_leaf_splits_it_by_width_in_t():
    hist = _hist(cap=(24.0, 1025.0), kept=[0, 0, 0, 0, 20.0, 100, 170, 230, 180])
    cut = tpc._split_at_cap(hist)
    assert cut.edges.size == hist.edges.size + 1
    j = int(np.flatnonzero(cut.edges == 24.0)[0])
    assert cut.counts[j - 1] == 0.0 and cut.counts[j] == 20.0
    assert cut.raw[j - 1] + cut.raw[j] == pytest.approx(RAW[4], rel=1e-12)
    t = np.log2(1.0 + np.asarray([16.0, 24.0, 32.0]))
    assert cut.raw[j - 1] == pytest.approx(RAW[4] * (t[1] - t[0]) / (t[2] - t[0]))
    # a cap at a leaf edge: nothing to split
    whole = _hist()
    assert tpc._split_at_cap(whole) is whole


def test_the_bottom_bin_decodes_down_to_the_moved_cap_and_holds_its_zeros():
    out = tpc.place_capped_floor(_hist(), LEVELS, _estimates(460.0))
    # nothing is filled twice: the bottom bin's kept mass now covers its estimate
    assert fill_emptied_leaves(out, np.asarray(LEVELS), _estimates(460.0)) is out
    n = 20_000
    rng = np.random.default_rng(0)
    left, right = np.full(n, 32.0), np.full(n, 65.0)
    last = np.zeros(n, bool)
    v = decode_fine(out, left, right, last, rng, first=np.ones(n, bool))
    below = float(np.sum(np.asarray(out.counts)[np.asarray(out.edges[:-1]) < 32.0]))
    share = below / (below + 100.0)
    # the share of rows under 32: binomial, 5 sds (two-sided false-failure
    # rate 6e-7)
    sd = np.sqrt(share * (1 - share) / n)
    assert abs(np.mean(v < 32.0) - share) < 5 * sd
    assert np.mean(v == 0.0) > 0.5 * share
    assert v.min() >= 0.0 and v.max() < 65.0
    # not the bottom bin: never below its edge
    w = decode_fine(out, left, right, last, rng, first=np.zeros(n, bool))
    assert w.min() >= 32.0
    assert 0.0 in ATOM_CANDIDATES


def test_the_nearest_leaves_below_the_cap_confirm_an_excess_the_guard_refused():
    """An excess past ``PAST_CAP_Z`` sds but under twice the bin's raw rows
    is placed where the raw counts of the ``FLOOR_CONFIRM_LEAVES`` leaves
    nearest below the cap sum past ``FLOOR_CONFIRM_Z`` sds of their own
    noise, ``sqrt(2 * 2) b``: doctorcontacts' ``linc`` kept 4 % of its rows
    above its cap this way, unnamed."""
    assert tpc.FLOOR_CONFIRM_Z == 2.0 and tpc.FLOOR_CONFIRM_LEAVES == 2
    threshold = 2.0 * np.sqrt(2.0 * 2) * B  # 160 rows
    est = _estimates(100.0 + 190.0)  # 3.2 sds; the guard wants 200
    assert 190.0 > tpc.PAST_CAP_Z * np.sqrt(SD**2 + 2 * B**2)

    def with_near(first, second):  # [16, 32) and [1, 16), nearest first
        raw = [*RAW[:3], second, first, *RAW[5:]]
        return _hist(raw=raw)

    hist = with_near(threshold / 2 + 6.0, threshold / 2 - 5.0)  # 161
    out = tpc.place_capped_floor(hist, LEVELS, est)
    assert out.cap[0] < 32.0
    below = np.asarray(out.edges[:-1]) < 32.0
    noise = np.sqrt(SD**2 + 2 * B**2)
    placed = np.sum(np.asarray(out.counts)[below])
    assert placed == pytest.approx(190.0 - tpc.FLOOR_MARGIN_Z * noise, rel=1e-12)
    hist = with_near(threshold / 2 + 4.0, threshold / 2 - 5.0)  # 159
    assert tpc.place_capped_floor(hist, LEVELS, est) is hist
    # a third leaf's rows do not confirm: [2^-10, 1) at 400
    far = _hist(raw=[*RAW[:2], 400.0, 0.0, 0.0, *RAW[5:]])
    assert tpc.place_capped_floor(far, LEVELS, est) is far


def test_one_leaf_below_the_cap_confirms_against_its_own_noise():
    # the last leaf is the only one from ``first`` on: sd sqrt(2) b
    raw = np.zeros(5)
    raw[-1] = 2.0 * np.sqrt(2.0) * B + 1.0  # the only leaf read
    assert tpc._confirmed_past_cap(raw, raw.size - 1, B)
    raw[-1] -= 2.0
    assert not tpc._confirmed_past_cap(raw, raw.size - 1, B)


def test_the_part_of_a_leaf_the_cap_cut_does_not_confirm():
    """A fence at 24 cuts the leaf ``[16, 32)``; its part below the cap
    gets the leaf's raw count by width in ``t`` (``_split_at_cap``), a
    share of rows that may all lie above the cap: the confirmation reads
    the two whole leaves after it. k401ksubs' ``inc`` (ε = 0.3, seed 0;
    none of its rows under 10) had rows placed at 1-3.9 by such a part."""
    raw = [*RAW[:3], 60.0, 300.0, *RAW[5:]]
    kept = [0.0, 0.0, 0.0, 0.0, 300.0, *KEPT[5:]]
    hist = _hist(cap=(24.0, 1025.0), kept=kept, raw=raw)
    cut = tpc._split_at_cap(hist)
    j = int(np.flatnonzero(cut.edges == 16.0)[0])
    part = float(cut.raw[j])  # [16, 24)
    threshold = 2.0 * np.sqrt(2.0 * 2) * B
    assert part + 60.0 > threshold and 60.0 + RAW[2] < threshold
    inside = float(cut.raw[j + 1]) + 100.0  # [24, 32) and [32, 65)
    noise = np.sqrt(SD**2 + 2 * 2 * B**2)
    levels = [24.0, 65.0, 129.0, 256.0, 1025.0]
    est = _estimates(inside + 3.2 * noise)
    assert 3.2 * noise < 2.0 * inside  # the guard refuses it
    assert tpc.place_capped_floor(hist, levels, est) is hist
    # the whole leaf [1, 16) past the threshold with [2^-10, 1) confirms it
    strong = _hist(cap=(24.0, 1025.0), kept=kept, raw=[*raw[:3], 200.0, *raw[4:]])
    assert tpc.place_capped_floor(strong, levels, est).cap[0] < 24.0


def test_a_point_mass_below_the_cap_confirms_an_excess_the_guard_refused():
    """The leaf at 0 (a public point-mass candidate) drew 200, past ``2
    sqrt(2) b`` (113) though under the 5.99 b a point mass needs: the bottom
    bin's excess (190 rows, 3.2 sds, under twice the bin's 100 raw rows) is
    placed, all of it (no ``FLOOR_MARGIN_Z``), and the leaf at 0 takes its
    raw share. credit_card's ``expenditure`` at ε = 1, seed 0: 24 % zeros,
    none in the rows before."""
    assert tpc.CANDIDATE_CONFIRMS and tpc.FLOOR_CONFIRM_Z == 2.0
    level = 2.0 * np.sqrt(2.0) * B
    est = _estimates(100.0 + 190.0)
    assert 190.0 > tpc.PAST_CAP_Z * np.sqrt(SD**2 + 2 * B**2)
    assert RAW[1] < level < HELD[1]
    plain = _hist()
    assert tpc.place_capped_floor(plain, LEVELS, est) is plain
    out = tpc.place_capped_floor(_hist(raw=HELD), LEVELS, est)
    assert out.cap == (0.0, 1025.0)
    below = np.asarray(out.edges[:-1]) < 32.0
    assert np.sum(np.asarray(out.counts)[below]) == pytest.approx(190.0, rel=1e-12)
    zero = int(np.flatnonzero(np.asarray(out.edges) == 0.0)[0])
    share = HELD[1] / (HELD[1] + HELD[2] + HELD[3] + HELD[4])
    assert out.counts[zero] == pytest.approx(share * 190.0, rel=1e-12)
    # the level itself: just under it, nothing moves
    under = _hist(raw=[-10.0, level - 1.0, *RAW[2:]])
    assert tpc.place_capped_floor(under, LEVELS, est) is under
    over = _hist(raw=[-10.0, level + 1.0, *RAW[2:]])
    assert tpc.place_capped_floor(over, LEVELS, est) is not over


def test_the_excess_goes_on_to_the_point_mass_past_a_nearer_leaf():
    """``[1, 16)`` at 90 (past ``2 b``) would end the run that takes the
    excess; the leaf at 0 that confirmed it is past it, and the run goes on
    to it (credit_card's ``expenditure`` at seed 4: every placed row had
    gone to 1-16, none to 0)."""
    raw = [-10.0, 200.0, 10.0, 90.0, 20.0, *RAW[5:]]
    out = tpc.place_capped_floor(_hist(raw=raw), LEVELS, _estimates(290.0))
    zero = int(np.flatnonzero(np.asarray(out.edges) == 0.0)[0])
    assert out.counts[zero] == pytest.approx(190.0 * 200.0 / 320.0, rel=1e-12)


def test_off_only_the_nearest_leaves_confirm(monkeypatch):
    monkeypatch.setattr(tpc, "CANDIDATE_CONFIRMS", False)
    held = _hist(raw=HELD)
    assert tpc.place_capped_floor(held, LEVELS, _estimates(290.0)) is held
