"""Small-integer and count columns: std ratio, KS and W/IQR over many seeds.

One synthetic table of 3,000 rows modelled on the count columns of real
mixed tables (the shapes only; no real rows are read):

* ``year``: 7 whole values 2003-2009, uniform-ish (a wage panel's year);
* ``wkend``: weekend nights, 0-12, 45 % zero, a thin tail (a hotel table);
* ``vmail``: voicemail messages, 72 % zero, the rest normal(29, 8) rounded;
* ``inq``: inquiries, negative binomial (mean 1.9, long thin tail);
* ``opened``: accounts opened, negative binomial (mean 4.4);
* ``inst``: installment accounts, Poisson(2.7) with 15 % zero inflation;
* ``dist``: whole-number distances 1-29, skewed to small values;
* ``momed``: years of schooling 0-20 (float with 8 % missing, 35 % at 12);

plus filler columns (four floats, four categoricals) so that each numeric
column's share of the domain budget is that of a 16-column mixed table.
Counts are stored as ``int64`` (public dtype), ``momed`` as float.

Each fit is the default pipeline (``fit_default_pipeline``); a column is
*silent* in a fit where its rows' std over the data's is outside [0.5, 2]
and ``degenerate_columns_`` does not name it. Reports per column and ε:
silent fits, named fits (in band: false alarms by this measure), std
ratio min-max, mean KS and mean W/IQR
(Wasserstein-1 over the data's interquartile range, the IQR floored at 1
for integers).

``PYTHONPATH=. python -m benchmarks.bench_count_columns --eps 1,0.3
--seeds 10``; results in ``benchmarks/results/bench_count_columns.md``.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np
import pandas as pd

COUNT_COLUMNS = ["year", "wkend", "vmail", "inq", "opened", "inst", "dist", "momed"]


def table(n=3000, seed=0):
    """The synthetic table of the module docstring (fixed data seed)."""
    rng = np.random.default_rng(seed)
    wkend = np.where(rng.random(n) < 0.45, 0, np.minimum(rng.geometric(0.45, n), 12))
    vmail = np.where(
        rng.random(n) < 0.72, 0, np.clip(rng.normal(29, 8, n).round(), 4, 51)
    )
    dist = np.clip(np.ceil(rng.gamma(1.3, 7.0, n)), 1, 29)
    momed = np.clip(np.round(rng.normal(11.5, 3.2, n)), 0, 20)
    momed = np.where(rng.random(n) < 0.35, 12.0, momed)
    momed = np.where(rng.random(n) < 0.08, np.nan, momed)
    cols = {
        "year": rng.choice(
            np.arange(2003, 2010), n, p=[0.15, 0.14, 0.14, 0.14, 0.14, 0.14, 0.15]
        ),
        "wkend": wkend.astype(np.int64),
        "vmail": vmail.astype(np.int64),
        "inq": rng.negative_binomial(1.2, 1.2 / 3.1, n).astype(np.int64),
        "opened": rng.negative_binomial(3.0, 3.0 / 7.4, n).astype(np.int64),
        "inst": np.where(rng.random(n) < 0.15, 0, rng.poisson(2.7, n)).astype(np.int64),
        "dist": dist.astype(np.int64),
        "momed": momed,
    }
    cols |= {f"f{i}": rng.lognormal(3 + i, 0.6, n) for i in range(4)}
    cols |= {f"k{i}": rng.choice(list("abcde")[: 2 + i], n) for i in range(4)}
    return pd.DataFrame(cols)


def _wiqr(a, b, integer):
    from scipy.stats import wasserstein_distance

    q1, q3 = np.percentile(a, [25, 75])
    iqr = max(q3 - q1, 1.0 if integer else 1e-12)
    return wasserstein_distance(a, b) / iqr


def measure(df, eps, seeds):
    """Per column: list of ``(seed, ratio, named, ks, wiqr)``."""
    from scipy.stats import ks_2samp

    from benchmarks._harness import fit_default_pipeline

    out = defaultdict(list)
    for seed in seeds:
        pipe = fit_default_pipeline(df, eps, seed)
        rows = pipe.sample(len(df), random_state=seed)
        named = set(pipe.degenerate_columns_)
        for c in COUNT_COLUMNS:
            a = df[c].dropna().to_numpy(float)
            b = pd.to_numeric(rows[c], errors="coerce").dropna().to_numpy(float)
            ratio = b.std() / a.std() if len(b) > 1 else 0.0
            ks = ks_2samp(a, b).statistic if len(b) else 1.0
            w = _wiqr(a, b, c != "momed") if len(b) else np.inf
            out[c].append((seed, ratio, c in named, ks, w))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eps", default="1,0.3")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0)
    args = ap.parse_args(argv)
    df = table()
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    head = "| ε | column | silent | named (in band) | std ratio min-max | KS | W/IQR |"
    print(head + " silent seeds |")
    print("|---|---|---|---|---|---|---|---|")
    total = band = 0
    for eps in [float(e) for e in args.eps.split(",")]:
        res = measure(df, eps, seeds)
        for c in COUNT_COLUMNS:
            r = res[c]
            ratios = [x[1] for x in r]
            silent = [
                f"{x[0]} ({x[1]:.2f})" for x in r if not x[2] and not 0.5 <= x[1] <= 2.0
            ]
            total += len(silent)
            band += sum(x[2] and 0.5 <= x[1] <= 2.0 for x in r)
            print(
                f"| {eps:g} | {c} | {len(silent)} | {sum(x[2] for x in r)} "
                f"({sum(x[2] and 0.5 <= x[1] <= 2.0 for x in r)}) | "
                f"{min(ratios):.2f}-{max(ratios):.2f} | "
                f"{np.mean([x[3] for x in r]):.3f} | "
                f"{np.mean([x[4] for x in r]):.3f} | "
                f"{', '.join(silent)} |",
                flush=True,
            )
    print(f"silent column-fits: {total}; named in band: {band}")


if __name__ == "__main__":
    main()
