"""Marginal errors, moment errors, covariance loss: against brute force."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from skdp_synth.metrics import (
    covariance_loss,
    marginal_error,
    marginal_tv,
    moment_error,
)


def brute_marginal_error(X, Y, d, w=None, v=None):
    """:cite:`Boedihardjo2024` eq. (1.2) by enumerating every set of d distinct
    columns."""
    n, m = len(X), len(Y)
    w = np.full(n, 1 / n) if w is None else w / w.sum()
    v = np.full(m, 1 / m) if v is None else v / v.sum()
    errs = [
        (w @ X[:, list(S)].prod(axis=1) - v @ Y[:, list(S)].prod(axis=1)) ** 2
        for S in itertools.combinations(range(X.shape[1]), d)
    ]
    return math.sqrt(np.mean(errs))


def brute_tv(X, Y, d):
    X, Y = pd.DataFrame(X), pd.DataFrame(Y)
    total = []
    for cols in itertools.combinations(range(X.shape[1]), d):
        cols = list(cols)
        px = X.iloc[:, cols].astype(object).map(repr).agg("|".join, axis=1)
        py = Y.iloc[:, cols].astype(object).map(repr).agg("|".join, axis=1)
        px, py = px.value_counts(normalize=True), py.value_counts(normalize=True)
        keys = set(px.index) | set(py.index)
        total.append(0.5 * sum(abs(px.get(k, 0) - py.get(k, 0)) for k in keys))
    return float(np.mean(total))


@pytest.mark.parametrize("d", [1, 2, 3, 4])
@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("method", ["gram", "enumerate", "auto"])
def test_marginal_error_matches_brute_force(d, binary, method):
    rng = np.random.default_rng(d + 10 * binary)
    if binary:
        X = (rng.random((40, 7)) < 0.4).astype(float)
        Y = (rng.random((25, 7)) < 0.5).astype(float)
    else:
        X, Y = rng.random((40, 7)), rng.random((25, 7))
    expected = brute_marginal_error(X, Y, d)
    got = marginal_error(X, Y, d, method=method)
    assert got == pytest.approx(expected, rel=1e-10, abs=1e-13)


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_marginal_error_weighted_matches_brute_force(d):
    rng = np.random.default_rng(7)
    X = (rng.random((30, 6)) < 0.5).astype(float)
    Y = rng.random((12, 6))
    w, v = rng.random(30), rng.random(12)
    expected = brute_marginal_error(X, Y, d, w, v)
    for method in ("gram", "enumerate"):
        got = marginal_error(
            X, Y, d, sample_weight=w, synthetic_weight=v, method=method
        )
        assert got == pytest.approx(expected, rel=1e-10, abs=1e-13)


def test_marginal_error_duplicates_merged_exactly():
    # the gram route merges repeated 0/1 rows; weights must add up exactly
    X = np.array([[1, 0, 1]] * 5 + [[0, 1, 1]] * 3, dtype=float)
    Y = np.array([[1, 1, 1], [0, 0, 1]], dtype=float)
    for d in (1, 2, 3):
        assert marginal_error(X, Y, d, method="gram") == pytest.approx(
            brute_marginal_error(X, Y, d), abs=1e-14
        )


def test_marginal_error_identities():
    X = (np.random.default_rng(0).random((50, 5)) < 0.5).astype(float)
    for d in (1, 2, 3):
        assert marginal_error(X, X, d) == 0.0
        # a permutation of the rows has the same marginals
        assert marginal_error(X, X[::-1], d, method="enumerate") == pytest.approx(
            0.0, abs=1e-15
        )
    # d = p: a single marginal, the fraction of all-ones rows
    Y = np.ones((1, 5))
    expected = abs(np.mean(X.all(axis=1)) - 1.0)
    assert marginal_error(X, Y, 5) == pytest.approx(expected)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"d": 0}, "positive integer"),
        ({"d": 9}, "exceeds"),
        ({"d": 2, "method": "magic"}, "method"),
        ({"d": 2, "kind": "nope"}, "kind"),
        ({"d": 2, "sample_weight": [1.0]}, "entries"),
        ({"d": 2, "synthetic_weight": -np.ones(3)}, "non-negative"),
    ],
)
def test_marginal_error_rejects_bad_arguments(kwargs, match):
    X, Y = np.zeros((4, 3)), np.ones((3, 3))
    with pytest.raises(ValueError, match=match):
        marginal_error(X, Y, **kwargs)


def test_marginal_error_shape_mismatch_and_nan():
    with pytest.raises(ValueError, match="same number of columns"):
        marginal_error(np.zeros((3, 3)), np.zeros((3, 4)))
    with pytest.raises(ValueError, match="NaN"):
        marginal_error(np.full((3, 3), np.nan), np.zeros((3, 3)))


@pytest.mark.parametrize("d", [1, 2, 3])
def test_tv_matches_brute_force(d):
    rng = np.random.default_rng(d)
    X = pd.DataFrame(
        {
            "a": rng.choice(["x", "y", "z"], 60),
            "b": rng.choice([1, 2], 60),
            "c": rng.choice(["u", None], 60),
            "e": rng.choice(list("pqrs"), 60),
        }
    )
    Y = pd.DataFrame(
        {
            "a": rng.choice(["x", "y", "w"], 35),
            "b": rng.choice([1, 2, 3], 35),
            "c": rng.choice(["u", "v"], 35),
            "e": rng.choice(list("pq"), 35),
        }
    )
    assert marginal_error(X, Y, d, kind="tv") == pytest.approx(brute_tv(X, Y, d))
    assert marginal_error(X, X, d, kind="tv") == 0.0


def test_tv_sparse_tables_path():
    # many categories: the occupied-cells route must give the same answer
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.integers(0, 200, size=(30, 3)))
    Y = pd.DataFrame(rng.integers(0, 200, size=(20, 3)))
    assert marginal_error(X, Y, 3, kind="tv") == pytest.approx(brute_tv(X, Y, 3))


@pytest.mark.parametrize("d", [1, 2, 3])
def test_marginal_tv_per_table_matches_brute_force_and_averages_exactly(d):
    rng = np.random.default_rng(7 + d)
    X = pd.DataFrame(
        {
            "a": rng.choice(["x", "y"], 50),
            "b": rng.choice([1, 2, 3], 50),
            "c": rng.choice(["u", None], 50),
            "e": rng.choice(list("pqr"), 50),
        }
    )
    Y = X.sample(30, replace=True, random_state=1).reset_index(drop=True)
    Y.loc[:9, "a"] = "z"
    per = marginal_tv(X, Y, d)
    assert list(per.index) == list(itertools.combinations("abce", d))
    for cols, tv in per.items():
        assert tv == pytest.approx(brute_tv(X[list(cols)], Y[list(cols)], d))
    # same routine, same summation order: bit-for-bit equal to the average
    assert sum(per.tolist()) / len(per) == marginal_error(X, Y, d, kind="tv")


def test_tv_requires_same_columns():
    X = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(ValueError, match="same columns"):
        marginal_error(X, pd.DataFrame({"b": [1, 2]}), 1, kind="tv")


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_moment_error_matches_explicit_tensors(d):
    rng = np.random.default_rng(d)
    X, Y = rng.normal(size=(9, 3)), rng.normal(size=(6, 3))
    w, v = rng.random(9), rng.random(6)

    def tensor(Z, weights):
        weights = weights / weights.sum()
        T = 0
        for z, a in zip(Z, weights):
            t = z
            for _ in range(d - 1):
                t = np.multiply.outer(t, z)
            T = T + a * t
        return T

    expected = np.linalg.norm((tensor(X, w) - tensor(Y, v)).ravel())
    got = moment_error(X, Y, d, sample_weight=w, synthetic_weight=v)
    assert got == pytest.approx(expected, rel=1e-9)


def test_covariance_loss_from_labels_equals_from_group_means():
    rng = np.random.default_rng(0)
    X = rng.random((40, 4))
    labels = rng.integers(0, 5, size=40)
    means = np.array([X[labels == g].mean(axis=0) for g in range(5)])
    row_aligned = means[labels]
    a = covariance_loss(X, labels)
    assert a == pytest.approx(covariance_loss(X, row_aligned), rel=1e-12)
    sizes = np.bincount(labels, minlength=5)
    assert a == pytest.approx(covariance_loss(X, means, weights=sizes), rel=1e-12)
    # law of total covariance (Boedihardjo2024 Lemma 3.1): E XX^T - E YY^T = E
    # (X-Y)(X-Y)^T
    diff = X - row_aligned
    assert a == pytest.approx(np.linalg.norm(diff.T @ diff / 40), rel=1e-10)


def test_covariance_loss_monotone_under_refinement():
    # Boedihardjo2024 Lemma 3.8: conditioning on a finer partition never increases the
    # loss
    rng = np.random.default_rng(3)
    X = rng.random((60, 5))
    coarse = rng.integers(0, 3, size=60)
    fine = coarse * 4 + rng.integers(0, 4, size=60)
    assert covariance_loss(X, fine) <= covariance_loss(X, coarse) + 1e-15
    assert covariance_loss(X, np.arange(60)) == pytest.approx(0.0, abs=1e-15)


def test_covariance_loss_errors():
    with pytest.raises(ValueError, match="labels"):
        covariance_loss(np.zeros((3, 2)), [0, 1])
    with pytest.raises(ValueError, match="weights"):
        covariance_loss(np.zeros((3, 2)), [0, 1, 1], weights=[1, 1, 1])


def test_tv_scorer_bins_numeric_columns_as_the_report_does():
    """``kind="tv"`` coded every distinct float as its own level, so any
    table with a numeric column scored TV ~ 1 (-0.71 where the report said
    0.086; GridSearchCV then chose on noise). It now agrees exactly with
    the fidelity report's average TV on the same rows."""
    import pandas as pd

    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.metrics import make_marginal_scorer
    from skdp_synth.preprocessing import BooleanEncoder
    from skdp_synth.report import fidelity_report

    rng = np.random.default_rng(0)
    n = 4000
    x = rng.normal(size=n)
    df = pd.DataFrame(
        {"x": x, "y": x + rng.normal(scale=0.5, size=n), "g": rng.choice(["a", "b"], n)}
    )
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"g": ["a", "b"]}, random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    ).fit(df[:3000])
    held = df[3000:]
    score = make_marginal_scorer(d=2, kind="tv", random_state=0)(pipe, held)
    rows = pipe.sample(len(held), random_state=0)
    report = fidelity_report(held, rows)
    assert score == pytest.approx(-report.average_tv(2), rel=1e-12)
    assert -0.2 < score < 0  # not the ~-1 of one level per float


def test_tv_of_a_float_column_compared_value_by_value_warns():
    """marginal_tv on a float column scored every table near 1 without a
    word (each value a cell of its own); the scorer and the report bin it."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=200), "code": rng.integers(0, 50, 200)})
    Y = pd.DataFrame({"x": rng.normal(size=100), "code": rng.integers(0, 50, 100)})
    with pytest.warns(UserWarning, match=r"columns \['x'\] hold floats"):
        tv = marginal_tv(X, Y, d=1)
    assert tv[("x",)] == 1.0
    with pytest.warns(UserWarning, match="make_marginal_scorer"):
        marginal_error(X, Y, 1, kind="tv")
    # integer codes with many levels are categories: no warning
    marginal_tv(X[["code"]], Y[["code"]], d=1)
    # nor a float column of few values (flags stored as 0.0 / 1.0)
    flags = pd.DataFrame({"f": rng.integers(0, 2, 200).astype(float)})
    marginal_tv(flags, flags.iloc[:50], d=1)
