"""auto's tree measures its pairs on coarsened levels of their ordinal columns
(:mod:`skdp_synth.gaussian_release._coarse_pairs`): the group rule, the
measurement's exactness, its sensitivity, and the estimator's budget."""

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.blocks import Blocks
from skdp_synth.gaussian_release import _coarse_pairs as cp
from skdp_synth.gaussian_release import _measuring
from skdp_synth.gaussian_release._rules import DEFAULT_RULES
from skdp_synth.gaussian_release._selection import gdp_mu_of_pure_dp
from skdp_synth.mechanisms import analytic_gaussian_sigma
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.workloads import AttributeMarginalWorkload


def test_the_rule_is_pinned():
    """``κ`` = 3 is the value the TUNE half chose (``ReleaseRules``)."""
    assert DEFAULT_RULES.auto_mst_pair_kappa == 3.0


@pytest.mark.parametrize(
    "n, c, f, K, kappa",
    [
        (3886, 20.956, 0.398, 24, 3.0),
        (16992, 27.427, 0.391, 20, 1.0),
        (50, 9.0, 0.4, 5, 3.0),
    ],
)
def test_group_count_keeps_kappa_noise_sds_per_mean_cell(n, c, f, K, kappa):
    """``g`` is the largest whole number with ``n / g² >= κ σ``, ``σ = c
    sqrt(K / f)``, and never under 2."""
    g = cp.group_count(n, c, f, K, kappa)
    sigma = c * math.sqrt(K / f)
    assert g >= 2
    if g > 2:
        assert n / g**2 >= kappa * sigma
    assert n / (g + 1) ** 2 < kappa * sigma
    # the fertil2 case of the module docstring (ε = 0.3): two groups
    assert cp.group_count(3886, 20.956, 0.398, 24, 3.0) == 2


def _blocks():
    return Blocks.from_spec(
        [
            {"name": "x", "kind": "thermometer", "width": 8},  # 9 levels
            {"name": "y", "kind": "thermometer", "width": 6, "missing": True},
            {"name": "z", "kind": "onehot", "width": 7},
            {"name": "w", "kind": "thermometer", "width": 2},  # 3 levels
        ],
        23,
    )


def test_level_groups_are_runs_of_ordinal_levels():
    """Adjacent levels of about equal released mass; a heavy level alone; the
    missing level its own group; one-hot and short columns untouched."""
    blocks = _blocks()
    levels = blocks.n_levels
    probs = {
        0: np.array([0.5, 0.05, 0.05, 0.05, 0.05, 0.1, 0.1, 0.05, 0.05]),
        1: np.array([0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1]),
        2: np.full(7, 1 / 7),
        3: np.full(3, 1 / 3),
    }
    groups = cp.level_groups(blocks, levels, probs, 3)
    assert sorted(groups) == [0, 1]
    x = groups[0]
    # mid-masses .25 .525 .575 .625 .675 .75 .85 .925 .975, times 3, floored
    assert x.tolist() == [0, 1, 1, 1, 2, 2, 2, 2, 2]  # level 0 holds half
    y = groups[1]
    assert y[-1] == y[:-1].max() + 1  # the missing level alone
    assert np.all(np.diff(y[:-1]) >= 0) and y[:-1].max() + 1 <= 3
    assert len(y) == levels[1]
    # a named target keeps its levels
    assert sorted(cp.level_groups(blocks, levels, probs, 3, keep=(0,))) == [1]


def _exact_source():
    class Exact:
        """A noise source that adds nothing: the measurement's algebra alone."""

        def gaussian(self, t, sigma):
            return np.asarray(t, dtype=np.float64).copy()

    return Exact()


def _exact_tables(levels, n, seed):
    """Random rows on ``levels`` and every 1- and 2-way table of them."""
    rng = np.random.default_rng(seed)
    rows = np.column_stack([rng.integers(0, k, n) for k in levels])
    W_all = AttributeMarginalWorkload(levels, 2)
    tables = {S: W_all.table(rows, S) for S in W_all.tables}
    tables.update({(j,): W_all.table(rows, (j,)) for j in range(len(levels))})
    return rows, W_all, tables


def _measure_exactly(tables, levels, chosen, groups):
    """:func:`measure_coarsened` at share and ``c`` 1 without noise."""
    return cp.measure_coarsened(
        tables,
        levels,
        chosen,
        {},
        1.0,
        1.0,
        "add-remove-one",
        _exact_source(),
        None,
        groups,
    )


