"""Tests of ProjectedGaussianRelease (:cite:`Nikolov2013` and :cite:`Gao2022`)."""

import dataclasses
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from skdp_synth import BudgetAccountant, ProjectedGaussianRelease
from skdp_synth.audit import audit_epsilon
from skdp_synth.gaussian_release import (
    AdditiveNoise,
    distributed_privatize,
)
from skdp_synth.geometry import nearest_in_symmetric_hull
from skdp_synth.mechanisms import (
    NoiseSource,
    analytic_gaussian_sigma,
    classical_gaussian_sigma,
    gaussian_delta,
)
from skdp_synth.metrics import marginal_error
from skdp_synth.workloads._bits import MarginalWorkload, universe_points

GAUSSIAN = ["correlated", "correlated-weighted", "mee", "isotropic-gaussian"]
MECHANISMS = [*GAUSSIAN, "laplace"]
RELATIONS = ["add-remove-one", "replace-one"]


def _data(n=200, p=5, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.random((n, 1))
    return (rng.random((n, p)) < 0.2 + 0.5 * base).astype(np.int64)


def _mixed_workload(p):
    """All 2-way marginals plus prefix (range) queries over the universe order."""
    A = MarginalWorkload(p, 2).to_explicit().matrix
    N = 2**p
    return np.vstack([A, np.tril(np.ones((N, N)))])


def _truth(est, X):
    """True answers in the noise model's space (test-only; the estimator keeps none)."""
    y = est.workload_.answers(X)
    return est.workload_.to_coords(y) if est.noise_model_.space == "coords" else y


def _releases(est, v, n_runs, seed, n=None):
    source = NoiseSource(seed)
    return np.array([est.noise_model_.privatize(v, source, n) for _ in range(n_runs)])


# ------------------------------------------------------------ invariants
@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("framework", ["projection", "extension"])
@pytest.mark.parametrize("seed", [0, 1])
def test_invariants_hold_exactly(mechanism, framework, seed):
    X = _data(p=4, seed=seed)
    W = MarginalWorkload(4, 2)
    C = np.random.default_rng(seed).normal(size=(3, W.n_queries))
    est = ProjectedGaussianRelease(
        invariants=C, mechanism=mechanism, framework=framework, random_state=seed
    ).fit(X)
    truth = C @ W.answers(X)
    np.testing.assert_allclose(
        C @ est.released_, truth, rtol=0, atol=1e-9 * max(1, np.abs(truth).max())
    )
    assert "induced subspace" in est.privacy_guarantee_.mechanism
    # the noise is not zero: something is still private
    assert np.linalg.norm(est.released_ - W.answers(X)) > 1.0


def test_structural_invariant_total_count(rng):
    """:cite:`Gao2022` Example 3: the total count is released exactly (it is in
    range(A))."""
    X = _data(p=5)
    W = MarginalWorkload(5, 2)
    C = np.zeros((1, W.n_queries))
    C[0, :4] = 1.0  # the cells of the first table sum to n
    for framework in ("projection", "extension"):
        est = ProjectedGaussianRelease(
            mechanism="correlated", invariants=C, framework=framework, random_state=3
        )
        est.fit(X)
        assert est.released_[:4].sum() == pytest.approx(len(X), abs=1e-9)
        # every table's total is n: restricted to range(A), C pins them all
        tables = est.released_.reshape(-1, 4).sum(axis=1)
        np.testing.assert_allclose(tables, len(X), atol=1e-9)
        assert est.n_estimate_ == pytest.approx(len(X))


# ---------------------------------------------- unbiasedness / covariance
def _whitened_scores(E, Sigma, tol=1e-9):
    w, V = np.linalg.eigh(Sigma)
    keep = w > tol * w.max()
    return E @ V[:, keep] / np.sqrt(w[keep]), E @ V[:, ~keep]


@pytest.mark.parametrize(
    "mechanism, invariants",
    [("correlated", None), ("correlated", "random"), ("isotropic-gaussian", "random")],
)
def test_unbiased_with_the_theoretical_covariance(mechanism, invariants):
    """Mean and covariance of release - truth over 3000 seeded runs.

    In the eigenbasis of the theoretical covariance the errors must be
    i.i.d. N(0, 1): a chi-square test of the mean and the likelihood-ratio
    test of ``Cov = I`` (each false-failure rate 1e-3 for a random seed), and
    exactly 0 in its null space (the invariants' directions).
    """
    X = _data(p=4)
    W = MarginalWorkload(4, 2)
    C = None
    if invariants == "random":
        C = np.random.default_rng(5).normal(size=(2, W.n_queries))
    est = ProjectedGaussianRelease(
        mechanism=mechanism, invariants=C, random_state=0
    ).fit(X)
    v = _truth(est, X)
    R = _releases(est, v, 3000, seed=11)
    E = R - v
    S, null = _whitened_scores(E, est.noise_model_.covariance())
    np.testing.assert_allclose(null, 0.0, atol=1e-9)
    n, k = S.shape
    mean_stat = n * np.sum(S.mean(axis=0) ** 2)
    assert stats.chi2.sf(mean_stat, k) > 1e-3
    Scov = S.T @ S / n
    lr = n * (np.trace(Scov) - np.linalg.slogdet(Scov)[1] - k)
    assert stats.chi2.sf(lr, k * (k + 1) / 2) > 1e-3
    # and the average squared error matches expected_error_ (z-test, 1e-3)
    sq = np.sum(E**2, axis=1)
    z = (sq.mean() - est.expected_error_) / (sq.std() / math.sqrt(n))
    assert abs(z) < stats.norm.isf(5e-4)


def test_covariance_equals_002_formula():
    """Cov = k c^2 sum_i r_i^2 U_i U_i^T (:cite:`Nikolov2013` Alg. 2), times the
    calibration."""
    X = _data(p=5)
    W = MarginalWorkload(5, 2)
    for mechanism in ("correlated", "correlated-weighted", "mee"):
        est = ProjectedGaussianRelease(mechanism=mechanism, random_state=0).fit(X)
        c = analytic_gaussian_sigma(1.0, 1e-6)
        factor = (est.sensitivity_ * (1 + 1e-9)) ** 2
        Sigma = np.zeros((W.rank, W.rank))
        if mechanism == "mee":
            # Nikolov2013 Cor. 8: F F^T = r M with the uniform design, M = diag(lambda)
            diag = W.rank * W.eigenvalues[W.degrees]
            Sigma = np.diag(diag)
        else:
            dec = est.decomposition_
            k = dec.k
            weights = np.sqrt(dec.dims) * dec.radii
            for piece, r_i, w_i in zip(dec.pieces, dec.radii, weights):
                a_i = 1 / k if mechanism == "correlated" else w_i / weights.sum()
                mask = np.isin(W.degrees, piece).astype(float)
                Sigma += r_i**2 / a_i * np.diag(mask)
        np.testing.assert_allclose(
            est.noise_model_.covariance(), c**2 * factor * Sigma, rtol=1e-9
        )
        assert est.expected_error_ == pytest.approx(c**2 * factor * np.trace(Sigma))


# ------------------------------------------------- Gao2022 Theorem 22
def _ks_directions(A, B, n_dirs=6, seed=0):
    rng = np.random.default_rng(seed)
    pvals = []
    for _ in range(n_dirs):
        v = rng.normal(size=A.shape[1])
        pvals.append(stats.ks_2samp(A @ v, B @ v).pvalue)
    return min(pvals)


def test_projected_spherical_gaussian_is_the_conditioned_gaussian():
    """:cite:`Gao2022` Theorem 22, by a two-sample test against rejection-conditioning.

    Projected draws come from the estimator's noise model; conditioned draws
    are unconstrained spherical Gaussian noise accepted when ``|C e| < eta``
    (eta = 2% of the noise scale, so the approximation bias is negligible
    next to the test's resolution). KS tests on 6 random directions,
    Bonferroni false-failure rate 6 x 1e-3 / 6.
    """
    X = _data(p=2)
    W = MarginalWorkload(2, 1)  # q = 4 cells
    C = np.array([[1.0, 2.0, -1.0, 0.5]])
    est = ProjectedGaussianRelease(
        d=1, mechanism="isotropic-gaussian", invariants=C, random_state=0
    ).fit(X)
    y = W.answers(X)
    proj = _releases(est, y, 4000, seed=1) - y
    sigma = est.noise_model_.scale * est.noise_model_.whitening.scales[0]
    rng = np.random.default_rng(2)
    e = rng.normal(0.0, sigma, size=(400_000, 4))
    keep = np.abs(e @ C[0]) < 0.02 * sigma * np.linalg.norm(C)
    cond = e[keep]
    assert len(cond) > 3000
    assert _ks_directions(proj, cond) > 1e-3 / 6


def test_projection_differs_from_conditioning_for_correlated_noise():
    """Negative control (the test above has power): with non-spherical noise,
    projecting is not conditioning (:cite:`Gao2022` §4); the same KS test rejects."""
    rng = np.random.default_rng(3)
    L = np.array([[3.0, 0, 0, 0], [2.5, 0.5, 0, 0], [0, 0, 1, 0], [0, 0, 1, 0.2]])
    C = np.array([[1.0, 2.0, -1.0, 0.5]])
    e = rng.normal(size=(400_000, 4)) @ L.T
    Pn = np.eye(4) - C.T @ C / (C @ C.T)
    proj = e[:4000] @ Pn.T
    keep = np.abs(e @ C[0]) < 0.02 * np.linalg.norm(C)
    assert _ks_directions(proj, e[keep]) < 1e-6


# ---------------------------------------------- ellipsoid containment
@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("mechanism", ["correlated", "correlated-weighted", "mee"])
@pytest.mark.parametrize("workload", ["marginal", "mixed"])
def test_every_column_and_difference_inside_the_ellipsoid(
    relation, mechanism, workload
):
    """max_u ||W a_u|| (add/remove), max_{u,v} ||W (a_u - a_v)|| (replace-one) <= 1."""
    p = 4
    wl = None if workload == "marginal" else _mixed_workload(p)
    est = ProjectedGaussianRelease(
        workload=wl, mechanism=mechanism, neighbouring=relation, random_state=0
    ).fit(_data(p=p))
    W = est.workload_
    G = W.point_coords(universe_points(p))  # rows g_u
    if relation == "replace-one":
        iu, iv = np.triu_indices(len(G), 1)
        G = G[iu] - G[iv]
    norms = np.linalg.norm(est.noise_model_.whitening.forward(G), axis=1)
    assert norms.max() <= 1.0
    assert norms.max() == pytest.approx(1 / (1 + 1e-9), abs=1e-12)
    assert est.sensitivity_ <= 1 + 1e-12


def test_structured_check_agrees_with_enumeration_at_p_10():
    """For p beyond the enumeration limit we use the orbit closed form; at p=10
    both are available and must agree."""
    X = _data(p=10)
    for relation in RELATIONS:
        est = ProjectedGaussianRelease(
            mechanism="correlated", neighbouring=relation, random_state=0
        ).fit(X)
        W = est.workload_
        norms, mult = W.orbit_norms(relation)
        wh = est.noise_model_.whitening
        s_deg = np.full(W.d + 1, np.inf)
        s_deg[W.degrees[wh.index]] = wh.scales
        closed = math.sqrt(np.max(norms @ (mult / s_deg**2)))
        G = W.point_coords(universe_points(10))
        if relation == "replace-one":
            G = G - G[0]  # pairs (0, u) meet every orbit (u xor v) of pairs
        enum = np.linalg.norm(wh.forward(G), axis=1).max()
        assert enum == pytest.approx(closed, rel=1e-12)
        assert enum == pytest.approx(1 / (1 + 1e-9), rel=1e-12)


# ------------------------------------------------------------- calibration
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9])
def test_analytic_calibration_is_valid_and_smallest(epsilon, delta):
    est = ProjectedGaussianRelease(
        mechanism="correlated", epsilon=epsilon, delta=delta, random_state=0
    )
    est.fit(_data(p=3))
    c = est.noise_model_.scale
    assert c == analytic_gaussian_sigma(epsilon, delta)
    assert gaussian_delta(c, epsilon) <= delta  # the defining inequality
    nikolov = classical_gaussian_sigma(epsilon, delta, variant="nikolov2013")
    assert c < nikolov
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        gao = classical_gaussian_sigma(epsilon, delta, variant="gao2022")
    if gaussian_delta(gao, epsilon) <= delta:
        assert c < gao
    else:  # gao2022 is invalid here, so the exact calibration must exceed it
        assert c > gao


