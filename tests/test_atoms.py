"""Point masses at public candidates and kept runs past an emptied leaf.

* A finest leaf at a public candidate (0, 100: the natural limits) is kept
  as a point mass at a lower level than other leaves, the false-atom level
  split between the two by Bonferroni (``_numeric_domain._atom_levels``):
  credit's ``Assets`` (1,296 zeros of 3,526 rows) lost its zeros in 2 of 20
  fits at ε = 0.3 (``python -m benchmarks.bench_suite --half tune --tables
  credit --eps 0.3 --seeds 20 --methods auto --light``).
* A fence reaches a kept run across an empty stretch only where the run's
  noisy counts hold more than ``FENCE_CONFIRM_Z`` sds of their noise
  (``_fences._confirmed``): a noise leaf past an emptied one under a
  column of gestation weeks widened its rows' spread twofold.
"""

import math

import numpy as np

from skdp_synth.mechanisms import NoiseSource
from skdp_synth.preprocessing import _numeric_domain as nd

B_CREDIT_03 = 138.9  # the Laplace scale of credit's leaf counts at ε = 0.3


def test_the_atom_levels_keep_the_false_atom_level():
    """The candidates' and the other leaves' levels: a leaf at 0 (or 100)
    passes ``b ln(K / (a s))``, another finest leaf ``b ln(L / (a (1 -
    s)))``; summed over the ``K`` candidates and ``L`` leaves, the chance
    that an empty one passes (``exp(-x / b) / 2`` each) is ``a / 2``, the
    level of the former single threshold ``b ln(L / a)``."""
    assert nd.ATOM_FALSE_LEVEL == 0.01 and nd.ATOM_CANDIDATE_SHARE == 0.5
    assert nd.ATOM_CANDIDATES == (0.0, 100.0)
    b = 10.0
    edges = np.array([-5.0, -1, 0, 1, 2, 99, 100, 101, 200])
    finest = np.diff(edges) <= 1.0
    lv = nd._atom_levels(edges, finest, b)
    a, s, k, n = 0.01, 0.5, 2, edges.size - 1
    assert math.isclose(lv[2], b * math.log(k / (a * s)), rel_tol=1e-12)
    assert math.isclose(lv[6], b * math.log(k / (a * s)), rel_tol=1e-12)
    other = b * math.log(n / (a * (1 - s)))
    for j in (0, 1, 3, 4, 5, 7):
        assert math.isclose(lv[j], other, rel_tol=1e-12)
    tail = k * math.exp(-lv[2] / b) / 2 + n * math.exp(-other / b) / 2
    assert math.isclose(tail, a / 2, rel_tol=1e-12)
    # a leaf at 0 that is not finest is no candidate (a float leaf [0, 4))
    wide = nd._atom_levels(np.array([0.0, 4.0, 8.0]), np.array([False, False]), b)
    assert np.allclose(wide, b * math.log(2 / (a * (1 - s))))


def _assets_like(seed=0):
    """1,296 zeros and 2,304 rounded log-normal amounts (median 4,000), as
    credit's ``Assets``."""
    rng = np.random.default_rng(seed)
    return np.r_[np.zeros(1296), np.round(rng.lognormal(8.3, 1.0, 2304))]


def test_a_frequent_zero_is_kept_at_a_small_budget():
    """At credit's budget per column at ε = 0.3 (``b = 138.9``) the zeros
    hold 9.3 b; the leaf at 0, cut off from the body by empty leaves, is
    kept where its noisy count passes the candidates' 5.99 b: lost with
    probability at most ``e^-3.34 / 2 = 1.8 %`` (measured: 1 of 400 fits),
    against ``b ln(L / 0.01)`` (8.1-8.7 b) on the parent, 31 of 400 fits
    (7.8 %); 180 of these 200."""
    x = _assets_like()
    eps = 1.0 / ((1.0 - nd.TREE_SHARE) * B_CREDIT_03)
    kept = 0
    for s in range(200):
        h = nd.privtree_histogram(x, eps, NoiseSource(s), integer=True)
        zero = int(np.flatnonzero(h.edges[:-1] == 0.0)[0])
        kept += h.counts[zero] > 0 and h.bounds[0] == 0.0
    assert kept >= 194  # 97 %; on the parent 180


