"""Tests for skdp_synth.private_sampling (:cite:`Boedihardjo2022`) and its solvers
(_ssn)."""

import copy
import itertools
import math
import pickle

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import clone

from skdp_synth import BudgetAccountant, PrivateSampler, marginal_correction
from skdp_synth._sklearn_compat import InvalidParameterError
from skdp_synth._ssn import Gram, _exact_step, shrinkage_lp, ssn_box_qp
from skdp_synth.exceptions import (
    BudgetError,
    InfeasibleProblemError,
    PrivacyLeakWarning,
)
from skdp_synth.metrics import make_marginal_scorer, marginal_error
from skdp_synth.private_sampling._accounting import (
    _theorem_12_2_epsilon,
    density_sensitivity,
    max_draws,
    sampling_epsilon,
)
from skdp_synth.private_sampling._sampler import (
    marginals_to_walsh,
    walsh_coefficients,
    walsh_dimension,
    walsh_matrix,
    walsh_subsets,
    walsh_to_marginals,
)

# Every PrivateSampler fit at these sizes costs epsilon >> 10 (the guarantee
# is vacuous below n ~ 1e9, doc/privacy.md), and the tests below read the exact
# density and shrinkage on purpose, to check the mathematics: both warnings
# are expected here and tested where they are raised (tests/test_faults.py).
pytestmark = [
    pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.PrivacyBudgetWarning"),
    pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.PrivacyLeakWarning"),
]


def _bernoulli(n, p, q, seed):
    return (np.random.default_rng(seed).random((n, p)) < q).astype(np.int64)


def _table(X, J, v, weights=None):
    """Brute-force marginal P(x_J = v) of 0/1 rows, optionally weighted."""
    X = np.asarray(X)
    hit = np.all(X[:, list(J)] == np.asarray(v), axis=1)
    if weights is None:
        return hit.mean()
    return float(weights[hit].sum())


def _all_tables(p, d):
    for r in range(1, d + 1):
        for J in itertools.combinations(range(p), r):
            for v in itertools.product((0, 1), repeat=r):
                yield J, v


def _table_from_walsh(mu, J, v, p, d):
    """P(x_J = v) = 2^{-|J|} sum_{K subset J} mu_K prod_{j in K} (1 - 2 v_j)."""
    index = {K: i for i, K in enumerate(walsh_subsets(p, d))}
    t = dict(zip(J, 1 - 2 * np.asarray(v)))
    acc = 0.0
    for r in range(len(J) + 1):
        for K in itertools.combinations(J, r):
            acc += mu[index[K]] * np.prod([t[j] for j in K])
    return acc / 2 ** len(J)


# ------------------------------------------------------------------ Walsh
def test_walsh_dimension_and_order():
    assert walsh_dimension(64, 2) == 1 + 64 + 2016
    assert walsh_dimension(10, 3) == 1 + 10 + 45 + 120
    subsets = walsh_subsets(4, 3)
    assert len(subsets) == walsh_dimension(4, 3)
    assert subsets[0] == () and subsets[1:5] == [(0,), (1,), (2,), (3,)]
    assert subsets[5:] == list(itertools.combinations(range(4), 2)) + list(
        itertools.combinations(range(4), 3)
    )


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_walsh_matrix_equals_products(d):
    X = _bernoulli(37, 6, 0.4, seed=d)
    M = walsh_matrix(X, d)
    S = 1 - 2 * X  # chi_J(x) = prod (1 - 2 x_j): skdp_synth.fourier's convention
    expected = np.column_stack(
        [np.prod(S[:, list(J)], axis=1) for J in walsh_subsets(6, d)]
    )
    np.testing.assert_array_equal(M, expected)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_walsh_coefficients_give_every_brute_force_marginal(d):
    # mu from the data reproduces every marginal table cell P(x_J = v),
    # |J| <= d, through the 0/1 <-> +-1 conversion (exact up to rounding).
    p = 7
    X = _bernoulli(503, p, 0.3, seed=10 + d)
    mu = walsh_coefficients(X, d, chunk=100)  # chunking must not matter
    for J, v in _all_tables(p, d):
        assert _table_from_walsh(mu, J, v, p, d) == pytest.approx(
            _table(X, J, v), abs=1e-13
        )
    conj = walsh_to_marginals(mu, p, d)
    for i, J in enumerate(walsh_subsets(p, d)):
        assert conj[i] == pytest.approx(_table(X, J, (1,) * len(J)) if J else 1.0)
    np.testing.assert_allclose(marginals_to_walsh(conj, p, d), mu, atol=1e-13)


