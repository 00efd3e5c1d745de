"""Integer columns with few distinct values (a year on 7 near-uniform
values, small counts with a mode at 0-2, years of schooling 0-18 with a mode
at 12, weeks of gestation 20-45 with a sharp mode at 39) in small synthetic
mixed tables, through the ``auto`` pipeline of ``benchmarks/bench_suite.py``
(``fit_ours``, ``--light``): per ε and integer column the median / min /
max std ratio (synthetic / held-out), the fits outside ``[0.5, 2]`` and
those of them no warning named. ``--gap-span``: with
``skdp_synth.preprocessing._numeric_domain.GAP_SPAN`` on (off by default);
``--run-support Z``: with ``skdp_synth._pipeline_levels.RUN_SUPPORT_Z = Z``,
``off`` for ``None`` (the library's default is 1.0, with tentative and
tail-part bins in runs since; the results' arm "off" was the default when
they were measured, and is ``--run-support off`` now).

    PYTHONPATH=. python -m benchmarks.bench_int_levels --eps 0.3,1 --seeds 20
    PYTHONPATH=. python -m benchmarks.bench_int_levels --eps 0.3,1 --seeds 20 \\
        --gap-span
    PYTHONPATH=. python -m benchmarks.bench_int_levels --eps 0.3,1 --seeds 20 \\
        --run-support 1
    PYTHONPATH=. python -m benchmarks.bench_int_levels --eps 0.3,1 --seeds 20 \\
        --run-support off

Results: ``benchmarks/results/bench_int_levels.md``.
"""

from __future__ import annotations

import argparse

import numpy as np

INTS = (
    "year",
    "nights",
    "adults",
    "children",
    "requests",
    "school",
    "gestation",
    "visits",
    "mage",
)


def synthetic_table(name, seed=0):
    """``(frame, categorical columns)``: ``stays``, 3,000 rows and 12
    columns of a booking-like table (an arrival year on 2003-2009 near
    uniform, nights 0-10 with the mode at 1-2, a booking lag, a price, two
    counts, categories); ``births``, 10,000 rows and 12 columns of a
    birth-record-like table (a parent's years of schooling 0-18 with a mode
    at 12, weeks of gestation 20-45 with a sharp mode at 39, prenatal
    visits, a weight, ages, categories). Public shapes, drawn from
    ``seed``."""
    import pandas as pd

    r = np.random.default_rng({"stays": 3000, "births": 4000}[name] + seed)
    d = {}
    if name == "stays":
        n = 3000
        p = np.array([0.13, 0.15, 0.14, 0.15, 0.14, 0.15, 0.14])
        d["year"] = r.choice(np.arange(2003, 2010), n, p=p / p.sum())
        d["nights"] = np.minimum(r.geometric(0.38, n) - r.binomial(1, 0.1, n), 10)
        d["booking_lag"] = np.rint(r.gamma(1.2, 80, n)).astype(int)
        d["price"] = np.rint(np.exp(r.normal(4.6, 0.4, n)) * 100) / 100
        d["adults"] = r.choice([1, 2, 3, 4], n, p=[0.2, 0.7, 0.07, 0.03])
        d["children"] = np.where(r.random(n) < 0.9, 0, r.integers(1, 4, n))
        d["requests"] = r.poisson(0.6, n)
        d["week"] = r.integers(1, 54, n)
        d["hotel"] = r.choice(["city", "resort"], n, p=[0.6, 0.4])
        d["meal"] = r.choice(["BB", "HB", "FB", "SC"], n, p=[0.7, 0.15, 0.05, 0.1])
        d["segment"] = r.choice(list("ABCDE"), n)
        d["canceled"] = r.choice(["yes", "no"], n, p=[0.35, 0.65])
        cats = ["hotel", "meal", "segment", "canceled"]
    else:
        n = 10000
        school = np.rint(r.normal(13, 2.6, n)).clip(0, 18)
        school = np.where(r.random(n) < 0.3, 12, school)
        d["school"] = school.astype(int)
        gest = np.rint(r.normal(39, 1.3, n))
        pre = r.random(n) < 0.08
        gest = np.where(pre, np.rint(r.normal(33, 3.5, n)), gest)
        d["gestation"] = gest.clip(20, 45).astype(int)
        d["visits"] = np.rint(r.normal(12, 4, n)).clip(0, 30).astype(int)
        d["weight"] = np.rint(r.normal(7.2, 1.3, n).clip(1) * 100) / 100
        d["mage"] = np.rint(r.normal(28, 6, n)).clip(14, 50).astype(int)
        d["fage"] = (d["mage"] + np.rint(r.normal(2.5, 4, n))).clip(14, 60)
        d["fage"] = np.where(r.random(n) < 0.12, np.nan, d["fage"])
        d["gained"] = np.rint(r.normal(30, 14, n)).clip(0, 90)
        d["sex"] = r.choice(["f", "m"], n)
        d["smoke"] = r.choice(["no", "yes"], n, p=[0.87, 0.13])
        d["race"] = r.choice(list("ABCD"), n, p=[0.6, 0.2, 0.15, 0.05])
        d["low"] = np.where(d["weight"] < 5.5, "low", "not")
        cats = ["sex", "smoke", "race", "low"]
    return pd.DataFrame(d), cats


_CTX = {}


def run(table, eps, seed, keep_pipe=False):
    """``(std, ks, named, info)`` of one fit."""
    from benchmarks.bench_suite import fit_ours, numeric_scores, split

    if table not in _CTX:
        df, cats = synthetic_table(table)
        train, test = split(df)
        _CTX[table] = (train, test, cats)
    train, test, cats = _CTX[table]
    syn, info = fit_ours(train, cats, {}, eps, seed, "auto", keep_pipe=keep_pipe)
    sc = numeric_scores(syn, test, cats)
    named = {c for w in info["warnings"] for c in w["columns"]}
    return sc["std"], sc["ks"], named, info, syn


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tables", default="stays,births")
    p.add_argument("--eps", default="0.3,1")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--gap-span", action="store_true")
    p.add_argument("--run-support", default=None, help="Z, or off")
    a = p.parse_args(argv)
    if a.run_support is not None:
        from skdp_synth import _pipeline_levels

        off = a.run_support == "off"
        _pipeline_levels.RUN_SUPPORT_Z = None if off else float(a.run_support)
    if a.gap_span:
        from skdp_synth.preprocessing import _numeric_domain

        _numeric_domain.GAP_SPAN = True
    for table in a.tables.split(","):
        for eps in (float(e) for e in a.eps.split(",")):
            fits = [run(table, eps, s)[:3] for s in range(a.seeds)]
            cols = [c for c in fits[0][0] if c in INTS]
            print(f"\n### {table}, ε = {eps:g}, seeds 0-{a.seeds - 1}\n")
            print("| column | median / min / max std | out | silent | mean KS |")
            print("|---|---|---|---|---|")
            for c in cols:
                v = np.array([f[0][c] for f in fits])
                out = ~((v >= 0.5) & (v <= 2))
                sil = sum(o and c not in f[2] for o, f in zip(out, fits))
                ks = np.mean([f[1][c] for f in fits])
                print(
                    f"| {c} | {np.median(v):.2f} / {v.min():.2f} / {v.max():.2f} "
                    f"| {out.sum()} | {sil} | {ks:.3f} |"
                )
            print(
                "\nper seed: "
                + "; ".join(
                    f"{s}: "
                    + " ".join(
                        f"{c} {f[0][c]:.2f}{'*' if c in f[2] else ''}" for c in cols
                    )
                    for s, f in enumerate(fits)
                )
            )


if __name__ == "__main__":
    main()
