"""Tests of the exact Bingham sampler and PVEC / PROJ (:cite:`Boedihardjo2024` §5.1).

Statistical tests use fixed seeds; each states its false-failure rate (the
probability that a *correct* sampler fails it on a fresh seed).
"""

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from skdp_synth.mechanisms import BinghamSampler, bingham_envelope, proj, pvec
from skdp_synth.mechanisms.bingham import _complement_basis


# --------------------------------------------------------------- reference
def exact_moments_3d(l2, l3):
    """``E[x_i^2]``, i = 1..3, for the density ``exp(-l2 x2^2 - l3 x3^2)`` on S^2.

    Polar axis ``x_1 = u``; the azimuthal integral is a Bessel function:
    ``int_0^{2 pi} exp(-r (l2 cos^2 phi + l3 sin^2 phi)) dphi
    = 2 pi exp(-r (l2 + l3)/2) I_0(r (l3 - l2)/2)``, ``r = 1 - u^2``, and with
    ``cos^2 phi`` (resp. ``sin^2 phi``) inserted ``pi e^{..} (I_0 + I_1)``
    (resp. ``I_0 - I_1``). Scaled Bessel functions keep it finite; one 1-D
    quadrature per moment, refined near the poles ``u = +-1`` where the mass
    of a concentrated density sits.
    """
    lo = min(l2, l3)

    def integrand(u, kind):
        r = 1.0 - u * u
        c = r * (l3 - l2) / 2.0
        base = math.exp(-r * lo)
        i0, i1 = special.i0e(c), special.i1e(c)
        if kind == 0:
            return base * i0
        if kind == 1:
            return u * u * base * i0
        if kind == 2:
            return r * base * (i0 + i1) / 2.0
        return r * base * (i0 - i1) / 2.0

    scale = max(lo, 1.0)
    pts = sorted({min(k / scale, 0.5) for k in (0.1, 1.0, 10.0, 100.0)})

    def integral(kind):  # even integrand: 2 * int_0^1, with v = 1 - u
        f = lambda v: integrand(1.0 - v, kind)  # noqa: E731
        val, _ = integrate.quad(
            f, 0.0, 1.0, points=pts, limit=500, epsabs=0.0, epsrel=1e-12
        )
        return val

    Z = integral(0)
    return tuple(integral(k) / Z for k in (1, 2, 3))


# ------------------------------------------------------------- envelope
@pytest.mark.parametrize(
    "lam",
    [[0.0], [0.0, 0.0, 0.0], [0.0, 1.0], [0.0, 3.0, 50.0], [0.0] + [1e6] * 9],
)
def test_envelope_b_solves_kent_equation(lam):
    b, log_m = bingham_envelope(lam)
    q = len(lam)
    assert 1.0 <= b <= q
    assert np.sum(1.0 / (b + 2.0 * np.asarray(lam))) == pytest.approx(1.0, abs=1e-12)
    # M(b) = exp(-(q - b)/2) (q/b)^{q/2}  (module docstring, step 3)
    assert log_m == pytest.approx(-(q - b) / 2 + q / 2 * math.log(q / b), abs=1e-12)


@pytest.mark.parametrize("lam", [[1.0, 2.0], [0.0, -1.0], [0.0, np.inf], []])
def test_envelope_rejects_unshifted_or_bad_lambda(lam):
    with pytest.raises(ValueError):
        bingham_envelope(lam)


