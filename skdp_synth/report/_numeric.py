"""Scores of numeric columns on their raw values, not in a schema's bins.

A contingency table of binned values hides how numeric columns differ within
a bin; :func:`numeric_scores` compares the values themselves (KS statistic,
scaled Wasserstein distance, spread, integrality, missing rates,
correlations). **Not private**: it reads the real rows.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import numpy as np

from ..metrics._coding import _times_as_seconds

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

__all__ = ["numeric_scores"]


def _wasserstein_scale(values: np.ndarray) -> float:
    """The spread a Wasserstein distance is divided by: the interquartile
    range of ``values``; where it is 0 (more than half of them on one value,
    e.g. a debt that is 0 for 82 % of the rows) their standard deviation;
    where that is 0 too (a constant), 1. Dividing by 1 where the IQR was 0
    gave the distance in the column's units (115 for credit's ``Debt``),
    which outweighed every other column in a mean.

    >>> import numpy as np
    >>> _wasserstein_scale(np.array([1.0, 2, 3, 4, 5]))
    2.0
    >>> _wasserstein_scale(np.array([-4.0, 0, 0, 0, 0, 0, 0, 4]))  # IQR 0: the std
    2.0
    """
    values = np.asarray(values, dtype=np.float64)
    q75, q25 = np.percentile(values, [75, 25])
    if q75 > q25:
        return float(q75 - q25)
    sd = float(values.std())
    return sd if sd > 0 else 1.0


def numeric_scores(
    real: pd.DataFrame, synthetic: pd.DataFrame, columns: Sequence | None = None
) -> pd.DataFrame:
    """Score numeric columns on their values, not in a schema's bins.

    **Not private** (reads the real rows); pass held-out rows as ``real`` to
    score against data the fit did not see. Per column (missing values
    dropped): the two-sample Kolmogorov-Smirnov statistic, the 1-Wasserstein
    distance divided by the real values' spread (their interquartile range,
    or their standard deviation where more than half of them are one value),
    the ratio of standard deviations (synthetic / real), the share of
    integral synthetic values, the missing rates, and the largest absolute
    difference between the two Pearson correlation matrices in the column's
    row.

    Parameters
    ----------
    real, synthetic : DataFrame
    columns : list, default=None
        The numeric columns (default: the real table's numeric, non-Boolean
        columns).

    Returns
    -------
    DataFrame
        One row per column: ``ks``, ``wasserstein_iqr``, ``std_ratio``,
        ``integral``, ``missing_real``, ``missing_synthetic``, ``corr_diff``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> real = pd.DataFrame({"x": rng.normal(size=400), "n": rng.integers(0, 9, 400)})
    >>> numeric_scores(real, real).loc["x", ["ks", "std_ratio"]].tolist()
    [0.0, 1.0]
    """
    import pandas as pd
    from scipy.stats import ks_2samp, wasserstein_distance

    real, synthetic = _times_as_seconds(real, synthetic)
    if columns is None:
        columns = [
            c
            for c in real.columns
            if pd.api.types.is_numeric_dtype(real[c])
            and not pd.api.types.is_bool_dtype(real[c])
        ]
    columns = list(columns)
    r = real[columns].apply(pd.to_numeric, errors="coerce").astype(float)
    s = synthetic[columns].apply(pd.to_numeric, errors="coerce").astype(float)
    # a numeric code whose rare values came back as "other" (a privately
    # discovered categorical): its scores would count them as missing
    texts = [c for c in columns if (s[c].isna() & synthetic[c].notna()).any()]
    if texts:
        warnings.warn(
            f"columns {texts} have synthetic values that are not numbers (e.g. "
            "'other', a level of a categorical column): they are scored as "
            "missing here; score such columns as categorical (fidelity_report)",
            UserWarning,
            stacklevel=2,
        )
    corr_diff = (r.corr() - s.corr()).abs().max(axis=1)
    rows = {}
    for c in columns:
        a, b = r[c].dropna().to_numpy(), s[c].dropna().to_numpy()
        rows[c] = {
            "ks": float(ks_2samp(a, b).statistic),
            "wasserstein_iqr": float(
                wasserstein_distance(a, b) / _wasserstein_scale(a)
            ),
            "std_ratio": float(b.std() / a.std()) if a.std() > 0 else math.nan,
            "integral": float(np.mean(b == np.round(b))) if b.size else math.nan,
            "missing_real": float(r[c].isna().mean()),
            "missing_synthetic": float(s[c].isna().mean()),
            "corr_diff": float(corr_diff[c]),
        }
    return pd.DataFrame.from_dict(rows, orient="index")
