"""The leaves of a numeric column's outermost coarse bin bounded by a
density non-increasing in ``t`` when the decoder fills the bin from them
(:func:`outer_bin_weights`, applied here after
``skdp_synth.preprocessing._decoding._beyond_gap_weights``; not in the
library), against the same fits with the leaves weighed as the library
does.

Per table, ε and seed, the ``auto`` pipeline of
``benchmarks/bench_suite.py`` (``fit_ours``, ``--light``: the same
encoder, release, seeds and held-out rows) once per arm in one process:
``off`` (the noisy counts), ``mono`` (each leaf's density in ``t`` at most
the smallest of the kept leaves between it and the bin's inner edge) and
``room`` (each leaf past the bin's first kept leaf at most ``E w_j /
(t_j+1 - t_c)`` of the ``E`` rows past it, as
``_tail_past_cap._room``). Per arm: numeric column-fits outside ``[0.5,
2]`` and not named by a warning ("silent"), column-fits above 2, the mean
KS; then every column-fit whose KS moved by more than ``--show``:

    PYTHONPATH=. python -m benchmarks.bench_outer_bin_decay \\
        --tables skew,calls,area --eps 0.3,1 --seeds 20

``skew`` (built here, no download): 4,000 rows, a log-normal amount, a
zero-inflated amount with a long tail, a bell-shaped count, a two-component
amount (80 % near 40, 20 % near 3,000: a second component far out in
its outer bin) and a category. ``calls`` and ``area``:
``bench_tail_past_cap.synthetic_table``. Real tables by name (TUNE half
only). Results: ``benchmarks/results/bench_outer_bin_decay.md``.
"""

from __future__ import annotations

import argparse
import contextlib

import numpy as np

ARMS = ("off", "mono", "room")


@contextlib.contextmanager
def _arm(arm):
    """The decoder's leaf weights bounded by ``arm`` (:func:`outer_bin_weights`)
    after its own (``_decoding._beyond_gap_weights``); ``off``: its own."""
    from skdp_synth.preprocessing import _decoding

    orig = _decoding._beyond_gap_weights

    def wrapped(hist, j0, j1, mode, cap_lo, cap_hi):
        w = orig(hist, j0, j1, mode, cap_lo, cap_hi)
        return outer_bin_weights(hist, j0, j1, mode, cap_lo, cap_hi, w, arm)

    if arm != "off":
        _decoding._beyond_gap_weights = wrapped
    try:
        yield
    finally:
        _decoding._beyond_gap_weights = orig


def outer_bin_weights(hist, j0, j1, mode, cap_lo, cap_hi, w, rule):
    """The weights ``w`` of the leaves ``j0..j1 - 1`` of a coarse bin
    bounded by a density non-increasing in ``t`` outwards of the bin's
    first kept leaf, where the bin is outermost (no kept leaf past it
    inside the cap) and lies wholly outwards of the core's densest leaf
    ``mode``. ``rule``: ``"mono"`` each leaf's density in ``t`` at most the
    smallest density of the kept leaves between it and the bin's first
    kept leaf; ``"room"`` each leaf past the first kept leaf at most ``E
    w_j / (t_j+1 - t_c)`` of the ``E`` rows past it (``t_c`` its outer
    edge). Point masses (finest leaves) keep their weight and bound
    nothing. Post-processing of the noisy counts."""
    from skdp_synth.preprocessing._numeric_domain import _t

    if mode is None or w.size < 2:
        return w
    c, e = hist.counts, hist.edges
    if e[j0] >= e[mode + 1]:
        order = list(range(w.size))
        past = np.flatnonzero(c[j1:] > 0) + j1
    elif e[j1] <= e[mode]:
        order = list(range(w.size - 1, -1, -1))
        past = np.flatnonzero(c[:j0] > 0)
    else:
        return w
    past = past[(e[past + 1] > cap_lo) & (e[past] < cap_hi)]
    if past.size:
        return w
    w = np.asarray(w, dtype=np.float64).copy()
    lo = np.maximum(e[j0:j1], cap_lo)
    hi = np.minimum(e[j0 + 1 : j1 + 1], cap_hi)
    span = np.where(hi > lo, _t(hi) - _t(lo), 0.0)
    finest = np.asarray(hist.finest[j0:j1], dtype=bool)
    use = [i for i in order if w[i] > 0 and span[i] > 0 and not finest[i]]
    if len(use) < 2:
        return w
    if rule == "mono":
        limit = w[use[0]] / span[use[0]]
        for i in use[1:]:
            w[i] = min(w[i], limit * span[i])
            limit = min(limit, w[i] / span[i])
        return w
    first, rest = use[0], use[1:]
    side = 1 if order[0] == 0 else -1
    tc = _t(hi[first]) if side > 0 else _t(lo[first])
    excess = float(w[rest].sum())
    for i in rest:
        reach = (_t(hi[i]) - tc) if side > 0 else (tc - _t(lo[i]))
        if reach > 0:
            w[i] = min(w[i], excess * span[i] / reach)
    return w