def test_walsh_inputs_validated():
    with pytest.raises(ValueError, match="Boolean"):
        walsh_matrix([[0, 2]], 1)
    with pytest.raises(ValueError, match="exceeds"):
        walsh_matrix([[0, 1]], 3)
    with pytest.raises(ValueError, match="entries|coefficients"):
        walsh_to_marginals(np.zeros(3), 2, 2)


# ---------------------------------------------------------- privacy maths
def test_density_sensitivity_constant_pinned():
    # eta^2 = 16 e^d sqrt(D) (Delta-delta)(Delta-3delta) R / (delta n sqrt(m)),
    # R = max(1-2delta, Delta-delta-1)/min(...)  (Lemma 12.1 chain, see docstring)
    n, p, d, m, dl, du = 10**6, 10, 1, 82, 0.25, 2.5
    R = max(1 - 2 * dl, du - dl - 1) / min(1 - 2 * dl, du - dl - 1)
    eta2 = (
        16
        * math.e
        * math.sqrt(11)
        * (du - dl)
        * (du - 3 * dl)
        * R
        / (dl * n * math.sqrt(m))
    )
    assert density_sensitivity(n, p, d, m, dl, du) == pytest.approx(
        math.sqrt(eta2), rel=1e-14
    )
    assert density_sensitivity(n, p, d, m, dl, du) == pytest.approx(
        0.025044491823741116, rel=1e-12
    )
    # the other side of the midpoint (Delta + delta < 2): R = (1-2delta)/(Delta-delta-1)
    assert density_sensitivity(10**6, 10, 2, 3057, 0.2, 1.5) == pytest.approx(
        math.sqrt(
            16
            * math.e**2
            * math.sqrt(56)
            * 1.3
            * 0.9
            * (0.6 / 0.3)
            / (0.2 * 10**6 * math.sqrt(3057))
        ),
        rel=1e-14,
    )


def test_epsilon_per_draw_formula_and_cap():
    n, p, d, m, dl, du = 10**12, 10, 1, 82, 0.25, 2.5
    eta = density_sensitivity(n, p, d, m, dl, du)
    eps1 = sampling_epsilon(1, n, p, d, m, dl, du)
    assert eps1 == pytest.approx(math.log1p(eta * m / dl), rel=1e-14)
    assert eps1 <= eta * m / dl  # the paper's exp(eta m / delta) bound
    assert sampling_epsilon(7, n, p, d, m, dl, du) == pytest.approx(7 * eps1)
    # small n: Lemma 12.1 is vacuous, the cap log(Delta/delta) applies
    assert sampling_epsilon(1, 100, p, d, m, dl, du) == pytest.approx(math.log(10))
    assert sampling_epsilon(0, 100, p, d, m, dl, du) == 0


@pytest.mark.parametrize("dl", [0.05, 0.1, 0.25])
@pytest.mark.parametrize("du", [2.0, 2.5, 4.0, 10.0])
def test_never_above_theorem_12_2_where_its_closed_form_holds(dl, du):
    # For delta <= 1/4 and Delta + delta > 2 the paper's simplifications are
    # valid, and our unsimplified chain can only be smaller.
    for n, p, d in [(10**9, 10, 1), (10**14, 20, 2), (10**18, 40, 3)]:
        m = math.ceil(math.exp(2 * d) * walsh_dimension(p, d))
        ours = sampling_epsilon(3, n, p, d, m, dl, du)
        assert ours <= _theorem_12_2_epsilon(3, n, p, d, m, dl, du) * (1 + 1e-12)


def test_theorem_12_2_closed_form_pinned_and_its_invalid_region():
    # Boedihardjo2022 Theorem 12.2: eps(k) = 4 sqrt 2 k (Delta/delta)^{3/2} e^{d/2}
    # D^{1/4} m^{3/4}/sqrt n
    got = _theorem_12_2_epsilon(5, 10**10, 10, 2, 3057, 0.25, 2.5)
    want = 4 * math.sqrt(2) * 5 * 10**1.5 * math.e * 56**0.25 * 3057**0.75 / 1e5
    assert got == pytest.approx(want, rel=1e-14)
    # delta close to 1/2: the paper's (b-a)/(c-a) <= 2 Delta fails, and its
    # closed form understates what its own proof supports.
    n, p, d, m = 10**16, 10, 1, 82
    assert sampling_epsilon(1, n, p, d, m, 0.45, 3.0) > _theorem_12_2_epsilon(
        1, n, p, d, m, 0.45, 3.0
    )


def test_max_draws_is_largest_affordable():
    args = (10**12, 10, 1, 82, 0.25, 2.5)
    for eps in [0.01, 0.5, 1.0, 3.7]:
        k = max_draws(eps, *args)
        assert sampling_epsilon(k, *args) <= eps < sampling_epsilon(k + 1, *args)
    assert max_draws(1.0, 10**6, 10, 1, 82, 0.25, 2.5) == 0
    with pytest.raises(ValueError, match="epsilon"):
        max_draws(np.inf, *args)


