"""Where the mixed tables' TV1 gap to MST comes from (``bench_suite``'s scores).

Run: ``python -m benchmarks.bench_oneway_gap --tables credit,acs12 --eps 1
--seeds 2 [--arms auto,dom-inf,rel-inf] [--cache PATH]`` (TUNE half only).

Per table, ε and seed it fits ``bench_suite``'s ``auto`` pipeline and
variants of it, and scores each numeric and categorical column's 1-way TV on
``bench_suite``'s deciles against the held-out rows (``tv1_test``) and the
training rows (``tv1_train``, the mechanism's own error). Arms:

* ``auto``: the default (``domain_share="auto"``), and from the same fit:
  ``fine``: each numeric column drawn alone from the encoder's released fine
  histogram (its coarse bins at the fine histogram's masses, each filled by
  ``decode_fine`` as the pipeline does), and ``oracle-bins``: the training
  rows' own coarse-bin shares filled by ``decode_fine`` (the within-bin
  decoding's error alone);
* ``dom-inf``: the encoder given ε = 1000 of its own, the release the ε
  ``auto`` leaves it (the domains' noise removed, the release's kept);
* ``rel-inf``: the encoder given the ε ``auto`` gives it, the release ε =
  1000 (the release's noise removed, the domains' kept).
* ``share=s``: ``domain_share=s``; ``grid=k`` / ``tree=s`` / ``nbins=k``:
  ``auto`` with ``_numeric_domain.GRID_STEP``, ``TREE_SHARE`` or the
  encoder's ``n_bins`` changed for that fit.

The ``dom-inf``/``rel-inf`` arms are diagnostics, not private releases of the
stated ε.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings

import numpy as np
import pandas as pd

from benchmarks.bench_suite import DELTA, context

BIG = 1000.0


def col_tv(coder, a_frame, b_codes):
    """Per column 1-way TV of ``a_frame``'s codes against ``b_codes``."""
    a = coder.codes(a_frame)
    out = {}
    for j, c in enumerate(coder.columns):
        m = coder.sizes[j]
        pa = np.bincount(a[:, j], minlength=m) / len(a)
        pb = np.bincount(b_codes[:, j], minlength=m) / len(b_codes)
        out[c] = float(0.5 * np.abs(pa - pb).sum())
    return out


def _pipe(ctx, enc_eps, rel_eps, seed, selection="auto", share="auto"):
    from benchmarks.bench_mixed import categories
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    train, cats = ctx["train"], ctx["cats"]
    enc = BooleanEncoder(
        categories=categories(train, cats),
        epsilon=enc_eps,
        random_state=seed,
        **ctx["options"],
    )
    rel = ProjectedGaussianRelease(
        epsilon=rel_eps, delta=DELTA, random_state=seed, selection=selection
    )
    pipe = make_synthesis_pipeline(enc, rel)
    if share != "auto":
        pipe.set_params(domain_share=float(share))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(train)
        syn = pd.DataFrame(pipe.sample(len(train), random_state=seed + 1))
    return pipe, syn


def _fill(spec, shares, n, rng):
    """``n`` values of ``spec``: coarse bins (and the missing level, last)
    drawn at ``shares``, each filled by ``decode_fine``."""
    from skdp_synth.preprocessing._decoding import decode_fine

    edges = np.asarray(spec.levels, dtype=float)
    p = np.clip(np.asarray(shares, dtype=float), 0, None)
    p = p / p.sum()
    k = rng.choice(len(p), size=n, p=p)
    miss = k == len(edges) - 1
    idx = np.where(miss, 0, k)
    vals = decode_fine(
        spec.fine, edges[idx], edges[idx + 1], idx == len(edges) - 2, rng
    )
    return np.where(miss, np.nan, vals)


def _fine_shares(spec):
    """The fine histogram's mass in each coarse bin, then its missing count."""
    h = spec.fine
    edges = np.asarray(spec.levels, dtype=float)
    mid = (h.edges[:-1] + h.edges[1:]) / 2
    k = np.clip(np.searchsorted(edges, mid, side="right") - 1, 0, len(edges) - 2)
    out = np.bincount(k, weights=h.counts, minlength=len(edges) - 1)
    miss = h.missing_count if spec.missing else 0.0
    return np.append(out, miss)


def _true_shares(spec, x):
    edges = np.asarray(spec.levels, dtype=float)
    x = pd.to_numeric(x, errors="coerce").astype(float).to_numpy()
    ok = ~np.isnan(x)
    k = np.clip(np.searchsorted(edges, x[ok], side="right") - 1, 0, len(edges) - 2)
    return np.append(np.bincount(k, minlength=len(edges) - 1), (~ok).sum())


