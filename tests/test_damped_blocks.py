"""The block-aware default of DampedPrivateSynthesizer.

``parameters="optimal"``, the default.

Every constant of ``doc/privacy.md`` ("The default release") is pinned here:
the geometry of the valid rows (by brute force over every valid row and pair
of rows), the sums' l1 sensitivity (over every neighbouring pair of records
and cell moves), the PROJ spread, the budget split and the plan's constants;
the fitted estimator is spied on to check that it uses them. The empirical
audit is in ``test_damped_audit.py``.
"""

import itertools
import math

import numpy as np
import pytest

from skdp_synth import DampedPrivateSynthesizer
from skdp_synth.blocks import Blocks
from skdp_synth.damped import _estimator as damped_module
from skdp_synth.damped._damping import block_geometry, damped_microaggregation
from skdp_synth.damped._parameters import (
    CELL_NOISE_RATIO,
    DAMPING_UNITS,
    OPTIMAL_SPLIT,
    PLAN_ALPHAS,
    PLAN_MAX_CELLS,
    PLAN_MAX_COMPONENTS,
    block_plan,
    count_noise_scale,
    lattice_count,
    resolve_block_plan,
    share_projection_scale,
    sum_noise_scale,
)
from skdp_synth.mechanisms._noise import NoiseSource

pytestmark = pytest.mark.filterwarnings(
    "ignore::skdp_synth.exceptions.PrivacyBudgetWarning"
)

SPEC = [
    {"name": "a", "kind": "onehot", "width": 3},
    {"name": "b", "kind": "binary", "width": 1},
    {"name": "c", "kind": "thermometer", "width": 2},
    {"name": "d", "kind": "onehot", "width": 2},
    {"name": "e", "kind": "thermometer", "width": 2, "missing": True},
]
BLOCKS = Blocks.from_spec(SPEC)


def _valid_rows(blocks):
    """Every valid row of ``blocks`` (the product of the blocks' codes)."""
    per_block = [b.codes().astype(float) for b in blocks.blocks]
    return np.array([np.concatenate(c) for c in itertools.product(*per_block)])


def _random_rows(blocks, n, rng):
    levels = np.stack([rng.integers(0, b.n_levels, n) for b in blocks.blocks], 1)
    return blocks.to_bits(levels).astype(np.int64)


# ============================================================== geometry
def test_block_geometry_by_hand():
    """one-hot w: centroid 1/w, radius^2 1 - 1/w, diameter 2, sum radius 1;
    binary: 1/2, 1/4, 1, 1/2; thermometer w (levels 0..w): 1/2 is the l1
    centre (radius w/2), diameter w."""
    g = block_geometry(Blocks.from_spec(SPEC[:2]))
    np.testing.assert_allclose(g.centroid, [1 / 3, 1 / 3, 1 / 3, 0.5])
    assert g.radius2 == pytest.approx((1 - 1 / 3) + 1 / 4)
    assert (g.diameter, g.sum_radius, g.sensitivity) == (3.0, 1.5, 3.0)
    np.testing.assert_array_equal(g.sum_centre, [0, 0, 0, 0.5])
    # the cube (every bit binary): centre 1/2, M^2 = p/4, Delta = p
    cube = block_geometry(Blocks.binary(7))
    assert (cube.radius2, cube.diameter, cube.sensitivity) == (7 / 4, 7.0, 7.0)


def test_block_geometry_is_exact_over_the_valid_rows():
    """radius2, diameter and sum_radius are the maxima over the valid rows
    (attained), and the sensitivity is the max over all neighbouring moves."""
    g = block_geometry(BLOCKS)
    rows = _valid_rows(BLOCKS)
    assert len(rows) == 3 * 2 * 3 * 2 * 3
    d2 = ((rows - g.centroid) ** 2).sum(1)
    assert d2.max() == pytest.approx(g.radius2)
    diffs = np.abs(rows[:, None, :] - rows[None, :, :]).sum(2)
    assert diffs.max() == g.diameter
    assert np.abs(rows - g.sum_centre).sum(1).max() == g.sum_radius
    assert g.sensitivity == max(g.diameter, 2 * g.sum_radius) == 9.0
    # the centroid is the mean of the valid rows (the product's centroid)
    np.testing.assert_allclose(rows.mean(0), g.centroid)


