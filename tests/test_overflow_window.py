"""The tentative window past an upper cap where growth stopped
(``_fences.overflow_window``, step 6 of ``_numeric_domain._kept_counts``;
doc/privacy/encoder.md, "Tentative window past the cap";
benchmarks/results/bench_capped_tail.md)."""

import numpy as np

import skdp_synth.preprocessing._fences as _fences
import skdp_synth.preprocessing._numeric_domain as nd
from skdp_synth.preprocessing._coarse_bins import coarse_edges
from skdp_synth.preprocessing._fences import OVERFLOW_CUT_Z, OVERFLOW_T, OVERFLOW_Z

# a body on [1, 16) and a tail of four leaves each under growth's 2 b past
# 16: growth keeps [16, 32) from _recover_tails and stops at 32
EDGES = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096.0])
B = 10.0
FINEST = np.zeros(EDGES.size - 1, dtype=bool)
TAIL = np.array([500, 800, 900, 700, 19, 19, 19, 19, 0, 0.0])


def test_constants_pinned():
    # the measured setting (benchmarks/results/bench_capped_tail.md)
    assert (OVERFLOW_T, OVERFLOW_Z, OVERFLOW_CUT_Z) == (2.0, 2.0, 4.0)


# growth stops at 17.5: a run of 16 leaves of 0.5 b each lies between the
# body and a leaf of 7 b at [40, 64); the window reaches x(t(17.5) + 2) = 73
STOP_EDGES = np.concatenate([[1, 2, 4, 8], np.linspace(16, 40, 17), [64, 128, 256]])
STOP_RAW = np.concatenate([[500, 800, 900, 700], np.full(16, 5.0), [70, 0, 0.0]])


def _window(raw):
    finest = np.zeros(raw.size, dtype=bool)
    out, (_, hi), tentative = nd._kept_counts(STOP_EDGES, raw, B, finest)
    assert np.isclose(hi, 73.0, rtol=1e-12, atol=0)
    window = np.flatnonzero(tentative)
    assert window[0] == 5 and window[-1] == 21  # [17.5, 19) to [64, 128)
    assert np.isclose(out[window].sum(), raw[window].sum(), rtol=1e-12, atol=0)
    return out, window


def test_window_density_falls_away_from_the_cap():
    """The window's pooled count follows its leaves' noisy counts, as a
    density in ``t`` that does not rise away from the cap
    (``_fences._falling_shares``): the leaf past 64, which drew nothing,
    gets nothing. On the parent it was shared by width in ``t``, and that
    leaf got 13.6 of the 145 rows (doctorcontacts' ``educdec``: its tail
    drew 7 ``b`` at 16.7-19.1 and 1.7 ``b`` at 22.9-65 together, and a
    quarter of the window's rows came back above 46 where the real rows end
    at 25)."""
    out, window = _window(STOP_RAW)
    assert out[21] == 0.0
    t = np.log2(1.0 + STOP_EDGES)
    density = out[window[:-1]] / np.diff(t)[window[:-1]]
    assert np.all(np.diff(density) <= 1e-12 * density.max())


def test_a_noise_leaf_at_the_window_end_does_not_take_it():
    """A leaf at the window's end that drew 10 ``b`` beside empty leaves
    takes about its width's share of the pooled count, not the count:
    shared among the leaves past ``4 b`` instead, credit's ``Age`` at
    ε = 0.3, seed 9 of ``benchmarks.bench_suite`` put 8 % of its rows at
    263 (the window's end; real ages end at 68)."""
    raw = STOP_RAW.copy()
    raw[20], raw[21] = 0.0, 100.0  # [40, 64) empty, [64, 128) at 10 b
    out, window = _window(raw)
    assert out[21] < 0.2 * out[window].sum()


def test_window_past_a_stopped_cap():
    out, (lo, hi), tentative = nd._kept_counts(EDGES, TAIL, B, FINEST)
    # the window reaches x(t(32) + 2) = 4 * 33 - 1 = 131
    assert lo == 1.0 and hi == 131.0
    past = EDGES[:-1] >= 32
    inside = past & (EDGES[:-1] < 131)
    assert np.all(out[inside] > 0) and np.all(tentative[inside])
    assert not tentative[~inside].any()
    # the pooled noisy count of the leaves it overlaps, shared by width in t
    assert np.isclose(out[inside].sum(), TAIL[inside].sum())
    # without the window (the date/time columns' rule) the cap stays at 32
    out0, (_, hi0), tent0 = nd._kept_counts(EDGES, TAIL, B, FINEST, window=False)
    assert hi0 == 32.0 and not tent0.any() and not out0[past].any()


def test_window_is_its_own_tentative_coarse_bin():
    out, cap, tentative = nd._kept_counts(EDGES, TAIL, B, FINEST)
    hist = nd.FineHistogram(EDGES, out, 0.0, FINEST, False, cap, True, B, tentative)
    edges = coarse_edges(hist, 20)
    # the window is one coarse bin [32, 131), which a pipeline keeps only
    # where its release supports it
    assert edges[-2:] == [32.0, 131.0]
    assert hist.tentative_bins(edges) == [len(edges) - 2]


