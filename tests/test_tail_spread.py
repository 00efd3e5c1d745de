"""The rows' spread at the ends of a private numeric domain: a tail leaf at
the cap decays in ``t`` at the rate its released density says
(``_tail_rates._fitted_rate``), the cap reaches the further of Tukey's
and the inter-decile fences (``_fences.fences_t``), and a thin tail's pooled
mass goes where its leaves' noisy counts put it (``_recover_tails``).
The histograms are the measured ones of ``benchmarks.bench_suite``'s TUNE
tables (openintro ``loans_full_schema``, ``acs12``)."""

import math

import numpy as np

from skdp_synth.preprocessing._decoding import _tail_models, decode_fine
from skdp_synth.preprocessing._numeric_domain import (
    FENCE_IQR,
    TAIL_Z,
    FineHistogram,
    _kept_counts,
    _quantile_t,
    _recover_tails,
    _t,
    _x,
)

B_LOANS = 96.96969696969697  # the Laplace scale of loans' leaf counts at ε = 1
B_ACS = 100.0 / 3.0  # acs12's at ε = 1


def _paid_total():
    """loans' ``paid_total`` at ε = 1, seed 1 (the last three kept leaves):
    ``[4096, 8192.5)`` holds 399 noisy rows (527 true, spread to the cap)."""
    edges = np.array([2436.8, 2897.3, 4096.0, 8192.5])
    counts = np.array([606.0, 1069.2, 399.1])
    finest = np.zeros(3, dtype=bool)
    cap = (2436.8, 8192.5)
    return FineHistogram(edges, counts, 0.0, finest, False, cap, True, B_LOANS)


def _assert_decays_in_t(v, inner, rate, span, xs):
    """Each ``P(v < x)`` within 5 binomial sds (a false failure below 1e-6)
    of the truncated exponential's in ``t`` from ``inner``."""
    n = v.size
    for x in xs:
        z = _t(x) - _t(inner)
        p = math.expm1(-rate * z) / math.expm1(-rate * span)  # P(v < x)
        got = float(np.mean(v < x))
        assert abs(got - p) < 5 * math.sqrt(p * (1 - p) / n), (x, got, p)


def _draw(h, left, right, last):
    """20,000 values of the coarse bin ``[left, right)`` decoded from ``h``
    (seed 0; ``last``: the bin is the top one), each inside the bin."""
    n = 20_000
    rng = np.random.default_rng(0)
    v = decode_fine(h, np.full(n, left), np.full(n, right), np.full(n, last), rng)
    assert v.min() >= left and v.max() <= right
    return v


def _expected_rate(c_k, k_lo, k_hi, c_nb, nb_lo):
    """``ln(D_nb / D_k) / distance`` (``_tail_rates._fitted_rate``): the mean
    densities in ``t`` of the tail leaf ``[k_lo, k_hi)`` (``c_k`` noisy rows)
    and of its neighbour ``[nb_lo, k_lo)`` (``c_nb``), at their centres."""
    d_k = c_k / (_t(k_hi) - _t(k_lo))
    d_nb = c_nb / (_t(k_lo) - _t(nb_lo))
    dist = 0.5 * (_t(k_hi) - _t(nb_lo))
    return math.log(d_nb / d_k) / dist


def test_a_tail_leaf_at_the_cap_is_not_decoded_into_a_sliver():
    """Filled flat at its neighbour's density from 4,096 (the hard edge:
    ``[2897, 4096)`` is within EDGE_Z sds of ``[2437, 2897)``), the leaf's
    399 rows ended at 4,096 + 399 / 0.89 = 4,544 (the suite's rows: maximum
    4,543, std ratio 0.32). It decays in ``t`` at
    ``ln(D_nb / D_k) / distance`` (mean densities in ``t`` at the leaves'
    centres), so a value passes ``x`` with the truncated exponential's
    probability; 5 binomial sds (a false failure below 1e-6)."""
    h = _paid_total()
    tails = _tail_models(h, *h.bounds)
    inner, side, span, rate, kind = tails[2]
    assert (inner, side, kind) == (4096.0, 1, "t")
    assert math.isclose(span, _t(8192.5) - _t(4096.0))
    expected = _expected_rate(399.1, 4096.0, 8192.5, 1069.2, 2897.3)
    assert math.isclose(rate, expected, rel_tol=1e-12)
    v = _draw(h, 4096.0, 8192.5, False)
    _assert_decays_in_t(v, 4096.0, rate, span, (4544.0, 6000.0, 8000.0))
    assert np.mean(v > 4544.0) > 0.5  # on the parent: none