@pytest.mark.parametrize(
    "dl, du", [(0.5, 3.0), (0.25, 1.25), (0.0, 2.0), (0.3, 1.2), (0.25, np.inf)]
)
def test_density_bounds_validated(dl, du):
    with pytest.raises(ValueError, match="density_lower"):
        sampling_epsilon(1, 100, 5, 1, 50, dl, du)


# ---------------------------------------------------------------- fitting
def test_no_shrinkage_for_regular_data_and_exact_marginals():
    # Boedihardjo2022 Remark 12.5: data from a regular density (here uniform on the
    # cube,
    # n large) need no shrinkage, and h* has exactly the data's marginals.
    p, d = 6, 2
    X = _bernoulli(20000, p, 0.5, seed=1)
    ps = PrivateSampler(d=d, k=50, random_state=0).fit(X)
    assert ps.shrinkage_ == 0.0
    S, h = ps.reduced_space_, ps.density_
    for J, v in _all_tables(p, d):
        assert _table(S, J, v, h) == pytest.approx(_table(X, J, v), abs=1e-9)
    assert h.min() >= ps.density_lower / ps.m_ - 1e-15
    assert h.max() <= ps.density_upper / ps.m_ + 1e-15
    assert h.sum() == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("solver", ["newton", "cvxpy"])
@pytest.mark.parametrize("p, d, q", [(6, 1, 0.2), (6, 2, 0.3), (5, 3, 0.3)])
def test_marginals_shrunk_exactly_by_lambda(solver, p, d, q):
    # Boedihardjo2022 §12.4: P(h*) = (1 - lam) P(f_n) + lam P(u_m) for every marginal up
    # to
    # degree d, hence |P(h*) - P(f_n)| = lam |P(u_m) - P(f_n)|.
    X = _bernoulli(700, p, q, seed=p + d)
    ps = PrivateSampler(d=d, k=1, solver=solver, random_state=3).fit(X)
    lam = ps.shrinkage_
    assert 0 < lam < 1
    S, h = ps.reduced_space_, ps.density_
    uniform = np.full(ps.m_, 1 / ps.m_)
    for J, v in _all_tables(p, d):
        data, syn, unif = _table(X, J, v), _table(S, J, v, h), _table(S, J, v, uniform)
        assert syn - data == pytest.approx(lam * (unif - data), abs=1e-8)
        assert abs(syn - data) <= lam * abs(unif - data) + 1e-8


@pytest.mark.parametrize("p, d, q, n", [(6, 2, 0.3, 500), (8, 2, 0.15, 3000)])
def test_newton_and_cvxpy_solvers_agree(p, d, q, n):
    X = _bernoulli(n, p, q, seed=1)
    a = PrivateSampler(d=d, k=1, solver="newton", random_state=0).fit(X)
    b = PrivateSampler(d=d, k=1, solver="cvxpy", random_state=0).fit(X)
    np.testing.assert_array_equal(a.reduced_space_, b.reduced_space_)
    # lam*: LP optimum, certified bracket from the proximal point method
    assert a.shrinkage_lower_bound_ <= a.shrinkage_
    assert a.shrinkage_ - a.shrinkage_lower_bound_ <= 1e-7
    assert a.shrinkage_ == pytest.approx(b.shrinkage_, abs=1e-7)
    # h*: same strictly convex QP; Newton is at least as good (Clarabel stops
    # at ~1e-6 relative accuracy in the objective)
    m = a.m_
    obj_a = np.sum((m * a.density_ - 1) ** 2)
    obj_b = np.sum((m * b.density_ - 1) ** 2)
    assert obj_a <= obj_b * (1 + 1e-8)
    assert obj_a == pytest.approx(obj_b, rel=1e-5)
    np.testing.assert_allclose(m * a.density_, m * b.density_, atol=0.05)


