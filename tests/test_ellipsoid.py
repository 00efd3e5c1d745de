"""Tests of skdp_synth.mechanisms.ellipsoid (MEE, base decomposition, bounds)."""

import math

import numpy as np
import pytest

from skdp_synth.mechanisms.ellipsoid import (
    base_decomposition_orbits,
    base_decomposition_points,
    gaussian_optimum_orbits,
    gaussian_optimum_points,
    mee_orbits,
    mee_points,
    split_sorted_axes,
)


def _g(G, M):
    return np.einsum("ij,ij->j", G, np.linalg.solve(M, G))


@pytest.mark.parametrize("seed", range(4))
def test_mee_contains_every_point_and_is_nearly_optimal(seed):
    rng = np.random.default_rng(seed)
    r, N = 5, 60
    G = rng.normal(size=(r, N)) * rng.uniform(0.1, 3, size=(r, 1))
    E = mee_points(G, tol=1e-8)
    assert E.converged
    assert np.all(_g(G, E.matrix) <= E.radius * (1 + 1e-12))  # containment
    assert E.radius <= r * (1 + 1e-7)  # Kiefer-Wolfowitz: max g -> r
    # D-optimality: no single-point move increases log det (first-order check)
    M = E.matrix
    assert np.max(_g(G, M)) <= r * (1 + 1e-7)


def test_mee_containment_holds_for_any_design_even_unconverged():
    G = np.random.default_rng(3).normal(size=(4, 30))
    E = mee_points(G, max_iter=2)
    assert not E.converged
    assert np.all(_g(G, E.matrix) <= E.radius * (1 + 1e-12))


def test_mee_known_cases():
    square = np.array([[1.0, 1.0], [1.0, -1.0]])  # (+-1, +-1)
    E = mee_points(square)
    np.testing.assert_allclose(E.radius * E.matrix, 2 * np.eye(2), atol=1e-9)
    E1 = mee_points(np.array([[0.5, -2.0, 1.0]]))  # an interval
    assert E1.radius * E1.matrix[0, 0] == pytest.approx(4.0)
    with pytest.raises(ValueError, match="span"):
        mee_points(np.array([[1.0, 2.0], [2.0, 4.0]]))


def test_split_rule():
    # paper: keep the long half; ties are never split
    assert split_sorted_axes([4, 3, 2, 1]) == 2
    assert split_sorted_axes([5, 5, 5]) == 0  # a ball: one last piece
    assert split_sorted_axes([9, 1, 1, 1, 1, 1]) == 1
    assert split_sorted_axes([9, 9, 9, 9, 1]) == 4
    assert split_sorted_axes([7]) == 0


@pytest.mark.parametrize("seed", range(3))
def test_base_decomposition_is_an_orthogonal_partition(seed):
    rng = np.random.default_rng(seed)
    r = 12
    G = rng.normal(size=(r, 80)) * np.geomspace(0.05, 5, r)[:, None]
    dec = base_decomposition_points(G)
    U = np.hstack(dec.pieces)
    np.testing.assert_allclose(U.T @ U, np.eye(r), atol=1e-9)  # basis of R^r
    assert dec.k <= math.ceil(1 + math.log2(r))  # Nikolov2013 Algorithm 1
    for Ui, d_i, r_i in zip(dec.pieces, dec.dims, dec.radii):
        assert Ui.shape[1] == d_i
        assert r_i == pytest.approx(np.max(np.linalg.norm(Ui.T @ G, axis=0)))
    # the short axes come first: radii of later pieces are not smaller by much
    assert dec.dims[0] >= r // 2 - 1


def test_orbit_decomposition_on_a_box():
    # box with sides 1 (3 coords) and 10 (2 coords): vertices form one orbit
    dec = base_decomposition_orbits([[1.0, 100.0]], [3, 2])
    assert [list(p) for p in dec.pieces] == [[0], [1]]
    np.testing.assert_allclose(dec.radii, [math.sqrt(3), math.sqrt(200)])
    E = mee_orbits([[1.0, 100.0]], [3, 2])
    np.testing.assert_allclose(E.axes, [5.0, 500.0])  # r * per-coordinate norm


@pytest.mark.parametrize("seed", range(3))
def test_gaussian_optimum_is_below_every_feasible_noise(seed):
    """tr(M_pi^(1/2))^2 <= tr(X) for every X with g^T X^-1 g <= 1 (weak duality)."""
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(4, 40)) * rng.uniform(0.2, 2, size=(4, 1))
    bound = gaussian_optimum_points(G)
    E = mee_points(G)
    for X in (
        E.radius * E.matrix,
        np.eye(4) * np.max(np.sum(G**2, axis=0)),
        None,
    ):
        if X is None:  # the optimiser's own ellipsoid, rescaled to feasibility
            M = G @ G.T / G.shape[1]
            w, V = np.linalg.eigh(M)
            X = V @ np.diag(np.sqrt(w)) @ V.T
            X *= np.max(_g(G, X))
        assert np.max(_g(G, X)) <= 1 + 1e-9
        assert bound <= np.trace(X) * (1 + 1e-9)


def test_gaussian_optimum_orbit_and_point_forms_agree():
    # square (+-1, +-2): one orbit, two 1-dim blocks with norms 1 and 4
    pts = np.array([[1, 1, -1, -1], [2, -2, 2, -2]], dtype=float)
    assert gaussian_optimum_points(pts) == pytest.approx(9.0, rel=1e-6)
    assert gaussian_optimum_orbits([[1.0, 4.0]], [1, 1]) == pytest.approx(9.0)
