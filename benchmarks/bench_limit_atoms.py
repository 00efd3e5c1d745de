"""A float column's point mass at a natural limit (a percentage's 100),
per fit of ``benchmarks/bench_suite.py``'s ``auto`` pipeline (the fit of
``benchmarks.bench_trunc_tail``): the synthetic share exactly at the limit,
the share past it, the largest value, the std ratio against the held-out
rows, and the fine histogram's leaf holding the limit (its edges, whether
it is finest, its noisy count). The real rows only score the fit
(``benchmarks/results/bench_limit_atoms.md``).

    PYTHONPATH=. python -m benchmarks.bench_limit_atoms --table loans \\
        --column account_never_delinq_percent --eps 1,0.3 --seeds 10
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd


def measure(ctx, column, eps, seed, limit=100.0):
    """One fit's figures for ``column`` (a dict)."""
    from benchmarks.bench_suite import numeric_scores
    from benchmarks.bench_trunc_tail import fit

    pipe, syn, named = fit(ctx, eps, seed)
    std = numeric_scores(syn, ctx["test"], ctx["cats"])["std"][column]
    v = pd.to_numeric(syn[column], errors="coerce").dropna().to_numpy(float)
    spec = next(s for s in pipe[0].specs_ if s.name == column)
    h = spec.fine
    e = np.asarray(h.edges, dtype=np.float64)
    i = int(np.searchsorted(e, limit, "right")) - 1
    return {
        "at": float(np.mean(v == limit)),
        "past": float(np.mean(v > limit)),
        "max": float(v.max()),
        "std": float(std),
        "leaf": (float(e[i]), float(e[i + 1])),
        "finest": bool(h.finest[i]),
        "raw_b": float(h.raw[i] / h.scale),
        "named": column in named,
    }


def main(argv=None):
    from benchmarks.bench_suite import context

    ap = argparse.ArgumentParser()
    ap.add_argument("--table", default="loans")
    ap.add_argument("--column", default="account_never_delinq_percent")
    ap.add_argument("--eps", default="1,0.3")
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args(argv)
    ctx = context(args.table)
    real = pd.to_numeric(ctx["train"][args.column], errors="coerce").dropna()
    print(
        f"{args.table}.{args.column}: {len(real)} training rows, "
        f"{np.mean(real == 100.0):.3f} at 100, max {real.max():g}"
    )
    print("| ε | seed | at 100 | > 100 | max | std ratio | leaf at 100 | noisy (b) |")
    print("|---|---|---|---|---|---|---|---|")
    for eps in (float(x) for x in args.eps.split(",")):
        for seed in range(args.seeds):
            r = measure(ctx, args.column, eps, seed)
            a, b = r["leaf"]
            fin = ", finest" if r["finest"] else ""
            print(
                f"| {eps:g} | {seed} | {r['at']:.3f} | {r['past']:.3f} | "
                f"{r['max']:.2f} | {r['std']:.2f} | [{a:.6g}, {b:.6g}){fin} | "
                f"{r['raw_b']:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
