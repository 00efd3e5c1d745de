"""Noise sources and Gaussian calibration."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from skdp_synth.mechanisms import (
    NoiseSource,
    analytic_gaussian_sigma,
    check_noise_source,
    classical_gaussian_sigma,
    gaussian_delta,
    gaussian_sigma,
    make_generator,
)


# ------------------------------------------------------------ generators
def test_make_generator_streams_are_independent_and_reproducible():
    a0, a0b, a1 = make_generator(7, 0), make_generator(7, 0), make_generator(7, 1)
    x, y, z = a0.random(5), a0b.random(5), a1.random(5)
    np.testing.assert_array_equal(x, y)
    assert not np.allclose(x, z)


def test_make_generator_accepts_sklearn_random_states():
    rs = np.random.RandomState(0)
    g1 = make_generator(rs)
    g2 = make_generator(np.random.RandomState(0))
    np.testing.assert_array_equal(g1.random(3), g2.random(3))
    gen = np.random.default_rng(1)
    assert make_generator(gen) is gen
    with pytest.raises(ValueError, match="random_state"):
        make_generator("seed")
    with pytest.raises(ValueError, match="random_state"):
        make_generator(True)


def test_noise_source_secure_flag():
    assert NoiseSource(None).secure
    assert not NoiseSource(0).secure
    src = NoiseSource(0)
    assert check_noise_source(src) is src


# --------------------------------------------------------- distributions
# Each KS test has a false-failure rate of 1e-3 at its fixed seed.
@pytest.mark.parametrize("random_state", [0, None], ids=["seeded", "secure"])
def test_laplace_noise_has_the_laplace_distribution(random_state):
    src = NoiseSource(random_state)
    values = np.full(4000, 3.0)
    out = src.laplace(values, scale=2.0)
    assert out.shape == values.shape
    assert stats.kstest(out - 3.0, stats.laplace(scale=2.0).cdf).pvalue > 1e-3


@pytest.mark.parametrize("random_state", [0, None], ids=["seeded", "secure"])
def test_gaussian_noise_has_the_gaussian_distribution(random_state):
    src = NoiseSource(random_state)
    out = src.gaussian(np.zeros((40, 50)), scale=0.5)
    assert out.shape == (40, 50)
    assert stats.kstest(out.ravel(), stats.norm(scale=0.5).cdf).pvalue > 1e-3


def test_noise_input_checks():
    src = NoiseSource(0)
    with pytest.raises(ValueError, match="finite"):
        src.laplace([np.nan], 1.0)
    with pytest.raises(ValueError, match="scale"):
        src.gaussian([0.0], 0.0)
    with pytest.raises(ValueError, match="scale"):
        src.laplace([0.0], np.inf)
    assert src.laplace(np.zeros((0, 3)), 1.0).shape == (0, 3)


def test_seeded_noise_is_reproducible():
    a = NoiseSource(11).laplace(np.zeros(10), 1.0)
    b = NoiseSource(11).laplace(np.zeros(10), 1.0)
    np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------ calibration
EPS_DELTA = [
    (eps, delta)
    for eps in (0.05, 0.5, 1.0, 2.0, 8.0)
    for delta in (1e-3, 1e-6, 1e-9, 1e-12)
]


@pytest.mark.parametrize("eps, delta", EPS_DELTA)
def test_analytic_sigma_satisfies_and_is_tight(eps, delta):
    sigma = analytic_gaussian_sigma(eps, delta)
    # the defining inequality of Balle & Wang (2018), Theorem 8, holds ...
    assert gaussian_delta(sigma, eps) <= delta
    # ... and is violated just below: the calibration is the smallest sigma
    assert gaussian_delta(sigma * (1 - 1e-6), eps) > delta


@pytest.mark.parametrize("eps, delta", EPS_DELTA)
def test_analytic_sigma_beats_both_paper_constants(eps, delta):
    sigma = analytic_gaussian_sigma(eps, delta)
    assert sigma < classical_gaussian_sigma(eps, delta, variant="nikolov2013")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        gao = classical_gaussian_sigma(eps, delta, variant="gao2022")
    valid = gaussian_delta(gao, eps) <= delta
    # the Gao2022 constant warns exactly when it is not a valid calibration
    assert (len(record) == 0) == valid
    if valid:  # then the minimal sigma cannot exceed it
        assert sigma <= gao


def test_sensitivity_scales_sigma_linearly():
    assert analytic_gaussian_sigma(1.0, 1e-6, 3.0) == pytest.approx(
        3 * analytic_gaussian_sigma(1.0, 1e-6), rel=1e-12
    )


def test_paper_constants_are_pinned():
    # Nikolov2013 §2: c = (1 + sqrt(2 ln(1/delta))) / eps
    assert classical_gaussian_sigma(2.0, 1e-6, variant="nikolov2013") == pytest.approx(
        (1 + math.sqrt(2 * math.log(1e6))) / 2.0
    )
    # Gao2022 as printed: c = (1 + sqrt(1 + ln(1/delta))) / eps
    assert classical_gaussian_sigma(0.5, 1e-6, variant="gao2022") == pytest.approx(
        (1 + math.sqrt(1 + math.log(1e6))) / 0.5
    )


def test_gao_constant_is_invalid_at_epsilon_two():
    # Gao2022 Lemma 13: at eps = 2, delta = 1e-9 the printed constant only achieves
    # ~1.19e-9
    with pytest.warns(UserWarning, match="not a valid calibration"):
        c = classical_gaussian_sigma(2.0, 1e-9, variant="gao2022")
    achieved = gaussian_delta(c, 2.0)
    assert achieved > 1e-9
    assert achieved == pytest.approx(1.19e-9, rel=0.01)


def test_gaussian_delta_known_values_and_monotone():
    # sigma = 1, eps = 0: delta = Phi(1/2) - Phi(-1/2), the TV of N(0,1) and N(1,1)
    assert gaussian_delta(1.0, 0.0) == pytest.approx(
        stats.norm.cdf(0.5) - stats.norm.cdf(-0.5)
    )
    sigmas = np.linspace(0.2, 10, 50)
    deltas = [gaussian_delta(s, 1.0) for s in sigmas]
    assert np.all(np.diff(deltas) < 0)


def test_dispatch_and_errors():
    assert gaussian_sigma(1.0, 1e-5) == analytic_gaussian_sigma(1.0, 1e-5)
    assert gaussian_sigma(1.0, 1e-5, calibration="nikolov2013") == (
        classical_gaussian_sigma(1.0, 1e-5, variant="nikolov2013")
    )
    with pytest.raises(ValueError, match="variant"):
        classical_gaussian_sigma(1.0, 1e-5, variant="other")
    with pytest.raises(ValueError, match="epsilon"):
        analytic_gaussian_sigma(np.inf, 1e-5)
    with pytest.raises(ValueError, match="delta"):
        analytic_gaussian_sigma(1.0, 0.0)
    with pytest.raises(ValueError, match="sensitivity"):
        analytic_gaussian_sigma(1.0, 1e-5, sensitivity=0)
