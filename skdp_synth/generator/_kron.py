"""The vectorised bookkeeping: cliques whose ``H_S`` is of Kronecker form.

When every measurement's ``Q_mᵀ Q_m`` is a sum of Kronecker products of
identity and all-ones matrices (identity queries and ResidualPlanner's
residuals are), ``H_S`` never needs to be formed: it is held as ``2^|S|``
coefficients, and the cliques of one shape move together as stacked arrays.
This module reads those coefficients off the queries
(:func:`_kron_coefficients`), builds the stacks (:class:`_KronFamily`,
:func:`_build_kron`), solves with them in the residual basis
(:func:`_kron_solve`) and keeps the local search's vectorised state
(:class:`_KronState`, with the per-attribute index plans of
:class:`_AttributePlan`). It computes the same exact loss changes as the
dense :class:`~._cliques._DenseState`.
"""

from __future__ import annotations

import math

import numpy as np

from ._cliques import _maximal_sets, _row_minima


def _kron_coefficients(m, n_levels):
    """``β`` with ``Q_mᵀ Q_m = Σ_{B⊆A} β_B ⊗_{j∈B} I ⊗_{j∈A∖B} J``, or ``None``.

    ``J`` is the all-ones matrix; ``B`` is a bit mask over the positions of
    ``A = m.attributes``. An identity query is ``β = e_A``. A residual query
    ``⊗ Q_jᵀ`` (Helmert rows) gives ``⊗ (I - J/L_j)``, of this form too. For a
    general ``Q`` the coefficients are read off one column of ``QᵀQ``
    (``G[c, 0]`` depends only on the set ``B`` of positions where the cell
    ``c`` and the cell 0 agree: ``h(B) = Σ_{C⊆B} β_C``, Möbius inversion) and
    the form is then checked on two random vectors; ``None`` when it fails.
    """
    A = m.attributes
    k = len(A)
    beta = np.zeros(1 << k)
    if m.query is None:
        beta[-1] = 1.0
        return beta
    shape = tuple(int(n_levels[j]) for j in A)
    if any(L < 2 for L in shape):
        return None
    Q = m.query
    size = Q.shape[1]
    strides = [int(np.prod(shape[q + 1 :], dtype=np.int64)) for q in range(k)]
    col = Q.T @ Q[:, 0]
    h = np.array(
        [
            col[sum(strides[q] for q in range(k) if not (B >> q) & 1)]
            for B in range(1 << k)
        ]
    )
    for B in range(1 << k):
        sub = B
        while True:  # Σ_{C ⊆ B} (-1)^{|B∖C|} h(C)
            beta[B] += (-1) ** (bin(B ^ sub).count("1")) * h[sub]
            if sub == 0:
                break
            sub = (sub - 1) & B
    probe = np.random.default_rng(0).standard_normal((size, 2))
    lhs = Q.T @ (Q @ probe)
    rhs = np.zeros_like(lhs)
    V = probe.T.reshape(2, *shape)
    for B in range(1 << k):
        axes = tuple(1 + q for q in range(k) if not (B >> q) & 1)
        part = V.sum(axis=axes, keepdims=True) if axes else V
        rhs += beta[B] * np.broadcast_to(part, V.shape).reshape(2, size).T
    scale = np.abs(lhs).max() + np.abs(Q).max() ** 2
    if not np.allclose(lhs, rhs, rtol=1e-9, atol=1e-9 * scale):
        return None
    return beta