def run_one(ctx, eps, seed, arms):
    coder = ctx["coder"]
    out = {}
    rng = np.random.default_rng(1000 + seed)

    def score(name, frame):
        out[name] = {
            "test": col_tv(coder, frame, ctx["test_codes"]),
            "train": col_tv(coder, frame, ctx["train_codes"]),
        }

    pipe, syn = _pipe(ctx, "auto", eps, seed)
    enc_eps = pipe.steps[0][1].privacy_guarantee_.epsilon
    out["share"] = enc_eps / eps
    score("auto", syn)
    specs = {s.name: s for s in pipe.steps[0][1].specs_}
    fine, oracle = syn.copy(), syn.copy()
    for c, s in specs.items():
        if s.kind != "numeric" or s.fine is None:
            continue
        fine[c] = _fill(s, _fine_shares(s), len(syn), rng)
        oracle[c] = _fill(s, _true_shares(s, ctx["train"][c]), len(syn), rng)
    score("fine", fine)
    score("oracle-bins", oracle)
    if "dom-inf" in arms:
        score("dom-inf", _pipe(ctx, BIG, eps - enc_eps, seed)[1])
    if "rel-inf" in arms:
        score("rel-inf", _pipe(ctx, enc_eps, BIG, seed)[1])
    for s in arms:
        if s.startswith("share="):
            score(s, _pipe(ctx, "auto", eps, seed, share=s[6:])[1])
        elif s.split("=")[0] in ("grid", "tree", "nbins"):
            score(s, _variant(ctx, eps, seed, s))
    return out


def _variant(ctx, eps, seed, arm):
    """``auto`` with one encoder constant changed: ``grid=`` (the depth-0
    cells' ``GRID_STEP``), ``tree=`` (``TREE_SHARE``), ``nbins=`` (``n_bins``)."""
    from skdp_synth.preprocessing import _numeric_domain as nd

    key, value = arm.split("=")
    saved = (nd.GRID_STEP, nd.TREE_SHARE, dict(ctx["options"]))
    try:
        if key == "grid":
            nd.GRID_STEP = int(value)
        elif key == "tree":
            nd.TREE_SHARE = float(value)
        else:
            ctx["options"] = {**ctx["options"], "n_bins": int(value)}
        return _pipe(ctx, "auto", eps, seed)[1]
    finally:
        nd.GRID_STEP, nd.TREE_SHARE, ctx["options"] = saved


def summary(rows, cats_of):
    """Mean TV1 (held-out / training rows), numeric and categorical columns."""
    agg = {}
    for r in rows:
        cats = cats_of[r["table"]]
        for arm, v in r["res"].items():
            if arm == "share":
                continue
            key = (r["table"], r["eps"], arm)
            for split in ("test", "train"):
                num = [x for c, x in v[split].items() if c not in cats]
                cat = [x for c, x in v[split].items() if c in cats]
                agg.setdefault(key, {}).setdefault(split, []).append(
                    (np.mean(num), np.mean(cat) if cat else np.nan, np.mean(num + cat))
                )
    print(
        "| table | ε | arm | TV1 all | numeric | categorical "
        "| (train rows: all / numeric / categorical) |"
    )
    print("|---|---|---|---|---|---|---|")
    for (t, e, arm), v in agg.items():
        te = np.nanmean(np.array(v["test"]), axis=0)
        tr = np.nanmean(np.array(v["train"]), axis=0)
        print(
            f"| {t} | {e:g} | {arm} | {te[2]:.4f} | {te[0]:.4f} | {te[1]:.4f} "
            f"| {tr[2]:.4f} / {tr[0]:.4f} / {tr[1]:.4f} |"
        )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", default="credit,acs12,hmda,attrition,cps1988,loans")
    ap.add_argument("--eps", default="1")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--arms", default="auto,dom-inf,rel-inf")
    ap.add_argument("--cache", default=None)
    ap.add_argument("--no-run", action="store_true")
    a = ap.parse_args(argv)
    arms = a.arms.split(",")
    rows, done = [], set()
    if a.cache and os.path.exists(a.cache):
        with open(a.cache) as f:
            rows = [json.loads(line) for line in f]
        done = {(r["table"], r["eps"], r["seed"], r["arms"]) for r in rows}
    cats_of = {}
    for t in a.tables.split(","):
        ctx = None
        for eps in map(float, a.eps.split(",")):
            for seed in range(a.seeds):
                if a.no_run or (t, eps, seed, a.arms) in done:
                    continue
                ctx = ctx or context(t)
                res = run_one(ctx, eps, seed, arms)
                rec = {"table": t, "eps": eps, "seed": seed, "arms": a.arms, "res": res}
                rows.append(rec)
                line = {
                    k: round(float(np.mean(list(v["test"].values()))), 4)
                    if isinstance(v, dict)
                    else v
                    for k, v in res.items()
                }
                print(t, eps, seed, line, flush=True)
                if a.cache:
                    with open(a.cache, "a") as f:
                        f.write(json.dumps(rec) + "\n")
    from benchmarks._suite_tables import load

    tables = {r["table"] for r in rows}
    for t in tables:
        cats_of[t] = set(load(t)[1])
    summary([r for r in rows if r["table"] in a.tables.split(",")], cats_of)


if __name__ == "__main__":
    main()
