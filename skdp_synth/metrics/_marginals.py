"""Marginal and moment errors between a dataset and a synthetic one.

Boolean / cube data (Boedihardjo2024, eq. (1.1)-(1.2))
------------------------------------------------------
For rows in ``[0, 1]^p`` (0/1 for Boolean data) with weights ``w_a`` (real)
and ``v_b`` (synthetic), the d-way marginal of a set ``S = {j1 < ... < jd}``
is ``sum_a w_a prod_{j in S} x_a(j)``; the error tensor is ``E(S)`` = real
minus synthetic marginal, and the *average d-marginal error* is

    sqrt( C(p, d)^{-1} sum_{|S| = d} E(S)^2 ).

Two exact ways to compute ``sum_S E(S)^2``, chosen by estimated cost:

``"gram"`` -- without enumerating subsets:
    ``sum_S prod_{j in S} x(j) y(j) = e_d(x o y)``, the elementary symmetric
    polynomial of the entrywise product. Newton's identities give ``e_d``
    from the power sums ``p_k(x o y) = <x^k, y^k>``, i.e. from ``d`` Gram
    matrices; for 0/1 rows all of them equal ``<x, y>`` and
    ``e_d = C(<x, y>, d)``. Then
    ``sum_S E(S)^2 = w'e_d(X,X)w - 2 w'e_d(X,Y)v + v'e_d(Y,Y)v``.
    Cost ``O((n + m)^2 p d)``; repeated rows are merged first.
``"enumerate"`` -- marginals directly, ``d - 2`` indices at a time:
    for every prefix ``T = {j1 < ... < j_{d-2}}`` one matrix product
    ``(X * w * prod_T X)^T X`` holds all marginals ``T + {k, l}``.
    Cost ``O(C(p, d-2) (n + m) p^2)``.

Categorical tables
------------------
For categorical data the field's standard (MST, AIM) is the average total
variation distance over all d-way contingency tables,
``TV = 1/2 sum_cells |p_real - p_syn|``, averaged over the ``C(p, d)`` tables.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..validation import as_pandas, check_degree, check_integer

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["covariance_loss", "marginal_error", "marginal_tv", "moment_error"]

_CHUNK = 2048  # rows per block when forming Gram matrices


# ----------------------------------------------------------------- helpers
def _as_2d_float(X, name):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional, got shape {X.shape}")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return X


def _weights(w, n, name):
    """Probability weights: uniform by default, else non-negative and normalised."""
    if w is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(w, dtype=np.float64).ravel()
    if w.shape[0] != n:
        raise ValueError(f"{name} has {w.shape[0]} entries for {n} rows")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError(f"{name} must be finite, non-negative and not all zero")
    return w / w.sum()


def _check_d(d, p):
    return check_degree(d, p)


def _merge_duplicates(X, w):
    """Merge identical rows, adding their weights (exact; speeds up Gram sums)."""
    uniq, inverse = np.unique(X, axis=0, return_inverse=True)
    if uniq.shape[0] == X.shape[0]:
        return X, w
    return uniq, np.bincount(inverse.ravel(), weights=w, minlength=uniq.shape[0])


def _is_binary(X):
    return bool(np.all((X == 0) | (X == 1)))


def _esym_from_power_sums(power_sums, d):
    """``e_d`` from power sums ``p_1..p_d`` (arrays) by Newton's identities."""
    e = [np.ones_like(power_sums[0])]
    for k in range(1, d + 1):
        acc = np.zeros_like(power_sums[0])
        for i in range(1, k + 1):
            term = e[k - i] * power_sums[i - 1]
            acc = acc + term if i % 2 == 1 else acc - term
        e.append(acc / k)
    return e[d]


def _binom_elementwise(G, d):
    out = np.ones_like(G)
    for i in range(d):
        out *= (G - i) / (i + 1)
    return out


def _pair_sum(A, wa, B, wb, kernel):
    """``sum_{a,b} wa_a wb_b kernel(A, B)[a, b]``, in row blocks."""
    total = 0.0
    for s in range(0, A.shape[0], _CHUNK):
        block = kernel(A[s : s + _CHUNK], B)
        total += float(wa[s : s + _CHUNK] @ block @ wb)
    return total


def _esym_kernel(d, binary):
    if binary:
        return lambda A, B: _binom_elementwise(A @ B.T, d)

    def kernel(A, B):
        sums = [np.power(A, k) @ np.power(B, k).T for k in range(1, d + 1)]
        return _esym_from_power_sums(sums, d)

    return kernel


