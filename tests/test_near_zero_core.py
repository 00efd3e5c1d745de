"""The core of a fine histogram with nothing significant
(:mod:`skdp_synth.preprocessing._near_zero_core`): a run of leaves above one
noise scale, a prior paid once at the run's reach from 0, no run across a
wide stretch of weak leaves."""

import numpy as np

from skdp_synth.preprocessing._near_zero_core import (
    NARROW_SCALES,
    NEAR_ZERO_CORE_SCALES,
    NEAR_ZERO_T,
    near_zero_core,
)
from skdp_synth.preprocessing._numeric_domain import (
    CORE_WIDE_SCALES,
    GAP_T,
    _kept_counts,
)


def test_constants_pinned():
    # measured on the TUNE half's fine histograms (module docstring)
    assert (NEAR_ZERO_CORE_SCALES, NARROW_SCALES, NEAR_ZERO_T) == (1.0, 1.5, 6.0)


def _daily_rate_eps_03_seed_0():
    """ibmattrition's ``DailyRate`` (1,176 training rows, 102-1,499) at
    ε = 0.3, seed 0 of ``benchmarks/bench_suite.py`` (b = 111.1, nothing
    significant): the noisy leaf counts as the domain drew them. The rows
    are in ``[65, 4096)`` (131, 211, 434 and 400 of them); ``[-1.1e9,
    -2.7e8)`` drew 730 (6.6 b) and holds none."""
    edges = np.array(
        [
            -1099511627776.0, -68719476736.0, -17179869186.0, -4294967296.0,
            -1073741826.0, -268435456.0, -16777216.0, -1048576.0, -65536.0,
            -4096.0, -1026.0, -513.0, -256.0, -66.0, -16.0, -5.0, -4.0, -3.0,
            -1.0, 0.0, 1.0, 16.0, 32.0, 65.0, 256.0, 512.0, 1025.0, 4096.0,
            65536.0, 1048576.0, 16777216.0, 67108865.0, 268435456.0,
            4294967296.0, 68719476736.0, 1099511627777.0,
        ]
    )  # fmt: skip
    raw = np.array(
        [
            4.5, -166.6, -0.6, -141.9, 730.4, -19.8, 26.9, -29.6, -59.5, 81.4,
            -33.7, -93.5, 15.5, 219.2, 176.8, 31.7, 123.4, -11.4, -122.5,
            66.6, 7.6, 45.5, 137.8, 265.6, 209.8, 238.6, 225.4, -192.7, 65.1,
            -111.9, 316.0, -76.7, -13.9, 112.3, 224.5,
        ]
    )  # fmt: skip
    finest = np.zeros(raw.size, dtype=bool)
    finest[[15, 16, 18, 19]] = True
    return edges, raw, 1000.0 / 9.0, finest


def test_a_column_spread_over_weak_leaves_beats_a_far_noise_leaf():
    """The fit above kept only the noise leaf (the core paid ``2 b`` and
    ``b |t| / 8`` a leaf), and the rows came back near -1e9. Now the core is
    the run of the four real leaves ``[65, 4096)`` (8.4 b together), its
    wide end ``[1025, 4096)`` (2.0 b) kept: every real row is inside the
    kept range."""
    edges, raw, b, finest = _daily_rate_eps_03_seed_0()
    out, (lo, hi), _ = _kept_counts(edges, raw, b, finest, True, near_zero=True)
    assert out[4] == 0.0 and (out[:23] == 0.0).all() and (out[27:] == 0.0).all()
    assert (out[23:27] > 0).all()
    assert (lo, hi) == (65.0, 4096.0)


def test_no_run_crosses_a_wide_stretch_of_weak_leaves():
    """Three leaves of 3 b near ``t = 10``, three of 0.5 b and one empty leaf
    over 18 units of ``t``, then a leaf of 8.9 b near ``t = 30`` (b = 10; a
    leaf 1 wide in ``t`` pays 1.5 b, the wide one b): the three leaves score
    ``45 - 10 * 11 / 6 = 26.7``, the far leaf alone ``74 - 50 = 24``, and the
    run across the stretch ``45 - 30 - 10 + 74 - 50 = 29``. Growth stops at
    a stretch of weak leaves wider than ``GAP_T`` in ``t``, and so does the
    core."""
    b = 10.0
    edges = 2.0 ** np.array([8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 29.0, 30.0])
    raw = np.array([30.0, 30.0, 30.0, 5.0, 5.0, 5.0, 0.0, 89.0])
    finest = np.zeros(raw.size, dtype=bool)
    assert near_zero_core(raw, edges, finest, b, GAP_T, CORE_WIDE_SCALES) == (0, 2)
    crossed = near_zero_core(raw, edges, finest, b, GAP_T, CORE_WIDE_SCALES, np.inf)
    assert crossed == (0, 7)
