"""Pooled growth of the kept range past the cap, measured and not shipped
(benchmarks/bench_pooled_tails.py; benchmarks/results/bench_pooled_tails.md):
the window rule's exact threshold and false-pass rate, and what it keeps."""

import math

import numpy as np

import skdp_synth.preprocessing._numeric_domain as nd
from benchmarks.bench_pooled_tails import (
    POOLED_FALSE_RATE,
    _windows,
    install,
    laplace_sum_tail,
    pooled_growth,
    window_threshold,
)
from skdp_synth.preprocessing import _fences
from skdp_synth.preprocessing._numeric_domain import _kept_counts, _t, _x


def test_false_rate_pinned():
    assert POOLED_FALSE_RATE == 0.01


def test_laplace_sum_tail_closed_forms():
    # m = 1: P(X > y) = e^-y / 2; m = 2: e^-y (2 + y) / 4 (doc/privacy/encoder.md)
    for y in (0.3, 1.0, 4.0, 9.5):
        assert math.isclose(laplace_sum_tail(1, y), 0.5 * math.exp(-y), rel_tol=1e-12)
        assert math.isclose(
            laplace_sum_tail(2, y), math.exp(-y) * (2.0 + y) / 4.0, rel_tol=1e-12
        )
    p = 0.01 / 12
    assert math.isclose(window_threshold(1, p), math.log(0.5 / p), rel_tol=1e-8)


def test_laplace_sum_tail_matches_simulation():
    # seeded: 400,000 sums; the binomial sd of each rate is under 5e-4, and
    # a 6-sd bound fails by chance with probability < 1e-8
    rng = np.random.default_rng(7)
    for m, y in ((3, 2.0), (5, 4.0), (12, 6.0)):
        s = rng.laplace(size=(400_000, m)).sum(axis=1)
        p = laplace_sum_tail(m, y)
        sd = math.sqrt(p * (1 - p) / s.size)
        assert abs(np.mean(s > y) - p) < 6 * sd


def _binom_upper(n, p, false_rate):
    """The least k with P(Bin(n, p) > k) < false_rate."""
    cdf, k = 0.0, 0
    while True:
        cdf += math.comb(n, k) * p**k * (1 - p) ** (n - k)
        if 1.0 - cdf < false_rate:
            return k
        k += 1


def _tail_column(tail_t=(12.0, 17.0), width=0.25, lo_t=8.0, hi_t=24.0):
    """Edges every ``width`` in ``t`` over ``[lo_t, hi_t)``; the body's 8
    leaves over ``[10, 12)``; the tail's leaves over ``tail_t``."""
    te = np.arange(lo_t, hi_t + width / 2, width)
    edges = _x(te)
    mid = 0.5 * (te[:-1] + te[1:])
    body = (mid > 10.0) & (mid < 12.0)
    tail = (mid > tail_t[0]) & (mid < tail_t[1])
    return edges, body, tail


def test_pure_noise_window_false_pass_rate():
    # leaves past the kept body hold no row: any window passing is a false
    # pass, at most POOLED_FALSE_RATE per column (union bound); 3,000 seeded
    # columns, bound at the binomial quantile with false-failure rate 1e-6
    edges, body, _ = _tail_column()
    b = 10.0
    rng = np.random.default_rng(11)
    n, hits = 3000, 0
    for _ in range(n):
        raw = rng.laplace(0.0, b, body.size)
        out = np.where(body, 100.0 * b, 0.0)
        raw = np.where(body, out, raw)
        grown, cap = pooled_growth(out, raw, edges, b, (edges[8], edges[16]))
        hits += int(cap != (edges[8], edges[16]))
        assert np.array_equal(grown[body], out[body])
    assert hits <= _binom_upper(n, POOLED_FALSE_RATE, 1e-6)


def test_windows_double_in_t():
    edges, _, _ = _tail_column()
    te = _t(edges)
    ws = _windows(te, 16, 1)
    reach = [te[w.max() + 1] - te[16] for w in ws]
    assert np.allclose(reach, [1.0, 2.0, 4.0, 8.0, 12.0])  # the last: the root
    ws = _windows(te, 7, -1)
    assert np.allclose([te[8] - te[w.min()] for w in ws], [1.0, 2.0])


def test_thin_tail_past_the_cap_is_kept(monkeypatch):
    # 30 % of the rows spread over 32 leaves past the body ([12, 20) in t)
    # at 1.7 b each: no leaf passes growth's 2 b, and the library's cap
    # (fences, then _recover_tails) stops at t = 12.25. With the rule
    # installed, the window of 32 leaves past it, [12.25, 20.25), pools
    # 31 x 1.7 b = 52.7 b against window_threshold(32, 0.01 / K) b (26.2 b
    # at K = 12), the largest ratio of the windows, and is kept.
    edges, body, tail = _tail_column(tail_t=(12.0, 20.0))
    b = 10.0
    raw = np.where(body, 16.0 * b, 0.0) + np.where(tail, 1.7 * b, 0.0)
    assert 0.29 < raw[tail].sum() / raw.sum() < 0.31
    finest = np.zeros(raw.size, dtype=bool)
    # the library's own tentative window past a cap where growth stopped
    # (_fences.overflow_window) reaches 2 in t past it: this rule is
    # measured against the library without it
    _, (_, hi_w), tent = _kept_counts(edges, raw, b, finest)
    assert math.isclose(float(_t(hi_w)), 14.25, rel_tol=1e-9) and tent.any()
    monkeypatch.setattr(_fences, "OVERFLOW_T", 0.0)
    _, (_, hi0), _ = _kept_counts(edges, raw, b, finest)
    assert math.isclose(float(_t(hi0)), 12.25, rel_tol=1e-9)
    for name in ("_recover_tails", "_kept_counts"):  # restored after the test
        monkeypatch.setattr(nd, name, getattr(nd, name))
    install()
    out, (lo, hi), _ = nd._kept_counts(edges, raw, b, finest)
    te = _t(edges)
    # the window's outer edge, cut to its last leaf with mass (t = 20)
    assert math.isclose(float(_t(hi)), 20.0, rel_tol=1e-9)
    window = (te[:-1] >= 12.25) & (te[1:] <= 20.25)
    assert window.sum() == 32
    # the window's pooled count, shared by the positive noisy counts
    assert np.allclose(out[window], raw[window])
    assert not out[te[:-1] >= 20.0].any()
