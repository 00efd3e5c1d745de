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
  at most the sum over the chunks of each chunk's distinct values in the
  cell, both counted in pass 1, and at most the values of the column's
  decimals the cell can hold, :func:`decimal_values`: pass 1 notes the
  fewest decimals, up to ``DECIMALS``, that every value has); the cells
  left out sum to at most
  :data:`REFINE_MISS`. Which, and how deep, is :func:`joint_stops`' choice
  for all the numeric columns at once: the least summed bound on the
  chance of another pass (:func:`_miss`) for at most ``K`` cells per
  numeric column but the asking one in all (``(C - 1) K`` for ``C``
  numeric columns, however many are still to come), a kept value costing
  :data:`VALUE_COST` cells -- deeper where the tree is more likely to
  split, and a column whose tree stays shallow, or has run already,
  leaves its share to one whose tree goes deep. No pass
  runs before the noise: the first tree that asks for a count below the
  grid makes the first refinement pass (its own cells, reached and split:
  probability 1), and that pass -- and every pass after it -- also counts
  the cells predicted so for the numeric columns whose trees have not run
  yet (:meth:`DomainStatistics._predicted`, among their grid cells not
  refined yet and, below the cells an earlier pass counted, the kept
  cells the tree is likely to split, from their exact counts), so one
  pass serves every column to come and the prediction's share is not
  spent on the columns already resolved. With a seeded noise source a
  pass on demand first runs the trees ahead on a copy of the noise
  (``_speculation``: the asking tree from its start, then the trees after
  it, as far as their splits are decided whatever the counts not known
  yet) and reads, for the trees decided to the end, the cells they will
  enter instead of a prediction (:meth:`DomainStatistics._speculated`).
  Pass 1 also keeps the grid cells of one value (every chunk holding rows
  in it holds the same one value: :func:`one_valued_cells`) as that value
  and its count, which answer every node inside them without a pass --
  at most ``n / ONE_VALUE_CELL_ROWS`` values a column.

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
drawn so far and, with a seeded source, on the numbers the trees are going
to draw (run ahead on a copy, the results discarded): like the running time
of the in-memory fit, they are not part of the released output.

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
of the tree) and, for the numeric columns still to come, at most ``(C -
1) refine_cells`` cells and kept values in all, ``C`` the numeric columns
(13 bytes a counted cell
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

import copy

import numpy as np

# Also read from here by the tests and the benchmarks (the ``X as X``
# names). The tuning constants GRID_DEPTH, REFINE_MISS, REFINE_CELLS and
# VALUE_COST are read -- and patched -- in ``_count_grid`` and
# ``_refine_bounds``, where they are defined.
from . import _count_grid
from ._chunk_counts import (
    VALUES,
    _merge_values,
    chunk_pass,
    column_values,
    first_chunk,
    levels_table,
    merge_level_counts,
    numeric_plan,
    one_valued_cells,
    sub_cell_counts,
    sub_cells,
    top_of_root,
)
from ._column_counts import ColumnCounts
from ._count_grid import grid_for
from ._count_grid import hierarchy_for as hierarchy_for
from ._natural_limits import _limit_cells_added
from ._numeric_domain import (
    noisy_histogram,
    privtree_leaves,
)
from ._privtree_budget import column_tree_share
from ._refine_bounds import _chosen, joint_stops, refine_cells
from ._refine_bounds import _miss as _miss
from ._refine_bounds import _reach as _reach
from ._refine_bounds import _stops as _stops
from ._refine_bounds import refine_stops as refine_stops
from ._refine_bounds import split_probability as split_probability
from ._speculation import can_run_ahead, run_ahead, tree_parameters

#: A column with public cuts of its depth-0 cells (a date/time column's
#: calendar, ``_datetime.calendar_cuts``) gets a grid this many levels
#: shallower (``2^8`` cells under each of its 203 calendar cells); deeper
#: nodes are counted from the refined cells' values, as any node below the
#: grid.
CUT_GRID_SHALLOWER = 8
#: Exact mode (``BooleanEncoder(refine_cells=None)``, the default): the grid
#: cells whose distinct values are kept before the noise leave at most this
#: (:func:`refine_cells`). 0.01: 3 passes (pass 1, one refinement, the
#: release) on the 10^7-row bench table (``python -m
#: benchmarks.bench_dask_domains dask``; ``doc/user_guide/out_of_core.md``).
VALUES_MISS = 0.01

__all__ = [
    "ColumnCounts",
    "DomainStatistics",
    "grid_for",
    "privtree_from_counts",
    "refine_cells",
]


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
    cells, floor, lam, scale, theta = tree_parameters(
        integer, root, cuts, epsilon, sensitivity, tree_share
    )
    counter.lam = lam  # how deep a refinement on demand counts
    declared = counter.declared
    edges, finest, chain = privtree_leaves(
        cells, counter.counts, lam, source, integer, floor, theta, declared
    )
    # the leaves that are tree nodes counted as the tree's; those cut at 100
    # or a declared point mass (:func:`._natural_limits._limit_cells`: no
    # hierarchy cell ends there) from the rows below their edges
    added = _limit_cells_added(edges, integer, declared)
    cut = added | np.append(added[1:], False)
    nodes = [(lo, hi, 0) for lo, hi in zip(edges[:-1], edges[1:])]
    kept = [n for n, c in zip(nodes, cut) if not c]
    points = sorted({float(v) for v in edges[np.append(added, False)]})
    true = np.zeros(len(nodes))
    counted = counter.counts(kept + _uncut(edges, cut), points)
    true[~cut] = counted[: len(kept)]
    if cut.any():
        for j in np.flatnonzero(cut):
            lo, hi = float(edges[j]), float(edges[j + 1])
            true[j] = counter.rows_below(hi) - counter.rows_below(lo)
    return noisy_histogram(
        edges,
        finest,
        true,
        counter.n_missing,
        integer,
        scale,
        source,
        time_axis,
        declared,
        chain,
    )


def _uncut(edges, cut):
    """The tree's own leaves around the cut ones ``cut`` (each run of cut
    leaves merged back into the leaf it was): what :meth:`ColumnCounts.
    counts` answers, which resolves their outer edges first."""
    out, j = [], 0
    idx = np.flatnonzero(cut)
    while j < idx.size:
        k = j
        while k + 1 < idx.size and idx[k + 1] == idx[k] + 1:
            k += 1
        out.append((float(edges[idx[j]]), float(edges[idx[k] + 1]), 0))
        j = k + 1
    return out


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
        self.depth = _count_grid.GRID_DEPTH
        meta = frame._meta
        self.numeric, self.columns, self.cuts, self.declared = {}, {}, {}, {}
        for col, how in private.items():
            if how != "numeric":
                continue
            self.declared[col] = encoder._point_masses(col)
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
        self._tree_start = None  # (column, noise source copy, budget)

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
            # bounded mode: the values' decimals (the chunks' greatest;
            # None, no bound, if any chunk's values have more)
            "decimals": dict.fromkeys(self.numeric, 0),
            # bounded mode: the chunks' one-value grid cells
            "one": {col: [] for col in self.numeric},
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
                    d = st["decimals"][col]
                    st["decimals"][col] = None if None in (d, u[1]) else max(d, u[1])
                    st["one"][col].append(u[2])
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
                decimals=state["decimals"][col] if plan[4] else None,
            )
            for col, (integer, root, *_) in self.numeric.items()
        }
        for col, counter in self.counters.items():
            counter.declared = self.declared[col]
            if plan[4]:  # bounded mode: a cell of one value keeps it
                one = one_valued_cells(state["one"][col], grids[col])
                counter.keep_one_values(*one)
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
            eps_tree = self.eps_col * column_tree_share(self.eps_col)
            for counter in self.counters.values():
                counter.lam = 3.0 * self.sens / eps_tree
        self.refine(wanted)

    def _predicted(self, skip=(), spent=0.0):
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
        pending = {
            c: k for c, k in self.counters.items() if not k.started and c not in skip
        }
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
        lam = 3.0 * self.sens / (self.eps_col * column_tree_share(self.eps_col))
        # the shares of every numeric column but the asking one, however
        # many are still to come (public: the schema's columns)
        shares = max(len(self.counters) - 1, len(pending))
        shares -= spent / self.refine_cells  # the trees run ahead took these
        if shares <= 0:
            return {}
        stops = joint_stops(
            pending, chosen, lam, self.refine_cells, deeper, shares=shares
        )
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
                ahead, spent = self._speculated(col, len(targets))
                wanted.update({c: t for c, t in ahead.items() if t})
                wanted.update(self._predicted(skip=ahead, spent=spent))
            self.refine(wanted)

        return refine

    def _speculated(self, col, m):
        """Bounded mode with a seeded noise source: the targets that answer
        every node the trees will visit below what is counted, found by
        running them ahead on a copy of the noise (``_speculation``) from
        the start of ``col``'s tree, the asking one of ``m`` targets,
        through the numeric trees after it: ``({column: targets}, spent)``
        for the columns whose whole tree was decided -- ``col``'s where
        they fit in ``max(refine_cells, 2 m)`` cells and answer its level
        (they replace its targets), the others' in order while they fit in
        ``(C - 1) refine_cells`` (``spent`` of them), as the prediction
        they replace.
        ``({}, 0)`` where the noise cannot be drawn ahead (OpenDP's) or
        ``col``'s tree is not decided."""
        start = self._tree_start
        if start is None or start[0] != col:
            return {}, 0.0
        cols = list(self.counters)
        nodes, decided = run_ahead(
            self.counters, cols[cols.index(col) :], start[1], *start[2]
        )
        out, spent, cap = {}, 0.0, self.counters[col].cap
        share = (len(cols) - 1) * self.refine_cells
        for c in decided:
            counter = self.counters[c]
            targets, cost = counter.targets_of(nodes[c])
            if c == col:  # else its own targets, as without the run
                if cost <= max(cap, 2 * m) and (
                    counter.asking is None or counter.answers(targets, counter.asking)
                ):
                    out[c] = targets
                continue
            if spent + cost > share:
                break
            out[c] = targets  # [] where the tree reads nothing more
            spent += cost
        return out, spent

    def refine(self, wanted):
        """One pass counting the cells of the hierarchy under the targets
        ``wanted[col]`` (``(lo, hi, depth, stop)``, :func:`sub_cells`); the
        occupied ones are stored in the columns' counters."""
        if not wanted:
            return
        if self.refine_cells is not None:
            wanted = self._with_limit_values(wanted)
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

    def _with_limit_values(self, wanted):
        """Bounded mode: ``wanted`` plus, for every float column, the values
        of the cells 100 and ``100 + f`` lie inside (one cell's distinct
        values each), so the leaves cut there
        (:func:`._natural_limits._limit_cells`) are counted without a pass
        of their own (:meth:`ColumnCounts.rows_below`)."""
        out = {c: list(t) for c, t in wanted.items()}
        for col, counter in self.counters.items():
            for a, b, d, stop in counter.limit_targets():
                have = out.setdefault(col, [])
                same = [i for i, t in enumerate(have) if (t[0], t[1]) == (a, b)]
                if same:
                    t = have[same[0]]
                    have[same[0]] = (t[0], t[1], t[2], stop)
                elif not any(t[0] < b and a < t[1] for t in have):
                    have.append((a, b, d, stop))
        return {c: t for c, t in out.items() if t}

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
            point_masses=(),
        ):
            declared = tuple(float(v) for v in point_masses)
            if (integer, root, cuts, declared) != (
                counter.integer,
                counter.root,
                counter.cuts,
                counter.declared,
            ):
                raise RuntimeError(  # pragma: no cover
                    "the Dask fit's grid is not the column's"
                )
            counter.started = True
            # where the tree starts on the noise, to run it ahead from there
            # when it asks for a pass (:meth:`_speculated`)
            self._tree_start = (
                (col, copy.deepcopy(source), (epsilon, sensitivity))
                if can_run_ahead(source) and self.refine_cells is not None
                else None
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
