"""Empirical privacy audit of DampedPrivateSynthesizer (:cite:`Boedihardjo2024` Theorem
5.12).

Method (:func:`skdp_synth.audit.audit_epsilon`): run a mechanism many times
on neighbouring datasets ``D, D'`` with fixed seeds, choose a threshold event
on a scalar statistic on one half of the runs, and on the other half compute
the Clopper-Pearson lower bound on epsilon. Each audit is run at
``alpha = 1e-3``: a *correct* mechanism fails it with probability at most
1e-3 (the bound exceeds the true epsilon with probability <= alpha, and the
true epsilon is at most the claim); seven audits here, so at most 7e-3 in all
(in fact far less: each correct run sits well below its claim, see the
comments). An audit can only refute a claim; passing it is evidence, not proof.

Each piece of the budget split is audited against its own share ``eps/3`` on
worst-case neighbours for that piece, with the estimator's own constants and
code (``projection_scale``, ``weight_noise_scale``, ``mean_noise_scale``,
``damped_microaggregation``, ``NoiseSource.laplace``, the Bingham sampler);
then the whole estimator against ``eps`` on data where a row moves between
cells. The *same* audits must flag planted bugs, implemented here by
monkeypatching the constants (never a public option): half the Laplace noise
on the weights, half on the means, and ``2x`` the PROJ scale (half the
"temperature" of the exponential mechanism).

Why the end-to-end bug is not "half the noise": on the cube the paper's
constants are conservative (module docstring of ``skdp_synth.damped``: the
means' l1 sensitivity is half the general bound, the PVEC spread at most
``sqrt(4/3)`` instead of 2), so an estimator with half the noise everywhere is
still about ``eps``-DP on cube data -- there is nothing to flag. The planted
end-to-end bug is the classic one: weights calibrated to the add/remove
sensitivity ``1/n`` with the whole budget (scale ``1/(n eps)``, 1/6 of the
correct noise), which makes the weights alone ``2 eps``-DP.

Runtime: about 15-25 s on one core (8000 estimator fits dominate).
"""

import numpy as np
import pytest

from skdp_synth import DampedPrivateSynthesizer
from skdp_synth.audit import audit_epsilon
from skdp_synth.damped import _damping
from skdp_synth.damped import _estimator as damped_module
from skdp_synth.geometry import second_moment
from skdp_synth.mechanisms import BinghamSampler, NoiseSource, proj

pytestmark = pytest.mark.slow

ALPHA = 1e-3
RUNS = 20000  # per dataset, for the vectorised piece audits


# ------------------------------------------------------------------ PVEC
# Worst case for one PVEC call (t = 1) in the unit ball: D = {e1, e2},
# D' = {e2, e2} (n = 2). A = (n eps/6) S: under D the Bingham density is
# uniform, under D' it is exp((eps/3) v_2^2). The privacy loss is monotone in
# v_1^2, so threshold events on v_1^2 are the most powerful (Neyman-Pearson).
# At eps = 9 (claim eps/3 = 3) the exact loss of the best such event reaching
# 10% mass is 1.95, the audit bound about 1.6; with the scale doubled the
# loss is 4.4 and the audit bound about 3.6-3.9 (8 seeds checked).
PVEC_EPS = 9.0
PVEC_D = np.array([[1.0, 0.0], [0.0, 1.0]])
PVEC_D_PRIME = np.array([[0.0, 1.0], [0.0, 1.0]])


def _pvec_audit(seed=0):
    scores = []
    for i, X in enumerate((PVEC_D, PVEC_D_PRIME)):
        A = damped_module.projection_scale(2, PVEC_EPS, 1) * second_moment(X)
        v = BinghamSampler(A).sample(RUNS, np.random.default_rng([seed, i]))
        scores.append(v[:, 0] ** 2)
    return audit_epsilon(*scores, alpha=ALPHA)