def test_sensitivity_lemma_12_1_on_neighbouring_datasets():
    # Replace-one neighbours, same reduced space (same random_state): the
    # measured ||h1 - h2||_inf stays below eta (Lemma 12.1) and the densities
    # satisfy the private-sampling lemma's ratio condition with the reported
    # epsilon: h1/h2 <= exp(epsilon_ / k) pointwise.
    rng = np.random.default_rng(42)
    p, d, n = 6, 2, 400
    worst = 0.0
    for trial in range(12):
        X1 = _bernoulli(n, p, 0.2 + 0.05 * (trial % 6), seed=100 + trial)
        X2 = X1.copy()
        i = rng.integers(n)
        # alternate random replacements and the complement of the row
        X2[i] = 1 - X1[i] if trial % 2 else rng.integers(0, 2, size=p)
        kw = dict(d=d, k=3, random_state=7)
        a, b = PrivateSampler(**kw).fit(X1), PrivateSampler(**kw).fit(X2)
        np.testing.assert_array_equal(a.reduced_space_, b.reduced_space_)
        eta = density_sensitivity(n, p, d, a.m_, 0.25, 2.5)
        gap = np.abs(a.density_ - b.density_).max()
        assert gap <= eta
        worst = max(worst, gap / eta)
        ratio = max(np.max(a.density_ / b.density_), np.max(b.density_ / a.density_))
        assert ratio <= math.exp(a.epsilon_ / a.n_draws_paid_) * (1 + 1e-12)
        assert a.epsilon_ == pytest.approx(3 * a.epsilon_per_draw_)
    assert 0 < worst < 1


def test_reduced_space_is_data_independent():
    X1 = _bernoulli(300, 6, 0.2, seed=1)
    X2 = _bernoulli(300, 6, 0.7, seed=2)
    a = PrivateSampler(d=1, m=8, k=1, random_state=4).fit(X1)
    b = PrivateSampler(d=1, m=8, k=1, random_state=4).fit(X2)
    np.testing.assert_array_equal(a.reduced_space_, b.reduced_space_)
    assert a.n_redraws_ == b.n_redraws_


def test_conditioning_redraw_then_clear_error():
    X = _bernoulli(200, 6, 0.5, seed=0)
    # m = 8 points for D = 7 Walsh functions: seed 4 rejects 3 reduced spaces
    ps = PrivateSampler(d=1, m=8, k=1, random_state=4).fit(X)
    assert ps.n_redraws_ == 3
    assert ps.min_singular_value_ >= 1 / (2 * math.e)
    M = walsh_matrix(ps.reduced_space_, 1)
    s = np.linalg.svd(M, compute_uv=False)
    assert s[-1] / math.sqrt(8) == pytest.approx(ps.min_singular_value_)
    assert ps.condition_number_ == pytest.approx(s[0] / s[-1])
    with pytest.raises(InfeasibleProblemError, match="well-conditioned"):
        PrivateSampler(d=1, m=8, k=1, max_redraws=2, random_state=4).fit(X)


def test_default_m_and_sizes():
    X = _bernoulli(100, 5, 0.5, seed=0)
    ps = PrivateSampler(d=2, k=1, random_state=0).fit(X)
    assert ps.n_walsh_ == 16
    assert ps.m_ == math.ceil(math.exp(4) * 16)
    assert ps.reduced_space_.shape == (ps.m_, 5)
    assert set(np.unique(ps.reduced_space_)) <= {0.0, 1.0}


# ---------------------------------------------------------------- budget
def test_k_paid_at_fit_and_draws_counted():
    X = _bernoulli(300, 5, 0.5, seed=0)
    ps = PrivateSampler(d=1, k=30, random_state=0).fit(X)
    assert ps.epsilon_ == pytest.approx(30 * ps.epsilon_per_draw_)
    assert ps.epsilon_per_draw_ == pytest.approx(
        sampling_epsilon(1, 300, 5, 1, ps.m_, 0.25, 2.5)
    )
    assert (ps.delta_, ps.neighbouring_) == (0.0, "replace-one")
    assert ps.sample(10).shape == (10, 5)
    assert ps.transform(X[:15]).shape == (15, 5)  # transform draws count too
    assert ps.n_draws_released_ == 25
    with pytest.raises(BudgetError, match="beyond the 30 rows paid"):
        ps.sample(6)
    assert ps.n_draws_released_ == 25  # a refused call releases nothing
    ps.sample(5)
    with pytest.raises(BudgetError):
        ps.sample(1)
    # score reads the exact density and draws nothing
    ps.score(X)
    assert ps.n_draws_released_ == 30


def test_sample_default_is_the_paid_rows():
    X = _bernoulli(300, 5, 0.5, seed=0)
    ps = PrivateSampler(d=1, k=12, random_state=0).fit(X)
    assert ps.sample().shape == (12, 5)
    with pytest.raises(BudgetError):
        ps.sample()


