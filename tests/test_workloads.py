"""Tests of skdp_synth.workloads: the closed forms against brute force."""

import itertools
import math

import numpy as np
import pytest

from skdp_synth.mechanisms.ellipsoid import mee_orbits, mee_points
from skdp_synth.workloads._bits import (
    ExplicitWorkload,
    MarginalWorkload,
    krawtchouk,
    universe_index,
    universe_points,
)

SIZES = [(1, 1), (3, 1), (3, 2), (4, 2), (5, 3), (6, 2)]


def _chi(U, T):
    return np.prod(1 - 2 * U[:, list(T)], axis=1) if T else np.ones(len(U))


def test_universe_enumeration_and_index_agree():
    U = universe_points(5)
    assert U.shape == (32, 5)
    np.testing.assert_array_equal(universe_index(U), np.arange(32))


@pytest.mark.parametrize("p, d", SIZES)
def test_fourier_basis_is_orthonormal_and_factors_the_workload(p, d):
    W = MarginalWorkload(p, d)
    A = W.to_explicit().matrix
    P = W.to_cells(np.eye(W.rank))  # columns psi_T
    np.testing.assert_allclose(P.T @ P, np.eye(W.rank), atol=1e-12)
    G = W.point_coords(universe_points(p))
    np.testing.assert_allclose(P @ G.T, A, atol=1e-12)  # a_u = P g_u exactly
    assert (
        W.rank == np.linalg.matrix_rank(A) == sum(math.comb(p, j) for j in range(d + 1))
    )
    assert W.n_queries == math.comb(p, d) * 2**d


@pytest.mark.parametrize("p, d", SIZES)
def test_answers_and_coordinates_round_trip(p, d, rng):
    W = MarginalWorkload(p, d)
    X = (rng.random((40, p)) < 0.3).astype(int)
    y = W.answers(X)
    np.testing.assert_array_equal(y, W.to_explicit().answers(X))
    np.testing.assert_allclose(W.to_cells(W.to_coords(y)), y, atol=1e-10)
    # z_T = sqrt(lambda_|T|) sum_i chi_T(x_i): scaled Fourier coefficients
    z = W.to_coords(y)
    for t, T in enumerate(W.coefficient_sets()):
        lam = W.eigenvalues[len(T)]
        assert z[t] == pytest.approx(math.sqrt(lam) * _chi(X, T).sum(), abs=1e-9)


@pytest.mark.parametrize("p, d", [(3, 2), (4, 2), (4, 3)])
def test_uniform_moment_matrix_closed_form(p, d):
    """M[(S,b),(S',b')] = 2^-|S u S'| if b, b' agree on S n S', else 0."""
    W = MarginalWorkload(p, d)
    A = W.to_explicit().matrix
    M = A @ A.T / A.shape[1]
    cells = list(itertools.product((0, 1), repeat=d))
    for a, S in enumerate(W.tables):
        for b, S2 in enumerate(W.tables):
            common = set(S) & set(S2)
            for i, beta in enumerate(cells):
                for j, beta2 in enumerate(cells):
                    agree = all(
                        beta[list(S).index(k)] == beta2[list(S2).index(k)]
                        for k in common
                    )
                    want = 2.0 ** -len(set(S) | set(S2)) if agree else 0.0
                    assert M[a * 2**d + i, b * 2**d + j] == want
    eig = np.sort(np.linalg.eigvalsh(M))[::-1][: W.rank]
    want = np.sort(np.repeat(W.eigenvalues, W.multiplicity))[::-1]
    np.testing.assert_allclose(eig, want, atol=1e-12)


@pytest.mark.parametrize("p, d", [(3, 2), (4, 2), (5, 2), (4, 3)])
def test_uniform_design_is_d_optimal(p, d):
    """Kiefer-Wolfowitz claim: Khachiyan from a random design finds the uniform MEE."""
    W = MarginalWorkload(p, d)
    G = W.point_coords(universe_points(p)).T
    start = np.random.default_rng(7).random(G.shape[1]) ** 4  # far from uniform
    E = mee_points(G, tol=1e-10, weights=start)
    assert E.converged
    axes = np.sort(np.linalg.eigvalsh(E.radius * E.matrix))
    want = np.sort(np.repeat(W.rank * W.eigenvalues, W.multiplicity))
    np.testing.assert_allclose(axes, want, rtol=1e-4)
    # and every g_u equals r under the uniform design (equality in K-W)
    M = G @ G.T / G.shape[1]
    g = np.einsum("ij,ij->j", G, np.linalg.solve(M, G))
    np.testing.assert_allclose(g, W.rank, rtol=1e-10)


def test_krawtchouk_is_a_character_sum():
    p = 6
    for w in range(p + 1):
        s = np.zeros((1, p), dtype=int)
        s[0, :w] = 1
        for j in range(p + 1):
            brute = sum(_chi(s, T)[0] for T in itertools.combinations(range(p), j))
            assert krawtchouk(j, w, p) == brute


@pytest.mark.parametrize("p, d", [(3, 1), (4, 2), (5, 3)])
def test_replace_one_orbit_norms_match_brute_force(p, d):
    W = MarginalWorkload(p, d)
    U = universe_points(p)
    G = W.point_coords(U)
    norms, mult = W.orbit_norms("replace-one")
    for u, v in itertools.combinations(range(len(U)), 2):
        w = int(np.sum(U[u] != U[v]))
        diff = G[u] - G[v]
        for j in range(d + 1):
            block = diff[W.degrees == j]
            assert block @ block == pytest.approx(mult[j] * norms[w - 1, j], abs=1e-9)
    add, _ = W.orbit_norms("add-remove-one")
    np.testing.assert_array_equal(add[0], W.eigenvalues)


