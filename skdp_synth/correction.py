"""Reweight a set of points so that linear statistics match given targets.

This is the convex core of *marginal correction* (:cite:`Boedihardjo2022`, Theorems 3.6
and 8.1): given points ``s_1..s_m`` and statistics ``f_J`` (Walsh functions
of degree <= d, marginal-cell indicators, any linear query), find a
probability vector ``h`` on the points with

    minimise  ||h - u||_2          (u: the prior, uniform 1/m by default)
    subject to  F^T h = b,  sum(h) = 1,  lower <= h <= upper,

where ``F[i, J] = f_J(s_i)`` and ``b`` are the targets. When no such ``h``
exists (targets outside what the points and bounds can express -- e.g. noisy
released marginals), we solve it lexicographically instead: first the
smallest achievable ``||F^T h - b||_2`` (phase 1), then the ``h`` closest to
``u`` among those achieving it (phase 2). ``F^T h`` is unique at the phase-1
optimum (the objective is strictly convex in it), so phase 2 only needs the
linear constraint ``F^T h = F^T h_1``. Both phases are quadratic programs
solved with cvxpy (Clarabel by default: interior point, accurate to ~1e-8).

Used by :class:`~skdp_synth.PrivateSampler` (:cite:`Boedihardjo2022` Algorithm 2) and by
:class:`~skdp_synth.ProjectedGaussianRelease` to turn released marginals into
synthetic rows (post-processing).

This module is the one home of reweighting: :func:`reweight_to_targets` (the
cvxpy QP above), the shrinkage LP and proximal QP of :cite:`Boedihardjo2022` Algorithm 2
with their solver dispatch (:func:`shrink_and_project`: the matrix-free Newton
solvers of :mod:`skdp_synth._ssn`, cvxpy as the fallback, BLAS threads
limited for small ``D``), and :func:`marginal_correction` built on them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ._linalg import numerical_rank
from ._ssn import Gram, SolverError, shrinkage_lp, ssn_box_qp
from .blocks import check_blocks
from .exceptions import InfeasibleProblemError
from .fourier import (
    as_binary,
    check_p_d,
    check_walsh_memory,
    degree_signs,
    marginals_to_walsh,
    sign_products,
    walsh_coefficients,
    walsh_dimension,
)

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike

    from .blocks import BlocksLike

__all__ = [
    "MarginalCorrection",
    "ReweightResult",
    "ShrinkageSolution",
    "marginal_correction",
    "reweight_to_targets",
    "shrink_and_project",
]


@dataclass(frozen=True)
class ReweightResult:
    """Output of :func:`reweight_to_targets`.

    Attributes
    ----------
    weights : ndarray of shape (m,)
        Non-negative, sums to one, within the bounds.
    residual : float
        ``||F^T h - b||_2`` achieved (0 up to solver tolerance when exact).
    exact : bool
        Whether the targets were met (residual below ``tol``).
    """

    weights: np.ndarray
    residual: float
    exact: bool


def _solve(problem, solver):
    import cvxpy as cp

    solvers = [solver] if solver else ["CLARABEL", "OSQP", "SCS"]
    last = None
    for name in solvers:
        try:
            problem.solve(solver=name)
        except (cp.error.SolverError, cp.error.DCPError) as exc:  # pragma: no cover
            last = exc
            continue
        if problem.status in ("optimal", "optimal_inaccurate"):
            return
        last = RuntimeError(f"solver {name} returned status {problem.status}")
    raise RuntimeError(f"the reweighting QP could not be solved: {last}")


def reweight_to_targets(
    features, targets, *, lower=0.0, upper=None, prior=None, tol=1e-7, solver=None
):
    """Weights on points whose statistics match ``targets`` (see module docstring).

    Parameters
    ----------
    features : array-like of shape (m, D)
        ``F[i, J]``: statistic ``J`` evaluated at point ``i``.
    targets : array-like of shape (D,)
        Target values ``b`` of the statistics.
    lower, upper : float or array-like of shape (m,), default=0.0 and None
        Bounds on each weight (``upper=None``: no upper bound).
    prior : array-like of shape (m,), default=None
        ``u``; uniform ``1/m`` if ``None``.
    tol : float, default=1e-7
        Residual below which the targets count as met.
    solver : str, default=None
        A cvxpy solver name; by default Clarabel, then OSQP, then SCS.

    Returns
    -------
    ReweightResult

    Examples
    --------
    >>> import numpy as np
    >>> points = np.array([[0.0], [1.0], [1.0], [1.0]])
    >>> r = reweight_to_targets(points, [0.5])     # make the mean 1/2
    >>> np.round(r.weights, 4).tolist(), r.exact
    ([0.5, 0.1667, 0.1667, 0.1667], True)
    """
    import cvxpy as cp

    F = np.asarray(features, dtype=np.float64)
    b = np.asarray(targets, dtype=np.float64).ravel()
    if F.ndim != 2 or F.shape[1] != b.shape[0]:
        raise ValueError(
            "features must be (m, D) with D = len(targets); "
            f"got {F.shape} and {b.shape}"
        )
    if not (np.all(np.isfinite(F)) and np.all(np.isfinite(b))):
        raise ValueError("features and targets must be finite")
    m = F.shape[0]
    u = np.full(m, 1.0 / m) if prior is None else np.asarray(prior, dtype=np.float64)
    lo = np.broadcast_to(np.asarray(lower, dtype=np.float64), (m,))
    hi = None
    if upper is not None:
        hi = np.broadcast_to(np.asarray(upper, dtype=np.float64), (m,))
    if lo.sum() > 1 + 1e-12 or (
        hi is not None and (hi.sum() < 1 - 1e-12 or np.any(hi < lo))
    ):
        raise ValueError(
            "the weight bounds admit no probability vector (need sum(lower) <= 1 "
            "<= sum(upper) and lower <= upper)"
        )

    h = cp.Variable(m)
    box = [cp.sum(h) == 1, h >= lo]
    if hi is not None:
        box.append(h <= hi)

    # Thin factorisation F = U S Vᵀ of rank k <= min(m, D), Fk = U S: then
    # ||Fᵀh - b||² = ||Fkᵀh - Vᵀb||² + const and Fᵀh = c <=> Fkᵀh = Vᵀc for
    # c in range(Fᵀ), so both phases are the same problems with k statistics
    # (and full-rank equality constraints). When m <= k, phase 1 is posed as a
    # dense m x m quadratic form, which the QP solvers handle much faster than
    # k auxiliary residuals (seconds instead of minutes for m = 1000, D = 2081).
    Uf, sf, Vtf = np.linalg.svd(F, full_matrices=False)
    k = numerical_rank(sf, F.shape)
    k = max(k, 1)
    Fk, Vk = Uf[:, :k] * sf[:k], Vtf[:k]
    bk = Vk @ b

    # phase 1: closest achievable statistics
    if m <= k:
        quad = cp.quad_form(h, cp.psd_wrap(Fk @ Fk.T)) - 2 * (Fk @ bk) @ h
    else:
        quad = cp.sum_squares(Fk.T @ h - bk)
    phase1 = cp.Problem(cp.Minimize(quad), box)
    _solve(phase1, solver)
    h1 = np.asarray(h.value, dtype=np.float64).copy()
    achieved = F.T @ h1
    residual = float(np.linalg.norm(achieved - b))
    exact = residual <= tol * max(1.0, float(np.linalg.norm(b)))
    goal = bk if exact else Fk.T @ h1

    # phase 2: closest to the prior among the weights achieving them (when
    # k = m the statistics determine h, so phase 1's h is the only choice)
    weights = h1
    if k < m:
        phase2 = cp.Problem(
            cp.Minimize(cp.sum_squares(h - u)), box + [Fk.T @ h == goal]
        )
        try:
            _solve(phase2, solver)
            weights = h.value
        except RuntimeError:
            # equality slightly inconsistent after phase 1's tolerance: keep phase 1
            weights = h1
    weights = np.clip(
        np.asarray(weights, dtype=np.float64), lo, None if hi is None else hi
    )
    weights /= weights.sum()
    residual = float(np.linalg.norm(F.T @ weights - b))
    exact = residual <= tol * max(1.0, float(np.linalg.norm(b)))
    return ReweightResult(weights, residual, exact)


# ============================================ Boedihardjo2022 Algorithm 2, steps 4-5
# The shrinkage LP and the proximal QP on the Walsh matrix, with their solver
# dispatch (Newton, cvxpy fallback) and thread limits: shared by
# PrivateSampler (Boedihardjo2022 Algorithm 2) and marginal_correction (Boedihardjo2022
# Thm 3.6/8.2).
@dataclass(frozen=True)
class ShrinkageSolution:
    """Output of :func:`shrink_and_project`."""

    weights: np.ndarray  # h*, sums to one
    shrinkage: float  # lam actually used (feasible upper bound on lam*)
    shrinkage_lower: float  # certified lower bound on lam*
    residual: float  # ||M^T h - target(lam)||_inf
    solver: str


def check_solver(solver):
    if solver not in ("auto", "newton", "cvxpy"):
        raise ValueError(f"solver must be 'auto', 'newton' or 'cvxpy', got {solver!r}")
    return solver


def _shrink_cvxpy(M, mu, nu, lp_lower, lp_upper):
    """Step 4 as an LP in ``(h, lam)``, solved by HiGHS through cvxpy (exact vertex)."""
    import cvxpy as cp

    m = M.shape[0]
    h = cp.Variable(m)
    lam = cp.Variable()
    problem = cp.Problem(
        cp.Minimize(lam),
        [
            M.T @ h == mu + lam * (nu - mu),
            h >= lp_lower / m,
            h <= lp_upper / m,
            lam >= 0,
            lam <= 1,
        ],
    )
    try:
        problem.solve(solver="HIGHS")
    except cp.error.SolverError as exc:  # pragma: no cover - solver specific
        raise SolverError(f"HiGHS failed on the shrinkage LP: {exc}") from None
    if problem.status not in ("optimal", "optimal_inaccurate"):  # pragma: no cover
        raise SolverError(f"HiGHS returned status {problem.status} for the LP")
    return float(np.clip(lam.value, 0.0, 1.0))


def _project_cvxpy(M, target, qp_lower, qp_upper, tol):
    """Step 5 via the shared QP :func:`reweight_to_targets`."""
    m = M.shape[0]
    result = reweight_to_targets(
        M, target, lower=qp_lower / m, upper=qp_upper / m, tol=tol
    )
    return result.weights


# The Newton solvers make many small BLAS calls on D x D matrices, where
# OpenBLAS threads cost more than they bring (measured: m=11521, D=211 fits in
# 0.5 s with one thread and 1.6 s with two on an idle 2-core machine; with
# other load, 15 s). Up to this D they run single-threaded (threadpoolctl,
# restored afterwards, as scikit-learn does in KMeans).
_SINGLE_THREAD_MAX_D = 1024


def shrink_and_project(A, gram, mu, lp_box, qp_box, *, solver, tol):
    """:cite:`Boedihardjo2022` Algorithm 2 steps 4-5 on ``A = M / sqrt(m)``.

    ``solver="auto"``: Newton, cvxpy if it fails. Returns a
    :class:`ShrinkageSolution`.
    """
    if solver != "cvxpy" and A.shape[1] <= _SINGLE_THREAD_MAX_D:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            return _solve_any(A, gram, mu, lp_box, qp_box, solver=solver, tol=tol)
    return _solve_any(A, gram, mu, lp_box, qp_box, solver=solver, tol=tol)


def _solve_any(A, gram, mu, lp_box, qp_box, *, solver, tol):
    if solver == "auto":
        try:
            return _solve_with(A, gram, mu, lp_box, qp_box, solver="newton", tol=tol)
        except SolverError:
            return _solve_with(A, gram, mu, lp_box, qp_box, solver="cvxpy", tol=tol)
    return _solve_with(A, gram, mu, lp_box, qp_box, solver=solver, tol=tol)


def _solve_with(A, gram, mu, lp_box, qp_box, *, solver, tol):
    """Steps 4-5 with one solver (see :mod:`skdp_synth._ssn` for the scaling)."""
    m, D = A.shape
    root_m = math.sqrt(m)
    c0 = root_m * mu
    c1 = A.T @ np.ones(m)  # = sqrt(m) M^T u
    nu = c1 / root_m
    (lp_lo, lp_hi), (qp_lo, qp_hi) = lp_box, qp_box
    if solver == "cvxpy":
        M = A * root_m
        lam = _shrink_cvxpy(M, mu, nu, lp_lo, lp_hi)
        lam_lower = lam
        target = mu + lam * (nu - mu)
        h = _project_cvxpy(M, target, qp_lo, qp_hi, tol)
    else:
        lam, lam_lower, _ = shrinkage_lp(A, c0, c1, lp_lo, lp_hi, gram=gram, tol=tol)
        target = mu + lam * (nu - mu)
        x = None
        # When the QP box equals the LP box (marginal_correction) lam may sit on
        # the boundary of feasibility; nudge it inward until the QP converges.
        for bump in (0.0, 1e-9, 1e-7, 1e-5):
            lam_try = min(1.0, lam + bump)
            target = mu + lam_try * (nu - mu)
            try:
                x, _, _, _ = ssn_box_qp(
                    A,
                    root_m * target,
                    np.ones(m),
                    np.full(m, float(qp_lo)),
                    np.full(m, float(qp_hi)),
                    gram=gram,
                    tol=tol,
                )
            except SolverError:
                continue
            lam = lam_try
            break
        if x is None:
            raise SolverError(
                "the proximal QP (Boedihardjo2022 Algorithm 2, step 5) failed"
            )
        h = x / m
    h = np.clip(h, qp_lo / m, qp_hi / m)
    h = h / h.sum()
    residual = float(np.abs(A.T @ h * root_m - target).max())
    lam_lower = float(min(lam_lower, lam))
    return ShrinkageSolution(h, float(lam), lam_lower, residual, solver)


# ============================================================ marginal correction
@dataclass(frozen=True)
class MarginalCorrection:
    """Result of :func:`marginal_correction`.

    Attributes
    ----------
    weights : ndarray of shape (m,)
        Probability weights on the sample's rows, in
        ``[density_lower/m, density_upper/m]``.
    shrinkage : float
        ``lam`` in ``[0, 1]``: the weighted sample has the marginals of
        ``(1 - lam) * target + lam * sample`` (0 when the target is met
        exactly).
    residual : float
        ``max_J |sum_i weights_i w_J(s_i) - goal_J|`` in Walsh coefficients,
        ``goal = (1 - lam) mu_target + lam mu_sample``: the solver's accuracy.
    """

    weights: np.ndarray
    shrinkage: float
    residual: float


def marginal_correction(
    sample: ArrayLike,
    target: ArrayLike,
    *,
    d: int = 2,
    density_lower: float = 0.0,
    density_upper: float = np.inf,
    solver: Literal["auto", "newton", "cvxpy"] = "auto",
    tol: float = 1e-9,
    blocks: BlocksLike | None = None,
) -> MarginalCorrection:
    """Reweight a sample so that its marginals up to degree ``d`` match a target.

    :cite:`Boedihardjo2022`, Theorems 3.6 and 8.2 (marginal correction): a sample of a
    regular density can be reweighted *exactly* to the low-degree marginals of
    another density, by weights close to uniform. This function finds the
    weights closest to uniform (in ``L^2``) with ``density_lower/m <= h_i <=
    density_upper/m`` whose marginals equal the target's -- the proximal QP
    of :cite:`Boedihardjo2022` Algorithm 2, step 5. When no such weights exist, the
    target is first moved toward the sample's own marginals by the smallest fraction
    ``lam`` that makes it reachable (the shrinkage LP of step 4), and
    ``lam`` is reported.

    Marginal correction reads only ``sample`` and ``target``; applied to
    released (DP) marginals it is post-processing.

    Parameters
    ----------
    sample : array-like of shape (m, p)
        Boolean (0/1) rows to reweight.
    target : array-like of shape (n, p) or (D,)
        Either Boolean rows, whose marginals are the target, or a vector of
        conjunction marginals ``P(x_j = 1 for all j in J)`` for every
        ``|J| <= d`` in the order of :func:`~skdp_synth.fourier.walsh_subsets`
        (``J = ()`` first, value 1).
    d : int, default=2
        Degree of the marginals to match.
    density_lower, density_upper : float, default=0.0 and inf
        Bounds on the weights in units of ``1/m``; need ``0 <= density_lower
        < 1 < density_upper``.
    solver : {"auto", "newton", "cvxpy"}, default="auto"
        ``"newton"``: the matrix-free semismooth Newton solvers of
        ``skdp_synth._ssn``; ``"cvxpy"``: HiGHS (LP) and Clarabel through
        :func:`skdp_synth.correction.reweight_to_targets` (QP), exact but slow
        beyond ``m D ~ 10^6``; ``"auto"``: Newton, falling back to cvxpy if
        Newton fails to converge.
    tol : float, default=1e-9
        Accuracy of the marginal constraints, in Walsh coefficients.
    blocks : None, Blocks or list, default=None
        The columns' categorical blocks (:class:`~skdp_synth.blocks.Blocks`).
        When given, every row of ``sample`` must be a valid code of every
        block (weights only move mass between the sample's rows, so the
        reweighted sample is then supported on valid rows); invalid rows are
        rejected with a ``ValueError``. The Walsh parametrisation needs
        linearly independent Walsh functions on the sample, which valid rows
        of a one-hot block (bits summing to 1) never give, nor thermometer
        blocks of width ``>= 2`` at ``d >= 2``: those raise
        :class:`~skdp_synth.exceptions.InfeasibleProblemError`.

    Returns
    -------
    MarginalCorrection

    References
    ----------
    :cite:`Boedihardjo2022` Theorems 3.6 and 8.2 (marginal correction) and
    Algorithm 2, step 5.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> sample = (rng.random((400, 4)) < 0.5).astype(int)
    >>> data = (rng.random((1000, 4)) < 0.6).astype(int)
    >>> fix = marginal_correction(sample, data, d=2)
    >>> fix.shrinkage
    0.0
    >>> from skdp_synth.fourier import walsh_coefficients, walsh_matrix
    >>> got = walsh_matrix(sample, 2).T @ fix.weights
    >>> bool(np.allclose(got, walsh_coefficients(data, 2), atol=1e-8))
    True
    """
    S = as_binary(sample, "sample")
    m, p = S.shape
    if blocks is not None:
        blocks = check_blocks(blocks, p)
        bad = blocks.invalid_blocks(S)
        if bad:
            n_bad = int((~blocks.is_valid(S)).sum())
            raise ValueError(
                f"{n_bad} sample rows are not valid for the blocks: invalid codes "
                f"in blocks {sorted(bad)}. Repair them first (Blocks.repair)."
            )
    check_p_d(p, d)
    D = walsh_dimension(p, d)
    target = np.asarray(target, dtype=np.float64)
    if target.ndim == 2:
        if target.shape[1] != p:
            raise ValueError(
                f"target has {target.shape[1]} columns, the sample has {p}"
            )
        mu = walsh_coefficients(target, d) * degree_signs(p, d)
    elif target.ndim == 1:
        if target.shape[0] != D:
            raise ValueError(
                f"a target marginal vector for p={p}, d={d} has {D} entries "
                f"(see walsh_subsets), got {target.shape[0]}"
            )
        if not np.all(np.isfinite(target)):
            raise ValueError("target marginals must be finite")
        mu = marginals_to_walsh(target, p, d) * degree_signs(p, d)
    else:
        raise ValueError("target must be 2-D rows or a 1-D vector of marginals")
    lo, hi = float(density_lower), float(density_upper)
    if not (0.0 <= lo < 1.0 < hi):
        raise ValueError(
            "need 0 <= density_lower < 1 < density_upper (the uniform weights "
            f"1/m must lie strictly inside), got {lo!r} and {hi!r}"
        )
    if m < D:
        raise ValueError(
            f"the sample has m={m} rows but there are D={D} marginal constraints "
            f"of degree <= {d}; at least D rows are needed"
        )
    check_walsh_memory(m, D)
    # the solver's mirrored signs 2x - 1 (module docstring, "Walsh helpers")
    A = sign_products(2.0 * S - 1.0, d)
    A *= 1.0 / math.sqrt(m)
    method = check_solver(solver)
    gram = Gram(A)
    if np.linalg.eigvalsh(gram.matrix)[0] <= 1e-12:
        hint = ""
        if blocks is not None and not blocks.is_all_binary:
            hint = (
                ". With categorical blocks this is structural: the bits of a "
                "one-hot block sum to 1, and a thermometer block's codes leave "
                "products of its bits dependent at d >= 2, so the Walsh functions "
                "of valid rows are linearly dependent"
            )
        raise InfeasibleProblemError(
            "the sample's Walsh matrix is rank deficient (too few distinct rows "
            f"for degree {d}): some marginals cannot be adjusted independently" + hint
        )
    sol = shrink_and_project(A, gram, mu, (lo, hi), (lo, hi), solver=method, tol=tol)
    return MarginalCorrection(sol.weights, sol.shrinkage, sol.residual)
