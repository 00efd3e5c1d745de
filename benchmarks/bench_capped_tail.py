"""Rows past a numeric column's private cap: the release's outer coarse bin
against the domain's kept mass, and a tentative window past the cap.

Two questions on the fits of ``benchmarks/bench_suite.py --methods auto
--light`` (TUNE half; ``benchmarks/results/bench_capped_tail.md``):

1. ``--columns OUT`` / ``--rules OUT``: the encoder clips the rows past the
   cap into the outermost coarse bin, which the release measures with its
   own noise (``σ_j``, smaller than the domain's per-leaf ``b`` on the wide
   tables). Does the excess ``T̂_top - K_top`` (the release's estimate of
   the top bin less the domain's kept noisy mass in it), in sds of
   ``sqrt(σ_j² + 2 m b²)``, name the silently collapsed columns (std ratio
   < 0.5, no warning) at a small share of the in-band ones? Released
   quantities only (post-processing); the std ratio only scores it.

       PYTHONPATH=. python -m benchmarks.bench_capped_tail --columns C.pkl \\
           --fit-tables loans,credit,attrition,acs12,hmda,cps1988 \\
           --fit-eps 1,0.3 --fit-seeds 5
       PYTHONPATH=. python -m benchmarks.bench_capped_tail --rules C.pkl

2. ``--overflow W --overflow-z Z --suite ...``: the library's tentative
   window past an upper cap where growth stopped
   (``_fences.overflow_window``: ``[cap, x(t(cap) + W))`` where the leaves
   past the cap pool a noisy count above ``Z`` sds; its coarse bin kept by
   a pipeline only where the release's estimate passes ``LEVEL_SUPPORT_Z
   σ``) with ``W``, ``Z`` set for this run; ``--overflow 0`` turns it off
   (the library before it).

       PYTHONPATH=. python -m benchmarks.bench_capped_tail --overflow 2 \\
           --overflow-z 2 --suite --half tune --tables loans,attrition,credit \\
           --eps 1,0.3 --seeds 5 --methods auto --light --cache X.jsonl
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys

import numpy as np
import pandas as pd


def install(width, z):
    """Set the library's window (``_fences.OVERFLOW_T``, ``OVERFLOW_Z``) for
    this run; ``width = 0`` turns it off (the library before the window)."""
    from skdp_synth.preprocessing import _fences

    _fences.OVERFLOW_T, _fences.OVERFLOW_Z = float(width), float(z)


def columns(tables, eps_list, seeds):
    """Per fit and numeric column: the release's estimates of the coarse
    bins, the kept fine histogram, and (not released: scores only) the std
    ratio and the real rows past the cap."""
    from benchmarks.bench_suite import context, numeric_scores
    from benchmarks.bench_tail_domains import _with_domains
    from benchmarks.bench_trunc_tail import fit

    out = []
    domains = _with_domains()
    for table in tables:
        ctx = context(table)
        for eps in eps_list:
            for seed in range(seeds):
                domains.clear()
                pipe, syn, named = fit(ctx, eps, seed)
                std = numeric_scores(syn, ctx["test"], ctx["cats"])["std"]
                enc, final = pipe[0], pipe[-1]
                names = [str(n) for n in final.blocks_.names]
                for spec in enc.specs_:
                    h = spec.fine
                    if spec.kind != "numeric" or h is None or spec.name not in std:
                        continue
                    if str(spec.name) not in names:
                        continue
                    j = names.index(str(spec.name))
                    k = spec.n_levels
                    real = pd.to_numeric(ctx["train"][spec.name], errors="coerce")
                    real = real.dropna().to_numpy(float)
                    lo, hi = h.bounds
                    out.append(
                        {
                            "table": table,
                            "eps": eps,
                            "seed": seed,
                            "col": str(spec.name),
                            "std": std[spec.name],
                            "named": spec.name in named,
                            "edges": np.asarray(spec.levels, float),
                            "ests": [
                                final._one_way_level_estimate(j, lv) for lv in range(k)
                            ],
                            "fe": np.asarray(h.edges, float),
                            "fc": np.asarray(h.counts, float),
                            # as the domain released it, before the fill
                            "fc0": np.asarray(domains.get(spec.name, h).counts, float),
                            "n_levels": k,
                            "scale": float(h.scale),
                            "integer": bool(h.integer),
                            "beyond_hi": float(np.mean(real >= hi)),
                            "beyond_lo": float(np.mean(real < lo)),
                        }
                    )
                print(table, eps, seed, file=sys.stderr, flush=True)
    return out


def excess(r, side):
    """``(T̂ - K) / sqrt(σ² + 2 m b²)`` of the outer coarse bin on ``side``
    (``+1`` upper), or ``None`` where the release has no estimate."""
    e, ests = r["edges"], r["ests"]
    k = len(e) - 1
    if k < 2 or any(v is None for v in ests):
        return None
    i = k - 1 if side > 0 else 0
    # an integer column's last bin is closed: it holds its last edge
    fe = r["fe"][np.isfinite(r["fe"])]
    integer = r.get("integer", bool(np.all(fe == np.round(fe))))
    right = e[i + 1] + (1.0 if integer and i == k - 1 else 0.0)
    inside = (r["fe"][1:] > e[i]) & (r["fe"][:-1] < right)
    kept = float(r["fc"][inside].sum())
    m = max(int((r["fc"][inside] > 0).sum()), 1)
    est, sd = ests[i]
    return (est - kept) / math.sqrt(sd**2 + 2.0 * m * r["scale"] ** 2)


def rules(rows, sides=((1,), (1, -1)), zs=(2.0, 2.5, 3.0, 3.5, 4.0, 4.5)):
    """The rule's counts: silent collapsed columns named, in-band named."""
    lines = [
        "| sides | z > | silent collapsed named | in-band named |",
        "|---|---|---|---|",
    ]
    for side in sides:
        for z in zs:
            hit = [0, 0]
            band = [0, 0]
            for r in rows:
                if r["named"]:
                    continue
                found = [excess(r, s) for s in side]
                f = any(v is not None and v > z for v in found)
                if r["std"] < 0.5:
                    hit[0] += f
                    hit[1] += 1
                elif r["std"] <= 2:
                    band[0] += f
                    band[1] += 1
            which = "upper" if side == (1,) else "both"
            lines.append(
                f"| {which} | {z:g} | {hit[0]}/{hit[1]} | {band[0]}/{band[1]} "
                f"({100 * band[0] / max(band[1], 1):.1f} %) |"
            )
    # columns with no real row past the cap: the excess is noise there
    for side, key in ((1, "beyond_hi"), (-1, "beyond_lo")):
        zs_ = np.asarray(
            [v for r in rows if r[key] == 0 and (v := excess(r, side)) is not None]
        )
        lines.append(
            f"\nno real row past the {'upper' if side > 0 else 'lower'} cap: "
            f"{zs_.size} columns, excess mean {zs_.mean():.2f} sd {zs_.std():.2f}, "
            f"> 3: {np.mean(zs_ > 3):.1%}"
        )
    return "\n".join(lines)