def _sum_sq_error_gram(X, w, Y, v, d):
    binary = _is_binary(X) and _is_binary(Y)
    if binary:
        X, w = _merge_duplicates(X, w)
        Y, v = _merge_duplicates(Y, v)
    kernel = _esym_kernel(d, binary)
    total = (
        _pair_sum(X, w, X, w, kernel)
        - 2.0 * _pair_sum(X, w, Y, v, kernel)
        + _pair_sum(Y, v, Y, v, kernel)
    )
    return max(total, 0.0)


def _sum_sq_error_enumerate(X, w, Y, v, d):
    p = X.shape[1]
    if d == 1:
        return float(np.sum((w @ X - v @ Y) ** 2))
    upper = np.triu(np.ones((p, p), dtype=bool), k=1)
    total = 0.0
    for prefix in itertools.combinations(range(p), d - 2):
        start = prefix[-1] + 1 if prefix else 0
        if p - start < 2:
            continue
        wx = w * (X[:, list(prefix)].prod(axis=1) if prefix else 1.0)
        vy = v * (Y[:, list(prefix)].prod(axis=1) if prefix else 1.0)
        Xs, Ys = X[:, start:], Y[:, start:]
        E = (Xs * wx[:, None]).T @ Xs - (Ys * vy[:, None]).T @ Ys
        total += float(np.sum(E[upper[start:, start:]] ** 2))
    return total


def _cost(method, n, m, p, d):
    if method == "gram":
        return (n + m) ** 2 * p * (1 if d < 3 else d)
    return math.comb(p, max(d - 2, 0)) * (n + m) * p * p


# ------------------------------------------------------------ public API
def marginal_error(
    X: ArrayLike,
    Y: ArrayLike,
    d: int = 2,
    *,
    kind: str = "boolean",
    sample_weight: ArrayLike | None = None,
    synthetic_weight: ArrayLike | None = None,
    method: str = "auto",
) -> float:
    """Average d-way marginal error between real data ``X`` and synthetic ``Y``.

    Parameters
    ----------
    X : array-like of shape (n, p)
        Real data. ``kind="boolean"``: entries in ``[0, 1]`` (0/1 for Boolean
        data; fractional rows such as microaggregated means are allowed and give
        the expected marginals of their randomized rounding, :cite:`Boedihardjo2024`
        Lemma 4.7). ``kind="tv"``: any values (a DataFrame of categorical columns).
    Y : array-like of shape (m, p)
        Synthetic data, same columns.
    d : int, default=2
        Marginal degree, ``1 <= d <= p``.
    kind : {"boolean", "tv"}, default="boolean"
        ``"boolean"``: :cite:`Boedihardjo2024` eq. (1.2), ``sqrt(mean_S E(S)^2)`` over
        the ``C(p, d)`` sets of ``d`` distinct columns. ``"tv"``: the average total
        variation distance between the d-way contingency tables (categorical
        data; missing values are a category of their own).
    sample_weight, synthetic_weight : array-like, default=None
        Row weights of ``X`` and ``Y`` (normalised to sum to one); uniform
        when ``None``. Weighted synthetic points let a synthesizer's exact
        distribution be scored without sampling noise.
    method : {"auto", "gram", "enumerate"}, default="auto"
        Computation route for ``kind="boolean"`` (both exact; see module
        docstring). ``"auto"`` picks the cheaper by an operation count.

    Returns
    -------
    float

    References
    ----------
    :cite:`Boedihardjo2024` eqs. (1.1)-(1.2): the error tensor and its
    average over the ``C(p, d)`` subsets.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 1, 0], [0, 1, 1]])
    >>> Y = np.array([[1, 1, 1]])
    >>> round(marginal_error(X, Y, d=1), 6)   # column means (.5, 1, .5) vs 1
    0.408248
    >>> round(marginal_error(X, Y, d=3), 6)   # one 3-way marginal: 0 vs 1
    1.0
    """
    if kind == "tv":
        return _tv_error(X, Y, d, sample_weight, synthetic_weight)
    if kind != "boolean":
        raise ValueError(f"kind must be 'boolean' or 'tv', got {kind!r}")
    X = _as_2d_float(X, "X")
    Y = _as_2d_float(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"X and Y must have the same number of columns, got {X.shape[1]} "
            f"and {Y.shape[1]}"
        )
    p = X.shape[1]
    d = _check_d(d, p)
    w = _weights(sample_weight, X.shape[0], "sample_weight")
    v = _weights(synthetic_weight, Y.shape[0], "synthetic_weight")
    if method == "auto":
        n, m = X.shape[0], Y.shape[0]
        if d <= 2:
            method = "enumerate"
        else:
            method = min(("gram", "enumerate"), key=lambda k: _cost(k, n, m, p, d))
    if method == "gram":
        total = _sum_sq_error_gram(X, w, Y, v, d)
    elif method == "enumerate":
        total = _sum_sq_error_enumerate(X, w, Y, v, d)
    else:
        raise ValueError(
            f"method must be 'auto', 'gram' or 'enumerate', got {method!r}"
        )
    return math.sqrt(total / math.comb(p, d))


