"""Four skewed, zero-inflated and rounded numeric columns (the kinds of the
10^7-row bench table of ``benchmarks/bench_dask_domains.py``), shared by the
tests of the Dask refinement passes."""

import numpy as np
import pandas as pd


def four_skewed_columns(seed, n=50_000):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "income": rng.lognormal(10, 1, n),
            "wage": np.where(
                rng.random(n) < 0.1, np.nan, rng.lognormal(7, 1.2, n).round(2)
            ),
            "debt": np.where(
                rng.random(n) < 0.75, 0.0, rng.exponential(4e3, n).round(2)
            ),
            "assets": np.where(
                rng.random(n) < 0.4, 0.0, rng.lognormal(9, 2, n).round(0)
            ),
        }
    )
