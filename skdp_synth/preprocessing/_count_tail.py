"""A count column's tail cut at its private cap, from released quantities.

A count column (a number of inquiries, a distance in whole units, years of
schooling) whose thin tail falls under the keep rules of its private
domain (:func:`._numeric_domain.kept_counts`: each leaf must pass ``2 b``)
gets a cap inside its data, and the encoder clips the rows past it into the
top coarse bin. The release measures that bin with its own noise (``T̂``,
sd ``σ``); the domain kept noisy mass ``K`` in its ``m`` leaves there
(Laplace scale ``b``). :func:`._fences.capped_tail_reason` names the column
where ``T̂ - K`` passes ``3 sqrt(σ² + 2 m b²)`` and two thirds of the bin's
rows. A count column's top bin is often one or two values holding many
rows, and a fifth of the column past the cap can leave its rows with under
half the data's std while the excess stays under twice ``K``: IBM's
attrition table's ``DistanceFromHome`` (whole numbers 1-29; 1,470 rows,
ε = 1, seed 6 of ``benchmarks/bench_suite.py --light``) was capped at 11
with 30 % of its rows past it, the release measured 475 rows in ``[9,
10]`` where the domain kept 197 (4.1 sds), and the rows came back with
0.44 times the data's std, unnamed.

:func:`cut_count_tail_reason` names such a column: its top bin's excess
passes :data:`COUNT_TAIL_Z` sds and :data:`COUNT_TAIL_SHARE` of the
column's rows (the release's estimates of its bins, summed). Not only
integer columns: years of schooling with missing values are stored as
floats. Every input is released (the estimates, the fine histogram as the
domain released it) or public (``b``): post-processing, no privacy cost,
no new released quantity.
"""

from __future__ import annotations

import numpy as np

from ._fences import CAP_ADVICE, top_bin_excess

#: A numeric column is named (:func:`cut_count_tail_reason`) where the
#: release's excess over the domain's kept mass in its top coarse bin is
#: more than this share of the column's rows (and more than
#: :data:`COUNT_TAIL_Z` sds). Measured on the fits of ``python -m
#: benchmarks.bench_capped_tail --columns C.pkl --fit-tables
#: loans,credit,attrition,acs12,hmda,cps1988 --fit-eps 1,0.3 --fit-seeds 10``
#: (1,260 numeric columns, unnamed before), at 3 sds: shares 0.3 / 0.25 /
#: 0.2 / 0.15 / 0.1 name 0 / 0 / 2 / 2 / 2 of the 53 silent columns under
#: half their data's std, and 0 / 1 / 1 / 2 / 4 of the 891 within [0.5, 2]
#: (``benchmarks/results/bench_count_columns.md``).
COUNT_TAIL_SHARE = 0.2
#: ... and more than this many sds of ``sqrt(σ² + 2 m b²)`` (the capped-tail
#: rule's ``CAPPED_TAIL_Z`` is 3). On the same TUNE fits, with
#: ``COUNT_TAIL_SHARE``: 3 / 2.5 name 2 / 2 of the 53 silent collapsed columns
#: and 1 / 2 of the 891 in band (the second: loans' ``num_mort_accounts``,
#: std ratio 0.59). ``python -m benchmarks.bench_count_columns --eps 1,0.3
#: --seeds 20``: silent column-fits 11 / 9 of 320, named in band 12 / 13
#: (the parent: 14 and 10); the same on float columns too (years of
#: schooling stored as floats, ``momed``: silent 5 -> 2 of 20 at ε = 0.3,
#: one more named in band), where it names none of the TUNE fits' float
#: columns.
COUNT_TAIL_Z = 2.5


def cut_count_tail_reason(spec, estimates, domain=None):
    """Why a numeric column's rows will come back narrower than its data,
    from released quantities only, or ``None`` (module docstring). The
    excess ``T̂ - K`` of the top coarse bin (an integer column's is closed:
    it holds its last integer) over the domain's kept noisy mass ``K`` in
    its ``m`` leaves must pass ``COUNT_TAIL_Z sqrt(σ² + 2 m b²)`` and
    :data:`COUNT_TAIL_SHARE` of the sum of the release's estimates of the
    column's bins (negatives as 0). ``domain``: the fine histogram as the
    domain released it (before a pipeline filled its emptied leaves from
    the release); ``None``: ``spec.fine``."""
    k = spec.n_levels
    if estimates is None or len(estimates) < k or any(v is None for v in estimates[:k]):
        return None
    # whole leaves: no 2 K guard here (``_fences.SPLIT_STRADDLING_LEAVES``)
    top = top_bin_excess(spec, estimates, domain, split=False)
    if top is None:
        return None
    edges, k, est, sd, kept, noise, excess = top
    total = float(sum(max(float(e), 0.0) for e, _ in estimates[:k]))
    if not (excess > COUNT_TAIL_Z * noise and excess > COUNT_TAIL_SHARE * total):
        return None
    return (
        f"a released top bin [{edges[k - 1]:.6g}, {edges[k]:.6g}] of {est:.3g} "
        f"± {sd:.3g} rows where its domain kept {kept:.3g}: about "
        f"{100 * excess / total:.2g} % of its rows lie past the cap "
        f"{edges[k]:.6g} and come back inside it, narrower than the data "
        f"({CAP_ADVICE})"
    )


