"""Growth of a private numeric domain across a hole in its range (:data:`GAP_JUMP`).

The fine grid is finest near 0 (``t(x) = sign(x) log2(1 + |x|)`` is about
linear there), so PrivTree cuts a column that crosses 0 into many narrow
leaves around it, each with a few rows and a Laplace count. Growth from the
core (``_numeric_domain._kept_counts``, step 2) stops at a run of leaves
under ``2 b`` wider than ``GAP_T`` in ``t``; from -0.41 to 0.41 is 1.0 wide,
so the other half of a column centred near 0 was left out of the domain
whenever its core lay on one side. carData ``Chile``'s ``statusquo`` (a
scale from -1.8 to 2.0, 45 % of the rows below 0; ε = 0.3, seed 1 of
``python -m benchmarks.bench_suite --half tune --tables chile``) kept
``[0.19, 1.61)`` only: the rows below were clamped into one coarse bin,
and a model of ``vote`` trained on the synthetic rows scored AUC .50
against .75 with the rule (real rows .76).

The jump that carries a zero-inflated column from its point masses to its
body (``JUMP_FALSE_LEVEL``: the nearest run of ``m`` leaves whose noisy sum
passes ``b ln(L / 0.01) + 2 b sqrt(2 m)``, ``L`` the leaves searched, one
jump a side) is tried from any range with :data:`GAP_JUMP`, at that strict
level only (never the looser tentative one), and the run joins only where
it lies within the magnitude the range already reaches
(:func:`within_reach`): the gap then is a hole inside the column's own
extent, not a far range. Post-processing of the noisy counts and public
edges: no budget, no new released quantity.
"""

from __future__ import annotations

#: Growth tries the strict jump from any range, not only from one of point
#: masses (module docstring). Measured on the TUNE half's silent-fit suite
#: (``python -m benchmarks.bench_suite --half tune --eps 0.3,1 --seeds 10
#: --methods auto --tv-only``, both table lists, 380 fits;
#: ``benchmarks/results/bench_gap_jump.md``): 5 fits moved (chile,
#: credit, flchain, loanapp), mean TV1 .0957 / .0510 -> .0958 / .0510 and
#: KS .1449 / .0770 -> .1450 / .0768 at ε = 0.3 / 1, silent fits 87 (24
#: unexplained) unchanged; train-on-synthetic of the 5 moved fits +.125
#: (chile ε = 0.3 seed 1 .502 -> .751). Without :func:`within_reach` 13
#: fits moved and 4 came back with std ratios of 3 to 270 (far noise runs
#: joined: benefits' ``rr``, workinghours' ``education``).
GAP_JUMP = True


def within_reach(edges, lo_i, hi_i, far_end, step):
    """Whether a run ending at leaf ``far_end`` (``step`` its side: +1
    above the range ``lo_i..hi_i``, -1 below) lies within the largest
    magnitude ``|x|`` of the range's edges: a jump from a range of more
    than point masses joins only such a run (:data:`GAP_JUMP`). Public:
    leaf indices and edges."""
    outer = edges[far_end + 1] if step > 0 else edges[far_end]
    reach = max(abs(float(edges[lo_i])), abs(float(edges[hi_i + 1])))
    return abs(float(outer)) <= reach