@pytest.mark.parametrize("p, d", [(4, 2), (5, 2), (4, 3)])
def test_orbit_mee_equals_khachiyan_on_all_differences(p, d):
    W = MarginalWorkload(p, d)
    G = W.point_coords(universe_points(p))
    D = (G[:, None, :] - G[None, :, :]).reshape(-1, W.rank)[:, 1:]  # drop total
    D = D[np.abs(D).sum(axis=1) > 0].T
    explicit = mee_points(D, tol=1e-10)
    axes = np.sort(np.linalg.eigvalsh(explicit.radius * explicit.matrix))
    orbit = mee_orbits(*W.orbit_norms("replace-one"))
    want = np.sort(np.repeat(orbit.axes[1:], W.multiplicity[1:]))
    np.testing.assert_allclose(axes, want, rtol=1e-4)
    assert orbit.axes[0] == 0.0  # the total has no replace-one sensitivity


@pytest.mark.parametrize("p, d", SIZES)
@pytest.mark.parametrize("relation", ["add-remove-one", "replace-one"])
def test_sensitivity_closed_forms(p, d, relation):
    W = MarginalWorkload(p, d)
    E = W.to_explicit()
    for ord_ in (1, 2):
        assert W.sensitivity(relation, ord_) == pytest.approx(
            E.sensitivity(relation, ord_), rel=1e-12
        )


def test_explicit_workload_basics():
    A = np.vstack([np.tril(np.ones((8, 8))), np.ones((1, 8))])
    W = ExplicitWorkload(A, 3)
    X = np.array([[0, 0, 1], [1, 1, 1], [0, 0, 1]])
    y = W.answers(X)
    assert y[0] == 0 and y[1] == 2 and y[7] == 3 and y[8] == 3
    np.testing.assert_allclose(W.to_cells(W.to_coords(y)), y, atol=1e-12)
    w = W.total_weights()
    assert w is not None and w @ y == pytest.approx(3.0)
    assert ExplicitWorkload(np.eye(8)[:3], 3).total_weights() is None
    D = W.difference_points()
    assert D.shape == (W.rank, 28)


def test_explicit_workload_rejects_bad_input():
    with pytest.raises(ValueError, match="2\\^p = 8 columns"):
        ExplicitWorkload(np.ones((2, 7)), 3)
    with pytest.raises(ValueError, match="p <= 16"):
        ExplicitWorkload(np.ones((2, 2**17)), 17)
    with pytest.raises(ValueError, match="zero"):
        ExplicitWorkload(np.zeros((2, 8)), 3)
    with pytest.raises(ValueError, match="exceeds"):
        MarginalWorkload(2, 3)
    with pytest.raises(ValueError, match="0/1"):
        MarginalWorkload(3, 2).answers(np.full((2, 3), 0.5))
    with pytest.raises(ValueError, match="pairs"):
        ExplicitWorkload(np.ones((2, 2**11)), 11).difference_points()


def test_large_marginal_workload_never_enumerates_the_universe():
    W = MarginalWorkload(64, 2)  # universe 2^64
    assert (W.n_queries, W.rank) == (8064, 2081)
    X = (np.random.default_rng(0).random((100, 64)) < 0.5).astype(int)
    y = W.answers(X)
    np.testing.assert_allclose(y.reshape(-1, 4).sum(axis=1), 100)
    with pytest.raises(ValueError, match="p <= 16"):
        W.to_explicit()


# ------------------------------------------------------- sensitivity sets
@pytest.mark.parametrize("relation", ["add-remove-one", "replace-one"])
def test_sensitivity_set_orbits_agree_with_its_points(relation):
    # the closed form a mechanism uses must be the enumerated set's
    W = MarginalWorkload(6, 2)
    S = W.sensitivity_set(relation)
    assert S.enumerable and S.points is not None and S.restriction is None
    norms, mult, blocks = S.orbits
    per_block = np.stack(
        [np.sum(S.points[blocks == j] ** 2, axis=0) for j in range(W.d + 1)]
    )
    # every point's per-block squared norms are one orbit's row times the sizes
    rows = {tuple(np.round(r * mult, 9)) for r in norms}
    assert {tuple(np.round(c, 9)) for c in per_block.T} <= rows
    np.testing.assert_array_equal(S.origin, W.point_coords(np.zeros((1, 6)))[0])


def test_sensitivity_set_restricted_to_the_invariants_null_space():
    from skdp_synth.workloads import ExplicitWorkload

    W = ExplicitWorkload(MarginalWorkload(3, 1).to_explicit().matrix, 3)
    C = np.ones((1, W.n_queries))  # the sum of all answers
    S = W.sensitivity_set("add-remove-one", invariants=C)
    assert S.orbits is None and S.restriction.shape == (W.rank - 1, W.rank)
    np.testing.assert_allclose(S.restriction @ W.to_coords(C.T), 0, atol=1e-12)
    np.testing.assert_allclose(S.points, S.restriction @ W.universe_coords())
    cells = W.sensitivity_set("replace-one", space="cells", ord=1)
    assert cells.max_norm == W.sensitivity("replace-one", ord=1)
    assert cells.points.shape == (W.n_queries, 8 * 7 // 2)


def test_sensitivity_set_too_large_says_why():
    S = MarginalWorkload(20, 2).sensitivity_set("replace-one", invariants=None)
    assert S.orbits is not None and S.points is None and not S.enumerable
    S = MarginalWorkload(20, 2).sensitivity_set(
        "add-remove-one", invariants=np.ones((1, MarginalWorkload(20, 2).n_queries))
    )
    assert S.points is None and "p <= 16" in S.too_large
