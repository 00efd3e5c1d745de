"""Rows past a numeric column's upper cap, placed past it from the release's
top-bin estimate (``skdp_synth.preprocessing._tail_past_cap``), against the
same fits with the rule off (the top bin's excess then decoded inside it,
or given to its emptied leaves by ``_bin_mass.fill_emptied_leaves``).

Per table, ε and seed, the ``auto`` pipeline of
``benchmarks/bench_suite.py`` (``fit_ours``, ``--light``: the same
encoder, release, seeds and held-out rows) twice in one process, the rule
on (``lib``) and off (``off``): each numeric column's std ratio
(synthetic / held-out) and KS, whether a warning named it, and the
placements the rule made (the top bin's old and new cap and the rows it
moved). A column "collapsed" where its std ratio is under 0.5.

    PYTHONPATH=. python -m benchmarks.bench_tail_past_cap --tables credit \\
        --eps 1 --seeds 20 [--columns Debt,Assets]

Results: ``benchmarks/results/bench_tail_past_cap.md``.
"""

from __future__ import annotations

import argparse
import contextlib

import numpy as np


@contextlib.contextmanager
def _rule(on, placed):
    """The rule on (recording each placement into ``placed``) or off."""
    from skdp_synth.preprocessing import _tail_past_cap as tpc

    orig = tpc.place_capped_tail

    def wrapped(hist, edges, estimates):
        out = orig(hist, edges, estimates) if on else hist
        if out is not hist:
            moved = float(np.sum(out.counts) - np.sum(hist.counts))
            placed.append((float(hist.cap[1]), float(out.cap[1]), moved))
        return out

    tpc.place_capped_tail = wrapped
    try:
        yield
    finally:
        tpc.place_capped_tail = orig


_CONTEXTS = {}


def run(table, eps, seed, on):
    """``(std, ks, named, placed)`` of one fit."""
    from benchmarks.bench_suite import context, fit_ours, numeric_scores

    if table not in _CONTEXTS:
        _CONTEXTS[table] = context(table)
    ctx = _CONTEXTS[table]
    placed = []
    with _rule(on, placed):
        syn, info = fit_ours(
            ctx["train"], ctx["cats"], ctx["options"], eps, seed, "auto"
        )
    scores = numeric_scores(syn, ctx["test"], ctx["cats"])
    named = {c for w in info["warnings"] for c in w["columns"]}
    return scores["std"], scores["ks"], named, placed


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tables", default="credit")
    p.add_argument("--eps", default="1")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--columns", default=None)
    a = p.parse_args(argv)
    cols = a.columns.split(",") if a.columns else None
    for table in a.tables.split(","):
        for eps in (float(v) for v in a.eps.split(",")):
            tot = {"off": [0, 0, 0, []], "lib": [0, 0, 0, []]}
            print(f"\n### {table}, ε = {eps:g}, seeds 0-{a.seeds - 1}\n")
            print("| seed | column | std off | std lib | KS off | KS lib |")
            print("|---|---|---|---|---|---|")
            for seed in range(a.seeds):
                res = {arm: run(table, eps, seed, arm == "lib") for arm in tot}
                for arm, (std, ks, named, placed) in res.items():
                    t = tot[arm]
                    t[0] += sum(s < 0.5 for s in std.values())
                    t[1] += sum(
                        not 0.5 <= s <= 2 and c not in named for c, s in std.items()
                    )
                    t[2] += len(placed)
                    t[3] += list(ks.values())
                lib_placed = res["lib"][3]
                for c in std_cols(res, cols):
                    so, sl = res["off"][0][c], res["lib"][0][c]
                    ko, kl = res["off"][1][c], res["lib"][1][c]
                    if cols is None and abs(so - sl) < 1e-9 and abs(ko - kl) < 1e-9:
                        continue
                    mo, ml = ("*" if c in res[arm][2] else "" for arm in ("off", "lib"))
                    print(
                        f"| {seed} | {c} | {so:.2f}{mo} | {sl:.2f}{ml}"
                        f" | {ko:.3f} | {kl:.3f} |"
                    )
                for old, new, moved in lib_placed:
                    print(
                        f"| {seed} | (placed) | cap {old:.6g} | -> {new:.6g} | "
                        f"{moved:.0f} rows | |"
                    )
            print()
            for arm, (col, silent, n, ks) in tot.items():
                print(
                    f"{arm}: columns under 0.5 {col}, silent out of [0.5, 2] "
                    f"{silent}, placements {n}, mean KS {np.mean(ks):.4f}"
                )


def std_cols(res, cols):
    return [c for c in res["off"][0] if cols is None or c in cols]


if __name__ == "__main__":
    main()