def test_the_audited_pvec_is_the_estimators_projection():
    """``proj`` with ``t = 1`` is one draw of ``BinghamSampler(scale * S)``, and the
    estimator hands ``proj`` exactly ``projection_scale(n, eps, t) * S``."""
    A = damped_module.projection_scale(2, PVEC_EPS, 1) * second_moment(PVEC_D_PRIME)
    v = proj(A, 1, np.random.default_rng(5))[:, 0]
    w = BinghamSampler(A).sample(1, np.random.default_rng(5))[0]
    np.testing.assert_array_equal(v, w)
    X = np.random.default_rng(0).integers(0, 2, (2000, 3))
    est = DampedPrivateSynthesizer(
        epsilon=2.0, n_components=1, random_state=0, parameters="paper", centre=None
    )
    assert est.fit(X).projection_scale_ == damped_module.projection_scale(2000, 2.0, 1)
    est.set_params(centre="cube")  # the default: radius M = 1/2
    assert est.fit(X).projection_scale_ == damped_module.projection_scale(
        2000, 2.0, 1, 0.5
    )


def test_pvec_piece_audit_passes():
    result = _pvec_audit()
    assert result.epsilon_lower < PVEC_EPS / 3
    assert result.epsilon_lower > 1.0  # the audit is not blind: ~0.5 of the claim


def test_pvec_piece_audit_flags_doubled_scale(monkeypatch):
    correct = damped_module.projection_scale
    monkeypatch.setattr(
        damped_module, "projection_scale", lambda n, eps, t: 2 * correct(n, eps, t)
    )
    assert _pvec_audit().epsilon_lower > PVEC_EPS / 3


# --------------------------------------------------------------- weights
# One row moves from cell 0 (in D) to cell 1 (in D'); n = 10. w moves by 1/n
# in two coordinates, l1 change 2/n (the sensitivity). Statistic: the joint
# tail min(y_0 - w_0(D), w_1(D) - y_1), whose likelihood ratio is exactly
# e^{eps/3} for every threshold >= 0. eps = 3 (claim 1): audit bound ~0.82;
# half the noise (true 2): ~1.7.
PIECE_EPS = 3.0
N_W = 10
LABELS_D = np.array([0] + [2] * (N_W - 1))
LABELS_D_PRIME = np.array([1] + [2] * (N_W - 1))


def _weights_audit(seed=0):
    X = np.zeros((N_W, 1))
    w_d, _, _ = _damping.damped_microaggregation(X, LABELS_D, 3, 1.0)
    w_dp, _, _ = _damping.damped_microaggregation(X, LABELS_D_PRIME, 3, 1.0)
    assert np.abs(w_d - w_dp).sum() == pytest.approx(2 / N_W)
    scale = damped_module.weight_noise_scale(N_W, PIECE_EPS)
    scores = []
    for i, w in enumerate((w_d, w_dp)):
        noisy = NoiseSource(100 * seed + i).laplace(np.tile(w, (RUNS, 1)), scale)
        scores.append(np.minimum(noisy[:, 0] - w_d[0], w_d[1] - noisy[:, 1]))
    return audit_epsilon(*scores, alpha=ALPHA)


def test_weight_piece_audit_passes():
    result = _weights_audit()
    assert 0.5 < result.epsilon_lower < PIECE_EPS / 3


def test_weight_piece_audit_flags_half_the_noise(monkeypatch):
    correct = damped_module.weight_noise_scale
    monkeypatch.setattr(
        damped_module, "weight_noise_scale", lambda n, eps: correct(n, eps) / 2
    )
    est = DampedPrivateSynthesizer(
        n_components=1, random_state=0, parameters="bound"
    ).fit(np.ones((2000, 2), dtype=int))
    assert est.weight_noise_scale_ == correct(2000, 1.0) / 2  # the bug is live
    assert _weights_audit().epsilon_lower > PIECE_EPS / 3


