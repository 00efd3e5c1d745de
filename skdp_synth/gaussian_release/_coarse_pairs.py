"""The tree's pairs measured on coarsened levels of their ordinal columns.

When ``selection="auto"`` runs MST's tree (:cite:`McKenna2021` §3), the
final step measures the chosen pairs and the 1-way tables. A pair of two
numeric columns binned at, say, 17 levels each is a table of 289 cells; on a
small table at a small ``ε`` each cell's noise (about 160 rows on fertil2's
3,500 rows at ``ε = 0.3``) drowns the dependence it is there to keep. Here a
pair's ordinal (thermometer) columns are measured on ``g`` groups of their
adjacent levels instead, and the fine 1-way table of each such column is
measured beside it, so the pair keeps its dependence at a resolution its
noise affords while the column keeps its own shape. A named ``target`` is
never coarsened: the column a model will predict keeps its resolution.

Why it is private
-----------------
* The groups are a function of public quantities only: the 1-way tables
  MST measured first (released, :func:`~._selection.select_mst`), the noisy
  total, the budget shares and the number of chosen tables.
* A coarsened column ``j'`` is a deterministic function of a row's level of
  ``j`` (its group). The measured workload is an attribute-marginal workload
  over the extended attribute list (the columns, then one coarse copy per
  coarsened column): each table is a marginal of it, and one row adds one to
  one cell of each table, as for any marginal. ResidualPlanner's calibration
  of that workload (:meth:`~skdp_synth.workloads.AttributeMarginalWorkload.
  calibrated_scales`) gives whitened sensitivity exactly 1 under add/remove;
  under replace-one its enumeration lets ``j`` and ``j'`` change
  independently, a superset of the changes a row can make, so the scale is
  an upper bound. The step is ``sqrt(share)/c``-GDP, exactly as the
  measurement it replaces (``doc/privacy.md``, "The tree's pairs on coarsened
  levels").
* The generator reads each coarse residual as a linear measurement of the
  fine table (``Q = R_{A'} M``, ``M`` summing the fine cells into their
  groups): post-processing.

The number of groups ``g`` is chosen so that a pair's mean cell holds
``κ`` noise sds, ``n̂ / g² >= κ σ`` with ``σ = c sqrt(K / f)`` (the per-cell
noise of one of ``K`` tables measured at share ``f``), ``κ =
ReleaseRules.auto_mst_pair_kappa``.
"""

from __future__ import annotations

import numpy as np

from ..generator import Measurement
from ..workloads import AttributeMarginalWorkload
from ._plan_choice import group_count
from ._selection import measure, table_counts

__all__ = ["group_count", "level_groups", "measure_coarsened", "ordinal_levels"]


def level_groups(blocks, n_levels, probs, g, keep=()):
    """``{j: group of each level}`` for the ordinal columns with more than
    ``g`` ordinal levels, but those in ``keep`` (the named ``target``: the
    column a model will predict keeps its resolution in every pair).

    The groups are runs of adjacent levels of about equal mass under the
    released 1-way estimate ``probs[j]`` (a level whose mid-mass falls in
    ``[i/g, (i+1)/g)`` joins group ``i``; a level heavier than ``1/g`` keeps a
    group of its own), and the missing level of a column with one stays a
    group of its own. Only thermometer blocks are ordinal: a one-hot
    column's levels have no order to group by.
    """
    out = {}
    for j, block in enumerate(blocks.blocks):
        k = int(n_levels[j])
        if block.kind != "thermometer" or j in keep:
            continue
        m = k - 1 if block.missing else k  # the ordinal levels
        if m <= g:
            continue
        p = np.clip(np.asarray(probs[j], dtype=np.float64)[:m], 0.0, None)
        p = p / p.sum() if p.sum() > 0 else np.full(m, 1.0 / m)
        mid = np.cumsum(p) - p / 2
        _, group = np.unique(
            np.minimum((mid * g).astype(np.int64), g - 1), return_inverse=True
        )
        if block.missing:
            group = np.append(group, group.max() + 1)
        if group.max() + 1 < k:
            out[j] = group.astype(np.int64)
    return out


def ordinal_levels(blocks, n_levels, keep=()):
    """Each attribute's ordinal levels where :func:`level_groups` may group
    them, else 0: a thermometer column's levels less its missing level, 0 for
    one-hot columns and those in ``keep`` (public: the encoder's blocks).
    :func:`~._plan_choice.auto_estimates` prices the tree's pairs at the levels
    the final measurement will use from these."""
    out = np.zeros(len(n_levels), dtype=np.int64)
    for j, block in enumerate(blocks.blocks):
        if block.kind == "thermometer" and j not in keep:
            out[j] = int(n_levels[j]) - (1 if block.missing else 0)
    return out


