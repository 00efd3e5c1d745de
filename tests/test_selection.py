"""Private selection of marginals: accounting, score sensitivity, audit, estimator."""

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtr, ndtri

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.audit import audit_epsilon
from skdp_synth.exceptions import IndependentColumnsWarning
from skdp_synth.gaussian_release import _plan_choice as choice
from skdp_synth.gaussian_release import _selection as sel
from skdp_synth.gaussian_release import (
    exponential_mechanism,
    gdp_mu_of_pure_dp,
    l1_scores,
    pure_dp_of_gdp_mu,
    score_sensitivity,
)
from skdp_synth.gaussian_release._coarse_pairs import ordinal_levels
from skdp_synth.gaussian_release._dependence import target_pairs_by_worth
from skdp_synth.gaussian_release._rules import DEFAULT_RULES
from skdp_synth.mechanisms import NoiseSource, analytic_gaussian_sigma
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.workloads import AttributeMarginalWorkload

LEVELS = [2, 3, 2]


def _set_rules(monkeypatch, **changes):
    """Swap the release's tuning for one test (one frozen object replaced)."""
    rules = dataclasses.replace(ProjectedGaussianRelease._rules, **changes)
    monkeypatch.setattr(ProjectedGaussianRelease, "_rules", rules)


# ----------------------------------------------------------- accounting
@pytest.mark.parametrize("eps", [0.01, 0.3, 1.0, 3.0])
def test_pure_dp_is_gdp_with_the_stated_mu(eps):
    """``f_{ε,0} >= G_μ`` on a fine grid, with equality at the kink (tight).

    ``f_{ε,0}(α) = max(0, 1 - e^ε α, e^{-ε}(1 - α))`` is the trade-off
    function of ε-DP, ``G_μ(α) = Φ(Φ⁻¹(1-α) - μ)`` that of μ-GDP (Dong2022).
    Tolerance 1e-12: both sides are closed-form evaluations of erf.
    """
    mu = gdp_mu_of_pure_dp(eps)
    alpha = np.concatenate([np.logspace(-12, -1, 400), np.linspace(0.1, 1, 400)])
    alpha = np.clip(alpha, 0.0, 1.0)
    f = np.maximum.reduce(
        [np.zeros_like(alpha), 1 - math.exp(eps) * alpha, math.exp(-eps) * (1 - alpha)]
    )
    G = ndtr(ndtri(1 - alpha) - mu)
    assert np.all(f >= G - 1e-12)
    kink = 1.0 / (1.0 + math.exp(eps))
    f_k = math.exp(-eps) * (1 - kink)
    assert ndtr(ndtri(1 - kink) - mu) == pytest.approx(f_k, rel=1e-9)
    # a slightly smaller μ is violated at the kink: the conversion is tight
    assert ndtr(ndtri(1 - kink) - 0.99 * mu) > f_k
    assert pure_dp_of_gdp_mu(mu) == pytest.approx(eps, rel=1e-10)


# --------------------------------------------------- score sensitivity
def _tables(rows, cands, levels=LEVELS):
    W = AttributeMarginalWorkload(levels, 3, tables=list(cands))
    R = np.asarray(rows, dtype=np.int64).reshape(-1, len(levels))
    return [W.table(R, S) for S in cands]


CANDS = [(0, 1), (0, 2), (1, 2), (0, 1, 2)]
UNIVERSE = np.array(list(itertools.product(*[range(k) for k in LEVELS])))


def _neighbours(rows, neighbouring):
    if neighbouring == "add-remove-one":
        for u in UNIVERSE:
            yield np.vstack([rows, u[None, :]])
        for i in range(len(rows)):
            yield np.delete(rows, i, axis=0)
    else:
        for i in range(len(rows)):
            for u in UNIVERSE:
                R = rows.copy()
                R[i] = u
                yield R


@pytest.mark.parametrize("neighbouring", ["add-remove-one", "replace-one"])
def test_score_sensitivity_by_brute_force(neighbouring):
    """Every neighbour of several datasets, random public models and weights:
    ``max |q(D) - q(D')| <= Δ`` for every candidate, and ``Δ`` is attained."""
    rng = np.random.default_rng(0)
    worst = 0.0
    for trial in range(6):
        rows = UNIVERSE[rng.integers(0, len(UNIVERSE), 5)]
        w = rng.uniform(0.5, 3.0, len(CANDS))
        if trial % 2:  # integer models put data on both sides of the model
            model = [
                rng.integers(0, 4, t.size).astype(float) for t in _tables(rows, CANDS)
            ]
        else:
            model = [rng.uniform(0, 3, t.size) for t in _tables(rows, CANDS)]
        penalty = rng.uniform(0, 5, len(CANDS))  # public: cancels in differences
        q = l1_scores(_tables(rows, CANDS), model, w, penalty)
        delta = score_sensitivity(w, neighbouring)
        for R in _neighbours(rows, neighbouring):
            q2 = l1_scores(_tables(R, CANDS), model, w, penalty)
            change = float(np.max(np.abs(q2 - q)))
            assert change <= delta + 1e-9
            worst = max(worst, change / delta)
    assert worst == pytest.approx(1.0, abs=1e-9)  # the bound is attained


# --------------------------------------------------------------- audit
def _selection_outputs(rows, runs, seed, planted=False):
    """The selection step on ``rows``: scores from the data, one
    exponential mechanism (ε = 1, add/remove), ``runs`` independent draws."""
    model = [np.zeros(6), np.array([0.0, 5.0, 0.0, 0.0])]  # public models
    w = np.ones(2)
    q = l1_scores(_tables(rows, [(0, 1), (0, 2)]), model, w)
    delta = score_sensitivity(w, "add-remove-one")
    if planted:
        delta = delta / 2  # the planted bug: half the sensitivity
    rng = np.random.default_rng(seed)
    return np.array(
        [exponential_mechanism(q, 1.0, delta, rng) for _ in range(runs)], float
    )


@pytest.mark.parametrize("planted", [False, True])
def test_audit_of_the_selection_step(planted):
    """The neighbours ``D`` and ``D + (0, 0, 1)`` move the two scores by +1
    and -1 (the worst case). The correct mechanism's true privacy loss is
    0.62 <= ε = 1, so the audit's lower bound stays below 1 except with
    probability alpha = 1e-3 (the false-failure rate); with half the
    sensitivity the loss is 1.44 and the audit refutes ε = 1."""
    D = np.array([[1, 1, 1]])
    D2 = np.array([[1, 1, 1], [0, 0, 1]])
    a = _selection_outputs(D, 40000, 1, planted)
    b = _selection_outputs(D2, 40000, 2, planted)
    result = audit_epsilon(a, b, alpha=1e-3)
    if planted:
        assert result.epsilon_lower > 1.0
    else:
        assert result.epsilon_lower <= 1.0


# ------------------------------------------------- weighted allocation
def test_weighted_tables_closure_and_default_equivalence():
    W = AttributeMarginalWorkload([3, 2, 4], 2, tables=[(0, 1), (2,)])
    assert W.subsets == [(), (0,), (1,), (2,), (0, 1)]
    full = AttributeMarginalWorkload([3, 2, 4, 5], 2)
    listed = AttributeMarginalWorkload(
        [3, 2, 4, 5], 2, tables=full.tables, weights=np.ones(len(full.tables))
    )
    assert listed.subsets == full.subsets
    # the same arithmetic in the same order: equal to rounding
    np.testing.assert_allclose(listed.allocation(), full.allocation(), rtol=1e-12)


@pytest.mark.parametrize("neighbouring", ["add-remove-one", "replace-one"])
def test_weighted_allocation_is_optimal_and_calibrated(neighbouring):
    rng = np.random.default_rng(3)
    levels = [3, 2, 4, 2]
    tables = [(0, 1), (1, 2, 3), (0, 3), (2,)]
    w = [1.0, 4.0, 0.5, 2.0]
    W = AttributeMarginalWorkload(levels, 3, tables=tables, weights=w)
    tau, _ = W.calibrated_scales(neighbouring)
    assert W.whitened_sensitivity(tau, neighbouring) == pytest.approx(1.0, rel=1e-12)
    # the weighted objective is Σ_S w_S Σ_cells Var (all cells of S alike)
    total = sum(
        wS * W.n_cells(S) * W.cell_variance(tau, 1.0, S) for wS, S in zip(w, tables)
    )
    assert W.expected_error(tau, 1.0) == pytest.approx(total, rel=1e-10)
    best = W.expected_error(tau, 1.0)
    for _ in range(50):  # every perturbed allocation, recalibrated, is worse
        t2 = tau * np.exp(rng.normal(0, 0.3, tau.size)) * (tau > 0)
        t2 = t2 * W.whitened_sensitivity(t2, neighbouring)
        assert W.expected_error(t2, 1.0) >= best * (1 - 1e-12)
    # brute force: whitened sensitivity over every record / pair of records
    universe = np.array(list(itertools.product(*[range(k) for k in levels])))
    G = np.array(
        [
            np.concatenate(
                [W.answers(u[None, :])[A] / t for A, t in zip(W.subsets, tau) if t > 0]
            )
            for u in universe
        ]
    )
    if neighbouring == "add-remove-one":
        sens = np.linalg.norm(G, axis=1).max()
    else:
        sens = np.linalg.norm(G[:, None, :] - G[None, :, :], axis=2).max()
    assert sens == pytest.approx(1.0, rel=1e-9)


