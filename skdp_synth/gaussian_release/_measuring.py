"""Measuring: the only stage that reads the data.

The second of :class:`~skdp_synth.gaussian_release.ProjectedGaussianRelease`'s
four stages. It receives the validated rows ``U`` and the plan fixed before
them, counts the workload's statistic in one pass (in memory or summed over
Dask chunks), runs the private selection of the measured tables when the
plan asks for it, and adds the plan's calibrated noise
(:meth:`~skdp_synth.mechanisms.NoiseSource.gaussian`, or the bit-level
:class:`~skdp_synth.mechanisms.additive.AdditiveNoise`). It returns the
noisy answers as :class:`~._values.Measurements`; the exact counts never
leave this module, so everything after it is post-processing of the
release (``doc/privacy.md``).
"""

from __future__ import annotations

import numpy as np

from .._chunked import reduce_rows
from .._progress import stage
from .._stats import (
    attribute_statistic,
    attribute_tables_from,
    workload_answers,
    workload_counts,
)
from ..workloads import AttributeMarginalWorkload
from ._coarse_pairs import (
    group_count,
    level_groups,
    measure_coarsened,
    ordinal_levels,
)
from ._dependence import (
    dependence_estimate,
    measures_dependence,
    noise_scale,
    pair_dependence,
    pair_dependences,
    target_pairs_by_worth,
    target_pairs_noise_scale,
)
from ._plan_choice import auto_rule
from ._selection import (
    SelectionResult,
    _total,
    mst_edge_budget,
    select_aim,
    select_mst,
    with_one_way_tables,
)
from ._selection import (
    measure as measure_tables,
)
from ._values import Measurements

__all__ = ["measure"]


def measure(U, staged, source):
    """The noisy answers of the plan ``staged`` on the rows ``U``.

    ``source`` draws the noise (and the selection's exponential mechanism);
    the order of its draws is the plan's, so a fixed ``random_state`` gives
    the same release. Returns :class:`~._values.Measurements`.
    """
    plan = staged.plan
    if plan.space != "residuals":
        return _measure_answers(U, plan, source)
    if (plan.selection or {"rule": "none"})["rule"] != "none":
        return _measure_selected(U, staged, source)
    return _measure_residuals(U, staged, source)


def _measure_answers(U, plan, source):
    """The bit-level mechanisms: the workload's noisy answers in the plan's
    space (:cite:`Nikolov2013` Algorithms 1-2, :cite:`Gao2022`)."""
    workload = plan.workload
    # ---- the only steps that read the data: one additive statistic
    # (_stats.workload_counts), in memory or summed over Dask chunks
    with stage("counting (one pass over the data)"):
        y = workload_answers(reduce_rows(U, workload_counts, workload), workload)
    v = workload.to_coords(y) if plan.space == "coords" else y
    released = plan.noise.privatize(v, source, n=plan.n_samples)
    del y, v
    return Measurements(released)


def _measure_residuals(U, staged, source):
    """Release the attribute-level residuals with optimal Gaussian noise.

    See :mod:`skdp_synth.attribute_workload` for the residual basis, the
    per-record sensitivity ``s_A`` and ResidualPlanner's variances. Like
    every mechanism here, the noise is added to the whitened true values
    (``z_A / τ_A``, ℓ2-sensitivity verified ``<= 1`` by the plan, before
    any data is read) by
    :meth:`~skdp_synth.mechanisms.NoiseSource.gaussian`; the rest is
    post-processing.
    """
    plan = staged.plan
    W, c, tau = plan.workload, plan.noise_sigma, plan.residual_scales

    # ---- the only steps that read the data: the counts of the maximal
    # tables (_stats.attribute_statistic), in memory or summed over chunks
    with stage("counting (one pass over the data)"):
        stat = reduce_rows(U, attribute_statistic, W, staged.spec.blocks)
    z = W.residuals(attribute_tables_from(stat, W))
    t = W.whiten(z, tau)
    t_noisy = source.gaussian(t, c)
    inv = plan.invariants
    exact = set() if inv is None else set(inv.closure()) & set(W.subsets)
    # the invariants (Gao2022 Def. 2), published exactly: under the
    # projection framework their noise, drawn above, is projected away
    # (Theorem 10: A x + Π_N (M(x) - A x), Π_N zeroes the exact residual
    # coordinates); under the extension framework they drew none
    z_exact = {A: z[A] for A in exact}
    del stat, z, t
    # ---- post-processing from here on (replace-one: the total n is public)
    if exact and staged.spec.framework == "projection":
        tau = tau * np.array([A not in exact for A in W.subsets])
    released = W.unwhiten(t_noisy, plan.residual_scales, total=plan.n_samples)
    released.update(z_exact)
    return Measurements(released, W, tau, exact=exact)


