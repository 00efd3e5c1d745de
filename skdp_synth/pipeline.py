"""Pipelines whose ``sample`` decodes synthetic rows back to the input schema.

How the pipeline fits its steps, hands the encoder's blocks to the
synthesizer and draws and decodes rows lives here; how it spends one
privacy budget across its steps (checked first, split, charged, composed)
lives in :mod:`skdp_synth._pipeline_budget`, and which levels it keeps after
the fit (and which columns it warns about) in :mod:`skdp_synth._pipeline_levels`,
both mixed into :class:`SynthesisPipeline`.
"""

from __future__ import annotations

import copy
import inspect
import warnings
from functools import partial
from numbers import Real
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from sklearn import get_config
from sklearn.pipeline import Pipeline
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._chunked import graph_constant, import_dask
from ._pipeline_budget import DOMAIN_SHARE_MAX as DOMAIN_SHARE_MAX
from ._pipeline_budget import DOMAIN_SHARE_MIN as DOMAIN_SHARE_MIN
from ._pipeline_budget import DOMAIN_SHARE_PER_COLUMN as DOMAIN_SHARE_PER_COLUMN
from ._pipeline_budget import PipelineBudgetMixin
from ._pipeline_budget import auto_domain_share as auto_domain_share
from ._pipeline_levels import PipelineLevelsMixin
from ._progress import shown
from ._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    _name_estimators,
    _print_elapsed_time,
)
from .exceptions import PrivacyLeakWarning
from .rules import RULES_SPAWN_KEY as _RULES_SPAWN_KEY
from .rules import RuleSet, rules_seed
from .validation import as_pandas, sample_chunk_rows

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Self

    from numpy.typing import ArrayLike

    from .release import Release

__all__ = ["SynthesisPipeline", "make_synthesis_pipeline"]


class _RestoreStepsOnFailure:
    """``fit`` that leaves the pipeline *and every step* as they were if it fails.

    scikit-learn's ``Pipeline.fit`` fits the steps in place, one after the
    other: when a later step fails, the earlier ones already hold the new
    fit (an encoder with new columns before a synthesizer with the old
    fit). The steps' ``__dict__`` and the step list
    are saved and restored on any exception, ``KeyboardInterrupt`` included.
    """

    def fit(self, X: ArrayLike, y: ArrayLike | None = None, **params: Any) -> Self:
        return self._rollback_on_failure(super().fit, X, y, **params)

    def _rollback_on_failure(self, fit, X, y=None, **params):
        saved_self = dict(self.__dict__)
        saved_steps = [
            (step, dict(step.__dict__))
            for _, step in self.steps
            if hasattr(step, "__dict__") and not isinstance(step, str)
        ]
        try:
            return fit(X, y, **params)
        except BaseException:
            for step, state in saved_steps:
                step.__dict__.clear()
                step.__dict__.update(state)
            self.__dict__.clear()
            self.__dict__.update(saved_self)
            raise


