"""How often the first refinement pass of the Dask private domains is not
enough: a simulation on a table of ``bench_dask_domains``.

For each numeric column of the table (its six float and four integer
columns), the grid counts, the grid cells refined before the noise and
their stops are computed as :class:`DomainStatistics.first_pass` does
(:func:`_refine_bounds._chosen`, :func:`_refine_bounds.joint_stops`, at the
bench job's budget: ``ε = 0.0275`` per numeric column, sensitivity 1 --
what ``BooleanEncoder`` gives the pipeline of ``bench_dask_domains dask``).
PrivTree is then run on the exact counts of the in-memory column with
``SEEDS`` noise draws, noting whether it reads a node holding a row below
what the first refinement counted (a pass on demand). Prints, per cap,
the cells counted and rows whose values are kept, each column's bound on
the chance of a pass on demand, and how many draws needed one.

The grid cells' distinct values are bounded as pass 1 of the bounded mode
bounds them: the sum over chunks of ``CHUNK_ROWS`` rows (in file order;
``dd.read_csv``'s 64 MB blocks of the bench table hold about 670,000) of
each chunk's distinct values in the cell; ``fit`` also gives each
column its decimals (:func:`_chunk_counts.decimal_resolution` of the
whole column, the chunks' greatest).

Run::

    python -m benchmarks.sim_refine_passes t3e6.csv 20,21 20 0.001
    # FILE, log2 of REFINE_CELLS (comma-separated), SEEDS, REFINE_MISS

``fit`` runs the encoder's own refinement logic instead
(:class:`_domain_stats.DomainStatistics` with the chunk passes replaced by
counts of the in-memory column, :func:`_chunk_counts.refined_counts`): the
ten numeric trees in the table's order, on one noise source per draw, as
the Dask fit runs them after the level selection (through
:meth:`DomainStatistics.histogram`, so a pass on demand runs the trees
ahead on a copy of the seeded noise as the encoder does); it counts the
refinement passes and the cells and values each counted. ``--before-noise``
runs the earlier rule instead: one refinement pass before the noise for
every numeric column (shared cap), then passes on demand for one column
each (``--detail``: the first targets of each later pass, and their grid
cells). Run::

    python -m benchmarks.sim_refine_passes fit t1e7.csv 20 20
    python -m benchmarks.sim_refine_passes fit t1e7.csv 20 20 \
        --before-noise
    python -m benchmarks.sim_refine_passes fit t1e7.csv 20 10 \
        --order visits,hours,children,age,score,price,assets,debt,wage,income
    python -m benchmarks.sim_refine_passes fit t1e7.csv 20 0 \
        --seeds 0,9 --cache cols.pkl
    # FILE, log2 of refine_cells, SEEDS; --order: the trees' order;
    # --seeds: the draws' seeds instead of 0 to SEEDS - 1; --cache: a
    # pickle of the loaded columns (written once, then read); --ahead:
    # where each pass on demand's run ahead of the trees stops; --no-ahead:
    # the passes planned as with OpenDP's noise (nothing run ahead);
    # --plan-draws K (with --no-ahead): each pass also reads what the
    # trees to come enter in K runs on throwaway generators (below)

An experiment, not the encoder's: ``--no-ahead --plan-draws K`` tries
planning the secure fit's passes on throwaway draws. OpenDP's noise
cannot be drawn twice, but a plan need not use it: each pass on demand
also runs the numeric trees after the asking one ``K`` times on
generators of fresh entropy (:func:`_speculation.run_ahead` on bounded
counts, each run stopping where a split depends on a count not known
yet) and reads, besides the prediction, the union of the cells they
enter (:func:`_throwaway_plan`; at most ``(C - 1) refine_cells``
cells more). It releases nothing -- the draws only choose which exact counts
a pass reads -- and it does not cut the passes: see
``benchmarks/results/bench_dask_domains.md`` ("Planning the secure
passes on throwaway draws").

Each draw also prints the summed miss bound (:func:`_refine_bounds._miss`)
of the columns to come after the first refinement pass: a bound on the
expected number of passes on demand they still need.
"""

from __future__ import annotations

import os
import pickle
import sys

import numpy as np
import pandas as pd

from skdp_synth.mechanisms import NoiseSource
from skdp_synth.preprocessing import _chunk_counts as cc
from skdp_synth.preprocessing import _count_grid as cg
from skdp_synth.preprocessing import _domain_stats as ds
from skdp_synth.preprocessing import _refine_bounds as rb
from skdp_synth.preprocessing._numeric_domain import (
    TREE_SHARE,
    privtree_leaves,
    root_cells,
)

FLOATS = ["income", "wage", "debt", "assets", "price", "score"]
INTEGERS = ["age", "children", "hours", "visits"]
EPS_COLUMN = 0.0275
CHUNK_ROWS = 670_000