def _paid_principal():
    """loans' ``paid_principal`` at ε = 1, seed 0 (the last kept leaves):
    ``[4096, 16385)`` cut by the cap at 9,178 holds 243.8 noisy rows inside
    it (207 true, and 264 more past the cap)."""
    edges = np.array([1449.49470821, 1723.54468232, 2049.37243119, 4096.0])
    edges = np.append(edges, 16385.12489273)
    counts = np.array([239.37576635, 492.97636003, 1191.25923039, 243.82079171])
    cap = (1449.49470821, 9178.18278612072)
    finest = np.zeros(4, dtype=bool)
    return FineHistogram(edges, counts, 0.0, finest, False, cap, True, B_LOANS)


def test_a_wide_tail_leaf_cut_by_the_cap_decays_at_its_fitted_rate():
    """Wider than GAP_T inside the cap (1.16 in ``t``), the leaf was filled
    from its neighbour's density at 4,096 and its rows ended at 4,515 (std
    ratio 0.30). Cut by the cap, it decays in ``t`` at its fitted rate, so a
    value passes ``x`` with the truncated exponential's probability; 5
    binomial sds (a false failure below 1e-6)."""
    h = _paid_principal()
    inner, side, span, rate, kind = _tail_models(h, *h.bounds)[3]
    assert (inner, side, kind) == (4096.0, 1, "t")
    assert math.isclose(span, _t(9178.18278612072) - _t(4096.0))
    assert span > 1.0  # wider than GAP_T
    expected = _expected_rate(
        243.82079171, 4096.0, 9178.18278612072, 1191.25923039, 2049.37243119
    )
    assert math.isclose(rate, expected, rel_tol=1e-12)
    assert rate * span >= 1.0
    v = _draw(h, 4096.0, 9178.18278612072, True)
    _assert_decays_in_t(v, 4096.0, rate, span, (4515.0, 6000.0, 8000.0))


def test_a_wide_tail_leaf_inside_the_cap_keeps_its_decay_from_the_edge():
    """The same leaf ending inside the cap (the cap at its edge) holds no
    tail that goes on: a bounded column's last leaf (whole percentages
    11-25 in ``[16, 65)``) spread at its fitted rate came back with 2.4
    times the data's std. It keeps the model from its neighbour's density."""
    h = _paid_principal()
    h = FineHistogram(
        h.edges, h.counts, 0.0, h.finest, False, (h.cap[0], 16385.12489273),
        True, B_LOANS,
    )  # fmt: skip
    assert _tail_models(h, *h.bounds)[3][4] != "t"


def test_a_leaf_no_thinner_than_its_neighbour_in_t_is_uniform_in_t():
    """Rate 0 where the tail leaf's density in ``t`` is not below its
    neighbour's (a log-uniform stretch): the values are uniform in ``t``."""
    from skdp_synth.preprocessing._decoding import _fitted_rate

    edges = np.array([1000.0, 2000.0, 4000.0])
    counts = np.array([300.0, 500.0])  # 300 / 1 < 500 / 1 in t (about)
    pos = np.array([0, 1])
    assert _fitted_rate(counts, edges, pos, 1, 0, edges[:-1], edges[1:]) == 0.0
    h = FineHistogram(
        np.array([0.0, 1000.0, 2000.0, 4000.0]),
        np.array([3000.0, 300.0, 60.0]),
        0.0, np.zeros(3, bool), False, (0.0, 4000.0), True, 10.0,
    )  # fmt: skip
    tails = _tail_models(h, *h.bounds)
    inner, side, span, rate, kind = tails[2]
    assert kind == "t" and rate > 0  # falls in t: 60 / 1 against 300 / 1