# ---------------------------------------------------------- estimator
def _frame(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + (rng.random(n) < 0.2)) % 3
    c = rng.integers(0, 2, n)
    d = (c ^ (rng.random(n) < 0.1)).astype(int)
    e = np.where(rng.random(n) < 0.7, a, rng.integers(0, 4, n))  # e depends on a
    df = pd.DataFrame({"a": a, "b": b, "c": c, "d": d, "e": e}).astype(str)
    cats = {col: sorted(df[col].unique()) for col in df}
    return df, cats


def _pipe(cats, **kw):
    return make_synthesis_pipeline(
        BooleanEncoder(categories=cats), ProjectedGaussianRelease(**kw)
    )


def _mu2(est):
    """Σ μ_i² of every step, from what the fit recorded (Dong2022 Cor. 3.3)."""
    res = est._selection_result
    shares = est.selection_shares_
    c = est.plan_.noise_sigma
    gauss = sum(v for k, v in shares.items() if k != "selection_select")
    exp_mu2 = sum(gdp_mu_of_pure_dp(e) ** 2 for e in res.epsilons)
    return gauss / c**2 + exp_mu2


@pytest.mark.parametrize("rule", ["mst", "aim"])
@pytest.mark.parametrize("neighbouring", ["add-remove-one", "replace-one"])
def test_selection_spends_exactly_the_budget(rule, neighbouring):
    df, cats = _frame()
    pipe = _pipe(
        cats, epsilon=0.5, selection=rule, neighbouring=neighbouring, random_state=0
    ).fit(df)
    est = pipe[-1]
    c = analytic_gaussian_sigma(0.5, 1e-6)
    assert est.plan_.noise_sigma == c  # the release's own calibration
    assert est.selection_ == rule
    assert est.epsilon_ == 0.5 and est.delta_ == 1e-6
    # the whole fit is 1/c-GDP: Σ μ_i² = 1/c² (recorded steps, rounding only)
    assert _mu2(est) == pytest.approx(1.0 / c**2, rel=1e-9)
    assert sum(est.selection_shares_.values()) == pytest.approx(1.0, rel=1e-12)
    res = est._selection_result
    with pytest.raises(ValueError, match="was not measured"):
        unmeasured = next(
            S
            for S in itertools.combinations(range(5), 2)
            if not any(set(S) <= set(T) for T in est.workload_.tables)
        )
        est.marginal_table([df.columns[j] for j in unmeasured])
    cand = est.plan_.selection["candidates"]
    assert all(S in cand for S in res.chosen)
    if rule == "mst":  # a spanning tree of the 5 attributes
        assert len(res.chosen) == 4 and len(set(res.chosen)) == 4
    out = pipe.sample(50, random_state=0)
    assert list(out.columns) == list(df.columns)


@pytest.mark.parametrize("neighbouring", ["add-remove-one", "replace-one"])
@pytest.mark.parametrize("target", [None, "c"])
def test_explicit_one_way_measures_the_target_star_on_the_whole_budget(
    target, neighbouring
):
    """``selection="one-way"``: the 1-way tables and, with ``target``, every
    pair with it (no exponential mechanism, no trimming: a public choice),
    with the whole budget -- Σ μ² = 1/c², the same (ε, δ)."""
    df, cats = _frame()
    pipe = _pipe(
        cats,
        epsilon=0.5,
        selection="one-way",
        target=target,
        neighbouring=neighbouring,
        random_state=0,
    ).fit(df)
    est = pipe[-1]
    c = analytic_gaussian_sigma(0.5, 1e-6)
    assert est.selection_ == "one-way"
    assert est.epsilon_ == 0.5 and est.delta_ == 1e-6
    assert est.selection_shares_ == {"final": 1.0}
    assert _mu2(est) == pytest.approx(1.0 / c**2, rel=1e-9)
    assert est._selection_result.epsilons == []
    names = list(df.columns)
    if target is None:
        assert sorted(est.marginals_) == [(x,) for x in sorted(names)]
    else:
        star = {tuple(sorted((x, target), key=names.index)) for x in names}
        star.discard((target, target))
        assert set(est.marginals_) == star
    out = pipe.sample(50, random_state=0)
    assert list(out.columns) == names


def test_explicit_one_way_needs_the_residual_mechanism():
    df, cats = _frame()
    pipe = _pipe(cats, selection="one-way", mechanism="correlated")
    with pytest.raises(ValueError, match="needs mechanism='residual'"):
        pipe.fit(df)


def test_mst_finds_the_planted_dependences():
    df, cats = _frame(6000)
    est = _pipe(cats, epsilon=1.0, selection="mst", random_state=0).fit(df)[-1]
    chosen = set(est._selection_result.chosen)
    # a-b (0, 1), c-d (2, 3) and a-e (0, 4) carry all the dependence
    assert {(0, 1), (2, 3), (0, 4)} <= chosen


def test_auto_chooses_from_public_n_and_says_so():
    """With a public ``n_rows`` the plan fixes the rule: AIM's rounds on 20
    attributes and 1,000 rows at ε = 0.3 (``_auto_at``: AIM's expected error
    the least), every table on 5 attributes and 3,000 rows at ε = 5."""
    df, cats = _frame()
    wide, wide_cats = _wide(n=1000, a=20)
    small = _pipe(wide_cats, epsilon=0.3, n_rows=1000, random_state=0)
    small = small.fit(wide)[-1]
    large = _pipe(cats, epsilon=5.0, n_rows=3000, random_state=0).fit(df)[-1]
    assert small.plan_.selection["rule"] == small.selection_ == "aim"
    assert large.plan_.selection["rule"] == large.selection_ == "none"
    assert len(large.marginals_) == 10 and ("a", "b") in large.marginals_


def test_auto_without_selection_is_the_all_tables_release():
    """Under add/remove the choice waits for the noisy total; when it keeps
    all tables, the release is the one of ``selection="none"`` (the same
    noise call on the same stream in one process: exact equality)."""
    df, cats = _frame()
    auto = _pipe(cats, epsilon=5.0, random_state=0).fit(df)[-1]
    none = _pipe(cats, epsilon=5.0, selection="none", random_state=0).fit(df)[-1]
    assert auto.plan_.selection["rule"] == "auto" and auto.selection_ == "none"
    np.testing.assert_array_equal(auto.released_, none.released_)


def test_workload_and_target_by_name():
    df, cats = _frame()
    est = _pipe(
        cats,
        epsilon=1.0,
        workload={("a", "b"): 3.0, ("c", "d"): 1.0, "e": 1.0},
        selection="none",
        random_state=0,
    ).fit(df)[-1]
    W = est.workload_
    assert W.tables == [(4,), (0, 1), (2, 3)]
    np.testing.assert_array_equal(W.weights, [1.0, 3.0, 1.0])
    assert est.marginals_ == [("e",), ("a", "b"), ("c", "d")]
    tgt = _pipe(cats, epsilon=1.0, target="e", selection="none", random_state=0)
    W = tgt.fit(df)[-1].workload_
    triples = [S for S in W.tables if len(S) == 3]
    assert len(triples) == 6 and all(4 in S for S in triples)
    for S, w in zip(W.tables, W.weights):
        assert w == (2.0 if 4 in S else 1.0)


def test_gridsearch_tunes_target_and_workload():
    from sklearn.model_selection import GridSearchCV

    df, cats = _frame(1200)
    grid = GridSearchCV(
        _pipe(cats, epsilon=1.0, random_state=0),
        {
            "projectedgaussianrelease__target": [None, "a"],
            "projectedgaussianrelease__workload": [None, {("a", "b"): 2.0}],
        },
        cv=2,
    ).fit(df)
    assert len(grid.cv_results_["params"]) == 4


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"target": "zz"}, "unknown attribute"),
        ({"workload": {("a", "zz"): 1.0}}, "unknown attribute"),
        ({"workload": {("a", "b"): -1.0}}, "positive"),
        ({"selection": "mst", "mechanism": "correlated"}, "needs mechanism"),
        ({"target": "a", "mechanism": "correlated"}, "residual"),
    ],
)
def test_bad_workloads_are_refused_before_the_data(kw, match):
    df, cats = _frame(200)
    with pytest.raises(ValueError, match=match):
        _pipe(cats, epsilon=1.0, random_state=0, **kw).fit(df)


