"""MDAV: the classical fixed-size microaggregation heuristic (benchmark baseline).

Maximum Distance to Average Vector, Domingo-Ferrer & Torra (2005), "Ordinal,
continuous and heterogeneous k-anonymity through microaggregation", Data
Mining and Knowledge Discovery 11(2); the standard multivariate method of
sdcMicro (``microaggregation(method = "mdav")``). Here ``group_size`` is the
minimum group size (k-anonymity's ``k``): every group has between
``group_size`` and ``2 group_size - 1`` rows.

While at least ``3 g`` rows remain: take the row ``r`` farthest from the mean
of the remaining rows and group it with its ``g - 1`` nearest rows; take the
row ``s`` farthest from ``r`` among those left and group it with its
``g - 1`` nearest rows. Then, with at least ``2 g`` rows left, one more group
around the row farthest from the mean, and the rest form the last group.
Cost ``O(n^2 p / g)``; fine for the bundled scikit-learn datasets.
"""

from __future__ import annotations

import numpy as np

__all__ = ["mdav"]


def _nearest(R, center, g):
    d = np.sum((R - center) ** 2, axis=1)
    if g >= R.shape[0]:
        return np.arange(R.shape[0])
    return np.argpartition(d, g - 1)[:g]


def mdav(X, group_size):
    """Group labels of MDAV on the rows of ``X`` (Euclidean distance).

    Examples
    --------
    >>> import numpy as np
    >>> labels = mdav(np.arange(10.0)[:, None], 3)
    >>> np.bincount(labels).tolist()
    [3, 3, 4]
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    g = int(group_size)
    if not 1 <= g <= n:
        raise ValueError(f"group_size must be in [1, {n}], got {group_size}")
    labels = np.full(n, -1, dtype=np.intp)
    remaining = np.arange(n)
    label = 0

    def take(rows, center):
        nonlocal remaining, label
        R = X[remaining]
        group = _nearest(R, center, g)
        labels[remaining[group]] = label
        label += 1
        keep = np.ones(remaining.size, dtype=bool)
        keep[group] = False
        remaining = remaining[keep]

    while remaining.size >= 3 * g:
        R = X[remaining]
        centroid = R.mean(axis=0)
        r = X[remaining[np.argmax(np.sum((R - centroid) ** 2, axis=1))]]
        take(remaining, r)
        R = X[remaining]
        s = X[remaining[np.argmax(np.sum((R - r) ** 2, axis=1))]]
        take(remaining, s)
    if remaining.size >= 2 * g:
        R = X[remaining]
        centroid = R.mean(axis=0)
        r = X[remaining[np.argmax(np.sum((R - centroid) ** 2, axis=1))]]
        take(remaining, r)
    if remaining.size:
        labels[remaining] = label
    return labels