def _columns(path):
    df = pd.read_csv(path, usecols=FLOATS + INTEGERS)
    lam = 3.0 / (EPS_COLUMN * TREE_SHARE)
    out = {}
    for col in FLOATS + INTEGERS:
        integer = col in INTEGERS
        edges, depths, root_lo, root_hi, _ = ds.grid_for(integer, None)
        top = root_hi - 1.0 if integer else root_hi
        x, n_missing = ds.column_values(
            pd.Series(df[col].to_numpy(float)), None, None, root_lo, top
        )
        distinct = np.zeros(edges.size - 1, dtype=np.int64)
        for start in range(0, x.size, CHUNK_ROWS):
            distinct += cc.grid_counts(np.unique(x[start : start + CHUNK_ROWS]), edges)
        x = np.sort(x)
        grid = cc.grid_counts(x, edges)
        counter = ds.ColumnCounts(
            integer, None, cg.GRID_DEPTH, grid, n_missing, None, distinct=distinct
        )
        counter.lam = lam
        out[col] = (integer, x, counter, root_hi)
    return out, lam


def _needs_a_pass(integer, x, counter, root_hi, stop_of, lam, seed):
    edges = counter.edges
    state = {"miss": False}

    def count_nodes(level):
        lo = np.array([a for a, _, _ in level])
        hi = np.array([b for _, b, _ in level])
        depth = np.array([d for _, _, d in level])
        c = np.searchsorted(x, hi, "left") - np.searchsorted(x, lo, "left")
        c = np.where(hi >= root_hi, x.size - np.searchsorted(x, lo, "left"), c)
        deep = depth > cg.GRID_DEPTH
        if deep.any():
            k = np.searchsorted(edges, lo[deep], "right") - 1
            if ((c[deep] > 0) & (depth[deep] > stop_of[k])).any():
                state["miss"] = True
        return c

    cells, floor = root_cells(integer, None)
    privtree_leaves(cells, count_nodes, lam, NoiseSource(seed), integer, floor)
    return state["miss"]


def main(path, caps, seeds, miss):
    rb.REFINE_MISS = miss
    data, lam = _columns(path)
    counters = {c: v[2] for c, v in data.items()}
    for log_cap in caps:
        rb.REFINE_CELLS = 2**log_cap
        chosen = {}
        for col, (_, _, counter, _) in data.items():
            cells, reach = ds._chosen(
                counter, EPS_COLUMN, 1.0, limit=rb.REFINE_CELLS // 2
            )
            if len(cells):
                chosen[col] = (cells, reach)
        stops = ds.joint_stops(counters, chosen, lam)
        used = {}
        for col, stop in stops.items():
            cells = chosen[col][0]
            values = stop == ds.VALUES
            depth = counters[col].depths[cells]
            used[col] = (
                int(np.sum(np.where(values, 0, 2.0 ** (stop - depth)))),
                int(np.sum(np.where(values, counters[col].distinct_of(cells), 0))),
                round(counters[col].miss, 4),
            )
        print(
            f"REFINE_CELLS 2^{log_cap}: (cells, values bound, miss bound)",
            used,
            flush=True,
        )
        bad, by_col = 0, dict.fromkeys(data, 0)
        for seed in range(seeds):
            any_bad = False
            for j, (col, (integer, x, counter, root_hi)) in enumerate(data.items()):
                stop_of = np.full(counter.grid.size, -1)
                if col in stops:
                    stop_of[chosen[col][0]] = stops[col]
                hit = _needs_a_pass(
                    integer, x, counter, root_hi, stop_of, lam, 100 * seed + j
                )
                by_col[col] += hit
                any_bad |= hit
            bad += any_bad
        print(
            f"  draws needing a pass on demand: {bad}/{seeds}",
            {c: v for c, v in by_col.items() if v},
            flush=True,
        )


