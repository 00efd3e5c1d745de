"""The core of a numeric column's fine histogram where nothing in it is
significant (post-processing of the noisy leaf counts).

Why
---
At a small budget per column (many numeric columns, few rows) no run of
leaves passes :func:`~._numeric_domain.core_is_significant`, and the rows,
spread over several leaves, hold one or two noise scales ``b`` each. The
core of a significant histogram -- the run maximizing ``sum(raw - 2 b)``
(``CORE_SCALES``) -- then scores the real run near 0; with a prior for
values nearer 0 paid by *every* leaf (``b |t| / 8``), a column spread over
leaves at ``|t| = 10`` paid 1.25 ``b`` a leaf, and a single noise leaf
anywhere in the root won: attrition's ``DailyRate`` (102-1,499) at
ε = 0.3, seed 0 of ``benchmarks/bench_suite.py`` kept a leaf of 6.6 ``b``
at ``[-1.1e9, -2.7e8)`` over its four real leaves at 1.9-2.4 ``b``, and its
rows came back near ``-1e9``. With nothing significant the core is the run
``R`` maximizing::

    sum(raw - c b) - b far(R) / NEAR_ZERO_T

``c`` = ``NEAR_ZERO_CORE_SCALES`` (1) for a leaf wider than ``GAP_T`` in
``t`` and ``NARROW_SCALES`` (1.5) for a narrower one, ``far(R)`` the
largest ``|t|`` of the run's edges: the prior is paid once, at the run's
reach from 0. A column spread over the wide leaves a shallow tree leaves
holds one or two ``b`` in each; narrow leaves are many where the tree split
(near 0 most of all), and a pair of them drawing 2-3 ``b`` of noise beat a
column's one real leaf of 4-5 ``b`` at a cost of ``b`` a leaf. No run
crosses a stretch of weak leaves (each under its cost) wider than
``GAP_T`` in ``t`` (growth's own stop), and a heavy finest leaf at a
natural limit (a 0 or a 100 above ``CORE_WIDE_SCALES b``) bounds the run on
its far side, as it bounds growth's jump (``_numeric_domain._kept_counts``,
step 2). The run's wide ends are kept: the trim of a significant core's
wide ends (at most ``CORE_WIDE_SCALES b``) would leave, of a run of leaves
of one or two ``b``, only a narrow noise leaf at its end.

Measured on the fine histograms the TUNE half draws (``benchmarks/bench_suite.py
--half tune``, 14 tables, ε 0.3 and 1, 10 seeds: the 280 column-fits with
nothing significant; their 1,000-row cuts: 1,225), against the prior paid a
leaf: the share of the real rows inside the kept range .683 -> .822 (cuts
.513 -> .623), the kept mass on leaves that hold no real row .101 -> .089
(.277 -> .248), the leaves' TV against the real counts .388 -> .289 (.527
-> .457); on the columns with 80 % of their rows in one leaf .243 -> .247
(.321 -> .340), on the others .415 -> .297 (.596 -> .496). On the
calibration of the earlier prior (``privtree_histogram`` alone at ε =
0.04, 40 seeds, 18 columns of iris, wine and diabetes and N(0, 1) and
lognormal(10, 1) at 400 and 1,000 rows: 758 fits with nothing significant)
kept ranges more than 10 spans from the data or 100 spans wide 64 -> 51,
rows inside the kept range .670 -> .705. Every leaf at ``b``: TV .280
(.453), but on the one-leaf columns of both together .350 against .328
here; at ``2 b`` for the narrow ones .315 there, and DailyRate's noise leaf
won again. ``NEAR_ZERO_T`` 8 or 10:
up to 115 far ranges on the calibration; 5: 39 but a higher TV.
"""

from __future__ import annotations

import numpy as np

from ._fences import _t
from ._natural_limits import NATURAL_LIMITS

#: With nothing significant, a leaf joins the core where it holds more than
#: this many noise scales (an empty leaf does with probability
#: ``e^-1 / 2 = 18 %``); module docstring.
NEAR_ZERO_CORE_SCALES = 1.0
#: ... and a leaf no wider than ``GAP_T`` in ``t`` where it holds more than
#: this many (module docstring).
NARROW_SCALES = 1.5
#: Where no kept range is significant, the core pays one noise scale ``b``
#: per this many units of ``|t|`` of its reach from 0 (a factor 64 in
#: magnitude): a prior for values nearer to 0 over a noise run anywhere in
#: the root (module docstring, with the measurements that set it).
NEAR_ZERO_T = 6.0


def near_zero_core(counts, edges, finest, scale, gap_t, heavy_scales, stretch_t=None):
    """``(i, k)``: the core ``counts[i:k + 1]`` of a histogram with nothing
    significant (module docstring). ``gap_t`` is ``GAP_T`` (a leaf wider
    than it in ``t`` is wide), ``heavy_scales`` ``CORE_WIDE_SCALES``;
    ``stretch_t``, the widest stretch of weak leaves a run crosses, is
    ``gap_t`` unless given."""
    stretch_t = gap_t if stretch_t is None else stretch_t
    counts = np.asarray(counts, dtype=np.float64)
    edges = np.asarray(edges, dtype=np.float64)
    te = _t(edges)
    far = np.maximum(np.abs(te[:-1]), np.abs(te[1:]))
    width = np.diff(te)
    # a leaf wider than gap_t pays one noise scale, a narrower one more
    cost = scale * np.where(width > gap_t, NEAR_ZERO_CORE_SCALES, NARROW_SCALES)
    # the segments between stretches of weak leaves wider than stretch_t
    weak = counts <= cost
    segment = np.zeros(counts.size, dtype=np.int64)
    k, stretch = 0, 0.0
    for j in range(counts.size):
        if weak[j]:
            stretch += width[j]
        else:
            k += stretch > stretch_t
            stretch = 0.0
        segment[j] = k
    cum = np.concatenate([[0.0], np.cumsum(counts - cost)])
    best, lo_i, hi_i = -np.inf, 0, 0
    for i in range(counts.size):
        prior = scale * np.maximum.accumulate(far[i:]) / NEAR_ZERO_T
        value = cum[i + 1 :] - cum[i] - prior
        value[segment[i:] != segment[i]] = -np.inf
        j = int(np.argmax(value))
        if value[j] > best:
            best, lo_i, hi_i = float(value[j]), i, i + j
    heavy = np.asarray(finest, dtype=bool) & (counts > heavy_scales * scale)
    for at, side in NATURAL_LIMITS:
        limit = np.flatnonzero(heavy & (edges[:-1] == at))
        if limit.size and lo_i <= limit[0] <= hi_i:
            if side < 0:
                lo_i = int(limit[0])
            else:
                hi_i = int(limit[0])
    return lo_i, hi_i