def test_measure_is_calibrated_to_its_share():
    """``measure`` at share f adds noise c/sqrt(f) to whitened residuals."""
    W = AttributeMarginalWorkload(LEVELS, 2, tables=[(0, 1)])
    rows = UNIVERSE[:5]
    tables = {(0, 1): W.table(rows, (0, 1))}
    _, scales, ms = sel.measure(tables, W, 0.25, 2.0, "add-remove-one", NoiseSource(0))
    tau, _ = W.calibrated_scales("add-remove-one")
    np.testing.assert_allclose(scales, 2.0 / 0.5 * tau, rtol=1e-12)
    assert len(ms) == len(W.subsets) - 1


@pytest.mark.parametrize("rule", ["mst", "aim"])
def test_generator_sees_only_released_measurements(rule, monkeypatch):
    """With selection the generator receives the selection steps' noisy
    measurements and the final release's residuals, nothing else."""
    import skdp_synth.gaussian_release._generating as gr

    seen = []
    original = gr.fit_rows

    def spy(measurements, *args, **kwargs):
        seen.append(list(measurements))
        return original(measurements, *args, **kwargs)

    monkeypatch.setattr(gr, "fit_rows", spy)
    df, cats = _frame(1500)
    # max_model_rows=None: the generator's table has n̂ rows, so it receives the
    # released measurements themselves (with "auto" they are rescaled to its
    # N rows: tests/test_generator.py checks that case)
    est = _pipe(
        cats, epsilon=0.5, selection=rule, max_model_rows=None, random_state=0
    ).fit(df)[-1]
    ((ms,),) = [seen]
    selected = est._selection_result.measurements
    W = est.workload_
    final = [
        (A, est._residuals[A], est.residual_scales_[i])
        for i, A in enumerate(W.subsets)
        if A and est.residual_scales_[i] > 0
    ]
    assert len(ms) == len(selected) + len(final)
    # the 1-way terms weighted (ReleaseRules.generator_one_way_weight): the
    # same answers, their scales over its square root
    root = math.sqrt(est._rules.generator_one_way_weight)

    def scale(A, sigma):
        return sigma / root if len(A) == 1 else sigma

    for m, s in zip(ms, selected):
        if len(s.attributes) != 1:
            assert m is s  # the very objects the selection step released
        assert m.attributes == s.attributes and m.query is s.query
        assert m.sigma == scale(s.attributes, s.sigma)
        np.testing.assert_array_equal(m.values, s.values)
    for m, (A, values, sigma) in zip(ms[len(selected) :], final):
        # the same arrays, passed on: exact
        assert m.attributes == A and m.sigma == scale(A, sigma)
        np.testing.assert_array_equal(m.values, values)


def test_aim_final_measurement_allocates_for_the_one_way_tables(monkeypatch):
    """AIM's final measurement allocates its noise as if every 1-way table
    were in it at ``rules.aim_final_one_way_weight`` (a public re-split of
    the final share, as the default pairs' ``one_way_weight``): the same
    rounds and the same residuals, less noise on the 1-way residuals and
    more on the pairs'; the whitened sensitivity stays 1, so the fit still
    spends exactly its budget. Weight 0 restores the pairs' optimum."""

    df, cats = _frame()
    kw = dict(epsilon=0.5, selection="aim", random_state=0)
    c = analytic_gaussian_sigma(0.5, 1e-6)
    est = _pipe(cats, **kw).fit(df)[-1]
    W = est.workload_
    ones = {S: x for S, x in zip(W.tables, W.weights) if len(S) == 1}
    assert set(ones) == {(j,) for j in range(len(W.n_levels)) if W.n_levels[j] >= 2}
    w = DEFAULT_RULES.aim_final_one_way_weight
    assert w > 0
    covered = {j for S in est._selection_result.chosen for j in S}
    assert covered and all(x == w for (j,), x in ones.items() if j in covered)
    assert _mu2(est) == pytest.approx(1.0 / c**2, rel=1e-9)
    tau = est.residual_scales_ / (c / math.sqrt(est.selection_shares_["final"]))
    assert W.whitened_sensitivity(tau, "add-remove-one") == pytest.approx(1.0)

    _set_rules(monkeypatch, aim_final_one_way_weight=0.0)
    pairs = _pipe(cats, **kw).fit(df)[-1]
    assert pairs._selection_result.chosen == est._selection_result.chosen
    assert all(len(S) == 2 for S in pairs.workload_.tables)
    assert _mu2(pairs) == pytest.approx(1.0 / c**2, rel=1e-9)
    old = dict(zip(pairs.workload_.subsets, pairs.residual_scales_))
    new = dict(zip(W.subsets, est.residual_scales_))
    assert set(old) == set(new)
    assert all(new[A] < old[A] for A in new if len(A) == 1)
    assert all(new[A] > old[A] for A in new if len(A) == 2)


def test_budget_split_constants_are_pinned():
    """The shares of each rule's steps (doc/privacy.md, "Selection of
    marginals") sum to the whole budget after the noisy total; a change of
    any of them, or of the public auto rule's constants, fails here."""

    assert DEFAULT_RULES.selection_shares == {
        "mst": {"one_way": 1 / 3, "select": 1 / 3, "final": 1 / 3},
        "aim": {"one_way": 0.1, "rounds": 0.6, "final": 0.3},
    }
    assert DEFAULT_RULES.auto_mst_shares == {
        "one_way": 0.5,
        "select": 0.1,
        "final": 0.4,
    }
    for shares in [
        *DEFAULT_RULES.selection_shares.values(),
        DEFAULT_RULES.auto_mst_shares,
    ]:
        assert sum(shares.values()) == pytest.approx(1.0, abs=1e-15)
    assert (
        DEFAULT_RULES.auto_tv_threshold,
        DEFAULT_RULES.auto_none_factor,
    ) == (0.048, 0.5)
    assert not hasattr(DEFAULT_RULES, "auto_aim_threshold")
    assert (
        DEFAULT_RULES.auto_aim_max_attributes == 24
        and DEFAULT_RULES.target_weight == 2.0
    )
    assert (
        DEFAULT_RULES.auto_tree_reach == 0.75
        and DEFAULT_RULES.auto_edge_threshold == 0.15
    )
    assert DEFAULT_RULES.auto_aim_one_way_share == 0.65
    assert DEFAULT_RULES.auto_one_way_margin == 0.1
    assert DEFAULT_RULES.auto_tree_margin == 0.15
    assert DEFAULT_RULES.auto_mst_price_grouped is True
    assert not hasattr(DEFAULT_RULES, "auto_one_way_min_attributes")
    assert DEFAULT_RULES.one_way_weight == 4.0 and DEFAULT_RULES.level_support_z == 2.0
    assert DEFAULT_RULES.one_way_min_attributes == 10
    assert DEFAULT_RULES.aim_final_one_way_weight == 4.0
    # auto's AIM joins its columns from the final share: at most all of it
    assert DEFAULT_RULES.aim_cover_share == 0.1
    assert (
        DEFAULT_RULES.aim_cover_share <= DEFAULT_RULES.selection_shares["aim"]["final"]
    )
    from skdp_synth.gaussian_release import _selection as selection

    assert selection.AIM_ROUNDS_PER_ATTRIBUTE == 3
    assert selection.AIM_SELECT_FRACTION == 0.1
    assert selection.AIM_MODEL_ROWS == 4096


def test_pipeline_domain_share_default_is_pinned():
    """The encoder's default share of the pipeline's ε (doc/privacy.md,
    "Private domains")."""
    from skdp_synth import pipeline
    from skdp_synth.pipeline import SynthesisPipeline, auto_domain_share

    assert SynthesisPipeline([("a", "passthrough")]).domain_share == "auto"
    assert pipeline.DOMAIN_SHARE_PER_COLUMN == 0.04
    assert (pipeline.DOMAIN_SHARE_MIN, pipeline.DOMAIN_SHARE_MAX) == (0.2, 0.55)
    got = [auto_domain_share(k) for k in (1, 5, 6, 9, 10, 13, 14, 30)]
    want = [0.2, 0.2, 0.24, 0.36, 0.4, 0.52, 0.55, 0.55]
    assert got == pytest.approx(want, rel=1e-12)


# ------------------------------------------- wide tables, scarce signal
def _e_tv(levels, r, share, c, n):
    """Expected TV noise of table ``r`` measured alone at ``share`` (as
    :func:`mst_edge_budget` defines it, computed directly)."""
    cells = float(np.prod([levels[j] for j in r]))
    std = sel._cell_std(levels, r, share, c, "add-remove-one")
    return cells * math.sqrt(2.0 / math.pi) * std / (2.0 * n)


