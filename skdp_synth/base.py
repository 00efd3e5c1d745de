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
``_fit`` → charge (the structure and the values are checked by one intake,
:mod:`skdp_synth._intake`), and keeps the plan as ``plan_``
(:mod:`skdp_synth.plan`):
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

import contextlib
import inspect
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._chunked import graph_constant, import_dask
from ._intake import resolve_blocks, take_in, validated_array
from ._sklearn_compat import StrOptions, _fit_context
from .blocks import Blocks
from .mechanisms import NoiseSource
from .plan import Plan
from .privacy import (
    REPLACE_ONE,
    BudgetAccountant,
    PrivacyGuarantee,
    warn_if_large_epsilon,
)
from .validation import (
    as_pandas,
    check_budget_params,
    check_in_domain,
    check_integer,
    check_n_samples,
    check_non_numeric_columns,
    from_cube,
    reject_bool_params,
    sample_chunk_rows,
    user_stacklevel,
)

if TYPE_CHECKING:
    from typing import Any, Self

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

        The contract: the public part of ``X`` (:func:`~skdp_synth._intake.take_in`:
        the shape, the feature names, the blocks, the counts' length) ->
        plan -> budget check -> the values (:meth:`Intake.read
        <skdp_synth._intake.Intake.read>`) -> ``_fit`` -> charge. The plan
        and the budget check use the public part only, so a refused budget
        never depends on the values; an estimator without a budget checks
        the values first.
        """
        saved_state = dict(self.__dict__)
        try:
            intake = self._take_in(X, blocks, sample_weight)
            if not self._private:  # no budget: the values are checked first
                intake = self._read_values(intake)
            plan = self._make_plan(*intake.shape)  # before the data is read
            self._check_plan(plan, *intake.shape)
            with self._reserve_budget(plan):
                self._before_fit(plan)
                if self._private:
                    intake = self._read_values(intake)
                source = NoiseSource(self.random_state, stream=FIT_STREAM)
                self._fit(intake.rows, plan, source)
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

    def _take_in(self, X, fit_blocks=None, sample_weight=None):
        """The public part of ``X`` (:func:`~skdp_synth._intake.take_in`); sets
        ``n_features_in_``, ``feature_names_in_``, ``blocks_`` and the fit's
        domain and output spec. Reads no value."""
        intake = take_in(self, X, fit_blocks, sample_weight)
        self.blocks_ = intake.blocks
        self._fit_domain = intake.domain
        self._output_spec = intake.output_spec
        return intake

    def _read_values(self, intake):
        """The values of ``X`` checked (after the budget check for a private
        estimator); sets ``bounds_`` and ``n_samples_fit_``."""
        intake = intake.read(warn=self._private)
        self.bounds_ = intake.bounds
        self.n_samples_fit_ = intake.n_samples
        return intake

    def _validate_params(self):
        # epsilon / delta out of range: in the project's words, with a
        # typical value, before scikit-learn's generic ones
        check_budget_params(self)
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

    def _reserve_budget(self, plan):
        """Context around reading the data and ``_fit``: the budget held."""
        return contextlib.nullcontext()

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
        """A parameter's value at the last successful fit.

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

        :meth:`_take_in` then :meth:`_read_values`, with no plan or budget
        check between them (``fit`` runs those in between); returns the
        cube rows (a :class:`~skdp_synth._chunked.ChunkedRows` for Dask
        input).
        """
        return self._read_values(self._take_in(X, fit_blocks)).rows

    def _to_cube(self, X):
        """Map new data with the fitted bounds, for ``score`` and ``transform``.

        Boolean data must still be 0/1. Box data outside the fitted bounds is
        mapped affinely outside ``[0, 1]`` (not clipped): it is never released,
        only compared with, so the privacy argument does not need it inside.
        """
        check_is_fitted(self)
        X = as_pandas(X)
        check_non_numeric_columns(X)
        X = validated_array(self, X, reset=False, dtype=np.float64)
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
        """A large eager sample drawn in bounded chunks.

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
        # the fitted m, not a set_params after fit (the release's
        # default_n_samples once followed the current m)
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
        X = as_pandas(X)
        check_non_numeric_columns(X)
        X = validated_array(self, X, reset=False, dtype=np.float64)
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

    def _reserve_budget(self, plan):
        """The plan's whole spend held on the accountant from before the
        data is read until the fit ends (:meth:`BudgetAccountant.reserve
        <skdp_synth.privacy.BudgetAccountant.reserve>`): a concurrent fit
        on the same accountant is refused before it reads a value."""
        accountant = getattr(self, "accountant", None)
        if accountant is None:
            return contextlib.nullcontext()
        g = plan.guarantee
        return accountant.reserve(g.epsilon, g.delta, g.neighbouring)

    def _before_fit(self, plan):
        guarantee = plan.guarantee
        accountant = getattr(self, "accountant", None)
        if accountant is not None:
            accountant.check(guarantee.epsilon, guarantee.delta, guarantee.neighbouring)
        # (+1: the level is counted from warn_if_large_epsilon's own frame)
        warn_if_large_epsilon(
            guarantee.epsilon, f"{type(self).__name__}.fit", user_stacklevel() + 1
        )

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
            # would reveal membership with certainty.
            self.__dict__.pop("n_samples_fit_", None)


# ---------------------------------------------------------------- helpers
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
