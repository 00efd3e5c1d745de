"""The pairs' dependence ``selection="auto"`` measures (gaussian_release.
_dependence): the statistic, its sensitivity, the noise it gets, the
estimate built from it, and the budget of the fits that measure it."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.gaussian_release import _measuring
from skdp_synth.gaussian_release._coarse_pairs import ordinal_levels
from skdp_synth.gaussian_release._dependence import (
    dependence_estimate,
    dependence_sensitivity,
    measurement_weight,
    noise_scale,
    none_wins_at_any_dependence,
    pair_dependence,
)
from skdp_synth.gaussian_release._rules import DEFAULT_RULES
from skdp_synth.mechanisms import NoiseSource, analytic_gaussian_sigma
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.workloads import AttributeMarginalWorkload


def _set_rules(monkeypatch, **changes):
    rules = dataclasses.replace(ProjectedGaussianRelease._rules, **changes)
    monkeypatch.setattr(ProjectedGaussianRelease, "_rules", rules)
    return rules


def _pipe(cats, **kw):
    return make_synthesis_pipeline(
        BooleanEncoder(categories=cats), ProjectedGaussianRelease(**kw)
    )


def _t(counts):
    """``T = ½ Σ |N_ab - N_a N_b / n|`` of one table, directly."""
    N = np.asarray(counts, dtype=float)
    n = N.sum()
    if n == 0:
        return 0.0
    return 0.5 * np.abs(N - np.outer(N.sum(1), N.sum(0)) / n).sum()


# ------------------------------------------------------------ the statistic
def test_pair_dependence_is_the_mean_count_tv_to_independence():
    """On hand tables: independent counts give 0, a diagonal ``[[n/2, 0],
    [0, n/2]]`` gives ``n/2`` (TV ½ times ``n``), and the mean is over the
    pairs given."""
    levels = [2, 2, 3]
    tables = {
        (0, 1): np.array([50, 0, 0, 50]),
        (0, 2): np.array([10, 20, 30, 10, 20, 30]),  # a product: independent
        (1, 2): np.array([0, 0, 0, 0, 0, 0]),
    }
    assert pair_dependence(tables, [(0, 1)], levels) == 50.0
    assert pair_dependence(tables, [(0, 2)], levels) == 0.0
    assert pair_dependence(tables, [(1, 2)], levels) == 0.0
    assert pair_dependence(tables, [(0, 1), (0, 2)], levels) == 25.0
    assert pair_dependence(tables, [], levels) == 0.0


def test_the_sensitivity_and_noise_scale_are_the_derived_ones():
    """``Δ = 2`` under add/remove, 4 under replace-one; the noise is ``c Δ /
    sqrt(f)`` (``doc/privacy/gaussian_release.md``, "The pairs'
    dependence"). Changing either changes the guarantee: this test pins them."""
    assert dependence_sensitivity("add-remove-one") == 2.0
    assert dependence_sensitivity("replace-one") == 4.0
    with pytest.raises(ValueError, match="neighbouring"):
        dependence_sensitivity("swap")
    c = analytic_gaussian_sigma(1.0, 1e-6)
    assert noise_scale(c, 0.02, "add-remove-one") == pytest.approx(
        c * 2.0 / math.sqrt(0.02), rel=1e-15
    )
    assert noise_scale(c, 0.25, "replace-one") == pytest.approx(c * 8.0, rel=1e-15)


def _adversarial_tables(rng, k_a, k_b, n):
    """Tables from independent, diagonal, one-heavy-cell and sparse draws."""
    kind = rng.integers(4)
    if kind == 0:
        p = np.outer(rng.dirichlet(np.ones(k_a)), rng.dirichlet(np.ones(k_b)))
    elif kind == 1:
        p = np.eye(k_a, k_b) + 1e-3
    elif kind == 2:
        p = np.full((k_a, k_b), 1e-3)
        p[0, 0] = 1.0
    else:
        p = rng.dirichlet(np.full(k_a * k_b, 0.1)).reshape(k_a, k_b)
    p = p / p.sum()
    return rng.multinomial(n, p.ravel()).reshape(k_a, k_b)


def test_one_record_moves_each_pair_by_less_than_the_sensitivity():
    """Adding one record (every cell it can fall in) moves ``T_ij`` by less
    than 2, for small and large ``n`` and every shape of table; so the mean
    over pairs moves by less than ``Δ = 2`` and a replacement by less than
    4. The bound is the derived one's: the largest change seen is reported
    against it (it approaches 2 only as ``n`` grows, on a diagonal)."""
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(300):
        k_a, k_b = rng.integers(2, 6, size=2)
        n = int(rng.choice([0, 1, 2, 5, 30, 1000]))
        N = _adversarial_tables(rng, k_a, k_b, n)
        base = _t(N)
        for x in range(k_a):
            for y in range(k_b):
                M = N.copy()
                M[x, y] += 1
                worst = max(worst, abs(_t(M) - base))
                if N[x, y] > 0:  # the replacement: remove one, add another
                    R = N.copy()
                    R[x, y] -= 1
                    R[rng.integers(k_a), rng.integers(k_b)] += 1
                    assert abs(_t(R) - base) < dependence_sensitivity("replace-one")
    assert worst < dependence_sensitivity("add-remove-one")
    # the bound is not loose by more than a factor of 2 on these tables
    assert worst > 1.0


# ------------------------------------------------------------ the estimate
def test_the_estimate_shrinks_to_the_constant_as_the_noise_grows():
    """``w α D̂ + (1 - w) D_0``, ``w = τ² / (τ² + (α σ_D)²)``: the constant
    when the measurement is all noise, ``α D̂`` when it is exact, clipped to
    ``[0, 1]`` before scaling."""
    R = DEFAULT_RULES
    a, tau, d0 = (
        R.auto_dependence_scale,
        R.auto_dependence_prior_sd,
        R.auto_tv_threshold,
    )
    n = 10_000.0
    assert dependence_estimate(0.3 * n, n, 0.0, R) == pytest.approx(a * 0.3, rel=1e-12)
    assert dependence_estimate(0.3 * n, n, 1e12, R) == pytest.approx(d0, rel=1e-9)
    assert dependence_estimate(-5.0 * n, n, 0.0, R) == 0.0
    assert dependence_estimate(5.0 * n, n, 0.0, R) == pytest.approx(a, rel=1e-12)
    sd = 0.05 * n  # σ_D = 0.05
    w = tau**2 / (tau**2 + (a * 0.05) ** 2)
    assert dependence_estimate(0.2 * n, n, sd, R) == pytest.approx(
        w * a * 0.2 + (1 - w) * d0, rel=1e-12
    )
    # a noisy total below 1 counts as 1 (no division by ~0)
    assert dependence_estimate(0.5, -3.0, 0.0, R) == pytest.approx(a * 0.5, rel=1e-12)


def _columns(n, dependent, a=8, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 3, n)
    cols = {}
    for j in range(a):
        own = rng.integers(0, 3, n)
        cols[f"x{j}"] = np.where(rng.random(n) < 0.9, base, own) if dependent else own
    df = pd.DataFrame(cols).astype(str)
    return df, {col: ["0", "1", "2"] for col in df}


@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.IndependentColumnsWarning")
def test_auto_sees_strong_and_absent_dependence():
    """20,000 rows, 8 columns of 3 levels at ε = 0.3: where every column
    copies one base column 90 % of the time the measured ``D`` is far above
    the constant (the mean pair's TV to independence is about 0.54: ``α``
    times it, the noise ``σ_D`` about 0.002); where they are independent it
    is near 0. The fits spend exactly their budget."""
    seen = {}
    for dependent in (True, False):
        df, cats = _columns(20_000, dependent)
        est = _pipe(cats, epsilon=0.3, random_state=0).fit(df)[-1]
        dep = est._auto_dependence
        assert dep is not None and est.selection_shares_["dependence"] == (
            DEFAULT_RULES.auto_dependence_share
        )
        assert sum(est.selection_shares_.values()) == pytest.approx(1.0, rel=1e-12)
        seen[dependent] = dep["D"]
    a = DEFAULT_RULES.auto_dependence_scale
    assert seen[True] > a * 0.45 > DEFAULT_RULES.auto_tv_threshold
    assert seen[False] < 0.25 * DEFAULT_RULES.auto_tv_threshold


# ---------------------------------------------------------------- budget
def _every_table_after_the_dependence(monkeypatch, **kw):
    """A fit (600 rows, 44 columns, ε = 0.5) where the dependence is
    measured and every table then wins: a constant ``D`` so large that the
    selected plans lose once it is the estimate (``τ = 0``), though every
    table does not win at ``D = 0``."""
    _set_rules(
        monkeypatch,
        auto_tv_threshold=10.0,
        auto_dependence_prior_sd=0.0,
        auto_dependence_min_weight=0.0,
    )
    rng = np.random.default_rng(0)
    n, a = 600, 44
    df = pd.DataFrame({f"x{j}": rng.integers(0, 3, n) for j in range(a)}).astype(str)
    cats = {col: ["0", "1", "2"] for col in df}
    return _pipe(cats, epsilon=0.5, random_state=0, **kw).fit(df)[-1]


def test_every_table_after_the_dependence_spends_exactly_the_budget(monkeypatch):
    """With a constant ``D`` so large that every table wins once it is
    measured (``τ = 0``: the estimate is the constant), but every table does
    not win at ``D = 0``: the dependence is measured, every table is taken,
    and its residuals' noise is ``c τ r``, ``r² = (1 - f0) / (1 - f0 -
    f_dep)``, the total's ``c τ_∅``: the shares sum to 1."""
    est = _every_table_after_the_dependence(monkeypatch)
    assert est.selection_ == "none"
    shares = est.selection_shares_
    assert set(shares) == {"count", "dependence", "final"}
    assert sum(shares.values()) == pytest.approx(1.0, rel=1e-12)
    f0, f_dep = shares["count"], shares["dependence"]
    assert f_dep == ProjectedGaussianRelease._rules.auto_dependence_share
    assert f0 == est.plan_.selection["count_share"]
    plan_scales = est.plan_.noise_sigma * est.plan_.residual_scales
    r = math.sqrt((1 - f0) / (1 - f0 - f_dep))
    i0 = est.workload_.subsets.index(())
    expected = plan_scales * r
    expected[i0] = plan_scales[i0]
    np.testing.assert_allclose(est.residual_scales_, expected, rtol=1e-12)
    # Σ over residuals of (sensitivity / noise)² at the whitened scale: the
    # share of each part, (1 - f0) / r² + f0 + f_dep = 1
    assert (1 - f0) / r**2 + f0 + f_dep == pytest.approx(1.0, rel=1e-12)


def test_the_added_noise_brings_each_residual_to_its_new_scale():
    """``_all_tables_after_dependence`` adds independent noise to every
    whitened entry but the total's, so that the entries of a draw at ``c``
    end at ``c r``; the total's entry is left as read. Checked on 4,000
    draws by a chi-square test of the variance (two-sided, false-failure
    rate 1e-3 at the fixed seed)."""
    W = AttributeMarginalWorkload([3, 2], 2)
    tau = np.linspace(0.5, 1.5, len(W.subsets))
    c, f0, f_dep = 0.7, 0.05, 0.02
    r = math.sqrt((1 - f0) / (1 - f0 - f_dep))
    i0 = W.subsets.index(())
    source = NoiseSource(0)
    size = len(W.whiten({A: np.zeros(W.residual_size(A)) for A in W.subsets}, tau))
    draws = []
    for _ in range(4000):
        t_noisy = source.gaussian(np.zeros(size), c)
        m = _measuring._all_tables_after_dependence(
            t_noisy, W, tau, c, f0, f_dep, source, None
        )
        z = np.concatenate([m.released[A] / tau[i] for i, A in enumerate(W.subsets)])
        draws.append(z)
    z = np.array(draws)
    at = sum(W.residual_size(A) for A in W.subsets[:i0])
    for k in range(size):
        scale = c if k == at else c * r
        stat = np.sum(z[:, k] ** 2) / scale**2
        p = stats.chi2.cdf(stat, df=len(z))
        assert 0.5e-3 / size < p < 1 - 0.5e-3 / size


def test_nothing_is_spent_where_every_table_wins_whatever_the_dependence():
    """Where every table wins at ``D = 0`` (a narrow table, many rows, a
    large ε) the measurement could not change the choice: it is skipped,
    and the release is the all-tables plan's, as before."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"x{j}": rng.integers(0, 2, 20_000) for j in range(3)}).astype(
        str
    )
    cats = {col: ["0", "1"] for col in df}
    est = _pipe(cats, epsilon=3.0, random_state=0).fit(df)[-1]
    assert est.selection_ == "none"
    assert est._auto_dependence is None
    assert est.selection_shares_ == {"final": 1.0}


@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.IndependentColumnsWarning")
def test_a_zero_share_keeps_the_constant(monkeypatch):
    """``auto_dependence_share = 0``: nothing measured, the constant ``D``."""
    _set_rules(monkeypatch, auto_dependence_share=0.0)
    df, cats = _columns(3000, True)
    est = _pipe(cats, epsilon=0.3, random_state=0).fit(df)[-1]
    assert est._auto_dependence is None
    assert "dependence" not in est.selection_shares_


@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.IndependentColumnsWarning")
def test_a_measurement_that_would_carry_little_weight_is_not_made(monkeypatch):
    """3,000 rows at ε = 0.3: ``σ_D`` is about 0.07, so the measurement would
    carry ``w`` of about 0.2 < ``auto_dependence_min_weight``: nothing is
    spent and the fit is the one with no dependence share at all (the same
    draws)."""
    df, cats = _columns(3000, True)
    rules = ProjectedGaussianRelease._rules
    c = analytic_gaussian_sigma(0.3, 1e-6)
    sd = noise_scale(c, rules.auto_dependence_share, "add-remove-one")
    assert measurement_weight(3000, sd, rules) < rules.auto_dependence_min_weight
    est = _pipe(cats, epsilon=0.3, random_state=0).fit(df)[-1]
    assert est._auto_dependence is None
    assert "dependence" not in est.selection_shares_
    _set_rules(monkeypatch, auto_dependence_share=0.0)
    same = _pipe(cats, epsilon=0.3, random_state=0).fit(df)[-1]
    assert same.selection_ == est.selection_
    np.testing.assert_array_equal(same.released_, est.released_)


@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.IndependentColumnsWarning")
def test_the_choice_reads_the_measured_dependence_and_public_quantities(
    auto_estimates_calls,
):
    """Where the dependence is measured, ``auto_estimates`` is called twice
    with the plan's public quantities and the noisy total: at ``D = 0``
    (could the measurement change the choice?), then with the measured
    ``D`` after its share; ``D`` is post-processing of the noisy mean, the
    noisy total and the public noise scale."""
    calls = auto_estimates_calls
    df, cats = _columns(20_000, True)
    est = _pipe(cats, epsilon=0.3, random_state=0).fit(df)[-1]
    assert len(calls) == 2
    plan = est.plan_
    f0, f_dep = plan.selection["count_share"], est.selection_shares_["dependence"]
    dep, rules = est._auto_dependence, ProjectedGaussianRelease._rules
    # every table won after the measurement: the released total is the noisy
    # total the choice read
    assert est.selection_ == "none"
    n = est.n_estimate_
    for (W, tau, c, n_seen, r, nb, target, default_pairs), _ in calls:
        assert W is plan.workload and c == plan.noise_sigma
        np.testing.assert_array_equal(tau, plan.residual_scales)
        assert r is rules and nb == "add-remove-one" and n_seen == n
        assert target is None and default_pairs is True
    # the attributes' groupable ordinal levels: the encoder's blocks, public
    want = ordinal_levels(est.blocks_, est.blocks_.n_levels)
    for _, kw in calls:
        np.testing.assert_array_equal(kw.pop("ordinal"), want)
    assert calls[0][1] == {"spent": f0, "D": 0.0}
    assert calls[1][1] == {"spent": f0 + f_dep, "D": dep["D"]}
    assert dep["noise_sd"] == noise_scale(c, f_dep, "add-remove-one")
    assert dep["D"] == dependence_estimate(dep["noisy_mean"], n, dep["noise_sd"], rules)


@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.IndependentColumnsWarning")
@pytest.mark.parametrize("columns", [3, 8, 30])
def test_the_selected_plans_estimates_never_fall_as_d_grows(columns):
    """Why the measurement is skipped where every table wins at ``D = 0``:
    over a grid of ``D``, ``n`` and ``ε``, the all-tables estimate does not
    hold ``D`` and every selected plan's estimate is non-decreasing in it,
    so the pick at ``D = 0`` being every table means it is at every ``D``."""
    from skdp_synth.gaussian_release import _plan_choice as sel

    df, cats = _columns(500, False, a=columns)
    rules = ProjectedGaussianRelease._rules
    grid = np.linspace(0.0, 1.0, 41)
    for eps in (0.1, 1.0, 10.0):
        plan = _pipe(cats, epsilon=eps, n_rows=500, random_state=0).fit(df)[-1].plan_
        W, tau, c = plan.workload, plan.residual_scales, plan.noise_sigma
        for n in (100.0, 3_000.0, 300_000.0):
            ests = [
                sel.auto_estimates(
                    W, tau, c, n, rules, "add-remove-one", None, True, spent=0.02, D=d
                )
                for d in grid
            ]
            assert len({e["none"] for e in ests}) == 1
            for plan_name in ("mst", "one-way", "aim"):
                values = np.array([e[plan_name] for e in ests])
                assert np.all(np.diff(values) >= -1e-12 * np.abs(values[1:])), plan_name
            if none_wins_at_any_dependence(
                W, tau, c, n, rules, "add-remove-one", None, True, spent=0.02
            ):
                picks = {
                    sel.auto_rule(
                        W, tau, c, n, rules, "add-remove-one", None, True, 0.02, D=d
                    )
                    for d in grid
                }
                assert picks == {"none"}


# ------------------------------------------------------- a public n (replace-one)
@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.IndependentColumnsWarning")
def test_replace_one_measures_the_dependence_with_its_own_sensitivity():
    """Under replace-one ``n`` is public: no noisy total is drawn (the plan's
    count share is 0), the plan leaves the choice to the measured dependence,
    whose noise is ``c Δ / sqrt(f)`` at ``Δ = 4``, and ``D`` divides by the
    rows' own count."""
    df, cats = _columns(20_000, True)
    est = _pipe(cats, epsilon=0.3, neighbouring="replace-one", random_state=0)
    est = est.fit(df)[-1]
    plan, rules = est.plan_, ProjectedGaussianRelease._rules
    assert plan.selection["rule"] == "auto" and plan.selection["count_share"] == 0.0
    dep, f_dep = est._auto_dependence, rules.auto_dependence_share
    assert dep["noise_sd"] == noise_scale(plan.noise_sigma, f_dep, "replace-one")
    assert dep["noise_sd"] == pytest.approx(
        plan.noise_sigma * 4.0 / math.sqrt(f_dep), rel=1e-15
    )
    assert dep["D"] == dependence_estimate(
        dep["noisy_mean"], 20_000, dep["noise_sd"], rules
    )
    assert dep["D"] > rules.auto_dependence_scale * 0.45 > rules.auto_tv_threshold
    assert "count" not in est.selection_shares_


def test_replace_one_every_table_after_the_dependence_spends_exactly_the_budget(
    monkeypatch,
):
    """Every table after the measurement under replace-one: one draw at
    share ``1 - f_D`` (noise ``c τ r``, ``r² = 1 / (1 - f_D)``), the public
    total released exactly, and the shares sum to 1."""
    est = _every_table_after_the_dependence(monkeypatch, neighbouring="replace-one")
    n = 600
    assert est.selection_ == "none"
    shares = est.selection_shares_
    f_dep = ProjectedGaussianRelease._rules.auto_dependence_share
    assert shares == {"dependence": f_dep, "final": 1.0 - f_dep}
    assert sum(shares.values()) == pytest.approx(1.0, rel=1e-12)
    r = math.sqrt(1.0 / (1.0 - f_dep))
    np.testing.assert_allclose(
        est.residual_scales_,
        est.plan_.noise_sigma * est.plan_.residual_scales * r,
        rtol=1e-12,
    )
    # the whole plan at noise c is share 1, so at c r it is 1 / r²
    assert 1.0 / r**2 + f_dep == pytest.approx(1.0, rel=1e-12)
    i0 = est.workload_.subsets.index(())
    assert est.residual_scales_[i0] == 0.0  # the public total: no noise
    assert est.n_estimate_ == n


@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.IndependentColumnsWarning")
def test_replace_one_selected_plan_runs_on_what_the_dependence_left(monkeypatch):
    """A selected plan after the measurement (every table priced out, ``κ =
    ∞``): its shares are the dependence's and the rule's on ``1 - f_D``,
    summing to 1, with no noisy total."""
    _set_rules(monkeypatch, auto_none_factor=math.inf)
    df, cats = _columns(20_000, True)
    est = _pipe(cats, epsilon=1.0, neighbouring="replace-one", random_state=0)
    est = est.fit(df)[-1]
    assert est.selection_ in ("mst", "aim", "one-way")
    shares = est.selection_shares_
    assert shares["dependence"] == ProjectedGaussianRelease._rules.auto_dependence_share
    assert "count" not in shares
    assert sum(shares.values()) == pytest.approx(1.0, rel=1e-12)


def test_replace_one_without_the_measurement_is_the_plan_time_choice(monkeypatch):
    """Where the measurement is skipped under replace-one (small ``ε n``:
    weight below the minimum) the rule is fixed by the plan, before the
    data is read, and the fit is the one with no dependence share at all."""
    df, cats = _columns(3000, True)
    est = _pipe(cats, epsilon=0.3, neighbouring="replace-one", random_state=0)
    est = est.fit(df)[-1]
    assert est.plan_.selection["rule"] != "auto"
    assert est._auto_dependence is None
    _set_rules(monkeypatch, auto_dependence_share=0.0)
    same = _pipe(cats, epsilon=0.3, neighbouring="replace-one", random_state=0)
    same = same.fit(df)[-1]
    assert same.selection_ == est.selection_
    np.testing.assert_array_equal(same.released_, est.released_)


@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.IndependentColumnsWarning")
def test_n_rows_under_add_remove_keeps_the_constant():
    """``n_rows`` under add/remove only bounds the rows: the choice is made
    at plan time with the constant ``D``, nothing is measured."""
    df, cats = _columns(20_000, True)
    est = _pipe(cats, epsilon=0.3, n_rows=25_000, random_state=0).fit(df)[-1]
    assert est.plan_.selection["rule"] != "auto"
    assert est._auto_dependence is None
    assert "dependence" not in est.selection_shares_


def test_the_replace_one_draw_brings_each_residual_to_its_new_scale():
    """``_all_tables_at`` draws every whitened residual at ``c r``, ``r² = 1
    / (1 - f_D)``. Checked on 4,000 draws of an all-zero table by a
    chi-square test of each entry's variance (two-sided, false-failure rate
    1e-3 at the fixed seed)."""
    W = AttributeMarginalWorkload([3, 2], 2)
    tau = np.linspace(0.5, 1.5, len(W.subsets))
    tau[W.subsets.index(())] = 0.0  # replace-one: the total is public
    c, f_dep = 0.7, 0.02
    r = math.sqrt(1.0 / (1.0 - f_dep))
    source = NoiseSource(0)
    zeros = {S: np.zeros(int(np.prod([[3, 2][j] for j in S]))) for S in W.tables}
    kept = [i for i, t in enumerate(tau) if t > 0]
    draws = []
    for _ in range(4000):
        m = _measuring._all_tables_at(zeros, W, tau, c, f_dep, 0, source, None)
        draws.append(np.concatenate([m.released[W.subsets[i]] / tau[i] for i in kept]))
    z = np.array(draws)
    for k in range(z.shape[1]):
        stat = np.sum(z[:, k] ** 2) / (c * r) ** 2
        p = stats.chi2.cdf(stat, df=len(z))
        assert 0.5e-3 / z.shape[1] < p < 1 - 0.5e-3 / z.shape[1]