@pytest.mark.parametrize("n", [40.0, 400.0, 3000.0, 1e5])
def test_mst_edge_budget_keeps_the_edges_worth_their_noise(n):
    """Every allowed pair's expected TV noise at ``K`` edges is within the
    threshold, every other pair's is above it, and ``K + 1`` edges would not
    fit a spanning forest of the pairs allowed there (K is the largest)."""
    levels = np.array([2, 3, 10, 4, 2, 12])
    pairs = list(itertools.combinations(range(6), 2))
    c, f, thr = analytic_gaussian_sigma(1.0, 1e-6), 1 / 3, 0.048
    K, allowed = sel.mst_edge_budget(levels, pairs, f, c, "add-remove-one", n, thr)
    assert 0 <= K <= 5
    if K == 0:
        assert allowed == []
    else:
        for r in pairs:
            e = _e_tv(levels, r, f / K, c, n)
            # the rule and this check compute e_r by the same formula in a
            # different order: a relative 1e-9 margin for the rounding
            assert (e <= thr * (1 + 1e-9)) if r in allowed else (e > thr * (1 - 1e-9))
        assert (
            len({j for r in allowed for j in r})
            - sel._n_components(sorted({j for r in allowed for j in r}), allowed)
            >= K
        )
    if K < 5:
        more = [r for r in pairs if _e_tv(levels, r, f / (K + 1), c, n) <= thr]
        nodes = sorted({j for r in more for j in r})
        assert len(nodes) - sel._n_components(nodes, more) < K + 1
    if n == 1e5:
        assert K == 5 and sorted(allowed) == pairs  # plenty of signal: MST's tree
    if n == 40.0:
        assert K == 0


def _wide(n=600, a=44, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 3, n)
    df = pd.DataFrame(
        {
            f"x{j}": np.where(rng.random(n) < 0.5, base, rng.integers(0, 3, n))
            for j in range(a)
        }
    ).astype(str)
    return df, {col: ["0", "1", "2"] for col in df}


@pytest.mark.parametrize("public_n", [False, True])
@pytest.mark.parametrize("target", [None, "x3"])
def test_auto_measures_one_way_tables_on_a_wide_scarce_table(target, public_n):
    """44 attributes, 600 rows, ε = 0.1: the all-tables plan is far too
    noisy and a tree would take 2/3 of the budget from the 1-way tables
    (its expected error 1.28 times theirs, past ``auto_tree_margin``), so
    auto measures the 1-way tables with all of it -- the same 1/c-GDP as
    every other branch. With ``target`` (ε = 0.5, no margin: the tree 1.19
    times) the 1-way tables and the target's pairs worth their noise. (At
    ε = 1, 1.075 times, within ``auto_one_way_margin``: auto runs the
    tree.)"""

    df, cats = _wide()
    n_rows = len(df) if public_n else None  # decided in the plan, or at fit
    eps = 0.1 if target is None else 0.5
    pipe = _pipe(cats, epsilon=eps, target=target, n_rows=n_rows, random_state=0)
    if target is None:
        # independent columns are said, never silent (with ``target`` its
        # pairs are measured and nothing is raised: warnings are errors here)
        with pytest.warns(IndependentColumnsWarning, match="target="):
            est = pipe.fit(df)[-1]
    else:
        est = pipe.fit(df)[-1]
    c = analytic_gaussian_sigma(eps, 1e-6)
    assert est.plan_.selection["rule"] == ("one-way" if public_n else "auto")
    assert est.selection_ == "one-way"
    assert est.epsilon_ == eps and est.delta_ == 1e-6
    assert _mu2(est) == pytest.approx(1.0 / c**2, rel=1e-9)
    # at 600 rows and ε = 0.5 a measurement of the pairs' dependence would
    # carry too little weight (_dependence.measurement_weight): none is made;
    # with ``target`` the target's pairs' dependences are measured instead
    # (``auto_target_pair_share`` of what the count left)
    shares = {"final"} if public_n else {"count", "final"}
    if target is not None:
        shares.add("target_pairs")
    assert set(est.selection_shares_) == shares
    assert sum(est.selection_shares_.values()) == pytest.approx(1.0, rel=1e-12)
    assert est._selection_result.epsilons == []  # no exponential mechanism
    pairs = [S for S in est.marginals_ if len(S) == 2]
    if target is None:
        assert pairs == [] and len(est.marginals_) == 44
    else:
        assert all(target in S for S in pairs)
        # the pairs kept are those the measured dependences say are worth
        # their noise at the final share (post-processing of what was
        # released), and the share is the rule's
        left = 1.0 - est.selection_shares_.get("count", 0.0)
        f_star = DEFAULT_RULES.auto_target_pair_share
        assert est.selection_shares_["target_pairs"] == pytest.approx(
            f_star * left, rel=1e-12
        )
        found = est._auto_dependence
        idx = list(est.blocks_.names).index
        star = [tuple(sorted((idx(x), idx(target)))) for x in df.columns if x != target]
        assert found["target_pairs"] == star
        assert found["target_pairs_noise_sd"] == pytest.approx(
            c * 2.0 * math.sqrt(43) / math.sqrt(f_star * left), rel=1e-12
        )
        n_hat = n_rows if public_n else est._selection_result.totals[0][0]
        chosen = target_pairs_by_worth(
            found["target_pairs_noisy"],
            star,
            est.blocks_.n_levels,
            (1.0 - f_star) * left,
            c,
            "add-remove-one",
            n_hat,
            found["target_pairs_noise_sd"],
            DEFAULT_RULES,
        )
        assert sorted(est._selection_result.chosen) == sorted(chosen)
    # pairs no table measures: the model keeps n̂ rows (no extra sampling error)
    assert est.model_rows_ == max(1, round(est.n_estimate_))
    out = pipe.sample(20, random_state=0)
    assert out.shape == (20, 44) and set(out.columns) == set(df.columns)


#: the 1-way tables' estimate as :func:`choice.plan_errors` weighs it
_ONE_WAY = 1.0 + DEFAULT_RULES.auto_one_way_margin
#: ... and against MST's tree
_TREE = 1.0 + DEFAULT_RULES.auto_tree_margin


def _auto_at(levels, eps, n, rules=DEFAULT_RULES):
    """:func:`auto_estimates` and :func:`auto_rule` of the default pairs'
    plan on ``levels`` (as ``residual_plan`` allocates it), at ``n`` rows."""
    levels = np.asarray(levels)
    pairs = list(itertools.combinations(range(levels.size), 2))
    W = AttributeMarginalWorkload(levels, 2, tables=pairs)
    plan_W = W
    if levels.size >= rules.one_way_min_attributes:
        plan_W = sel.with_one_way_tables(W, rules.one_way_weight)
    tau, _ = sel.allocated_scales(W, plan_W, "add-remove-one")
    c = analytic_gaussian_sigma(eps, 1e-6)
    args = (W, tau, c, n, rules, "add-remove-one", None, True)
    return choice.auto_estimates(*args), choice.auto_rule(*args)


#: the domain of Ecdat's Car survey as the release sees it (68 columns: the
#: choice, 3 binary covariates, 6 alternatives' type, fuel, price (8 bins),
#: range, acc, speed, pollution, size, cost, station, space of 4 of them)
_CAR_LEVELS = (
    [6, 2, 2, 2]
    + [6] * 6
    + [2] * 6
    + [8] * 6
    + [7, 7, 6, 6, 4, 4]
    + [3] * 6
    + [7, 7, 4, 4, 4, 4]
    + [5, 5, 5, 5, 6, 6]
    + [4] * 6
    + [2] * 4
    + [5, 5, 4, 4, 4, 4]
    + [4, 4, 3, 3, 4, 4]
)


@pytest.mark.parametrize("eps, n", [(0.3, 4654), (1.0, 4654), (3.0, 4654)])
def test_auto_rule_is_smooth_in_the_number_of_attributes(eps, n):
    """Tables of ``a = 10 .. 80`` attributes of 4 levels, the same rows and
    budget: each plan's expected error moves by at most the factor
    ``(b/a)²`` from ``a`` to ``b`` attributes (the all-pairs plan's noise
    grows like ``a``; no step anywhere, none at 40), and the choice between
    MST's tree and the 1-way tables switches at most once, from the tree to
    the 1-way tables as more attributes share the budget, at a number of
    attributes that grows with ``n`` (a switch fixed at 40 attributes would
    not move: at ``2n`` rows it is later or gone)."""
    sizes = [10, 20, 30, 38, 39, 40, 41, 42, 50, 60, 70, 80]
    runs = [_auto_at([4] * a, eps, n) for a in sizes]
    for (a, (e0, _)), (b, (e1, _)) in zip(zip(sizes, runs), zip(sizes[1:], runs[1:])):
        for key in ("none", "mst", "one-way"):
            assert abs(math.log(e1[key] / e0[key])) <= 2 * math.log(b / a)
    chosen = [rule for _, rule in runs]
    # the tree against the 1-way tables (AIM stands in on narrow tables)
    selected = [
        "mst" if e["mst"] <= _ONE_WAY * e["one-way"] else "one-way" for e, _ in runs
    ]
    assert all(r in ("none", "aim", p) for r, p in zip(chosen, selected))
    switches = sum(x != y for x, y in zip(selected, selected[1:]))
    assert switches <= 1
    if switches:
        assert selected[0] == "mst" and selected[-1] == "one-way"
        at = sizes[selected.index("one-way")]
        more = [_auto_at([4] * a, eps, 2 * n)[0] for a in sizes]
        later = [a for a, e in zip(sizes, more) if _ONE_WAY * e["one-way"] < e["mst"]]
        assert not later or later[0] > at


