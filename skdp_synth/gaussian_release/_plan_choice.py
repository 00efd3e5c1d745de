"""auto's choice of plan by expected error (``selection="auto"``).

Every plan the release can run -- every table measured, MST's tree
(:cite:`McKenna2021` §3), AIM's rounds (:cite:`McKenna2022`), the 1-way
tables alone -- is priced by the 2-way TV error it is expected to leave,
from public quantities only (the domain, the noise scale ``c``, the budget
shares, a public or noisy total and, where measured, the pairs' released
dependence ``D``): :func:`auto_estimates`. :func:`auto_rule` takes the least
(:func:`plan_errors` holds the margins, ``ReleaseRules``). The choice reads
no private value, so it spends nothing; the plans themselves are in
:mod:`._selection`.
"""

from __future__ import annotations

import math

import numpy as np

from ..workloads import AttributeMarginalWorkload
from ._selection import (
    AIM_ROUNDS_PER_ATTRIBUTE,
    AIM_SELECT_FRACTION,
    allocated_scales,
    candidate_tables,
    expected_l1_noise,
    with_one_way_tables,
)

__all__ = [
    "aim_estimate",
    "auto_estimates",
    "auto_rule",
    "coarse_levels",
    "group_count",
    "noise_tv",
    "one_way_noise_tv",
    "plan_errors",
    "tree_signal_share",
    "untargeted_noise_tv",
]


def group_count(n_hat, c, share, n_tables, kappa):
    """``g``: the most groups per column with ``n̂ / g² >= κ σ`` (at least 2).

    ``σ = c sqrt(K / f)``: the noise sd of a cell of one of ``K`` tables
    measured at budget share ``f`` (ResidualPlanner's allocation puts about
    that on each; public). Every input is public.
    """
    sigma = float(c) * math.sqrt(float(n_tables) / float(share))
    return max(2, int(math.sqrt(max(float(n_hat), 1.0) / (float(kappa) * sigma))))


def coarse_levels(n_levels, ordinal, g):
    """The levels of each attribute as the tree's pairs measure them with
    ``g`` groups (:mod:`._coarse_pairs`): an attribute with more than ``g``
    ordinal levels (``ordinal``, from :func:`~._coarse_pairs.ordinal_levels`)
    at ``g`` plus its other levels (the missing level), every other one at
    its own. Public. The grouping can merge a heavy level's neighbours into
    fewer groups; ``g`` is what the rule affords, the price used."""
    levels = np.asarray(n_levels, dtype=np.int64)
    m = np.asarray(ordinal, dtype=np.int64)
    return np.where(m > g, g + (levels - m), levels)


#: The share of a pair's dependence (its TV to the product of its margins,
#: scored on 10 quantile bins per column) that measuring it on ``g`` groups
#: of adjacent levels loses, the rows filling each group from the 1-way
#: tables: ``GROUP_LOSS_BOTH / (g + 0.5)`` with both columns grouped, and
#: :data:`GROUP_LOSS_ONE` of that with one. Read off a Gaussian copula at
#: correlations 0.3, 0.6 and 0.9 (``g`` 2-8: both 0.82-0.19, one 0.66-0.12;
#: ``benchmarks/results/bench_suite.md``, "The dependence a grouped pair
#: loses"); recorded by :func:`auto_estimates`, not ranked on.
GROUP_LOSS_BOTH = 2.0
GROUP_LOSS_ONE = 0.7


def group_loss(pairs, grouped, g):
    """The mean over ``pairs`` of the share of a pair's dependence lost to
    ``g`` groups (:data:`GROUP_LOSS_BOTH`, :data:`GROUP_LOSS_ONE`);
    ``grouped``: which attributes the tree's pairs measure grouped. Public."""
    if not pairs:
        return 0.0
    # by how many of the pair's two columns are grouped: none, one, both
    share = np.array([0.0, GROUP_LOSS_ONE, 1.0]) * GROUP_LOSS_BOTH / (float(g) + 0.5)
    ends = [int(bool(grouped[i])) + int(bool(grouped[j])) for i, j in pairs]
    return float(np.mean(share[ends]))