def test_sum_sensitivity_by_brute_force():
    """Replace one record (any valid u -> u', any cell move) in a random
    partition: the centred sums move by at most Delta in l1, and Delta is
    attained."""
    g = block_geometry(BLOCKS)
    rows = _valid_rows(BLOCKS)
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(300):
        n = int(rng.integers(1, 8))
        X = rows[rng.integers(0, len(rows), n)]
        labels = rng.integers(0, 3, n)
        i = rng.integers(n)
        X2, labels2 = X.copy(), labels.copy()
        X2[i], labels2[i] = rows[rng.integers(len(rows))], rng.integers(0, 3)
        _, s1, _ = damped_microaggregation(X, labels, 3, 0.0, g.sum_centre, True)
        _, s2, _ = damped_microaggregation(X2, labels2, 3, 0.0, g.sum_centre, True)
        change = np.abs(s1 - s2).sum()
        assert change <= g.sensitivity + 1e-12
        worst = max(worst, change)
    # attained: the farthest rows from the sum centre, moved between cells
    far = rows[np.argmax(np.abs(rows - g.sum_centre).sum(1))]
    c = g.sum_centre
    _, s1, _ = damped_microaggregation(far[None], np.array([0]), 2, 0.0, c, True)
    _, s2, _ = damped_microaggregation(far[None], np.array([1]), 2, 0.0, c, True)
    assert np.abs(s1 - s2).sum() == g.sensitivity


def test_projection_spread_bounded_by_twice_radius2():
    """Every pair of valid rows: the spread of (u-c)(u-c)^T - (u'-c)(u'-c)^T is
    <= 2 M^2 (the PROJ scale n eps_1/(2 t M^2) makes a call eps_1/t-DP)."""
    g = block_geometry(BLOCKS)
    rows = _valid_rows(BLOCKS) - g.centroid
    worst = 0.0
    for a in rows:
        for b in rows[::3]:
            ev = np.linalg.eigvalsh(np.outer(a, a) - np.outer(b, b))
            worst = max(worst, ev[-1] - ev[0])
    assert worst <= 2 * g.radius2 + 1e-12
    assert worst > 0.8 * 2 * g.radius2  # the bound is nearly attained


# =============================================================== the plan
def test_plan_constants_are_pinned():
    assert OPTIMAL_SPLIT == (0.2, 0.2, 0.6)
    assert math.fsum(OPTIMAL_SPLIT) == 1.0
    assert CELL_NOISE_RATIO == 50.0
    assert DAMPING_UNITS == 2.0
    assert PLAN_ALPHAS == (1.0, 0.7, 0.5)
    assert PLAN_MAX_COMPONENTS == 8
    assert PLAN_MAX_CELLS == 5000
    assert sum_noise_scale(18.0, 0.6) == 18.0 / 0.6
    assert count_noise_scale(1000, 0.2) == 2 / (1000 * 0.2)
    assert share_projection_scale(1000, 0.2, 2, 5.0) == 1000 * 0.2 / (2 * 2 * 5.0)
    # each piece spends exactly its share
    for n, eps, t, delta, m2 in [(1000, 1.0, 2, 18.0, 6.4), (50, 0.01, 1, 3.0, 1.0)]:
        e1, e2, e3 = (share * eps for share in OPTIMAL_SPLIT)
        assert delta / sum_noise_scale(delta, e3) == pytest.approx(e3)
        assert (2 / n) / count_noise_scale(n, e2) == pytest.approx(e2)
        assert t * share_projection_scale(n, e1, t, m2) * 2 * m2 / n == pytest.approx(
            e1
        )


def test_plan_takes_the_most_directions_then_the_largest_covering():
    for n, p, eps, delta in [(26_217, 42, 1.0, 18.0), (10**6, 42, 1.0, 18.0),
                             (10**5, 60, 0.5, 30.0), (500, 5, 1.0, 5.0),
                             (10**7, 42, 100.0, 18.0)]:  # fmt: skip
        alpha, t, b, split = block_plan(n, p, eps, delta)
        cap = n * OPTIMAL_SPLIT[2] * eps / (CELL_NOISE_RATIO * delta)
        cap = min(cap, PLAN_MAX_CELLS)
        s = lattice_count(t, alpha)
        assert s <= max(cap, 1)
        for tt in range(1, min(p, PLAN_MAX_COMPONENTS) + 1):
            for a in PLAN_ALPHAS:
                ss = lattice_count(tt, a)
                if tt > t:
                    assert ss > cap  # no covering with more directions fits
                elif tt == t:
                    assert ss > cap or ss <= s  # the largest one that fits
        assert split == (OPTIMAL_SPLIT if t > 0 else (0.0, 0.0, 1.0))
        assert b == DAMPING_UNITS * delta / (split[2] * eps)
    assert block_plan(26_217, 42, 1.0, 18.0)[:2] == (0.7, 2)
    assert block_plan(10**6, 42, 1.0, 18.0)[:2] == (1.0, 5)
    assert block_plan(51_920, 57, 10.0, 22.0)[:2] == (1.0, 4)  # not (0.5, 3)


