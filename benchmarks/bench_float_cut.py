"""A smooth float column's stalled PrivTree leaf cut into parts at encoding:
what it costs against the leaf left whole.

``split_wide_leaves`` (``skdp_synth/preprocessing/_wide_leaves.py``) cuts
a heavy float leaf at depth 5 or more of its depth-0 cell into parts the
release measures one by one. That fixed a narrow latitude-like column
(``benchmarks/bench_float_leaves.py``), but a smooth column's leaf holding
15-29 % of its rows, cut into 16 parts, gave each part a count far under
the release's noise. This script fits, on a synthetic table like a
telecom churn table (``table``: 5,000 rows, 80 / 20 split as
``bench_suite``, 20 columns: four call-minute floats normal(180-200,
50), their charges at fixed rates -- normal(30, 9), (17, 4.3), (9, 2.3),
(2.8, 0.75), two decimals -- calls, counts, a 51-level state, yes/no
plans and a churn flag), ``make_synthesis_pipeline(BooleanEncoder(
epsilon="auto"), ProjectedGaussianRelease(selection="auto"))`` as
``bench_suite --light`` does, per arm:

* ``lib``: the library as it is;
* ``nocut``: no float leaf cut (``FLOAT_PARTS = 1``);
* ``cutonly``: the cut without the pipeline's undoing of it
  (``_pipeline_levels._uncut_leaves``, where the library has it);

and prints per seed the mean TV1 / TV2 over the suite's discretisation
(10 bins at the training rows' deciles) against the held-out rows, the
mean KS over the float columns, the silent float columns (std ratio
outside [0.5, 2], not named by a warning), and the float leaves cut
(column, leaf, parts). Also ``latitude``: the float column of
``bench_float_leaves.py`` (std ratio, silent).

``python -m benchmarks.bench_float_cut churn --eps 0.3,1 --seeds 10 --arms
lib,nocut``; results in ``benchmarks/results/bench_float_cut.md``.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

STATES = [f"S{i:02d}" for i in range(51)]


def table(seed=0, n=5000):
    """A churn-like frame (module docstring) and its categorical columns."""
    rng = np.random.default_rng(seed)
    vm = rng.random(n) < 0.27
    df = {
        "state": rng.choice(STATES, n),
        "account_length": pd.array(
            np.clip(rng.normal(101, 40, n).round(), 1, 243).astype(int), dtype="Int64"
        ),
        "area_code": rng.choice(["a408", "a415", "a510"], n, p=[0.25, 0.5, 0.25]),
        "international_plan": np.where(rng.random(n) < 0.1, "yes", "no"),
        "voice_mail_plan": np.where(vm, "yes", "no"),
        "number_vmail_messages": pd.array(
            np.where(vm, np.clip(rng.normal(29, 7, n).round(), 4, 51), 0).astype(int),
            dtype="Int64",
        ),
    }
    rates = {"day": 0.17, "eve": 0.085, "night": 0.045, "intl": 0.27}
    means = {"day": (180, 54), "eve": (200, 50), "night": (200, 50), "intl": (10, 2.8)}
    for part, rate in rates.items():
        mu, sd = means[part]
        minutes = np.clip(rng.normal(mu, sd, n), 0, None).round(1)
        calls = rng.poisson(4.5, n) if part == "intl" else rng.normal(100, 20, n)
        calls = np.clip(np.round(calls), 0, None).astype(int)
        minutes = np.where(calls == 0, 0.0, minutes)
        df[f"total_{part}_minutes"] = minutes
        df[f"total_{part}_calls"] = pd.array(calls, dtype="Int64")
        df[f"total_{part}_charge"] = (minutes * rate).round(2)
    service = rng.poisson(1.56, n)
    df["number_customer_service_calls"] = service.astype(str)
    z = (
        -2.6
        + 0.012 * (df["total_day_minutes"] - 180)
        + 0.5 * (service > 3)
        + 1.5 * (df["international_plan"] == "yes")
    )
    df["churn"] = np.where(rng.random(n) < 1 / (1 + np.exp(-z)), "yes", "no")
    df = pd.DataFrame(df)
    cats = [c for c in df.columns if df[c].dtype == object]  # service calls too
    return df, cats


def latitude_table():
    """``bench_float_leaves``' latitude table (2,300 rows, ε = 1)."""
    from benchmarks.bench_float_leaves import table as float_table

    df, eps = float_table("latitude")
    return df, [], eps


def _arm(name):
    """Patch the library for arm ``name``; returns an undo function."""
    from skdp_synth import _pipeline_levels
    from skdp_synth.preprocessing import _column_domain, _wide_leaves

    old = _wide_leaves.FLOAT_PARTS
    split = _column_domain.split_wide_leaves
    _column_domain.split_wide_leaves = _recording(split)
    CUTS.clear()
    uncut = getattr(_pipeline_levels, "_uncut_leaves", None)
    if name == "nocut":
        _wide_leaves.FLOAT_PARTS = 1
    elif name == "cutonly" and uncut is not None:
        _pipeline_levels._uncut_leaves = lambda *a: set()
    elif name not in ("lib", "cutonly"):
        raise ValueError(name)

    def undo():
        _wide_leaves.FLOAT_PARTS = old
        _column_domain.split_wide_leaves = split
        if uncut is not None:
            _pipeline_levels._uncut_leaves = uncut

    return undo