def test_extra_draws_charged_to_the_accountant():
    X = _bernoulli(300, 5, 0.5, seed=0)
    acc = BudgetAccountant(epsilon=100.0)
    ps = PrivateSampler(d=1, k=10, accountant=acc, random_state=0).fit(X)
    per = ps.epsilon_per_draw_
    assert acc.total_spent[0] == pytest.approx(10 * per)
    ps.sample(25)
    assert ps.n_draws_paid_ == 25
    assert ps.epsilon_ == pytest.approx(25 * per)
    assert ps.privacy_guarantee_.epsilon == pytest.approx(ps.epsilon_)
    assert acc.total_spent[0] == pytest.approx(ps.epsilon_)
    left = int(acc.remaining()[0] // per)
    with pytest.raises(BudgetError):
        ps.sample(left + 1)
    assert ps.n_draws_released_ == 25 and ps.n_draws_paid_ == 25
    assert acc.total_spent[0] == pytest.approx(25 * per)


def test_target_epsilon_sets_k():
    X = _bernoulli(300, 5, 0.5, seed=0)
    per = PrivateSampler(d=1, k=1, random_state=0).fit(X).epsilon_per_draw_
    ps = PrivateSampler(d=1, epsilon=10 * per + 1e-9, random_state=0).fit(X)
    assert ps.n_draws_paid_ == 10
    assert ps.epsilon_ == pytest.approx(10 * per) and ps.epsilon_ <= 10 * per + 1e-9
    with pytest.raises(ValueError, match="allows at most 10 rows"):
        PrivateSampler(d=1, k=11, epsilon=10 * per + 1e-9).fit(X)
    with pytest.raises(ValueError, match="does not pay for a single row"):
        PrivateSampler(d=1, epsilon=0.5 * per).fit(X)
    with pytest.raises(ValueError, match="needs k"):
        PrivateSampler(d=1).fit(X)


def test_refused_fit_spends_nothing():
    X = _bernoulli(300, 5, 0.5, seed=0)
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(BudgetError):
        PrivateSampler(d=1, k=5, accountant=acc).fit(X)
    assert acc.spent == []


# --------------------------------------------------------------- sampling
def test_draws_follow_the_density():
    # Chi-square goodness of fit of the sampled cells against h* aggregated
    # per cell of {0,1}^4. Fixed seed; false-failure rate alpha = 1e-3.
    X = _bernoulli(2000, 4, 0.35, seed=5)
    ps = PrivateSampler(d=2, k=20000, random_state=1).fit(X)
    Y = ps.sample(20000)
    codes = lambda Z: (np.asarray(Z) @ (2 ** np.arange(4))).astype(int)  # noqa: E731
    expected = np.bincount(codes(ps.reduced_space_), weights=ps.density_, minlength=16)
    observed = np.bincount(codes(Y), minlength=16)
    keep = expected > 0
    assert observed[~keep].sum() == 0
    _, pvalue = stats.chisquare(observed[keep], 20000 * expected[keep])
    assert pvalue > 1e-3


def test_pandas_output_and_reproducible_draws():
    df = pd.DataFrame(_bernoulli(200, 4, 0.5, seed=0), columns=list("abcd"))
    a = PrivateSampler(d=1, k=40, random_state=0).fit(df)
    b = PrivateSampler(d=1, k=40, random_state=0).fit(df)
    ya, yb = a.sample(20), b.sample(20)
    assert isinstance(ya, pd.DataFrame) and list(ya.columns) == list("abcd")
    pd.testing.assert_frame_equal(ya, yb)


def test_score_reads_only_the_paid_rows():
    # score (what GridSearchCV calls) must not read the exact
    # density h*, whose 2-way marginals equal the data's when lam* = 0 (the
    # old test pinned score == 0 here, i.e. the leak). It reads the k rows
    # paid for, the release, and draws nothing.
    X = _bernoulli(3000, 5, 0.5, seed=0)
    ps = PrivateSampler(d=2, k=20, random_state=0).fit(X)
    assert ps.shrinkage_ == 0.0
    released = ps.to_release().arrays["rows"]
    assert ps.score(X) == pytest.approx(-marginal_error(X, released, 2), rel=1e-12)
    assert ps.score(X) < -1e-3  # 20 rows do not match the marginals exactly
    assert ps.n_draws_released_ == 0
    ps = PrivateSampler(d=2, k=1, random_state=0).fit(X)
    # a scorer that samples is charged (here refused: only 1 row was paid)
    with pytest.raises(BudgetError):
        make_marginal_scorer(d=2, n_samples=50)(ps, X)


# ------------------------------------------------------ parameters, input
@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"density_lower": 0.5}, InvalidParameterError, "density_lower"),
        ({"density_upper": 1.0}, InvalidParameterError, "density_upper"),
        ({"density_lower": 0.3, "density_upper": 1.2}, ValueError, "density_upper"),
        ({"epsilon": np.inf}, InvalidParameterError, "epsilon"),
        ({"k": 0}, InvalidParameterError, "'k'"),
        ({"d": 0}, InvalidParameterError, "'d'"),
        ({"d": 6}, ValueError, "exceeds the number of features"),
        ({"m": 10}, ValueError, "smaller than the number of Walsh functions"),
        ({"solver": "gurobi"}, InvalidParameterError, "solver"),
        ({"tol": 0.1}, InvalidParameterError, "tol"),
    ],
)
def test_bad_parameters_rejected(params, error, match):
    X = _bernoulli(100, 5, 0.5, seed=0)
    kw = {"d": 2, "k": 1, **params}
    with pytest.raises(error, match=match):
        PrivateSampler(**kw).fit(X)


