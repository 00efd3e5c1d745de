"""The attribute-level marginal workload and its optimal Gaussian noise."""

import itertools
import math

import numpy as np
import pytest

from skdp_synth.mechanisms.ellipsoid import gaussian_optimum_orbits
from skdp_synth.workloads import (
    AttributeMarginalWorkload,
    MarginalWorkload,
    helmert_basis,
)

LEVELS = [3, 2, 4, 5]


def _rows(levels, n, seed=0):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, k, n) for k in levels])


@pytest.mark.parametrize("L", [2, 3, 7])
def test_helmert_basis_is_orthonormal_and_orthogonal_to_ones(L):
    Q = helmert_basis(L)
    np.testing.assert_allclose(Q.T @ Q, np.eye(L - 1), atol=1e-12)
    np.testing.assert_allclose(Q.T @ np.ones(L), 0, atol=1e-12)
    np.testing.assert_allclose(Q @ Q.T + np.ones((L, L)) / L, np.eye(L), atol=1e-12)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_residuals_rebuild_every_table_exactly(d):
    W = AttributeMarginalWorkload(LEVELS, d)
    X = _rows(LEVELS, 300)
    z = W.answers(X)
    for S in W.tables:
        np.testing.assert_allclose(W.reconstruct(z, S), W.table(X, S), atol=1e-9)
    # every residual is (⊗ Q_jᵀ) T_A
    for A in W.subsets:
        np.testing.assert_allclose(
            z[A], W.residual_matrix(A) @ W.table(X, A), atol=1e-9
        )


@pytest.mark.parametrize("neighbouring", ["add-remove-one", "replace-one"])
def test_whitened_sensitivity_is_exactly_one_by_enumeration(neighbouring):
    """Brute force over every record (add/remove) or pair (replace-one)."""
    W = AttributeMarginalWorkload(LEVELS, 2)
    tau = W.optimal_scales(neighbouring)
    universe = np.array(list(itertools.product(*[range(k) for k in LEVELS])))
    contrib = []
    for u in universe:
        z = W.answers(u[None, :])
        contrib.append(
            np.concatenate([z[A] / t for A, t in zip(W.subsets, tau) if t > 0])
        )
    G = np.array(contrib)
    if neighbouring == "add-remove-one":
        norms = np.linalg.norm(G, axis=1)
        np.testing.assert_allclose(norms, 1.0, rtol=1e-12)
    else:
        D = G[:, None, :] - G[None, :, :]
        worst = np.sqrt((D**2).sum(axis=2)).max()
        assert worst == pytest.approx(1.0, rel=1e-12)
        assert W.whitened_sensitivity(tau, neighbouring) == pytest.approx(1.0)


def test_expected_error_is_the_sum_of_cell_variances():
    W = AttributeMarginalWorkload(LEVELS, 2)
    tau, c = W.optimal_scales(), 3.7
    direct = 0.0
    for S in W.tables:
        for A, t in zip(W.subsets, tau):
            if set(A) <= set(S):
                direct += c**2 * t**2 * np.sum(W.expansion_matrix(S, A) ** 2)
        assert W.cell_variance(tau, c, S) * W.n_cells(S) == pytest.approx(
            sum(
                c**2 * t**2 * np.sum(W.expansion_matrix(S, A) ** 2)
                for A, t in zip(W.subsets, tau)
                if set(A) <= set(S)
            )
        )
    assert W.expected_error(tau, c) == pytest.approx(direct, rel=1e-12)


def test_allocation_is_optimal_against_perturbations():
    """Any other variances, rescaled to sensitivity 1, have larger error."""
    W = AttributeMarginalWorkload(LEVELS, 2)
    tau = W.optimal_scales()
    best = W.expected_error(tau, 1.0)
    rng = np.random.default_rng(1)
    for _ in range(200):
        other = tau * np.exp(rng.normal(0, 0.3, tau.size))
        other = other * W.whitened_sensitivity(other)
        assert W.whitened_sensitivity(other) == pytest.approx(1.0)
        assert W.expected_error(other, 1.0) >= best * (1 - 1e-12)


@pytest.mark.parametrize("p,d", [(6, 2), (7, 3), (9, 1)])
def test_binary_attributes_attain_the_bit_level_gaussian_optimum(p, d):
    W = AttributeMarginalWorkload([2] * p, d)
    norms, mult = MarginalWorkload(p, d).orbit_norms("add-remove-one")
    optimum = gaussian_optimum_orbits(norms, mult)
    assert W.expected_error(W.optimal_scales(), 1.0) == pytest.approx(
        optimum, rel=1e-10
    )


def test_closed_form_constants_pinned():
    """s_A, v_A and the error c²K² for a small workload, by hand."""
    W = AttributeMarginalWorkload([2, 3], 1)
    # subsets: (), (0,), (1,); s = 1, 1/2, 2/3; v = 1/2 + 1/3, 1, 2
    np.testing.assert_allclose(W.sensitivity_weights(), [1, 1 / 2, 2 / 3])
    np.testing.assert_allclose(W.variance_weights(), [1 / 2 + 1 / 3, 1, 2])
    K = math.sqrt(5 / 6) + math.sqrt(1 / 2) + math.sqrt(4 / 3)
    assert W.expected_error(W.optimal_scales(), 2.0) == pytest.approx(4 * K**2)


def test_bad_arguments():
    with pytest.raises(ValueError, match="d=3"):
        AttributeMarginalWorkload([2, 2], 3)
    with pytest.raises(ValueError, match="at least one level"):
        AttributeMarginalWorkload([2, 0], 1)
