"""A year column learned privately, and with its public bounds.

A year (integers 1990-2019, uniform) sits in PrivTree's depth-0 cell
``[1024, 4096)``, a factor 4 wide; the tree splits it at midpoints in
``log2(1 + x)``, and at a small budget its leaves stop at widths of a
decade or more (``[1987, 2004)``, ``[2004, 2049)``), so the rows come back
over years the column never holds. This measures, on ``n`` rows (the year
and a normal column) over seeds, with the default pipeline
(``BooleanEncoder()`` and ``ProjectedGaussianRelease(epsilon=ε,
delta=1e-6)``), the share of synthetic years outside 1990-2019, the fits
with a year outside 1980-2030, and the fits whose warnings name the
column: as learned, and with ``bounds={"year": (1990, 2019)}``.

Run::

    PYTHONPATH=. python -m benchmarks.bench_year_bounds --eps 0.3,1 --seeds 10

Results: ``benchmarks/results/bench_year_bounds.md``.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd


def run(n, eps, seed, bounds):
    from benchmarks._harness import sample_default_pipeline

    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"year": rng.integers(1990, 2020, n), "x": rng.normal(0, 1, n)})
    rows, caught = sample_default_pipeline(df, eps, seed, bounds=bounds)
    y = rows["year"]
    outside = float(((y > 2019) | (y < 1990)).mean())
    far = bool(((y > 2030) | (y < 1980)).any())
    named = any("year" in str(w.message) for w in caught)
    return outside, far, named


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eps", default="0.3,1")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--rows", type=int, default=2000)
    args = ap.parse_args(argv)
    print(
        "| ε | domain | years outside 1990-2019: mean | max | fits with a year "
        "outside 1980-2030 | fits naming the column |"
    )
    print("|---|---|---|---|---|---|")
    for eps in [float(e) for e in args.eps.split(",")]:
        for bounds in (None, {"year": (1990, 2019)}):
            res = [run(args.rows, eps, s, bounds) for s in range(args.seeds)]
            share = [r[0] for r in res]
            label = "bounds (1990, 2019)" if bounds else "learned"
            far, named = sum(r[1] for r in res), sum(r[2] for r in res)
            print(
                f"| {eps:g} | {label} | {100 * np.mean(share):.1f} % "
                f"| {100 * np.max(share):.1f} % | {far}/{args.seeds} "
                f"| {named}/{args.seeds} |"
            )


if __name__ == "__main__":
    main()
