"""What a measured pairs' dependence would change in ``selection="auto"``'s
picks, re-read from recorded fits (no refit).

``selection="auto"`` weighs its plans by expected errors that hold ``D``,
the TV a pair loses when no measured table holds it. This benchmark takes
the TUNE half's fits of every plan auto weighs (``bench_suite --methods
auto,none,auto-aim,auto-mst,one-way``, whose caches hold each fit's realised
TV2 and train-on-synthetic and auto's recorded public estimates), computes
each table's own mean pair TV to independence on its training rows (in the
scores' coding), and re-picks every cell with ``D`` replaced by that value
scaled by ``α`` -- noise-free, or noised and shrunk as
:func:`skdp_synth.gaussian_release._dependence.dependence_estimate` does at
a share ``f`` of the budget, or left at the constant where the measurement
would carry less than a weight ``w`` (``σ = c Δ / sqrt(f)``, ``c`` the calibration
of ``(ε, 1e-6)``: the whole ε, so slightly less noise than a mixed table's
release sees). It reports, per ε, the mean TV2 regret against the best plan,
the picks' mean train-on-synthetic and the tables whose picks are more than
5 % above the 1-way tables' TV2. It does not charge the share to the
plans: a fit spending ``f`` on the dependence has about ``f/2`` more noise
on every other measurement.

Usage (after the TUNE runs of ``benchmarks/results/bench_suite.md``)::

    PYTHONPATH=. python -m benchmarks.bench_auto_dependence \
        --cache A01.jsonl,B01.jsonl,A.jsonl,B.jsonl,A3.jsonl,B3.jsonl \
        --shares 0.01,0.02,0.03,0.1 --min-weights 0,0.25,0.5,0.75
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import itertools
import json
import math
import os

import numpy as np

from benchmarks import bench_suite as bs


def table_dependence(name):
    """``{"n", "a", "D"}``: the training rows' mean pair TV to the product of
    the pair's margins, in the scores' coding (exact: a benchmark diagnostic,
    not a release)."""
    ctx = bs.context(name)
    X, sizes = ctx["train_codes"], ctx["coder"].sizes
    n, out = len(X), []
    for i, j in itertools.combinations(range(X.shape[1]), 2):
        cells = X[:, i] * sizes[j] + X[:, j]
        p = np.bincount(cells, minlength=sizes[i] * sizes[j]).reshape(
            sizes[i], sizes[j]
        )
        p = p / n
        out.append(0.5 * np.abs(p - np.outer(p.sum(1), p.sum(0))).sum())
    return {"n": n, "a": X.shape[1], "D": float(np.mean(out))}


def estimates_at(est, D, rules):
    """auto's estimates with ``D`` in place of the constant, rebuilt from the
    recorded public parts (``e_tree`` gives ``u = e_unit² / left``, which is
    all :func:`~skdp_synth.gaussian_release._plan_choice.aim_estimate` reads
    of the two; the candidate pairs taken as all ``a(a-1)/2``)."""
    from skdp_synth.gaussian_release._plan_choice import aim_estimate, tree_signal_share

    q, Dt = est["q"], rules.auto_edge_threshold
    a = round(2 / q)
    u = est["e_tree"] ** 2 * rules.auto_mst_shares["final"] / (a - 1)
    e = dict(est)
    reach = rules.auto_tree_reach * tree_signal_share(est["e_tree"], Dt)
    e["mst"] = q * est["e_tree"] + (1 - q) * ((1 - reach) * D + 2 * est["e1_mst"])
    e["one-way"] = q * Dt + (1 - q) * D + 2 * est["e1_one"]
    pairs = a * (a - 1) // 2
    e.update(aim_estimate(math.sqrt(u), est["e1_one"], a, pairs, 1.0, rules, D=D))
    return e


def pick(est, D, rules):
    from skdp_synth.gaussian_release._plan_choice import plan_errors

    e = estimates_at(est, D, rules)
    errors = plan_errors(e, rules, aim=bs.aim_gate(e, rules))
    return min(errors, key=errors.get)


def evaluate(cells, choose):
    """Per ε: (mean TV2 regret vs the best plan, mean TSTR of the picks,
    tables whose picks average over 1.05x the 1-way tables' TV2)."""
    by = collections.defaultdict(lambda: collections.defaultdict(list))
    for (t, e, _), (est, recs) in cells.items():
        p = choose(t, e, est)
        best = min(r["tv2"] for r in recs.values())
        by[e]["regret"].append(recs[p]["tv2"] / best - 1)
        by[e]["tstr"].append(recs[p]["tstr"])
        by[(t, e)]["ratio"].append(recs[p]["tv2"] / recs["one-way"]["tv2"])
    out = {}
    for e in sorted(k for k in by if not isinstance(k, tuple)):
        te = [k for k in by if isinstance(k, tuple) and k[1] == e]
        over = sum(np.mean(by[k]["ratio"]) > 1.05 for k in te)
        out[e] = (np.mean(by[e]["regret"]), np.mean(by[e]["tstr"]), over, len(te))
    return out


def main(argv=None):
    from skdp_synth.gaussian_release._dependence import (
        dependence_estimate,
        dependence_sensitivity,
        measurement_weight,
    )
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES as R
    from skdp_synth.mechanisms import analytic_gaussian_sigma

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cache", required=True, help="comma-separated caches")
    p.add_argument("--dependence", default="auto_dependence_tune.json")
    p.add_argument("--scales", default="0.5,0.75,1")
    p.add_argument("--shares", default="0.01,0.03,0.1")
    p.add_argument("--min-weights", default="0,0.5")
    p.add_argument("--draws", type=int, default=6)
    args = p.parse_args(argv)
    done = {}
    for f in args.cache.split(","):
        done.update(bs.read_cache(f))
    cells = bs._plan_cells(done, bs.TUNE, bs.weight(), R, scored=("tv2", "tstr"))
    if os.path.exists(args.dependence):
        dep = json.load(open(args.dependence))
    else:
        dep = {t: table_dependence(t) for t in sorted({k[0] for k in cells})}
        json.dump(dep, open(args.dependence, "w"), indent=1)
    print("TUNE tables' mean pair TV to independence (scores' coding):")
    print(", ".join(f"{t} {v['D']:.3f}" for t, v in sorted(dep.items())))

    def show(name, res):
        total = sum(r[0] for r in res.values())
        row = " | ".join(
            f"ε {e:g}: {r[0]:.4f} TSTR {r[1]:.3f} >1.05x {r[2]:g}/{r[3]}"
            for e, r in res.items()
        )
        print(f"{name:28s} sum {total:.4f} | {row}")

    show(
        "constant D",
        evaluate(cells, lambda t, e, est: bs.choose(est, R.auto_tree_reach, R)),
    )
    for a in (float(x) for x in args.scales.split(",")):
        show(
            f"noise-free, α {a:g}",
            evaluate(cells, lambda t, e, est, a=a: pick(est, a * dep[t]["D"], R)),
        )
    delta = dependence_sensitivity("add-remove-one")
    grid = itertools.product(
        (float(x) for x in args.shares.split(",")),
        (float(x) for x in args.scales.split(",")),
        (float(x) for x in args.min_weights.split(",")),
    )
    for f, a, w_min in grid:
        rules = dataclasses.replace(R, auto_dependence_scale=a)
        runs, skipped = [], []
        for seed in range(args.draws):
            rng = np.random.default_rng(seed)

            def noisy(
                t, e, est, rng=rng, rules=rules, f=f, w_min=w_min, skipped=skipped
            ):
                n = dep[t]["n"]
                sd = analytic_gaussian_sigma(e, bs.DELTA) * delta / math.sqrt(f)
                skipped.append(measurement_weight(n, sd, rules) < w_min)
                if skipped[-1]:  # not measured: the constant
                    return bs.choose(est, rules.auto_tree_reach, rules)
                s = n * dep[t]["D"] + rng.normal(0, sd)
                return pick(est, dependence_estimate(s, n, sd, rules), rules)

            runs.append(evaluate(cells, noisy))
        mean = {
            e: tuple(np.mean([r[e][i] for r in runs]) for i in range(4))
            for e in runs[0]
        }
        show(
            f"share {f:g}, α {a:g}, w >= {w_min:g} ({np.mean(skipped):.0%} skip)", mean
        )


if __name__ == "__main__":
    main()
