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

``--synthetic``: the tables ``calls`` and ``area`` (:func:`synthetic_table`,
built here, no download) in three arms: ``off``, ``nearest`` (the run to
the nearest leaf past ``2 b`` for every column, the rule before the room a
decaying tail leaves a leaf: ``_tail_past_cap._body_at_cap`` answering
no) and ``lib``; per arm the placements, those whose run ends farther
than 4 times ``1 + cap`` (2 in ``t``), the column-fits with a std ratio
above 10, out of ``[0.5, 2]`` and not named by a warning, and the mean KS,
then every column-fit whose std ratio changed:

    PYTHONPATH=. python -m benchmarks.bench_tail_past_cap --synthetic \\
        --tables calls,area --eps 0.3,1 --seeds 40

Results: ``benchmarks/results/bench_tail_past_cap.md``.
"""

from __future__ import annotations

import argparse
import contextlib

import numpy as np


@contextlib.contextmanager
def _rule(on, placed):
    """The rule on (recording each placement into ``placed``) or off;
    ``on="nearest"``: on, with every column's run ending at its nearest
    leaf past ``2 b`` (no leaf's room bounded by a decaying tail)."""
    from skdp_synth.preprocessing import _tail_past_cap as tpc

    orig, body = tpc.place_capped_tail, tpc._body_at_cap

    def wrapped(hist, edges, estimates):
        out = orig(hist, edges, estimates) if on else hist
        if out is not hist:
            moved = float(np.sum(out.counts) - np.sum(hist.counts))
            placed.append((float(hist.cap[1]), float(out.cap[1]), moved))
        return out

    tpc.place_capped_tail = wrapped
    if on == "nearest":
        tpc._body_at_cap = lambda estimates, k: False
    try:
        yield
    finally:
        tpc.place_capped_tail, tpc._body_at_cap = orig, body


def synthetic_table(name, seed=0):
    """``(frame, categorical columns)``: ``calls``, 5,000 rows of a
    churn-like table (three bell-shaped call counts ~ N(100, 20), their
    minutes and charges, an account length, a zero-inflated message count,
    a Poisson count, two categories: 14 numeric columns, so the domain's
    share of ε gives each leaf a large ``b``); ``area``, 2,930 rows of a
    house-sale-like table (right-skewed areas -- a first floor
    log-normal around 1,100 -- zero-inflated porch, deck, veneer and
    second-floor areas, a lot area, years, a price, coordinates: 15 numeric
    columns). Public shapes, drawn from ``seed``."""
    import pandas as pd

    r = np.random.default_rng({"calls": 1000, "area": 2000}[name] + seed)

    def lognormal(n, median, sigma, zeros=0.0):
        v = np.round(np.exp(r.normal(np.log(median), sigma, n)))
        return np.where(r.random(n) < zeros, 0, v).astype(int)

    d = {}
    if name == "calls":
        n = 5000
        for k in ("day", "eve", "night", "intl"):
            mu, sd, mins, msd = (4, 2.5, 10, 2.8) if k == "intl" else (100, 20, 180, 50)
            d[f"{k}_calls"] = np.round(r.normal(mu, sd, n)).clip(0).astype(int)
            d[f"{k}_minutes"] = np.round(r.normal(mins, msd, n).clip(0), 1)
            d[f"{k}_charge"] = np.round(d[f"{k}_minutes"] * 0.17, 2)
        d["account_length"] = np.round(r.normal(100, 40, n)).clip(1).astype(int)
        d["vmail"] = np.where(r.random(n) < 0.73, 0, np.round(r.normal(29, 7.5, n)))
        d["vmail"] = d["vmail"].clip(0).astype(int)
        d["service_calls"] = r.poisson(1.5, n)
        d["state"] = r.choice(list("ABCDEFGHIJ"), n)
        d["churn"] = r.choice(["yes", "no"], n, p=[0.14, 0.86])
        cats = ["state", "churn"]
    else:
        n = 2930
        d["first_flr_sf"] = lognormal(n, 1100, 0.32)
        d["second_flr_sf"] = lognormal(n, 750, 0.3, zeros=0.57)
        d["gr_liv_area"] = d["first_flr_sf"] + d["second_flr_sf"]
        d["lot_area"] = lognormal(n, 9500, 0.5)
        d["lot_frontage"] = np.round(r.normal(68, 22, n).clip(21)).astype(int)
        built = np.round(2010 - r.gamma(1.5, 25, n)).clip(1872, 2010)
        remod = np.round(2010 - r.gamma(1.2, 20, n)).clip(1950, 2010)
        d["year_built"] = built.astype(int)
        d["year_remod"] = np.maximum(built, remod).astype(int)
        d["bsmt_sf"] = lognormal(n, 1000, 0.4, zeros=0.03)
        garage = np.round(r.normal(480, 180, n)).clip(100)
        d["garage_area"] = np.where(r.random(n) < 0.05, 0, garage).astype(int)
        d["wood_deck"] = lognormal(n, 180, 0.6, zeros=0.52)
        d["open_porch"] = lognormal(n, 60, 0.7, zeros=0.45)
        d["mas_vnr"] = lognormal(n, 200, 0.7, zeros=0.6)
        d["sale_price"] = lognormal(n, 165000, 0.4)
        d["latitude"] = np.round(r.normal(42.03, 0.025, n), 6)
        d["longitude"] = np.round(r.normal(-93.63, 0.026, n), 6)
        d["zoning"] = r.choice(list("ABCDE"), n)
        d["quality"] = r.choice(list("PFGTE"), n)
        cats = ["zoning", "quality"]
    df = pd.DataFrame(d)
    for c in df.columns:
        if df[c].dtype.kind == "i":
            df[c] = df[c].astype("Int64")
    return df, cats


_CONTEXTS = {}
_SYNTH = ("calls", "area")


def _synthetic_context(table):
    from benchmarks.bench_suite import split

    df, cats = synthetic_table(table)
    train, test = split(df)
    return {"train": train, "test": test, "cats": cats, "options": {}}


def run(table, eps, seed, on):
    """``(std, ks, named, placed)`` of one fit."""
    from benchmarks.bench_suite import context, fit_ours, numeric_scores

    if table not in _CONTEXTS:
        _CONTEXTS[table] = (
            _synthetic_context(table) if table in _SYNTH else context(table)
        )
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
    p.add_argument("--synthetic", action="store_true")
    a = p.parse_args(argv)
    cols = a.columns.split(",") if a.columns else None
    if a.synthetic:
        return synthetic(a.tables.split(","), a.eps, a.seeds)
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


def synthetic(tables, eps_list, seeds):
    """The three arms on the synthetic tables (module docstring)."""
    arms = ("off", "nearest", "lib")
    for table in tables:
        for eps in (float(v) for v in eps_list.split(",")):
            tot = {arm: [0, 0, 0, 0, []] for arm in arms}
            changed = []
            for seed in range(seeds):
                res = {
                    arm: run(table, eps, seed, arm if arm != "off" else False)
                    for arm in arms
                }
                for arm, (std, ks, named, placed) in res.items():
                    t = tot[arm]
                    t[0] += len(placed)
                    t[1] += sum(_far(old, new) for old, new, _ in placed)
                    t[2] += sum(s > 10 for s in std.values())
                    t[3] += sum(
                        not 0.5 <= s <= 2 and c not in named for c, s in std.items()
                    )
                    t[4] += list(ks.values())
                for c in res["off"][0]:
                    v = [res[arm][0][c] for arm in arms]
                    if max(v) - min(v) > 1e-9:
                        marks = ["*" if c in res[arm][2] else "" for arm in arms]
                        changed.append((seed, c, v, marks))
            print(f"\n### {table}, ε = {eps:g}, seeds 0-{seeds - 1}\n")
            print(
                "| arm | placements | run past 4 (1 + cap) | std > 10 |"
                " silent out of [0.5, 2] | mean KS |"
            )
            print("|---|---|---|---|---|---|")
            for arm, (n, far, big, silent, ks) in tot.items():
                print(f"| {arm} | {n} | {far} | {big} | {silent} | {np.mean(ks):.4f} |")
            print("\n| seed | column | std off | std nearest | std lib |")
            print("|---|---|---|---|---|")
            for seed, c, v, marks in changed:
                cells = " | ".join(f"{x:.3g}{m}" for x, m in zip(v, marks))
                print(f"| {seed} | {c} | {cells} |")


def _far(old, new):
    """Whether a run past the cap ``old`` ends past 4 times ``1 + |old|``."""
    from skdp_synth.preprocessing._numeric_domain import _t

    return bool(abs(float(_t(new)) - float(_t(old))) > 2.0)


def std_cols(res, cols):
    return [c for c in res["off"][0] if cols is None or c in cols]


if __name__ == "__main__":
    main()
