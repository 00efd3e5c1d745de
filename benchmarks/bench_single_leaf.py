"""Numeric domains of one kept leaf: does the release say rows lie outside?

On the fits of ``benchmarks/bench_suite.py``'s ``auto`` (TUNE half), per
numeric column-fit: the domain's kept leaves (its fine histogram as
released, before a pipeline reconciles it), the rows the release counts
with a value (``n̂`` less the release's estimate of the missing level where
the rows keep it)
less the kept leaves' noisy counts, in sds of
``sqrt(2 m b² + σ_miss² + σ_∅²)`` and as a share of those rows; whether
:func:`skdp_synth.preprocessing._single_leaf.single_leaf_reason` names it
and whether any warning names it; and, not released (scores only), the
std ratio against the held-out rows and the same without the rows the
release cannot see (``bench_suite.numeric_scores``).
(``benchmarks/results/bench_single_leaf.md``.)

    PYTHONPATH=. python -m benchmarks.bench_single_leaf --tables \\
        credit,hmda,cps1988,acs12,attrition,movies,storms,benefits,chile,fertil2 \\
        --eps 1,0.3 --seeds 4 --out A.jsonl
    PYTHONPATH=. python -m benchmarks.bench_single_leaf --summary A.jsonl B.jsonl
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np


def columns(tables, eps_list, seeds, out):
    """Fit ``auto`` on each table, ε and seed; append one JSON line per
    numeric column-fit to ``out``."""
    import skdp_synth.preprocessing._decoding as decoding
    from benchmarks import bench_suite as bs

    original = decoding.degenerate_reasons
    seen = {}

    def recorded(spec, estimates, n_estimate, rows_missing, missing_kept, *args, **kw):
        domain, n_sd = kw.get("domain"), kw.get("n_sd")
        reasons = original(
            spec, estimates, n_estimate, rows_missing, missing_kept, *args, **kw
        )
        h = spec.fine if domain is None else domain
        if spec.kind != "numeric" or h is None or estimates is None or not n_estimate:
            return reasons
        counts = np.asarray(h.counts, dtype=np.float64)
        kept = counts > 0
        # the missing level counts where the rows keep it (single_leaf_reason)
        kept_missing = spec.missing and bool(missing_kept)
        miss, miss_sd = estimates[spec.n_levels] if kept_missing else (0.0, 0.0)
        rows = float(n_estimate) - max(float(miss), 0.0)
        m = int(kept.sum())
        var = 2 * max(m, 1) * float(h.scale) ** 2 + float(miss_sd) ** 2
        var += float(n_sd or 0.0) ** 2
        lost = rows - float(counts[kept].sum())
        seen[str(spec.name)] = {
            "kept_leaves": m,
            "z": lost / math.sqrt(var),
            "share": lost / rows,
            "single": any(r.startswith("one kept leaf") for r in reasons),
            "other_reasons": sum(not r.startswith("one kept leaf") for r in reasons),
        }
        return reasons

    decoding.degenerate_reasons = recorded
    try:
        with open(out, "a") as f:
            for table in tables:
                ctx = bs.context(table)
                for eps in eps_list:
                    for seed in range(seeds):
                        seen.clear()
                        syn, info = bs.fit_ours(
                            ctx["train"], ctx["cats"], ctx["options"], eps, seed, "auto"
                        )
                        scores = bs.numeric_scores(
                            syn, ctx["test"], ctx["cats"], info["scales"],
                            len(ctx["train"]),
                        )  # fmt: skip
                        named = {c for w in info["warnings"] for c in w["columns"]}
                        for col, rec in seen.items():
                            if col not in scores["std"]:
                                continue
                            rec.update(
                                table=table, eps=eps, seed=seed, column=col,
                                std=scores["std"][col],
                                std_seen=scores["std_seen"].get(col),
                                named=col in named,
                            )  # fmt: skip
                            f.write(json.dumps(rec) + "\n")
                            f.flush()
    finally:
        decoding.degenerate_reasons = original


def summary(paths):
    """Print the column-fits of one kept leaf and what named them."""
    rows = [json.loads(line) for p in paths for line in open(p)]
    single = [r for r in rows if r["kept_leaves"] == 1]
    print(f"{len(rows)} numeric column-fits; {len(single)} of one kept leaf")
    print()
    print("| table | ε | seed | column | sds | share | named by this rule |"
          " by another | std ratio | without unseen rows |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in single:
        seen = r["std_seen"]
        seen = "n/a" if seen is None else f"{seen:.3f}"
        if r["single"] or not r["other_reasons"]:
            print(
                f"| {r['table']} | {r['eps']:g} | {r['seed']} | {r['column']} |"
                f" {r['z']:.2f} | {r['share']:.2f} | {r['single']} |"
                f" {r['other_reasons'] > 0} | {r['std']:.3f} |"
                f" {seen} |"
            )
    alone = [r for r in rows if r["single"] and not r["other_reasons"]]
    silent = [r for r in alone if not 0.5 <= r["std"] <= 2]
    print()
    print(
        f"named by this rule alone: {len(alone)} ({len(silent)} with a std ratio"
        f" outside [0.5, 2], {len(alone) - len(silent)} in band)"
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tables")
    p.add_argument("--eps", default="1,0.3")
    p.add_argument("--seeds", type=int, default=4)
    p.add_argument("--out")
    p.add_argument("--summary", nargs="+", metavar="JSONL")
    args = p.parse_args(argv)
    if args.tables:
        eps = [float(e) for e in args.eps.split(",")]
        columns(args.tables.split(","), eps, args.seeds, args.out)
    if args.summary:
        summary(args.summary)


if __name__ == "__main__":
    main()
