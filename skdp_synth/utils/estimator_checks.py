"""The synthesizer contract as checks anyone can run (imbalanced-learn style).

scikit-learn's :func:`sklearn.utils.estimator_checks.check_estimator` knows
estimators, not synthesizers: it never calls ``sample``, never looks at the
privacy bookkeeping and fits continuous data that Boolean synthesizers must
reject. These checks add what it lacks. Every estimator of this package passes
them (``tests/test_common.py`` runs them through
:func:`parametrize_with_checks`); a new or third-party synthesizer built on
:class:`~skdp_synth.base.SynthesizerMixin` or
:class:`~skdp_synth.base.PrivateSynthesizerMixin` is checked by one call::

    from skdp_synth.utils.estimator_checks import check_synthesizer
    check_synthesizer(MySynthesizer(epsilon=1.0, random_state=0))

or, in a pytest suite, one decorator::

    from skdp_synth.utils.estimator_checks import parametrize_with_checks

    @parametrize_with_checks([MySynthesizer(random_state=0)])
    def test_my_synthesizer(estimator, check):
        check(estimator)

What is checked, on small random data of the estimator's domain (0/1 rows for
``domain="boolean"`` or a Boolean-only estimator; rows in ``[-1, 2]^p``, with
``bounds=(-1, 2)`` passed by the caller, for ``domain="box"``):

* ``sample`` returns an ``(n, p)`` array (0/1 on Boolean data), and a default
  size; results are reproducible with a fixed ``random_state`` (an estimator
  given ``random_state=None`` is checked with ``random_state=0``);
* pandas in, pandas out: ``sample`` and ``transform`` keep the columns (and,
  for 0/1 data, the dtypes) and ``get_feature_names_out`` names them;
* a failed ``fit`` leaves a fitted estimator exactly as it was;
* empty, single-row, infinite and 1-D input, non-numeric columns (which need
  a :class:`~skdp_synth.preprocessing.BooleanEncoder`) and values outside the
  domain are rejected with a clear ``ValueError`` -- never clipped;
* ``score`` is a finite, non-positive number (minus a marginal error);
* private estimators (those with an ``accountant`` parameter): the recorded
  ``epsilon_``, ``delta_``, ``neighbouring_`` equal ``privacy_guarantee_`` and
  are charged to the accountant; overspending is refused before the data is
  read and leaves nothing fitted; bounds inferred from the data warn with
  :class:`~skdp_synth.exceptions.PrivacyLeakWarning`.

For scikit-learn's own checks, use its ``parametrize_with_checks`` with the
expected failures published here (:data:`BOOLEAN_ONLY`,
:data:`NOT_ROW_ALIGNED`).
"""

from __future__ import annotations

import contextlib
import math
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone

from ..exceptions import BudgetError, PrivacyBudgetWarning, PrivacyLeakWarning
from ..privacy import BudgetAccountant

__all__ = [
    "BOOLEAN_ONLY",
    "NOT_ROW_ALIGNED",
    "PRIVATE_SHAPE",
    "check_bad_input_rejected",
    "check_failed_fit_changes_nothing",
    "check_inferred_bounds_warn",
    "check_non_numeric_columns_need_an_encoder",
    "check_out_of_domain_rejected_not_clipped",
    "check_overspending_refused_before_touching_data",
    "check_pandas_round_trip",
    "check_privacy_budget_recorded_and_charged",
    "check_sample_reproducible_with_fixed_random_state",
    "check_sample_shape_dtype_and_columns",
    "check_score_is_minus_marginal_error",
    "check_synthesizer",
    "parametrize_with_checks",
]

#: scikit-learn checks a synthesizer whose ``transform`` is a synthetic sample
#: (not row-aligned) cannot pass, with the reason (for
#: ``expected_failed_checks``).
NOT_ROW_ALIGNED: dict[str, str] = {
    "check_methods_sample_order_invariance": (
        "transform returns a synthetic sample, not aligned with the input rows"
    ),
    "check_methods_subset_invariance": (
        "transform returns a synthetic sample, not aligned with the input rows"
    ),
}

#: scikit-learn checks that want the input's shape in a refusal: a table
#: without columns is refused without it, since its ``n`` is private under
#: add/remove neighbours.
PRIVATE_SHAPE: dict[str, str] = {
    "check_estimators_empty_data_messages": (
        "a table without columns is refused without its shape, whose n is private"
    ),
}