def test_p_too_large_for_d_is_refused_before_allocating():
    X = np.zeros((3, 300), dtype=np.int64)
    X[0] = 1
    with pytest.raises(MemoryError, match="p is too large for this degree"):
        PrivateSampler(d=3, k=1).fit(X)


def test_non_boolean_input_rejected():
    X = _bernoulli(50, 4, 0.5, seed=0).astype(float)
    X[7, 2] = 0.5
    with pytest.raises(ValueError, match="column 2 has"):
        PrivateSampler(d=1, k=1).fit(X)


# ----------------------------------------------------- marginal correction
@pytest.mark.parametrize("solver", ["newton", "cvxpy"])
def test_marginal_correction_exact(solver):
    sample = _bernoulli(600, 5, 0.5, seed=0)
    data = _bernoulli(2000, 5, 0.62, seed=1)
    fix = marginal_correction(sample, data, d=2, solver=solver)
    assert fix.shrinkage == 0.0
    for J, v in _all_tables(5, 2):
        assert _table(sample, J, v, fix.weights) == pytest.approx(
            _table(data, J, v), abs=1e-8
        )
    # the same target given as a vector of conjunction marginals
    marg = walsh_to_marginals(walsh_coefficients(data, 2), 5, 2)
    fix2 = marginal_correction(sample, marg, d=2, solver=solver)
    np.testing.assert_allclose(fix2.weights, fix.weights, atol=1e-6 / 600)
    assert fix.weights.min() >= 0


def test_marginal_correction_close_to_uniform_for_a_sample_of_the_target():
    # Boedihardjo2022 Theorem 8.2: a sample of a regular density f reweighted to f's own
    # marginals needs weights within (1 +- o(1))/m.
    rng = np.random.default_rng(3)
    sample = (rng.random((20000, 4)) < 0.5).astype(int)
    # target: the uniform density's conjunction marginals 1, 1/2, 1/4
    target = np.array([1.0] + [0.5] * 4 + [0.25] * 6)
    fix = marginal_correction(sample, target, d=2)
    assert fix.shrinkage == 0.0
    assert np.abs(20000 * fix.weights - 1).max() < 0.1


def test_marginal_correction_shrinks_unreachable_targets():
    sample = _bernoulli(300, 4, 0.5, seed=0)
    target = np.array([1.0, 1.0, 0.5, 0.5, 0.5])  # P(x0 = 1) = 1
    fix = marginal_correction(sample, target, d=1, density_lower=0.5, density_upper=3)
    assert 0 < fix.shrinkage < 1
    own = walsh_to_marginals(walsh_coefficients(sample, 1), 4, 1)
    got = walsh_to_marginals(walsh_matrix(sample, 1).T @ fix.weights, 4, 1)
    goal = (1 - fix.shrinkage) * target + fix.shrinkage * own
    np.testing.assert_allclose(got, goal, atol=1e-8)
    ref = marginal_correction(
        sample, target, d=1, density_lower=0.5, density_upper=3, solver="cvxpy"
    )
    assert ref.shrinkage == pytest.approx(fix.shrinkage, abs=1e-6)


def test_marginal_correction_errors():
    sample = _bernoulli(50, 4, 0.5, seed=0)
    with pytest.raises(ValueError, match="11 entries"):
        marginal_correction(sample, np.ones(5), d=2)
    with pytest.raises(ValueError, match="columns"):
        marginal_correction(sample, _bernoulli(10, 3, 0.5, seed=0), d=2)
    with pytest.raises(ValueError, match="density_lower"):
        marginal_correction(sample, sample, d=1, density_lower=1.0)
    with pytest.raises(ValueError, match="at least D rows"):
        marginal_correction(sample[:5], sample, d=2)
    with pytest.raises(ValueError, match="Boolean"):
        marginal_correction(sample + 1, sample, d=1)
    with pytest.raises(InfeasibleProblemError, match="rank deficient"):
        marginal_correction(np.tile(sample[:2], (10, 1)), sample, d=1)


# ------------------------------------------------------------ the solvers
def test_ssn_matches_least_squares_when_no_bound_is_active():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((200, 12)) / math.sqrt(200)
    center = np.ones(200)
    c = A.T @ (center + 0.01 * rng.standard_normal(200))
    x, y, _, res = ssn_box_qp(A, c, center, np.zeros(200), np.full(200, 5.0), tol=1e-12)
    # min ||x - center|| s.t. A^T x = c: x = center + A (A^T A)^{-1} (c - A^T center)
    want = center + A @ np.linalg.solve(A.T @ A, c - A.T @ center)
    np.testing.assert_allclose(x, want, atol=1e-10)
    assert res <= 1e-12