def _aggregation(fine, ext, base, groups, n_levels, ext_levels):
    """The 0/1 matrix from the fine table ``T_fine`` to the extended table
    ``T_ext`` (both flattened in C order over their attributes)."""
    shape = tuple(int(n_levels[f]) for f in fine)
    index = np.indices(shape).reshape(len(fine), -1)
    axis = {f: i for i, f in enumerate(fine)}
    cell = np.zeros(index.shape[1], dtype=np.int64)
    for x in ext:
        f = base[x]
        level = index[axis[f]]
        if x != f:  # a coarse copy
            level = groups[f][level]
        cell = cell * int(ext_levels[x]) + level
    M = np.zeros((int(np.prod([ext_levels[x] for x in ext])), index.shape[1]))
    M[cell, np.arange(index.shape[1])] = 1.0
    return M


def measure_coarsened(
    tables, n_levels, chosen, weight, share, c, neighbouring, source, total, groups
):
    """Measure ``chosen`` with its pairs on the coarse copies in ``groups``.

    Every chosen table with a coarsened column is measured on the copies;
    each coarsened column's fine 1-way table is added to the workload (the
    pairs no longer carry it). One call of :func:`~._selection.measure` on
    the extended workload: the same noise, share and guarantee as the
    measurement of ``chosen`` it replaces.

    Returns
    -------
    released : dict
        The noisy residuals of the fine tables' workload ``W`` (1-way tables
        and the pairs left fine), as :func:`~._selection.measure` returns.
    scales : ndarray
        Their noise sds, in ``W.subsets`` order.
    W : AttributeMarginalWorkload
        The fine tables' workload.
    coarse : list of Measurement
        The residuals that involve a coarse copy, as measurements of the fine
        tables, for the generator.
    """
    a = len(n_levels)
    copy = {j: a + i for i, j in enumerate(sorted(groups))}
    base = {j: j for j in range(a)} | {x: j for j, x in copy.items()}
    ext_levels = np.concatenate(
        [np.asarray(n_levels, dtype=np.int64)]
        + [[int(groups[j].max()) + 1] for j in sorted(groups)]
    )
    chosen = list(chosen) + [(j,) for j in sorted(groups) if (j,) not in chosen]
    maps = {}  # (extended table, fine table) -> its aggregation matrix

    def aggregation(E, S):
        if (E, S) not in maps:
            maps[E, S] = _aggregation(S, E, base, groups, n_levels, ext_levels)
        return maps[E, S]

    counts, ext_tables, ext_weights, fine_tables, fine_weights = {}, [], [], [], []
    for S in chosen:
        w = weight.get(S, 1.0)
        T = table_counts(tables, S, n_levels)
        if len(S) >= 2 and any(j in groups for j in S):
            E = tuple(sorted(copy.get(j, j) for j in S))
            counts[E] = aggregation(E, S) @ T
        else:
            E = tuple(S)
            counts[E] = T
            fine_tables.append(S)
            fine_weights.append(w)
        ext_tables.append(E)
        ext_weights.append(w)
    # a column whose every chosen table holds a coarse copy of its partner
    # has its 1-way residual measured inside those tables (the workload is
    # downward closed) but in no fine table: hand it on with the 1-way tables,
    # else its own shape would be released nowhere
    covered = {j for S in fine_tables for j in S}
    for E in ext_tables:
        for x in E:
            if x < a and x not in covered:
                fine_tables.append((x,))
                fine_weights.append(1.0)
                covered.add(x)
    W_ext = AttributeMarginalWorkload(
        ext_levels,
        max(len(E) for E in ext_tables),
        tables=ext_tables,
        weights=ext_weights,
    )
    noisy, ext_scales, _ = measure(counts, W_ext, share, c, neighbouring, source, total)
    W = AttributeMarginalWorkload(
        n_levels,
        max(len(S) for S in fine_tables),
        tables=fine_tables,
        weights=fine_weights,
    )
    where = {A: i for i, A in enumerate(W_ext.subsets)}
    released = {A: noisy[A] for A in W.subsets if A in noisy}
    scales = np.array([ext_scales[where[A]] for A in W.subsets])
    coarse = []
    for i, A in enumerate(W_ext.subsets):
        # a copy's own 1-way residual adds nothing the fine 1-way table
        # does not hold; it is measured (the workload is downward closed)
        # but not handed on
        if len(A) < 2 or ext_scales[i] <= 0 or all(x < a for x in A):
            continue
        fine = tuple(sorted(base[x] for x in A))
        Q = W_ext.residual_matrix(A) @ aggregation(A, fine)
        coarse.append(Measurement(fine, Q, noisy[A], float(ext_scales[i])))
    return released, scales, W, coarse
