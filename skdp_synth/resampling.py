"""Train models on synthetic data inside cross-validation (imbalanced-learn steps).

imbalanced-learn's ``Pipeline`` runs ``fit_resample`` steps only while
fitting, so in ``GridSearchCV`` the synthesizer sees only the training fold
and the model is evaluated on real held-out rows. It rejects steps that have
both ``transform`` and ``fit_resample``, which every synthesizer has -- hence
this wrapper, which exposes only ``fit_resample(X, y)``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, clone

from .exceptions import PrivacyLeakWarning
from .preprocessing import BooleanEncoder
from .preprocessing._column_spec import _is_missing_scalar
from .privacy import check_written_budget
from .validation import as_pandas, check_n_samples

__all__ = ["SyntheticResampler"]


def _encoder_of(synthesizer):
    """The ``BooleanEncoder`` a synthesis pipeline starts with, or ``None``."""
    steps = getattr(synthesizer, "steps", None)
    if not isinstance(steps, list):
        return None
    head = [s for _, s in steps[:-1] if s not in (None, "passthrough")]
    return head[0] if head and isinstance(head[0], BooleanEncoder) else None


_TARGET = "__target__"


def _plain(values):
    """A list of Python values (NumPy scalars as ``.item()``; missing as ``None``)."""
    out = []
    for v in list(values):
        if isinstance(v, np.generic):
            v = v.item()
        out.append(None if _is_missing_scalar(v) else v)
    return out


def _label_key(v):
    return ("missing",) if v is None else (type(v).__name__, repr(v))


def _label_series(values, y, classes):
    """Synthetic labels as a Series named and typed as ``y``: a categorical
    ``y``'s dtype with the *declared* classes as its categories (its own
    may be the observed ones only), another extension dtype (``string``,
    pyarrow's) where the labels cast to it losslessly; both came back as
    ``object``."""
    out = pd.Series(values, name=y.name)
    dtype = y.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        declared = [c for c in classes if c is not None]
        return out.astype(pd.CategoricalDtype(declared, ordered=dtype.ordered))
    if isinstance(dtype, pd.api.extensions.ExtensionDtype):
        try:
            cast = out.astype(dtype)
        except (TypeError, ValueError):
            return out
        if cast.isna().equals(out.isna()):
            return cast
    return out


def _has_missing(classes):
    return any(v is None for v in classes)


def _labels_declared(fit, classes, label=_TARGET):
    """``fit()``, its refusal of missing labels said in the resampler's terms
    (the encoder's advice named ``categories=`` and ``missing=`` of a column
    the user never declared)."""
    try:
        return fit()
    except ValueError as exc:
        # the encoder's refusals (at fit, or when it encodes the rows) both
        # begin so; another column's, or several columns', pass as they are
        if _has_missing(classes) or not str(exc).startswith(
            f"column {label!r} has missing values but"
        ):
            raise  # (None declared: the encoder's own missing= refused it)
        raise ValueError(
            "y has missing labels but classes= has no None: put None among "
            "classes to synthesize missing labels too, or drop those rows "
            "(not shown: they are private)"
        ) from None


class SyntheticResampler(BaseEstimator):
    """Replace a training set by synthetic rows, with ``y`` synthesized jointly.

    ``fit_resample(X, y)`` adds the labels to ``X``, fits a clone of
    ``synthesizer`` on the joint table, samples, and splits the synthetic
    table back into ``(X_synthetic, y_synthetic)``. For a synthesis pipeline
    (:func:`~skdp_synth.make_synthesis_pipeline`, a ``BooleanEncoder``
    first) the label is one more *categorical* column, named after ``y``
    (a Series' name) or ``"__target__"``, with ``classes`` as its declared
    levels, so a release's ``target=`` can name it. For a synthesizer of 0/1
    or numeric rows the labels are one-hot encoded (one bit if there are two
    classes) and appended as 0/1 columns, decoded by the rule of
    :class:`~skdp_synth.preprocessing.BooleanEncoder` (one 1: that class;
    zero or several: drawn in proportion).

    Parameters
    ----------
    synthesizer : estimator
        A skdp_synth synthesizer (unfitted; it is cloned). For ``domain="box"``
        with explicit ``bounds``, bounds ``[0, 1]`` are appended for the label
        columns.
    classes : array-like, default=None
        The public list of class labels. ``None`` learns them from ``y`` with a
        :class:`~skdp_synth.exceptions.PrivacyLeakWarning` (a class present
        only in the private data would otherwise be revealed). ``None``
        among them declares that a label can be missing (a synthesis
        pipeline then synthesizes missing labels too, as NaN); without it a
        missing label is refused, as a declared column's missing value is
        (unless the pipeline's encoder says ``missing="always"``).
    n_samples : int, default=None
        Synthetic rows to return. ``None``: as many as ``X`` has when ``n``
        is public (replace-one DP, or a synthesizer that is not private);
        under add/remove neighbours ``n`` is private, and ``None`` returns the
        synthesizer's own default output size (its public ``n_rows`` or its
        released noisy total), never exactly ``len(X)``.
    random_state : None, int or RandomState, default=None
        For decoding the labels.

    Attributes
    ----------
    synthesizer_ : estimator
        The synthesizer fitted on the last ``fit_resample`` call. A private
        synthesizer spends its budget at every call -- in cross-validation,
        once per fold.
    classes_ : ndarray

    Examples
    --------
    >>> from imblearn.pipeline import Pipeline            # doctest: +SKIP
    >>> from sklearn.linear_model import LogisticRegression
    >>> pipe = Pipeline([("synth", SyntheticResampler(some_synthesizer,
    ...                                              classes=[0, 1])),
    ...                  ("clf", LogisticRegression())])  # doctest: +SKIP
    """

    def __init__(
        self,
        synthesizer: BaseEstimator,
        *,
        classes: ArrayLike | None = None,
        n_samples: int | None = None,
        random_state: int | np.random.RandomState | np.random.Generator | None = None,
    ) -> None:
        self.synthesizer = synthesizer
        self.classes = classes
        self.n_samples = n_samples
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> SyntheticResampler:
        """Fit and discard the resampled data (for API completeness)."""
        self.fit_resample(X, y)
        return self

    def fit_resample(self, X: ArrayLike, y: ArrayLike) -> tuple[Any, Any]:
        """Synthetic ``(X, y)``: ``n_samples`` rows (``None``: see the class's
        ``n_samples``; ``len(X)`` only where ``n`` is public).

        Returns
        -------
        X_synthetic : ndarray or DataFrame (as ``X``)
        y_synthetic : ndarray or Series (as ``y``)
        """
        # fail closed: the synthesizer's parameters are valid and its
        # accountant affords the fit before any label or row is read (the
        # label encoder below refuses an undeclared label, an answer that
        # would depend on the data). A pipeline's accountant is its last
        # step's: the pipeline's own parameters have none, and a spent
        # budget would be refused or not by whether y held an undeclared
        # label
        final = self.synthesizer
        while hasattr(final, "_final_estimator"):
            final = final._final_estimator
        validate = getattr(final, "_validate_params", None)
        if callable(validate):
            validate()
        check_written_budget(final)
        X, y = as_pandas(X), as_pandas(y)  # polars, pyarrow: pandas twins
        y_is_series = isinstance(y, pd.Series)
        y_name = y.name if y_is_series else None
        y_arr = np.asarray(y)
        if y_arr.ndim != 1:
            # its number of dimensions, not its shape (n is private)
            raise ValueError(f"y must be 1-dimensional, got {y_arr.ndim} dimensions")
        n = len(y_arr)
        if len(X) != n:
            # the sizes are not shown: n is private under add/remove
            raise ValueError("X and y have different numbers of rows")
        n_out = None if self.n_samples is None else check_n_samples(self.n_samples)
        if self.classes is None:
            warnings.warn(
                "classes were not given and are learned from y; pass classes= as "
                "public knowledge.",
                PrivacyLeakWarning,
                stacklevel=2,
            )
            classes = _plain(np.unique(y_arr[~pd.isna(y_arr)]))
        else:
            # Python values, not NumPy scalars (labels came back as np.str_),
            # and None allowed (np.unique fails on None beside strings)
            classes = _plain(self.classes)
            try:  # by equality, as np.unique did: 1, 1.0 and True are one
                distinct = len(set(classes)) == len(classes)
            except TypeError:  # unhashable labels: by type and repr
                distinct = len({_label_key(v) for v in classes}) == len(classes)
            if len(classes) < 1 or not distinct:
                raise ValueError("classes must be a non-empty list of distinct labels")

        if _encoder_of(self.synthesizer) is not None:
            out = self._resample_with_encoder(X, y_arr, y_name, classes, n, n_out)
            if y_is_series:
                return out[0], _label_series(out[1], y, classes)
            return out

        label_encoder = BooleanEncoder(
            categories={_TARGET: list(classes)},
            missing="infer" if _has_missing(classes) else "never",
            random_state=self.random_state,
        )
        y_bits = _labels_declared(
            lambda: label_encoder.fit_transform(pd.DataFrame({_TARGET: y_arr})),
            classes,
        )
        n_bits = y_bits.shape[1]

        is_frame = isinstance(X, pd.DataFrame)
        if is_frame:
            bit_names = [f"{_TARGET}{i}" for i in range(n_bits)]
            overlap = set(bit_names) & set(map(str, X.columns))
            if overlap:
                raise ValueError(f"X already has columns named {sorted(overlap)}")
            joint = pd.concat(
                [X.reset_index(drop=True), pd.DataFrame(y_bits, columns=bit_names)],
                axis=1,
            )
        else:
            joint = np.hstack([np.asarray(X, dtype=np.float64), y_bits])

        synth = clone(self.synthesizer)
        params = synth.get_params()
        if params.get("domain") == "box" and params.get("bounds") is not None:
            p = joint.shape[1] - n_bits
            lo, hi = params["bounds"]
            lo = np.broadcast_to(np.asarray(lo, dtype=float), (p,))
            hi = np.broadcast_to(np.asarray(hi, dtype=float), (p,))
            synth.set_params(
                bounds=(
                    np.concatenate([lo, np.zeros(n_bits)]),
                    np.concatenate([hi, np.ones(n_bits)]),
                )
            )
        synth.fit(joint)
        if n_out is None:
            relation = getattr(synth, "neighbouring_", "replace-one")
            # n is public under replace-one only; otherwise the synthesizer's
            # default size (a public bound or a released noisy total)
            n_out = n if relation == "replace-one" else None
        sample = synth.sample(n_out)
        sample_arr = np.asarray(sample, dtype=np.float64)
        labels = label_encoder.inverse_transform(sample_arr[:, -n_bits:])[_TARGET]
        y_out = labels.to_numpy()
        if y_arr.dtype != object:
            try:
                y_out = y_out.astype(y_arr.dtype)
            except (TypeError, ValueError):
                pass
        if is_frame:
            if isinstance(sample, pd.DataFrame):
                X_out = sample.iloc[:, :-n_bits]
            else:
                X_out = pd.DataFrame(sample_arr[:, :-n_bits], columns=X.columns)
        else:
            X_out = sample_arr[:, :-n_bits]
        self.synthesizer_ = synth
        self.classes_ = np.asarray(classes, dtype=object)
        if y_is_series:
            y_out = _label_series(y_out, y, classes)
        return X_out, y_out

    def _resample_with_encoder(self, X, y_arr, y_name, classes, n, n_out):
        """A synthesis pipeline (a ``BooleanEncoder`` first): the label is
        one more *categorical* column of the joint table, its public classes
        declared to the encoder -- not 0/1 columns, which the encoder would
        take for numeric ones (and the release would decode as a float
        array, failing on a categorical column of ``X``)."""
        is_frame = isinstance(X, pd.DataFrame)
        frame = X.reset_index(drop=True) if is_frame else pd.DataFrame(np.asarray(X))
        # the label keeps y's name (so that the release's ``target=`` can
        # name it: "Status", as in the table), else "__target__"; an array's
        # columns are 0..p-1 (as the encoder names them): the label is p
        label = _TARGET if is_frame else frame.shape[1]
        if is_frame and y_name is not None and y_name not in set(frame.columns):
            label = y_name
        if label in set(frame.columns):
            raise ValueError(f"X already has a column named {label!r}")
        joint = frame.assign(**{str(label): y_arr}) if is_frame else frame
        if not is_frame:
            joint[label] = y_arr
        synth = clone(self.synthesizer)
        encoder = _encoder_of(synth)
        declared = dict(encoder.get_params()["categories"] or {})
        declared[label] = list(classes)
        params = {"categories": declared}
        missing = encoder.get_params()["missing"]
        can_miss = _has_missing(classes)
        if missing == "infer":
            params["missing"] = {label: can_miss}
        elif isinstance(missing, dict):
            params["missing"] = {**missing, label: can_miss}
        encoder.set_params(**params)
        _labels_declared(lambda: synth.fit(joint), classes, label)
        if n_out is None:
            relation = getattr(synth, "neighbouring_", None) or getattr(
                synth._final_estimator, "neighbouring_", "replace-one"
            )
            n_out = n if relation == "replace-one" else None
        sample = synth.sample(n_out)
        labels = sample[label].to_numpy()
        y_out = labels
        if y_arr.dtype != object:
            try:
                y_out = labels.astype(y_arr.dtype)
            except (TypeError, ValueError):
                pass
        X_out = sample.drop(columns=label)
        if not is_frame:
            X_out = X_out.to_numpy()
        self.synthesizer_ = synth
        self.classes_ = np.asarray(classes, dtype=object)
        return X_out, y_out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags
