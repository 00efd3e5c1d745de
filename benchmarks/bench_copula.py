"""The cost of placing numeric values jointly inside their bins (copula vs independent).

Run: ``python -m benchmarks.bench_copula [--rows 1000000] [--repeats 2]``.

``BooleanEncoder(within_bins="copula")`` (the default) draws a row's
within-bin places from a Gaussian copula (Gibbs sampling in the row's box
of bins, then ranks per bin); ``"independent"`` draws them column by
column. Times ``pipe.sample(n)`` under both on ``nycflights13::flights``
(50,000 rows, five numeric columns, ``benchmarks/bench_mixed.py``'s
table), against the baseline of the same run: the release's encoded sample
alone (no decoding).
"""

from __future__ import annotations

import argparse
import sys
import time

from benchmarks import bench_mixed as bm


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)
    pipe, _ = bm.fitted_pipeline("flights")
    best = {}
    for _ in range(args.repeats):
        t = time.perf_counter()
        pipe[-1].sample(args.rows, random_state=0)
        best["encoded"] = min(best.get("encoded", 1e9), time.perf_counter() - t)
        for within in ("independent", "copula"):
            pipe[0].set_params(within_bins=within)
            t = time.perf_counter()
            pipe.sample(args.rows, random_state=0)
            best[within] = min(best.get(within, 1e9), time.perf_counter() - t)
    base = best["encoded"]
    print(f"sample({args.rows}) on flights, best of {args.repeats}:")
    for name, s in best.items():
        print(f"  {name:12s} {s:6.2f} s  {s / base:5.1f} x the encoded sample")
    print(f"  copula / independent: {best['copula'] / best['independent']:.2f}")


if __name__ == "__main__":
    sys.exit(main())