def test_auto_runs_mst_on_a_wide_table_where_a_tree_is_worth_it():
    """The car survey's domain (68 attributes): at its 4,654 rows and ε = 3,
    and at ε = 1 from 10,000 rows, a tree's pairs are worth their noise and
    auto runs MST (the 40-attribute switch had measured the 1-way tables at
    every ε: TV2 0.116 against MST's 0.082 at ε = 3,
    ``benchmarks/bench_suite.py``). The estimates of the tree and the
    1-way tables cross once as ``n`` grows (at ε = 1 below the survey's own
    4,654 rows since the tree's reach follows its edges' signal). At ε =
    0.3 the tree's estimate is 1.10 times the 1-way tables', within
    ``auto_one_way_margin``: auto runs the tree (measured on the survey's
    3,723 training rows, where auto still took the 1-way tables: TV2 .1462
    against .1426, a model's AUC .512 against .494,
    ``benchmarks/results/bench_suite.md``); at ε = 0.25 (1.14 times) within
    ``auto_tree_margin``, the tree still; at ε = 0.2 (1.18 times) and 0.1
    (1.26 times) the 1-way tables. (The levels are priced at every level
    here: no ordinal columns are declared.)"""
    assert len(_CAR_LEVELS) == 68
    for eps, n in ((3.0, 4654), (1.0, 10_000)):
        est, rule = _auto_at(_CAR_LEVELS, eps, n)
        assert rule == "mst", (eps, n, est)
        assert est["mst"] < est["one-way"]
    est, rule = _auto_at(_CAR_LEVELS, 0.3, 4654)
    assert rule == "mst" and est["one-way"] < est["mst"] <= _ONE_WAY * est["one-way"]
    est, rule = _auto_at(_CAR_LEVELS, 0.25, 4654)
    assert rule == "mst"
    assert _ONE_WAY * est["one-way"] < est["mst"] <= _TREE * est["one-way"]
    for eps in (0.2, 0.1):
        est, rule = _auto_at(_CAR_LEVELS, eps, 4654)
        assert rule == "one-way" and _TREE * est["one-way"] < est["mst"]
    sizes = [1000, 2000, 4654, 10_000, 20_000, 50_000]
    prefer = []
    for n in sizes:
        est, _ = _auto_at(_CAR_LEVELS, 1.0, n)
        prefer.append(est["mst"] <= _ONE_WAY * est["one-way"])
    assert prefer == sorted(prefer) and prefer[-1] and not prefer[0]


#: the domain of the Caravan insurance table as the release sees it (86
#: categorical columns, 4,657 training rows in ``benchmarks/bench_suite.py``):
#: levels -> how many columns have them
_CARAVAN_LEVELS = sum(
    (
        [k] * m
        for k, m in [
            (2, 7),
            (3, 8),
            (4, 9),
            (5, 7),
            (6, 8),
            (7, 7),
            (8, 4),
            (9, 2),
            (10, 33),
            (40, 1),
        ]
    ),
    [],
)


def test_auto_keeps_a_tree_on_a_wide_table_where_its_edges_are_signal():
    """The car survey's domain (68 attributes, 4,654 rows) at ε = 1: a tree's
    edges are measured with expected TV noise ``ē`` ~ 0.075, half of the
    dependence ``D_tree`` a chosen pair holds, so the rows recover most of an
    unmeasured pair's dependence through the tree (reach ``ρ s``,
    ``s = D_tree² / (D_tree² + ē²)``) and auto runs MST (measured on the
    survey at ε = 1, 2 seeds: TV2 0.094 against the 1-way tables' 0.120,
    ``benchmarks/results/bench_auto_wide.md``). The estimate with a fixed
    reach of 0.15 chose the 1-way tables here. Caravan
    (86 attributes, 4,657 rows) at ε = 1: its pairs have more cells, ``ē``
    ~ 0.23, ``s`` ~ 0.3, and the tree's estimate is above the 1-way
    tables' (TV2 0.076 against auto's MST 0.095,
    ``benchmarks/results/bench_auto_wide.md``), by 7.5 %: within
    ``auto_one_way_margin``, so auto runs the tree there (TUNE half, 4 seeds:
    TV2 .0825 against .0746, a model's AUC .495 against .497); at ε = 0.3
    (the tree 1.30 times) the 1-way tables stay."""
    assert len(_CARAVAN_LEVELS) == 86
    est, rule = _auto_at(_CAR_LEVELS, 1.0, 4654)
    assert rule == "mst" and est["mst"] < est["one-way"]
    d_tree = DEFAULT_RULES.auto_edge_threshold
    s = d_tree**2 / (d_tree**2 + est["e_tree"] ** 2)
    assert est["reach"] == pytest.approx(DEFAULT_RULES.auto_tree_reach * s, rel=1e-12)
    q, D = est["q"], DEFAULT_RULES.auto_tv_threshold
    mst = q * est["e_tree"] + (1 - q) * ((1 - est["reach"]) * D + 2 * est["e1_mst"])
    assert est["mst"] == pytest.approx(mst, rel=1e-12)
    est, rule = _auto_at(_CARAVAN_LEVELS, 1.0, 4657)
    assert rule == "mst" and est["one-way"] < est["mst"] <= _ONE_WAY * est["one-way"]
    assert est["reach"] < 0.5 * DEFAULT_RULES.auto_tree_reach
    est, rule = _auto_at(_CARAVAN_LEVELS, 0.3, 4657)
    assert rule == "one-way" and _ONE_WAY * est["one-way"] < est["mst"]
    for levels, n in ((_CAR_LEVELS, 4654), (_CARAVAN_LEVELS, 4657)):
        assert _auto_at(levels, 0.1, n)[1] == "one-way"


@pytest.mark.parametrize("levels", [[4] * 40, _CAR_LEVELS, _CARAVAN_LEVELS])
def test_auto_tree_reach_grows_with_the_edges_signal(levels):
    """The reach ``ρ s`` rises with ``ε`` and with ``n`` (the tree's edge
    noise ``ē`` falls as ``1/(ε n)``-like), stays in ``(0, ρ)``, and the
    choice moves once, from the 1-way tables to the tree, along each."""
    rho = DEFAULT_RULES.auto_tree_reach
    for grid, at in (
        ([0.1, 0.3, 0.5, 1.0, 2.0, 3.0, 10.0], lambda e: _auto_at(levels, e, 4000)),
        ([500, 1000, 4000, 10_000, 50_000], lambda n: _auto_at(levels, 1.0, n)),
    ):
        runs = [at(x) for x in grid]
        reach = [e["reach"] for e, _ in runs]
        assert all(0 < r < rho for r in reach)
        assert all(a < b for a, b in zip(reach, reach[1:]))
        tree = [e["mst"] <= _ONE_WAY * e["one-way"] for e, _ in runs]
        assert tree == sorted(tree)


@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.IndependentColumnsWarning")
def test_auto_rule_reads_only_public_quantities(auto_estimates_calls):
    """The estimates see the plan (its workload, scales and ``c``), the
    rules, the share spent on the noisy total and the released noisy total,
    nothing else; with a public ``n_rows`` the plan fixes the rule before
    the data is read, the same for two unrelated tables of one schema."""
    calls = auto_estimates_calls
    df, cats = _wide()
    est = _pipe(cats, epsilon=1.0, random_state=0).fit(df)[-1]
    # once: at 600 rows a measurement of the pairs' dependence would carry
    # too little weight to be made (tests/test_auto_dependence.py has the
    # fits that make it)
    assert len(calls) == 1 and est._auto_dependence is None
    (W, tau, c, n, rules, nb, target, default_pairs), kw = calls[0]
    plan = est.plan_
    assert W is plan.workload and c == plan.noise_sigma
    np.testing.assert_array_equal(tau, plan.residual_scales)
    assert rules is ProjectedGaussianRelease._rules and nb == "add-remove-one"
    assert target is None and default_pairs is True
    ordinal = kw.pop("ordinal")  # the encoder's blocks: public
    want = ordinal_levels(est.blocks_, est.blocks_.n_levels)
    np.testing.assert_array_equal(ordinal, want)
    assert kw == {"spent": plan.selection["count_share"], "D": None}
    assert n == est._selection_result.totals[0][0]  # the released noisy total
    other, _ = _wide(seed=1)
    rules_of = [
        _pipe(cats, epsilon=e, n_rows=600, random_state=0).fit(frame)[-1].plan_
        for e in (1.0, 3.0)
        for frame in (df, other)
    ]
    assert [p.selection["rule"] for p in rules_of[:2]] == [
        rules_of[0].selection["rule"]
    ] * 2
    assert [p.selection["rule"] for p in rules_of[2:]] == [
        rules_of[2].selection["rule"]
    ] * 2


