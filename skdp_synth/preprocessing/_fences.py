"""The cap on a private numeric domain's tails: Tukey's fences of the kept
noisy mass in ``t(x) = sign(x) log2(1 + |x|)``, widened to the inter-decile
fences where those reach further (:func:`fences_t`).

Tukey's fences (:cite:`Tukey1977`) sit :data:`FENCE_IQR` interquartile
ranges beyond the quartiles; for a normal in ``t`` that is
``z75 (1 + 2 FENCE_IQR) = 2.698`` sds from the median. A spiky column has
most of its rows in one narrow leaf, so its IQR in ``t`` is a fraction of
its spread: acs12's ``hrs_work`` (most rows at 40 hours) kept an IQR of
about 0.3 in ``t``, the lower fence landed at 29 hours and cut the rows at
4-28 (6 % of them; the rows' std 0.40 times the real one at ε = 1, seed 2
of ``python -m benchmarks.bench_suite --half tune --tables acs12 --eps 1
--light``). The inter-decile fences sit :data:`FENCE_DECILES` inter-decile
ranges beyond the deciles, the factor that puts them at the same 2.698 sds
for a normal, ``(2.698 - z90) / (2 z90)``: the two coincide on a normal,
and on a spike the deciles see the shoulders the quartiles miss. The cap is
the wider of the two on each side. Post-processing of the kept noisy
counts (no budget).
"""

from __future__ import annotations

import numpy as np

#: Tukey's fences: this many interquartile ranges beyond the quartiles, in
#: the log coordinate ``t`` (:func:`fences_t`).
FENCE_IQR = 1.5
#: ``z_0.75`` and ``z_0.9``, the standard normal's quartile and decile.
Z75, Z90 = 0.6744897501960817, 1.2815515655446004
#: The inter-decile fences: this many inter-decile ranges beyond the
#: deciles, ``(z75 (1 + 2 FENCE_IQR) - z90) / (2 z90) = 0.5526`` (the same
#: reach as Tukey's for a normal; :func:`fences_t`).
FENCE_DECILES = (Z75 * (1.0 + 2.0 * FENCE_IQR) - Z90) / (2.0 * Z90)


def _t(x):
    """The symmetric-log coordinate ``t(x) = sign(x) log2(1 + |x|)`` of the
    private numeric domains' fine grid (``_numeric_domain`` imports it from
    here)."""
    return np.sign(x) * np.log2(1.0 + np.abs(x))


def quantile_t(edges, c, q):
    """The ``q``-quantile of the histogram in ``t`` (uniform in ``t`` inside
    a leaf)."""
    cdf = np.cumsum(c) / c.sum()
    j = min(int(np.searchsorted(cdf, q, "left")), c.size - 1)
    prev = cdf[j - 1] if j > 0 else 0.0
    frac = (q - prev) / max(cdf[j] - prev, 1e-300)
    t0, t1 = _t(edges[j]), _t(edges[j + 1])
    return float(t0 + min(max(frac, 0.0), 1.0) * (t1 - t0))


def fences_t(edges, body):
    """``(lo_t, hi_t)``: Tukey's fences (:data:`FENCE_IQR`) of the
    histogram ``body`` (the kept non-atom mass) in ``t``, each moved out to
    the end of the run of kept leaves it cuts, as far as the inter-decile
    fence (:data:`FENCE_DECILES`); the run may bridge empty stretches up to
    :data:`FENCE_GAP_T` wide in ``t``. A leaf past an empty stretch (a noise
    leaf with 13 % of the kept mass, which moves the decile: credit's
    ``Price`` at ε = 0.3, ``[16385, 19484)``, no real row) stays cut."""
    q = {p: quantile_t(edges, body, p) for p in (0.1, 0.25, 0.75, 0.9)}
    iqr, idr = q[0.75] - q[0.25], q[0.9] - q[0.1]
    lo_t, hi_t = q[0.25] - FENCE_IQR * iqr, q[0.75] + FENCE_IQR * iqr
    lo_d, hi_d = q[0.1] - FENCE_DECILES * idr, q[0.9] + FENCE_DECILES * idr
    te = _t(np.asarray(edges, dtype=np.float64))
    return _extend(te, body, lo_t, lo_d, -1), _extend(te, body, hi_t, hi_d, 1)


#: The widest empty stretch in ``t`` a fence's run of kept leaves may bridge
#: (:func:`fences_t`): half of growth's ``GAP_T``.
FENCE_GAP_T = 0.5


def _extend(te, body, fence, limit, side):
    """The fence ``fence`` moved outwards (``side``) to the far edge of the
    kept leaves it cuts or that follow it across empty stretches of at
    most :data:`FENCE_GAP_T`, never past ``limit``."""
    if (limit - fence) * side <= 0:
        return fence
    inner = te[:-1] if side > 0 else te[1:]
    outer = te[1:] if side > 0 else te[:-1]
    # the leaves reaching past the fence, nearest first
    idx = np.flatnonzero((outer - fence) * side > 0)
    idx = idx if side > 0 else idx[::-1]
    gap = 0.0
    for j in idx:
        if (inner[j] - limit) * side >= 0:
            break
        if body[j] > 0:
            gap = 0.0
            far = min(outer[j], limit) if side > 0 else max(outer[j], limit)
            fence = max(fence, far) if side > 0 else min(fence, far)
        else:
            gap += te[j + 1] - te[j]
            if gap > FENCE_GAP_T:
                break
    return fence
