"""Where ``auto``'s TV1 error comes from, stage by stage (public bins).

Run: ``python -m benchmarks.bench_tv1_sources --tables credit,acs12 --eps 1
--seeds 2 [--cache PATH]`` (TUNE half only).

One fit of ``bench_suite``'s ``auto-bins`` pipeline (the scores' deciles as
public ``bin_edges``) per table, ε and seed; per column TV1 on
``bench_suite``'s discretisation against the *training* rows (the
mechanism's own error) and the held-out rows, averaged over columns, of:

* ``noisy``: the release's noisy 1-way tables (``marginal_table``, negative
  cells clipped, normalised), on the release's attribute levels;
* ``model``: the 1-way marginals of the fitted model table the rows are
  drawn from (``_model_rows``), decoded;
* ``rows``: ``pipeline.sample(n_train)``, the rows users get;
* ``iid``: ``n_train`` rows drawn i.i.d. from the model table, decoded --
  what i.i.d. sampling would add;
* ``roundtrip``: the training rows encoded and decoded (the decoding's own
  error; 0 when the public bins are the scores' bins).

The attribute-level numbers (``*_lev``) compare the release's levels
directly (no decoding).
"""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np
import pandas as pd

from benchmarks._harness import cached_keys
from benchmarks.bench_suite import DELTA, context, public_bins


def _tv1(a, b, sizes):
    out = []
    for j, m in enumerate(sizes):
        pa = np.bincount(a[:, j], minlength=m) / len(a)
        pb = np.bincount(b[:, j], minlength=m) / len(b)
        out.append(0.5 * np.abs(pa - pb).sum())
    return float(np.mean(out))


def _lev_tv(p_rows, ref, n_levels):
    out = []
    for j, m in enumerate(n_levels):
        pa = (
            p_rows[j]
            if isinstance(p_rows, list)
            else np.bincount(p_rows[:, j], minlength=m) / len(p_rows)
        )
        pb = np.bincount(ref[:, j], minlength=m) / len(ref)
        out.append(0.5 * np.abs(pa - pb).sum())
    return float(np.mean(out))


def one(name, ctx, eps, seed, arm="auto-bins"):
    from benchmarks.bench_mixed import categories
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    train, coder = ctx["train"], ctx["coder"]
    bins = public_bins(ctx["df"], coder) if arm == "auto-bins" else {}
    numeric = ctx["mixed"] and not bins
    enc = BooleanEncoder(
        categories=categories(train, ctx["cats"]),
        epsilon="auto" if numeric else None,
        random_state=seed,
        **ctx["options"],
        **bins,
    )
    rel = ProjectedGaussianRelease(epsilon=eps, delta=DELTA, random_state=seed)
    pipe = make_synthesis_pipeline(enc, rel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(train)
        n = len(train)
        rows = pd.DataFrame(pipe.sample(n, random_state=seed + 1))
        model_rows = rel._model_rows
        N = len(model_rows)
        model = pd.DataFrame(pipe.sample(N, random_state=seed + 1))
        rng = np.random.default_rng(seed + 7)
        idx = rng.integers(0, N, size=n)
        iid_bits = rel.blocks_.to_bits(model_rows[idx]).astype(np.float64)
        iid = pd.DataFrame(pipe[0].inverse_transform(iid_bits))
        bits = pipe[0].transform(train)
        rt = pd.DataFrame(pipe[0].inverse_transform(bits))
    train_lev = rel.blocks_.to_levels(np.asarray(bits))
    nl = [int(m) for m in rel.blocks_.n_levels]
    noisy = []
    for j in range(len(nl)):
        t = np.clip(rel.marginal_table([j]).to_numpy(), 0, None)
        noisy.append(t / max(t.sum(), 1e-9))
    rows_lev = rel.blocks_.to_levels(rel.sample(n, random_state=seed + 1))
    sizes, tr, te = coder.sizes, ctx["train_codes"], ctx["test_codes"]
    rec = {
        "table": name,
        "eps": eps,
        "seed": seed,
        "arm": arm,
        "selection": rel.selection_,
        "N": N,
        "n": n,
        "n_hat": float(rel.n_estimate_),
    }
    for k, f in (("model", model), ("rows", rows), ("iid", iid), ("roundtrip", rt)):
        c = coder.codes(f)
        rec[k] = _tv1(c, tr, sizes)
        rec[k + "_test"] = _tv1(c, te, sizes)
    rec["train_test"] = _tv1(tr, te, sizes)
    rec["noisy_lev"] = _lev_tv(noisy, train_lev, nl)
    rec["model_lev"] = _lev_tv(model_rows, train_lev, nl)
    rec["rows_lev"] = _lev_tv(rows_lev, train_lev, nl)
    rec["iid_lev"] = _lev_tv(model_rows[idx], train_lev, nl)
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", default="credit,acs12,hmda,cps1988,nass_cds")
    ap.add_argument("--eps", default="1,0.3")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--arm", default="auto-bins", choices=("auto-bins", "auto"))
    ap.add_argument("--cache", default="tv1_sources.jsonl")
    a = ap.parse_args(argv)
    done = cached_keys(a.cache, "auto-bins")
    for name in a.tables.split(","):
        ctx = context(name)
        for eps in [float(e) for e in a.eps.split(",")]:
            for seed in range(a.seeds):
                if (name, eps, seed, a.arm) in done:
                    continue
                rec = one(name, ctx, eps, seed, a.arm)
                print(json.dumps(rec), flush=True)
                with open(a.cache, "a") as fh:
                    fh.write(json.dumps(rec) + "\n")
    recs = []
    with open(a.cache) as fh:
        recs = [json.loads(x) for x in fh]
    df = pd.DataFrame(recs)
    df["arm"] = df.get("arm", "auto-bins")
    df["arm"] = df["arm"].fillna("auto-bins")
    cols = [
        "noisy_lev",
        "model_lev",
        "rows_lev",
        "iid_lev",
        "model",
        "rows",
        "iid",
        "roundtrip",
        "rows_test",
        "iid_test",
        "train_test",
    ]
    print(df.groupby(["arm", "table", "eps"])[cols].mean().round(4).to_string())


if __name__ == "__main__":
    main()
