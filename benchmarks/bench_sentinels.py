"""Sentinel codes in numeric columns: what comes back, and the remedy.

Survey files code "refused" or "not asked" as a number: an income of
999,999, an age of -9. A private numeric domain can keep a point mass as
its own value only where PrivTree's tree reaches a finest leaf there (the
public candidates 0 and 100 are cut out for it; ``doc/privacy/encoder.md``,
"Point masses at public candidates"); a code elsewhere is a heap far from
the column's body, under the depth bias at small budgets. This measures,
on a synthetic table of ``n`` rows (a rounded log-normal income with 8 % at
999,999, a uniform age 18-89 with 5 % at -9, a two-level category), over
seeds, with the default pipeline (``BooleanEncoder()`` and
``ProjectedGaussianRelease(epsilon=ε, delta=1e-6)``):

* ``as is``: the share of synthetic rows exactly at each code, and in the
  gap between the code and the body that the data never holds (income in
  (200,000, 999,999), age in (-9, 18));
* ``codes to missing`` (``df.replace({"income": {999999: np.nan}, "age":
  {-9: np.nan}})``, where a code means "no value"): the rows' missing share
  against the real code share, and the same gaps;
* ``declared`` (``BooleanEncoder(point_masses={"income": [999999], "age":
  [-9]})``, where the code is a value to keep): the same shares.

Run::

    PYTHONPATH=. python -m benchmarks.bench_sentinels --eps 1,0.3 --seeds 10

Results: ``benchmarks/results/bench_sentinels.md``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

INCOME_CODE, AGE_CODE = 999999.0, -9.0


def table(n, seed):
    rng = np.random.default_rng(seed)
    income = rng.lognormal(10.5, 0.6, n).round()
    income[rng.random(n) < 0.08] = INCOME_CODE
    age = rng.integers(18, 90, n).astype(float)
    age[rng.random(n) < 0.05] = AGE_CODE
    return pd.DataFrame({"income": income, "age": age, "g": rng.choice(["a", "b"], n)})


def fit_sample(df, eps, seed, point_masses=None):
    from benchmarks._harness import sample_default_pipeline

    out, caught = sample_default_pipeline(df, eps, seed, point_masses=point_masses)
    named = any(("income" in str(w.message) or "age" in str(w.message)) for w in caught)
    return out, named


def measure(out):
    i, a = out["income"], out["age"]
    return {
        "income at code": float((i == INCOME_CODE).mean()),
        "income in gap": float(((i > 200000) & (i < INCOME_CODE)).mean()),
        "income missing": float(i.isna().mean()),
        "age at code": float((a == AGE_CODE).mean()),
        "age in gap": float(((a > AGE_CODE) & (a < 18)).mean()),
        "age missing": float(a.isna().mean()),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eps", default="1,0.3")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--rows", type=int, default=5000)
    args = ap.parse_args(argv)
    print(
        f"{args.rows} rows; real: income 8 % at {INCOME_CODE:.0f}, "
        f"age 5 % at {AGE_CODE:.0f}"
    )
    print(
        "| arm | ε | income at code | income in gap | income missing "
        "| age at code | age in gap | age missing | fits warned | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for eps in [float(e) for e in args.eps.split(",")]:
        for arm in ("as is", "codes to missing", "declared"):
            rows, warned, t0 = [], 0, time.perf_counter()
            masses = None
            if arm == "declared":
                masses = {"income": [INCOME_CODE], "age": [AGE_CODE]}
            for seed in range(args.seeds):
                df = table(args.rows, seed)
                if arm == "codes to missing":
                    df = df.replace(
                        {"income": {INCOME_CODE: np.nan}, "age": {AGE_CODE: np.nan}}
                    )
                out, named = fit_sample(df, eps, seed, masses)
                rows.append(measure(out))
                warned += named
            mean = {k: np.mean([r[k] for r in rows]) for k in rows[0]}
            cells = " | ".join(f"{100 * v:.2f} %" for v in mean.values())
            print(
                f"| {arm} | {eps:g} | {cells} | {warned}/{args.seeds} "
                f"| {time.perf_counter() - t0:.0f} |"
            )


if __name__ == "__main__":
    main()
