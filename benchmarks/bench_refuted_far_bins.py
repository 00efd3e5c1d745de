"""Few-valued integer columns and the far noise leaves of their private domains.

A 0/1 flag or a small code stored as an integer is a numeric column with a
private domain. PrivTree's ~50 leaves over the root ``[-2^40, 2^40]`` hold
Laplace counts; one in three columns has an empty leaf above 4 ``b``, and
now and then a group of them is kept far from the data as the column's top
(or bottom) bin. Where the model's rows use that bin, the decoder draws them
there: a 0/1 column came back with 0.2 % of its rows at 5.5e8-8.2e8.
:func:`skdp_synth.preprocessing._bin_mass.refuted_far_bin` finds an outer
bin whose kept leaves are one far group that the release's estimate of the
bin refutes (``REFUTED_Z`` sds); the pipeline drops it with its rows where
the estimate is also under the support test.

The table (``table(seed)``): 3,000 rows; a categorical and a normal column,
and the integer columns ``flag`` (0/1, p = 0.5), ``rare`` (0/1, p = 0.1),
``code`` (0-4, uniform) and ``count`` (Poisson(2)).

Per ε, arm (the rule on, or off: the parent's behaviour) and column family:
the fits (of ``--seeds``) with a row outside the column's real range, the
largest such value, the std ratios outside [0.5, 2] with no warning naming
the column, and the mean KS distance to the real column.

Run: ``python -m benchmarks.bench_refuted_far_bins --eps 1,0.3 --seeds 40``.
Results: ``benchmarks/results/bench_refuted_far_bins.md``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

from benchmarks.bench_far_groups import _ks

N_ROWS = 3000
COLUMNS = ("flag", "rare", "code", "count")


def table(seed):
    """The synthetic table (module docstring)."""
    rng = np.random.default_rng(100 + seed)
    n = N_ROWS
    return pd.DataFrame(
        {
            "a": rng.choice(["x", "y", "z"], n),
            "num": rng.normal(50.0, 10.0, n),
            "flag": rng.integers(0, 2, n),
            "rare": (rng.random(n) < 0.1).astype(np.int64),
            "code": rng.integers(0, 5, n),
            "count": rng.poisson(2.0, n),
        }
    )


def fit_one(seed, eps):
    """``{column: (outside share, largest |outside value|, std ratio, named,
    ks)}`` of one fit of the default pipeline."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    df = table(seed)
    enc = BooleanEncoder(categories={"a": ["x", "y", "z"]}, random_state=seed)
    rel = ProjectedGaussianRelease(epsilon=eps, delta=1e-6, random_state=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe = make_synthesis_pipeline(enc, rel).fit(df)
        syn = pipe.sample(len(df), random_state=seed + 1)
    text = " ".join(str(w.message) for w in caught)
    out = {}
    for c in COLUMNS:
        real = df[c].to_numpy(dtype=np.float64)
        rows = pd.to_numeric(syn[c], errors="coerce").to_numpy(dtype=np.float64)
        rows = rows[np.isfinite(rows)]
        off = rows[(rows < real.min()) | (rows > real.max())]
        far = float(np.max(np.abs(off))) if off.size else 0.0
        ratio = float(np.std(rows, ddof=1) / np.std(real, ddof=1))
        out[c] = (
            off.size / max(rows.size, 1),
            far,
            ratio,
            repr(c) in text,
            _ks(rows, real),
        )
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--eps", default="1,0.3")
    p.add_argument("--seeds", type=int, default=40)
    args = p.parse_args(argv)
    from skdp_synth import _pipeline_levels

    print(
        "| ε | rule | fits | fits with rows outside the real range | largest such "
        "value | std ratio outside [0.5, 2], unnamed | mean KS |"
    )
    print("|---|---|---|---|---|---|---|")
    for eps in [float(e) for e in args.eps.split(",")]:
        for arm in ("off", "on"):
            _pipeline_levels.REFUTED_FAR_BINS = arm == "on"
            res = [fit_one(seed, eps) for seed in range(args.seeds)]
            vals = [v for r in res for v in r.values()]
            outside = sum(any(v[0] > 0 for v in r.values()) for r in res)
            far = max(v[1] for v in vals)
            silent = sum(not v[3] and not 0.5 <= v[2] <= 2 for v in vals)
            ks = np.mean([v[4] for v in vals])
            print(
                f"| {eps:g} | {arm} | {len(res)} | {outside} | {far:.3g} | {silent} "
                f"| {ks:.4f} |",
                flush=True,
            )
    _pipeline_levels.REFUTED_FAR_BINS = True


if __name__ == "__main__":
    main()
