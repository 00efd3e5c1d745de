"""Box ``[lo, hi]^p``  <->  ``K = p^{-1/2} [0, 1]^p`` inside the unit ball."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import StrOptions, validate_data
from ..validation import (
    as_pandas,
    check_bounds,
    check_in_domain,
    check_non_numeric_columns,
    infer_bounds,
    to_cube,
)

__all__ = ["UnitBallScaler"]


class UnitBallScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Map data in a known box onto the convex set ``K = p^{-1/2}[0,1]^p``.

    The accuracy theorems of :cite:`Boedihardjo2024` (Theorems 1.2, 4.4, 5.14) assume
    records in the unit ball ``||x||_2 <= 1``. A box ``[lo, hi]^p`` is mapped
    affinely onto ``[0, 1]^p`` and divided by ``sqrt(p)`` (:cite:`Boedihardjo2024`
    §4.3), so that ``||x||_2 <= 1``; :meth:`inverse_transform` maps back. Boolean data
    is the case ``lo = 0, hi = 1``.

    Parameters
    ----------
    bounds : tuple (lo, hi) or None, default=None
        Public bounds of the box; scalars or arrays of length ``n_features``.
        ``None`` infers them from the data (column minima and maxima) with a
        :class:`~skdp_synth.exceptions.PrivacyLeakWarning`.
    on_outside : {"error", "clip"}, default="error"
        What :meth:`transform` does with values outside the bounds: reject them
        (default), or clip them onto the box -- a choice that must be made
        deliberately, since clipping changes the data.

    Attributes
    ----------
    lo_, hi_ : ndarray of shape (n_features,)
        The bounds used.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp_synth.preprocessing import UnitBallScaler
    >>> X = np.array([[0.0, 10.0], [5.0, 20.0]])
    >>> sc = UnitBallScaler(bounds=([0, 10], [10, 30])).fit(X)
    >>> Z = sc.transform(X)
    >>> np.round(Z * np.sqrt(2), 3)
    array([[0. , 0. ],
           [0.5, 0.5]])
    >>> bool(np.all(np.linalg.norm(Z, axis=1) <= 1))
    True
    >>> sc.inverse_transform(Z)
    array([[ 0., 10.],
           [ 5., 20.]])
    """

    _parameter_constraints = {
        "bounds": [tuple, list, None],
        "on_outside": [StrOptions({"error", "clip"})],
    }

    def __init__(
        self,
        *,
        bounds: tuple[ArrayLike, ArrayLike] | None = None,
        on_outside: str = "error",
    ) -> None:
        self.bounds = bounds
        self.on_outside = on_outside

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: None = None) -> UnitBallScaler:
        """Fix the bounds (given, or inferred with a warning)."""
        X = as_pandas(X)
        check_non_numeric_columns(X)
        X = validate_data(self, X, dtype=np.float64)
        if self.bounds is None:
            lo, hi = infer_bounds(X, warn=True)
        else:
            lo, hi = check_bounds(self.bounds, X.shape[1])
        self.lo_, self.hi_ = lo, hi
        return self

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Map ``X`` from the box into ``K``."""
        check_is_fitted(self)
        X = as_pandas(X)
        check_non_numeric_columns(X)
        X = validate_data(self, X, reset=False, dtype=np.float64, copy=True)
        if self.on_outside == "clip":
            np.clip(X, self.lo_, self.hi_, out=X)
        check_in_domain(X, "box", self.lo_, self.hi_)
        return to_cube(X, self.lo_, self.hi_) / np.sqrt(X.shape[1])

    def inverse_transform(self, X: ArrayLike) -> np.ndarray:
        """Map points of ``K`` (or anywhere) back to the original units."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.lo_ + X * np.sqrt(X.shape[1]) * (self.hi_ - self.lo_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags
