"""Synthetic columns whose private numeric domain leaves them exploded.

Three columns, each alone among public-free noise columns, fitted with
``make_synthesis_pipeline(BooleanEncoder(), ProjectedGaussianRelease())``:

* ``latitude``: 42.0 + 0.06 Beta(3, 3) (2,300 rows, 30 normal(0, 1)
  columns, ε = 1) -- a float column far from 0 with a narrow spread;
* ``year``: integers 2003-2009 (2,400 rows, 10 other columns, ε = 0.5);
* ``momed``: years of schooling, normal(12, 2.5) rounded, 40 % at 12,
  stored as float (2,400 rows, 20 other columns, ε = 0.3).

For each seed: the rows' std over the data's, whether a warning named the
column (``degenerate_columns_``), the rows' missing share and the
released one. A fit is *silent* where the std ratio is outside [0.5, 2]
(or the rows' missing share is more than 3 released sds from 0) and the
column is not named. ``python -m benchmarks.bench_float_leaves latitude
--seeds 10``; results in ``benchmarks/results/bench_float_leaves.md``.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd


def table(kind):
    """``(frame, column, ε)`` of one synthetic table (module docstring)."""
    rng = np.random.default_rng(0)
    if kind == "latitude":
        n = 2300
        df = pd.DataFrame(
            {"x": 42.0 + 0.06 * rng.beta(3, 3, n)}
            | {f"c{i}": rng.normal(size=n) for i in range(30)}
        )
        return df, 1.0
    if kind == "year":
        n = 2400
        df = pd.DataFrame(
            {
                "x": rng.integers(2003, 2010, n),
                "age": np.clip(rng.normal(42, 11, n).round(), 18, 80).astype(int),
            }
            | {f"k{i}": rng.choice(list("abcde"), n) for i in range(7)}
            | {"lw": rng.normal(4.6, 0.35, n), "w": np.exp(rng.normal(4.6, 0.35, n))}
        )
        return df, 0.5
    n = 2400
    x = np.clip(np.round(rng.normal(12, 2.5, n)), 0, 18)
    x = np.where(rng.random(n) < 0.4, 12.0, x)
    df = pd.DataFrame(
        {"x": x}
        | {f"c{i}": rng.normal(size=n) for i in range(10)}
        | {f"k{i}": rng.choice(list("abc"), n) for i in range(10)}
    )
    return df, 0.3


def main(argv=None):
    from benchmarks._harness import fit_default_pipeline

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["latitude", "year", "momed"])
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args(argv)
    df, eps = table(args.kind)
    silent = 0
    for seed in range(args.seeds):
        pipe = fit_default_pipeline(df, eps, seed)
        rows = pipe.sample(len(df), random_state=seed)
        ratio = rows["x"].std() / df["x"].std()
        named = "x" in pipe.degenerate_columns_
        miss = float(rows["x"].isna().mean())
        share = pipe.missing_shares_.get("x")
        off = miss > 3 * share[1] if share else miss > 0
        bad = not named and (not 0.5 <= ratio <= 2.0 or off)
        silent += bad
        print(
            f"seed {seed}: std ratio {ratio:.2f} named {named} missing "
            f"{100 * miss:.1f} % released {share}{' SILENT' if bad else ''}"
        )
    print(f"silent {silent} of {args.seeds}")


if __name__ == "__main__":
    main()