# ----------------------------------------------------------------- means
# Lemma 5.10 is tight for a general K in the unit ball: p = 1, x in [-1, 1],
# damping b = 20, cells 0 and 1 each hold b rows equal to -1; the row x = +1
# sits in cell 0 (D) or cell 1 (D'). Each damped mean moves by 2/(b+1): l1
# change 4/(b+1), loss (eps/3) b/(b+1) = 0.952 at eps = 3 (claim 1). The
# partition is an input of the piece, so any (x, label) change is a
# neighbour. Audit bound ~0.83; half the noise (true 1.9): ~1.7.
B = 20.0
X_MEANS = np.concatenate([[1.0], -np.ones(2 * int(B))])[:, None]
LABELS_M_D = np.array([0] * (int(B) + 1) + [1] * int(B))
LABELS_M_D_PRIME = np.array([1] + [0] * int(B) + [1] * int(B))


def _means_audit(seed=0):
    _, y_d, _ = _damping.damped_microaggregation(X_MEANS, LABELS_M_D, 2, B)
    _, y_dp, _ = _damping.damped_microaggregation(X_MEANS, LABELS_M_D_PRIME, 2, B)
    assert np.abs(y_d - y_dp).sum() == pytest.approx(4 / (B + 1))
    scale = damped_module.mean_noise_scale(1, B, PIECE_EPS)
    scores = []
    for i, y in enumerate((y_d, y_dp)):
        noisy = NoiseSource(100 * seed + 2 + i).laplace(np.tile(y, (RUNS, 1, 1)), scale)
        scores.append(
            np.minimum(noisy[:, 0, 0] - y_d[0, 0], y_d[1, 0] - noisy[:, 1, 0])
        )
    return audit_epsilon(*scores, alpha=ALPHA)


def test_mean_piece_audit_passes():
    result = _means_audit()
    assert 0.5 < result.epsilon_lower < PIECE_EPS / 3


def test_mean_piece_audit_flags_half_the_noise(monkeypatch):
    correct = damped_module.mean_noise_scale
    monkeypatch.setattr(
        damped_module, "mean_noise_scale", lambda p, b, eps: correct(p, b, eps) / 2
    )
    assert _means_audit().epsilon_lower > PIECE_EPS / 3


# ----------------------------------------------------- the whole estimator
# p = 1, box [0, 1], t = 1 (PVEC on the 0-sphere {-1, +1} is data-independent),
# alpha = 0.5 (covering -1, -.5, 0, .5, 1), b = 4, n = 20. Nineteen rows at 0.5;
# row 0 is 1.0 in D and 0.0 in D': it moves between the cells of 1 and of 0.
# Statistic: the joint tail min(w_bar(cell of 1) - 1/n, 0 - w_bar(cell of 0)),
# cells found through the released direction v = +-1. At eps = 2 the audit
# bound is about 0.35 (claim 2); with the planted bug (weights alone 4-DP)
# about 2.6-2.7 (2 seeds checked).
E2E_EPS = 2.0
E2E_RUNS = 2000
E2E_N = 20
E2E_PARAMS = dict(
    epsilon=E2E_EPS,
    domain="box",
    bounds=(0.0, 1.0),
    n_components=1,
    alpha=0.5,
    damping=4.0,
    parameters="paper",
    centre=None,  # the paper's variant; the centred default is audited below
)


def _e2e_audit():
    X_d = np.full((E2E_N, 1), 0.5)
    X_d[0, 0] = 1.0
    X_dp = X_d.copy()
    X_dp[0, 0] = 0.0
    est = DampedPrivateSynthesizer(**E2E_PARAMS)
    scores = []
    for k, X in enumerate((X_d, X_dp)):
        s = np.empty(E2E_RUNS)
        for r in range(E2E_RUNS):
            est.set_params(random_state=k * E2E_RUNS + r).fit(X)
            v = est.components_[0, 0]
            points = est.covering_.points[:, 0]
            at_one = np.argmin(np.abs(points - v))
            at_zero = np.argmin(np.abs(points))
            s[r] = min(est.weights_[at_one] - 1 / E2E_N, -est.weights_[at_zero])
        scores.append(s)
    return audit_epsilon(*scores, alpha=ALPHA)


def test_estimator_audit_passes():
    assert _e2e_audit().epsilon_lower < E2E_EPS


