"""Least-squares tables implied by the measurements, and the search's start.

The local search starts from rows drawn along a Chow--Liu tree of the pair
tables the measurements imply. This module estimates those tables from the
measurements inside an attribute set (:func:`_local_table`, densely or in
the residual basis of :mod:`._kron`), the 1-way tables
(:func:`_one_way_estimates`, also used by the release's shrinkage) and
draws the start (:func:`_tree_start`). Released statistics only.
"""

from __future__ import annotations

import itertools

import numpy as np

from ._cliques import _Clique, _marginalisation
from ._kron import _kron_fold, _kron_solve, _new_slot
from ._rounding import _controlled_levels


def _one_way_estimates(measurements, n_levels, n_rows):
    """Least-squares 1-way tables implied by the measurements, as probabilities."""
    a = len(n_levels)
    probs = []
    containing = [[] for _ in range(a)]
    for m in measurements:
        for j in m.attributes:
            containing[j].append(m)
    for j in range(a):
        L = int(n_levels[j])
        rows, rhs = [], []
        for m in containing[j]:
            shape = tuple(int(n_levels[k]) for k in m.attributes)
            # measurements of a larger table inform T_j only jointly; use the
            # ones whose attribute set is {j} or, failing that, all of them
            # with the other attributes summed under a uniform assumption
            M = _marginalisation(m.attributes, (j,), shape)  # (L, cells_A)
            P = M.T / (M.sum(axis=1)[None, :] / 1.0)  # spread T_j uniformly
            Q = m.query if m.query is not None else np.eye(P.shape[0])
            rows.append((Q @ P) / m.sigma)
            rhs.append(m.values / m.sigma)
        if not rows:
            probs.append(np.full(L, 1.0 / L))
            continue
        A = np.vstack(rows)
        y = np.concatenate(rhs)
        # the total is known: T_j sums to n_rows (a soft constraint, weight 1e3)
        A = np.vstack([A, 1e3 * np.ones((1, L))])
        y = np.concatenate([y, [1e3 * n_rows]])
        t, *_ = np.linalg.lstsq(A, y, rcond=None)
        t = np.clip(t, 0.0, None)
        probs.append(t / t.sum() if t.sum() > 0 else np.full(L, 1.0 / L))
    return probs


def _inside(index, S):
    """``(position, measurement)`` of the measurements inside ``S``, in order.

    ``index`` is :func:`_index`'s ``{attribute set: [(position, m)]}``: the
    ``2^|S|`` subsets are looked up instead of every measurement scanned.
    """
    found = []
    for k in range(1, len(S) + 1):
        for A in itertools.combinations(S, k):
            found.extend(index.get(A, ()))
    return sorted(found, key=lambda t: t[0])


def _index(measurements):
    out = {}
    for i, m in enumerate(measurements):
        if m.attributes:
            out.setdefault(m.attributes, []).append((i, m))
    return out


def _local_table(index, S, n_levels, n_rows, betas=None):
    """Least-squares estimate of the table ``T_S`` from the measurements inside ``S``.

    Clipped at 0 and scaled to ``n_rows``; unidentified directions fall back
    to the independent (uniform) table through a small ridge. With the
    Kronecker coefficients ``betas`` (:func:`_all_coefficients`) the system
    is solved in the residual basis (:func:`_kron_solve`), else densely.
    """
    shape = tuple(int(n_levels[j]) for j in S)
    size = int(np.prod(shape, dtype=np.int64))
    prior = np.full(size, n_rows / size)
    if betas is not None:
        slot = _new_slot(S, n_levels)
        for i, m in _inside(index, S):
            _kron_fold(slot, m, betas[i], S, n_levels)
        ridge = 1e-6 * (float(slot[0].sum()) + 1e-12)  # the diagonal of H
        T = _kron_solve(slot[0], slot[1], ridge, prior.reshape(shape)).ravel()
    else:
        clique = _Clique(S, n_levels)
        for _, m in _inside(index, S):
            clique.add(m)
        ridge = 1e-6 * (np.trace(clique.H) / clique.size + 1e-12)
        T = np.linalg.solve(
            clique.H + ridge * np.eye(clique.size), clique.b + ridge * prior
        )
    T = np.clip(T, 0.0, None)
    total = T.sum()
    return (T * (n_rows / total) if total > 0 else prior).reshape(shape)


def _tree_start(measurements, n_levels, N, rng, betas=None, zeros=None):
    """Rows from a Chow--Liu tree over the estimated 2-way tables (controlled rounding).

    The tree maximises the summed mutual information of the estimated pair
    tables (Chow & Liu 1968, as in MST's structure step, but on tables
    already released); rows are drawn root first, each child's levels for
    every parent level by controlled rounding of the expected counts.
    ``zeros`` (:class:`~._zeros.Zeros`, public): the cells of a pair (or a
    level) that a structural zero forbids are set to 0 in the estimated
    tables first (the least-squares tables projected onto the feasible
    ones), so the tree's draws avoid them.
    """
    from scipy.sparse.csgraph import breadth_first_order, minimum_spanning_tree

    a = len(n_levels)
    measured = set()
    for m in measurements:
        for pair in itertools.combinations(m.attributes, 2):
            measured.add(pair)
    tables = {}
    weight = np.zeros((a, a))
    index = _index(measurements)
    for j, k in measured:
        T = _local_table(index, (j, k), n_levels, N, betas)
        if zeros is not None:
            T = _feasible(T, zeros.pair_mask(j, k), N)
        P = T / max(T.sum(), 1e-300)
        pj, pk = P.sum(axis=1), P.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            mi = np.nansum(P * np.log(P / np.outer(pj, pk)))
        tables[(j, k)] = T
        weight[j, k] = weight[k, j] = -(max(mi, 0.0) + 1e-9)  # MST of -MI
    R = np.zeros((N, a), dtype=np.int64)
    one_way = _one_way_estimates(measurements, n_levels, N)
    if zeros is not None:
        one_way = [
            _feasible(p, zeros.level_mask(j), 1.0) for j, p in enumerate(one_way)
        ]
    tree = minimum_spanning_tree(weight).toarray()
    adjacency = (tree != 0) | (tree.T != 0)
    done = np.zeros(a, dtype=bool)
    for root in range(a):
        if done[root]:
            continue
        order, parents = breadth_first_order(adjacency, root, directed=False)
        for v in order:
            done[v] = True
            par = parents[v]
            if par < 0:
                R[:, v] = _controlled_levels(one_way[v], N, rng)
                continue
            T = tables[(par, v)] if (par, v) in tables else tables[(v, par)].T
            for level in range(int(n_levels[par])):
                rows = np.flatnonzero(R[:, par] == level)
                if rows.size == 0:
                    continue
                cond = T[level]
                cond = cond / cond.sum() if cond.sum() > 0 else one_way[v]
                R[rows, v] = _controlled_levels(cond, rows.size, rng)
    return R


def _feasible(T, mask, total):
    """``T`` with the cells of ``mask`` at 0, rescaled to ``total`` (left as
    it is when nothing would remain)."""
    if not mask.any():
        return T
    out = np.where(mask, 0.0, T)
    s = out.sum()
    if s <= 0:
        out = np.where(mask, 0.0, 1.0)
        s = out.sum()
    return out * (total / s) if s > 0 else T
