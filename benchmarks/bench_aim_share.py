"""AIM's 1-way share ``W`` gridded jointly with ``φ`` (TUNE half only).

Run: ``python -m benchmarks.bench_aim_share --tables credit,acs12,hmda
--eps 1,0.3 --seeds 8 --cache PATH [--w 0.1,0.25,0.4] [--no-run]``.

``W`` is ``ReleaseRules.selection_shares["aim"]["one_way"]`` (AIM's rounds
and final measurement scaled to keep their 2:1 ratio, as ``bench_suite
--aim-one-way``); ``φ`` is ``ReleaseRules.auto_aim_one_way_share``, the
1-way share ``auto``'s estimate of AIM's error charges
(:func:`~skdp_synth.gaussian_release._plan_choice.aim_estimate`). ``φ``
enters ``auto`` only through that estimate, and the estimate falls as
``φ`` grows, so on one table, ε and seed ``auto`` at ``(W, φ)`` either
runs AIM's rounds at share ``W`` or the plan it picks without AIM (the
same for every ``W``: ``W`` moves only AIM's steps). Both outcomes are fit
once, ``bench_suite``'s ``auto`` pipeline with ``--tv-only``:

* ``lo``: ``φ = 1e-6`` (AIM never chosen), default ``W``;
* ``hi@W``: ``φ = 1e6`` (AIM wherever its thresholds hold and it beats
  every table measured), at each ``W``;
* ``base``: today's ``(0.1, 0.65)`` run as it is, to check the composite.

For each ``(W, φ)`` of the grid the plan ``auto`` picks is recomputed from
``hi@W``'s recorded public estimates (those its decision compared,
``bench_suite.decisions``; ``bench_suite.choose``) and its
outcome taken from ``hi@W`` (AIM) or ``lo`` (the other plan; the script
checks that ``lo`` chose that plan). Scores against the held-out rows.
"""

from __future__ import annotations

import argparse
import dataclasses
import math

import numpy as np

from benchmarks import bench_suite as bs

W_GRID = [0.1, 0.25, 0.4]
PHI_GRID = tuple(np.round(np.arange(0.4, 1.001, 0.05), 2))
PHI_LO, PHI_HI = 1e-6, 1e6
BASE = (0.1, 0.65)


def _configure(w, phi):
    """Set ``W`` and ``φ`` on the release's rules; the cache key records
    both (``bench_suite.weight``)."""
    from skdp_synth import ProjectedGaussianRelease
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES

    ProjectedGaussianRelease._rules = DEFAULT_RULES
    bs.OVERRIDES.clear()
    bs.override_shares(aim_one_way=w)
    ProjectedGaussianRelease._rules = dataclasses.replace(
        ProjectedGaussianRelease._rules, auto_aim_one_way_share=phi
    )
    bs.OVERRIDES["phi"] = phi
    return bs.weight()


def arms():
    """``(label, W, φ)`` of each run."""
    out = [("base", *BASE), ("lo", BASE[0], PHI_LO)]
    return out + [(f"hi@{w:g}", w, PHI_HI) for w in W_GRID]


def run(names, eps_list, seeds, cache, no_run):
    keys = {}
    done = {}
    for label, w, phi in arms():
        keys[label] = _configure(w, phi)
        if no_run:
            done = bs.read_cache(cache)
        else:
            done = bs.run(names, eps_list, seeds, ("auto",), cache, tv_only=True)
    _configure(*BASE)
    return done, keys


