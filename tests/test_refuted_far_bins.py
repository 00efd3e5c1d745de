"""An outer bin whose kept leaves are one far group of noise leaves, which
the release's estimate of the bin refutes, is dropped even where the
model's rows use it (``_pipeline_levels._empty_outer_bins`` with
``_bin_mass.refuted_far_bin``): the release moves its rows to the column's
other bins. Released quantities only (post-processing)."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
from _fine_hist import fine_hist
from test_bin_support import _run_levels, _spec

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth._pipeline_levels import PipelineLevelsMixin
from skdp_synth.exceptions import CoarseDomainWarning, DegenerateColumnWarning
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing._bin_mass import (
    FAR_EXCESS_Z,
    LEAFLESS_Z,
    REFUTED_Z,
    UNSEEN_EXCESS_Z,
    UNSEEN_OUTER_Z,
    UNSEEN_REACH,
    refuted_far_bin,
    unseen_outer_bin,
)

B = 16.7
#: a 0/1 column: its two finest leaves, an emptied stretch of 46 leaves, then
#: three noise leaves near 6e8 -- the top bin [2, 8.28e8) of the fit that
#: exploded (53 leaves, as there: a leaf is confirmed on its own count at
#: ``b ln(53 / 0.01)`` = 143)
GAP = list(np.geomspace(4.0, 2.7e8, 46))
EDGES = [-1.0, 0.0, 1.0, 2.0, *GAP, 5.369e8, 6.385e8, 7.593e8, 8.28e8]
EMPTY = [0.0] * 46
LEVELS = [0.0, 1.0, 2.0, 8.28e8]
SURE = B * np.log(53 / 0.01)


def _hist(far=(123.0, 39.0, 42.0), near=0.0):
    counts = [0.0, 1403.0, 1544.0, near, *EMPTY, *far]
    return fine_hist(EDGES, counts, scale=B)


def _noise(sd, m=3):
    return np.sqrt(sd * sd + 2.0 * B * B * m)


def test_a_far_group_the_release_refutes():
    """The three leaves claim 204 rows; the release puts the top bin (level
    2) at 6 ± 30. The excess is past ``REFUTED_Z`` sds of the
    difference: refuted. At an estimate just within those sds, or with a
    leaf confirmed on its own count (``b ln(L / 0.01)``: 111 at 7 leaves),
    or with no emptied stretch before the group, it is not."""
    assert REFUTED_Z == 3.0 and LEAFLESS_Z == 1.0  # set on the TUNE half
    hist = _hist()
    assert len(hist.counts) == 53
    assert refuted_far_bin(hist, LEVELS, 2, (6.0, 30.0), -1)
    edge = 204.0 - REFUTED_Z * _noise(30.0)
    assert refuted_far_bin(hist, LEVELS, 2, (edge - 1e-6, 30.0), -1)
    assert not refuted_far_bin(hist, LEVELS, 2, (edge + 1e-6, 30.0), -1)
    # a leaf confirmed on its own count
    assert not refuted_far_bin(
        _hist((SURE + 1.0, 39.0, 42.0)), LEVELS, 2, (6.0, 30.0), -1
    )
    assert refuted_far_bin(_hist((SURE - 1.0, 39.0, 42.0)), LEVELS, 2, (6.0, 30.0), -1)
    # a kept leaf next to the 1s: no emptied stretch before the group
    assert not refuted_far_bin(_hist(near=60.0), LEVELS, 2, (6.0, 30.0), -1)
    # no estimate
    assert not refuted_far_bin(hist, LEVELS, 2, None, -1)


def test_a_bin_without_a_kept_leaf():
    """Where no leaf of the bin was kept, the encoder saw nothing there, and
    the bin is refuted where the release's estimate is under ``LEAFLESS_Z``
    of its sds too. On the parent such a bin stopped the walk in from the
    end: a 0/1 column (``benchmarks/bench_refuted_far_bins.py``, ε = 0.3,
    seed 9) drew 16 model rows in a leafless bin above a noise leaf at
    2.7e8-5.4e8 and came back with 0.6 % of its rows at 5.4e8."""
    empty = _hist((0.0, 0.0, 0.0))
    sd = 30.0
    assert refuted_far_bin(empty, LEVELS, 2, (LEAFLESS_Z * sd - 1e-6, sd), -1)
    assert not refuted_far_bin(empty, LEVELS, 2, (LEAFLESS_Z * sd, sd), -1)


def test_a_narrow_leafless_tail_bin_is_not_refuted():
    """A leafless bin narrow beside the column's other bins holds a real
    tail too thin for the encoder's keep rules, not far noise: it is
    refuted only where it is wider than ``UNSEEN_REACH`` times their span.
    The births-like table of ``tests/test_missing_and_degenerate.py`` (ε =
    1, seed 1, the tree's plan): ``gained``'s bins ``[1, 4.83)`` and
    ``[4.83, 8.96)`` kept no leaf (23 and 28 real rows), the release put the
    second at 15.9 ± 20.7, and it was dropped with 2.8 % of the rows. On
    the parent this returned True."""
    edges = [1.0, 4.83, 8.96, 16.0, 19.14, 22.87, 32.52, 46.07]
    hist = fine_hist(edges, [0.0, 0.0, 159.1, 118.3, 99.7, 249.7, 347.4], scale=41.7)
    levels = [1.0, 4.83, 8.96, 16.0, 22.87, 32.52, 46.07]
    assert not refuted_far_bin(hist, levels, 1, (15.9, 20.7), 1)
    assert not refuted_far_bin(hist, levels, 0, (14.9, 20.7), 1)
    # the same leafless bin reaching past twice the span above it is refuted
    wide = [1.0 - 2.1 * 45.07, *levels[1:]]
    far = fine_hist([wide[0], *edges[1:]], hist.counts, scale=41.7)
    assert UNSEEN_REACH == 2.0
    assert refuted_far_bin(far, wide, 0, (14.9, 20.7), 1)
    assert not refuted_far_bin(far, wide, 0, (20.7, 20.7), 1)


def test_the_bottom_bin_mirrored():
    edges = [-x for x in EDGES[::-1]]
    counts = [42.0, 39.0, 123.0, *EMPTY, 0.0, 1544.0, 1403.0, 0.0]
    levels = [-8.28e8, -2.0, -1.0, 0.0]
    hist = fine_hist(edges, counts, scale=B)
    assert refuted_far_bin(hist, levels, 0, (6.0, 30.0), 1)
    assert not refuted_far_bin(hist, levels, 0, (180.0, 30.0), 1)


def test_the_pipeline_drops_a_refuted_bin_the_rows_use():
    """Through the pipeline's level rules: the model's rows use the top bin
    (level 2); its estimate 6 ± 30 is under the support test and refutes
    its leaves, so the bin is dropped and its leaves emptied. Before, an
    outer bin the rows use was always kept, and its rows decoded near 6e8."""
    spec = _spec("flag", LEVELS, _hist())
    rows = np.array([[0]] * 50 + [[1]] * 50 + [[2]] * 2)
    pipe, final = _run_levels(
        [spec], [[(1403.0, 30.0), (1544.0, 30.0), (6.0, 30.0)]], model_rows=rows
    )
    assert final.dropped == [(0, 2)]
    assert pipe.outer_bins_dropped_ == {"flag": [2.0]}
    assert pipe._refuted_far == {"flag"}
    np.testing.assert_allclose(spec.fine.counts[3:], 0.0)
    np.testing.assert_allclose(spec.fine.counts[:3], [0.0, 1403.0, 1544.0])


def test_a_real_far_group_the_release_sees_stays():
    """A far group of 180 rows (a code such as 999) that the release puts
    at 170 ± 30: over its support test, so the bin stays whatever the rule
    says; and within the noise of its leaves' claim, so not refuted."""
    hist = _hist((180.0, 0.0, 0.0))
    assert not refuted_far_bin(hist, LEVELS, 2, (170.0, 30.0), -1)
    spec = _spec("code", LEVELS, hist)
    rows = np.array([[0]] * 50 + [[1]] * 50 + [[2]] * 6)
    pipe, final = _run_levels(
        [spec], [[(1403.0, 30.0), (1544.0, 30.0), (170.0, 30.0)]], model_rows=rows
    )
    assert final.dropped == [] and pipe.outer_bins_dropped_ == {}


#: a 0/1 column whose noise leaves touch its body: ``[2, 64)``, ``[64,
#: 4096)`` and ``[4096, 8192)`` (6 leaves: a leaf is confirmed on its own
#: count at ``b ln(6 / 0.01)`` = 106.8)
TOUCH_EDGES = [-1.0, 0.0, 1.0, 2.0, 64.0, 4096.0, 8192.0]
TOUCH_LEVELS = [0.0, 1.0, 2.0, 8192.0]
TOUCH_SURE = B * np.log(6 / 0.01)


def _touching(first=100.0):
    return fine_hist(TOUCH_EDGES, [0.0, 1403.0, 1544.0, first, 39.0, 42.0], scale=B)


def test_an_outer_bin_the_release_does_not_see():
    """Noise leaves that touch the body are no far group (no emptied stretch
    before them), so :func:`refuted_far_bin` never drops their bin
    ``[2, 8192)`` (11.4 wide in ``t``); the release puts it under
    ``UNSEEN_OUTER_Z`` of its sd, none of its leaves is confirmed on its
    own count, the leaves' 181 rows exceed the estimate by more than
    ``UNSEEN_EXCESS_Z`` sds of the difference (or the estimate is at most
    0), and the bin is over ``UNSEEN_REACH`` times as wide as the bins
    inwards of it: unseen. At the thresholds, with a confirmed leaf, on a
    bin within that reach or without an estimate, it is not."""
    assert UNSEEN_OUTER_Z == 2.0 and UNSEEN_EXCESS_Z == 2.0
    assert UNSEEN_REACH == 2.0
    hist = _touching()
    sd = 30.0
    assert not refuted_far_bin(hist, TOUCH_LEVELS, 2, (-9.0, sd), -1)
    assert unseen_outer_bin(hist, TOUCH_LEVELS, 2, (-9.0, sd), -1)
    # under two sds, and 2.4 sds of the difference under the leaves' claim
    assert unseen_outer_bin(hist, TOUCH_LEVELS, 2, (UNSEEN_OUTER_Z * sd - 1e-6, sd), -1)
    assert not unseen_outer_bin(hist, TOUCH_LEVELS, 2, (UNSEEN_OUTER_Z * sd, sd), -1)
    # the excess at its threshold: 181 - T̂ against 2 sqrt(σ² + 2 m b²)
    sd = 60.0
    edge = 181.0 - UNSEEN_EXCESS_Z * np.sqrt(sd * sd + 2.0 * B * B * 3)
    assert 0.0 < edge < sd
    assert unseen_outer_bin(hist, TOUCH_LEVELS, 2, (edge - 1e-6, sd), -1)
    assert not unseen_outer_bin(hist, TOUCH_LEVELS, 2, (edge + 1e-6, sd), -1)
    # leaves claiming 101 rows, within 2 sds: unseen only where T̂ <= 0
    weak = _touching(20.0)
    assert unseen_outer_bin(weak, TOUCH_LEVELS, 2, (0.0, sd), -1)
    assert not unseen_outer_bin(weak, TOUCH_LEVELS, 2, (1e-6, sd), -1)
    sd = 30.0
    assert unseen_outer_bin(_touching(TOUCH_SURE - 0.1), TOUCH_LEVELS, 2, (0.0, sd), -1)
    assert not unseen_outer_bin(
        _touching(TOUCH_SURE + 0.1), TOUCH_LEVELS, 2, (0.0, sd), -1
    )
    assert not unseen_outer_bin(hist, TOUCH_LEVELS, 2, None, -1)
    # a histogram without a noise scale holds counts, not noise
    exact = fine_hist(
        TOUCH_EDGES, [0.0, 1403.0, 1544.0, 100.0, 39.0, 42.0], scale=np.nan
    )
    assert not np.isfinite(exact.scale)
    assert not unseen_outer_bin(exact, TOUCH_LEVELS, 2, (-9.0, sd), -1)
    # a bin [2, 4) of the leaf [2, 4), beside the bins [0, 2): 2 wide
    # against 2, within the reach
    narrow = fine_hist([-1.0, 0.0, 1.0, 2.0, 4.0], [0.0, 1403.0, 1544.0, 60.0], scale=B)
    assert not unseen_outer_bin(narrow, [0.0, 1.0, 2.0, 3.0], 2, (-9.0, sd), -1)


def test_a_thin_tail_within_reach_stays():
    """acs12's ``hrs_work`` (1-99; ε = 0.3, seed 2 of
    ``benchmarks/bench_suite.py``): the bottom bin ``[1, 16)`` (60 real rows,
    its leaf at 2.1 noise scales) beside ``[16, 65)``, measured at -57 ±
    87. Dropped, the column lost its 8 % below 16 (KS .23 -> .34); 15 wide
    beside 49, it cannot take the std far, and stays. The same leaf as
    ``[1, 256)`` below a body ``[256, 320)`` reaches past it, and goes."""
    hist = fine_hist([1.0, 16.0, 65.0, 256.0], [189.9, 577.4, 0.0], scale=88.9)
    assert not unseen_outer_bin(hist, [1.0, 16.0, 64.0], 0, (-56.8, 87.3), 1)
    wide = fine_hist([1.0, 256.0, 321.0], [189.9, 577.4], scale=88.9)
    assert unseen_outer_bin(wide, [1.0, 256.0, 320.0], 0, (-56.8, 87.3), 1)


def test_the_pipeline_drops_an_unseen_bin_the_rows_use():
    """Through the pipeline's level rules: the model's rows use the top bin
    (level 2), the release puts it at -9 ± 30; the bin is dropped and its
    leaves emptied, so no row decodes at 2-8,191, and the column is not
    named for it. On the parent it stayed
    (no emptied stretch: not refuted), as ``workinghours``' ``age`` (18-64;
    ε = 0.3, seed 0 of ``benchmarks/bench_suite.py``) kept ``[65, 8192)``
    and came back up to 8,100. A bin the release puts at 2 sds stays."""
    spec = _spec("age", TOUCH_LEVELS, _touching())
    rows = np.array([[0]] * 50 + [[1]] * 50 + [[2]] * 2)
    pipe, final = _run_levels(
        [spec], [[(1403.0, 30.0), (1544.0, 30.0), (-9.0, 30.0)]], model_rows=rows
    )
    assert final.dropped == [(0, 2)]
    assert pipe.outer_bins_dropped_ == {"age": [2.0]}
    # not named: under two sds, a real tail's last rows as often as noise
    assert pipe._refuted_far == set()
    np.testing.assert_allclose(spec.fine.counts, [0.0, 1403.0, 1544.0, 0.0, 0.0, 0.0])
    spec = _spec("age", TOUCH_LEVELS, _touching())
    pipe, final = _run_levels(
        [spec], [[(1403.0, 30.0), (1544.0, 30.0), (60.0, 30.0)]], model_rows=rows
    )
    assert final.dropped == [] and pipe.outer_bins_dropped_ == {}


def _fit_beside(rng, column, n=3000):
    """The default pipeline (ε = 1, seed 0) on ``column(n)`` as ``"c"``
    beside a declared categorical and a normal column drawn first from
    ``rng`` (as ``benchmarks/bench_odd_columns.py`` does): the pipeline,
    2,000 sampled rows and the warnings of fit and sample."""
    a, num = rng.choice(["x", "y", "z"], n), rng.normal(50, 10, n)
    df = pd.DataFrame({"a": a, "num": num, "c": column(n)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe = make_synthesis_pipeline(
            BooleanEncoder(categories={"a": ["x", "y", "z"]}, random_state=0),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
        ).fit(df)
        rows = pipe.sample(2000, random_state=1)
    return pipe, rows, caught


def test_a_flag_column_keeps_its_values():
    """A 0/1 integer column (3,000 rows, undeclared, ε = 1) whose private
    domain kept three noise leaves near 6e8 at seed 0: before, 4 of the
    2,000 rows came back at 5.5e8-8.2e8 (std x5e7, named by a
    DegenerateColumnWarning); now every row is 0 or 1, and the warning
    says the domain kept such leaves."""
    rng = np.random.default_rng(100)
    pipe, rows, caught = _fit_beside(rng, lambda n: rng.integers(0, 2, n))
    # the drop fixes the far rows, not the noise: the column is still named
    named = [
        str(w.message)
        for w in caught
        if issubclass(w.category, DegenerateColumnWarning) and "'c'" in str(w.message)
    ]
    assert len(named) == 1 and "refutes" in named[0]
    assert "refutes" in " ".join(pipe.degenerate_columns_["c"])
    hist = pipe[0].specs_[2].fine
    far = np.asarray(hist.edges[:-1]) > 1e8
    assert np.any(np.asarray(hist.raw)[far] > 7 * hist.scale)  # the noise leaf
    assert set(np.unique(rows["c"])) <= {0, 1}


def test_a_leaf_across_the_bin_edge_is_not_the_bins():
    """A wide leaf cut into one-integer bins (attrition's ``[1, 16)`` at
    ε = 0.3: 740 noisy rows, ``b`` = 111) is not a group of the bin
    ``[11, 12)``: its count is the whole leaf's, not the bin's, and the bin
    is never refuted by it. Before this check, such bins were dropped from
    the top down and the column's tail collapsed on the TUNE half
    (``YearsSinceLastPromotion`` std ratio 1.61 -> 0.20)."""
    edges = [0.0, 1.0, 16.0, 64.0]
    hist = fine_hist(edges, [400.0, 740.0, 0.0], scale=111.0)
    levels = [float(v) for v in range(0, 17)]
    assert not refuted_far_bin(hist, levels, 11, (85.0, 91.0), -1)
    assert not refuted_far_bin(hist, levels, 15, (-50.0, 91.0), -1)


def _bitless(hist, total):
    """Run the pipeline's level rules on a one-level numeric column (no bits
    in the release) whose last step releases ``total`` = ``(n̂, σ_∅)``."""
    spec = _spec("c", [-65536.0, 3.0], hist)
    spec.n_levels = 1
    blocks = object()
    encoder = SimpleNamespace(blocks_=blocks, specs_=[spec])
    final = SimpleNamespace(
        blocks_=SimpleNamespace(names=[]),
        _drop_unsupported_level=lambda *a, **k: False,
        _total_estimate=lambda: total,
    )
    pipe = SimpleNamespace(
        _iter=lambda with_final: [(0, "enc", encoder)],
        _drop_missing_level=lambda *a: False,
        _warn_degenerate=lambda *a: None,
    )
    PipelineLevelsMixin._drop_unsupported_levels(pipe, final, {"blocks": blocks})
    return spec.fine


#: a constant integer column (all 3, 3,000 rows, ε = 1): three noise leaves
#: ``[-65536, -16)``, an emptied stretch, then its one leaf ``[3, 4)``
CONST_EDGES = [-65536.0, -4096.0, -256.0, -16.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0]
CONST_COUNTS = [54.1, 33.5, 17.8, 0.0, 0.0, 0.0, 0.0, 0.0, 3047.0]


def test_a_column_without_bits_is_measured_by_the_released_total():
    """A one-level column has no bits in the release, so no estimate of a
    bin can empty its far noise leaves; its one bin holds every row, so the
    released total ``n̂ ± σ_∅`` is that estimate. The leaves claim 3,152 rows
    against 3,045 ± 31: the far group is emptied (``FAR_EXCESS_Z`` sds of
    the difference, ``sqrt(σ² + 2 m b²)``). A total that needs the group
    (3,150) keeps it, and without a released total nothing is done."""
    assert FAR_EXCESS_Z == 0.5
    hist = fine_hist(CONST_EDGES, CONST_COUNTS, scale=B)
    out = _bitless(hist, (3045.0, 31.2))
    np.testing.assert_array_equal(out.counts, [0.0] * 8 + [3047.0])
    # the excess 3152.4 - T̂ against FAR_EXCESS_Z sds of the difference
    edge = 3152.4 - FAR_EXCESS_Z * np.sqrt(31.2**2 + 2 * B * B * 4)
    kept = _bitless(hist, (edge + 1e-6, 31.2))
    np.testing.assert_array_equal(kept.counts, CONST_COUNTS)
    gone = _bitless(hist, (edge - 1e-6, 31.2))
    np.testing.assert_array_equal(gone.counts, [0.0] * 8 + [3047.0])
    assert _bitless(hist, None) is hist


def test_a_constant_integer_column_keeps_its_value():
    """A constant integer column (all 3, 3,000 rows, undeclared, ε = 1) whose
    private domain kept three noise leaves ``[-65536, -16)`` at seed 0:
    before, 3 % of the 2,000 rows came back at -26 to -10,200 (std 978,
    named only as a single bin); now every row is 3, and the column is still
    named by the encoder's ``CoarseDomainWarning``. The release's
    ``_total_estimate`` is its released total and the residual scale of
    ``∅``."""
    pipe, rows, caught = _fit_beside(np.random.default_rng(1), lambda n: np.full(n, 3))
    assert any(
        issubclass(w.category, CoarseDomainWarning) and "'c'" in str(w.message)
        for w in caught
    )
    hist = pipe[0].specs_[2].fine
    assert np.any(np.asarray(hist.raw)[np.asarray(hist.edges[:-1]) < -16] > 2 * B)
    assert set(np.unique(rows["c"])) == {3}
    final = pipe[-1]
    W = final.workload_
    assert final._total_estimate() == (
        final.n_estimate_,
        float(final.residual_scales_[W.subsets.index(())]),
    )