def test_paper_constants_selectable_and_invalid_one_charged_honestly():
    X = _data(p=3)
    est = ProjectedGaussianRelease(
        mechanism="correlated", epsilon=1.0, delta=1e-6, calibration="nikolov2013"
    )
    est.set_params(random_state=0).fit(X)
    assert est.noise_model_.scale == pytest.approx(1 + math.sqrt(2 * math.log(1e6)))
    assert est.delta_ == 1e-6
    bad = ProjectedGaussianRelease(
        mechanism="correlated",
        epsilon=2.0,
        delta=1e-9,
        calibration="gao2022",
        random_state=0,
    )
    with pytest.warns(UserWarning, match="not valid"):
        bad.fit(X)
    assert bad.noise_model_.scale == pytest.approx(
        (1 + math.sqrt(1 + math.log(1e9))) / 2
    )
    assert bad.delta_ == pytest.approx(gaussian_delta(bad.noise_model_.scale, 2.0))
    assert bad.delta_ > 1e-9


# -------------------------------------------------------- error formulas
@pytest.mark.parametrize("relation", RELATIONS)
def test_expected_errors_match_the_papers(relation):
    p = 4
    X = _data(p=p)
    W = MarginalWorkload(p, 2)
    q, T = W.n_queries, W.n_tables
    c = analytic_gaussian_sigma(1.0, 1e-6)
    f = 1.0 if relation == "add-remove-one" else 2.0
    s = 1 + 1e-9
    iso = ProjectedGaussianRelease(
        mechanism="isotropic-gaussian", neighbouring=relation
    )
    iso.set_params(random_state=0).fit(X)
    assert iso.expected_error_ == pytest.approx(q * c**2 * f * T * s**2)  # Nikolov2013
    # Lemma 4
    lap = ProjectedGaussianRelease(mechanism="laplace", neighbouring=relation)
    lap.set_params(random_state=0).fit(X)
    assert lap.expected_error_ == pytest.approx(2 * q * (f * T) ** 2 * s**2)
    assert lap.delta_ == 0.0
    C = np.random.default_rng(0).normal(size=(3, q))
    piso = (
        ProjectedGaussianRelease(
            mechanism="isotropic-gaussian", neighbouring=relation, invariants=C
        )
        .set_params(random_state=0)
        .fit(X)
    )
    # Gao2022 Cor. 14: err = (q - n_c) c^2 Delta_2(A)^2
    assert piso.expected_error_ == pytest.approx((q - 3) * c**2 * f * T * s**2)
    plap = ProjectedGaussianRelease(
        mechanism="laplace", neighbouring=relation, invariants=C
    )
    plap.set_params(random_state=0).fit(X)
    assert plap.expected_error_ == pytest.approx(2 * (q - 3) * (f * T) ** 2 * s**2)
    # Gao2022 Cor. 15: extension, err = (q - n_c) c^2 Delta_2(Q_N^T A)^2 <= Cor. 14
    eiso = (
        ProjectedGaussianRelease(
            mechanism="isotropic-gaussian",
            neighbouring=relation,
            invariants=C,
            framework="extension",
        )
        .set_params(random_state=0)
        .fit(X)
    )
    A = W.to_explicit().matrix
    QN = np.linalg.svd(C)[2][3:].T
    H = QN.T @ A
    if relation == "replace-one":
        iu, iv = np.triu_indices(A.shape[1], 1)
        H = H[:, iu] - H[:, iv]
    delta_n = np.max(np.linalg.norm(H, axis=0))
    assert eiso.expected_error_ == pytest.approx((q - 3) * c**2 * delta_n**2 * s**2)
    assert eiso.expected_error_ <= piso.expected_error_