def test_a_narrow_leaf_keeps_its_decay_from_the_edge():
    """A leaf narrower than TAIL_FIT_T in ``t`` (Wage's year, [2008, 2014):
    0.004 in t) keeps the flat / decaying model from its neighbour's density
    at their common edge (``test_numeric_domain``'s year tests)."""
    h = FineHistogram(
        np.array([1963.0, 2004.0, 2005.0, 2006.0, 2008.0, 2014.0]),
        np.array([381.0, 386.0, 421.0, 648.0, 632.0]),
        0.0, np.array([False, True, True, False, False]), True,
        (1963.0, 2014.0), True, 30.0,
    )  # fmt: skip
    assert _tail_models(h, *h.bounds)[4][4] is True  # flat: a hard edge


def _sbp():
    """nhefs' ``sbp`` (systolic blood pressure 87-222) at ε = 1, seed 5 of
    ``benchmarks.bench_suite --half tune --tables nhefs``: the kept leaves,
    their noisy counts and ``b``. ``[129, 256)`` holds 591 noisy rows (551
    real, 129-222)."""
    edges = np.array([91.0, 108.0, 118.0, 129.0, 256.0])
    counts = np.array([248.1889518, 237.05681611, 251.36194046, 591.28390576])
    finest = np.zeros(4, dtype=bool)
    return FineHistogram(edges, counts, 0.0, finest, True, (91.0, 256.0), True, B_NHEFS)


B_NHEFS = 69.6969696969697  # the Laplace scale of nhefs' leaf counts at ε = 1


def test_an_outermost_leaf_half_wide_in_t_is_a_tail_wherever_it_falls():
    """``[129, 256)`` (0.98 wide in ``t``) is below ``[118, 129)``'s density
    (4.66 against 22.9 rows a unit) by less than EDGE_Z sds of the noise
    (9.0): by that test alone it decoded uniformly in ``t`` (rows spread to
    255, std ratio 2.18). At least OUTER_FALL_T wide and outermost, it is a
    tail whenever it falls: it decays in ``t`` at its fitted rate, so a value
    passes ``x`` with the truncated exponential's probability (5 binomial
    sds: a false failure below 1e-6)."""
    from skdp_synth.preprocessing import _decoding
    from skdp_synth.preprocessing._tail_rates import (
        EDGE_Z,
        OUTER_FALL_T,
        _density_sd,
        _falls,
    )

    assert OUTER_FALL_T == 0.5
    h = _sbp()
    span = _t(256.0) - _t(129.0)
    assert OUTER_FALL_T <= span <= 1.0  # not wider than GAP_T
    widths = np.diff(h.edges)
    dens = h.counts / widths
    assert dens[3] < dens[2]
    assert dens[3] >= dens[2] - EDGE_Z * _density_sd(widths, 3, 2, h.scale)
    assert not _falls(dens, widths, 3, 2, h.scale)  # within the noise
    inner, side, width, rate, kind = _tail_models(h, *h.bounds)[3]
    assert (inner, side, kind) == (129.0, 1, "t")
    assert math.isclose(width, span)
    expected = _expected_rate(591.28390576, 129.0, 256.0, 251.36194046, 118.0)
    assert math.isclose(rate, expected, rel_tol=1e-12)
    v = _draw(h, 129.0, 255.0, True)
    # integers: P(v < x) for a whole x is the exponential's at x
    _assert_decays_in_t(v, 129.0, rate, span, (150.0, 180.0, 220.0))
    # narrower than OUTER_FALL_T (the same leaf read so), the noise test stands
    _decoding.OUTER_FALL_T, was = span + 0.01, _decoding.OUTER_FALL_T
    try:
        assert 3 not in _tail_models(h, *h.bounds)
    finally:
        _decoding.OUTER_FALL_T = was


