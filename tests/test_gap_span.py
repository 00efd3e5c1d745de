"""Growth of a kept range across an empty stretch wider than the range
itself (``preprocessing._numeric_domain.GAP_SPAN``; off by default): a year
on 2003-2009 whose growth crossed ``[1837, 1961)`` to a noise leaf
``[1798, 1837)`` (6.6 ``b``) and decoded 35 rows at 1798-1836 (std ratio
11.7, ``benchmarks/results/bench_int_levels.md``). Measured and left off:
on the TUNE half real thin tails across such a stretch were refused too."""

from __future__ import annotations

import numpy as np

from skdp_synth.preprocessing import _numeric_domain as numeric_domain

#: the noisy leaf counts of the synthetic ``stays`` table's ``year`` at
#: ε = 1, seed 0 (``benchmarks/bench_int_levels.py``; 2,400 rows on
#: 2003-2009, ``b = 41.7``), to one decimal
EDGES = [
    -1099511627776, -274877906946, -68719476736, -4294967296, -1073741826,
    -759250127, -638450710, -585461883, -536870913, -268435456, -16777216,
    -1048576, -524291, -262146, -65536, -4096, -1026, -256, -16, -13, -10, -5,
    -1, 0, 1, 4, 16, 65, 256, 1025, 1218, 1328, 1357, 1387, 1401, 1417, 1432,
    1440, 1444, 1449, 1723, 1798, 1837, 1857, 1878, 1919, 1939, 1949, 1961,
    2004, 2005, 2006, 2008, 2014, 2026, 2037, 2049, 4096, 16385, 65536, 131072,
    262145, 311744, 370728, 524289, 1048576, 16777216, 268435456, 4294967296,
    68719476736, 137438953472, 274877906945, 1099511627777,
]  # fmt: skip
COUNTS = [
    -20.2, -43.0, 70.2, 90.0, -14.9, -26.5, -4.1, 90.8, -3.1, -33.1, -0.0,
    -46.3, -17.5, 11.7, -26.6, -12.7, 35.8, -37.5, 3.8, 28.3, 74.9, 67.4,
    -15.6, 10.8, 0.9, 7.9, -92.0, 7.3, -110.4, 34.7, -8.8, -21.4, -41.7, 24.9,
    -85.6, -94.4, 15.8, 1.7, -62.5, -0.2, -53.2, 273.9, -7.4, 10.1, -11.1,
    -22.3, 30.5, -12.6, 255.9, 363.8, 406.2, 775.3, 729.9, 46.3, -4.3, -45.9,
    25.0, 2.8, 17.1, 51.7, 50.5, -0.5, -73.3, -65.5, -72.2, 24.4, -41.9, 118.5,
    -28.8, -5.2, 42.1, 84.2,
]  # fmt: skip
B = 125.0 / 3.0
FINEST = [22, 23, 49, 50]


def _kept():
    edges = np.asarray(EDGES, dtype=float)
    finest = np.zeros(len(COUNTS), dtype=bool)
    finest[FINEST] = True
    out, cap = numeric_domain.kept_counts(
        edges, np.asarray(COUNTS), B, finest, integer=True
    )
    return [float(edges[j]) for j in np.flatnonzero(out > 0)], cap


def test_the_rule_is_off_by_default():
    """``GAP_SPAN`` is ``None``: growth joins the noise leaf at 1798 across
    ``[1837, 1961)`` (0.09 wide in ``t``, within ``GAP_T``), as before."""
    assert numeric_domain.GAP_SPAN is None
    starts, cap = _kept()
    assert starts[0] == 1798.0
    assert cap[0] == 1798.0


def test_a_far_leaf_across_a_stretch_wider_than_the_range(monkeypatch):
    """On, the stretch ``[1837, 1961)`` is wider in ``t`` than the kept
    range ``[1961, 2014)`` (0.04), whose 2,531 noisy rows are significant:
    the leaf beyond must pass ``b ln(L / 0.01)`` (370 rows) and its 274 do
    not; the body's leaves are all kept."""
    monkeypatch.setattr(numeric_domain, "GAP_SPAN", True)
    starts, cap = _kept()
    assert starts == [1961.0, 2004.0, 2005.0, 2006.0, 2008.0]
    assert cap[0] > 1837.0
    strict = B * np.log(len(COUNTS) / 0.01)
    assert 273.9 < strict