def outcome(done, keys, t, e, s, w, phi):
    """``(plan, record)`` of ``auto`` at ``(W, φ)`` on one table, ε, seed."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES

    hi = done[(t, e, s, "auto", keys[f"hi@{w:g}"])]
    lo = done[(t, e, s, "auto", keys["lo"])]
    pick = bs.choose(hi["est"], DEFAULT_RULES.auto_tree_reach, DEFAULT_RULES, phi)
    if pick == "aim":
        assert hi["chose"] == "aim", (t, e, s, w, phi, hi["chose"])
        return pick, hi
    assert lo["chose"] == pick, (t, e, s, w, phi, lo["chose"], pick)
    return pick, lo


def _se(x):
    x = np.asarray(x, float)
    return float(np.std(x, ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0


def report(done, keys, names, eps_list, seeds):
    cells = [(t, e, s) for t in names for e in eps_list for s in range(seeds)]
    # the composite at today's pair reproduces the direct run
    mismatch = 0
    for t, e, s in cells:
        plan, rec = outcome(done, keys, t, e, s, *BASE)
        base = done[(t, e, s, "auto", keys["base"])]
        if plan != base["chose"] or abs(rec["tv2"] - base["tv2"]) > 1e-9:
            mismatch += 1
            print(f"composite != direct: {t} eps={e:g} seed={s} {plan} {base['chose']}")
    print(f"composite at (W, phi) = {BASE}: {mismatch} of {len(cells)} cells differ")

    def scores(w, phi):
        out = {}
        for t, e, s in cells:
            plan, rec = outcome(done, keys, t, e, s, w, phi)
            out[(t, e, s)] = (plan, rec["tv1"], rec["tv2"])
        return out

    base = scores(*BASE)
    print("\nW phi | mean TV1 / TV2 change against (0.1, 0.65), paired, per cell;")
    print("worst table/eps TV2 change; seeds whose plan changed (worse TV2)")
    summary = []
    for w in W_GRID:
        for phi in PHI_GRID:
            now = scores(w, phi)
            d1, d2, worst = [], [], (-np.inf, "")
            for t in names:
                for e in eps_list:
                    ks = [(t, e, s) for s in range(seeds)]
                    b1 = np.mean([base[k][1] for k in ks])
                    b2 = np.mean([base[k][2] for k in ks])
                    n1 = np.mean([now[k][1] for k in ks])
                    n2 = np.mean([now[k][2] for k in ks])
                    d1.append(n1 / b1 - 1)
                    d2.append(n2 / b2 - 1)
                    if d2[-1] > worst[0]:
                        worst = (d2[-1], f"{t} eps={e:g}")
            flips = [k for k in cells if now[k][0] != base[k][0]]
            worse = [k for k in flips if now[k][2] > base[k][2]]
            summary.append((w, phi, np.mean(d1), np.mean(d2), worst, flips, worse))
            print(
                f"{w:g} {phi:g} | TV1 {np.mean(d1):+.2%} TV2 {np.mean(d2):+.2%}"
                f" | worst TV2 {worst[0]:+.2%} ({worst[1]})"
                f" | flips {len(flips)} ({len(worse)} worse)"
            )
    return scores, summary


def table(done, keys, names, eps_list, seeds, pairs):
    """Markdown: mean ± standard error over seeds of TV1 / TV2 per table and
    ε at each ``(W, φ)`` of ``pairs``, and the plans auto ran."""
    head = "| table | ε | " + " | ".join(f"W={w:g}, φ={p:g}" for w, p in pairs) + " |"
    rows = [head, "|---|---|" + "---|" * len(pairs)]
    for t in names:
        for e in eps_list:
            row = f"| {t} | {e:g} |"
            for w, phi in pairs:
                got = [outcome(done, keys, t, e, s, w, phi) for s in range(seeds)]
                tv1 = [r["tv1"] for _, r in got]
                tv2 = [r["tv2"] for _, r in got]
                n_aim = sum(p == "aim" for p, _ in got)
                row += (
                    f" {np.mean(tv1):.4f}±{_se(tv1):.4f} /"
                    f" {np.mean(tv2):.4f}±{_se(tv2):.4f} (AIM {n_aim}/{seeds}) |"
                )
            rows.append(row)
    return "\n".join(rows)


def paired(done, keys, names, eps_list, seeds, pairs):
    """Markdown: per table and ε the paired change against today's pair of
    TV1 and TV2 (mean over seeds ± its standard error, relative to today's
    mean) at each ``(W, φ)`` of ``pairs``."""
    head = "| table | ε | " + " | ".join(f"W={w:g}, φ={p:g}" for w, p in pairs) + " |"
    rows = [head, "|---|---|" + "---|" * len(pairs)]
    for t in names:
        for e in eps_list:
            base = [outcome(done, keys, t, e, s, *BASE)[1] for s in range(seeds)]
            row = f"| {t} | {e:g} |"
            for w, phi in pairs:
                now = [outcome(done, keys, t, e, s, w, phi)[1] for s in range(seeds)]
                parts = []
                for f in ("tv1", "tv2"):
                    d = [a[f] - b[f] for a, b in zip(now, base)]
                    m = np.mean([b[f] for b in base])
                    parts.append(f"{np.mean(d) / m:+.1%}±{_se(d) / m:.1%}")
                row += f" {parts[0]} / {parts[1]} |"
            rows.append(row)
    return "\n".join(rows)


def forced(done, keys, names, eps_list, seeds):
    """Markdown: ``W``'s own effect where AIM runs (``hi@W``, the seeds
    where every ``W`` ran AIM): TV1 / TV2 at today's ``W`` (mean ± standard
    error) and the paired change at each other ``W``."""
    others = [w for w in W_GRID if w != BASE[0]]
    head = "| table | ε | seeds | W=0.1 TV1 / TV2 |"
    head += "".join(f" W={w:g} ΔTV1 / ΔTV2 |" for w in others)
    rows = [head, "|---|---|---|---|" + "---|" * len(others)]
    for t in names:
        for e in eps_list:
            recs = [
                {w: done[(t, e, s, "auto", keys[f"hi@{w:g}"])] for w in W_GRID}
                for s in range(seeds)
            ]
            recs = [r for r in recs if all(x["chose"] == "aim" for x in r.values())]
            if not recs:
                continue
            b1 = [r[BASE[0]]["tv1"] for r in recs]
            b2 = [r[BASE[0]]["tv2"] for r in recs]
            row = (
                f"| {t} | {e:g} | {len(recs)} | {np.mean(b1):.4f}±{_se(b1):.4f} /"
                f" {np.mean(b2):.4f}±{_se(b2):.4f} |"
            )
            for w in others:
                parts = []
                for f, base in (("tv1", b1), ("tv2", b2)):
                    d = [r[w][f] - b for r, b in zip(recs, base)]
                    m = np.mean(base)
                    parts.append(f"{np.mean(d) / m:+.1%}±{_se(d) / m:.1%}")
                row += f" {parts[0]} / {parts[1]} |"
            rows.append(row)
    return "\n".join(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench_aim_share", description=__doc__)
    ap.add_argument("--tables", default="credit,acs12,hmda,cps1988")
    ap.add_argument("--eps", default="1,0.3")
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--cache", default="benchmarks/results/bench_aim_share.jsonl")
    ap.add_argument("--no-run", action="store_true")
    ap.add_argument("--w", default=",".join(f"{w:g}" for w in W_GRID))
    ap.add_argument("--pairs", default="0.1:0.65,0.25:0.65,0.4:0.65,0.4:1")
    args = ap.parse_args(argv)
    names = tuple(t for t in args.tables.split(",") if t in bs.TUNE)
    assert names == tuple(args.tables.split(",")), "TUNE tables only"
    eps_list = [float(x) for x in args.eps.split(",")]
    W_GRID[:] = [float(w) for w in args.w.split(",")]
    done, keys = run(names, eps_list, args.seeds, args.cache, args.no_run)
    report(done, keys, names, eps_list, args.seeds)
    pairs = [tuple(float(v) for v in p.split(":")) for p in args.pairs.split(",")]
    print()
    print(table(done, keys, names, eps_list, args.seeds, pairs))
    print("\npaired change against (0.1, 0.65), TV1 / TV2\n")
    print(paired(done, keys, names, eps_list, args.seeds, pairs))
    print("\nAIM forced (phi = 1e6): W's own effect, paired against W = 0.1\n")
    print(forced(done, keys, names, eps_list, args.seeds))


if __name__ == "__main__":
    main()