def test_error_bounds_and_orderings():
    """Lower bound <= every Gaussian mechanism; :cite:`Nikolov2013`'s split >= weighted
    split."""
    X = _data(p=5)
    for relation in RELATIONS:
        for wl in (None, _mixed_workload(5)):
            errs = {}
            for mech in GAUSSIAN:
                est = ProjectedGaussianRelease(
                    workload=wl, mechanism=mech, neighbouring=relation, random_state=0
                ).fit(X)
                assert est.gaussian_optimal_error_ <= est.expected_error_ * (1 + 1e-9)
                errs[mech] = est.expected_error_
                if est.decomposition_ is not None:
                    dec = est.decomposition_
                    k_sum = dec.k * np.sum(dec.dims * dec.radii**2)
                    w_sum = np.sum(np.sqrt(dec.dims) * dec.radii) ** 2
                    assert w_sum <= k_sum * (1 + 1e-12)  # Cauchy-Schwarz
            assert errs["correlated"] < errs["isotropic-gaussian"]


def test_correlated_beats_isotropic_when_mee_is_far_from_a_ball():
    """Marginals mixed with prefix queries: the MEE is very elongated."""
    X = _data(p=5)
    wl = _mixed_workload(5)
    errs = {
        m: ProjectedGaussianRelease(workload=wl, mechanism=m, random_state=0)
        .fit(X)
        .expected_error_
        for m in ("correlated", "isotropic-gaussian")
    }
    assert errs["correlated"] < 0.2 * errs["isotropic-gaussian"]


