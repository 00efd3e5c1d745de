"""Tests of CovarianceLossMicroaggregator (:cite:`Boedihardjo2024` §3-4,
:cite:`SahSawhney` §2)."""

import itertools
import math

import _microagg_reference as ref
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pycanon import anonymity
from sklearn.base import clone

from skdp_synth import CovarianceLossMicroaggregator, load_binary_digits
from skdp_synth._sklearn_compat import InvalidParameterError
from skdp_synth.cli._registry import get_method
from skdp_synth.metrics import covariance_loss, marginal_error
from skdp_synth.microaggregation import _partition as part

Est = CovarianceLossMicroaggregator


# ------------------------------------------------------------------ data
def boolean(n=400, p=8, seed=0):
    """Boolean rows with correlated columns (a latent factor)."""
    rng = np.random.default_rng(seed)
    base = rng.random((n, 1))
    return (rng.random((n, p)) < 0.2 + 0.6 * base).astype(np.int64)


def hubs(n=4096, p=32, n_hubs=8, flip=0.05, seed=1):
    """Planted structure: every column is a noisy copy of one of a few hub bits."""
    rng = np.random.default_rng(seed)
    hub = rng.random((n, n_hubs)) < 0.5
    source = rng.integers(0, n_hubs, p)
    return (hub[:, source] ^ (rng.random((n, p)) < flip)).astype(np.int64)


def box(n=300, p=5, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 2))
    X = Z @ rng.normal(size=(2, p)) + 0.3 * rng.normal(size=(n, p))
    return np.clip(X, -3, 3)


def ball(est, X):
    """The training data on the unit-ball scale the certificate refers to."""
    lo, hi = est.bounds_
    U = (np.asarray(X, dtype=float) - lo) / (hi - lo)
    return U / np.sqrt(U.shape[1])


# ------------------------------------------------------- sizes, anonymity
@pytest.mark.parametrize("partition", ["spectral", "pinning"])
@pytest.mark.parametrize("division", ["bisection", "kdtree", "input_order"])
@pytest.mark.parametrize(
    "n, k",
    [(400, 1), (400, 7), (400, 40), (401, 40), (399, 133), (400, 399), (400, 400)],
)
def test_exactly_k_groups_of_floor_or_ceil_size(partition, division, n, k):
    X = boolean(n=n)
    est = Est(
        k=k, partition=partition, division=division, domain="boolean", random_state=0
    ).fit(X)
    b, r = divmod(n, k)
    sizes = est.group_sizes_
    assert sizes.shape == (k,) and sizes.sum() == n
    assert set(np.unique(sizes)) <= {b, b + 1}
    assert np.count_nonzero(sizes == b + 1) == r
    np.testing.assert_array_equal(np.bincount(est.labels_, minlength=k), sizes)
    assert est.anonymity_level_ == b == sizes.min()
    assert est.n_groups_ == k and est.centroids_.shape == (k, X.shape[1])
    assert est.privacy_summary_ == f"(n/k)={b}-anonymous"


@pytest.mark.parametrize("kind", ["boolean", "box"])
@pytest.mark.parametrize("k", [5, 37, 120])
def test_release_is_k_anonymous_by_pycanon(kind, k):
    X = boolean(n=360) if kind == "boolean" else box(n=360)
    est = Est(k=k, domain=kind, random_state=0).fit(X)
    release = pd.DataFrame(
        est.transform(X), columns=[f"c{j}" for j in range(X.shape[1])]
    )
    level = anonymity.k_anonymity(release, list(release.columns))
    assert level >= 360 // k
    assert level >= est.anonymity_level_


def test_default_k_gives_groups_of_about_ten():
    X = boolean(n=205)
    est = Est(domain="boolean").fit(X)
    assert est.n_groups_ == 20 and est.anonymity_level_ == 10


# ----------------------------------------------------- exact identities
@pytest.mark.parametrize(
    "kind, partition",
    [("boolean", "spectral"), ("boolean", "pinning"), ("box", "spectral")],
)
def test_weighted_mean_of_group_means_is_the_data_mean(kind, partition):
    X = boolean(n=1003) if kind == "boolean" else box(n=1003)
    est = Est(k=50, domain=kind, partition=partition, random_state=0).fit(X)
    np.testing.assert_allclose(est.weights_.sum(), 1.0, rtol=0, atol=1e-15)
    # law of total expectation (Boedihardjo2024 eq. (4.2)), to machine precision
    np.testing.assert_allclose(
        est.weights_ @ est.centroids_, X.mean(axis=0), rtol=1e-13, atol=1e-14
    )
    # each centroid is the exact mean of its group
    for j in (0, 17, 49):
        np.testing.assert_allclose(
            est.centroids_[j], X[est.labels_ == j].mean(axis=0), rtol=1e-13, atol=1e-14
        )


def test_transform_of_training_data_is_the_release():
    X = boolean(n=500)
    est = Est(k=50, domain="boolean").fit(X)
    T = est.transform(X)
    np.testing.assert_array_equal(T, est.centroids_[est.labels_])
    np.testing.assert_array_equal(Est(k=50, domain="boolean").fit_transform(X), T)


@pytest.mark.parametrize("domain", ["boolean", "box"])
def test_transform_shortcut_for_the_training_rows_equals_the_matching(domain):
    # transform() of the training rows in their order skips the matching and
    # returns labels_; the full matching must give exactly that (duplicated
    # rows included), and a permuted copy (no shortcut) the permuted release
    X = boolean(n=900, p=5) if domain == "boolean" else box(n=900, p=4)
    X = np.vstack([X, X[:300]])  # duplicated rows
    est = Est(k=90, domain=domain).fit(X)
    keys = part.row_keys(est._to_cube(X), domain == "boolean")
    np.testing.assert_array_equal(est._match_training_rows(keys), est.labels_)
    release = est.centroids_[est.labels_]
    np.testing.assert_array_equal(est.transform(X), release)
    perm = np.random.default_rng(3).permutation(X.shape[0])
    T = est.transform(X[perm])
    for j in range(3):  # the same rows get the same group means, up to duplicates
        np.testing.assert_array_equal(
            np.sort(T[X[perm][:, 0] == X[j, 0]], axis=0),
            np.sort(release[X[:, 0] == X[j, 0]], axis=0),
        )
    # a refit forgets the index of the previous fit
    est.fit(X[:600])
    assert est._train_index is None
    np.testing.assert_array_equal(est.transform(X[:600]), est.centroids_[est.labels_])