_CONTINUOUS = (
    "Boolean-only estimator: the check fits continuous data, which is rejected "
    "(values must be 0/1 and are never rounded)"
)
#: scikit-learn checks a Boolean-only synthesizer cannot pass: they fit
#: continuous data, which it must reject.
BOOLEAN_ONLY: dict[str, str] = {
    check: _CONTINUOUS
    for check in (
        "check_dict_unchanged",
        "check_dont_overwrite_parameters",
        "check_dtype_object",
        "check_estimators_dtypes",
        "check_estimators_fit_returns_self",
        "check_estimators_nan_inf",
        "check_estimators_overwrite_params",
        "check_estimators_pickle",
        "check_estimators_pickle(readonly_memmap=True)",
        "check_f_contiguous_array_estimator",
        "check_fit2d_1feature",
        "check_fit2d_predict1d",
        "check_fit_check_is_fitted",
        "check_fit_idempotent",
        "check_fit_score_takes_y",
        "check_n_features_in",
        "check_n_features_in_after_fitting",
        "check_pipeline_consistency",
        "check_positive_only_tag_during_fit",
        "check_readonly_memmap_input",
        "check_transformer_data_not_an_array",
        "check_transformer_general",
        "check_transformer_general(readonly_memmap=True)",
        "check_transformer_preserve_dtypes",
        # fit(X, sample_weight=counts) (ProjectedGaussianRelease): the checks
        # weigh continuous rows
        "check_all_zero_sample_weights_error",
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weights_list",
        "check_sample_weights_not_an_array",
        "check_sample_weights_not_overwritten",
        "check_sample_weights_pandas_series",
        "check_sample_weights_shape",
    )
}


