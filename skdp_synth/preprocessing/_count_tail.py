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
    hist = getattr(spec, "fine", None) if domain is None else domain
    k = spec.n_levels
    if hist is None or estimates is None:
        return None
    if k < 2 or len(estimates) < k or any(v is None for v in estimates[:k]):
        return None
    if getattr(spec, "time_unit", None) is not None or not np.isfinite(hist.scale):
        return None
    edges = np.asarray(spec.levels, dtype=np.float64)
    fe = np.asarray(hist.edges, dtype=np.float64)
    right = edges[k] + (1.0 if hist.integer else 0.0)  # a closed last bin
    inside = (fe[1:] > edges[k - 1]) & (fe[:-1] < right)
    kept = np.asarray(hist.counts, dtype=np.float64)[inside]
    m = max(int((kept > 0).sum()), 1)
    est, sd = (float(v) for v in estimates[k - 1])
    noise = float(np.sqrt(sd**2 + 2.0 * m * float(hist.scale) ** 2))
    excess = est - float(kept.sum())
    total = float(sum(max(float(e), 0.0) for e, _ in estimates[:k]))
    if not (excess > COUNT_TAIL_Z * noise and excess > COUNT_TAIL_SHARE * total):
        return None
    return (
        f"a released top bin [{edges[k - 1]:.6g}, {edges[k]:.6g}] of {est:.3g} "
        f"± {sd:.3g} rows where its domain kept {kept.sum():.3g}: about "
        f"{100 * excess / total:.2g} % of its rows lie past the cap "
        f"{edges[k]:.6g} and come back inside it, narrower than the data "
        "(declare bounds= with its upper bound, or give the domains a larger "
        "share: domain_share=0.7)"
    )
