"""Where a table's TV1 comes from: its numeric columns on their private
domains, against the same release given the scores' own bins, and the part
already lost on the domain's coarse bins.

For each table, ε and seed, ``selection="auto"`` is fitted twice
(``bench_suite.fit_ours``): on its private numeric domains, and given the
scores' decile bins for free (``auto-bins``, the like-for-like arm of
``bench_suite``). Each column's TV1 is read against the training rows on the
scores' bins (``bench_suite.Coder``), and each numeric column's TV also on the
private domain's own coarse bins (the encoder's ``levels``): where that is as
large as the TV on the scores' bins, the error is in how many rows the release
puts in each coarse bin, not in the values drawn inside them. Nothing here is
private; it reads the training rows.

    PYTHONPATH=. python -m benchmarks.bench_tv1_parts \
        --tables credit,attrition,acs12 --eps 0.3,1 --seeds 3
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from benchmarks import bench_suite as bs


def _tv(a, b, size):
    """The TV distance of two code vectors' histograms over ``size`` cells."""
    pa = np.bincount(a, minlength=size) / len(a)
    pb = np.bincount(b, minlength=size) / len(b)
    return 0.5 * float(np.abs(pa - pb).sum())


def _coarse_codes(values, edges):
    """Codes on the coarse bins ``edges`` (one more for a missing value)."""
    x = pd.to_numeric(values, errors="coerce").astype(float).to_numpy()
    return np.where(np.isnan(x), len(edges) + 1, np.searchsorted(edges, x, "right"))


def parts(table, eps, seeds):
    """Mean per-column TV1 of ``table`` at ``eps`` over ``seeds`` fits:
    numeric columns on the private domains, given the deciles, and on the
    domains' own coarse bins; categorical columns on the private domains and
    given the deciles."""
    ctx = bs.context(table)
    coder, train, codes = ctx["coder"], ctx["train"], ctx["train_codes"]
    out = {k: [] for k in ("num", "num_given", "coarse", "cat", "cat_given")}
    for seed in range(seeds):
        syn, info = bs.fit_ours(
            train, ctx["cats"], ctx["options"], eps, seed, "auto", keep_pipe=True
        )
        given, _ = bs.fit_ours(
            train,
            ctx["cats"],
            ctx["options"],
            eps,
            seed,
            "auto",
            bins=bs.public_bins(ctx["df"], coder),
        )
        specs = {s.name: s for s in info["pipe"][0].specs_}
        sc, gc = coder.codes(syn), coder.codes(given)
        for j, c in enumerate(coder.columns):
            own = _tv(codes[:, j], sc[:, j], coder.sizes[j])
            free = _tv(codes[:, j], gc[:, j], coder.sizes[j])
            if c in coder.edges:
                edges = np.asarray(specs[c].levels, dtype=float)
                size = len(edges) + 2
                tr, sy = _coarse_codes(train[c], edges), _coarse_codes(syn[c], edges)
                out["num"].append(own)
                out["num_given"].append(free)
                out["coarse"].append(_tv(tr, sy, size))
            else:
                out["cat"].append(own)
                out["cat_given"].append(free)
    return {k: float(np.mean(v)) if v else float("nan") for k, v in out.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench_tv1_parts", description=__doc__)
    ap.add_argument("--tables", default="credit,attrition,acs12")
    ap.add_argument("--eps", default="0.3,1")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)
    print(
        "| table | ε | numeric TV1 | given the deciles | on its coarse bins "
        "| categorical TV1 | given the deciles |"
    )
    print("|---|---|---|---|---|---|---|")
    for table in args.tables.split(","):
        for eps in (float(e) for e in args.eps.split(",")):
            p = parts(table, eps, args.seeds)
            print(
                f"| {table} | {eps:g} | {p['num']:.4f} | {p['num_given']:.4f} "
                f"| {p['coarse']:.4f} | {p['cat']:.4f} | {p['cat_given']:.4f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
