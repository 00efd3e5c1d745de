"""Input validation shared by every estimator.

The theorems of :cite:`Boedihardjo2024` need every record in the unit ball,
``||x||_2 <= 1``. We support two public domains and map both to the cube
``[0, 1]^p`` (where marginals are defined) and from there to the convex set
``K = p^{-1/2} [0, 1]^p`` inside the unit ball (:cite:`Boedihardjo2024` §4.3):

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
import os
import sys
import warnings
from typing import TYPE_CHECKING

import numpy as np

from .exceptions import PrivacyLeakWarning

__all__ = [
    "DOMAINS",
    "check_boolean",
    "check_bounds",
    "check_budget_params",
    "check_counts",
    "check_degree",
    "check_dense_size",
    "check_finite_width",
    "check_in_domain",
    "check_integer",
    "check_n_samples",
    "check_non_numeric_columns",
    "check_one_column_delimiter",
    "cube_to_unit_ball",
    "format_bytes",
    "format_count",
    "from_cube",
    "infer_bounds",
    "reject_bool_params",
    "restore_on_failure",
    "sample_chunk_rows",
    "to_cube",
    "user_stacklevel",
]

DOMAINS = ("boolean", "box")


def user_stacklevel():
    """The ``stacklevel`` that attributes a warning to the user's line.

    Called by the function that then calls ``warnings.warn``; counts the
    frames up to the first one outside this package, scikit-learn and
    joblib, so the warning names the user's ``fit`` call and not
    ``sklearn/base.py`` (whose ``_fit_context`` wraps every ``fit``) or an
    internal helper, however deep the call.

    Examples
    --------
    >>> import warnings
    >>> def warn_me():
    ...     warnings.warn("x", UserWarning, stacklevel=user_stacklevel())
    >>> with warnings.catch_warnings(record=True) as record:
    ...     warnings.simplefilter("always")
    ...     warn_me()
    >>> record[0].filename.startswith("<doctest")  # the caller's, not this file
    True
    """
    internal = _internal_dirs()
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(internal):
        frame = frame.f_back
        level += 1
    return level


def _internal_dirs():
    """The folders whose frames a warning is not attributed to: this
    package's, scikit-learn's (``_fit_context``, ``Pipeline.fit``, the
    ``set_output`` wrappers) and joblib's, where imported."""
    dirs = {os.path.dirname(os.path.abspath(__file__)) + os.sep}
    for name in ("sklearn", "joblib"):
        module = sys.modules.get(name)
        if getattr(module, "__file__", None):
            dirs.add(os.path.dirname(os.path.abspath(module.__file__)) + os.sep)
    return tuple(sorted(dirs))


#: ``(epsilon | delta): (typical value, meaning)``: the words of the
#: refusal of a budget out of range (scikit-learn's generic text says only
#: the interval)
_BUDGET_WORDS = {
    "epsilon": (
        "typically 0.1-10",
        "the privacy budget: smaller is more private, and noisier",
    ),
    "delta": (
        "typically 1e-6, or well below 1/n for n rows",
        "the probability that the epsilon guarantee fails",
    ),
}


def check_budget_params(estimator):
    """Refuse an ``epsilon`` or ``delta`` out of range in the project's words.

    scikit-learn's refusal reads "The 'epsilon' parameter of X must be a
    float in the range (0.0, inf) or None. Got 0 instead."; this one says
    what the parameter is, its range as a comparison and a typical value:
    "The 'epsilon' parameter of X must be > 0 and finite, typically 0.1-10
    (the privacy budget: ...). Got 0 instead." Same exception class
    (``InvalidParameterError``, a ``ValueError``); the parameter's name and
    the value as written are kept. Values the constraints accept, and
    values of another type (a string, a bool: scikit-learn's and
    :func:`reject_bool_params`' refusals), are left alone. Reads the
    parameters only.
    """
    from ._sklearn_compat import Interval, InvalidParameterError

    constraints = getattr(estimator, "_parameter_constraints", {})
    for name, (typical, meaning) in _BUDGET_WORDS.items():
        if name not in constraints:
            continue
        value = getattr(estimator, name, None)
        # a number can satisfy only an Interval ("auto", None and the
        # other constraints are not numbers)
        intervals = [c for c in constraints[name] if isinstance(c, Interval)]
        if (
            not intervals
            or isinstance(value, (bool, np.bool_))
            or not isinstance(value, numbers.Real)
            or any(c.is_satisfied_by(value) for c in intervals)
        ):
            continue
        raise InvalidParameterError(
            f"The {name!r} parameter of {type(estimator).__name__} must be "
            f"{_interval_words(intervals[0])}, {typical} ({meaning}). "
            f"Got {value!r} instead."
        )


