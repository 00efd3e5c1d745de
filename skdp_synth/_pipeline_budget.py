"""The synthesis pipeline's one privacy budget: split, checked first, charged, composed.

Why a module of its own: a :class:`~skdp_synth.SynthesisPipeline` spends its
budget in two steps (the encoder's private domains, then the synthesizer),
and the rules that keep the whole ``(ε, δ)``-DP -- checked against the
accountant before any step reads a value, split by ``domain_share``, the
encoder charged as soon as its domains exist, the steps' guarantees
composed (sequential composition, :cite:`Dwork2014` Theorem 3.16) -- are one
concept, apart from how the pipeline fits and decodes its rows.
:class:`PipelineBudgetMixin` holds them; ``pipeline.py`` mixes it into
``SynthesisPipeline`` (``doc/privacy.md``, "Private domains").
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from .exceptions import PrivacyBudgetWarning, PrivacyLeakWarning
from .validation import user_stacklevel

if TYPE_CHECKING:
    from .privacy import PrivacyGuarantee

__all__ = [
    "DOMAIN_SHARE_MAX",
    "DOMAIN_SHARE_MIN",
    "DOMAIN_SHARE_PER_COLUMN",
    "PipelineBudgetMixin",
    "auto_domain_share",
]


#: ``domain_share="auto"``: this share of ε per column whose domain the
#: encoder learns, within ``[DOMAIN_SHARE_MIN, DOMAIN_SHARE_MAX]``. A fixed
#: 0.2 starves wide tables: credit's 9 numeric columns got 0.022 ε each, and
#: its ``Debt`` (82 % zeros, the rest spread to 30,000) lost its non-zero
#: rows in some fits. Measured (``DOMAIN_SHARE=s python
#: benchmarks/bench_mixed.py --tables T --seeds 8 --no-dpmm --target``):
#: credit, share 0.2 → 0.35: KS 0.127 → 0.095, TV2 0.203 → 0.157, TSTR AUC
#: 0.682 → 0.682 (with ``target=`` 0.774 → 0.762);
#: Wage (3 numeric columns, 4 seeds) 0.1 / 0.2 / 0.35: KS 0.082 / 0.057 /
#: 0.047, TV2 0.112 / 0.096 / 0.096, TSTR R² without target 0.30 / 0.13 /
#: 0.10 (with target, 8 seeds, 0.2 / 0.35: 0.303 / 0.286); CPS1988 (3
#: numeric) KS 0.022 / 0.019 / 0.019, TV2 0.039 / 0.033 / 0.033. Tables of
#: up to 5 such columns keep 0.2. The cap was 0.4; on the four tuning tables
#: (``python -m benchmarks.bench_level_selection --tables
#: credit,nass,loans,caravan --seeds 3 --eps 1,0.3 --selection gaussian --tv2
#: --domain-share S``, S = auto (0.4 on all four) against 0.55; TV1 over all
#: columns, TV2 over up to 200 pairs, ε = 1 / ε = 0.3) a share of 0.55 was
#: better on every table at both ε: credit_data (13 learned domains) TV2
#: 0.107 → 0.097 / 0.307 → 0.206, nassCDS (15) 0.192 → 0.183 / 0.228 →
#: 0.220, loans_full_schema (54) 0.182 → 0.151 / 0.389 → 0.292, Caravan (87)
#: 0.087 → 0.062 / 0.531 → 0.433 (TV1 0.083 → 0.065 / 0.212 → 0.152 on
#: loans). So the cap is 0.55, reached from 14 learned domains; tables of up
#: to 10 keep their share. Re-gridded on the rebuilt domains
#: (``benchmarks/results/bench_suite.md``, "``domain_share="auto"``'s cap
#: re-gridded"; ``bench_suite --tv-only --domain-max``): on loans, the one
#: TUNE table that reaches it, TV2 0.4 / 0.55 / 0.7 = .2311 / .2048 / .2015
#: at ε = 0.3 and .1240 / .1151 / .1186 at ε = 1: kept.
DOMAIN_SHARE_PER_COLUMN = 0.04
DOMAIN_SHARE_MIN = 0.2
DOMAIN_SHARE_MAX = 0.55


def auto_domain_share(n_columns):
    """The encoder's share of ε for ``n_columns`` learned domains (public)."""
    share = DOMAIN_SHARE_PER_COLUMN * int(n_columns)
    return float(min(DOMAIN_SHARE_MAX, max(DOMAIN_SHARE_MIN, share)))


