"""Kept leaves past an emptied one inside a coarse bin
(``skdp_synth.preprocessing._edge_gap``): a noise leaf under the bin's
emptied inner edge is capped, a heap beyond it keeps its count."""

import numpy as np

from skdp_synth.preprocessing._decoding import _beyond_gap_weights
from skdp_synth.preprocessing._edge_gap import REAL_PAST_GAP_SCALES, above_noise
from skdp_synth.preprocessing._numeric_domain import (
    INNER_SCALES,
    FineHistogram,
    _t,
)

B = 41.7  # flchain's creatinine domain at ε = 1
#: survival ``flchain``'s ``creatinine`` (ε = 1, seed 0 of ``python -m
#: benchmarks.bench_suite --half tune --tables flchain``): the coarse bin
#: ``[0.682, 0.900)`` below the heap at 0.9 (the densest leaf), its leaves
#: and their noisy counts (0: emptied). Real rows: 173, 0, 508, 0, 0, 0.
EDGES = np.array([0.682, 0.7566, 0.795, 0.8342, 0.8794, 0.882, 0.8998, 0.905])
COUNTS = np.array([245.6, 0.0, 481.9, 0.0, 110.3, 0.0, 952.6])


def _hist(finest=None):
    finest = np.zeros(7, bool) if finest is None else finest
    return FineHistogram(
        EDGES, COUNTS, 0.0, finest, False, (0.682, 0.905), True, B, np.zeros(7, bool)
    )


def _span(j):
    return _t(EDGES[j + 1]) - _t(EDGES[j])


def test_a_noise_leaf_under_an_emptied_bin_edge_is_capped_and_heaps_beyond_keep():
    """The narrow leaf ``[0.8794, 0.8820)`` (110.3 noisy rows, no real row)
    lies under the emptied top leaf of the bin, with the kept heap at 0.9
    across the bin's edge: it weighs what the emptied leaf stayed under per
    unit of ``t``. The heaps at 0.8 and 0.7 pass that cap by more than
    ``3 b`` and keep their counts. On the parent the noise leaf kept 110.3
    and capped both heaps (41.7 and 83.3): the rows came back 250, 127 and
    331 at 0.7, 0.8 and 0.881 against 173, 508 and 0 real. Exact: the
    weights are the counts or ``INNER_SCALES b`` times a ratio of spans."""
    w = _beyond_gap_weights(_hist(), 0, 6, 6, 0.682, 0.905)
    cap = INNER_SCALES * B / _span(5) * _span(4)
    assert cap < 110.3
    assert np.allclose(w, [245.6, 0.0, 481.9, 0.0, cap, 0.0], rtol=1e-12)


def test_a_point_mass_across_the_edge_starts_no_cap():
    """A point mass (a finest leaf) across the bin's edge says nothing of the
    density past it (credit's ``Debt``: 0, then emptied leaves, then its
    body): with the heap at 0.9 a finest leaf, the noise leaf keeps its
    count, as on the parent, and the heap at 0.8 keeps its own (the parent
    capped it at 41.7)."""
    finest = np.zeros(7, bool)
    finest[6] = True
    w = _beyond_gap_weights(_hist(finest), 0, 6, 6, 0.682, 0.905)
    assert w[4] == 110.3 and w[2] == 481.9


def test_a_leaf_passes_as_rows_of_its_own_only_past_three_scales():
    """``above_noise`` at the constant's edge: ``3 b`` past the cap is noise
    (an empty leaf's Laplace count passes it with probability 2.5 %)."""
    assert REAL_PAST_GAP_SCALES == 3.0
    assert not above_noise(10.0 + 3.0 * B, 10.0, B)
    assert above_noise(np.nextafter(10.0 + 3.0 * B, np.inf), 10.0, B)


def test_a_heap_past_an_emptied_leaf_of_its_bin_keeps_its_count():
    """dplyr ``storms``' ``wind`` (5-knot steps; ε = 1, seed 5 of ``python -m
    benchmarks.bench_suite --half tune --tables storms``): in the bin
    ``[56, 67)`` above the core, ``[61, 65)`` was emptied between the heaps
    at 60 and 65 (819 real rows, 816.3 noisy). The parent capped the heap at
    what ``[61, 65)`` stayed under, 19.9; it passes that by more than
    ``3 b`` and keeps its count. No kept leaf lies across the bin's edge
    (``[31, 56)`` is emptied): this is the cap inside the bin alone."""
    edges = np.array([30.0, 31.0, 56.0, 59.0, 60.0, 61.0, 65.0, 67.0])
    counts = np.array([5000.0, 0.0, 196.4, 43.1, 716.6, 0.0, 816.3])
    finest = np.array([True, False, False, True, True, False, False])
    h = FineHistogram(
        edges, counts, 0.0, finest, False, (30.0, 67.0), True, B, np.zeros(7, bool)
    )
    cap = INNER_SCALES * B / (_t(65.0) - _t(61.0)) * (_t(67.0) - _t(65.0))
    assert 19.8 < cap < 20.0  # the parent's weight
    w = _beyond_gap_weights(h, 2, 7, 0, 30.0, 67.0)
    assert np.array_equal(w, counts[2:])