def cut_leaves(pipe):
    """``[(column, leaf, parts)]`` of the float leaves the encoder cut."""
    out = []
    for spec in pipe[0].specs_:
        wide = sorted(int(b) for b in getattr(spec, "wide", ()))
        if not wide or getattr(spec, "integer", True):
            continue
        starts = {float(spec.levels[b]) for b in wide}
        for a, b, parts in CUTS:
            if a in starts:
                out.append((str(spec.name), f"[{a:.4g}, {b:.4g})", parts))
    return out


#: ``(a, b, parts)`` of every leaf ``split_wide_leaves`` cut since the last
#: fit began (:func:`_recording`)
CUTS = []


def _recording(split):
    """``split_wide_leaves`` recording the float leaves it cuts in CUTS."""

    def wrapper(hist, edges, *args, **kwargs):
        out, marks = split(hist, edges, *args, **kwargs)
        if not hist.integer:
            before = {float(v) for v in edges}
            k = 0
            while k < len(out) - 1:
                if float(out[k]) in before and float(out[k + 1]) not in before:
                    j = k + 1
                    while float(out[j]) not in before:
                        j += 1
                    CUTS.append((float(out[k]), float(out[j]), j - k))
                    k = j
                else:
                    k += 1
        return out, marks

    return wrapper


def run_churn(eps_list, seeds, arms, tv2=True):
    from benchmarks.bench_suite import Coder, fit_ours, numeric_scores, split, tv_k

    df, cats = table()
    train, test = split(df)
    coder = Coder(df, train, cats)
    test_codes = coder.codes(test)
    floats = [c for c in df.columns if df[c].dtype == float]
    rows = []
    for arm in arms:
        for eps in eps_list:
            for seed in range(seeds):
                undo = _arm(arm)
                try:
                    syn, info = fit_ours(
                        train, cats, {}, eps, seed, "auto", keep_pipe=True
                    )
                finally:
                    undo()
                codes = coder.codes(syn)
                num = numeric_scores(syn, test, cats)
                named = {c for w in info["warnings"] for c in w["columns"]}
                silent = [
                    f"{c} {num['std'][c]:.2f}"
                    for c in floats
                    if not 0.5 <= num["std"][c] <= 2 and c not in named
                ]
                rec = {
                    "arm": arm,
                    "eps": eps,
                    "seed": seed,
                    "tv1": tv_k(test_codes, codes, coder.sizes, 1),
                    "tv2": tv_k(test_codes, codes, coder.sizes, 2) if tv2 else np.nan,
                    "ks": float(np.mean([num["ks"][c] for c in floats])),
                    "silent": silent,
                    "cut": cut_leaves(info["pipe"]),
                }
                rows.append(rec)
                print(
                    f"{arm} eps={eps:g} seed={seed} TV1 {rec['tv1']:.4f} "
                    f"TV2 {rec['tv2']:.4f} KS {rec['ks']:.4f} silent {silent} "
                    f"cut {rec['cut']}",
                    flush=True,
                )
    return rows


def run_latitude(seeds, arms):
    from benchmarks._harness import fit_default_pipeline

    df, _, eps = latitude_table()
    rows = []
    for arm in arms:
        for seed in range(seeds):
            undo = _arm(arm)
            try:
                pipe = fit_default_pipeline(df, eps, seed)
            finally:
                undo()
            syn = pipe.sample(len(df), random_state=seed)
            ratio = float(syn["x"].std() / df["x"].std())
            named = "x" in getattr(pipe, "degenerate_columns_", {})
            silent = not 0.5 <= ratio <= 2 and not named
            rows.append({"arm": arm, "seed": seed, "ratio": ratio, "silent": silent})
            print(
                f"{arm} seed={seed} std ratio {ratio:.2f} named {named} "
                f"silent {silent} cut {cut_leaves(pipe)}",
                flush=True,
            )
    return rows


def summary(rows, key):
    frame = pd.DataFrame(rows)
    if key == "churn":
        frame["n_silent"] = frame["silent"].map(len)
        frame["n_cut"] = frame["cut"].map(len)
        out = frame.groupby(["arm", "eps"])[["tv1", "tv2", "ks", "n_silent", "n_cut"]]
        print(
            out.agg(
                {
                    "tv1": "mean",
                    "tv2": "mean",
                    "ks": "mean",
                    "n_silent": "sum",
                    "n_cut": "sum",
                }
            )
            .round(4)
            .to_string()
        )
    else:
        frame["in_band"] = frame["ratio"].between(0.5, 2)
        print(frame.groupby("arm")[["in_band", "silent"]].sum().to_string())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["churn", "latitude"])
    ap.add_argument("--eps", default="0.3,1")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--arms", default="lib,nocut")
    ap.add_argument("--no-tv2", action="store_true")
    args = ap.parse_args(argv)
    arms = args.arms.split(",")
    if args.kind == "churn":
        eps = [float(e) for e in args.eps.split(",")]
        rows = run_churn(eps, args.seeds, arms, tv2=not args.no_tv2)
    else:
        rows = run_latitude(args.seeds, arms)
    summary(rows, args.kind)


if __name__ == "__main__":
    main()
