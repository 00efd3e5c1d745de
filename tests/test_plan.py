"""The plan contract: one frozen plan per fit, fixed before the data is read."""

import dataclasses
import math
import re
import warnings

import numpy as np
import pytest
from _dummy import NoisyMeanSynthesizer
from sklearn.base import BaseEstimator, clone

from skdp_synth import (
    CovarianceLossMicroaggregator,
    DampedPrivateSynthesizer,
    PrivateSampler,
    ProjectedGaussianRelease,
)
from skdp_synth.base import BLOCKS_DOC, PrivateSynthesizerMixin, SynthesizerMixin
from skdp_synth.exceptions import BudgetError
from skdp_synth.plan import (
    DampedPlan,
    MicroaggregationPlan,
    Plan,
    ReleasePlan,
    SamplerPlan,
)
from skdp_synth.privacy import BudgetAccountant

CASES = [
    (
        CovarianceLossMicroaggregator(k=20, domain="boolean", random_state=0),
        MicroaggregationPlan,
    ),
    (DampedPrivateSynthesizer(epsilon=2.0, n_components=1, random_state=0), DampedPlan),
    (PrivateSampler(d=2, k=30, random_state=0), SamplerPlan),
    (ProjectedGaussianRelease(random_state=0), ReleasePlan),
    (ProjectedGaussianRelease(mechanism="correlated", random_state=0), ReleasePlan),
    (ProjectedGaussianRelease(neighbouring="replace-one", random_state=0), ReleasePlan),
]
IDS = [repr(e) for e, _ in CASES]


def _data(n=400, p=5, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((n, p)) < 0.3).astype(int)