def test_coarse_measurements_are_exact_linear_maps_of_the_fine_tables():
    """Without noise every measurement handed to the generator equals its
    query applied to the fine table it names, and the fine workload's
    residuals are the exact ones: the coarse copies are sums of fine cells,
    nothing else."""
    levels = np.array([9, 4, 6])
    rows, W_all, tables = _exact_tables(levels, 500, 0)
    groups = {0: np.array([0, 0, 0, 1, 1, 1, 2, 2, 2]), 2: np.array([0, 0, 1, 1, 2, 2])}
    chosen = [(0, 1), (1, 2)]
    released, scales, W, coarse = _measure_exactly(tables, levels, chosen, groups)
    # the coarsened columns' fine 1-ways, and column 1's: every table it is
    # in holds a coarse copy, and its 1-way residual (measured inside them)
    # must still reach the generator
    assert sorted(W.tables) == [(0,), (1,), (2,)]
    exact = W.residuals(tables)
    for A in W.subsets:
        np.testing.assert_allclose(released[A], exact[A], rtol=1e-12, atol=1e-9)
    named = sorted(m.attributes for m in coarse)
    assert named == [(0, 1), (1, 2)]
    for m in coarse:
        T = W_all.table(rows, m.attributes)
        np.testing.assert_allclose(m.query @ T, m.values, rtol=1e-12, atol=1e-9)
        # the residual of 3 groups by 4 levels (or 4 by 3): (3-1)(4-1) rows,
        # where the fine pair's residual has (9-1)(4-1) or (4-1)(6-1)
        assert (
            m.query.shape == (2 * 3, T.size)
            and T.size == levels[list(m.attributes)].prod()
        )


def test_the_extended_workload_has_whitened_sensitivity_one():
    """Add/remove one row: over every row of a small domain, the whitened
    change of the extended workload's residuals (a row counted in each fine
    table and in its group's cell of each coarse one) has norm at most 1,
    and 1 is reached -- the bound :func:`measure` calibrates to is the
    exact sensitivity of the coarsened measurement."""
    levels = np.array([5, 3, 4])
    groups = {0: np.array([0, 0, 1, 1, 1]), 2: np.array([0, 1, 1, 1])}
    ext_levels = np.array([5, 3, 4, 2, 2])  # copies 0' = 3, 2' = 4
    tables = [(0,), (2,), (1, 3), (1, 4)]
    W = AttributeMarginalWorkload(ext_levels, 2, tables=tables)
    tau, _ = W.calibrated_scales("add-remove-one")
    norms = []
    for u in itertools.product(*[range(k) for k in levels]):
        ext = np.array([u[0], u[1], u[2], groups[0][u[0]], groups[2][u[2]]])[None, :]
        z = W.residuals({S: W.table(ext, S) for S in W.tables})
        t = W.whiten(z, tau)
        norms.append(float(np.linalg.norm(t)))
    assert max(norms) == pytest.approx(1.0, rel=1e-9)


def _numeric_frame(n=3000, seed=0):
    """Two 0-16 integer columns, one a noisy copy of the other, and a
    category that depends on the first."""
    rng = np.random.default_rng(seed)
    a = rng.binomial(16, 0.3, n)
    b = np.clip(a + rng.integers(-1, 2, n), 0, 16)
    c = np.where(a > 5, "hi", "lo")
    return pd.DataFrame({"a": a.astype(float), "b": b.astype(float), "c": c})


def _pipe(**kw):
    enc = BooleanEncoder(
        categories={"c": ["hi", "lo"]},
        bin_edges={
            "a": np.arange(0, 17.5, 1.0) - 0.5,
            "b": np.arange(0, 17.5, 1.0) - 0.5,
        },
    )
    return make_synthesis_pipeline(enc, ProjectedGaussianRelease(**kw))