class SynthesisPipeline(
    _RestoreStepsOnFailure, PipelineBudgetMixin, PipelineLevelsMixin, Pipeline
):
    """A ``Pipeline`` ending in a synthesizer, with a decoding ``sample``.

    ``transform`` and ``score`` are scikit-learn's: the data passes through
    the encoders' ``transform`` into the synthesizer. ``fit`` (and
    ``fit_transform``) also hand the categorical structure over: the
    ``blocks_`` of the last earlier step that has one (e.g. a
    :class:`~skdp_synth.preprocessing.BooleanEncoder`) is passed to the last
    step as ``fit(Xt, y, blocks=blocks_)`` when its ``fit`` takes a
    ``blocks`` keyword, so its sampled rows are valid rows of the table.
    Blocks come from the encoder's declared domain: public, no privacy cost.
    :meth:`sample` draws from the last step and passes the rows back through
    the earlier steps' ``inverse_transform``, in reverse order, so the
    synthetic data comes out in the schema of the input (e.g. the original
    categorical table after a :class:`~skdp_synth.preprocessing.BooleanEncoder`).

    **One ε for the whole pipeline**. When the first step is a
    :class:`~skdp_synth.preprocessing.BooleanEncoder` with ``epsilon="auto"`` that
    has domains to learn (numeric columns without ``bin_edges``, categorical
    columns without ``categories``; decided from the parameters and the
    schema, not the values) and the last step has an ``epsilon``, ``fit``
    gives the encoder ``domain_share`` of the last step's ``ε`` (and of its
    ``δ``, for discovering levels) and the last step the rest, under the last
    step's neighbouring relation; both parameters are restored after ``fit``.
    By sequential composition the pipeline is ``(ε, δ)``-DP for the ``ε, δ``
    written on the last step; ``epsilon_``, ``delta_`` and
    ``privacy_guarantee_`` record it (``doc/privacy.md``, "Private domains").

    Parameters
    ----------
    steps : list of (str, estimator)
        As :class:`~sklearn.pipeline.Pipeline`.
    domain_share : "auto", float in (0, 1) or None, default="auto"
        Share of the last step's budget spent on the encoder's private
        domains (an encoder with ``epsilon="auto"``); ``None`` never splits
        (undeclared domains are then learned without privacy, with a
        warning). ``"auto"``: ``DOMAIN_SHARE_PER_COLUMN`` (0.04) per column
        whose domain is learned, within ``[0.2, 0.4]`` -- a function of the
        parameters and the schema only (``pipeline.auto_domain_share``).
    rules : list of rules or RuleSet, default=None
        Public rules every sampled row keeps (:mod:`skdp_synth.rules`;
        ``doc/user_guide/rules.md``). Checked at ``fit`` against ``X``'s
        column names and dtypes, never its values. Derived columns are
        dropped from ``X`` before the first step sees it (no budget is spent
        on them: the fit, and its guarantee, are those of the table without
        them) and recomputed on every sampled row; the other rules are held
        by repairing the decoded rows (post-processing). Needs a DataFrame.
    memory, verbose, transform_input
        As :class:`~sklearn.pipeline.Pipeline`.

    Attributes
    ----------
    epsilon_, delta_ : float
        What the fit spent in total (every step's recorded guarantee, by
        sequential composition).
    privacy_guarantee_ : PrivacyGuarantee or None
        The composed guarantee (``None`` when no step records one).
    missing_dropped_ : list
        Columns with a missing level (learned on the encoder's noisy count,
        or declared) that the last step's own measurement does not support
        (its estimate under one noise standard deviation,
        ``MISSING_SUPPORT_Z``): ``sample`` gives them no missing value
        (post-processing; ``doc/privacy.md``).
    missing_shares_ : dict
        ``{column: (share, sd)}``: the last step's released missing share of
        each column with a missing level, ``max(T̂, 0) / n̂``, and its noise
        standard deviation: for the Gaussian release
        ``sqrt(σ_∅² (p̂ - 1/L)² + var(z̄) (1 - 1/L)) / n̂``, the noise of the
        released total ``n̂`` included (``doc/privacy/encoder.md``); where
        ``n`` is public, ``σ / n`` (post-processing).
    degenerate_columns_ : dict
        ``{column: [reasons]}``: the columns that the released domains and
        the last step's estimates say will come back degenerate (one bin, at
        most one bin above the noise, a missing share the rows cannot hold),
        named in a ``DegenerateColumnWarning`` (post-processing).
    other_dropped_ : list
        Columns whose levels the encoder discovered privately and whose
        ``"other"`` level (the rare levels, or none) the last step's own
        measurement does not support: ``sample`` never returns ``"other"``
        there (post-processing; ``doc/privacy.md``).
    integer_bins_dropped_ : dict
        ``{column: [integers]}``: one-integer bins of a private numeric
        domain (split from a heavy PrivTree leaf, where a heap of rows sits
        on one integer) that the last step's own measurement does not
        support: ``sample`` never returns those integers (post-processing;
        ``doc/privacy.md``).
    outer_bins_dropped_ : dict
        ``{column: [lower edges]}``: the outer coarse bins of a private
        numeric domain that the release measures as empty (under its
        support test) and the model's rows do not use; their leaves are
        emptied, so the next kept leaf decodes as the column's tail
        (post-processing; ``doc/privacy/encoder.md``).
    rules_ : RuleSet or None
        ``rules`` checked against ``X``'s schema (``None`` without rules).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.base import BaseEstimator, TransformerMixin
    >>> from skdp_synth import make_synthesis_pipeline
    >>> from skdp_synth.preprocessing import BooleanEncoder
    >>> enc = BooleanEncoder(categories={"c": ["a", "b", "z"]})
    >>> pipe = make_synthesis_pipeline(enc, "passthrough")
    >>> [name for name, _ in pipe.steps]
    ['booleanencoder', 'passthrough']
    """

    _parameter_constraints = {
        **Pipeline._parameter_constraints,
        "domain_share": [
            StrOptions({"auto"}),
            Interval(Real, 0, 1, closed="neither"),
            None,
        ],
        "rules": [list, tuple, RuleSet, None],
    }

    def __init__(
        self,
        steps: list,
        *,
        transform_input: Any = None,
        memory: Any = None,
        verbose: bool = False,
        domain_share: Literal["auto"] | float | None = "auto",
        rules: list | RuleSet | None = None,
    ) -> None:
        super().__init__(
            steps, transform_input=transform_input, memory=memory, verbose=verbose
        )
        self.domain_share = domain_share
        self.rules = rules

    def _with_rules(self, fit, X, y=None, **params):
        """``rules`` checked against ``X``'s schema (names and dtypes, no
        value), then ``fit`` on ``X`` without its derived columns: the steps,
        the budget check and the split see the table the rules leave to
        fit."""
        if self.rules is None:
            self.rules_ = None
            return fit(X, y, **params)
        self.rules_ = RuleSet(self.rules).check_schema(X)
        return fit(self.rules_.drop_derived(X), y, **params)

    def _with_split_budget(self, fit, X, y, **params):
        # the last step's own parameters first: an invalid ε or δ is reported
        # as the user wrote it, on the step they wrote it on, not as the
        # encoder's share of it
        validate = getattr(self._final_estimator, "_validate_params", None)
        if callable(validate):
            validate()
        # the budget first, before even the number of rows is looked at
        # (else 1 row would get the rows' refusal, 2 the budget's)
        # the whole planned spend is held on the accountant until the fit
        # ends: a concurrent fit on it is refused before it reads a value
        with self._check_budget_first(X):
            self._check_enough_rows(X, params)
            saved = self._split_budget(X)
            self._encoder_charge_due = True
            encoder = self._encoder()
            before = getattr(encoder, "privacy_guarantee_", None)
            failed = None
            try:
                out = fit(X, y, **params)
            except BaseException as exc:
                failed = exc
                raise
            finally:
                # metadata routing fits every step in one go: the encoder's
                # domains are charged here, also when the last step failed after
                # they were released
                if getattr(encoder, "privacy_guarantee_", None) is not before:
                    self._charge_encoder()
                elif getattr(failed, "skdp_spent", None) is not None:
                    # the encoder itself failed after drawing its noise: charged
                    # too (fail closed)
                    self._charge_encoder(failed.skdp_spent)
                for step, values in saved:
                    step.set_params(**values)
                self.__dict__.pop("_encoder_charge_due", None)
            if get_config().get("enable_metadata_routing", False):
                self._fit_copula(self._final_estimator)
            self._record_guarantee()
            self._final_guarantee_seen = getattr(
                self._final_estimator, "privacy_guarantee_", None
            )
            self._hand_guarantee_to_final()
            self._release_token = self._fitted_state()
            return out

    def _fitted_state(self):
        """What this fit left in its steps (the encoder's domains, the last
        step's fitted parameters), by identity: ``to_release`` refuses when a
        step was refitted on its own since (its guarantee would not be the
        pipeline's)."""
        head = [step for _, _, step in self._iter(with_final=False)]
        final = self._final_estimator
        return [getattr(step, "specs_", None) for step in head] + [
            getattr(final, "_fitted_params", None)
        ]

    def _check_enough_rows(self, X, params):
        """A synthesizer refuses fewer than two rows with one message for 0
        and 1 (``_intake.TOO_FEW_ROWS``: ``n`` is private under add/remove);
        the encoder before it refused 0 rows first, with scikit-learn's
        "Found array with 0 sample(s)", and so said which. Checked here
        first. Counts
        (``sample_weight``) are left to the last step: one line of a table
        of counts can hold many rows."""
        from sklearn.utils.validation import _num_samples

        from ._chunked import is_dask_collection
        from ._intake import TOO_FEW_ROWS
        from .base import SynthesizerMixin

        if (
            not isinstance(self._final_estimator, SynthesizerMixin)
            or any(k.endswith("sample_weight") for k in params)
            or is_dask_collection(X)
        ):
            return
        try:
            n = _num_samples(X)
        except TypeError:
            return  # not array-like: the steps say so
        if n < 2:
            raise ValueError(TOO_FEW_ROWS)

    def _fit_head(self, X, y, params):
        """Fit every step but the last; return ``(Xt, last step's fit params)``.

        The head is a plain :class:`~sklearn.pipeline.Pipeline` of the same
        step objects ending in ``"passthrough"``, so sklearn fits them
        (``passthrough``, ``memory``, ``step__param``); steps it replaced
        (cached clones) are copied back.
        """
        final_name = self.steps[-1][0]
        prefix = final_name + "__"
        params = dict(params)
        counts = params.pop("sample_weight", None)
        final_params = {
            k[len(prefix) :]: v for k, v in params.items() if k.startswith(prefix)
        }
        head_params = {k: v for k, v in params.items() if not k.startswith(prefix)}
        if counts is not None:
            # counts of distinct rows: the encoders map rows one to one, so
            # no row is expanded; the first step's domains count records,
            # not lines (a species on 72 lines of 35,549 records was never
            # found when they counted lines), so it gets the counts too
            name, first = next(
                ((n, s) for n, s in self.steps[:-1] if s not in (None, "passthrough")),
                (None, None),
            )
            if first is not None and _fit_accepts(first, "sample_weight"):
                head_params[f"{name}__sample_weight"] = counts
            if not _fit_accepts(self._final_estimator, "sample_weight"):
                raise TypeError(
                    f"{type(self._final_estimator).__name__}.fit does not take "
                    "counts (sample_weight); expand the rows, or use a "
                    "synthesizer that fits from additive statistics "
                    "(ProjectedGaussianRelease)"
                )
            final_params["sample_weight"] = counts
        # every step but the last, then a passthrough in the last step's place:
        # sklearn's Pipeline fits (and, with ``memory``, caches) each of them
        # (``verbose`` times every head step; the placeholder's own 0.0 s line
        # is not printed: the last step is timed where it is fitted)
        head = _HeadPipeline(
            list(self.steps[:-1]) + [(final_name, "passthrough")],
            memory=self.memory,
            verbose=self.verbose,
        )
        Xt = head.fit_transform(X, y, **head_params)
        self.steps = list(head.steps[:-1]) + [self.steps[-1]]
        self._charge_encoder()
        blocks = None
        for _, step in reversed(head.steps[:-1]):
            if step not in (None, "passthrough") and hasattr(step, "blocks_"):
                blocks = step.blocks_
                break
        final = self._final_estimator
        if (
            blocks is not None
            and "blocks" not in final_params
            and final not in (None, "passthrough")
            and _fit_accepts_blocks(final)
        ):
            final_params["blocks"] = blocks
        return Xt, final_params

    @_fit_context(
        # estimators in Pipeline.steps are not validated yet
        prefer_skip_nested_validation=False
    )
    def fit(self, X: ArrayLike, y: ArrayLike | None = None, **params: Any) -> Self:
        """Fit the steps in order; hand the encoder's ``blocks_`` to the last.

        As :meth:`sklearn.pipeline.Pipeline.fit` (``step__param`` fit
        parameters, ``passthrough``, ``memory``), except that the last step's
        ``fit`` receives ``blocks=`` the ``blocks_`` of the last earlier step
        that has one, when it accepts that keyword, and ``sample_weight=``
        (counts of the distinct rows of ``X``, a contingency table) goes to
        the last step and to the first step whose ``fit`` takes it (the
        encoder, whose private domains then count records) -- the encoders
        map rows one to one, nothing is expanded. With scikit-learn's
        metadata routing enabled, ``Pipeline.fit`` fits the steps (no
        ``blocks=``), inside the same budget check, split and charge.

        Returns
        -------
        self : SynthesisPipeline
        """
        X = as_pandas(X)  # polars, pyarrow: a pandas frame of the same types
        fit = self._fit_with_blocks
        if get_config().get("enable_metadata_routing", False):
            fit = partial(Pipeline.fit, self)
        return self._rollback_on_failure(
            partial(self._with_rules, partial(self._with_split_budget, fit)),
            X,
            y,
            **params,
        )

    def _fit_with_blocks(self, X, y=None, **params):
        Xt, final_params = self._fit_head(X, y, params)
        final = self._final_estimator
        with (
            _print_elapsed_time("Pipeline", self._log_message(len(self.steps) - 1)),
            shown(bool(self.verbose)),
        ):
            if final not in (None, "passthrough"):
                target = self._collapsed_target(final, final_params.get("blocks"))
                zeros = self._rule_zeros(final, final_params.get("blocks"))
                saved = {}
                if target is not None:
                    saved["target"] = target
                    final.set_params(target=None)
                if zeros:
                    saved["structural_zeros"] = final.structural_zeros
                    final.set_params(
                        structural_zeros=list(final.structural_zeros or ()) + zeros
                    )
                learned = self._learned_levels(final)
                try:
                    final.fit(Xt, y, **final_params)
                finally:
                    if saved:
                        final.set_params(**saved)
                    if learned:
                        del final._levels_learned
                self._drop_unsupported_levels(final, final_params)
                self._fit_copula(final)
        return self

    def _rule_zeros(self, final, blocks):
        """The encoded cells the rules make impossible, as the last step's
        ``structural_zeros`` (``[(attribute names, mask)]``), or ``[]``.

        Mapped from the fitted encoder's public levels and bin edges
        (:func:`skdp_synth.rules.impossible_cells`): a level stands for its
        value, the "other" level for any value it did not name, a bin for
        its interval (the outer bins open). Only for a last step that takes
        ``structural_zeros`` (``ProjectedGaussianRelease``). Public: rules
        and released domains, no value of the data."""
        rules = self.__dict__.get("rules_")
        if (
            rules is None
            or blocks is None
            or "structural_zeros" not in final.get_params(deep=False)
        ):
            return []
        from .rules import impossible_cells

        head = [s for _, _, s in self._iter(with_final=False)]
        if len(head) != 1 or not hasattr(head[0], "specs_"):
            return []
        levels, bins = _encoded_levels(head[0].specs_, blocks)
        return [(cols, mask) for cols, mask in impossible_cells(rules, levels, bins)]

    def score(self, X: ArrayLike, y: None = None, **params: Any) -> float:
        """Minus the average 2-way TV of ``sample(len(X))`` against ``X``, in
        ``X``'s own schema (``make_marginal_scorer(kind="tv")``: numeric
        columns in 10 bins at ``X``'s quantiles), when the pipeline decodes
        its rows; else the last step's ``score`` of the transformed ``X``.

        The last step's own score reads the rows in *this fit's* encoding;
        with domains learned privately each candidate of a search has its
        own bins, so those scores did not compare (``GridSearchCV`` chose
        ε = 0.5 over 2 on credit).
        **Not private**: reads ``X`` (held-out real rows).
        """
        check_is_fitted(self, "steps")
        X = as_pandas(X)
        head = [s for _, s in self.steps[:-1] if s not in (None, "passthrough")]
        if any(hasattr(s, "inverse_transform") and hasattr(s, "specs_") for s in head):
            from .metrics import make_marginal_scorer

            return make_marginal_scorer(d=2, kind="tv")(self, X)
        rules = self.__dict__.get("rules_")
        if rules is not None:
            X = rules.drop_derived(X)
        return super().score(X, y, **params)

    def _fit_copula(self, final):
        """Hand the last step's released distribution of encoded rows to the
        encoder's copula (``BooleanEncoder(within_bins="copula")``), so that
        decoded numeric values move together inside their bins as the
        release says they do between them. Post-processing of the release;
        a last step without a released distribution leaves it unfitted
        (values placed column by column)."""
        dist = getattr(final, "_synthetic_distribution", None)
        encoder = next(
            (s for _, _, s in self._iter(with_final=False) if hasattr(s, "fit_copula")),
            None,
        )
        if encoder is None:
            return
        # only a *released* distribution: a last step without a guarantee
        # (the microaggregator's exact group means) is not one
        released = None
        if dist is not None and getattr(final, "privacy_guarantee_", None) is not None:
            released = dist()
        if released is None:
            encoder.copula_ = None  # never an earlier fit's
            return
        encoder.fit_copula(*released)

    @available_if(Pipeline._can_fit_transform)
    @_fit_context(prefer_skip_nested_validation=False)
    def fit_transform(
        self, X: ArrayLike, y: ArrayLike | None = None, **params: Any
    ) -> Any:
        """:meth:`fit`, then the last step's ``transform`` of the encoded data.

        Returns
        -------
        Xt : ndarray or DataFrame
            The last step's output (for a synthesizer: a synthetic sample of
            the encoded data, not decoded).
        """
        X = as_pandas(X)
        fit = self._fit_transform_with_blocks
        if get_config().get("enable_metadata_routing", False):
            fit = partial(Pipeline.fit_transform, self)
        return self._rollback_on_failure(
            partial(self._with_rules, partial(self._with_split_budget, fit)),
            X,
            y,
            **params,
        )

    @available_if(Pipeline._can_transform)
    def transform(self, X: ArrayLike, **params: Any) -> Any:
        """As :meth:`sklearn.pipeline.Pipeline.transform`, on ``X`` without
        the derived columns of ``rules`` (the steps were fitted without
        them)."""
        X = as_pandas(X)
        rules = self.__dict__.get("rules_")
        if rules is not None:
            X = rules.drop_derived(X)
        return super().transform(X, **params)

    def _fit_transform_with_blocks(self, X, y=None, **params):
        Xt, final_params = self._fit_head(X, y, params)
        final = self._final_estimator
        with (
            _print_elapsed_time("Pipeline", self._log_message(len(self.steps) - 1)),
            shown(bool(self.verbose)),
        ):
            if final in (None, "passthrough"):
                return Xt
            if hasattr(final, "fit_transform"):
                out = final.fit_transform(Xt, y, **final_params)
            else:
                out = final.fit(Xt, y, **final_params).transform(Xt)
            self._drop_unsupported_levels(final, final_params)
            self._fit_copula(final)
            return out

    def sample(
        self,
        n_samples: int | None = None,
        random_state: int | np.random.Generator | None = None,
        *,
        chunks: int | None = None,
        given: Mapping[str, Any] | list[Mapping[str, Any]] | None = None,
    ) -> Any:
        """Draw ``n_samples`` synthetic rows from the last step and decode them.

        Parameters
        ----------
        n_samples : int, default=None
            Passed to the last step's ``sample``.
        random_state : None, int, Generator or RandomState, default=None
            Passed to the last step's ``sample``; when given, decoding uses
            child seeds of it too (one per decoding step), so the same
            ``random_state`` gives the same rows, whatever the encoder's own
            ``random_state``. ``None``: the last step's own stream, and each
            encoder decodes with its own ``random_state`` (an encoder left
            unseeded then decodes numbers differently on every call) -- up
            to ``validation.sample_chunk_rows`` rows; a larger sample is
            drawn and decoded chunk by chunk with seeds derived from the
            last step's ``random_state``, as with ``chunks``.
        chunks : int, default=None
            Rows per chunk of a lazily generated ``dask.dataframe.DataFrame``
            (needs the ``dask`` extra): each chunk is drawn by the last step
            from its own child stream (see
            :meth:`~skdp_synth.base.SynthesizerMixin.sample`; any charge
            happens once, now) and decoded by copies of the other steps
            whose ``random_state`` is a further child of that chunk's
            stream, so that chunks are decoded independently and
            reproducibly. The column dtypes are those of the first chunk,
            drawn and decoded once when the frame is built.
        given : dict, list of dict or None, default=None
            Rows *given* a condition: a dict of column -> value, list of
            values or ``(lo, hi)`` numeric range, or a list of such dicts
            ("any of them"). Exactly ``n_samples`` rows, every one matching,
            drawn from the model's conditional distribution (its weighted
            rows restricted to the matching ones, renormalised; no rejection
            loop: only rows of a numeric bin a range covers in part are drawn
            again, a bounded number of times). Needs one encoder and a last
            step with a finite distribution
            (:class:`~skdp_synth.ProjectedGaussianRelease`);
            not with ``chunks``. A condition the model gives no probability,
            an unknown column or level raise ``ValueError`` naming it.
            Post-processing: free in privacy.

        Returns
        -------
        X_synthetic : ndarray or DataFrame
            In the schema of the pipeline's input (a Dask DataFrame with
            ``chunks``). With ``rules``, every row keeps every rule: the
            decoded rows repaired and the derived columns computed
            (:meth:`~skdp_synth.rules.RuleSet.enforce`, its redraws seeded
            from a child of ``random_state``, or of the last step's integer
            ``random_state``).
        """
        if given is not None:
            return self._sample_given(n_samples, random_state, given, chunks)
        Y = self._sample(n_samples, random_state, chunks)
        rules = self.__dict__.get("rules_")
        if rules is None:
            return Y
        if random_state is None:
            own = getattr(self._final_estimator, "random_state", None)
            random_state = own if isinstance(own, (int, np.integer)) else None
        seed = _rules_seed(random_state)
        if chunks is None and not hasattr(Y, "columns"):
            # an array (no decoding encoder): the columns the steps were fitted on
            import pandas as pd

            names = [c for c in rules.columns if c not in rules.derived_columns]
            Y = pd.DataFrame(np.asarray(Y), columns=names)
        if chunks is not None:
            return Y.map_partitions(
                _enforce_partition,
                rules,
                seed,
                meta=rules.enforce(Y._meta, random_state=0),
            )
        return rules.enforce(Y, random_state=seed)

    def _sample_given(self, n_samples, random_state, given, chunks):
        """``sample(given=...)``: :class:`skdp_synth._given.ConditionalModel`
        on the last step's weighted rows, decoded by the one encoder."""
        from ._given import ConditionalModel, draw_given
        from .mechanisms import make_generator

        final = self._final_estimator
        check_is_fitted(final)
        head = [step for _, _, step in self._iter(with_final=False)]
        dist = getattr(final, "_synthetic_distribution", lambda: None)
        if chunks is not None or len(head) != 1 or not hasattr(head[0], "specs_"):
            raise TypeError(
                "sample(given=...) needs one BooleanEncoder before the last step "
                "and no chunks"
            )
        dist = dist() if getattr(final, "privacy_guarantee_", None) else None
        if dist is None:
            raise TypeError(
                f"the last step {type(final).__name__} holds no finite weighted "
                "set of rows to condition (ProjectedGaussianRelease does)"
            )
        rules = self.__dict__.get("rules_")
        model = ConditionalModel(
            *dist,
            copy.copy(head[0]),
            given,
            controlled=getattr(final, "_model_rows", None) is not None,
            derived=() if rules is None else rules.derived_columns,
        )
        n = final._check_sample_size(n_samples)
        if random_state is None:
            random_state = final.random_state
        return draw_given(
            model,
            n,
            make_generator(random_state, GIVEN_STREAM),
            chunk_rows=sample_chunk_rows(final.n_features_in_),
            rules=rules,
            rules_seed=_rules_seed(random_state),
        )

    def _sample(self, n_samples, random_state, chunks):
        last = self._final_estimator
        if not hasattr(last, "sample"):
            raise TypeError(f"the last step {type(last).__name__} has no sample method")
        check_is_fitted(last)  # before any other attribute is read
        steps = [step for _, _, step in reversed(list(self._iter(with_final=False)))]
        for step in steps:
            if not hasattr(step, "inverse_transform"):
                raise TypeError(
                    f"step {type(step).__name__} has no inverse_transform, so "
                    "synthetic rows cannot be decoded through it"
                )
        if chunks is not None:
            return self._sample_lazy(last, steps, n_samples, random_state, chunks)
        n = last._check_sample_size(n_samples) if hasattr(last, "_lazy_draws") else 0
        if n > sample_chunk_rows(last.n_features_in_):
            # bounded working memory: drawn and decoded chunk by chunk, as the
            # lazy frame's chunks
            return self._sample_in_chunks(last, steps, n, random_state)
        Y = last.sample(n_samples, random_state=random_state)
        for step, seed in zip(steps, _decoding_seeds(random_state, len(steps))):
            if seed is not None and "random_state" in step.get_params(deep=False):
                step = copy.copy(step)
                step.random_state = seed
            Y = step.inverse_transform(Y)
        return Y

    def to_release(self) -> Release:
        """The pipeline's release: the last step's, with its encoder's decoder.

        ``Release.sample`` of the result gives rows in the table's own
        schema, as :meth:`sample` does, from the file alone: the last step's
        release (its noisy statistics and distribution of encoded rows) plus
        the :class:`~skdp_synth.preprocessing.BooleanEncoder`'s decoder --
        each column's levels or bin edges, missing level, dtype, bit layout
        and fine histogram (``preprocessing._decoder_state``). Its guarantee
        is the whole pipeline's: the last step's composed with the private
        domains the decoder holds. ``params`` hold the steps' names and
        classes, the last step's fitted parameters and what the encoder's
        domains spent (``encoder_epsilon``, ``encoder_delta``). With
        ``rules``, the plan holds them (``plan["rules"]``, the CLI schema's
        ``"rules"`` form, :func:`skdp_synth.rules.ruleset_to_json`), so that
        ``Release.load(path).sample(n)`` keeps them as :meth:`sample` does.

        Raises
        ------
        TypeError
            When the last step has no release, or the steps before it are
            not one ``BooleanEncoder`` (nothing else's decoding is stored).
        ValueError
            When the pipeline records no guarantee (a last step that is not
            differentially private): it has nothing to publish.

        Warns
        -----
        PrivacyLeakWarning
            When the encoder learned a domain without privacy
            (``inferred_``): the file then holds it, outside the guarantee.
        UserWarning
            When a rule has no JSON form (a derived column of a Python
            function; values other than strings, numbers, bools and missing)
            and is left out of the file.
        """
        from .preprocessing._decoder_state import decoder_state
        from .release import Release

        check_is_fitted(self._final_estimator)
        final = self._final_estimator
        if not hasattr(final, "to_release"):
            raise TypeError(f"the last step {type(final).__name__} has no release")
        if getattr(self, "privacy_guarantee_", None) is None:
            raise ValueError(
                "the pipeline records no privacy guarantee (its last step is "
                "not differentially private), so it has no release to publish"
            )
        token = self.__dict__.get("_release_token")
        current = self._fitted_state()
        if (
            token is None
            or len(token) != len(current)
            or any(a is not b for a, b in zip(token, current))
        ):
            raise ValueError(
                "a step was refitted on its own after the pipeline's fit: its "
                "release would not state what the pipeline spent; refit the "
                "pipeline, then call to_release()"
            )
        stored_rules = None
        if self.__dict__.get("rules_") is not None:
            from .rules import ruleset_to_json

            stored_rules, left_out = ruleset_to_json(self.rules_)
            if left_out:
                warnings.warn(
                    f"the release file does not store the rules {left_out!r} "
                    "(no JSON form: a derived column of a Python function, or "
                    "values other than strings, numbers, bools and missing): "
                    "its rows keep them once passed through "
                    "pipe.rules_.enforce(rows)",
                    UserWarning,
                    stacklevel=2,
                )
            if not stored_rules["rules"]:
                stored_rules = None
        head = [step for _, _, step in self._iter(with_final=False)]
        if not head:
            return final.to_release()
        encoder = head[0]
        if len(head) != 1 or not hasattr(encoder, "specs_"):
            raise TypeError(
                "to_release() stores the decoding of one BooleanEncoder: the "
                "steps before the synthesizer must be a single BooleanEncoder "
                f"(got {[type(s).__name__ for s in head]}); publish "
                "pipe.sample(n) with pipe.privacy_guarantee_ instead"
            )
        if encoder.inferred_:
            warnings.warn(
                f"the release holds the domains of columns {encoder.inferred_}, "
                "learned from the data without privacy (not covered by its "
                "guarantee); declare them in the encoder to publish",
                PrivacyLeakWarning,
                stacklevel=2,
            )
        inner = final.to_release()
        meta, arrays = decoder_state(encoder)
        plan = dict(inner.plan)
        plan["final_estimator"] = inner.estimator
        plan["decoder"] = meta
        if stored_rules is not None:
            # public: the declared rules, in the schema file's "rules" form
            plan["rules"] = stored_rules
        params = {
            "steps": [
                [name, step if isinstance(step, str) else type(step).__name__]
                for name, step in self.steps
            ],
            "final": inner.params,
            # what the fit spent on the private domains (fitted, not the
            # current parameters: a set_params after fit changes nothing here)
            "encoder_epsilon": float(getattr(encoder, "epsilon_", 0.0)),
            "encoder_delta": float(getattr(encoder, "delta_", 0.0)),
        }
        return Release(
            estimator=type(self).__name__,
            params=params,
            # the domains learned without privacy are in the file, outside
            # its guarantee, and it says so (``not_covered``)
            guarantee=self._with_inferred_domains(inner.guarantee),
            arrays={**inner.arrays, **arrays},
            plan=plan,
        )

    def _sample_in_chunks(self, last, steps, n, random_state):
        import pandas as pd

        if random_state is None:
            random_state = last.random_state
        rows = sample_chunk_rows(last.n_features_in_)
        snapshot, tasks, secure = last._lazy_draws(n, random_state, rows)
        meta = last._lazy_meta()
        state = (snapshot, copy.deepcopy(steps))
        parts = [
            _decoded_chunk(state, size, seed, secure, part, meta)
            for size, seed, part in tasks
        ]
        if isinstance(parts[0], pd.DataFrame):
            return pd.concat(parts, ignore_index=True)
        return np.concatenate([np.asarray(part) for part in parts], axis=0)

    def _sample_lazy(self, last, steps, n_samples, random_state, chunks):
        dask = import_dask("sample(chunks=...)")
        import dask.dataframe as dd

        check_is_fitted(last)
        n = last._check_sample_size(n_samples)
        if random_state is None:
            random_state = last.random_state
        snapshot, tasks, secure = last._lazy_draws(n, random_state, chunks)
        meta = last._lazy_meta()
        decoders = copy.deepcopy(steps)
        state = graph_constant((snapshot, decoders), "sample(chunks=...)")
        decode = dask.delayed(_decoded_chunk, pure=False)
        parts = [
            decode(state, size, seed, secure, part, meta) for size, seed, part in tasks
        ]
        return dd.from_delayed(parts, verify_meta=False)


