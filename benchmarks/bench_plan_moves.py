"""Which cells auto's plan choice moves when its constants change, re-read from
recorded fits of every plan.

    PYTHONPATH=. python -m benchmarks.bench_plan_moves \\
        --cache benchmarks/results/suite_tune_plans_2026-12-07.jsonl \\
        [--kappa K] [--margin M] [--tree-margin T] [--aim-max-attributes A] \\
        [--tree-noise-factor F]

Each cell (table, ε, seed) holds ``auto``'s recorded estimates beside the
realised scores of every plan auto weighs (:func:`benchmarks.bench_suite.
_plan_cells`). The library's pick (``ReleaseRules`` as it is) is compared
with the pick under the given values: ``--kappa`` (``auto_none_factor``),
``--margin`` (``auto_one_way_margin``), ``--tree-margin``
(``auto_tree_margin``), ``--aim-max-attributes``
(``auto_aim_max_attributes``: AIM's rounds compete on tables of at most that
many attributes; the cells then hold AIM's records where it was fitted) and
``--tree-noise-factor`` (MST's estimate with ``f q e_tree`` in place of ``q
e_tree``). Printed: every cell whose pick moves (the two picks' TV2 and
train-on-synthetic), then per ε the mean TV2 regret against the best plan,
the mean train-on-synthetic and the mean TV1 of the picks, both ways. Runs
nothing; ``benchmarks/results/bench_suite.md`` ("The plan rule re-read on
fresh records of every plan") has the figures.
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from benchmarks import bench_suite as B


def pick(est, rules, tree_noise=1.0):
    """The plan :func:`benchmarks.bench_suite.choose` picks under ``rules``,
    MST's tree noise term times ``tree_noise``."""
    return B.choose(est, rules.auto_tree_reach, rules, tree_noise=tree_noise)


def compare(done, rules, changed, tree_noise=1.0):
    """``{ε: (regret, TSTR, TV1) before, after}`` of the picks, printing each
    moved cell; ``rules`` the library's, ``changed`` the variant's."""
    # cells holding every plan either rule weighs (AIM's gate the wider)
    wider = max(rules, changed, key=lambda r: r.auto_aim_max_attributes)
    usable = B._plan_cells(done, set(B.TUNE), 4.0, wider, scored=("tv2", "tstr", "tv1"))
    per = {}
    for key, (est, recs) in sorted(usable.items()):
        before, after = pick(est, rules), pick(est, changed, tree_noise)
        best = min(r["tv2"] for r in recs.values())
        for arm, p in ((0, before), (1, after)):
            r = recs[p]
            per.setdefault(key[1], ([], []))[arm].append(
                (r["tv2"] / best - 1, r["tstr"], r["tv1"])
            )
        if before != after:
            a, b = recs[before], recs[after]
            print(
                f"  {key[0]} eps={key[1]:g} seed={key[2]}: {before} -> {after},"
                f" TV2 {a['tv2']:.4f} -> {b['tv2']:.4f},"
                f" train-on-synthetic {a['tstr']:.3f} -> {b['tstr']:.3f}"
            )
    out = {}
    for e, (x, y) in sorted(per.items()):
        out[e] = tuple(np.mean(v, axis=0) for v in (x, y))
        (r0, t0, v0), (r1, t1, v1) = out[e]
        print(
            f"eps {e:g} ({len(x)} cells): TV2 regret {r0:.4f} -> {r1:.4f},"
            f" train-on-synthetic {t0:.4f} -> {t1:.4f}, TV1 {v0:.4f} -> {v1:.4f}"
        )
    return out


def main(argv=None):
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES as rules

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--cache", default="benchmarks/results/suite_tune_plans_2026-12-07.jsonl"
    )
    ap.add_argument("--kappa", type=float, default=rules.auto_none_factor)
    ap.add_argument("--margin", type=float, default=rules.auto_one_way_margin)
    ap.add_argument("--tree-margin", type=float, default=rules.auto_tree_margin)
    ap.add_argument(
        "--aim-max-attributes", type=int, default=rules.auto_aim_max_attributes
    )
    ap.add_argument("--tree-noise-factor", type=float, default=1.0)
    args = ap.parse_args(argv)
    done = {}
    for path in args.cache.split(","):
        done.update(B.read_cache(path))
    changed = dataclasses.replace(
        rules,
        auto_none_factor=args.kappa,
        auto_one_way_margin=args.margin,
        auto_tree_margin=args.tree_margin,
        auto_aim_max_attributes=args.aim_max_attributes,
    )
    compare(done, rules, changed, args.tree_noise_factor)


if __name__ == "__main__":
    main()
