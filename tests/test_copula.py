"""The Gaussian copula that places decoded numeric values inside their bins
jointly (``BooleanEncoder(within_bins="copula")``): post-processing of the
release, each column's distribution kept."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing._copula import (
    _uniform_within_bins,
    fit_copula,
    within_bin_quantiles,
)


def _binned_normal(rho, n, bins, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], n)
    q = np.quantile(z, np.linspace(0, 1, bins + 1)[1:-1], axis=0)
    return np.stack([np.searchsorted(q[:, j], z[:, j]) for j in range(2)], 1)


@pytest.mark.parametrize("rho", [-0.6, 0.0, 0.3, 0.8, 0.95])
@pytest.mark.parametrize("bins", [3, 10])
def test_the_latent_correlation_is_recovered_from_bins(rho, bins):
    """Bins of a bivariate normal give back its ρ (Mehler's expansion, not
    the attenuated correlation of the bin codes). 200,000 rows: the
    sampling sd of the estimate is about (1 - ρ²)/√n < 0.003; the bound
    0.01 is over 3 sds (fixed seed)."""
    idx = _binned_normal(rho, 200_000, bins)
    c = fit_copula(idx, np.zeros_like(idx, bool), [bins, bins], np.ones(len(idx)))
    assert c.corr[0, 1] == pytest.approx(rho, abs=0.01)
    assert np.allclose(np.diag(c.corr), 1.0)


def test_quantiles_are_a_stratified_uniform_inside_every_bin():
    """Exact: inside each bin a column's m quantiles fall one in each of
    ``[r/m, (r+1)/m)`` -- the column's own distribution is untouched; and
    their order follows the coupled draws."""
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 4, size=(500, 2))
    miss = rng.random((500, 2)) < 0.1
    u = rng.random((500, 2))
    out = _uniform_within_bins(u, idx, miss, rng)
    for j in range(2):
        for b in range(4):
            rows = np.flatnonzero((idx[:, j] == b) & ~miss[:, j])
            m = rows.size
            assert sorted(np.floor(out[rows, j] * m).astype(int)) == list(range(m))
            assert np.array_equal(np.argsort(out[rows, j]), np.argsort(u[rows, j]))


@pytest.mark.parametrize("rho", [0.0, 0.9, 0.99])
def test_within_bin_quantiles_match_a_gaussians_own(rho):
    """On a binned bivariate normal the coupled quantiles are correlated as
    the normal's own places inside its bins are (their ranks in each bin):
    0.06 at ρ = 0.9, 0.14 at 0.99 -- a box of bins leaves little of ρ --
    and 0 at ρ = 0. 40,000 rows, fixed seeds; the sd of a correlation is
    0.005, the bound 0.03 allows the Gibbs sampler's own error."""
    from scipy.stats import rankdata

    rng = np.random.default_rng(2)
    z = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], 40_000)
    cuts = np.quantile(z, np.linspace(0, 1, 11)[1:-1], axis=0)
    idx = np.stack([np.searchsorted(cuts[:, j], z[:, j]) for j in range(2)], 1)
    true = np.empty_like(z)
    for j in range(2):
        for b in range(10):
            rows = idx[:, j] == b
            true[rows, j] = (rankdata(z[rows, j]) - 0.5) / rows.sum()
    none = np.zeros_like(idx, bool)
    c = fit_copula(idx, none, [10, 10], np.ones(len(idx)))
    U = within_bin_quantiles(c, idx, none, np.random.default_rng(3))
    want = np.corrcoef(true.T)[0, 1]
    assert np.corrcoef(U.T)[0, 1] == pytest.approx(want, abs=0.03)


@pytest.mark.parametrize("rho", [0.98, 0.995])
def test_strongly_coupled_columns_in_wide_bins_mix_within_the_sweeps(rho):
    """Three columns at latent correlation ``rho`` cut in two bins each: a
    row's box is an orthant, wide against the conditional sd
    ``sqrt(1 - rho^2)`` (0.2, 0.1), so sweeps started at the middle of each
    box, each column on its own, crawl along the ridge: after the default 4
    sweeps the within-bin correlations were 0.59-0.60 (rho = 0.98) and
    0.70-0.72 (0.995) against the Gaussian's own 0.68 and 0.82 (64 sweeps:
    0.69, 0.81). Started from the sequential draw (``_sequential_start``)
    the 4 sweeps reach what 64 do. 40,000 rows, fixed seeds; the sd of a
    correlation is about 0.005, the bound 0.03 allows the copula's own fit
    (its ``rho`` is read from two bins per column)."""
    from scipy.stats import rankdata

    k, bins = 3, 2
    corr = np.full((k, k), rho)
    np.fill_diagonal(corr, 1.0)
    rng = np.random.default_rng(2)
    z = rng.multivariate_normal(np.zeros(k), corr, 40_000)
    idx = (z > np.median(z, axis=0)).astype(int)
    true = np.empty_like(z)
    for j in range(k):
        for b in range(bins):
            rows = idx[:, j] == b
            true[rows, j] = (rankdata(z[rows, j]) - 0.5) / rows.sum()
    none = np.zeros_like(idx, bool)
    c = fit_copula(idx, none, [bins] * k, np.ones(len(idx)))
    U = within_bin_quantiles(c, idx, none, np.random.default_rng(3))
    pairs = np.triu_indices(k, 1)
    want = np.corrcoef(true.T)[pairs]
    got = np.corrcoef(U.T)[pairs]
    assert np.all(np.abs(got - want) < 0.03), (got, want)


