"""Every scikit-learn name the package takes from a private module, in one place.

scikit-learn keeps ``_fit_context``, the parameter-validation helpers and
``_name_estimators`` in private modules that may move between releases (as
imbalanced-learn's ``_sklearn_compat`` does, the package imports them only
from here, so a move is fixed in this one file). ``validate_data`` is public
since scikit-learn 1.6 and is re-exported for the same single entry point.
The supported range is the one in ``pyproject.toml`` (``scikit-learn>=1.7``).
"""

from sklearn.base import _fit_context
from sklearn.pipeline import _name_estimators
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
)
from sklearn.utils.validation import validate_data

__all__ = [
    "Interval",
    "InvalidParameterError",
    "StrOptions",
    "_fit_context",
    "_name_estimators",
    "validate_data",
]