def noise_tv(W, tau, c, n, without=None):
    """Expected TV noise per table of the all-tables plan at ``n`` rows.

    ``E|e| = sqrt(2/π) σ`` per cell of a table ``S`` with per-cell noise
    ``σ_S`` (:meth:`AttributeMarginalWorkload.cell_variance`), so its TV
    error is ``≈ k_S sqrt(2/π) σ_S / (2 n)``; the ``w_S``-weighted mean,
    over the tables that do not contain attribute ``without`` when it is
    given (and some do not). Public: a function of the plan and a public
    or noisy ``n``.
    """
    n = max(float(n), 1.0)
    weighted = list(zip(W.tables, W.weights))
    if without is not None and any(without not in S for S, _ in weighted):
        weighted = [(S, w) for S, w in weighted if without not in S]
    tv = [
        W.n_cells(S) * math.sqrt(2.0 / math.pi * W.cell_variance(tau, c, S)) / (2 * n)
        for S, _ in weighted
    ]
    return float(np.average(tv, weights=[w for _, w in weighted]))


def untargeted_noise_tv(W, c, n, rules, neighbouring, target, default_pairs):
    """:func:`noise_tv` of the plan the release would make without ``target``.

    ``target`` adds its 3-way tables to the default pairs and weighs its
    tables up; the triples' many cells raise the plan's mean TV noise, so
    the same table and budget that measure every pair without a target
    looked too noisy for it. Whether the signal suffices to measure every
    pair is a property of the pairs: this is the all-pairs plan (the 1-way
    weighting of ``rules`` as without a target) at the same ``c`` and
    ``n``. ``None`` unless ``target`` is set on the default workload
    (``default_pairs``: no ``workload``, ``d = 2``). Public: the domain,
    ``c`` and a public or noisy ``n``.
    """
    if target is None or not default_pairs:
        return None
    pairs = [S for S in W.tables if len(S) == 2]
    if not pairs:
        return None
    W0 = AttributeMarginalWorkload(W.n_levels, 2, tables=pairs)
    plan_W = W0
    if rules.one_way_weight > 0 and len(W.n_levels) >= rules.one_way_min_attributes:
        plan_W = with_one_way_tables(W0, rules.one_way_weight)
    tau0, _ = allocated_scales(W0, plan_W, neighbouring)
    return noise_tv(W0, tau0, c, n)


def _one_way_variances(n_levels, tables, share, c, neighbouring):
    """Per-cell noise variance of each informative 1-way table when the
    ``tables`` are measured by :func:`measure` at ``share`` (public)."""
    W = AttributeMarginalWorkload(
        n_levels, max(len(S) for S in tables), tables=list(tables)
    )
    tau, _ = W.calibrated_scales(neighbouring)
    sigma = float(c) / math.sqrt(max(float(share), 1e-300))
    return np.array(
        [
            W.cell_variance(tau, sigma, (j,))
            for j in range(len(n_levels))
            if n_levels[j] >= 2
        ]
    )


def one_way_noise_tv(n_levels, share, c, neighbouring, n, final_share=None):
    """Expected TV noise per 1-way table when the 1-way tables are measured
    alone at budget ``share`` (:func:`measure`'s allocation; public) and, with
    ``final_share``, again inside a spanning tree's pairs measured at that
    share (a path over the attributes in their order stands for the tree:
    every attribute in at most two pairs); the two combined by inverse
    variance."""
    n_levels = np.asarray(n_levels)
    inf = [j for j in range(len(n_levels)) if n_levels[j] >= 2]
    if not inf:
        return 0.0
    var = _one_way_variances(n_levels, [(j,) for j in inf], share, c, neighbouring)
    if final_share is not None and len(inf) >= 2:
        path = list(zip(inf[:-1], inf[1:]))
        tree = _one_way_variances(n_levels, path, final_share, c, neighbouring)
        var = 1.0 / (1.0 / var + 1.0 / tree)
    cells = n_levels[inf].astype(np.float64)
    tv = cells * np.sqrt(2.0 / math.pi * var) / (2.0 * max(float(n), 1.0))
    return float(np.mean(tv))


