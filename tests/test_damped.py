"""Tests of DampedPrivateSynthesizer (:cite:`Boedihardjo2024` §5, Algorithm 4).

Every privacy constant is pinned to its equation; Theorem 5.9 is checked as a
deterministic inequality on the realised noise. The empirical privacy audit
is in ``test_damped_audit.py``.
"""

import math

import numpy as np
import pytest
from scipy import integrate

from skdp_synth import DampedPrivateSynthesizer
from skdp_synth._sklearn_compat import InvalidParameterError
from skdp_synth.cli._registry import get_method
from skdp_synth.damped import _estimator as damped_module
from skdp_synth.damped import _parameters as params_module
from skdp_synth.damped._damping import damped_microaggregation, project_simplex_l1
from skdp_synth.damped._parameters import (
    BUDGET_SPLIT,
    default_alpha,
    default_damping,
    default_n_components,
    mean_noise_scale,
    projection_scale,
    weight_noise_scale,
)
from skdp_synth.exceptions import PrivacyLeakWarning
from skdp_synth.geometry import LatticeCovering
from skdp_synth.mechanisms import _noise
from skdp_synth.mechanisms._noise import NoiseSource
from skdp_synth.metrics import moment_error
from skdp_synth.privacy import BudgetAccountant

# Several tests use epsilon >> 10 on purpose (noise negligible, theorems
# checked on the realised noise): PrivacyBudgetWarning is expected here.
pytestmark = pytest.mark.filterwarnings(
    "ignore::skdp_synth.exceptions.PrivacyBudgetWarning"
)


#: The paper's variant: Boedihardjo2024 Algorithm 4 exactly (origin, eq. 5.17
#: parameters).
PAPER = {"parameters": "paper", "centre": None}


