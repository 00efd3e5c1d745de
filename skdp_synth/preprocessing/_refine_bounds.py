"""How deep the refinement passes of the Dask private domains count: the
probability that PrivTree reaches and splits a cell, and the allocation of a
pass's cells that bounds the chance of one more pass.

Computed from merged counts and the public budget only (``_domain_stats``:
the counts are exact, so are these probabilities; none of them is
released). :func:`split_probability` is PrivTree's (:cite:`Zhang2016`
Algorithm 2); :func:`refine_cells` and :func:`_chosen` choose the grid
cells a pass refines; :func:`refine_stops`, :func:`_stops` and
:func:`joint_stops` how deep it counts under each, within a public number
of cells; :func:`_miss` bounds what that leaves. The tuning constants of
the bounded mode live here (patch them here, not in ``_domain_stats``).
"""

from __future__ import annotations

import math

import numpy as np

from ._chunk_counts import VALUES
from ._count_grid import hierarchy_for
from ._privtree_budget import column_tree_share
from ._tree_grid import MAX_DEPTH

#: Bounded mode: the grid cells a refinement pass predicts for a column
#: still to come leave out cells reached and split by the tree, together,
#: with probability at most this
#: (:func:`refine_cells`),
#: and so are the cells below the ones counted (:func:`refine_stops`): a
#: bound on the chance of one more pass, each. 0.001: at 0.01 a simulation
#: of the trees of the six float columns of the 3 x 10^6-row bench table
#: (``benchmarks/bench_dask_domains.py``; 20 noise draws, ``REFINE_CELLS =
#: 2^21``) still needed a pass on demand in 2 of 20, at 0.001 in 0 of 40.
REFINE_MISS = 0.001
#: Bounded mode (``BooleanEncoder(refine_cells=K)``): the most cells of the
#: hierarchy one refinement pass counts per numeric column
#: (:func:`sub_cells`), shared among the columns still to come
#: (:func:`joint_stops`): the public cap on the memory a pass adds. This
#: value is the default of the functions here and the one the guide
#: measures. 2^20: at 2^21 the 10^7-row bench table's job peaked at 2.04
#: GiB (see ``doc/user_guide/out_of_core.md``).
REFINE_CELLS = 2**20
#: What a kept value costs against :data:`REFINE_CELLS`: 16 bytes (the
#: value and its count) against a counted cell's 13 (a boundary, a depth,
#: a 4-byte count).
VALUE_COST = 2

__all__ = [
    "REFINE_CELLS",
    "REFINE_MISS",
    "VALUE_COST",
    "joint_stops",
    "refine_cells",
    "refine_stops",
    "split_probability",
]


def split_probability(counts, depth, lam):
    """``P(max(c - d δ, θ - δ) + Lap(λ) > θ)`` with ``θ = 0``, ``δ = λ ln 2``:
    the probability that PrivTree splits a node of depth ``d`` holding ``c``
    rows, if it reaches it (:cite:`Zhang2016` Algorithm 2; at least 1/4
    whatever ``c``)."""
    bias = lam * math.log(2.0)
    m = np.maximum(np.asarray(counts, dtype=np.float64) - depth * bias, -bias)
    tail = 0.5 * np.exp(-np.abs(m) / lam)  # P(Lap(λ) > |m|)
    return np.where(m >= 0, 1.0 - tail, tail)


def _reach(counter, epsilon, sensitivity, tree_share=None):
    """``(cells, r)``: the grid cells holding a row and ``r_k``, the
    probability that the tree reaches cell ``k`` and splits it (see
    :func:`refine_cells`)."""
    share = column_tree_share(epsilon) if tree_share is None else tree_share
    lam = 3.0 * sensitivity / (epsilon * share)
    nodes = hierarchy_for(counter.integer, counter.root, counter.depth, counter.cuts)
    reach = np.ones(len(nodes[0][0]))
    for d, (ia, ib, _, splits) in enumerate(nodes):
        c = counter.cum[ib] - counter.cum[ia]
        p = split_probability(c, d, lam) * splits
        if d == len(nodes) - 1:
            r = reach * p * (c > 0)
            cells = ia  # the nodes of the last depth are grid cells
            break
        reach = (reach * p)[nodes[d + 1][2]]
    return cells.astype(np.int64), r


def refine_cells(counter, epsilon, sensitivity, tree_share=None, limit=None, miss=None):
    """The grid cells to refine before the noise: ``r_k``, the probability
    that the tree reaches cell ``k`` (at the grid's depth) and splits it, is
    the product of the split probabilities of its ancestors and its own
    (:func:`split_probability`; the noise of distinct nodes is independent),
    a function of the counts and the public budget. The cells holding a row
    are refined in decreasing ``r_k`` until the ones left sum to at most
    ``miss`` (default :data:`REFINE_MISS`; or, with ``limit``, the ``limit``
    most likely): an extra pass is needed with probability at most that."""
    return _chosen(counter, epsilon, sensitivity, tree_share, limit, miss)[0]


