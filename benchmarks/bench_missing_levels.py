"""Learned missing levels: invented NaN and lost missing values.

A synthetic table of 5,000 rows: three complete float columns (lognormal,
normal, gamma), a categorical column, and a float column ``d`` with a given
missing rate. ``make_synthesis_pipeline(BooleanEncoder(categories=...),
ProjectedGaussianRelease(epsilon=1))`` learns every numeric domain
privately; each float column has a missing level (its dtype can hold NaN;
it was decided on the encoder's noisy count before), and the pipeline
drops a level the release's own estimate does not support
(``MISSING_SUPPORT_Z``). Reported per missing rate of ``d``, over ``--seeds``
fits, with the drop (``drop``) and without it (``keep``: the rule switched
off by ``LEVEL_SUPPORT_Z = -inf``):

* complete columns given a missing level by the encoder, and those with any
  NaN in ``sample(n)`` (invented missing values);
* fits where ``d``'s level was dropped, and the mean and worst absolute error
  of ``d``'s synthetic missing rate (percentage points).

Run::

    .venv/bin/python -m benchmarks.bench_missing_levels [--seeds 30] \
        [--rates 0,0.01,0.02]
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np
import pandas as pd

from benchmarks._harness import markdown_table


def table(n, rate, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.lognormal(3, 1, n),
            "b": rng.normal(50, 10, n),
            "c": rng.gamma(2, 3, n),
            "g": rng.choice(list("xyz"), n),
        }
    )
    X["d"] = X["b"] + rng.normal(0, 5, n)
    X.loc[rng.random(n) < rate, "d"] = np.nan
    return X


def run(n, rate, seeds, drop):
    import dataclasses

    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    saved = ProjectedGaussianRelease._rules
    if not drop:
        ProjectedGaussianRelease._rules = dataclasses.replace(
            saved, level_support_z=-math.inf
        )
    X = table(n, rate)
    truth = float(X["d"].isna().mean())
    levels = invented = d_dropped = 0
    errors = []
    try:
        for seed in range(seeds):
            pipe = make_synthesis_pipeline(
                BooleanEncoder(categories={"g": list("xyz")}, random_state=seed),
                ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=seed),
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pipe.fit(X)
                syn = pipe.sample(n, random_state=seed)
            specs = {s.name: s for s in pipe[0].specs_}
            for c in "abc":
                levels += bool(specs[c].missing)
                invented += bool(syn[c].isna().any())
            d_dropped += "d" in pipe.missing_dropped_
            errors.append(100 * abs(float(syn["d"].isna().mean()) - truth))
    finally:
        ProjectedGaussianRelease._rules = saved
    return {
        "d missing": rate,
        "rule": "drop" if drop else "keep",
        "complete cols with level": f"{levels}/{3 * seeds}",
        "complete cols with NaN": f"{invented}/{3 * seeds}",
        "d level dropped": f"{d_dropped}/{seeds}",
        "d rate err pp (mean)": float(np.mean(errors)),
        "d rate err pp (max)": float(np.max(errors)),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--rates", default="0,0.01,0.02")
    args = ap.parse_args(argv)
    rows = [
        run(args.n, float(r), args.seeds, drop)
        for r in args.rates.split(",")
        for drop in (False, True)
    ]
    print(markdown_table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