def _boolean(n, p, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.random((n, 1))
    return (rng.random((n, p)) < 0.15 + 0.7 * base).astype(np.int64)


# ================================================== constants, pinned
@pytest.mark.parametrize("n", [3, 100, 1797, 10**6])
def test_alpha_is_log_n_to_minus_quarter(n):
    # Boedihardjo2024 §5.8 and Algorithm 4 step 3: alpha = (log n)^{-1/4}
    assert default_alpha(n) == math.log(n) ** -0.25


def test_alpha_values():
    assert default_alpha(10**6) == pytest.approx(0.518690, abs=1e-6)
    assert default_alpha(math.e**16) == pytest.approx(0.5, abs=1e-15)


@pytest.mark.parametrize(
    "n, kappa, t",
    [(1528, 1 / 3, 0), (1529, 1 / 3, 1), (10**6, 1 / 3, 1), (10**7, 1 / 3, 2),
     (10**5, 0.5, 2), (10**6, 0.9, 4)],
)  # fmt: skip
def test_n_components_formula(n, kappa, t):
    # Boedihardjo2024 §5.8 / Algorithm 4 step 3: t = floor(kappa log n / log(7/alpha))
    alpha = default_alpha(n)
    assert default_n_components(n, kappa, alpha) == t
    assert t == math.floor(kappa * math.log(n) / math.log(7 / alpha))
    # ... so that the covering has s <= (7/alpha)^t <= n^kappa points (Prop. 3.7)
    if t:
        s = LatticeCovering(t, alpha).n_points
        assert s <= (7 / alpha) ** t <= n**kappa


def test_damping_formula():
    # Boedihardjo2024 eq. (5.17), Algorithm 4 step 8: b = sqrt(p n^{1-kappa} / eps)
    assert default_damping(10**6, 50, 1 / 3, 1.0) == pytest.approx(
        math.sqrt(50 * 10**4), rel=1e-12
    )
    assert default_damping(1000, 4, 0.5, 2.0) == pytest.approx(
        math.sqrt(4 * 1000**0.5 / 2.0), rel=1e-15
    )


def test_noise_scales_and_budget_split():
    # Boedihardjo2024 Theorem 5.12: rho ~ Lap(6/(n eps)), r ~ Lap(12 sqrt(p)/(b eps)),
    # P = PROJ((n eps/(6t)) S, t)
    assert weight_noise_scale(600, 1.0) == 6 / 600
    assert weight_noise_scale(1000, 0.5) == pytest.approx(6 / 500, rel=1e-15)
    assert mean_noise_scale(4, 10.0, 1.0) == pytest.approx(12 * 2 / 10, rel=1e-15)
    assert mean_noise_scale(9, 3.0, 2.0) == pytest.approx(12 * 3 / 6, rel=1e-15)
    assert projection_scale(600, 1.0, 2) == 600 / 12
    assert BUDGET_SPLIT == (1 / 3, 1 / 3, 1 / 3)
    assert math.fsum(BUDGET_SPLIT) == 1.0
    for n, p, b, eps, t in [(1000, 4, 7.5, 1.0, 1), (50, 30, 0.3, 0.01, 3)]:
        # weights: l1 sensitivity 2/n (one index moves between two cells)
        assert (2 / n) / weight_noise_scale(n, eps) == pytest.approx(eps / 3)
        # means: l1 sensitivity 4 sqrt(p)/b (Lemmas 5.10-5.11)
        assert (4 * math.sqrt(p) / b) / mean_noise_scale(p, b, eps) == pytest.approx(
            eps / 3
        )
        # PROJ: t calls, each with log-ratio <= scale * spread(S - S') <= scale*2/n
        assert t * projection_scale(n, eps, t) * 2 / n == pytest.approx(eps / 3)


def test_fitted_estimator_uses_the_formulas():
    X = _boolean(5000, 6)
    n, p, eps, kappa = 5000, 6, 0.7, 0.4
    est = DampedPrivateSynthesizer(
        epsilon=eps, kappa=kappa, random_state=0, **PAPER
    ).fit(X)
    alpha = math.log(n) ** -0.25
    t = math.floor(kappa * math.log(n) / math.log(7 / alpha))
    b = math.sqrt(p * n ** (1 - kappa) / eps)
    assert est.alpha_ == alpha
    assert est.n_components_ == t == 1
    assert est.damping_ == pytest.approx(b, rel=1e-15)
    assert est.weight_noise_scale_ == pytest.approx(6 / (n * eps), rel=1e-15)
    assert est.mean_noise_scale_ == pytest.approx(12 * math.sqrt(p) / (b * eps))
    assert est.projection_scale_ == pytest.approx(n * eps / (6 * t), rel=1e-15)
    assert est.n_cells_ == LatticeCovering(t, alpha).n_points


class _Spy:
    """Records the Laplace calls and the PROJ input of one fit."""

    def __init__(self, monkeypatch):
        self.laplace_calls = []
        self.proj_calls = []
        original_laplace = NoiseSource.laplace
        original_proj = damped_module.proj

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


def test_noise_is_applied_with_the_pinned_scales_to_every_cell(monkeypatch):
    spy = _Spy(monkeypatch)
    X = _boolean(3000, 5)
    n, p, eps = 3000, 5, 2.0
    est = DampedPrivateSynthesizer(
        epsilon=eps, n_components=2, alpha=0.3, random_state=1, **PAPER
    ).fit(X)
    U = X / math.sqrt(p)
    # PROJ got A = (n eps/(6t)) S with S = X^T X / n on the unit-ball scale
    (A, t, V), = spy.proj_calls  # fmt: skip
    assert t == 2
    np.testing.assert_allclose(A, n * eps / (6 * t) * (U.T @ U / n), rtol=1e-12)
    np.testing.assert_allclose(est.components_, V.T)
    # two Laplace calls: weights over all s cells, means over all s x p entries
    (w, w_scale, _), (y, y_scale, _) = spy.laplace_calls
    s = est.n_cells_
    assert w.shape == (s,) and y.shape == (s, p)
    assert w_scale == 6 / (n * eps)
    assert y_scale == 12 * math.sqrt(p) / (est.damping_ * eps)
    occupied = np.count_nonzero(w)
    assert occupied < s  # some cells are empty ...
    assert np.all(y[w == 0] == 0.0)  # ... their damped mean is 0 ...
    noisy = spy.laplace_calls[1][2]
    assert np.all(noisy[w == 0] != 0.0)  # ... and they get noise all the same


def test_projection_is_the_identity_of_proj_output():
    est = DampedPrivateSynthesizer(n_components=2, random_state=0).fit(
        _boolean(2000, 5)
    )
    V = est.components_.T
    np.testing.assert_allclose(est.projection_, V @ V.T)
    np.testing.assert_allclose(V.T @ V, np.eye(2), atol=1e-12)


# ======================================================= privacy bookkeeping
def test_guarantee_is_pure_epsilon_replace_one():
    acc = BudgetAccountant(epsilon=2.0)
    est = DampedPrivateSynthesizer(epsilon=0.75, accountant=acc, random_state=0)
    est.fit(_boolean(400, 3))
    assert (est.epsilon_, est.delta_, est.neighbouring_) == (0.75, 0.0, "replace-one")
    assert acc.total_spent == (0.75, 0.0)


@pytest.mark.parametrize(
    "params",
    [
        {"epsilon": np.inf},
        {"epsilon": 0.0},
        {"epsilon": -1.0},
        {"epsilon": np.nan},
        {"kappa": 0.0},
        {"kappa": 1.0},
        {"damping": np.inf},
        {"damping": 0.0},
        {"damping": "data"},
        {"alpha": np.inf},
        {"alpha": -0.1},
        {"alpha": lambda X: 0.5},
        {"n_components": -1},
        {"n_components": 1.5},
        {"m": 0},
        {"domain": "ball"},
    ],
)
def test_invalid_parameters_rejected(params):
    with pytest.raises(InvalidParameterError):
        DampedPrivateSynthesizer(**params).fit(_boolean(50, 3))


def test_n_components_above_p_rejected_and_nothing_spent():
    acc = BudgetAccountant(epsilon=5.0)
    est = DampedPrivateSynthesizer(n_components=4, accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="n_components=4 exceeds"):
        est.fit(_boolean(100, 3))
    assert acc.spent == []
    assert not hasattr(est, "epsilon_")


def test_default_t_is_capped_at_p():
    X = _boolean(20000, 1)
    assert default_n_components(20000, 0.9, default_alpha(20000)) > 1
    est = DampedPrivateSynthesizer(kappa=0.9, random_state=0, **PAPER).fit(X)
    assert est.n_components_ == 1


def test_small_n_gives_a_single_cell():
    est = DampedPrivateSynthesizer(random_state=0, **PAPER).fit(_boolean(500, 4))
    assert est.n_components_ == 0 and est.n_cells_ == 1
    assert est.components_.shape == (0, 4)
    np.testing.assert_array_equal(est.projection_, np.zeros((4, 4)))
    assert est.weights_.tolist() == [1.0]
    assert est.epsilon_ == 1.0  # the unspent eps/3 is not reallocated


def test_covering_does_not_depend_on_the_data():
    a = DampedPrivateSynthesizer(n_components=2, random_state=0).fit(_boolean(3000, 4))
    b = DampedPrivateSynthesizer(n_components=2, random_state=1).fit(
        np.zeros((3000, 4), dtype=int)
    )
    assert a.n_cells_ == b.n_cells_ == LatticeCovering(2, a.alpha_).n_points
    np.testing.assert_array_equal(a.covering_.points, b.covering_.points)


def test_tiny_epsilon_works_and_is_mostly_noise():
    X = _boolean(3000, 6)
    est = DampedPrivateSynthesizer(
        epsilon=1e-6, random_state=0, parameters="bound"
    ).fit(X)
    assert est.epsilon_ == 1e-6
    # noise scale 12 sqrt(p)/(b eps) >> 1/sqrt(p): every mean is clipped to a corner
    assert set(np.unique(est.cell_means_).tolist()) <= {0.0, 1.0}
    good = DampedPrivateSynthesizer(epsilon=1e4, random_state=0).fit(X)
    assert good.score(X) > est.score(X) + 0.1


def test_data_outside_K_rejected_not_clipped():
    X = _boolean(200, 3).astype(float)
    X[3, 1] = 1.5
    with pytest.raises(ValueError, match="column 1 has"):
        DampedPrivateSynthesizer().fit(X)
    Xb = np.random.default_rng(0).uniform(0, 1, (200, 3))
    Xb[5, 2] = 1.0001
    with pytest.raises(ValueError, match="column 2 has"):
        DampedPrivateSynthesizer(domain="box", bounds=(0, 1)).fit(Xb)


def test_secure_noise_path_uses_opendp(monkeypatch):
    calls = []
    original = _noise._opendp_vector_noise

    def spy(values, scale, kind):
        calls.append((values.shape, kind))
        return original(values, scale, kind)

    monkeypatch.setattr(_noise, "_opendp_vector_noise", spy)
    est = DampedPrivateSynthesizer(n_components=1).fit(_boolean(400, 3))
    assert calls == [((est.n_cells_,), "laplace"), ((est.n_cells_, 3), "laplace")]


def test_registered_in_cli():
    method = get_method("damped")
    assert method.guarantee == "epsilon-DP"
    est = method.build(random_state=0, **method.demo_params)
    assert isinstance(est, DampedPrivateSynthesizer)


# ============================================ the pieces and the projections
def test_damped_means_divide_by_max_of_size_and_b():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (40, 3)) / 2
    labels = rng.integers(0, 5, 40)
    for b in (0.5, 3.0, 7.5, 100.0):
        w, y, counts = damped_microaggregation(X, labels, 6, b)
        for j in range(6):
            rows = X[labels == j]
            assert counts[j] == rows.shape[0]
            assert w[j] == rows.shape[0] / 40
            np.testing.assert_allclose(y[j], rows.sum(0) / max(rows.shape[0], b))


