"""What one chunk of a Dask DataFrame counts for the private domains, and
the pass that folds the chunks' counts together.

Pass 1 of :class:`._domain_stats.DomainStatistics`: per chunk, the grid
counts and missing count of each private numeric column (the public grid of
:func:`._count_grid.grid_for`), the level counts of each categorical one,
and the chunk's length -- counts of a fixed partition, merged exactly by
summing (``doc/privacy.md``, "Private domains"). And the refinement
passes': the cells of the public hierarchy under the refined cells
(:func:`sub_cells`), each chunk's counts in them, or the distinct values of
the cells whose values are kept (:func:`sub_cell_counts`). Nothing here
draws noise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._column_spec import _numbers
from ._level_selection import levels_only
from ._numeric_domain import ROOT
from ._tree_grid import MAX_DEPTH, _can_split, _split_point

__all__ = [
    "VALUES",
    "chunk_pass",
    "column_values",
    "decimal_resolution",
    "decimal_values",
    "first_chunk",
    "grid_counts",
    "level_counts",
    "levels_table",
    "merge_level_counts",
    "numeric_plan",
    "refined_counts",
    "sub_cell_counts",
    "sub_cells",
    "top_of_root",
]

#: The stop that asks a refinement pass for a target's values (with their
#: counts) instead of its cells: they answer every node inside it, at any
#: depth, and number at most its count (:func:`_stops`).
VALUES = MAX_DEPTH + 1
#: The finest decimal resolution pass 1 looks for in a column's values,
#: ``10^-DECIMALS`` (:func:`decimal_resolution`).
DECIMALS = 6
#: Bounded mode: pass 1 notes a grid cell's value where a chunk holds only
#: one distinct value in it, on at least this many rows
#: (:func:`one_value_notes`); a cell whose every chunk holds the same one
#: value, on at least :data:`ONE_VALUE_CELL_ROWS` rows in all, keeps it
#: with its count (:func:`one_valued_cells`), which answers every node
#: inside the cell. Such a cell of many rows -- the bench table's `score`,
#: one value of about 5,000 rows per grid cell -- decides its tree's splits
#: by its counts below the grid, which no pass had read when its tree asked
#: first, so the trees after it could not be run ahead (``_speculation``;
#: ``benchmarks/results/bench_dask_domains.md``). Public constants.
ONE_VALUE_CHUNK_ROWS = 8
ONE_VALUE_CELL_ROWS = 256


def column_values(series, unit, clip, root_lo, top):
    """A numeric column as :func:`privtree_histogram` sees it: float64 in
    units, clipped to declared bounds (``clip``) and to the root; NaN =
    missing. Returns ``(x, n_missing)`` with the missing values dropped."""
    values = _numbers(series, unit)
    if clip is not None:
        values = np.where(np.isnan(values), np.nan, np.clip(values, *clip))
    miss = np.isnan(values)
    return np.clip(values[~miss], root_lo, top), int(miss.sum())


def decimal_resolution(values):
    """The least ``d <= DECIMALS`` with every value ``x`` equal to
    ``round(x 10^d) / 10^d`` in floating point (all finite), else None: each
    value is then ``fl(k / 10^d)`` for the integer ``k = round(x 10^d)``,
    so distinct values have distinct ``k`` (:func:`decimal_values`). Over
    chunks, the greatest ``d``; None if any chunk's is None."""
    x = np.asarray(values, dtype=np.float64)
    if not np.isfinite(x).all():
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        for d in range(DECIMALS + 1):
            s = 10.0**d
            if np.array_equal(np.round(x * s) / s, x):
                return d
    return None


