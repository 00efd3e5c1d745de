"""Matrix-free solvers for the two convex problems of private sampling.

:cite:`Boedihardjo2022`, Algorithm 2, needs on a reduced space of ``m`` points with a
Walsh matrix ``M`` (``m x D``, entries +-1):

* the **shrinkage LP** (step 4): the smallest ``lam in [0, 1]`` such that some
  ``h`` in a box satisfies ``M^T h = (1 - lam) mu + lam M^T u``;
* the **proximal QP** (step 5): ``min ||h - u||_2`` over ``h`` in a (wider)
  box with ``M^T h = (1 - lam*) mu + lam* M^T u``.

Both have ``D`` *dense* equality constraints over ``m`` variables, so a
general LP/QP solver works on ``m * D`` non-zeros: HiGHS needs ~11 s and
Clarabel ~24 s for ``m = 11520, D = 211`` (measured, see
``benchmarks/bench_private_sampling.py``), and factorisation fill-in makes
them scale like ``m D^2`` per iteration with large constants. The structure
that helps is that the *dual* of either problem lives in ``R^D`` and that
the columns of ``M / sqrt(m)`` are nearly orthonormal (``M`` is
well-conditioned by construction, :cite:`Boedihardjo2022` §9).

Scaling used throughout: ``A = M / sqrt(m)``, ``x = m h`` (so the uniform
density is ``x = 1``) and ``c = sqrt(m) b`` for a target ``b`` of ``M^T h``;
then ``M^T h = b`` iff ``A^T x = c`` and ``||M^T h - b||_inf =
||A^T x - c||_inf / sqrt(m)``, the unit in which tolerances are stated.

Semismooth Newton on the dual (:func:`ssn_box_qp`)
    ``min (1/2 sigma) ||x - x0||^2  s.t.  B^T x = c,  lo <= x <= hi``
    has the concave dual ``q(y)`` with maximiser ``x(y) = clip(x0 + sigma B y,
    lo, hi)`` and gradient ``c - B^T x(y)``; its generalised Hessian is
    ``-sigma B_F^T B_F`` (``F``: coordinates strictly inside the box). Each
    Newton step solves one ``D x D`` system (formed from the free rows, or as
    the Gram matrix minus the bound rows, whichever is cheaper) and takes an
    *exact* line search along the direction -- the dual is piecewise
    quadratic along any line, so the maximiser is found by sorting the
    ``O(m)`` breakpoints. Exact line search makes the method globally
    convergent; piecewise linearity of ``x(y)`` makes it finite once the
    free set is identified. Cost per step ``O(m D + min(|F|, m - |F|) D^2 +
    D^3 + m log m)``.

Proximal point method for the shrinkage LP (:func:`shrinkage_lp`)
    The LP ``min lam`` over ``(x, lam)`` is solved by the proximal point
    method ``(x, lam)_{k+1} = argmin lam + (1/2 sigma_k) ||(x, lam) -
    (x, lam)_k||^2`` (Rockafellar 1976), whose subproblems are exactly the
    QP above with one extra coordinate ``lam`` (row ``-e`` appended to ``B``,
    ``e = c_1 - c_0``) and the linear term folded into the centre. Every
    subproblem is feasible (``x = 1, lam = 1`` is), every primal iterate is
    feasible for the LP, so ``lam_k`` is an upper bound on ``lam*``; the
    subproblem multiplier ``y`` gives the LP dual bound
    ``y^T c_0 - sum_i max(lo z_i, hi z_i) + min(0, 1 + y^T e)`` (``z = A y``),
    a certified lower bound. We stop when the two agree to ``gap_tol``, or
    when ``lam_k`` has stopped moving at the largest ``sigma`` (the dual
    bound closes more slowly than the primal value settles). The proximal
    point method terminates finitely on LPs; ``sigma`` grows tenfold per
    step from ``10 m`` up to ``1e3 m`` (larger values made the Newton
    subproblems slower than the extra outer steps they save).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.linalg.blas import dsyrk

__all__ = ["Gram", "SolverError", "gram_rows", "shrinkage_lp", "ssn_box_qp"]

_ROW_CHUNK = 4096  # rows per block when forming Gram matrices (bounds memory)


class SolverError(RuntimeError):
    """The matrix-free solver did not reach the requested accuracy."""


def gram_rows(A, rows=None):
    """``A[rows]^T A[rows]`` (symmetric, ``D x D``), in row blocks via BLAS syrk."""
    D = A.shape[1]
    G = np.zeros((D, D))
    if rows is None:
        rows = np.arange(A.shape[0])
    for s in range(0, len(rows), _ROW_CHUNK):
        block = np.ascontiguousarray(A[rows[s : s + _ROW_CHUNK]])
        if block.shape[0]:
            G += dsyrk(1.0, block, trans=1, lower=0)
    return np.triu(G) + np.triu(G, 1).T


class Gram:
    """``G = A^T A`` of the full matrix, with its Cholesky factor computed once.

    The factor preconditions the conjugate-gradient Newton solves: when most
    points are free, ``B_F^T B_F = G - A_B^T A_B`` is a small perturbation of
    ``G`` and preconditioned CG converges in a few iterations.
    """

    def __init__(self, A):
        self.matrix = gram_rows(A)
        self._factor = None
        # last directly factorised Newton matrix: (free mask, extra key, H, factor)
        self.last_newton = None

    def solve(self, v):
        if self._factor is None:
            self._factor = cho_factor(self.matrix, check_finite=False)
        return cho_solve(self._factor, v, check_finite=False)


# Newton systems with D at most this are always formed and factorised (exact,
# and cheap); above it, large free/bound sets use preconditioned CG.
_DIRECT_MAX_D = 256
_CG_MAX_ITER = 60


def _direct_direction(A, free_rows, bound_rows, gram, extra, extra_free, grad):
    """Form ``B_F^T B_F`` and solve; returns ``(d, H, factor or None)``."""
    D = A.shape[1]
    if gram is not None and len(bound_rows) < len(free_rows):
        H = gram.matrix - gram_rows(A, bound_rows)
    else:
        H = gram_rows(A, free_rows)
    if extra is not None and extra_free:
        H += np.outer(extra, extra)
    reg = 1e-12 * max(np.trace(H) / D, 1e-3)
    try:
        H[np.diag_indices(D)] += reg
        factor = cho_factor(H, check_finite=False)
        return cho_solve(factor, grad, check_finite=False), H, factor
    except LinAlgError:
        # cancellation in gram - A_B^T A_B: rebuild from the free rows and
        # use a pseudo-inverse (a regularised direction is still an ascent
        # direction, which is all the exact line search needs)
        H = gram_rows(A, free_rows)
        if extra is not None and extra_free:
            H += np.outer(extra, extra)
        w, V = np.linalg.eigh(H)
        w = np.maximum(w, 1e-10 * max(w.max(), 1e-300))
        return V @ ((V.T @ grad) / w), None, None


def _pcg(op, precond, grad, max_iter):
    """Preconditioned CG from 0; ``None`` if it has not converged."""
    d = np.zeros_like(grad)
    r = grad.copy()
    z = precond(r)
    q = z.copy()
    rz = r @ z
    target = 1e-10 * math.sqrt(max(rz, 0.0))
    for _ in range(max_iter):
        Hq = op(q)
        curv = q @ Hq
        if not curv > 0:
            break
        alpha = rz / curv
        d += alpha * q
        r -= alpha * Hq
        z = precond(r)
        rz_new = r @ z
        if math.sqrt(max(rz_new, 0.0)) <= target:
            return d
        q = z + (rz_new / rz) * q
        rz = rz_new
    return None


def _cached_direction(A, free, gram, extra_key, grad):
    """PCG preconditioned by the last factorised Newton matrix.

    Between Newton steps the free set changes in few points, so the new
    matrix is the cached one plus a low-rank change and CG needs about as
    many iterations as points changed -- instead of a new ``O(|F| D^2 +
    D^3)`` factorisation. ``None`` when there is no usable cache.
    """
    cache = gram.last_newton
    if cache is None or cache[1] != extra_key:
        return None
    prev_free, _, H_prev, factor = cache
    added = np.flatnonzero(free & ~prev_free)
    removed = np.flatnonzero(prev_free & ~free)
    changed = len(added) + len(removed)
    if changed > max(32, A.shape[1] // 4):
        return None
    A_add, A_rem = A[added], A[removed]

    def op(v):
        return H_prev @ v + A_add.T @ (A_add @ v) - A_rem.T @ (A_rem @ v)

    def precond(r):
        return cho_solve(factor, r, check_finite=False)

    return _pcg(op, precond, grad, min(_CG_MAX_ITER, 2 * changed + 10))


def _cg_direction(A, free_rows, bound_rows, gram, extra, extra_free, grad):
    """Preconditioned CG on ``B_F^T B_F d = grad``; ``None`` if it stalls.

    The operator uses whichever of the free or bound rows is the smaller set
    (``A_F^T A_F v`` or ``G v - A_B^T A_B v``); preconditioner ``G^{-1}``.
    Every CG iterate started at 0 is an ascent direction, so an inexact
    solve is safe with the exact line search.
    """
    if len(bound_rows) < len(free_rows):
        AB = A[bound_rows]

        def H(v):
            return gram.matrix @ v - AB.T @ (AB @ v)
    else:
        AF = A[free_rows]

        def H(v):
            return AF.T @ (AF @ v)

    def op(v):
        out = H(v)
        if extra is not None and extra_free:
            out = out + extra * (extra @ v)
        return out

    return _pcg(op, gram.solve, grad, _CG_MAX_ITER)


def _newton_direction(A, free, gram, extra, extra_free, grad):
    """Solve ``(B_F^T B_F) d = grad`` (regularised); ``B = [A; extra]``.

    Direct (form and factorise, ``O(min(|F|, |B|) D^2 + D^3)``) for small
    ``D`` or when the free set is barely larger than ``D`` (then ``B_F^T
    B_F`` may be nearly singular and CG would crawl); otherwise
    preconditioned CG at ``O(min(|F|, |B|) D + D^2)`` per iteration.
    """
    m, D = A.shape
    free_rows = np.flatnonzero(free)
    bound_rows = np.flatnonzero(~free)
    # the extra row (the LP's lam) enters H only when lam is free
    extra_key = (id(extra), extra_free) if extra is not None else None
    if gram is not None and D > _DIRECT_MAX_D:
        if len(free_rows) > 3 * D:
            d = _cg_direction(A, free_rows, bound_rows, gram, extra, extra_free, grad)
        else:
            d = _cached_direction(A, free, gram, extra_key, grad)
        if d is not None:
            return d
    d, H, factor = _direct_direction(
        A, free_rows, bound_rows, gram, extra, extra_free, grad
    )
    if gram is not None and factor is not None:
        gram.last_newton = (free.copy(), extra_key, H, factor)
    return d


def _exact_step(slope_c, u, w, lower, upper, sigma):
    """Maximiser ``t >= 0`` of the dual along a direction.

    Along ``y + t d`` the dual derivative is
    ``phi'(t) = d^T c - sum_i w_i clip(u_i + sigma t w_i, lo_i, hi_i)`` with
    ``u = x0 + sigma B y`` and ``w = B d``: decreasing and piecewise linear,
    with kinks where a coordinate enters or leaves the box interior. The
    kinks are sorted once and ``phi'`` is accumulated over them.
    """
    f0 = slope_c - w @ np.clip(u, lower, upper)
    if not f0 > 0:
        return 0.0
    nz = w != 0
    sw = sigma * w[nz]
    uz = u[nz]
    lo = lower[nz] if np.ndim(lower) else np.full(uz.shape, lower)
    hi = upper[nz] if np.ndim(upper) else np.full(uz.shape, upper)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_lo = (lo - uz) / sw
        t_hi = (hi - uz) / sw
    enter = np.minimum(t_lo, t_hi)  # free for t in (enter, leave)
    leave = np.maximum(t_lo, t_hi)
    curv = sigma * w[nz] ** 2
    free0 = (enter <= 0) & (leave > 0)
    slope0 = -float(curv[free0].sum())
    e_mask = (enter > 0) & np.isfinite(enter)
    l_mask = (leave > 0) & np.isfinite(leave)
    times = np.concatenate([enter[e_mask], leave[l_mask]])
    dslope = np.concatenate([-curv[e_mask], curv[l_mask]])
    if times.size == 0:
        if slope0 < 0:
            return -f0 / slope0
        raise SolverError("dual unbounded along the Newton direction (infeasible)")
    order = np.argsort(times, kind="stable")
    times, dslope = times[order], dslope[order]
    slope_after = slope0 + np.cumsum(dslope)
    seg_slope = np.concatenate([[slope0], slope_after[:-1]])
    dt = np.diff(np.concatenate([[0.0], times]))
    values = f0 + np.cumsum(seg_slope * dt)  # phi' at each kink
    hit = np.flatnonzero(values <= 0)
    if hit.size == 0:
        if slope_after[-1] < 0:
            return times[-1] - values[-1] / slope_after[-1]
        raise SolverError("dual unbounded along the Newton direction (infeasible)")
    k = hit[0]
    t_prev = times[k - 1] if k > 0 else 0.0
    v_prev = values[k - 1] if k > 0 else f0
    return t_prev - v_prev / seg_slope[k]


def ssn_box_qp(
    A,
    c,
    center,
    lower,
    upper,
    *,
    sigma=1.0,
    y0=None,
    gram=None,
    extra=None,
    tol=1e-9,
    max_iter=200,
):
    """Semismooth Newton on the dual of a box-constrained least-distance QP.

    Solves ``min (1/2 sigma) ||x - center||^2`` subject to ``B^T x = c`` and
    ``lower <= x <= upper``, with ``B = A`` or, when ``extra`` (a vector of
    length ``D``) is given, ``B = [A; extra]`` (one more coordinate).

    Parameters
    ----------
    A : ndarray of shape (m, D)
    c : ndarray of shape (D,)
    center, lower, upper : ndarray of shape (m,) or (m + 1,)
    sigma : float, default=1.0
    y0 : ndarray of shape (D,), default=None
        Warm start for the dual variable.
    gram : Gram, default=None
        ``A^T A`` and its Cholesky factor, when known (cheaper Newton
        matrices when few points are at their bounds, and the CG
        preconditioner for large ``D``).
    extra : ndarray of shape (D,), default=None
    tol : float, default=1e-9
        Stop when ``||B^T x - c||_inf <= tol * sqrt(m)``.
    max_iter : int, default=200

    Returns
    -------
    x : ndarray
        Primal solution (inside the box by construction).
    y : ndarray of shape (D,)
        Dual solution.
    n_iter : int
    residual : float
        ``||B^T x - c||_inf / sqrt(m)``.
    """
    m, D = A.shape
    scale = math.sqrt(m)
    y = np.zeros(D) if y0 is None else np.array(y0, dtype=np.float64)

    def Bv(v):
        z = A @ v
        return z if extra is None else np.append(z, extra @ v)

    def BTx(x):
        if extra is None:
            return A.T @ x
        return A.T @ x[:m] + extra * x[m]

    z = Bv(y)
    best = math.inf
    stalled = 0
    for it in range(max_iter):
        u = center + sigma * z
        x = np.clip(u, lower, upper)
        grad = c - BTx(x)
        err = float(np.abs(grad).max()) / scale
        if err <= tol:
            return x, y, it, err
        # Floating-point floor: with a large sigma the dual iterate is large and
        # u = center + sigma z loses digits; accept a stalled residual near tol.
        stalled = stalled + 1 if err > 0.5 * best else 0
        if stalled >= 3 and err <= 100 * tol:
            return x, y, it, err
        best = min(best, err)
        free = (u > lower) & (u < upper)
        extra_free = bool(free[m]) if extra is not None else False
        d = _newton_direction(A, free[:m], gram, extra, extra_free, grad) / sigma
        w = Bv(d)
        t = _exact_step(float(d @ c), u, w, lower, upper, sigma)
        y = y + t * d
        if it % 10 == 9:  # refresh to stop rounding drift in z
            z = Bv(y)
        else:
            z = z + t * w
    raise SolverError(
        f"semismooth Newton did not converge in {max_iter} iterations "
        f"(constraint residual {err:.2e} > tol {tol:.1e})"
    )


def shrinkage_lp(
    A, c0, c1, lower, upper, *, gram=None, tol=1e-9, gap_tol=1e-7, sigma_max=1e3
):
    """Smallest ``lam in [0, 1]`` with ``A^T x = c0 + lam (c1 - c0)`` feasible.

    The box ``lower <= x <= upper`` (scalars) must contain ``x = 1``, whose
    image ``A^T 1 = c1`` makes ``lam = 1`` feasible. Proximal point method
    with semismooth-Newton subproblems (module docstring).

    Returns
    -------
    lam : float
        A feasible ``lam`` (upper bound on the optimum ``lam*``).
    lam_lower : float
        A certified lower bound on ``lam*`` (LP duality).
    y : ndarray of shape (D,)
        Final dual estimate.
    """
    m, D = A.shape
    e = c1 - c0
    lo = np.append(np.full(m, float(lower)), 0.0)
    hi = np.append(np.full(m, float(upper)), 1.0)
    x = np.append(np.ones(m), 1.0)
    y = np.zeros(D)
    sigma, sigma_max = 10.0 * m, sigma_max * m
    lam_lower = 0.0
    still = 0
    for _ in range(50):
        center = x.copy()
        center[m] -= sigma  # the objective "lam" folded into the proximal centre
        x_new, y, _, _ = ssn_box_qp(
            A, c0, center, lo, hi, sigma=sigma, y0=y, gram=gram, extra=-e, tol=tol
        )
        z = A @ y
        dual = (
            float(y @ c0)
            - float(np.maximum(lower * z, upper * z).sum())
            + min(0.0, 1.0 + float(y @ e))
        )
        lam_lower = max(lam_lower, min(dual, 1.0))
        moved = float(np.abs(x_new - x).max())
        # lam_k is primal feasible (an upper bound) and usually settles long
        # before the dual bound closes the gap; stop once it has not moved in
        # two proximal steps at the largest sigma.
        # (lam is resolved to ~eps * sigma, ~1e-8 at sigma = 1e3 m: the
        # objective is folded into the centre lam_k - sigma)
        settled = sigma >= sigma_max and abs(x_new[m] - x[m]) <= 0.1 * gap_tol
        still = still + 1 if settled else 0
        x = x_new
        if x[m] - lam_lower <= gap_tol or moved <= 1e-13 or still >= 2:
            break
        sigma = min(10.0 * sigma, sigma_max)
    return float(x[m]), float(min(lam_lower, x[m])), y