def test_lemma_5_10_and_5_11_for_every_b():
    """``||y~(I) - y~(I')||_1 <= (2/b) max ||x_i||_1`` when I, I' differ in one
    element, for any b > 0 -- including b < |I| < b + 1, which the printed
    proof of Lemma 5.10 skips; and Lemma 5.11's ``(1/b)||x - x'||``."""
    rng = np.random.default_rng(1)

    def damped(rows, b):
        return rows.sum(0) / max(rows.shape[0], b)

    for _ in range(3000):
        size = int(rng.integers(1, 12))
        b = float(rng.choice([rng.uniform(0.05, 15), size - rng.uniform(0, 1)]))
        b = max(b, 1e-3)
        sign = rng.choice([-1.0, 1.0], size=(size, 1))
        rows = sign * rng.uniform(0, 1, (size, 4))  # includes x and ~ -x pairs
        rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1.0)
        m1 = np.abs(rows).sum(1).max()
        change = np.abs(damped(rows, b) - damped(rows[1:], b)).sum()
        assert change <= 2 * m1 / b + 1e-12
        other = rows.copy()
        other[0] = -rows[0]
        change2 = np.abs(damped(rows, b) - damped(other, b)).sum()
        assert change2 <= np.abs(rows[0] - other[0]).sum() / b + 1e-12