def test_no_window_in_noise():
    # leaves past the cap pooling under OVERFLOW_Z sds of their noise
    raw = TAIL.copy()
    raw[6:8] = 0.0
    out, (_, hi), tentative = nd._kept_counts(EDGES, raw, B, FINEST)
    assert hi == 32.0 and not tentative.any()


def test_no_window_when_nothing_is_significant():
    # near_zero: the kept range may itself be a noise leaf. The tail's
    # leaves of 1.9 b join its core (above NARROW_SCALES = 1.5 b) up to the
    # fences (38.8); no window opens past them, where the same counts open
    # one up to 131 when the core is significant
    _, (_, hi), tentative = nd._kept_counts(EDGES, TAIL, B, FINEST, near_zero=True)
    assert np.isclose(hi, 38.81026198790441, rtol=1e-12, atol=0)
    assert not tentative.any()


def test_integer_window_ends_on_an_integer():
    out, (_, hi), tentative = nd._kept_counts(EDGES, TAIL, B, FINEST, integer=True)
    assert hi == float(int(hi)) and hi > 32.0 and tentative.any()


def test_no_window_past_a_point_mass_at_100():
    # a share's 100 bounds the column: the leaves past it that the natural
    # limit dropped (pooled under b ln(L / 0.01)) do not come back as a window
    edges = np.array([40, 60, 80, 100, 101, 110, 128], float)
    finest = np.array([0, 0, 0, 1, 0, 0], bool)
    raw = np.array([300, 300, 300, 1700, 70, 75], float)
    out, (_, hi), tentative = nd._kept_counts(edges, raw, 30.0, finest, True)
    assert hi <= 101 and not out[4:].any() and not tentative.any()


class _CountingSource:
    """A noise source that adds no noise and records every draw."""

    def __init__(self):
        self.draws = []

    def laplace(self, values, scale):
        values = np.asarray(values, dtype=np.float64)
        self.draws.append((values.size, float(scale)))
        return values.copy()


def test_window_draws_no_noise(monkeypatch):
    # accounting: the window is post-processing of the fine histogram's
    # noisy counts -- the same Laplace draws (sizes and scales) with it and
    # without it, so the column's epsilon is unchanged
    from skdp_synth.preprocessing import _fences

    runs = {}
    for width in (0.0, OVERFLOW_T):
        monkeypatch.setattr(_fences, "OVERFLOW_T", width)
        source = _CountingSource()
        hist = nd.noisy_histogram(EDGES, FINEST, TAIL, 3.0, False, B, source)
        runs[width] = (source.draws, hist)
    assert runs[0.0][0] == runs[OVERFLOW_T][0] == [(TAIL.size + 1, B)]
    assert runs[0.0][1].cap[1] == 32.0 and runs[OVERFLOW_T][1].cap[1] == 131.0
    assert runs[0.0][1].missing_count == runs[OVERFLOW_T][1].missing_count == 3.0


# a body on [0, 256) whose upper fence cuts inside its last kept leaf
# [128, 256), and one leaf [256, 1024) past it that the fence dropped
CUT_EDGES = np.array([0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096, 16384, 65536.0])
CUT_BODY = [300, 500, 900, 1200, 900, 500, 300, 150, 60]


def _cut(past):
    raw = np.array([*CUT_BODY, past, 0, 0, 0], dtype=np.float64)
    finest = np.zeros(raw.size, dtype=bool)
    return nd._kept_counts(CUT_EDGES, raw, B, finest)


def test_window_past_a_fence_cut_needs_four_sds():
    """Past a fence cut (the cap inside the last kept leaf) the window joins
    only where the leaves past that leaf pool more than ``OVERFLOW_CUT_Z``
    = 4 sds of their noise (``b sqrt(2 m)``; one leaf here: 56.6 at
    ``b`` = 10). movies' ``votes`` (ε = 1, seed 3 of ``benchmarks.
    bench_suite``): the fence cut the cap at 3,662 inside the kept ``[2049,
    4096)``, and ``[4096, 16385)``, 360 noisy rows (379 real) at ``b`` =
    41.7, 6.1 sds, was lost; at ``OVERFLOW_Z`` = 2, 7 of 24 such windows
    on the TUNE half held no real row (pooled at 2.05-3.65 sds)."""
    gate = OVERFLOW_CUT_Z * B * np.sqrt(2.0)
    out, (_, hi), tentative = _cut(gate + 1.0)
    assert hi > 256.0 and np.flatnonzero(tentative).tolist() == [9]
    assert out[9] == gate + 1.0
    # under the gate (though past OVERFLOW_Z's 2 sds): the cap stays inside
    # the cut leaf and nothing past it is kept
    out, (_, hi), tentative = _cut(gate - 1.0)
    assert 128.0 < hi < 256.0 and not tentative.any() and not out[9:].any()
    assert gate - 1.0 > OVERFLOW_Z * B * np.sqrt(2.0)


def test_no_window_past_a_fence_cut_when_switched_off(monkeypatch):
    monkeypatch.setattr(_fences, "OVERFLOW_CUT_Z", None)
    out, (_, hi), tentative = _cut(80.0)
    assert 128.0 < hi < 256.0 and not tentative.any() and not out[9:].any()
