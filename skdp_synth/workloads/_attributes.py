"""Marginal workloads over categorical attributes and their optimal Gaussian noise.

A table of ``a`` categorical attributes with ``L_1, ..., L_a`` levels (e.g. the
blocks of a :class:`~skdp_synth.preprocessing.BooleanEncoder`) has, for every
set ``S`` of ``d`` attributes, a marginal table ``T_S`` of ``prod_{j in S} L_j``
cells. Released on the *bits* of a one-hot encoding, the same information
costs more: pairs of bits inside one block are structural zeros and a block's
bits sum to ``n``, yet they are measured and charged. This module releases the
attribute-level tables instead (ResidualPlanner, :cite:`Xiao2023`).

Residual basis (ResidualPlanner; Xiao2023)
------------------------------------------
For each attribute fix an orthonormal basis of ``R^{L_j}``: ``1/sqrt(L_j)``
and the ``L_j - 1`` columns of ``Q_j`` (a Helmert basis, orthogonal to the
ones vector). Then ``I = 11ᵀ/L_j + Q_j Q_jᵀ``, and expanding the Kronecker
product gives, for every table ``S``::

    T_S = Σ_{A ⊆ S} ( ⊗_{j∈A} Q_j  ⊗_{j∈S∖A} 1/L_j ) z_A,
    z_A = ( ⊗_{j∈A} Q_jᵀ ) T_A        (the "residual" of A; z_∅ = n).

``z_A`` depends only on ``A``, not on the table ``S`` it appears in, so the
residuals ``{z_A : |A| <= d}`` determine every table of the workload, and
tables rebuilt from noisy residuals agree on shared sub-marginals by
construction.

Noise and sensitivity. Each residual is released with i.i.d. Gaussian noise,
``z~_A = z_A + τ_A c w_A``, ``w_A ~ N(0, I)``. Adding or removing one record of
type ``u`` changes ``z_A`` by ``⊗ Q_jᵀ e_{u_j}``, of squared norm
``s_A = Π_{j∈A} (1 - 1/L_j)`` (``Q_j Q_jᵀ`` is the projection orthogonal to 1),
the same for every record. So the whitened vector ``(z_A / τ_A)_A`` has
ℓ2-sensitivity ``sqrt(Σ_A s_A / τ_A²)``; we choose ``Σ_A s_A/τ_A² = 1`` and
``c`` is the Gaussian-mechanism σ at sensitivity 1 (analytic calibration).
Under replace-one the record changes from ``u`` to ``v``; if they differ on
the attribute set ``D`` the change of ``z_A`` has squared norm
``2 s_A (1 - Π_{j∈A} ρ_j)`` with ``ρ_j = 1`` for ``j ∉ D`` and
``ρ_j = -1/(L_j - 1)`` for ``j ∈ D``; ``z_∅ = n`` is public. We maximise over
``D`` exactly (enumeration, ``a <= 16``) or bound ``1 - Πρ <= 2``.

Optimal variances. A cell of ``T_S`` receives the variance
``Σ_{A⊆S} c² τ_A² Π_{j∈A}(1 - 1/L_j) Π_{j∈S∖A} 1/L_j²``, equal for all cells,
so the total squared error over the workload is ``c² Σ_A v_A τ_A²`` with
``v_A = Π_{j∈A}(L_j - 1) Σ_{S ⊇ A} Π_{j∈S∖A} 1/L_j``. Minimising it subject
to ``Σ_A s_A/τ_A² = 1`` (Lagrange) gives ``τ_A² = K sqrt(s_A/v_A)`` with
``K = Σ_A sqrt(s_A v_A)`` and the error ``c² K²``, the sum-of-variances
allocation of ResidualPlanner (:cite:`Xiao2023`), which reports it optimal
among Gaussian linear mechanisms for marginal workloads. That paper is not
among the project's five (``shared/papers``), so the derivation above is the
reference here, and what we check is: the allocation beats every perturbed
one, and on Boolean attributes (every ``L_j = 2``, where the residual basis
is the Walsh basis) ``c² K²`` equals the Gaussian optimum
``c² tr(M^{1/2})²`` of the bit-level
:class:`~skdp_synth.workloads.MarginalWorkload` (``tests/test_attribute_workload.py``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = ["AttributeMarginalWorkload", "helmert_basis"]

#: attributes up to which replace-one sensitivity is maximised by enumeration
MAX_EXACT_REPLACE_ATTRIBUTES = 16


def helmert_basis(n_levels):
    """``(L, L-1)`` orthonormal columns orthogonal to the ones vector.

    Column ``k`` (``k = 1..L-1``) is the Helmert contrast: ``1/sqrt(k(k+1))`` on
    the first ``k`` levels, ``-k/sqrt(k(k+1))`` on level ``k``, 0 after.
    """
    L = int(n_levels)
    Q = np.zeros((L, L - 1))
    for k in range(1, L):
        norm = math.sqrt(k * (k + 1))
        Q[:k, k - 1] = 1.0 / norm
        Q[k, k - 1] = -k / norm
    return Q


class AttributeMarginalWorkload:
    """All ``d``-way marginal tables over categorical attributes (public, data-free).

    Parameters
    ----------
    n_levels : sequence of int
        Number of levels ``L_j >= 2`` of each attribute (an attribute with one
        level is constant and carries no information; it is allowed and gets
        no residuals).
    d : int
        Arity of the tables (``1 <= d <= a``); with ``tables``, the largest
        arity allowed.
    tables : sequence of tuple of int, optional
        An explicit set of tables (attribute sets of any arity ``1..d``), e.g.
        the marginals a selection step chose (:mod:`skdp_synth.selection`).
        Default: all ``C(a, d)`` tables of arity ``d``.
    weights : sequence of float, optional
        ``w_S > 0`` per table (default 1): the noise allocation minimises the
        weighted total variance ``Σ_S w_S E||T~_S - T_S||²`` (see
        :meth:`variance_weights`).

    Attributes
    ----------
    tables : list of tuple
        The attribute sets of the workload (default: the ``C(a, d)`` sets of
        arity ``d``, in lexicographic order).
    weights : ndarray
        ``w_S`` of each table.
    subsets : list of tuple
        Every ``A`` contained in some table whose residual is non-trivial (all
        its attributes have ``>= 2`` levels), by size then lexicographically,
        ``()`` first: the residual ``z_A`` is needed iff ``A ⊆ S`` for a table
        ``S`` of the workload.
    """

    def __init__(self, n_levels, d, tables=None, weights=None):
        levels = np.asarray(n_levels, dtype=np.int64).ravel()
        if levels.size == 0 or np.any(levels < 1):
            raise ValueError("every attribute needs at least one level")
        a = levels.size
        d = int(d)
        if not 1 <= d <= a:
            raise ValueError(
                f"d={d} must be between 1 and the number of attributes {a}"
            )
        self.n_levels = levels
        self.d = d
        self.n_attributes = a
        informative = [j for j in range(a) if levels[j] >= 2]
        if tables is None:
            self.tables = list(itertools.combinations(range(a), d))
            self.subsets = [
                A for k in range(d + 1) for A in itertools.combinations(informative, k)
            ]
        else:
            self.tables = [tuple(int(j) for j in S) for S in tables]
            for S in self.tables:
                if (
                    not 1 <= len(S) <= d
                    or list(S) != sorted(set(S))
                    or not all(0 <= j < a for j in S)
                ):
                    raise ValueError(
                        f"table {S} must be 1 to {d} sorted distinct attributes"
                    )
            if len(set(self.tables)) != len(self.tables):
                raise ValueError("tables must be distinct")
            keep = set(informative)
            closure = {
                A
                for S in self.tables
                for k in range(len(S) + 1)
                for A in itertools.combinations(S, k)
                if set(A) <= keep
            }
            self.subsets = sorted(closure, key=lambda A: (len(A), A))
        if weights is None:
            self.weights = np.ones(len(self.tables))
        else:
            self.weights = np.asarray(weights, dtype=np.float64).ravel()
            if self.weights.size != len(self.tables) or not np.all(
                np.isfinite(self.weights) & (self.weights > 0)
            ):
                raise ValueError("weights must be one positive number per table")
        self._subset_set = set(self.subsets)
        self._index = {A: i for i, A in enumerate(self.subsets)}
        self._Q = [helmert_basis(L) if L >= 2 else np.zeros((1, 0)) for L in levels]

    # ------------------------------------------------------------ sizes
    @property
    def n_queries(self):
        """Number of cells over all tables of the workload."""
        return int(sum(self.n_cells(S) for S in self.tables))

    def n_cells(self, S):
        return int(np.prod([self.n_levels[j] for j in S], dtype=np.int64))

    def residual_size(self, A):
        return int(np.prod([self.n_levels[j] - 1 for j in A], dtype=np.int64))

    # ------------------------------------------------------------ tables
    def table(self, L, S, sample_weight=None):
        """Counts of table ``S`` (flattened, C order over ``S``) of level rows ``L``.

        ``sample_weight``: integer counts of the rows (a contingency table's
        distinct rows); the table is then that of the expanded rows.
        """
        S = tuple(S)
        if not S:
            if sample_weight is not None:
                return np.array([float(np.sum(sample_weight))])
            return np.array([float(L.shape[0])])
        index = np.zeros(L.shape[0], dtype=np.int64)
        for j in S:
            index = index * int(self.n_levels[j]) + L[:, j]
        return np.bincount(
            index, weights=sample_weight, minlength=self.n_cells(S)
        ).astype(np.float64)

    def residual_matrix(self, A):
        """``⊗_{j∈A} Q_jᵀ``: maps table ``T_A`` to its residual ``z_A``."""
        M = np.ones((1, 1))
        for j in A:
            M = np.kron(M, self._Q[j].T)
        return M

    def residual(self, table, A):
        """``z_A = (⊗ Q_jᵀ) T_A`` by one small contraction per axis."""
        T = np.asarray(table, dtype=np.float64).reshape(
            tuple(int(self.n_levels[j]) for j in A)
        )
        for axis, j in enumerate(A):
            T = np.moveaxis(np.tensordot(self._Q[j].T, T, axes=([1], [axis])), 0, axis)
        return T.ravel()

    def answers(self, L):
        """Residuals ``{A: z_A}`` of the level rows ``L`` (the only data access).

        Tables are counted once per maximal set and marginalised down, so the
        data is read ``C(a, d)`` times by ``bincount``.
        """
        L = np.asarray(L, dtype=np.int64)
        return self.residuals({S: self.table(L, S) for S in self.tables})

    def residuals(self, tables):
        """Residuals ``{A: z_A}`` from the counts of the maximal tables.

        ``tables[S]`` holds the counts of table ``S`` for every ``S`` in
        ``tables`` (the sufficient statistic, additive over rows, so it can
        be summed over chunks of the data: :mod:`skdp_synth._stats`).
        """
        out = {}
        for S in self.tables:
            full = np.asarray(tables[S], dtype=np.float64).reshape(
                tuple(int(self.n_levels[j]) for j in S)
            )
            for k in range(len(S) + 1):
                for A in itertools.combinations(S, k):
                    if A in out or A not in self._subset_set:
                        continue
                    drop = tuple(i for i, j in enumerate(S) if j not in A)
                    out[A] = self.residual(full.sum(axis=drop).ravel(), A)
        return out

    def expansion_matrix(self, S, A):
        """``⊗_{j∈S} (Q_j if j ∈ A else 1/L_j)``: ``z_A`` -> its part of ``T_S``."""
        M = np.ones((1, 1))
        for j in S:
            L = int(self.n_levels[j])
            M = np.kron(M, self._Q[j] if j in A else np.full((L, 1), 1.0 / L))
        return M

    def _subsets_of(self, S):
        """``(i, A)`` for the residuals ``A ⊆ S`` (in ``subsets`` order)."""
        found = [
            (self._index[A], A)
            for k in range(len(S) + 1)
            for A in itertools.combinations(S, k)
            if A in self._index
        ]
        return sorted(found)

    def reconstruct(self, residuals, S):
        """The table ``T_S`` rebuilt from (noisy) residuals, flattened in C order."""
        S = tuple(sorted(S))
        total = np.zeros(self.n_cells(S))
        for _, A in self._subsets_of(S):
            total += self.expansion_matrix(S, A) @ np.asarray(residuals[A], float)
        return total

    # ----------------------------------------------------------- noise plan
    def sensitivity_weights(self):
        """``s_A = Π_{j∈A}(1 - 1/L_j)``: squared change of ``z_A`` per record."""
        return np.array(
            [np.prod([1.0 - 1.0 / self.n_levels[j] for j in A]) for A in self.subsets]
        )

    def variance_weights(self):
        """``v_A``: weighted workload variance per unit noise variance on ``z_A``.

        ``v_A = Π_{j∈A}(L_j - 1) Σ_{S ⊇ A} w_S Π_{j∈S∖A} 1/L_j`` (the module
        docstring's ``v_A`` with table weights ``w_S``; all ``w_S = 1`` is the
        unweighted sum of variances of ResidualPlanner, :cite:`Xiao2023`).
        """
        acc = np.zeros(len(self.subsets))
        inv = 1.0 / self.n_levels
        # one pass over the tables and their own subsets (Σ_S 2^|S| terms)
        for w, S in zip(self.weights, self.tables):
            for i, A in self._subsets_of(S):
                acc[i] += float(w) * float(np.prod([inv[j] for j in S if j not in A]))
        lead = np.array(
            [np.prod([self.n_levels[j] - 1.0 for j in A]) for A in self.subsets]
        )
        return lead * acc

    def calibrated_scales(self, neighbouring="add-remove-one", exact=()):
        """``(τ, s)``: :meth:`optimal_scales` and the sensitivity ``s`` it divided out.

        One evaluation of :meth:`whitened_sensitivity` (under replace-one an
        enumeration of attribute sets), on the :meth:`allocation`; ``τ = s ·
        τ_raw`` has whitened sensitivity exactly 1 (see
        :meth:`optimal_scales`). ``exact``: residuals published without
        noise (invariants, :cite:`Gao2022` extension framework; ``τ_A = 0``).
        """
        raw = self.allocation(neighbouring, exact)
        sens = self.whitened_sensitivity(raw, neighbouring, exact)
        return raw * sens, sens

    def whiten(self, residuals, tau):
        """``t = (z_A / τ_A)_A`` over the noised residuals (``τ_A > 0``), in a row."""
        return np.concatenate(
            [residuals[A] / tau[i] for i, A in enumerate(self.subsets) if tau[i] > 0]
        )

    def unwhiten(self, t, tau, total=None):
        """``{A: τ_A t_A}``; ``z_∅ = total`` when the total is public (``τ_∅ = 0``).

        Residuals with ``τ_A = 0`` other than a public total are left out
        (invariants, filled in exactly by the caller).
        """
        out, pos = {}, 0
        for i, A in enumerate(self.subsets):
            if tau[i] > 0:
                k = self.residual_size(A)
                out[A] = tau[i] * t[pos : pos + k]
                pos += k
        if () not in out and total is not None:
            out[()] = np.array([float(total)])
        return out

    def all_tables(self, residuals):
        """Every table of the workload rebuilt from ``residuals``, concatenated."""
        return np.concatenate([self.reconstruct(residuals, S) for S in self.tables])

    def optimal_scales(self, neighbouring="add-remove-one"):
        """Noise scales ``τ_A`` (one per subset; 0 for a public residual).

        ResidualPlanner's sum-of-variances optimum under add/remove (module
        docstring), scaled so the whitened ℓ2-sensitivity under
        ``neighbouring`` is exactly 1. Under replace-one ``z_∅ = n`` is public
        (``τ_∅ = 0``) and the add/remove allocation of the rest is rescaled to
        the exact replace-one sensitivity.

        It is :meth:`allocation` times its whitened sensitivity: the
        sensitivity is homogeneous of degree ``-1`` in ``τ``
        (``sens(k τ) = sens(τ)/k``: every ``s_A/τ_A²`` scales by ``1/k²``), so
        the product has sensitivity exactly 1.
        """
        tau = self.allocation(neighbouring)
        return tau * self.whitened_sensitivity(tau, neighbouring)

    def allocation(self, neighbouring="add-remove-one", exact=()):
        """ResidualPlanner's ``τ_A`` up to a common factor (``τ_A² ∝ sqrt(s_A/v_A)``).

        Unnormalised: :meth:`optimal_scales` divides out its whitened
        sensitivity. ``τ_∅ = 0`` under replace-one, where ``z_∅ = n`` is public.
        ``exact``: residuals that are invariants (:cite:`Gao2022`), ``τ_A = 0``;
        the Lagrange argument of the module docstring over the remaining
        residuals gives the same closed form on them.
        """
        s = self.sensitivity_weights()
        v = self.variance_weights()
        exact = set(exact)
        noisy = np.array([A not in exact for A in self.subsets], dtype=bool)
        if neighbouring == "replace-one":
            noisy[[i for i, A in enumerate(self.subsets) if not A]] = False
        if not noisy.any():
            return np.zeros(len(self.subsets))
        K = float(np.sum(np.sqrt(s[noisy] * v[noisy])))
        tau2 = np.zeros(len(self.subsets))
        tau2[noisy] = K * np.sqrt(s[noisy] / v[noisy])
        return np.sqrt(tau2)

    def whitened_sensitivity(self, tau, neighbouring="add-remove-one", exact=()):
        """ℓ2-sensitivity of ``(z_A / τ_A)_A`` (``τ_A = 0`` marks a public ``z_A``).

        ``exact``: residuals that are invariants, left out (:cite:`Gao2022`
        extension framework: the mechanism is built for the query's part in
        the invariants' null space, the other residuals).
        """
        tau = np.asarray(tau, dtype=np.float64)
        s = self.sensitivity_weights()
        noisy = tau > 0
        exact_mask = np.array([A in set(exact) for A in self.subsets], dtype=bool)
        w = np.zeros_like(tau)
        w[noisy] = s[noisy] / tau[noisy] ** 2
        if np.any(noisy & exact_mask):
            raise ValueError("an exact (invariant) residual cannot carry noise")
        if neighbouring == "add-remove-one":
            if np.any(~noisy & ~exact_mask & (s > 0)):
                raise ValueError("under add/remove every residual needs noise")
            return float(math.sqrt(w.sum()))
        for i, A in enumerate(self.subsets):
            if not noisy[i] and A and not exact_mask[i]:
                raise ValueError("under replace-one only z_∅ may be noise-free")
        a = self.n_attributes
        if a > MAX_EXACT_REPLACE_ATTRIBUTES:
            # each term 2 w_A (1 - Π ρ) <= 4 w_A (triangle inequality)
            return float(math.sqrt(4.0 * w.sum()))
        rho_in = np.array([-1.0 / (L - 1.0) if L >= 2 else 1.0 for L in self.n_levels])
        masks = (np.arange(1, 2**a)[:, None] >> np.arange(a)[None, :]) & 1
        rho = np.where(masks.astype(bool), rho_in[None, :], 1.0)
        total = np.zeros(masks.shape[0])
        for i, A in enumerate(self.subsets):
            if w[i] > 0.0 and A:
                total += 2.0 * w[i] * (1.0 - np.prod(rho[:, list(A)], axis=1))
        return float(math.sqrt(total.max()))

    def expected_error(self, tau, c):
        """``E Σ_S w_S Σ_cells (T~_S - T_S)²``: ``c² Σ_A v_A τ_A²`` (weighted)."""
        return float(c**2 * np.sum(self.variance_weights() * np.asarray(tau) ** 2))

    def cell_variance(self, tau, c, S):
        """Variance of one cell of the rebuilt table ``T_S`` (all cells alike)."""
        S = tuple(sorted(S))
        var = 0.0
        for i, A in self._subsets_of(S):
            var += (
                tau[i] ** 2
                * np.prod([1.0 - 1.0 / self.n_levels[j] for j in A])
                * np.prod([1.0 / self.n_levels[j] ** 2 for j in S if j not in A])
            )
        return float(c**2 * var)

    def query_labels(self, names):
        """``(table, cell)`` label of each released cell: attribute names, levels."""
        names = list(names)
        return [
            (tuple(names[j] for j in S), cell)
            for S in self.tables
            for cell in itertools.product(*[range(int(self.n_levels[j])) for j in S])
        ]

    def __repr__(self):
        return (
            f"AttributeMarginalWorkload(n_levels={self.n_levels.tolist()}, d={self.d}"
            f", n_tables={len(self.tables)})"
        )