def test_plan_overrides():
    assert resolve_block_plan(10**6, 42, 1.0, 18.0, n_components=0) == (
        1.0, 0, 36.0, (0.0, 0.0, 1.0),
    )  # fmt: skip
    a, t, b, split = resolve_block_plan(10**6, 42, 1.0, 18.0, alpha=0.3, damping=7.0)
    assert (a, t, b, split) == (0.3, 5, 7.0, OPTIMAL_SPLIT)
    with pytest.raises(ValueError, match="n_components"):
        resolve_block_plan(100, 4, 1.0, 4.0, n_components=5)


@pytest.mark.parametrize("n, eps", [(3000, 1.0), (50_000, 5.0), (60_000, 100.0)])
def test_plan_is_data_independent(n, eps):
    """Two unrelated datasets with the same (public) blocks get the same plan;
    the plan depends on the blocks only through the public geometry."""
    rng = np.random.default_rng(1)
    A = np.tile(_valid_rows(BLOCKS)[:1], (n, 1)).astype(np.int64)
    B = _random_rows(BLOCKS, n, rng)
    plans = []
    for X in (A, B):
        est = DampedPrivateSynthesizer(epsilon=eps, random_state=0, blocks=BLOCKS)
        est.fit(X)
        plans.append(
            (est.alpha_, est.n_components_, est.damping_, est.n_cells_,
             est.projection_scale_, est.weight_noise_scale_, est.mean_noise_scale_,
             est.budget_split_, est.radius_)
        )  # fmt: skip
    assert plans[0] == plans[1]
    g = block_geometry(BLOCKS)
    alpha, t, b, split = block_plan(n, BLOCKS.n_features, eps, g.sensitivity)
    assert plans[0][:3] == (alpha, t, b)
    assert plans[0][-2:] == (split, math.sqrt(g.radius2 / BLOCKS.n_features))


# ========================================================= the fitted release
class _Spy:
    def __init__(self, monkeypatch):
        self.laplace_calls, self.proj_calls = [], []
        original_laplace, original_proj = NoiseSource.laplace, damped_module.proj

        def laplace(source, values, scale):
            out = original_laplace(source, values, scale)
            self.laplace_calls.append((np.array(values, dtype=float), scale, out))
            return out

        def proj(A, t, rng):
            V = original_proj(A, t, rng)
            self.proj_calls.append((A.copy(), t, V))
            return V

        monkeypatch.setattr(NoiseSource, "laplace", laplace)
        monkeypatch.setattr(damped_module, "proj", proj)


def test_noise_is_applied_with_the_pinned_scales(monkeypatch):
    spy = _Spy(monkeypatch)
    rng = np.random.default_rng(3)
    X = _random_rows(BLOCKS, 4000, rng)
    n, p, eps = X.shape[0], X.shape[1], 2.0
    est = DampedPrivateSynthesizer(
        epsilon=eps, n_components=2, alpha=0.5, random_state=1, blocks=BLOCKS
    ).fit(X)
    g = block_geometry(BLOCKS)
    e1, e2, e3 = (share * eps for share in OPTIMAL_SPLIT)
    # PROJ: (n e1/(2 t M^2)) times the second moment about the centroid
    (A, t, V), = spy.proj_calls  # fmt: skip
    Xc = X - g.centroid
    np.testing.assert_allclose(
        A, n * e1 / (2 * 2 * g.radius2) * (Xc.T @ Xc / n), rtol=1e-10, atol=1e-10
    )
    # counts over all s cells, centred sums over all s x p entries
    (w, w_scale, w_noisy), (sums, y_scale, sums_noisy) = spy.laplace_calls
    s = est.n_cells_
    assert w.shape == (s,) and sums.shape == (s, p)
    assert w_scale == 2 / (n * e2) == est.weight_noise_scale_
    assert y_scale == g.sensitivity / e3 == est.mean_noise_scale_
    labels = est.covering_.nearest(Xc @ V / math.sqrt(g.radius2))
    np.testing.assert_array_equal(w, np.bincount(labels, minlength=s) / n)
    true_sums = np.zeros((s, p))
    np.add.at(true_sums, labels, X - g.sum_centre)
    np.testing.assert_allclose(sums, true_sums, atol=1e-9)
    # the released means are post-processing of the noisy counts and sums
    n_hat = np.clip(w_noisy, 0, None) * n
    total = sums_noisy + n_hat[:, None] * g.sum_centre
    c = est.centre_
    np.testing.assert_allclose(c, g.centroid)
    expected = (
        c + (total - n_hat[:, None] * c) / np.maximum(n_hat, est.damping_)[:, None]
    )
    np.testing.assert_allclose(est.cell_means_, np.clip(expected, 0, 1))