def _interval_words(interval):
    """``> 0 and finite``, ``in [0, 1)``: an Interval as a user reads it."""
    lo, hi, closed = interval.left, interval.right, interval.closed
    lo_open = closed in ("right", "neither")
    hi_open = closed in ("left", "neither")
    if hi is None or hi == np.inf:
        bound = f"> {lo:g}" if lo_open else f">= {lo:g}"
        return bound + " and finite" if hi is not None and hi_open else bound
    if lo is None:
        return f"< {hi:g}" if hi_open else f"<= {hi:g}"
    left = "(" if lo_open else "["
    right = ")" if hi_open else "]"
    return f"in {left}{lo:g}, {hi:g}{right}"


#: delimiters a file read with the default ``,`` leaves in a single column's
#: name, and how a message names them (the command line's words)
DELIMITERS = ((";", "semicolons"), ("\t", "tabs"), ("|", "'|'"))


def is_arrow(dtype, *kinds) -> bool:
    """Whether ``dtype`` is pyarrow-backed (``pd.ArrowDtype``) and, with
    ``kinds``, whether its type passes one of ``pyarrow.types``'
    ``is_<kind>`` tests (``is_arrow(dtype, "date")``). Public: a dtype."""
    import pandas as pd

    if not isinstance(dtype, pd.ArrowDtype):
        return False
    if not kinds:
        return True
    import pyarrow as pa

    return any(getattr(pa.types, f"is_{k}")(dtype.pyarrow_dtype) for k in kinds)


def as_pandas(X):
    """A polars DataFrame or a pyarrow Table as a pandas DataFrame, else
    ``X`` as it is.

    Its column names and types are its public schema, as a pandas frame's;
    the conversion keeps the types (``pd.ArrowDtype`` columns: a polars
    integer column with nulls stays whole, not ``float64``). Passed to
    ``np.asarray``, a polars frame had become an object array: every
    column was text, numbers came back as ``"other"`` and the names were
    lost."""
    module = type(X).__module__.split(".")[0]
    if module == "polars" and hasattr(X, "to_pandas"):
        return X.to_pandas(use_pyarrow_extension_array=True)
    if module == "pyarrow" and hasattr(X, "to_pandas") and hasattr(X, "schema"):
        import pandas as pd

        return X.to_pandas(types_mapper=pd.ArrowDtype)
    return X


def check_one_column_delimiter(X):
    """Refuse a one-column text frame whose name holds ``;`` or a tab.

    A semicolon-delimited file read with ``pd.read_csv``'s default ``,``
    is one text column named ``"a;b;c"``; fitted, it failed far from the
    cause ("d=2 exceeds the number of attributes (1)", or "non-numeric
    columns ['a;b;c']"). Decided from the column's name and dtype alone
    (the schema: public), never its cells; the name is not quoted either.
    A real one-column text table whose name holds one of them: rename the
    column.
    """
    columns, dtypes = getattr(X, "columns", None), getattr(X, "dtypes", None)
    if columns is None or dtypes is None or len(columns) != 1:
        return
    import pandas as pd

    name = columns[0]
    if not isinstance(name, str) or pd.api.types.is_numeric_dtype(dtypes.iloc[0]):
        return  # (cells holding the delimiter are text: a number column is not)
    # ";" and tabs only: a name with "|" is as often a real name ("a|b"),
    # which the command line reads as one column when its cells are plain
    for sep, what in DELIMITERS[:2]:
        if len([part for part in name.split(sep) if part.strip()]) >= 2:
            raise ValueError(
                f"X has one column whose name holds {what}: a file with "
                f"another delimiter read with the default ','? Read it with "
                f"pandas.read_csv(path, sep={sep!r}) (if this really is one "
                "column, rename it)"
            )


