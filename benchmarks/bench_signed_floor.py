"""A signed column with a point mass at 0: do its negative rows come back?

A balance that is often exactly 0 and otherwise positive or negative. Where
the private domain keeps the 0 as the column's lower limit (no leaf below
it kept), the encoder clips every negative row up into the bottom bin; the
release measures that bin again, and where its estimate exceeds the 0's
leaf by more than ``_tail_past_cap.FLOOR_AT_LIMIT_Z`` sds the rows are
placed below the 0 (``place_capped_floor``); else the column is named
(``capped_floor_reason``). The table: ``n`` rows, 40 % (``1 - 2 share``)
at 0, ``share`` uniform on -5,000..-100 and ``share`` on 100..5,000, rounded;
a three-level category beside it. The default pipeline
(``BooleanEncoder(epsilon="auto")`` and
``ProjectedGaussianRelease(epsilon=ε, delta=1e-6)``), seeds ``0..S-1``; per
fit the domain's lower cap, the share of negative rows against the real
one, the KS distance to the real column, the std ratio and whether a
``DegenerateColumnWarning`` names the column.

Run::

    PYTHONPATH=. python -m benchmarks.bench_signed_floor --eps 0.1,0.3 --seeds 10

Results: ``benchmarks/results/bench_suite.md``, "Negative rows below a point
mass at 0".
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp


def table(n=4000, share=0.3, seed=0):
    rng = np.random.default_rng(seed)
    k = int(share * n)
    bal = np.concatenate(
        [np.zeros(n - 2 * k), -rng.uniform(100, 5000, k), rng.uniform(100, 5000, k)]
    ).round()
    rng.shuffle(bal)
    return pd.DataFrame({"balance": bal, "g": rng.choice(["a", "b", "c"], n)})


def fit(df, eps, seed):
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.exceptions import DegenerateColumnWarning
    from skdp_synth.preprocessing import BooleanEncoder

    enc = BooleanEncoder(
        categories={"g": ["a", "b", "c"]}, epsilon="auto", random_state=seed
    )
    rel = ProjectedGaussianRelease(epsilon=eps, delta=1e-6, random_state=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe = make_synthesis_pipeline(enc, rel).fit(df)
    named = any(
        issubclass(w.category, DegenerateColumnWarning) and "balance" in str(w.message)
        for w in caught
    )
    rows = pd.to_numeric(pipe.sample(len(df), random_state=seed)["balance"])
    rows = rows.dropna().to_numpy(dtype=float)
    return pipe[0].specs_[0].fine.cap[0], rows, named


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eps", default="0.1,0.3")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--rows", type=int, default=4000)
    ap.add_argument("--share", type=float, default=0.3)
    args = ap.parse_args(argv)
    df = table(args.rows, args.share)
    real = df["balance"].to_numpy(dtype=float)
    print("| ε | seed | lower cap | negative rows (real) | KS | std ratio | named |")
    print("|---|---|---|---|---|---|---|")
    for eps in (float(e) for e in args.eps.split(",")):
        for seed in range(args.seeds):
            lo, rows, named = fit(df, eps, seed)
            print(
                f"| {eps:g} | {seed} | {lo:.4g} | {np.mean(rows < 0):.3f} "
                f"({np.mean(real < 0):.3f}) | {ks_2samp(rows, real).statistic:.3f} "
                f"| {rows.std() / real.std():.2f} | {'yes' if named else 'no'} |"
            )


if __name__ == "__main__":
    main()