def decimal_values(lo, hi, decimals):
    """At most how many distinct values ``fl(k / 10^decimals)`` (``k`` an
    integer; :func:`decimal_resolution`) lie in each ``[lo, hi]``: such a
    value is within half an ulp ``u`` of ``k / s`` (``s = 10^decimals``),
    so ``k`` lies in ``[s (lo - u), s (hi + u)]``, at most ``floor(s (hi -
    lo)) + 2`` integers where ``2 s u < 1`` -- ensured by ``max(|lo|, |hi|)
    < 2^50 / s``; elsewhere no bound (``2^62``). The product is widened by
    ``2^-40`` against its rounding."""
    s = 10.0**decimals
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        span = np.floor((hi - lo) * s * (1.0 + 2.0**-40)) + 2.0
        near = np.maximum(np.abs(lo), np.abs(hi)) < 2.0**50 / s
        span = np.where(near & np.isfinite(span), np.minimum(span, 2.0**62), 2.0**62)
    return span.astype(np.int64)


def grid_counts(x, edges):
    """One chunk's counts in the cells of the grid ``edges``."""
    idx = np.clip(np.searchsorted(edges, x, "right") - 1, 0, len(edges) - 2)
    return np.bincount(idx, minlength=len(edges) - 1).astype(np.int64)


# --------------------------------------------------------- categorical levels
def level_counts(series):
    """One chunk's level counts (in order of first appearance, or of the
    categories) and missing count, as :func:`stable_levels` counts them (a
    cell that cannot be a level counted nowhere: :func:`levels_only`)."""
    s, _ = levels_only(series)
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


def numeric_plan(encoder, col, dtype):
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


def top_of_root(integer, root_hi):
    return root_hi - 1.0 if integer else root_hi


def first_chunk(part, index, plan):
    """Pass 1 on one chunk: the declared contracts, the grid counts and
    missing counts of the numeric columns (in bounded mode also the
    number of the chunk's distinct values in each grid cell and their
    :func:`decimal_resolution`), the level
    counts of the categorical ones, and the chunk's length (public:
    ``n``)."""
    encoder, private, numeric, levels, distinct = plan
    try:
        encoder._check_declarations(part, private)
        grids, missing = {}, {}
        for col, (unit, clip, root_lo, top, edges) in numeric.items():
            x, missing[col] = column_values(part[col], unit, clip, root_lo, top)
            c = grid_counts(x, edges)
            nz = np.flatnonzero(c)
            grids[col] = (nz, c[nz])
            if distinct:
                u = np.unique(x)
                du = grid_counts(u, edges)
                grids[col] += (
                    du[nz],
                    decimal_resolution(u),
                    one_value_notes(u, du, c, edges),
                )
        cats = {col: level_counts(part[col]) for col in levels}
    except ValueError as exc:
        return ("error", f"chunk {index} of the data: {exc}")
    return ("ok", len(part), grids, missing, cats)


def one_value_notes(u, distinct, counts, edges):
    """One chunk's grid cells holding one distinct value on at least
    :data:`ONE_VALUE_CHUNK_ROWS` rows: ``(cells, values, counts)`` (``u``:
    the chunk's sorted distinct values; ``distinct``, ``counts``: per grid
    cell)."""
    cell = np.clip(np.searchsorted(edges, u, "right") - 1, 0, len(edges) - 2)
    one = (distinct[cell] == 1) & (counts[cell] >= ONE_VALUE_CHUNK_ROWS)
    return cell[one], u[one], counts[cell[one]]


def one_valued_cells(notes, grid):
    """The grid cells every chunk of which holds the same one value, on
    at least :data:`ONE_VALUE_CELL_ROWS` rows in all, from the chunks'
    :func:`one_value_notes`: ``(cells, values, counts)`` -- exact: a cell
    is kept only where the chunks that noted it hold all its rows
    (``grid``: the merged counts)."""
    if not notes:
        empty = np.empty(0, dtype=np.int64)
        return empty, np.empty(0), empty
    cells, values, counts = (np.concatenate(a) for a in zip(*notes))
    order = np.lexsort((values, cells))
    cells, values, counts = cells[order], values[order], counts[order]
    if cells.size == 0:
        return cells.astype(np.int64), values, counts.astype(np.int64)
    first = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]])
    last = np.r_[first[1:], cells.size] - 1
    total = np.add.reduceat(counts.astype(np.int64), first)
    k = cells[first]
    ok = (values[first] == values[last]) & (total == grid[k])
    ok &= total >= ONE_VALUE_CELL_ROWS
    return k[ok].astype(np.int64), values[first][ok], total[ok]


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


