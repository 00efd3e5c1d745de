"""Three variants of ``selection="auto"``'s plan choice, re-read from recorded fits.

    PYTHONPATH=. python -m benchmarks.bench_plan_rule_variants \\
        [--cache benchmarks/results/suite_tune_plans.jsonl]

Reads the TUNE half's fits of every plan auto weighs (``auto``'s recorded
estimates beside the realised TV2, TV1 and train-on-synthetic of ``none``,
``auto-aim``, ``auto-mst`` and ``one-way`` on the same table, ε and seed;
:func:`benchmarks.bench_suite._plan_cells`) and prints, per variant and
value, the mean TV2 regret against the best plan, the mean
train-on-synthetic and TV1 of the picks, and the table/ε pairs whose mean
regret is over 5 %:

* ``none-power``: the all-tables plan's expected noise ``e`` weighed as
  ``e0 (e / e0)^p`` (``e0`` = 0.1) before ``κ``: a concave weight for a
  noise the generator's rows hold less of the larger it is;
* ``aim-margin``: AIM's value in :func:`plan_errors` times ``1 + m``;
* ``aim-to-mst``: where the rule picks AIM, MST's tree instead when its
  value is within ``1 + x`` of AIM's.

Runs nothing; ``benchmarks/results/bench_suite.md`` ("Measured, not adopted:
three variants of auto's plan choice") has the figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools

import numpy as np

from benchmarks import bench_suite as B


def _scored(usable, choose_plan):
    """``{ε: [(regret, train-on-synthetic, TV1, table)]}`` of the picks."""
    per = {}
    for (t, e, _), (est, recs) in usable.items():
        pick = choose_plan(est)
        best = min(r["tv2"] for r in recs.values())
        rec = recs[pick]
        per.setdefault(e, []).append(
            (rec["tv2"] / best - 1, rec["tstr"], rec["tv1"], t)
        )
    return per


def _line(label, per):
    rows = [x for v in per.values() for x in v]
    by_pair = {}
    for e, v in per.items():
        for regret, _, _, t in v:
            by_pair.setdefault((t, e), []).append(regret)
    over = sum(np.mean(v) > 0.05 for v in by_pair.values())
    eps = " ".join(
        f"ε {e:g}: {np.mean([x[0] for x in v]):.4f}/{np.mean([x[1] for x in v]):.3f}"
        for e, v in sorted(per.items())
    )
    print(
        f"{label}: regret {np.mean([x[0] for x in rows]):.4f}"
        f" TSTR {np.mean([x[1] for x in rows]):.4f}"
        f" TV1 {np.mean([x[2] for x in rows]):.4f}"
        f" over 5 %: {over}/{len(by_pair)} | regret/TSTR {eps}"
    )


def main(argv=None):
    import skdp_synth.gaussian_release._plan_choice as S
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES as rules

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default="benchmarks/results/suite_tune_plans.jsonl")
    args = ap.parse_args(argv)
    done = B.read_cache(args.cache)
    names = sorted({k[0] for k in done})
    usable = B._plan_cells(done, names, 4.0, rules, scored=("tv2", "tstr", "tv1"))
    print(f"{len(usable)} table/ε/seed cells")
    rho = rules.auto_tree_reach
    original = S.plan_errors

    def with_errors(transform):
        def choose_plan(est):
            def patched(e, r, aim=True):
                return transform(e, original, r, aim)

            S.plan_errors = patched
            try:
                return B.choose(est, rho, rules)
            finally:
                S.plan_errors = original

        return choose_plan

    for kappa, p in itertools.product([0.4, 0.5, 0.6, 0.8], [1.0, 0.8, 0.6]):

        def power(e, plan_errors, r, aim, p=p, kappa=kappa):
            e = dict(e)
            e["none"] = 0.1 * (e["none"] / 0.1) ** p
            return plan_errors(e, dataclasses.replace(r, auto_none_factor=kappa), aim)

        _line(f"none-power kappa={kappa} p={p}", _scored(usable, with_errors(power)))
    for m in [0.0, 0.1, 0.2, 0.3]:

        def margin(e, plan_errors, r, aim, m=m):
            out = plan_errors(e, r, aim)
            if "aim" in out:
                out["aim"] *= 1 + m
            return out

        _line(f"aim-margin m={m}", _scored(usable, with_errors(margin)))

    def tree_and_aim(est):
        """MST's and AIM's values as :func:`benchmarks.bench_suite.choose`
        recomputes them."""
        mst = B.mst_value(est, rho, rules)
        return mst, B.aim_of(est, rules.auto_aim_one_way_share)

    for x in [0.0, 0.1, 0.2, 0.3, 0.5]:

        def to_mst(est, x=x):
            pick = B.choose(est, rho, rules)
            if pick == "aim":
                mst, aim = tree_and_aim(est)
                if mst <= aim * (1 + x):
                    return "mst"
            return pick

        _line(f"aim-to-mst x={x}", _scored(usable, to_mst))


if __name__ == "__main__":
    main()