def auto_estimates(
    W,
    tau,
    c,
    n,
    rules,
    neighbouring,
    target,
    default_pairs,
    spent=0.0,
    D=None,
    ordinal=None,
):
    """Expected mean 2-way TV error of each plan ``selection="auto"`` weighs.

    Public: a function of the domain (``W``'s levels and tables), the
    all-tables plan's scales ``τ``, ``c``, a public or noisy ``n`` and the
    share ``spent`` already spent on the noisy total. Over the ``M`` pairs of
    the ``a`` attributes with at least 2 levels, of which a spanning tree
    holds ``K = a - 1`` (a fraction ``q = K / M = 2 / a``), with ``D``
    (``rules.auto_tv_threshold``) the TV a pair loses when no measured table
    holds it, ``D_tree`` (``rules.auto_edge_threshold``) that of a pair a
    tree would choose, ``ρ`` (``rules.auto_tree_reach``) the part of an
    unmeasured pair's dependence the rows recover through a tree of exact
    edges and
    ``e_1(f)`` the expected TV noise of the 1-way tables measured alone at
    share ``f`` of what is left:

    * ``"none"`` (every table measured): the plan's expected TV noise per
      table, :func:`noise_tv` (with ``target``, the smaller of it and
      :func:`untargeted_noise_tv`);
    * ``"mst"``: the tree's pairs at their expected TV noise ``ē`` (each of
      the ``K`` pairs measured at ``1/K`` of the final share; the mean of
      :func:`mst_edge_budget`'s ``e_r(K)`` over the candidate pairs), every
      other pair at ``(1 - ρ s) D`` plus the noise of two 1-way tables
      measured at MST's 1-way share and again inside the tree's pairs
      (:func:`one_way_noise_tv`): ``q ē + (1 - q) ((1 - ρ s) D + 2 e_1^T)``.
      With ``ordinal`` (each attribute's groupable ordinal levels,
      :func:`~._coarse_pairs.ordinal_levels`),
      ``rules.auto_mst_pair_kappa > 0``, ``rules.auto_mst_price_grouped``
      and no ``target``,
      ``ē`` prices each pair at the levels the tree's final measurement
      gives it: ``g`` groups
      (:func:`group_count` at the tree's ``K`` tables and share ``f``) for
      a column with more than ``g`` ordinal levels (:func:`coarse_levels`);
      with ``s = D_tree² / (D_tree² + ē²)`` the part of a measured edge that
      is signal (:func:`tree_signal_share`): the rows recover an unmeasured
      pair's dependence through the tree only as far as its edges are not
      noise;
    * ``"one-way"``: no pair measured, the 1-way tables at the whole
      budget: ``q D_tree + (1 - q) D + 2 e_1(1)``;
    * ``"aim"``: AIM's rounds (:func:`aim_estimate`): the ``K_A`` pairs its
      rounds can afford at their noise, every other pair losing ``1 - ρ s_A
      κ`` of its dependence, and the 1-way tables as if measured alone at
      ``rules.auto_aim_one_way_share`` of the budget.

    ``D`` (when given): the pairs' measured dependence
    (:mod:`._dependence`, a released value) in place of
    ``rules.auto_tv_threshold``; it is returned as ``"D"``.

    Every term is smooth in ``ε``, ``n`` and the levels, and ``q = 2/a``
    moves the balance between a tree and the 1-way tables smoothly with the
    number of attributes: there is no threshold on ``a``.

    Returns
    -------
    dict
        ``{"none": .., "mst": .., "one-way": .., "aim": ..}``, and the
        parts (``"q"``, ``"e_tree"`` = ``ē`` as priced, ``"e_tree_fine"``
        at every level, ``"e_tree_grouped"`` at the grouped levels,
        ``"g_tree"`` = ``g`` (0 where no pair is grouped),
        ``"e1_one"``, ``"e1_mst"``,
        ``"reach"`` = ``ρ s``; AIM's ``"k_aim"``, ``"q_aim"``, ``"e_aim"``,
        ``"aim_pairs"`` = its estimate less the 1-way tables' noise, as
        :func:`aim_estimate` returns them).
    """
    levels = np.asarray(W.n_levels)
    n = max(float(n), 1.0)
    e_all = noise_tv(W, tau, c, n)
    untargeted = untargeted_noise_tv(
        W, c, n, rules, neighbouring, target, default_pairs
    )
    if untargeted is not None:
        e_all = min(e_all, untargeted)
    a = int(np.sum(levels >= 2))
    left = max(1.0 - float(spent), 1e-12)
    shares = rules.auto_mst_shares
    cand, _ = candidate_tables(levels, dict(zip(W.tables, W.weights)))
    pairs = [r for r in cand if len(r) == 2]
    e1_one = one_way_noise_tv(levels, left, c, neighbouring, n)
    e1_mst = one_way_noise_tv(
        levels,
        left * shares["one_way"],
        c,
        neighbouring,
        n,
        final_share=left * shares["final"],
    )
    D = rules.auto_tv_threshold if D is None else float(D)
    D_tree = rules.auto_edge_threshold
    out = {"none": e_all, "e1_one": e1_one, "e1_mst": e1_mst, "D": D}
    if a < 2 or not pairs:
        out.update({"mst": math.inf, "one-way": math.inf, "q": 0.0, "e_tree": 0.0})
        out.update(e_tree_fine=0.0, e_tree_grouped=0.0, g_tree=0.0)
        out["tree_group_loss"] = 0.0
        out.update(reach=0.0, aim=math.inf, k_aim=0.0, q_aim=0.0, e_aim=0.0)
        out["aim_pairs"] = math.inf
        return out
    K = a - 1
    q = min(1.0, K / (a * (a - 1) / 2.0))
    f = left * shares["final"]
    e = expected_l1_noise(levels, pairs, c, neighbouring)
    # the mean pair's expected TV noise measured alone at the whole budget
    e_unit = float(np.mean(e)) / (2.0 * n)
    e_tree = e_unit * math.sqrt(K / f)
    out.update(e_tree_fine=e_tree, e_tree_grouped=e_tree, g_tree=0.0)
    out["tree_group_loss"] = 0.0
    kappa = rules.auto_mst_pair_kappa
    if ordinal is not None and kappa > 0:
        # the pairs as the tree's final measurement groups them
        g = group_count(n, c, f, K, kappa)
        coarse = coarse_levels(levels, ordinal, g)
        if np.any(coarse != levels):
            e_c = expected_l1_noise(coarse, pairs, c, neighbouring)
            out["e_tree_grouped"] = float(np.mean(e_c)) / (2.0 * n) * math.sqrt(K / f)
            out["g_tree"] = float(g)
            grouped = coarse != levels
            out["tree_group_loss"] = D_tree * group_loss(pairs, grouped, g)
    if rules.auto_mst_price_grouped and target is None:
        e_tree = out["e_tree_grouped"]
    reach = rules.auto_tree_reach * tree_signal_share(e_tree, D_tree)
    out["mst"] = q * e_tree + (1.0 - q) * ((1.0 - reach) * D + 2.0 * e1_mst)
    out["one-way"] = q * D_tree + (1.0 - q) * D + 2.0 * e1_one
    out.update(q=q, e_tree=e_tree, reach=reach)
    out.update(aim_estimate(e_unit, e1_one, a, len(pairs), left, rules, D=D))
    return out


