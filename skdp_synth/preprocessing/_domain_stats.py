"""Private domains learned from a Dask DataFrame: chunk statistics, merged exactly.

Everything :meth:`BooleanEncoder.fit` reads to learn a private domain is a
count (``doc/privacy.md``, "Private domains"):

* a numeric column's PrivTree (:cite:`Zhang2016` §3.2, Algorithm 2) reads the
  count of rows in each node it visits, and its fine histogram the count of
  each leaf and of the missing values (:func:`._numeric_domain.privtree_histogram`);
* a categorical column's stable levels (:cite:`Korolova2009`,
  :cite:`Vadhan2017` Proposition 3.5) read each observed level's count and
  the missing count (:func:`._numeric_domain.stable_levels`).

Counts of a fixed partition are sums of per-chunk counts, so they are merged
exactly. The nodes PrivTree can visit form a fixed (public) binary hierarchy:
the depth-0 cells cut at ``0, ±2^k`` and, below them, the split points
:func:`._numeric_domain._split_point` -- a function of the node only, never
of the data. Every node of depth ``<= GRID_DEPTH`` is a union of the cells of
that hierarchy cut at depth :data:`GRID_DEPTH` (the *grid*), so the grid's
per-chunk counts answer every count the tree asks down to that depth.
Deeper nodes lie inside one grid cell; the cells that can hold one are
*refined* -- their distinct values and counts read, which answer any node
inside them -- in a second pass, before any noise is drawn: the cells the
tree reaches and splits with the largest probabilities, computed from the
grid's counts (:func:`refine_cells`; PrivTree splits a node it reaches with
probability at least 1/4 whatever its count), until the cells left out sum
to at most :data:`REFINE_MISS`. Should the tree still enter a grid cell that
was not refined and holds a row, that cell is refined then, by one more
pass, before the level's noise is drawn: the counts are always exact,
whatever the noise.

The tree itself (:func:`privtree_from_counts`) is :func:`privtree_histogram`
run on those counts: the same nodes, level by level, the same Laplace
vectors in the same order, the same leaf and missing counts, the same
post-processing. So the domains -- the noise included -- are those of the
in-memory fit on the same rows with the same ``random_state``
(``tests/test_dask_domains.py`` compares them); the guarantee is the
in-memory one. Which grid cells are refined, and how many passes run, depend
on the data (never on the noise before it is drawn): like the running time
of the in-memory fit, they are not part of the released output.

Memory: the grid is public and built once per kind of column (float,
integer, declared root): at most ``C 2^GRID_DEPTH`` cells (``C`` depth-0
cells, 24 for a float column), 16 bytes each with its count; a refined cell
adds 16 bytes per distinct value in it (one for a point mass); a categorical
column keeps one count per distinct level. Only the refined cells grow with
the data: they hold the values that PrivTree may resolve deeper than the
grid. The hierarchy's nodes above the grid are kept with it (three int32
per node, about as many nodes as cells) to compute the probabilities.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pandas as pd

from ._column_spec import _numbers
from ._numeric_domain import (
    ROOT,
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
#: The grid cells not refined before the noise are, together, reached and
#: split by the tree with probability at most this (:func:`refine_cells`):
#: the chance of one more pass.
REFINE_MISS = 0.01

__all__ = [
    "GRID_DEPTH",
    "ColumnCounts",
    "grid_for",
    "privtree_from_counts",
    "refine_cells",
]


def _expand(lo, hi, depth, stop, integer, floor):
    """Cells of the public hierarchy under ``[lo, hi)`` (at ``depth``), cut
    at depth ``stop`` or where PrivTree cannot split: ``(edges, depths)``."""
    los, depths = [], []
    stack = [(lo, hi, depth)]
    while stack:
        a, b, d = stack.pop()
        mid = _split_point(a, b, integer) if d < stop else None
        if mid is not None and _can_split(a, b, d, integer, floor):
            stack.append((mid, b, d + 1))
            stack.append((a, mid, d + 1))
        else:
            los.append(a)
            depths.append(d)
    return los, depths


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


def refine_cells(counter, epsilon, sensitivity, tree_share=None):
    """The grid cells to refine before the noise: ``r_k``, the probability
    that the tree reaches cell ``k`` (at the grid's depth) and splits it, is
    the product of the split probabilities of its ancestors and its own
    (:func:`split_probability`; the noise of distinct nodes is independent),
    a function of the counts and the public budget. The cells holding a row
    are refined in decreasing ``r_k`` until the ones left sum to at most
    :data:`REFINE_MISS`: an extra pass is needed with probability at most
    that."""
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
    order = np.argsort(r)  # ascending: the least likely are left out
    left = np.cumsum(r[order]) <= REFINE_MISS
    keep = order[~left]
    keep = keep[r[keep] > 0]
    return np.sort(cells[keep].astype(np.int64))


def column_values(series, unit, clip, root_lo, top):
    """A numeric column as :func:`privtree_histogram` sees it: float64 in
    units, clipped to declared bounds (``clip``) and to the root; NaN =
    missing. Returns ``(x, n_missing)`` with the missing values dropped."""
    values = _numbers(series, unit)
    if clip is not None:
        values = np.where(np.isnan(values), np.nan, np.clip(values, *clip))
    miss = np.isnan(values)
    return np.clip(values[~miss], root_lo, top), int(miss.sum())


class ColumnCounts:
    """The merged counts of one numeric column: grid, refined cells, missing.

    A refined grid cell keeps its distinct values and their counts (the
    rows of a point mass are one entry): every node inside it is counted
    from them exactly, at any depth. ``refine(cells)`` is the pass that
    reads them; :meth:`counts` calls it where a tree node lies inside a
    cell that holds a row and is not refined yet (exact counts whatever
    the noise).
    """

    def __init__(self, integer, root, depth, grid_counts, n_missing, refine, cuts=None):
        self.integer, self.root, self.depth = integer, root, depth
        self.cuts = cuts
        self.edges, self.depths, self.root_lo, self.root_hi, self.floor = grid_for(
            integer, root, depth, cuts
        )
        self.grid = np.asarray(grid_counts, dtype=np.int64)
        self.cum = np.concatenate([[0], np.cumsum(self.grid)])
        self.n_missing = int(n_missing)
        self._refine = refine
        self.refined = set()
        self.values = np.empty(0, dtype=np.float64)  # of the refined cells
        self.value_cum = np.zeros(1, dtype=np.int64)

    def add_values(self, cells, values, counts):
        """Store the distinct values (sorted) and counts of refined ``cells``."""
        values = np.concatenate([self.values, values])
        counts = np.concatenate([np.diff(self.value_cum), counts])
        order = np.argsort(values, kind="stable")
        self.values = values[order]
        self.value_cum = np.concatenate([[0], np.cumsum(counts[order])])
        self.refined |= {int(k) for k in cells}

    def _pos(self, v):
        i = int(np.searchsorted(self.edges, v, "left"))
        return i if i < len(self.edges) and self.edges[i] == v else None

    def counts(self, level):
        """Exact row counts of the tree nodes ``[(lo, hi, depth), ...]``."""
        where, need = [], set()
        for lo, hi, _ in level:
            a = self._pos(lo)
            b = len(self.edges) - 1 if hi >= self.root_hi else self._pos(hi)
            if a is not None and b is not None:
                where.append((a, b, None))
                continue
            k = int(np.searchsorted(self.edges, lo, "right") - 1)
            where.append((None, None, k))
            if self.grid[k] > 0 and k not in self.refined:
                need.add(k)
        if need:  # one more pass, before this level's noise is drawn
            self._refine(sorted(need))
        out = np.empty(len(level), dtype=np.float64)
        for j, ((lo, hi, _), (a, b, k)) in enumerate(zip(level, where)):
            if k is None:
                out[j] = self.cum[b] - self.cum[a]
            elif self.grid[k] == 0:
                out[j] = 0.0
            else:
                ia = int(np.searchsorted(self.values, lo, "left"))
                ib = (
                    len(self.values)
                    if hi >= self.root_hi
                    else int(np.searchsorted(self.values, hi, "left"))
                )
                out[j] = self.value_cum[ib] - self.value_cum[ia]
        return out


def refined_values(x, edges, cells):
    """One chunk's distinct values in the grid ``cells`` and their counts."""
    idx = np.clip(np.searchsorted(edges, x, "right") - 1, 0, len(edges) - 2)
    inside = x[np.isin(idx, cells)]
    return np.unique(inside, return_counts=True)


def merge_values(a, b):
    """Two ``(distinct values, counts)`` tables added up."""
    values = np.concatenate([a[0], b[0]])
    counts = np.concatenate([a[1], b[1]]).astype(np.int64)
    out, inv = np.unique(values, return_inverse=True)
    return out, np.bincount(inv, weights=counts, minlength=len(out)).astype(np.int64)


def grid_counts(x, edges):
    """One chunk's counts in the cells of the grid ``edges``."""
    idx = np.clip(np.searchsorted(edges, x, "right") - 1, 0, len(edges) - 2)
    return np.bincount(idx, minlength=len(edges) - 1).astype(np.int64)


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


# --------------------------------------------------------- categorical levels
def level_counts(series):
    """One chunk's level counts (in order of first appearance, or of the
    categories) and missing count, as :func:`stable_levels` counts them."""
    s = pd.Series(series).reset_index(drop=True)
    counts = s.dropna().value_counts(sort=False)
    return counts, int(s.isna().sum())


def merge_level_counts(total, counts):
    """Add one chunk's level counts to ``total`` (a dict: insertion order
    is the order of first appearance over the chunks, in order)."""
    for level, c in counts.items():
        total[level] = total.get(level, 0) + int(c)
    return total


def levels_table(total, n_missing, dtype):
    """The merged level counts as a table of counts for ``stable_levels``'
    ``weights=``: ``(values, weights)``, the missing values one more line.
    The one place the counts reach level discovery: when it takes counts
    directly, this is what changes."""
    keys = list(total)
    values = pd.Series(keys + [None], dtype=dtype if dtype is not None else object)
    weights = np.asarray([total[k] for k in keys] + [n_missing], dtype=np.float64)
    return values, weights


# ------------------------------------------------------------ the passes
def _numeric_plan(encoder, col, dtype):
    """``(integer, root, unit, clip)`` of a private numeric column, as
    ``_private_spec`` derives them (the parameters and the dtype only)."""
    unit = encoder._unit(col, dtype)
    integer = pd.api.types.is_integer_dtype(dtype) or unit is not None
    root = clip = None
    if col in (encoder.bounds or {}):
        lo, hi = encoder._bounds(col, dtype)
        if integer:
            lo, hi = float(np.ceil(lo)), float(np.floor(hi)) + 1.0
        clip = (lo, hi)
        root = (
            lo if np.isfinite(lo) else min(-ROOT, hi - ROOT),
            hi if np.isfinite(hi) else max(ROOT, lo + ROOT) + (1.0 if integer else 0.0),
        )
    return integer, root, unit, clip


def _top(integer, root_hi):
    return root_hi - 1.0 if integer else root_hi


def _first_chunk(part, index, plan):
    """Pass 1 on one chunk: the declared contracts, the grid counts and
    missing counts of the numeric columns, the level counts of the
    categorical ones, and the chunk's length (public: ``n``)."""
    encoder, private, numeric, levels = plan
    try:
        encoder._check_declarations(part, private)
        grids, missing = {}, {}
        for col, (unit, clip, root_lo, top, edges) in numeric.items():
            x, missing[col] = column_values(part[col], unit, clip, root_lo, top)
            c = grid_counts(x, edges)
            nz = np.flatnonzero(c)
            grids[col] = (nz, c[nz])
        cats = {col: level_counts(part[col]) for col in levels}
    except ValueError as exc:
        return ("error", f"chunk {index} of the data: {exc}")
    return ("ok", len(part), grids, missing, cats)


def _refine_chunk(part, index, plan):
    """A refinement pass on one chunk: the distinct values (and counts) of
    the refined cells."""
    out = {}
    for col, (unit, clip, root_lo, top, edges, cells) in plan.items():
        x, _ = column_values(part[col], unit, clip, root_lo, top)
        out[col] = refined_values(x, edges, cells)
    return out


def chunk_pass(frame, function, plan, merge, total):
    """One pass over ``frame``'s partitions: ``function(part, i, plan)`` on
    each, folded into ``total`` by ``merge`` on the driver, a wave of
    partitions at a time (memory: a wave of chunks and their results)."""
    import dask

    from .._chunked import _wave_size, graph_constant

    parts = frame.to_delayed()
    const = graph_constant(plan, "a private domain of a Dask DataFrame")
    task = dask.delayed(function, pure=False)
    wave = _wave_size()
    for start in range(0, len(parts), wave):
        results = dask.compute(
            *[
                task(p, start + j, const)
                for j, p in enumerate(parts[start : start + wave])
            ]
        )
        for r in results:
            total = merge(total, r)
    return total


class DomainStatistics:
    """The merged first-pass statistics of a Dask DataFrame, and the passes
    that refine them (see the module)."""

    def __init__(self, encoder, frame, private, eps_col, sens):
        self.frame = frame
        self.depth = GRID_DEPTH
        meta = frame._meta
        self.numeric, self.columns, self.cuts = {}, {}, {}
        for col, how in private.items():
            if how != "numeric":
                continue
            integer, root, unit, clip = _numeric_plan(encoder, col, meta[col].dtype)
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
                _top(integer, root_hi),
            )
        self.levels = [c for c, how in private.items() if how == "levels"]
        self.eps_col, self.sens = eps_col, sens
        self.passes = 0
        self.lengths = None
        self._private = private
        self._encoder = encoder

    def first_pass(self):
        """Pass 1, then (before any noise) the refinement pass of the
        numeric columns' cells the tree is likely to split
        (:func:`refine_cells`)."""
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
        )
        grids = {
            col: np.zeros(len(plan[2][col][4]) - 1, dtype=np.int64)
            for col in self.numeric
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
            for col, (nz, c) in g.items():
                grids[col][nz] += c
                st["missing"][col] += miss[col]
            for col, (counts, nmiss) in cats.items():
                total, m = st["levels"][col]
                st["levels"][col] = (merge_level_counts(total, counts), m + nmiss)
            return st

        state = chunk_pass(self.frame, _first_chunk, plan, merge, state)
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
            )
            for col, (integer, root, *_) in self.numeric.items()
        }
        wanted = (
            {
                col: refine_cells(counter, self.eps_col, self.sens)
                for col, counter in self.counters.items()
            }
            if self.eps_col
            else {}
        )
        self.refine({col: cells for col, cells in wanted.items() if len(cells)})

    def _depth(self, col):
        """The grid's depth for ``col``: :data:`GRID_DEPTH`, less
        :data:`CUT_GRID_SHALLOWER` for a column with public cuts (a
        date/time column's calendar: 203 depth-0 cells, ``2^16`` grid cells
        under each would be 13 million)."""
        return self.depth - (CUT_GRID_SHALLOWER if self.cuts.get(col) else 0)

    def _refiner(self, col):
        def refine(cells):
            self.refine({col: np.asarray(cells)})

        return refine

    def refine(self, wanted):
        """One pass reading the distinct values (and counts) of the grid
        cells ``wanted[col]``; stored in the columns' counters."""
        if not wanted:
            return
        plan = {}
        for col, cells in wanted.items():
            _, _, unit, clip, root_lo, top = self.numeric[col]
            cells = np.asarray(sorted(int(k) for k in cells), dtype=np.int64)
            plan[col] = (unit, clip, root_lo, top, self.counters[col].edges, cells)
        empty = (np.empty(0, dtype=np.float64), np.empty(0, dtype=np.int64))
        totals = {col: empty for col in plan}

        def merge(tot, r):
            return {col: merge_values(tot[col], r[col]) for col in tot}

        totals = chunk_pass(self.frame, _refine_chunk, plan, merge, totals)
        self.passes += 1
        for col, (values, counts) in totals.items():
            self.counters[col].add_values(plan[col][5], values, counts)

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