def _chosen(
    counter, epsilon, sensitivity, tree_share=None, limit=None, miss=None, skip=()
):
    """:func:`refine_cells` and their ``r_k``, among the grid cells not in
    ``skip`` (those refined already)."""
    cells, r = _reach(counter, epsilon, sensitivity, tree_share)
    if len(skip):
        r = np.where(np.isin(cells, np.fromiter(skip, dtype=np.int64)), 0.0, r)
    order = np.argsort(r, kind="stable")  # ascending: the least likely are left out
    left = np.cumsum(r[order]) <= (REFINE_MISS if miss is None else miss)
    keep = order[~left]
    keep = keep[r[keep] > 0]
    if limit is not None and keep.size > limit:
        keep = keep[keep.size - int(limit) :]
    keep = np.sort(keep)
    return cells[keep], r[keep]


def refine_stops(depth, count, reach, lam, cap=None):
    """How deep a refinement pass counts each of its targets: ``stop[k]``,
    the depth of the cells it counts under target ``k`` (of ``depth[k]``,
    ``count[k]`` rows, reached and split by the tree with probability
    ``reach[k]``), at least one level below it and at most ``MAX_DEPTH``.

    Counted to depth ``s``, target ``k`` needs one more pass only if the
    tree reaches and splits one of its occupied cells of depth ``s``: at
    most ``min(count, 2^(s - depth))`` of them, each reached and split
    with probability at most ``reach Π q(count, d)`` over the depths ``d``
    from ``depth + 1`` to ``s`` (:func:`split_probability` ``q`` is
    increasing in the count, and a cell holds no more rows than its
    target): ``miss_k(s)``, their product, bounds target ``k``'s chance of
    another pass. Counting to ``s`` costs ``2^(s - depth)`` cells. Each
    target gets the ``s`` minimising ``miss_k(s) + μ 2^(s - depth)`` (a
    Lagrange multiplier ``μ``: the allocation of cells that minimises the
    summed miss for its total, since the cost doubles a level while the
    miss shrinks): ``μ`` the largest for which the misses sum to at most
    :data:`REFINE_MISS` where the cells number at most ``cap``
    (:data:`REFINE_CELLS`), else the smallest within the cap (one level
    each where even that is more). Returns ``(stop, miss)``: ``miss``
    bounds the probability that the targets need another pass (a union
    bound). Memory: a few arrays of ``targets x levels`` floats, for the
    time of the call."""
    stop, miss = _stops(depth, count, reach, lam, cap)
    return stop, float(miss.sum())


def _stops(depth, count, reach, lam, cap=None, values=False, distinct=None):
    """:func:`refine_stops` with each target's ``miss_k`` at its stop. With
    ``values``, a target may instead be given :data:`VALUES`: its values
    are kept (at most ``distinct`` of them -- default ``count`` -- costing
    ``VALUE_COST`` cells each), which answer every node inside it -- a
    miss of 0 -- so the targets with few rows or few values, the tree's
    likeliest misses, are resolved to any depth for less than a few
    levels of cells would cost. ``miss_k`` is the least of two bounds
    (:func:`_miss`)."""
    cap = REFINE_CELLS if cap is None else cap
    depth = np.asarray(depth, dtype=np.int64)
    count = np.asarray(count, dtype=np.float64)
    if depth.size == 0:
        return depth.copy(), np.zeros(0)
    levels = np.arange(1, max(MAX_DEPTH - int(depth.min()), 1) + 1)
    d = depth[:, None] + levels[None, :]  # the depth counted to
    miss = _miss(depth, count, np.asarray(reach, dtype=np.float64), lam, levels)
    beyond = d > np.maximum(depth[:, None] + 1, MAX_DEPTH)
    del d
    cost = 2.0**levels
    rows = np.arange(depth.size)

    if not values:
        vcost = np.full(depth.size, np.inf)
    elif distinct is None:
        vcost = VALUE_COST * count
    else:
        vcost = VALUE_COST * np.minimum(count, np.asarray(distinct, dtype=np.float64))

    def steps(mu):
        """Each target's levels minimising ``miss + mu cost`` (the first
        such: never below MAX_DEPTH, where the miss is already 0); 0 where
        its values, ``mu VALUE_COST count``, cost less."""
        obj = miss + mu * cost[None, :]
        obj[beyond] = np.inf
        step = np.argmin(obj, axis=1)
        return np.where(mu * vcost < obj[rows, step], 0, step + 1)

    def total(step):
        return float(np.sum(np.where(step == 0, vcost, 2.0**step)))

    def left(step):
        return float(np.sum(np.where(step == 0, 0.0, miss[rows, step - 1])))

    def threshold(ok, small):
        """The μ (log scale) where ``ok(steps(μ))`` changes: the smallest
        with it true if it holds for large μ (``small`` false), else the
        largest with it true (it holds for small μ)."""
        lo_m, hi_m = 1e-300, float(miss.max()) + 1e-300  # hi: one level each
        for _ in range(64):
            mid = math.sqrt(lo_m * hi_m)
            if ok(steps(mid)) == small:
                lo_m = mid
            else:
                hi_m = mid
        return lo_m if small else hi_m

    widest = steps(np.inf)  # one level each
    if total(widest) > cap:
        step = widest
    else:
        # the fewest cells that leave at most REFINE_MISS, else the least
        # miss within the cap
        mu = max(
            threshold(lambda st: total(st) <= cap, small=False),
            threshold(lambda st: left(st) <= REFINE_MISS, small=True),
        )
        step = steps(mu)
    out = np.where(step == 0, VALUES, depth + step)
    return out, np.where(step == 0, 0.0, miss[rows, step - 1])


