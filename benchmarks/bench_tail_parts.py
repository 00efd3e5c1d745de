"""A heavy tail in one wide leaf of a private numeric domain: the leaf's
rows decoded from a decay at its inner edge, or measured by the release in
parts (``preprocessing._wide_leaves.cut_tail_leaves``).

A synthetic table in the shape of openintro ``loans_full_schema``'s
``total_collection_amount_ever`` (8,000 rows: 86.5 % zeros, the rest
lognormal with median 412 and log-sd 1.5 under 16,384, integer), beside 49
other columns (normal, lognormal amounts, categories), as many as the suite
table has, so that the column's share of the budget is near its own. Per
seed: the default pipeline (``BooleanEncoder`` with a private domain,
``ProjectedGaussianRelease`` at ``EPS``, δ = 1e-6); its rows' std over the
real rows' (``ratio``); the mean of its rows at or above the inner edge of
the outermost tail leaf of the fine histogram they were decoded from
against the real rows' there (the part of the column that leaf's decoding
decides); whether a ``DegenerateColumnWarning`` named the column.

``--parts N`` sets ``_wide_leaves.TAIL_PARTS`` to ``N`` for the run: 1 (the
library's default) cuts no leaf, 4 the arm of
``benchmarks/results/bench_tail_parts.md``.

Run: ``PYTHONPATH=. python -m benchmarks.bench_tail_parts --eps 1 --seeds 10
[--parts 4]``.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np
import pandas as pd

COLUMN = "collections"


def table(n=8000, seed=0):
    """The synthetic table (module docstring); ``seed`` fixes its draws."""
    rng = np.random.default_rng(seed)
    nonzero = rng.random(n) < 0.135
    # lognormal(ln 412, 1.5) below 16,384 (the real column's 99.9 %: its
    # nonzero quantiles 160 / 412 / 1,103 / 3,130 / 10,847 at 25 / 50 / 75 /
    # 90 / 99 %); redrawn above
    amount = np.exp(np.log(412.0) + 1.5 * rng.standard_normal(n))
    while (amount >= 16384).any():
        far = amount >= 16384
        amount[far] = np.exp(np.log(412.0) + 1.5 * rng.standard_normal(far.sum()))
    amount = np.maximum(np.rint(amount), 1.0)
    cols = {COLUMN: np.where(nonzero, amount, 0.0).astype(np.int64)}
    for i in range(25):
        cols[f"x{i}"] = rng.normal(50.0, 10.0, n)
    for i in range(15):
        cols[f"amount{i}"] = np.rint(np.exp(rng.normal(9.0, 0.8, n))).astype(np.int64)
    for i in range(9):
        cols[f"cat{i}"] = pd.Categorical(rng.choice(list("abcde"), n))
    return pd.DataFrame(cols)


def outer_tail(hist):
    """``(lo, hi, width in t)`` of the widest outermost tail leaf of ``hist``
    (the domain's fine histogram), or ``None``."""
    from skdp_synth.preprocessing._decoding import _tail_models
    from skdp_synth.preprocessing._numeric_domain import _t

    e, c = hist.edges, hist.counts
    pos = np.flatnonzero(c > 0)
    if pos.size < 2:
        return None
    tails = _tail_models(hist, *hist.bounds)
    lo_cap, hi_cap = hist.bounds
    best = None
    for j in sorted({int(pos[0]), int(pos[-1])} & set(tails)):
        lo, hi = max(float(e[j]), lo_cap), min(float(e[j + 1]), hi_cap)
        width = float(_t(hi) - _t(lo))
        if best is None or width > best[2]:
            best = (lo, hi, width)
    return best


def fit(df, eps, seed):
    """One fit of the default pipeline; ``(rows, pipe, named)``."""
    from benchmarks._harness import fit_default_pipeline

    pipe = fit_default_pipeline(df, eps, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = pipe.sample(len(df), random_state=seed + 1)
    return rows, pipe, COLUMN in getattr(pipe, "degenerate_columns_", {})


def run(eps_list, seeds, parts=None):
    from skdp_synth.preprocessing import _wide_leaves

    if parts is not None:
        _wide_leaves.TAIL_PARTS = int(parts)
    df = table()
    real = df[COLUMN].to_numpy(np.float64)
    print(f"TAIL_PARTS = {_wide_leaves.TAIL_PARTS}\n")
    print("| ε | seed | levels | tail leaf | ratio | mean ≥ edge (real) | named |")
    print("|---|---|---|---|---|---|---|")
    summary = {}
    for eps in eps_list:
        ratios, named_n, silent = [], 0, 0
        for seed in range(seeds):
            rows, pipe, named = fit(df, eps, seed)
            spec = next(s for s in pipe[0].specs_ if s.name == COLUMN)
            x = pd.to_numeric(rows[COLUMN], errors="coerce").to_numpy(np.float64)
            ratio = float(np.nanstd(x, ddof=1) / np.std(real, ddof=1))
            tail = outer_tail(spec.fine)
            leaf, inner = "none", ""
            if tail is not None:
                lo, hi, width = tail
                leaf = f"[{lo:g}, {hi:g}) {width:.1f}"
                mean = real[real >= lo].mean() if (real >= lo).any() else np.nan
                got = np.nanmean(x[x >= lo]) if (x >= lo).any() else np.nan
                inner = f"{got:.0f} ({mean:.0f})"
            ratios.append(ratio)
            named_n += named
            silent += (not 0.5 <= ratio <= 2.0) and not named
            print(
                f"| {eps:g} | {seed} | {len(spec.levels) - 1} | {leaf} | "
                f"{ratio:.2f} | {inner} | {'yes' if named else ''} |",
                flush=True,
            )
        summary[eps] = (np.median(ratios), min(ratios), max(ratios), named_n, silent)
    print("\n| ε | median ratio | min-max | named | silent |")
    print("|---|---|---|---|---|")
    for eps, (med, lo, hi, named_n, silent) in summary.items():
        print(f"| {eps:g} | {med:.2f} | {lo:.2f}-{hi:.2f} | {named_n} | {silent} |")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--eps", default="1,0.3")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--parts", type=int, default=None)
    a = p.parse_args(sys.argv[1:] if argv is None else argv)
    run([float(e) for e in a.eps.split(",")], a.seeds, a.parts)


if __name__ == "__main__":
    main()
