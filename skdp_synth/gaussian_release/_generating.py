"""Generating: from the released tables to synthetic rows (post-processing).

The last of :class:`~skdp_synth.gaussian_release.ProjectedGaussianRelease`'s
four stages. It receives the :class:`~._values.Reconstruction` -- released
values and their public noise scales, never the data -- and fits the
model that ``sample`` draws from: for marginal workloads the shared
generator's table of rows (:func:`skdp_synth.generator.fit_rows`, on
``N`` rows from the plan's public size rule), for explicit workloads
candidate rows reweighted to the release
(:func:`skdp_synth.correction.reweight_to_targets`); and the integer
invariant tables that every sample holds (:mod:`._invariants`). It also
holds the sampling-time steps on that model: rounding to ``n`` rows with
the invariants held, and moving the rows of an unsupported level.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._progress import stage
from ..correction import reweight_to_targets
from ..generator import Measurement, Zeros, fit_rows, rows_loss, warn_disagreement
from ..workloads import MarginalWorkload, universe_points
from ._invariants import repair_rows, rounded_tables, running_intersection_order
from ._values import Generated

__all__ = ["fit_model", "generate", "hold_invariants", "move_level"]


def generate(rec, source):
    """The synthetic model of the release ``rec`` (:class:`~._values.Generated`).

    ``source``'s generator stream draws the generator's descent (or the
    candidate rows); nothing else is random here.
    """
    staged = rec.planned
    if rec.measurements is not None:
        N = staged.model_table_rows(rec.workload, rec.n_estimate)
        n_levels = staged.spec.blocks.n_levels
        result = fit_model(
            rec.measurements,
            n_levels,
            rec.n_estimate,
            N,
            source,
            zeros=staged.spec.zero_cells(),
            one_way_weight=staged.rules.generator_one_way_weight,
        )
        rows = result.rows
        fitted = {
            "model_rows_": int(N),
            "generator_loss_": result.loss,
            "candidates_": None,
            "weights_": None,
            "reweight_residual_": None,
        }
    else:
        rows = None
        fitted = fit_candidates(
            rec.workload, rec.coords, rec.n_estimate, staged.spec.n_candidates, source
        )
    inv = staged.attribute_invariants
    tables = None if inv is None else integer_tables(inv, rec.invariant_tables)
    return Generated(fitted, rows, tables)


def fit_model(
    measurements,
    n_levels,
    n_estimate,
    N,
    source,
    max_sweeps=None,
    centre=False,
    zeros=None,
    one_way_weight=1.0,
):
    """Fit the synthetic table to the released measurements (post-processing).

    :func:`skdp_synth.generator.fit_rows` sees only the noisy answers and
    their public noise scales. Its table has ``N`` rows
    (``max_model_rows``; ``"auto"``:
    :func:`~skdp_synth.generator.auto_model_rows` from the plan's public
    rule and the released total ``n̂``,
    :meth:`~._values.StagePlan.model_table_rows`); ``sample(n)`` then
    rounds it to any ``n``. ``centre``: a shrinkage centre's fit, which
    does not warn (the final fit does); ``max_sweeps`` caps its descent.
    ``zeros``: the public structural zeros
    (:meth:`~._values.ReleaseSpec.zero_cells`), held by the final fit (the
    fitted table puts 0 on those cells; the shrinkage centres' short fits
    go without them: with them they took 4 times the fit's seconds on the
    churn table of ``benchmarks/bench_structural_zeros.py``).
    ``one_way_weight``: the factor on the 1-way measurements' terms of the
    fit's loss (``ReleaseRules.generator_one_way_weight``): where many noisy
    pairs measure the same column, rows that cannot hold their negative
    cells otherwise drift off the released 1-way table. Returns
    ``fit_rows``'s result, its ``loss`` in the measurements' own noise
    metric (unweighted; ``initial_loss``, and a centre's ``loss``, in the
    weighted one).
    """
    n_hat = max(1, int(round(n_estimate)))
    if N < n_hat:
        # the same proportions on fewer rows: answers and noise scales
        # scale together, so the fit's objective (in noise variances) has
        # the same shape (``max_model_rows`` in the class docstring)
        scale = N / n_hat
        measurements = [
            Measurement(m.attributes, m.query, m.values * scale, m.sigma * scale)
            for m in measurements
        ]
    weighted = measurements
    if one_way_weight != 1.0:
        # the 1-way terms count one_way_weight times: their noise scales
        # over sqrt(weight) (the answers are unchanged)
        root = math.sqrt(one_way_weight)
        weighted = [
            Measurement(m.attributes, m.query, m.values, m.sigma / root)
            if len(m.attributes) == 1
            else m
            for m in measurements
        ]
    with stage("fitting the generator"):
        short = {} if max_sweeps is None else {"max_sweeps": max_sweeps}
        if zeros:
            short["zeros"] = zeros
        result = fit_rows(
            weighted,
            n_levels,
            N,
            rng=source.rng,
            check_agreement=N >= n_hat and weighted is measurements,
            warn=not centre,
            **short,
        )
    if weighted is not measurements and not centre:
        # the loss, and the test of the tables' agreement, in the noise
        # metric (a centre's fit keeps only its rows: no second pass there)
        result = dataclasses.replace(
            result, loss=rows_loss(measurements, result.rows, n_levels)
        )
        if N >= n_hat:
            warn_disagreement(result.loss, result.n_measured)
    return result


def fit_candidates(W, coords, n_estimate, n_candidates, source):
    """Explicit workloads: candidate rows reweighted to the released
    coordinates (the fitted attributes ``candidates_``, ``weights_``,
    ``reweight_residual_``; post-processing)."""
    m = int(n_candidates)
    p = W.n_features
    rng = source.rng
    if W.universe_size <= m:
        cand = universe_points(p)
    elif isinstance(W, MarginalWorkload):
        # released 1-way frequencies: sum_i chi_j(x_i) = n - 2 sum_i x_ij
        F0 = coords[0] / math.sqrt(W.eigenvalues[0])
        F1 = coords[1 : 1 + p] / math.sqrt(W.eigenvalues[1])
        freq = np.clip((F0 - F1) / (2 * max(F0, 1.0)), 0.5 / m, 1 - 0.5 / m)
        cand = (rng.random((m, p)) < freq).astype(np.int8)
    else:
        cand = rng.integers(0, 2, size=(m, p)).astype(np.int8)
    cand = np.unique(cand, axis=0)
    if n_estimate is None:
        return {
            "candidates_": cand.astype(np.float64),
            "weights_": None,
            "reweight_residual_": None,
        }
    F = W.point_coords(cand)
    # a noisy total can be tiny or negative on small data: floor it at 1
    result = reweight_to_targets(F, coords / max(n_estimate, 1.0))
    return {
        "candidates_": cand.astype(np.float64),
        "weights_": result.weights,
        "reweight_residual_": result.residual,
    }


def integer_tables(inv, tables):
    """The exact invariant tables (released values) the rows will hold.

    The released tables are counts computed exactly up to floating-point
    rounding of the residual transform (or of the projection); they are
    integers, so they are rounded to them -- after checking that the
    rounding is far below one count (it would reveal a bug, not data).
    """
    order = running_intersection_order(inv.sets)
    out = {}
    for S in order:
        T = np.asarray(tables[S], dtype=np.float64)
        R = np.rint(T)
        if not np.all(np.abs(T - R) < 1e-6 * max(1.0, float(np.abs(T).max()))):
            raise RuntimeError(  # pragma: no cover - a bug
                "the released invariant tables are not integer counts"
            )
        out[S] = R.astype(np.int64)
    return out


def hold_invariants(levels, invariant_tables, n, n_levels, rng):
    """Rows that hold the invariant tables (post-processing of the release).

    ``n`` = the invariant total: the tables exactly; other ``n``: the
    tables rounded to ``n`` rows within one count per cell
    (:func:`skdp_synth.invariants.rounded_tables`). The fewest attribute
    values are changed (:func:`skdp_synth.invariants.repair_rows`).
    """
    if invariant_tables is None:
        return levels
    targets = rounded_tables(invariant_tables, n, n_levels)
    return repair_rows(levels, targets, n_levels, rng)


def move_level(
    rows, j, level, make_rng, zeros=None, n_levels=None, keep=(), neighbours=None
):
    """``rows`` with the rows at ``level`` of attribute ``j`` moved to levels
    of ``j`` that the other rows hold (``make_rng()``'s generator, made only
    when a row moves), or ``None`` when every row is at ``level`` (nothing
    to draw from). Post-processing.

    ``keep``: levels of ``j`` whose rows are never drawn as a destination
    (their count stays what the model gave them) unless the other rows
    are all at them: a numeric column's kept missing level, whose share
    the release measured on its own, when one of its value bins is
    dropped (:meth:`SynthesisPipeline._drop_unsupported_levels`).

    ``zeros`` (the release's ``structural_zeros_``; ``n_levels`` the
    domain): a moved row that lands in an impossible cell is moved on to
    the nearest feasible combination of its tied attributes other than
    ``level`` (:meth:`skdp_synth.generator.Zeros.make_feasible`), so the
    model's rows keep holding them.

    ``neighbours``: attributes (other than ``j``) the moved rows are
    matched on. Each moved row takes ``j``'s level from a row nearest to it
    on them (fewest differing levels, ties at random;
    :func:`_nearest_donor_levels`): a hot-deck draw from ``j`` given its
    neighbours in the model instead of from ``j``'s marginal, so the moved
    rows keep the dependence the model gave the rest of the row. ``None``
    or empty: drawn from every other row alike."""
    at = rows[:, j] == level
    if at.all():
        return None
    if at.any():
        rng = make_rng()
        donors = ~at
        if len(keep):
            free = donors & ~np.isin(rows[:, j], np.asarray(keep, dtype=rows.dtype))
            donors = free if free.any() else donors
        donors = np.flatnonzero(donors)
        rows = rows.copy()
        if neighbours is None or not len(neighbours):
            pick = donors[rng.integers(0, donors.size, size=int(at.sum()))]
        else:
            moved = np.flatnonzero(at)
            pick = _nearest_donor_levels(rows, moved, donors, list(neighbours), rng)
        rows[at, j] = rows[pick, j]
        if zeros:
            gone = np.zeros(int(n_levels[j]), dtype=bool)
            gone[level] = True
            try:
                Zeros([*zeros, ((j,), gone)], n_levels).make_feasible(rows, rng)
            except ValueError:
                pass  # nothing feasible without the level: repaired after sampling
    return rows


#: at most this many donor rows are compared with each moved row (a random
#: subset of the rest when there are more) ...
MAX_DONORS = 4096
#: ... and fewer where the moved rows times their neighbours would make
#: more level comparisons than this in all (never under
#: :data:`MIN_DONORS`): the hot-deck's work stays under a second or two
#: whatever the model's size (loans at ε = 1, 32 levels dropped: 0.2 s)
MAX_COMPARISONS = 1 << 28
MIN_DONORS = 256


def _nearest_donor_levels(rows, moved, donors, neighbours, rng):
    """For each row index in ``moved``, the index of a row in ``donors``
    with the fewest levels unlike it on the ``neighbours`` columns (ties
    broken uniformly at random). Post-processing of the model's rows.

    A moved row with donors alike on every neighbour takes one of them
    uniformly (grouped by their levels: no comparison); the rest are
    compared level by level with at most :data:`MAX_DONORS` donors."""
    keys = np.unique(rows[:, neighbours], axis=0, return_inverse=True)[1].ravel()
    order = donors[np.argsort(keys[donors], kind="stable")]
    sorted_keys = keys[order]
    first = np.searchsorted(sorted_keys, keys[moved], side="left")
    alike = np.searchsorted(sorted_keys, keys[moved], side="right") - first
    out = np.empty(moved.size, dtype=np.intp)
    exact = alike > 0
    draw = (rng.random(int(exact.sum())) * alike[exact]).astype(np.intp)
    out[exact] = order[first[exact] + np.minimum(draw, alike[exact] - 1)]
    rest = moved[~exact]
    if rest.size:
        out[~exact] = _hamming_donors(rows, rest, donors, neighbours, rng)
    return out


def _hamming_donors(rows, moved, donors, neighbours, rng):
    """:func:`_nearest_donor_levels` by comparing levels, on a random subset
    of the donors where there are more than the work bounds allow."""
    room = MAX_COMPARISONS // max(1, moved.size * len(neighbours))
    cap = min(MAX_DONORS, max(MIN_DONORS, room))
    if donors.size > cap:
        donors = rng.choice(donors, size=cap, replace=False)
    pool = rows[np.ix_(donors, neighbours)]
    chunk = max(1, (1 << 22) // max(1, pool.size))
    out = np.empty(moved.size, dtype=np.intp)
    for start in range(0, moved.size, chunk):
        part = rows[np.ix_(moved[start : start + chunk], neighbours)]
        unlike = (part[:, None, :] != pool[None, :, :]).sum(axis=2)
        # a uniform draw in [0, 1) breaks ties without crossing a whole level
        score = unlike + rng.random(unlike.shape)
        out[start : start + chunk] = donors[np.argmin(score, axis=1)]
    return out
