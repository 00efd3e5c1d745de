"""Private domains for columns whose bins or levels are not public.

Three mechanisms, each derived in ``doc/privacy.md`` ("Private domains"):

* :func:`privtree_histogram` -- a numeric column's data-dependent bins:
  PrivTree (:cite:`Zhang2016` §3, Algorithm 2, fanout 2) on a fixed,
  data-independent root interval ``[-2^40, 2^40]``, first cut at 0 and
  ``±2^k`` (``k = 0, 4, ..., 36``; every cell a depth-0 root), then split at the
  midpoint of the symmetric log coordinate ``t(x) = sign(x) log2(1 + |x|)``,
  so a column of any scale is resolved where its values are; then one
  Laplace count per leaf
  and one for the missing values (the fine 1-way histogram). The column's
  bounds are the outermost leaves whose noisy count passes a threshold (no
  separate bound estimator, so no non-finite or out-of-range value can reach
  one: ``±inf`` fall into the outermost leaves and are clipped; smartnoise#580).
* :func:`coarse_edges` -- coarse bins at equal-mass points of the noisy leaf
  CDF, snapped to leaf edges (post-processing).
* :func:`stable_levels` -- frequent levels of a categorical column by the
  stability-based histogram (Laplace counts of the observed levels, kept
  above a threshold that pays ``δ``; :cite:`Korolova2009`, :cite:`Vadhan2017`
  Proposition 3.5).

Sensitivities are per neighbouring relation: under add/remove one row
changes one count by 1; under replace-one two counts by 1 each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: The root interval of every private numeric domain: ``[-ROOT, ROOT]``.
#: Values beyond it are clipped to it (documented in ``BooleanEncoder``).
ROOT = 2.0**40
#: The deepest PrivTree level (data-independent; :cite:`Zhang2016` allows any
#: cap, the privacy proof does not depend on the depth).
MAX_DEPTH = 30

__all__ = [
    "FineHistogram",
    "coarse_edges",
    "privtree_histogram",
    "stable_levels",
]


def _t(x):
    return np.sign(x) * np.log2(1.0 + np.abs(x))


def _x(t):
    return np.sign(t) * (np.exp2(np.abs(t)) - 1.0)


def _split_point(lo, hi, integer):
    """Midpoint of ``[lo, hi)`` in the log coordinate (an integer if asked)."""
    mid = float(_x((_t(lo) + _t(hi)) / 2.0))
    if integer:
        mid = float(np.floor(mid))
        if not lo < mid < hi:
            mid = float(np.floor((lo + hi) / 2.0))
    elif not lo < mid < hi:  # rounding of t at large magnitudes
        mid = lo + (hi - lo) / 2.0
    return mid if lo < mid < hi else None


#: The fixed depth-0 cells: the root cut at 0 and ``±2^k``, ``k`` a multiple
#: of this (a factor 16 per cell: fewer levels of PrivTree's depth bias before
#: the data's scale than halving the root; measured in bench_mixed.py).
GRID_STEP = 4
#: The widest run of failing leaves (in ``t``) the kept range grows across.
GAP_T = 1.0
#: Inner leaves whose noisy count is below this many noise scales are set
#: to 0 (an empty leaf passes with probability e^-1 / 2 < 19 %).
INNER_SCALES = 1.0
#: A float leaf narrower than this in the log coordinate (a relative width
#: of about 0.07 %) is "finest": it decodes to its edge nearer to 0.
FINEST_T = 1e-3


def _can_split(lo, hi, depth, integer):
    if depth >= MAX_DEPTH:
        return False
    if integer:
        return hi - lo >= 2.0
    return True


def _finest(lo, hi, integer):
    if integer:
        return hi - lo <= 1.0
    return float(_t(hi) - _t(lo)) < FINEST_T


@dataclass(frozen=True)
class FineHistogram:
    """A private fine 1-way histogram of one numeric column.

    Attributes
    ----------
    edges : ndarray of shape (L + 1,)
        Leaf edges (increasing); leaf ``j`` is ``[edges[j], edges[j + 1])``.
    counts : ndarray of shape (L,)
        Noisy leaf counts, negatives set to 0 and leaves outside the bounds
        zeroed (post-processing).
    missing_count : float
        Noisy count of the missing values (0 if negative).
    finest : ndarray of bool, shape (L,)
        Leaves that could not be split further (maximum depth, or one
        integer wide): they decode to the edge nearer to 0, so an exact
        point mass at 0 (or at an integer) comes back exactly.
    integer : bool
        Whether the leaves are integer-aligned (integer columns).
    """

    edges: np.ndarray
    counts: np.ndarray
    missing_count: float
    finest: np.ndarray
    integer: bool

    @property
    def bounds(self):
        """``(lo, hi)``: the outermost leaves with positive mass."""
        pos = np.flatnonzero(self.counts > 0)
        if pos.size == 0:
            return float(self.edges[0]), float(self.edges[-1])
        return float(self.edges[pos[0]]), float(self.edges[pos[-1] + 1])


def privtree_histogram(
    values,
    epsilon,
    source,
    *,
    integer=False,
    sensitivity=1.0,
    tree_share=0.5,
    root=None,
    noise_factor=1.0,
):
    """PrivTree leaves of a numeric column, with a Laplace count per leaf.

    ``epsilon`` is split: ``tree_share`` for the tree, the rest for the leaf
    counts (and the missing count, the same histogram: each row is in one
    leaf or missing). PrivTree (:cite:`Zhang2016` §3.2, Algorithm 2, fanout
    ``β = 2``): a node ``v`` of depth ``d`` with count ``c(v)`` is split when
    ``max(c(v) - d δ, θ - δ) + Lap(λ) > θ``, with ``λ = (2β - 1)/(β - 1) ·
    Δ/ε_tree = 3Δ/ε_tree`` and ``δ = λ ln β`` (their Theorem 3.2: the whole
    tree is ``ε_tree``-DP); ``θ = 0``. ``Δ`` is ``sensitivity``.

    Parameters
    ----------
    values : ndarray of float
        The column (``nan`` = missing; ``±inf`` are clipped to the root).
    epsilon : float
        Budget of this column (``ε_tree + ε_count``).
    source : NoiseSource
        All noise.
    integer : bool, default=False
        Integer-aligned leaves (splits at integers, never below width 1).
    sensitivity : float, default=1.0
        How many counts one neighbour changes by 1 (1 add/remove, 2 replace-one).
    tree_share : float, default=0.5
        Share of ``epsilon`` spent on the tree.
    root : (float, float), default=None
        Public bounds ``[lo, hi)`` of the root (``hi`` exclusive for integer
        columns); ``None``: ``[-2^40, 2^40]``. Values must lie inside.
    noise_factor : float, default=1.0
        Multiplies every noise scale. Only for audits (a planted estimator
        with too little noise); anything but 1 voids the guarantee.

    Returns
    -------
    FineHistogram
    """
    values = np.asarray(values, dtype=np.float64)
    miss = np.isnan(values)
    root_lo, root_hi = (
        (-ROOT, ROOT + (1.0 if integer else 0.0)) if root is None else root
    )
    top = root_hi - 1.0 if integer else root_hi
    x = np.clip(values[~miss], root_lo, top)  # ±inf to the root's ends
    x = np.sort(x)
    eps_tree = epsilon * tree_share
    eps_count = epsilon - eps_tree
    lam = 3.0 * sensitivity / eps_tree * noise_factor
    bias = lam * math.log(2.0)
    theta = 0.0
    # depth 0: the root cut at 0 and ±2^k (a fixed partition, so each of
    # its cells is a depth-0 PrivTree root: a row is on one root-to-leaf path
    # either way); breadth first: every level's coins are one Laplace vector
    powers = 2.0 ** np.arange(0, 40, GRID_STEP)
    cuts = np.concatenate([-powers[::-1], [0.0], powers])
    cuts = cuts[(cuts > root_lo) & (cuts < root_hi)]
    starts = np.concatenate([[root_lo], cuts])
    ends = np.concatenate([cuts, [root_hi]])
    level = [(float(a), float(b), 0) for a, b in zip(starts, ends)]
    leaves, finest = [], []
    while level:
        counts = np.array(
            [
                np.searchsorted(x, hi, "left") - np.searchsorted(x, lo, "left")
                if hi < root_hi
                else x.size - np.searchsorted(x, lo, "left")
                for lo, hi, _ in level
            ],
            dtype=np.float64,
        )
        depth = np.array([d for _, _, d in level], dtype=np.float64)
        biased = np.maximum(counts - depth * bias, theta - bias)
        noisy = source.laplace(biased, lam)
        nxt = []
        for (lo, hi, d), b in zip(level, noisy):
            mid = _split_point(lo, hi, integer) if b > theta else None
            if mid is not None and _can_split(lo, hi, d, integer):
                nxt += [(lo, mid, d + 1), (mid, hi, d + 1)]
            else:
                leaves.append((lo, hi))
                finest.append(
                    not _can_split(lo, hi, d, integer)
                    or _split_point(lo, hi, integer) is None
                    or _finest(lo, hi, integer)
                )
        level = nxt
    order = np.argsort([lo for lo, _ in leaves])
    leaves = [leaves[i] for i in order]
    finest = np.asarray([finest[i] for i in order], dtype=bool)
    edges = np.asarray([lo for lo, _ in leaves] + [leaves[-1][1]], dtype=np.float64)
    idx = np.clip(np.searchsorted(edges, x, "right") - 1, 0, len(leaves) - 1)
    true = np.bincount(idx, minlength=len(leaves)).astype(np.float64)
    scale = sensitivity / eps_count * noise_factor
    noisy = source.laplace(np.append(true, float(miss.sum())), scale)
    counts, missing_count = noisy[:-1], max(float(noisy[-1]), 0.0)
    # post-processing (doc/privacy.md, "Private domains"): from the heaviest
    # leaf, the kept range grows outwards over leaves whose noisy count
    # passes 2 scales (an empty leaf does so with probability e^-2/2 < 7 %;
    # a leaf wider than GAP_T must pass b ln(L/0.01), which all L empty
    # leaves together do with probability < 0.5 %) and stops at a run of
    # failing leaves wider than GAP_T in t (a factor 2 in x): far, wide
    # empty leaves are never reached, however many there are. Inside,
    # leaves below INNER_SCALES scales are set to 0.
    width = np.diff(_t(edges))
    strict = scale * math.log(counts.size / 0.01)
    passing = (counts > 2.0 * scale) & ((width <= GAP_T) | (counts > strict))
    lo_i = hi_i = int(np.argmax(counts))
    for step in (1, -1):
        gap, j = 0.0, lo_i + step
        while 0 <= j < counts.size:
            if passing[j]:
                gap = 0.0
                lo_i, hi_i = min(lo_i, j), max(hi_i, j)
            else:
                gap += width[j]
                if gap > GAP_T:
                    break
            j += step
    inside = np.zeros(counts.size, dtype=bool)
    inside[lo_i : hi_i + 1] = True
    counts = np.where(inside & (counts > INNER_SCALES * scale), counts, 0.0)
    if not passing.any():
        counts = np.maximum(counts, 0.0)
    return FineHistogram(edges, counts, missing_count, finest, integer)


def coarse_edges(hist, n_bins):
    """Up to ``n_bins`` bins at equal-mass points of the noisy leaf CDF.

    Post-processing of :func:`privtree_histogram`: edges are leaf edges (so
    every coarse bin is a union of leaves), within the histogram's bounds;
    a leaf holding more than one bin's mass (a point mass) becomes a bin of
    its own. For integer columns the last edge is the largest integer of the
    last bin (the encoder's last bin is closed).
    """
    lo, hi = hist.bounds
    inside = (hist.edges[:-1] >= lo) & (hist.edges[1:] <= hi)
    e = hist.edges[np.append(inside, False) | np.append(False, inside)]
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
        cuts = e[np.clip(cuts, 0, c.size)].tolist()
    if hist.integer:
        cuts[-1] = cuts[-1] - 1.0
        if cuts[-1] <= cuts[0]:
            cuts[-1] = cuts[0] + 1.0
        cuts = sorted(set(cuts))
    return [float(v) for v in cuts]


def stable_levels(values, epsilon, delta, source, *, sensitivity=1.0):
    """Frequent levels of a column by the stability-based histogram.

    Laplace ``(Δ/ε)`` noise on the count of every *observed* level; a level is
    released when its noisy count exceeds ``τ = 1 + (Δ/ε) ln(Δ / (2δ))``. On a
    neighbour, the counts of existing levels move by at most ``Δ`` in total
    (``ε``-DP), and at most ``Δ`` levels appear or vanish, each released with
    probability ``≤ ½ exp(-(τ - 1) ε/Δ) = δ/Δ`` -- ``(ε, δ)``-DP in all
    (:cite:`Korolova2009`; :cite:`Vadhan2017` Proposition 3.5).

    The missing values are one more cell of the same histogram (each row is
    in one cell), whose noisy count is returned too.

    Returns
    -------
    levels : list
        The released levels, sorted (by ``str`` if they do not compare).
    missing_count : float
        Noisy count of the missing values.
    """
    import pandas as pd

    series = pd.Series(values)
    observed = series.dropna()
    counts = observed.value_counts(sort=False)
    scale = sensitivity / epsilon
    tau = 1.0 + scale * math.log(sensitivity / (2.0 * delta))
    true = np.append(counts.to_numpy(dtype=np.float64), float(series.isna().sum()))
    noisy = source.laplace(true, scale)
    levels = counts.index[noisy[:-1] > tau].tolist()
    try:
        levels = sorted(levels)
    except TypeError:
        levels = sorted(levels, key=str)
    return levels, float(noisy[-1])


def decode_fine(hist, left, right, last, rng):
    """Values inside coarse bins ``[left, right)`` drawn from the fine histogram.

    Post-processing: a leaf inside the bin is drawn with probability
    proportional to its noisy count (uniformly among the bin's leaves if
    they are all 0), then a value uniformly inside it (an integer for
    integer columns); a finest leaf gives its edge nearer to 0.
    """
    e, c = hist.edges, hist.counts
    out = np.empty(left.shape, dtype=np.float64)
    for a, b, is_last in {(a, b, z) for a, b, z in zip(left, right, last)}:
        rows = np.flatnonzero((left == a) & (right == b) & (last == is_last))
        hi = b + 1.0 if (hist.integer and is_last) else b
        j0 = max(int(np.searchsorted(e, a, "right")) - 1, 0)
        j1 = int(np.searchsorted(e, hi, "left"))
        j1 = min(max(j1, j0 + 1), len(c))
        w = c[j0:j1].copy()
        if w.sum() <= 0:
            w = np.ones_like(w)
        j = j0 + rng.choice(w.size, size=rows.size, p=w / w.sum())
        lo_j, hi_j = np.maximum(e[j], a), np.minimum(e[j + 1], hi)
        # uniform in the log coordinate t: a wide tail leaf is not filled
        # evenly up to its far edge (no invented outliers)
        u = rng.random(rows.size)
        if hist.integer:
            lo_i = np.ceil(lo_j)
            hi_i = np.maximum(np.ceil(hi_j), lo_i + 1.0)
            v = np.floor(_x(_t(lo_i) + u * (_t(hi_i) - _t(lo_i))))
            v = np.clip(v, lo_i, hi_i - 1.0)
        else:
            v = np.clip(_x(_t(lo_j) + u * (_t(hi_j) - _t(lo_j))), lo_j, hi_j)
            fin = hist.finest[j]
            near0 = np.where(np.abs(lo_j) <= np.abs(hi_j), lo_j, hi_j)
            v = np.where(fin, near0, v)
        out[rows] = np.clip(v, a, b)
    return out
