"""The one Walsh--Fourier sign convention, shared by workloads and the sampler."""

import itertools

import numpy as np
import pytest

from skdp_synth import fourier
from skdp_synth.private_sampling import (
    PrivateSampler,
    marginals_to_walsh,
    walsh_coefficients,
    walsh_matrix,
    walsh_to_marginals,
)
from skdp_synth.workloads import MarginalWorkload


def test_convention_is_zero_to_plus_one():
    # chi_T(u) = (-1)^{sum_{j in T} u_j}: a 0 bit is +1, a 1 bit is -1.
    row = np.array([[1, 0, 1]])
    np.testing.assert_array_equal(fourier.walsh_matrix(row, 1)[0, 1:], [-1, 1, -1])
    np.testing.assert_array_equal(fourier.to_signs([0, 1]), [1.0, -1.0])
    for T in itertools.combinations(range(3), 2):
        col = fourier.walsh_subsets(3, 2).index(T)
        assert fourier.walsh_matrix(row, 2)[0, col] == (-1) ** row[0, list(T)].sum()


def test_workloads_and_private_sampling_agree():
    row = np.array([[1, 0, 1]])
    # the private sampler's public helpers are fourier's
    np.testing.assert_array_equal(walsh_matrix(row, 1)[0, 1:], [-1, 1, -1])
    # the marginal workload's coordinates are sqrt(lambda_|T|) chi_T(u)
    W = MarginalWorkload(3, 2)
    g = W.point_coords(row)[0]
    chi = g / np.sqrt(W.eigenvalues)[W.degrees]
    np.testing.assert_allclose(chi[1:4], [-1, 1, -1])
    np.testing.assert_allclose(chi, walsh_matrix(row, 2)[0])
    assert W.coefficient_sets() == fourier.walsh_subsets(3, 2)
    # and its Hadamard matrix is chi_l(beta)
    H = fourier.hadamard(2)
    for beta, ell in itertools.product(range(4), repeat=2):
        bits = [(beta >> 1) & 1, beta & 1]
        T = [k for k in range(2) if (ell >> (1 - k)) & 1]
        assert H[beta, ell] == (-1) ** sum(bits[k] for k in T)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_marginal_conversions_round_trip(d):
    rng = np.random.default_rng(d)
    X = (rng.random((300, 5)) < 0.35).astype(int)
    mu = walsh_coefficients(X, d)
    conj = walsh_to_marginals(mu, 5, d)
    for i, J in enumerate(fourier.walsh_subsets(5, d)):
        assert conj[i] == pytest.approx(X[:, list(J)].all(axis=1).mean())
    np.testing.assert_allclose(marginals_to_walsh(conj, 5, d), mu, atol=1e-13)


def test_degree_signs_mirror_the_convention():
    X = np.array([[1, 0, 1, 1], [0, 0, 1, 0]])
    mirrored = fourier.sign_products(2.0 * X - 1.0, 3)
    np.testing.assert_array_equal(
        mirrored, fourier.walsh_matrix(X, 3) * fourier.degree_signs(4, 3)
    )


def test_private_sampler_release_is_convention_free():
    # the sampler converts at its boundary: its density has the data's
    # marginals in the shared convention too.
    rng = np.random.default_rng(0)
    X = (rng.random((5000, 4)) < 0.4).astype(int)
    ps = PrivateSampler(d=1, k=1, random_state=0).fit(X)
    got = walsh_matrix(ps.reduced_space_, 1).T @ ps._density
    lam = ps._shrinkage
    uniform = walsh_matrix(ps.reduced_space_, 1).mean(axis=0)
    want = (1 - lam) * walsh_coefficients(X, 1) + lam * uniform
    np.testing.assert_allclose(got, want, atol=1e-7)
