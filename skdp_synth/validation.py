"""Input validation shared by every estimator.

The theorems of paper 000 need every record in the unit ball,
``||x||_2 <= 1``. We support two public domains and map both to the cube
``[0, 1]^p`` (where marginals are defined) and from there to the convex set
``K = p^{-1/2} [0, 1]^p`` inside the unit ball (SPEC §0):

``"boolean"``
    Records in ``{0, 1}^p``. Anything else is rejected -- never rounded.
``"box"``
    Records in a declared box ``[lo, hi]^p`` (per-column bounds allowed),
    mapped affinely to ``[0, 1]^p``. Records outside the box are rejected,
    never clipped: clipping would change the sensitivity argument of the DP
    estimators. Bounds inferred from the data trigger
    :class:`~skdp_synth.exceptions.PrivacyLeakWarning` in private estimators.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from .exceptions import PrivacyLeakWarning

__all__ = [
    "DOMAINS",
    "check_bounds",
    "check_in_domain",
    "check_n_samples",
    "check_non_numeric_columns",
    "cube_to_unit_ball",
    "from_cube",
    "infer_bounds",
    "to_cube",
]

DOMAINS = ("boolean", "box")


def check_non_numeric_columns(X):
    """Raise a helpful error for DataFrames with non-numeric columns.

    scikit-learn would fail with "could not convert string to float"; we say
    which columns and what to do about them.
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns"):
        return
    import pandas as pd

    bad = [
        str(col)
        for col, dt in zip(X.columns, dtypes)
        if not (pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt))
    ]
    if bad:
        raise ValueError(
            f"X has non-numeric columns {bad}. Encode them first, e.g. with "
            "skdp_synth.preprocessing.BooleanEncoder (categories and bin edges "
            "as public parameters), inside make_synthesis_pipeline."
        )


def check_bounds(bounds, n_features):
    """Validate user-given bounds and broadcast them to two arrays of shape (p,).

    ``bounds`` is a pair ``(lo, hi)`` of scalars or array-likes of length
    ``n_features``, with ``lo < hi`` everywhere.
    """
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise ValueError(
            f"bounds must be a pair (lo, hi) of scalars or arrays, got {bounds!r}"
        ) from None
    lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (n_features,)).copy()
    hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (n_features,)).copy()
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError("bounds must be finite")
    if np.any(hi <= lo):
        cols = np.flatnonzero(hi <= lo).tolist()
        raise ValueError(f"bounds need lo < hi in every column; violated in {cols}")
    return lo, hi


def infer_bounds(X, *, warn):
    """Bounds read off the data: the column minima and maxima.

    Constant columns get width 1 so that the affine map stays defined. With
    ``warn=True`` a :class:`PrivacyLeakWarning` says that the bounds are now a
    function of the private data.
    """
    if warn:
        warnings.warn(
            "bounds were not given and are inferred from the data (column minima "
            "and maxima); they become part of the release and are not protected. "
            "Pass bounds=(lo, hi) as public knowledge.",
            PrivacyLeakWarning,
            stacklevel=3,
        )
    lo = X.min(axis=0).astype(np.float64)
    hi = X.max(axis=0).astype(np.float64)
    hi = np.where(hi > lo, hi, lo + 1.0)
    return lo, hi


def check_in_domain(X, domain, lo=None, hi=None):
    """Reject records outside the declared domain, naming the first offender."""
    if domain == "boolean":
        bad = (X != 0) & (X != 1)
        if np.any(bad):
            row, col = np.argwhere(bad)[0]
            raise ValueError(
                f"domain='boolean' needs values in {{0, 1}}; found {X[row, col]!r} "
                f"at row {row}, column {col}. Encode the data first (BooleanEncoder) "
                "or use domain='box' with bounds."
            )
    elif domain == "box":
        below = X < lo
        above = X > hi
        if np.any(below | above):
            row, col = np.argwhere(below | above)[0]
            raise ValueError(
                f"value {X[row, col]!r} at row {row}, column {col} lies outside the "
                f"declared bounds [{lo[col]!r}, {hi[col]!r}]. Records outside the "
                "domain are rejected, not clipped."
            )
    else:  # pragma: no cover - guarded by parameter validation
        raise ValueError(f"domain must be one of {DOMAINS}, got {domain!r}")


def to_cube(X, lo, hi):
    """Affine map of the box ``[lo, hi]`` onto ``[0, 1]^p``."""
    U = X - lo
    U /= hi - lo
    # Rounding can push values a hair outside [0, 1]; the domain check has
    # already guaranteed lo <= X <= hi, so clipping here changes nothing real.
    np.clip(U, 0.0, 1.0, out=U)
    return U


def from_cube(U, lo, hi):
    """Inverse of :func:`to_cube`."""
    return lo + U * (hi - lo)


def cube_to_unit_ball(U):
    """``[0, 1]^p -> K = p^{-1/2} [0, 1]^p``, inside the unit ball (SPEC §0)."""
    return U / np.sqrt(U.shape[1])


def check_n_samples(n_samples, name="n_samples"):
    """A positive integer number of rows."""
    if (
        isinstance(n_samples, bool)
        or not isinstance(n_samples, numbers.Integral)
        or n_samples < 1
    ):
        raise ValueError(f"{name} must be a positive integer, got {n_samples!r}")
    return int(n_samples)
