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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._linalg import numerical_rank

__all__ = ["ReweightResult", "reweight_to_targets"]


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