def test_an_inner_leaf_within_the_noise_of_its_neighbour_is_not_a_tail():
    """Only the outermost kept leaf is a tail by any fall: the same leaf
    with a kept leaf beyond it decodes as an inner one."""
    h = _sbp()
    h = FineHistogram(
        np.append(h.edges, 1025.0), np.append(h.counts, 100.0), 0.0,
        np.zeros(5, bool), True, (91.0, 1025.0), True, B_NHEFS,
    )  # fmt: skip
    assert 3 not in _tail_models(h, *h.bounds)


def test_a_lower_tail_whose_neighbour_falls_three_sds_is_not_a_hard_edge():
    """baseball's ``year`` (1871-2007) at ε = 0.3, seed 3 of
    ``benchmarks.bench_suite --half tune --tables baseball`` (b = 145):
    ``[1961, 1982)`` holds 182 noisy rows a year, ``[1982, 2004)`` 226, a
    fall of 3.3 sds towards the lower tail ``[1878, 1961)``. Read as a hard
    edge (at EDGE_Z = 4) the tail's 6,249 rows were filled flat from 1961
    down to 1927; at HARD_EDGE_Z = 3 it decays from 1961 over its whole
    width, ``d0 exp(-z / s)`` with ``s`` fixed by its mass."""
    from skdp_synth.preprocessing import _tail_rates
    from skdp_synth.preprocessing._tail_rates import HARD_EDGE_Z, _decay_scale

    assert HARD_EDGE_Z == 3.0
    edges = np.array([1878.0, 1961.0, 1982.0, 2004.0, 2049.0])
    counts = np.array([6249.12133461, 3831.27735125, 4978.60873681, 155.65313437])
    h = FineHistogram(
        edges, counts, 0.0, np.zeros(4, bool), True, (1878.0, 2049.0), True,
        145.45454545454547,
    )  # fmt: skip
    widths = np.diff(edges)
    dens = counts / widths
    sd = _tail_rates._density_sd(widths, 1, 2, h.scale)
    z = (dens[2] - dens[1]) / sd
    assert HARD_EDGE_Z < z < 4.0  # hard at the tail test's own level
    assert not _tail_rates._is_hard_edge(dens, widths, 1, -1, 2, h.scale)
    inner, side, width, s, flat = _tail_models(h, *h.bounds)[0]
    assert (inner, side, width, flat) == (1961.0, -1, 83.0, False)
    ratio = counts[0] / dens[1]  # the width its mass fills at d0
    assert math.isclose(s, _decay_scale(ratio, 83.0), rel_tol=1e-12)
    assert s > ratio  # flat, the rows ended ratio = 34 years below 1961


# acs12's ``hrs_work`` at ε = 1, seed 2: PrivTree's leaves and their noisy
# counts (b = 100 / 3). 40 hours a week is most of the rows; 93 of 1,597
# work 4-21 hours, in [4, 16), [16, 18), [18, 22) (noisy 82.6, 83.4, 9.8).
HRS_EDGES = np.array(
    [-1.09951163e12, -6.87194767e10, -4.2949673e09, -2.68435456e08, -1.34217731e08]
    + [-6.7108866e07, -3.3554433e07, -2.3726567e07, -1.6777216e07, -4.194306e06]
    + [-1.048576e06, -262146.0, -131073.0, -65536.0, -4096.0, -1026.0, -726.0]
    + [-513.0, -363.0, -256.0, -131.0, -66.0, -16.0, -10.0, -5.0, -1.0, 0.0, 1.0]
    + [2.0, 4.0, 16.0, 18.0, 22.0, 32.0, 37.0, 40.0, 45.0, 65.0, 256.0, 1025.0]
    + [4096.0, 16385.0, 32769.0, 65536.0, 262145.0, 1048576.0, 4194305.0]
    + [16777216.0, 67108865.0, 134217729.0, 268435456.0, 4.2949673e09]
    + [6.87194767e10, 1.09951163e12]
)
HRS_RAW = np.array(
    [63.5, -38.5, 8.2, 5.9, 28.4, -11.4, -40.4, -35.9, -8.9, 51.1, -27.5, -6.2]
    + [70.1, -18.9, 1.9, -2.7, -21.1, 8.9, -56.8, 17.7, 4.3, -77.8, -15.2, 65.0]
    + [-28.4, -10.8, -17.4, -6.4, 19.2, 82.6, 83.4, 9.8, 89.6, 19.4, 49.6, 346.1]
    + [201.9, 4.5, 48.2, -31.6, -26.7, 69.4, 16.1, 40.2, 1.1, -21.4, -22.8, 29.8]
    + [52.9, -71.4, -10.3, 45.9, -28.9]
)


