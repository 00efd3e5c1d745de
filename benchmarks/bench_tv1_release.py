"""The release's TV1 against MST's with the same public bins, column by column.

Run: ``python -m benchmarks.bench_tv1_release --tables credit,acs12,hmda,cps1988
--eps 1,0.3 --seeds 5 --weights 0,4 [--mbi-cache DIR] [--cache PATH]`` (TUNE
half only).

One fit of ``bench_suite``'s ``auto-bins`` pipeline (the scores' deciles as
public ``bin_edges``) per table, ε, seed and weight ``w`` of
``ReleaseRules.aim_final_one_way_weight`` (AIM's final measurement allocates
its noise as if every 1-way table were in it at weight ``w``; 0: the pairs
alone), and one run of mbi's MST (seed 0, ``bench_suite``'s ``mbi-mst``).
Per column, on ``bench_suite``'s discretisation, TV1 against the *training*
rows (the mechanism's own error) of the stages of
``bench_tv1_sources.py``:

* ``noisy``: the release's noisy 1-way tables (``marginal_table``, negative
  cells clipped, normalised), on the release's levels;
* ``model``: the 1-way tables of the fitted model table the rows come from;
* ``rows``: ``pipeline.sample(n_train)``; ``rows_test``: the same rows
  against the held-out 20 %;

and per fit TV2 against the held-out and the training rows. The summary
averages the numeric and the categorical columns separately.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import warnings

import numpy as np
import pandas as pd

from benchmarks._harness import cached_keys
from benchmarks.bench_suite import DELTA, context, public_bins, tv_k


def _col_tv(codes, ref, sizes):
    out = []
    for j, m in enumerate(sizes):
        pa = np.bincount(codes[:, j], minlength=m) / len(codes)
        pb = np.bincount(ref[:, j], minlength=m) / len(ref)
        out.append(float(0.5 * np.abs(pa - pb).sum()))
    return out


def _lev_tv(shares, ref, n_levels):
    out = []
    for j, m in enumerate(n_levels):
        pb = np.bincount(ref[:, j], minlength=m) / len(ref)
        out.append(float(0.5 * np.abs(shares[j] - pb).sum()))
    return out


def ours(name, ctx, eps, seed, w):
    from benchmarks.bench_mixed import categories
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES
    from skdp_synth.preprocessing import BooleanEncoder

    train, coder = ctx["train"], ctx["coder"]
    enc = BooleanEncoder(
        categories=categories(train, ctx["cats"]),
        epsilon=None,
        random_state=seed,
        **ctx["options"],
        **public_bins(ctx["df"], coder),
    )
    rel = ProjectedGaussianRelease(epsilon=eps, delta=DELTA, random_state=seed)
    rel._rules = dataclasses.replace(DEFAULT_RULES, aim_final_one_way_weight=w)
    pipe = make_synthesis_pipeline(enc, rel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(train)
        rows = coder.codes(pd.DataFrame(pipe.sample(len(train), random_state=seed + 1)))
        N = len(rel._model_rows)
        model = coder.codes(pd.DataFrame(pipe.sample(N, random_state=seed + 1)))
        bits = pipe[0].transform(train)
    train_lev = rel.blocks_.to_levels(np.asarray(bits))
    nl = [int(m) for m in rel.blocks_.n_levels]
    noisy = []
    for j in range(len(nl)):
        t = np.clip(rel.marginal_table([j]).to_numpy().astype(float), 0, None)
        noisy.append(t / max(t.sum(), 1e-9))
    tr, te, sizes = ctx["train_codes"], ctx["test_codes"], coder.sizes
    return {
        "selection": rel.selection_,
        "noisy": _lev_tv(noisy, train_lev, nl),
        "model": _col_tv(model, tr, sizes),
        "rows": _col_tv(rows, tr, sizes),
        "rows_test": _col_tv(rows, te, sizes),
        "tv2": tv_k(te, rows, sizes, 2),
        "tv2_train": tv_k(tr, rows, sizes, 2),
    }


def mst(ctx, eps, mbi_cache, cap):
    from benchmarks._compare import run_mbi

    coder = ctx["coder"]
    codes = coder.codes(ctx["train"])
    sizes = [s - 1 for s in coder.sizes]  # as bench_suite's fit_mbi
    with tempfile.TemporaryDirectory() as tmp:
        out, _ = run_mbi(
            codes, sizes, "mst", eps, DELTA, 0, tmp, cache=mbi_cache, timeout=cap
        )
    rows = out["round"][0]
    tr, te, sizes = ctx["train_codes"], ctx["test_codes"], coder.sizes
    return {
        "selection": "mst",
        "rows": _col_tv(rows, tr, sizes),
        "rows_test": _col_tv(rows, te, sizes),
        "tv2": tv_k(te, rows, sizes, 2),
        "tv2_train": tv_k(tr, rows, sizes, 2),
    }


def summary(recs):
    lines = [
        "| table | ε | arm | chose | noisy num / cat | model num / cat "
        "| rows num / cat | rows (held-out) num / cat | TV2 held-out (train) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    df = pd.DataFrame(recs)
    for (t, e, arm), g in df.groupby(["table", "eps", "arm"], sort=False):
        isnum = np.array(g.iloc[0]["isnum"])

        def part(field, g=g, isnum=isnum):
            if field not in g or g[field].isna().any():
                return "-"
            a = np.mean(np.stack(g[field].to_list()), axis=0)
            return f"{a[isnum].mean():.4f} / {a[~isnum].mean():.4f}"

        chose = ",".join(sorted(set(g["selection"])))
        lines.append(
            f"| {t} | {e:g} | {arm} | {chose} | {part('noisy')} | {part('model')} "
            f"| {part('rows')} | {part('rows_test')} "
            f"| {g['tv2'].mean():.4f} ({g['tv2_train'].mean():.4f}) |"
        )
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", default="credit,acs12,hmda,cps1988")
    ap.add_argument("--eps", default="1,0.3")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--weights", default="0,4")
    ap.add_argument("--mbi-cache", default=None, help="folder for mbi's runs")
    ap.add_argument("--cap", type=float, default=900.0)
    ap.add_argument("--no-mst", action="store_true")
    ap.add_argument("--cache", default="tv1_release.jsonl")
    a = ap.parse_args(argv)
    done = cached_keys(a.cache, None)
    for name in a.tables.split(","):
        ctx = None
        for eps in [float(e) for e in a.eps.split(",")]:
            todo = [] if a.no_mst else [(0, "mst", None)]
            todo += [
                (s, f"w={float(w):g}", float(w))
                for s in range(a.seeds)
                for w in a.weights.split(",")
            ]
            for seed, arm, w in todo:
                if (name, eps, seed, arm) in done:
                    continue
                ctx = ctx or context(name)
                cols = list(ctx["coder"].columns)
                rec = {
                    "table": name,
                    "eps": eps,
                    "seed": seed,
                    "arm": arm,
                    "isnum": [c not in ctx["cats"] for c in cols],
                    "columns": cols,
                }
                if w is None:
                    rec.update(mst(ctx, eps, a.mbi_cache, a.cap))
                else:
                    rec.update(ours(name, ctx, eps, seed, w))
                print(name, eps, seed, arm, f"{np.mean(rec['rows']):.4f}", flush=True)
                with open(a.cache, "a") as fh:
                    fh.write(json.dumps(rec) + "\n")
    with open(a.cache) as fh:
        recs = [json.loads(x) for x in fh]
    print(summary(recs))


if __name__ == "__main__":
    main()
