"""Reconstructing: from the noisy answers to released tables (post-processing).

The third of :class:`~skdp_synth.gaussian_release.ProjectedGaussianRelease`'s
four stages. It receives the :class:`~._values.Measurements` -- never the
data -- and computes what the release publishes and what the generator
fits: the least-squares step of :cite:`Nikolov2013` Algorithm 3, the
released tables and total, the residuals as measurements with their public
noise scales, the exact invariant residuals, and the James--Stein
shrinkage of the weak interactions (:mod:`._shrinkage`), whose centres are
rows fitted by the generator it is handed (``fit_model``). Everything here
is a function of released values and public scales, so it costs no
privacy; this module imports nothing that reads data.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._progress import stage
from ..generator import Measurement
from ..geometry import nearest_in_symmetric_hull
from ..mechanisms.additive import MaskWhitening
from ..workloads import AttributeMarginalWorkload, MarginalWorkload
from ._plan_choice import noise_tv
from ._shrinkage import shrink_interactions, shrink_towards_rows
from ._values import Reconstruction

__all__ = ["one_way_level_estimate", "one_way_share_estimate", "reconstruct"]


def reconstruct(measured, staged, source, fit_model):
    """The released tables and the generator's input, from ``measured``.

    ``staged``: the :class:`~._values.StagePlan`. ``fit_model``:
    :func:`._generating.fit_model`, which fits the shrinkage centres' rows
    (from ``source``'s generator stream). Returns
    :class:`~._values.Reconstruction`.
    """
    if staged.plan.space != "residuals":
        return _answer_tables(measured, staged)
    n_levels = staged.spec.blocks.n_levels

    def centre(others, W, n_estimate, sweeps, label):
        # a shrinkage centre's fit: it does not warn (the final fit does)
        with stage(f"fitting the centre of {label}"):
            N = staged.model_table_rows(W, n_estimate)
            result = fit_model(
                others,
                n_levels,
                n_estimate,
                N,
                source,
                max_sweeps=sweeps,
                centre=True,
                one_way_weight=staged.rules.generator_one_way_weight,
            )
        return result.rows

    return _residual_tables(measured, staged, centre)


def _answer_tables(measured, staged):
    """The bit-level mechanisms' released answers, total and generator input."""
    plan, spec = staged.plan, staged.spec
    workload, released = plan.workload, measured.released
    if plan.sparse:
        released = least_squares(workload, plan, released, spec.epsilon, spec.n_rows)
    if plan.space == "coords":
        coords = released
        cells = workload.to_cells(released)
    else:
        cells = released
        coords = workload.to_coords(released)
    fitted = {
        "workload_": workload,
        "noise_model_": plan.noise,
        "decomposition_": plan.decomposition,
        "sensitivity_": plan.sensitivity,
        "expected_error_": plan.expected_error,
        "gaussian_optimal_error_": plan.lower_bound,
        "released_": cells,
        "_released_coords": coords,
    }
    # the total the release carries (public n under replace-one)
    if spec.neighbouring == "replace-one":
        n_estimate = float(plan.n_samples)
    else:
        n_estimate = workload.released_total(coords, cells)
    fitted["n_estimate_"] = n_estimate
    measurements = None
    if isinstance(workload, MarginalWorkload) and n_estimate is not None:
        sigma = math.sqrt(plan.expected_error / workload.n_queries)
        measurements = bit_table_measurements(workload, spec.blocks, cells, sigma)
    inv, tables = staged.attribute_invariants, None
    if inv is not None:
        # C · release = C · y (exact up to the projection's rounding)
        C = plan.invariants
        values = C @ cells
        tables, pos = {}, 0
        for S in inv.sets:
            tables[S] = values[pos : pos + 2 ** len(S)]
            pos += 2 ** len(S)
    return Reconstruction(
        fitted, workload, n_estimate, measurements, coords, tables, staged
    )


def _residual_tables(measured, staged, centre):
    """The released residuals' tables, fitted attributes and the generator's
    input (``"residual"``).

    ``measured.exact``: the residuals the invariants publish exactly
    (``plan.invariants``); never with selection
    (:func:`._planning.selection_plan`). ``centre(others, W, n̂, sweeps,
    label)``: the rows of a generator fitted to ``others``.
    """
    plan, spec, rules = staged.plan, staged.spec, staged.rules
    W, tau, released = measured.workload, measured.scales, measured.released
    c, rule, exact, inv = plan.noise_sigma, measured.rule, measured.exact, None
    if plan.invariants is not None:
        inv = plan.invariants
    names = [str(x) for x in spec.blocks.names]
    fitted = {
        "selection_": rule,
        # the tables measured at the end: the workload's, and the pairs
        # auto's tree measured on coarsened levels
        "marginals_": [
            tuple(names[j] for j in S)
            for S in list(W.tables)
            + [S for S in measured.coarsened if S not in W.tables]
        ],
        "selection_shares_": measured.shares or {"final": 1.0},
        "workload_": W,
        "noise_model_": None,
        "decomposition_": None,
        "sensitivity_": plan.sensitivity,
        "residual_scales_": c * tau,
    }
    if rule == "none" and measured.shares is None:
        fitted["expected_error_"] = plan.expected_error
        fitted["gaussian_optimal_error_"] = plan.lower_bound
    else:
        fitted["expected_error_"] = W.expected_error(tau, c)
        fitted["gaussian_optimal_error_"] = None
    fitted["_residuals"] = released
    fitted["released_"] = W.all_tables(released)
    n_estimate = fitted["n_estimate_"] = float(released[()][0])
    # its noise sd (public: a function of the plan): the plan's scale of the
    # total, or that of the mean with the selection steps' noisy totals
    total_sd = measured.total_sd
    if total_sd is None and () in W.subsets:
        total_sd = float(c * tau[W.subsets.index(())])
    fitted["_n_estimate_sd"] = total_sd
    measurements = list(measured.extra) + [
        Measurement(A, W.residual_matrix(A), released[A], c * tau[i])
        for i, A in enumerate(W.subsets)
        if A and tau[i] > 0
    ]
    exact_measurements = []
    if exact:
        # exact residuals steer the generator with the weight of its most
        # precise measurement, but not below half a row of its model table
        # (the model's integer rows cannot match closer; a smaller scale
        # would let that rounding dominate its loss). The rows are made to
        # hold the invariants exactly (_generating.hold_invariants).
        n_model = float(staged.model_table_rows(W, n_estimate))
        sharp = max(float(np.min(c * tau[tau > 0])), 0.5 * n_estimate / n_model)
        exact_measurements = [
            Measurement(A, W.residual_matrix(A), released[A], sharp)
            for A in W.subsets
            if A in exact and A
        ]
    shrinkage_factors = {}
    t = staged.target_index
    keep = [] if t is None else [t]
    shrink_triples = False
    # the gate reads the noise of the tables shrunk towards independence:
    # with ``target``, the target's triples (many cells) would otherwise
    # lift the mean past the threshold and switch the pairs' shrinkage
    # off (ReleaseRules.shrinkage_max_noise_tv's note)
    if (
        rule == "none"
        and spec.shrinkage is not None
        and W.n_attributes >= rules.shrinkage_min_attributes
        and noise_tv(W, tau, c, n_estimate, without=t) <= rules.shrinkage_max_noise_tv
    ):
        # every table measured: the weak interactions are pulled towards
        # what the other measurements imply ("james-stein", cross-fitted)
        # or towards independence (skdp_synth.shrinkage; post-processing).
        # The generator's input only: released_ keeps the unbiased
        # answers. Exact (invariant) residuals are never shrunk, but they
        # centre the others (an invariant 1-way table has no noisy
        # measurement).
        if spec.shrinkage == "james-stein-independence":
            measurements, factors = shrink_interactions(
                measurements,
                spec.blocks.n_levels,
                n_estimate,
                keep=keep,
                context=[m for m in exact_measurements if len(m.attributes) == 1],
            )
        else:
            measurements, factors = shrink_cross_fitted(
                measurements, exact_measurements, W, t, n_estimate, centre, rules
            )
        shrinkage_factors = {tuple(names[j] for j in A): f for A, f in factors.items()}
        shrink_triples = t is not None
    # every noisy measurement of a 1-way residual (the selection rounds'
    # and the final plan's): one_way_level_estimate combines them
    one_way = {}
    for m in measurements:
        if len(m.attributes) == 1:
            one_way.setdefault(m.attributes[0], []).append(
                (np.asarray(m.values, dtype=np.float64), float(m.sigma))
            )
    if shrink_triples:
        measurements, factors = shrink_target_triples(
            measurements, exact_measurements, W, t, n_estimate, centre
        )
        shrinkage_factors.update(
            {tuple(names[j] for j in A): f for A, f in factors.items()}
        )
    fitted["shrinkage_factors_"] = shrinkage_factors
    fitted["_one_way_residuals"] = one_way
    measurements += exact_measurements
    tables = None
    if inv is not None:
        tables = {S: W.reconstruct(released, S) for S in inv.sets}
    return Reconstruction(fitted, W, n_estimate, measurements, None, tables, staged)


def shrink_cross_fitted(noisy, exact, W, t, n_estimate, centre, rules):
    """Each interaction residual shrunk towards rows fitted without it.

    The noisy tables of two or more attributes without ``t`` (the ones
    ``"james-stein-independence"`` shrinks) are dealt, in the workload's
    order, into ``rules.shrinkage_folds`` folds. For fold ``k`` the
    generator is fitted (``centre``; ``rules.shrinkage_centre_sweeps``
    sweeps when every shrunk table is a pair, to convergence otherwise) to
    every measurement outside the fold -- the other folds as measured, the
    1-way tables, the total, the target's pairs and the exact residuals,
    but not the target's triples (fitted exactly they would carry their
    noise into the centre) -- and the fold's tables are shrunk towards what
    those rows imply (:func:`skdp_synth.shrinkage.shrink_towards_rows`). The
    centre of a table is a function of measurements whose noise is
    independent of its own (plus the generator's stream), so the
    James--Stein dominance holds conditionally on it, as for the
    target's triples (``doc/privacy.md``). Independence is the centre
    the rows fall back to where nothing else constrains a pair; where
    other pairs do (diamonds: the factors towards independence average
    .92 at ε = 0.3, towards the rows .64), weak residuals are weighed
    against what the neighbours imply. Costs ``rules.shrinkage_folds``
    short generator fits. Post-processing.

    Returns the measurements (same order, only the shrunk values
    changed) and ``{attributes: f_A}``.
    """

    def target_triple(A):
        return t is not None and len(A) >= 3 and t in A

    tables = [
        m.attributes
        for m in noisy
        if len(m.attributes) >= 2
        and (t is None or t not in m.attributes)
        and m.query is not None
        and m.values.size >= 3
    ]
    fold = {A: i % rules.shrinkage_folds for i, A in enumerate(tables)}
    # short centre fits for pairs; 3-way centres need the full descent
    sweeps = rules.shrinkage_centre_sweeps if all(len(A) == 2 for A in tables) else None
    out, factors = list(noisy), {}
    for k in range(min(rules.shrinkage_folds, len(tables))):

        def select(A, k=k):
            return fold.get(A) == k

        others = [
            m
            for m in noisy
            if not select(m.attributes) and not target_triple(m.attributes)
        ] + list(exact)
        rows = centre(others, W, n_estimate, sweeps, f"shrinkage fold {k + 1}")
        shrunk, f = shrink_towards_rows(noisy, rows, W, n_estimate, select=select)
        out = [
            new if select(m.attributes) else old
            for m, new, old in zip(noisy, shrunk, out)
        ]
        factors.update(f)
    return out, factors


def shrink_target_triples(noisy, exact, W, t, n_estimate, centre):
    """The target's noisy 3-way residuals shrunk towards the pairs' rows.

    The generator is first fitted (``centre``) to every other measurement
    (the pairs, 1-way tables, total and exact residuals); each noisy table
    of three or more attributes containing ``t`` is then shrunk towards
    what those rows imply (:func:`skdp_synth.shrinkage.shrink_towards_rows`)
    and the final fit uses everything. Measured (ε = 0.3, 4 seeds,
    train-on-synthetic with ``target=``; fitted as measured -> shrunk
    towards 0 (2-3 seeds) -> towards the pairs' rows): diamonds cut
    .637 -> .648 -> .658, price .799 -> .803 -> .784; nass_cds seatbelt
    .675 -> .683 -> .699, dead .970 -> .966 -> .968. Costs one more
    generator fit. Post-processing. Returns the measurements and
    ``{attributes: f_A}``.
    """

    def select(A):
        return len(A) >= 3 and t in A

    if not any(select(m.attributes) for m in noisy):
        return noisy, {}
    others = [m for m in noisy if not select(m.attributes)] + list(exact)
    rows = centre(others, W, n_estimate, None, "the target's triples")
    return shrink_towards_rows(noisy, rows, W, n_estimate, select=select)


def least_squares(W, plan, z_noisy, epsilon, n_rows):
    """:cite:`Nikolov2013` Algorithm 3: project the X-part onto
    ``n_rows X Xᵀ K``."""
    dec = plan.decomposition
    eps_n = epsilon * n_rows
    big = [i for i in range(dec.k) if dec.dims[i] >= eps_n]
    if not big:
        return z_noisy
    t = max(big) + 1
    wh = plan.noise.whitening
    if isinstance(wh, MaskWhitening):
        cols = np.flatnonzero(np.isin(W.degrees, np.concatenate(dec.pieces[:t])))
        Xb = np.eye(W.rank)[:, cols]
    else:
        m = int(np.sum(dec.dims[:t]))
        Xb = wh.T[:m].T
    G = W.universe_coords()
    H = n_rows * (Xb.T @ G)
    b = Xb.T @ z_noisy
    xhat = nearest_in_symmetric_hull(H, b)
    return z_noisy - Xb @ b + Xb @ xhat


def one_way_level_estimate(W, one_way, residual_scales, residuals, j, level):
    """``(T̂_j[level], σ_j)``: the release's estimate of one 1-way count and
    its noise standard deviation, or ``None`` (post-processing).

    ``T̂_j`` is rebuilt (:meth:`AttributeMarginalWorkload.reconstruct`)
    from the released total and the inverse-variance mean ``z̄_j`` of
    every noisy measurement of the residual ``z_j`` (``one_way``: the
    selection rounds' and the final plan's, :cite:`Xiao2023`). Its noise
    standard deviation is ``σ_j = sqrt(σ_∅²/L_j² + var(z̄_j)(1 - 1/L_j))``
    (:meth:`AttributeMarginalWorkload.cell_variance` for ``S = (j,)``;
    ``σ_∅`` is the plan's scale of the total, an upper bound where the
    total was averaged with earlier noisy totals). ``None`` for bit-level
    workloads and where ``z_j`` was not measured.
    """
    parts = _one_way_parts(W, one_way, residual_scales, residuals, j)
    if parts is None:
        return None
    table, var_0, var_j, L = parts
    return float(table[int(level)]), math.sqrt(var_0 / L**2 + var_j * (1 - 1 / L))


def one_way_share_estimate(W, one_way, residual_scales, residuals, j, level):
    """``(p̂, sd)``: the release's estimate of one level's share of the
    rows, ``p̂ = max(T̂_j[level], 0) / n̂``, and its noise standard deviation,
    or ``None`` (post-processing; as :func:`one_way_level_estimate`).

    ``T̂_j[level] = n̂ / L_j + (the contrast from z̄_j)`` shares the total's
    noise ``e_∅``: ``cov(T̂_j[level], n̂) = σ_∅² / L_j``. To first order
    (delta method) the share's error is ``(e_level - p e_∅) / n``, of variance
    ``σ_∅² (p - 1/L_j)² + var(z̄_j) (1 - 1/L_j)`` over ``n²``; ``σ_j / n̂``
    alone leaves out the total's noise, most for a share far from ``1/L_j``
    (nhefs's ``modth``, 81 % missing of 13 levels, ε = 1: ``σ_j / n̂`` =
    .035, this sd .048; the released shares over seeds 0-9 spread .065).
    ``p`` is the estimate, clipped to ``[0, 1]`` (a plug-in: for a share
    near ``1/L_j`` the sd falls below ``σ_j / n̂``, and below the sd at a true
    share of 0: rotterdam's complete ``pgr``, released at 9.0 % at ε = 0.3,
    .0274 against .0284); ``n̂`` the released total.
    """
    parts = _one_way_parts(W, one_way, residual_scales, residuals, j)
    if parts is None:
        return None
    table, var_0, var_j, L = parts
    n_hat = float(residuals[()][0])
    if not n_hat > 0:
        return None
    p = min(max(float(table[int(level)]), 0.0) / n_hat, 1.0)
    return p, math.sqrt(var_0 * (p - 1 / L) ** 2 + var_j * (1 - 1 / L)) / n_hat


def _one_way_parts(W, one_way, residual_scales, residuals, j):
    """``(T̂_j, σ_∅², var(z̄_j), L_j)`` of :func:`one_way_level_estimate`,
    or ``None``."""
    found = one_way.get(int(j))
    if not found or not isinstance(W, AttributeMarginalWorkload):
        return None
    j = int(j)
    prec = np.array([1.0 / s**2 for _, s in found])
    z_j = sum(p * z for p, (z, _) in zip(prec, found)) / prec.sum()
    var_j = 1.0 / prec.sum()
    var_0 = float(residual_scales[W.subsets.index(())]) ** 2
    L = float(W.n_levels[j])
    table = W.reconstruct({(): residuals[()], (j,): z_j}, (j,))
    return table, var_0, var_j, L


def bit_table_measurements(workload, blocks, cells, sigma):
    """Bit-level marginal tables as measurements of attribute-level tables.

    A table over bits ``(u_1, .., u_d)`` is a linear function of the table of
    the attributes those bits belong to: each combination of the attributes'
    levels has one code, whose bits at ``u_1..u_d`` give its cell. Every cell
    of the symmetric bit-level mechanisms has the same noise variance
    (``expected_error_ / q``); its correlations are ignored (a diagonal
    approximation of the generalised least squares metric).
    """
    owner = np.empty(blocks.n_features, dtype=np.int64)
    for a, b in enumerate(blocks.blocks):
        owner[b.start : b.start + b.width] = a
    codes = [b.codes() for b in blocks.blocks]
    levels = blocks.n_levels
    d = workload.d
    out = []
    for t, S in enumerate(workload.tables):
        A = tuple(sorted({int(owner[u]) for u in S}))
        grid = np.array(list(itertools.product(*[range(int(levels[a])) for a in A])))
        index = np.zeros(grid.shape[0], dtype=np.int64)
        for u in S:
            a = int(owner[u])
            bit = codes[a][grid[:, A.index(a)], u - blocks.blocks[a].start]
            index = index * 2 + bit
        Q = np.zeros((2**d, grid.shape[0]))
        Q[index, np.arange(grid.shape[0])] = 1.0
        values = cells[t * workload.n_cells : (t + 1) * workload.n_cells]
        out.append(Measurement(A, Q, values, sigma))
    return out