class _KronFamily:
    """Cliques of one shape whose ``H_S`` are sums of Kronecker products of
    ``I`` and ``J`` (the all-ones matrix), held as stacked arrays.

    ``H_S = Σ_{B⊆S} α_B K_B`` with ``K_B = ⊗_{j∈B} I ⊗_{j∈S∖B} J`` (``B`` a bit
    mask over the clique's axes). Then ``K_B T = `` the sub-table of ``T`` on
    ``B``, spread back over the other axes, so ``H_S T`` and ``Tᵀ H_S T`` cost
    ``2^|S|`` marginalisations of ``T`` instead of a dense ``cells²`` matrix,
    and ``H_S[c, o] = Σ_{B⊆agree(c, o)} α_B`` (``agree``: the axes where the
    cells ``c`` and ``o`` have the same level). All cliques of the family
    are updated at once (one array operation per ``B``).
    """

    def __init__(self, shape, attrs, alpha, b, const):
        self.shape = tuple(int(L) for L in shape)
        self.k = len(self.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.strides = np.array(
            [int(np.prod(self.shape[q + 1 :], dtype=np.int64)) for q in range(self.k)]
        )
        self.attrs = np.asarray(attrs, dtype=np.int64).reshape(-1, self.k)
        self.alpha = np.asarray(alpha, dtype=np.float64)  # (n_f, 2^k)
        self.b = np.asarray(b, dtype=np.float64)  # (n_f, cells)
        self.const = np.asarray(const, dtype=np.float64)  # (n_f,)
        full = (1 << self.k) - 1
        # h[f, M] = Σ_{B ⊆ M} α_B: the entry H[c, o] when c, o agree on M
        self.h = np.zeros_like(self.alpha)
        for M in range(full + 1):
            for B in range(full + 1):
                if B & ~M == 0:
                    self.h[:, M] += self.alpha[:, B]

    def _margins(self, D, idx):
        Dr = D.reshape(idx.size, *self.shape)
        for B in range(1 << self.k):
            axes = tuple(1 + q for q in range(self.k) if not (B >> q) & 1)
            yield B, (Dr.sum(axis=axes, keepdims=True) if axes else Dr)

    def hmul(self, D, idx):
        """``H_S D_S`` for the cliques ``idx`` (rows of ``D``)."""
        out = np.zeros((idx.size, *self.shape))
        col = (idx.size,) + (1,) * self.k
        for B, part in self._margins(D, idx):
            out += self.alpha[idx, B].reshape(col) * part
        return out.reshape(idx.size, self.size)

    def quad(self, D, idx):
        """``D_Sᵀ H_S D_S`` for the cliques ``idx``."""
        out = np.zeros(idx.size)
        for B, part in self._margins(D, idx):
            out += self.alpha[idx, B] * np.square(part).reshape(idx.size, -1).sum(
                axis=1
            )
        return out

    def cells(self, R, idx):
        """``(rows, cliques)`` cell index of every row of ``R`` in cliques ``idx``."""
        out = np.zeros((R.shape[0], idx.size), dtype=np.int64)
        for q in range(self.k):
            out = out * self.shape[q] + R[:, self.attrs[idx, q]]
        return out


def _all_coefficients(measurements, n_levels):
    """:func:`_kron_coefficients` of every measurement (``None`` for the
    total), or ``None`` if some measurement is not of the Kronecker form.

    Equal queries on equal shapes (e.g. the residuals of every pair of
    10-level attributes) are examined once.
    """
    seen, out = {}, []
    for m in measurements:
        if not m.attributes:
            out.append(None)
            continue
        _spread_back(m, n_levels)  # size checks first
        shape = tuple(int(n_levels[j]) for j in m.attributes)
        key = (shape, None if m.query is None else m.query.tobytes())
        if key not in seen:
            seen[key] = _kron_coefficients(m, n_levels)
        if seen[key] is None:
            return None
        out.append(seen[key])
    return out


def _spread_back(m, n_levels):
    """``Q_mᵀ y_m`` as a table on ``m.attributes`` (sizes checked)."""
    shape_A = tuple(int(n_levels[j]) for j in m.attributes)
    size_A = int(np.prod(shape_A, dtype=np.int64))
    vals = m.values
    if m.query is None:
        if vals.size != size_A:
            raise ValueError(
                f"measurement on {m.attributes}: {vals.size} values for a "
                f"table of {size_A} cells"
            )
        return vals.reshape(shape_A)
    if m.query.shape[1] != size_A:
        raise ValueError(
            f"measurement on {m.attributes}: query has {m.query.shape[1]} "
            f"columns, the table has {size_A} cells"
        )
    return (m.query.T @ vals).reshape(shape_A)


def _kron_fold(slot, m, beta, S, n_levels):
    """Add ``m`` (on ``A ⊆ S``) to the accumulators ``[α, b, const]`` of ``S``.

    ``M = Q ∘ (marginalise S -> A)``, so ``MᵀM = QᵀQ ⊗ J_{S∖A}`` has the
    coefficients ``β`` on the masks of ``A`` read as masks of ``S``, and
    ``Mᵀ y = Qᵀ y`` spread over ``S ∖ A``.
    """
    pos = [S.index(j) for j in m.attributes]
    w = 1.0 / m.sigma**2
    for B in range(1 << len(pos)):
        if beta[B] != 0.0:
            mask = sum(1 << pos[t] for t in range(len(pos)) if (B >> t) & 1)
            slot[0][mask] += w * beta[B]
    spread = [1] * len(S)
    back = _spread_back(m, n_levels)
    for t, p in enumerate(pos):
        spread[p] = back.shape[t]
    slot[1] += w * back.reshape(spread)  # broadcast over S ∖ A
    slot[2] += w * float(m.values @ m.values)


def _new_slot(S, n_levels):
    return [np.zeros(1 << len(S)), np.zeros(tuple(int(n_levels[j]) for j in S)), 0.0]


def _build_kron(measurements, n_levels, betas=None):
    """The cliques as :class:`_KronFamily` stacks, or ``None`` when some
    measurement is not of the Kronecker form (see :func:`_kron_coefficients`)."""
    if betas is None:
        betas = _all_coefficients(measurements, n_levels)
        if betas is None:
            return None
    maximal, home = _maximal_sets(measurements)
    acc = {S: _new_slot(S, n_levels) for S in maximal}
    for m, beta in zip(measurements, betas):
        if m.attributes:
            S = home[m.attributes]
            _kron_fold(acc[S], m, beta, S, n_levels)
    groups = {}
    for S in maximal:
        shape = tuple(int(n_levels[j]) for j in S)
        groups.setdefault(shape, []).append(S)
    families = []
    for shape, Ss in groups.items():
        families.append(
            _KronFamily(
                shape,
                Ss,
                np.stack([acc[S][0] for S in Ss]),
                np.stack([acc[S][1].ravel() for S in Ss]),
                np.array([acc[S][2] for S in Ss]),
            )
        )
    return families


def _kron_solve(alpha, b, ridge, prior):
    """``(H + ridge I)⁻¹ (b + ridge prior)`` for ``H = Σ_B α_B K_B`` (table shape).

    ``H`` is diagonal in the components of the residual basis: on the
    subspace ``⊗_{q∈A}(1^⊥) ⊗_{q∉A} 1`` (``A`` a mask) ``K_B`` acts as
    ``Π_{q∉B} L_q`` if ``A ⊆ B`` and as 0 otherwise, so the eigenvalue is
    ``λ_A = Σ_{B⊇A} α_B Π_{q∉B} L_q``; the projection onto it is
    ``P_A v = Σ_{C⊆A} (-1)^{|A∖C|} K_C v / Π_{q∉C} L_q``
    (``⊗_{q∈A}(I - J/L_q) ⊗_{q∉A} J/L_q`` expanded). Cost ``4^|S|``
    marginalisations instead of a dense ``cells³`` solve.
    """
    shape = b.shape
    k = len(shape)
    full = (1 << k) - 1
    rhs = b + ridge * prior
    margins = {}
    for C in range(full + 1):
        axes = tuple(q for q in range(k) if not (C >> q) & 1)
        part = rhs.sum(axis=axes, keepdims=True) if axes else rhs
        outside = float(np.prod([shape[q] for q in axes])) if axes else 1.0
        margins[C] = part / outside
    T = np.zeros(shape)
    for A in range(full + 1):
        lam = ridge
        for B in range(full + 1):
            if A & ~B == 0:
                lam += alpha[B] * float(
                    np.prod([shape[q] for q in range(k) if not (B >> q) & 1])
                )
        proj = np.zeros(shape)
        C = A
        while True:
            proj = proj + (-1) ** bin(A ^ C).count("1") * margins[C]
            if C == 0:
                break
            C = (C - 1) & A
        T += proj / lam
    return T


class _AttributePlan:
    """Index arrays that put every clique containing one attribute ``j`` side
    by side, whatever its family (shape), so that a step on ``j`` is a few
    array operations instead of a loop over families.

    Per member clique ``m`` (``tot`` of them): ``base`` (offset of its table
    in the flat buffers), the columns/multipliers of its full cell index and
    of its context (the other attributes), ``stride_p`` (the stride of
    ``j``), ``bitval`` (the bit of each context axis in the clique's masks),
    ``h`` padded to ``2^kmax``; per *term* ``(m, B)`` with ``B ∋ j`` (the only
    masks on which a move of ``j`` changes ``marg_B ΔT``): the columns and
    multipliers of the projection onto ``B``, its offset in one counts vector
    and ``α_B``; and for the gradient update every cell of every member with
    the counts entries of its terms.
    """

    def __init__(self, members, j):
        kmax = max(f.k for f, *_ in members)
        base, cols, mult, ccols, cmult, bitval, hs, pbit, stride_p = (
            [] for _ in range(9)
        )
        ctx_off, G_off = [], 0
        tcols, tmult, toff, talpha, tsize, tstride = [], [], [], [], [], []
        upd_idx, upd_terms, upd_alpha = [], [], []
        T_off = 0
        for f, idx, p, _ in members:
            others = [q for q in range(f.k) if q != p]
            nctx = f.size // f.shape[p]
            for i in idx:
                attrs = f.attrs[i]
                base.append(f.off + i * f.size)
                cols.append([attrs[q] for q in range(f.k)] + [0] * (kmax - f.k))
                mult.append(list(f.strides) + [0] * (kmax - f.k))
                cm = [
                    int(np.prod([f.shape[o] for o in others[t + 1 :]]))
                    for t in range(len(others))
                ]
                ccols.append(
                    [attrs[q] for q in others] + [0] * (kmax - 1 - len(others))
                )
                cmult.append(cm + [0] * (kmax - 1 - len(others)))
                bitval.append([1 << q for q in others] + [0] * (kmax - 1 - len(others)))
                hpad = np.zeros(1 << kmax)
                hpad[: 1 << f.k] = f.h[i]
                hs.append(hpad)
                pbit.append(1 << p)
                stride_p.append(f.strides[p])
                ctx_off.append(G_off)
                G_off += nctx
                # terms: masks B containing p
                cells = np.arange(f.size)
                digits = [(cells // f.strides[q]) % f.shape[q] for q in range(f.k)]
                uidx_terms, uidx_alpha = [], []
                for B in range(1 << f.k):
                    if not (B >> p) & 1:
                        continue
                    axes = [q for q in range(f.k) if (B >> q) & 1]
                    bm = [
                        int(np.prod([f.shape[o] for o in axes[t + 1 :]]))
                        for t in range(len(axes))
                    ]
                    size = int(np.prod([f.shape[q] for q in axes]))
                    tcols.append([attrs[q] for q in axes] + [0] * (kmax - len(axes)))
                    tmult.append(bm + [0] * (kmax - len(axes)))
                    tstride.append(bm[axes.index(p)])
                    toff.append(T_off)
                    talpha.append(f.alpha[i, B])
                    tsize.append(size)
                    proj = sum(digits[q] * bm[t] for t, q in enumerate(axes))
                    uidx_terms.append(T_off + proj)
                    uidx_alpha.append(np.full(f.size, f.alpha[i, B]))
                    T_off += size
                while len(uidx_terms) < 1 << (kmax - 1):
                    uidx_terms.append(np.zeros(f.size, dtype=np.int64))
                    uidx_alpha.append(np.zeros(f.size))
                upd_idx.append(f.off + i * f.size + cells)
                upd_terms.append(np.stack(uidx_terms, axis=1))
                upd_alpha.append(np.stack(uidx_alpha, axis=1))
        as_int = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
        self.tot = len(base)
        self.base = as_int(base)
        self.cols, self.mult = as_int(cols).T, as_int(mult).T  # (kmax, tot)
        self.ccols, self.cmult = as_int(ccols).T, as_int(cmult).T
        self.bitval = as_int(bitval).T
        self.h = np.stack(hs)  # (tot, 2^kmax)
        self.pbit = as_int(pbit)
        full_h = np.array([h[pb | sum(bv)] for h, pb, bv in zip(hs, pbit, bitval)])
        nop_h = np.array([h[sum(bv)] for h, bv in zip(hs, bitval)])
        self.quad_single = 4.0 * (full_h - nop_h)  # both rows' curvatures
        self.stride_p = as_int(stride_p)
        self.ctx_off = as_int(ctx_off)
        self.n_ctx = G_off
        # contexts of each member, and how many tuples of them there are
        self.ctx_count = np.diff(np.append(self.ctx_off, G_off))
        self.key_space = math.prod(int(c) for c in self.ctx_count)
        self.tcols, self.tmult = as_int(tcols).T, as_int(tmult).T
        self.toff = as_int(toff)
        self.tstride = as_int(tstride)  # j's stride in each term's projection
        self.n_counts = T_off
        self.alpha_rep = np.repeat(np.asarray(talpha, dtype=np.float64), tsize)
        self.upd_idx = np.concatenate(upd_idx)
        self.upd_terms = np.concatenate(upd_terms)
        self.upd_alpha = np.concatenate(upd_alpha)

    @staticmethod
    def index(R, cols, mult, offset):
        if cols.shape[0] == 0:
            return np.broadcast_to(offset, (R.shape[0], offset.size)).copy()
        out = R[:, cols[0]] * mult[0]
        out += offset
        for q in range(1, cols.shape[0]):
            out += R[:, cols[q]] * mult[q]
        return out


class _KronState:
    """Vectorised bookkeeping: the cliques of one shape move together.

    Same arithmetic as :class:`_DenseState` (exact loss changes), with
    ``H_S`` in the ``I``/``J`` Kronecker form of :class:`_KronFamily`:

    * a move of attribute ``j`` from level ``o`` to ``c`` changes the loss by
      ``Σ_S g_S[c] - g_S[o] + κ_S`` with the constant curvature
      ``κ_S = H[c,c] + H[o,o] - 2 H[c,o] = 2 Σ_{B∋j} α_B``; the ``Σ_S g_S[·]``
      of every row and level is a sum of gradient rows: each row's context
      (the other attributes of each clique) picks one row of the stacked
      gradients per clique;
    * a swap of ``j`` between two rows changes ``Σ_S`` of the gradient part
      plus ``4 (h_full - h_{S∖j} + h_M - h_{M∪j})`` with ``M`` the other axes
      where the two rows agree (``h`` as in :class:`_KronFamily`);
    * applied moves update the tables and gradients by the exact
      ``ΔL = gᵀΔT + ΔTᵀ H ΔT`` and ``g += 2 H ΔT``.
    """

    def __init__(self, families, R):
        self.families, self.R = families, R
        a = R.shape[1]
        self.by_attr = [[] for _ in range(a)]
        self._bound = np.zeros(a)
        self._curv = np.zeros(a)
        for f in families:
            for p in range(f.k):
                col = f.attrs[:, p]
                for j in np.unique(col):
                    idx = np.flatnonzero(col == j)
                    kappa = 2.0 * sum(
                        f.alpha[idx, B].sum() for B in range(1 << f.k) if (B >> p) & 1
                    )
                    self.by_attr[int(j)].append((f, idx, p, float(kappa)))
                    self._curv[int(j)] += kappa
                    self._bound[int(j)] += 4.0 * sum(
                        np.abs(f.alpha[idx, B]).sum()
                        for B in range(1 << f.k)
                        if (B >> p) & 1
                    )
        # every clique's table and gradient in two flat buffers; each family
        # holds (n_f, cells) views of its segment
        off = 0
        for f in families:
            f.off = off
            off += f.attrs.shape[0] * f.size
        self.flat = off
        self.T, self.g = np.zeros(off), np.zeros(off)
        for f in families:
            n_f = f.attrs.shape[0]
            f.T = self.T[f.off : f.off + n_f * f.size].reshape(n_f, f.size)
            f.g = self.g[f.off : f.off + n_f * f.size].reshape(n_f, f.size)
        self._plans = [None] * a
        self.reset()

    def _plan(self, j):
        if self._plans[j] is None:
            self._plans[j] = _AttributePlan(self.by_attr[j], j)
        return self._plans[j]

    def reset(self):
        for f in self.families:
            every = np.arange(f.attrs.shape[0])
            cells = f.cells(self.R, every) + every * f.size
            f.T[...] = np.bincount(
                cells.ravel(), minlength=every.size * f.size
            ).reshape(every.size, f.size)
            f.g[...] = 2.0 * (f.hmul(f.T, every) - f.b)

    def has_members(self, j):
        return bool(self.by_attr[j])

    def loss(self):
        total = 0.0
        for f in self.families:
            every = np.arange(f.attrs.shape[0])
            total += float(
                np.sum(f.quad(f.T, every) - 2.0 * np.sum(f.b * f.T, axis=1) + f.const)
            )
        return total

    def _gradient_rows(self, j, L):
        """The members' gradients as rows of ``L`` levels, one per context."""
        return np.concatenate(
            [
                np.moveaxis(f.g[idx].reshape(idx.size, *f.shape), 1 + p, -1).reshape(
                    -1, L
                )
                for f, idx, p, _ in self.by_attr[j]
            ]
        )

    def best_moves(self, j, L, rows):
        """Each row's best new level of ``j`` and its gain: the row-wise
        minimum of :meth:`move_deltas`, the same values to the bit.

        A row's changes depend on its context in each clique of ``j`` and
        its level alone, so where the possible (contexts, level) keys are at
        most four per row and the rows hold at most a quarter as many
        distinct keys as rows, the changes are computed once per key present
        (the same arithmetic on the same numbers, from any row of the key)
        and handed to each row of the key: an attribute measured on its own
        (one context) of 91 levels needs 91 rows of changes, not one per
        model row. A table of the keys, not a sort: counting them costs less
        than the rows' changes it saves."""
        P = self._plan(j)
        Rr = self.R[rows]
        n = rows.size
        ctx = P.index(Rr, P.ccols, P.cmult, P.ctx_off)
        cur = Rr[:, j]
        space = P.key_space * L
        if space <= 4 * n:
            key = cur.copy()
            for q in range(P.tot):
                key *= int(P.ctx_count[q])
                key += ctx[:, q] - P.ctx_off[q]
            present = np.flatnonzero(np.bincount(key, minlength=space))
            if 4 * present.size <= n:
                row_of = np.empty(space, dtype=np.int64)
                row_of[key] = np.arange(n)  # any row of each key: same changes
                r = row_of[present]
                best, gain = _row_minima(
                    self._deltas(self._gradient_rows(j, L), ctx[r], cur[r], j)
                )
                at = np.empty(space, dtype=np.int64)
                at[present] = np.arange(present.size)
                inverse = at[key]
                return best[inverse], gain[inverse]
        return _row_minima(self._deltas(self._gradient_rows(j, L), ctx, cur, j))

    def one_context(self, j):
        """Whether every row's changes of ``j`` depend on its level alone
        (``j`` in one clique, with no other attribute)."""
        P = self._plan(j)
        return P.tot == 1 and P.n_ctx == 1

    def swaps_cannot_gain(self, j):
        """Whether no swap of ``j`` can pass the descent's gain threshold
        (``-1e-6``): ``j`` measured on its own (a swap keeps its 1-way table,
        the only table holding it, so its exact gain is 0) and every
        gradient entry of that table at most ``1e9`` in absolute value. The
        computed gain is then ``((g_b - g_a) + g_a) - g_b`` plus an exact 0
        (``4 (h_1 - h_0) + 4 (h_0 - h_1)``), whose rounding error is at most
        about ``3.3e-16 max|g| <= 3.3e-7``: no swap is ever kept, so the
        step can be skipped with the same rows."""
        if not self.one_context(j):
            return False
        ((f, idx, _, _),) = self.by_attr[j]
        return float(np.max(np.abs(f.g[idx]))) <= 1e9

    def _deltas(self, G, ctx, cur, j):
        # each row's sum of its members' gradient rows, added in member order
        # (as the sparse one-hot product adds them, without building it)
        D = np.take(G, ctx[:, 0], axis=0)
        for q in range(1, ctx.shape[1]):
            D += np.take(G, ctx[:, q], axis=0)
        at = np.arange(cur.size)
        D -= D[at, cur][:, None]
        D += self._curv[j]
        D[at, cur] = 0.0
        return D

    def move_deltas(self, j, L, rows):
        P = self._plan(j)
        Rr = self.R[rows]
        ctx = P.index(Rr, P.ccols, P.cmult, P.ctx_off)
        return self._deltas(self._gradient_rows(j, L), ctx, Rr[:, j], j)

    def swap_bound(self, j):
        """Bound on a swap's gain beyond its two single moves.

        A swap's gain is the two rows' single-move gains plus the interaction
        ``4 (h_M - h_{M∪j})`` per clique (see the class docstring; the single
        moves carry ``2 (h_full - h_{S∖j})`` each), and
        ``|h_M - h_{M∪j}| = |Σ_{B ⊆ M∪j, B∋j} α_B| <= Σ_{B∋j} |α_B|``.
        """
        return self._bound[j]

    def swap_gains(self, j, r1, r2):
        P = self._plan(j)
        R1, R2 = self.R[r1], self.R[r2]
        lv1, lv2 = R1[:, j], R2[:, j]
        o1 = P.index(R1, P.cols, P.mult, P.base)
        o2 = P.index(R2, P.cols, P.mult, P.base)
        d = (lv2 - lv1)[:, None] * P.stride_p[None, :]
        g = self.g
        lin = g[o1 + d] - g[o1] + g[o2 - d] - g[o2]
        mask = np.zeros(o1.shape, dtype=np.int64)
        for q in range(P.ccols.shape[0]):
            mask += (R1[:, P.ccols[q]] == R2[:, P.ccols[q]]) * P.bitval[q]
        m = np.arange(P.tot)[None, :]
        quad = P.quad_single[None, :] + 4.0 * (
            P.h[m, mask] - P.h[m, mask | P.pbit[None, :]]
        )
        return (lin + quad).sum(axis=1)

    def trial(self, j, chosen, new_level):
        """``ΔL = gᵀΔT + Σ_{B∋j} α_B ||marg_B ΔT||²`` over every clique with ``j``
        (``marg_B ΔT = 0`` when ``j ∉ B``: the moves change ``j`` only)."""
        P = self._plan(j)
        Rc = self.R[chosen]
        step = (new_level - Rc[:, j])[:, None]
        old = P.index(Rc, P.cols, P.mult, P.base)
        new = old + step * P.stride_p[None, :]
        lin = float(np.sum(self.g[new] - self.g[old]))
        # every term holds j: the new rows' projections are the old ones
        # moved by j's change times its stride there
        po = P.index(Rc, P.tcols, P.tmult, P.toff)
        pn = po + step * P.tstride[None, :]
        counts = (
            np.bincount(pn.ravel(), minlength=P.n_counts)
            - np.bincount(po.ravel(), minlength=P.n_counts)
        ).astype(np.float64)
        quad = float(P.alpha_rep @ (counts * counts))
        return 0.0, lin + quad, (old, new, counts, P)

    def commit(self, j, chosen, new_level, parts):
        old, new, counts, P = parts
        self.R[chosen, j] = new_level
        self.T += np.bincount(new.ravel(), minlength=self.flat) - np.bincount(
            old.ravel(), minlength=self.flat
        )
        # g += 2 H ΔT, H ΔT = Σ_{B∋j} α_B (marg_B ΔT) spread back over S
        self.g[P.upd_idx] += 2.0 * np.sum(P.upd_alpha * counts[P.upd_terms], axis=1)

    def over_filled(self):
        over = np.zeros(self.R.shape[0], dtype=bool)
        for f in self.families:
            every = np.arange(f.attrs.shape[0])
            cells = f.cells(self.R, every) + every * f.size
            over |= (f.g.ravel()[cells] > 1e-9).any(axis=1)
        return over
