"""One intake of the training data: every check ``fit`` makes of ``X``.

Why a module of its own: the privacy argument fixes the *order* of these
checks (``doc/privacy.md``, "Fail closed"), and they are easier to audit in
one place than spread over the estimator contract. What is public about
``X`` is read first and the values only after the budget check:

* :func:`take_in` -- the shape, the feature names, the Dask collection's
  row count, the domain, the declared bounds, the categorical blocks
  (:func:`resolve_blocks`) and the length and dtype of the counts
  (``sample_weight``). It reads no value and returns one frozen
  :class:`Intake`;
* :meth:`Intake.read` -- after the budget check: finiteness, the domain, the
  blocks' codes, the counts themselves, the (inferred) bounds, and the rows
  mapped to the cube ``[0, 1]^p``: an in-memory array, a
  :class:`~skdp_synth._chunked.ChunkedRows` (Dask input: validated chunk
  by chunk as the statistics are reduced) or a
  :class:`~skdp_synth._chunked.WeightedRows` (counts). It returns the same
  :class:`Intake` with those filled in.

No refusal here quotes a value, a row or a count of ``X`` (``n`` is private
under add/remove neighbours): the messages name the column, the block or
the kind of problem only (``doc/privacy.md``, "Errors").
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.utils import assert_all_finite

from ._chunked import ChunkedRows, WeightedRows, as_dask_array, is_dask_collection
from ._sklearn_compat import validate_data
from .blocks import Blocks, check_blocks
from .validation import (
    as_pandas,
    check_bounds,
    check_counts,
    check_counts_shape,
    check_in_domain,
    check_non_numeric_columns,
    infer_bounds,
    to_cube,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal

    from .blocks import BlocksLike

__all__ = [
    "NO_COLUMNS",
    "TOO_FEW_ROWS",
    "Intake",
    "check_rows_valid",
    "resolve_blocks",
    "take_in",
    "validated_array",
]

#: the refusal of too few rows: the same words whatever the number (under
#: add/remove neighbours n is private)
TOO_FEW_ROWS = (
    "X needs at least 2 samples to fit a synthesizer; it has fewer (0 samples "
    "or 1 sample: which one is not shown, n is private under add/remove)."
)

#: a table without columns, said without its shape (whose ``n`` is private)
NO_COLUMNS = "X has no columns (0 features); a synthesizer needs at least one"

#: how scikit-learn's and NumPy's refusals that quote no value or size of X
#: begin: sparse input, "Input X contains NaN / infinity", float()'s
#: "argument must be a string or a real number, not 'dict'" (a type's name).
#: Matched at the start: a quoted value cannot pass for one
_VALUE_FREE = (
    "Sparse data was passed",
    "Input X contains",
    "Input contains",
    "float() argument must be",
)


@dataclasses.dataclass(frozen=True, eq=False)
class Intake:
    """The training data of one ``fit``, as far as it has been checked.

    Built by :func:`take_in` with the public part only (``rows`` and
    ``n_samples`` are ``None``); :meth:`read` returns a copy with the values
    checked.

    Attributes
    ----------
    X : ndarray or dask.array.Array
        The converted data, values unchecked (Dask: one chunk along the
        columns, known chunk sizes).
    domain : {"boolean", "box"}
    declared_bounds : (lo, hi) or None
        The bounds fixed without the data (``0``/``1`` for Boolean data, the
        ``bounds`` parameter); ``None``: inferred by :meth:`read`.
    blocks : Blocks
        The resolved categorical blocks (public).
    output_spec : dict
        How the training data looked (frame or array, columns, dtypes).
    chunked : bool
        Whether ``X`` is a Dask array.
    names : list of str or None
        The Dask frame's column names (named in the chunks' errors).
    weights : ndarray or None
        The counts of ``fit(X, sample_weight=)``, checked for dtype and
        length only.
    shape : (int, int)
        The shape the plan is made for: that of the expanded table with
        counts (:func:`_planned_total`), else of ``X``.
    rows : ndarray, ChunkedRows, WeightedRows or None
        After :meth:`read`: what ``_fit`` reads (the cube, read-only).
    bounds : (lo, hi) or None
        After :meth:`read`: the box mapped onto the cube.
    n_samples : int or None
        After :meth:`read`: the number of records (the total count with
        counts).
    """

    X: Any
    domain: str
    declared_bounds: tuple | None
    blocks: Blocks
    output_spec: dict
    chunked: bool
    names: list | None
    weights: Any
    shape: tuple
    rows: Any = None
    bounds: tuple | None = None
    n_samples: int | None = None

    def read(self, *, warn):
        """The checks that read the values (after the budget check).

        ``warn``: whether inferring the bounds from the data raises a
        :class:`~skdp_synth.exceptions.PrivacyLeakWarning` (a private
        estimator). Errors name the column or the block and the kind of
        problem, never a count, a value or a row (``doc/privacy.md``,
        "Errors").
        """
        if self.chunked:
            rows, bounds = _read_chunked(self, warn)
            return dataclasses.replace(
                self, rows=rows, bounds=bounds, n_samples=int(self.X.shape[0])
            )
        rows, bounds = _read_array(self, warn)
        n_samples = self.X.shape[0]
        if self.weights is not None:
            counts = _checked_counts(self.weights, self.X.shape[0])
            rows = WeightedRows(rows, counts)  # (check_counts: at least 2 records)
            n_samples = int(counts.sum())
        return dataclasses.replace(self, rows=rows, bounds=bounds, n_samples=n_samples)


def take_in(estimator, X, fit_blocks=None, sample_weight=None):
    """What is public about ``X``: its shape, feature names and blocks.

    Converts ``X`` (no value is checked yet: finiteness, the domain and
    the blocks' codes are checked by :meth:`Intake.read`, after the budget
    check), resolves the blocks and the declared bounds (both parameters of
    ``estimator``) and, with ``sample_weight``, checks the counts' dtype and
    length. Sets ``n_features_in_`` and ``feature_names_in_`` on
    ``estimator``, as scikit-learn's ``validate_data(reset=True)`` does;
    returns the rest as an :class:`Intake`.
    """
    # with counts one line can hold many records: the lines are not counted
    # here, the records are, after the budget check (one line standing for
    # 100 records was refused while two lines fitted)
    min_rows = 1 if sample_weight is not None else 2
    domain = estimator._fixed_domain or estimator.domain
    if is_dask_collection(X):
        X, names, output_spec = _chunked_shape(estimator, X)
        chunked = True
    else:
        X = as_pandas(X)  # polars, pyarrow: a pandas frame of the same types
        check_non_numeric_columns(X)
        output_spec = _output_spec(X)
        X = _convert_fit_data(estimator, X, min_rows)
        names = None
        chunked = False
    n_features = int(X.shape[1])
    blocks = resolve_blocks(
        getattr(estimator, "blocks", "auto"),
        fit_blocks,
        n_features,
        names if chunked else getattr(estimator, "feature_names_in_", None),
    )
    bounds = None
    if domain == "boolean":
        bounds = (np.zeros(n_features), np.ones(n_features))
    elif getattr(estimator, "bounds", None) is not None:
        bounds = check_bounds(estimator.bounds, n_features)
    shape = tuple(int(s) for s in X.shape)
    weights = None
    if sample_weight is not None:
        # counts of distinct rows: the plan sees the shape of the expanded
        # table, as a fit of the expanded rows would. The counts are private:
        # only their dtype and length are checked before the budget ("must
        # hold whole counts" was once answered before the BudgetError)
        weights = _counts_shape(chunked, sample_weight, shape[0])
        shape = (_planned_total(weights), shape[1])
    return Intake(
        X=X,
        domain=domain,
        declared_bounds=bounds,
        blocks=blocks,
        output_spec=output_spec,
        chunked=chunked,
        names=names,
        weights=weights,
        shape=shape,
    )


# ------------------------------------------------------------ public part
def _chunked_shape(estimator, X):
    """``(array, names, output_spec)`` of a Dask collection given to ``fit``.

    Checks what is known without reading the data (shape, dtype, the number
    of rows -- public); :func:`_read_chunked` returns a
    :class:`~skdp_synth._chunked.ChunkedRows`: the rows themselves are
    validated chunk by chunk while the statistics are computed
    (:func:`~skdp_synth._chunked.reduce_rows`). Box data without declared
    bounds costs one extra pass (the column minima and maxima, with the
    same :class:`~skdp_synth.exceptions.PrivacyLeakWarning` as in memory).
    """
    name = type(estimator).__name__
    if not estimator._supports_chunked:
        if estimator._chunked_refusal is not None:
            raise TypeError(f"{name} {estimator._chunked_refusal}")
        raise TypeError(
            f"{name} needs the whole table in memory (it "
            "sorts the rows globally) and does not fit from a Dask "
            "collection; pass X.compute() (a NumPy array or a pandas "
            "DataFrame) or use a synthesizer that fits from sufficient "
            "statistics (ProjectedGaussianRelease, DampedPrivateSynthesizer, "
            "PrivateSampler)."
        )
    arr, names, output_spec = as_dask_array(X)
    n_samples, n_features = (int(s) for s in arr.shape)
    if n_features < 1:
        raise ValueError(NO_COLUMNS)  # the shape would show n
    if n_samples < 2:
        raise ValueError(TOO_FEW_ROWS)
    estimator.n_features_in_ = n_features
    if names is None:
        estimator.__dict__.pop("feature_names_in_", None)
    else:
        estimator.feature_names_in_ = np.asarray(names, dtype=object)
    return arr, names, output_spec


def _counts_shape(chunked, sample_weight, n_rows):
    """The public part of the counts' checks: in memory, numeric, 1-D,
    one per row (:func:`~skdp_synth.validation.check_counts_shape`)."""
    if chunked:
        raise TypeError(
            "sample_weight (counts) is not supported with a Dask collection; "
            "pass the distinct rows and their counts in memory"
        )
    return check_counts_shape(sample_weight, n_rows)


def _planned_total(weights):
    """The total count a plan is made for, read before the budget check.

    Under replace-one ``n`` is public and the plan uses it: for whole,
    non-negative counts this is their sum (``check_counts`` then confirms
    them, after the budget check). Under add/remove the plans do not use
    ``n``. Non-finite or negative entries count as 0 here, so nothing about
    them can fail before the budget is checked."""
    w = np.asarray(weights, dtype=np.float64)
    w = np.where(np.isfinite(w) & (w > 0), np.minimum(np.floor(w), 2.0**53), 0.0)
    return int(w.sum())


def resolve_blocks(
    param: Literal["auto"] | BlocksLike | None,
    fit_blocks: BlocksLike | None,
    n_features: int,
    names: Sequence[str] | None = None,
) -> Blocks:
    """The blocks a synthesizer uses, from its parameter and ``fit``'s keyword.

    * ``param`` a :class:`~skdp_synth.blocks.Blocks` or a list: those blocks;
      a ``fit_blocks`` that differs from them raises ``ValueError``;
    * ``param == "auto"``: ``fit_blocks`` when given (a pipeline hands over
      its encoder's), else every bit its own binary block;
    * ``param is None``: every bit binary, ``fit_blocks`` ignored.

    Binary blocks are named by ``names`` (the feature names) when given.

    Examples
    --------
    >>> from skdp_synth.base import resolve_blocks
    >>> spec = [{"name": "c", "kind": "onehot", "width": 3}]
    >>> resolve_blocks("auto", spec, 3)
    Blocks(c: onehot[3])
    >>> resolve_blocks(None, spec, 3)
    Blocks.binary(3)
    """
    if isinstance(param, str):
        if param != "auto":
            raise ValueError(
                f"blocks must be 'auto', None, Blocks or a list, got {param!r}"
            )
        chosen = fit_blocks
    elif param is None:
        chosen = None
    else:
        chosen = check_blocks(param, n_features)
        if fit_blocks is not None and check_blocks(fit_blocks, n_features) != chosen:
            raise ValueError(
                "the blocks parameter and the blocks passed to fit (e.g. by a "
                f"pipeline's encoder) differ: {chosen!r} vs "
                f"{check_blocks(fit_blocks, n_features)!r}. Set blocks='auto' to "
                "use the pipeline's, or None for binary columns."
            )
    if chosen is None:
        return Blocks.binary(n_features, None if names is None else list(names))
    return check_blocks(chosen, n_features)


def validated_array(estimator, X, **kwargs):
    """``validate_data(estimator, X, **kwargs)`` whose refusals carry no
    value or size of ``X``.

    scikit-learn's and NumPy's conversion errors quote the data: "could not
    convert string to float: 'x'", "Complex data not supported" followed by
    the first and last rows, "Expected 2D array, got 1D array instead:
    array=[...]", "Found array with 0 feature(s) (shape=(n, 0))". Each is
    replaced by a message without them; an error this does not know is
    replaced by a generic one rather than passed on (complex input once
    printed private rows, before the budget check).
    Messages about the feature count or names (public) are kept.
    """
    try:
        return validate_data(estimator, X, **kwargs)
    except Exception as exc:  # any class: an input's __array__ may raise anything
        text = str(exc)
        if isinstance(exc, (ValueError, TypeError)) and text.startswith(_VALUE_FREE):
            raise  # sparse input, NaN/inf present, a value's type: no value
        if "Complex data" in text:
            raise ValueError(
                "Complex data not supported (not shown: the values are "
                "private); a synthesizer takes real numbers"
            ) from None
        if "convert" in text or "could not" in text:
            raise ValueError(
                "X has values that are not numbers (not shown: they are "
                "private). Encode them first, e.g. with BooleanEncoder."
            ) from None
        if "0 feature(s)" in text:
            raise ValueError(NO_COLUMNS) from None
        if "sample(s)" in text:
            raise ValueError(TOO_FEW_ROWS) from None
        if "Expected 2D array" in text:  # scikit-learn's message prints the values
            raise ValueError(
                "Expected a 2D array (n_samples, n_features); got an array of "
                "another dimension (its values are not shown: they are private). "
                "Reshape your data: a single feature with X.reshape(-1, 1)."
            ) from None
        if isinstance(exc, ValueError) and (
            "features, but" in text or "feature names" in text.lower()
        ):
            raise  # the feature count or names: public
        raise ValueError(
            "X could not be read as a 2-D array of numbers (the reason is not "
            "shown: it may quote values, which are private)"
        ) from None


def _convert_fit_data(estimator, X, min_rows=2):
    """``validate_data(reset=True)`` without the value checks (done later),
    through :func:`validated_array`: no refusal quotes a value or a size."""
    X = validated_array(
        estimator,
        X,
        reset=True,
        dtype=np.float64,
        ensure_all_finite=False,
        ensure_min_samples=1,
    )
    if X.shape[0] < min_rows:
        raise ValueError(TOO_FEW_ROWS)
    return X


def _output_spec(X):
    """Remember how the training data looked, to give the output the same look."""
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        return {"frame": True, "columns": list(X.columns), "dtypes": list(X.dtypes)}
    dtype = getattr(X, "dtype", None)
    return {"frame": False, "dtype": dtype if isinstance(dtype, np.dtype) else None}


# ----------------------------------------------------------------- values
def _read_array(intake, warn):
    """``(U, (lo, hi))``: the in-memory values checked and mapped to the cube."""
    X, domain, bounds, blocks = (
        intake.X,
        intake.domain,
        intake.declared_bounds,
        intake.blocks,
    )
    assert_all_finite(X, input_name="X")
    if bounds is None:
        bounds = infer_bounds(X, warn=warn)
    lo, hi = bounds
    check_in_domain(X, domain, lo, hi)
    if domain == "boolean" and not blocks.is_all_binary:
        check_rows_valid(X, blocks)
    if domain == "boolean":
        U = X.view()  # already the cube; a read-only view, never a copy
    else:
        U = to_cube(X, lo, hi)
    U.flags.writeable = False
    return U, (lo, hi)


def _read_chunked(intake, warn):
    """``(ChunkedRows, (lo, hi))`` of a Dask array: the bounds inferred (one
    pass) when none were declared; the rows are checked chunk by chunk as
    they are reduced."""
    arr, domain, bounds, blocks, names = (
        intake.X,
        intake.domain,
        intake.declared_bounds,
        intake.blocks,
        intake.names,
    )
    n_features = arr.shape[1]
    if bounds is None:
        import dask

        mins, maxs = dask.compute(arr.min(axis=0), arr.max(axis=0))
        finite = np.isfinite(mins) & np.isfinite(maxs)
        if not finite.all():
            raise ValueError(
                f"columns {np.flatnonzero(~finite).tolist()} of the training "
                "data have missing (NaN) or infinite values (not shown: they "
                "are private)"
            )
        bounds = infer_bounds(np.vstack([mins, maxs]).astype(np.float64), warn=warn)
    lo, hi = bounds
    shown = names or [str(j) for j in range(n_features)]
    return ChunkedRows(arr, domain, (lo, hi), blocks, shown), (lo, hi)


def _checked_counts(sample_weight, n_rows):
    """The counts of ``fit(X, sample_weight=)``: whole, non-negative, total >= 2
    (read after the budget check for a private estimator)."""
    counts = check_counts(sample_weight, n_rows)
    if counts.sum() < 2:
        raise ValueError("the counts must total at least 2 records")
    return counts


def check_rows_valid(X, blocks):
    """Reject training rows whose code in some block is not valid.

    The message names the blocks only: the number of invalid rows is the
    exact count of a cell the caller chose through ``blocks``.
    """
    bad = blocks.invalid_blocks(X)
    if bad:
        raise ValueError(
            "training rows are not valid for blocks_: invalid codes in "
            f"blocks {sorted(bad)} (a one-hot block needs exactly one 1, a "
            "thermometer block non-increasing bits; how many rows are invalid "
            "is not shown: it is private). Check that the blocks match the "
            "encoder that produced X, or pass blocks=None."
        )