def _miss(depth, count, reach, lam, levels):
    """``miss[k, j]``: a bound on the expected number of the cells of depth
    ``depth[k] + levels[j]`` under target ``k`` (``count[k]`` rows, reached
    and split with probability ``reach[k]``) that the tree reaches and
    splits -- so on the chance that counting target ``k`` to that depth
    leaves the tree a cell to split below it. The least of two bounds:

    * *flat*: each of at most ``min(count, 2^j)`` occupied cells, reached
      and split with probability at most ``reach Π q(count, ·)`` over the
      depths down to it (:func:`split_probability` ``q`` grows with the
      count; no cell holds more than its target);
    * *split rows*: a node of depth ``t`` with at most ``(t - 1) λ ln 2``
      rows splits with probability exactly 1/4 if reached (PrivTree's
      floor), and at most ``count / ((t - 1) λ ln 2)`` cells of depth
      ``t`` hold more (their rows add up to at most ``count``). So if
      ``B`` bounds the expected split nodes at depth ``t - 1``, at depth
      ``t`` at most ``reach H_t`` heavy ones (``H_t`` the number above,
      at most ``2^j``) and ``2 B / 4`` light ones, children of the split
      nodes: ``B_t <= reach H_t + B_{t-1} / 2``, ``B`` at the target its
      ``reach``, each step from the lesser bound of the depth above.

    Nothing splits at ``MAX_DEPTH``: 0 there and below."""
    d = depth[:, None] + levels[None, :]
    flat = split_probability(count[:, None], d, lam)
    flat[d > MAX_DEPTH] = 0.0
    np.cumprod(flat, axis=1, out=flat)
    flat *= reach[:, None]
    flat *= np.minimum(count[:, None], 2.0 ** levels[None, :])  # occupied
    bias = lam * math.log(2.0)
    below = reach.copy()
    for j, level in enumerate(levels):
        floor = np.maximum(depth + level - 1, 1) * bias
        heavy = np.minimum(np.floor(count / floor), 2.0**level)
        below = np.minimum(flat[:, j], reach * heavy + 0.5 * below)
        flat[:, j] = below
    flat[d >= MAX_DEPTH] = 0.0  # nothing splits at MAX_DEPTH
    return flat


def joint_stops(counters, chosen, lam, cap=None, deeper=None, shares=None):
    """:func:`refine_stops` for the grid cells ``chosen[col] = (cells,
    reach)`` of all the numeric columns at once (one Laplace scale ``lam``,
    the columns' shared budget): at most ``cap`` (default
    :data:`REFINE_CELLS`) cells per share in all, ``shares`` of them
    (default one per column of ``counters``; public numbers: the schema's),
    shared where the tree is
    likelier to go deep -- the least summed miss for that many cells -- so a
    column whose tree stays shallow leaves its share to one that goes deep.
    ``deeper[col] = (depth, count, reach)``: kept cells below the grid to
    refine further too (:meth:`ColumnCounts.kept_reach`), their stops after
    the grid cells'. Sets each counter's ``miss``; returns ``{col: stop}``."""
    deeper = deeper or {}
    cols = list(dict.fromkeys([*chosen, *deeper]))
    if not cols:
        return {}
    none = np.empty(0, dtype=np.int64)
    grid = {c: chosen.get(c, (none, none)) for c in cols}
    extra = {c: deeper.get(c, (none, none, none)) for c in cols}
    parts = [  # a kept cell's values are at most its rows
        (
            (counters[c].depths[grid[c][0]], extra[c][0]),
            (counters[c].grid[grid[c][0]], extra[c][1]),
            (grid[c][1], extra[c][2]),
            (counters[c].distinct_of(grid[c][0]), extra[c][1]),
        )
        for c in cols
    ]
    depth, count, reach, distinct = (
        np.concatenate([a for p in ps for a in p]) for ps in zip(*parts)
    )
    cap = REFINE_CELLS if cap is None else cap
    shares = len(counters) if shares is None else shares
    stop, miss = _stops(depth, count, reach, lam, cap * shares, True, distinct)
    out, at = {}, 0
    for c in cols:
        m = len(grid[c][0]) + len(extra[c][0])
        out[c] = stop[at : at + m]
        counters[c].miss = float(miss[at : at + m].sum())
        at += m
    return out