class _InMemory(ds.DomainStatistics):
    """:class:`DomainStatistics` after pass 1, its refinement passes
    counted from the in-memory columns."""

    def __init__(self, data, eps_col, refine_cells, before_noise=False):
        self.eps_col, self.sens, self.refine_cells = eps_col, 1.0, refine_cells
        self.passes, self.counted, self.asked, self.miss = 0, [], [], {}
        self.before_noise = before_noise
        self.data = data
        self._tree_start = None
        self.counters = {
            col: ds.ColumnCounts(
                integer,
                None,
                cg.GRID_DEPTH,
                grid,
                n_missing,
                self._refiner(col),
                exact=refine_cells is None,
                cap=refine_cells,
                distinct=distinct if refine_cells is not None else None,
                decimals=decimals if refine_cells is not None else None,
            )
            for col, (integer, _, grid, distinct, n_missing, decimals, *_) in (
                data.items()
            )
        }
        if refine_cells is not None:  # pass 1's one-value cells
            for col, counter in self.counters.items():
                counter.keep_one_values(*data[col][6])
        self.refine_before_noise()
        if before_noise and refine_cells is not None:
            self.refine(super()._predicted())

    def _predicted(self, **kw):
        return {} if self.before_noise else super()._predicted(**kw)

    def _refiner(self, col):
        real = super()._refiner(col)

        def refine(targets):
            self.asked.append(col)
            real(targets)

        return refine

    def refine(self, wanted):
        if not wanted:
            return
        self.passes += 1
        cells = values = 0
        for col, targets in wanted.items():
            integer, x = self.data[col][:2]
            counter = self.counters[col]
            bounds, depth = cc.sub_cells(targets, integer, counter.floor)
            k, c, v, vc = cc.sub_cell_counts(x, bounds, depth, counter.root_hi)
            cells += int(np.sum((depth >= 0) & (depth != ds.VALUES)))
            values += int(v.size)
            counter.add_cells(targets, bounds[k], bounds[k + 1], depth[k], c, v, vc)
        self.counted.append((sorted(wanted), cells, values))
        if self.passes == 1:  # the summed miss bound of the columns to come
            self.miss = {
                c: round(self.counters[c].miss, 4)
                for c in wanted
                if not self.counters[c].started
            }
        if self.passes > 1 and "--detail" in sys.argv:
            col, targets = next(iter(wanted.items()))
            counter = self.counters[col]
            for lo, hi, depth, stop in targets[:5]:
                k = int(np.searchsorted(counter.edges, lo, "right") - 1)
                print(
                    f"  {col}: target [{lo!r}, {hi!r}) depth {depth} stop {stop};"
                    f" grid cell {k} (depth {counter.depths[k]}, count"
                    f" {counter.grid[k]}, distinct <= {counter.distinct_of([k])[0]},"
                    f" refined {k in counter.refined})",
                    flush=True,
                )


def fit(path, log_cap, seeds, before_noise=False, order=None, cache=None):
    """The refinement passes of the encoder's bounded mode (``2^log_cap``
    cells a numeric column) on ``path``'s numeric columns, per draw (the
    trees in the table's order, or in ``order``: column names); ``seeds``:
    how many draws, or the list of the draws' seeds; ``cache``: a pickle
    of the loaded columns, written the first time, read after."""
    data, _ = _cached_columns(path, cache)
    data = {  # pass 1's decimals: the chunks' greatest, the column's
        col: (
            integer,
            x,
            counter.grid,
            counter.distinct,
            counter.n_missing,
            cc.decimal_resolution(x),
            _one_valued(x, counter),
        )
        for col, (integer, x, counter, _) in data.items()
    }
    if order is not None:
        data = {col: data[col] for col in order}
    for seed in range(seeds) if isinstance(seeds, int) else seeds:
        stats = _InMemory(data, EPS_COLUMN, 2**log_cap, before_noise)
        source = NoiseSource(seed)
        for col in stats.counters:
            stats.histogram(col)(  # as the encoder calls it, the tree's start noted
                None,
                EPS_COLUMN,
                source,
                integer=data[col][0],
                sensitivity=1.0,
                root=None,
                weights=None,
            )
        print(
            f"seed {seed}: {stats.passes} refinement passes; asked by",
            stats.asked,
            "; (columns, cells, values) counted:",
            stats.counted,
            "; first pass's miss bound of the columns to come:",
            stats.miss,
            f"(sum {sum(stats.miss.values()):.4f})",
            flush=True,
        )


def _show_runs_ahead():
    """``--ahead``: print where each run ahead of the trees starts, which
    trees it decided and how many nodes below the counted cells each
    visits, and the level where it stopped (its nodes, and how many of
    them have an unknown count)."""
    from skdp_synth.preprocessing import _speculation as sp

    laplace, run = sp._Ahead.laplace, sp.run_ahead

    def checked(self, values, scale):
        check = self.check
        try:
            return laplace(self, values, scale)
        except sp.Undecided:
            print(
                f"  run ahead stopped: a level of {len(values)} nodes,"
                f" {int(check[0].sum())} of unknown count",
                flush=True,
            )
            raise

    def run_ahead(counters, order, *args):
        nodes, decided = run(counters, order, *args)
        print(
            f"  run ahead from {order[0]}: decided {decided}; nodes below"
            " the counted cells",
            {c: len(v) for c, v in nodes.items()},
            flush=True,
        )
        return nodes, decided

    sp._Ahead.laplace = checked
    ds.run_ahead = run_ahead


class _Fresh:
    """A throwaway noise source for :func:`_speculation.run_ahead`: a
    generator of fresh entropy, shared with nothing the fit draws."""

    def __init__(self):
        self.rng = np.random.default_rng()