@pytest.mark.parametrize("neighbouring", ["add-remove-one", "replace-one"])
@pytest.mark.parametrize("threshold", [1e-9, 1e9])
def test_auto_runs_mst_only_when_half_the_tree_is_worth_it(
    neighbouring, threshold, monkeypatch
):
    """Where auto measures chosen tables, it weighs MST's tree against the
    1-way tables by their expected errors (``auto_estimates``): a tree edge
    left unmeasured loses ``D_tree = rules.auto_edge_threshold``, so at
    ``D_tree`` ~ 0 the 1-way tables win (the whole budget on them), at
    ``D_tree`` huge the paper's whole tree. Both branches are 1/c-GDP:
    Σ μ² = 1/c²."""

    df, cats = _frame()
    c = analytic_gaussian_sigma(0.1, 1e-6)
    kw = dict(epsilon=0.1, n_rows=3000, neighbouring=neighbouring, random_state=0)
    # auto -> mst or one-way (never every table, never AIM)
    _set_rules(monkeypatch, auto_none_factor=1e9, auto_aim_max_attributes=0)
    _set_rules(monkeypatch, auto_edge_threshold=threshold)
    if threshold == 1e9:
        est = _pipe(cats, **kw).fit(df)[-1]  # a tree: nothing to say
    else:
        with pytest.warns(IndependentColumnsWarning):
            est = _pipe(cats, **kw).fit(df)[-1]
    res = est._selection_result
    if threshold == 1e9:  # every edge qualifies
        assert est.selection_ == "mst" and len(res.chosen) == 4
    else:  # none does
        assert est.selection_ == "one-way" and res.chosen == [] == res.epsilons
        assert all(len(S) == 1 for S in est.marginals_)
    assert _mu2(est) == pytest.approx(1.0 / c**2, rel=1e-9)
    assert sum(est.selection_shares_.values()) == pytest.approx(1.0, rel=1e-12)


def test_explicit_mst_is_the_papers_whole_tree(monkeypatch):
    """``selection="mst"`` never falls back: MST's spanning tree even where
    auto would measure the 1-way tables, at the paper's thirds of the budget
    (auto's MST at ``rules.auto_mst_shares``)."""

    df, cats = _frame()
    est = _pipe(cats, epsilon=0.02, n_rows=3000, selection="mst", random_state=0)
    est = est.fit(df)[-1]
    assert est.selection_ == "mst" and len(est._selection_result.chosen) == 4
    assert est.plan_.selection["shares"] == {
        "mst": ProjectedGaussianRelease._rules.selection_shares["mst"]
    }
    # auto where its estimates take MST's tree (never every table, no AIM)
    _set_rules(monkeypatch, auto_none_factor=1e9, auto_aim_max_attributes=0)
    auto = _pipe(cats, epsilon=0.1, n_rows=3000, random_state=0).fit(df)[-1]
    assert auto.selection_ == "mst"
    assert (
        auto.plan_.selection["shares"]["mst"]
        == ProjectedGaussianRelease._rules.auto_mst_shares
    )


def test_model_keeps_n_hat_rows_when_a_pair_is_unmeasured():
    """A pair that no released table contains exists only in the model's
    rows; from ``N < n̂`` rows it would carry their sampling error, so
    ``max_model_rows="auto"`` keeps ``n̂`` rows then (post-processing).
    20,000 rows: with every pair measured the auto size is then below ``n̂``
    (the TV ceiling, 12 cells / (8 * 2.5e-4) = 6000 rows, raised to n̂/k)."""
    df, cats = _frame(20_000)
    kw = dict(epsilon=0.3, selection="none", random_state=0)
    every = _pipe(cats, **kw).fit(df)[-1]
    assert every.model_rows_ < round(every.n_estimate_)  # the auto size
    some = {("a", "b"): 1.0, ("c", "d"): 1.0, ("e",): 1.0}
    part = _pipe(cats, workload=some, **kw).fit(df)[-1]
    assert part.model_rows_ == max(1, round(part.n_estimate_))


@pytest.mark.parametrize("public_n", [False, True])
def test_auto_with_a_target_measures_every_table_when_the_pairs_would_be(
    public_n, monkeypatch
):
    """``target`` adds its 3-way tables, whose cells raise the plan's mean TV
    noise; auto still measures every table (the triples included) when the
    same release's all-pairs plan without the target is within the
    threshold, and runs MST only when neither is (with a target the
    threshold rule stays); without a target the plan's own noise times
    ``auto_none_factor`` is weighed against the selected plans. The
    untargeted noise is the plain release's own, computed independently."""

    df, cats = _frame()
    n = len(df)
    kw = dict(epsilon=0.3, random_state=0, n_rows=n if public_n else None)
    probe = _pipe(cats, target="a", selection="none", **kw).fit(df)[-1]
    W, c, tau = probe.workload_, probe.plan_.noise_sigma, probe.plan_.residual_scales
    full = probe._noise_tv(W, tau, c, n)
    pairs = probe._untargeted_noise_tv(W, c, n)
    plain = _pipe(cats, selection="none", **kw).fit(df)[-1]
    assert plain._untargeted_noise_tv(plain.workload_, c, n) is None  # no target
    expected = plain._noise_tv(plain.workload_, plain.plan_.residual_scales, c, n)
    assert pairs == pytest.approx(expected, rel=1e-9)
    assert pairs < full / 1.2  # the triples' cells (the band below is wide)
    # with a target the threshold rule decides (auto_rule: kappa is not
    # measured there)
    _set_rules(monkeypatch, auto_tv_threshold=(pairs + full) / 2)
    est = _pipe(cats, target="a", **kw).fit(df)[-1]
    assert est.selection_ == "none"
    assert set(est.marginals_) == set(probe.marginals_)
    assert any(len(S) == 3 for S in est.marginals_)
    assert sum(est.selection_shares_.values()) == pytest.approx(1.0, rel=1e-12)
    _set_rules(monkeypatch, auto_tv_threshold=pairs / 2)
    assert _pipe(cats, target="a", **kw).fit(df)[-1].selection_ == "mst"
    # without a target the rule weighs the plan's own noise
    e0 = choice.auto_estimates(
        plain.workload_,
        plain.plan_.residual_scales,
        c,
        n,
        plain._rules,
        "add-remove-one",
        None,
        True,
    )
    assert e0["none"] == pytest.approx(expected, rel=1e-12)
    low = min(e0["aim"], e0["mst"], e0["one-way"])
    _set_rules(monkeypatch, auto_none_factor=0.5 * low / expected)
    assert _pipe(cats, **kw).fit(df)[-1].selection_ == "none"
    _set_rules(monkeypatch, auto_none_factor=2 * low / expected)
    assert _pipe(cats, **kw).fit(df)[-1].selection_ != "none"


#: the domain of AER's HMDA as the release sees it at ε = 0.1 (14 columns,
#: the numeric ones in their private bins; benchmarks/bench_suite.py)
_HMDA_LEVELS = [2, 4, 3, 4, 6, 4, 2, 10, 2, 2, 2, 2, 2, 2]


@pytest.mark.parametrize(
    "levels, n, eps, expected",
    [
        (_HMDA_LEVELS, 1900, 0.05, "one-way"),
        (_HMDA_LEVELS, 1900, 0.07, "one-way"),
        ([4] * 12, 3000, 0.3, "aim"),
    ],
)
def test_auto_weighs_aim_against_the_one_way_tables(levels, n, eps, expected):
    """Where AIM's thresholds hold, auto runs AIM's rounds only when AIM's
    expected error (:func:`aim_estimate`) is at most the 1-way tables'. At
    HMDA's domain and 1,900 rows, ε = 0.05-0.07, AIM affords about 2 pairs
    and its 1-way tables (at ``auto_aim_one_way_share`` of the budget) cost
    more than they win: the 1-way tables (measured on the TUNE half: hmda ε
    = 0.1 TV2 .2325 for the 1-way tables, .2786 for AIM; from ε = 0.1 every
    table's estimate times ``κ`` = 0.5 is the least there); on 12 attributes
    of 4 levels and 3,000 rows at ε = 0.3, AIM."""
    e, rule = _auto_at(levels, eps, n)
    # every table's estimate above the better (AIM competes on both widths)
    assert DEFAULT_RULES.auto_none_factor * e["none"] > min(e["aim"], e["one-way"])
    assert rule == expected
    assert rule == ("aim" if e["aim"] <= e["one-way"] else "one-way")
    assert 1.0 <= e["k_aim"] <= 3 * len(levels)


def test_auto_rule_takes_the_least_expected_error_without_a_cliff():
    """``auto_rule`` takes the plan of least expected error
    (:func:`plan_errors`: every table at ``auto_none_factor`` times its
    expected noise, AIM, MST, the 1-way tables) at every ε, and that least
    error moves smoothly with ε (by at most the factor ``(ε'/ε)²``: no
    step where the choice changes). In the band where the all-tables
    plan's expected noise is between 0.048 and 0.08 the threshold rule ran
    MST whatever the other estimates said; now every table where that is
    least (HMDA's domain, ε = 0.75) and AIM where it is (14 attributes of
    5 levels, 5,000 rows)."""
    grid = np.geomspace(0.03, 3.0, 81)
    least = []
    for eps in grid:
        e, rule = _auto_at(_HMDA_LEVELS, float(eps), 1900)
        errors = choice.plan_errors(e, DEFAULT_RULES)
        assert rule == min(errors, key=errors.get)
        least.append(min(errors.values()))
    steps = np.abs(np.diff(np.log(least)))
    assert np.all(steps <= 2 * np.diff(np.log(grid)) + 1e-12)
    e, rule = _auto_at(_HMDA_LEVELS, 0.754, 1900)
    assert 0.048 < e["none"] < 0.08 and rule == "none"
    e, rule = _auto_at([5] * 14, 0.754, 5000)
    assert 0.048 < e["none"] < 0.08 and rule == "aim"
    assert e["aim"] < min(e["mst"], DEFAULT_RULES.auto_none_factor * e["none"])