def aim_estimate(e_unit, e1_one, a, n_pairs, left, rules, D=None):
    """Expected mean 2-way TV error of AIM's rounds (public; part of
    :func:`auto_estimates`).

    ``e_unit`` is the mean candidate pair's expected TV noise measured alone
    at the whole budget (``e_r(f) = e_unit / sqrt(f)``), ``e1_one`` the
    1-way tables' measured alone at ``left``, ``a`` the attributes of at
    least 2 levels, ``n_pairs`` (``M``) the candidate pairs, ``left`` the
    budget after the noisy total. With AIM's shares (``rules.
    selection_shares["aim"]``: 1-way tables ``f_1``, rounds ``f_R``, final
    ``f_F``) and ``T = AIM_ROUNDS_PER_ATTRIBUTE a`` rounds:

    * AIM quadruples a round's share (halves its noise) while its
      measurements move the model less than their noise (budget
      annealing, :func:`select_aim`), so its rounds settle where a chosen
      pair's measurement is signal: at the round share ``f*`` whose
      measurement has TV noise ``D_tree`` (``e_unit / sqrt(0.9 f*) =
      D_tree``, 0.9 the measured part of a round). It measures about
      ``K_A = f_R left / f*`` pairs (at least 1, at most ``T``): few where
      ``ε n`` is small against the pairs' cells, many where it is large.
    * Each chosen pair is measured in its round and again in the final
      measurement: ``e_A = e_unit sqrt(K_A / ((0.9 f_R + f_F) left))``.
    * As in the 1-way tables' estimate, a fraction ``q = (a - 1) / M`` of
      the pairs (a tree's) holds dependence ``D_tree`` and the rest ``D``;
      AIM chooses the strongest first. A pair it leaves unmeasured loses
      ``(1 - r)`` of its dependence, with ``r = ρ s_A κ`` the tree's reach
      ``ρ`` (``rules.auto_tree_reach``) scaled by the chosen pairs' signal
      share ``s_A`` (:func:`tree_signal_share`) and by the part ``κ =
      min(1, K_A / (a - 1))`` of a spanning tree they make up; a pair it
      measures loses ``e_A``, or no more than unmeasured (AIM's scores
      subtract the noise a pair would receive: it measures what is worth
      its noise).
    * AIM's 1-way tables are as noisy as if measured alone at ``φ =
      rules.auto_aim_one_way_share`` of the budget: their own ``f_1`` and
      their margins in the rounds' and the final measurements (the final
      one holds every 1-way table no chosen pair covers): ``2 e_1(1) /
      sqrt(φ)`` on every pair AIM does not measure (``1 - K_A / M``).

    With ``q_t = min(K_A, a - 1) / M`` and ``q_r = min(K_A - (a - 1), M -
    (a - 1)) / M`` (at least 0) the chosen tree-class and other pairs:
    ``q_t min(e_A, (1-r) D_tree) + (q - q_t) (1-r) D_tree + q_r min(e_A,
    (1-r) D) + (1 - q - q_r) (1-r) D + (1 - K_A/M) 2 e_1(1) / sqrt(φ)``.
    Continuous in ``ε``, ``n`` and the levels and falling as ``ε n`` grows.
    Where ``ε n`` is small the 1-way tables' extra noise outweighs the few
    pairs AIM can afford and the 1-way tables alone win (measured: hmda and
    acs12 at ε = 0.1).

    Returns
    -------
    dict
        ``{"aim": .., "k_aim": K_A, "q_aim": q_A, "e_aim": e_A,
        "aim_pairs": ..}`` (``aim_pairs``: the estimate less the 1-way
        tables' term ``(1 - q_A) 2 e_1(1) / sqrt(φ)``).
    """
    shares = rules.selection_shares["aim"]
    D = rules.auto_tv_threshold if D is None else float(D)
    D_tree = rules.auto_edge_threshold
    measured = 1.0 - AIM_SELECT_FRACTION
    T = AIM_ROUNDS_PER_ATTRIBUTE * max(int(a), 1)
    f_star = (float(e_unit) / D_tree) ** 2 / measured
    k = float(np.clip(shares["rounds"] * left / max(f_star, 1e-300), 1.0, T))
    e_aim = float(e_unit) * math.sqrt(
        k / ((measured * shares["rounds"] + shares["final"]) * left)
    )
    M = max(int(n_pairs), 1)
    tree = max(int(a) - 1, 1)
    q = min(1.0, k / M)
    reach = (
        rules.auto_tree_reach * tree_signal_share(e_aim, D_tree) * min(1.0, k / tree)
    )
    q_tree = min(1.0, tree / M)
    q_t = min(k, tree) / M
    q_r = min(max(k - tree, 0.0), max(M - tree, 0)) / M
    pairs = (
        q_t * min(e_aim, (1.0 - reach) * D_tree)
        + (q_tree - q_t) * (1.0 - reach) * D_tree
        + q_r * min(e_aim, (1.0 - reach) * D)
        + (1.0 - q_tree - q_r) * (1.0 - reach) * D
    )
    e1 = 2.0 * float(e1_one) / math.sqrt(rules.auto_aim_one_way_share)
    return {
        "aim": pairs + (1.0 - q) * e1,
        "k_aim": k,
        "q_aim": q,
        "e_aim": e_aim,
        "aim_pairs": pairs,
    }


