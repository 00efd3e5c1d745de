"""The resolution floor's cell beside 0 cut in two, for the release to measure.

A float column's fine grid has a public resolution floor near 0
(:data:`._natural_limits.RES_FLOOR`, ``2^-10``): ``[0, RES_FLOOR)`` and
``[-RES_FLOOR, 0)`` are finest leaves, decoded as exactly 0, so that a heap
of exact zeros (an amount's, a count's) comes back exactly. A column whose
values live partly under the floor loses them to 0: AER ``CreditCard``'s
``share`` (expenditure over income, no zero) holds the non-card-holders'
values at 0.0001-0.0008, 24 % of its rows, and a model trained on the rows
read ``share == 0`` against held-out rows at 0.0005. Nothing in the fine
histogram tells those rows from exact zeros (``expenditure``, 24 % exactly
0, keeps the same heavy cell).

:func:`cut_floor_cells` cuts a kept floor cell whose outer end is an
inner coarse edge (the cell ends its bin and the column goes on past it; a
heavy cell is a bin of its own, :func:`._coarse_bins.coarse_edges`) at
:data:`FLOOR_PART` of its width:
the release measures the outer part ``[f / 16, f)`` (``[-f, -f / 16)``
below 0) as a level of the column, like the parts of a wide leaf
(:mod:`._wide_leaves`), and the pipeline drops it where the release does
not support it (``_pipeline_levels``, at ``TENTATIVE_SUPPORT_Z``:
:func:`floor_part_bins`). The part at 0 decodes as 0 (its edge nearer 0 is
the whole number 0; a dropped part's leaf keeps its point there,
``_bin_mass.trim_dropped_bins``); the outer part, where kept, uniformly in
``t`` over ``[f / 16, f)`` (``_decoding.decode_fine``).
Post-processing of the released fine histogram: the bins are a public
function of it, and the release measures them within its own budget as
it measures every level (``ε`` and ``δ`` unchanged, no new released
quantity).
"""

from __future__ import annotations

import numpy as np

from ._natural_limits import RES_FLOOR

__all__ = ["CUT_FLOOR_CELLS", "FLOOR_PART", "cut_floor_cells", "floor_part_bins"]

#: Whether kept floor cells are cut (:func:`cut_floor_cells`). Measured on
#: the TUNE half of ``benchmarks/bench_suite.py`` (``python -m
#: benchmarks.bench_floor_parts`` and the suite's silent-fit and model
#: runs; ``benchmarks/results/bench_floor_parts.md``): ``share`` 22-24 %
#: under 0.001 at ε = 1 (held-out 24 %; none before), train-on-synthetic
#: .62 / .51 / .56 -> .99 / .63 / .51 at seeds 0-2; of the 380 silent-fit
#: fits 53 redrawn, mean KS at ε = 1 .0759 -> .0750. ``False``: the cells
#: are left whole, every value under the floor decoded as 0.
CUT_FLOOR_CELLS = True

#: Where a floor cell is cut (:func:`cut_floor_cells`): at this share of its
#: width from 0. Values under it (6.1e-5 at the default floor) still come
#: back as exactly 0. Public, not searched: a sixteenth, as a float wide
#: leaf's ``FLOAT_PARTS``.
FLOOR_PART = 1.0 / 16.0


def _floor_cuts(hist, edges):
    """The values that cut ``hist``'s kept floor cells (a finest leaf ``[0,
    f)`` or ``[-f, 0)``, ``f <= RES_FLOOR``) whose outer end (``f`` or
    ``-f``) is an inner coarse edge of ``edges``. Not where the cell ends the
    column: its outer part would be the end bin, holding every row the
    encoder clipped past the cap, decoded inside the part (RAND's ``inpdol``
    at ε = 0.3 kept the cell ``[0, f)`` alone, 1,460 amounts past it: they
    came back under 0.001, std ratio 0.00, where one bin had been named and
    its excess placed past the cap)."""
    if hist.integer:
        return []
    e = np.asarray(hist.edges, dtype=np.float64)
    c = np.asarray(hist.counts, dtype=np.float64)
    finest = np.asarray(hist.finest, dtype=bool)
    inner = set(float(v) for v in edges[1:-1])
    out = []
    for j in np.flatnonzero((c > 0) & finest):
        lo, hi = float(e[j]), float(e[j + 1])
        if lo == 0.0 and 0.0 < hi <= RES_FLOOR and hi in inner:
            out.append(hi * FLOOR_PART)
        elif hi == 0.0 and -RES_FLOOR <= lo < 0.0 and lo in inner:
            out.append(lo * FLOOR_PART)
    return out


def cut_floor_cells(hist, edges, split):
    """Coarse ``edges`` with each kept floor cell whose outer end is an
    inner coarse edge cut at :data:`FLOOR_PART` of its width (module
    docstring), and ``split`` (bin indices the pipeline tests against its
    release) renumbered, with each outer part (:func:`floor_part_bins`)
    added. ``(edges, split)`` unchanged where no cell is cut."""
    edges = [float(v) for v in edges]
    cuts = _floor_cuts(hist, edges) if CUT_FLOOR_CELLS else []
    if not cuts:
        return edges, list(split)
    out = sorted(set(edges) | set(cuts))
    index = {v: i for i, v in enumerate(out)}
    moved = {index[edges[int(k)]] for k in split} | floor_part_bins(hist, out)
    return out, sorted(moved)


def floor_part_bins(hist, edges):
    """The indices of the outer parts of ``edges``' cut floor cells
    (:func:`cut_floor_cells`): a bin ``[f / 16, f)`` (``[-f, -f / 16)``), ``0 <
    f <= RES_FLOOR``, beside a finest leaf from 0 (to 0) -- the cell, whole
    or, where the pipeline dropped the part, cut to ``[0, f / 16)``
    (``_bin_mass.trim_dropped_bins``). A floor cell never splits, so no
    other coarse edge lies inside it. Public: a function of the released
    histogram and edges."""
    if hist is None or hist.integer:
        return set()
    e = np.asarray(hist.edges, dtype=np.float64)
    finest = np.asarray(hist.finest, dtype=bool)
    up = bool(np.any(finest & (e[:-1] == 0.0)))  # a cell [0, ..)
    down = bool(np.any(finest & (e[1:] == 0.0)))  # a cell [.., 0)
    edges = [float(v) for v in edges]
    out = set()
    for k, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
        if up and 0.0 < b <= RES_FLOOR and a == b * FLOOR_PART:
            out.add(k)
        elif down and -RES_FLOOR <= a < 0.0 and b == a * FLOOR_PART:
            out.add(k)
    return out
