"""Coarse bins of a private numeric domain, from its fine histogram.

The encoder measures a numeric column through its coarse bins: up to
``n_bins`` bins at equal-mass points of the noisy leaf CDF of
:func:`._numeric_domain.privtree_histogram`, snapped to leaf edges, no bin
ending inside the noise (:func:`coarse_edges`), and the heavy leaves of an
integer column split into one-integer bins (:func:`split_heavy_leaves`).
Post-processing of the released fine histogram: no budget
(``doc/privacy.md``, "Private domains").
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["COARSE_NOISE_Z", "coarse_edges", "split_heavy_leaves"]


def coarse_edges(hist, n_bins):
    """Up to ``n_bins`` bins at equal-mass points of the noisy leaf CDF.

    Post-processing of :func:`privtree_histogram`: edges are leaf edges (so
    every coarse bin is a union of leaves), within the histogram's bounds;
    a leaf holding more than one bin's mass (a point mass) becomes a bin of
    its own. For integer columns the last edge is the largest integer of the
    last bin (the encoder's last bin is closed).
    """
    lo, hi = hist.bounds
    inside = (hist.edges[1:] > lo) & (hist.edges[:-1] < hi)
    e = hist.edges[np.append(inside, False) | np.append(False, inside)].copy()
    e[0], e[-1] = lo, hi  # the outermost bins end at the cap
    c = hist.counts[inside]
    total = c.sum()
    if total <= 0 or c.size == 0:
        cuts = [lo, hi]
    else:
        cdf = np.cumsum(c) / total
        targets = np.arange(1, n_bins) / n_bins
        # the leaf edge where the CDF first reaches each target
        at = np.searchsorted(cdf, targets, side="left") + 1
        cuts = np.unique(np.concatenate([[0], at, [c.size]]))
        # a heavy leaf (point mass) gets its own bin: cut on both of its sides
        heavy = np.flatnonzero(c / total > 1.0 / n_bins)
        cuts = np.unique(np.concatenate([cuts, heavy, heavy + 1]))
        # the cuts of a tentative run and of heavy leaves above their noise
        # stay when merging (a heavy integer leaf is split at a bin start)
        if np.isfinite(hist.scale):
            heavy = heavy[c[heavy] >= COARSE_NOISE_Z * hist.scale * math.sqrt(2.0)]
        fixed = np.concatenate([_tentative_cuts(hist, inside, e), heavy, heavy + 1])
        cuts = np.unique(np.concatenate([cuts, fixed]))
        cuts = _merge_bins_in_noise(cuts, c, hist.scale, fixed)
        cuts = e[np.clip(cuts, 0, c.size)].tolist()
    if hist.integer:
        cuts[-1] = cuts[-1] - 1.0
        if cuts[-1] <= cuts[0]:
            cuts[-1] = cuts[0] + 1.0
        cuts = sorted(set(cuts))
    return [float(v) for v in cuts]


#: A coarse bin must hold at least this many standard deviations of its own
#: noise in the fine histogram (``b sqrt(2 m)`` for its ``m`` leaves; the
#: public ``b = Δ / ε_count``): a bin below it is merged with its lighter
#: neighbour (:func:`_merge_bins_in_noise`), so no coarse bin ends inside
#: the noise. Derived in doc/privacy/encoder.md ("Coarse bins above their
#: noise"): at the equal-mass targets a bin holds ``N / n_bins`` rows, so
#: the rule binds only where ``N / n_bins < 2 b sqrt(2 m)``.
COARSE_NOISE_Z = 2.0


def _merge_bins_in_noise(cuts, c, scale, fixed=()):
    """Leaf-index ``cuts`` of the coarse bins, less the cuts of every bin
    whose noisy mass is below :data:`COARSE_NOISE_Z` sds of its noise
    (merged with its lighter neighbour, lightest first). A leaf holding more
    than the threshold alone (a point mass) is never merged into. Post-
    processing of the kept counts ``c`` and the public ``scale``; the
    cuts in ``fixed`` (the ends of a tentative run) stay."""
    cuts = [int(v) for v in cuts]
    fixed = {int(v) for v in fixed}
    if not np.isfinite(scale) or len(cuts) < 3:
        return np.asarray(cuts)

    def mass(k):
        return float(c[cuts[k] : cuts[k + 1]].sum())

    def need(k):
        m = int(np.count_nonzero(c[cuts[k] : cuts[k + 1]] > 0))
        return COARSE_NOISE_Z * scale * math.sqrt(2.0 * max(m, 1))

    def neighbours(k):  # bins k may merge with: no fixed cut between
        out = []
        if k > 0 and cuts[k] not in fixed:
            out.append(k - 1)
        if k + 1 < len(cuts) - 1 and cuts[k + 1] not in fixed:
            out.append(k + 1)
        return out

    while len(cuts) > 2:
        weak = [k for k in range(len(cuts) - 1) if mass(k) < need(k) and neighbours(k)]
        if not weak:
            break
        k = min(weak, key=mass)
        other = min(neighbours(k), key=mass)
        del cuts[max(k, other)]  # the cut between bins k and other
    return np.asarray(cuts)


def _tentative_cuts(hist, inside, e=None):
    """Leaf-index cuts (among the leaves ``inside`` the bounds, whose edges
    are ``e``) at both ends of each run of tentative leaves, so that a
    tentative bin holds no other leaf (:meth:`FineHistogram.tentative_bins`);
    with :data:`TENTATIVE_GROUP_CUTS`, also between the run's groups of
    kept leaves (:func:`_group_cuts`)."""
    if hist.tentative is None:
        return np.zeros(0, dtype=int)
    tent = np.asarray(hist.tentative, dtype=bool)[inside]
    change = np.flatnonzero(np.diff(tent.astype(int))) + 1
    if TENTATIVE_GROUP_CUTS and e is not None:
        groups = _group_cuts(tent, hist.counts[inside], e, hist.integer)
        change = np.union1d(change, groups)
    return change.astype(int)


#: Cut a tentative run between its groups of kept leaves (:func:`_group_cuts`),
#: so that each far group is a tentative coarse bin of its own, tested by the
#: pipeline at ``TENTATIVE_SUPPORT_Z`` on its own estimate
#: (``skdp_synth._pipeline_levels``). Before, a run's groups shared a bin: the
#: real rows of the run's near edge passed the bin's test and the decoder drew
#: part of them on the far noise leaves past the emptied stretch. Found on a
#: TUNE table of ``benchmarks/bench_suite.py`` (modeldata ``attrition``'s
#: ``YearsSinceLastPromotion`` at ε = 0.3, seed 0: std x40,900 -> x1.08);
#: measured in ``benchmarks/results/bench_suite.md`` ("Tentative runs cut
#: between their groups"). ``False``: one bin per run, as before.
TENTATIVE_GROUP_CUTS = True


def _group_cuts(tentative, c, e, integer):
    """Leaf-index cuts inside each tentative run (mask ``tentative`` over the
    leaves with noisy counts ``c`` and edges ``e``) between its groups of
    kept leaves: groups part where an emptied stretch wider than
    :data:`._numeric_domain.GAP_T` in ``t`` lies between two kept leaves (a
    float column's also where it is wider than
    :data:`._bin_mass.FLOAT_GAP_SHARE` of the span of all its kept leaves,
    as :func:`._bin_mass.drop_unneeded_far_groups` parts them). The cut is on
    the gap's far side from the confirmed leaves -- at the far group's first
    leaf above them, after its last leaf below them -- so the emptied
    stretch stays with the nearer group and the far group's bin holds only
    its own leaves. Post-processing of the released counts and edges."""
    from ._bin_mass import group_gap
    from ._numeric_domain import _t

    c = np.asarray(c, dtype=np.float64)
    e = np.asarray(e, dtype=np.float64)
    held = np.flatnonzero(c > 0)
    if held.size < 2 or not tentative.any() or tentative.all():
        return np.zeros(0, dtype=int)
    span = float(_t(e[held[-1] + 1]) - _t(e[held[0]]))
    gap = group_gap(integer, span)
    out = []
    idx = np.flatnonzero(tentative)
    runs = np.split(idx, np.flatnonzero(np.diff(idx) > 1) + 1)
    for run in runs:
        kept = run[c[run] > 0]
        if kept.size < 2:
            continue
        above = run[0] > 0  # confirmed leaves below the run
        for i, j in zip(kept[:-1], kept[1:]):
            if _t(e[j]) - _t(e[i + 1]) > gap:
                out.append(int(j) if above else int(i) + 1)
    return np.asarray(out, dtype=int)


#: A leaf of an integer column that holds more than one coarse bin's mass
#: and spans 2 to this many integers becomes one coarse bin per integer
#: (:func:`split_heavy_leaves`). PrivTree's depth bias (``λ ln 2`` rows per
#: level) stops its splits above single integers, so a heap of rows on one
#: integer (credit's loan terms: 48 months, 698 rows in the leaf ``[45,
#: 49)``; expenses 35, 45, 60, 75) decoded spread over its leaf. As bins,
#: the release measures each integer; a pipeline then drops the bins its
#: own estimate does not support (the empty integers beside a heap, or past
#: the data's end). Measured (``python -m benchmarks.bench_mixed_seeds``):
#: see benchmarks/README.md.
SPLIT_WIDTH = 16
#: An integer column whose kept range spans at most this many integers gets
#: one coarse bin per integer (:func:`split_heavy_leaves`).
SMALL_RANGE = 16
#: ... and is at least this many times denser (noisy count per integer) than
#: either neighbouring leaf: a heap stands out from its neighbours, a smooth
#: stretch does not, and splitting a smooth one only adds levels (noise in
#: every pair with the column). Measured, not adopted: the column's first
#: and last kept leaves split whatever their neighbours' density (an outer
#: leaf is where the decoder cannot tell a hard edge from a tail: bwght2's
#: ``meduc``, years of schooling 3-17, kept ``[16, 32)`` and came back to 31;
#: a REPORT table, read to find the fault, never to choose). On the TUNE
#: half's 380 silent-fit fits (``python -m benchmarks.bench_suite --half tune
#: --eps 0.3,1 --seeds 10 --methods auto --tv-only``, both table lists) 177
#: moved: TV1 .0970 / .0519 -> .0958 / .0522 at ε = 0.3 / 1, TV2 .1944 /
#: .1199 -> .1936 / .1208, mean KS -0.3 %, silent fits 96 (28 not explained
#: by unseen rows) -> 98 (27), std ratios past 10 37 -> 39 (new bins moved
#: the plan's noise: workinghours' ``age`` at ε = 0.3, seed 0, x1.08 ->
#: x49.6, named).
PEAK_RATIO = 2.0


def split_heavy_leaves(hist, cuts, n_bins, width=None):
    """Coarse edges ``cuts`` with every heavy integer leaf of its own bin
    split into one bin per integer; returns ``(edges, split)``, ``split``
    the indices of the bins so made (post-processing of the fine
    histogram: the same public rule as :func:`coarse_edges`)."""
    width = SPLIT_WIDTH if width is None else width
    if not hist.integer or width < 2 or len(cuts) < 2:
        return list(cuts), []
    if float(cuts[-1]) - float(cuts[0]) < SMALL_RANGE:
        # a kept range of at most ``SMALL_RANGE`` integers (a month, a rating):
        # one bin per integer (_own_last_integers gives the last its own), so
        # that a leaf spanning past the data's last value -- ``[12, 16)`` for
        # a month -- does not decode 13-15; the pipeline drops the integers
        # its release does not support (without this, 9-11 % of the decoded
        # months fell outside 1-12 at 2,000 rows)
        out = [float(v) for v in np.arange(float(cuts[0]), float(cuts[-1]))]
        out = (out if len(out) > 1 else out[:1]) + [float(cuts[-1])]
        return _own_last_integers(hist, out, list(range(len(out) - 1)))
    e, c = hist.edges, hist.counts
    total = float(c[c > 0].sum())
    lo, hi = hist.bounds
    starts = set(cuts[:-1])
    extra = set()
    ends = set()  # a split leaf's end is an edge: the bin after it is not split
    widths = np.maximum(np.minimum(e[1:], hi) - np.maximum(e[:-1], lo), 1.0)
    density = np.maximum(c, 0.0) / widths
    for j in np.flatnonzero(c > 0):
        a, b = max(float(e[j]), lo), min(float(e[j + 1]), hi)
        if not (c[j] / total > 1.0 / n_bins and 2.0 <= b - a <= width and a in starts):
            continue
        # a heap is a local peak: denser, per integer, than either neighbour
        beside = [density[k] for k in (j - 1, j + 1) if 0 <= k < c.size]
        if density[j] >= PEAK_RATIO * max(beside, default=0.0):
            extra.update(float(v) for v in np.arange(a, b))
            ends.add(b)
    last = float(cuts[-1])  # the largest integer of the last (closed) bin
    new = extra | (ends - extra)
    inner = sorted(set(cuts[:-1]) | {v for v in new if cuts[0] <= v <= last})
    if inner[-1] == last and len(inner) > 1:
        inner = inner[:-1]  # the closed last bin [.., last] keeps its end
    out = inner + [last]
    # a split bin is one integer wide (the closed last bin two at most): a
    # leaf that ended inside a wider coarse bin left that bin's rest unsplit
    # (hypothesis: leaves [1, 3) and [3, 18) in one coarse bin [1, 17] made
    # [2, 17) a "split" bin)
    split = [
        k
        for k, v in enumerate(out[:-1])
        if v in extra
        and (out[k + 1] - v == 1.0 or (k == len(out) - 2 and out[k + 1] - v <= 2.0))
    ]
    return _own_last_integers(hist, [float(v) for v in out], split)


def _own_last_integers(hist, out, split):
    """Edges ``out`` and split bins ``split`` with each integer of a split
    closed last bin ``[a, last]`` in a bin of its own where ``last`` is inside
    the cap (``hist.bounds`` ends at ``last + 1``, exclusive; a one-integer
    domain's forced ``[v, v + 1]`` holds one): the edges go on to
    ``last + 1``, past the cap, so the new closed last bin ``[last, last + 1]``
    decodes ``last`` alone. Measured separately, an integer past the data's end is
    the release's to drop; in one bin with the data's largest value it came
    back with half that value's rows (ten integer columns 0-9 in a 20,000-row
    table at ε = 0.33: the fine leaf ``[8, 11)`` made the last bin ``[9, 10]``
    and 4-6 % of the rows came back as 10, unnamed). Post-processing of the
    released fine histogram."""
    k = len(out) - 2
    if k < 0 or k not in split or out[-1] >= hist.bounds[1]:
        return out, split
    top = out[-1]
    out = out[:-1] + [float(v) for v in np.arange(out[-2] + 1.0, top + 2.0)]
    return out, split + list(range(k + 1, len(out) - 1))
