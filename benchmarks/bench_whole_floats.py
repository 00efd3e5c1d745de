"""Whole numbers stored as floats: what a table read by ``pd.read_csv`` gets.

``pd.read_csv`` reads an integer column with a missing cell as ``float64``;
the encoder takes the dtype as the public word on the column (an integer
dtype decodes to whole numbers, a float one inside its leaves). The suite's
loader casts such columns to ``Int64`` (``benchmarks/_suite_tables.py``), so
``bench_suite.py`` never sees them. This runs TUNE tables of
``bench_suite.py`` twice with the same seeds -- their integer columns as
loaded, and the same columns cast to ``float64`` -- and reports, over those
columns, the mean KS against the held-out rows and the share of synthetic
values that are not whole.

Run: ``python -m benchmarks.bench_whole_floats [--tables credit,attrition]
[--eps 1] [--seeds 3]``. Results: ``benchmarks/results/bench_whole_floats.md``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from scipy import stats


def integer_columns(frame):
    """The columns of an integer dtype (nullable or not)."""
    return [c for c in frame.columns if frame[c].dtype.kind in "iu"]


def score(syn, test, columns):
    """``(mean KS, share of values not whole)`` over ``columns``."""
    ks, frac = [], []
    for c in columns:
        a = syn[c].dropna().astype(float).to_numpy()
        b = test[c].dropna().astype(float).to_numpy()
        if a.size and b.size:
            ks.append(stats.ks_2samp(a, b).statistic)
            frac.append(float(np.mean(a != np.round(a))))
    return float(np.mean(ks)), float(np.mean(frac))


def run(table, eps, seeds):
    """One line of the results table."""
    from .bench_suite import context, fit_ours

    ctx = context(table)
    train, test = ctx["train"], ctx["test"]
    ints = integer_columns(train)
    as_float = train.astype({c: "float64" for c in ints})
    out = {}
    for name, data in (("integer dtype", train), ("float64", as_float)):
        got = []
        for seed in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                syn, _ = fit_ours(data, ctx["cats"], ctx["options"], eps, seed, "auto")
            got.append(score(syn, test, ints))
        out[name] = np.mean(got, axis=0)
    i, f = out["integer dtype"], out["float64"]
    return (
        f"| {table} | {eps:g} | {len(ints)} | {i[0]:.4f} | {f[0]:.4f} | "
        f"{f[0] / i[0]:.2f} | {i[1]:.3f} | {f[1]:.3f} |"
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", default="credit,attrition")
    p.add_argument("--eps", type=float, default=1.0)
    p.add_argument("--seeds", type=int, default=3)
    args = p.parse_args(argv)
    print(
        "| table | ε | integer columns | KS, integer dtype | KS, float64 | ratio "
        "| not whole, integer dtype | not whole, float64 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for table in args.tables.split(","):
        print(run(table, args.eps, args.seeds), flush=True)


if __name__ == "__main__":
    main()
