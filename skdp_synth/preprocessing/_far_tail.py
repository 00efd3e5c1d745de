"""Far tail bins: a tentative coarse bin whose only kept leaves lie far past
an emptied stretch from the column's core.

Such a bin is kept because the release's estimate of its count passes the
pipeline's support test, but the fine histogram places its rows on noise
leaves orders of magnitude beyond the core. :func:`far_tail` finds it for
the degenerate-column warning (``_decoding.degenerate_reasons``) and
:func:`_far_side` for the decoder, which draws such a bin's rows next to its
inner edge (``_decoding._far_bin_values``). Post-processing of the released
domain and the model's bin shares: no budget, no new released quantity.
"""

from __future__ import annotations

import numpy as np

from ._numeric_domain import _t

__all__ = ["FAR_TAIL_T", "far_tail"]


#: A tentative tail bin whose kept leaves start more than this far (in ``t``,
#: a factor ``2^FAR_TAIL_T``) past its inner edge is named by
#: :func:`far_tail`. Set between two measured cases (``python -m
#: benchmarks.bench_far_tail TABLE 1 10``, eps = 1): credit's ``Debt`` (a real tail,
#: kept leaves from 256 in a bin [1, 2049): 7) and hotel_rates'
#: ``stays_in_weekend_nights`` (noise leaves from 1.5e6 in a bin [5, 4.2e6):
#: 18). It was 10, a whole number of doublings, where the grid's gaps fall:
#: an integer column's bin starting at ``2^10 + 1`` with kept leaves from
#: ``2^20`` is 9.997 past, and was not named -- AmesHousing's
#: ``Second_Flr_SF`` (0-2,065; ε = 1, seed 9 of the silent-fit run), a bin
#: ``[1025, 5.9e6]`` holding the real rows over 1,025 (the release: 279 ±
#: 66) whose only kept leaves were noise from 1.05e6: 266 rows came back
#: past a million, std x2,295, no warning. 9.5 sits between 7 and that
#: gap, off the whole doublings. hotel_rates and AmesHousing are in the
#: REPORT half of ``benchmarks/bench_suite.py``: this value was not tuned
#: blind.
FAR_TAIL_T = 9.5


def _core_mode(hist):
    """The densest kept, non-tentative leaf of ``hist`` (its index), or
    ``None``: where the core of the column is."""
    tentative = getattr(hist, "tentative", None)
    if tentative is None:
        return None
    tentative = np.asarray(tentative, dtype=bool)
    e, c = hist.edges, hist.counts
    solid = np.flatnonzero((c > 0) & ~tentative)
    if solid.size == 0:
        return None
    dens = c[solid] / np.maximum(e[solid + 1] - e[solid], 1e-300)
    return int(solid[int(np.argmax(dens))])


def _far_side(hist, a, b, mode):
    """``(side, start, near)`` when the bin ``[a, b)`` (``b`` exclusive) is a
    far tail bin: its kept leaves are all tentative, and walking out from its
    inner edge (the edge towards the core's densest leaf ``mode``) an
    emptied stretch wider than :data:`FAR_TAIL_T` (in ``t``) comes before
    some of them. ``side`` is ``+1`` above the core, ``-1`` below it,
    ``start`` the edge where the far leaves begin, ``near`` whether kept
    leaves lie before that stretch. ``(0, None, False)`` otherwise."""
    tentative = getattr(hist, "tentative", None)
    if mode is None or tentative is None:
        return 0, None, False
    e, c = hist.edges, hist.counts
    inside = np.flatnonzero((c > 0) & (e[1:] > a) & (e[:-1] < b))
    if inside.size == 0 or not np.all(np.asarray(tentative, dtype=bool)[inside]):
        return 0, None, False
    if a >= e[mode + 1]:
        prev = a
        for i, j in enumerate(inside):
            lo = max(float(e[j]), a)
            if _t(lo) - _t(prev) > FAR_TAIL_T:
                return 1, lo, i > 0
            prev = min(float(e[j + 1]), b)
    elif b <= e[mode]:
        prev = b
        for i, j in enumerate(inside[::-1]):
            hi = min(float(e[j + 1]), b)
            if _t(prev) - _t(hi) > FAR_TAIL_T:
                return -1, hi, i > 0
            prev = max(float(e[j]), a)
    return 0, None, False