def _measure_selected(U, staged, source):
    """Selection, then ResidualPlanner's weighted noise on the chosen tables.

    Budget in Gaussian DP (:mod:`skdp_synth.selection`, ``doc/privacy.md``):
    the release is ``1/c``-GDP in every branch. ``"auto"`` first releases
    the noisy total with the all-tables plan's noise (share ``f_0``),
    measures the pairs' dependence where it could change the choice and
    carry weight (share ``f_D``, :mod:`._dependence`), decides from them,
    and either completes the all-tables plan (exactly the release without
    selection when nothing was measured; its residuals topped up to share
    ``1 - f_0 - f_D`` when it was) or runs the rule on ``1 - f_0 - f_D``.
    Under replace-one ``n`` is public: no total is drawn (``f_0 = 0``), and
    auto reaches this stage only where the plan left the choice to the
    measured dependence; every table then gets one draw at ``1 - f_D``.
    """
    plan, spec, rules = staged.plan, staged.spec, staged.rules
    W, c, tau = plan.workload, plan.noise_sigma, plan.residual_scales
    sel = plan.selection
    levels = spec.blocks.n_levels
    cand = sel["candidates"]
    public_n = plan.n_samples  # replace-one only
    needed = set(W.tables) | set(cand)
    needed |= {(j,) for j in range(len(levels)) if levels[j] >= 2}
    needed = sorted(needed, key=lambda S: (len(S), S))
    Wc = AttributeMarginalWorkload(levels, max(len(S) for S in needed), tables=needed)
    # ---- the only data access: exact counts of the candidate tables
    # (private; read below only through noisy measurements and the
    # exponential mechanism's scores)
    with stage("counting (one pass over the data)"):
        tables = attribute_tables_from(
            reduce_rows(U, attribute_statistic, Wc, spec.blocks), Wc
        )
    rule, left, totals = sel["rule"], 1.0, []
    dependence = None  # what auto measured of the pairs' dependence
    shares = {}
    default_pairs = spec.workload is None and spec.d == 2
    keep = () if spec.target is None else (staged.target_index,)
    ordinal = ordinal_levels(spec.blocks, levels, keep=keep)
    if rule == "auto" and public_n is not None:
        # replace-one: n is public and the plan waited only for the pairs'
        # dependence (_planning.selection_plan made sure it is measured)
        f_dep, dependence = _measure_dependence(
            tables, cand, levels, c, public_n, staged, source
        )
        public = (W, tau, c, public_n, rules, spec.neighbouring, spec.target)
        rule = auto_rule(
            *public, default_pairs, spent=f_dep, D=dependence["D"], ordinal=ordinal
        )
        if rule == "none":
            return _all_tables_at(
                tables, W, tau, c, f_dep, public_n, source, dependence
            )
        shares["dependence"] = f_dep
        left -= f_dep
    elif rule == "auto":
        i0 = W.subsets.index(())
        f0 = sel["count_share"]
        z = W.residuals({S: tables[S] for S in W.tables})
        t = W.whiten(z, tau)
        # the all-tables plan's noise, drawn as without selection (one
        # call, the same stream); only the noisy total z_∅ (coordinate 0)
        # is read before the decision, and with selection the other
        # coordinates are discarded unread (never released)
        t_noisy = source.gaussian(t, c)
        n_noisy = float(t_noisy[0] * tau[i0])
        totals.append((n_noisy, float(c * tau[i0]) ** 2))
        public = (W, tau, c, n_noisy, rules, spec.neighbouring, spec.target)
        # the pairs' dependence (_dependence) is measured only where it
        # could change the choice and would carry weight in D: both
        # decided from public quantities and the noisy total
        f_dep, D = 0.0, None
        if measures_dependence(*public, default_pairs, spent=f0, ordinal=ordinal):
            f_dep, dependence = _measure_dependence(
                tables, cand, levels, c, n_noisy, staged, source
            )
            D = dependence["D"]
        rule = auto_rule(*public, default_pairs, spent=f0 + f_dep, D=D, ordinal=ordinal)
        if rule == "none":
            del tables, z, t
            if not f_dep:
                released = W.unwhiten(t_noisy, tau, total=None)
                return Measurements(released, W, tau)
            return _all_tables_after_dependence(
                t_noisy, W, tau, c, f0, f_dep, source, dependence
            )
        del z, t, t_noisy
        shares["count"] = f0
        if f_dep:
            shares["dependence"] = f_dep
        left -= f0 + f_dep
    n_now = sel.get("public_n")
    if n_now is None and totals:
        n_now = totals[0][0]
    split = sel["shares"].get(rule, {})
    if rule == "one-way":
        # the whole budget on the 1-way tables and, with ``target``, on
        # its pairs that are worth their noise: auto's chosen by their
        # measured dependences (_target_pairs), or where it measures none
        # the cheapest (a public choice); an explicit "one-way" all
        res = SelectionResult("one-way", totals=list(totals))
        if spec.target is not None:
            t = staged.target_index
            star = [r for r in cand if len(r) == 2 and t in r]
            res.chosen = star  # an explicit "one-way": every one of them
            f_star = float(rules.auto_target_pair_share)
            if sel.get("auto") and f_star > 0 and len(star) > 1:
                # which of them: by their measured dependence
                res.chosen, found = _target_pairs(
                    tables, star, levels, c, f_star, staged, left, n_now, source
                )
                dependence = {**(dependence or {}), **found}
                shares["target_pairs"] = f_star * left
                left -= f_star * left
            elif sel.get("auto"):
                _, res.chosen = mst_edge_budget(
                    levels,
                    star,
                    left,
                    c,
                    spec.neighbouring,
                    n_now,
                    rules.auto_edge_threshold,
                )
    else:
        # the rule's own step: MST's tree selection or AIM's rounds
        select, step = (
            (select_mst, "select") if rule == "mst" else (select_aim, "rounds")
        )
        # auto's AIM weighs a pair's noise as the generator's model keeps it
        # and joins the columns its rounds leave in no pair (paid from the
        # final share); selection="aim" is the paper's
        auto_aim = {}
        if rule == "aim" and sel.get("auto"):
            auto_aim["penalty_factor"] = rules.aim_penalty_factor
            auto_aim["refit_swap_sweeps"] = rules.aim_refit_swap_sweeps
            if rules.aim_cover_share > 0:
                auto_aim["cover"] = (
                    left * min(rules.aim_cover_share, split["final"]),
                    left * split["final"],
                    rules.auto_edge_threshold,
                )
        with stage(f"selection ({rule})"):
            res = select(
                tables,
                levels,
                cand,
                sel["candidate_weights"],
                share_one=left * split["one_way"],
                total=public_n,
                totals=totals,
                c=c,
                neighbouring=spec.neighbouring,
                source=source,
                **{"share_" + step: left * split[step]},
                **auto_aim,
            )
    shares.update({"selection_" + k: float(v) for k, v in res.spent.items() if v > 0})
    final_share = left - sum(res.spent.values())
    weight = dict(zip(cand, sel["candidate_weights"]))
    chosen = sorted(set(res.chosen), key=lambda S: (len(S), S))
    chosen += [
        (j,)
        for j in range(len(levels))
        if levels[j] >= 2 and not any(j in S for S in chosen)
    ]
    groups = {}
    if rule == "mst" and sel.get("auto") and rules.auto_mst_pair_kappa > 0:
        # auto's tree: its pairs on coarsened levels of their ordinal
        # columns, as many groups as the noise affords (_coarse_pairs)
        g = group_count(
            n_now if n_now is not None else _total(res, public_n),
            c,
            final_share,
            len(chosen),
            rules.auto_mst_pair_kappa,
        )
        groups = level_groups(spec.blocks, levels, res.probs, g, keep=keep)
    coarse = []
    if groups:
        released, scales, Wf, coarse = measure_coarsened(
            tables,
            levels,
            chosen,
            weight,
            final_share,
            c,
            spec.neighbouring,
            source,
            public_n,
            groups,
        )
    else:
        Wf = AttributeMarginalWorkload(
            levels,
            max(len(S) for S in chosen),
            tables=chosen,
            weights=[weight.get(S, 1.0) for S in chosen],
        )
        if rule == "aim" and rules.aim_final_one_way_weight > 0:
            Wf = with_one_way_tables(Wf, rules.aim_final_one_way_weight)
        released, scales, _ = measure_tables(
            tables, Wf, final_share, c, spec.neighbouring, source, public_n
        )
    del tables
    # ---- post-processing: the total from every noisy total released
    if public_n is None:
        i0 = Wf.subsets.index(())
        allt = res.totals + [(float(released[()][0]), float(scales[i0]) ** 2)]
        v = np.array([x for x, _ in allt])
        var = np.array([s for _, s in allt])
        released[()] = np.array([float(np.sum(v / var) / np.sum(1 / var))])
        total_sd = float(np.sqrt(1.0 / np.sum(1.0 / var)))
    else:
        total_sd = 0.0
    shares["final"] = float(final_share)
    tau_f = scales / c  # noise c τ_f (share folded in)
    return Measurements(
        released,
        Wf,
        tau_f,
        list(res.measurements) + coarse,
        rule,
        shares=shares,
        selection=res,
        dependence=dependence,
        total_sd=total_sd,
        coarsened=[S for S in chosen if len(S) >= 2 and any(j in groups for j in S)],
    )


