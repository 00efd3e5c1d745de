"""The contract shared by every synthesizer: fit / sample / transform / score.

Estimators inherit from :class:`SynthesizerMixin` (anonymity-based) or
:class:`PrivateSynthesizerMixin` (differentially private), *left* of
``BaseEstimator``, and implement four private hooks::

    _make_plan(n_samples, n_features)  # a frozen Plan: parameters + public sizes only
    _fit(U, plan, source)        # U: validated data in the cube [0, 1]^p (read-only)
    _sample_cube(n, source)      # n synthetic rows in the cube [0, 1]^p
    _synthetic_distribution()    # optional: (points in the cube, weights)

The public methods validate and the hooks compute (the template-method
pattern of imbalanced-learn). ``fit`` runs parameters → public structure
(shape, names, blocks, declared bounds) → plan → budget check → the values →
``_fit`` → charge, and keeps the plan as ``plan_`` (:mod:`skdp_synth.plan`):
a refused budget never depends on the data (``doc/privacy.md``, "Fail
closed").
An estimator that reads ``U`` only through additive statistics
(:func:`skdp_synth._chunked.reduce_rows`) sets ``_supports_chunked = True``;
its ``fit`` then also takes a Dask array or DataFrame, and ``_fit`` receives
a :class:`~skdp_synth._chunked.ChunkedRows` in place of the array
(``U.shape`` as usual; the rows only through ``reduce_rows``).
What the mixin guarantees:

* the plan -- every size, scale, noise model and the privacy guarantee --
  is fixed before the data is read, from the parameters, the public blocks
  and the public sizes only; it is published as ``plan_``;
* the parameters every synthesizer shares (``domain``, ``bounds``,
  ``blocks``, ``random_state``, and ``accountant`` for private ones) have
  their constraints declared once, here (:data:`SHARED_CONSTRAINTS`,
  :data:`PRIVATE_CONSTRAINTS`), and the ``blocks`` parameter its
  documentation (``%(blocks)s`` in a class docstring);

* a failed ``fit`` (bad input, refused budget, solver failure) leaves the
  estimator exactly as it was and spends no budget;
* every random draw comes from one :class:`~skdp_synth.mechanisms.NoiseSource`
  per call, derived from ``random_state`` (secure when it is ``None``);
* the categorical blocks of the columns (:mod:`skdp_synth.blocks`) are
  resolved once, in ``fit``, from the ``blocks`` parameter and the ``blocks``
  keyword of ``fit`` (:func:`~skdp_synth.base.resolve_blocks`), stored as
  ``blocks_``, and the training rows are checked against them;
* pandas in, pandas out: ``sample`` and ``transform`` return a DataFrame with
  the training columns, and each column keeps its training dtype whenever the
  values allow it without rounding (0/1 output of a Boolean column does; a
  fractional group mean does not and stays float64).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import OneToOneFeatureMixin, TransformerMixin
from sklearn.utils import assert_all_finite
from sklearn.utils.validation import check_is_fitted

from ._chunked import (
    ChunkedRows,
    WeightedRows,
    as_dask_array,
    graph_constant,
    import_dask,
    is_dask_collection,
)
from ._sklearn_compat import StrOptions, _fit_context, validate_data
from .blocks import Blocks, check_blocks
from .mechanisms import NoiseSource
from .plan import Plan
from .privacy import (
    REPLACE_ONE,
    BudgetAccountant,
    PrivacyGuarantee,
    warn_if_large_epsilon,
)
from .validation import (
    check_bounds,
    check_counts,
    check_counts_shape,
    check_in_domain,
    check_integer,
    check_n_samples,
    check_non_numeric_columns,
    from_cube,
    infer_bounds,
    reject_bool_params,
    sample_chunk_rows,
    to_cube,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Literal, Self

    import pandas as pd
    from numpy.typing import ArrayLike, NDArray

    from .blocks import BlocksLike

__all__ = [
    "PRIVATE_CONSTRAINTS",
    "SHARED_CONSTRAINTS",
    "PrivateSynthesizerMixin",
    "SynthesizerMixin",
    "resolve_blocks",
]

# Streams of an integer random_state: fit's draws and sample's draws must be
# independent even though both derive from the same seed.
FIT_STREAM = 0
SAMPLE_STREAM = 1
# draws made once after fit, in post-processing of the release (the rows of
# a level the release does not support, ProjectedGaussianRelease)
POST_FIT_STREAM = 3

#: ``_parameter_constraints`` entry of every synthesizer's ``blocks`` parameter
BLOCKS_CONSTRAINT = [StrOptions({"auto"}), None, list, tuple, Blocks]

#: Constraints of the parameters synthesizers share, owned here: a subclass
#: lists only its own parameters in ``_parameter_constraints`` and gets these
#: for each of them its ``__init__`` takes (see ``__init_subclass__``).
SHARED_CONSTRAINTS = {
    "domain": [StrOptions({"boolean", "box"})],
    "bounds": [tuple, list, None],
    "blocks": BLOCKS_CONSTRAINT,
    "random_state": ["random_state", np.random.Generator],
}

#: Constraints of the parameters private synthesizers add.
PRIVATE_CONSTRAINTS = {"accountant": [BudgetAccountant, None]}

#: Shared documentation of the ``blocks`` parameter: a line ``%(blocks)s`` in
#: a synthesizer's class docstring is replaced by it (at its indentation);
#: estimator-specific sentences follow the marker.
BLOCKS_DOC = """\
Which bits form one categorical attribute
(:class:`~skdp_synth.blocks.Blocks`, or a list of
:class:`~skdp_synth.blocks.Block` or of dicts ``{"name", "kind",
"width", "missing"}``). ``"auto"``: the blocks a
:class:`~skdp_synth.SynthesisPipeline` hands over from its encoder
(``fit(X, blocks=encoder.blocks_)``), else every bit its own binary
column. ``None``: every bit binary, even in a pipeline. Given blocks
win; a different ``blocks`` passed to ``fit`` raises. Blocks are public
knowledge (the encoder's declared domain), so using them costs no
privacy."""

_DOC_FRAGMENTS = {"blocks": BLOCKS_DOC}


def _fill_docstring(doc):
    """Replace each line ``%(name)s`` of ``doc`` by the fragment, indented alike."""
    if not doc or "%(" not in doc:
        return doc
    lines = []
    for line in doc.split("\n"):
        stripped = line.strip()
        key = stripped[2:-2] if stripped.startswith("%(") else None
        if key is not None and stripped.endswith(")s") and key in _DOC_FRAGMENTS:
            indent = line[: len(line) - len(line.lstrip())]
            lines.extend(indent + part for part in _DOC_FRAGMENTS[key].split("\n"))
        else:
            lines.append(line)
    return "\n".join(lines)


class SynthesizerMixin(OneToOneFeatureMixin, TransformerMixin):
    """Mixin for estimators that learn a distribution and emit synthetic rows.

    Subclasses declare ``domain`` (``"boolean"`` or ``"box"``) and ``bounds``
    parameters, or set the class attribute ``_fixed_domain = "boolean"``.
    The constraints of the shared parameters come from
    :data:`SHARED_CONSTRAINTS` (a subclass must not redeclare them).
    """

    _fixed_domain = None
    #: whether ``fit`` accepts a Dask collection (reads the data only through
    #: :func:`~skdp_synth._chunked.reduce_rows`)
    _supports_chunked = False
    #: why ``fit`` refuses a Dask collection and what to do instead (replaces the
    #: generic message when ``_supports_chunked`` is false); ``None``: generic
    _chunked_refusal = None
    #: whether inferring bounds from the data is a privacy leak for this estimator
    _private = False
    #: the shared parameters' constraints this mixin owns
    _shared_constraints = SHARED_CONSTRAINTS

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.__doc__ = _fill_docstring(cls.__doc__)
        own = cls.__dict__.get("_parameter_constraints")
        if own is None:
            return
        params = inspect.signature(cls.__init__).parameters
        shared = {}
        for name, constraint in cls._shared_constraints.items():
            if name not in params:
                continue
            if name in own:
                raise TypeError(
                    f"{cls.__name__}._parameter_constraints redeclares the shared "
                    f"parameter {name!r}: its constraint is owned by "
                    "skdp_synth.base (SHARED_CONSTRAINTS / PRIVATE_CONSTRAINTS)"
                )
            shared[name] = constraint
        cls._parameter_constraints = {**own, **shared}

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self, X: ArrayLike, y: None = None, *, blocks: BlocksLike | None = None
    ) -> Self:
        """Learn the synthetic distribution from ``X``.

        Parameters
        ----------
        X : array-like, DataFrame or Dask collection of shape (n_samples, n_features)
            Training data in the declared domain. Estimators that fit from
            sufficient statistics also take a ``dask.array.Array`` or a
            ``dask.dataframe.DataFrame`` of numeric columns: the statistics
            are reduced over its chunks, validated chunk by chunk, and the
            noise is added once on the driver (README, "Data beyond memory").
        y : None
            Ignored; present for pipeline compatibility. To synthesize a target
            jointly with ``X``, use :class:`skdp_synth.SyntheticResampler`.
        blocks : None, Blocks or list, default=None
            The columns' categorical blocks as metadata, handed over by
            :class:`~skdp_synth.SynthesisPipeline` from its encoder. Used
            when the ``blocks`` parameter is ``"auto"`` (see
            :func:`~skdp_synth.base.resolve_blocks`); public knowledge.

        Returns
        -------
        self : object
            The fitted estimator. If ``fit`` raises, the estimator is left as
            it was before the call.
        """
        return self._fit_validated(X, blocks)

    def _fit_validated(self, X, blocks=None, sample_weight=None):
        """The body of :meth:`fit`; ``sample_weight``: counts of distinct rows.

        Estimators that fit from additive statistics offer
        ``fit(X, sample_weight=counts)`` and call this with the counts: the
        rows are validated, the counts checked
        (:func:`~skdp_synth.validation.check_counts`) and ``_fit`` gets a
        :class:`~skdp_synth._chunked.WeightedRows` whose ``shape`` is that
        of the expanded table (``n`` = the total count).
        """
        saved_state = dict(self.__dict__)
        try:
            # parameters -> budget -> data (issue 23): the shape, the feature
            # names and the blocks are public; the plan and the budget check
            # use them only, so a refused budget never depends on the values
            # with counts one line can hold many records: the lines are not
            # counted here, the records are, after the budget check (a
            # privacy audit, round eighteen: one line of 100 was refused
            # while two lines fitted)
            min_rows = 1 if sample_weight is not None else 2
            shaped = self._validate_fit_shape(X, blocks, min_rows=min_rows)
            shape = shaped.shape
            counts = weights = None
            if sample_weight is not None:
                # counts of distinct rows (issue 25): the plan sees the shape of
                # the expanded table, as a fit of the expanded rows would. The
                # counts are private: only their dtype and length are checked
                # before the budget (a privacy audit, round sixteen, found
                # "must hold whole counts" answered before the BudgetError)
                weights = self._check_fit_counts_shape(shaped, sample_weight)
                shape = (_planned_total(weights), shape[1])
            if not self._private:  # no budget: the values are checked first
                U = self._validate_fit_values(shaped)
                if weights is not None:
                    counts = self._check_fit_counts(shaped, weights)
            plan = self._make_plan(*shape)  # before the data is read
            self._check_plan(plan, *shape)
            self._before_fit(plan)
            if self._private:
                U = self._validate_fit_values(shaped)
                if weights is not None:
                    counts = self._check_fit_counts(shaped, weights)
            if counts is not None:  # (check_counts: at least 2 records)
                U = WeightedRows(U, counts)
                self.n_samples_fit_ = int(counts.sum())
            source = NoiseSource(self.random_state, stream=FIT_STREAM)
            self._fit(U, plan, source)
            self._after_fit(plan)
            self._fitted_params = self._snapshot_params(source)
            # a pipeline hands over its encoder's guarantee after the fit
            # (its to_release() states both); a fit of its own starts clean
            self.__dict__.pop("_upstream_guarantee", None)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved_state)
            raise
        return self

    def _check_fit_counts_shape(self, shaped, sample_weight):
        """The public part of the counts' checks: in memory, numeric, 1-D,
        one per row (:func:`~skdp_synth.validation.check_counts_shape`)."""
        if shaped.chunked:
            raise TypeError(
                "sample_weight (counts) is not supported with a Dask collection; "
                "pass the distinct rows and their counts in memory"
            )
        return check_counts_shape(sample_weight, shaped.shape[0])

    def _check_fit_counts(self, shaped, sample_weight):
        """The counts of ``fit(X, sample_weight=)``: whole, non-negative, total >= 2
        (read after the budget check for a private estimator)."""
        counts = check_counts(sample_weight, shaped.shape[0])
        if counts.sum() < 2:
            raise ValueError("the counts must total at least 2 records")
        return counts

    def _validate_params(self):
        # sklearn's Interval(Real, ...) accepts bools: epsilon=True would be 1.
        super()._validate_params()
        reject_bool_params(self)

    def _make_plan(self, n_samples, n_features):  # pragma: no cover - abstract
        """The frozen :class:`~skdp_synth.plan.Plan` of a fit on ``n × p`` data.

        Called after the public structure is validated (``n_features_in_``
        and ``blocks_`` are set; ``bounds_`` is not yet: inferred bounds
        read the data) and before the data is read: it may use the
        parameters, the public blocks and the sizes, never the data. Raise
        ``ValueError`` here for parameters that do not fit the sizes.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must implement _make_plan(n_samples, n_features)"
        )

    def make_plan(
        self, n_samples: int, n_features: int, *, blocks: BlocksLike | None = None
    ) -> Plan:
        """The plan a fit on ``n_samples × n_features`` data would follow.

        Everything :meth:`fit` fixes before it reads the data -- sizes, noise
        scales, the noise model, the privacy guarantee -- from the parameters
        and the sizes alone (:mod:`skdp_synth.plan`). Nothing is fitted and
        nothing is charged; the estimator is not changed.

        Parameters
        ----------
        n_samples, n_features : int
            The shape of the data a fit would get.
        blocks : None, Blocks or list, default=None
            As in :meth:`fit`.

        Returns
        -------
        plan : Plan
            What ``plan_`` would be after such a fit.
        """
        from sklearn.base import clone

        self._validate_params()
        n_samples = check_integer(n_samples, "n_samples", min_value=2)
        n_features = check_integer(n_features, "n_features", min_value=1)
        est = clone(self)
        est.n_features_in_ = n_features
        param = getattr(self, "blocks", "auto")
        est.blocks_ = resolve_blocks(param, blocks, n_features)
        plan = est._make_plan(n_samples, n_features)
        est._check_plan(plan, n_samples, n_features)
        return plan

    def _check_plan(self, plan, n_samples, n_features):
        """Refuse a malformed plan (a bug in the estimator, never the user's)."""
        if not isinstance(plan, Plan):  # pragma: no cover - a bug
            raise TypeError("_make_plan must return a skdp_synth.plan.Plan")
        if plan.n_features != n_features:  # pragma: no cover - a bug
            raise TypeError("the plan's n_features differs from the data's")
        self._check_guarantee(plan)

    def _check_guarantee(self, plan):
        if plan.guarantee is not None:  # pragma: no cover - a bug
            raise TypeError(
                f"{type(self).__name__} is not a PrivateSynthesizerMixin; its plan "
                "must carry no privacy guarantee"
            )

    def _before_fit(self, plan):
        """Hook run after the plan and before ``_fit`` (budget checks)."""

    def _after_fit(self, plan):
        """Hook run after a successful ``_fit``: publish the plan."""
        self.plan_ = plan

    def _fit(self, U, plan, source):  # pragma: no cover - abstract
        """Read ``U`` (the cube-scaled data) and fit, following ``plan``."""
        raise NotImplementedError

    # ----------------------------------------------------------- validation
    def _domain(self):
        """The domain: the fitted one once fitted (a later ``set_params`` does
        not change how the fitted state is read), else the parameter."""
        fitted = self.__dict__.get("_fit_domain")
        return fitted or self._fixed_domain or self.domain

    def _fitted_param(self, name, default=None):
        """A parameter's value at the last successful fit (issue 23, finding 3).

        What is published (``to_release``, default output sizes) reads the
        parameters the fit used, never the current ones: a ``set_params``
        after ``fit`` changes nothing that was released until the next fit.
        Before the first fit, the current value.
        """
        fitted = self.__dict__.get("_fitted_params")
        if fitted is not None and name in fitted["params"]:
            return fitted["params"][name]
        return getattr(self, name, default)

    def _snapshot_params(self, source):
        """The fit's public parameters, domain and noise source (see
        :meth:`_fitted_param`); ``hardened_noise`` is true only when every
        random draw of the mechanism came from the hardened source."""
        import copy

        params = {
            k: copy.deepcopy(v)
            for k, v in self.get_params(deep=False).items()
            if k not in ("accountant", "random_state")
        }
        return {
            "params": params,
            "hardened_noise": bool(source.secure and self._hardened_mechanism),
        }

    #: whether every random draw of the mechanism goes through the
    #: :class:`~skdp_synth.mechanisms.NoiseSource`'s hardened samplers when
    #: ``random_state=None`` (False where the mechanism itself draws from
    #: NumPy, e.g. the sampler's rows or PROJ's bootstrap)
    _hardened_mechanism = True

    def _validate_fit_data(self, X, fit_blocks=None):
        """Validate ``X``, fix the domain's bounds and map ``X`` to ``[0, 1]^p``.

        :meth:`_validate_fit_shape` then :meth:`_validate_fit_values` (``fit``
        runs the plan and the budget check between the two).
        """
        return self._validate_fit_values(self._validate_fit_shape(X, fit_blocks))

    def _validate_fit_shape(self, X, fit_blocks=None, min_rows=2):
        """What is public about ``X``: its shape, feature names and blocks.

        Converts ``X`` (no value is checked yet: finiteness, the domain and
        the blocks' codes are checked by :meth:`_validate_fit_values`, after
        the budget check), resolves the blocks and the declared bounds (both
        parameters) and sets ``n_features_in_``, ``feature_names_in_``,
        ``blocks_``. Returns a :class:`_Shaped` holder.
        """
        domain = self._fixed_domain or self.domain
        if is_dask_collection(X):
            return self._validate_chunked_fit_shape(X, fit_blocks, domain)
        check_non_numeric_columns(X)
        output_spec = _output_spec(X)
        X = _convert_fit_data(self, X, min_rows)
        n_features = X.shape[1]
        names = getattr(self, "feature_names_in_", None)
        blocks, bounds = self._public_structure(
            fit_blocks, n_features, names, domain, output_spec
        )
        return _Shaped(X, domain, bounds, blocks, chunked=False)

    def _public_structure(self, fit_blocks, n_features, names, domain, output_spec):
        """``(blocks_, declared bounds)`` from the parameters and the schema.

        Shared by the in-memory and the Dask shape checks; sets ``blocks_``
        and the fit's domain and output spec. Reads no value.
        """
        blocks = resolve_blocks(
            getattr(self, "blocks", "auto"), fit_blocks, n_features, names
        )
        bounds = None
        if domain == "boolean":
            bounds = (np.zeros(n_features), np.ones(n_features))
        elif getattr(self, "bounds", None) is not None:
            bounds = check_bounds(self.bounds, n_features)
        self.blocks_ = blocks
        self._fit_domain = domain
        self._output_spec = output_spec
        return blocks, bounds

    def _validate_fit_values(self, shaped):
        """The checks that read the values (after the budget check).

        Errors name the column or the block and the kind of problem, never a
        count, a value or a row (``doc/privacy.md``, "Errors").
        """
        X, domain, bounds, blocks = (
            shaped.X,
            shaped.domain,
            shaped.bounds,
            shaped.blocks,
        )
        if shaped.chunked:
            return self._validate_chunked_fit_values(shaped)
        assert_all_finite(X, input_name="X")
        if bounds is None:
            bounds = infer_bounds(X, warn=self._private)
        lo, hi = bounds
        check_in_domain(X, domain, lo, hi)
        if domain == "boolean" and not blocks.is_all_binary:
            _check_rows_valid(X, blocks)
        self.bounds_ = (lo, hi)
        self.n_samples_fit_ = X.shape[0]
        if domain == "boolean":
            U = X.view()  # already the cube; a read-only view, never a copy
        else:
            U = to_cube(X, lo, hi)
        U.flags.writeable = False
        return U

    def _validate_chunked_fit_data(self, X, fit_blocks=None):
        """The out-of-core counterpart of :meth:`_validate_fit_data` (Dask input)."""
        domain = self._fixed_domain or self.domain
        shaped = self._validate_chunked_fit_shape(X, fit_blocks, domain)
        return self._validate_chunked_fit_values(shaped)

    def _validate_chunked_fit_shape(self, X, fit_blocks, domain):
        """The out-of-core counterpart of :meth:`_validate_fit_shape` (Dask input).

        Checks what is known without reading the data (shape, dtype, the
        number of rows -- public) and fixes the blocks and declared bounds as
        in memory; :meth:`_validate_chunked_fit_values` returns a
        :class:`~skdp_synth._chunked.ChunkedRows`: the rows themselves are
        validated chunk by chunk while the statistics are computed
        (:func:`~skdp_synth._chunked.reduce_rows`). Box data without declared
        bounds costs one extra pass (the column minima and maxima, with the
        same :class:`~skdp_synth.exceptions.PrivacyLeakWarning` as in memory).
        """
        if not self._supports_chunked:
            if self._chunked_refusal is not None:
                raise TypeError(f"{type(self).__name__} {self._chunked_refusal}")
            raise TypeError(
                f"{type(self).__name__} needs the whole table in memory (it "
                "sorts the rows globally) and does not fit from a Dask "
                "collection; pass X.compute() (a NumPy array or a pandas "
                "DataFrame) or use a synthesizer that fits from sufficient "
                "statistics (ProjectedGaussianRelease, DampedPrivateSynthesizer, "
                "PrivateSampler)."
            )
        arr, names, output_spec = as_dask_array(X)
        n_samples, n_features = (int(s) for s in arr.shape)
        if n_features < 1:
            raise ValueError(_NO_COLUMNS)  # the shape would show n
        if n_samples < 2:
            raise ValueError(_TOO_FEW_ROWS)
        self.n_features_in_ = n_features
        if names is None:
            self.__dict__.pop("feature_names_in_", None)
        else:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        blocks, bounds = self._public_structure(
            fit_blocks, n_features, names, domain, output_spec
        )
        return _Shaped(arr, domain, bounds, blocks, chunked=True, names=names)

    def _validate_chunked_fit_values(self, shaped):
        arr, domain, bounds, blocks, names = (
            shaped.X,
            shaped.domain,
            shaped.bounds,
            shaped.blocks,
            shaped.names,
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
            bounds = infer_bounds(
                np.vstack([mins, maxs]).astype(np.float64), warn=self._private
            )
        lo, hi = bounds
        self.bounds_ = (lo, hi)
        self.n_samples_fit_ = int(arr.shape[0])
        shown = names or [str(j) for j in range(n_features)]
        return ChunkedRows(arr, domain, (lo, hi), blocks, shown)

    def _to_cube(self, X):
        """Map new data with the fitted bounds, for ``score`` and ``transform``.

        Boolean data must still be 0/1. Box data outside the fitted bounds is
        mapped affinely outside ``[0, 1]`` (not clipped): it is never released,
        only compared with, so the privacy argument does not need it inside.
        """
        check_is_fitted(self)
        check_non_numeric_columns(X)
        X = _validated_array(self, X, reset=False, dtype=np.float64)
        lo, hi = self.bounds_
        if self._domain() == "boolean":
            check_in_domain(X, "boolean")
            return X
        return (X - lo) / (hi - lo)

    # --------------------------------------------------------------- sample
    def sample(
        self,
        n_samples: int | None = None,
        random_state: int | np.random.RandomState | np.random.Generator | None = None,
        *,
        chunks: int | None = None,
    ) -> Any:
        """Draw synthetic rows.

        Parameters
        ----------
        n_samples : int, default=None
            Number of rows; ``None`` uses the estimator's output size
            (its ``m`` parameter when it has one).
        random_state : None, int, RandomState or Generator, default=None
            Overrides the estimator's ``random_state`` for this call. With an
            integer (here or on the estimator), repeated calls return the same
            rows.
        chunks : int, default=None
            Rows per chunk of a **lazily generated** Dask output (needs the
            ``dask`` extra): a ``dask.array.Array``, or a
            ``dask.dataframe.DataFrame`` when the estimator outputs frames,
            whose chunks are drawn only when computed, each from its own
            child stream (``numpy.random.SeedSequence.spawn``) of
            ``random_state``: reproducible for an integer seed, whatever the
            scheduler, the number of workers or the order the chunks are
            computed in. The lazy rows are a **different stream** from the
            eager ones (``chunks=None``) for the same seed; they have the
            same distribution (for the release, each chunk is a controlled
            rounding of its own size, as the CLI's chunked output). Whatever
            the rows cost, they are charged once, now, as the eager call
            would (drawing is post-processing, free, except for
            :class:`~skdp_synth.PrivateSampler`'s rows beyond those paid
            for). Box data: integer columns come out float64 (the eager call
            keeps an integer dtype when every drawn value is integral).

        Returns
        -------
        X_synthetic : ndarray or DataFrame of shape (n_samples, n_features)
            In the units, columns and (where lossless) dtypes of the training
            data. Synthetic rows are not aligned with any training row. With
            ``chunks``, the lazy Dask array or DataFrame of the same shape.
        """
        check_is_fitted(self)
        n = self._check_sample_size(n_samples)
        if random_state is None:
            random_state = self.random_state
        if chunks is not None:
            return self._sample_lazy(n, random_state, chunks)
        rows = sample_chunk_rows(self.n_features_in_)
        if n > rows:
            return self._sample_in_chunks(n, random_state, rows)
        U = self._sample_cube(n, NoiseSource(random_state, stream=SAMPLE_STREAM))
        return self._wrap_output(from_cube(U, *self.bounds_))

    def _sample_in_chunks(self, n, random_state, rows):
        """A large eager sample drawn in bounded chunks (issue 23, finding 7).

        The chunks of ``sample(n, chunks=rows)`` (their streams, any charge
        made once, now), computed here one after the other: the working
        memory of a chunk is bounded whatever ``n``; the output itself is
        the only allocation proportional to ``n``. The rows are those of the
        lazy call (a different stream from a one-shot draw, the same
        distribution); box data's integer columns come out float64.
        """
        snapshot, tasks, secure = self._lazy_draws(n, random_state, rows)
        meta = self._lazy_meta()
        parts = [
            _lazy_chunk(snapshot, size, seed, secure, part, meta)
            for size, seed, part in tasks
        ]
        if isinstance(meta, np.ndarray):
            return np.concatenate(parts, axis=0)
        import pandas as pd

        return pd.concat(parts, ignore_index=True)

    # ------------------------------------------------------- lazy sample
    def _lazy_draws(self, n, random_state, chunks):
        """``(snapshot, tasks, secure)`` of a lazy sample of ``n`` rows.

        Built once, on the driver: the chunk sizes, one child
        ``SeedSequence`` per chunk (:func:`lazy_seed_sequence`), and each
        chunk's part of anything decided now (:meth:`_lazy_parts`: where a
        charge happens). ``snapshot`` is a shallow copy of the fitted
        estimator, so that a later ``fit`` does not change the rows.
        """
        import copy

        chunks = check_n_samples(chunks, "chunks")
        sizes = [min(chunks, n - s) for s in range(0, n, chunks)]
        secure = random_state is None
        seeds = lazy_seed_sequence(random_state).spawn(len(sizes) + 1)
        driver = _seeded_source(seeds[-1], secure)
        parts = self._lazy_parts(sizes, driver)
        tasks = list(zip(sizes, seeds[:-1], parts))
        return copy.copy(self), tasks, secure

    def _lazy_parts(self, sizes, source):
        """Per-chunk state decided on the driver: none (drawing is free)."""
        return [None] * len(sizes)

    def _lazy_chunk_cube(self, size, source, part):
        """One lazy chunk's rows in the cube (the eager draw, from its stream)."""
        return self._sample_cube(size, source)

    def _lazy_meta(self):
        """The output of zero rows: the dtypes every lazy chunk is cast to.

        Those of the eager output for rows drawn from the domain: the
        training dtypes on Boolean data (0/1 values are lossless in any
        numeric dtype), float64 for integer columns of box data.
        """
        p = self.n_features_in_
        probe = (
            np.zeros((1, p)) if self._domain() == "boolean" else np.full((1, p), 0.5)
        )
        return self._wrap_output(from_cube(probe, *self.bounds_))[:0]

    def _sample_lazy(self, n, random_state, chunks):
        dask = import_dask("sample(chunks=...)")
        import dask.array as da

        snapshot, tasks, secure = self._lazy_draws(n, random_state, chunks)
        meta = self._lazy_meta()
        fitted = graph_constant(snapshot, "sample(chunks=...)")
        draw = dask.delayed(_lazy_chunk, pure=False)
        if isinstance(meta, np.ndarray):
            return da.concatenate(
                [
                    da.from_delayed(
                        draw(fitted, size, seed, secure, part, meta),
                        shape=(size, meta.shape[1]),
                        dtype=meta.dtype,
                    )
                    for size, seed, part in tasks
                ],
                axis=0,
            )
        import dask.dataframe as dd

        parts = [
            draw(fitted, size, seed, secure, part, meta) for size, seed, part in tasks
        ]
        return dd.from_delayed(parts, meta=meta, verify_meta=False)

    def _check_sample_size(self, n_samples):
        if n_samples is None:
            n_samples = self._default_n_samples()
        return check_n_samples(n_samples)

    def _default_n_samples(self):
        # the fitted m, not a set_params after fit (a privacy audit, round
        # eighteen: the release's default_n_samples followed the current m)
        m = self._fitted_param("m")
        return m if m is not None else self.n_samples_fit_

    def _sample_cube(self, n_samples, source):  # pragma: no cover - abstract
        raise NotImplementedError

    def _synthetic_distribution(self):
        """``(points, weights)`` in the cube whose expectation ``sample`` draws from.

        Return ``None`` when the estimator has no such finite distribution; the
        scorers then draw a sample instead.
        """
        return None

    # ---------------------------------------------------- transform / score
    def transform(self, X: ArrayLike) -> NDArray[Any] | pd.DataFrame:
        """A synthetic dataset with as many rows as ``X``.

        For differentially private synthesizers the output is **not** aligned
        with the rows of ``X``: it is ``sample(len(X))``. ``X`` is only
        validated (feature names and count).
        """
        check_is_fitted(self)
        check_non_numeric_columns(X)
        X = _validated_array(self, X, reset=False, dtype=np.float64)
        return self.sample(X.shape[0])

    def score(self, X: ArrayLike, y: None = None) -> float:
        """Minus the average 2-way marginal error between ``X`` and the synthetic data.

        Greater is better, so ``GridSearchCV`` can tune the estimator without a
        custom scorer. The error is that of :cite:`Boedihardjo2024`, eq. (1.2), with
        ``d = 2`` on the cube scale; see
        :func:`skdp_synth.metrics.make_marginal_scorer`.
        """
        from .metrics import make_marginal_scorer

        return make_marginal_scorer(d=2)(self, X, y)

    # --------------------------------------------------------------- output
    def _wrap_output(self, X):
        return _apply_output_spec(X, self._output_spec)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.non_deterministic = self.random_state is None
        return tags


class PrivateSynthesizerMixin(SynthesizerMixin):
    """A :class:`SynthesizerMixin` that records and charges its privacy cost.

    Subclasses' :meth:`_make_plan` states the guarantee of a fit on ``n``
    rows in ``plan.guarantee``, *before* the data is used (``n`` is public
    under replace-one neighbours; under add/remove the plan must not record
    it). ``fit`` checks it against the optional ``accountant`` first and
    charges it only after success, and then sets

    ``plan_``
        The plan (public: data-independent).

    ``epsilon_``, ``delta_``, ``neighbouring_``
        What was spent and for which neighbouring relation.
    ``privacy_guarantee_``
        The same as a :class:`~skdp_synth.privacy.PrivacyGuarantee`.
    """

    _private = True
    _shared_constraints = {**SHARED_CONSTRAINTS, **PRIVATE_CONSTRAINTS}

    def _check_guarantee(self, plan):
        guarantee = plan.guarantee
        if not isinstance(guarantee, PrivacyGuarantee):  # pragma: no cover - a bug
            raise TypeError("a private estimator's plan must carry a PrivacyGuarantee")
        if guarantee.neighbouring != REPLACE_ONE and plan.n_samples is not None:
            raise TypeError(  # pragma: no cover - a bug
                f"{type(self).__name__}'s plan records n_samples under "
                f"{guarantee.neighbouring!r} neighbours, where n is private"
            )

    def _before_fit(self, plan):
        guarantee = plan.guarantee
        accountant = getattr(self, "accountant", None)
        if accountant is not None:
            accountant.check(guarantee.epsilon, guarantee.delta, guarantee.neighbouring)
        warn_if_large_epsilon(guarantee.epsilon, f"{type(self).__name__}.fit", 5)

    def _after_fit(self, plan):
        super()._after_fit(plan)
        guarantee = plan.guarantee
        accountant = getattr(self, "accountant", None)
        if accountant is not None:
            accountant.spend(
                guarantee.epsilon,
                guarantee.delta,
                guarantee.neighbouring,
                mechanism=type(self).__name__,
            )
        self.privacy_guarantee_ = guarantee
        self.epsilon_ = guarantee.epsilon
        self.delta_ = guarantee.delta
        self.neighbouring_ = guarantee.neighbouring
        if guarantee.neighbouring != REPLACE_ONE:
            # Under add/remove neighbours n itself is private: keeping it
            # would reveal membership with certainty (issue 13, finding 2).
            self.__dict__.pop("n_samples_fit_", None)


# ---------------------------------------------------------------- helpers
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


def _check_rows_valid(X, blocks):
    """Reject training rows whose code in some block is not valid.

    The message names the blocks only: the number of invalid rows is the
    exact count of a cell the caller chose through ``blocks`` (issue 23,
    finding 1).
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


#: the refusal of too few rows: the same words whatever the number (under
#: add/remove neighbours n is private, issue 23)
_TOO_FEW_ROWS = (
    "X needs at least 2 samples to fit a synthesizer; it has fewer (0 samples "
    "or 1 sample: which one is not shown, n is private under add/remove)."
)


class _Shaped:
    """The public part of validated fit data: the array (values unchecked),
    the domain, the declared bounds (``None``: to be inferred), the blocks,
    whether it is a Dask array (``chunked``) and then its feature names."""

    __slots__ = ("X", "blocks", "bounds", "chunked", "domain", "names")

    def __init__(self, X, domain, bounds, blocks, *, chunked, names=None):
        self.X, self.domain, self.bounds = X, domain, bounds
        self.blocks, self.chunked, self.names = blocks, chunked, names

    @property
    def shape(self):
        return tuple(int(s) for s in self.X.shape)


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
#: a table without columns, said without its shape (whose ``n`` is private)
_NO_COLUMNS = "X has no columns (0 features); a synthesizer needs at least one"


def _validated_array(estimator, X, **kwargs):
    """``validate_data(estimator, X, **kwargs)`` whose refusals carry no
    value or size of ``X``.

    scikit-learn's and NumPy's conversion errors quote the data: "could not
    convert string to float: 'x'", "Complex data not supported" followed by
    the first and last rows, "Expected 2D array, got 1D array instead:
    array=[...]", "Found array with 0 feature(s) (shape=(n, 0))". Each is
    replaced by a message without them; an error this does not know is
    replaced by a generic one rather than passed on (a canary audit, round
    twenty: complex input printed private rows, before the budget check).
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
            raise ValueError(_NO_COLUMNS) from None
        if "sample(s)" in text:
            raise ValueError(_TOO_FEW_ROWS) from None
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
    through :func:`_validated_array`: no refusal quotes a value or a size."""
    X = _validated_array(
        estimator,
        X,
        reset=True,
        dtype=np.float64,
        ensure_all_finite=False,
        ensure_min_samples=1,
    )
    if X.shape[0] < min_rows:
        raise ValueError(_TOO_FEW_ROWS)
    return X


def _output_spec(X):
    """Remember how the training data looked, to give the output the same look."""
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        return {"frame": True, "columns": list(X.columns), "dtypes": list(X.dtypes)}
    dtype = getattr(X, "dtype", None)
    return {"frame": False, "dtype": dtype if isinstance(dtype, np.dtype) else None}


def _lossless(values, dtype):
    """Whether ``values`` survive a cast to ``dtype`` unchanged."""
    try:
        cast = np.asarray(values).astype(dtype)
    except (TypeError, ValueError):
        return False
    return bool(np.array_equal(cast.astype(np.float64), values))


def lazy_seed_sequence(random_state, stream=SAMPLE_STREAM):
    """The root ``SeedSequence`` whose children seed the chunks of a lazy sample.

    An integer seed ``s``: ``SeedSequence(s, spawn_key=(stream,))``
    (the eager call's stream -- ``sample``'s by default, ``transform``'s
    rounding for the microaggregator; its children are other streams); ``None``:
    fresh entropy from the operating system, drawn once when the graph is
    built (so computing the graph twice gives the same rows); a
    ``RandomState`` or ``Generator``: 128 bits drawn from it (it moves on, as
    scikit-learn's convention has it).
    """
    import numbers

    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, numbers.Integral) and not isinstance(
        random_state, bool
    ):
        return np.random.SeedSequence(int(random_state), spawn_key=(int(stream),))
    if isinstance(random_state, np.random.RandomState):
        words = random_state.randint(0, 2**32, size=4, dtype=np.uint64)
    elif isinstance(random_state, np.random.Generator):
        words = random_state.integers(0, 2**32, size=4, dtype=np.uint64)
    else:
        raise ValueError(
            f"random_state must be None, an int, a numpy RandomState or Generator; "
            f"got {random_state!r}"
        )
    return np.random.SeedSequence([int(w) for w in words])


def _seeded_source(seed, secure):
    """A :class:`NoiseSource` on the generator of ``seed`` (a ``SeedSequence``)."""
    source = NoiseSource(np.random.default_rng(seed))
    source.secure = secure
    return source


def _lazy_chunk(estimator, size, seed, secure, part, meta):
    """One chunk of a lazy sample: drawn from its own stream, in the output dtypes."""
    U = estimator._lazy_chunk_cube(size, _seeded_source(seed, secure), part)
    out = estimator._wrap_output(from_cube(U, *estimator.bounds_))
    if isinstance(meta, np.ndarray):
        return out.astype(meta.dtype, copy=False)
    return out.astype(meta.dtypes.to_dict())


def _apply_output_spec(X, spec):
    X = np.asarray(X, dtype=np.float64)
    if not spec["frame"]:
        dtype = spec["dtype"]
        if dtype is not None and dtype.kind in "biu" and _lossless(X, dtype):
            return X.astype(dtype)
        return X
    import pandas as pd

    columns = {}
    for j, (name, dtype) in enumerate(zip(spec["columns"], spec["dtypes"])):
        col = X[:, j]
        target = getattr(dtype, "numpy_dtype", dtype)
        if isinstance(target, np.dtype) and target.kind == "f":
            columns[name] = pd.Series(col, dtype=dtype)
        elif _lossless(col, target):
            columns[name] = pd.Series(col, dtype=dtype)
        else:
            columns[name] = pd.Series(col, dtype=np.float64)
    return pd.DataFrame(columns, columns=spec["columns"])