# ------------------------------------------------------------ certificate
CERTIFICATE_CASES = {
    "boolean-k40": (lambda: boolean(n=2000, p=10), dict(k=40, domain="boolean")),
    "boolean-k150-t1": (lambda: boolean(n=3000, p=12), dict(k=150, domain="boolean")),
    "hubs-k400": (lambda: hubs(n=4000), dict(k=400, domain="boolean")),
    "digits-k179": (load_binary_digits, dict(k=179, domain="boolean")),
    "box-k30": (lambda: box(n=900), dict(k=30, domain="box")),
    "box-t3-override": (
        lambda: box(n=900, p=6),
        dict(k=90, domain="box", n_components=3, alpha=0.6),
    ),
    "box-t1-alpha1": (lambda: box(n=500), dict(k=5, n_components=1)),
    "constant-columns": (
        lambda: np.hstack([boolean(n=600, p=4), np.ones((600, 2), int)]),
        dict(k=150, domain="boolean"),
    ),
    "duplicated-rows": (
        lambda: np.repeat(boolean(n=50, p=6), 12, axis=0),
        dict(k=120, domain="boolean"),
    ),
    "p1": (lambda: box(n=400, p=1), dict(k=100, domain="box")),
    "pinning-hubs": (
        lambda: hubs(n=4000),
        dict(k=400, domain="boolean", partition="pinning", random_state=3),
    ),
    "pinning-digits": (
        load_binary_digits,
        dict(k=179, domain="boolean", partition="pinning", random_state=0),
    ),
    "input-order": (
        lambda: boolean(n=2000, p=10),
        dict(k=150, domain="boolean", division="input_order"),
    ),
    "kdtree-digits": (
        load_binary_digits,
        dict(k=179, domain="boolean", division="kdtree"),
    ),
    "kdtree-box-remainder": (lambda: box(n=1003, p=6), dict(k=97, division="kdtree")),
    "kdtree-duplicated-rows": (
        lambda: np.repeat(boolean(n=50, p=6), 12, axis=0),
        dict(k=120, domain="boolean", division="kdtree"),
    ),
    "kdtree-pinning": (
        lambda: hubs(n=4000),
        dict(
            k=400,
            domain="boolean",
            partition="pinning",
            division="kdtree",
            random_state=3,
        ),
    ),
}


@pytest.mark.parametrize("case", list(CERTIFICATE_CASES))
def test_covariance_loss_is_below_its_certificate(case):
    make, params = CERTIFICATE_CASES[case]
    X = make()
    est = Est(**params).fit(X)
    V = ball(est, X)
    # the reported loss is the loss of the partition, computed independently
    assert est.covariance_loss_ == pytest.approx(
        covariance_loss(V, est.labels_), rel=1e-9, abs=1e-15
    )
    assert est.covariance_loss_ <= est.covariance_loss_bound_
    # the data-dependent chain of Lemmas 3.8 and 3.9 through the computed cells
    assert est.covariance_loss_ <= est.cell_loss_ + est.residual_mass_ + 1e-15
    # the certificate is assembled as in the module docstring
    if est.partition == "spectral":
        t = est.n_components_
        assert est.covering_term_ == (4 * est.alpha_**2 if t else 0.0)
        assert est.covariance_loss_bound_ == pytest.approx(
            est.covering_term_ + est.residual_norm_ + est.residual_mass_, rel=1e-15
        )
        # Boedihardjo2024 Lemmas 3.2 + 3.6: the cells alone are within 4 alpha^2 + tail
        assert est.cell_loss_ <= est.covering_term_ + est.residual_norm_
        if t:  # Boedihardjo2024 Lemma 3.3
            assert est.residual_norm_ <= 1 / math.sqrt(t)
        eig = np.sort(np.linalg.eigvalsh(V.T @ V / len(V)))[::-1]
        assert est.residual_norm_ == pytest.approx(
            math.sqrt(np.sum(eig[t:] ** 2)), rel=1e-9, abs=1e-15
        )
    else:
        assert est.covariance_loss_bound_ == pytest.approx(
            est.cell_loss_ + est.residual_mass_, rel=1e-15
        )
        assert math.isnan(est.residual_norm_) and math.isnan(est.covering_term_)
    assert 0 <= est.residual_mass_ <= 1


def test_merged_residual_is_small_when_k_divides_n():
    # Boedihardjo2024 §3.6: at most k' residuals of mass < 1/k each, so |G|/n < k'/k
    X = boolean(n=4000, p=10)
    est = Est(k=400, domain="boolean").fit(X)
    assert est.residual_mass_ < math.isqrt(400) / 400


@pytest.mark.parametrize(
    "k, k_prime, t", [(8, 2, 0), (9, 3, 0), (99, 9, 0), (100, 10, 1), (10_000, 100, 2)]
)
def test_paper_parameters(k, k_prime, t):
    # Boedihardjo2024 Algorithm 1 step 2: k' = floor(sqrt k), alpha = (loglog k'/log
    # k')^(1/4),
    # t = floor(log k' / log(7/alpha))
    kp, alpha, tt = part.paper_parameters(k)
    assert (kp, tt) == (k_prime, t)
    if kp >= 3:
        expected = (math.log(math.log(kp)) / math.log(kp)) ** 0.25
        assert alpha == pytest.approx(expected, rel=1e-15)
        assert tt == math.floor(math.log(kp) / math.log(7 / expected))
        # the covering has at most (7/alpha)^t <= k' points (Boedihardjo2024 Prop. 3.7)
        if tt:
            from skdp_synth.geometry import LatticeCovering

            assert LatticeCovering(tt, alpha).n_points <= (7 / alpha) ** tt <= kp
    else:
        assert alpha is None


