"""What one chunk of a Dask DataFrame counts for the private domains, and
the pass that folds the chunks' counts together.

Pass 1 of :class:`._domain_stats.DomainStatistics`: per chunk, the grid
counts and missing count of each private numeric column (the public grid of
:func:`._domain_stats.grid_for`), the level counts of each categorical one,
and the chunk's length -- counts of a fixed partition, merged exactly by
summing (``doc/privacy.md``, "Private domains"). Nothing here draws noise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._column_spec import _numbers
from ._numeric_domain import ROOT

__all__ = [
    "chunk_pass",
    "column_values",
    "first_chunk",
    "grid_counts",
    "level_counts",
    "levels_table",
    "merge_level_counts",
    "numeric_plan",
    "top_of_root",
]


def column_values(series, unit, clip, root_lo, top):
    """A numeric column as :func:`privtree_histogram` sees it: float64 in
    units, clipped to declared bounds (``clip``) and to the root; NaN =
    missing. Returns ``(x, n_missing)`` with the missing values dropped."""
    values = _numbers(series, unit)
    if clip is not None:
        values = np.where(np.isnan(values), np.nan, np.clip(values, *clip))
    miss = np.isnan(values)
    return np.clip(values[~miss], root_lo, top), int(miss.sum())


def grid_counts(x, edges):
    """One chunk's counts in the cells of the grid ``edges``."""
    idx = np.clip(np.searchsorted(edges, x, "right") - 1, 0, len(edges) - 2)
    return np.bincount(idx, minlength=len(edges) - 1).astype(np.int64)


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
    number of the chunk's distinct values in each grid cell), the level
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
                grids[col] += (grid_counts(np.unique(x), edges)[nz],)
        cats = {col: level_counts(part[col]) for col in levels}
    except ValueError as exc:
        return ("error", f"chunk {index} of the data: {exc}")
    return ("ok", len(part), grids, missing, cats)


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