def check_non_numeric_columns(X):
    """Raise a helpful error for DataFrames with non-numeric columns.

    scikit-learn would fail with "could not convert string to float"; we say
    which columns and what to do about them. A one-column frame named like
    a header of another delimiter is refused first, saying so
    (:func:`check_one_column_delimiter`).
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns"):
        return
    check_one_column_delimiter(X)
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
    check_finite_width(lo, hi)
    if np.any(hi <= lo):
        cols = np.flatnonzero(hi <= lo).tolist()
        raise ValueError(f"bounds need lo < hi in every column; violated in {cols}")
    return lo, hi


def infer_bounds(X, *, warn):
    """Bounds read off the data: the column minima and maxima.

    Constant columns get width 1 so that the affine map stays defined. With
    ``warn=True`` a :class:`~skdp_synth.exceptions.PrivacyLeakWarning` says
    that the bounds are now a function of the private data.
    """
    if warn:
        warnings.warn(
            "bounds were not given and are inferred from the data (column minima "
            "and maxima); they become part of the release and are not protected. "
            "Pass bounds=(lo, hi) as public knowledge.",
            PrivacyLeakWarning,
            stacklevel=user_stacklevel(),
        )
    lo = X.min(axis=0).astype(np.float64)
    hi = X.max(axis=0).astype(np.float64)
    hi = np.where(hi > lo, hi, lo + 1.0)
    check_finite_width(lo, hi, "inferred bounds")
    return lo, hi


def check_in_domain(X, domain, lo=None, hi=None):
    """Reject records outside the declared domain, naming the offending columns.

    The message names the columns and the kind of problem only: never a
    value or a row number, which are private.
    """
    if domain == "boolean":
        check_boolean(
            X,
            "domain='boolean' data",
            hint=". Encode the data first (BooleanEncoder) or use domain='box' "
            "with bounds.",
        )
    elif domain == "box":
        bad = (X < lo) | (X > hi)
        if np.any(bad):
            cols = np.flatnonzero(bad.any(axis=0)).tolist()
            shown = ", ".join(f"[{lo[c]!r}, {hi[c]!r}]" for c in cols[:5])
            raise ValueError(
                f"{_columns(cols)} values outside the declared bounds ({shown}; "
                "the values are not shown: they are private). Records outside "
                "the domain are rejected, not clipped."
            )
    else:  # pragma: no cover - guarded by parameter validation
        raise ValueError(f"domain must be one of {DOMAINS}, got {domain!r}")


def _columns(cols):
    head = ", ".join(map(str, cols[:5])) + (", ..." if len(cols) > 5 else "")
    return f"column {head} has" if len(cols) == 1 else f"columns {head} have"


def check_finite_width(lo, hi, what="bounds"):
    """``hi - lo`` must be a finite float in every column (no overflow).

    Bounds near the float limit (``(-1e308, 1e308)``) pass ``isfinite`` but
    their width overflows to ``inf``, and the affine map to the cube then
    gives NaN; they are rejected here, before anything is allocated.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        width = np.asarray(hi, dtype=np.float64) - np.asarray(lo, dtype=np.float64)
    bad = ~np.isfinite(width)
    if np.any(bad):
        cols = np.flatnonzero(np.atleast_1d(bad)).tolist()
        raise ValueError(
            f"{what}: the width hi - lo overflows the float range in "
            f"{_columns(cols).rsplit(' ', 1)[0]}; use bounds whose difference "
            "is finite (e.g. rescale the data)"
        )


def reject_bool_params(estimator):
    """Refuse ``True``/``False`` where a number is meant (``epsilon=True``).

    scikit-learn's ``Interval(Real, ...)`` and ``Interval(Integral, ...)``
    accept bools (``True`` is the integer 1), which would silently turn a
    typo into ``epsilon=1``. Parameters whose constraints allow
    ``"boolean"`` are left alone.
    """
    from ._sklearn_compat import Interval, InvalidParameterError

    for name, constraints in getattr(estimator, "_parameter_constraints", {}).items():
        value = getattr(estimator, name, None)
        if not isinstance(value, (bool, np.bool_)) or "boolean" in constraints:
            continue
        if any(isinstance(c, Interval) for c in constraints):
            raise InvalidParameterError(
                f"The {name!r} parameter of {type(estimator).__name__} must be a "
                f"number, not a bool; got {value!r}."
            )


if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    _F = TypeVar("_F", bound=Callable[..., object])


def restore_on_failure(fit: _F) -> _F:
    """Decorate ``fit`` so that a failure leaves the object as it was.

    The object's ``__dict__`` is saved before the call and restored if it
    raises (any exception, ``KeyboardInterrupt`` included), the contract the
    synthesizers' ``fit`` already keeps.
    """
    import functools

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        saved = dict(self.__dict__)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    return wrapper


def to_cube(X, lo, hi):
    """Affine map of the box ``[lo, hi]`` onto ``[0, 1]^p``."""
    U = X - lo
    U /= hi - lo
    # Rounding can push values a hair outside [0, 1]; the domain check has
    # already guaranteed lo <= X <= hi, so clipping here changes nothing real.
    np.clip(U, 0.0, 1.0, out=U)
    return U


