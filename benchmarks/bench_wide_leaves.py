"""Where a numeric column's rows go inside its kept PrivTree leaves: per
leaf of the released fine histogram its kept noisy count, the real rows in
it and the synthetic rows decoded into it, for the suite's ``auto`` fits at
each PrivTree threshold ``θ = κ b``.

    PYTHONPATH=. python -m benchmarks.bench_wide_leaves --table loans \\
        --eps 0.3 --seeds 3 --scales 0,4 \\
        --columns account_never_delinq_percent,paid_total

Per (seed, κ, column): the rows' std ratio (synthetic over held-out, as
``bench_suite``), whether a warning named the column, the Laplace scale
``b``, the cap, the real and synthetic quantiles (1, 10, 50, 90, 99 %),
the tail model :func:`skdp_synth.preprocessing._decoding._tail_models`
gives each outer leaf, and one line per leaf that is kept or holds a real
row: its edges, width in ``t``, kept noisy count, real rows, synthetic
rows. The real rows are not released: they only score.

Findings (``benchmarks/results/bench_wide_leaves.md``): the columns that
collapse at ``θ = 4 b`` with their rows inside the cap have an outermost
leaf 2-4 wide in ``t`` (an unsplit depth-0 cell, ``[4096, 16385)``,
``[16, 256)``) that the decoder fills from its inner edge at the inner
neighbour's density; what the leaf holds (rows at its inner edge, or a
power-law tail across it) is not released.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from benchmarks.bench_suite import context, numeric_scores
from benchmarks.bench_trunc_tail import fit
from skdp_synth.preprocessing import _numeric_domain as nd
from skdp_synth.preprocessing._decoding import _tail_models
from skdp_synth.preprocessing._numeric_domain import _t

Q = [1, 10, 50, 90, 99]


def describe(ctx, spec, syn, std, named):
    """Lines describing one numeric column's kept leaves (module docstring)."""
    h = spec.fine
    e, c = np.asarray(h.edges, float), np.asarray(h.counts, float)
    real = pd.to_numeric(ctx["train"][spec.name], errors="coerce").dropna()
    real = real.to_numpy(dtype=float)
    s = pd.to_numeric(syn[spec.name], errors="coerce").dropna().to_numpy(dtype=float)
    idx = np.clip(np.searchsorted(e, real, "right") - 1, 0, c.size - 1)
    true = np.bincount(idx, minlength=c.size)
    lines = [
        f"{spec.name}: std ratio {std:.2f}{' (named)' if named else ''}, "
        f"b {h.scale:.1f}, cap [{h.bounds[0]:.6g}, {h.bounds[1]:.6g})",
        f"  real q{Q}: {np.percentile(real, Q).round(2).tolist()}",
        f"  synthetic: {np.percentile(s, Q).round(2).tolist() if s.size else []}",
        f"  tail models: {_tail_models(h, *h.bounds)}",
    ]
    for j in np.flatnonzero((c > 0) | (true > 0)):
        n_syn = int(((s >= e[j]) & (s < e[j + 1])).sum())
        lines.append(
            f"  [{e[j]:.6g}, {e[j + 1]:.6g}) t-width {_t(e[j + 1]) - _t(e[j]):.2f}"
            f" kept {c[j]:.0f} real {true[j]} synthetic {n_syn}"
        )
    return lines


def run(table, eps, seeds, scales, columns):
    ctx = context(table)
    saved = nd.PRIVTREE_THETA_SCALES
    try:
        for seed in seeds:
            for k in scales:
                nd.PRIVTREE_THETA_SCALES = float(k)
                pipe, syn, named = fit(ctx, eps, seed)
                std = numeric_scores(syn, ctx["test"], ctx["cats"])["std"]
                print(f"== {table} eps={eps} seed={seed} theta={k} b")
                for spec in pipe[0].specs_:
                    if spec.name in columns and spec.fine is not None:
                        ratio = std[spec.name]
                        for line in describe(ctx, spec, syn, ratio, spec.name in named):
                            print(line)
    finally:
        nd.PRIVTREE_THETA_SCALES = saved


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", default="loans")
    p.add_argument("--eps", type=float, default=0.3)
    p.add_argument("--seeds", default="3", help="comma-separated seeds")
    p.add_argument("--scales", default="0,4")
    p.add_argument("--columns", default="account_never_delinq_percent,paid_total")
    a = p.parse_args(argv)
    seeds = [int(v) for v in a.seeds.split(",")]
    run(a.table, a.eps, seeds, a.scales.split(","), a.columns.split(","))


if __name__ == "__main__":
    main()