def test_estimator_audit_flags_add_remove_calibration(monkeypatch):
    monkeypatch.setattr(
        damped_module, "weight_noise_scale", lambda n, eps: 1 / (n * eps)
    )
    assert _e2e_audit().epsilon_lower > E2E_EPS


# ------------------------------------------------------------ centred cube
# The centred mechanism's own constants: PROJ scale n eps/(6 t M^2) with
# M = 1/2, mean noise 12 sqrt(p) R_1/(b eps) with R_1 = 1/2. PVEC worst case on
# the centred cube, p = 2: x - c = (1, 1)/(2 sqrt 2) and (1, -1)/(2 sqrt 2) are
# orthogonal with |x - c|^2 = M^2 = 1/4 (spread 2 M^2, the bound). D holds
# both, D' the second twice; statistic: the squared coordinate along the first.
def _pvec_centred_audit(scale_factor=1.0, seed=0):
    a = np.array([1.0, 1.0]) / (2 * np.sqrt(2))
    b = np.array([1.0, -1.0]) / (2 * np.sqrt(2))
    scores = []
    for i, X in enumerate((np.stack([a, b]), np.stack([b, b]))):
        scale = scale_factor * damped_module.projection_scale(2, PVEC_EPS, 1, 0.5)
        v = BinghamSampler(scale * second_moment(X)).sample(
            RUNS, np.random.default_rng([seed, 7, i])
        )
        scores.append((v @ (a / np.linalg.norm(a))) ** 2)
    return audit_epsilon(*scores, alpha=ALPHA)


def test_centred_pvec_piece_audit_passes():
    result = _pvec_centred_audit()
    assert 1.0 < result.epsilon_lower < PVEC_EPS / 3


def test_centred_pvec_piece_audit_flags_doubled_scale():
    assert _pvec_centred_audit(scale_factor=2.0).epsilon_lower > PVEC_EPS / 3


# Means on the centred cube, p = 1, x in [0, 1], c = 1/2: 2b rows at 0, the row
# at 1 in cell 0 (D) or cell 1 (D'); each centred damped mean moves by
# 1/(b+1): l1 change 2/(b+1) = 4 R_1/(b+1), loss (eps/3) b/(b+1) at R_1 = 1/2.
X_MEANS_C = np.concatenate([[1.0], np.zeros(2 * int(B))])[:, None]


def _means_centred_audit(noise_factor=1.0, seed=0):
    c = np.array([0.5])
    _, y_d, _ = _damping.damped_microaggregation(X_MEANS_C, LABELS_M_D, 2, B, c)
    _, y_dp, _ = _damping.damped_microaggregation(X_MEANS_C, LABELS_M_D_PRIME, 2, B, c)
    assert np.abs(y_d - y_dp).sum() == pytest.approx(2 / (B + 1))
    scale = noise_factor * damped_module.mean_noise_scale(1, B, PIECE_EPS, 0.5)
    scores = []
    for i, y in enumerate((y_d, y_dp)):
        noisy = NoiseSource(100 * seed + 5 + i).laplace(np.tile(y, (RUNS, 1, 1)), scale)
        scores.append(
            np.minimum(noisy[:, 0, 0] - y_d[0, 0], y_d[1, 0] - noisy[:, 1, 0])
        )
    return audit_epsilon(*scores, alpha=ALPHA)


def test_centred_mean_piece_audit_passes():
    assert 0.5 < _means_centred_audit().epsilon_lower < PIECE_EPS / 3


def test_centred_mean_piece_audit_flags_half_the_noise():
    assert _means_centred_audit(noise_factor=0.5).epsilon_lower > PIECE_EPS / 3