def _auto_fits(path, tables):
    import json

    out = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r["method"] == "auto" and r["table"] in tables:
                out[(r["table"], r["eps"], r["seed"])] = r
    return out


def compare(base, arm, tables):
    """Mean TV1 and numeric KS per table and ε over the fits both caches
    hold, and the collapsed (< 0.5) / too wide (> 2) columns, all and
    silent (no warning naming them), of two ``bench_suite`` caches."""
    b, a = _auto_fits(base, tables), _auto_fits(arm, tables)
    keys = sorted(set(a) & set(b))
    lines = [
        "| table | ε | TV1 before | after | KS before | after |",
        "|---|---|---|---|---|---|",
    ]

    def ks(r):
        return float(np.mean(list(r["num"]["ks"].values())))

    for table in tables:
        for eps in sorted({k[1] for k in keys}, reverse=True):
            ks_ = [k for k in keys if k[:2] == (table, eps)]
            if not ks_:
                continue
            tv = [np.mean([c[k]["tv1"] for k in ks_]) for c in (b, a)]
            kk = [np.mean([ks(c[k]) for k in ks_]) for c in (b, a)]
            lines.append(
                f"| {table} | {eps:g} | {tv[0]:.4f} | {tv[1]:.4f} "
                f"({100 * (tv[1] / tv[0] - 1):+.1f} %) | {kk[0]:.4f} | "
                f"{kk[1]:.4f} ({100 * (kk[1] / kk[0] - 1):+.1f} %) |"
            )
    for name, c in (("before", b), ("after", a)):
        n = {"< 0.5": [0, 0], "> 2": [0, 0]}
        for k in keys:
            r = c[k]
            told = {x for w in r.get("warnings", []) for x in w["columns"]}
            for col, s in r["num"]["std"].items():
                key = "< 0.5" if s < 0.5 else "> 2" if s > 2 else None
                if key:
                    n[key][0] += 1
                    n[key][1] += col not in told
        lines.append(
            f"\n{name}: {len(keys)} fits; std ratio < 0.5: {n['< 0.5'][0]} "
            f"({n['< 0.5'][1]} silent); > 2: {n['> 2'][0]} ({n['> 2'][1]} silent)"
        )
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--columns", metavar="OUT")
    p.add_argument("--rules", nargs="+", metavar="PKL")
    p.add_argument("--fit-tables", default="loans,credit,attrition")
    p.add_argument("--fit-eps", default="1,0.3")
    p.add_argument("--fit-seeds", type=int, default=5)
    p.add_argument("--overflow", type=float, default=None)
    p.add_argument("--overflow-z", type=float, default=2.0)
    p.add_argument("--suite", action="store_true", help="the rest to bench_suite")
    p.add_argument("--compare", nargs=2, metavar=("BASE", "ARM"))
    a, rest = p.parse_known_args(argv)
    if a.columns:
        eps = [float(v) for v in a.fit_eps.split(",")]
        rows = columns(a.fit_tables.split(","), eps, a.fit_seeds)
        with open(a.columns, "wb") as f:
            pickle.dump(rows, f)
    if a.rules:
        rows = []
        for path in a.rules:
            with open(path, "rb") as f:
                rows += pickle.load(f)
        print(rules(rows))
    if a.compare:
        print(compare(*a.compare, a.fit_tables.split(",")))
    if a.suite:
        from benchmarks import bench_suite

        if a.overflow is not None:
            install(a.overflow, a.overflow_z)
        sys.argv = ["bench_suite", *rest]
        bench_suite.main(rest)


if __name__ == "__main__":
    main()
