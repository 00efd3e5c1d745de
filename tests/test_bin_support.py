"""Where the release's estimates of a numeric column's coarse bins decide
which bins its rows use and where inside a bin they lie: a tentative bin's
stricter support test, an emptied leaf given its bin's shortfall, a leaf
cut at the bins its release dropped, a dropped bin that is no support.
Released quantities only (post-processing)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from _fine_hist import fine_hist

from skdp_synth._pipeline_levels import TENTATIVE_SUPPORT_Z, PipelineLevelsMixin
from skdp_synth.gaussian_release._release import LEVEL_SUPPORT_Z
from skdp_synth.preprocessing._bin_mass import FILL_Z, fill_emptied_leaves
from skdp_synth.preprocessing._decoding import decode_fine, degenerate_reasons


def _hist(edges, counts, tentative=None, scale=1.0, integer=True):
    return fine_hist(edges, counts, tentative=tentative, scale=scale, integer=integer)


def _spec(name, levels, hist, split=()):
    return SimpleNamespace(
        name=name,
        kind="numeric",
        levels=list(levels),
        n_levels=len(levels) - 1,
        fine=hist,
        split=tuple(split),
        missing=False,
        other=False,
    )


class _Final:
    """A last step whose 1-way estimates are given: ``_drop_unsupported_level``
    drops a level under ``z`` sds (``LEVEL_SUPPORT_Z`` unless given), as
    the Gaussian and damped releases do."""

    def __init__(self, names, estimates):
        self.blocks_ = SimpleNamespace(names=names)
        self.estimates = estimates
        self.dropped = []

    def _one_way_level_estimate(self, j, level):
        return self.estimates[j][level]

    def _drop_unsupported_level(self, j, level, z=None, keep=()):
        est, sd = self.estimates[j][level]
        if not est < (LEVEL_SUPPORT_Z if z is None else z) * sd:
            return False
        self.dropped.append((j, level))
        return True


def _run_levels(specs, estimates, model_rows=None, random_state=None):
    blocks = object()
    encoder = SimpleNamespace(blocks_=blocks, specs_=specs)
    final = _Final([s.name for s in specs], estimates)
    if model_rows is not None:
        final._model_rows = model_rows
    if random_state is not None:
        final.random_state = random_state
    pipe = SimpleNamespace(
        _iter=lambda with_final: [(0, "enc", encoder)],
        _drop_missing_level=lambda *a: False,
        _warn_degenerate=lambda *a: None,
    )
    PipelineLevelsMixin._drop_unsupported_levels(pipe, final, {"blocks": blocks})
    return pipe, final


def test_a_tentative_bin_needs_the_stricter_support():
    """A column of 1s and 2s (finest leaves) with a tentative run
    ``[1025, 16385)`` in the bin ``[3, 9976]``, and another column with a
    one-integer split bin: both bins' release estimates at 2.5 sds. The
    tentative bin is dropped (``TENTATIVE_SUPPORT_Z = 3``), the split bin
    kept (``LEVEL_SUPPORT_Z = 2``). Before, both were kept, and the rows of
    the bin came back at 1,025-16,384 (std x1,100 on such a column)."""
    assert TENTATIVE_SUPPORT_Z == 3.0 and LEVEL_SUPPORT_Z == 2.0
    edges = [1, 2, 3, 4, 16, 1025, 4096, 16385]
    counts = [2400, 9400, 0, 0, 0, 500, 53]
    tent = [False, False, True, True, True, True, True]
    adults = _spec("adults", [1.0, 2.0, 3.0, 16384.0], _hist(edges, counts, tent), [2])
    assert adults.fine.tentative_bins(adults.levels) == [2]
    heap = _spec(
        "heap", [0.0, 5.0, 6.0, 10.0], _hist([0, 5, 6, 11], [900, 0, 900]), [1]
    )
    est = [(2400.0, 100.0), (9400.0, 100.0), (250.0, 100.0)]
    pipe, final = _run_levels([adults, heap], [est, est])
    assert final.dropped == [(0, 2)]
    assert pipe.integer_bins_dropped_ == {"adults": [3.0]}


def test_emptied_leaves_get_their_bins_shortfall():
    """Bin ``[8, 64)``: the release puts 460 ± 36 rows there, its one kept
    leaf ``[32, 64)`` holds 116 (``b = 42``); the emptied ``[8, 16)`` and
    ``[16, 32)`` get ``(460 - 116) / 2`` each (the shortfall is more than
    ``FILL_Z`` sds of the difference), and the bin's rows decode mostly
    below 32. A bin within its noise is left as it is (the same object).
    Before, every row of the bin decoded in ``[32, 64)``."""
    assert FILL_Z == 3.0
    b = 42.0
    hist = _hist([0, 8, 16, 32, 64], [300.0, 0.0, 0.0, 116.0], scale=b)
    est = [(290.0, 36.0), (460.0, 36.0)]
    assert 460 - 116 > FILL_Z * np.sqrt(36.0**2 + 2 * b * b)
    out = fill_emptied_leaves(hist, [0.0, 8.0, 63.0], est)
    np.testing.assert_allclose(out.counts, [300.0, 172.0, 172.0, 116.0])
    n = 4000
    rng = np.random.default_rng(0)
    v = decode_fine(out, np.full(n, 8.0), np.full(n, 63.0), np.ones(n, bool), rng)
    assert (v < 32).mean() > 0.6
    within = [(290.0, 36.0), (116.0 + 2.0 * np.sqrt(36.0**2 + 2 * b * b), 36.0)]
    assert fill_emptied_leaves(hist, [0.0, 8.0, 63.0], within) is hist
    # through the pipeline's level rules: the encoder's spec gets the fill
    spec = _spec("income", [0.0, 8.0, 63.0], hist)
    _run_levels([spec], [est])
    np.testing.assert_allclose(spec.fine.counts, out.counts)


def test_a_bin_the_rows_do_not_use_is_no_support():
    """Three bins, the release's estimates 1,000, 25 and 0 rows (sd 10):
    two above ``2 sd``, but the rows use only the first (the second was
    dropped: a tentative bin under its stricter test) -- a support narrower
    than the noise, named. Before, the dropped bin counted as support and
    the column (all rows at 0, its tail of 8.7 % lost) was not named."""
    hist = _hist([0, 1, 64, 256], [1000.0, 30.0, 0.0])
    spec = _spec("porch", [0.0, 1.0, 64.0, 255.0], hist)
    spec.time_unit = None
    est = [(1000.0, 10.0), (25.0, 10.0), (0.0, 10.0)]
    reasons = degenerate_reasons(spec, est, 1025.0, None, False, [1.0, 0.0, 0.0])
    assert any("1 of its 3 bins above" in r for r in reasons)
    used = degenerate_reasons(spec, est, 1025.0, None, False, [0.97, 0.03, 0.0])
    assert not any("bins above" in r for r in used)


def test_a_leaf_is_cut_at_the_bins_its_release_dropped():
    """A year column: ``[1961, 2004)`` (one year's 400 rows, at 2003) beside
    ``[2004, 2049)`` (1,900 rows) whose coarse parts from 2015 on the release
    measured as empty and the pipeline dropped. The leaf is cut at 2015, its
    count left on ``[2004, 2015)``, and the tail leaf below decays from that
    density (1,900 rows over 11 years, not 45): its rows lie near 2003.
    Before, they came back spread down to 1961 (std x3.1-3.4 on such a
    column)."""
    from skdp_synth.preprocessing._bin_mass import trim_dropped_bins

    hist = _hist([1961, 2004, 2049], [400.0, 1900.0], scale=83.0)
    levels = [1961.0, 2004.0, 2015.0, 2026.0, 2037.0, 2048.0]
    out = trim_dropped_bins(hist, levels, [2, 3, 4])
    np.testing.assert_array_equal(out.edges, [1961, 2004, 2015, 2049])
    np.testing.assert_allclose(out.counts, [400.0, 1900.0, 0.0])
    assert trim_dropped_bins(hist, levels, []) is hist
    n = 4000
    args = (np.full(n, 1961.0), np.full(n, 2004.0), np.zeros(n, bool))
    v = decode_fine(out, *args, np.random.default_rng(0))
    before = decode_fine(hist, *args, np.random.default_rng(0))
    assert v.std() < 4.0 < before.std()
    # through the pipeline's level rules: the dropped parts cut the leaf
    est = [(400.0, 60.0), (1900.0, 60.0), (0.0, 60.0), (0.0, 60.0), (0.0, 60.0)]
    spec = _spec("year", levels, hist, split=[1, 2, 3, 4])
    pipe, _ = _run_levels([spec], [est])
    assert pipe.integer_bins_dropped_ == {"year": [2015.0, 2026.0, 2037.0]}
    np.testing.assert_array_equal(spec.fine.edges, out.edges)


def test_an_outer_bin_measured_empty_leaves_the_next_leaf_a_tail():
    """An income column: ``[16385, 65536)`` (116 noisy rows, the real ones
    under 20,000) beside a kept noise leaf ``[65536, 1048576)`` (173 noisy
    rows, no real one) whose coarse bin the release puts at -60 rows and
    the model's rows do not use. The noise leaf is emptied, so
    ``[16385, 65536)`` is the column's outermost kept leaf and decays from
    16,385: most of its rows lie under 20,000, all under 30,000. Before,
    it decoded as an inner leaf, uniformly in ``t``: 86 % of them above
    20,000 (attrition's ``MonthlyIncome``, std ratio 2.15). A bin the
    model's rows use goes too while the release puts it under one sd and its
    leaf is not confirmed on its own count (``_bin_mass.unseen_outer_bin``;
    the leaf's 173 is under ``b ln(7 / 0.01)`` = 273): this case asserted
    "kept" before that rule. A bin the rows use at 1.1 sds, or one above the
    support test, is left as it is."""
    edges = [2049, 2897, 4096, 5792, 8192, 16385, 65536, 1048576]
    counts = [249.0, 177.0, 263.0, 0.0, 0.0, 116.0, 173.0]
    levels = [2049.0, 2897.0, 4096.0, 5792.0, 65536.0, 1048575.0]
    est = [(298.0, 36.0), (137.0, 36.0), (303.0, 36.0), (460.0, 36.0), (-60.0, 36.0)]

    def decoded(used_top, top=-60.0):
        spec = _spec("income", levels, _hist(edges, counts, scale=41.7))
        blocks = object()
        encoder = SimpleNamespace(blocks_=blocks, specs_=[spec])
        final = _Final(["income"], [[*est[:4], (top, 36.0)]])
        final._model_rows = np.array([[0], [1], [2], [3]] + [[4]] * used_top)
        pipe = SimpleNamespace(
            _iter=lambda with_final: [(0, "enc", encoder)],
            _drop_missing_level=lambda *a: False,
            _warn_degenerate=lambda *a: None,
        )
        PipelineLevelsMixin._drop_unsupported_levels(pipe, final, {"blocks": blocks})
        n = 4000
        args = (np.full(n, 5792.0), np.full(n, 65536.0), np.zeros(n, bool))
        v = decode_fine(spec.fine, *args, np.random.default_rng(0))
        return pipe, v[v >= 16385]

    for pipe, top in (decoded(0), decoded(1)):
        assert np.mean(top < 20000) > 0.5 and top.max() < 30000
        assert pipe.outer_bins_dropped_ == {"income": [65536.0]}
    for kept in (decoded(1, top=40.0), decoded(0, top=100.0)):
        assert np.mean(kept[1] < 20000) < 0.25
        assert not kept[0].outer_bins_dropped_


def test_the_only_value_level_is_never_dropped():
    """A column without missing values whose private domain kept a single
    one-integer bin ``[5, 6)`` and a missing level: the release puts 670 ±
    630 rows in the bin (under ``LEVEL_SUPPORT_Z``) and the model's rows
    hold 34 % there, 66 % missing. The bin is kept, so the rows keep their
    values; a second column's bin under the test beside another used bin
    is still dropped. Before, the bin was dropped and its rows moved to the
    missing level: the column came back 100 % missing (modeldata
    ``attrition``'s ``MonthlyRate`` at ε = 0.1, seed 0, ``selection="mst"``)."""
    lone = _spec("rate", [5.0, 6.0], _hist([5, 6], [900.0]), [0])
    lone.missing = True
    pair = _spec("pair", [0.0, 5.0, 6.0], _hist([0, 5, 6], [900.0, 0.0]), [1])
    pair.missing = True
    est = [(670.0, 630.0), (989.0, 630.0)]
    est2 = [(900.0, 100.0), (50.0, 100.0), (0.0, 100.0)]
    pipe, final = _drop_levels([lone, pair], [est, est2], 0.34)
    assert (0, 0) not in final.dropped
    assert (1, 1) in final.dropped
    assert "rate" not in pipe.integer_bins_dropped_
    assert pipe.integer_bins_dropped_["pair"] == [5.0]


def test_a_column_whose_rows_are_all_missing_is_named():
    """One bin ``[0, 1)`` and a kept missing level, released at 1,035 ±
    200 and 624 ± 200 rows: rows entirely missing are named ("comes back
    entirely missing"), rows 38 % missing are not, nor all-missing rows
    where the release cannot tell the bin's count from 0. Before, 100 %
    missing rows against a released missing share of 0.38 ± 0.37 (within
    ``MISSING_ROWS_Z`` at ε = 0.1) were not named."""
    spec = _spec("years", [0.0, 1.0], None)
    spec.missing, spec.time_unit = True, None
    est = [(1035.0, 200.0), (624.0, 200.0)]
    named = degenerate_reasons(spec, est, 1659.0, 1.0, True, [0.0])
    assert any("comes back entirely missing" in r for r in named)
    kept = degenerate_reasons(spec, est, 1659.0, 0.38, True, [0.62])
    assert not any("entirely missing" in r for r in kept)
    weak = [(500.0, 200.0), (1159.0, 200.0)]
    unsure = degenerate_reasons(spec, weak, 1659.0, 1.0, True, [0.0])
    assert not any("entirely missing" in r for r in unsure)


def test_the_only_other_level_is_never_dropped():
    """A categorical column whose private domain found no level: only its
    ``"other"`` level and a missing level, released at 229 ± 311 and 742 ±
    311 rows, the model's rows 24 % ``"other"``. It is kept (the rows keep
    their 76 % missing); another column's ``"other"`` beside a used level
    is still dropped. Before, it was dropped and the column came back
    100 % missing (the default pipeline on modeldata ``attrition``,
    ε = 0.1, seed 1: ``Gender``)."""

    def nominal(name, levels):
        return SimpleNamespace(
            name=name,
            kind="nominal",
            levels=list(levels),
            n_levels=len(levels),
            fine=None,
            split=(),
            missing=True,
            other=True,
        )

    alone, beside = nominal("gender", ["other"]), nominal("role", ["a", "other"])
    est = [(229.0, 311.0), (742.0, 311.0)]
    est2 = [(900.0, 100.0), (50.0, 100.0), (0.0, 100.0)]
    pipe, final = _drop_levels([alone, beside], [est, est2], 0.24)
    assert (0, 0) not in final.dropped
    assert (1, 1) in final.dropped
    assert pipe.other_dropped_ == ["role"]


def _drop_levels(specs, estimates, value_share):
    """Run the pipeline's level-support step on two columns (``specs``,
    their released ``estimates``) over 1,000 model rows: the first column
    on its value level in ``value_share`` of them (code 0, else the missing
    level, code 1), the second on codes 0 and 1 alike."""
    rng = np.random.default_rng(0)
    rows = np.column_stack(
        [(rng.random(1000) > value_share).astype(np.intp), rng.integers(0, 2, 1000)]
    )
    return _run_levels(specs, estimates, rows)


def test_a_dropped_bin_at_the_domains_end_empties_its_leaves():
    """The income column of the test above, its top bin a tentative one
    (its noise leaf ``[65536, 1048576)`` joined at the looser level) that
    the release puts at 100 ± 36 rows, under ``TENTATIVE_SUPPORT_Z``: the
    pipeline drops it, and, the bin lying at the domain's end, empties its
    leaf as it empties an outer bin measured as empty, so ``[16385,
    65536)`` decays from 16,385 as the column's tail. Before, the dropped
    bin's leaf kept its count, and the bin below decoded ``[16385, 65536)``
    as an inner leaf, uniformly in ``t`` (credit's ``Debt`` at ε = 0.3,
    seed 7: std x9.08)."""
    from skdp_synth._pipeline_levels import OUTER_DROPPED_EMPTIED

    assert OUTER_DROPPED_EMPTIED
    edges = [2049, 2897, 4096, 5792, 8192, 16385, 65536, 1048576]
    counts = [249.0, 177.0, 263.0, 0.0, 0.0, 116.0, 173.0]
    tent = [False] * 6 + [True]
    levels = [2049.0, 2897.0, 4096.0, 5792.0, 65536.0, 1048575.0]
    hist = _hist(edges, counts, tentative=tent, scale=41.7)
    assert hist.tentative_bins(levels) == [4]
    spec = _spec("income", levels, hist, split=[4])
    est = [(298.0, 36.0), (137.0, 36.0), (303.0, 36.0), (460.0, 36.0), (100.0, 36.0)]
    assert 100.0 < TENTATIVE_SUPPORT_Z * 36.0
    pipe, _ = _run_levels([spec], [est])
    assert pipe.integer_bins_dropped_ == {"income": [65536.0]}
    assert spec.fine.counts[-1] == 0.0
    n = 4000
    args = (np.full(n, 5792.0), np.full(n, 65536.0), np.zeros(n, bool))
    v = decode_fine(spec.fine, *args, np.random.default_rng(0))
    top = v[v >= 16385]
    assert np.mean(top < 20000) > 0.5 and top.max() < 30000
    # a dropped bin that is not tentative (a heap's one-integer neighbour,
    # a kept range's integer) keeps its leaves: emptying them moved the
    # densest leaf of attrition's PercentSalaryHike and its rows' top
    hist = _hist(edges, counts, scale=41.7)
    spec = _spec("income", levels, hist, split=[4])
    pipe, _ = _run_levels([spec], [[*est[:4], (50.0, 36.0)]])
    assert pipe.integer_bins_dropped_ == {"income": [65536.0]}
    assert spec.fine.counts[-1] == 173.0


def test_an_inner_integer_leafs_parts_fall_back_on_the_leaf():
    """An integer column's inner leaf ``[8, 24)`` (kept leaves on both
    sides), cut into four parts the release puts at 50 ± 40 rows each: no
    part passes, but the leaf's 200 rows are there, so the parts are kept
    and the model's rows in them spread over the leaf (``_uncut_leaves``,
    as a float column's). Before, every part was dropped under its test and
    its rows moved to the column's other bins (credit's ``Assets`` at
    ε = 0.3, seed 7: its bins 4,096-16,385 dropped, KS .379; now .229). The
    same leaf as the column's last kept leaf is left to the tests: spread
    over a leaf past the data's end, its rows came back far out
    (workinghours' ``education``, ``[16, 256)``, std x9.4)."""
    from skdp_synth._pipeline_levels import UNCUT_INTEGER_LEAVES

    assert UNCUT_INTEGER_LEAVES
    edges = [0, 4, 8, 24, 40]
    levels = [0.0, 4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 39.0]
    parts = [2, 3, 4, 5]

    def run(counts):
        spec = _spec("n", levels, _hist(edges, counts, scale=20.0), split=parts)
        spec.wide = tuple(parts)
        est = [(500.0, 40.0), (300.0, 40.0)] + [(50.0, 40.0)] * 4 + [(400.0, 40.0)]
        rows = np.array([[0]] * 5 + [[2]] * 3 + [[6]] * 2)
        return _run_levels([spec], [est], model_rows=rows, random_state=0)

    assert 50.0 < LEVEL_SUPPORT_Z * 40.0
    pipe, final = run([500.0, 300.0, 200.0, 400.0])
    assert pipe.integer_bins_dropped_ == {}
    rows = final._model_rows[:, 0]
    assert np.count_nonzero(np.isin(rows, parts)) == 3
    assert np.count_nonzero(rows == 0) == 5 and np.count_nonzero(rows == 6) == 2
    # the same parts in the column's last kept leaf: tested one by one
    pipe, _ = run([500.0, 300.0, 200.0, 0.0])
    assert pipe.integer_bins_dropped_ == {"n": [8.0, 12.0, 16.0, 20.0]}