def test_correlated_equals_isotropic_when_mee_is_a_ball():
    """Identity workload (the histogram): K is the cross-polytope, its MEE the
    unit ball (John), the decomposition has one piece and r_1 = 1."""
    p = 3
    X = _data(p=p)
    wl = np.eye(2**p)
    out = {}
    for mech in ("correlated", "correlated-weighted", "mee", "isotropic-gaussian"):
        est = ProjectedGaussianRelease(workload=wl, mechanism=mech, random_state=0).fit(
            X
        )
        out[mech] = est.expected_error_
        if est.decomposition_ is not None:
            assert est.decomposition_.k == 1
            assert est.decomposition_.radii[0] == pytest.approx(1.0, rel=1e-6)
    for mech in ("correlated", "correlated-weighted", "mee"):
        assert out[mech] == pytest.approx(out["isotropic-gaussian"], rel=1e-5)


def test_weighted_split_is_gaussian_optimal_for_all_marginals():
    """For the d-way marginal workload each piece is one Fourier degree, so
    the weighted split attains the Gaussian-class optimum (Σ_T sqrt(λ_T))^2 c^2."""
    X = _data(n=300, p=12)
    est = ProjectedGaussianRelease(mechanism="correlated-weighted", random_state=0).fit(
        X
    )
    W = est.workload_
    c = est.noise_model_.scale
    optimum = c**2 * np.sum(W.multiplicity * np.sqrt(W.eigenvalues)) ** 2
    assert est.gaussian_optimal_error_ == pytest.approx(optimum, rel=1e-9)
    assert est.expected_error_ == pytest.approx(optimum, rel=1e-6)


# ---------------------------------------------------------- privacy audit
def _worst_neighbours(est, relation):
    """True answers of D and D' (worst-case neighbours) and the test direction."""
    W = est.workload_
    U = universe_points(W.n_features)
    G = W.point_coords(U)
    wh = est.noise_model_.whitening
    X = _data(n=50, p=W.n_features)
    v = W.to_coords(W.answers(X))
    if relation == "add-remove-one":
        u = int(np.argmax(np.linalg.norm(wh.forward(G), axis=1)))
        v2 = v + G[u]
    else:
        row = 0
        diffs = G - G[universe_index_of(X[row])]
        u = int(np.argmax(np.linalg.norm(wh.forward(diffs), axis=1)))
        v2 = v + diffs[u]
    direction = wh.forward(v2) - wh.forward(v)
    return v, v2, direction / np.linalg.norm(direction)