def tree_signal_share(e_tree, d_tree):
    """``s = D_tree² / (D_tree² + ē²)``: the part of a measured tree edge
    that is the pair's dependence rather than noise (public).

    A chosen pair holds dependence of about ``D_tree`` in TV and is measured
    with expected TV noise ``ē``; ``s`` is the signal's share of the two
    together, in squared (variance) terms, as in a shrinkage factor. The rows
    recover an unmeasured pair's dependence through the tree's paths only as
    far as the edges carry signal, so :func:`auto_estimates` scales the
    reach ``ρ`` by ``s``: ``s → 1`` when the edges are exact (large ``ε n``
    against the pairs' cells), ``s → 0`` when they drown. Smooth in ``ε``,
    ``n`` and the levels.
    """
    e, d = float(e_tree), float(d_tree)
    return d * d / (d * d + e * e) if d > 0 else 0.0


def auto_rule(
    W,
    tau,
    c,
    n,
    rules,
    neighbouring,
    target,
    default_pairs,
    spent=0.0,
    D=None,
    ordinal=None,
):
    """``"none"``, ``"mst"``, ``"aim"`` or ``"one-way"`` by expected error
    (:func:`auto_estimates`; public, ``selection="auto"``).

    The plan of least expected 2-way TV error (:func:`plan_errors`): every
    table measured (the all-tables plan's expected TV noise per table,
    scaled by ``rules.auto_none_factor``), MST's tree, the 1-way tables
    alone (their estimate scaled by ``1 + rules.auto_one_way_margin``: a
    plan that keeps dependence wins within that margin, the tree within
    ``1 + rules.auto_tree_margin``), and AIM's rounds
    on tables of at most ``rules.auto_aim_max_attributes`` attributes
    without ``target``. No threshold: each estimate is smooth in ``ε``,
    ``n`` and the levels, and so is the boundary between any two plans.
    With ``target`` (where ``κ`` is not measured) every table is measured
    when its expected TV noise is at most ``D = rules.auto_tv_threshold``,
    else MST's tree or the 1-way tables with the target's pairs, whichever
    is expected smaller (no margin: those rows keep the target's
    dependence). ``D``: the pairs' measured dependence
    (:mod:`._dependence`) in place of ``rules.auto_tv_threshold`` in the
    selected plans' estimates (not in the threshold with ``target``).
    ``ordinal``: the attributes' groupable ordinal levels, with which the
    tree's pairs are priced at their grouped levels (:func:`auto_estimates`).
    """
    public = (W, tau, c, n, rules, neighbouring, target, default_pairs)
    est = auto_estimates(*public, spent=spent, D=D, ordinal=ordinal)
    if target is not None:
        # ``κ`` was tuned on fits without a target (bench_suite's ``auto``);
        # with one, every table against MST's target star at its threshold:
        # on the behaviour-hash example (Wage, ε = 1, target ``wage``, 4
        # seeds) TV2 of every table .0791 against MST's .0681
        if est["none"] <= rules.auto_tv_threshold:
            return "none"
        # no margin: with a target the 1-way plan keeps the target's pairs
        return "mst" if est["mst"] <= est["one-way"] else "one-way"
    a = int(np.sum(np.asarray(W.n_levels) >= 2))
    aim = a <= rules.auto_aim_max_attributes
    errors = plan_errors(est, rules, aim=aim)
    return min(errors, key=errors.get)