def test_the_one_way_tables_lose_to_a_tree_within_its_margin():
    """:func:`plan_errors`: the 1-way tables are taken only where their
    estimate times ``1 + auto_one_way_margin`` is the least and the tree's
    is more than ``1 + auto_tree_margin`` times theirs; within the tree's
    margin the tree takes their place (even where AIM's estimate is below
    the tree's: the rule swaps the 1-way tables for the tree, nothing
    else), and a plan below the margined 1-way tables is taken as before."""
    m, m_tree = DEFAULT_RULES.auto_one_way_margin, DEFAULT_RULES.auto_tree_margin
    assert 0 < m < m_tree

    def pick(mst, aim=None):
        est = {"none": 10.0, "mst": mst, "one-way": 1.0, "aim": aim}
        errors = choice.plan_errors(est, DEFAULT_RULES, aim=aim is not None)
        return min(errors, key=errors.get)

    assert pick(1.0 + 0.5 * m) == "mst"  # within both margins
    assert pick(1.0 + 0.5 * (m + m_tree)) == "mst"  # past m, within m_T
    assert pick(1.0 + m_tree) == "mst"  # the tie goes to the tree
    assert pick(1.0 + 1.01 * m_tree) == "one-way"
    # past m, within m_T: the tree in the 1-way tables' place, not AIM
    assert pick(1.0 + m_tree, aim=1.0 + 0.5 * (m + m_tree)) == "mst"
    assert pick(1.0 + 2 * m_tree, aim=1.0 + 0.5 * (m + m_tree)) == "one-way"
    assert pick(1.0 + m_tree, aim=1.0 + 0.5 * m) == "aim"  # within m: AIM
    # the rule at the old margin alone (m_T = m) is the plain margin
    plain = dataclasses.replace(DEFAULT_RULES, auto_tree_margin=m)
    est = {"none": 10.0, "mst": 1.0 + 0.5 * (m + m_tree), "one-way": 1.0}
    errors = choice.plan_errors(est, plain, aim=False)
    assert min(errors, key=errors.get) == "one-way"
    assert errors["one-way"] == est["one-way"] * (1.0 + m)


def test_auto_measures_every_table_where_that_beats_aim():
    """The 5-column frame on 3,000 public rows at ε = 0.05: the all-tables
    plan's expected noise (0.149) is above both old thresholds (the rule
    ran AIM), but times ``auto_none_factor`` it is below AIM's and MST's
    estimates, and auto measures every table. Measured on this frame (4
    seeds, TV2 against 200,000 rows of the same law): every table .1176,
    AIM .1285, MST .1238, the 1-way tables .2026."""
    df, cats = _frame()
    est = _pipe(cats, epsilon=0.05, n_rows=3000, random_state=0).fit(df)[-1]
    assert est.plan_.selection["rule"] == est.selection_ == "none"
    assert len(est.marginals_) == 10


def test_aim_estimate_is_smooth_and_falls_with_the_budget():
    """AIM's estimate falls as ε grows, by at most the factor ``(ε'/ε)²``
    from ``ε`` to ``ε'`` (no step; an expected noise falls like ``1/ε``), and
    the number of pairs it affords grows; the choice between AIM and the
    1-way tables switches once, from the 1-way tables to AIM."""
    grid = np.geomspace(0.03, 0.6, 62)
    runs = [_auto_at(_HMDA_LEVELS, float(eps), 1900) for eps in grid]
    aim = np.array([e["aim"] for e, _ in runs])
    k = np.array([e["k_aim"] for e, _ in runs])
    assert np.all(np.diff(aim) < 0) and np.all(np.diff(k) >= 0)
    assert np.all(-np.diff(np.log(aim)) <= 2 * np.diff(np.log(grid)))
    picks = [
        "aim" if e["aim"] <= _ONE_WAY * e["one-way"] else "one-way" for e, _ in runs
    ]
    assert all(r in ("none", "mst", p) for (_, r), p in zip(runs, picks))
    assert picks[0] == "one-way" and picks[-1] == "aim"
    assert sum(x != y for x, y in zip(picks, picks[1:])) == 1


def test_independent_columns_are_said_only_when_auto_chose_them():
    """auto's 1-way tables without ``target`` raise an
    ``IndependentColumnsWarning`` whose text is the same on two tables of
    one schema (it carries nothing of the data); an explicit
    ``selection="one-way"`` asked for them and raises nothing (warnings are
    errors in this suite)."""
    df, cats = _wide(n=1000, a=20)
    other, _ = _wide(n=1000, a=20, seed=1)
    texts = []
    for frame in (df, other):
        with pytest.warns(IndependentColumnsWarning) as record:
            _pipe(cats, epsilon=0.1, n_rows=1000, random_state=0).fit(frame)
        texts.append([str(w.message) for w in record])
    assert texts[0] == texts[1] and len(texts[0]) == 1
    kw = dict(epsilon=0.1, n_rows=1000, selection="one-way", random_state=0)
    assert _pipe(cats, **kw).fit(df)[-1].selection_ == "one-way"


def test_auto_measures_the_one_way_tables_where_aim_cannot_afford_pairs():
    """The fit follows the rule: 20 attributes on 1,000 public rows, at ε =
    0.1 (AIM's estimate 1.19 times the 1-way tables', past
    ``auto_one_way_margin``, the tree's 1.29 times, past
    ``auto_tree_margin``; every table's far above) auto measures the 1-way
    tables alone, spending the whole budget on them. At ε = 0.2 (AIM 1.14
    times, past the margin) the tree's estimate is 1.21 times theirs, past
    ``auto_tree_margin`` too: the 1-way tables again (the columns are
    categories: the tree is priced at every level). At ε = 0.3 AIM's
    estimate is 1.08 times theirs, within the margin, and below every
    table's times ``κ``: AIM
    (``test_auto_chooses_from_public_n_and_says_so``)."""
    df, cats = _wide(n=1000, a=20)
    with pytest.warns(IndependentColumnsWarning):
        est = _pipe(cats, epsilon=0.1, n_rows=1000, random_state=0).fit(df)[-1]
    assert est.plan_.selection["rule"] == est.selection_ == "one-way"
    assert all(len(S) == 1 for S in est.marginals_)
    assert sum(est.selection_shares_.values()) == pytest.approx(1.0, abs=1e-12)
    with pytest.warns(IndependentColumnsWarning):
        est = _pipe(cats, epsilon=0.2, n_rows=1000, random_state=0).fit(df)[-1]
    assert est.selection_ == "one-way"
    kw = dict(epsilon=0.3, n_rows=1000, random_state=0)
    assert _pipe(cats, **kw).fit(df)[-1].selection_ == "aim"


def test_auto_with_a_target_runs_mst_where_it_would_run_aim():
    """With ``target`` auto never runs AIM (MST's target-weighted tree served
    the model better on real tables; ``rules.auto_none_factor``'s note):
    where it would, it takes the plan of least expected error without AIM,
    every table, MST's tree or the 1-way tables with the target's pairs
    worth their noise (``auto_estimates``, recomputed here from the plan)."""
    df, cats = _wide(n=1000, a=20)
    kw = dict(epsilon=0.3, n_rows=1000, random_state=0)
    assert _pipe(cats, **kw).fit(df)[-1].selection_ == "aim"
    est = _pipe(cats, target="x3", **kw).fit(df)[-1]
    plan = est.plan_
    e = choice.auto_estimates(
        plan.workload,
        plan.residual_scales,
        plan.noise_sigma,
        1000,
        est._rules,
        "add-remove-one",
        "x3",
        True,
    )
    errors = {
        "none": est._rules.auto_none_factor * e["none"],
        "mst": e["mst"],
        "one-way": e["one-way"],
    }
    assert est.selection_ == min(errors, key=errors.get) != "aim"