def test_a_spiky_column_keeps_its_lower_tail():
    """Most of ``hrs_work`` at 40: the kept mass's IQR in ``t`` is about
    0.3, Tukey's lower fence (1.5 IQR below the first quartile) landed at 29
    hours and cut the kept leaves ``[22, 32)`` and ``[16, 18)`` (the rows'
    std 0.40 times the real one). The fence moves out to the end of the
    run of kept leaves it cuts (across the emptied ``[18, 22)``, 0.32 wide
    in ``t``), as far as the inter-decile fence (FENCE_DECILES = 0.5526
    inter-decile ranges below the first decile): 16."""
    finest = np.diff(HRS_EDGES) <= 1.0
    out, cap, _ = _kept_counts(HRS_EDGES, HRS_RAW, B_ACS, finest, True, False)
    i16 = int(np.flatnonzero(HRS_EDGES == 16.0)[0])
    assert cap[0] == 16.0  # on the parent: 29, and [16, 18) 0
    assert out[i16] == HRS_RAW[i16] and out[i16 + 2] == HRS_RAW[i16 + 2]
    from skdp_synth.preprocessing._fences import (
        FENCE_DECILES,
        FENCE_GAP_T,
        Z75,
        Z90,
        fences_t,
    )

    assert FENCE_IQR == 1.5 and FENCE_GAP_T == 0.5
    assert math.isclose(FENCE_DECILES, (Z75 * 4.0 - Z90) / (2.0 * Z90), rel_tol=1e-15)
    assert abs(FENCE_DECILES - 0.5526) < 1e-4
    body = np.where(finest, 0.0, out)
    q = {p: _quantile_t(HRS_EDGES, body, p) for p in (0.1, 0.25, 0.75, 0.9)}
    tukey = q[0.25] - FENCE_IQR * (q[0.75] - q[0.25])
    decile = q[0.1] - FENCE_DECILES * (q[0.9] - q[0.1])
    assert decile < _t(16.0) < tukey < _t(30.0)
    assert fences_t(HRS_EDGES, body)[0] == _t(16.0)


def test_a_fence_does_not_move_across_an_empty_stretch():
    """credit's ``Price`` at ε = 0.3, seed 0: a noise leaf ``[16385,
    19484)`` (484 noisy rows, none real; 13 % of the kept mass, so past the
    upper decile) beyond an empty ``[4096, 16385)`` (2 wide in ``t``, more
    than FENCE_GAP_T) stays cut by Tukey's fence; the same mass right next
    to the body is kept up to the inter-decile fence."""
    from skdp_synth.preprocessing._fences import FENCE_DECILES, fences_t

    edges = np.array([256.0, 512, 1025, 1449, 2049, 4096, 16385, 19484])
    body = np.array([122.5, 652.8, 963.6, 1224.5, 403.5, 0.0, 484.0])
    q = {p: _quantile_t(edges, body, p) for p in (0.1, 0.25, 0.75, 0.9)}
    tukey = q[0.75] + FENCE_IQR * (q[0.75] - q[0.25])
    decile = q[0.9] + FENCE_DECILES * (q[0.9] - q[0.1])
    assert _t(4096.0) < tukey < _t(16385.0) < decile
    assert fences_t(edges, body)[1] == tukey
    joined = np.array([122.5, 652.8, 963.6, 1224.5, 403.5, 484.0, 0.0])
    q = {p: _quantile_t(edges, joined, p) for p in (0.1, 0.25, 0.75, 0.9)}
    decile = q[0.9] + FENCE_DECILES * (q[0.9] - q[0.1])
    assert fences_t(edges, joined)[1] == min(_t(16385.0), decile)