def test_one_cell_is_the_noisy_one_way_release(monkeypatch):
    """t = 0: no PROJ, no count noise (the count is the public n), the whole
    eps on the sums with l1 sensitivity Delta: the released means are the 1-way
    bit frequencies plus Lap(Delta/(n eps))."""
    spy = _Spy(monkeypatch)
    rng = np.random.default_rng(4)
    X = _random_rows(BLOCKS, 300, rng)
    n, eps = 300, 1.0
    est = DampedPrivateSynthesizer(epsilon=eps, random_state=2, blocks=BLOCKS).fit(X)
    assert (est.n_components_, est.n_cells_) == (0, 1)
    assert est.budget_split_ == (0.0, 0.0, 1.0)
    assert spy.proj_calls == []
    ((sums, scale, noisy),) = spy.laplace_calls
    g = block_geometry(BLOCKS)
    assert scale == g.sensitivity / eps
    np.testing.assert_allclose(est.weights_, [1.0])
    np.testing.assert_allclose(
        est.cell_means_[0], np.clip(noisy[0] / n + g.sum_centre, 0, 1)
    )


def test_marginals_centre_is_post_processing(monkeypatch):
    """centre="marginals": the pooled 1-way marginals of the released sums,
    mapped into the blocks' hull -- computed from released values only."""
    spy = _Spy(monkeypatch)
    rng = np.random.default_rng(5)
    X = _random_rows(BLOCKS, 3000, rng)
    est = DampedPrivateSynthesizer(
        n_components=1, random_state=0, blocks=BLOCKS, centre="marginals"
    ).fit(X)
    (_, _, w_noisy), (_, _, sums_noisy) = spy.laplace_calls
    g = block_geometry(BLOCKS)
    total = sums_noisy + (np.clip(w_noisy, 0, None) * 3000)[:, None] * g.sum_centre
    pooled = np.clip(total.sum(0) / 3000, 0, 1)
    np.testing.assert_allclose(est.centre_, damped_module._hull_point(BLOCKS, pooled))
    rows = _valid_rows(BLOCKS)
    # a point of the hull: each block's part is a convex combination of codes
    for block in BLOCKS.blocks:
        P = block.level_probabilities(est.centre_[None, block.columns])
        np.testing.assert_allclose(P @ block.codes(), est.centre_[None, block.columns])
    assert rows.shape[1] == est.centre_.shape[0]


def test_marginals_centre_needs_the_block_release():
    with pytest.raises(ValueError, match="marginals"):
        DampedPrivateSynthesizer(parameters="bound", centre="marginals").fit(
            np.eye(3, dtype=int)[[0, 1, 2, 0]]
        )


def test_box_domain_uses_the_cube_geometry():
    rng = np.random.default_rng(0)
    X = rng.random((2000, 3))
    est = DampedPrivateSynthesizer(
        domain="box", bounds=(0, 1), n_components=1, random_state=0
    ).fit(X)
    assert est.mean_noise_scale_ == 3 / (0.6 * 1.0)
    assert est.radius_ == pytest.approx(0.5)


def test_default_beats_the_one_way_release_on_correlated_blocks():
    """Two one-hot blocks that copy each other: the default's cells carry the
    correlation a product of 1-way marginals cannot (2-way TV, fixed seeds)."""
    from skdp_synth.metrics import marginal_error

    rng = np.random.default_rng(0)
    blocks = Blocks.from_spec(
        [{"name": "a", "kind": "onehot", "width": 4},
         {"name": "b", "kind": "onehot", "width": 4}]
    )  # fmt: skip
    lv = rng.integers(0, 4, 200_000)
    X = blocks.to_bits(np.stack([lv, lv], 1)).astype(np.int64)
    levels = blocks.to_levels(X)
    default = DampedPrivateSynthesizer(random_state=0, blocks=blocks).fit(X)
    one_way = DampedPrivateSynthesizer(
        random_state=0, blocks=blocks, n_components=0
    ).fit(X)
    assert default.n_components_ > 0
    tv = {}
    for name, est in (("default", default), ("one_way", one_way)):
        Y = blocks.to_levels(est.sample(50_000, random_state=1).astype(np.uint8))
        tv[name] = marginal_error(levels, Y, d=2, kind="tv")
    assert tv["default"] < 0.5 * tv["one_way"], tv


