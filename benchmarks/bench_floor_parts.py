"""A float column's floor cell beside 0: the same fits with the cell left
whole (every value under ``2^-10`` decoded as 0) and cut at a sixteenth of
its width for the release to measure (``skdp_synth.preprocessing._floor_parts``).

Per fit (``table:eps:seed``), the ``auto`` pipeline of
``benchmarks/bench_suite.py`` (``fit_ours``: the same encoder, release, seeds
and held-out rows) is fitted twice: ``before``, no cell cut
(``CUT_FLOOR_CELLS = False``), and ``after``, the library's. The domains
are the same draws; the release is redrawn where a cell was cut (one more
level in that column), so every column of such a fit can move. Printed:
train-on-synthetic both ways (the suite's model and score), and for each
float column (by its dtype) with values under ``2^-10`` in either arm's
rows or in the held-out rows that moved, the share of rows exactly 0 and
in ``(0, 2^-10)``, and its KS against the held-out rows:

    PYTHONPATH=. python -m benchmarks.bench_floor_parts credit_card:1:0

Results: ``benchmarks/results/bench_floor_parts.md``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _under_floor(values):
    """The shares of ``values`` (NaN dropped) exactly 0 and in ``(0, 2^-10)``
    (either sign)."""
    from skdp_synth.preprocessing._natural_limits import RES_FLOOR

    v = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)
    if not v.size:
        return 0.0, 0.0
    a = np.abs(v)
    return float(np.mean(a == 0.0)), float(np.mean((a > 0.0) & (a < RES_FLOOR)))


def run(fit):
    """Fit ``table:eps:seed`` with the floor cells whole and cut; print
    what moved."""
    from benchmarks import bench_suite
    from skdp_synth.preprocessing import _floor_parts

    parent = {"CUT_FLOOR_CELLS": False}
    ctx, arms = bench_suite.numeric_arms(fit, _floor_parts, parent)
    (s0, num0, _), (s1, num1, _) = arms["before"], arms["after"]
    k0, k1 = num0["ks"], num1["ks"]
    for c in k0:
        if not pd.api.types.is_float_dtype(ctx["train"][c]):
            continue  # an integer column's floor is 1: nothing is cut
        rows = [_under_floor(f[c]) for f in (ctx["test"], s0, s1)]
        if not any(z + u > 0 for z, u in rows[1:]) and not rows[0][1] > 0:
            continue
        if rows[1] == rows[2] and k0[c] == k1[c]:
            continue
        (zr, ur), (z0, u0), (z1, u1) = rows
        print(
            f"  {c}: exactly 0 {z0:.3f} -> {z1:.3f} (held-out {zr:.3f}), "
            f"in (0, 2^-10) {u0:.3f} -> {u1:.3f} (held-out {ur:.3f}), "
            f"KS {k0[c]:.3f} -> {k1[c]:.3f}"
        )


def main(argv=None):
    from benchmarks import bench_suite

    bench_suite.fits_main(run, __doc__, argv)


if __name__ == "__main__":
    main()