#: Numeric columns with more distinct values than this (and no declared
#: bins) are compared on bins at the real column's quantiles by the scorer
#: and the report (``_coding.N_QUANTILE_BINS``), and warned about where
#: :func:`marginal_tv` compares them value by value.
MAX_RAW_LEVELS = 20


def _codes(X, Y):
    """Integer codes per column over the union of values (NaN is a value)."""
    import pandas as pd

    X, Y = as_pandas(X), as_pandas(Y)  # polars frames, pyarrow tables

    Xf = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
    Yf = Y if isinstance(Y, pd.DataFrame) else pd.DataFrame(np.asarray(Y, dtype=object))
    if Xf.shape[1] != Yf.shape[1]:
        raise ValueError(
            f"X and Y must have the same number of columns, got {Xf.shape[1]} "
            f"and {Yf.shape[1]}"
        )
    if isinstance(X, pd.DataFrame) and isinstance(Y, pd.DataFrame):
        if list(Xf.columns) != list(Yf.columns):
            raise ValueError("X and Y must have the same columns in the same order")
    if len(Xf) == 0 or len(Yf) == 0:
        raise ValueError("X and Y must have at least one row")
    numeric = _numeric_columns(X, Xf)
    cx, cy, sizes, raw = [], [], [], []
    for j in range(Xf.shape[1]):
        both = pd.concat(
            [Xf.iloc[:, j].astype(object), Yf.iloc[:, j].astype(object)],
            ignore_index=True,
        )
        codes, uniques = pd.factorize(both, use_na_sentinel=False)
        cx.append(codes[: len(Xf)])
        cy.append(codes[len(Xf) :])
        sizes.append(max(len(uniques), 1))
        if numeric[j] and len(uniques) > MAX_RAW_LEVELS:
            raw.append(Xf.columns[j])
    if raw:
        warnings.warn(
            f"columns {raw} hold floats or dates with more than {MAX_RAW_LEVELS} "
            "distinct values, compared here value by value: each value is a "
            "cell of its own, so their tables' TV is near 1 whatever the rows. "
            "Cut them into "
            "bins first (pd.cut at the real rows' quantiles), or score with "
            "make_marginal_scorer(kind='tv') or skdp_synth.report, which cut such "
            "a column at the real column's quantiles",
            UserWarning,
            stacklevel=3,
        )
    return np.array(cx).T, np.array(cy).T, sizes


def _numeric_columns(X, frame):
    """Per column of ``X`` (``frame``: it as a DataFrame), whether it holds
    floats or dates/times: the columns whose values the ``kind="tv"`` tables
    compare one by one where the scorer and the report bin them. Integers
    are left out: many-level codes (a zip code) are categories."""
    import pandas as pd

    from .._datetime import is_time_dtype

    if not isinstance(X, pd.DataFrame):
        kind = np.asarray(X).dtype.kind
        return [kind in "fmM"] * frame.shape[1]
    return [pd.api.types.is_float_dtype(dt) or is_time_dtype(dt) for dt in X.dtypes]


