"""Where the copula's Gibbs sweeps start: a sequential draw against the
middle of each row's box (``skdp_synth.preprocessing._copula.SEQUENTIAL_START``).

Per table, ε and seed, the ``auto`` pipeline of ``benchmarks/bench_suite.py``
(``fit_ours``: the same encoder, release, seeds and held-out rows) is fitted
once and sampled twice with the same ``random_state``: the sweeps started
from the sequential draw (``seq``, the library's) and from the middle of each
box (``mid``, before). The fit is the same; only the places of numeric values
inside their bins differ. Per arm: the mean absolute error of the numeric
columns' pairwise Spearman correlations against the held-out rows (all
pairs, and the pairs whose held-out correlation is at least
:data:`STRONG` in size), train-on-synthetic (the suite's model and score),
and the seconds ``sample`` took (the ratio ``seq / mid`` is printed).

    PYTHONPATH=. python -m benchmarks.bench_copula_start --half tune \\
        --eps 1,3 --seeds 3

``--shares none,0.25,0.4``: instead of the two starts, the copula refitted
from each fit's released distribution at each ``WIDE_SINGLE_SHARE`` (``none``:
every one-value bin counts in the latent correlations), sampled with the
same ``random_state``; train-on-synthetic per share (the table of
``bench_copula_start.md``'s section on wide one-value bins):

    PYTHONPATH=. python -m benchmarks.bench_copula_start --half tune \
        --tables storms,cps1988 --eps 1,3 --seeds 2 --shares none,0.25,0.4

Results: ``benchmarks/results/bench_copula_start.md``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

#: A pair of numeric columns is strong where its held-out Spearman
#: correlation is at least this in size.
STRONG = 0.5


def pair_errors(syn, test, numeric):
    """``(all, strong)``: mean absolute error of the pairwise Spearman
    correlations of the ``numeric`` columns, synthetic against held-out
    (``strong``: the pairs whose held-out correlation is at least
    :data:`STRONG` in size; NaN where there is none)."""
    real = test[numeric].apply(pd.to_numeric, errors="coerce").corr("spearman")
    got = syn[numeric].apply(pd.to_numeric, errors="coerce").corr("spearman")
    upper = np.triu_indices(len(numeric), 1)
    r, g = real.to_numpy()[upper], got.to_numpy()[upper]
    ok = np.isfinite(r) & np.isfinite(g)
    err = np.abs(r - g)[ok]
    strong = err[np.abs(r[ok]) >= STRONG]
    return float(err.mean()), float(strong.mean()) if strong.size else float("nan")


def one(ctx, eps, seed):
    """Both arms at one table, ε and seed: ``{arm: (all, strong, tstr, s)}``."""
    from benchmarks import bench_suite as bs
    from skdp_synth.preprocessing import _copula

    numeric = [c for c in ctx["train"].columns if c not in ctx["cats"]]
    pipe = bs.fitted(ctx, eps, seed, keep_pipe=True)[1]["pipe"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = {}
        for arm, sequential in (("mid", False), ("seq", True)):
            with bs.patched(_copula, SEQUENTIAL_START=sequential):
                t = time.perf_counter()
                syn = pd.DataFrame(
                    pipe.sample(len(ctx["train"]), random_state=seed + 1)
                )
                secs = time.perf_counter() - t
            a, s = pair_errors(syn, ctx["test"], numeric)
            out[arm] = (a, s, bs.tstr_or_nan(syn, ctx), secs)
    return out


def by_share(ctx, eps, seed, shares):
    """Train-on-synthetic of one fit with its copula refitted at each of
    ``shares`` (``WIDE_SINGLE_SHARE`` values, ``None`` for every bin)."""
    from benchmarks import bench_suite as bs
    from skdp_synth.preprocessing import _copula

    pipe = bs.fitted(ctx, eps, seed, keep_pipe=True)[1]["pipe"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        released = pipe[-1]._synthetic_distribution()
        out = []
        try:
            for share in shares:
                with bs.patched(_copula, WIDE_SINGLE_SHARE=share):
                    pipe[0].fit_copula(*released)
                    syn = pd.DataFrame(
                        pipe.sample(len(ctx["train"]), random_state=seed + 1)
                    )
                out.append(bs.tstr_or_nan(syn, ctx))
        finally:
            pipe[0].fit_copula(*released)  # the library's own copula again
    return out


def main_shares(names, eps_list, seeds, shares):
    """The ``--shares`` table: mean train-on-synthetic per share."""
    from benchmarks import bench_suite as bs

    head = " / ".join("none" if s is None else f"{s:g}" for s in shares)
    print(f"| table | ε | train-on-synthetic at share {head} |")
    print("|---|---|---|")
    for name in names:
        ctx = bs.context(name)
        for e in eps_list:
            rows = np.asarray([by_share(ctx, e, s, shares) for s in range(seeds)])
            means = " / ".join(f"{v:.3f}" for v in np.nanmean(rows, axis=0))
            print(f"| {name} | {e:g} | {means} |", flush=True)


def main(argv=None):
    from benchmarks import bench_suite as bs

    ap = argparse.ArgumentParser()
    ap.add_argument("--half", choices=["tune", "report"], default="tune")
    ap.add_argument("--tables", help="comma-separated subset of the half")
    ap.add_argument("--eps", default="1,3")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--shares", help="compare WIDE_SINGLE_SHARE values (none: off)")
    args = ap.parse_args(argv)
    names = bs.TUNE if args.half == "tune" else bs.REPORT
    if args.tables:
        names = [t for t in args.tables.split(",")]
    eps_list = [float(e) for e in args.eps.split(",")]
    if args.shares:
        shares = [None if v == "none" else float(v) for v in args.shares.split(",")]
        return main_shares(names, eps_list, args.seeds, shares)
    print(
        "| table | ε | numeric | pair error mid / seq | strong pairs mid / seq "
        "| train-on-synthetic mid / seq | sample s seq / mid |"
    )
    print("|---|---|---|---|---|---|---|")
    total = {"mid": [], "seq": []}
    for name in names:
        ctx = bs.context(name)
        numeric = [c for c in ctx["train"].columns if c not in ctx["cats"]]
        if len(numeric) < 2:
            continue
        for e in eps_list:
            rows = [one(ctx, e, s) for s in range(args.seeds)]
            mean = {
                arm: np.nanmean([r[arm] for r in rows], axis=0)
                for arm in ("mid", "seq")
            }
            for arm in total:
                total[arm] += [r[arm] for r in rows]
            m, q = mean["mid"], mean["seq"]
            print(
                f"| {name} | {e:g} | {len(numeric)} | {m[0]:.4f} / {q[0]:.4f} "
                f"| {m[1]:.4f} / {q[1]:.4f} | {m[2]:.3f} / {q[2]:.3f} "
                f"| {q[3] / m[3]:.2f} |",
                flush=True,
            )
    m = np.nanmean(total["mid"], axis=0)
    q = np.nanmean(total["seq"], axis=0)
    d = np.asarray(total["seq"]) - np.asarray(total["mid"])
    se = np.nanstd(d, axis=0) / np.sqrt(np.sum(np.isfinite(d), axis=0))
    print(
        f"\nall fits ({len(d)}): pair error {m[0]:.4f} -> {q[0]:.4f} "
        f"(± {se[0]:.4f}), strong pairs {m[1]:.4f} -> {q[1]:.4f} (± {se[1]:.4f}), "
        f"train-on-synthetic {m[2]:.4f} -> {q[2]:.4f} (± {se[2]:.4f}), "
        f"sample seconds {q[3] / m[3]:.2f} x"
    )


if __name__ == "__main__":
    main()
