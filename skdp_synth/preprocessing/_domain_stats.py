"""Private domains learned from a Dask DataFrame: chunk statistics, merged exactly.

Everything :meth:`BooleanEncoder.fit` reads to learn a private domain is a
count (``doc/privacy.md``, "Private domains"):

* a numeric column's PrivTree (:cite:`Zhang2016` §3.2, Algorithm 2) reads the
  count of rows in each node it visits, and its fine histogram the count of
  each leaf and of the missing values (:func:`._numeric_domain.privtree_histogram`);
* a categorical column's stable levels (:cite:`Korolova2009`,
  :cite:`Vadhan2017` Proposition 3.5) read each observed level's count and
  the missing count (:func:`._level_selection.stable_levels`).

Counts of a fixed partition are sums of per-chunk counts, so they are merged
exactly. The nodes PrivTree can visit form a fixed (public) binary hierarchy:
the depth-0 cells cut at ``0, ±2^k`` and, below them, the split points
:func:`._numeric_domain._split_point` -- a function of the node only, never
of the data. Every node of depth ``<= GRID_DEPTH`` is a union of the cells of
that hierarchy cut at depth :data:`GRID_DEPTH` (the *grid*), so the grid's
per-chunk counts answer every count the tree asks down to that depth.
Deeper nodes lie inside one grid cell; the cells that can hold one are
*refined* in a second pass: the cells the tree reaches and splits with the
largest probabilities, computed from the grid's counts
(:func:`refine_cells`; PrivTree splits a node it reaches with probability
at least 1/4 whatever its count), until the cells left out sum to at most
a small probability. What a refined cell keeps, and when the pass runs, is
the encoder's ``refine_cells`` (public: a parameter):

* ``None``, the *exact* mode (the default): its distinct values with their
  counts (:data:`VALUES`), which answer every node inside it at any depth;
  the cells left out sum to at most :data:`VALUES_MISS`; the pass runs
  before any noise is drawn. Memory grows with the distinct values of the
  refined cells (below).
* an integer ``K``, the *bounded* mode: the counts of the cells of the
  same hierarchy a few levels below it (:func:`sub_cells`; only those
  holding a row), which answer every node down to that depth inside it,
  or -- where that costs less -- its distinct values (at most its count,
  and at most the sum over the chunks of each chunk's distinct values in
  the cell, both counted in pass 1); the cells left out sum to at most
  :data:`REFINE_MISS`. Which, and how deep, is :func:`joint_stops`' choice
  for all the numeric columns at once: the least summed bound on the
  chance of another pass (:func:`_miss`) for at most ``K`` cells per
  numeric column in all, a kept value costing :data:`VALUE_COST` cells --
  deeper where the tree is more likely to split, and a column whose tree
  stays shallow leaves its share to one whose tree goes deep. No pass
  runs before the noise: the first tree that asks for a count below the
  grid makes the first refinement pass (its own cells, reached and split:
  probability 1), and that pass -- and every pass after it -- also counts
  the cells predicted so for the numeric columns whose trees have not run
  yet (:meth:`DomainStatistics._predicted`, among their grid cells not
  refined yet and, below the cells an earlier pass counted, the kept
  cells the tree is likely to split, from their exact counts), so one
  pass serves every column to come and the prediction's share is not
  spent on the columns already resolved.

Should the tree still enter a grid cell that was not refined, or go below
the cells kept, inside one that holds a row, that cell is refined then (a
few levels deeper, to ``MAX_DEPTH`` where few cells ask), by one more pass,
before the level's noise is drawn: the counts are always exact, whatever
the noise.

Nothing else is read: :func:`privtree_histogram` reads the count of each node
it visits and of each leaf (a leaf is a visited node) and the missing count;
the :class:`FineHistogram` it returns holds the leaves' edges (cells of the
public hierarchy), their noisy counts and what follows from them; the
coarse bins, the heavy-leaf splits and the decoder (``_decoding``) read that
histogram only. No value, minimum, maximum or atom position of the data
enters, so counts of cells are all a chunked fit needs.

The tree itself (:func:`privtree_from_counts`) is :func:`privtree_histogram`
run on those counts: the same nodes, level by level, the same Laplace
vectors in the same order, the same leaf and missing counts, the same
post-processing. So the domains -- the noise included -- are those of the
in-memory fit on the same rows with the same ``random_state``
(``tests/test_dask_domains.py`` compares them); the guarantee is the
in-memory one. Which grid cells are refined, and how many passes run, depend
on the data and, in bounded mode and for passes on demand, on the noise
drawn so far (never on noise not yet drawn): like the running time of the
in-memory fit, they are not part of the released output.

Memory, per numeric column: the grid is public and built once per kind of
column (float, integer, declared root): at most ``C 2^GRID_DEPTH`` cells
(``C`` depth-0 cells, 24 for a float column), 16 bytes each with its count
(and 4 more, the distinct-value bound, in bounded mode); the hierarchy's
nodes above the grid are kept with it (three int32 per node, about as many
nodes as cells) to compute the probabilities. In exact mode the refined
cells' distinct values are kept, 16 bytes each with their counts: they grow
with the data (910,644 for a log-normal income in the first 10^6 rows of
the bench table; 8.8 million in its six float columns at 10^7 rows). In
bounded mode, everything is bounded by public numbers, independent of
``n``: a refinement pass counts at most ``max(refine_cells, 2 m)`` cells
for the asking column's ``m`` targets (``m`` at most the nodes of one level
of the tree) and, for the ``P`` numeric columns still to come, at most
``P refine_cells`` cells and kept values in all (13 bytes a counted cell
while it runs: a boundary, a depth, a 4-byte count below 2^31 rows; 16
bytes a kept value and its count, which :data:`VALUE_COST` = 2 cells
covers). What is kept after a pass is the occupied cells (25 bytes each:
bounds, a depth, a running count) and the values (16 bytes), at most what
the pass counted -- of which a column has at most ``MAX_DEPTH -
GRID_DEPTH = 14`` passes on demand (each resolves at least one more level;
a pass on demand also counts the cells under the level's other nodes the
tree may still enter, :meth:`ColumnCounts._targets_on_demand`, and keeps
the values of the cells with few rows, so that the deeper levels mostly
take one). A categorical column keeps one count per distinct level.

Measured: see ``doc/user_guide/out_of_core.md`` ("Private domains from
chunks"), ``python -m benchmarks.bench_dask_domains``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ._chunk_counts import (
    VALUES,
    _merge_values,
    chunk_pass,
    column_values,
    first_chunk,
    levels_table,
    merge_level_counts,
    numeric_plan,
    sub_cell_counts,
    sub_cells,
    top_of_root,
)
from ._numeric_domain import (
    MAX_DEPTH,
    TREE_SHARE,
    _can_split,
    _split_point,
    noisy_histogram,
    privtree_leaves,
    privtree_theta,
    root_cells,
)

#: Depth of the public grid counted in the first pass (``2^16`` cells per
#: depth-0 cell at most; 1.5 million for a float column, 12 MiB of edges).
GRID_DEPTH = 16
#: A column with public cuts of its depth-0 cells (a date/time column's
#: calendar, ``_datetime.calendar_cuts``) gets a grid this many levels
#: shallower (``2^8`` cells under each of its 203 calendar cells); deeper
#: nodes are counted from the refined cells' values, as any node below the
#: grid.
CUT_GRID_SHALLOWER = 8
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
#: Exact mode (``BooleanEncoder(refine_cells=None)``, the default): the grid
#: cells whose distinct values are kept before the noise leave at most this
#: (:func:`refine_cells`). 0.01: 3 passes (pass 1, one refinement, the
#: release) on the 10^7-row bench table (``python -m
#: benchmarks.bench_dask_domains dask``; ``doc/user_guide/out_of_core.md``).
VALUES_MISS = 0.01
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
    "GRID_DEPTH",
    "ColumnCounts",
    "grid_for",
    "privtree_from_counts",
    "refine_cells",
]


def grid_for(integer, root, depth=None, cuts=None):
    """``(edges, depths, root_lo, root_hi, floor)`` of the public grid of a
    column kind (public: the dtype and the declared root only), cut at
    ``depth`` (default :data:`GRID_DEPTH`). ``edges`` has one more entry than
    ``depths`` (the cells' depths)."""
    depth = GRID_DEPTH if depth is None else int(depth)
    return _grid(integer, root, depth, cuts)[:5]


def hierarchy_for(integer, root, depth=None, cuts=None):
    """The nodes of the grid's hierarchy, by depth: a list of ``(ia, ib,
    parent, splits)`` arrays -- each node ``[edges[ia], edges[ib])``, the
    index of its parent at the depth above, and whether PrivTree can split
    it (the nodes of the last depth are the grid cells there, counted as
    splittable)."""
    return _grid(integer, root, GRID_DEPTH if depth is None else int(depth), cuts)[5]


@lru_cache(maxsize=8)
def _grid(integer, root, depth, cuts=None):
    cells, floor = root_cells(integer, root, cuts)
    leaves, levels = [], []
    level = [(lo, hi, -1) for lo, hi in cells]
    for d in range(depth + 1):
        nxt, splits = [], []
        for i, (lo, hi, _) in enumerate(level):
            mid = _split_point(lo, hi, integer) if d < depth else None
            if mid is not None and _can_split(lo, hi, d, integer, floor):
                nxt += [(lo, mid, i), (mid, hi, i)]
                splits.append(True)
            else:
                leaves.append((lo, d))
                splits.append(d == depth)
        levels.append((level, splits))
        level = nxt
    leaves.sort()
    edges = np.asarray([lo for lo, _ in leaves] + [cells[-1][1]], dtype=np.float64)
    edges.setflags(write=False)
    depths = np.asarray([d for _, d in leaves], dtype=np.int64)
    nodes = []
    for level, splits in levels:
        lo = np.asarray([a for a, _, _ in level], dtype=np.float64)
        hi = np.asarray([b for _, b, _ in level], dtype=np.float64)
        ia = np.searchsorted(edges, lo).astype(np.int32)
        ib = np.searchsorted(edges, hi).astype(np.int32)
        parent = np.asarray([p for _, _, p in level], dtype=np.int32)
        nodes.append((ia, ib, parent, np.asarray(splits, dtype=bool)))
    return edges, depths, cells[0][0], cells[-1][1], floor, nodes


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
    share = TREE_SHARE if tree_share is None else tree_share
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


def joint_stops(counters, chosen, lam, cap=None, deeper=None):
    """:func:`refine_stops` for the grid cells ``chosen[col] = (cells,
    reach)`` of all the numeric columns at once (one Laplace scale ``lam``,
    the columns' shared budget): at most ``cap`` (default
    :data:`REFINE_CELLS`) cells per numeric column in all (a public
    number: the schema's), shared where the tree is
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
    stop, miss = _stops(depth, count, reach, lam, cap * len(counters), True, distinct)
    out, at = {}, 0
    for c in cols:
        m = len(grid[c][0]) + len(extra[c][0])
        out[c] = stop[at : at + m]
        counters[c].miss = float(miss[at : at + m].sum())
        at += m
    return out


class ColumnCounts:
    """The merged counts of one numeric column: grid, refined cells, missing.

    A refined grid cell keeps the counts of the cells of the public
    hierarchy below it, cut a few levels deeper (:func:`sub_cells`; only
    the cells holding a row are kept): every node of that depth or less
    inside it is a union of them, counted exactly. A tree node deeper than
    the kept cells lies inside one of them; if that cell holds a row, it is
    refined in turn (replaced by its own cells, a few levels deeper).
    ``refine(targets)`` is the pass that counts them (``targets``: ``(lo,
    hi, depth, stop)`` hierarchy cells, returns the occupied cells'
    ``(lo, hi, depth, count)``); :meth:`counts` calls it where a tree node
    lies inside a cell that holds a row and is not resolved yet (exact
    counts whatever the noise). A target of stop :data:`VALUES` keeps its
    distinct values and their counts instead (``values``, ``value_cum``),
    which answer every node inside it at any depth.

    ``exact``: every refinement keeps the distinct values of the grid
    cells it reads (the memory grows with the data's distinct values; no
    pass below them); else they are chosen within ``cap`` cells a pass
    (default :data:`REFINE_CELLS`).
    """

    def __init__(
        self,
        integer,
        root,
        depth,
        grid_counts,
        n_missing,
        refine,
        cuts=None,
        *,
        exact=False,
        cap=None,
        distinct=None,
    ):
        self.integer, self.root, self.depth = integer, root, depth
        self.cuts = cuts
        self.edges, self.depths, self.root_lo, self.root_hi, self.floor = grid_for(
            integer, root, depth, cuts
        )
        self.grid = np.asarray(grid_counts, dtype=np.int64)
        self.cum = np.concatenate([[0], np.cumsum(self.grid)])
        self.n_missing = int(n_missing)
        self._refine = refine
        self.refined = set()  # grid cells whose rows are in the kept cells
        # the kept cells of the refined grid cells (sorted, disjoint)
        self.lo = np.empty(0, dtype=np.float64)
        self.hi = np.empty(0, dtype=np.float64)
        self.cell_depth = np.empty(0, dtype=np.int8)
        self.cell_cum = np.zeros(1, dtype=np.int64)
        # the kept values (sorted) and their counts, 16 bytes each
        self.values = np.empty(0, dtype=np.float64)
        self.value_cum = np.zeros(1, dtype=np.int64)
        self.lam = None  # the tree's Laplace scale (public: the budget)
        self.started = False  # whether the tree has drawn noise yet
        self.miss = 0.0
        self.exact = bool(exact)
        self._cap = cap
        # at least each grid cell's distinct values (bounded mode), or None
        self.distinct = distinct

    @property
    def cap(self):
        """Cells a refinement pass may count for this column (bounded mode)."""
        return REFINE_CELLS if self._cap is None else int(self._cap)

    def distinct_of(self, cells):
        """At least the distinct values of grid ``cells`` (their counts
        where pass 1 did not count them)."""
        cells = np.asarray(cells, dtype=np.int64)
        if self.distinct is None:
            return self.grid[cells]
        return np.minimum(self.grid[cells], self.distinct[cells])

    @property
    def n_kept(self):
        """How many cells and values below the grid are kept (the memory
        that grows)."""
        return int(self.lo.size + self.values.size)

    def grid_targets(self, cells, reach, stop=None):
        """Refinement targets ``(lo, hi, depth, stop)`` of grid ``cells``
        reached and split with probabilities ``reach`` (``stop``: their
        depths, else :func:`refine_stops`' for this column alone)."""
        cells = np.asarray(cells, dtype=np.int64)
        if stop is None:
            stop, self.miss = refine_stops(
                self.depths[cells], self.grid[cells], reach, self.lam
            )
        edges, depths = self.edges, self.depths
        return [
            (float(edges[k]), float(edges[k + 1]), int(depths[k]), int(e))
            for k, e in zip(cells, stop)
        ]

    def kept_reach(self, cells, reach, limit=None):
        """Kept cells to count deeper for a column whose tree has not run:
        ``(i, r)``, kept cells ``i`` and a bound on the chance the tree
        reaches and splits each: its grid cell's ``reach`` (of grid
        ``cells``, :func:`_reach`) times ``q(c_k, d)`` at the depths between
        (:func:`split_probability` grows with the count; no node there holds
        more than the grid cell's ``c_k`` rows) and ``q(c_i, s)``, the
        cell's own (0 where PrivTree cannot split it). The likeliest, until
        the ones left out sum to at most :data:`REFINE_MISS` (at most
        ``limit``): exact counts, a tighter bound than :func:`_miss`'s."""
        if self.lo.size == 0 or self.lam is None:
            return np.empty(0, dtype=np.int64), np.empty(0)
        k = np.searchsorted(self.edges, self.lo, "right") - 1
        at = np.minimum(np.searchsorted(cells, k), max(len(cells) - 1, 0))
        r = np.where(cells[at] == k, reach[at], 0.0) if len(cells) else 0.0 * k
        g, s = self.depths[k], self.cell_depth.astype(np.int64)
        c_k, c_i = self.grid[k].astype(np.float64), np.diff(self.cell_cum)
        for d in range(int(g.min(initial=MAX_DEPTH)) + 1, MAX_DEPTH):
            between = (d > g) & (d < s)
            if between.any():
                r = np.where(between, r * split_probability(c_k, d, self.lam), r)
        r = r * split_probability(c_i, s, self.lam)
        w = self.hi - self.lo
        wide = w >= 2.0 if self.integer else w > 2.0 * self.floor
        r = np.where(wide & (s < MAX_DEPTH) & (c_i > 0), r, 0.0)
        order = np.argsort(r, kind="stable")
        keep = order[np.cumsum(r[order]) > REFINE_MISS]
        if limit is not None and keep.size > limit:
            keep = keep[keep.size - int(limit) :]
        keep = np.sort(keep)
        return keep, r[keep]

    def add_cells(self, targets, lo, hi, depth, count, values=None, value_counts=None):
        """Store the occupied cells ``(lo, hi, depth, count)`` under the
        refined ``targets`` (grid cells, or kept cells they replace), and
        the kept ``values`` with their ``value_counts`` (without them, the
        cells of depth :data:`VALUES` are the values)."""
        depth = np.asarray(depth, dtype=np.int64)
        if values is None:
            point = depth == VALUES
            values, value_counts = np.asarray(lo)[point], np.asarray(count)[point]
            lo, hi = np.asarray(lo)[~point], np.asarray(hi)[~point]
            depth, count = depth[~point], np.asarray(count)[~point]
        if len(values):
            self._add_values(values, value_counts)
        old = np.asarray([t[0] for t in targets], dtype=np.float64)
        keep = ~np.isin(self.lo, old)
        counts = np.diff(self.cell_cum)
        lo = np.concatenate([self.lo[keep], lo])
        order = np.argsort(lo, kind="stable")
        self.lo = lo[order]
        self.hi = np.concatenate([self.hi[keep], hi])[order]
        depth = np.asarray(depth, dtype=np.int8)  # depths <= VALUES
        self.cell_depth = np.concatenate([self.cell_depth[keep], depth])[order]
        counts = np.concatenate([counts[keep], count])[order]
        self.cell_cum = np.concatenate([[0], np.cumsum(counts)])
        for a, _, d, _ in targets:
            k = int(np.searchsorted(self.edges, a, "right") - 1)
            if self.edges[k] == a and self.depths[k] == d:
                self.refined.add(k)

    def _add_values(self, values, counts):
        """Add kept values (of targets disjoint from the kept ones)."""
        values = np.concatenate([self.values, values])
        counts = np.concatenate([np.diff(self.value_cum), counts])
        order = np.argsort(values, kind="stable")
        self.values = values[order]
        self.value_cum = np.concatenate([[0], np.cumsum(counts[order])])

    def _pos(self, v):
        i = int(np.searchsorted(self.edges, v, "left"))
        return i if i < len(self.edges) and self.edges[i] == v else None

    def _inside_kept(self, lo, hi):
        """The kept cell a node ``[lo, hi)`` lies strictly inside, or -1."""
        i = int(np.searchsorted(self.lo, lo, "right")) - 1
        if i >= 0 and self.lo[i] < lo < self.hi[i]:
            return i
        if hi < self.root_hi:
            j = int(np.searchsorted(self.lo, hi, "left")) - 1
            if j >= 0 and self.lo[j] < hi < self.hi[j]:
                return j
        return -1

    def _where(self, level):
        where, need = [], {}
        for lo, hi, d in level:
            a = self._pos(lo)
            b = len(self.edges) - 1 if hi >= self.root_hi else self._pos(hi)
            if a is not None and b is not None:
                where.append(("grid", a, b))
                continue
            k = int(np.searchsorted(self.edges, lo, "right") - 1)
            if self.grid[k] == 0:
                where.append(("zero", 0, 0))
            elif k not in self.refined:
                where.append(None)
                e = (float(self.edges[k]), float(self.edges[k + 1]))
                u = int(self.distinct_of([k])[0])
                need[e] = (int(self.depths[k]), int(self.grid[k]), int(d), u)
            else:
                i = self._inside_kept(lo, hi)
                if i < 0:
                    where.append(("kept", lo, hi))
                else:
                    where.append(None)
                    e = (float(self.lo[i]), float(self.hi[i]))
                    c = int(self.cell_cum[i + 1] - self.cell_cum[i])
                    need[e] = (int(self.cell_depth[i]), c, int(d), c)
        return where, need

    def _targets_on_demand(self, level, where, need):
        """The targets of a pass on demand: the cells ``need`` the tree is
        in (reached and split: probability 1), and the kept cells under the
        level's other nodes below the grid that the tree may still enter,
        reached and split with probability at most ``Π q(c, d)`` from the
        node's depth to the cell's (``c`` the node's count, at least any
        cell's between), most likely first until the ones left out sum to
        at most :data:`REFINE_MISS` (at most a quarter of the cap of them):
        one pass for the column's deeper levels, mostly. All counted to
        :func:`refine_stops`' depths. In exact mode, the values of the grid
        cells ``need`` (there is no kept cell to go below)."""
        keys = sorted(need)
        if self.exact:
            return [(a, b, need[a, b][0], VALUES) for a, b in keys]
        depth = [need[k][0] for k in keys]
        count = [need[k][1] for k in keys]
        node = [need[k][2] for k in keys]
        distinct = [need[k][3] for k in keys]
        reach = [1.0] * len(keys)
        extra = []
        for (lo, hi, d), w in zip(level, where):
            if w is None or w[0] != "kept" or d <= self.depth:
                continue
            ia = int(np.searchsorted(self.lo, lo, "left"))
            ib = (
                self.lo.size
                if hi >= self.root_hi
                else int(np.searchsorted(self.lo, hi, "left"))
            )
            if ib <= ia:
                continue
            c = float(self.cell_cum[ib] - self.cell_cum[ia])
            deeper = np.arange(d, MAX_DEPTH + 1)
            path = np.cumprod(
                split_probability(np.full(deeper.size, c), deeper, self.lam)
            )
            at = np.minimum(self.cell_depth[ia:ib].astype(np.int64), MAX_DEPTH) - d
            extra += [(float(r), i) for i, r in zip(range(ia, ib), path[at])]
        extra.sort(reverse=True)
        left = np.cumsum([r for r, _ in extra][::-1])[::-1] if extra else []
        for j, (r, i) in enumerate(extra[: self.cap // 4]):
            if left[j] <= REFINE_MISS or self.cell_depth[i] >= MAX_DEPTH:
                break
            keys.append((float(self.lo[i]), float(self.hi[i])))
            depth.append(int(self.cell_depth[i]))
            count.append(int(self.cell_cum[i + 1] - self.cell_cum[i]))
            distinct.append(count[-1])
            node.append(0)
            reach.append(r)
        stop, _ = _stops(depth, count, reach, self.lam, self.cap, True, distinct)
        return [
            (a, b, int(dk), int(max(e, n)))
            for (a, b), dk, e, n in zip(keys, depth, stop, node)
        ]

    def counts(self, level):
        """Exact row counts of the tree nodes ``[(lo, hi, depth), ...]``."""
        where, need = self._where(level)
        if need:  # one more pass, before this level's noise is drawn
            self._refine(self._targets_on_demand(level, where, need))
            where, need = self._where(level)
            if need:  # pragma: no cover - a pass resolves every target
                raise RuntimeError("a refinement pass left a node unresolved")
        out = np.empty(len(level), dtype=np.float64)
        for j, (kind, a, b) in enumerate(where):
            if kind == "grid":
                out[j] = self.cum[b] - self.cum[a]
            elif kind == "zero":
                out[j] = 0.0
            else:
                out[j] = self._kept_count(self.lo, self.cell_cum, a, b)
                out[j] += self._kept_count(self.values, self.value_cum, a, b)
        return out

    def _kept_count(self, lo, cum, a, b):
        """Rows of the kept cells (or values) starting in ``[a, b)`` (to
        the root's closed end where ``b`` is it)."""
        ia = int(np.searchsorted(lo, a, "left"))
        ib = lo.size if b >= self.root_hi else int(np.searchsorted(lo, b, "left"))
        return cum[ib] - cum[ia]


def privtree_from_counts(
    counter,
    epsilon,
    source,
    *,
    integer=False,
    sensitivity=1.0,
    tree_share=None,
    root=None,
    cuts=None,
    time_axis=None,
):
    """:func:`privtree_histogram` on merged counts (``counter``: a
    :class:`ColumnCounts` of the same ``integer`` and ``root``).

    The same algorithm line by line (:cite:`Zhang2016` §3.2, Algorithm 2;
    ``doc/privacy.md``): the depth-0 cells, the breadth-first levels with one
    Laplace vector each, the leaf counts and the missing count in one
    Laplace vector, then :func:`_kept_counts`. Only where a count comes from
    differs: the sorted values there, the merged chunk counts here -- the
    same integers, so the same output for the same noise."""
    cells, floor = root_cells(integer, root, cuts)
    if tree_share is None:
        tree_share = TREE_SHARE
    eps_tree = epsilon * tree_share
    eps_count = epsilon - eps_tree
    lam = 3.0 * sensitivity / eps_tree
    counter.lam = lam  # how deep a refinement on demand counts
    scale = sensitivity / eps_count
    edges, finest = privtree_leaves(
        cells,
        counter.counts,
        lam,
        source,
        integer,
        floor,
        theta=privtree_theta(scale),
    )
    leaves = [(lo, hi, 0) for lo, hi in zip(edges[:-1], edges[1:])]
    true = counter.counts(leaves)
    return noisy_histogram(
        edges, finest, true, counter.n_missing, integer, scale, source, time_axis
    )


# ------------------------------------------------------------ the passes
def _refine_chunk(part, index, plan):
    """A refinement pass on one chunk: the counts of the cells of the
    hierarchy under the refined cells (sparse: the cells holding a row)."""
    out = {}
    for col, (unit, clip, root_lo, top, root_hi, bounds, cell_depth) in plan.items():
        x, _ = column_values(part[col], unit, clip, root_lo, top)
        out[col] = sub_cell_counts(x, bounds, cell_depth, root_hi)
    return out


class DomainStatistics:
    """The merged first-pass statistics of a Dask DataFrame, and the passes
    that refine them (see the module). ``refine_cells``: ``None`` (exact
    mode) keeps the distinct values of the refined grid cells; an integer
    (bounded mode) counts at most that many cells per numeric column a
    pass (:data:`REFINE_CELLS`)."""

    def __init__(self, encoder, frame, private, eps_col, sens, refine_cells=None):
        self.frame = frame
        self.depth = GRID_DEPTH
        meta = frame._meta
        self.numeric, self.columns, self.cuts = {}, {}, {}
        for col, how in private.items():
            if how != "numeric":
                continue
            integer, root, unit, clip = numeric_plan(encoder, col, meta[col].dtype)
            cuts = encoder._root_cuts(col, meta[col].dtype)
            self.cuts[col] = cuts
            edges, _, root_lo, root_hi, _ = grid_for(
                integer, root, self._depth(col), cuts
            )
            self.numeric[col] = (
                integer,
                root,
                unit,
                clip,
                root_lo,
                top_of_root(integer, root_hi),
            )
        self.levels = [c for c, how in private.items() if how == "levels"]
        self.eps_col, self.sens = eps_col, sens
        self.passes = 0
        self.lengths = None
        self.refine_cells = refine_cells
        self._private = private
        self._encoder = encoder

    def first_pass(self):
        """Pass 1, then :meth:`refine_before_noise`."""
        plan = (
            self._encoder,
            self._private,
            {
                col: (
                    unit,
                    clip,
                    root_lo,
                    top,
                    grid_for(integer, root, self._depth(col), self.cuts[col])[0],
                )
                for col, (
                    integer,
                    root,
                    unit,
                    clip,
                    root_lo,
                    top,
                ) in self.numeric.items()
            },
            self.levels,
            self.refine_cells is not None,
        )
        grids = {
            col: np.zeros(len(plan[2][col][4]) - 1, dtype=np.int64)
            for col in self.numeric
        }
        # bounded mode: the sum over chunks of each grid cell's distinct
        # values, at least its distinct values (4 bytes a cell, saturated)
        distinct = {
            col: np.zeros(grids[col].size, dtype=np.int32)
            for col in (self.numeric if plan[4] else ())
        }
        state = {
            "lengths": [],
            "missing": dict.fromkeys(self.numeric, 0),
            "error": None,
        }
        state["levels"] = {c: ({}, 0) for c in self.levels}

        def merge(st, r):
            if r[0] == "error":
                st["error"] = st["error"] or r[1]
                return st
            _, n, g, miss, cats = r
            st["lengths"].append(n)
            for col, (nz, c, *u) in g.items():
                grids[col][nz] += c
                st["missing"][col] += miss[col]
                if u:
                    more = distinct[col][nz] + u[0].astype(np.int64)
                    distinct[col][nz] = np.minimum(more, 2**31 - 1)
            for col, (counts, nmiss) in cats.items():
                total, m = st["levels"][col]
                st["levels"][col] = (merge_level_counts(total, counts), m + nmiss)
            return st

        state = chunk_pass(self.frame, first_chunk, plan, merge, state)
        self.passes += 1
        if state["error"]:
            raise ValueError(state["error"])
        self.lengths = tuple(state["lengths"])
        self.level_counts = state["levels"]
        self.counters = {
            col: ColumnCounts(
                integer,
                root,
                self._depth(col),
                grids[col],
                state["missing"][col],
                self._refiner(col),
                self.cuts[col],
                exact=self.refine_cells is None,
                cap=self.refine_cells,
                distinct=distinct.get(col),
            )
            for col, (integer, root, *_) in self.numeric.items()
        }
        self.refine_before_noise()

    def refine_before_noise(self):
        """Exact mode: the refinement pass, before any noise, of the
        distinct values of the numeric columns' grid cells the tree is
        likely to split (:func:`refine_cells`, until the cells left out
        leave at most :data:`VALUES_MISS`). Bounded mode: none -- the first
        tree that asks for a count below the grid makes the first
        refinement pass, which also counts the cells predicted for the
        columns whose trees have not run (:meth:`_predicted`)."""
        wanted = {}
        if self.eps_col and self.refine_cells is None:
            for col, counter in self.counters.items():
                cells = refine_cells(counter, self.eps_col, self.sens, miss=VALUES_MISS)
                if len(cells):
                    stop = np.full(len(cells), VALUES)
                    wanted[col] = counter.grid_targets(cells, None, stop)
        elif self.eps_col:  # bounded mode: no pass before the first tree asks
            for counter in self.counters.values():
                counter.lam = 3.0 * self.sens / (self.eps_col * TREE_SHARE)
        self.refine(wanted)

    def _predicted(self):
        """Bounded mode: the targets of a refinement pass for the numeric
        columns whose trees have not run yet, predicted from the grid
        counts and the public budget as the exact mode chooses its cells
        before the noise (:func:`_chosen`, among the grid cells not refined
        yet) and, inside the refined ones, the kept cells likeliest split
        (:meth:`ColumnCounts.kept_reach`), counted to :func:`joint_stops`'
        depths within ``refine_cells`` cells per such column. Every pass a
        tree asks for counts them too: the first pass of the fit is the
        first tree's, and each pass after it serves every column still to
        come, deeper where the earlier passes stopped, instead of one."""
        pending = {c: k for c, k in self.counters.items() if not k.started}
        chosen, deeper, kept = {}, {}, {}
        for col, counter in pending.items():
            cap, skip = counter.cap // 2, counter.refined
            cells, reach = _chosen(
                counter, self.eps_col, self.sens, None, cap, skip=skip
            )
            if len(cells):
                chosen[col] = (cells, reach)
            if counter.refined:  # below the cells a pass counted already
                every, r = _reach(counter, self.eps_col, self.sens)
                i, r = counter.kept_reach(every, r, cap - len(cells))
                if len(i):
                    kept[col] = i
                    n = np.diff(counter.cell_cum)[i]
                    deeper[col] = (counter.cell_depth[i].astype(np.int64), n, r)
        lam = 3.0 * self.sens / (self.eps_col * TREE_SHARE)
        stops = joint_stops(pending, chosen, lam, self.refine_cells, deeper)
        out = {}
        for col, stop in stops.items():
            cells, reach = chosen.get(col, ((), ()))
            out[col] = pending[col].grid_targets(cells, reach, stop[: len(cells)])
            k = pending[col]
            out[col] += [  # kept cells, refined as a pass on demand does
                (float(k.lo[j]), float(k.hi[j]), int(k.cell_depth[j]), int(e))
                for j, e in zip(kept.get(col, ()), stop[len(cells) :])
            ]
        return out

    def _depth(self, col):
        """The grid's depth for ``col``: :data:`GRID_DEPTH`, less
        :data:`CUT_GRID_SHALLOWER` for a column with public cuts (a
        date/time column's calendar: 203 depth-0 cells, ``2^16`` grid cells
        under each would be 13 million)."""
        return self.depth - (CUT_GRID_SHALLOWER if self.cuts.get(col) else 0)

    def _refiner(self, col):
        def refine(targets):
            wanted = {col: targets}
            if self.refine_cells is not None and self.eps_col:
                wanted.update(self._predicted())
            self.refine(wanted)

        return refine

    def refine(self, wanted):
        """One pass counting the cells of the hierarchy under the targets
        ``wanted[col]`` (``(lo, hi, depth, stop)``, :func:`sub_cells`); the
        occupied ones are stored in the columns' counters."""
        if not wanted:
            return
        plan = {}
        for col, targets in wanted.items():
            integer, _, unit, clip, root_lo, top = self.numeric[col]
            counter = self.counters[col]
            bounds, cell_depth = sub_cells(targets, integer, counter.floor)
            plan[col] = (unit, clip, root_lo, top, counter.root_hi, bounds, cell_depth)
        # a cell's count is at most n (public, pass 1's lengths): 4 bytes
        # a cell while the pass runs where n < 2^31
        small = sum(self.lengths) < 2**31
        totals = {
            col: np.zeros(plan[col][5].size, dtype=np.int32 if small else np.int64)
            for col in plan
        }

        empty = (np.empty(0), np.empty(0, dtype=np.int64))
        values = dict.fromkeys(plan, empty)

        def merge(tot, r):
            for col, (k, c, v, vc) in r.items():
                tot[col][k] += c
                if v.size:
                    values[col] = _merge_values(*values[col], v, vc)
            return tot

        totals = chunk_pass(self.frame, _refine_chunk, plan, merge, totals)
        self.passes += 1
        for col, total in totals.items():
            bounds, cell_depth = plan[col][5:]
            k = np.flatnonzero(total)
            self.counters[col].add_cells(
                wanted[col],
                bounds[k],
                bounds[k + 1],
                cell_depth[k],
                total[k],
                *values[col],
            )

    def histogram(self, col):
        """What ``_private_spec`` calls for ``col`` instead of
        :func:`privtree_histogram`: the same tree on the merged counts."""
        counter = self.counters[col]

        def histogram(
            values,
            epsilon,
            source,
            *,
            integer,
            sensitivity,
            root,
            weights,
            cuts=None,
            time_axis=None,
        ):
            if (integer, root, cuts) != (counter.integer, counter.root, counter.cuts):
                raise RuntimeError(  # pragma: no cover
                    "the Dask fit's grid is not the column's"
                )
            counter.started = True
            return privtree_from_counts(
                counter,
                epsilon,
                source,
                integer=integer,
                sensitivity=sensitivity,
                root=root,
                cuts=cuts,
                time_axis=time_axis,
            )

        return histogram

    def levels_table(self, col, dtype):
        """``(values, weights)``: the merged level counts of ``col``."""
        total, n_missing = self.level_counts[col]
        return levels_table(total, n_missing, dtype)
