"""The measurements behind ``selection="auto"``'s constants.

``python -m benchmarks.bench_auto_rules KIND --table T[:k] --eps E [--seeds S]``
on the real tables of ``benchmarks/bench_selection.py`` (80/20 split,
δ = 1e-6, TV of ``sample(n)`` against the 80 %); ``T:k`` keeps the first
``k`` columns of Caravan, or ``k`` random rows of another table. KIND:

* ``shares`` -- MST at the paper's thirds against
  ``ReleaseRules.auto_mst_shares``, on paired seeds (``selection="mst"``
  with ``ReleaseRules.selection_shares`` replaced);
* ``target --target COL`` -- train-on-synthetic/test-on-real of a model for
  ``COL`` with ``target=COL``, for ``--rules`` (default auto, mst, aim;
  ``untargeted``: the default release without ``target``);
* ``edges`` -- what auto chooses (and the tree's edges) for each
  ``ReleaseRules.auto_edge_threshold`` in ``--thresholds`` (the TV ``D_tree``
  a tree's pair loses unmeasured in auto's estimate; 1e9: always the whole
  tree). The measurements in its results file were taken with the earlier
  rule (the 1-way tables when fewer than half a tree's edges qualified).
* ``step`` -- the default release with the generator's descent examining
  each of ``--steps`` rows per step (``generator.BATCH_ROWS``, patched;
  16384 was the earlier step): TV1/TV2/TV3 and fit + sample
  seconds, same seeds for every step.
* ``oneway`` -- the default release with the 1-way tables weighted each of
  ``--weights`` in the pairs' allocation (``ReleaseRules.one_way_weight``,
  replaced; 4 is the default, 1 unweighted): TV1/TV2/TV3, same seeds for
  every weight.

The constants were measured with: ``target --rules auto,none,mst`` for the
``target=`` rule of ``selection="auto"`` (e.g. ``--table diamonds --eps 0.3
--target price``); ``step --steps 16384,4096`` for the descent's step;
``oneway --weights 1,4,16,64`` on the three 12-column tables at ε = 0.3, 1
and 3 (benchmarks/README: weight 16 cuts TV1 by 12-43 % and costs TV2 3-7 %
at ε = 1; not adopted); then ``oneway --weights 1,4 --seeds 6`` (weight 4
adopted) and ``target --rules auto,untargeted --seeds 4`` for the target's
shrunk triples.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

from benchmarks._categorical import tv
from benchmarks.bench_selection import DELTA, load, split, tstr


def table(spec):
    name, _, k = spec.partition(":")
    df, cats = load(name)
    if name == "caravan" and k:
        cols = list(df.columns[: int(k)])
        df, cats = df[cols], {c: cats[c] for c in cols}
    elif k:
        df = df.sample(n=int(k), random_state=0).reset_index(drop=True)
    return split(df), cats


def fit(train, cats, eps, seed, **kw):
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories=cats),
        ProjectedGaussianRelease(epsilon=eps, delta=DELTA, random_state=seed, **kw),
    ).fit(train)
    syn = pd.DataFrame(pipe.sample(len(train), random_state=seed))
    return syn[list(train.columns)], pipe[-1]


def main(argv=None):
    import dataclasses

    from skdp_synth import ProjectedGaussianRelease as PGR

    def use(**changes):
        # the release's tuning is one frozen object: swap in a changed copy
        PGR._rules = dataclasses.replace(PGR._rules, **changes)

    defaults = PGR._rules

    ap = argparse.ArgumentParser(prog="bench_auto_rules", description=__doc__)
    ap.add_argument("kind", choices=["shares", "target", "edges", "step", "oneway"])
    ap.add_argument("--table", default="nass_cds")
    ap.add_argument("--eps", type=float, default=0.1)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--target")
    ap.add_argument("--rules", default="auto,mst,aim")
    ap.add_argument("--thresholds", default="1e-9,0.15,1e9")
    ap.add_argument("--steps", default="16384,4096")
    ap.add_argument("--weights", default="1,16")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    warnings.simplefilter("ignore")
    (train, test), cats = table(args.table)
    seeds = range(args.seeds)
    head = f"{args.table}, eps={args.eps:g}"
    if args.kind == "shares":
        paper = dict(defaults.selection_shares["mst"])
        auto = dict(defaults.auto_mst_shares)
        for label, shares in (("paper 1/3", paper), ("auto_mst_shares", auto)):
            use(selection_shares={**defaults.selection_shares, "mst": dict(shares)})
            tv2 = [
                tv(train, fit(train, cats, args.eps, s, selection="mst")[0], 2)
                for s in seeds
            ]
            print(
                f"{head}, MST {label}: TV2 mean {np.mean(tv2):.4f}, per seed "
                + " ".join(f"{x:.4f}" for x in tv2),
                flush=True,
            )
        PGR._rules = defaults
    elif args.kind == "target":
        for rule in args.rules.split(","):
            kw = {} if rule in ("auto", "untargeted") else {"selection": rule}
            if rule != "untargeted":
                kw["target"] = args.target
            runs = [fit(train, cats, args.eps, s, **kw) for s in seeds]
            auc = [tstr(syn, test, cats, args.target) for syn, _ in runs]
            tv2 = np.mean([tv(train, syn, 2) for syn, _ in runs])
            chose = "/".join(sorted({est.selection_ for _, est in runs}))
            print(
                f"{head}, target={args.target}, {rule} (chose {chose}): TSTR mean "
                f"{np.mean(auc):.3f}, per seed "
                + " ".join(f"{x:.3f}" for x in auc)
                + f"; TV2 {tv2:.4f}",
                flush=True,
            )
    elif args.kind == "step":
        import skdp_synth.generator._generator as generator

        default = generator.BATCH_ROWS
        for step in (int(x) for x in args.steps.split(",")):
            generator.BATCH_ROWS = step
            out = []
            for s in seeds:
                t0 = time.perf_counter()
                syn, _ = fit(train, cats, args.eps, s)
                secs = time.perf_counter() - t0
                out.append([tv(train, syn, k) for k in (1, 2, 3)] + [secs])
            m = np.mean(out, axis=0)
            print(
                f"{head}, {step} rows per step: TV1 {m[0]:.5f} TV2 {m[1]:.5f} "
                f"TV3 {m[2]:.5f}, fit + sample {m[3]:.2f} s",
                flush=True,
            )
        generator.BATCH_ROWS = default
    elif args.kind == "oneway":
        for weight in (float(x) for x in args.weights.split(",")):
            use(one_way_weight=weight)
            m = np.mean(
                [
                    [tv(train, syn, k) for k in (1, 2, 3)]
                    for syn, _ in (fit(train, cats, args.eps, s) for s in seeds)
                ],
                axis=0,
            )
            print(
                f"{head}, one_way_weight={weight:g}: TV1 {m[0]:.5f} TV2 {m[1]:.5f} "
                f"TV3 {m[2]:.5f}",
                flush=True,
            )
        PGR._rules = defaults
    else:
        for thr in (float(x) for x in args.thresholds.split(",")):
            use(auto_edge_threshold=thr)
            for s in seeds:
                syn, est = fit(train, cats, args.eps, s)
                res = getattr(est, "_selection_result", None)
                edges = len(res.chosen) if res is not None else "-"
                print(
                    f"{head}, auto_edge_threshold={thr:g}, seed {s}: "
                    f"{est.selection_} ({edges} tables chosen), TV1 "
                    f"{tv(train, syn, 1):.4f} TV2 {tv(train, syn, 2):.4f}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