@pytest.mark.parametrize("kappa", [0.0, 3.0])
def test_auto_tree_coarsens_its_pairs_and_spends_exactly_the_budget(monkeypatch, kappa):
    """Where auto runs MST's tree the pairs of the two 17-level columns are
    measured on fewer cells (the measurement is called with their groups),
    and at ``κ = 0`` on every level; either way the fit is 1/c-GDP (Σ μ² =
    1/c², the recorded steps). An explicit ``selection="mst"`` stays the
    paper's: no groups."""
    rules = dataclasses.replace(
        ProjectedGaussianRelease._rules,
        auto_none_factor=1e9,
        auto_aim_max_attributes=0,
        auto_edge_threshold=1e6,
        auto_mst_pair_kappa=kappa,
    )
    monkeypatch.setattr(ProjectedGaussianRelease, "_rules", rules)
    calls = []
    real = _measuring.measure_coarsened

    def spy(*args, **kwargs):
        calls.append(args[-1])
        return real(*args, **kwargs)

    monkeypatch.setattr(_measuring, "measure_coarsened", spy)
    df = _numeric_frame()
    est = _pipe(epsilon=0.3, random_state=0).fit(df)[-1]
    assert est.selection_ == "mst"
    if kappa == 0:
        assert calls == []
    else:
        assert len(calls) == 1 and set(calls[0]) <= {0, 1}
        assert all(g.max() + 1 < 17 for g in calls[0].values())
    # every table measured at the end is listed, coarsened or not: the
    # tree's pairs and the 1-way tables of columns in no pair
    names = list(est.blocks_.names)
    chosen = {tuple(names[j] for j in S) for S in est._selection_result.chosen}
    assert chosen <= set(est.marginals_)
    if kappa > 0:  # a coarsened pair is listed, and marginal_table says why it
        # cannot answer it
        with pytest.raises(ValueError, match="measured on groups of its columns"):
            est.marginal_table(["a", "b"])
    else:
        assert est.marginal_table(["a", "b"]).size == 17 * 17
    c = analytic_gaussian_sigma(0.3, est.delta_)
    res = est._selection_result
    shares = est.selection_shares_
    gauss = sum(v for k, v in shares.items() if k != "selection_select")
    mu2 = gauss / c**2 + sum(gdp_mu_of_pure_dp(e) ** 2 for e in res.epsilons)
    assert est.plan_.noise_sigma == c
    assert mu2 == pytest.approx(1.0 / c**2, rel=1e-9)
    calls.clear()
    _pipe(epsilon=0.3, selection="mst", random_state=0).fit(df)
    assert calls == []


def test_coarse_levels_group_only_the_long_ordinal_columns():
    """A column with more than ``g`` ordinal levels is priced at ``g`` plus
    its missing level; shorter, one-hot (0) and kept columns at their own."""
    blocks = _blocks()
    levels = blocks.n_levels
    ordinal = cp.ordinal_levels(blocks, levels)
    assert ordinal.tolist() == [9, 6, 0, 3]
    assert cp.ordinal_levels(blocks, levels, keep=(0,)).tolist() == [0, 6, 0, 3]
    from skdp_synth.gaussian_release._plan_choice import coarse_levels

    assert coarse_levels(levels, ordinal, 3).tolist() == [3, 4, 7, 3]
    assert coarse_levels(levels, ordinal, 9).tolist() == levels.tolist()


def _estimates(levels, ordinal, eps, n, **rules):
    from skdp_synth.gaussian_release import _plan_choice as choice
    from skdp_synth.gaussian_release import _selection as sel

    at = dataclasses.replace(DEFAULT_RULES, **rules)
    pairs = list(itertools.combinations(range(len(levels)), 2))
    W = AttributeMarginalWorkload(levels, 2, tables=pairs)
    tau, _ = sel.allocated_scales(W, W, "add-remove-one")
    c = analytic_gaussian_sigma(eps, 1e-6)
    args = (W, tau, c, n, at, "add-remove-one", None, True)
    return choice.auto_estimates(*args, ordinal=ordinal), c


def test_the_trees_grouped_price_is_its_pairs_at_the_grouped_levels():
    """``e_tree_grouped`` is the mean pair's expected TV noise at the levels
    :func:`coarse_levels` gives at ``g`` = :func:`group_count` (the tree's
    ``K = a - 1`` tables at its final share), scaled as the fine price is;
    the rule prices the tree at it only with ``auto_mst_price_grouped``."""
    from skdp_synth.gaussian_release._plan_choice import coarse_levels
    from skdp_synth.gaussian_release._selection import expected_l1_noise

    levels = np.array([17, 17, 9, 3, 5, 2])
    ordinal = np.array([17, 16, 9, 0, 5, 2])  # column 1 has a missing level
    n, eps = 3500, 0.3
    est, c = _estimates(levels, ordinal, eps, n)
    a, K = 6, 5
    f = DEFAULT_RULES.auto_mst_shares["final"]
    g = cp.group_count(n, c, f, K, DEFAULT_RULES.auto_mst_pair_kappa)
    assert est["g_tree"] == g and g < 9
    pairs = list(itertools.combinations(range(a), 2))
    grouped = coarse_levels(levels, ordinal, g)
    for e_key, lv in (("e_tree_fine", levels), ("e_tree_grouped", grouped)):
        e = expected_l1_noise(lv, pairs, c, "add-remove-one")
        want = float(np.mean(e)) / (2.0 * n) * math.sqrt(K / f)
        assert est[e_key] == pytest.approx(want, rel=1e-12)
    assert est["e_tree_grouped"] < est["e_tree_fine"]
    # the default prices the tree at its grouped levels; off, or without
    # ``ordinal``, at every level
    assert DEFAULT_RULES.auto_mst_price_grouped is True
    assert est["e_tree"] == est["e_tree_grouped"]
    off, _ = _estimates(levels, ordinal, eps, n, auto_mst_price_grouped=False)
    assert off["e_tree"] == off["e_tree_fine"] and est["mst"] < off["mst"]
    plain, _ = _estimates(levels, None, eps, n)
    assert plain["mst"] == off["mst"] and plain["g_tree"] == 0.0
    # no grouping without kappa, or where every column is short enough
    off, _ = _estimates(levels, ordinal, eps, n, auto_mst_pair_kappa=0.0)
    assert off["g_tree"] == 0.0 and off["e_tree_grouped"] == off["e_tree_fine"]
    big, _ = _estimates(levels, ordinal, eps, 10**9)
    assert big["g_tree"] == 0.0 and big["e_tree"] == big["e_tree_fine"]
    assert big["tree_group_loss"] == 0.0