def skew_table(seed=0):
    """``(frame, categorical columns)`` of the ``skew`` table (module
    docstring). Public shapes, drawn from ``seed``."""
    import pandas as pd

    r = np.random.default_rng(3000 + seed)
    n = 4000
    d = {
        "amount": np.round(np.exp(r.normal(np.log(1000), 0.8, n))).astype(int),
        "debt": np.where(
            r.random(n) < 0.8, 0, np.round(np.exp(r.normal(np.log(600), 1.2, n)))
        ).astype(int),
        "count": np.round(r.normal(20, 5, n)).clip(0).astype(int),
        "two": np.where(
            r.random(n) < 0.8,
            np.round(np.exp(r.normal(np.log(40), 0.4, n))),
            np.round(np.exp(r.normal(np.log(3000), 0.3, n))),
        ).astype(int),
        "group": r.choice(list("ABCD"), n),
    }
    df = pd.DataFrame(d)
    for c in df.columns:
        if df[c].dtype.kind == "i":
            df[c] = df[c].astype("Int64")
    return df, ["group"]


_CONTEXTS = {}


def _context(table):
    from benchmarks.bench_suite import context, split
    from benchmarks.bench_tail_past_cap import synthetic_table

    if table not in _CONTEXTS:
        if table in ("skew", "calls", "area"):
            df, cats = skew_table() if table == "skew" else synthetic_table(table)
            train, test = split(df)
            _CONTEXTS[table] = {
                "train": train,
                "test": test,
                "cats": cats,
                "options": {},
            }
        else:
            _CONTEXTS[table] = context(table)
    return _CONTEXTS[table]


def run(table, eps, seed, arm):
    """``(std, ks, named)`` of one fit."""
    from benchmarks.bench_suite import fit_ours, numeric_scores

    ctx = _context(table)
    with _arm(arm):
        syn, info = fit_ours(
            ctx["train"], ctx["cats"], ctx["options"], eps, seed, "auto"
        )
    scores = numeric_scores(syn, ctx["test"], ctx["cats"])
    named = {c for w in info["warnings"] for c in w["columns"]}
    return scores["std"], scores["ks"], named


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tables", default="skew")
    p.add_argument("--eps", default="0.3,1")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--arms", default=",".join(ARMS))
    p.add_argument("--show", type=float, default=0.02)
    a = p.parse_args(argv)
    arms = a.arms.split(",")
    for table in a.tables.split(","):
        for eps in (float(v) for v in a.eps.split(",")):
            tot = {arm: [0, 0, []] for arm in arms}
            per_col = {arm: {} for arm in arms}
            changed = []
            for seed in range(a.seeds):
                res = {arm: run(table, eps, seed, arm) for arm in arms}
                for arm, (std, ks, named) in res.items():
                    t = tot[arm]
                    t[0] += sum(
                        not 0.5 <= s <= 2 and c not in named for c, s in std.items()
                    )
                    t[1] += sum(s > 2 for s in std.values())
                    t[2] += list(ks.values())
                    for c, k in ks.items():
                        per_col[arm].setdefault(c, []).append(k)
                for c in res[arms[0]][1]:
                    ks = [res[arm][1][c] for arm in arms]
                    if max(ks) - min(ks) > a.show:
                        std = [res[arm][0][c] for arm in arms]
                        marks = ["*" if c in res[arm][2] else "" for arm in arms]
                        changed.append((seed, c, std, ks, marks))
            print(f"\n### {table}, ε = {eps:g}, seeds 0-{a.seeds - 1}\n")
            print("| arm | silent out of [0.5, 2] | std > 2 | mean KS |")
            print("|---|---|---|---|")
            for arm, (silent, big, ks) in tot.items():
                print(f"| {arm} | {silent} | {big} | {np.mean(ks):.4f} |")
            print("\n| column | " + " | ".join(f"mean KS {arm}" for arm in arms) + " |")
            print("|---|" + "---|" * len(arms))
            for c in per_col[arms[0]]:
                cells = " | ".join(f"{np.mean(per_col[arm][c]):.4f}" for arm in arms)
                print(f"| {c} | {cells} |")
            head = " | ".join(f"std {arm}" for arm in arms)
            kh = " | ".join(f"KS {arm}" for arm in arms)
            print(f"\n| seed | column | {head} | {kh} |")
            print("|---|---|" + "---|" * (2 * len(arms)))
            for seed, c, std, ks, marks in changed:
                s1 = " | ".join(f"{x:.2f}{m}" for x, m in zip(std, marks))
                s2 = " | ".join(f"{x:.3f}" for x in ks)
                print(f"| {seed} | {c} | {s1} | {s2} |")


if __name__ == "__main__":
    main()
