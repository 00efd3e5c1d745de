"""The share of rows in a float column's cut wide leaf, real against
synthetic (``benchmarks/results/bench_uncut_leaves.md``): a 3,333-row table
of four normal(30, 9) and four normal(180, 50) floats and 12 categoricals,
ε = 0.3. Usage: ``python -m benchmarks.bench_uncut_leaves_e2e SEED ...``."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from benchmarks._harness import fit_default_pipeline


def table(n=3333):
    rng = np.random.default_rng(0)
    ch = {f"ch{i}": np.round(rng.normal(30, 9, n).clip(0, 60), 2) for i in range(4)}
    ks = {f"k{i}": rng.choice(list("abc"), n) for i in range(12)}
    ms = {f"m{i}": rng.normal(180, 50, n).round(1) for i in range(4)}
    return pd.DataFrame(ch | ks | ms)


def run(seed):
    df = table()
    pipe = fit_default_pipeline(df, 0.3, seed)
    syn = pipe.sample(len(df), random_state=seed)
    for spec in pipe[0].specs_:
        w = sorted(getattr(spec, "wide", ()))
        if not w or spec.integer:
            continue
        for i in range(0, len(w), 16):
            a = float(spec.levels[w[i]])
            b = float(spec.levels[w[min(i + 15, len(w) - 1)] + 1])
            r = df[spec.name].between(a, b, inclusive="left").mean()
            s = syn[spec.name].between(a, b, inclusive="left").mean()
            gone = len(pipe.integer_bins_dropped_.get(spec.name, []))
            print(seed, spec.name, f"[{a:.2f}, {b:.2f})", f"real {r:.3f}", end=" ")
            print(f"syn {s:.3f} parts dropped {gone}")


if __name__ == "__main__":
    for seed in map(int, sys.argv[1:]):
        run(seed)