# The whole centred error-bound variant (parameters="bound", the default before
# the block-aware release; the fixed plan of the e2e audit above): same data;
# with centre 1/2 the rows at 0.5 project to 0, the moving row to +-1 (radius
# M = 1/2 rescales the covering).
def _e2e_centred_audit():
    X_d = np.full((E2E_N, 1), 0.5)
    X_d[0, 0] = 1.0
    X_dp = X_d.copy()
    X_dp[0, 0] = 0.0
    params = dict(E2E_PARAMS, parameters="bound", centre="cube")
    est = DampedPrivateSynthesizer(**params)
    scores = []
    for k, X in enumerate((X_d, X_dp)):
        s = np.empty(E2E_RUNS)
        for r in range(E2E_RUNS):
            est.set_params(random_state=7 * E2E_RUNS + k * E2E_RUNS + r).fit(X)
            v = est.components_[0, 0]
            points = est.covering_.points[:, 0]
            at_one = np.argmin(np.abs(points - v))
            at_zero = np.argmin(np.abs(points + v))
            s[r] = min(est.weights_[at_one] - 1 / E2E_N, -est.weights_[at_zero])
        scores.append(s)
    return audit_epsilon(*scores, alpha=ALPHA)


def test_centred_estimator_audit_passes():
    assert _e2e_centred_audit().epsilon_lower < E2E_EPS


def test_centred_estimator_audit_flags_add_remove_calibration(monkeypatch):
    monkeypatch.setattr(
        damped_module, "weight_noise_scale", lambda n, eps: 1 / (n * eps)
    )
    assert _e2e_centred_audit().epsilon_lower > E2E_EPS


# ------------------------------------------------ the block-aware default
# parameters="optimal": PROJ about the blocks' centroid at scale
# n eps_1/(2 t M^2), noisy counts Lap(2/(n eps_2)), noisy centred sums
# Lap(Delta/eps_3) with Delta = max(D_1, 2 R_s) from block_geometry. Each
# piece is audited against its own claim on its worst-case neighbours, with
# the estimator's own functions; the planted bugs halve the sums' noise and
# double the PROJ scale.
ONEHOT3 = damped_module.Blocks.from_spec([{"name": "a", "kind": "onehot", "width": 3}])


# Sums: one one-hot block of width 3 (D_1 = 2, sum centre 0, R_s = 1, Delta = 2).
# Cell 0 and cell 1 hold 5 rows e_3 each; the moving record is e_1 in cell 0
# (D) or e_2 in cell 1 (D'): the sums move by 1 in two coordinates (l1 = Delta),
# loss exactly eps_3 with the joint tail on both coordinates.
def _sums_audit(noise_factor=1.0, seed=0):
    g = damped_module.block_geometry(ONEHOT3)
    assert g.sensitivity == 2.0
    rows = np.eye(3)[[0] + [2] * 10]
    labels = np.array([0] + [0] * 5 + [1] * 5)
    rows_p = np.eye(3)[[1] + [2] * 10]
    labels_p = np.array([1] + [0] * 5 + [1] * 5)
    _, s_d, _ = _damping.damped_microaggregation(
        rows, labels, 2, 0.0, g.sum_centre, sums_only=True
    )
    _, s_dp, _ = _damping.damped_microaggregation(
        rows_p, labels_p, 2, 0.0, g.sum_centre, sums_only=True
    )
    assert np.abs(s_d - s_dp).sum() == g.sensitivity  # worst case attained
    scale = noise_factor * damped_module.sum_noise_scale(g.sensitivity, PIECE_EPS / 3)
    scores = []
    for i, s in enumerate((s_d, s_dp)):
        tiled = np.tile(s, (RUNS, 1, 1))
        noisy = NoiseSource(100 * seed + 11 + i).laplace(tiled, scale)
        scores.append(
            np.minimum(noisy[:, 0, 0] - s_d[0, 0], s_d[1, 1] - noisy[:, 1, 1])
        )
    return audit_epsilon(*scores, alpha=ALPHA)


def test_sums_piece_audit_passes():
    assert 0.5 < _sums_audit().epsilon_lower < PIECE_EPS / 3


def test_sums_piece_audit_flags_half_the_noise():
    assert _sums_audit(noise_factor=0.5).epsilon_lower > PIECE_EPS / 3