@pytest.mark.slow
def test_estimator_uses_paper_parameters_for_large_k():
    X = boolean(n=20_000, p=6, seed=4)
    est = Est(k=10_000, domain="boolean").fit(X)
    kp, alpha, t = part.paper_parameters(10_000)
    assert (est.n_components_, est.alpha_) == (t, alpha) == (2, alpha)
    assert est.covariance_loss_ <= est.covariance_loss_bound_
    assert est.anonymity_level_ == 2


def test_small_k_uses_one_cell():
    X = boolean(n=400)
    est = Est(k=8, domain="boolean").fit(X)
    assert est.n_components_ == 0 and est.alpha_ is None and est.n_cells_ == 1
    assert est.covering_term_ == 0.0


# --------------------------------------------------- Lemmas 3.8 and 3.9
@st.composite
def data_and_partitions(draw):
    n = draw(st.integers(2, 40))
    p = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    if draw(st.booleans()):
        X = (X < 0.5).astype(float)
    X /= np.sqrt(p)
    coarse = rng.integers(0, draw(st.integers(1, n)), n)
    finer = coarse * n + rng.integers(0, draw(st.integers(1, n)), n)
    return X, coarse, finer


@settings(max_examples=200, deadline=None)
@given(data_and_partitions())
def test_refinement_never_increases_loss(case):
    # Boedihardjo2024 Lemma 3.8 (monotonicity)
    X, coarse, finer = case
    assert covariance_loss(X, finer) <= covariance_loss(X, coarse) + 1e-13