def test_aim_rounds_refit_a_model_of_aim_model_rows(monkeypatch):
    """AIM's rounds refit the generator on ``min(n̂, AIM_MODEL_ROWS)`` rows
    (4096 = ``generator.BATCH_ROWS``: every descent step sees
    the whole model; 6000 before, measured slower and no better). A spy on
    ``fit_rows`` records each refit's model size: 10,000 rows at ε = 10
    make ``n̂`` far above 4096, so every refit has exactly 4096."""
    from skdp_synth.gaussian_release import _selection as selection

    sizes = []
    original = selection.fit_rows

    def spy(ms, n_levels, N, **kw):
        sizes.append(N)
        return original(ms, n_levels, N, **kw)

    monkeypatch.setattr(selection, "fit_rows", spy)
    df, cats = _frame(n=10_000)
    _pipe(cats, epsilon=10.0, selection="aim", random_state=0).fit(df)
    assert len(sizes) >= 2  # the first fit and at least one round
    assert set(sizes) == {selection.AIM_MODEL_ROWS} == {4096}


def test_a_mistyped_target_suggests_the_column():
    """``target="A"`` on a table with ``a``: the error lists the columns and
    suggests the near one (names are public: the schema)."""
    df, cats = _frame(200)
    pipe = _pipe(cats, epsilon=1.0, delta=1e-6, random_state=0, target="A")
    with pytest.raises(ValueError, match=r"unknown attribute 'A'.*Did you mean 'a'"):
        pipe.fit(df)


def test_exponential_mechanism_at_an_infinite_epsilon_takes_the_best_score():
    """ε = inf (a huge ε's share converted by ``pure_dp_of_gdp_mu``) is the
    mechanism's limit: a uniform draw among the best scores, not the NaN
    probabilities of ``inf * 0``."""
    rng = np.random.default_rng(0)
    scores = np.array([1.0, 5.0, 3.0, 5.0])
    picks = {sel.exponential_mechanism(scores, np.inf, 1.0, rng) for _ in range(50)}
    assert picks == {1, 3}
    assert math.isinf(sel.pure_dp_of_gdp_mu(1e6))


@pytest.mark.parametrize("selection", ["mst", "aim", "auto"])
def test_a_huge_epsilon_fits_every_selection_rule(selection):
    """The suite's noise-free ceiling (ε = 1e6) runs the selection steps."""
    rng = np.random.default_rng(0)
    n = 400
    a = rng.integers(0, 3, n)
    df = pd.DataFrame(
        {
            "a": a.astype(str),
            "b": ((a + rng.integers(0, 2, n)) % 3).astype(str),
            "c": rng.integers(0, 2, n).astype(str),
        }
    )
    from skdp_synth.exceptions import PrivacyBudgetWarning
    from skdp_synth.preprocessing import BooleanEncoder

    cats = {c: sorted(df[c].unique()) for c in df}
    with pytest.warns(PrivacyBudgetWarning, match="exceeds 10"):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(categories=cats),
            ProjectedGaussianRelease(
                epsilon=1e6, delta=1e-6, selection=selection, random_state=0
            ),
        ).fit(df)
    assert len(pipe.sample(50, random_state=1)) == 50


# ------------------------------------------------- auto's AIM: joining columns
def _cover_case(n_hat, share=0.1):
    """Four binary columns, AIM having chosen only ``(0, 1)``: the cover
    step's inputs (every pair a candidate)."""
    levels = np.array([2, 2, 2, 2])
    cand = list(itertools.combinations(range(4), 2))
    rng = np.random.default_rng(1)
    data = [rng.integers(0, 50, 4).astype(float) for _ in cand]
    model = [np.full(4, 25.0) for _ in cand]
    w = np.ones(len(cand))
    res = sel.SelectionResult("aim")
    res.chosen = [(0, 1)]
    delta = score_sensitivity(w, "add-remove-one")
    c = 2.0
    cover = (share, 0.3, DEFAULT_RULES.auto_edge_threshold)
    return res, cand, data, model, w, delta, cover, levels, n_hat, c


def _run_cover(case, rng):
    sel._cover_attributes(*case, "add-remove-one", rng)


def test_aim_cover_joins_every_column_at_a_trees_per_edge_share():
    """Where every pair is worth its noise (a large public ``n``), the cover
    step joins the three components AIM's one pair leaves (``{0, 1}``,
    ``{2}``, ``{3}``) with exactly two exponential mechanisms, each at the
    per-edge share of a tree's selection at ``share`` (``share / (a - 1)``,
    ``a = 4``) and ``ε = pure_dp_of_gdp_mu(sqrt(share / 3) / c)``; the
    chosen pairs make the graph connected."""
    case = _cover_case(1e6)
    res, cand, c = case[0], case[1], case[9]
    _run_cover(case, np.random.default_rng(0))
    joins = res.chosen[1:]
    assert len(joins) == 2 and all(S in cand for S in joins)
    assert sel._n_components(range(4), res.chosen) == 1
    edge = 0.1 / 3
    assert res.spent["select"] == edge + edge
    assert res.epsilons == [pure_dp_of_gdp_mu(math.sqrt(edge) / c)] * 2


def test_aim_cover_joins_nothing_where_no_pair_is_worth_its_noise():
    """At ``n = 20`` no pair's expected TV noise in the final measurement is
    under auto's edge threshold (:func:`_pair_capacity`): no join, nothing
    spent, no random draw made (the later draws are the paper's AIM's)."""
    case = _cover_case(20.0)
    res, cand, cover, levels, c = case[0], case[1], case[6], case[7], case[9]
    cap = sel._pair_capacity(levels, cand, 0.3, c, "add-remove-one", 20.0, cover[2])
    assert np.all(cap < 3)  # fewer tables than the one chosen plus two joins
    rng = np.random.default_rng(0)
    _run_cover(case, rng)
    assert res.chosen == [(0, 1)] and res.spent["select"] == 0.0
    assert res.epsilons == []
    assert rng.random() == np.random.default_rng(0).random()


def _frame_loose(n=3000, seed=0):
    """``_frame``'s five columns and three of 10 levels independent of every
    other, which AIM's rounds tend to leave in no pair (their pairs' noise
    is charged over 20-100 cells)."""
    df, cats = _frame(n, seed)
    rng = np.random.default_rng(seed + 1)
    for k in range(3):
        df[f"f{k}"] = rng.integers(0, 10, n).astype(str)
        cats[f"f{k}"] = sorted(df[f"f{k}"].unique())
    return df, cats


@pytest.mark.parametrize("neighbouring", ["add-remove-one", "replace-one"])
def test_auto_aim_joins_its_columns_and_spends_exactly_the_budget(
    monkeypatch, neighbouring
):
    """auto's AIM (the rule forced to AIM, at the paper's penalty) runs
    the paper's rounds, then joins what they left apart: the chosen
    tables start with the rounds'
    own (the same draws as with ``aim_cover_share = 0``) and cover every
    column; the fit still spends exactly its budget (Σ μ² = 1/c²), the
    joins paid from the final share. ``selection="aim"`` is the paper's:
    the same tables whatever ``aim_cover_share``."""
    import skdp_synth.gaussian_release._measuring as measuring
    import skdp_synth.gaussian_release._planning as planning

    # auto decides at plan time with a public n (replace-one), else after the
    # noisy total
    for site in (measuring, planning):
        monkeypatch.setattr(site, "auto_rule", lambda *a, **k: "aim")
    # at the paper's penalty the rounds leave a loose column apart (at
    # auto's smaller one they may measure every column themselves)
    _set_rules(monkeypatch, aim_penalty_factor=1.0)
    df, cats = _frame_loose()
    c = analytic_gaussian_sigma(0.5, 1e-6)
    kw = dict(epsilon=0.5, neighbouring=neighbouring, random_state=0)
    est = _pipe(cats, selection="auto", **kw).fit(df)[-1]
    assert est.selection_ == "aim"
    chosen = est._selection_result.chosen
    assert {j for S in chosen for j in S} == set(range(8))
    assert _mu2(est) == pytest.approx(1.0 / c**2, rel=1e-9)
    assert sum(est.selection_shares_.values()) == pytest.approx(1.0, rel=1e-12)

    _set_rules(monkeypatch, aim_cover_share=0.0)
    paper = _pipe(cats, selection="auto", **kw).fit(df)[-1]
    rounds = paper._selection_result.chosen
    assert {j for S in rounds for j in S} != set(range(8))  # a column left out
    assert chosen[: len(rounds)] == rounds and len(chosen) > len(rounds)
    assert _mu2(paper) == pytest.approx(1.0 / c**2, rel=1e-9)

    explicit = _pipe(cats, selection="aim", **kw).fit(df)[-1]._selection_result
    _set_rules(monkeypatch, aim_cover_share=0.1)
    again = _pipe(cats, selection="aim", **kw).fit(df)[-1]._selection_result
    assert again.chosen == explicit.chosen and again.epsilons == explicit.epsilons


def test_aim_cover_counts_a_chosen_triple_as_one_component():
    """With ``d = 3`` AIM chooses triples: a chosen ``(0, 1, 2)`` joins its
    three columns, so one join is left (to column 3), one mechanism."""
    case = _cover_case(1e6)
    res = case[0]
    res.chosen = [(0, 1, 2)]
    _run_cover(case, np.random.default_rng(0))
    assert len(res.chosen) == 2 and 3 in res.chosen[1]
    assert len(res.epsilons) == 1 and res.spent["select"] == 0.1 / 3
