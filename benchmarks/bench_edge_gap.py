"""Kept leaves past an emptied one inside a coarse bin: the same fits with the
parent's weights and with ``skdp_synth.preprocessing._edge_gap``'s.

Per fit (``table:eps:seed``), the ``auto`` pipeline of
``benchmarks/bench_suite.py`` (``fit_ours``: the same encoder, release, seeds
and held-out rows) is fitted twice: ``before``, the parent's weights (no kept
leaf across a bin's edge starts its rows, ``EDGE_SEEN = False``, and every
leaf past an emptied one is capped, ``REAL_PAST_GAP_SCALES = inf``), and
``after``, the library's. Only decoding differs: the domains and the
release are the same draws. Printed: each numeric column whose KS or
Wasserstein distance / IQR against the held-out rows moved (a spike moved
inside one of the scores' decile bins moves no TV1 and often no KS, whose
largest gap may lie elsewhere), and train-on-synthetic both ways (the
suite's model and score). The fits to read are those ``bench_suite_compare`` lists
as moved:

    PYTHONPATH=. python -m benchmarks.bench_edge_gap flchain:1:0

Results: ``benchmarks/results/bench_edge_gap.md``.
"""

from __future__ import annotations

import math


def run(fit):
    """Fit ``table:eps:seed`` the parent's way and the library's; print
    what moved."""
    from benchmarks import bench_suite
    from skdp_synth.preprocessing import _edge_gap

    parent = {"EDGE_SEEN": False, "REAL_PAST_GAP_SCALES": math.inf}
    _, arms = bench_suite.numeric_arms(fit, _edge_gap, parent)
    (_, n0, _), (_, n1, _) = arms["before"], arms["after"]
    k0, w0, s0 = n0["ks"], n0["wiqr"], n0["std"]
    k1, w1, s1 = n1["ks"], n1["wiqr"], n1["std"]
    for c in k0:
        if k0[c] != k1[c] or w0[c] != w1[c]:
            print(
                f"  {c}: KS {k0[c]:.3f} -> {k1[c]:.3f}, "
                f"W/IQR {w0[c]:.3f} -> {w1[c]:.3f}, "
                f"std ratio {s0[c]:.2f} -> {s1[c]:.2f}"
            )


def main(argv=None):
    from benchmarks import bench_suite

    bench_suite.fits_main(run, __doc__, argv)


if __name__ == "__main__":
    main()