def universe_index_of(x):
    return int(np.dot(x, 1 << np.arange(len(x) - 1, -1, -1)))


def _audit(est, relation, n_runs=20_000):
    v, v2, direction = _worst_neighbours(est, relation)
    wh = est.noise_model_.whitening
    src_a, src_b = NoiseSource(101), NoiseSource(202)
    n = 50 if relation == "replace-one" else None  # D, D' both have 50 rows
    model = est.noise_model_
    a = [wh.forward(model.privatize(v, src_a, n)) @ direction for _ in range(n_runs)]
    b = [wh.forward(model.privatize(v2, src_b, n)) @ direction for _ in range(n_runs)]
    return audit_epsilon(a, b, delta=est.delta_, alpha=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("relation", RELATIONS)
def test_privacy_audit_of_the_whitened_mechanism(relation):
    """Audit at eps=2, delta=1e-3 on worst-case neighbours, 20000 runs each.

    A correct mechanism gives ``epsilon_lower > epsilon`` with probability at
    most alpha = 1e-3. The planted bug (half the noise, test-only) must be
    flagged: its true epsilon at this delta is about 4.4.
    """
    X = _data(n=50, p=4)
    est = ProjectedGaussianRelease(
        mechanism="correlated",
        epsilon=2.0,
        delta=1e-3,
        neighbouring=relation,
        random_state=0,
    ).fit(X)
    ok = _audit(est, relation)
    assert ok.epsilon_lower <= est.epsilon_
    est.noise_model_.scale /= 2.0  # planted bug: half the noise
    bad = _audit(est, relation)
    assert bad.epsilon_lower > est.epsilon_


def test_noise_is_added_to_the_whitened_true_values():
    """The secure sampler receives the whitened true answers, not zeros."""

    class Recorder:
        def __init__(self):
            self.calls = []

        def gaussian(self, values, scale):
            self.calls.append((np.array(values), scale))
            return np.array(values)

    X = _data(p=4)
    est = ProjectedGaussianRelease(mechanism="correlated", random_state=0).fit(X)
    rec = Recorder()
    v = _truth(est, X)
    out = est.noise_model_.privatize(v, rec)
    ((values, scale),) = rec.calls
    np.testing.assert_allclose(values, est.noise_model_.whitening.forward(v))
    assert scale == est.noise_model_.scale
    np.testing.assert_allclose(out, v, atol=1e-9)  # zero noise: release = truth


def test_secure_source_path_runs():
    est = ProjectedGaussianRelease(mechanism="correlated", random_state=None).fit(
        _data(p=4)
    )
    assert np.all(np.isfinite(est.released_))
    assert est.sample(10).shape == (10, 4)


# ------------------------------------------------------------ sparse case
def test_least_squares_never_increases_the_error():
    """:cite:`Nikolov2013` Alg. 3: projecting onto n X X^T K (convex, contains the
    truth) is non-expansive, so for every noise draw the error can only go down."""
    X = _data(n=20, p=6)
    for seed in range(5):
        dense = ProjectedGaussianRelease(
            mechanism="correlated", epsilon=0.5, random_state=seed
        ).fit(X)
        sparse = ProjectedGaussianRelease(
            mechanism="correlated", epsilon=0.5, n_rows=20, random_state=seed
        ).fit(X)
        assert sparse.decomposition_.dims[0] >= 0.5 * 20  # t >= 1: LS is used
        y = dense.workload_.answers(X)
        e_dense = np.sum((dense.released_ - y) ** 2)
        e_sparse = np.sum((sparse.released_ - y) ** 2)
        assert e_sparse <= e_dense + 1e-6
        assert not np.allclose(sparse.released_, dense.released_)
        # the LS part lies in n_rows conv{+-X^T g_u}: its l1-atomic norm <= n_rows
    # t = 0 (every piece thinner than eps n): no least squares at all
    big = ProjectedGaussianRelease(
        mechanism="correlated", epsilon=0.5, n_rows=1000, random_state=0
    ).fit(X)
    ref = ProjectedGaussianRelease(
        mechanism="correlated", epsilon=0.5, random_state=0
    ).fit(X)
    np.testing.assert_array_equal(big.released_, ref.released_)


def test_frank_wolfe_matches_a_convex_solver():
    import cvxpy as cp

    rng = np.random.default_rng(0)
    H = rng.normal(size=(6, 40))
    b = rng.normal(size=6) * 5
    x = nearest_in_symmetric_hull(H, b, max_iter=20_000, tol=1e-12)
    lam = cp.Variable(40)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(H @ lam - b)), [cp.norm1(lam) <= 1])
    prob.solve()
    assert np.sum((x - b) ** 2) == pytest.approx(prob.value, rel=1e-5, abs=1e-7)