def test_the_two_fences_coincide_on_a_normal():
    """For a normal in ``t`` the inter-decile fences sit where Tukey's do
    (2.698 sds from the mean): a fine histogram of N(10, 1) in t (leaves
    of 1 / 64) gives fences 2.698 from 10 on both sides, both ways."""
    from skdp_synth.preprocessing._fences import FENCE_DECILES

    t = np.arange(4.0, 16.0 + 1e-9, 1.0 / 64.0)
    edges = _x(t)
    mid = 0.5 * (t[:-1] + t[1:])
    body = np.exp(-0.5 * (mid - 10.0) ** 2)
    q = {p: _quantile_t(edges, body, p) for p in (0.1, 0.25, 0.75, 0.9)}
    tukey = q[0.75] + FENCE_IQR * (q[0.75] - q[0.25])
    decile = q[0.9] + FENCE_DECILES * (q[0.9] - q[0.1])
    assert abs(tukey - 12.698) < 0.01 and abs(decile - 12.698) < 0.01


def test_a_thin_tail_goes_where_its_noisy_counts_are():
    """acs12's ``income`` at ε = 1, seed 2: growth stopped at 46,341; the
    leaves up to the fence (near 2^18) held noisy 63.4, -11.7, -11.8, 156.9
    (``[65536, 262145)``, 108 true rows, 7 %) and -2.4. Their pooled count
    less TAIL_Z b sqrt(2 m) was filled nearest first and never reached the
    far leaf (the rows' maximum 65,536, std ratio 0.43). It is now shared
    among the leaves whose noisy count passes CORE_WIDE_SCALES b (an empty
    leaf does with probability ``e^-4 / 2 < 1 %``; the far leaf: 4.7 b,
    which growth did not take as it asks ``b ln(L / 0.01)`` of a leaf wider
    than GAP_T) in proportion to those counts, none denser than
    the edge leaf; what does not fit, or all of it where no leaf passes,
    goes nearest first as before."""
    edges = np.array([16385.0, 23171, 32769, 46341, 50535, 55109, 65536, 262145])
    edges = np.append(edges, 1048576.0)
    raw = np.array([70.9, 65.5, 100.9, 63.4, -11.7, -11.8, 156.9, -2.4])
    out = np.where(np.arange(8) < 3, raw, 0.0)
    atom = np.zeros(8, dtype=bool)
    got = _recover_tails(out, raw, edges, atom, (13.6, 18.07), B_ACS)
    mass = raw[3:].sum() - TAIL_Z * B_ACS * math.sqrt(2 * 5)
    assert math.isclose(got[3:].sum(), mass, rel_tol=1e-12)
    share = np.where(raw[3:] > 4.0 * B_ACS, raw[3:], 0.0)  # CORE_WIDE_SCALES b
    assert share.tolist() == [0.0, 0.0, 0.0, 156.9, 0.0]
    want = mass * share / share.sum()
    np.testing.assert_allclose(got[3:], want, rtol=1e-12)
    assert got[6] > 0  # on the parent: 0


def test_a_kept_leaf_beyond_an_emptied_one_does_not_take_its_full_count():
    """acs12's ``income`` at ε = 1, seed 1 (the top coarse bin
    ``[65,536, 524,289)``): ``[131,072, 262,145)`` emptied (17 real rows),
    ``[262,145, 524,289)`` kept with 105.9 noisy rows (13 real). The outer
    leaf weighs at most ``INNER_SCALES b`` per unit of its ``t`` width
    (what the emptied leaf stayed under), so the bin's decoded mean is at
    most ``(69.4 m_in + w m_out) / (69.4 + w)``, ``w = b span_t`` and
    ``m_in``, ``m_out`` the leaves' largest possible means (their upper
    edges); on the parent the outer leaf took 105.9 / 175.3 = 60 % of the
    rows and the mean was above this bound. The bound's slack covers
    sampling: 5 sds of the mean of 20,000 draws under 524,289."""
    from skdp_synth.preprocessing._numeric_domain import INNER_SCALES

    edges = np.array([16384.0, 32768.0, 65536.0, 131072.0, 262145.0, 524289.0])
    counts = np.array([400.0, 250.0, 69.4, 0.0, 105.9])
    finest = np.zeros(5, dtype=bool)
    cap = (16384.0, 524289.0)
    h = FineHistogram(
        edges, counts, 0.0, finest, True, cap, True, B_ACS, np.zeros(5, bool)
    )
    v = _draw(h, 65536.0, 524288.0, True)
    w = INNER_SCALES * B_ACS * (_t(524289.0) - _t(262145.0))
    assert w < 105.9
    bound = (69.4 * 131072.0 + w * 524289.0) / (69.4 + w)
    slack = 5 * 524289.0 / math.sqrt(v.size)
    assert float(v.mean()) <= bound + slack, (float(v.mean()), bound)
    # the outer leaf's share is its capped weight's, within 5 binomial sds
    p = w / (69.4 + w)
    got = float(np.mean(v >= 262145.0))
    assert abs(got - p) < 5 * math.sqrt(p * (1 - p) / v.size), (got, p)