def _bingham_log_normaliser_2d(A):
    a, _ = np.linalg.eigh(A)
    f = lambda th: math.exp(a[0] * math.cos(th) ** 2 + a[1] * math.sin(th) ** 2)  # noqa: E731
    return math.log(integrate.quad(f, 0, 2 * math.pi, limit=200)[0])


def test_pvec_log_ratio_bounded_by_spread_not_by_norm():
    """The PVEC privacy loss is at most ``lambda_max(D) - lambda_min(D)``
    (module docstring); Lemma 5.1(3) as printed (``||D||``) can fail."""
    rng = np.random.default_rng(2)
    th = np.linspace(0, 2 * np.pi, 721)
    V = np.stack([np.cos(th), np.sin(th)], axis=1)
    for _ in range(30):
        x, xp = rng.standard_normal(2), rng.standard_normal(2)
        x /= max(np.linalg.norm(x), 1.0)
        xp /= max(np.linalg.norm(xp), 1.0)
        beta = rng.uniform(0.1, 4)
        C = rng.standard_normal((2, 2))
        C = rng.uniform(0, 5) * C @ C.T
        A, B = C + beta * np.outer(x, x), C + beta * np.outer(xp, xp)
        la = np.einsum("ij,jk,ik->i", V, A, V) - _bingham_log_normaliser_2d(A)
        lb = np.einsum("ij,jk,ik->i", V, B, V) - _bingham_log_normaliser_2d(B)
        d = np.linalg.eigvalsh(A - B)
        assert np.max(np.abs(la - lb)) <= d[-1] - d[0] + 1e-9
        assert d[-1] - d[0] <= 2 * beta + 1e-12  # spread of beta(xx' - x'x'') <= 2 beta
    # counterexample to the printed Lemma 5.1(3): ||A - B|| = beta, ratio > e^beta
    beta = 1.0
    B = np.diag([0.0, 30.0])
    A = B + beta * np.diag([1.0, -1.0])
    la = np.einsum("ij,jk,ik->i", V, A, V) - _bingham_log_normaliser_2d(A)
    lb = np.einsum("ij,jk,ik->i", V, B, V) - _bingham_log_normaliser_2d(B)
    assert np.max(la - lb) > 1.9 * beta


def test_spread_is_smaller_on_the_cube():
    """On ``K = p^{-1/2}[0,1]^p`` the spread ``||x-x'|| ||x+x'||`` is <= sqrt(4/3)
    (doc/privacy.md): attained with 2/3 of the coordinates (1, 0), 1/3 (1, 1)."""
    rng = np.random.default_rng(3)
    for p in (3, 6, 9):
        best = 0.0
        for _ in range(3000):
            u, v = rng.integers(0, 2, (2, p)) / math.sqrt(p)
            best = max(best, np.linalg.norm(u - v) * np.linalg.norm(u + v))
        assert best <= math.sqrt(4 / 3) + 1e-12
        if p % 3 == 0:
            assert best == pytest.approx(math.sqrt(4 / 3))


