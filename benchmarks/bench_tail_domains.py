"""A numeric column's released domain against its data, per fit: where
the rows that carry its std went.

For each fit of ``benchmarks/bench_suite.py``'s ``auto`` pipeline (the
fit of ``benchmarks.bench_trunc_tail``) and each numeric column outside
the std band [0.5, 2] (or each column named with ``--columns``): the
domain's cap, the real training rows' quantiles and share past the cap,
the coarse bins with the release's estimates, and the fine histogram's
kept leaves as the domain released them (before the pipeline filled
emptied leaves from the release) and after, each beside the real rows it
holds. The real rows only score the release; nothing here feeds back
into a fit (``benchmarks/results/bench_tail_domains.md``).

    PYTHONPATH=. python -m benchmarks.bench_tail_domains --table loans \\
        --eps 1,0.3 --seeds 0,1,2,3,4 [--columns paid_total,paid_principal]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd


def _with_domains():
    """Record each numeric column's fine histogram before the pipeline's
    ``_reconcile_leaves`` fills it (``spec.name -> FineHistogram``)."""
    from skdp_synth import _pipeline_levels

    seen = {}
    reconcile = _pipeline_levels._reconcile_leaves

    def record(final, spec, j, dropped, *outer):
        seen[spec.name] = spec.fine
        return reconcile(final, spec, j, dropped, *outer)

    _pipeline_levels._reconcile_leaves = record
    return seen


def describe(ctx, eps, seed, columns=None):
    """Lines describing the released domain of the columns of one fit."""
    from benchmarks.bench_suite import numeric_scores
    from benchmarks.bench_trunc_tail import fit

    domains = _with_domains()
    pipe, syn, named = fit(ctx, eps, seed)
    std = numeric_scores(syn, ctx["test"], ctx["cats"])["std"]
    enc, final = pipe[0], pipe[-1]
    names = [str(n) for n in final.blocks_.names]
    lines = [f"== ε = {eps:g}, seed {seed}; named: {sorted(map(str, named))}"]
    for spec in enc.specs_:
        h = spec.fine
        if spec.kind != "numeric" or h is None or spec.name not in std:
            continue
        s = std[spec.name]
        if (columns and spec.name not in columns) or (not columns and 0.5 <= s <= 2):
            continue
        real = pd.to_numeric(ctx["train"][spec.name], errors="coerce")
        real = real.dropna().to_numpy(float)
        q = np.quantile(real, [0.0, 0.5, 0.9, 0.99, 1.0])
        lo, hi = h.bounds
        lines.append(
            f"{spec.name}: std ratio {s:.2f}, b {h.scale:.1f}, cap [{lo:.6g}, "
            f"{hi:.6g}); real q0/50/90/99/100 {np.round(q, 1).tolist()}, "
            f"past the cap {np.mean(real >= hi):.3f}"
        )
        k = spec.n_levels
        if str(spec.name) in names:
            j = names.index(str(spec.name))
            est = [final._one_way_level_estimate(j, v) for v in range(k)]
            bins = [
                f"[{a:.6g}, {b:.6g}) {'-' if e is None else f'{e[0]:.0f}'}"
                for a, b, e in zip(spec.levels[:-1], spec.levels[1:], est)
            ]
            lines.append("  bins (release): " + "; ".join(bins))
        pre = domains.get(spec.name, h)
        fe = np.asarray(h.edges, float)
        for a, b, c0, c1 in zip(fe[:-1], fe[1:], pre.counts, h.counts):
            n = int(((real >= a) & (real < b)).sum())
            if c0 > 0 or c1 > 0 or n > 0:
                lines.append(
                    f"  [{a:.6g}, {b:.6g}): kept {c0:.0f}, filled {c1:.0f}, real {n}"
                )
    return lines


def main(argv=None):
    from benchmarks.bench_suite import context

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--table", default="loans")
    p.add_argument("--eps", default="1,0.3")
    p.add_argument("--seeds", default="0,1,2,3,4")
    p.add_argument("--columns", default=None)
    a = p.parse_args(argv)
    ctx = context(a.table)
    cols = a.columns.split(",") if a.columns else None
    for eps in (float(v) for v in a.eps.split(",")):
        for seed in (int(v) for v in a.seeds.split(",")):
            print("\n".join(describe(ctx, eps, seed, cols)), flush=True)


if __name__ == "__main__":
    main()
