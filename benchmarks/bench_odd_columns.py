"""Odd columns through the default pipeline: what comes back, and what is said.

One column at a time beside a declared categorical and a normal column
(3,000 rows), fitted with ``BooleanEncoder`` (its domains learned privately
unless the case declares them) and ``ProjectedGaussianRelease`` (ε = 1,
δ = 1e-6), 2,000 rows sampled. Per case: the dtype in and out, the missing
share in and out, for a numeric column the std and range in and out, for
another the commonest values, and the warning classes the fit raised (or
the error it refused with). A sweep for faults a suite of real tables does
not hold: nullable and time dtypes, constant, empty, infinite, tiny and huge
columns, flags stored as integers, many-level and mixed text, periods, dates
held as text or as ``datetime.date`` objects.

Run: ``python -m benchmarks.bench_odd_columns [--seed 0] [case ...]``.
Results: ``benchmarks/results/bench_odd_columns.md``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

N_ROWS = 3000


def cases(seed):
    """``{name: (column, declared categories or None)}``."""
    rng = np.random.default_rng(seed)
    n = N_ROWS
    na = rng.random(n) < 0.1
    days = pd.to_timedelta(rng.integers(0, 1000, n), "D")
    out = {
        "int64": (pd.Series(rng.integers(0, 100, n)), None),
        "Int64 with NA": (
            pd.Series(rng.integers(0, 100, n)).astype("Int64").mask(na),
            None,
        ),
        "Float64 with NA": (
            pd.Series(rng.normal(0, 1, n)).astype("Float64").mask(na),
            None,
        ),
        "bool": (pd.Series(rng.random(n) < 0.3), None),
        "boolean with NA": (
            pd.Series(rng.random(n) < 0.3).astype("boolean").mask(na),
            None,
        ),
        "category, undeclared": (
            pd.Series(rng.choice(["p", "q"], n)).astype("category"),
            None,
        ),
        "text numbers and words": (pd.Series(rng.choice(["p", "1", "2.5"], n)), None),
        "datetime": (pd.Series(pd.Timestamp("2020-01-01") + days), None),
        "datetime, zoned": (
            pd.Series(pd.Timestamp("2020-01-01", tz="Europe/Paris") + days),
            None,
        ),
        "datetime with NaT": (
            pd.Series(pd.Timestamp("2020-01-01") + days).mask(na),
            None,
        ),
        "timedelta": (
            pd.Series(pd.to_timedelta(rng.integers(0, 1000, n), "min")),
            None,
        ),
        "constant float": (pd.Series(np.full(n, 7.0)), None),
        "constant int": (pd.Series(np.full(n, 3)), None),
        "all NaN": (pd.Series(np.full(n, np.nan)), None),
        "97 % NaN": (
            pd.Series(np.where(rng.random(n) < 0.97, np.nan, rng.normal(0, 1, n))),
            None,
        ),
        "1 % inf": (
            pd.Series(np.where(rng.random(n) < 0.01, np.inf, rng.normal(0, 1, n))),
            None,
        ),
        "lognormal(30, 3)": (pd.Series(rng.lognormal(30, 3, n)), None),
        "N(0, 1e-9)": (pd.Series(rng.normal(0, 1e-9, n)), None),
        "uint8": (pd.Series(rng.integers(0, 255, n).astype(np.uint8)), None),
        "float32": (pd.Series(rng.normal(5, 2, n).astype(np.float32)), None),
        "0/1 as int64": (pd.Series(rng.integers(0, 2, n)), None),
        "negative ints": (pd.Series(rng.integers(-50, -10, n)), None),
        "half at 100": (
            pd.Series(np.where(rng.random(n) < 0.5, 100.0, rng.uniform(0, 100, n))),
            None,
        ),
        "80 % zeros": (
            pd.Series(np.where(rng.random(n) < 0.8, 0.0, rng.lognormal(5, 2, n))),
            None,
        ),
        "dates as datetime.date objects": (
            pd.Series((pd.Timestamp("2020-01-01") + days).date),
            None,
        ),
        "dates as text": (
            pd.Series((pd.Timestamp("2020-01-01") + days).astype(str)),
            None,
        ),
        "300 levels, undeclared": (
            pd.Series(rng.choice([f"L{i}" for i in range(300)], n)),
            None,
        ),
        "int codes, declared": (pd.Series(rng.choice([1, 2, 3], n)), [1, 2, 3]),
        "monthly periods": (
            pd.Series(pd.period_range("2000-01", periods=n, freq="M")),
            None,
        ),
        "text with 5 % list cells": (
            pd.Series(
                [
                    [1, 2] if u < 0.05 else v
                    for u, v in zip(
                        rng.random(n), rng.choice(["a", "b", "c"], n).tolist()
                    )
                ],
                dtype=object,
            ),
            None,
        ),
        "dict objects": (pd.Series([{"k": 1}] * n, dtype=object), None),
        "sparse bool (get_dummies)": (
            pd.Series(rng.random(n) < 0.3).astype(pd.SparseDtype(bool, False)),
            None,
        ),
        "sparse uint8": (
            pd.Series(rng.integers(0, 5, n)).astype(pd.SparseDtype(np.uint8, 0)),
            None,
        ),
    }
    try:
        import pyarrow as pa
    except ImportError:  # the pyarrow cases need the dask extra
        return out
    out["pyarrow timestamp, zoned"] = (
        pd.Series(pd.Timestamp("2020-01-01", tz="UTC") + days).astype(
            pd.ArrowDtype(pa.timestamp("us", tz="UTC"))
        ),
        None,
    )
    out["pyarrow date32 with nulls"] = (
        pd.Series(pd.Timestamp("2020-01-01") + days)
        .mask(na)
        .astype(pd.ArrowDtype(pa.date32())),
        None,
    )
    out["pyarrow duration"] = (
        pd.Series(pd.to_timedelta(rng.integers(0, 1000, n), "min")).astype(
            pd.ArrowDtype(pa.duration("s"))
        ),
        None,
    )
    out["pyarrow int64 with nulls"] = (
        pd.Series(rng.integers(0, 100, n)).mask(na).astype("int64[pyarrow]"),
        None,
    )
    return out


def run_case(column, declared, seed):
    """One line of the results table (module docstring)."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    rng = np.random.default_rng(seed + 1)
    df = pd.DataFrame(
        {"a": rng.choice(["x", "y", "z"], N_ROWS), "num": rng.normal(50, 10, N_ROWS)}
    )
    df["c"] = column.array
    categories = {"a": ["x", "y", "z"]}
    if declared is not None:
        categories["c"] = declared
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pipe = make_synthesis_pipeline(
                BooleanEncoder(categories=categories, random_state=seed),
                ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=seed),
            )
            rows = pipe.fit(df).sample(2000, random_state=seed + 1)
    except (ValueError, TypeError) as err:
        return f"refused: {type(err).__name__}: {str(err)[:160]}"
    named = sorted({w.category.__name__ for w in caught if "'c'" in str(w.message)})
    real, back = df["c"], rows["c"]
    text = (
        f"{real.dtype} -> {back.dtype}; missing {real.isna().mean():.3f} -> "
        f"{back.isna().mean():.3f}; "
    )
    numeric = pd.api.types.is_numeric_dtype(real) and not pd.api.types.is_bool_dtype(
        real
    )
    if numeric:
        r = real.astype(float).replace([np.inf, -np.inf], np.nan)
        b = back.astype(float)
        text += (
            f"std {r.std():.3g} -> {b.std():.3g}; range [{r.min():.3g}, {r.max():.3g}]"
            f" -> [{b.min():.3g}, {b.max():.3g}]"
        )
    else:
        top = back.astype(str).value_counts(normalize=True).head(2).round(3).to_dict()
        text += f"commonest {top}"
    return text + f"; named by {', '.join(named) or 'nothing'}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("case", nargs="*", help="the cases to run (default: all)")
    args = p.parse_args(argv)
    print("| column | what comes back |")
    print("|---|---|")
    for name, (column, declared) in cases(args.seed).items():
        if args.case and name not in args.case:
            continue
        line = run_case(column, declared, args.seed).replace("|", "/")
        print(f"| {name} | {line} |", flush=True)


if __name__ == "__main__":
    main()