def test_exact_line_search_finds_the_maximiser():
    rng = np.random.default_rng(1)
    for _ in range(20):
        u, w = rng.standard_normal(50), rng.standard_normal(50)
        lo, hi = np.full(50, -0.5), np.full(50, 0.7)
        dc = 1.0 + abs(w @ np.clip(u, lo, hi))
        t = _exact_step(dc, u, w, lo, hi, sigma=2.0)
        slope = dc - w @ np.clip(u + 2.0 * t * w, lo, hi)  # phi'(t) = 0
        assert abs(slope) < 1e-9 * (1 + abs(dc))


def test_shrinkage_lp_brackets_the_highs_optimum():
    from scipy.optimize import linprog

    X = _bernoulli(300, 5, 0.2, seed=2)
    S = _bernoulli(200, 5, 0.5, seed=3)
    M = walsh_matrix(S, 2)
    A = M / math.sqrt(200)
    mu = walsh_coefficients(X, 2)
    c0, c1 = math.sqrt(200) * mu, A.T @ np.ones(200)
    lam, lower, _ = shrinkage_lp(A, c0, c1, 0.5, 2.25, gram=Gram(A))
    nu = M.mean(axis=0)
    ref = linprog(
        np.r_[np.zeros(200), 1.0],
        A_eq=np.hstack([M.T / 200, -(nu - mu)[:, None]]),
        b_eq=mu,
        bounds=[(0.5, 2.25)] * 200 + [(0, 1)],
        method="highs",
    )
    assert lower - 1e-9 <= ref.x[-1] <= lam + 1e-9
    assert lam - lower <= 1e-7


def test_cg_and_direct_newton_systems_agree(monkeypatch):
    # D > 256 with a large free set takes the preconditioned-CG branch; forcing
    # the direct branch must give the same QP solution.
    import skdp_synth._ssn as ssn

    S = _bernoulli(3000, 24, 0.5, seed=4)
    M = walsh_matrix(S, 2)  # D = 301
    A = M / math.sqrt(3000)
    mu = walsh_coefficients(_bernoulli(500, 24, 0.45, seed=5), 2)
    c = math.sqrt(3000) * (0.3 * mu + 0.7 * M.mean(axis=0))
    args = (A, c, np.ones(3000), np.full(3000, 0.25), np.full(3000, 2.5))
    calls = {"cg": 0}
    real_cg = ssn._cg_direction

    def counting_cg(*a):
        calls["cg"] += 1
        return real_cg(*a)

    monkeypatch.setattr(ssn, "_cg_direction", counting_cg)
    x_cg, *_ = ssn_box_qp(*args, gram=Gram(A), tol=1e-11)
    assert calls["cg"] > 0
    monkeypatch.setattr(ssn, "_DIRECT_MAX_D", 10**6)
    x_direct, *_ = ssn_box_qp(*args, gram=Gram(A), tol=1e-11)
    np.testing.assert_allclose(x_cg, x_direct, atol=1e-7)
    assert np.abs(A.T @ x_cg - c).max() / math.sqrt(3000) <= 1e-10


def test_cached_factor_preconditioner_gives_the_newton_direction():
    # After a direct factorisation, a nearby free set is solved by CG
    # preconditioned with the cached factor; the direction must be the same.
    import skdp_synth._ssn as ssn

    rng = np.random.default_rng(0)
    A = walsh_matrix(_bernoulli(2000, 24, 0.5, seed=6), 2) / math.sqrt(2000)
    D = A.shape[1]  # 301 > _DIRECT_MAX_D
    gram = Gram(A)
    free = np.zeros(2000, dtype=bool)
    free[rng.choice(2000, size=2 * D, replace=False)] = True
    grad = rng.standard_normal(D)
    ssn._newton_direction(A, free, gram, None, False, grad)  # direct, cached
    assert gram.last_newton is not None
    free2 = free.copy()
    free2[np.flatnonzero(free)[:10]] = False
    free2[np.flatnonzero(~free)[:15]] = True
    d = ssn._newton_direction(A, free2, gram, None, False, grad)
    H = A[free2].T @ A[free2]
    np.testing.assert_allclose(H @ d, grad, atol=1e-8 * np.abs(grad).max())
    assert gram.last_newton[0] is not free2  # the cache was not refreshed
    np.testing.assert_array_equal(gram.last_newton[0], free)