# ------------------------------------------- the refinement passes' cells
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


def sub_cells(targets, integer, floor):
    """The cells of the public hierarchy under each of ``targets`` -- ``(lo,
    hi, depth, stop)``, disjoint hierarchy cells -- cut at depth ``stop``
    or where PrivTree cannot split (:func:`_expand`). Returns ``(bounds,
    depth)``: the sorted cell boundaries, and the depth of the cell that
    starts at each (-1 for the space between targets, and at the last
    boundary). A cell is identified by the index of its lower boundary."""
    # each target's cells become arrays at once (ascending: _expand splits
    # depth first, left first), so that no list of all the cells' Python
    # floats is held (32 bytes a cell, which the allocator keeps after)
    targets = sorted(targets)
    bounds, cell_depth = [], []
    for j, (lo, hi, depth, stop) in enumerate(targets):
        if stop == VALUES:  # one cell: its values are kept
            a, d = [lo], [VALUES]
        else:
            a, d = _expand(lo, hi, depth, stop, integer, floor)
        bounds.append(np.asarray(a, dtype=np.float64))
        cell_depth.append(np.asarray(d, dtype=np.int8))
        if j + 1 == len(targets) or targets[j + 1][0] != hi:
            bounds.append(np.asarray([hi], dtype=np.float64))  # a gap, or the end
            cell_depth.append(np.asarray([-1], dtype=np.int8))
    if not bounds:
        return np.empty(0, dtype=np.float64), np.empty(0, dtype=np.int8)
    return np.concatenate(bounds), np.concatenate(cell_depth)


def sub_cell_counts(x, bounds, cell_depth, root_hi):
    """One chunk's counts in the cells of :func:`sub_cells` (sparse: the
    cells holding a row, and their counts), and the distinct values, with
    their counts, in the cells whose values are kept (:data:`VALUES`):
    ``(cells, counts, values, value_counts)``. A value at the root's closed
    upper end (a float column) is in the last cell, as in
    :func:`privtree_histogram`."""
    i = np.searchsorted(bounds, x, "right") - 1
    if bounds.size and bounds[-1] >= root_hi:
        i[x >= root_hi] = bounds.size - 2
    inside = (i >= 0) & (i < bounds.size - 1)
    i, x = i[inside], x[inside]
    d = cell_depth[i]
    cells = np.unique(i[(d >= 0) & (d != VALUES)], return_counts=True)
    return cells + np.unique(x[d == VALUES], return_counts=True)


def refined_counts(x, targets, integer, floor, root_hi):
    """The occupied cells under ``targets`` (:func:`sub_cells`) of the
    in-memory values ``x``, as a refinement pass merges them: ``(lo, hi,
    depth, count)``."""
    bounds, cell_depth = sub_cells(targets, integer, floor)
    cells, counts, v, vc = sub_cell_counts(x, bounds, cell_depth, root_hi)
    return _with_values(
        bounds[cells], bounds[cells + 1], cell_depth[cells], counts, v, vc
    )


def _with_values(lo, hi, depth, count, values, value_counts):
    """Kept cells and kept values together: a value ``v`` is the point cell
    ``[v, v]`` of depth :data:`VALUES` (a node ``[a, b)`` holds it when ``a
    <= v < b``, or ``b`` is the root's closed end)."""
    return (
        np.concatenate([lo, values]),
        np.concatenate([hi, values]),
        np.concatenate(
            [np.asarray(depth, dtype=np.int64), np.full(values.size, VALUES)]
        ),
        np.concatenate([count, value_counts]),
    )


def _merge_values(values, counts, more, more_counts):
    """The union of two sorted ``(value, count)`` sets, counts summed."""
    v, inverse = np.unique(np.concatenate([values, more]), return_inverse=True)
    c = np.bincount(inverse, weights=np.concatenate([counts, more_counts]))
    return v, c.astype(np.int64)