def from_cube(U, lo, hi):
    """Inverse of :func:`to_cube`.

    ``lo + U * (hi - lo)`` computed into one new array (the same values,
    bit for bit); on the unit cube (``lo = 0``, ``hi = 1``: Boolean data)
    the product by 1 is skipped, as it changes nothing.
    """
    width = hi - lo
    if np.all(width == 1) and np.all(np.asarray(lo) == 0):
        return lo + U
    out = U * width
    if (
        isinstance(out, np.ndarray)
        and np.result_type(out, lo) == out.dtype
        and np.broadcast_shapes(out.shape, np.shape(lo)) == out.shape
    ):
        return np.add(out, lo, out=out)  # addition commutes exactly
    return lo + out


def cube_to_unit_ball(U):
    """``[0, 1]^p -> K = p^{-1/2} [0, 1]^p``, inside the unit ball
    (:cite:`Boedihardjo2024` §4.3)."""
    return U / np.sqrt(U.shape[1])


def check_n_samples(n_samples, name="n_samples"):
    """A positive integer number of rows."""
    return check_integer(n_samples, name, min_value=1)


def check_integer(value, name, *, min_value=None):
    """An integer (Python or NumPy, never ``bool``), at least ``min_value``.

    Returns ``int(value)``; raises ``ValueError`` naming ``name`` otherwise.

    Examples
    --------
    >>> check_integer(3, "k", min_value=1)
    3
    >>> check_integer(0, "k", min_value=1)
    Traceback (most recent call last):
    ...
    ValueError: k must be a positive integer, got 0
    """
    if min_value is None:
        kind = "an integer"
    elif min_value == 0:
        kind = "a non-negative integer"
    elif min_value == 1:
        kind = "a positive integer"
    else:
        kind = f"an integer >= {min_value}"
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or (min_value is not None and value < min_value)
    ):
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    return int(value)


def check_degree(d, p, *, name="d", of="features", min_degree=1, hint=""):
    """A marginal degree: an integer ``min_degree <= d <= p``; returns ``int(d)``.

    Examples
    --------
    >>> check_degree(2, 5)
    2
    >>> check_degree(6, 5)
    Traceback (most recent call last):
    ...
    ValueError: d=6 exceeds the number of features (5)
    """
    d = check_integer(d, name, min_value=min_degree)
    if d > p:
        raise ValueError(f"{name}={d} exceeds the number of {of} ({p}){hint}")
    return d


#: Largest dense array a plan lets a fit allocate (bytes), checked from the
#: public sizes before any data is read.
MAX_DENSE_BYTES = 2 * 1024**3


#: working memory of one chunk of an eager sample (bytes of float64 rows)
SAMPLE_CHUNK_BYTES = 1 << 25