def test_marginal_correction_with_blocks_rejects_invalid_sample_rows():
    from skdp_synth.blocks import Blocks

    blocks = Blocks.from_spec(
        [
            {"name": "t", "kind": "thermometer", "width": 2},
            {"name": "b", "kind": "binary", "width": 1},
        ]
    )
    rng = np.random.default_rng(0)

    def rows(n):
        return blocks.to_bits(
            np.column_stack([rng.integers(0, 3, n), rng.integers(0, 2, n)])
        )

    sample, target = rows(400), rows(900)
    fix = marginal_correction(sample, target, d=1, blocks=blocks)
    ref = marginal_correction(sample, target, d=1)
    np.testing.assert_array_equal(fix.weights, ref.weights)
    bad = sample.copy()
    bad[:3, :2] = [0, 1]
    with pytest.raises(ValueError, match=r"3 sample rows are not valid.*\['t'\]"):
        marginal_correction(bad, target, d=1, blocks=blocks)
    with pytest.raises(ValueError, match="add up to 3 bits"):
        marginal_correction(sample[:, :2], target[:, :2], d=1, blocks=blocks)
    # valid rows of a one-hot block: its bits sum to 1, so the Walsh functions
    # are linearly dependent -- reported as structural
    onehot = Blocks.from_spec([{"name": "c", "kind": "onehot", "width": 3}])
    S = onehot.to_bits(rng.integers(0, 3, (50, 1)))
    with pytest.raises(InfeasibleProblemError, match="structural"):
        marginal_correction(S, S, d=1, blocks=onehot)


# ------------------------------------------------------- copies and leaks
@pytest.mark.parametrize(
    "copier",
    [
        pytest.param(lambda e: pickle.loads(pickle.dumps(e)), id="pickle"),
        pytest.param(copy.deepcopy, id="deepcopy"),
        pytest.param(copy.copy, id="copy"),
    ],
)
def test_copies_cannot_release_more_rows_than_paid(copier):
    # Measured before the fix: four reloaded copies of one k=100 fit released
    # 500 rows while epsilon_ said 100. Now every row any copy returns is one of
    # the k rows paid for, and no copy can draw new ones.
    X = _bernoulli(300, 5, 0.5, seed=0)
    acc = BudgetAccountant()
    ps = PrivateSampler(d=1, k=20, accountant=acc).fit(X)  # secure: no seed
    paid = {tuple(r) for r in ps.to_release().arrays["rows"]}
    seen = set()
    for _ in range(4):
        c = copier(ps)
        rows = c.sample(20)
        seen |= {tuple(r) for r in np.asarray(rows)}
        with pytest.raises(BudgetError):
            c.sample(1)  # beyond the paid rows: refused, even with an accountant
    seen |= {tuple(r) for r in np.asarray(ps.sample(20))}
    assert seen <= paid
    assert acc.total_spent[0] == pytest.approx(ps.epsilon_)


def test_clone_and_deepcopy_share_the_accountant():
    X = _bernoulli(300, 5, 0.5, seed=0)
    acc = BudgetAccountant(epsilon=1e6)
    ps = PrivateSampler(d=1, k=5, accountant=acc, random_state=0)
    assert clone(ps).accountant is acc
    assert copy.deepcopy(ps).accountant is acc
    clone(ps).fit(X)
    clone(ps).fit(X)
    assert len(acc.spent) == 2  # both fits charged the one budget


def test_a_reloaded_accountant_refuses_to_spend():
    acc = BudgetAccountant(epsilon=10.0)
    acc.spend(1.0)
    restored = pickle.loads(pickle.dumps(acc))
    assert restored.total_spent == (1.0, 0.0)
    with pytest.raises(BudgetError, match="restored from a pickle"):
        restored.spend(0.5)
    X = _bernoulli(300, 5, 0.5, seed=0)
    est = pickle.loads(pickle.dumps(PrivateSampler(d=1, k=1, accountant=acc)))
    with pytest.raises(BudgetError):
        est.fit(X)


def test_exact_state_is_private_and_warns():
    # reduced_space_, density_ and shrinkage_ would let one
    # solve for the exact Walsh coefficients. The exact state is private; the
    # public names warn; a copy does not even hold the density.
    X = _bernoulli(300, 5, 0.5, seed=0)
    ps = PrivateSampler(d=1, k=5, random_state=0).fit(X)
    public = {k for k in vars(ps) if not k.startswith("_")}
    assert not public & {"density_", "shrinkage_", "shrinkage_lower_bound_", "solver_"}
    for name in ("density_", "shrinkage_", "shrinkage_lower_bound_", "solver_"):
        with pytest.warns(PrivacyLeakWarning, match=name):
            getattr(ps, name)
    assert not hasattr(pickle.loads(pickle.dumps(ps)), "density_")
    assert not hasattr(PrivateSampler(), "density_")
