"""Which kept leaves past an emptied one are noise, inside a coarse bin.

A coarse bin outwards of a numeric column's densest leaf decodes its rows
over its fine leaves by their noisy counts. ``_decoding._beyond_gap_weights``
caps a kept leaf lying past an emptied leaf at what the emptied leaf stayed
under (``INNER_SCALES b`` per unit of ``t``): the density does not rise
again past a leaf the noise emptied. Two cases it got wrong, both on
survival ``flchain``'s ``creatinine`` (recorded to 0.1: heaps at 0.7, 0.8,
0.9, ...; ε = 1, seed 0 of ``python -m benchmarks.bench_suite --half tune
--tables flchain``, ``b = 41.7``), in the bin ``[0.682, 0.900)`` below the
heap at 0.9:

* The bin's top leaf ``[0.882, 0.900)`` was emptied, and the narrow leaf
  under it, ``[0.8794, 0.8820)``, kept 110.3 noisy rows (2.6 ``b``) with no
  real row. No kept leaf of the bin lay inwards of it, so it was not capped,
  and it started the cap for the leaves beyond.
* The real heaps further out, 0.8 (508 real rows, 481.9 noisy) and 0.7
  (173, 245.6), were then capped at 41.7 and 83.3. The rows came back 250,
  127 and 331 at 0.7, 0.8 and 0.881, against 173, 508 and 0.

:data:`EDGE_SEEN`: a kept leaf across the bin's inner edge starts the bin's
rows as a kept leaf of the bin would (:func:`kept_across_edge`), unless it
is a point mass (a finest leaf: credit's ``Debt``, a point mass at 0, then
emptied leaves, then its body -- those leaves are the bin's rows, not a
tail). :func:`above_noise`: a kept leaf whose count passes the cap by more
than :data:`REAL_PAST_GAP_SCALES` ``b`` holds rows of its own (a heap, a
second mode); it keeps its count and the cap ends there. An empty leaf's
Laplace count passes ``Z b`` with probability ``e^-Z / 2``: 2.5 % at
``Z = 3``. Post-processing of the noisy counts and the public ``b``: no
budget, no new released quantity.
"""

from __future__ import annotations

#: A kept leaf across a coarse bin's inner edge starts its rows (module
#: docstring). Measured with :data:`REAL_PAST_GAP_SCALES` on the TUNE half's
#: silent-fit suite (``python -m benchmarks.bench_suite --half tune --eps
#: 0.3,1 --seeds 10 --methods auto --tv-only``, both table lists, 380 fits;
#: ``benchmarks/results/bench_edge_gap.md``): the two rules together moved
#: 103 fits, mean TV1 at ε = 1 .0510 -> .0506, mean KS .0768 -> .0759,
#: silent fits 87 (24 unexplained) unchanged; the threshold alone moved 80
#: with the same means (this rule is for the spike it was found on).
EDGE_SEEN = True
#: A kept leaf past an emptied one whose noisy count passes the emptied
#: leaf's cap by more than this many ``b`` keeps its count (module
#: docstring). Same suite: at ε = 1 storms' mean KS -6.5 % (``wind``, in
#: 5-knot steps: the heap at 65 had weighed 19.9 for 816 noisy rows),
#: cps1988's -19.8 % (``wage``, seed 3: a leaf of 273 real rows had weighed
#: 12.5 past one the noise emptied), movies' -8.7 %, baseball's -5.9 %; at ε = 0.3
#: baseball +1.0 %, every other table within 1 %. 2 scales moved 118 fits
#: to the same means (TV1 .0505, KS .0758 at ε = 1): 3 keeps the rarer
#: false keep of a noise leaf (2.5 % against 6.8 %).
REAL_PAST_GAP_SCALES = 3.0


def kept_across_edge(hist, j0, j1, upwards):
    """Whether the leaf just inwards of the bin's leaves ``j0..j1 - 1`` (below
    them where the bin lies above the core, ``upwards``) is kept and not a
    point mass (a finest leaf); always ``False`` without :data:`EDGE_SEEN`.
    Public: the noisy counts' signs and edges."""
    if not EDGE_SEEN:
        return False
    j = j0 - 1 if upwards else j1
    if not 0 <= j < len(hist.counts):
        return False
    return bool(hist.counts[j] > 0 and not hist.finest[j])


def above_noise(count, cap, scale):
    """Whether a kept leaf's noisy ``count`` passes its ``cap`` by more than
    :data:`REAL_PAST_GAP_SCALES` noise scales ``scale``: rows of its own,
    not a noise draw past an emptied leaf."""
    return float(count) > float(cap) + REAL_PAST_GAP_SCALES * float(scale)
