"""A wide table at a small per-column budget: what comes back past the data.

A table of ``--columns`` columns (default 40) cycling through three kinds:
standard normals, integers 0-9 and 4-level categoricals (declared), 20,000
rows, through the default pipeline (``BooleanEncoder(epsilon="auto")``: from
14 numeric columns on, the private domains get the share's cap, 0.55 of ε,
split among them; ``ProjectedGaussianRelease``, δ = 1e-6). Per fit: the integer
columns that came back with a value outside 0-9 and the share of their rows
there, the normals' std ratio (synthetic / real), KS and largest missing
share (the real ones have none), the warning classes
raised and the columns they named. Nothing is tuned on it: it is the wide
case of a suite table's tail (many numeric columns sharing the domain
budget), made where the truth is known.

Run: ``python -m benchmarks.bench_wide_table [--columns 40] [--eps 0.33,1]
[--seeds 5]``. Results: ``benchmarks/results/bench_wide_table.md``.
"""

from __future__ import annotations

import argparse
import re
import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats

N_ROWS = 20_000


def table(columns, seed):
    """The table of ``columns`` columns (normals ``z*``, integers ``i*``,
    categoricals ``c*``) drawn at ``seed``."""
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(columns):
        kind = i % 3
        if kind == 0:
            out[f"z{i}"] = rng.normal(0.0, 1.0, N_ROWS)
        elif kind == 1:
            out[f"i{i}"] = rng.integers(0, 10, N_ROWS)
        else:
            out[f"c{i}"] = rng.choice(list("abcd"), N_ROWS)
    return pd.DataFrame(out)


def fit(df, eps, seed):
    """``(rows, warnings, seconds)`` of one default-pipeline fit."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    cats = {c: list("abcd") for c in df if c.startswith("c")}
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe = make_synthesis_pipeline(
            BooleanEncoder(categories=cats, epsilon="auto", random_state=seed),
            ProjectedGaussianRelease(epsilon=eps, delta=1e-6, random_state=seed),
        ).fit(df)
        rows = pipe.sample(len(df), random_state=seed + 1)
    return rows, caught, time.perf_counter() - t0


def named(caught, columns):
    """The columns that the warnings ``caught`` name (quoted in them)."""
    text = " ".join(str(w.message) for w in caught)
    return {c for c in columns if re.search(rf"'{re.escape(c)}'", text)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, default=40)
    parser.add_argument("--eps", default="0.33,1")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    print(
        "| ε | seed | integer columns past 0-9 (unnamed) | their rows past 0-9, "
        "mean / max | normals' std ratio, min / mean | normals' KS, mean / max "
        "| normals' largest missing share | warnings | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    totals = {}
    for eps in [float(v) for v in args.eps.split(",")]:
        for seed in range(args.seeds):
            df = table(args.columns, seed)
            rows, caught, secs = fit(df, eps, seed)
            said = named(caught, df.columns)
            ints = [c for c in df if c.startswith("i")]
            past = {c: float(((rows[c] < 0) | (rows[c] > 9)).mean()) for c in ints}
            past = {c: v for c, v in past.items() if v > 0}
            zs = [c for c in df if c.startswith("z")]
            ratio = np.array([rows[c].std() / df[c].std() for c in zs])
            # a complete float column may come back with a few missing cells
            # (its dtype can hold them: a missing level kept on noise)
            ks = np.array(
                [stats.ks_2samp(rows[c].dropna(), df[c]).statistic for c in zs]
            )
            missing = max(float(rows[c].isna().mean()) for c in zs)
            kinds = sorted({w.category.__name__ for w in caught})
            shares = list(past.values()) or [0.0]
            unnamed = len([c for c in past if c not in said])
            total = totals.setdefault(eps, [0, 0, 0])
            total[0] += len(past)
            total[1] += unnamed
            total[2] += len(ints)
            print(
                f"| {eps:g} | {seed} | {len(past)} of {len(ints)} ({unnamed}) "
                f"| {np.mean(shares):.3f} / {max(shares):.3f} "
                f"| {ratio.min():.2f} / {ratio.mean():.2f} "
                f"| {ks.mean():.3f} / {ks.max():.3f} | {missing:.3f} "
                f"| {', '.join(kinds)} "
                f"| {secs:.0f} |"
            )
    for eps, (past, unnamed, of) in totals.items():
        print(
            f"\nε = {eps:g}: {past} of {of} integer column-fits past 0-9, "
            f"{unnamed} of them unnamed"
        )


if __name__ == "__main__":
    main()
