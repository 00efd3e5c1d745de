"""Rows the release measured in a numeric column's top coarse bin beyond what
the bin's leaves inside the cap hold, placed on the leaves past the cap
(``preprocessing._tail_past_cap.place_capped_tail``, run by a pipeline's
level rules): released quantities only (post-processing)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from skdp_synth._pipeline_levels import PipelineLevelsMixin
from skdp_synth.gaussian_release._release import LEVEL_SUPPORT_Z
from skdp_synth.preprocessing import _tail_past_cap as tpc
from skdp_synth.preprocessing._decoding import decode_fine
from skdp_synth.preprocessing._numeric_domain import noisy_histogram

B = 41.7
# credit's ``Debt`` at ε = 1, seed 10 of ``python -m benchmarks.bench_suite
# --half tune --tables credit --eps 1 --seeds 20 --methods auto --light``:
# its leaves, their real counts and their noisy counts as drawn
EDGES = [0, 1, 2, 4, 16, 32, 65, 256, 304, 362, 512, 1025, 2049, 4096, 65536, 1048576]
TRUE = [2934, 1, 0, 1, 4, 7, 52, 19, 11, 47, 99, 171, 148, 55, 0]
RAW = [3015, 110, 72, -71, 40, -26, -3, 33, -12, -26, 34, 166, 12, 20, -30]
LEVELS = [0.0, 1.0, 2.0, 3.0]


class _Source:
    """The noise of the fit above, drawn again (the missing cell's: 0)."""

    def laplace(self, values, scale):
        return np.asarray(values, float) + np.append(np.subtract(RAW, TRUE), 0.0)


def _debt():
    edges = np.asarray(EDGES, dtype=np.float64)
    finest = np.diff(edges) <= 1.0
    return noisy_histogram(
        edges, finest, np.asarray(TRUE, float), 0.0, True, B, _Source()
    )


class _Final:
    def __init__(self, estimates):
        self.blocks_ = SimpleNamespace(names=["Debt"])
        self.estimates = estimates

    def _one_way_level_estimate(self, j, level):
        return self.estimates[level]

    def _drop_unsupported_level(self, j, level, z=None):
        est, sd = self.estimates[level]
        return bool(est < (LEVEL_SUPPORT_Z if z is None else z) * sd)


def _levels(hist, estimates):
    spec = SimpleNamespace(
        name="Debt",
        kind="numeric",
        levels=list(LEVELS),
        n_levels=len(LEVELS) - 1,
        fine=hist,
        split=(),
        missing=False,
        other=False,
        integer=True,
    )
    blocks = object()
    encoder = SimpleNamespace(blocks_=blocks, specs_=[spec])
    pipe = SimpleNamespace(
        _iter=lambda with_final: [(0, "enc", encoder)],
        _drop_missing_level=lambda *a: False,
        _warn_degenerate=lambda *a: None,
    )
    final = _Final(estimates)
    PipelineLevelsMixin._drop_unsupported_levels(pipe, final, {"blocks": blocks})
    return spec


def _top_rows(hist, n=4000):
    args = (np.full(n, 2.0), np.full(n, 3.0), np.ones(n, bool))
    return decode_fine(hist, *args, np.random.default_rng(0))


def test_constants_pinned():
    assert tpc.PAST_CAP_Z == 3.0
    assert tpc.PAST_CAP_REACH_T == 12.0
    assert tpc.PAST_CAP_SCALES == 2.0
    assert tpc.PAST_CAP_NEAR_SHARE == 0.8


def test_the_release_excess_in_the_top_bin_is_decoded_past_the_cap():
    """The domain kept 0-3 (its tail's leaves under the noise); the release
    measured 595 ± 37.6 rows in the top bin ``[2, 3]`` (614 real, clipped
    there). Before, every one came back at 2 or 3; now the excess lies on
    the leaves past the cap by their noisy counts, up to the nearest one
    past ``2 b`` (``[1025, 2049)``)."""
    hist = _debt()
    assert hist.cap == (0.0, 4.0)  # the fit's cap, drawn again
    spec = _levels(hist, [(2968.0, 37.6), (-14.0, 37.6), (595.0, 37.6)])
    assert spec.fine.cap[1] == 2049.0
    v = _top_rows(spec.fine)
    assert v.min() >= 2 and v.max() < 2049
    assert np.mean(v >= 16) > 0.8 and np.median(v) > 512
    # the mass placed is the excess over the bin's raw noisy counts
    e = np.asarray(spec.fine.edges)
    past = spec.fine.counts[e[:-1] >= 4.0].sum()
    assert past == pytest.approx(595.0 - 72.0)
    assert spec.fine.counts[e[:-1] >= 2049.0].sum() == 0.0


def test_an_excess_within_the_noise_stays_inside_the_cap():
    hist = _debt()
    sd = 37.6
    top = 72.0 + tpc.PAST_CAP_Z * np.sqrt(sd**2 + 2 * B**2) - 1.0
    spec = _levels(hist, [(2968.0, sd), (-14.0, sd), (top, sd)])
    assert spec.fine.cap == (0.0, 4.0)
    assert _top_rows(spec.fine).max() <= 3


def test_without_raw_counts_nothing_moves():
    """A histogram restored from a stored decoder has no raw counts."""
    import dataclasses

    hist = dataclasses.replace(_debt(), raw=None)
    est = [(2968.0, 37.6), (-14.0, 37.6), (595.0, 37.6)]
    assert tpc.place_capped_tail(hist, LEVELS, est) is hist


def test_a_far_noise_leaf_past_the_nearer_run_takes_nothing():
    import dataclasses

    hist = _debt()
    raw = np.asarray(hist.raw, float).copy()
    raw[-1] = 400.0  # [65536, 1048576): a far noise leaf past 2 b
    hist = dataclasses.replace(hist, raw=raw)
    est = [(2968.0, 37.6), (-14.0, 37.6), (595.0, 37.6)]
    out = tpc.place_capped_tail(hist, LEVELS, est)
    assert out.cap[1] == 2049.0 and out.counts[-1] == 0.0


def test_a_bin_whose_leaves_hold_a_third_of_its_rows_keeps_them_inside():
    """An excess past 3 sds that is under twice the bin's raw rows: the
    leaves' own noise can explain it (loans' ``num_satisfactory_accounts``
    at ε = 0.3), and nothing moves -- nor in a column of one bin, whose
    excess may be rows clipped from below."""
    hist = _debt()
    est = [(2968.0, 37.6), (-14.0, 37.6), (3.0 * 72.0 - 1.0, 37.6)]
    assert tpc.place_capped_tail(hist, LEVELS, est) is hist
    one = dataclasses.replace(
        hist, counts=np.where(hist.edges[:-1] < 2, 0, hist.counts)
    )
    assert tpc.place_capped_tail(one, [2.0, 3.0], [(595.0, 37.6)]) is one


def test_one_bin_from_a_point_mass_at_0_places_its_excess():
    """credit's ``Debt`` at ε = 0.3: one bin ``[0, 1]`` (the 0s), 662 more
    rows in the release than its leaf holds: past the cap (std ratio 0.00
    before)."""
    hist = _debt()
    one = dataclasses.replace(
        hist, counts=np.where(hist.edges[:-1] == 0, 2925.0, 0.0), cap=(0.0, 1.0)
    )
    out = tpc.place_capped_tail(one, [0.0, 1.0], [(3587.0, 73.3)])
    assert out.cap[1] > 1.0 and out.counts[1:].sum() > 0


def test_a_noise_leaf_no_stronger_than_the_first_past_the_cap_ends_no_run():
    """loans' ``interest_rate`` at ε = 1, seed 7 (``b`` = 97): raw 180 on
    the first leaf past the cap 22.87, then 91, 2, 3, 19, and 205 (2.11
    ``b``) on ``[65, 256)``. The 205 is the nearest leaf past ``2 b``, but
    the first leaf's 180 is as strong: the run ends there and the 651 rows
    lie in ``[22.87, 27.29)`` (std ratio 4.27 when the far leaf took 267 of
    them)."""
    b = 97.0
    edges = np.asarray(
        [16.0, 19.14, 22.87, 27.29, 32.52, 46.07, 54.78, 65.1, 256.0, 4096.0]
    )
    true = np.asarray([931.0, 151.0, 300.0, 200.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    raw = [931.0, 151.0, 180.0, 91.0, 2.0, 3.0, 19.0, 205.0, -27.0]

    class _Drawn:
        def laplace(self, values, scale):
            return np.asarray(values, float) + np.append(np.subtract(raw, true), 0.0)

    hist = noisy_histogram(
        edges, np.zeros(edges.size - 1, bool), true, 0.0, False, b, _Drawn()
    )
    hist = dataclasses.replace(hist, cap=(16.0, 22.87))
    out = tpc.place_capped_tail(
        hist, [16.0, 19.14, 22.87], [(931.0, 50.0), (802.0, 53.0)]
    )
    assert out.cap[1] == 27.29
    e = np.asarray(out.edges)
    assert out.counts[e[:-1] >= 27.29].sum() == 0.0
    assert out.counts[e[:-1] == 22.87].sum() == pytest.approx(802.0 - 151.0)


def test_body_constant_pinned():
    assert tpc.PAST_CAP_BODY_Z == 2.0


B_BELL = 152.0
# a bell-shaped count column's tail leaves: its body ends in the top bin
# [108, 128], whose leaf drew -600 (300 raw for 900 real); past the cap 128
# the real tail's leaves are weak and [4096, 8192), 2^5 times 1 + cap out,
# an empty leaf, drew 3.7 b
BELL_EDGES = [64.0, 91.0, 108.0, 128.0, 152.0, 181.0, 256.0, 4096.0, 8192.0, 65536.0]
BELL_TRUE = [1200.0, 1300.0, 900.0, 100.0, 10.0, 0.0, 0.0, 0.0, 0.0]
BELL_RAW = [1200.0, 1300.0, 300.0, 60.0, -40.0, 30.0, -100.0, 560.0, -50.0]
BELL_BINS = [64.0, 91.0, 108.0, 128.0]


def _bell(raw=BELL_RAW):
    class _Drawn:
        def laplace(self, values, scale):
            noise = np.subtract(raw, BELL_TRUE)
            return np.asarray(values, float) + np.append(noise, 0.0)

    edges = np.asarray(BELL_EDGES)
    hist = noisy_histogram(
        edges,
        np.zeros(edges.size - 1, bool),
        np.asarray(BELL_TRUE),
        0.0,
        False,
        B_BELL,
        _Drawn(),
    )
    return dataclasses.replace(hist, cap=(64.0, 128.0))


def _bell_estimates(below=(1300.0, 60.0)):
    return [(1200.0, 60.0), below, (1250.0, 60.0)]


def test_a_far_noise_leaf_past_a_body_takes_no_rows():
    """The release supports the bin below the top one (the body reaches the
    top bin), so the 950 rows past the cap are the body's tail, decaying
    from the cap: the leaf [4096, 8192) can hold at most 950 / 6 of them (1
    of the 6 units of ``t`` from the cap to its end), under ``2 b``, and its
    3.7 ``b`` ends no run. The rows stay on the first leaf past the cap.
    Before, that leaf took 818 of them (a synthetic ``bsmt_sf`` of the same
    shape came back with a std ratio of 3,554)."""
    out = tpc.place_capped_tail(_bell(), BELL_BINS, _bell_estimates())
    assert out.cap == (64.0, 152.0)
    e = np.asarray(out.edges)
    assert out.counts[e[:-1] >= 152.0].sum() == 0.0
    assert out.counts[e[:-1] == 128.0].sum() == pytest.approx(1250.0 - 300.0)
    v = decode_fine(
        out,
        np.full(2000, 108.0),
        np.full(2000, 128.0),
        np.ones(2000, bool),
        np.random.default_rng(0),
    )
    assert v.max() < 152.0


def test_a_leaf_past_a_body_takes_at_most_its_room():
    """A nearer leaf past ``2 b`` ([152, 181): 456 raw) ends the run; a tail
    decaying from 128 puts at most the share ``0.25 / 0.497`` of the 950
    rows there (its width in ``t`` over the span from the cap to its end),
    and the rest stays on ``[128, 152)``."""
    raw = list(BELL_RAW)
    raw[4] = 456.0
    out = tpc.place_capped_tail(_bell(raw), BELL_BINS, _bell_estimates())
    assert out.cap == (64.0, 181.0)
    t = np.log2(1.0 + np.asarray([128.0, 152.0, 181.0]))
    room = 950.0 * (t[2] - t[1]) / (t[2] - t[0])
    assert out.counts[4] == pytest.approx(room)
    assert out.counts[3] == pytest.approx(950.0 - room)


def test_past_a_separate_component_the_nearest_leaf_past_2b_ends_the_run():
    """Where the release does not support the bin below the top one (as
    credit's ``Debt``: its amounts past the 0s rise away from the cap), no
    leaf's room is bounded: the far leaf past ``2 b`` ends the run."""
    est = _bell_estimates(below=(-14.0, 60.0))
    out = tpc.place_capped_tail(_bell(), BELL_BINS, est)
    assert out.cap == (64.0, 8192.0)
    assert out.counts[7] > 500.0


# acs12's ``hrs_work`` at ε = 3, seed 0 of ``python -m benchmarks.bench_suite
# --half tune --tables acs12``: its coarse bins and the release's estimates
# (sd 7.3 each); the top bin [54, 64] above eight bins of one integer
HRS_BINS = [8, 22, 32, 37, 40, 41, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 64]
HRS_EST = [100.1, 86.5, 48.2, 25.1, 322.3, 4.8, 28.4, 7.5, -7.5, 17.3, 5.2]
HRS_EST = [(v, 7.3) for v in HRS_EST + [62.6, 6.0, 4.4, -5.0, 67.3]]


def test_the_bins_below_within_the_top_bins_width_are_pooled():
    """``[53, 54)`` alone (-5 ± 7.3) does not say the body reaches the top
    bin; the nine bins of one integer within the top bin's width in ``t``
    (``[45, 54)``, 118.9 ± 21.9) do, at :data:`PAST_CAP_BODY_Z` sds."""
    k = len(HRS_BINS) - 1
    below, sd = HRS_EST[k - 2]
    assert below < tpc.PAST_CAP_BODY_Z * sd  # the bin below alone: no body
    assert tpc._body_at_cap(HRS_EST, k, HRS_BINS, True)
    # the pooled sum just under its threshold: no body
    z = tpc.PAST_CAP_BODY_Z * np.sqrt(9) * 7.3
    low = list(HRS_EST)
    low[6] = (28.4 - (118.9 - z) - 0.01, 7.3)
    assert not tpc._body_at_cap(low, k, HRS_BINS, True)
    # [41, 45) starts below the top bin's width: its estimate is not pooled
    low[5] = (1000.0, 7.3)
    assert not tpc._body_at_cap(low, k, HRS_BINS, True)


def test_pooling_stops_at_a_point_mass_candidate():
    """A wide top bin ``[2, 8]`` whose width in ``t`` reaches down to the
    0s: the 0s are a point mass, not a body (credit's ``Debt``)."""
    est = [(2968.0, 37.6), (-14.0, 37.6), (595.0, 37.6)]
    assert not tpc._body_at_cap(est, 3, [0.0, 1.0, 2.0, 8.0], True)
    # the same counts one unit up: the bin [1, 2) is no candidate
    assert tpc._body_at_cap(est, 3, [1.0, 2.0, 3.0, 9.0], True)


def test_a_far_noise_leaf_past_a_pooled_body_takes_no_rows():
    """acs12's ``hrs_work`` (ε = 3, seed 0; ``b`` = 11.1): the top bin's
    leaf ``[54, 65)`` drew 15.0, the release 67.3 rows in the bin; past the
    cap 65, ``[65, 256)`` drew 15.8 and ``[65536, 131072)``, empty, 28.6
    (2.6 ``b``). Read as a separate component (the bin below alone), that
    far leaf ended the run and took 34 of the rows (std ratio 659); with
    the body pooled, a tail decaying from the cap has room there for
    ``E / 11`` only, and every row stays on ``[65, 256)``."""
    b = 11.1
    edges = np.asarray([8.0, 45, 54, 65, 256, 4096, 65536, 131072])
    true = np.asarray([600.0, 114, 41, 23, 0, 0, 0])
    raw = [600.0, 110.6, 15.0, 15.8, -3.0, 4.0, 28.6]

    class _Drawn:
        def laplace(self, values, scale):
            return np.asarray(values, float) + np.append(np.subtract(raw, true), 0.0)

    hist = noisy_histogram(
        edges, np.zeros(edges.size - 1, bool), true, 0.0, True, b, _Drawn()
    )
    hist = dataclasses.replace(
        hist, counts=np.where(edges[:-1] < 65, raw, 0.0), cap=(8.0, 65.0)
    )
    out = tpc.place_capped_tail(hist, HRS_BINS, HRS_EST)
    assert out.cap == (8.0, 256.0)
    assert out.counts[3] == pytest.approx(67.3 - 15.0)
    assert out.counts[4:].sum() == 0.0


def _signed_balance(raw_zero, estimate):
    """A signed balance's fine histogram whose lower cap is its 0, a kept
    point mass (no leaf below it kept), with the release's estimates of its
    bins ``[0, 0.001)`` and ``[0.001, 5000]``."""
    b = 83.3
    edges = np.asarray([-65536.0, -4096.0, -256.0, 0.0, 0.001, 256.0, 4096.0, 8192.0])
    true = np.asarray([0.0, 1100.0, 100.0, 1600.0, 50.0, 1050.0, 100.0])
    raw = [-40.0, 120.0, 60.0, raw_zero, 30.0, 1000.0, 140.0]

    class _Drawn:
        def laplace(self, values, scale):
            return np.asarray(values, float) + np.append(np.subtract(raw, true), 0.0)

    finest = np.asarray([0, 0, 0, 1, 0, 0, 0], bool)
    hist = noisy_histogram(edges, finest, true, 0.0, False, b, _Drawn())
    kept = np.where(edges[:-1] >= 0.0, raw, 0.0)
    hist = dataclasses.replace(hist, counts=kept, cap=(0.0, 8192.0))
    spec = SimpleNamespace(
        name="balance",
        kind="numeric",
        levels=[0.0, 0.001, 5000.0],
        n_levels=2,
        fine=hist,
        integer=False,
    )
    return spec, [(estimate, 77.0), (1200.0, 77.0)]


BALANCE_NOISE = np.sqrt(77.0**2 + 2 * 83.3**2)  # the bottom bin's one leaf, the 0's


def test_rows_clipped_up_to_a_natural_lower_limit_name_the_column():
    """The balance kept no leaf below its 0 (a point mass). Where the
    release's bottom bin exceeds the 0's leaf by more than ``PAST_CAP_Z``
    sds of the difference but not ``FLOOR_AT_LIMIT_Z``, nothing is placed
    below the 0 (a draw far under the point mass's rows can fake that
    much), the rows below come back at 0, and the reason says so from the
    released numbers; within ``PAST_CAP_Z`` sds it says nothing."""
    between = 1569.0 + 4.0 * BALANCE_NOISE
    spec, est = _signed_balance(1569.0, between)
    assert tpc._at_lower_limit(spec.fine)
    assert tpc.PAST_CAP_Z < 4.0 < tpc.FLOOR_AT_LIMIT_Z
    assert tpc.place_capped_floor(spec.fine, spec.levels, est) is spec.fine
    reason = tpc.capped_floor_reason(spec, est)
    assert reason is not None and "below its lower cap 0" in reason
    assert f"{4.0 * BALANCE_NOISE:.3g} rows" in reason
    # public bins, not bounds=: the end-to-end balance (ε = 0.1, seeds 0-5)
    # lost every negative in 1 of 6 fits without bounds and in 1 of 6 with
    # bounds={"balance": (-5000, None)}; with bin_edges= it kept 30-34 %
    # of its rows below 0 (30 % real) in 6 of 6
    assert "declare public bins, bin_edges=" in reason
    within = 1569.0 + tpc.PAST_CAP_Z * BALANCE_NOISE - 1.0
    assert tpc.capped_floor_reason(spec, [(within, 77.0), est[1]]) is None
    assert tpc.capped_floor_reason(spec, [(within + 2.0, 77.0), est[1]])
    # a lower cap no kept point mass holds: the placement below it runs, and
    # this reason, read against the domain as released, stays silent (where
    # none ran it names the column: test_rows_left_below_a_lower_cap_...)
    counts = np.asarray(spec.fine.counts, float).copy()
    counts[3] = 0.0
    released = dataclasses.replace(spec.fine, counts=counts)
    assert not tpc._at_lower_limit(released)
    spec.fine = tpc.place_capped_floor(released, spec.levels, est)
    assert spec.fine.cap[0] < released.cap[0]
    assert tpc.capped_floor_reason(spec, est, domain=released) is None


def test_rows_left_below_a_lower_cap_name_the_column():
    """A lower cap that is no natural limit, where nothing was placed below
    it: the release's bottom bin ``[32, 34)`` (250 ± 20 rows) against the
    kept leaf ``[32, 40)`` across its inner edge, counted by its part below
    34 (0.27 of its width in ``t``: 40.7 of 150), is 8.3 sds and over twice
    that part: the column is named (births' ``weeks`` at ε = 1: 94 of 1,000
    rows under a cap of 35.49, none in the rows). Within the capped-tail
    warning's 3 sds, or once rows were placed below the cap, it is not."""
    from skdp_synth.preprocessing._fences import CAPPED_TAIL_Z, bottom_bin_excess
    from skdp_synth.preprocessing._numeric_domain import FineHistogram

    edges = np.array([0.0, 16.0, 32.0, 40.0, 48.0, 64.0])
    counts = np.array([0.0, 0.0, 150.0, 600.0, 200.0])
    hist = FineHistogram(
        edges, counts, 0.0, np.zeros(5, bool), False, (32.0, 64.0), True, 40.0
    )
    hist = dataclasses.replace(hist, raw=np.array([10.0, -20.0, 150.0, 600.0, 200.0]))
    spec = SimpleNamespace(
        name="weeks", kind="numeric", levels=[32.0, 34.0, 40.0, 48.0, 64.0],
        n_levels=4, fine=hist, missing=False, time_unit=None,
    )  # fmt: skip
    est = [(250.0, 20.0), (100.0, 20.0), (600.0, 20.0), (200.0, 20.0)]
    share = (np.log2(35.0) - np.log2(33.0)) / (np.log2(41.0) - np.log2(33.0))
    _, _, _, kept, noise, excess = bottom_bin_excess(spec, est)
    assert kept == pytest.approx(share * 150.0, rel=1e-12)
    assert noise == pytest.approx(np.sqrt(20.0**2 + 2 * share**2 * 40.0**2))
    assert excess == pytest.approx(250.0 - share * 150.0, rel=1e-12)
    reason = tpc.capped_floor_reason(spec, est)
    assert "rows lie below the lower cap 32;" in reason and "bin_edges=" in reason
    within = kept + CAPPED_TAIL_Z * noise - 1.0
    assert tpc.capped_floor_reason(spec, [(within, 20.0), *est[1:]]) is None
    placed = dataclasses.replace(hist, cap=(16.0, 64.0))
    spec.fine = placed  # the pipeline placed rows below 32
    assert tpc.capped_floor_reason(spec, est, domain=hist) is None


def test_rows_far_past_the_noise_below_a_natural_limit_are_placed():
    """Past ``FLOOR_AT_LIMIT_Z`` sds the excess is placed below the 0 (less
    ``FLOOR_MARGIN_Z`` sds), as another component than the body above it:
    the leaves share it by their raw counts, no room bounded (with the
    body's room, ``[-4096, -256)`` could hold a third of it). The reason,
    read against the domain as released, is silent: the rows are placed."""
    spec, est = _signed_balance(1569.0, 2765.0)  # 8.5 sds
    limit = 1569.0 + tpc.FLOOR_AT_LIMIT_Z * BALANCE_NOISE
    assert (
        tpc.place_capped_floor(spec.fine, spec.levels, [(limit - 1.0, 77.0), est[1]])
        is spec.fine
    )
    assert (
        tpc.place_capped_floor(spec.fine, spec.levels, [(limit + 1.0, 77.0), est[1]])
        is not spec.fine
    )
    placed = (2765.0 - 1569.0) - tpc.FLOOR_MARGIN_Z * BALANCE_NOISE
    out = tpc.place_capped_floor(spec.fine, spec.levels, est)
    # no leaf below passes 2 b (166.6): the first one, [-256, 0), takes it
    assert out.cap == (-256.0, 8192.0)
    assert out.counts[2] == pytest.approx(placed)
    assert out.counts[:2].sum() == 0.0
    raw = np.asarray(spec.fine.raw, float).copy()
    raw[1] = 1000.0  # [-4096, -256) passes 2 b: the run ends there
    wide = dataclasses.replace(spec.fine, raw=raw)
    out = tpc.place_capped_floor(wide, spec.levels, est)
    assert out.cap == (-4096.0, 8192.0)
    assert out.counts[1] == pytest.approx(placed * 1000.0 / 1060.0)
    assert out.counts[2] == pytest.approx(placed * 60.0 / 1060.0)
    original = spec.fine
    spec.fine = out  # what the pipeline keeps once placed
    assert tpc.capped_floor_reason(spec, est, domain=original) is None
    spec.fine = original
    assert tpc.capped_floor_reason(spec, est) is not None


def test_the_floor_reason_reaches_the_degenerate_warning():
    from skdp_synth.preprocessing._decoding import degenerate_reasons

    spec, est = _signed_balance(1569.0, 2765.0)
    spec.missing = False
    reasons = degenerate_reasons(spec, est, 4000.0, None, False, None)
    assert any("below its lower cap 0" in r for r in reasons)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_signed_balance_keeps_its_negatives_or_is_named(seed, monkeypatch):
    """End to end (the docstring's balance, ε = 0.1): the domain kept no
    leaf below the 0s, and the bottom bin measured 8.4 (seed 1) and 8.3
    (seed 2) sds over the 0's leaf (8.5 at seed 1 before the 0s' floor
    cell was cut at 2^-14, ``_floor_parts``: one more level redraws the
    release). Seed 2: the rows below are placed, a
    share of negative rows near the real 30 % comes back, and no floor
    reason is given. Seed 1: the leaf just below the 0, ``[-0.001, 0)``,
    drew 3.2 ``b`` (no real row) and ends the run there, so no row comes
    back below 0 and the fit names the column."""
    import warnings

    import pandas as pd

    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.exceptions import DegenerateColumnWarning
    from skdp_synth.preprocessing import BooleanEncoder

    rng = np.random.default_rng(0)
    n, k = 4000, 1200
    bal = np.concatenate(
        [np.zeros(n - 2 * k), -rng.uniform(100, 5000, k), rng.uniform(100, 5000, k)]
    ).round()
    rng.shuffle(bal)
    df = pd.DataFrame({"balance": bal, "g": rng.choice(["a", "b", "c"], n)})
    enc = BooleanEncoder(
        categories={"g": ["a", "b", "c"]}, epsilon="auto", random_state=seed
    )
    rel = ProjectedGaussianRelease(epsilon=0.1, delta=1e-6, random_state=seed)
    limit_z = []

    def spy(*args):
        limit_z.append(float(tpc_limit_z(*args)))
        return limit_z[-1]

    tpc_limit_z = tpc._limit_z
    monkeypatch.setattr(tpc, "_limit_z", spy)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe = make_synthesis_pipeline(enc, rel).fit(df)
    # the placement's test at the limit runs (no leaf below the 0s kept)
    assert limit_z == [pytest.approx({1: 8.39, 2: 8.28}[seed], abs=0.05)]
    named = [
        str(w.message)
        for w in caught
        if issubclass(w.category, DegenerateColumnWarning)
        and "balance" in str(w.message)
    ]
    floor = any("below its lower cap 0" in m for m in named)
    rows = pd.to_numeric(pipe.sample(n, random_state=seed)["balance"])
    negative = float((rows < 0).mean())
    if seed == 1:
        assert pipe[0].specs_[0].fine.cap[0] > -1.0
        assert floor and negative == 0.0
    else:
        assert pipe[0].specs_[0].fine.cap[0] < -1000.0
        assert not floor and 0.2 < negative < 0.4


def test_a_stretch_of_leaves_past_2b_is_taken_whole():
    """covid_testing's ``ct_result`` below its cap at 45 (mirrored: past
    it), ε = 1, seed 0: the leaves drew 0.1, 2.6, 6.4 and 4.5 ``b``, then
    1.9 ``b`` on the 0. The nearest leaf past ``PAST_CAP_SCALES`` ``b`` is
    the second; the two after it pass too, and the run takes all three and
    stops at the first that does not (the rows were at 14-44; ending at the
    first, every row came back at 32.5 or more)."""
    assert tpc.PAST_CAP_SCALES == 2.0
    e = -np.asarray([45.0, 42.2, 38.7, 32.5, 22.9, 16.0, 0.0, -1.0])
    e = np.append(np.asarray([-46.0]), e)  # one leaf inside the cap
    raw = B * np.asarray([270.0, 0.1, 2.6, 6.4, 4.5, 1.9, 0.2])
    run = tpc._past_run(e, raw, 1, -45.0, B)
    np.testing.assert_array_equal(run, [1, 2, 3, 4])
    # a leaf under 2 b ends the stretch: the leaf after it is not taken
    gap = raw.copy()
    gap[3] = 1.9 * B
    np.testing.assert_array_equal(tpc._past_run(e, gap, 1, -45.0, B), [1, 2])
    # a nearer leaf at PAST_CAP_NEAR_SHARE of the first past 2 b ends the
    # run there, before it
    near = raw.copy()
    near[2] = 2.4 * B
    near[1] = tpc.PAST_CAP_NEAR_SHARE * near[2]  # 1.92 b, under 2 b
    np.testing.assert_array_equal(tpc._past_run(e, near, 1, -45.0, B), [1])