def far_tail(spec, level_shares):
    """``(share, a, b, start)`` of the first tentative coarse bin ``[a, b)``
    that the model's rows use (``level_shares``) and whose kept leaves start
    more than :data:`FAR_TAIL_T` (in ``t``) past the bin's inner edge, or past
    the nearest bin the rows use where the bins between are unused
    (:func:`_past_unused_bins`), ``start`` being the first kept leaf's edge;
    ``None`` if there is none.

    Such a bin is kept because the release's estimate of its count passes
    ``TENTATIVE_SUPPORT_Z`` (its rows are real), but the only place the fine
    histogram gives them is a run of noise leaves far beyond the core --
    the rows nearer the core were emptied (below ``INNER_SCALES``). Measured
    on modeldata ``hotel_rates`` (``stays_in_weekend_nights``, real maximum
    19, eps = 1, seed 1 of ``benchmarks/bench_suite.py``'s silent-fit run):
    206 of 12,321 rows decoded between 1.5e6 and 4.2e6, no warning.
    :func:`._decoding.decode_fine` now draws such a bin's rows from a decaying tail at
    its inner edge; the warning stays, since where in the bin they lie is
    not released. Post-processing of the released domain and the model's
    shares."""
    hist = getattr(spec, "fine", None)
    if hist is None or level_shares is None:
        return None
    mode = _core_mode(hist)
    if mode is None:
        return None
    edges = [float(v) for v in spec.levels]
    shares = np.asarray(level_shares, dtype=np.float64)
    for k in hist.tentative_bins(edges):
        if k >= shares.size or not shares[k] > 0:
            continue
        a, b = edges[k], edges[k + 1]
        if hist.integer and k == len(edges) - 2:
            b += 1.0
        side, start, _ = _far_side(hist, a, b, mode)
        if not side:
            side, start = _past_unused_bins(hist, edges, shares, k, a, b, mode)
        if side:
            return float(shares[k]), a, b, start
    return None


def _past_unused_bins(hist, edges, shares, k, a, b, mode):
    """``(side, start)`` where tentative bin ``k`` (``[a, b)``) lies past
    bins the rows do not use (bins the pipeline dropped) and its first kept
    leaf starts more than :data:`FAR_TAIL_T` (in ``t``) past the nearest bin
    the rows use on the core's side: the emptied stretch is those bins, not
    a part of bin ``k``. ``(0, None)`` otherwise. modeldata's
    ``hotel_rates`` ``children`` (0-3; ε = 0.3, seed 6 of the silent-fit
    run) dropped ``[16, 4096)`` and ``[4096, 2.7e8)`` and kept ``[2.7e8,
    6.9e10]``, whose leaves were noise the release supported at 3.08 sds
    (449 ± 146 rows): 2.4 % of the rows came back at 2.7e8-4.6e10, no
    warning. Post-processing of the released domain and the model's
    shares."""
    e, c = hist.edges, hist.counts
    inside = np.flatnonzero((c > 0) & (e[1:] > a) & (e[:-1] < b))
    if inside.size == 0:
        return 0, None
    if a >= e[mode + 1]:
        used = [i for i in range(k) if i < shares.size and shares[i] > 0]
        if not used or used[-1] == k - 1:
            return 0, None
        inner, start = edges[used[-1] + 1], max(float(e[inside[0]]), a)
        if _t(start) - _t(inner) > FAR_TAIL_T:
            return 1, start
    elif b <= e[mode]:
        used = [i for i in range(k + 1, shares.size) if shares[i] > 0]
        if not used or used[0] == k + 1:
            return 0, None
        inner, start = edges[used[0]], min(float(e[inside[-1] + 1]), b)
        if _t(inner) - _t(start) > FAR_TAIL_T:
            return -1, start
    return 0, None
