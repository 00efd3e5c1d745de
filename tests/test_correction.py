"""reweight_to_targets: the marginal-correction QP (:cite:`Boedihardjo2022` Thm 3.6 /
8.1)."""

import numpy as np
import pytest

from skdp_synth.correction import reweight_to_targets


def test_exact_when_feasible_and_closest_to_uniform():
    rng = np.random.default_rng(0)
    points = (rng.random((60, 4)) < 0.5).astype(float)
    true_w = rng.dirichlet(np.ones(60))
    targets = points.T @ true_w
    r = reweight_to_targets(points, targets)
    assert r.exact
    np.testing.assert_allclose(points.T @ r.weights, targets, atol=1e-7)
    assert r.weights.sum() == pytest.approx(1.0)
    assert np.all(r.weights >= 0)
    # optimality: no closer-to-uniform weights meet the targets (KKT: the
    # residual h - u lies in the span of the constraints on the free set)
    u = np.full(60, 1 / 60)
    free = r.weights > 1e-6
    A = np.vstack([points.T, np.ones(60)])[:, free]
    coef, *_ = np.linalg.lstsq(A.T, (r.weights - u)[free], rcond=None)
    np.testing.assert_allclose(A.T @ coef, (r.weights - u)[free], atol=1e-6)


def test_already_matching_targets_give_the_prior():
    points = np.array([[0.0], [1.0]])
    r = reweight_to_targets(points, [0.5])
    np.testing.assert_allclose(r.weights, [0.5, 0.5], atol=1e-8)


def test_infeasible_targets_give_the_least_squares_fit():
    points = np.array([[0.0], [1.0], [1.0], [1.0]])
    r = reweight_to_targets(points, [1.5])
    assert not r.exact
    assert r.residual == pytest.approx(0.5, abs=1e-6)
    np.testing.assert_allclose(r.weights, [0, 1 / 3, 1 / 3, 1 / 3], atol=1e-6)


def test_bounds_are_respected():
    points = np.array([[0.0], [1.0], [1.0], [1.0]])
    r = reweight_to_targets(points, [0.5], lower=0.05, upper=0.3)
    assert np.all(r.weights >= 0.05 - 1e-9) and np.all(r.weights <= 0.3 + 1e-9)
    assert not r.exact  # mean 1/2 needs weight 1/2 on the first point
    assert r.residual == pytest.approx(0.2, abs=1e-6)


def test_input_checks():
    with pytest.raises(ValueError, match="features"):
        reweight_to_targets(np.zeros((3, 2)), [1.0])
    with pytest.raises(ValueError, match="finite"):
        reweight_to_targets(np.full((3, 1), np.nan), [1.0])
    with pytest.raises(ValueError, match="bounds"):
        reweight_to_targets(np.zeros((3, 1)), [0.0], lower=0.5)
    with pytest.raises(ValueError, match="bounds"):
        reweight_to_targets(np.zeros((3, 1)), [0.0], upper=0.1)