def test_sampling_by_cell_equals_blocks_round():
    """The per-cell rounding of ``sample`` draws exactly the rows of
    ``blocks_.round`` applied to the bootstrapped cell means."""
    rng = np.random.default_rng(6)
    X = _random_rows(BLOCKS, 3000, rng)
    est = DampedPrivateSynthesizer(
        epsilon=50.0, n_components=2, alpha=0.5, random_state=0, blocks=BLOCKS
    ).fit(X)
    assert BLOCKS.is_valid(est.sample(2000, random_state=3)).all()
    idx = np.random.default_rng(9).choice(est.n_cells_, 5000, p=est.weights_)
    a = damped_module._round_cells(
        BLOCKS, est.cell_means_, idx, np.random.default_rng(1)
    )
    b = BLOCKS.round(est.cell_means_[idx], np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)
    assert a.dtype == b.dtype == np.uint8


def test_sampling_by_cell_in_many_chunks_equals_blocks_round(monkeypatch):
    """Chunk boundaries do not change the rows (chunks of 7 values here)."""
    monkeypatch.setattr(damped_module, "_ROUND_CHUNK", 7)
    rng = np.random.default_rng(6)
    X = _random_rows(BLOCKS, 3000, rng)
    est = DampedPrivateSynthesizer(
        epsilon=50.0, n_components=2, alpha=0.5, random_state=0, blocks=BLOCKS
    ).fit(X)
    idx = np.random.default_rng(9).choice(est.n_cells_, 999, p=est.weights_)
    a = damped_module._round_cells(
        BLOCKS, est.cell_means_, idx, np.random.default_rng(1)
    )
    b = BLOCKS.round(est.cell_means_[idx], np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)
    Y = est.sample(999, random_state=2)
    assert Y.dtype == X.dtype and BLOCKS.is_valid(Y).all()  # the training dtype


@pytest.mark.filterwarnings(
    "ignore:DampedPrivateSynthesizer.accuracy_bound:skdp_synth.exceptions.PrivacyLeakWarning"
)
@pytest.mark.parametrize("centre", ["auto", "cube", "marginals", None])
@pytest.mark.parametrize(
    "settings",
    [{}, {"epsilon": 5.0, "n_components": 2, "alpha": 0.5},
     {"epsilon": 1e4, "alpha": 0.05, "damping": 1.0, "n_components": 1}],
)  # fmt: skip
@pytest.mark.parametrize("d", [1, 2])
def test_theorem_5_9_holds_for_the_default_release(centre, settings, d):
    """eq. 5.7 with r_j = released (pre-clip) mean - damped mean of the true
    counts, rho = noisy - true weights: deterministic, for every centre."""
    from skdp_synth.metrics import moment_error

    rng = np.random.default_rng(7)
    X = _random_rows(BLOCKS, 3000, rng)
    p = X.shape[1]
    for seed in range(3):
        est = DampedPrivateSynthesizer(
            keep_diagnostics=True, random_state=seed, blocks=BLOCKS, centre=centre,
            **settings,
        ).fit(X)  # fmt: skip
        c = est.centre_
        x = (X - c) / math.sqrt(p)
        y = (est.cell_means_ - c) / math.sqrt(p)
        lhs = moment_error(x, y, d=d, synthetic_weight=est.weights_)
        assert lhs <= est.accuracy_bound(d) * (1 + 1e-12), (lhs, est.accuracy_bound(d))
        if settings.get("epsilon") == 1e4 and centre is not None:
            assert est.accuracy_bound(d) < 2.0  # non-vacuous (M < 1)


def test_sampling_all_binary_is_per_bit_randomized_rounding(monkeypatch):
    """Every block binary: ``rng.random(shape) < points[idx]`` exactly
    (:cite:`Boedihardjo2024` §4.3), in any chunking."""
    monkeypatch.setattr(damped_module, "_ROUND_CHUNK", 9)
    rng = np.random.default_rng(2)
    X = (rng.random((2000, 6)) < 0.4).astype(np.float64)
    est = DampedPrivateSynthesizer(epsilon=5.0, random_state=0).fit(X)
    idx = np.random.default_rng(3).choice(est.n_cells_, 501, p=est.weights_)
    a = damped_module._round_cells(
        est.blocks_, est.cell_means_, idx, np.random.default_rng(4)
    )
    u = np.random.default_rng(4).random((501, 6))
    np.testing.assert_array_equal(a, (u < est.cell_means_[idx]).astype(np.uint8))