def plan_errors(est, rules, aim=True):
    """The expected errors :func:`auto_rule` compares (public), from the
    estimates of :func:`auto_estimates`, in the order ties are broken.

    ``"none"``: the all-tables plan's expected TV noise per table times
    ``κ = rules.auto_none_factor``. A pair measured in noise of expected
    TV ``e`` loses less than ``e`` in the generator's rows (they are a
    distribution: a drowned table is pulled towards the 1-way tables and
    its neighbours; on the car survey's domain, ε = 1, TV2 0.130 at an
    expected noise of 0.345), and the selected plans' estimates count a
    pair's dependence, not its noise; ``κ`` puts the two on one scale
    (tuned, ``ReleaseRules.auto_none_factor``). ``"aim"`` only with
    ``aim`` (AIM's rounds allowed); then ``"mst"`` and ``"one-way"``, the
    1-way tables' estimate times ``1 + m`` (``m = rules.
    auto_one_way_margin``): their rows keep no dependence, so a plan that
    keeps some is taken where its estimate is within ``m`` of theirs.
    Where the 1-way tables would still be taken and the tree's estimate is
    within ``1 + m_T`` times theirs (``m_T = rules.auto_tree_margin``), the
    tree takes their place: its value is set to theirs, and ties go to the
    earlier plan. The values are what the rule ranks, not estimates.
    """
    out = {"none": rules.auto_none_factor * est["none"]}
    if aim:
        out["aim"] = est["aim"]
    out["mst"] = est["mst"]
    out["one-way"] = est["one-way"] * (1.0 + rules.auto_one_way_margin)
    least = min(out, key=out.get)
    if least == "one-way" and est["mst"] <= est["one-way"] * (
        1.0 + rules.auto_tree_margin
    ):
        out["mst"] = out["one-way"]
    return out