def _measure_dependence(tables, cand, levels, c, n, staged, source):
    """The pairs' dependence at share ``f_D`` (:mod:`._dependence`): one
    Gaussian measurement of sensitivity ``Δ``; the estimate ``D`` is
    post-processing of it and the noisy or public total ``n``. Returns
    ``(f_D, {"noisy_mean", "noise_sd", "D"})``."""
    rules, neighbouring = staged.rules, staged.spec.neighbouring
    f_dep = float(rules.auto_dependence_share)
    sd = noise_scale(c, f_dep, neighbouring)
    stat = pair_dependence(tables, [r for r in cand if len(r) == 2], levels)
    noisy = float(source.gaussian(np.array([stat]), sd)[0])
    del stat
    D = dependence_estimate(noisy, n, sd, rules)
    return f_dep, {"noisy_mean": noisy, "noise_sd": sd, "D": D}


def _target_pairs(tables, star, levels, c, f_star, staged, left, n, source):
    """The target's pairs worth their noise, by their measured dependence:
    the ``m`` pairs' ``T_ij`` (:func:`._dependence.pair_dependences`) in one
    Gaussian measurement at share ``f_star left`` (noise
    :func:`._dependence.target_pairs_noise_scale`), then
    :func:`._dependence.target_pairs_by_worth` at the final share
    ``(1 - f_star) left`` (post-processing). Returns the pairs and
    ``{"target_pairs", "target_pairs_noisy", "target_pairs_noise_sd"}``:
    the measurement, released."""
    rules, neighbouring = staged.rules, staged.spec.neighbouring
    share = f_star * left
    sd = target_pairs_noise_scale(c, share, neighbouring, len(star))
    stat = pair_dependences(tables, star, levels)
    noisy = source.gaussian(stat, sd)
    del stat
    chosen = target_pairs_by_worth(
        noisy, star, levels, left - share, c, neighbouring, n, sd, rules
    )
    found = {
        "target_pairs": list(star),
        "target_pairs_noisy": [float(v) for v in noisy],
        "target_pairs_noise_sd": float(sd),
    }
    return chosen, found