def _table_tv(cx, cy, cols, sizes, w, v):
    """TV between the real and synthetic contingency tables of columns ``cols``.

    ``cx``/``cy``: integer codes (rows by columns), ``sizes[j]`` the number of
    levels of column ``j``; ``w``/``v``: probability weights of the rows.
    Returns ``(tv, p_real, p_synthetic, cells)`` where ``cells`` is ``None``
    for a dense table (``p`` indexed by ``np.ravel_multi_index`` of the
    levels) or the occupied level combinations of a sparse one.
    """
    cols = list(cols)
    radix = [sizes[j] for j in cols]
    n_cells = math.prod(radix)
    if n_cells <= 4 * (cx.shape[0] + cy.shape[0]):
        kx = np.ravel_multi_index(cx[:, cols].T, radix)
        ky = np.ravel_multi_index(cy[:, cols].T, radix)
        px = np.bincount(kx, weights=w, minlength=n_cells)
        py = np.bincount(ky, weights=v, minlength=n_cells)
        cells = None
    else:  # sparse tables: only the occupied cells
        keys = np.concatenate([cx[:, cols], cy[:, cols]])
        cells, inv = np.unique(keys, axis=0, return_inverse=True)
        inv = inv.ravel()
        k = inv.max() + 1
        px = np.bincount(inv[: cx.shape[0]], weights=w, minlength=k)
        py = np.bincount(inv[cx.shape[0] :], weights=v, minlength=k)
    return 0.5 * float(np.abs(px - py).sum()), px, py, cells


def _tv_tables(cx, cy, sizes, d, w, v):
    """``[(columns, tv), ...]`` for every set of ``d`` columns, in
    ``itertools.combinations`` order (the one routine behind ``kind="tv"``,
    :func:`marginal_tv` and :mod:`skdp_synth.report`)."""
    return [
        (cols, _table_tv(cx, cy, cols, sizes, w, v)[0])
        for cols in itertools.combinations(range(cx.shape[1]), d)
    ]


def _tv_error(X, Y, d, sample_weight, synthetic_weight):
    cx, cy, sizes = _codes(X, Y)
    d = _check_d(d, cx.shape[1])
    w = _weights(sample_weight, cx.shape[0], "sample_weight")
    v = _weights(synthetic_weight, cy.shape[0], "synthetic_weight")
    total = 0.0
    for _, tv in _tv_tables(cx, cy, sizes, d, w, v):
        total += tv
    return total / math.comb(cx.shape[1], d)


def marginal_tv(
    X: ArrayLike,
    Y: ArrayLike,
    d: int = 2,
    *,
    sample_weight: ArrayLike | None = None,
    synthetic_weight: ArrayLike | None = None,
) -> pd.Series:
    """Total variation distance of every d-way contingency table, one by one.

    ``TV(S) = 1/2 sum_cells |p_real(cell) - p_syn(cell)|`` for each set ``S``
    of ``d`` columns (missing values are a category of their own); the mean
    of the result is ``marginal_error(X, Y, d, kind="tv")`` exactly (same
    routine, same order of summation).

    Parameters
    ----------
    X, Y : array-like or DataFrame of shape (n, p) and (m, p)
        Real and synthetic rows with the same columns (categorical values).
        A column of floats or dates with more than 20 distinct values is
        compared value by value too, and warned about: its tables' TV is
        then near 1 by construction (``make_marginal_scorer(kind="tv")``
        and :mod:`skdp_synth.report` cut such a column at the real
        column's quantiles).
    d : int, default=2
        Table degree, ``1 <= d <= p``.
    sample_weight, synthetic_weight : array-like, default=None
        Row weights (normalised to sum to one); uniform when ``None``.

    Returns
    -------
    Series
        TV per table, indexed by tuples of column names (positions for arrays),
        in ``itertools.combinations`` order.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": [0, 1, 0, 1]})
    >>> Y = pd.DataFrame({"a": ["x", "x", "x", "y"], "b": [0, 1, 0, 1]})
    >>> marginal_tv(X, Y, d=1).round(3).to_dict()
    {('a',): 0.25, ('b',): 0.0}
    >>> float(marginal_tv(X, Y, d=2).iloc[0])
    0.25
    """
    import pandas as pd

    X, Y = as_pandas(X), as_pandas(Y)  # polars frames, pyarrow tables
    cx, cy, sizes = _codes(X, Y)
    d = _check_d(d, cx.shape[1])
    w = _weights(sample_weight, cx.shape[0], "sample_weight")
    v = _weights(synthetic_weight, cy.shape[0], "synthetic_weight")
    p = cx.shape[1]
    names = list(X.columns) if isinstance(X, pd.DataFrame) else list(range(p))
    rows = _tv_tables(cx, cy, sizes, d, w, v)
    index = pd.Index(
        [tuple(names[j] for j in cols) for cols, _ in rows], tupleize_cols=False
    )
    return pd.Series([tv for _, tv in rows], index=index, name=f"TV{d}", dtype=float)