def test_public_row_bound_is_enforced():
    # replace-one: n is public, so a table larger than the bound is refused
    # (under add/remove n is private and not compared, see
    # test_faults.test_n_rows_does_not_answer_for_n)
    with pytest.raises(ValueError, match="public upper bound"):
        ProjectedGaussianRelease(
            mechanism="correlated",
            n_rows=10,
            neighbouring="replace-one",
            random_state=0,
        ).fit(_data(n=20, p=4))


# -------------------------------------------------- distributed (Gao2022 Alg 4)
@pytest.mark.parametrize("mechanism", ["correlated", "isotropic-gaussian", "laplace"])
def test_distributed_privatization_equals_the_whole(mechanism):
    X = _data(p=4)
    W = MarginalWorkload(4, 2)
    C = np.random.default_rng(1).normal(size=(2, W.n_queries))
    est = ProjectedGaussianRelease(mechanism=mechanism, invariants=C, random_state=0)
    est.fit(X)
    y = W.answers(X)
    perm = np.random.default_rng(2).permutation(W.n_queries)
    idx = np.array_split(perm, 5)
    parts = [y[i] for i in idx]
    together = distributed_privatize(
        est.noise_model_, [y], [np.arange(W.n_queries)], seed=7
    )
    apart = distributed_privatize(est.noise_model_, parts, idx, seed=7)
    np.testing.assert_array_equal(apart, together)  # bit for bit
    np.testing.assert_allclose(C @ apart, C @ y, atol=1e-9)
    other = distributed_privatize(est.noise_model_, parts, idx, seed=8)
    assert not np.allclose(other, apart)
    # and it is the estimator's own mechanism: same seed stream, same release
    refit = ProjectedGaussianRelease(mechanism=mechanism, invariants=C, random_state=0)
    refit.fit(X)
    e = est.noise_model_.sample_noise(NoiseSource(0, stream=0).rng)
    np.testing.assert_allclose(refit.released_, y + e, atol=1e-8)
    with pytest.raises(ValueError, match="partition"):
        distributed_privatize(est.noise_model_, parts, [idx[0]] * 5, seed=7)


# ------------------------------------------------------- outputs / sampling
def test_labelled_outputs():
    X = pd.DataFrame(_data(p=4), columns=["a", "b", "c", "d"])
    est = ProjectedGaussianRelease(mechanism="correlated", random_state=0).fit(X)
    s = est.released_series_
    assert s.index.names == ["table", "cell"] and len(s) == 24
    assert s.loc[(("a", "b"), (1, 0))] == est.released_[2]
    t = est.marginal_table(["c", "a"])
    assert list(t.index.names) == ["c", "a"]
    # cell (c=1, a=0) is cell (a=0, c=1) of table (a, c)
    table_ac = est.released_[4:8]  # tables: (a,b), (a,c), ...
    assert t.loc[(1, 0)] == table_ac[1]
    with pytest.raises(ValueError, match="distinct"):
        est.marginal_table(["a", "a"])


@pytest.mark.filterwarnings(
    "ignore::skdp_synth.exceptions.PrivacyBudgetWarning"
)  # epsilon > 10 on purpose
def test_sampling_matches_the_release_when_noise_is_negligible():
    X = _data(n=400, p=4)
    est = ProjectedGaussianRelease(
        mechanism="correlated",
        epsilon=1e4,
        neighbouring="replace-one",
        n_candidates=64,
        random_state=0,
    ).fit(X)
    pts, w = est._synthetic_distribution()
    assert len(pts) == 16  # the whole universe
    assert w.sum() == pytest.approx(1.0)
    assert marginal_error(X, pts, 2, synthetic_weight=w) < 1e-3
    assert est.score(X) > -1e-3
    Y = est.sample(2000, random_state=1)
    assert set(np.unique(Y)) <= {0, 1}


def test_default_sample_size_does_not_reveal_n():
    X = _data(n=137, p=4)
    est = ProjectedGaussianRelease(mechanism="correlated", random_state=0).fit(X)
    assert est._default_n_samples() == max(1, round(est.n_estimate_))
    assert est.n_estimate_ != 137  # noisy under add/remove
    assert ProjectedGaussianRelease(
        mechanism="correlated", n_rows=500, random_state=0
    ).fit(X).sample().shape == (500, 4)
    rep = ProjectedGaussianRelease(
        mechanism="correlated", neighbouring="replace-one", random_state=0
    ).fit(X)
    assert rep.sample().shape == (137, 4)  # n is public under replace-one
    assert rep.n_estimate_ == 137


def test_explicit_workload_without_total_cannot_sample_under_add_remove():
    X = _data(p=3)
    est = ProjectedGaussianRelease(
        mechanism="correlated", workload=np.eye(8)[:5], random_state=0
    ).fit(X)
    assert est.n_estimate_ is None
    with pytest.raises(ValueError, match="pass n_samples"):
        est.sample()
    with pytest.raises(ValueError, match="normalised"):
        est.sample(5)