def _all_tables_at(tables, W, tau, c, f_dep, n, source, dependence):
    """The all-tables plan on what the dependence left (replace-one, a
    public total ``n``): every residual at noise ``c r``, ``r² = 1 / (1 -
    f_D)`` -- one Gaussian measurement at share ``1 - f_D``, so the fit
    spends ``f_D + (1 - f_D) = 1`` (``doc/privacy/gaussian_release.md``,
    "The pairs' dependence")."""
    r = float(np.sqrt(1.0 / (1.0 - f_dep)))
    t = W.whiten(W.residuals({S: tables[S] for S in W.tables}), tau)
    released = W.unwhiten(source.gaussian(t, c * r), tau, total=n)
    del t
    shares = {"dependence": f_dep, "final": 1.0 - f_dep}
    return Measurements(
        released,
        W,
        np.asarray(tau, dtype=np.float64) * r,
        rule="none",
        shares=shares,
        dependence=dependence,
    )


def _all_tables_after_dependence(t_noisy, W, tau, c, f0, f_dep, source, dependence):
    """The all-tables plan's residuals when the dependence was measured
    first (share ``f_dep``) and every table still won.

    The plan's draw ``t_noisy`` spends ``f0`` on the total (read) and ``1 -
    f0`` on the other residuals (never read). They get more noise, drawn
    independently, so that their noise is ``c r`` with ``r² = (1 - f0) / (1
    - f0 - f_dep)``: a Gaussian measurement at share ``1 - f0 - f_dep``, the
    same distribution as one fresh draw at that scale, and the fit spends
    ``f0 + f_dep + (1 - f0 - f_dep) = 1`` (``doc/privacy/gaussian_release.md``,
    "The pairs' dependence").
    """
    i0 = W.subsets.index(())
    rest = 1.0 - f0
    r = float(np.sqrt(rest / (rest - f_dep)))
    # whitened entries (W.whiten: the residuals with τ > 0 in subsets'
    # order); each carries noise c, the total's one entry stays as read
    at = sum(W.residual_size(A) for A, s in zip(W.subsets[:i0], tau[:i0]) if s > 0)
    others = np.ones(len(t_noisy), dtype=bool)
    others[at] = False
    t_out = np.array(t_noisy, dtype=np.float64)
    t_out[others] = source.gaussian(t_out[others], c * np.sqrt(r * r - 1.0))
    released = W.unwhiten(t_out, tau, total=None)
    scales = np.array(tau, dtype=np.float64) * r
    scales[i0] = tau[i0]
    shares = {"count": f0, "dependence": f_dep, "final": rest - f_dep}
    return Measurements(
        released, W, scales, rule="none", shares=shares, dependence=dependence
    )