def test_simplex_projection_is_an_l1_minimiser():
    rng = np.random.default_rng(4)
    for _ in range(200):
        v = rng.normal(0.1, 0.3, 6)
        w = project_simplex_l1(v)
        assert w.min() >= 0 and w.sum() == pytest.approx(1.0)
        dist = np.abs(w - v).sum()
        for _ in range(20):  # no random point of the simplex is closer
            z = rng.dirichlet(np.ones(6) * 0.3)
            assert dist <= np.abs(z - v).sum() + 1e-12
        pos = np.clip(v, 0, None).sum()
        expected = np.clip(-v, 0, None).sum() + abs(1 - pos) if pos > 0 else None
        if expected is not None:
            assert dist == pytest.approx(expected)
    assert project_simplex_l1(np.array([-0.1, -0.2, 0.0])).tolist() == [1 / 3] * 3


# ==================================================== Theorem 5.9, realised
def _varied_datasets():
    rng = np.random.default_rng(5)
    yield "boolean-correlated", _boolean(4000, 6), {}
    yield "boolean-zeros", np.zeros((2500, 4), dtype=int), {}
    onehot = np.eye(5, dtype=int)[rng.integers(0, 5, 3000)]
    yield "boolean-onehot", onehot, {}
    centres = rng.random((4, 3))
    clustered = np.clip(
        centres[rng.integers(0, 4, 3000)] + rng.normal(0, 0.05, (3000, 3)), 0, 1
    )
    yield "box-clusters", clustered, {"domain": "box", "bounds": (0, 1)}
    uniform = rng.uniform(-1, 2, (2000, 3))
    yield "box-uniform", uniform, {"domain": "box", "bounds": (-1, 2)}


# The theorem's right side is >= 4^d 4 alpha^2, about 4.8 at the default alpha,
# while the left side is at most ||a|| + ||b|| <= 2: with the defaults the
# inequality cannot fail. TIGHT makes it informative (right side < 2, checked).
TIGHT = {"epsilon": 1e4, "alpha": 0.05, "damping": 1.0, "n_components": 1}
SETTINGS = [
    {},
    {"epsilon": 0.3},
    {"epsilon": 50.0, "n_components": 2, "alpha": 0.3},
    {"epsilon": 5.0, "damping": 1.0, "n_components": 2},
    {"epsilon": 1e3, "damping": 1e4, "kappa": 0.8},
    TIGHT,
]


@pytest.mark.filterwarnings(
    "ignore:DampedPrivateSynthesizer.accuracy_bound:skdp_synth.exceptions.PrivacyLeakWarning"
)
@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("name, X, params", list(_varied_datasets()))
@pytest.mark.parametrize("centre", [None, "cube"])
def test_theorem_5_9_holds_for_the_realised_noise(name, X, params, settings, d, centre):
    """``||(1/n) sum x^(x)d - sum w_bar y_bar^(x)d||_2 <= 4^d(4 a^2 + ||(I-P)S(I-P)||_F)
    + 2 d s b/n + 2||rho||_1 + 2 d sum_j w_j ||r_j||_2`` -- deterministic. With
    the cube's centre: the same for ``x - c``, scaled by the radius ``M = 1/2``
    (``accuracy_bound``)."""
    for seed in range(3):
        est = DampedPrivateSynthesizer(
            keep_diagnostics=True,
            random_state=seed,
            parameters="paper",
            centre=centre,
            **params,
            **settings,
        ).fit(X)
        lo, hi = est.bounds_
        p = X.shape[1]
        shift = 0.0 if centre is None else 0.5
        x = ((X - lo) / (hi - lo) - shift) / math.sqrt(p)  # unit-ball scale
        y = (est.cell_means_ - shift) / math.sqrt(p)
        lhs = moment_error(x, y, d=d, synthetic_weight=est.weights_)
        assert lhs <= est.accuracy_bound(d) * (1 + 1e-12), (lhs, est.accuracy_bound(d))
        if settings is TIGHT:
            assert est.accuracy_bound(d) < 2.0  # non-vacuous


@pytest.mark.filterwarnings(
    "ignore:DampedPrivateSynthesizer.accuracy_bound:skdp_synth.exceptions.PrivacyLeakWarning"
)
def test_theorem_5_9_check_has_power():
    """In the TIGHT setting, releasing the wrong weights (all mass on the cell
    farthest from the data mean) violates the computed bound."""
    violations = 0
    for _name, X, params in _varied_datasets():
        est = DampedPrivateSynthesizer(
            keep_diagnostics=True, random_state=0, **params, **TIGHT, **PAPER
        ).fit(X)
        lo, hi = est.bounds_
        p = X.shape[1]
        x = (X - lo) / (hi - lo) / math.sqrt(p)
        y = est.cell_means_ / math.sqrt(p)
        wrong = np.zeros(est.n_cells_)
        wrong[np.argmax(np.linalg.norm(y - x.mean(0), axis=1))] = 1.0
        violations += moment_error(x, y, d=1, synthetic_weight=wrong) > (
            est.accuracy_bound(1)
        )
    assert violations >= 3