class _HeadPipeline(Pipeline):
    """The steps before the last, then a placeholder that is not logged.

    With ``verbose=True`` sklearn prints a line per step, the last one
    included; here the last is a ``"passthrough"`` standing in for the
    synthesizer (0.0 s), which :class:`SynthesisPipeline` fits and times
    itself under its own name.
    """

    def _log_message(self, step_idx):
        if step_idx == len(self.steps) - 1:
            return None
        return super()._log_message(step_idx)


#: The stream of ``sample(given=...)``'s draws from an integer seed.
GIVEN_STREAM = 0x61BE

#: The spawn key under which ``sample(random_state=...)`` derives the
#: decoding steps' seeds (a stream apart from the last step's draw).
DECODING_SPAWN_KEY = 0xDEC0DE


def _decoding_seeds(random_state, k):
    """One seed per decoding step from ``sample``'s ``random_state`` (``None``
    each when it is ``None``: the steps' own), so that
    ``pipe.sample(n, random_state=1)`` gives the same numbers on every call
    also when the encoder is unseeded, as the README advises for a
    release. An int seeds a ``SeedSequence`` child
    apart from the draw's stream; a Generator or RandomState (already
    advanced by the draw) gives one integer of entropy."""
    if random_state is None:
        return [None] * k
    if isinstance(random_state, (int, np.integer)):
        entropy = int(random_state)
    else:
        rng = random_state
        if isinstance(rng, np.random.RandomState):
            entropy = int(rng.randint(0, 2**31 - 1))
        else:
            entropy = int(np.random.default_rng(rng).integers(0, 2**63 - 1))
    root = np.random.SeedSequence(entropy, spawn_key=(DECODING_SPAWN_KEY,))
    return [int(child.generate_state(1)[0]) for child in root.spawn(k)]


