"""Enclosing ellipsoids and the base decomposition of :cite:`Nikolov2013`.

The correlated Gaussian mechanism of Nikolov, Talwar & Zhang (:cite:`Nikolov2013`)
shapes its noise by an ellipsoid containing the *sensitivity polytope*
``K = sym conv{g_u}`` of a workload (``g_u``: the answers that one record of
type ``u`` contributes, in an orthonormal basis of the workload's range).
Privacy needs only that the ellipsoid contains ``K`` (:cite:`Nikolov2013` Corollary 8);
near-optimality needs it to be (close to) the minimum-volume one (the MEE,
or Löwner--John ellipsoid).

Centred MEE = D-optimal design (Khachiyan 1996; Kumar & Yıldırım 2005;
Todd & Yıldırım 2007). For a design ``π`` (a probability vector on the
points), ``M(π) = Σ_u π_u g_u g_uᵀ`` and ``g_u(π) = g_uᵀ M(π)⁻¹ g_u``. For
*every* ``π``,

    E(π) = {z : zᵀ M(π)⁻¹ z <= max_u g_u(π)}

contains every ``±g_u`` -- so containment never depends on how well the
iteration converged; only the volume does. At the D-optimal ``π*``
(Kiefer--Wolfowitz), ``max_u g_u(π*) = r`` (the dimension) and ``E(π*)`` is
the MEE. The iteration moves weight towards ``argmax g`` (a Frank--Wolfe step
with exact line search, Khachiyan) and away from ``argmin g`` on the support
(Todd--Yıldırım "away steps") until ``max g <= (1 + tol) r``.

Two forms are provided:

* :func:`mee_points` -- explicit points (columns of a matrix);
* :func:`mee_orbits` -- a workload whose symmetry group acts transitively on
  each of a few *orbits* of points, and whose invariant ellipsoids are
  diagonal with one semi-axis per *block* of coordinates. Then an optimal
  design is uniform on each orbit and the whole problem reduces to weights on
  the orbits (see :mod:`skdp_synth.workloads`, where the d-way marginal
  workload is shown to be of this form).

:func:`base_decomposition_points` and :func:`base_decomposition_orbits`
implement :cite:`Nikolov2013` Algorithm 1 on top of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._linalg import numerical_rank

__all__ = [
    "BaseDecomposition",
    "OrbitEllipsoid",
    "PointEllipsoid",
    "base_decomposition_orbits",
    "base_decomposition_points",
    "gaussian_optimum_orbits",
    "gaussian_optimum_points",
    "mee_orbits",
    "mee_points",
    "split_sorted_axes",
]


# ---------------------------------------------------------------- explicit
@dataclass(frozen=True)
class PointEllipsoid:
    """``E = {z : zᵀ M⁻¹ z <= radius}`` containing the given points.

    Attributes
    ----------
    matrix : ndarray of shape (r, r)
        ``M(π)``, positive definite.
    radius : float
        ``max_u g_u(π)``, recomputed from scratch at the end, so ``E``
        contains every point up to floating-point rounding of one solve.
    weights : ndarray of shape (N,)
        The design ``π``.
    n_iter : int
    converged : bool
        Whether ``radius <= (1 + tol) r`` was reached.
    """

    matrix: np.ndarray
    radius: float
    weights: np.ndarray
    n_iter: int
    converged: bool

    @property
    def dim(self):
        return self.matrix.shape[0]

    def semi_axes(self):
        """Eigenvalues (descending) and eigenvectors of ``radius * M``.

        The ellipsoid is ``F B_2`` with ``F Fᵀ = radius * M``; its semi-axes are
        the square roots of these eigenvalues and its axes the eigenvectors --
        the left singular vectors of ``F`` used by :cite:`Nikolov2013` Algorithm 1.
        """
        vals, vecs = np.linalg.eigh(self.radius * self.matrix)
        order = np.argsort(vals, kind="stable")[::-1]  # ties: same order on every CPU
        return vals[order], vecs[:, order]


def _g_values(G, M):
    L = np.linalg.cholesky(M)
    W = np.linalg.solve(L, G)
    return np.einsum("ij,ij->j", W, W)


def mee_points(G, *, tol=1e-7, max_iter=100_000, weights=None):
    """Minimum-volume centred ellipsoid containing ``±`` the columns of ``G``.

    Khachiyan's algorithm with Todd--Yıldırım away steps (WA-TY), on the
    D-optimal design formulation described in the module docstring.

    Parameters
    ----------
    G : array-like of shape (r, N)
        Points as columns; must span ``R^r``.
    tol : float, default=1e-7
        Stop when ``max_u g_u <= (1 + tol) r`` and ``min_{π_u > 0} g_u >= (1 - tol) r``.
    max_iter : int, default=100000
    weights : array-like of shape (N,), default=None
        Starting design (uniform if ``None``).

    Returns
    -------
    PointEllipsoid

    Examples
    --------
    >>> G = np.array([[1.0, 0.0, 1.0], [0.0, 2.0, 2.0]])
    >>> E = mee_points(G)
    >>> g = np.einsum("ij,ij->j", G, np.linalg.solve(E.matrix, G))
    >>> bool(np.all(g <= E.radius * (1 + 1e-12)))       # contains every point
    True
    """
    G = np.asarray(G, dtype=np.float64)
    if G.ndim != 2 or G.shape[1] < 1:
        raise ValueError(f"G must be a non-empty (r, N) matrix, got shape {G.shape}")
    r, N = G.shape
    if numerical_rank(np.linalg.svd(G, compute_uv=False), G.shape) < r:
        raise ValueError(
            "the points do not span R^r; reduce to the range of the workload first"
        )
    if r == 1:  # an interval: all weight on the farthest point
        pi = np.zeros(N)
        pi[int(np.argmax(np.abs(G[0])))] = 1.0
        M = (G * pi) @ G.T
        return PointEllipsoid(M, float(_g_values(G, M).max()), pi, 0, True)
    pi = np.full(N, 1.0 / N) if weights is None else np.asarray(weights, float).copy()
    pi /= pi.sum()
    M = (G * pi) @ G.T
    g = _g_values(G, M)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        j = int(np.argmax(g))
        kappa = g[j]
        support = np.flatnonzero(pi > 0)
        i = int(support[np.argmin(g[support])])
        gi = g[i]
        if kappa <= (1 + tol) * r and gi >= (1 - tol) * r:
            converged = True
            break
        if kappa - r >= r - gi:
            # toward-step to vertex j (Khachiyan's exact line search)
            alpha = (kappa / r - 1.0) / (kappa - 1.0)
            pi *= 1.0 - alpha
            pi[j] += alpha
            v = np.linalg.solve(M, G[:, j])
            w = G.T @ v
            M = (1.0 - alpha) * M + alpha * np.outer(G[:, j], G[:, j])
            g = (g - alpha * w**2 / (1.0 - alpha + alpha * kappa)) / (1.0 - alpha)
        else:
            # away-step from vertex i (Todd & Yıldırım 2007), clipped at pi_i
            alpha = (1.0 - gi / r) / (gi - 1.0) if gi > 1.0 else np.inf
            alpha = min(alpha, pi[i] / (1.0 - pi[i]))
            pi *= 1.0 + alpha
            pi[i] -= alpha
            pi[i] = max(pi[i], 0.0)
            v = np.linalg.solve(M, G[:, i])
            w = G.T @ v
            M = (1.0 + alpha) * M - alpha * np.outer(G[:, i], G[:, i])
            g = (g + alpha * w**2 / (1.0 + alpha - alpha * gi)) / (1.0 + alpha)
        if it % 200 == 0:  # refresh against drift of the rank-one updates
            M = (G * pi) @ G.T
            g = _g_values(G, M)
    M = (G * pi) @ G.T
    g = _g_values(G, M)
    radius = float(g.max())
    converged = converged and radius <= (1 + 10 * tol) * r
    return PointEllipsoid(M, radius, pi, it, converged)


# ------------------------------------------------------------------ orbits
@dataclass(frozen=True)
class OrbitEllipsoid:
    """A block-diagonal ellipsoid ``{z : Σ_b |z_b|² / axes_b <= 1}``.

    Attributes
    ----------
    axes : ndarray of shape (J,)
        Squared semi-axis of each block (``radius * M_b``).
    design : ndarray of shape (W,)
        Weights on the orbits.
    radius : float
        ``max_w g_w``.
    n_iter : int
    converged : bool
    """

    axes: np.ndarray
    design: np.ndarray
    radius: float
    n_iter: int
    converged: bool


def _line_search(dphi, hi):
    """Largest-gain step on ``[0, hi]`` of a concave function given its derivative."""
    if dphi(hi) >= 0:
        return hi
    lo = 0.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if dphi(mid) > 0:
            lo = mid
        else:
            hi = mid
    return lo


def mee_orbits(norms, multiplicity, *, tol=1e-10, max_iter=10_000):
    """MEE of a symmetric point set described by orbits and blocks.

    Parameters
    ----------
    norms : array-like of shape (W, J)
        ``norms[w, b]``: the squared norm of the block-``b`` part of any point
        of orbit ``w``, *divided by the block's dimension* (the per-coordinate
        average). Each orbit must be a single orbit of a group that acts on
        every block by an orthogonal representation with no invariant subspace
        other than 0 and the block (then every invariant ellipsoid is a
        multiple of the identity on each block, and a uniform design on an
        orbit has a diagonal moment matrix).
    multiplicity : array-like of shape (J,)
        Dimension of each block.

    Returns
    -------
    OrbitEllipsoid

    Notes
    -----
    The design ``π`` on orbits gives ``M_b = Σ_w π_w norms[w, b]`` and
    ``g_w = Σ_b m_b norms[w, b] / M_b``; D-optimality maximises
    ``Σ_b m_b log M_b``. Each step is a Frank--Wolfe step towards the orbit of
    largest ``g`` or away from the supported orbit of smallest ``g``, with an
    exact line search (bisection on the derivative of the concave objective).
    Blocks with ``norms[:, b] == 0`` carry no sensitivity and are ignored
    (axis 0).

    Examples
    --------
    A square's vertices ``(±1, ±1)``: one orbit, one 2-dimensional block,
    per-coordinate squared norm 1 -- the MEE is the disc of radius² 2.

    >>> E = mee_orbits([[1.0]], [2])
    >>> E.axes.tolist(), E.radius
    ([2.0], 2.0)
    """
    a = np.asarray(norms, dtype=np.float64)
    m = np.asarray(multiplicity, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] != m.shape[0]:
        raise ValueError("norms must be (W, J) with J = len(multiplicity)")
    if np.any(a < 0) or np.any(m <= 0):
        raise ValueError("norms must be >= 0 and multiplicities > 0")
    active = a.max(axis=0) > 0
    if not np.any(active):
        raise ValueError("no block has positive sensitivity")
    a_act, m_act = a[:, active], m[active]
    r = m_act.sum()
    W = a.shape[0]
    pi = np.full(W, 1.0 / W)

    def stats(pi):
        M = pi @ a_act
        return M, a_act @ (m_act / M)

    M, g = stats(pi)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007
        j = int(np.argmax(g))
        support = np.flatnonzero(pi > 0)
        i = int(support[np.argmin(g[support])])
        if g[j] <= (1 + tol) * r and g[i] >= (1 - tol) * r:
            converged = True
            break
        if g[j] - r >= r - g[i]:
            d = a_act[j] - M

            def dphi(t, d=d, M=M):
                return float(np.sum(m_act * d / (M + t * d)))

            t = _line_search(dphi, 1.0 - 1e-12)
            pi = (1 - t) * pi
            pi[j] += t
        else:
            d = M - a_act[i]
            tmax = pi[i] / (1 - pi[i]) if pi[i] < 1 else 0.0

            def dphi(t, d=d, M=M):
                return float(np.sum(m_act * d / (M + t * d)))

            t = _line_search(dphi, tmax)
            pi = (1 + t) * pi
            pi[i] -= t
            pi[i] = max(pi[i], 0.0)
        pi /= pi.sum()
        M, g = stats(pi)
    radius = float(g.max())
    axes = np.zeros(a.shape[1])
    axes[active] = radius * M
    return OrbitEllipsoid(axes, pi, radius, it, converged)


# -------------------------------------------------------- decomposition
@dataclass(frozen=True)
class BaseDecomposition:
    """Output of :cite:`Nikolov2013` Algorithm 1: orthogonal pieces and their radii.

    Attributes
    ----------
    pieces : list
        Piece ``i`` as an orthonormal matrix ``U_i`` (explicit form) or as a
        list of block indices (orbit form). Pieces are mutually orthogonal and
        together span the space.
    dims : ndarray of shape (k,)
        ``d_i = dim U_i``.
    radii : ndarray of shape (k,)
        ``r_i = max_u ||U_iᵀ g_u||`` (:cite:`Nikolov2013` Algorithm 2, line "let r_i").
    """

    pieces: list
    dims: np.ndarray
    radii: np.ndarray

    @property
    def k(self):
        return len(self.pieces)

    def weights(self, uniform=False):
        """Weights ``α_i`` (``Σ α_i = 1``) of the noise ``Σ_i (r_i/√α_i) U_i w_i``.

        ``uniform=True``: ``α_i = 1/k``, :cite:`Nikolov2013` Algorithm 2 (noise
        ``√k Σ_i r_i
        U_i w_i``). Else ``α_i ∝ √d_i r_i``, the refinement of
        ``mechanism="correlated-weighted"`` (private by :cite:`Nikolov2013` Corollary 9
        with Cauchy--Schwarz weighted by ``α``; error ``c² (Σ_i √d_i r_i)²``, never
        above :cite:`Nikolov2013`'s ``c² k Σ_i d_i r_i²``).
        """
        k = len(self.pieces)
        if uniform:
            return np.full(k, 1.0 / k)
        w = np.sqrt(self.dims) * self.radii
        if not np.all(w > 0):  # pragma: no cover - every piece carries sensitivity
            return np.full(k, 1.0 / k)
        return w / w.sum()


def split_sorted_axes(values, *, rtol=1e-8):
    """Where :cite:`Nikolov2013` Algorithm 1 cuts ``values`` (semi-axes², descending).

    The paper keeps ``V = (u_i)_{i <= d/2}`` (the long axes) and recurses on
    them, and makes the short half ``U_1 = (u_i)_{i > d/2}`` a piece. We cut
    only between *distinct* values (ties within ``rtol`` stay together), at
    the admissible position closest to ``floor(d/2)``: splitting an eigenspace
    is arbitrary, and keeping eigenspaces whole keeps the symmetric structure
    of the marginal workload through the recursion. Privacy holds for any
    orthogonal split (:cite:`Nikolov2013` Corollary 9). Returns the number of leading
    axes to keep in ``V``; ``0`` means the remaining ellipsoid is a ball (all values
    tied) and becomes the last piece -- the Gaussian mechanism is already
    optimal for a ball (:cite:`Nikolov2013` §4.1).
    """
    v = np.asarray(values, dtype=np.float64)
    d = v.size
    if d <= 1:
        return 0
    cuts = [
        c for c in range(1, d) if v[c - 1] - v[c] > rtol * max(abs(v[c - 1]), 1e-300)
    ]
    if not cuts:
        return 0
    target = d // 2
    return min(cuts, key=lambda c: (abs(c - target), c))


def base_decomposition_points(G, *, tol=1e-6, max_iter=20_000, rtol=None):
    """:cite:`Nikolov2013` Algorithm 1 for explicit points (columns of ``G``, spanning
    ``R^r``).

    Each level computes the MEE of the current projection ``Vᵀ G``, splits its
    axes with :func:`split_sorted_axes`, emits the short axes as a piece and
    recurses on the long ones. The MEE is approximate (Khachiyan stops at
    ``max g <= (1 + tol) r`` or after ``max_iter`` steps; :cite:`Nikolov2013` §4.1 shows
    an O(1)-approximate MEE keeps the decomposition near-optimal, and privacy
    never depends on it). An approximate MEE perturbs tied axes by a few times
    the achieved ``η = max g / r - 1`` (relatively), so unless ``rtol`` is
    given, axes within ``100 η`` (clipped to ``[1e-8, 1e-2]``) count as tied.
    """
    G = np.asarray(G, dtype=np.float64)
    r = G.shape[0]
    V = np.eye(r)
    pieces = []
    while V.shape[1] > 0:
        H = V.T @ G
        E = mee_points(H, tol=tol, max_iter=max_iter)
        vals, vecs = E.semi_axes()
        eta = max(E.radius / H.shape[0] - 1.0, 0.0)
        level_rtol = min(1e-2, max(1e-8, 100 * eta)) if rtol is None else rtol
        keep = split_sorted_axes(vals, rtol=level_rtol)
        pieces.append(V @ vecs[:, keep:])
        V = V @ vecs[:, :keep]
    dims = np.array([U.shape[1] for U in pieces])
    radii = np.array([np.sqrt(np.max(np.sum((U.T @ G) ** 2, axis=0))) for U in pieces])
    return BaseDecomposition(pieces, dims, radii)


def base_decomposition_orbits(norms, multiplicity, *, tol=1e-10, rtol=1e-8):
    """:cite:`Nikolov2013` Algorithm 1 for an orbit/block description (see
    :func:`mee_orbits`).

    Because the ellipsoid is block-diagonal, its axes are the blocks and every
    cut between distinct axis lengths keeps whole blocks, so every level's
    projection is again of orbit/block form. Blocks with zero sensitivity are
    left out of every piece.

    Returns
    -------
    BaseDecomposition
        ``pieces`` are lists of block indices.
    """
    a = np.asarray(norms, dtype=np.float64)
    m = np.asarray(multiplicity, dtype=np.float64)
    remaining = [b for b in range(a.shape[1]) if a[:, b].max() > 0]
    pieces = []
    while remaining:
        E = mee_orbits(a[:, remaining], m[remaining], tol=tol)
        axes = E.axes
        order = sorted(range(len(remaining)), key=lambda t: -axes[t])
        values = np.repeat(axes[order], m[remaining][order].astype(int))
        keep_dim = split_sorted_axes(values, rtol=rtol)
        kept, dim = [], 0
        for t in order:
            if dim >= keep_dim:
                break
            kept.append(remaining[t])
            dim += int(m[remaining[t]])
        piece = [b for b in remaining if b not in kept]
        pieces.append(sorted(piece))
        remaining = sorted(kept)
    dims = np.array([int(m[p].sum()) for p in pieces])
    radii = np.array(
        [np.sqrt(np.max(a[:, p] @ m[p])) if p else 0.0 for p in pieces], dtype=float
    )
    return BaseDecomposition(pieces, dims, radii)


# ----------------------------------------------- Gaussian-class optimum
def gaussian_optimum_points(G, *, max_iter=200, tol=1e-6, budget=2e9):
    """``max_π tr((G diag(π) Gᵀ)^{1/2})²``: the best Gaussian noise for ``±G``.

    For any additive Gaussian mechanism ``y + N(0, c² X)`` to be as private
    as the Gaussian mechanism at sensitivity 1 (noise ``N(0, c²)``), its
    noise must satisfy ``g_uᵀ X⁻¹ g_u <= 1`` for every point (the privacy
    loss of a Gaussian shift depends only on its Mahalanobis norm), and its
    error is ``c² tr(X)``. For every design ``π`` with ``M = Σ π_u g_u g_uᵀ``,
    Cauchy--Schwarz gives
    ``tr(M^{1/2}) = tr(X^{1/2} X^{-1/2} M^{1/2}) <= sqrt(tr X) sqrt(tr(X⁻¹ M))
    <= sqrt(tr X)``, so ``tr(M^{1/2})²`` is a lower bound on ``tr X`` for
    *every* ``π``; the maximum over ``π`` is attained by
    ``X = tr(M^{1/2}) M^{1/2}`` and is the exact optimum (convex duality).
    We run the multiplicative algorithm ``π_u ← π_u · g_uᵀM^{-1/2}g_u /
    tr(M^{1/2})`` from the uniform design and return the best value seen
    (every value is a valid lower bound; the cost is capped by ``budget``
    floating-point operations).

    Examples
    --------
    >>> round(gaussian_optimum_points(np.eye(3)), 12)  # cross-polytope: X = I
    3.0
    """
    G = np.asarray(G, dtype=np.float64)
    r, N = G.shape
    pi = np.full(N, 1.0 / N)
    n_iter = int(min(max_iter, max(3, budget / max(r * r * N, 1))))
    best = 0.0
    for _ in range(n_iter):
        M = (G * pi) @ G.T
        vals, vecs = np.linalg.eigh(M)
        vals = np.clip(vals, 0.0, None)
        f = float(np.sum(np.sqrt(vals)))
        best = max(best, f)
        pos = vals > vals.max() * 1e-14
        W = vecs[:, pos].T @ G
        grad = np.einsum("ij,ij->j", W / np.sqrt(vals[pos])[:, None], W) / 2.0
        if grad.max() <= (1 + tol) * f / 2:
            break
        pi = pi * grad / (f / 2)
        pi /= pi.sum()
    return best**2


def gaussian_optimum_orbits(norms, multiplicity, *, max_iter=1000, tol=1e-12):
    """:func:`gaussian_optimum_points` for an orbit/block description.

    With block-constant moments ``M_b = Σ_w π_w norms[w, b]`` the objective is
    ``f(π) = Σ_b m_b sqrt(M_b)``, maximised over orbit weights by
    Frank--Wolfe with exact line search; returns ``f²``.

    Examples
    --------
    >>> float(gaussian_optimum_orbits([[1.0]], [3]))  # cube vertices: X = 3 I
    9.0
    """
    a = np.asarray(norms, dtype=np.float64)
    m = np.asarray(multiplicity, dtype=np.float64)
    active = a.max(axis=0) > 0
    a, m = a[:, active], m[active]
    pi = np.full(a.shape[0], 1.0 / a.shape[0])
    f = 0.0
    for _ in range(max_iter):
        M = pi @ a
        f = float(np.sum(m * np.sqrt(M)))
        grad = a @ (m / (2 * np.sqrt(M)))
        j = int(np.argmax(grad))
        if grad[j] - f / 2 <= tol * f:
            break
        d = a[j] - M

        def dphi(t, d=d, M=M):
            return float(np.sum(m * d / (2 * np.sqrt(np.maximum(M + t * d, 1e-300)))))

        t = _line_search(dphi, 1.0)
        pi = (1 - t) * pi
        pi[j] += t
    M = pi @ a
    return float(np.sum(m * np.sqrt(M))) ** 2