def test_single_value_bins_are_bins_of_one_value():
    """Exact: an integer bin one integer wide holds one value (the last bin
    is closed, so ``[7, 8]`` holds two); a float bin does where its only
    kept leaf is a finest one (it decodes to one value)."""
    from types import SimpleNamespace

    from skdp_synth.preprocessing._copula import single_value_bins

    got = single_value_bins([0, 1, 2, 5, 7, 8], integer=True)
    assert got.tolist() == [True, True, False, False, False]
    assert single_value_bins([0, 1, 3, 3], integer=True).tolist() == [
        True,
        False,
        True,
    ]
    fine = SimpleNamespace(
        edges=np.array([0.0, 2.0**-10, 0.5, 1.0, 2.0]),
        counts=np.array([40.0, 0.0, 30.0, 20.0]),
        finest=np.array([True, False, False, False]),
    )
    edges = [0.0, 0.5, 2.0]
    assert single_value_bins(edges, False, fine).tolist() == [True, False]
    assert single_value_bins(edges, False).tolist() == [False, False]


def test_a_wide_single_value_bin_leaves_the_covariances_not_the_cdfs():
    """Exact: the points of a one-value bin holding at least
    ``WIDE_SINGLE_SHARE`` of its column's are left out of the latent
    correlations (a column whose every point is in one is coupled to none),
    never out of the CDFs; a narrower one-value bin stays in."""
    from skdp_synth.preprocessing._copula import WIDE_SINGLE_SHARE

    rng = np.random.default_rng(0)
    n = 4000
    idx = rng.integers(0, 3, size=(n, 3))
    idx[:, 1] = np.minimum(idx[:, 0] + rng.integers(0, 2, n), 2)
    idx[:, 2] = np.where(rng.random(n) < 0.5, 0, idx[:, 0])  # bin 0: over half
    none = np.zeros_like(idx, bool)
    plain = fit_copula(idx, none, [3, 3, 3], np.ones(n))
    wide = [np.zeros(3, bool), np.zeros(3, bool), np.array([True, False, False])]
    out = fit_copula(idx, none, [3, 3, 3], np.ones(n), wide)
    assert np.mean(idx[:, 2] == 0) >= WIDE_SINGLE_SHARE
    for a, b in zip(plain.cdfs, out.cdfs):
        assert np.array_equal(a, b)
    assert out.corr[0, 1] == pytest.approx(plain.corr[0, 1], abs=1e-9)
    assert abs(out.corr[0, 2] - plain.corr[0, 2]) > 0.05
    # every point of column 2 in wide one-value bins (0 and 2, half each,
    # tied to column 0): coupled to none
    split = idx.copy()
    coin = np.where(rng.random(n) < 0.5, 0, 2)
    split[:, 2] = np.where(idx[:, 0] == 1, coin, idx[:, 0])
    both = [np.zeros(3, bool), np.zeros(3, bool), np.ones(3, bool)]
    tied = fit_copula(split, none, [3, 3, 3], np.ones(n))
    out = fit_copula(split, none, [3, 3, 3], np.ones(n), both)
    assert abs(tied.corr[0, 2]) > 0.5
    assert out.corr[0, 2] == 0.0 and out.corr[1, 2] == 0.0
    # a one-value bin under the share stays in
    narrow = [np.zeros(3, bool), np.zeros(3, bool), np.array([False, False, True])]
    assert np.mean(idx[:, 2] == 2) < WIDE_SINGLE_SHARE
    out = fit_copula(idx, none, [3, 3, 3], np.ones(n), narrow)
    assert np.array_equal(out.corr, plain.corr)


def _pair_table(n=6000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.gamma(2.0, 10.0, n)
    return pd.DataFrame(
        {
            "x": x,
            "y": x + rng.normal(0, 2.0, n),
            "g": rng.choice(["a", "b"], n),
        }
    )


def test_a_pipeline_fits_the_copula_from_its_release_only():
    """The copula is fitted from the last step's released distribution of
    encoded rows (post-processing), never from the data: refitting it from
    that distribution gives the same matrix exactly."""
    df = _pair_table()
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"g": ["a", "b"]}, random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    ).fit(df)
    enc = pipe[0]
    fitted = enc.copula_.corr.copy()
    enc.fit_copula(*pipe.steps[-1][1]._synthetic_distribution())
    assert np.array_equal(enc.copula_.corr, fitted)
    assert fitted[0, 1] > 0.5
    # an encoder fitted alone has no copula: values placed column by column
    alone = BooleanEncoder(categories={"g": ["a", "b"]}, epsilon=1.0).fit(df)
    assert not hasattr(alone, "copula_")


def test_the_copula_keeps_the_dependence_inside_bins():
    """x and y = x + noise (correlation 0.99): placed column by column the
    synthetic correlation falls to about 0.93; coupled it stays closer to
    the real one. Fixed seeds, 3 fits each."""
    df = _pair_table()
    real = df["x"].corr(df["y"])
    got = {}
    for within in ("independent", "copula"):
        r = []
        for seed in range(3):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # not what this test is about
                pipe = make_synthesis_pipeline(
                    BooleanEncoder(
                        categories={"g": ["a", "b"]},
                        within_bins=within,
                        random_state=seed,
                    ),
                    ProjectedGaussianRelease(
                        epsilon=1.0, delta=1e-6, random_state=seed
                    ),
                ).fit(df)
            out = pipe.sample(6000, random_state=seed)
            r.append(out["x"].corr(out["y"]))
        got[within] = float(np.mean(r))
    assert real - got["copula"] < 0.6 * (real - got["independent"])