#: The spawn key under which ``sample(random_state=...)`` derives the seed
#: of the rules' redraws (:func:`skdp_synth.rules.rules_seed`).
RULES_SPAWN_KEY = _RULES_SPAWN_KEY


def _encoded_levels(specs, blocks):
    """``(levels, bins)`` of :func:`skdp_synth.rules.impossible_cells` from
    an encoder's column specs and its blocks: the values each level of a
    categorical attribute stands for (the "other" level also for any value
    not named, a missing level for the missing value, last) and the
    interval of each bin of a numeric one (outer bins open; a date or
    duration column's in seconds, the unit its inequalities compare in).
    Columns whose levels do not match their block one to one are left out."""
    from ._datetime import SECONDS, from_units, local_days, to_units
    from .rules import OTHER

    n_levels = dict(zip(blocks.names, (int(x) for x in blocks.n_levels)))
    levels, bins = {}, {}
    for spec in specs:
        name = str(spec.name)
        if name not in n_levels:
            continue
        extra = 1 if spec.missing else 0
        if spec.kind == "numeric":
            e = np.asarray(spec.levels, dtype=np.float64)
            if spec.time_unit is not None and local_days(spec.dtype, spec.time_unit):
                # a zoned column's local days, in the seconds since 1970 UTC
                # that the other time columns' bins are in
                e = to_units(from_units(e, spec.dtype, "D"), spec.dtype, "s")
            elif spec.time_unit is not None:
                e = e * SECONDS[spec.time_unit]
            if len(e) - 1 + extra != n_levels[name]:
                continue
            lo = np.concatenate([[-np.inf], e[1:-1]])
            hi = np.concatenate([e[1:-1], [np.inf]])
            bins[spec.name] = list(zip(lo.tolist(), hi.tolist())) + [None] * extra
            continue
        if len(spec.levels) + extra != n_levels[name]:
            continue
        reps = [[v] for v in spec.levels]
        if spec.other:
            reps[-1].append(OTHER)
        if spec.missing:
            reps.append([spec.missing_value])
        levels[spec.name] = reps
    return levels, bins