#: :func:`wide_outer_leaf_reason` reads an outermost kept leaf holding more
#: than this share of the rows (the model's shares of the bins)...
WIDE_OUTER_SHARE = 0.05
#: ... and names the column where the rows' std, that leaf drawn uniformly
#: in ``t``, is more than this many times their std with the leaf's rows at
#: its inner edge. On the fits of ``python -m benchmarks.bench_capped_tail
#: --columns C.pkl`` (6 TUNE tables, ε = 1 and 0.3, 10 seeds; the fine
#: histograms' counts for the shares): shares 0.05 / 0.1 / 0.2 at 1.5 or 2
#: times name 5 / 2 / 0 of the 891 columns in band and at 3 times none (and
#: none of the 2 silent above 2). With the model's shares (``python -m
#: benchmarks.bench_suite --half tune --tables
#: loans,attrition,acs12,hmda,cps1988,credit --eps 1,0.3 --seeds 10
#: --methods auto --light``) at 0.05 and 3: 2 columns named in band (credit's
#: ``Debt``, ε = 0.3, ratios "up to 7 times"), none silent; ``python -m
#: benchmarks.bench_count_columns --eps 1,0.3 --seeds 20``: vmail's 3.72
#: named, none in band (``benchmarks/results/bench_count_columns.md``).
WIDE_OUTER_RATIO = 3.0


def _t_moments(lo, hi, n=257):
    """Mean and mean square of a value uniform in ``t`` on ``[lo, hi]``
    (quadrature on ``n`` points; a point where ``hi <= lo``)."""
    from ._numeric_domain import _t, _x

    if not hi > lo:
        return float(lo), float(lo) ** 2
    x = _x(np.linspace(_t(lo), _t(hi), n))
    return float(x.mean()), float((x * x).mean())


def wide_outer_leaf_reason(spec, shares):
    """Why a numeric column's rows may have many times its data's spread,
    from released quantities only, or ``None``: its outermost kept leaf
    (either side) is wider than ``GAP_T`` in ``t``, parted from the kept
    leaf inside it by an emptied stretch (so no tail model continues that
    leaf's density, :func:`._decoding._tail_models`: it is drawn uniformly
    in ``t``), holds more than :data:`WIDE_OUTER_SHARE` of the rows (the
    model's shares of the bins, split over the kept leaves as the decoder
    does), and the rows' std is more than :data:`WIDE_OUTER_RATIO` times
    what it would be with that leaf's rows at its inner edge. Where inside
    such a leaf the rows lie is not released: a zero-inflated count's whole
    non-zero part (4-51 voicemail messages) in ``[16, 256)`` past an emptied
    ``[11, 16)`` came back with 3.72 times the data's std at ε = 0.3 (seed 2
    of ``benchmarks.bench_count_columns``). Post-processing of the released
    bins, fine histogram and model shares."""
    from ._numeric_domain import GAP_T, _t
    from ._spread import release_pieces

    hist = getattr(spec, "fine", None)
    if hist is None or shares is None or getattr(spec, "time_unit", None):
        return None
    P = release_pieces(spec, shares)
    if P is None or len(P) < 2:
        return None
    P = P[np.argsort(P[:, 1], kind="stable")]
    e = np.asarray(hist.edges, dtype=np.float64)
    c = np.asarray(hist.counts, dtype=np.float64)
    lo_cap, hi_cap = hist.cap
    kept = np.flatnonzero(
        (c > 0) & (np.minimum(e[1:], hi_cap) > np.maximum(e[:-1], lo_cap))
    )
    step = 1.0 if hist.integer else 0.0
    moments = [_t_moments(a, b) for _, a, b, _ in P]
    for side in (1, -1):
        i = len(P) - 1 if side > 0 else 0
        q, a, b, _ = P[i]
        if not q > WIDE_OUTER_SHARE or not _t(b + step) - _t(a) > GAP_T:
            continue
        j = int(np.searchsorted(e, a, side="right") - 1)  # its leaf
        inner = kept[kept < j] if side > 0 else kept[kept > j]
        if not inner.size:
            continue
        nb = int(inner[-1] if side > 0 else inner[0])
        if (e[nb + 1] == e[j]) if side > 0 else (e[j + 1] == e[nb]):
            continue  # touching: a tail model may continue its neighbour
        edge = a if side > 0 else b
        least = list(moments)
        least[i] = (float(edge), float(edge) ** 2)
        std = [
            np.sqrt(
                max(
                    P[:, 0] @ [m2 for _, m2 in mm]
                    - (P[:, 0] @ [m1 for m1, _ in mm]) ** 2,
                    0.0,
                )
            )
            for mm in (moments, least)
        ]
        if std[0] > WIDE_OUTER_RATIO * std[1]:
            return (
                f"{100 * q:.2g} % of its rows in one wide leaf [{a:.6g}, "
                f"{b + step:.6g}) past an emptied stretch: where inside it they "
                "lie is not released, and they are drawn over its whole width "
                f"(a spread up to {std[0] / std[1]:.2g} times theirs)"
            )
    return None