@pytest.mark.parametrize("q", [2, 3, 5, 20, 100])
@pytest.mark.parametrize("conc", [0.3, 10.0, 1e3, 1e6])
def test_acceptance_probability_never_exceeds_one(q, conc):
    """``exp(-y'Ly)(y'Oy)^{q/2} / M <= 1`` for every unit ``y``, with equality at
    ``y'Ly = (q - b)/2`` (the bound of step 3 is attained when reachable)."""
    rng = np.random.default_rng(q)
    lam = np.concatenate([[0.0], rng.uniform(0, conc, q - 1)])
    sampler = BinghamSampler(-np.diag(lam))
    y = rng.standard_normal((20000, q))
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    # paths from the axis of lambda = 0 to the axis of lambda_max, on which
    # s = y'Ly runs over [0, lambda_max] (a grid in s, and s* itself)
    order = np.argsort(sampler._lam)
    lam_max = sampler._lam[order[-1]]
    s_star = (q - sampler.b) / 2
    s_grid = np.concatenate([np.linspace(0, lam_max, 2001), [min(s_star, lam_max)]])
    mix = np.zeros((s_grid.size, q))
    mix[:, order[0]] = np.sqrt(1 - s_grid / lam_max)
    mix[:, order[-1]] = np.sqrt(s_grid / lam_max)
    for pts in (y, np.eye(q), mix):  # eigen-coordinates of Lambda
        assert np.max(sampler.log_acceptance(pts)) <= 1e-12
    if s_star <= lam_max:  # the supremum 0 is attained at s = s*
        assert sampler.log_acceptance(mix[-1:])[0] == pytest.approx(0.0, abs=1e-9)


def test_shift_invariance():
    """``A`` and ``A + c I`` define the same distribution and the same envelope."""
    A = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, -1.0]])
    s1, s2 = BinghamSampler(A), BinghamSampler(A + 7.5 * np.eye(3))
    assert s1.b == pytest.approx(s2.b, rel=1e-10)
    assert s1.log_m == pytest.approx(s2.log_m, rel=1e-10)


# --------------------------------------------------------- exact moments
CONCENTRATIONS_3D = [
    (0.0, 0.0),
    (1.0, 3.0),
    (10.0, 2.0),
    (100.0, 30.0),
    (1e3, 1e3),
    (1e4, 10.0),
    (1e6, 1e5),
]


def test_reference_moments_are_consistent():
    for l2, l3 in CONCENTRATIONS_3D:
        m = exact_moments_3d(l2, l3)
        assert sum(m) == pytest.approx(1.0, abs=1e-10)
    # uniform and Watson (l2 = l3) special cases in closed form
    assert exact_moments_3d(0.0, 0.0)[0] == pytest.approx(1 / 3, abs=1e-12)
    k = 5.0  # E[x1^2] for exp(k x1^2): 1/(2k) * (e^k/int_0^1 e^{k u^2} du - 1)
    inner = integrate.quad(lambda u: math.exp(k * u * u), 0, 1)[0]
    watson = (math.exp(k) / inner - 1.0) / (2.0 * k)
    assert exact_moments_3d(k, k)[0] == pytest.approx(watson, rel=1e-10)


@pytest.mark.parametrize("l2, l3", CONCENTRATIONS_3D)
def test_second_moments_match_numerical_integration_3d(l2, l3):
    """Sample means of ``x_i^2`` against the exact moments, z-test per moment.

    ``|z| < 4.42`` (two-sided p = 1e-5) on 2 independent moments for each of
    7 concentrations: false-failure rate <= 14 * 1e-5 = 1.4e-4 (Bonferroni).
    The parameter matrix is given unshifted and rotated, so the shift and the
    eigendecomposition are exercised too.
    """
    rng = np.random.default_rng(20240 + int(l2) % 97)
    Q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    A = Q @ np.diag([5.0, 5.0 - l2, 5.0 - l3]) @ Q.T  # exp(x'Ax) = e^5 exp(-...)
    x = BinghamSampler(A).sample(100_000, rng) @ Q  # back to the axes of Lambda
    exact = exact_moments_3d(l2, l3)
    for i in range(3):
        v = x[:, i] ** 2
        se = v.std(ddof=1) / math.sqrt(v.size)
        if exact[i] < 1e-12:
            assert v.mean() < 1e-9
            continue
        z = (v.mean() - exact[i]) / se
        assert abs(z) < 4.42, (i, v.mean(), exact[i], z)


