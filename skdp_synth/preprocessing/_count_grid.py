"""The public grid and hierarchy that the Dask private domains count in.

The nodes PrivTree can visit (:cite:`Zhang2016` §3.2) form a fixed binary
hierarchy: the depth-0 cells of :func:`._numeric_domain.root_cells` and,
below them, the split points :func:`._numeric_domain._split_point` -- a
function of the node only, never of the data (public: the dtype, the
declared root, the public cuts). The *grid* is that hierarchy cut at
:data:`GRID_DEPTH`; its per-chunk counts answer every count the tree asks
down to that depth (``_domain_stats``). Nothing here reads rows.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ._numeric_domain import root_cells
from ._tree_grid import _can_split, _split_point

#: Depth of the public grid counted in the first pass (``2^16`` cells per
#: depth-0 cell at most; 1.5 million for a float column, 12 MiB of edges).
GRID_DEPTH = 16

__all__ = ["GRID_DEPTH", "grid_for", "hierarchy_for"]


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