def test_an_emptied_leaf_with_no_kept_leaf_inwards_caps_nothing():
    """credit's ``Debt`` shape: a point mass at 0 (the densest leaf), then a
    bin whose first leaves are emptied and whose body starts further out.
    Those leaves are the bin's rows, not a tail past the emptied ones: the
    weights stay the noisy counts (capping them cost credit's mean KS +3 %
    at eps = 1, ``benchmarks.bench_suite --light``)."""
    from skdp_synth.preprocessing._decoding import _beyond_gap_weights

    edges = np.array([0.0, 1.0, 2.0, 4.0, 256.0, 512.0, 1024.0, 2049.0])
    counts = np.array([2900.0, 0.0, 0.0, 0.0, 120.0, 200.0, 150.0])
    finest = np.array([True] + [False] * 6)
    h = FineHistogram(
        edges,
        counts,
        0.0,
        finest,
        True,
        (0.0, 2049.0),
        True,
        58.0,
        np.zeros(7, bool),
    )
    w = _beyond_gap_weights(h, 1, 7, 0, 0.0, 2049.0)
    assert np.array_equal(w, counts[1:])


def test_a_wide_last_leaf_past_an_emptied_leaf_decays_at_its_fitted_rate():
    """Ecdat ``DoctorContacts``' ``mdu`` (doctor visits, 0-77) at ε = 1,
    seed 1 of ``benchmarks.bench_suite``: its last kept leaf ``[16, 256)``
    (250.5 noisy rows; 307 real, 245 of them under 32) lies past ``[13, 16)``,
    which the noise emptied (191 real rows). Across an emptied leaf the
    neighbour's density at the common edge says nothing, so the leaf was
    decoded like an inner one, uniformly in ``t``: half its rows above 64
    (6 real), std ratio 3.36 with no warning. A leaf that wide (over
    ``GAP_T`` in ``t``) is a tail wherever it falls, and now decays at the
    rate the two released densities fit (``_tail_rates._fitted_rate``);
    each ``P(v < x)`` within 5 binomial sds (a false failure below 1e-6)."""
    edges = np.array([9.0, 11.0, 13.0, 16.0, 256.0])
    counts = np.array([334.5, 178.7, 0.0, 250.5])
    h = FineHistogram(
        edges, counts, 0.0, np.zeros(4, bool), False, (9.0, 256.0), True, 125 / 3
    )
    inner, side, span, rate, kind = _tail_models(h, *h.bounds)[3]
    assert (inner, side, kind) == (16.0, 1, "t")
    assert math.isclose(span, _t(256.0) - _t(16.0))
    d_k, d_nb = 250.5 / span, 178.7 / (_t(13.0) - _t(11.0))
    dist = 0.5 * (_t(256.0) + _t(16.0)) - 0.5 * (_t(13.0) + _t(11.0))
    assert math.isclose(rate, math.log(d_nb / d_k) / dist, rel_tol=1e-12)
    v = _draw(h, 16.0, 256.0, False)
    _assert_decays_in_t(v, 16.0, rate, span, (24.0, 32.0, 64.0, 128.0))
    assert np.mean(v > 64.0) < 0.25  # on the parent: half