# ---------------------------------------------------------- bookkeeping
def test_guarantee_and_accountant():
    acc = BudgetAccountant(epsilon=3.0, delta=1e-5, neighbouring="add-remove-one")
    est = ProjectedGaussianRelease(
        mechanism="correlated", epsilon=1.0, delta=1e-6, accountant=acc, random_state=0
    )
    est.fit(_data(p=4))
    assert (est.epsilon_, est.delta_, est.neighbouring_) == (
        1.0,
        1e-6,
        "add-remove-one",
    )
    assert acc.total_spent == (1.0, 1e-6)
    assert "Nikolov2013 Alg. 2" in est.privacy_guarantee_.mechanism
    assert isinstance(est.noise_model_, AdditiveNoise)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"d": 5}, "exceeds"),
        ({"workload": np.ones((3, 7))}, "columns"),
        ({"invariants": np.ones((2, 5))}, "shape"),
        ({"delta": 0.7}, "0.5"),
        ({"n_rows": 300, "invariants": np.ones((1, 24))}, "cannot be combined"),
    ],
)
def test_bad_parameters_fail_clearly(params, match):
    with pytest.raises(ValueError, match=match):
        ProjectedGaussianRelease(mechanism="correlated", random_state=0, **params).fit(
            _data(p=4)
        )


def test_size_limits_fail_clearly():
    X = _data(n=50, p=20)
    with pytest.raises(ValueError, match="p <= 16"):
        ProjectedGaussianRelease(
            mechanism="correlated",
            invariants=np.ones((1, 760)),
            framework="extension",
            random_state=0,
        ).fit(X)
    with pytest.raises(ValueError, match="p <= 16"):
        ProjectedGaussianRelease(
            mechanism="correlated", n_rows=60, epsilon=0.1, random_state=0
        ).fit(X)


def test_digits_scale_and_weighted_optimality():
    """The demo size: 64 bits, 2016 tables x 4 cells, without enumerating 2^64."""
    from skdp_synth.datasets import load_binary_digits

    X = np.asarray(load_binary_digits())
    est = ProjectedGaussianRelease(
        mechanism="correlated", random_state=0, n_candidates=200
    ).fit(X)
    assert est.released_.shape == (8064,)
    assert est.decomposition_.dims.tolist() == [2016, 64, 1]
    assert (
        est.gaussian_optimal_error_
        <= est.expected_error_
        <= 2 * est.gaussian_optimal_error_
    )
    rep = ProjectedGaussianRelease(
        mechanism="correlated",
        neighbouring="replace-one",
        random_state=0,
        n_candidates=200,
    ).fit(X)
    assert rep.decomposition_.dims.tolist() == [2016, 64]  # the total is public
    assert rep.released_.reshape(-1, 4).sum(axis=1) == pytest.approx(len(X))


def test_categorical_data_through_the_boolean_encoder():
    from skdp_synth import make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], size=300),
            "size": rng.choice(["S", "M", "L"], size=300),
        }
    )
    enc = BooleanEncoder(
        categories={"colour": ["red", "green", "blue"], "size": ["S", "M", "L"]}
    )
    pipe = make_synthesis_pipeline(
        enc, ProjectedGaussianRelease(mechanism="correlated", random_state=0)
    )
    out = pipe.fit(df).sample(50)
    assert list(out.columns) == ["colour", "size"] and len(out) == 50
    assert set(out["colour"]) <= {"red", "green", "blue"}


def test_replace_one_exact_part_comes_from_public_n():
    """Under replace-one the zero-sensitivity part (the total) is n * o,
    computed from the public n, not read off the data."""
    X = _data(n=80, p=4)
    est = ProjectedGaussianRelease(
        mechanism="correlated", neighbouring="replace-one", random_state=0
    ).fit(X)
    o = est.noise_model_.offset
    assert np.count_nonzero(o) == 1 and o[0] == pytest.approx(
        math.sqrt(est.workload_.eigenvalues[0])
    )
    v = _truth(est, X)
    a = est.noise_model_.privatize(v, NoiseSource(1), n=80)
    b = est.noise_model_.privatize(v + 0.5 * o, NoiseSource(1), n=80)
    np.testing.assert_array_equal(a, b)  # a change along o is invisible
    with pytest.raises(ValueError, match="public n"):
        est.noise_model_.privatize(v, NoiseSource(1))