class PipelineBudgetMixin:
    """One ε for the whole pipeline: the budget of a ``SynthesisPipeline``.

    ``_check_budget_first`` (before any value is read), ``_split_budget``
    (the encoder's ``domain_share``), ``_charge_encoder`` (once per fit, as
    soon as the domains exist), ``_hand_guarantee_to_final`` and
    ``_record_guarantee`` (sequential composition, read back through
    ``epsilon_``, ``delta_`` and ``privacy_guarantee_``). Mixed in left of
    :class:`sklearn.pipeline.Pipeline`: it reads ``steps`` and
    ``_final_estimator``.
    """

    def _encoder(self):
        """The step that learns domains with a budget (a ``BooleanEncoder``
        with ``epsilon``): the first step that is not ``"passthrough"``, or
        ``None``."""
        head = [s for _, s in self.steps[:-1] if s not in (None, "passthrough")]
        first = head[0] if head else None
        if first is None or not hasattr(first, "_needs_budget"):
            return None
        return first if first.epsilon is not None else None

    def _final_relation(self):
        """The last step's neighbouring relation when it spends a budget
        (its parameter; the pure ε-DP synthesizers' fixed relation,
        replace-one, when it has none), else ``None``."""
        params = getattr(self._final_estimator, "get_params", dict)(deep=False)
        if params.get("epsilon") is None:
            return None
        return params.get("neighbouring", "replace-one")

    def _check_budget_first(self, X):
        """Fail closed: before any step reads a value, the last step's
        accountant must afford -- and reserves, for as long as the returned
        context is open -- the whole fit -- the ``(ε, δ)`` written on the
        last step and, for an encoder given its own ``epsilon``/``delta``
        that will learn a domain, those too (the parameters and ``X``'s
        schema only). Otherwise, with every domain declared, the check
        would come only inside the last step, after the encoder had read
        (and refused) the values, and an encoder's own ε would never be
        charged.

        Refused here, before any value is read: an encoder with a budget
        after another step (its input's schema is not ``X``'s, so neither
        the check nor the split can see what it will learn; it would be
        neither checked nor charged); an encoder whose own ``neighbouring``
        differs from the last step's (the two guarantees do not compose; the
        accountant would refuse the mismatch only after both had read the
        data); and input without a schema (a list: its column types are
        inferred from its values, so whether a domain is learned is unknown
        to the check).
        """
        from .privacy import reserve_written_budget

        nested = _nested_budgeted(self.steps)
        if nested:
            raise ValueError(
                f"{type(nested[0]).__name__} spends a privacy budget inside "
                "another step (a nested Pipeline, FeatureUnion or "
                "ColumnTransformer): its budget could be neither checked, split "
                "nor charged. Make the encoder the first step and the "
                "synthesizer the last step of the synthesis pipeline itself"
            )
        later = [
            s
            for _, s in self.steps[:-1]
            if hasattr(s, "_needs_budget")
            and s.epsilon is not None
            and s is not self._encoder()
        ]
        if later:
            raise ValueError(
                f"{type(later[0]).__name__} learns domains with a budget "
                "(epsilon) but is not the pipeline's first step: put it first, "
                "so that its budget is checked and split from the input's "
                "schema before any step reads a value"
            )
        first = self._encoder()
        if first is None:
            return reserve_written_budget(self._final_estimator)
        if not _has_schema(X):
            raise TypeError(
                f"{type(first).__name__} learns domains with a budget: pass a "
                "pandas DataFrame or a NumPy array, whose column types are "
                "public (a list's are inferred from its values)"
            )
        eps = delta = 0.0
        if first.epsilon != "auto" and first._needs_budget(X):
            relation = self._final_relation()
            if relation is not None and first.neighbouring != relation:
                raise ValueError(
                    f"{type(first).__name__}(neighbouring={first.neighbouring!r}) "
                    f"and the last step's neighbouring={relation!r} do not "
                    "compose: give the encoder the last step's relation (or "
                    "epsilon='auto', which takes it)"
                )
            eps, delta = float(first.epsilon), float(first.delta or 0.0)
        return reserve_written_budget(self._final_estimator, eps, delta)

    def _split_budget(self, X):
        """``[(step, saved params)]`` after giving the encoder its share.

        Public inputs only: the parameters, and ``X``'s column names and
        dtypes.
        """
        share = self.domain_share
        first, final = self._encoder(), self._final_estimator
        if share is None or first is None or first.epsilon != "auto":
            return []
        final_params = getattr(final, "get_params", dict)(deep=False)
        # the δ the encoder can get: a share of the last step's; without one
        # (an ε-DP last step) no level can be discovered privately, and a
        # split for them alone spent a share of ε on nothing (the pipeline
        # recorded 0.8 of the 1 written)
        delta = float(final_params.get("delta") or 0.0)
        if final_params.get("epsilon") is None or not first._needs_budget(X, delta):
            return []
        if share == "auto":
            share = auto_domain_share(first._n_paid_columns(X, delta))
        eps = float(final_params["epsilon"])
        saved = [
            (first, {k: first.get_params()[k] for k in ("epsilon", "delta")}),
            (
                final,
                {k: final_params[k] for k in ("epsilon", "delta") if k in final_params},
            ),
        ]
        # the encoder needs a δ only to discover the levels of an undeclared
        # categorical column (public: the schema); otherwise all of δ stays
        # with the last step
        delta_share = share if first._needs_delta(X, delta) else 0.0
        enc = {"epsilon": share * eps, "delta": delta_share * delta}
        # the encoder's guarantee must hold for the last step's relation, so
        # that the two compose: its parameter, else replace-one (the pure
        # ε-DP synthesizers' fixed relation)
        saved[0][1]["neighbouring"] = first.get_params()["neighbouring"]
        enc["neighbouring"] = final_params.get("neighbouring", "replace-one")
        first.set_params(**enc)
        rest = {"epsilon": eps - share * eps}
        if "delta" in final_params:
            rest["delta"] = delta - delta_share * delta
        final.set_params(**rest)
        return saved

    def _charge_encoder(self, spent=None):
        """Charge the encoder's private domains to the last step's
        accountant, once per fit, as soon as the encoder is fitted -- before
        the last step reads its output. Whether their ε is a share of the
        last step's (``domain_share``) or the encoder's own, the pipeline
        spent both; and a failure after the domains were released (the last
        step refusing their structure) still spent them: charged only on
        success, such a fit could be repeated for free."""
        if not self.__dict__.pop("_encoder_charge_due", False):
            return
        encoder, final = self._encoder(), self._final_estimator
        accountant = getattr(final, "accountant", None)
        g = spent if spent is not None else getattr(encoder, "privacy_guarantee_", None)
        if accountant is not None and g is not None and (g.epsilon > 0 or g.delta > 0):
            accountant.spend(g.epsilon, g.delta, g.neighbouring, mechanism=g.mechanism)

    def _hand_guarantee_to_final(self):
        """The last step's release is built on the encoder's private
        domains (its bits, names and blocks): its ``to_release()`` states
        their guarantee composed with its own (``release.release_from``)."""
        final, encoder = self._final_estimator, self._encoder()
        g = getattr(encoder, "privacy_guarantee_", None)
        if (
            final not in (None, "passthrough")
            and hasattr(final, "to_release")
            and g is not None
            and (g.epsilon > 0 or g.delta > 0)
        ):
            final._upstream_guarantee = g

    def _record_guarantee(self):
        """Sequential composition of the steps' recorded guarantees
        (:func:`~skdp_synth.privacy.compose`: an induced-subspace part keeps
        the whole induced-subspace). Relations that do not compose are
        refused before the fit (``_check_budget_first``); should two steps
        still differ, nothing is claimed, and a warning says so."""
        from .privacy import compose

        found = [
            step.privacy_guarantee_
            for _, step in self.steps
            if getattr(step, "privacy_guarantee_", None) is not None
        ]
        g = compose(found)
        final = self._final_estimator
        if (
            g is not None
            and final not in (None, "passthrough")
            and getattr(final, "privacy_guarantee_", None) is None
        ):
            # the rows come from a step without a guarantee (the
            # microaggregator: (n/k)-anonymity, not DP): the encoder's ε was
            # spent, but the output is not ε-DP (the pipeline must not claim
            # its encoder's ε for the rows)
            warnings.warn(
                f"the last step {type(final).__name__} is not differentially "
                "private: the pipeline's rows carry no DP guarantee "
                "(privacy_guarantee_ = None); epsilon_ and delta_ record what "
                "the private domains spent",
                PrivacyLeakWarning,
                stacklevel=user_stacklevel(),
            )
            self._guarantee_record = {
                "privacy_guarantee_": None,
                "epsilon_": g.epsilon,
                "delta_": g.delta,
            }
            return
        if g is None and len({f.neighbouring for f in found}) > 1:
            warnings.warn(
                "the steps' guarantees hold for different neighbouring "
                "relations and do not compose as written: the pipeline records "
                "none (privacy_guarantee_ = None)",
                PrivacyBudgetWarning,
                stacklevel=user_stacklevel(),
            )
        if g is not None:
            g = self._with_inferred_domains(g)
        self._guarantee_record = {
            "privacy_guarantee_": g,
            "epsilon_": None if g is None else g.epsilon,
            "delta_": None if g is None else g.delta,
        }

    def _with_inferred_domains(self, g):
        """``g`` stating what it does not cover: the domains the steps
        learned from the data without privacy (an encoder's ``inferred_``,
        warned about at ``fit``), which the rows reveal (a level seen in one
        row comes back) while the composed ``ε`` said nothing of them."""
        import dataclasses

        names = []
        for _, step in self.steps:
            names += [str(c) for c in getattr(step, "inferred_", None) or ()]
        if not names:
            return g
        gaps = [f"the domain of column {c!r} (read from the data)" for c in names]
        return dataclasses.replace(
            g, not_covered=tuple(dict.fromkeys([*g.not_covered, *gaps]))
        )

    def _refresh_guarantee(self):
        """Record the steps' guarantees again when the last step's changed
        since the fit (read by :meth:`_recorded`, so on every read of
        ``epsilon_``, ``delta_`` or ``privacy_guarantee_``): ``PrivateSampler``
        charges rows drawn past those it paid for, and the pipeline stated
        the fit's spend (measured: 58 recorded of 81 spent)."""
        final = self._final_estimator
        g = getattr(final, "privacy_guarantee_", None)
        if g is not None and "_guarantee_record" in self.__dict__:
            if self.__dict__.get("_final_guarantee_seen") is not g:
                self._final_guarantee_seen = g
                self._record_guarantee()

    def _recorded(self, name):
        """``epsilon_``, ``delta_`` and ``privacy_guarantee_``: the steps'
        guarantees composed at the fit, composed again whenever the last
        step's has changed since (``PrivateSampler`` charges rows drawn past
        those it paid for, through ``pipe.sample`` or its own ``sample``:
        read as attributes set at the fit, they stated 60 of 175 spent)."""
        if "_guarantee_record" not in self.__dict__:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}"
            )
        self._refresh_guarantee()
        return self.__dict__["_guarantee_record"][name]

    @property
    def privacy_guarantee_(self) -> PrivacyGuarantee | None:
        """The steps' guarantees composed (see :meth:`_recorded`)."""
        return self._recorded("privacy_guarantee_")

    @property
    def epsilon_(self) -> float | None:
        """The ``ε`` of :attr:`privacy_guarantee_` (of the private domains
        alone when the last step is not differentially private)."""
        return self._recorded("epsilon_")

    @property
    def delta_(self) -> float | None:
        """The ``δ`` of :attr:`privacy_guarantee_`, as ``epsilon_``."""
        return self._recorded("delta_")


def _nested_budgeted(steps):
    """Estimators with a budget (an ``epsilon`` that is set) found inside a
    step rather than as a step: a nested ``Pipeline``, ``FeatureUnion``,
    ``ColumnTransformer`` (their deep parameters; public)."""
    found = []
    for _, step in steps:
        if step in (None, "passthrough") or not hasattr(step, "get_params"):
            continue
        for value in step.get_params(deep=True).values():
            if value is step or not hasattr(value, "get_params"):
                continue
            params = value.get_params(deep=False)
            if params.get("epsilon") is not None and (
                hasattr(value, "_needs_budget") or "accountant" in params
            ):
                found.append(value)
    return found


def _has_schema(X):
    """Whether ``X`` carries public column types: a DataFrame (pandas,
    Dask) or a NumPy array (one dtype)."""
    return isinstance(X, np.ndarray) or (hasattr(X, "columns") and hasattr(X, "dtypes"))
