"""Spectral projection and lattice coverings (:cite:`Boedihardjo2024` §3.2-3.4)."""

import math

import numpy as np
import pytest
from scipy.spatial import cKDTree

from skdp_synth.geometry import (
    LatticeCovering,
    leading_eigenvectors,
    residual_spectral_norm,
    second_moment,
)


def _ball_points(t, n, rng):
    Z = rng.normal(size=(n, t))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    return Z * rng.random((n, 1)) ** (1 / t)


@pytest.mark.parametrize(
    "t, alpha", [(1, 0.3), (2, 0.5), (3, 0.6), (4, 0.8), (5, 0.95)]
)
def test_covering_is_an_alpha_covering_within_the_count_bound(t, alpha):
    cov = LatticeCovering(t, alpha)
    # Boedihardjo2024 Proposition 3.7: at most (7/alpha)^t points, all in the unit ball
    assert cov.n_points <= (7 / alpha) ** t
    assert np.all(np.linalg.norm(cov.points, axis=1) <= 1 + 1e-12)
    # every point of the ball is within alpha of the covering (test points +
    # the hardest places: the sphere)
    rng = np.random.default_rng(t)
    Z = np.vstack(
        [
            _ball_points(t, 5000, rng),
            _ball_points(t, 2000, rng)
            / np.linalg.norm(_ball_points(t, 2000, rng), axis=1, keepdims=True).clip(
                1e-9
            ),
        ]
    )
    Z /= np.maximum(1, np.linalg.norm(Z, axis=1, keepdims=True))
    idx = cov.nearest(Z)
    dist = np.linalg.norm(Z - cov.points[idx], axis=1)
    assert dist.max() <= alpha
    # and the nearest point is exactly the brute-force nearest
    best, _ = cKDTree(cov.points).query(Z)
    np.testing.assert_allclose(dist, best, rtol=0, atol=1e-12)


def test_covering_count_matches_brute_force_enumeration():
    t, alpha = 3, 0.7
    step = alpha / math.sqrt(t)
    r = int(1 / step) + 1
    grid = np.array(np.meshgrid(*[np.arange(-r, r + 1)] * t)).reshape(t, -1).T
    expected = np.sum(np.linalg.norm(grid * step, axis=1) <= 1 + 1e-12)
    assert LatticeCovering(t, alpha).n_points == expected


def test_nearest_outside_the_ball_and_degenerate_cases():
    cov = LatticeCovering(2, 0.5)
    far = np.array([[3.0, 0.0], [-0.0, -5.0]])
    best, _ = cKDTree(cov.points).query(far)
    np.testing.assert_allclose(
        np.linalg.norm(far - cov.points[cov.nearest(far)], axis=1), best
    )
    zero = LatticeCovering(0, 0.5)
    assert zero.n_points == 1
    np.testing.assert_array_equal(zero.nearest(np.zeros((4, 0))), np.zeros(4))
    with pytest.raises(ValueError, match="dimension"):
        cov.nearest(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="alpha"):
        LatticeCovering(2, 0.0)
    with pytest.raises(ValueError, match="more than"):
        LatticeCovering(6, 0.1, max_points=1000)


def test_nearest_is_deterministic():
    cov = LatticeCovering(3, 0.6)
    Z = _ball_points(3, 300, np.random.default_rng(0))
    np.testing.assert_array_equal(cov.nearest(Z), cov.nearest(Z.copy()))


def test_spectral_projection_residual_bound():
    # Boedihardjo2024 Lemma 3.3: ||(I-P)S(I-P)||_F <= 1/sqrt(t) for data in the unit
    # ball
    rng = np.random.default_rng(1)
    X = (rng.random((500, 30)) < 0.3) / np.sqrt(30)
    S = second_moment(X)
    for t in range(1, 10):
        V, values = leading_eigenvectors(S, t)
        P = V @ V.T
        residual = np.linalg.norm((np.eye(30) - P) @ S @ (np.eye(30) - P))
        assert residual == pytest.approx(residual_spectral_norm(values, t), rel=1e-9)
        assert residual <= 1 / math.sqrt(t)
        np.testing.assert_allclose(V.T @ V, np.eye(t), atol=1e-12)


def test_leading_eigenvectors_sign_convention():
    S = np.diag([3.0, 2.0, 1.0])
    V, values = leading_eigenvectors(S, 2)
    np.testing.assert_allclose(values, [3, 2, 1])
    np.testing.assert_allclose(V, [[1, 0], [0, 1], [0, 0]])
    A = np.random.default_rng(0).normal(size=(6, 6))
    V, _ = leading_eigenvectors(A @ A.T, 4)
    idx = np.argmax(np.abs(V), axis=0)
    assert np.all(V[idx, np.arange(4)] > 0)


@pytest.mark.parametrize("t, alpha", [(1, 0.5), (2, 0.8), (3, 0.7), (4, 1.0), (5, 0.5)])
def test_nearest_by_table_equals_the_key_search(t, alpha, monkeypatch):
    """The look-up table gives the labels of the sorted-key search and the
    KD-tree: points on the lattice, half-way ties, far outside, random."""
    import skdp_synth.geometry as geometry

    rng = np.random.default_rng(t)
    cov = LatticeCovering(t, alpha)
    Z = rng.normal(size=(20000, t)) * rng.uniform(0.05, 0.8, size=(20000, 1))
    Z[:100] = cov.points[rng.integers(0, cov.n_points, 100)]
    Z[100:200] = (np.rint(Z[100:200] / cov.step) + 0.5) * cov.step
    Z[200:300] *= 20
    assert cov._base**t <= geometry._TABLE_KEYS
    by_table = cov.nearest(Z)
    monkeypatch.setattr(geometry, "_TABLE_KEYS", 0)
    by_search = LatticeCovering(t, alpha).nearest(Z)
    np.testing.assert_array_equal(by_table, by_search)