def _rules_seed(random_state):
    """The rules' seed from ``sample``'s ``random_state``
    (:func:`skdp_synth.rules.rules_seed`, shared with ``Release.sample``)."""
    return rules_seed(random_state)


def _enforce_partition(frame, rules, seed, partition_info=None):
    """One chunk of a lazy sample, repaired with its own child stream."""
    number = 0 if partition_info is None else int(partition_info["number"])
    if seed is not None:
        seed = np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, number))
    return rules.enforce(frame, random_state=seed)


def _decoded_chunk(state, size, seed, secure, part, meta):
    """One chunk of a lazy pipeline sample: drawn, then decoded step by step.

    Step ``j`` (from the last encoder back) decodes with ``random_state`` the
    ``j``-th child of the chunk's ``SeedSequence`` (the draw uses the
    sequence itself): independent streams, the same for every compute.
    """
    from .base import _lazy_chunk

    snapshot, decoders = state
    Y = _lazy_chunk(snapshot, size, seed, secure, part, meta)
    for j, step in enumerate(decoders):
        if "random_state" in step.get_params(deep=False):
            child = np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, j))
            step = copy.copy(step)
            step.random_state = int(child.generate_state(1)[0])
        Y = step.inverse_transform(Y)
    return Y


def _fit_accepts_blocks(estimator):
    return _fit_accepts(estimator, "blocks")


def _fit_accepts(estimator, name):
    try:
        parameters = inspect.signature(estimator.fit).parameters
    except (TypeError, ValueError, AttributeError):  # pragma: no cover - builtins
        return False
    return name in parameters


def make_synthesis_pipeline(
    *steps: Any,
    memory: Any = None,
    verbose: bool = False,
    domain_share: Literal["auto"] | float | None = "auto",
    rules: list | RuleSet | None = None,
) -> SynthesisPipeline:
    """Build a :class:`SynthesisPipeline` from estimators, naming them automatically.

    Like :func:`sklearn.pipeline.make_pipeline`: step names are the lowercased
    class names. ``domain_share``, ``rules``: see :class:`SynthesisPipeline`.
    """
    return SynthesisPipeline(
        _name_estimators(steps),
        memory=memory,
        verbose=verbose,
        domain_share=domain_share,
        rules=rules,
    )
