"""Categorical tables as integer codes, and their total-variation errors.

Shared by ``bench_generator.py``, ``bench_selection.py`` and the other
benchmarks on real categorical tables, so that none of them imports
another benchmark for these (``bench_generator`` runs ``bench_selection``
after itself: the two importing each other made an import cycle).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def tv(real, syn, d):
    """Average TV over all d-way tables of the categorical columns (rows)."""
    from skdp_synth.metrics import marginal_error

    return float(marginal_error(real, syn[list(real.columns)], d=d, kind="tv"))


def table_tv(real, cats, tables):
    """Average TV between released tables and the real ones.

    ``tables`` maps a tuple of column names to an array of counts of shape
    ``[len(cats[c]) for c in cols]`` (levels in ``cats`` order); negatives are
    clipped and each table normalised on its own (an all-zero table counts as
    uniform).
    """
    codes = encode(real, cats)
    names = list(real.columns)
    total = 0.0
    for cols, counts in tables.items():
        idx = [names.index(c) for c in cols]
        shape = [len(cats[c]) for c in cols]
        key = np.ravel_multi_index(codes[:, idx].T, shape)
        truth = np.bincount(key, minlength=math.prod(shape)) / len(real)
        est = np.clip(np.asarray(counts, dtype=float).ravel(), 0, None)
        s = est.sum()
        est = est / s if s > 0 else np.full(est.size, 1 / est.size)
        total += 0.5 * float(np.abs(est - truth).sum())
    return total / len(tables)


def encode(df, cats):
    """Int codes of ``df`` (levels in ``cats`` order)."""
    return np.stack(
        [pd.Categorical(df[c], categories=cats[c]).codes for c in df.columns], axis=1
    ).astype(np.int64)


def decode(codes, columns, cats):
    return pd.DataFrame(
        {
            c: np.asarray(cats[c], dtype=object)[codes[:, j]]
            for j, c in enumerate(columns)
        }
    )