def test_the_dependence_a_grouped_pair_loses():
    """``tree_group_loss``: ``D_tree`` times the mean over the candidate
    pairs of ``2 / (g + 0.5)`` with both columns grouped, 0.7 of that with
    one, 0 with none (recorded; the rule does not rank on it)."""
    from skdp_synth.gaussian_release import _plan_choice as choice

    assert (choice.GROUP_LOSS_BOTH, choice.GROUP_LOSS_ONE) == (2.0, 0.7)
    pairs = [(0, 1), (0, 2), (1, 2)]
    grouped = np.array([True, False, True])
    both = 2.0 / 4.5
    want = (0.7 * both + both + 0.7 * both) / 3.0
    assert choice.group_loss(pairs, grouped, 4) == pytest.approx(want, rel=1e-15)
    assert choice.group_loss(pairs, np.zeros(3, bool), 4) == 0.0
    assert choice.group_loss([], grouped, 4) == 0.0
    levels = np.array([17, 17, 9, 3, 5, 2])
    ordinal = np.array([17, 16, 9, 0, 5, 2])
    est, _ = _estimates(levels, ordinal, 0.3, 3500)
    g = int(est["g_tree"])
    flags = choice.coarse_levels(levels, ordinal, g) != levels
    every = list(itertools.combinations(range(6), 2))
    d_tree = DEFAULT_RULES.auto_edge_threshold
    loss = d_tree * choice.group_loss(every, flags, g)
    assert est["tree_group_loss"] == pytest.approx(loss, rel=1e-12) and loss > 0
    # recorded, not ranked on: the tree's price is the grouped noise alone
    assert est["e_tree"] == est["e_tree_grouped"]


def test_every_column_keeps_its_1_way_table_when_its_pairs_are_coarse():
    """A column whose every tree pair has a coarsened partner still has its
    own 1-way residual handed on: without noise, the released 1-way tables
    equal the exact ones for every column."""
    levels = np.array([9, 3, 8, 2])
    _, _, tables = _exact_tables(levels, 800, 1)
    groups = {0: np.repeat(np.arange(3), 3), 2: np.repeat(np.arange(4), 2)}
    chosen = [(0, 1), (1, 2), (2, 3)]  # 1 and 3 only beside coarsened columns
    released, _, W, _ = _measure_exactly(tables, levels, chosen, groups)
    exact = W.residuals(tables)
    for j in range(4):
        assert (j,) in W.subsets
        np.testing.assert_allclose(released[(j,)], exact[(j,)], rtol=1e-12, atol=1e-9)


def test_a_named_target_keeps_the_trees_price_at_every_level():
    """With ``target=`` the rule compares the tree with the 1-way tables and
    the target's pairs without a margin, a path the grouped price was not
    measured on: it keeps the price at every level (the grouped one is
    still recorded)."""
    from skdp_synth.gaussian_release import _plan_choice as choice
    from skdp_synth.gaussian_release import _selection as sel

    levels = np.array([17, 17, 9, 3, 5, 2])
    ordinal = np.array([0, 16, 9, 0, 5, 2])  # the target (0) is never grouped
    pairs = list(itertools.combinations(range(len(levels)), 2))
    W = AttributeMarginalWorkload(levels, 2, tables=pairs)
    tau, _ = sel.allocated_scales(W, W, "add-remove-one")
    c = analytic_gaussian_sigma(0.3, 1e-6)
    args = (W, tau, c, 3500, DEFAULT_RULES, "add-remove-one", 0, True)
    est = choice.auto_estimates(*args, ordinal=ordinal)
    assert est["g_tree"] > 0 and est["e_tree_grouped"] < est["e_tree_fine"]
    assert est["e_tree"] == est["e_tree_fine"]