def test_diagnostics_match_direct_computation(monkeypatch):
    spy = _Spy(monkeypatch)
    X = _boolean(3000, 5)
    est = DampedPrivateSynthesizer(
        n_components=2, keep_diagnostics=True, random_state=3, **PAPER
    ).fit(X)
    (w, _, w_noisy), (y, _, y_noisy) = spy.laplace_calls
    # the diagnostics are not private: every read warns
    with pytest.warns(PrivacyLeakWarning, match="noise_l1_weights_"):
        assert est.noise_l1_weights_ == pytest.approx(np.abs(w_noisy - w).sum())
    with pytest.warns(PrivacyLeakWarning, match="noise_l2_means_"):
        l2 = est.noise_l2_means_
    assert l2 == pytest.approx(w @ np.linalg.norm(y_noisy - y, axis=1))
    U = X / math.sqrt(5)
    S = U.T @ U / 3000
    R = (np.eye(5) - est.projection_) @ S @ (np.eye(5) - est.projection_)
    with pytest.warns(PrivacyLeakWarning, match="residual_norm_"):
        assert est.residual_norm_ == pytest.approx(np.linalg.norm(R))


def test_diagnostics_are_opt_in():
    est = DampedPrivateSynthesizer(random_state=0).fit(_boolean(2000, 3))
    for name in ("noise_l1_weights_", "noise_l2_means_", "residual_norm_"):
        assert not hasattr(est, name)
    with pytest.raises(AttributeError, match="keep_diagnostics=True"):
        est.accuracy_bound(2)
    est.set_params(keep_diagnostics=True).fit(_boolean(2000, 3))
    with pytest.raises(ValueError, match="positive integer"):
        est.accuracy_bound(0)
    est.set_params(keep_diagnostics=False).fit(_boolean(2000, 3))
    assert not hasattr(est, "residual_norm_")


# ================================================================= sampling
def test_bootstrap_and_rounding_follow_the_released_distribution():
    """Column means of ``sample`` vs ``sum_j w_bar_j y_bar_j``: z-tests at |z| < 4.42
    per column (false failure 1e-5 each, 5e-5 for the 5 columns)."""
    X = _boolean(6000, 5)
    est = DampedPrivateSynthesizer(epsilon=20.0, n_components=2, random_state=0).fit(X)
    Y = est.sample(40000, random_state=1)
    assert set(np.unique(Y).tolist()) <= {0, 1}
    expected = est.weights_ @ est.cell_means_
    z = (Y.mean(0) - expected) / np.sqrt(expected * (1 - expected) / 40000 + 1e-300)
    assert np.all(np.abs(z) < 4.42)


def test_box_samples_are_the_released_cell_means():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 3, (3000, 3))
    est = DampedPrivateSynthesizer(
        epsilon=10.0, domain="box", bounds=(-2, 3), n_components=1, random_state=0
    ).fit(X)
    Y = est.sample(500)
    released = -2 + 5 * est.cell_means_
    dist = np.abs(Y[:, None, :] - released[None, :, :]).max(axis=2).min(axis=1)
    assert np.all(dist < 1e-12)
    support = np.flatnonzero(est.weights_ > 0)
    assert est._synthetic_distribution()[0].shape == (est.n_cells_, 3)
    assert len(support) >= 1


def test_default_sample_size_is_m_then_n():
    X = _boolean(300, 3)
    assert DampedPrivateSynthesizer(random_state=0).fit(X).sample().shape == (300, 3)
    est = DampedPrivateSynthesizer(m=77, random_state=0).fit(X)
    assert est.sample().shape == (77, 3)


def test_utility_improves_with_epsilon():
    """Not a theorem, a sanity check of the whole pipeline on 4000 x 6 Boolean data:
    the 2-way score at eps = 1e4 beats eps = 0.1 on every one of 3 seeds."""
    X = _boolean(4000, 6)
    for seed in range(3):
        lo = DampedPrivateSynthesizer(epsilon=0.1, random_state=seed).fit(X).score(X)
        hi = DampedPrivateSynthesizer(epsilon=1e4, random_state=seed).fit(X).score(X)
        assert hi > lo