def sample_chunk_rows(n_features):
    """Rows per internal chunk of an eager ``sample``: 32 MiB of float64 rows
    (at least 4096 rows), so that a large sample's working memory is
    bounded. Smaller samples are drawn in one piece.

    Examples
    --------
    >>> sample_chunk_rows(20)
    209715
    """
    return max(1 << 12, SAMPLE_CHUNK_BYTES // (8 * max(1, int(n_features))))


def format_count(value):
    """An integer for a message: in full up to 12 digits, else ``d.dd e+k``.

    Sizes computed from a declared domain can have hundreds of digits (a
    300-digit number in a message helps nobody).

    Examples
    --------
    >>> format_count(123456)
    '123456'
    >>> format_count(10**300 + 7)
    '1.00e+300'
    """
    value = int(value)
    text = str(abs(value))
    if len(text) <= 12:
        return str(value)
    sign = "-" if value < 0 else ""
    return f"{sign}{text[0]}.{text[1:3]}e+{len(text) - 1}"


def format_bytes(n_bytes):
    """A byte count for a message (GiB with 3 significant digits, or more).

    Examples
    --------
    >>> format_bytes(3 * 1024**3)
    '3 GiB'
    >>> format_bytes(8 * 10**300)
    '7.45e+291 GiB'
    """
    gib = int(n_bytes) // 1024**3
    if gib < 10**12:
        return f"{int(n_bytes) / 1024**3:.3g} GiB"
    return f"{format_count(gib)} GiB"


def check_dense_size(entries, what, fix, *, itemsize=8, limit=None):
    """Refuse, before allocating, a dense array of ``entries`` items over the limit.

    ``entries`` is computed from public sizes (an exact integer, however
    large); ``what`` names the array and the column(s) it comes from,
    ``fix`` says what to change. Raises ``ValueError`` (a parameter that
    does not fit the sizes).

    Examples
    --------
    >>> check_dense_size(10**12, "the 2-way table of 'zip' x 'age'", "merge levels")
    Traceback (most recent call last):
    ...
    ValueError: the 2-way table of 'zip' x 'age' needs 7.45e+03 GiB ...
    """
    limit = MAX_DENSE_BYTES if limit is None else int(limit)
    need = int(entries) * int(itemsize)
    if need > limit:
        raise ValueError(
            f"{what} needs {format_bytes(need)} (more than the limit of "
            f"{format_bytes(limit)}), checked before the data is read. {fix}"
        )


def check_boolean(X, what="X", *, hint=""):
    """Reject an array with any entry other than exactly 0 or 1.

    The message names the columns only, never a value (they are private).
    Returns ``X`` unchanged.

    Examples
    --------
    >>> check_boolean(np.array([[0, 1], [1, 1]])).shape
    (2, 2)
    >>> check_boolean(np.array([[0, 2]]), "rows")
    Traceback (most recent call last):
    ...
    ValueError: rows must be Boolean (exact 0/1 values); column 1 has other ...
    """
    if not _has_non_boolean(X):
        return X
    with np.errstate(invalid="ignore"):
        bad = (X != 0) & (X != 1)
    if np.any(bad):
        bad = bad.reshape(-1, 1) if bad.ndim < 2 else bad
        cols = np.flatnonzero(bad.any(axis=0)).tolist()
        raise ValueError(
            f"{what} must be Boolean (exact 0/1 values); {_columns(cols)} other "
            f"values (not shown: they are private){hint}"
        )
    return X


#: values per chunk of the one-pass 0/1 check (the temporaries stay in cache)
_BOOLEAN_CHUNK = 1 << 15


def _has_non_boolean(X):
    """Whether ``X`` holds any entry other than exactly 0 or 1, in one pass.

    Integer arrays need one reduction (``max`` of the unsigned view: negative
    values wrap to huge ones), Booleans none; floats are compared in row
    chunks small enough for the temporaries to stay in cache, stopping at
    the first chunk with a bad entry. Anything else (object arrays, 0-d or
    1-d input) is compared as a whole, as before.
    """
    X = np.asarray(X)
    kind = X.dtype.kind
    if X.size == 0 or kind == "b":
        return False
    if kind == "u":
        return bool(X.max() > 1)
    if kind == "i":
        return bool(X.view(X.dtype.str.replace("i", "u")).max() > 1)
    with np.errstate(invalid="ignore"):
        if kind != "f" or X.ndim != 2:
            return bool(np.any((X != 0) & (X != 1)))
        step = max(1, _BOOLEAN_CHUNK // max(1, X.shape[1]))
        for s in range(0, X.shape[0], step):
            C = X[s : s + step]
            if not ((C == 0) | (C == 1)).all():
                return True
    return False


def check_counts_shape(sample_weight, n_rows):
    """The public part of :func:`check_counts`: a 1-D numeric array with one
    entry per row. Reads the dtype and the shape only, never a count, so a
    private estimator runs it before its budget check and the rest after."""
    w = np.asarray(sample_weight)
    if w.dtype.kind not in "biuf" or w.dtype.kind == "b":
        raise ValueError("sample_weight must be numeric counts (not booleans)")
    if w.ndim != 1 or w.shape[0] != n_rows:
        # the shapes are not shown: the number of rows is private under
        # add/remove neighbours
        raise ValueError(
            "sample_weight must be 1-D with one count per row of X "
            f"(got a {w.ndim}-D array, or another number of entries than rows)"
        )
    return w


def check_counts(sample_weight, n_rows):
    """Counts of the distinct rows of a contingency table (``sample_weight``).

    A 1-D array of ``n_rows`` finite, non-negative integers (integer-valued
    floats are accepted), returned as ``int64``. Under the neighbouring
    relations of the private estimators a *record* is one unit of count, so
    fractional or negative weights have no meaning and are refused. The
    messages name what is wrong, never a value (the counts are private).

    Examples
    --------
    >>> check_counts([3, 0, 2.0], 3).tolist()
    [3, 0, 2]
    >>> check_counts([1.5, 2], 2)
    Traceback (most recent call last):
    ...
    ValueError: sample_weight must hold whole counts (non-negative integers): ...
    """
    wf = check_counts_shape(sample_weight, n_rows).astype(np.float64)
    if not np.all(np.isfinite(wf)) or np.any(wf < 0) or np.any(wf != np.floor(wf)):
        raise ValueError(
            "sample_weight must hold whole counts (non-negative integers): "
            "a record is one unit of count (values not shown: they are private)"
        )
    if np.any(wf >= 2.0**53):
        raise ValueError("sample_weight counts must be below 2**53")
    return wf.astype(np.int64)
