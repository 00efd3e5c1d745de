"""Tails beyond the private cap of a numeric column: what the released fine
histogram says about them, and when it cannot pin the column's spread.

The cap of a private numeric domain (:func:`._numeric_domain.kept_counts`,
step 4) is Tukey's inner fence of the kept mass in ``t(x) = sign(x)
log2(1 + |x|)`` (:cite:`Tukey1977`: 1.5 interquartile ranges beyond the
quartiles), or the end of the kept leaves where those end first. A heavy
tail whose leaves each hold fewer rows than the noise passes is cut there,
and its rows are decoded inside the cap: the rows' std collapses. Measured
(``python -m benchmarks.bench_suite --half tune --tables credit,loans,acs12
--eps 1,0.3 --seeds 5 --methods auto --light``): openintro ``loans_full_schema``'s
``paid_total`` (about 3.6 % of its rows above 8,192, up to 41,630) came back
with 0.24-0.37 times the held-out std in every fit, no warning; its leaves
beyond the cap held 150 and 137 true rows at a Laplace scale ``b = 97``.

What the release holds about the mass beyond the cap is the noisy counts of
the fine histogram's leaves there (the histogram's own Laplace counts:
post-processing, no budget). :func:`beyond_cap` pools them, on each side,
over the leaves between the cap and Tukey's outer fence (3 interquartile
ranges beyond the quartiles in ``t``, :data:`OUTER_FENCE_IQR`); the pooled
sum ``S`` of ``m`` leaves has noise sd ``b sqrt(2 m)``.
:func:`capped_tail_reason` names a column whose spread the rows do not
carry: where ``S`` passes ``CAPPED_TAIL_Z b sqrt(2 m)`` (the release
itself says there is mass beyond the cap) and ``max(S, 0)`` rows placed at
the window's middle in ``t`` would make the histogram's std more than
:data:`CAPPED_SPREAD` times the kept one. Derived in
``doc/privacy/encoder.md`` ("Mass beyond the cap").

An upper confidence bound instead (``max(S, 0) + b sqrt(2 m)`` rows, no
significance asked) named 12 of the 15 collapsed columns of
credit / loans / acs12 (seeds 0-1, ε = 1 and 0.3) but also 77 of the 136
others, and columns of the births-like table of
``tests/test_missing_and_degenerate.py`` that must not be named; ``S``
alone (no bound, no significance) 5 of 15 and 17 of 136. At these noise
scales the counts beyond the cap do not tell a cut heavy tail from a
column that ends there (loans' ``paid_total`` at ε = 1: 287 rows beyond
the cap against a noise sd of 168).
"""

from __future__ import annotations

import math

import numpy as np

#: The window beyond the cap whose leaves :func:`beyond_cap` pools ends at
#: Tukey's outer fence, this many interquartile ranges (in ``t``) beyond the
#: kept non-atom mass's quartiles (:cite:`Tukey1977`, "far out" values).
OUTER_FENCE_IQR = 3.0
#: The pooled mass beyond the cap counts only where its noisy sum passes
#: this many noise sds (``b sqrt(2 m)``): an empty window passes with
#: probability ``e^{-2 sqrt 2} / 2 < 3 %`` for one leaf (Laplace), about
#: ``Φ(-2) = 2.3 %`` for sums of several (near normal).
CAPPED_TAIL_Z = 2.0
#: The std factor a capped tail's bound must reach to be named: the
#: project's tolerance on the rows' spread (synthetic / real std in
#: ``[1 / 2, 2]``), as ``_decoding.SPREAD_RATIO``.
CAPPED_SPREAD = 2.0
#: The false-positive level of a point mass (:func:`._numeric_domain.kept_counts`
#: step 3: a finest leaf above ``b ln(L / ATOM_LEVEL)``), to leave the atoms
#: out of the quartiles as the cap does.
ATOM_LEVEL = 0.01


def _t(x):
    return np.sign(x) * np.log2(1.0 + np.abs(x))


def _x(t):
    return np.sign(t) * (np.exp2(np.abs(t)) - 1.0)


def _quartiles_t(edges, c):
    """The quartiles in ``t`` of the counts ``c`` on leaves ``edges``
    (uniform in ``t`` inside a leaf), as the cap's fences take them."""
    te = _t(edges)
    cdf = np.cumsum(c) / c.sum()
    out = []
    for q in (0.25, 0.75):
        j = min(int(np.searchsorted(cdf, q, "left")), c.size - 1)
        prev = cdf[j - 1] if j > 0 else 0.0
        frac = (q - prev) / max(cdf[j] - prev, 1e-300)
        out.append(float(te[j] + min(max(frac, 0.0), 1.0) * (te[j + 1] - te[j])))
    return out