def moment_error(
    X: ArrayLike,
    Y: ArrayLike,
    d: int = 2,
    *,
    sample_weight: ArrayLike | None = None,
    synthetic_weight: ArrayLike | None = None,
) -> float:
    """Moment tensor error ``||sum_a w_a x_a^{(x)d} - sum_b v_b y_b^{(x)d}||_2``.

    This is the quantity of :cite:`Boedihardjo2024` Theorems 3.10 and 5.9 (all ``p^d``
    entries, diagonal included), computed from Gram matrices:
    ``||sum_a w_a x_a^{(x)d}||^2 = sum_{a,a'} w_a w_a' <x_a, x_a'>^d``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.eye(2)
    >>> round(moment_error(X, np.full((1, 2), 0.5), d=1), 12)
    0.0
    >>> round(moment_error(X, np.full((1, 2), 0.5), d=2), 6)   # ||I/2 - J/4||_F
    0.5
    """
    X = _as_2d_float(X, "X")
    Y = _as_2d_float(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError("X and Y must have the same number of columns")
    check_integer(d, "d", min_value=1)
    w = _weights(sample_weight, X.shape[0], "sample_weight")
    v = _weights(synthetic_weight, Y.shape[0], "synthetic_weight")
    if d == 1:
        return float(np.linalg.norm(w @ X - v @ Y))
    if d == 2:
        return float(np.linalg.norm((X * w[:, None]).T @ X - (Y * v[:, None]).T @ Y))

    def kernel(A, B):
        return (A @ B.T) ** d

    total = (
        _pair_sum(X, w, X, w, kernel)
        - 2.0 * _pair_sum(X, w, Y, v, kernel)
        + _pair_sum(Y, v, Y, v, kernel)
    )
    return math.sqrt(max(total, 0.0))


def covariance_loss(
    X: ArrayLike, partition: ArrayLike, *, weights: ArrayLike | None = None
) -> float:
    """Covariance loss ``||E XX^T - E YY^T||_F`` of a partition (:cite:`Boedihardjo2024`
    §3).

    With ``Y = E[X | F]`` the conditional expectation on the partition
    ``F``, ``||Sigma_X - Sigma_Y||_F = ||E XX^T - E YY^T||_F`` because
    ``E X = E Y`` (:cite:`Boedihardjo2024` Lemma 3.1). ``X`` is taken as uniform on its
    rows.

    Parameters
    ----------
    X : array-like of shape (n, p)
    partition : array-like of shape (n,) or (m, p)
        Either group labels of the rows of ``X`` (then ``Y`` is the group
        means, weighted by group size), or synthetic points ``Y`` (then
        ``E YY^T = sum_b weights_b y_b y_b^T``; row-aligned output of a
        microaggregation is a special case).
    weights : array-like of shape (m,), default=None
        Weights of the points when ``partition`` is 2-D; uniform if ``None``.

    Returns
    -------
    float

    References
    ----------
    :cite:`Boedihardjo2024` §3 (Lemma 3.1).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> covariance_loss(X, [0, 1])          # singletons lose nothing
    0.0
    >>> covariance_loss(X, [0, 0])          # one group: ||I/2 - J/4||_F
    0.5
    """
    X = _as_2d_float(X, "X")
    part = np.asarray(partition)
    second_moment_x = X.T @ X / X.shape[0]
    if part.ndim == 1:
        if part.shape[0] != X.shape[0]:
            raise ValueError(
                f"partition has {part.shape[0]} labels for {X.shape[0]} rows"
            )
        if weights is not None:
            raise ValueError("weights are only meaningful with synthetic points")
        _, labels = np.unique(part, return_inverse=True)
        labels = labels.ravel()
        k = labels.max() + 1
        sums = np.zeros((k, X.shape[1]))
        np.add.at(sums, labels, X)
        counts = np.bincount(labels, minlength=k).astype(np.float64)
        # sum_g (n_g / n) ybar_g ybar_g^T = sum_g s_g s_g^T / (n_g n)
        second_moment_y = (sums / counts[:, None]).T @ sums / X.shape[0]
    else:
        Y = _as_2d_float(part, "partition")
        if Y.shape[1] != X.shape[1]:
            raise ValueError("synthetic points must have as many columns as X")
        v = _weights(weights, Y.shape[0], "weights")
        second_moment_y = (Y * v[:, None]).T @ Y
    return float(np.linalg.norm(second_moment_x - second_moment_y))
