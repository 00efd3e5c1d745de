"""The merged counts of one numeric column of a Dask private domain: its
grid counts, the cells and values the refinement passes kept below the
grid, and the missing count (:class:`ColumnCounts`). It answers the exact
count of any tree node, and asks for a refinement pass where a node lies
inside a cell not counted deep enough (``_domain_stats``). It holds counts
only; the passes that read rows are ``_domain_stats``'.
"""

from __future__ import annotations

import numpy as np

from . import _refine_bounds
from ._chunk_counts import VALUES, decimal_values
from ._count_grid import grid_for
from ._natural_limits import _limit_edges
from ._refine_bounds import _stops, refine_stops, split_probability
from ._tree_grid import MAX_DEPTH

__all__ = ["ColumnCounts"]


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
        decimals=None,
    ):
        self.integer, self.root, self.depth = integer, root, depth
        self.cuts = cuts
        #: the column's declared point masses (public; set by the fit)
        self.declared = ()
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
        self.asking = None  # the tree's level a pass on demand is for
        self.started = False  # whether the tree has drawn noise yet
        self.miss = 0.0
        self.exact = bool(exact)
        self._cap = cap
        # at least each grid cell's distinct values (bounded mode), or None
        self.distinct = distinct
        # bounded mode: every value has at most these decimals
        # (:func:`decimal_resolution`), or None
        self.decimals = decimals

    @property
    def cap(self):
        """Cells a refinement pass may count for this column (bounded mode)."""
        return _refine_bounds.REFINE_CELLS if self._cap is None else int(self._cap)

    def distinct_of(self, cells):
        """At least the distinct values of grid ``cells`` (their counts
        where pass 1 did not count them): at most the count, the sum over
        the chunks of their distinct values in the cell, and the values of
        ``decimals`` decimals the cell can hold (:func:`decimal_values`;
        a cell narrower than the values' resolution holds at most 2)."""
        cells = np.asarray(cells, dtype=np.int64)
        if self.distinct is None:
            return self.grid[cells]
        out = np.minimum(self.grid[cells], self.distinct[cells])
        if self.decimals is not None:
            e = self.edges
            out = np.minimum(out, decimal_values(e[cells], e[cells + 1], self.decimals))
        return out

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
        keep = order[np.cumsum(r[order]) > _refine_bounds.REFINE_MISS]
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

    def keep_one_values(self, cells, values, counts):
        """Grid ``cells`` of one value each (pass 1's
        :func:`one_valued_cells`): kept as that value and its count, which
        answer every node inside the cell -- refined without a pass."""
        if len(cells):
            self._add_values(np.asarray(values, dtype=np.float64), counts)
            self.refined.update(int(k) for k in cells)

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
            if left[j] <= _refine_bounds.REFINE_MISS or self.cell_depth[i] >= MAX_DEPTH:
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

    def counts(self, level, points=()):
        """Exact row counts of the tree nodes ``[(lo, hi, depth), ...]``;
        the same pass keeps the values of the cells ``points`` lie inside
        (:meth:`rows_below`)."""
        where, need = self._where(level)
        at = [(v, v, VALUES) for v in points]
        need.update(self._where(at)[1])
        if need:  # one more pass, before this level's noise is drawn
            self.asking = list(level) + at  # what the pass must answer
            self._refine(self._targets_on_demand(level, where, need))
            self.asking = None
            where, need = self._where(level)
            if need:  # pragma: no cover - a pass resolves every target
                raise RuntimeError("a refinement pass left a node unresolved")
        return np.array([self._answer(*w) for w in where], dtype=np.float64)

    def rows_below(self, v):
        """Exact rows below ``v``, a leaf edge :func:`._natural_limits.
        _limit_cells` may add (100, 100 + f: no hierarchy cell ends there).
        The grid cells below ``v``'s, and in ``v``'s own cell the kept cells
        and values below it, once :meth:`counts` kept the values of the
        cell ``v`` lies inside (its ``points``; in either mode: one cell's
        distinct values)."""
        if v <= self.root_lo:
            return 0.0
        if v >= self.root_hi:
            return float(self.cum[-1])
        k = int(np.searchsorted(self.edges, v, "right") - 1)
        if self.edges[k] == v or self.grid[k] == 0:
            return float(self.cum[k])
        if self._where([(v, v, VALUES)])[1]:  # pragma: no cover
            raise RuntimeError("rows below a point no pass resolved")
        a = float(self.edges[k])
        return float(
            self.cum[k]
            + self._kept_count(self.lo, self.cell_cum, a, v)
            + self._kept_count(self.values, self.value_cum, a, v)
        )

    def limit_targets(self):
        """Targets ``(lo, hi, depth, VALUES)`` keeping the values of the
        cells holding a row that an edge :func:`._natural_limits.
        _limit_cells` may add lies inside, not resolved yet (for an integer
        column, only the declared point masses')."""
        at = [
            (v, v, VALUES)
            for v in _limit_edges(self.integer, self.declared)
            if self.root_lo < v < self.root_hi
        ]
        if not at:
            return []
        _, need = self._where(at)
        return [(a, b, d[0], VALUES) for (a, b), d in sorted(need.items())]

    def bounded_counts(self, level):
        """``(counts, unknown)`` without a pass: the exact count of each
        node where the counts kept answer it, else (``unknown``) the count
        of the grid or kept cell holding it, a bound (``_speculation``)."""
        where, _ = self._where(level)
        out = np.empty(len(level), dtype=np.float64)
        unknown = np.array([w is None for w in where], dtype=bool)
        for j, ((lo, hi, _), w) in enumerate(zip(level, where)):
            if w is not None:
                out[j] = self._answer(*w)
                continue
            k = int(np.searchsorted(self.edges, lo, "right") - 1)
            i = self._inside_kept(lo, hi) if k in self.refined else -1
            out[j] = self.grid[k] if i < 0 else self.cell_cum[i + 1] - self.cell_cum[i]
        return out, unknown

    def targets_of(self, nodes):
        """Refinement targets ``(lo, hi, depth, stop)`` that answer the
        tree ``nodes`` (``[(lo, hi, depth), ...]``, any depths) the counts
        kept do not: each cell holding one counted to the deepest of them,
        or its values where they cost less (:data:`VALUE_COST` each); and
        what they cost in cells (the most a pass counts for them)."""
        _, need = self._where(sorted(nodes, key=lambda node: node[2]))
        out, cost = [], 0.0
        for (a, b), (depth, count, node, distinct) in sorted(need.items()):
            values = _refine_bounds.VALUE_COST * min(count, distinct)
            cells = 2.0 ** (node - depth)
            out.append((a, b, depth, int(VALUES if values < cells else node)))
            cost += min(values, cells)
        return out, cost

    def answers(self, targets, level):
        """Whether counting ``targets`` answers every node of ``level``."""
        _, need = self._where(level)
        stops = {(t[0], t[1]): t[3] for t in targets}
        return all(stops.get(k, -1) >= v[2] for k, v in need.items())

    def _answer(self, kind, a, b):
        """The count of a node located by :meth:`_where`."""
        if kind == "grid":
            return self.cum[b] - self.cum[a]
        if kind == "zero":
            return 0.0
        return self._kept_count(self.lo, self.cell_cum, a, b) + self._kept_count(
            self.values, self.value_cum, a, b
        )

    def _kept_count(self, lo, cum, a, b):
        """Rows of the kept cells (or values) starting in ``[a, b)`` (to
        the root's closed end where ``b`` is it)."""
        ia = int(np.searchsorted(lo, a, "left"))
        ib = lo.size if b >= self.root_hi else int(np.searchsorted(lo, b, "left"))
        return cum[ib] - cum[ia]