@pytest.mark.parametrize("relation", RELATIONS)
def test_residual_mechanism_noise_is_pinned(monkeypatch, relation):
    """mechanism="residual": the Gaussian sampler receives ``z_A / τ_A`` (true
    residuals, whitened to ℓ2-sensitivity 1) with σ = the analytic Gaussian
    calibration at sensitivity 1 (Balle & Wang 2018), and the released
    residuals are ``τ_A · (noisy)``; the scales are ResidualPlanner's
    (attribute_workload module docstring). Fails if any of these changes."""
    from skdp_synth.blocks import Blocks
    from skdp_synth.mechanisms import NoiseSource, gaussian_sigma
    from skdp_synth.workloads import AttributeMarginalWorkload

    calls = []
    original = NoiseSource.gaussian

    def spy(self, values, scale):
        calls.append((np.array(values), scale))
        return original(self, values, scale)

    monkeypatch.setattr(NoiseSource, "gaussian", spy)
    blocks = Blocks.from_spec(
        [
            {"name": "a", "kind": "onehot", "width": 3},
            {"name": "b", "kind": "binary", "width": 1},
            {"name": "c", "kind": "thermometer", "width": 2},
        ],
        6,
    )
    rng = np.random.default_rng(0)
    L = np.column_stack(
        [rng.integers(0, 3, 400), rng.integers(0, 2, 400), rng.integers(0, 3, 400)]
    )
    est = ProjectedGaussianRelease(
        epsilon=0.7,
        delta=1e-7,
        neighbouring=relation,
        blocks=blocks,
        selection="none",  # the all-tables plan (auto would select on 400 rows)
        random_state=1,
    ).fit(blocks.to_bits(L))
    ((values, scale),) = calls
    W = AttributeMarginalWorkload([3, 2, 3], 2)
    # 3 attributes: the pairs' own optimum (rules.one_way_min_attributes)
    tau = W.optimal_scales(relation)
    z = W.answers(L)
    noisy = [i for i, A in enumerate(W.subsets) if tau[i] > 0]
    np.testing.assert_allclose(
        values, np.concatenate([z[W.subsets[i]] / tau[i] for i in noisy]), rtol=1e-12
    )
    assert scale == gaussian_sigma(0.7, 1e-7, 1.0, "analytic")
    assert W.whitened_sensitivity(tau, relation) == pytest.approx(1.0, rel=1e-12)
    np.testing.assert_allclose(est.residual_scales_, scale * tau)
    if relation == "replace-one":  # the total is public and exact
        assert est._residuals[()][0] == 400.0 and tau[0] == 0.0
    assert est.expected_error_ == pytest.approx(W.expected_error(tau, scale))


def test_default_pairs_allocate_for_the_one_way_tables_too():
    """The default pairs (no workload, target or invariants): τ is the optimum
    for the pairs plus the 1-way tables at ``rules.one_way_weight``; the released
    tables are the pairs; ``gaussian_optimal_error_`` is the pairs' own
    optimum, so it is below ``expected_error_`` (strictly: the 1-way weight
    moves the allocation), and ``rules.one_way_weight = 0`` restores it; tables
    under ``rules.one_way_min_attributes`` keep the pairs' optimum."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES

    X = _data(n=400, p=12)
    kw = dict(mechanism="residual", selection="none", random_state=0)
    est = ProjectedGaussianRelease(**kw).fit(X)
    narrow = ProjectedGaussianRelease(**kw).fit(
        X[:, : DEFAULT_RULES.one_way_min_attributes - 1]
    )
    assert narrow.expected_error_ == pytest.approx(narrow.gaussian_optimal_error_)
    assert all(len(S) == 2 for S in est.workload_.tables)
    assert est.gaussian_optimal_error_ < est.expected_error_
    assert est.expected_error_ < 1.05 * est.gaussian_optimal_error_
    old = ProjectedGaussianRelease._rules
    try:
        ProjectedGaussianRelease._rules = dataclasses.replace(old, one_way_weight=0.0)
        pairs = ProjectedGaussianRelease(**kw).fit(X)
    finally:
        ProjectedGaussianRelease._rules = old
    assert pairs.expected_error_ == pytest.approx(pairs.gaussian_optimal_error_)
    assert pairs.gaussian_optimal_error_ == pytest.approx(est.gaussian_optimal_error_)
    # the 1-way residuals get less noise, the pairs' more
    W = est.workload_
    ones = [i for i, A in enumerate(W.subsets) if len(A) == 1]
    twos = [i for i, A in enumerate(W.subsets) if len(A) == 2]
    assert np.all(est.residual_scales_[ones] < pairs.residual_scales_[ones])
    assert np.all(est.residual_scales_[twos] > pairs.residual_scales_[twos])


def test_the_release_stages_import_no_other_stage():
    """Planning, measuring, reconstructing and generating are separate
    stages: none imports another (they share ``_values``, ``_rules``,
    ``_selection``, ``_shrinkage``, ``_invariants``), and only measuring
    imports the modules that read data (``_stats``, ``_chunked``)."""
    import ast
    from pathlib import Path

    import skdp_synth.gaussian_release as package

    root = Path(package.__file__).parent
    stages = {"_planning", "_measuring", "_reconstructing", "_generating"}
    reading = {"_stats", "_chunked"}
    for name in stages:
        tree = ast.parse((root / f"{name}.py").read_text(encoding="utf-8"))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                imported.add((node.level, node.module or ""))
        own = {m.split(".")[0] for level, m in imported if level == 1}
        parent = {m.split(".")[0] for level, m in imported if level == 2}
        assert not own & (stages - {name}), (name, own)
        if name != "_measuring":
            assert not parent & reading, (name, parent)
    assert reading <= {
        m.split(".")[0]
        for node in ast.walk(ast.parse((root / "_measuring.py").read_text("utf-8")))
        if isinstance(node, ast.ImportFrom) and node.level == 2
        for m in [node.module or ""]
    }