def beyond_cap(edges, raw, kept, finest, cap, scale):
    """``((S, m, x), (S, m, x))``, below and above the cap: the pooled noisy
    count ``S`` of the ``m`` leaves wholly beyond the cap and the kept
    leaves whose inner edge in ``t`` lies before Tukey's outer fence
    (:data:`OUTER_FENCE_IQR`) of the kept non-atom mass, and ``x`` the
    middle of that window in ``t``; ``None`` where there is nothing to pool
    from (no kept mass, unknown scale).

    Post-processing of the fine histogram's Laplace counts ``raw`` (noise
    scale ``scale``), its kept counts ``kept`` and cap: no budget."""
    edges = np.asarray(edges, dtype=np.float64)
    raw = np.asarray(raw, dtype=np.float64)
    kept = np.asarray(kept, dtype=np.float64)
    if not np.isfinite(scale) or not (kept > 0).any():
        return None
    strict = scale * math.log(kept.size / ATOM_LEVEL)
    body = np.where(np.asarray(finest, dtype=bool) & (kept > strict), 0.0, kept)
    if body.sum() <= 0:
        return None
    q1, q3 = _quartiles_t(edges, body)
    iqr = q3 - q1
    pos = np.flatnonzero(kept > 0)
    te = _t(edges)
    out = []
    for side in (-1, 1):
        if side < 0:
            t_cap = float(_t(cap[0]))
            t_far = q1 - OUTER_FENCE_IQR * iqr
            run = np.flatnonzero(
                (np.arange(raw.size) < pos[0]) & (te[1:] <= t_cap) & (te[1:] > t_far)
            )
        else:
            t_cap = float(_t(cap[1]))
            t_far = q3 + OUTER_FENCE_IQR * iqr
            run = np.flatnonzero(
                (np.arange(raw.size) > pos[-1]) & (te[:-1] >= t_cap) & (te[:-1] < t_far)
            )
        mid = 0.5 * (t_cap + t_far)
        out.append((float(raw[run].sum()), int(run.size), float(_x(mid))))
    return tuple(out)


def _moments(hist):
    """``(mass, mean, second moment)`` of the kept leaves inside the cap,
    each uniform on its part of the cap."""
    e = np.asarray(hist.edges, dtype=np.float64)
    a = np.maximum(e[:-1], hist.cap[0])
    b = np.minimum(e[1:], hist.cap[1])
    c = np.clip(np.asarray(hist.counts, dtype=np.float64), 0.0, None)
    m = np.isfinite(a) & np.isfinite(b) & (b > a) & (c > 0)
    if not m.any():
        return None
    a, b, c = a[m], b[m], c[m]
    n = float(c.sum())
    return n, float(c @ ((a + b) / 2)) / n, float(c @ ((a * a + a * b + b * b) / 3)) / n


def capped_tail_bound(hist):
    """The largest factor (over the two sides) by which the std of the
    released fine histogram ``hist`` would grow if the pooled mass beyond
    its cap (:func:`beyond_cap`: ``S`` rows, counted only where ``S >
    CAPPED_TAIL_Z b sqrt(2 m)``) lay at the middle of the window there;
    1 where no side passes; ``None`` where the histogram holds no such
    record. Post-processing of released quantities and the public ``b``."""
    beyond = getattr(hist, "beyond", None)
    whole = _moments(hist)
    if beyond is None or whole is None or not np.isfinite(hist.scale):
        return None
    n, m1, m2 = whole
    var = m2 - m1 * m1
    if var <= 0:
        return None
    worst = 1.0
    for s, m, x in beyond:
        if m == 0 or s <= CAPPED_TAIL_Z * hist.scale * math.sqrt(2.0 * m):
            continue
        w = s / (n + s)
        mean = (1 - w) * m1 + w * x
        second = (1 - w) * m2 + w * x * x
        worst = max(worst, math.sqrt(max(second - mean * mean, 0.0) / var))
    return worst


def capped_tail_reason(spec):
    """The reason text (no count, size or value of the data: the factor is
    not printed) where the release does not pin column ``spec``'s spread
    (:func:`capped_tail_bound` above :data:`CAPPED_SPREAD`), else ``None``.
    Post-processing of the released domain."""
    hist = getattr(spec, "fine", None)
    if hist is None:
        return None
    bound = capped_tail_bound(hist)
    if bound is None or bound <= CAPPED_SPREAD:
        return None
    return (
        "a private cap on its tails beyond which the released fine histogram "
        "holds mass above its noise, enough to more than double its spread "
        "(std), that the rows do not hold: their spread may be too narrow "
        "(declare bounds= or bin_edges= reaching its natural limits)"
    )
