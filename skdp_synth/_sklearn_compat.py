"""Every scikit-learn name the package takes from a private module, in one place.

scikit-learn keeps ``_fit_context``, the parameter-validation helpers,
``_name_estimators`` and ``_print_elapsed_time`` (``verbose`` step timing)
in private modules that may move between releases (as imbalanced-learn's
``_sklearn_compat`` does, the package imports them only from here, so a
move is fixed in this one file). ``validate_data`` is public since
scikit-learn 1.6 and is re-exported for the same single entry point.
The supported range is the one in ``pyproject.toml`` (``scikit-learn>=1.7``).
"""

from typing import TYPE_CHECKING

from sklearn.pipeline import _name_estimators
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
)
from sklearn.utils._user_interface import _print_elapsed_time
from sklearn.utils.validation import validate_data

if TYPE_CHECKING:
    # scikit-learn ships no type information: without this signature a type
    # checker would see every decorated ``fit`` as ``Any`` and lose its
    # annotations. At run time the name is scikit-learn's decorator.
    from collections.abc import Callable
    from typing import TypeVar

    _F = TypeVar("_F", bound=Callable[..., object])

    def _fit_context(*, prefer_skip_nested_validation: bool) -> Callable[[_F], _F]: ...
else:
    from sklearn.base import _fit_context

__all__ = [
    "Interval",
    "InvalidParameterError",
    "StrOptions",
    "_fit_context",
    "_name_estimators",
    "_print_elapsed_time",
    "validate_data",
]