# ------------------------------------------------------------------ helpers
def _data(kind: str, n: int = 120, p: int = 5, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "boolean":
        return (rng.random((n, p)) < 0.4).astype(np.int64)
    return rng.uniform(-1, 2, size=(n, p))


def _frame(X: np.ndarray) -> pd.DataFrame:
    df = pd.DataFrame(X, columns=[f"col{j}" for j in range(X.shape[1])])
    if np.issubdtype(X.dtype, np.integer):
        df["col0"] = df["col0"].astype(np.uint8)
    return df


@contextlib.contextmanager
def _raises(exc: type[BaseException], match: str | None = None) -> Iterator[None]:
    """``pytest.raises`` without pytest (not a dependency of the package)."""
    try:
        yield
    except exc as err:
        if match is not None and not re.search(match, str(err)):
            raise AssertionError(
                f"{type(err).__name__} raised, but its message does not match "
                f"{match!r}: {err}"
            ) from err
    else:
        raise AssertionError(f"{exc.__name__} not raised")


def _kind(estimator: BaseEstimator) -> str:
    """``"box"`` for ``domain="box"``, else ``"boolean"``."""
    return "box" if estimator.get_params().get("domain") == "box" else "boolean"


def _is_private(estimator: BaseEstimator) -> bool:
    return "accountant" in estimator.get_params()


def _seeded(estimator: BaseEstimator) -> BaseEstimator:
    params = estimator.get_params()
    if "random_state" in params and params["random_state"] is None:
        return clone(estimator).set_params(random_state=0)
    return estimator


# ------------------------------------------------------------------- checks
def check_sample_shape_dtype_and_columns(estimator: BaseEstimator, kind: str) -> None:
    """``sample(n)`` is an ``(n, p)`` array, 0/1 on Boolean data; ``sample()``."""
    X = _data(kind)
    est = clone(estimator).fit(X)
    Y = est.sample(37)
    assert isinstance(Y, np.ndarray) and Y.shape == (37, X.shape[1])
    if kind == "boolean":
        assert set(np.unique(Y)) <= {0, 1}
    default = est.sample()
    assert default.shape[1] == X.shape[1] and default.shape[0] >= 1


def check_sample_reproducible_with_fixed_random_state(
    estimator: BaseEstimator, kind: str
) -> None:
    """Same ``random_state``, same fit, same rows; ``sample(random_state=)``."""
    X = _data(kind)
    a = clone(estimator).fit(X)
    b = clone(estimator).fit(X)
    np.testing.assert_array_equal(a.sample(50), b.sample(50))
    np.testing.assert_array_equal(a.sample(50), a.sample(50))
    np.testing.assert_array_equal(
        a.sample(50, random_state=3), b.sample(50, random_state=3)
    )


def check_pandas_round_trip(estimator: BaseEstimator, kind: str) -> None:
    """DataFrame in, DataFrame out: columns (and 0/1 dtypes) kept."""
    df = _frame(_data(kind))
    est = clone(estimator).fit(df)
    Y = est.sample(40)
    assert isinstance(Y, pd.DataFrame)
    assert list(Y.columns) == list(df.columns)
    if kind == "boolean":  # 0/1 output keeps integer dtypes exactly
        assert list(Y.dtypes) == list(df.dtypes)
    T = est.transform(df)
    assert isinstance(T, pd.DataFrame) and list(T.columns) == list(df.columns)
    assert list(est.get_feature_names_out()) == list(df.columns)


def check_failed_fit_changes_nothing(estimator: BaseEstimator, kind: str) -> None:
    """A ``fit`` that raises leaves the fitted state exactly as it was."""
    X = _data(kind)
    est = clone(estimator).fit(X)
    before = {
        k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(est).items()
    }
    bad = _data(kind, p=X.shape[1] + 1).astype(np.float64)
    bad[0, 0] = np.nan
    with _raises(ValueError):
        est.fit(bad)
    assert set(vars(est)) == set(before)
    for k, v in before.items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(vars(est)[k], v)
    assert est.n_features_in_ == X.shape[1]


_BAD_INPUTS = [
    (np.zeros((0, 3)), "0 sample"),
    (np.zeros((1, 3)), "1 sample"),
    (np.array([[0.0, np.inf], [1.0, 0.0]]), "infinity|inf"),
    (np.zeros(5), "2D array"),
]


def check_bad_input_rejected(estimator: BaseEstimator, kind: str) -> None:
    """Empty, single-row, infinite and 1-D input: a clear ``ValueError``."""
    for bad, match in _BAD_INPUTS:
        with _raises(ValueError, match=match):
            clone(estimator).fit(bad)


def check_non_numeric_columns_need_an_encoder(
    estimator: BaseEstimator, kind: str
) -> None:
    """A text column is refused with a pointer to ``BooleanEncoder``."""
    df = _frame(_data(kind))
    df["colour"] = "red"
    with _raises(ValueError, match="BooleanEncoder"):
        clone(estimator).fit(df)


def check_out_of_domain_rejected_not_clipped(
    estimator: BaseEstimator, kind: str
) -> None:
    """A value outside the domain is an error naming the column, not clipped."""
    X = _data(kind).astype(np.float64)
    X[3, 1] = 0.5 if kind == "boolean" else 7.0
    with _raises(ValueError, match="column 1 has"):
        clone(estimator).fit(X)


def check_privacy_budget_recorded_and_charged(
    estimator: BaseEstimator, kind: str
) -> None:
    """``epsilon_, delta_, neighbouring_`` = the guarantee = what was charged."""
    X = _data(kind)
    relation = estimator.get_params().get("neighbouring", "replace-one")
    acc = BudgetAccountant(epsilon=100.0, delta=0.5, neighbouring=relation)
    est = clone(estimator).set_params(accountant=acc).fit(X)
    g = est.privacy_guarantee_
    assert (est.epsilon_, est.delta_, est.neighbouring_) == (
        g.epsilon,
        g.delta,
        g.neighbouring,
    )
    assert est.neighbouring_ in ("replace-one", "add-remove-one")
    assert math.isclose(acc.total_spent[0], est.epsilon_, rel_tol=1e-6, abs_tol=1e-12)
    assert math.isclose(acc.total_spent[1], est.delta_, rel_tol=1e-6, abs_tol=1e-12)


def check_overspending_refused_before_touching_data(
    estimator: BaseEstimator, kind: str
) -> None:
    """A budget below the cost raises ``BudgetError``; nothing spent or fitted."""
    X = _data(kind)
    probe = clone(estimator).fit(X)
    acc = BudgetAccountant(
        epsilon=probe.epsilon_ * 0.5, delta=0.5, neighbouring=probe.neighbouring_
    )
    est = clone(estimator).set_params(accountant=acc)
    with _raises(BudgetError):
        est.fit(X)
    assert acc.spent == []
    assert not hasattr(est, "epsilon_")


def check_inferred_bounds_warn(estimator: BaseEstimator, kind: str) -> None:
    """Bounds learned from the data warn; public bounds do not."""
    est = clone(estimator).set_params(domain="box", bounds=None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(_data("box"))
    leaks = [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    assert any("bounds" in str(w.message) for w in leaks), (
        "inferring bounds from the data did not warn with PrivacyLeakWarning"
    )
    with warnings.catch_warnings():
        # no leak with public bounds (other advice, e.g. a table below a
        # method's useful size, is not what this checks)
        warnings.simplefilter("error", PrivacyLeakWarning)
        clone(estimator).set_params(domain="box", bounds=(-1, 2)).fit(_data("box"))


def check_score_is_minus_marginal_error(estimator: BaseEstimator, kind: str) -> None:
    """``score`` is finite and ``<= 0`` (minus an average marginal error)."""
    X = _data(kind)
    est = clone(estimator).fit(X)
    s = est.score(X)
    assert np.isfinite(s) and s <= 0


# ------------------------------------------------------------------ drivers
def _yield_checks(
    estimator: BaseEstimator,
) -> Iterator[Callable[[BaseEstimator, str], None]]:
    yield check_sample_shape_dtype_and_columns
    yield check_sample_reproducible_with_fixed_random_state
    yield check_pandas_round_trip
    yield check_failed_fit_changes_nothing
    yield check_bad_input_rejected
    yield check_non_numeric_columns_need_an_encoder
    yield check_out_of_domain_rejected_not_clipped
    yield check_score_is_minus_marginal_error
    if _is_private(estimator):
        yield check_privacy_budget_recorded_and_charged
        yield check_overspending_refused_before_touching_data
        if "bounds" in estimator.get_params():
            yield check_inferred_bounds_warn


def _with_budget_warnings_ignored(
    check: Callable[[BaseEstimator, str], None], kind: str | None
) -> Callable[[BaseEstimator], None]:
    """``check(estimator)``: the data kind filled in; large-epsilon warnings
    (expected at these tiny sizes) ignored."""

    def run(estimator: BaseEstimator) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyBudgetWarning)
            check(_seeded(estimator), kind or _kind(estimator))

    run.__name__ = run.__qualname__ = check.__name__
    run.__doc__ = check.__doc__
    return run


def check_synthesizer(estimator: BaseEstimator, *, kind: str | None = None) -> None:
    """Run every synthesizer check on ``estimator``; raise on the first failure.

    Parameters
    ----------
    estimator : estimator instance
        An unfitted synthesizer (``fit``, ``sample``, ``transform``,
        ``score``). A box-domain estimator must be given ``bounds=(-1, 2)``;
        ``random_state=None`` is replaced by ``0``.
    kind : {"boolean", "box"}, default=None
        The data to check on; by default ``"box"`` when
        ``estimator.get_params()["domain"] == "box"``, else ``"boolean"``.

    Raises
    ------
    AssertionError
        From the first check that fails, named in the message.

    Examples
    --------
    >>> from skdp_synth import CovarianceLossMicroaggregator
    >>> from skdp_synth.utils.estimator_checks import check_synthesizer
    >>> check_synthesizer(CovarianceLossMicroaggregator(k=12, domain="boolean"))
    """
    if kind not in (None, "boolean", "box"):
        raise ValueError(f"kind must be 'boolean', 'box' or None, got {kind!r}")
    for check in _yield_checks(estimator):
        runner = _with_budget_warnings_ignored(check, kind)
        try:
            runner(estimator)
        except AssertionError as err:
            raise AssertionError(f"{check.__name__} failed: {err}") from err


def parametrize_with_checks(
    estimators: Iterable[BaseEstimator], *, kind: str | None = None
) -> Any:
    """A ``pytest.mark.parametrize`` over every (estimator, check) pair.

    Parameters
    ----------
    estimators : iterable of estimator instances
        Unfitted synthesizers (see :func:`check_synthesizer`).
    kind : {"boolean", "box"}, default=None
        As in :func:`check_synthesizer`.

    Returns
    -------
    decorator
        ``pytest.mark.parametrize("estimator, check", ...)``; the test body
        is ``check(estimator)``. Test ids are ``"<estimator>-<check>"``.
    """
    import pytest  # only the test suites need pytest

    params = []
    for estimator in estimators:
        name = _describe(estimator)
        for check in _yield_checks(estimator):
            runner = _with_budget_warnings_ignored(check, kind)
            label = f"{name}-{check.__name__}"
            params.append(pytest.param(estimator, runner, id=label))
    return pytest.mark.parametrize("estimator, check", params)


def _describe(estimator: BaseEstimator) -> str:
    """``Name(param=value, ...)`` of the non-default parameters, one line."""
    text = re.sub(r"\s+", "", repr(estimator))
    return text if len(text) <= 120 else type(estimator).__name__