def _merged(targets, more):
    """Refinement targets ``(lo, hi, depth, stop)`` answering both lists:
    one per cell, counted to the deeper stop (:data:`VALUES` the deepest)."""
    stop = {}
    for lo, hi, depth, e in list(targets) + list(more):
        stop[(lo, hi, depth)] = max(stop.get((lo, hi, depth), e), e)
    return [(lo, hi, depth, e) for (lo, hi, depth), e in sorted(stop.items())]


def _throwaway_plan(draws):
    """``--plan-draws K``: a pass on demand reads, besides the asking
    tree's targets and the prediction for the trees to come, the cells the
    trees after the asking one enter in ``draws`` runs ahead on throwaway
    generators (the union, at most ``(C - 1) refine_cells`` cells more,
    the seeded run ahead's share); the nodes each run visits and the
    columns it decided are printed with ``--ahead``."""
    from skdp_synth.preprocessing import _speculation as sp

    def _refiner(self, col):
        def refine(targets):
            cols = list(self.counters)
            later = cols[cols.index(col) + 1 :]
            wanted = {col: targets}
            wanted.update(self._predicted())
            union = {}
            for _ in range(draws if later else 0):
                nodes, decided = sp.run_ahead(
                    self.counters, later, _Fresh(), self.eps_col, self.sens
                )
                if "--ahead" in sys.argv:
                    print(
                        f"  throwaway run from {later[0]}: decided {decided};"
                        " nodes below the counted cells",
                        {c: len(v) for c, v in nodes.items()},
                        flush=True,
                    )
                for c, visited in nodes.items():
                    union.setdefault(c, set()).update(visited)
            spent, share = 0.0, (len(cols) - 1) * self.refine_cells
            for c in later:
                if not union.get(c):
                    continue
                counter = self.counters[c]
                more, cost = counter.targets_of(sorted(union[c], key=lambda n: n[2]))
                if spent + cost > share:
                    break
                wanted[c] = _merged(wanted.get(c, []), more)
                spent += cost
            self.refine(wanted)

        return refine

    ds.DomainStatistics._refiner = _refiner


def _one_valued(x, counter):
    """Pass 1's one-value grid cells (:func:`_chunk_counts.one_valued_cells`)
    from the whole sorted column: a cell of one distinct value on at least
    ``ONE_VALUE_CELL_ROWS`` rows. The encoder also asks every chunk holding
    rows in it to hold ``ONE_VALUE_CHUNK_ROWS`` or more, which the sorted
    column cannot tell: a cell of 256 rows spread over the 15 chunks fails
    that in about 1 draw of 10, one of ``score``'s cells (about 5,000
    rows) practically never."""
    u = np.unique(x)
    du = cc.grid_counts(u, counter.edges)
    cell = np.clip(
        np.searchsorted(counter.edges, u, "right") - 1, 0, counter.edges.size - 2
    )
    one = (du[cell] == 1) & (counter.grid[cell] >= cc.ONE_VALUE_CELL_ROWS)
    return cell[one], u[one], counter.grid[cell[one]]


def _cached_columns(path, cache):
    """:func:`_columns`, pickled to ``cache`` (the CSV's parse and the
    per-chunk distinct values take minutes at 10^7 rows)."""
    if cache is not None and os.path.exists(cache):
        with open(cache, "rb") as f:
            return pickle.load(f)
    out = _columns(path)
    if cache is not None:
        with open(cache, "wb") as f:
            pickle.dump(out, f, protocol=5)
    return out


def _option(name):
    """``--name value`` or ``--name=value``, else None."""
    for j, arg in enumerate(sys.argv):
        if arg == name:
            return sys.argv[j + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _order():
    """``--order a,b,...``: the trees' order (default: the table's)."""
    order = _option("--order")
    return order.split(",") if order else None


if __name__ == "__main__" and sys.argv[1] == "fit":
    if "--ahead" in sys.argv:
        _show_runs_ahead()
    if "--no-ahead" in sys.argv:
        # the passes planned as with OpenDP's noise (``random_state=None``,
        # the secure default): nothing drawn ahead, the prediction alone
        from skdp_synth.preprocessing import _domain_stats as _ds

        _ds.can_run_ahead = lambda source: False
        if _option("--plan-draws") is not None:
            _throwaway_plan(int(_option("--plan-draws")))
    draws = _option("--seeds")
    fit(
        sys.argv[2],
        int(sys.argv[3]),
        [int(v) for v in draws.split(",")] if draws else int(sys.argv[4]),
        "--before-noise" in sys.argv,
        _order(),
        _option("--cache"),
    )
elif __name__ == "__main__":
    main(
        sys.argv[1],
        [int(c) for c in sys.argv[2].split(",")],
        int(sys.argv[3]),
        float(sys.argv[4]),
    )
