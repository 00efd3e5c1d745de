"""The measurements' loss folded into cliques, with dense ``H_S``.

The generator's loss is a sum over *cliques* (the maximal measured attribute
sets) of quadratic forms of their tables. This module finds the cliques,
folds every measurement into one (:class:`_Clique`: ``H_S``, ``b_S`` and the
constant held densely, so any linear query ``Q_m`` works) and keeps the
per-clique bookkeeping of the local search (:class:`_DenseState`). It also
holds the size limit on a clique that estimators check when they plan
(``MAX_TABLE_CELLS``). The vectorised bookkeeping for Kronecker-form queries
is in :mod:`._kron`.
"""

from __future__ import annotations

import itertools

import numpy as np

#: largest dense clique matrix H_S (cells²) held in memory, in entries
_MAX_CLIQUE_ENTRIES = 4_000_000
#: the most cells a clique (a measured table) may have: ``cells² <=``
#: ``_MAX_CLIQUE_ENTRIES``; estimators check their tables against it when
#: they plan, before the data is read
MAX_TABLE_CELLS = 2_000


class _Clique:
    """The loss of the measurements folded into one attribute set ``S``."""

    def __init__(self, S, n_levels):
        self.S = S
        self.shape = tuple(int(n_levels[j]) for j in S)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.strides = {
            j: int(np.prod(self.shape[i + 1 :], dtype=np.int64))
            for i, j in enumerate(S)
        }
        self.H = np.zeros((self.size, self.size))
        self.b = np.zeros(self.size)
        self.const = 0.0
        self._grids = {}

    def add(self, m):
        M = _marginalisation(self.S, m.attributes, self.shape)
        if m.query is not None:
            if m.query.shape[1] != M.shape[0]:
                raise ValueError(
                    f"measurement on {m.attributes}: query has {m.query.shape[1]} "
                    f"columns, the table has {M.shape[0]} cells"
                )
            M = m.query @ M
        elif m.values.size != M.shape[0]:
            raise ValueError(
                f"measurement on {m.attributes}: {m.values.size} values for a "
                f"table of {M.shape[0]} cells"
            )
        w = 1.0 / m.sigma**2
        self.H += w * (M.T @ M)
        self.b += w * (M.T @ m.values)
        self.const += w * float(m.values @ m.values)

    def finish(self):
        self.diag = np.ascontiguousarray(np.diag(self.H))

    def grid(self, j):
        """``(cells/L_j, L_j)`` cell indices: rows = configurations of the others."""
        g = self._grids.get(j)
        if g is None:
            st, L = self.strides[j], self.shape[self.S.index(j)]
            cells = np.arange(self.size)
            level = (cells // st) % L
            base = cells - level * st
            compact = (base // (st * L)) * st + base % st
            g = np.empty((self.size // L, L), dtype=np.int64)
            g[compact, level] = cells
            self._grids[j] = g
        return g

    def cells(self, R):
        index = np.zeros(R.shape[0], dtype=np.int64)
        for j in self.S:
            index = index * self.shape[self.S.index(j)] + R[:, j]
        return index

    def loss(self, T):
        return float(T @ self.H @ T - 2.0 * self.b @ T + self.const)


def _marginalisation(S, A, shape):
    """Matrix summing the flattened table over ``S`` down to its sub-table ``A``."""
    M = np.ones((1, 1))
    for j, L in zip(S, shape):
        M = np.kron(M, np.eye(L) if j in A else np.ones((1, L)))
    return M  # (cells of A, cells of S): T_A = M @ T_S


def _maximal_sets(measurements):
    """The measured attribute sets contained in no other, by size then order,
    and the home of every measured set: the first maximal set containing it.

    Proper subsets of each set are marked (``2^|S|`` each) instead of
    comparing every pair of sets (quadratic in the number of tables).
    """
    sets = {m.attributes for m in measurements if m.attributes}
    covered = set()
    for S in sets:
        for k in range(1, len(S)):
            covered.update(itertools.combinations(S, k))
    maximal = sorted((S for S in sets if S not in covered), key=lambda S: (len(S), S))
    home = {}
    for S in maximal:
        for k in range(1, len(S) + 1):
            for A in itertools.combinations(S, k):
                home.setdefault(A, S)
    return maximal, home


def _build_cliques(measurements, n_levels):
    maximal, homes = _maximal_sets(measurements)
    cliques = {S: _Clique(S, n_levels) for S in maximal}
    total = 0.0
    for m in measurements:
        if not m.attributes:
            continue
        home = homes[m.attributes]
        cliques[home].add(m)
        total += m.values.size
    for c in cliques.values():
        if c.size**2 > _MAX_CLIQUE_ENTRIES:
            raise ValueError(
                f"the clique {c.S} has {c.size} cells; its quadratic form would need "
                f"{c.size**2 * 8 / 2**30:.1f} GiB (limit {_MAX_CLIQUE_ENTRIES} entries)"
            )
        c.finish()
    return list(cliques.values()), int(total)


def _row_minima(delta):
    """``(argmin, min)`` of each row of ``delta``: a row's best move and its
    gain (the first level of the least change)."""
    best = np.argmin(delta, axis=1)
    return best, delta[np.arange(delta.shape[0]), best]


class _DenseState:
    """Per-clique bookkeeping with dense ``H_S`` (any linear measurement).

    One clique at a time, as the generator did before the vectorised
    :class:`_KronState`; used when a measurement's ``Q_mᵀ Q_m`` is not of
    the Kronecker form that :class:`_KronState` needs (e.g. the bit tables of
    the bit-level mechanisms), or on request (``vectorised=False``).
    """

    def __init__(self, cliques, R):
        self.cliques, self.R = cliques, R
        a = R.shape[1]
        self.by_attr = [
            [i for i, c in enumerate(cliques) if j in c.S] for j in range(a)
        ]
        self.reset()

    def reset(self):
        R = self.R
        self.cells = [c.cells(R) for c in self.cliques]
        self.tables = [
            np.bincount(ix, minlength=c.size).astype(np.float64)
            for c, ix in zip(self.cliques, self.cells)
        ]
        self.grads = [2.0 * (c.H @ T - c.b) for c, T in zip(self.cliques, self.tables)]
        self.losses = [c.loss(T) for c, T in zip(self.cliques, self.tables)]

    def has_members(self, j):
        return bool(self.by_attr[j])

    def loss(self):
        return float(sum(self.losses))

    def move_deltas(self, j, L, rows):
        """Exact loss change when each of ``rows`` moves to each level of ``j``."""
        R, cells, grads = self.R, self.cells, self.grads
        cur = R[rows, j]
        delta = np.zeros((rows.size, L))
        for i in self.by_attr[j]:
            c = self.cliques[i]
            st = c.strides[j]
            base = cells[i][rows] - cur * st
            # compact index of the other attributes' configuration
            compact = (base // (st * L)) * st + base % st
            grid = c.grid(j)  # (cells/L, L) cell index of (configuration, level)
            g, dg = grads[i][grid], c.diag[grid]
            table = g[:, None, :] - g[:, :, None] + dg[:, None, :] + dg[:, :, None]
            table -= 2.0 * c.H[grid[:, :, None], grid[:, None, :]]
            # [configuration, current level, new level] -> one row per synthetic row
            delta += table.reshape(-1, L)[compact * L + cur]
        return delta

    def swaps_cannot_gain(self, j):
        """``False``: the dense bookkeeping tries every swap step."""
        return False

    def one_context(self, j):
        """``False``: the dense bookkeeping always ranks rows in full."""
        return False

    def best_moves(self, j, L, rows):
        """Each row's best new level of ``j`` and its gain (row-wise minimum
        of :meth:`move_deltas`)."""
        return _row_minima(self.move_deltas(j, L, rows))

    def swap_bound(self, j):
        return None  # no cheap bound on the interaction: every pair is tried

    def swap_gains(self, j, r1, r2):
        """Exact loss change of exchanging attribute ``j`` between ``r1`` and ``r2``."""
        R, cells, grads = self.R, self.cells, self.grads
        lv1, lv2 = R[r1, j], R[r2, j]
        gain = np.zeros(r1.size)
        sign = (1.0, -1.0, 1.0, -1.0)
        for i in self.by_attr[j]:
            c = self.cliques[i]
            st = c.strides[j]
            o1, o2 = cells[i][r1], cells[i][r2]
            n1, n2 = o1 + (lv2 - lv1) * st, o2 + (lv1 - lv2) * st
            idx = (n1, o1, n2, o2)
            g = grads[i]
            gain += g[n1] - g[o1] + g[n2] - g[o2]
            for x in range(4):
                for y in range(4):
                    gain += sign[x] * sign[y] * c.H[idx[x], idx[y]]
        return gain

    def trial(self, j, chosen, new_level):
        """``(old, new, state)``: the members' loss before and after the moves."""
        members = self.by_attr[j]
        old_loss = sum(self.losses[i] for i in members)
        trial = {}
        for i in members:
            c = self.cliques[i]
            ix = self.cells[i].copy()
            ix[chosen] += (new_level - self.R[chosen, j]) * c.strides[j]
            T = (
                self.tables[i]
                + np.bincount(ix[chosen], minlength=c.size)
                - np.bincount(self.cells[i][chosen], minlength=c.size)
            )
            trial[i] = (ix, T, c.loss(T))
        return old_loss, sum(v[2] for v in trial.values()), trial

    def commit(self, j, chosen, new_level, trial):
        self.R[chosen, j] = new_level
        for i, (ix, T, lo) in trial.items():
            c = self.cliques[i]
            self.cells[i], self.tables[i], self.losses[i] = ix, T, lo
            self.grads[i] = 2.0 * (c.H @ T - c.b)

    def over_filled(self):
        over = np.zeros(self.R.shape[0], dtype=bool)
        for i in range(len(self.cliques)):
            over |= self.grads[i][self.cells[i]] > 1e-9
        return over
