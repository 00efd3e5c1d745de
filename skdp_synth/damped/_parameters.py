"""The damped release's data-independent parameters and noise scales.

Every size (``alpha``, ``t``, ``b``, the covering's cell count) and every
Laplace/PROJ scale of :class:`~skdp_synth.damped.DampedPrivateSynthesizer` is a
function of public quantities only (``n``, ``p``, ``epsilon``, the blocks'
sensitivity), fixed in the plan before the data is read. They live here, each
next to the :cite:`Boedihardjo2024` §5 derivation that makes it private, so the
privacy argument can be checked without the estimator's fitting code. The
mechanism the scales feed is described in :mod:`skdp_synth.damped._estimator`
(steps 1-7).

Privacy (replace-one, ``n`` public; Theorem 5.12) -- derivations
----------------------------------------------------------------
Budget split ``eps/3 + eps/3 + eps/3`` (sequential composition, Lemma 2.5;
everything after step 5, the noise, is post-processing, Remark 2.6).

*Projection.* Replacing ``x`` by ``x'`` changes ``A = (n eps/(6t)) S`` by
``D = (eps/(6t)) (x x^T - x' x'^T)``. The Bingham log-density ratio of
``PVEC(A)`` and ``PVEC(A + D)`` at any unit ``v`` is
``v^T D v - log E_{A+D}[exp(v^T D v)]``, which is at most
``lambda_max(D) - lambda_min(D)``. For ``D`` proportional to
``x x^T - x' x'^T`` that spread is
``sqrt((|x|^2 + |x'|^2)^2 - 4 <x, x'>^2) <= |x|^2 + |x'|^2 <= 2``, so each
PVEC call costs ``(eps/(6t)) * 2 = eps/(3t)``, and the compressions ``A_i``
of later calls have eigenvalues interlacing those of ``D``, hence the same
bound; ``t`` adaptive calls cost ``eps/3`` (Lemma 5.3). *Note:* :cite:`Boedihardjo2024`
reaches the same ``eps/(3t)`` through ``||S - S'|| <= 2/n`` and Lemma 5.1(3), which
as printed (ratio ``e^beta`` when ``||A - B|| <= beta``) is too strong by a
factor 2 in general (take ``A - B = beta diag(1, -1)``); the spread argument
above is what makes the constant ``6`` correct.

*Weights.* One replaced record moves at most one index between two cells,
so ``w`` moves by at most ``2/n`` in ``l1``; ``Lap(6/(n eps))`` is
``(2/n) / (6/(n eps)) = eps/3``-DP (Lemma 2.4).

*Damped means.* At most two ``y~_j`` change, each by at most
``(2/b) max_i ||x_i||_1 <= 2 sqrt(p)/b`` in ``l1`` (Lemmas 5.10-5.11, using
``||x||_1 <= sqrt(p) ||x||_2 <= sqrt(p)``); ``l1`` sensitivity of the tuple
``4 sqrt(p)/b``, and ``Lap(12 sqrt(p)/(b eps))`` is ``eps/3``-DP. The proof of
Lemma 5.10 treats ``|I| >= b + 1`` and ``|I| <= b`` only; for a non-integer
``b`` the remaining case ``b < |I| < b + 1`` gives
``xi = x_{n0}/|I| + (1/|I| - 1/b) sum_{I'} x_i`` with norm at most
``M/|I| + (|I| - b)(|I| - 1) M / (|I| b) <= 2M/b`` -- the lemma holds for
every ``b > 0``.

*Overrides.* ``n_components`` (t), ``alpha`` and ``damping`` (b) may be set
to any data-independent numbers: the sensitivity bounds above hold for any
``b > 0``, any ``t >= 1`` (the scale ``n eps/(6t)`` uses the same ``t`` as the
number of PVEC calls) and any covering (the partition is nearest-point for a
fixed, data-independent set of centres). ``t = 0`` -- which the default
formula gives for small ``n`` (``n < 1529`` at ``kappa = 1/3``) -- skips
PROJ: a single cell (the whole data), and the unspent ``eps/3`` is not
reallocated (the reported ``epsilon_`` stays ``epsilon``, a valid upper
bound). ``t`` is capped at ``p`` (PROJ needs ``t <= p``; ``p`` is public).

The default release (``parameters="optimal"``)
----------------------------------------------
Same skeleton, three sound changes (derived in ``doc/privacy.md``): (1) the
domain is the product of the public blocks' code sets
(:func:`~skdp_synth.damped.block_geometry`): PROJ runs on the second moment
about the blocks' centroid ``c_0`` at scale ``n eps_1/(2 t M^2)`` with ``M^2 = sum_a max
||u - c_0||^2`` (one-hot: ``1 - 1/w``); (2) the noise goes on the centred
cell **sums** ``T_j = sum_{F_j} (u_i - c_s)``, l1 sensitivity ``Delta =
max(D_1, 2 R_s)`` (a record changes within its cell by at most the l1
diameter ``D_1``, or leaves one cell and joins another, ``2 R_s``), and on
the counts (``2/n``); the damped means ``c + (T^_j - n^_j c)/max(n^_j, b)`` are
post-processing, so ``b`` no longer enters the noise; (3) ``eps`` is split
``OPTIMAL_SPLIT = (0.2, 0.2, 0.6)``, and with one cell all of it goes to the
sums (the count ``n`` is public): the noisy 1-way marginals. The plan
(:func:`block_plan`) reads only ``(n, p, eps, Delta)``.

*Slack on the cube.* The constants above are for a general ``K`` in the
unit ball. For ``K = p^{-1/2}[0, 1]^p`` (all our data) coordinates are
non-negative, and the same arguments give ``l1`` sensitivity ``2 sqrt(p)/b``
for the means (half) and a PVEC spread of at most ``sqrt(4/3)`` instead of
2. We keep the paper's constants -- the guarantee is then conservative on
the cube -- so that the code is the paper's algorithm; ``doc/privacy.md``
records the possible improvement.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "block_plan",
    "count_noise_scale",
    "default_alpha",
    "default_damping",
    "default_n_components",
    "mean_noise_scale",
    "projection_scale",
    "resolve_block_plan",
    "share_projection_scale",
    "sum_noise_scale",
    "weight_noise_scale",
]

#: Share of epsilon spent on each of PROJ, the weights and the means
#: (Boedihardjo2024 Theorem 5.12, proof).
BUDGET_SPLIT = (1 / 3, 1 / 3, 1 / 3)


# ------------------------------------------------------------ constants
def default_alpha(n):
    """Covering radius ``alpha = (log n)^{-1/4}`` (:cite:`Boedihardjo2024` §5.8;
    Algorithm 4 step 3).

    Examples
    --------
    >>> round(default_alpha(10**6), 4)
    0.5187
    """
    return float(math.log(n) ** -0.25)


def default_n_components(n, kappa, alpha):
    """Dimension ``t = floor(kappa log n / log(7/alpha))`` (:cite:`Boedihardjo2024`
    §5.8; Alg. 4 step 3).

    With this ``t``, the covering has ``s <= (7/alpha)^t <= n^kappa`` points.

    Examples
    --------
    >>> default_n_components(10**6, 1 / 3, default_alpha(10**6))
    1
    >>> default_n_components(1000, 1 / 3, default_alpha(1000))   # small n: t = 0
    0
    """
    return int(math.floor(kappa * math.log(n) / math.log(7.0 / alpha)))


def default_damping(n, p, kappa, epsilon):
    """Damping ``b = sqrt(p n^{1-kappa} / epsilon)`` (:cite:`Boedihardjo2024` eq. 5.17;
    Alg. 4 step 8).

    Examples
    --------
    >>> round(default_damping(10**6, 50, 1 / 3, 1.0), 3)
    707.107
    """
    return float(math.sqrt(p * n ** (1.0 - kappa) / epsilon))


def projection_scale(n, epsilon, t, radius=1.0):
    """Factor of ``S`` in ``PROJ((n eps/(6 t M^2)) S, t)`` (:cite:`Boedihardjo2024` Thm
    5.12; Alg. 4).

    ``M`` (``radius``) bounds ``||x - c||_2`` on the unit-ball scale: ``1`` for
    the paper's ``K`` in ``B_2^p`` (the paper's ``n eps/(6t)``), ``1/2`` for
    the cube centred at its centre. A replaced row moves ``S`` by
    ``((x-c)(x-c)^T - (x'-c)(x'-c)^T)/n``, of spread at most ``2 M^2``; each
    of the ``t`` PVEC calls is then ``eps/(3t)``-DP (module docstring).

    Examples
    --------
    >>> projection_scale(600, 1.0, 2)
    50.0
    >>> projection_scale(600, 1.0, 2, radius=0.5)     # centred cube: 4x
    200.0
    """
    return n * epsilon / (6.0 * t * radius * radius)


def weight_noise_scale(n, epsilon):
    """Laplace scale ``6/(n eps)`` of the weight noise ``rho_j``
    (:cite:`Boedihardjo2024` Theorem 5.12).

    ``l1`` sensitivity of ``w`` is ``2/n``; ``(2/n) / (6/(n eps)) = eps/3``.

    Examples
    --------
    >>> weight_noise_scale(600, 1.0)
    0.01
    """
    return 6.0 / (n * epsilon)


def mean_noise_scale(p, b, epsilon, radius=1.0):
    """Laplace scale ``12 sqrt(p) R_1/(b eps)`` of the mean noise
    (:cite:`Boedihardjo2024` Thm 5.12).

    ``sqrt(p) R_1`` (``radius`` is ``R_1``) bounds ``||x - c||_1`` on the
    unit-ball scale: ``R_1 = 1`` is the paper's ``||x||_1 <= sqrt(p)``,
    ``R_1 = 1/2`` the cube centred at its centre. ``l1`` sensitivity of
    ``(y~_j)`` is ``4 sqrt(p) R_1/b`` (Lemmas 5.10-5.11);
    ``(4 sqrt(p) R_1/b) / (12 sqrt(p) R_1/(b eps)) = eps/3``.

    Examples
    --------
    >>> mean_noise_scale(4, 10.0, 1.0)
    2.4
    >>> mean_noise_scale(4, 10.0, 1.0, radius=0.5)
    1.2
    """
    return 12.0 * math.sqrt(p) * radius / (b * epsilon)


def centre_radii(centre):
    """``(M, R_1)`` of the domain shifted by a public centre (module docstring).

    For records ``u`` in the cube ``[0, 1]^p`` and a public point ``c`` of
    the cube, ``x - c`` with ``x = u/sqrt(p)`` satisfies
    ``||x - c/sqrt(p)||_2 <= M`` and ``||x - c/sqrt(p)||_1 <= sqrt(p) R_1``
    with ``M = sqrt(mean(max(c, 1-c)^2))`` and ``R_1 = mean(max(c, 1-c))``,
    both attained at a vertex of the cube. The paper's origin ``c = 0``
    gives ``(1, 1)``; the cube's centre ``c = 1/2`` gives ``(1/2, 1/2)``.

    Examples
    --------
    >>> centre_radii(np.zeros(3))
    (1.0, 1.0)
    >>> centre_radii(np.full(4, 0.5))
    (0.5, 0.5)
    """
    far = np.maximum(np.asarray(centre, dtype=np.float64), 1.0 - np.asarray(centre))
    return float(math.sqrt(np.mean(far**2))), float(np.mean(far))


def lattice_count(t, alpha):
    """Number of points of :class:`~skdp_synth.geometry.LatticeCovering` ``(t, alpha)``.

    Counts ``z`` in ``Z^t`` with ``||z||^2 <= t/alpha^2`` by convolving the
    one-dimensional counts of squares (no enumeration), as a float.

    Examples
    --------
    >>> lattice_count(2, 0.8), lattice_count(0, 0.3)
    (9.0, 1.0)
    """
    if t == 0:
        return 1.0
    top = t / alpha**2
    if top > 1e6:
        return math.inf
    top = int(math.floor(top + 1e-9))
    one = np.zeros(top + 1)
    j = np.arange(int(math.isqrt(top)) + 1)
    one[j * j] = 2.0
    one[0] = 1.0
    counts = np.zeros(top + 1)
    counts[0] = 1.0
    for _ in range(t):
        counts = np.convolve(counts, one)[: top + 1]
    return float(counts.sum())


#: Search grid of the error-optimal rule (public constants).
OPTIMAL_MAX_COMPONENTS = 8
OPTIMAL_ALPHAS = tuple(round(float(a), 4) for a in np.geomspace(0.1, 1.0, 21))
#: Calibration of the approximation term of :func:`expected_error_proxy`:
#: ``4^{-2}`` removes the tensorization factor ``4^d`` (Boedihardjo2024 Theorem 3.10) at
#: ``d = 2``. With the paper's weight 1 the proxy chose ``t = 1`` (15-21
#: cells) on nassCDS (26k rows, 49 bits) from ``eps = 2`` and at ``n = 10^6``,
#: where ``t = 0`` measured TV2 0.14 vs 0.21 (``eps = 2``), 0.07 vs 0.14
#: (``n = 10^6``); see ``benchmarks/bench_damped.py``. Public constant.
APPROX_WEIGHT = 1.0 / 16.0


def expected_error_proxy(n, p, epsilon, t, alpha, b, d=2, radius=1.0, l1_radius=1.0):
    """Data-free expectation of the :cite:`Boedihardjo2024` Theorem 5.9 bound (the
    error-optimal objective).

    Theorem 5.9 (eq. 5.7) applied to the centred records ``(x - c)/M`` of
    the unit ball, multiplied back by ``M^d``, with every data-dependent term
    replaced by its data-free bound and every noise term by its expectation:

    ``M^d [W 4^d (4 alpha^2 + 1/sqrt(t+1) + 6 t^{7/2} p/(n eps))
    + 2 d s b/n + 2 E||rho||_1] + 2 d M^{d-1} E sum_j w_j ||r_j||_2``

    with ``s`` the covering size, ``E||rho||_1 = 6 s/(n eps)`` (Laplace
    means), ``E||r_j||_2 <= sqrt(2p) 12 sqrt(p) R_1/(b eps)``; the residual
    ``||(I-P)S(I-P)||_F <= tr(S)/sqrt(t+1) <= M^2/sqrt(t+1)`` (the
    eigenvalue argument of :cite:`Boedihardjo2024` Lemma 3.3) plus the PROJ estimation
    term of eq. 5.15 with ``C = 1`` and ``log^2 t`` replaced by 1. Only ``(n, p, eps)``
    and the public centre enter: minimising it costs no privacy. ``W`` is
    the calibration ``APPROX_WEIGHT = 1/16`` (the bound's ``W = 1`` overrates
    the gain of more cells; measured, see ``APPROX_WEIGHT``).

    Examples
    --------
    >>> round(expected_error_proxy(10**6, 10, 1.0, 1, 0.5, 500.0), 4)
    3.0749
    """
    M = radius
    s = lattice_count(t, alpha) if t > 0 else 1.0
    a2 = 4.0 * alpha**2 if t > 0 else 0.0
    residual = 1.0 / math.sqrt(t + 1) + 6.0 * t**3.5 * p / (n * epsilon)
    noise_w = 6.0 * s / (n * epsilon)
    noise_y = math.sqrt(2.0 * p) * 12.0 * math.sqrt(p) * l1_radius / (b * epsilon)
    return (
        M**d
        * (
            APPROX_WEIGHT * 4.0**d * (a2 + residual)
            + 2.0 * d * s * b / n
            + 2.0 * noise_w
        )
        + 2.0 * d * M ** (d - 1) * noise_y
    )


def optimal_damping(n, p, epsilon, s, radius=1.0, l1_radius=1.0):
    """The ``b`` minimising :func:`expected_error_proxy` for a covering of ``s`` cells.

    ``b* = sqrt(12 sqrt(2) p R_1 n / (M s eps))`` balances the damping term
    ``2 d M^d s b/n`` against the mean noise ``2 d M^{d-1} sqrt(2p)
    12 sqrt(p) R_1/(b eps)`` (the same balance as :cite:`Boedihardjo2024` eq. 5.17, with
    the expected noise in place of its order of magnitude); independent of ``d``.

    Examples
    --------
    >>> round(optimal_damping(10**6, 49, 1.0, 3, 0.5, 0.5), 1)
    16648.9
    """
    return float(
        math.sqrt(12.0 * math.sqrt(2.0) * p * l1_radius * n / (radius * s * epsilon))
    )


def optimal_parameters(n, p, epsilon, radius=1.0, l1_radius=1.0, d=2):
    """Error-optimal, data-independent ``(alpha, t, b)`` from public ``(n, p, eps)``.

    Minimises :func:`expected_error_proxy` (degree ``d = 2``) over
    ``t = 0..min(p, 8)``, ``alpha`` on the public grid ``OPTIMAL_ALPHAS``
    (0.1 to 1, geometric) with coverings of at most ``n`` cells, and ``b``
    in closed form (:func:`optimal_damping`). Ties go to the smaller model.

    Examples
    --------
    >>> optimal_parameters(22_000, 49, 1.0, 0.5, 0.5)[:2]    # one cell
    (1.0, 0)
    >>> alpha, t, b = optimal_parameters(10**7, 49, 10.0, 0.5, 0.5)
    >>> alpha, t, round(b)
    (0.1122, 1, 6994)
    """
    best = None
    for t in range(0, min(p, OPTIMAL_MAX_COMPONENTS) + 1):
        for alpha in OPTIMAL_ALPHAS if t > 0 else (1.0,):
            s = lattice_count(t, alpha)
            if s > max(n, 1):
                continue
            b = optimal_damping(n, p, epsilon, s, radius, l1_radius)
            value = expected_error_proxy(
                n, p, epsilon, t, alpha, b, d, radius, l1_radius
            )
            if best is None or value < best[0] - 1e-12:
                best = (value, alpha, t, b)
    return best[1], best[2], best[3]


# ------------------------------------------- the block-aware release (default)
#: Share of epsilon spent on PROJ, the noisy cell counts and the noisy cell
#: sums by ``parameters="optimal"`` when the plan has more than one cell (one
#: cell: everything on the sums). Measured on nassCDS and MplsStops:
#: ``(0.2, 0.2, 0.6)`` beat thirds and ``(0.1, 0.1, 0.8)`` at 26k rows (TV2 .034
#: vs .039 / .037) and matched them at 10^6. Public constant.
OPTIMAL_SPLIT = (0.2, 0.2, 0.6)
#: Covering radii and the largest ``t`` the block-aware plan chooses from.
PLAN_ALPHAS = (1.0, 0.7, 0.5)
PLAN_MAX_COMPONENTS = 8
#: At most this many cells (speed: the nearest-point search and the s x p
#: noisy sums grow with s; at t = 8 the KD-tree fallback dominated the fit).
PLAN_MAX_CELLS = 5000
#: The plan takes the largest covering with at most ``n eps_3/(K Delta)``
#: cells (``eps_3`` the sums' share, ``Delta`` their l1 sensitivity): a cell
#: of average size holds ``K`` noise units. ``K = 50`` calibrated on nassCDS
#: (26k rows, 42 bits; bootstrapped 10^5, 10^6), checked on MplsStops
#: (``benchmarks/bench_damped.py``). Public constant.
CELL_NOISE_RATIO = 50.0
#: Damping of the block-aware release in noise units of the sums:
#: ``b = DAMPING_UNITS * Delta/eps_3`` (post-processing). Public constant.
DAMPING_UNITS = 2.0


def block_plan(n, p, epsilon, sensitivity):
    """Data-independent ``(alpha, t, b, split)`` of ``parameters="optimal"``.

    From the public ``(n, p, eps)`` and the blocks' sum sensitivity
    ``Delta`` only: the most directions ``t <= min(p, 8)`` for which some
    ``LatticeCovering(t, alpha)``, ``alpha`` in ``PLAN_ALPHAS``, has at most
    ``n eps_3/(CELL_NOISE_RATIO Delta)`` cells (and at most
    ``PLAN_MAX_CELLS``), and the largest such covering for that ``t``;
    ``eps_3 = OPTIMAL_SPLIT[2] eps``. (Directions first: at 10^6 rows of
    nassCDS ``t = 4`` with 89 cells beat ``t = 3`` with 81, TV2 .020 vs .022;
    on MplsStops at ``eps = 10`` the largest covering, ``t = 3`` with 179
    cells, lost to ``t = 4``, see ``benchmarks/bench_damped.py``.)
    With one cell (``t = 0``) the split is ``(0, 0, 1)``: no projection,
    the count is the public ``n``, and the whole budget goes to the sums.
    ``b = DAMPING_UNITS Delta/eps_3``.

    Examples
    --------
    >>> block_plan(26_217, 42, 1.0, 18.0)[:2]      # nassCDS: 13 cells
    (0.7, 2)
    >>> block_plan(1000, 42, 1.0, 18.0)            # one cell
    (1.0, 0, 36.0, (0.0, 0.0, 1.0))
    """
    eps3 = OPTIMAL_SPLIT[2] * epsilon
    cap = min(n * eps3 / (CELL_NOISE_RATIO * sensitivity), PLAN_MAX_CELLS)
    alpha, t, s = 1.0, 0, 1.0
    for tt in range(1, min(p, PLAN_MAX_COMPONENTS) + 1):
        for a in PLAN_ALPHAS:
            ss = lattice_count(tt, a)
            if ss <= cap and (tt > t or ss > s):
                alpha, t, s = a, tt, ss
    split = OPTIMAL_SPLIT if t > 0 else (0.0, 0.0, 1.0)
    b = DAMPING_UNITS * sensitivity / (split[2] * epsilon)
    return alpha, t, float(b), split


def resolve_block_plan(
    n, p, epsilon, sensitivity, n_components=None, alpha=None, damping=None
):
    """:func:`block_plan` with the user's data-independent overrides applied.

    An override of ``t`` or ``alpha`` keeps the rest of the plan; ``t > 0``
    always uses ``OPTIMAL_SPLIT`` (and its ``b``), ``t = 0`` the split
    ``(0, 0, 1)``. Any fixed ``(t, alpha, b)`` keeps the guarantee.

    Examples
    --------
    >>> resolve_block_plan(1000, 42, 1.0, 18.0, n_components=1)
    (1.0, 1, 60.0, (0.2, 0.2, 0.6))
    """
    a0, t0, b0, _ = block_plan(n, p, epsilon, sensitivity)
    t = t0 if n_components is None else int(n_components)
    if t > p:
        raise ValueError(f"n_components={t} exceeds the number of features p={p}")
    a = a0 if alpha is None else float(alpha)
    split = OPTIMAL_SPLIT if t > 0 else (0.0, 0.0, 1.0)
    if damping is not None:
        b = float(damping)
    else:
        b = DAMPING_UNITS * sensitivity / (split[2] * epsilon)
    return a, t, float(b), split


def sum_noise_scale(sensitivity, epsilon_sums):
    """Laplace scale ``Delta/eps_3`` of the noisy centred cell sums (cube scale).

    One replaced record changes the centred sums ``T_j = sum_{F_j} (u_i - c_s)``
    by ``u' - u`` in one cell (l1 at most the diameter ``D_1``) or by
    ``-(u - c_s)`` and ``+(u' - c_s)`` in two cells (at most ``2 R_s``):
    ``Delta = max(D_1, 2 R_s)`` (:class:`BlockGeometry`), and
    ``Delta / (Delta/eps_3) = eps_3``.

    Examples
    --------
    >>> sum_noise_scale(18.0, 0.6)
    30.0
    """
    return sensitivity / epsilon_sums


def count_noise_scale(n, epsilon_counts):
    """Laplace scale ``2/(n eps_2)`` of the weights ``|F_j|/n`` (l1 sensitivity 2/n).

    Examples
    --------
    >>> count_noise_scale(1000, 0.2)
    0.01
    """
    return 2.0 / (n * epsilon_counts)


def share_projection_scale(n, epsilon_proj, t, radius2):
    """``n eps_1/(2 t M^2)``: PROJ's factor of the second moment about the centroid.

    ``S = (1/n) sum (u_i - c)(u_i - c)^T`` on the cube scale with
    ``||u - c||_2^2 <= M^2 = radius2`` (:class:`BlockGeometry`): a replaced
    record moves ``scale * S`` by ``(scale/n)((u-c)(u-c)^T - (u'-c)(u'-c)^T)``,
    whose eigenvalue spread is at most ``(scale/n) 2 M^2 = eps_1/t`` per PVEC
    call (module docstring), ``eps_1`` over the ``t`` calls.

    Examples
    --------
    >>> share_projection_scale(1000, 0.2, 2, 5.0)
    10.0
    """
    return n * epsilon_proj / (2.0 * t * radius2)