def _fit(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # large-epsilon warnings of tiny data
        return clone(est).fit(X)


@pytest.mark.parametrize("est, cls", CASES, ids=IDS)
def test_plan_is_published_frozen_and_carries_the_guarantee(est, cls):
    X = _data()
    fitted = _fit(est, X)
    plan = fitted.plan_
    assert type(plan) is cls and isinstance(plan, Plan)
    assert plan.n_features == X.shape[1]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.n_features = 3
    if isinstance(fitted, PrivateSynthesizerMixin):
        # one guarantee, computed once: what fit recorded is the plan's
        assert fitted.privacy_guarantee_ is plan.guarantee
    else:
        assert plan.guarantee is None


@pytest.mark.parametrize("est, cls", CASES, ids=IDS)
def test_plan_is_the_same_before_the_data(est, cls):
    # make_plan sees the sizes only; fit's plan must not depend on the data
    X = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = clone(est).make_plan(*X.shape)
    fitted = _fit(est, X)
    assert before.summary() == fitted.plan_.summary()
    assert before.guarantee == fitted.plan_.guarantee
    other = _fit(est, _data(seed=1))
    assert other.plan_.summary() == fitted.plan_.summary()


def test_plan_arrays_are_read_only_copies():
    C = np.zeros((1, 4 * 10))  # 2-way tables of p = 5: 10 tables x 4 cells
    C[0, :4] = 1.0  # the first table's total
    est = ProjectedGaussianRelease(
        mechanism="correlated", invariants=C, random_state=0
    ).make_plan(400, 5)
    assert C.flags.writeable  # the caller's array is untouched
    with pytest.raises(ValueError, match="read-only"):
        est.invariants[0, 0] = 2.0
    plan = DampedPrivateSynthesizer(epsilon=2.0).make_plan(1000, 4)
    with pytest.raises(ValueError, match="read-only"):
        plan.centre[0] = 0.0


def test_make_plan_changes_nothing_and_charges_nothing():
    acc = BudgetAccountant(epsilon=10.0)
    est = DampedPrivateSynthesizer(epsilon=2.0, accountant=acc)
    state = dict(vars(est))
    plan = est.make_plan(1000, 4)
    assert vars(est) == state and acc.spent == []
    assert plan.guarantee.epsilon == 2.0


def test_plan_under_add_remove_does_not_record_n():
    # n is private under add/remove: the plan, public, must not hold it
    X = _data()
    for kwargs in ({}, {"mechanism": "correlated"}, {"n_rows": 500}):
        est = _fit(ProjectedGaussianRelease(random_state=0, **kwargs), X)
        assert est.plan_.n_samples is None
        assert "n_samples" in est.plan_.summary()
    est = _fit(ProjectedGaussianRelease(neighbouring="replace-one", random_state=0), X)
    assert est.plan_.n_samples == X.shape[0]


def test_damped_plan_pins_the_three_scales():
    # Boedihardjo2024 Theorem 5.12: PROJ n eps/(6t), weights 6/(n eps), means 12
    # sqrt(p)/(b eps)
    n, p, eps = 1000, 4, 2.0
    est = DampedPrivateSynthesizer(
        epsilon=eps, n_components=2, alpha=0.9, damping=7.0, centre=None,
        parameters="bound",
    )  # fmt: skip
    plan = est.make_plan(n, p)
    assert plan.projection_scale == n * eps / (6 * 2)
    assert plan.weight_noise_scale == 6 / (n * eps)
    assert plan.mean_noise_scale == 12 * math.sqrt(p) / (7.0 * eps)
    assert (plan.n_components, plan.alpha, plan.damping) == (2, 0.9, 7.0)
    assert plan.n_cells == plan.covering.n_points
    assert plan.guarantee.epsilon == eps and plan.guarantee.delta == 0.0


def test_sampler_plan_pins_the_price_of_a_row():
    from skdp_synth.private_sampling import sampling_epsilon

    plan = PrivateSampler(d=1, k=7, m=82).make_plan(10**6, 10)
    per = sampling_epsilon(1, 10**6, 10, 1, 82, 0.25, 2.5)
    assert plan.epsilon_per_draw == per
    assert (plan.m, plan.n_walsh, plan.n_draws) == (82, 11, 7)
    assert plan.guarantee.epsilon == 7 * per
    assert plan.condition_threshold == 1 / (2 * math.e)


def test_sampler_extra_rows_update_the_plan():
    X = _data(2000, 4)
    acc = BudgetAccountant(epsilon=np.inf)
    est = _fit(PrivateSampler(d=1, k=10, accountant=acc, random_state=0), X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the per-row price at n = 2000
        est.sample(15)
    assert est.plan_.n_draws == est.n_draws_paid_ == 15
    assert est.plan_.guarantee is est.privacy_guarantee_
    assert est.privacy_guarantee_.epsilon == 15 * est.plan_.epsilon_per_draw
    assert est.to_release().plan["n_rows"] == 15


def test_release_plan_is_the_fitted_noise():
    X = _data()
    est = _fit(ProjectedGaussianRelease(mechanism="correlated", random_state=0), X)
    plan = est.plan_
    assert est.noise_model_ is plan.noise
    assert est.sensitivity_ == plan.sensitivity <= 1
    assert est.expected_error_ == plan.expected_error
    rel = est.to_release().plan
    assert rel["mechanism"] == plan.mechanism == "correlated"
    assert rel["sensitivity"] == plan.sensitivity


def test_budget_is_refused_from_the_plan_before_the_data():
    acc = BudgetAccountant(epsilon=1.0)
    est = DampedPrivateSynthesizer(epsilon=2.0, accountant=acc)
    with pytest.raises(BudgetError):
        est.fit(_data())
    assert not hasattr(est, "plan_") and acc.spent == []


# ------------------------------------------------- shared parameters
@pytest.mark.parametrize(
    "cls",
    [
        CovarianceLossMicroaggregator,
        DampedPrivateSynthesizer,
        PrivateSampler,
        ProjectedGaussianRelease,
    ],
)
def test_shared_parameters_are_owned_by_the_mixin(cls):
    shared = cls._shared_constraints
    params = cls().get_params()
    for name in ("blocks", "random_state") + (
        ("accountant",) if issubclass(cls, PrivateSynthesizerMixin) else ()
    ):
        assert cls._parameter_constraints[name] is shared[name]
    for name in ("domain", "bounds"):
        if name in params:
            assert cls._parameter_constraints[name] is shared[name]
    # one documentation of blocks, filled into every estimator's docstring
    doc = re.sub(r"\s+", " ", cls.__doc__)
    assert re.sub(r"\s+", " ", BLOCKS_DOC) in doc
    assert "%(" not in cls.__doc__


def test_redeclaring_a_shared_parameter_is_refused():
    with pytest.raises(TypeError, match="redeclares the shared parameter 'bounds'"):

        class Bad(SynthesizerMixin, BaseEstimator):
            _parameter_constraints = {"bounds": [None]}

            def __init__(self, *, bounds=None):
                self.bounds = bounds


def test_a_private_plan_without_guarantee_is_refused():
    class NoGuarantee(NoisyMeanSynthesizer):
        def _make_plan(self, n_samples, n_features):
            return Plan(n_samples=n_samples, n_features=n_features, guarantee=None)

    with pytest.raises(TypeError, match="must carry a PrivacyGuarantee"):
        NoGuarantee(domain="boolean").fit(_data())


def test_dummy_constraints_come_from_the_mixin():
    # the test dummy declares only epsilon; the mixin adds the shared ones
    assert set(NoisyMeanSynthesizer._parameter_constraints) == {
        "epsilon",
        "domain",
        "bounds",
        "accountant",
        "random_state",
    }


@pytest.mark.parametrize("relation", ["add-remove-one", "replace-one"])
def test_residual_plan_computes_the_sensitivity_once(monkeypatch, relation):
    # the replace-one maximum enumerates attribute sets, which is costly; the
    # plan computes it once and divides it out (optimal_scales' τ, bit for bit)
    from skdp_synth.workloads import AttributeMarginalWorkload

    calls = []
    original = AttributeMarginalWorkload.whitened_sensitivity

    def spy(self, tau, neighbouring="add-remove-one", *args):
        calls.append(neighbouring)
        return original(self, tau, neighbouring, *args)

    monkeypatch.setattr(AttributeMarginalWorkload, "whitened_sensitivity", spy)
    # the all-tables plan (selection measures further workloads in the fit)
    est = _fit(
        ProjectedGaussianRelease(
            neighbouring=relation, selection="none", random_state=0
        ),
        _data(),
    )
    assert calls == [relation]
    monkeypatch.setattr(AttributeMarginalWorkload, "whitened_sensitivity", original)
    W = est.plan_.workload
    tau = est.plan_.residual_scales
    # the default pairs allocate for the pairs and the 1-way tables at
    # ONE_WAY_WEIGHT: that workload's optimal_scales, bit for bit
    plan = est._one_way_weighted(W, None) or W
    want = plan.optimal_scales(relation)
    np.testing.assert_array_equal(tau, [want[plan.subsets.index(A)] for A in W.subsets])
    assert est.plan_.sensitivity == 1.0
    assert W.whitened_sensitivity(tau, relation) == pytest.approx(1.0, rel=1e-12)