# ========================================================= centre and parameters
def test_paper_variant_reproduces_the_numbers_of_main():
    """``parameters="paper", centre=None`` is :cite:`Boedihardjo2024` Algorithm 4:
    these values were computed on main (a5b0eb1), before the centre and parameter
    options were added."""
    rng = np.random.default_rng(0)
    base = rng.random((6000, 1))
    X = (rng.random((6000, 7)) < 0.15 + 0.7 * base).astype(np.int64)
    est = DampedPrivateSynthesizer(epsilon=2.0, random_state=3, **PAPER).fit(X)
    assert (est.n_components_, est.n_cells_) == (1, 3)
    assert est.damping_ == 33.995213444147105
    assert est.alpha_ == 0.5822724509496644
    np.testing.assert_array_equal(
        est.weights_, [0.0, 0.2692046115249094, 0.7307953884750907]
    )
    expected_means = [
        [1.0, 0.0, 0.0, 0.8556964317571446, 0.22321422771108881,
         0.13667095754516878, 1.0],
        [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0],
        [0.3930085137751232, 0.0, 0.0, 0.44380455681349623, 1.0, 0.0, 0.0],
    ]  # fmt: skip
    np.testing.assert_array_equal(est.cell_means_, expected_means)
    # The Bingham sample goes through LAPACK's eigh, whose last bits depend on
    # the CPU's OpenBLAS kernel (4e-15 apart under OPENBLAS_CORETYPE=Prescott;
    # measured). The Gram matrix of 0/1 rows is exact integers in any order, so
    # only eigh's backward error moves it: eigenvectors by at most about
    # p u ||S|| / gap (Davis-Kahan), with a factor 100 of slack -- 2e-10 here,
    # far below any change of the algorithm. Weights, means and sampled counts
    # above and below are integer sums, noise draws and clipping: exact.
    S = (X.T @ X).astype(np.float64)
    eig = np.linalg.eigvalsh(S)
    tol = 100 * X.shape[1] * np.finfo(float).eps * eig[-1] / np.diff(eig).min()
    np.testing.assert_allclose(
        est.components_,
        [[0.3312959635065993, 0.34925742440692176, 0.4294260489093327,
          0.30054493244251634, 0.3884492479293656, 0.4210416901649987,
          0.4066439783007142]],
        rtol=0, atol=tol,
    )  # fmt: skip
    Y = est.sample(500, random_state=1)
    assert Y.sum(axis=0).tolist() == [145, 0, 0, 284, 500, 136, 0]


@pytest.mark.parametrize("n, eps", [(3000, 1.0), (50_000, 5.0), (200_000, 100.0)])
def test_optimal_parameters_depend_only_on_n_p_eps(n, eps):
    """Two unrelated datasets of the same shape get the same plan (the
    error-bound rule, ``parameters="bound"``, the default before the
    block-aware plan)."""
    rng = np.random.default_rng(1)
    A = np.zeros((n, 6), dtype=int)
    B = (rng.random((n, 6)) < rng.random(6)).astype(int)
    plans = []
    for X in (A, B):
        est = DampedPrivateSynthesizer(
            epsilon=eps, random_state=0, parameters="bound"
        ).fit(X)
        plans.append(
            (est.alpha_, est.n_components_, est.damping_, est.n_cells_,
             est.projection_scale_, est.weight_noise_scale_, est.mean_noise_scale_)
        )  # fmt: skip
    assert plans[0] == plans[1]
    alpha, t, b = params_module.optimal_parameters(n, 6, eps, 0.5, 0.5)
    assert plans[0][:3] == (alpha, t, b)


def test_optimal_parameters_minimise_the_proxy_on_the_grid():
    from skdp_synth.damped._parameters import (
        OPTIMAL_ALPHAS,
        expected_error_proxy,
        lattice_count,
        optimal_damping,
        optimal_parameters,
    )

    n, p, eps = 10**7, 20, 10.0
    alpha, t, b = optimal_parameters(n, p, eps, 0.5, 0.5)
    best = expected_error_proxy(n, p, eps, t, alpha, b, 2, 0.5, 0.5)
    for tt in range(0, 6):
        for a in OPTIMAL_ALPHAS:
            s = lattice_count(tt, a)
            bb = optimal_damping(n, p, eps, s, 0.5, 0.5)
            assert expected_error_proxy(n, p, eps, tt, a, bb, 2, 0.5, 0.5) >= best
            # b* is the minimiser in b
            for f in (0.9, 1.1):
                v = expected_error_proxy(n, p, eps, tt, a, f * bb, 2, 0.5, 0.5)
                assert v >= expected_error_proxy(n, p, eps, tt, a, bb, 2, 0.5, 0.5)
    # pinned constants of the objective (fail if one changes)
    assert params_module.APPROX_WEIGHT == 1 / 16
    assert OPTIMAL_ALPHAS[0] == 0.1 and OPTIMAL_ALPHAS[-1] == 1.0
    assert optimal_damping(10**6, 49, 1.0, 1, 0.5, 0.5) == pytest.approx(
        math.sqrt(12 * math.sqrt(2) * 49 * 10**6)
    )