@settings(max_examples=150, deadline=None)
@given(
    data_and_partitions(),
    st.integers(1, 40),
    st.sampled_from(["input_order", "bisection", "kdtree"]),
)
def test_equipartition_follows_lemmas_3_8_and_3_9(case, k, division):
    X, cells, _ = case
    n = X.shape[0]
    k = min(k, n)
    _, cells = np.unique(cells, return_inverse=True)
    cells = cells.ravel()
    if division == "input_order":
        sketch = None
    else:
        quantised = division == "kdtree"
        S = X.T @ X / n
        sketch = part.principal_sketch(X, S, X.mean(axis=0), quantised=quantised)
    labels, pieces, mass = part.equipartition(cells, k, sketch, division=division)
    # exactly k groups of floor(n/k) or ceil(n/k) rows
    sizes = np.bincount(labels, minlength=k)
    assert labels.min() == 0 and labels.max() == k - 1
    assert set(np.unique(sizes)) <= {n // k, -(-n // k)}
    # pieces refine the cells (every piece inside one cell) ...
    for piece in np.unique(pieces):
        assert np.unique(cells[pieces == piece]).size == 1
    # ... and so lose no more (Lemma 3.8)
    assert covariance_loss(X, pieces) <= covariance_loss(X, cells) + 1e-13
    # merging the residual pieces costs at most their mass (Lemma 3.9), and the
    # final groups refine the merged partition (Lemma 3.8)
    residual = pieces >= k
    assert mass == pytest.approx(residual.mean(), abs=0)
    merged = np.where(residual, k, pieces)
    assert covariance_loss(X, merged) <= covariance_loss(X, pieces) + mass + 1e-13
    assert covariance_loss(X, labels) <= covariance_loss(X, merged) + 1e-13
    for group in range(k):  # every group lies in one piece or in the merged set
        assert np.unique(merged[labels == group]).size == 1


def test_plan_spreads_the_remainder_and_merges_little():
    small, large, residual, merged = part.plan_equipartition([2, 2, 2, 2, 2], 4)
    # n=10, k=4: two groups of 3 need rows of three cells; 6 rows are merged
    assert residual.sum() == 6 and merged == (0, 2)
    small, large, residual, merged = part.plan_equipartition([30, 30, 40], 10)
    assert residual.sum() == 0 and small.sum() == 10 and large.sum() == 0
    # the two leftovers of 5 rows are merged into one block
    small, large, residual, merged = part.plan_equipartition([35, 30, 35], 10)
    assert residual.tolist() == [5, 0, 5] and merged == (1, 0)
    # n = 103, k = 10: three groups of 11 absorb the cells' leftover rows
    small, large, residual, merged = part.plan_equipartition([53, 50], 10)
    assert large.tolist() == [3, 0] and residual.sum() == 0


def test_input_order_division_cuts_runs_in_input_order():
    X = boolean(n=120)
    est = Est(k=12, domain="boolean", division="input_order").fit(X)
    assert est.n_cells_ == 1
    np.testing.assert_array_equal(est.labels_, np.repeat(np.arange(12), 10))


def test_compact_division_beats_input_order_on_digits():
    # not a theorem, a regression guard: the benchmark shows the full picture
    X = load_binary_digits()
    compact = Est(k=179, domain="boolean").fit(X).covariance_loss_
    runs = Est(k=179, domain="boolean", division="input_order").fit(X).covariance_loss_
    assert compact < 0.5 * runs
    kd = Est(k=179, domain="boolean", division="kdtree").fit(X).covariance_loss_
    assert kd < 0.5 * runs


@pytest.mark.parametrize("k", [30, 179, 599])
def test_kdtree_is_not_worse_than_input_order(k):
    # a compact cut should never lose to runs in input order on real data
    X = load_binary_digits()
    for domain, data in (("boolean", X), ("box", box(n=1797, p=6))):
        kd = Est(k=k, domain=domain, division="kdtree").fit(data)
        runs = Est(k=k, domain=domain, division="input_order").fit(data)
        assert kd.covariance_loss_ < runs.covariance_loss_
        # the same cells and the same merged mass: only the cut differs
        assert kd.n_cells_ == runs.n_cells_ and kd.cell_loss_ == runs.cell_loss_
        assert kd.residual_mass_ == runs.residual_mass_
        assert kd.covariance_loss_bound_ == runs.covariance_loss_bound_


# ------------------------------------------------------------- optimality
@pytest.mark.parametrize("k", [8, 32])
@pytest.mark.parametrize("partition", ["spectral", "pinning"])
def test_nobody_beats_the_lower_bound_of_proposition_3_14(k, partition):
    # Boedihardjo2024 Prop. 3.14: 2k points of p^-1/2 {0,1}^p, pairwise distance > 1/2
    # (random points, p > 16 ln 2k); every partition into k sets loses
    # >= 1/(80 sqrt(ln 2k)); the proof shows >= 1/(16 sqrt p).
    p = math.ceil(16 * math.log(2 * k)) + 1
    rng = np.random.default_rng(k)
    X = (rng.random((2 * k, p)) < 0.5).astype(np.int64)
    V = X / math.sqrt(p)
    dist = np.sqrt(((V[:, None, :] - V[None, :, :]) ** 2).sum(-1))
    assert dist[~np.eye(2 * k, dtype=bool)].min() > 0.5  # Lemma 3.15's event
    est = Est(k=k, domain="boolean", partition=partition, random_state=0).fit(X)
    assert est.covariance_loss_ >= 1 / (16 * math.sqrt(p))
    assert est.covariance_loss_ >= 1 / (80 * math.sqrt(math.log(2 * k)))


# ---------------------------------------------------------------- pinning
def test_pinning_cells_agree_on_the_pinned_coordinates():
    X = hubs(n=2000, p=16)
    est = Est(k=256, partition="pinning", domain="boolean", random_state=2).fit(X)
    T = est.pinned_features_
    assert len(T) <= part.pinning_depth(256) == 8
    assert est.n_cells_ <= 2 ** len(T) <= 256
    # each group lies inside one cell unless it was cut from the merged residual
    codes = X[:, T] @ (2 ** np.arange(len(T))) if len(T) else np.zeros(len(X))
    mixed = sum(np.unique(codes[est.labels_ == j]).size > 1 for j in range(256))
    assert mixed <= est.residual_mass_ * len(X) / est.anonymity_level_


def test_pinning_is_reproducible_and_boolean_only():
    X = hubs(n=1000, p=16)
    a = Est(k=64, partition="pinning", domain="boolean", random_state=5).fit(X)
    b = Est(k=64, partition="pinning", domain="boolean", random_state=5).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    with pytest.raises(ValueError, match="pinning.*Boolean"):
        Est(k=64, partition="pinning").fit(box())


@pytest.mark.slow
def test_pinning_loss_decays_like_one_over_sqrt_log_k():
    # SahSawhney §2: E loss = O(1/sqrt(log k)). On data with planted structure we fit
    # log(loss) = a + slope * log(log k) over k = 16 .. 4096 and need the loss
    # to fall at least at that rate (slope <= -1/2). Measured (seed fixed):
    # slope of the final loss about -1.5, of the pinning cells' own loss
    # about -0.5 (see benchmarks/bench_microaggregation.py).
    X = hubs(n=1 << 14, p=40, n_hubs=10)
    ks = np.array([16, 64, 256, 1024, 4096])
    losses = [
        Est(k=int(k), partition="pinning", domain="boolean", random_state=0)
        .fit(X)
        .covariance_loss_
        for k in ks
    ]
    slope = np.polyfit(np.log(np.log(ks)), np.log(losses), 1)[0]
    assert slope <= -0.5
    assert np.all(np.diff(losses) < 0)


# ------------------------------------------------ bootstrap and rounding
def _exact_marginals(points, weights, d):
    """Marginals of the synthetic distribution after randomized rounding (Lemma 4.7)."""
    p = points.shape[1]
    return np.array(
        [
            weights @ points[:, list(S)].prod(axis=1)
            for S in itertools.combinations(range(p), d)
        ]
    )


@pytest.mark.parametrize("d", [1, 2, 3])
def test_sample_marginal_error_has_the_one_over_m_rate(d):
    # Each sampled row picks group j with probability w_j and rounds each
    # coordinate independently, so every d-marginal of a sample of m rows is a
    # mean of m i.i.d. Bernoulli(pi_S), pi_S the marginal of sum_j w_j y_j
    # (Boedihardjo2024 Lemma 4.7). Hence E[err^2] = mean_S pi_S (1 - pi_S) / m exactly
    # --
    # within the paper's bound 2 p^d / (m d! C(p, d)) (Lemma 4.3 + Thm 4.6).
    # 300 samples per m; the 6-standard-error band fails with probability
    # < 1e-8 under the normal approximation (per m and d).
    X = boolean(n=600, p=7, seed=3)
    est = Est(k=60, domain="boolean").fit(X)
    points, weights = est._synthetic_distribution()
    pi = _exact_marginals(points, weights, d)
    p = X.shape[1]
    for m in (50, 400):
        errors = np.array(
            [
                marginal_error(
                    points, est.sample(m, random_state=s), d, sample_weight=weights
                )
                ** 2
                for s in range(300)
            ]
        )
        expected = np.mean(pi * (1 - pi)) / m
        assert abs(errors.mean() - expected) <= 6 * errors.std(ddof=1) / math.sqrt(300)
        assert errors.mean() <= 2 * p**d / (m * math.factorial(d) * math.comb(p, d))


def test_sample_draws_groups_with_their_weights():
    X = boolean(n=103, p=5)
    est = Est(k=10, domain="box").fit(X)  # box: no rounding, rows are centroids
    Y = est.sample(20_000, random_state=0)
    rows = {tuple(c): j for j, c in enumerate(est.centroids_)}
    counts = np.bincount([rows[tuple(y)] for y in Y], minlength=10)
    # chi-square goodness of fit, 9 dof; 27.88 is its 0.999 quantile
    expected = 20_000 * est.weights_
    assert np.sum((counts - expected) ** 2 / expected) < 27.88


# ----------------------------------------------------- transform details
def test_duplicates_follow_the_occurrence_order():
    base = boolean(n=40, p=4, seed=7)
    X = np.vstack([base] * 5)  # many equal rows spread over several groups
    est = Est(k=20, domain="boolean").fit(X)
    np.testing.assert_array_equal(est.transform(X), est.centroids_[est.labels_])
    np.testing.assert_array_equal(
        Est(k=20, domain="boolean").fit_transform(X), est.transform(X)
    )
    # the j-th occurrence of a value gets the group of its j-th training copy
    first = np.flatnonzero((X == X[0]).all(axis=1))
    T = est.transform(X[first[::-1]])
    np.testing.assert_array_equal(T, est.centroids_[est.labels_[first]])
    # more copies than in training: the extra ones go to the nearest mean
    extra = est.transform(np.vstack([X[first], X[:1]]))
    d = ((est._centroids_cube - X[0]) ** 2).sum(axis=1)
    np.testing.assert_array_equal(extra[-1], est.centroids_[np.argmin(d)])


def test_new_rows_go_to_the_nearest_group_mean():
    X = box(n=300)
    est = Est(k=30).fit(X)
    new = box(n=50, seed=9)
    T = est.transform(new)
    lo, hi = est.bounds_
    U = (new - lo) / (hi - lo)
    d = ((U[:, None, :] - est._centroids_cube[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(T, est.centroids_[np.argmin(d, axis=1)])
    # subsets and permutations of the training rows keep their groups
    idx = np.random.default_rng(0).permutation(300)[:77]
    np.testing.assert_array_equal(
        est.transform(X[idx]), est.centroids_[est.labels_[idx]]
    )


def test_row_keys_are_exact_for_boolean_rows():
    X = boolean(n=300, p=12).astype(float)
    keys = part.row_keys(X, boolean=True)
    _, inverse = np.unique(X, axis=0, return_inverse=True)
    _, key_inverse = np.unique(keys, return_inverse=True)
    # same equivalence classes: equal rows <=> equal keys
    assert len(set(zip(inverse.ravel(), key_inverse.ravel()))) == len(
        np.unique(inverse)
    )
    wide = np.hstack([X] * 7)  # p = 84 > 64: hashed
    assert np.unique(part.row_keys(wide, boolean=True)).size == np.unique(inverse).size
    signed = np.array([[0.0, 1.5], [-0.0, 1.5]])
    assert (
        part.row_keys(signed, boolean=False)[0]
        == part.row_keys(signed, boolean=False)[1]
    )


# -------------------------------------------- speed-up keeps the partition
REFERENCE_CASES = {
    "digits-boolean": (lambda: load_binary_digits(), dict(k=179, domain="boolean")),
    "box-remainder": (lambda: box(n=1003, p=6), dict(k=97)),
    "duplicates": (lambda: boolean(n=900, p=5), dict(k=90, domain="boolean")),
    "pinning": (
        lambda: hubs(n=2000, p=16),
        dict(k=150, partition="pinning", domain="boolean", random_state=4),
    ),
    "input-order": (lambda: boolean(n=500), dict(k=45, division="input_order")),
}


@pytest.mark.parametrize("batch_rows", [1 << 15, 128])
@pytest.mark.parametrize("case", sorted(REFERENCE_CASES))
def test_partition_is_bit_identical_to_the_reference(case, batch_rows, monkeypatch):
    # The faster bisection, group sums and training-row index must give the
    # same partition and the same floating-point values as the code they
    # replaced (tests/_microagg_reference.py, copied from main before the speed-up).
    # batch_rows=128 sends these small inputs through the batched levels.
    make, params = REFERENCE_CASES[case]
    X = make()
    monkeypatch.setattr(part, "BATCH_ROWS", batch_rows)
    monkeypatch.setattr(ref, "BATCH_ROWS", batch_rows)
    fast = Est(**params).fit(X)
    with monkeypatch.context() as patch:
        patch.setattr(part, "_bisect", ref._bisect)
        patch.setattr(part, "group_sums", ref.group_sums)
        slow = Est(**params).fit(X)
    np.testing.assert_array_equal(fast.labels_, slow.labels_)
    np.testing.assert_array_equal(fast.centroids_, slow.centroids_)
    for name in ("covariance_loss_", "cell_loss_", "residual_mass_"):
        assert getattr(fast, name) == getattr(slow, name), name
    keys = part.row_keys(fast._to_cube(X), fast.domain == "boolean")
    expected = ref.index_training_rows(keys, fast.labels_)
    got = fast._training_index()  # built lazily, on first use
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(fast.transform(X), slow.centroids_[slow.labels_])


@pytest.mark.parametrize("compiled", [True, False])
def test_group_sums_are_bit_identical_to_the_reference(compiled, monkeypatch):
    # the compiled loop (numba) and the sparse product add the same rows in
    # the same (ascending) order
    if compiled:
        pytest.importorskip("numba")
    from skdp_synth.microaggregation import _kdtree as _kdtree

    monkeypatch.setattr(_kdtree, "HAVE_NUMBA", compiled)
    rng = np.random.default_rng(7)
    U = rng.random((5000, 7))
    labels = rng.integers(0, 300, 5000)
    sums, sizes = part.group_sums(U, labels, 310)  # includes empty groups
    ref_sums, ref_sizes = ref.group_sums(U, labels, 310)
    np.testing.assert_array_equal(sums, ref_sums)
    np.testing.assert_array_equal(sizes, ref_sizes)


@pytest.mark.parametrize("seed", range(6))
def test_stable_argsort_is_numpys_stable_argsort(seed):
    # the fast path of the training-row index and of transform's matching:
    # unstable SIMD sort, then runs of equal keys put back in index order
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 2000))
    for high in (2, 50, n + 1, 2**63):
        keys = rng.integers(0, high, n, dtype=np.uint64)
        np.testing.assert_array_equal(
            part.stable_argsort(keys), np.argsort(keys, kind="stable")
        )
    assert part.stable_argsort(np.zeros(0, dtype=np.uint64)).size == 0


def test_random_rounding_in_transform():
    X = boolean(n=500)
    est = Est(k=50, domain="boolean", rounding="random", random_state=0).fit(X)
    T = est.transform(X)
    assert set(np.unique(T)) <= {0, 1}
    np.testing.assert_array_equal(T, est.transform(X))
    # unbiased: the mean of many rounded releases approaches the group means
    # (500 x 8 Bernoulli; |error| > 0.1 has probability < 1e-6 per coordinate)
    assert np.abs(T.mean(axis=0) - est.centroids_[est.labels_].mean(axis=0)).max() < 0.1
    with pytest.raises(ValueError, match="rounding='random'.*boolean"):
        Est(k=5, rounding="random", domain="box").fit(box())


def test_box_output_respects_the_box():
    # Boedihardjo2024 Remark 4.5: means of points of a convex set stay in it
    X = box(n=400)
    est = Est(k=40, domain="box", bounds=(-3, 3)).fit(X)
    for Y in (
        est.centroids_,
        est.sample(300, random_state=0),
        est.transform(box(seed=4)),
    ):
        assert Y.min() >= -3 and Y.max() <= 3


def test_spectral_partition_does_not_depend_on_random_state():
    X = boolean(n=500)
    a = Est(k=120, domain="boolean", random_state=0).fit(X)
    b = Est(k=120, domain="boolean", random_state=99).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)


# -------------------------------------------------------- special inputs
def test_k_equal_n_and_k_one():
    X = boolean(n=60)
    full = Est(k=60, domain="boolean").fit(X)
    assert full.covariance_loss_ == 0.0 and full.anonymity_level_ == 1
    np.testing.assert_array_equal(full.transform(X), X)
    one = Est(k=1, domain="boolean").fit(X)
    np.testing.assert_allclose(one.centroids_[0], X.mean(axis=0), rtol=1e-15)
    V = X / np.sqrt(X.shape[1])
    m = V.mean(axis=0)
    expected = np.linalg.norm(V.T @ V / 60 - np.outer(m, m))
    assert one.covariance_loss_ == pytest.approx(expected, rel=1e-12)


def test_constant_and_identical_rows():
    X = np.ones((50, 3))
    est = Est(k=5).fit(X)  # box bounds inferred: width 1 for constant columns
    np.testing.assert_array_equal(est.centroids_, np.ones((5, 3)))
    assert est.covariance_loss_ == 0.0
    np.testing.assert_array_equal(est.transform(X), X)


def test_one_feature():
    X = box(n=200, p=1)
    est = Est(k=20).fit(X)
    assert est.centroids_.shape == (20, 1)
    assert est.covariance_loss_ <= est.covariance_loss_bound_
    # one dimension: compact groups are runs of the sorted values
    order = np.argsort(X[:, 0], kind="stable")
    runs = np.split(est.labels_[order], 20)
    assert sum(np.unique(r).size for r in runs) == 20


@pytest.mark.parametrize("k", [0, -3, 401, True])
def test_k_out_of_range_explains_what_k_means(k):
    """... without the number of rows (it said "n_samples = 400" and a k
    computed from it: no refusal carries a count of the data)."""
    with pytest.raises(
        ValueError, match="NUMBER OF GROUPS.*not the minimum group size"
    ) as refused:
        Est(k=k, domain="boolean").fit(boolean(n=400))
    assert "400" not in str(refused.value) and "= 4" not in str(refused.value)


@pytest.mark.parametrize(
    "params",
    [
        dict(k=2.5),
        dict(alpha=0.0),
        dict(alpha=1.5),
        dict(partition="kmeans"),
        dict(n_draws=0),
        dict(division="random"),
        dict(rounding="floor"),
        dict(n_components=-1),
        dict(m=0),
    ],
)
def test_invalid_parameters(params):
    with pytest.raises(InvalidParameterError):
        Est(**params).fit(box())


def test_too_many_components():
    with pytest.raises(ValueError, match="n_components=6 exceeds"):
        Est(k=10, n_components=6).fit(box(p=5))


def test_failed_fit_keeps_the_fitted_state():
    X = boolean(n=100)
    est = Est(k=10, domain="boolean").fit(X)
    labels = est.labels_.copy()
    with pytest.raises(ValueError, match="NUMBER OF GROUPS"):
        est.set_params(k=101).fit(X)
    np.testing.assert_array_equal(est.labels_, labels)


def test_score_and_synthetic_distribution():
    X = boolean(n=300)
    est = Est(k=30, domain="boolean").fit(X)
    points, weights = est._synthetic_distribution()
    assert points.shape == (30, X.shape[1]) and weights.sum() == pytest.approx(1)
    assert est.score(X) == pytest.approx(
        -marginal_error(X, points, 2, synthetic_weight=weights)
    )
    assert est.score(X) <= 0


def test_registered_for_the_cli_demo():
    method = get_method("microaggregation")
    assert method.guarantee == "anonymity" and not method.private
    X = load_binary_digits()
    est = method.build(random_state=0, **method.demo_params).fit(X)
    assert est.anonymity_level_ == 10
    assert est.privacy_summary_ == "(n/k)=10-anonymous"
    assert clone(est).get_params()["k"] == 179


# -------------------------------------------------------- division="kdtree"
def _kdtree_case(seed):
    """Random cells, sketch and sizes, with ties (duplicated rows, constants)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 1500))
    p = int(rng.integers(1, 20))
    X = rng.random((n, p))
    if seed % 3 == 0:
        X = (X < 0.3).astype(float)
    if seed % 4 == 0:
        X[:, 0] = 0.5
    if seed % 5 == 0:
        X = X[rng.integers(0, max(1, n // 7), n)]  # many duplicated rows
    S = X.T @ X / n
    Q = part.principal_sketch(X, S, X.mean(axis=0), quantised=True)
    cells = rng.integers(0, int(rng.integers(1, 12)), n)
    _, cells = np.unique(cells, return_inverse=True)
    k = int(rng.integers(1, n + 1))
    return cells.ravel(), k, Q


@pytest.mark.parametrize("seed", range(40))
def test_kdtree_numpy_path_gives_the_compiled_partition(seed, monkeypatch):
    # exact integer sums and keys with the row index: both paths cut every
    # node into the same sets of rows (skdp_synth/_kdtree.py, "Exactness")
    pytest.importorskip("numba")
    from skdp_synth.microaggregation import _kdtree as _kdtree

    cells, k, Q = _kdtree_case(seed)
    monkeypatch.setattr(_kdtree, "HAVE_NUMBA", True)
    compiled = part.equipartition(cells, k, Q, division="kdtree")
    monkeypatch.setattr(_kdtree, "HAVE_NUMBA", False)
    numpy_path = part.equipartition(cells, k, Q, division="kdtree")
    for a, b in zip(compiled, numpy_path):
        np.testing.assert_array_equal(a, b)
    n = cells.size
    sizes = np.bincount(compiled[0], minlength=k)
    assert sizes.sum() == n and set(np.unique(sizes)) <= {n // k, -(-n // k)}


@pytest.mark.parametrize("seed", range(20))
def test_quantised_sketch_is_the_same_on_both_paths(seed):
    pytest.importorskip("numba")
    from skdp_synth.microaggregation import _kdtree as _kdtree

    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(int(rng.integers(1, 400)), int(rng.integers(1, 17))))
    Z *= rng.choice([1e-9, 1.0, 1e9])
    if seed % 3 == 0:
        Z[:, 0] = 2.5
    if seed % 7 == 0:
        Z[:] = -1.0  # constant: all zeros
    compiled = _kdtree.quantise(Z, use_numba=True)
    numpy_path = _kdtree.quantise(Z, use_numba=False)
    np.testing.assert_array_equal(compiled, numpy_path)
    assert compiled.dtype == np.uint16
    # one common scale: the widest column spans 0..65535, the shift is per column
    width = Z.max(axis=0) - Z.min(axis=0)
    if width.max() > 0:
        widest = int(np.argmax(width))
        assert compiled[:, widest].min() == 0 and compiled[:, widest].max() == 65535
        assert (compiled.min(axis=0) == 0).all()
    else:
        assert not compiled.any()


@pytest.mark.parametrize("domain", ["boolean", "box"])
def test_float32_kdtree_sketch_is_within_one_level_of_the_float64_one(domain):
    # division="kdtree" projects on W in float32 (skdp_synth/_partition.py,
    # _quantised_sketch_rows): the error of a coordinate, about p 2^-24 of its
    # range, is below the quantisation step 2^-16, so every entry is within
    # one level of quantise(U @ W) in float64; the covering projection is the
    # float64 product itself
    from skdp_synth.geometry import second_moment
    from skdp_synth.microaggregation import _kdtree as _kdtree

    rng = np.random.default_rng(21)
    n, p = 7000, 50
    if domain == "boolean":
        U = (rng.random((n, p)) < rng.random(p)).astype(np.float64)
    else:
        U = rng.random((n, p)) ** 3
    S_cube, mean = second_moment(U), U.mean(axis=0)
    W = part.sketch_basis(S_cube, mean, part.KDTREE_SKETCH_DIM)
    V = part.sketch_basis(S_cube, mean, 2)
    Q, projection = part.sketch_rows(U, W, None, quantised=True, covering_basis=V)
    lo, scale = _kdtree.projection_scale(W)
    exact = _kdtree.quantise(U @ W, None, lo, scale).astype(np.int64)
    assert np.abs(Q.astype(np.int64) - exact).max() <= 1
    assert (Q.astype(np.int64) != exact).mean() < 0.01
    np.testing.assert_allclose(projection, U @ V / np.sqrt(p), rtol=0, atol=1e-12)


def test_kdtree_without_numba_is_the_same_estimator(monkeypatch):
    # the pure-NumPy path (no optional extra) fits the same groups
    from skdp_synth.microaggregation import _kdtree as _kdtree

    X = load_binary_digits()
    fast = Est(k=179, domain="boolean", division="kdtree").fit(X)
    monkeypatch.setattr(_kdtree, "HAVE_NUMBA", False)
    slow = Est(k=179, domain="boolean", division="kdtree").fit(X)
    np.testing.assert_array_equal(fast.labels_, slow.labels_)
    np.testing.assert_array_equal(fast.centroids_, slow.centroids_)
    assert fast.covariance_loss_ == slow.covariance_loss_


def test_kdtree_is_deterministic_and_ignores_random_state():
    X = box(n=2000, p=7)
    a = Est(k=150, division="kdtree", random_state=0).fit(X)
    b = Est(k=150, division="kdtree", random_state=123).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.transform(X), a.centroids_[a.labels_])


def test_kdtree_cuts_every_node_at_its_principal_median():
    # two well separated clusters in one cell, k=2: the k-d tree's first cut
    # separates them (the direction of largest variance is across the gap)
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.1, (50, 3)), rng.normal(5, 0.1, (50, 3))])
    order = rng.permutation(100)
    est = Est(k=2, division="kdtree", n_components=0).fit(X[order])
    truth = (order >= 50).astype(int)
    agree = np.mean(est.labels_ == truth)
    assert agree in (0.0, 1.0)


@pytest.mark.parametrize("division", ["bisection", "kdtree", "input_order"])
@pytest.mark.parametrize("rounding", ["none", "random"])
def test_fit_transform_is_fit_then_transform(division, rounding):
    # fit_transform gathers centroids_[labels_] instead of matching rows again
    X = np.repeat(boolean(n=300, p=6), 2, axis=0)  # duplicated rows too
    params = dict(k=60, domain="boolean", division=division, rounding=rounding)
    est = Est(random_state=3, **params)
    once = est.fit_transform(X)
    twice = Est(random_state=3, **params).fit(X).transform(X)
    np.testing.assert_array_equal(once, twice)
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(6)])
    out = Est(random_state=3, **params).fit_transform(frame)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(frame.columns)
    np.testing.assert_array_equal(out.to_numpy(), twice)


@pytest.mark.parametrize("division", ["bisection", "kdtree", "input_order"])
@pytest.mark.parametrize("k", [7, 60, 150])
def test_cell_sums_from_the_group_sums_are_exact_for_boolean_data(division, k):
    # 0/1 data: the cell sums assembled from the group sums (plus the merged
    # residual's rows) are the direct sums bit for bit, so cell_loss_ is too
    X = boolean(n=1503, p=9).astype(float)
    n = X.shape[0]
    est = Est(k=k, domain="boolean", division=division).fit(X)
    S = X.T @ X / n
    cells, _, _ = part.spectral_cells(X, S, est.n_components_, est.alpha_)
    cells = np.unique(cells, return_inverse=True)[1].ravel()
    direct, sizes = part.group_sums(X, cells, cells.max() + 1)
    assert est.cell_loss_ == part.cell_loss(S, direct, sizes, n)
    sketch = None
    if division == "bisection":
        sketch = part.principal_sketch(X, S, X.mean(axis=0))
    elif division == "kdtree":
        q = part.KDTREE_SKETCH_DIM
        sketch = part.principal_sketch(X, S, X.mean(axis=0), q, quantised=True)
    labels, pieces, _ = part.equipartition(cells, k, sketch, division=division)
    np.testing.assert_array_equal(labels, est.labels_)
    sums, _ = part.group_sums(X, labels, k)
    assembled, assembled_sizes = part.cell_sums_from_groups(X, cells, pieces, sums)
    np.testing.assert_array_equal(assembled, direct)
    np.testing.assert_array_equal(assembled_sizes, sizes)


def test_kdtree_refuses_more_rows_than_its_exact_sums_allow(monkeypatch):
    # int64 sums of products below 2^32 are exact for fewer than 2^31 rows
    from skdp_synth.microaggregation import _kdtree as _kdtree

    assert _kdtree.MAX_ROWS == 2**31
    monkeypatch.setattr(_kdtree, "MAX_ROWS", 100)
    with pytest.raises(ValueError, match="fewer than 2\\^31 rows"):
        Est(k=10, division="kdtree").fit(box(n=100, p=3))
    assert Est(k=10, division="kdtree").fit(box(n=99, p=3)).n_groups_ == 10


@pytest.mark.parametrize("seed", range(5))
def test_dense_cells_is_numpys_unique_inverse(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    for high in (1, 5, n, 10 * n, 2**40):  # the last two: through np.unique
        cells = rng.integers(0, high, n)
        expected = np.unique(cells, return_inverse=True)[1].ravel()
        np.testing.assert_array_equal(part.dense_cells(cells), expected)


@pytest.mark.parametrize("k", [3, 1000, 9999])
def test_kdtree_paths_agree_on_large_nodes(k, monkeypatch):
    # nodes of thousands of rows: several rounds of the compiled radix selection
    pytest.importorskip("numba")
    from skdp_synth.microaggregation import _kdtree as _kdtree

    rng = np.random.default_rng(k)
    X = (rng.random((30000, 12)) < 0.4).astype(float)
    X[: 30000 // 3] = X[0]  # a third of the rows equal: ties in every key value
    S = X.T @ X / X.shape[0]
    Q = part.principal_sketch(X, S, X.mean(axis=0), 32, quantised=True)
    cells = np.zeros(X.shape[0], dtype=np.intp)
    compiled = part.equipartition(cells, k, Q, division="kdtree")[0]
    monkeypatch.setattr(_kdtree, "HAVE_NUMBA", False)
    numpy_path = part.equipartition(cells, k, Q, division="kdtree")[0]
    np.testing.assert_array_equal(compiled, numpy_path)


def test_kdtree_top_axes_is_the_stable_order_of_decreasing_variance():
    # the compiled one-pass selection picks the axes of the NumPy path
    # (np.argsort(-var, kind="stable")[:r]): ties to the lower index
    pytest.importorskip("numba")
    from skdp_synth.microaggregation import _kdtree as _kdtree

    rng = np.random.default_rng(11)
    for q, r in [(32, 8), (8, 8), (5, 3), (1, 1)]:
        for _ in range(200):
            var = rng.integers(0, 4, q).astype(float)  # many ties
            top = np.empty(r, dtype=np.int64)
            _kdtree._top_axes(var, r, top, np.empty(q, dtype=np.bool_))
            expected = np.argsort(-var, kind="stable")[:r]
            np.testing.assert_array_equal(top, expected)


@pytest.mark.parametrize("p", [1, 7, 8, 9, 50, 64, 65])
def test_compiled_boolean_row_keys_are_the_packed_bits(p, monkeypatch):
    # the compiled pass (numba) gives the packbits keys exactly (p <= 64;
    # longer rows are hashed by the NumPy code on both paths)
    pytest.importorskip("numba")
    from skdp_synth.microaggregation import _kdtree as _kdtree

    rng = np.random.default_rng(p)
    U = (rng.random((3000, p)) < 0.4).astype(np.float64)
    U[:5] = 0.0
    U[5:10] = 1.0
    for V in (U, np.asfortranarray(U), U[::3]):
        monkeypatch.setattr(_kdtree, "HAVE_NUMBA", True)
        fast = part.row_keys(V, True)
        monkeypatch.setattr(_kdtree, "HAVE_NUMBA", False)
        slow = part.row_keys(V, True)
        assert fast.dtype == slow.dtype == np.uint64
        np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("p", [1, 9, 50, 64])
def test_group_sums_from_the_keys_of_boolean_rows(p):
    # 0/1 rows: the sums counted from the row keys' bits equal the float sums
    # of the rows bit for bit (integers), empty groups included
    pytest.importorskip("numba")
    rng = np.random.default_rng(p)
    U = (rng.random((4000, p)) < 0.3).astype(np.float64)
    labels = rng.integers(0, 450, 4000)
    keys = part.row_keys(U, True)
    sums, sizes = part.group_sums(U, labels, 460, keys)
    ref_sums, ref_sizes = ref.group_sums(U, labels, 460)
    assert sums.dtype == np.float64
    np.testing.assert_array_equal(sums, ref_sums)
    np.testing.assert_array_equal(sizes, ref_sizes)