def test_no_zero_atom_where_there_are_no_zeros():
    """The false side: the same body without its zeros gets a kept leaf at
    0 in at most 1 % of fits (measured: 7 of 1,000, 5 of them where the
    histogram was significant; the parent 3 and 1). The candidates' level
    alone adds at most ``e^-5.99 / 2 = 0.125 %`` a fit; the rest is growth
    and the near-zero prior of fits that found nothing."""
    rng = np.random.default_rng(1)
    x = np.round(rng.lognormal(8.3, 1.0, 3600))
    eps = 1.0 / ((1.0 - nd.TREE_SHARE) * B_CREDIT_03)
    false = 0
    for s in range(1000):
        h = nd.privtree_histogram(x, eps, NoiseSource(10_000 + s), integer=True)
        zero = int(np.flatnonzero(h.edges[:-1] == 0.0)[0])
        false += h.counts[zero] > 0
    assert false <= 10


R40 = 2.0**40


def test_no_tentative_run_below_a_zero_atom_behind_a_noise_leaf():
    """A range of a point mass at 0 and a noise leaf ``[-1, 0)`` beside it
    that growth joined (4.25 b; credit's ``Assets`` at ε = 0.3, seed 5):
    the jump from it must not cross the natural limit 0 either. On the
    parent only a point mass at the range's edge closed it, and a
    tentative run of noise leaves at -305..-16 joined (the column's rows
    came back with negative values)."""
    b = B_CREDIT_03
    edges = np.array([-R40, -4096, -305, -256, -16, -1, 0, 1, 16, 256, 4096, R40])
    raw = b * np.array([-0.5, 0.2, 3.0, 3.0, -0.5, 4.25, 7.94, -0.8, 0.1, -0.3, 0.2])
    finest = np.diff(edges) <= 1.0
    out, (lo, hi), tentative = nd._kept_counts(edges, raw, b, finest, True, False)
    assert out[6] == raw[6]  # the zeros
    below = edges[:-1] < -1.0
    assert not out[below].any() and not tentative[below].any()  # parent: kept
    assert lo >= -1.0


#: A column of gestation weeks (most rows at 37-41) at ``b = 41.7`` (800
#: rows at ε = 1, six numeric columns): PrivTree's leaves and noisy counts
#: in noise scales, the measured histogram's structure (no row below 22).
WEEKS_EDGES = np.array(
    [-R40, -4096, -256, -5, -1, 0, 1, 16, 18, 22, 32, 37, 45, 65, 256, 4096, R40]
)
WEEKS_RAW_B = np.array(
    [-0.5, 0.3, -1.0, 0.2, 0.99, -0.34, -1.41, 2.05, -0.14, 1.43, 2.14, 16.21]
    + [0.68, -1.9, 0.5, -0.2]
)


def test_a_fence_does_not_reach_a_noise_leaf_past_an_emptied_one():
    """Growth joins ``[16, 18)`` (2.05 b) across ``[22, 32)`` (1.43 b) and
    ``[18, 22)`` (-0.14 b, emptied); the lower decile sits in the noise leaf
    itself, and on the parent the fence moved out across the emptied leaf
    to 16 (the rows' std twice the real one). The run past the emptied
    leaf holds 2.05 / sqrt(2) = 1.45 sds of its noise, under
    FENCE_CONFIRM_Z = 1.5: the fence stays at the end of the run it cuts."""
    b = 41.7
    raw = WEEKS_RAW_B * b
    finest = np.diff(WEEKS_EDGES) <= 1.0
    out, (lo, hi), _ = nd._kept_counts(WEEKS_EDGES, raw, b, finest, True, False)
    i16 = int(np.flatnonzero(WEEKS_EDGES == 16.0)[0])
    assert lo >= 22.0 and out[i16] == 0.0  # parent: 16, and [16, 18) kept
    from skdp_synth.preprocessing._fences import FENCE_CONFIRM_Z, _confirmed

    assert FENCE_CONFIRM_Z == 1.5
    assert out[i16 + 2] == raw[i16 + 2] and hi == 45.0
    assert not _confirmed(raw, b, [i16])
    assert _confirmed(raw * 1.1, b, [i16])  # 2.26 b: 1.59 sds
    # the same leaf next to the kept run (no emptied leaf between) is kept
    raw2 = raw.copy()
    raw2[i16 + 1] = 1.2 * b  # [18, 22) above b: not emptied
    out2, (lo2, _), _ = nd._kept_counts(WEEKS_EDGES, raw2, b, finest, True, False)
    assert lo2 == 16.0 and out2[i16] == raw2[i16]