def test_lattice_count_matches_the_covering():
    for t in range(0, 5):
        for a in (0.15, 0.3, 0.55, 1.0):
            assert params_module.lattice_count(t, a) == LatticeCovering(t, a).n_points


def test_centred_cube_radii_and_scales():
    """Centre c = 1/2: ``M = 1/2`` (PROJ scale x4), ``R_1 = 1/2`` (mean noise / 2)."""
    X = _boolean(4000, 5)
    n, p, eps = 4000, 5, 2.0
    kw = dict(
        epsilon=eps, n_components=1, alpha=0.4, damping=50.0, random_state=0,
        parameters="bound", centre="cube",
    )  # fmt: skip
    centred = DampedPrivateSynthesizer(**kw).fit(X)
    origin = DampedPrivateSynthesizer(**dict(kw, centre=None)).fit(X)
    assert centred.radius_ == 0.5 and origin.radius_ == 1.0
    assert centred.projection_scale_ == 4 * origin.projection_scale_
    assert centred.projection_scale_ == n * eps / (6 * 1 * 0.25)
    assert centred.mean_noise_scale_ == pytest.approx(6 * math.sqrt(p) / (50 * eps))
    assert centred.weight_noise_scale_ == origin.weight_noise_scale_
    # spread of (x-c)(x-c)^T - (x'-c)(x'-c)^T on the centred cube <= 2 M^2 = 1/2
    rng = np.random.default_rng(0)
    for _ in range(200):
        x, y = (rng.integers(0, 2, (2, p)) - 0.5) / math.sqrt(p)
        ev = np.linalg.eigvalsh(np.outer(x, x) - np.outer(y, y))
        assert ev[-1] - ev[0] <= 0.5 + 1e-12


def test_lemma_5_10_centred_for_every_b():
    """Damped means of x - c change by <= 2 max||x - c||_1 / b in l1 per cell."""
    rng = np.random.default_rng(2)
    c = np.full(4, 0.5)
    for _ in range(300):
        n, b = int(rng.integers(1, 12)), float(rng.uniform(0.2, 15))
        X = rng.integers(0, 2, (n, 4)).astype(float)
        labels = rng.integers(0, 3, n)
        X2, labels2 = X.copy(), labels.copy()
        i = rng.integers(n)
        X2[i], labels2[i] = rng.integers(0, 2, 4), rng.integers(0, 3)
        _, y1, _ = damped_microaggregation(X, labels, 3, b, centre=c)
        _, y2, _ = damped_microaggregation(X2, labels2, 3, b, centre=c)
        assert np.abs(y1 - y2).sum() <= 4 * 2.0 / b + 1e-12  # 2 cells x 2 * (p/2)/b


def test_small_cells_shrink_to_the_centre_not_to_zero():
    """Damping far above the cell sizes: released means ~ 1/2 (uninformative),
    not 0 as with the paper's origin."""
    X = _boolean(3000, 4)
    kw = dict(epsilon=1e4, n_components=0, damping=3e5, random_state=0)
    centred = DampedPrivateSynthesizer(**kw).fit(X)
    origin = DampedPrivateSynthesizer(centre=None, **kw).fit(X)
    assert np.all(np.abs(centred.cell_means_ - 0.5) < 0.01)
    assert np.all(origin.cell_means_ < 0.01)


def test_custom_centre_validated():
    X = _boolean(500, 3)
    est = DampedPrivateSynthesizer(
        centre=[0.2, 0.5, 0.9], random_state=0, parameters="bound"
    ).fit(X)
    assert est.radius_ == pytest.approx(math.sqrt((0.64 + 0.25 + 0.81) / 3))
    with pytest.raises(ValueError, match="centre"):
        DampedPrivateSynthesizer(centre=[0.5, 2.0, 0.5]).fit(X)
    with pytest.raises(ValueError, match="centre"):
        DampedPrivateSynthesizer(centre=[0.5, 0.5]).fit(X)


def test_accuracy_bound_warns_as_the_diagnostics_it_reads_do():
    """The bound is computed from the data's residual and the realised noise
    (the ``not_private`` diagnostics, which warn on every read): it warns
    too."""
    est = DampedPrivateSynthesizer(keep_diagnostics=True, random_state=0).fit(
        _boolean(2000, 3)
    )
    with pytest.warns(PrivacyLeakWarning, match="accuracy_bound"):
        est.accuracy_bound(1)