def _inverted_sampler(A, size, rng):
    """The published bug (diffprivlib's Bingham): accept when U >= ratio'.

    Test-only: used to show that the moment test has the power to reject it.
    """
    s = BinghamSampler(A)
    q = s.dim
    out = []
    while len(out) < size:
        z = rng.standard_normal(q) * s._inv_sqrt_omega
        y = z / np.linalg.norm(z)
        st = y**2 @ s._lam
        ratio = math.exp(-st - s.log_m) / (1.0 + 2.0 * st / s.b) ** (q / 2)
        if rng.random() >= ratio:
            out.append(y)
    return np.array(out) @ s._U.T


def test_moment_test_detects_the_inverted_ratio_bug():
    """Power check: the same z-test rejects the inverted acceptance rule."""
    rng = np.random.default_rng(7)
    l2, l3 = 10.0, 2.0
    x = _inverted_sampler(-np.diag([0.0, l2, l3]), 4000, rng)
    exact = exact_moments_3d(l2, l3)
    v = x[:, 0] ** 2
    z = (v.mean() - exact[0]) / (v.std(ddof=1) / math.sqrt(v.size))
    assert abs(z) > 4.42


# ------------------------------------------------- brute-force comparison
def _brute_force(lam, size, rng):
    """Exact but slow: uniform proposals on the sphere, accept w.p. exp(-y'Ly) <= 1."""
    q = len(lam)
    out = np.empty((0, q))
    while out.shape[0] < size:
        y = rng.standard_normal((20000, q))
        y /= np.linalg.norm(y, axis=1, keepdims=True)
        keep = rng.random(20000) < np.exp(-(y**2) @ lam)
        out = np.vstack([out, y[keep]])
    return out[:size]


@pytest.mark.parametrize(
    "lam",
    [[0.0, 4.0], [0.0, 0.5, 6.0], [0.0, 1.0, 2.0, 8.0], [0.0, 3.0, 3.0, 3.0, 3.0]],
)
def test_matches_brute_force_sampler_in_low_dimension(lam):
    """Two-sample KS tests on ``y_1^2`` and on ``<y, u>^2`` for a fixed ``u``.

    Each at level 1e-4; 8 tests in all: false-failure rate <= 8e-4.
    """
    lam = np.asarray(lam)
    rng = np.random.default_rng(len(lam))
    ours = BinghamSampler(-np.diag(lam)).sample(20000, rng)
    ref = _brute_force(lam, 20000, rng)
    u = np.ones(len(lam)) / math.sqrt(len(lam))
    assert stats.ks_2samp(ours[:, 0] ** 2, ref[:, 0] ** 2).pvalue > 1e-4
    assert stats.ks_2samp((ours @ u) ** 2, (ref @ u) ** 2).pvalue > 1e-4


# ------------------------------------------------------- acceptance rate
def _limit_efficiency(q):
    """High-concentration limit of the acceptance rate (module docstring, step 5)."""
    return math.exp(
        (q - 1) / 2 * math.log(2 * math.e)
        + special.gammaln(q / 2)
        - 0.5 * math.log(math.pi)
        - q / 2 * math.log(q)
    )


def test_limit_efficiency_is_sqrt_2_over_eq():
    for q in (3, 10, 300):
        assert _limit_efficiency(q) == pytest.approx(
            math.sqrt(2 / (math.e * q)), rel=0.06
        )


@pytest.mark.parametrize("q", [3, 10, 30, 100])
@pytest.mark.parametrize("conc", [1.0, 1e2, 1e4, 1e6])
def test_acceptance_rate_does_not_collapse(q, conc):
    """Empirical acceptance >= 0.9 x the high-concentration limit.

    At least 2000 accepted draws; the binomial standard error of the rate is
    under 3% of it, so 0.9 is > 3.5 standard errors below the limit: false
    failure < 2.5e-4 per case, < 4e-3 for the 16 cases. (In
    ``benchmarks/bench_damped.py`` every measured rate, q = 3..300 and
    concentrations 1..1e6, is at least 0.98 x the limit.)
    """
    lam = np.concatenate([[0.0], np.full(q - 1, conc)])
    sampler = BinghamSampler(-np.diag(lam))
    sampler.sample(2000, np.random.default_rng(q))
    assert sampler.acceptance_rate >= 0.9 * _limit_efficiency(q)
    if conc >= 1e4:  # and it approaches the limit
        assert sampler.acceptance_rate <= 1.15 * _limit_efficiency(q)


