"""Linear query workloads over the Boolean cube ``{0, 1}^p``.

A workload is a matrix ``A ∈ R^{q×N}`` over the universe of record types
(``N = 2^p`` here); the answers on a dataset are ``y = A x`` with ``x`` its
histogram, and one record of type ``u`` contributes the column ``a_u``.
Two kinds are provided, both computing ``y`` from the rows without forming
``x`` or ``A``:

:class:`MarginalWorkload`
    Every d-way marginal table (``C(p, d)`` tables of ``2^d`` cells). Its
    structure is known in closed form, so nothing of size ``N`` is ever
    formed and ``p`` can be in the hundreds (the limit is the number of cells
    ``q`` and the rank ``r``, which must fit in memory).
:class:`ExplicitWorkload`
    Any matrix with ``2^p`` columns (``p <= 16``), e.g. range or prefix
    queries, or a mixture with marginals.

Both expose an orthonormal basis ``P`` of ``range(A)`` ("coordinates"
``z = Pᵀ y``), the coordinates ``g_u = Pᵀ a_u`` of universe points, and the
sensitivities the mechanisms need, for both neighbouring relations.

The one question a mechanism asks a workload is
``workload.sensitivity_set(neighbouring, invariants=None, space="coords")``:
the :class:`SensitivitySet` of vectors that one neighbouring change adds to
the answers -- in closed form (orbits) when the workload's symmetry gives
one, else as explicit points -- from which the noise is shaped and its
sensitivity verified (:mod:`skdp_synth.mechanisms.additive`).

The Fourier structure of the marginal workload
----------------------------------------------
Write ``χ_T(u) = (-1)^{Σ_{j∈T} u_j}`` for ``T ⊆ [p]`` (the one sign
convention of :mod:`skdp_synth.fourier`, shared with the private sampler).
The indicator of cell ``β`` of table ``S`` is
``1[u_S = β] = 2^{-d} Σ_{T ⊆ S} χ_T(β) χ_T(u)``, so::

    a_u = Σ_{|T| <= d} χ_T(u) Ψ_T,     Ψ_T(S, β) = 2^{-d} χ_T(β) 1[T ⊆ S],

and the ``Ψ_T`` are pairwise orthogonal with ``||Ψ_T||² = λ_{|T|}``,
``λ_j = 2^{-d} C(p - j, d - j)``. Hence ``ψ_T = Ψ_T / sqrt(λ_{|T|})`` is an
orthonormal basis of ``range(A)`` (rank ``r = Σ_{j<=d} C(p, j)``), the
coordinates of a record are ``g_u = (sqrt(λ_{|T|}) χ_T(u))_T`` and the
coordinates of the answers are ``z_T = sqrt(λ_{|T|}) Σ_i χ_T(x_i)`` -- scaled
Walsh--Fourier coefficients of the data.

**Why the uniform design is D-optimal (the MEE in closed form).** Flipping
attribute ``j`` of every record permutes the cells of each table containing
``j`` and fixes the others, and permuting attributes permutes the tables; both
map the set ``{a_u}`` onto itself, and bit flips act transitively on the
universe. The D-optimal design problem is concave and the group acts on it,
so averaging an optimal design over the group gives an optimal design: the
uniform one, ``π_u = 1/N`` (Kiefer & Wolfowitz 1960). Its moment matrix is
``M = (1/N) Σ_u a_u a_uᵀ = Σ_T λ_{|T|} ψ_T ψ_Tᵀ``, whose entries are
``M[(S,β), (S',β')] = 2^{-|S ∪ S'|}`` when ``β`` and ``β'`` agree on
``S ∩ S'`` and 0 otherwise (checked against the definition and against
Khachiyan's algorithm from a non-uniform start in
``tests/test_workloads.py``). Every ``g_u`` has ``g_uᵀ M⁺ g_u = r``, so
``E = {z : zᵀ M⁺ z <= r}`` satisfies the Kiefer--Wolfowitz optimality
condition with equality at every point: it is the MEE, and it contains ``K``.

Under replace-one neighbours the sensitivity polytope is
``conv{a_u - a_v}``. Pairs are permuted by the same group; the orbit of
``(u, v)`` is determined by the Hamming weight ``w`` of ``u ⊕ v``, and the
squared norm of the degree-``j`` part of ``g_u - g_v`` is
``λ_j (2 C(p, j) - 2 K_j(w))`` with ``K_j`` the Krawtchouk polynomial
(``Σ_{|T|=j} χ_T(s) = K_j(|s|)``). So the MEE reduces to ``p`` orbit weights
and ``d`` block axes (:func:`~skdp_synth.mechanisms.ellipsoid.mee_orbits`);
the degree-0 coordinate (the total, ``n``) has sensitivity 0 there.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from .._linalg import null_basis, numerical_rank
from ..fourier import hadamard, sign_products, to_signs
from ..validation import check_boolean, check_degree, check_integer

__all__ = [
    "ExplicitWorkload",
    "MarginalWorkload",
    "SensitivitySet",
    "krawtchouk",
    "universe_index",
]

#: largest ``p`` for which the universe ``{0,1}^p`` is enumerated
MAX_EXPLICIT_FEATURES = 16

_CELL_CHUNK = 2_000_000  # (rows x tables) entries per block when counting cells


def universe_index(X):
    """Index of each 0/1 row in the lexicographic enumeration of ``{0,1}^p``.

    Column 0 is the most significant bit, so ``universe_points(p)[k]`` is the
    row with index ``k``.
    """
    X = np.asarray(X)
    p = X.shape[1]
    if p > 62:
        raise ValueError("universe_index needs p <= 62")
    weights = (1 << np.arange(p - 1, -1, -1, dtype=np.int64)).astype(np.int64)
    return X.astype(np.int64) @ weights


def universe_points(p):
    """All of ``{0,1}^p`` as a ``(2^p, p)`` array, in :func:`universe_index` order."""
    idx = np.arange(2**p, dtype=np.int64)
    shifts = np.arange(p - 1, -1, -1, dtype=np.int64)
    return ((idx[:, None] >> shifts) & 1).astype(np.int8)


def krawtchouk(j, w, p):
    """Krawtchouk polynomial ``K_j(w) = Σ_i (-1)^i C(w, i) C(p - w, j - i)``.

    It equals ``Σ_{|T|=j} χ_T(s)`` for any ``s`` of Hamming weight ``w``.

    Examples
    --------
    >>> [krawtchouk(1, w, 3) for w in range(4)]
    [3, 1, -1, -3]
    """
    return sum(
        (-1) ** i * math.comb(w, i) * math.comb(p - w, j - i) for i in range(j + 1)
    )


def _check_rows(X, p):
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] != p:
        raise ValueError(f"expected rows with {p} Boolean columns, got shape {X.shape}")
    check_boolean(X, "rows")
    return X.astype(np.int8)


class MarginalWorkload:
    """All ``d``-way marginal tables of ``p`` Boolean attributes, in Fourier form.

    Queries are the ``q = C(p, d) 2^d`` cells, table by table (tables in
    lexicographic order of their attribute sets, cells in lexicographic order
    of their values, first attribute most significant). Coordinates are
    indexed by the sets ``T`` with ``|T| <= d``, by degree then
    lexicographically. See the module docstring for the formulas.

    Parameters
    ----------
    n_features : int
        ``p``.
    d : int
        Table arity, ``1 <= d <= p``.

    Attributes
    ----------
    tables : ndarray of shape (C(p, d), d)
    n_queries : int
        ``q``.
    rank : int
        ``r = Σ_{j<=d} C(p, j)``.
    degrees : ndarray of shape (r,)
        ``|T|`` of each coordinate.
    eigenvalues : ndarray of shape (d + 1,)
        ``λ_j = 2^{-d} C(p - j, d - j)``: the eigenvalues of the uniform moment
        matrix ``M`` (multiplicity ``C(p, j)``).

    Examples
    --------
    >>> W = MarginalWorkload(3, 2)
    >>> W.n_queries, W.rank
    (12, 7)
    >>> X = np.array([[0, 1, 1], [1, 1, 0]])
    >>> W.answers(X)[:4].tolist()          # table (0, 1): cells 00, 01, 10, 11
    [0.0, 1.0, 0.0, 1.0]
    >>> bool(np.allclose(W.to_cells(W.to_coords(W.answers(X))), W.answers(X)))
    True
    """

    kind = "marginal"

    def __init__(self, n_features, d):
        n_features = check_integer(n_features, "n_features", min_value=1)
        d = check_degree(d, n_features)
        self.n_features = p = int(n_features)
        self.d = d = int(d)
        self.tables = np.array(
            list(itertools.combinations(range(p), d)), dtype=np.int64
        )
        self.n_tables = len(self.tables)
        self.n_cells = 2**d
        self.n_queries = self.n_tables * self.n_cells
        self.multiplicity = np.array([math.comb(p, j) for j in range(d + 1)])
        self.eigenvalues = np.array(
            [math.comb(p - j, d - j) / 2.0**d for j in range(d + 1)]
        )
        self.offsets = np.concatenate([[0], np.cumsum(self.multiplicity)])
        self.rank = int(self.offsets[-1])
        self.degrees = np.repeat(np.arange(d + 1), self.multiplicity)
        self._sqrt_lam = np.sqrt(self.eigenvalues)[self.degrees]
        # Sylvester-Hadamard matrix H[beta, l] = χ_l(beta) (skdp_synth.fourier)
        self._hadamard = hadamard(d)
        self._glob = self._coefficient_index()
        self._pt = None

    # ----------------------------------------------------------- indexing
    def _rank_of(self, combos, j):
        """Lexicographic rank of each row of ``combos`` among ``C(p, j)`` subsets."""
        p = self.n_features
        if j == 0:
            return np.zeros(len(combos), dtype=np.int64)
        binom = np.array(
            [[math.comb(a, b) for b in range(j + 1)] for a in range(p + 1)],
            dtype=np.int64,
        )
        rank = np.full(len(combos), math.comb(p, j) - 1, dtype=np.int64)
        for i in range(j):
            rank -= binom[p - 1 - combos[:, i], j - i]
        return rank

    def _coefficient_index(self):
        """``glob[t, l]``: coordinate of the subset of table ``t`` with mask ``l``."""
        d = self.d
        glob = np.empty((self.n_tables, self.n_cells), dtype=np.int64)
        for ell in range(self.n_cells):
            pos = [k for k in range(d) if (ell >> (d - 1 - k)) & 1]
            j = len(pos)
            sub = self.tables[:, pos]
            glob[:, ell] = self.offsets[j] + self._rank_of(sub, j)
        return glob

    def coefficient_sets(self):
        """The sets ``T`` indexing the coordinates, in order."""
        return [
            T
            for j in range(self.d + 1)
            for T in itertools.combinations(range(self.n_features), j)
        ]

    @property
    def universe_size(self):
        return 2**self.n_features

    # ------------------------------------------------------------ answers
    def answers(self, X, sample_weight=None):
        """Cell counts ``y = A x`` of the rows of ``X`` (0/1), shape ``(q,)``.

        ``sample_weight``: integer counts of the rows (each row stands for
        that many records).
        """
        X = _check_rows(X, self.n_features)
        n = X.shape[0]
        weights = 1 << np.arange(self.d - 1, -1, -1)
        counts = np.zeros(self.n_queries, dtype=np.float64)
        step = max(1, _CELL_CHUNK // max(n, 1))
        for start in range(0, self.n_tables, step):
            tabs = self.tables[start : start + step]
            idx = X[:, tabs].astype(np.int64) @ weights  # (n, chunk)
            idx += (np.arange(len(tabs)) * self.n_cells)[None, :]
            w = None
            if sample_weight is not None:  # idx is (n, chunk), raveled by rows
                w = np.repeat(np.asarray(sample_weight, np.float64), len(tabs))
            counts[start * self.n_cells : (start + len(tabs)) * self.n_cells] = (
                np.bincount(idx.ravel(), weights=w, minlength=len(tabs) * self.n_cells)
            )
        return counts

    def _transform(self):
        """``Pᵀ`` as a sparse ``(r, q)`` matrix (``2^d`` entries per cell)."""
        if self._pt is None:
            import scipy.sparse as sp

            nt, nc = self.n_tables, self.n_cells
            rows = np.repeat(self._glob[:, None, :], nc, axis=1)  # (t, beta, l)
            cols = np.broadcast_to(
                (np.arange(nt)[:, None] * nc + np.arange(nc)[None, :])[:, :, None],
                rows.shape,
            )
            vals = np.broadcast_to(self._hadamard[None, :, :], rows.shape) / (
                nc * self._sqrt_lam[rows]
            )
            self._pt = sp.csr_matrix(
                (vals.ravel(), (rows.ravel(), cols.ravel())),
                shape=(self.rank, self.n_queries),
            )
        return self._pt

    def to_coords(self, y):
        """``z = Pᵀ y`` (orthogonal projection onto ``range(A)`` in coordinates).

        ``y`` of shape ``(q,)`` or ``(q, K)`` (columns).
        """
        return self._transform() @ np.asarray(y, dtype=np.float64)

    def to_cells(self, z):
        """``y = P z``; ``z`` of shape ``(r,)`` or ``(r, K)``."""
        return self._transform().T @ np.asarray(z, dtype=np.float64)

    def point_coords(self, U):
        """Coordinates ``g_u`` of the rows of ``U`` (0/1), shape ``(m, r)``."""
        U = _check_rows(U, self.n_features)
        # g_u = sqrt(λ_|T|) χ_T(u), columns in walsh_subsets order
        out = sign_products(to_signs(U), self.d)
        return out * self._sqrt_lam

    # ------------------------------------------------------- sensitivity
    def orbit_norms(self, neighbouring):
        """Per-coordinate squared norms of each orbit and degree block.

        ``add-remove-one``: one orbit (all ``±g_u``), ``norms[0, j] = λ_j``.
        ``replace-one``: orbits ``w = 1..p`` (Hamming weight of ``u ⊕ v``),
        ``norms[w-1, j] = λ_j (2 - 2 K_j(w) / C(p, j))``.
        Returns ``(norms, multiplicity)`` for
        :func:`~skdp_synth.mechanisms.ellipsoid.mee_orbits`.
        """
        p, lam, m = self.n_features, self.eigenvalues, self.multiplicity
        if neighbouring == "add-remove-one":
            return lam[None, :].copy(), m.copy()
        norms = np.array(
            [
                [
                    lam[j] * (2.0 - 2.0 * krawtchouk(j, w, p) / m[j])
                    for j in range(self.d + 1)
                ]
                for w in range(1, p + 1)
            ]
        )
        norms[np.abs(norms) < 1e-12 * lam.max()] = 0.0
        return norms, m.copy()

    def sensitivity(self, neighbouring, ord=2):
        """Largest ``||a_u||`` (add/remove) or ``||a_u - a_v||`` (replace-one).

        ``ord=2``: ``sqrt(C(p, d))`` and ``sqrt(2 C(p, d))`` (a record is in one
        cell of every table; two records that differ in every attribute are in
        different cells of every table). ``ord=1``: ``C(p, d)`` and ``2 C(p, d)``.
        """
        t = float(self.n_tables)
        factor = 1.0 if neighbouring == "add-remove-one" else 2.0
        return math.sqrt(factor * t) if ord == 2 else factor * t

    def universe_coords(self):
        """``g_u`` of every record type as columns (enumerates ``{0,1}^p``)."""
        if self.n_features > MAX_EXPLICIT_FEATURES:
            raise ValueError(
                f"this option enumerates the universe {{0,1}}^p; supported for "
                f"p <= {MAX_EXPLICIT_FEATURES}, got p = {self.n_features}"
            )
        return self.point_coords(universe_points(self.n_features)).T

    def sensitivity_set(self, neighbouring, invariants=None, space="coords", ord=None):
        """The :class:`SensitivitySet` of one neighbouring change (closed form)."""
        return _sensitivity_set(self, neighbouring, invariants, space, ord)

    def released_total(self, coords, cells):
        """The total count the released answers carry: ``z_∅ / sqrt(λ_0)``."""
        return float(coords[0] / math.sqrt(self.eigenvalues[0]))

    # ------------------------------------------------------------- labels
    def query_labels(self, feature_names):
        """``(table, cell)`` label of each query: tuples of names and of 0/1 values."""
        names = list(feature_names)
        cells = list(itertools.product((0, 1), repeat=self.d))
        return [
            (tuple(names[j] for j in S), cell) for S in self.tables for cell in cells
        ]

    def to_explicit(self):
        """The same workload as an :class:`ExplicitWorkload` (``p <= 16``)."""
        U = universe_points(_check_explicit_p(self.n_features))
        A = np.zeros((self.n_queries, len(U)))
        for t, S in enumerate(self.tables):
            idx = U[:, S].astype(np.int64) @ (1 << np.arange(self.d - 1, -1, -1))
            A[t * self.n_cells + idx, np.arange(len(U))] = 1.0
        return ExplicitWorkload(A, self.n_features)

    def __repr__(self):
        return f"MarginalWorkload(n_features={self.n_features}, d={self.d})"


def _check_explicit_p(p):
    if p > MAX_EXPLICIT_FEATURES:
        raise ValueError(
            f"this step enumerates the universe {{0,1}}^p, supported for "
            f"p <= {MAX_EXPLICIT_FEATURES}; got p = {p}"
        )
    return p


class ExplicitWorkload:
    """A query matrix ``A`` of shape ``(q, 2^p)`` over the universe ``{0,1}^p``.

    Column ``k`` is the record type with :func:`universe_index` ``k``.
    Supported for ``p <= 16``.

    Parameters
    ----------
    matrix : array-like of shape (q, 2^p)
    n_features : int
        ``p``.

    Examples
    --------
    Prefix (range) queries over a 2-bit attribute read as a number 0..3:

    >>> A = np.tril(np.ones((4, 4)))        # query i counts records <= i
    >>> W = ExplicitWorkload(A, 2)
    >>> W.answers(np.array([[0, 1], [1, 1]])).tolist()
    [0.0, 1.0, 1.0, 2.0]
    """

    kind = "explicit"

    def __init__(self, matrix, n_features):
        A = np.asarray(matrix, dtype=np.float64)
        p = _check_explicit_p(int(n_features))
        if A.ndim != 2 or A.shape[1] != 2**p:
            raise ValueError(
                f"workload matrix must have 2^p = {2**p} columns (one per record "
                f"type of {{0,1}}^{p}); got shape {A.shape}"
            )
        if not np.all(np.isfinite(A)):
            raise ValueError("workload matrix must be finite")
        if not np.any(A):
            raise ValueError("workload matrix is zero")
        self.matrix = A
        self.n_features = p
        self.n_queries = A.shape[0]
        U, s, _ = np.linalg.svd(A, full_matrices=False)
        r = numerical_rank(s, A.shape)
        self.basis = U[:, :r]
        self.rank = r
        self.points = self.basis.T @ A  # (r, N): g_u as columns

    @property
    def universe_size(self):
        return 2**self.n_features

    def answers(self, X):
        X = _check_rows(X, self.n_features)
        hist = np.bincount(universe_index(X), minlength=self.universe_size)
        return self.matrix @ hist.astype(np.float64)

    def to_coords(self, y):
        return self.basis.T @ np.asarray(y, dtype=np.float64)

    def to_cells(self, z):
        return self.basis @ np.asarray(z, dtype=np.float64)

    def point_coords(self, U):
        U = _check_rows(U, self.n_features)
        return self.points[:, universe_index(U)].T

    def difference_points(self, max_pairs=500_000):
        """``g_u - g_v`` for all ``u < v`` (replace-one), shape ``(r, N(N-1)/2)``."""
        N = self.universe_size
        if N * (N - 1) // 2 > max_pairs:
            raise ValueError(
                f"replace-one neighbours with an explicit workload enumerate all "
                f"{N * (N - 1) // 2} pairs of record types; supported up to "
                f"{max_pairs} pairs (p <= {int(math.log2(math.isqrt(2 * max_pairs)))})"
            )
        iu, iv = np.triu_indices(N, k=1)
        return self.points[:, iu] - self.points[:, iv]

    def sensitivity(self, neighbouring, ord=2):
        """Largest ``||a_u||_ord`` or ``||a_u - a_v||_ord`` over the universe."""
        A = self.matrix
        if neighbouring == "add-remove-one":
            return float(np.max(np.linalg.norm(A, ord=ord, axis=0)))
        best = 0.0
        for k in range(A.shape[1]):
            diff = A[:, k : k + 1] - A[:, k + 1 :]
            if diff.size:
                best = max(best, float(np.max(np.linalg.norm(diff, ord=ord, axis=0))))
        return best

    def universe_coords(self):
        """``g_u`` of every record type as columns."""
        return self.points

    def sensitivity_set(self, neighbouring, invariants=None, space="coords", ord=None):
        """The :class:`SensitivitySet` of one neighbouring change (explicit points)."""
        return _sensitivity_set(self, neighbouring, invariants, space, ord)

    def released_total(self, coords, cells):
        """The total count the released answers carry, or ``None`` if they do not."""
        w = self.total_weights()
        return None if w is None else float(w @ cells)

    def total_weights(self):
        """``w`` with ``wᵀ A = 1ᵀ`` (the total from the answers), or ``None``."""
        ones = np.ones(self.universe_size)
        w, *_ = np.linalg.lstsq(self.matrix.T, ones, rcond=None)
        if np.linalg.norm(self.matrix.T @ w - ones) > 1e-8 * math.sqrt(len(ones)):
            return None
        return w

    def query_labels(self, feature_names):
        return [("query", (i,)) for i in range(self.n_queries)]

    def __repr__(self):
        return f"ExplicitWorkload(q={self.n_queries}, n_features={self.n_features})"


# ====================================================== sensitivity sets
#: largest number of points (records, or pairs under replace-one) that a
#: sensitivity set enumerates
MAX_SENSITIVITY_POINTS = 500_000


def difference_set(G, neighbouring):
    """The points whose norms bound the sensitivity: ``g_u`` or ``g_u - g_v``.

    ``G`` holds one column per record type; under replace-one every pair
    ``u < v`` gives a column (up to ``MAX_SENSITIVITY_POINTS``).
    """
    if neighbouring == "add-remove-one":
        return G
    N = G.shape[1]
    if N * (N - 1) // 2 > MAX_SENSITIVITY_POINTS:
        raise ValueError(
            f"replace-one neighbours with an explicit sensitivity set enumerate "
            f"all {N * (N - 1) // 2} pairs of record types; supported up to "
            "500000 pairs (universe size <= 1000)"
        )
    iu, iv = np.triu_indices(N, k=1)
    return G[:, iu] - G[:, iv]


@dataclass(frozen=True, eq=False)
class SensitivitySet:
    """What one neighbouring change can add to a workload's answers (public).

    The vectors ``h = a_u`` (add/remove) or ``a_u - a_v`` (replace-one), in
    the workload's coordinates (``space="coords"``, ``g_u = Pᵀ a_u``) or its
    cells (``space="cells"``), optionally restricted to the null space of
    invariants ``C`` (``h ↦ Q_Nᵀ h``, :cite:`Gao2022`'s extension framework). Built by
    ``workload.sensitivity_set(neighbouring, invariants=None,
    space="coords", ord=None)`` from the workload, the relation and ``C``
    only, and handed to a mechanism as plain data
    (:mod:`skdp_synth.mechanisms.additive`): the mechanism shapes its noise
    from it and verifies the whitened sensitivity on it before any data is
    read, without asking the workload anything else.

    Attributes
    ----------
    neighbouring : str
    space : {"coords", "cells"}
    dim : int
        The dimension of the vectors before any restriction.
    restriction : ndarray of shape (k, dim) or None
        ``Q_Nᵀ`` (orthonormal rows) when restricted to the invariants' null
        space.
    orbits : tuple or None
        The closed form of the marginal workload's set (coordinates, no
        restriction): ``(norms, multiplicity, blocks)`` -- per orbit and
        degree block the squared norm of one coordinate
        (:meth:`MarginalWorkload.orbit_norms`), the blocks' sizes, and the
        block of every coordinate.
    enumerable : bool
        Whether the set is small enough to check point by point (at most
        ``MAX_SENSITIVITY_POINTS`` points and ``5e7`` entries).
    points : ndarray of shape (k or dim, n_points) or None
        Every ``h`` as a column: computed when there is no closed form or
        when the set is enumerable; ``None`` when it cannot be enumerated
        (``too_large`` says why).
    too_large : str or None
    spot_points : ndarray of shape (64, dim)
        Data-independent records (or pairs) to cross-check a closed form.
    origin : ndarray of shape (dim,)
        The answers of the all-zero record (the replace-one offset's ``g_0``).
    max_norm : float or None
        ``max ||h||_ord`` of the unrestricted set in cells, in closed form
        (when ``ord`` is given).
    """

    neighbouring: str
    space: str
    dim: int
    restriction: np.ndarray | None
    orbits: tuple | None
    enumerable: bool
    points: np.ndarray | None
    too_large: str | None
    spot_points: np.ndarray
    origin: np.ndarray
    max_norm: float | None

    def __repr__(self):
        kind = "orbits" if self.orbits is not None else "points"
        return (
            f"SensitivitySet({self.neighbouring!r}, space={self.space!r}, "
            f"dim={self.dim}, {kind})"
        )


def _sensitivity_set(W, neighbouring, invariants, space, ord):
    """Build the :class:`SensitivitySet` of ``W`` (shared by both workloads)."""
    if space not in ("coords", "cells"):
        raise ValueError(f"space must be 'coords' or 'cells', got {space!r}")
    restriction = None
    if invariants is not None:
        C = np.asarray(invariants, dtype=np.float64)
        if space == "coords":
            QN = null_basis(W.to_coords(C.T).T, W.rank)
        else:
            QN = null_basis(C, W.n_queries)
        restriction = QN.T
    orbits = None
    if isinstance(W, MarginalWorkload) and space == "coords" and restriction is None:
        norms, mult = W.orbit_norms(neighbouring)
        orbits = (norms, mult, W.degrees)
    # enumerable: the universe (or its pairs) is small enough to check exactly
    N = W.universe_size if W.n_features <= MAX_EXPLICIT_FEATURES else np.inf
    n_points = N if neighbouring == "add-remove-one" else N * (N - 1) / 2
    size = n_points * max(W.rank, W.n_queries)
    enumerable = bool(n_points <= MAX_SENSITIVITY_POINTS and size <= 5e7)
    points, too_large = None, None
    if orbits is None or enumerable:
        try:
            G = W.universe_coords()
            if space == "cells":
                G = W.to_cells(G)
            if restriction is not None:
                G = restriction @ G
            points = difference_set(G, neighbouring)
        except ValueError as exc:
            too_large = str(exc)
    # data-independent records (and pairs) to cross-check a closed form
    rng = np.random.default_rng(0)
    U = (rng.random((64, W.n_features)) < 0.5).astype(np.int8)
    U[0], U[1] = 0, 1
    spot = W.point_coords(U)
    if neighbouring != "add-remove-one":
        V = U.copy()
        V[:32] = 1 - U[:32]  # complements: the widest pairs
        V[32:] = (rng.random((32, W.n_features)) < 0.5).astype(np.int8)
        spot = spot - W.point_coords(V)
    origin = W.point_coords(np.zeros((1, W.n_features), dtype=np.int8))[0]
    if space == "cells":
        spot = W.to_cells(spot.T).T
        origin = W.to_cells(origin)
    max_norm = None
    if ord is not None and space == "cells" and restriction is None:
        max_norm = W.sensitivity(neighbouring, ord=ord)
    return SensitivitySet(
        neighbouring=neighbouring,
        space=space,
        dim=W.rank if space == "coords" else W.n_queries,
        restriction=restriction,
        orbits=orbits,
        enumerable=enumerable,
        points=points,
        too_large=too_large,
        spot_points=spot,
        origin=origin,
        max_norm=max_norm,
    )