# PROJ on the blocks: two one-hot blocks of width 2 (centroid 1/2, M^2 = 1).
# Rows (1,0,1,0) and (1,0,0,1) centred are orthogonal with |u - c|^2 = M^2: the
# spread 2 M^2 is attained. D holds both, D' the second twice; statistic:
# (v.a)^2 - (v.b)^2, in which the privacy loss is monotone.
TWO_ONEHOT2 = damped_module.Blocks.from_spec(
    [{"name": "a", "kind": "onehot", "width": 2},
     {"name": "b", "kind": "onehot", "width": 2}]
)  # fmt: skip


# Two free dimensions of S^3 dilute the events: 150k runs (seeds 0-1: correct
# ~1.4-1.5 vs claim 3; doubled scale, true 6, ~3.34; at 20k runs the bug read
# 2.6-3.1, not reliably flagged).
PVEC_BLOCKS_RUNS = 150_000


def _pvec_blocks_audit(scale_factor=1.0, seed=0):
    g = damped_module.block_geometry(TWO_ONEHOT2)
    assert g.radius2 == 1.0
    a = np.array([1.0, 0.0, 1.0, 0.0]) - g.centroid
    b = np.array([1.0, 0.0, 0.0, 1.0]) - g.centroid
    assert a @ b == 0.0
    scale = scale_factor * damped_module.share_projection_scale(
        2, PVEC_EPS / 3, 1, g.radius2
    )
    scores = []
    for i, X in enumerate((np.stack([a, b]), np.stack([b, b]))):
        v = BinghamSampler(scale * second_moment(X)).sample(
            PVEC_BLOCKS_RUNS, np.random.default_rng([seed, 11, i])
        )
        # the log-likelihood ratio is monotone in this (Neyman-Pearson)
        scores.append((v @ a) ** 2 - (v @ b) ** 2)
    return audit_epsilon(*scores, alpha=ALPHA)


def test_blocks_pvec_piece_audit_passes():
    result = _pvec_blocks_audit()
    assert 1.0 < result.epsilon_lower < PVEC_EPS / 3


def test_blocks_pvec_piece_audit_flags_doubled_scale():
    assert _pvec_blocks_audit(scale_factor=2.0).epsilon_lower > PVEC_EPS / 3


# The whole default estimator on the data of the e2e audits (box [0, 1], the
# cube geometry: centroid 1/2, M = 1/2): the moving row goes between the cells
# of +-1; the statistic is the same joint tail on the released weights. The
# planted bug calibrates the counts to add/remove with the whole budget,
# Lap(1/(n eps)) (1/10 of the correct 2/(n 0.2 eps)): the weights alone are
# then 2 eps-DP.
def _e2e_default_audit():
    X_d = np.full((E2E_N, 1), 0.5)
    X_d[0, 0] = 1.0
    X_dp = X_d.copy()
    X_dp[0, 0] = 0.0
    params = dict(E2E_PARAMS, parameters="optimal", centre="auto")
    est = DampedPrivateSynthesizer(**params)
    scores = []
    for k, X in enumerate((X_d, X_dp)):
        s = np.empty(E2E_RUNS)
        for r in range(E2E_RUNS):
            est.set_params(random_state=11 * E2E_RUNS + k * E2E_RUNS + r).fit(X)
            v = est.components_[0, 0]
            points = est.covering_.points[:, 0]
            at_one = np.argmin(np.abs(points - v))
            at_zero = np.argmin(np.abs(points + v))
            s[r] = min(est.weights_[at_one] - 1 / E2E_N, -est.weights_[at_zero])
        scores.append(s)
    return audit_epsilon(*scores, alpha=ALPHA)


def test_default_estimator_audit_passes():
    assert _e2e_default_audit().epsilon_lower < E2E_EPS


def test_default_estimator_audit_flags_add_remove_calibration(monkeypatch):
    monkeypatch.setattr(
        damped_module, "count_noise_scale", lambda n, eps: 1 / (n * eps / 0.2)
    )
    assert _e2e_default_audit().epsilon_lower > E2E_EPS