def test_uniform_needs_no_rejection():
    sampler = BinghamSampler(np.zeros((4, 4)))
    x = sampler.sample(500, np.random.default_rng(0))
    assert sampler.acceptance_rate == 1.0
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0)


def test_one_dimensional_sphere_is_plus_minus_one():
    x = BinghamSampler([[123.0]]).sample(4000, np.random.default_rng(0))
    assert set(np.unique(x).tolist()) == {-1.0, 1.0}
    # fair coin: |mean| < 4.42 sd (false failure 1e-5)
    assert abs(x.mean()) < 4.42 / math.sqrt(4000)


@pytest.mark.parametrize("bad", [np.ones((2, 3)), np.zeros((0, 0)), [[np.nan]]])
def test_bad_matrix_rejected(bad):
    with pytest.raises(ValueError):
        BinghamSampler(bad)


# ------------------------------------------------------------ PVEC / PROJ
def test_pvec_is_one_draw_of_the_sampler():
    A = np.diag([4.0, 1.0, 0.0])
    a = pvec(A, np.random.default_rng(3))
    b = BinghamSampler(A).sample(1, np.random.default_rng(3))[0]
    np.testing.assert_array_equal(a, b)
    c = proj(A, 1, np.random.default_rng(3))[:, 0]
    np.testing.assert_array_equal(a, c)


def test_complement_basis_is_orthonormal():
    rng = np.random.default_rng(0)
    for q in (2, 3, 7):
        for _ in range(20):
            y = rng.standard_normal(q)
            y /= np.linalg.norm(y)
            B = _complement_basis(y)
            np.testing.assert_allclose(B.T @ B, np.eye(q - 1), atol=1e-12)
            np.testing.assert_allclose(B.T @ y, 0.0, atol=1e-12)


@pytest.mark.parametrize("t", [0, 1, 3, 5])
def test_proj_returns_orthonormal_directions(t):
    rng = np.random.default_rng(t)
    M = rng.standard_normal((5, 5))
    V = proj(M @ M.T, t, rng)
    assert V.shape == (5, t)
    np.testing.assert_allclose(V.T @ V, np.eye(t), atol=1e-10)


def test_proj_rejects_t_out_of_range():
    with pytest.raises(ValueError, match="0 <= t <= p"):
        proj(np.eye(3), 4, np.random.default_rng(0))


def test_proj_second_direction_is_bingham_on_the_complement():
    """``v_2 | v_1`` is PVEC of the compression of ``A`` to ``v_1^perp``.

    With ``A = diag(1e6, k, 0)``, ``v_1 = +-e_1`` up to 1e-3, and ``v_2`` is a
    point of the circle ``e_1^perp`` with density ``exp(k cos^2 theta)``:
    ``E[v_2(2)^2] = (1 + I_1(k/2)/I_0(k/2))/2``. z-test at |z| < 4.42
    (false failure 1e-5).
    """
    k = 3.0
    A = np.diag([1e6, k, 0.0])
    rng = np.random.default_rng(11)
    V = np.array([proj(A, 2, rng) for _ in range(4000)])
    assert np.all(np.abs(V[:, 0, 0]) > 1 - 1e-3)
    v = V[:, 1, 1] ** 2
    exact = (1 + special.i1(k / 2) / special.i0(k / 2)) / 2
    z = (v.mean() - exact) / (v.std(ddof=1) / math.sqrt(v.size))
    assert abs(z) < 4.42


def test_proj_recovers_leading_eigenvectors_at_high_concentration():
    rng = np.random.default_rng(5)
    Q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    A = Q @ np.diag([3e6, 2e6, 1e6, 0, 0, 0]) @ Q.T
    V = proj(A, 3, rng)
    P = V @ V.T
    np.testing.assert_allclose(P, Q[:, :3] @ Q[:, :3].T, atol=5e-3)
