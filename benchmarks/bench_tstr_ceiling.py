"""Where a table's train-on-synthetic gap comes from, beside the noise-free
ceiling (``benchmarks/results/bench_tstr_ceiling.md``).

Run: ``python -m benchmarks.bench_tstr_ceiling TABLE [--eps 1e6,1,3]
[--seeds 2] [--variants default,n_bins=20,n_bins=40,independent,uncapped]``.

Refits the suite's ``auto`` pipeline (:func:`benchmarks.bench_suite.fit_ours`:
the same split, encoder, release, δ, ``sample(n_train)``; ε = 1e6 is the
``ceiling`` arm) with one change per variant -- ``n_bins=K``: the encoder's
coarse bins per numeric column; ``independent``:
``BooleanEncoder(within_bins="independent")`` instead of the copula;
``uncapped``: ``ProjectedGaussianRelease(max_model_rows=None)``; ``target``:
``target=`` the table's model target -- and prints the suite's TSTR, the
real rows' round trip through the fitted encoder, and, per numeric column,
the TSTR with only that column replaced by its round trip (and the
round trip's correlation with the real values).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

from benchmarks import bench_suite as bs
from benchmarks._suite_ceiling import roundtrip


def _fit(ctx, eps, seed, variant):
    options, rule, kw = dict(ctx["options"]), "auto", {}
    if variant.startswith("n_bins="):
        options["n_bins"] = int(variant.split("=")[1])
    elif variant == "independent":
        options["within_bins"] = "independent"
    elif variant == "uncapped":
        kw["max_model_rows"] = None
    elif variant == "target":
        rule = "auto-target"
    return bs.fit_ours(
        ctx["train"], ctx["cats"], options, eps, seed, rule,
        target=ctx["target"], keep_pipe=True, release=kw,
    )  # fmt: skip


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench_tstr_ceiling", description=__doc__)
    ap.add_argument("table")
    ap.add_argument("--eps", default="1e6,1,3")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--variants", default="default")
    ap.add_argument("--columns", action="store_true", help="per-column round trip")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    ctx = bs.context(args.table)
    train, test, target = ctx["train"], ctx["test"], ctx["target"]
    print(f"{args.table}: real-trained {bs.tstr(train, test, train, target)[1]:.3f}")
    for variant in args.variants.split(","):
        for eps in (float(e) for e in args.eps.split(",")):
            scores, trips, chose = [], [], []
            for seed in range(args.seeds):
                syn, info = _fit(ctx, eps, seed, variant)
                back = roundtrip(info["pipe"], train)
                scores.append(bs.tstr(syn, test, train, target)[0])
                trips.append(bs.tstr(back, test, train, target)[0])
                chose.append(info["chose"])
                if args.columns:
                    for c in train.columns:
                        if c in ctx["cats"]:
                            continue
                        one = train.copy()
                        one[c] = back[c].to_numpy()
                        x = pd.to_numeric(train[c]).astype(float).fillna(0)
                        y = pd.to_numeric(back[c]).astype(float).fillna(0)
                        print(
                            f"  {variant} eps {eps:g} seed {seed}: only {c} round"
                            f" trip {bs.tstr(one, test, train, target)[0]:.3f}"
                            f" (corr {np.corrcoef(x, y)[0, 1]:.2f})"
                        )
            print(
                f"{variant} eps {eps:g}: TSTR "
                + " / ".join(f"{s:.3f}" for s in scores)
                + f" (mean {np.mean(scores):.3f}), round trip "
                + " / ".join(f"{s:.3f}" for s in trips)
                + f", chose {'/'.join(chose)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
