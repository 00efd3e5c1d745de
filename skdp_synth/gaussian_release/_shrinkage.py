"""James--Stein shrinkage of noisy interaction residuals (post-processing only).

Why
---
Measuring every pair of a table spends the budget evenly, and when ``ε n`` is
small most pairs' *interactions* (what a pair table holds beyond its two
1-way tables) are weaker than the noise that measures them. The generator
then fits that noise as if it were structure: spurious dependence in the
2-way tables and, through them, in the 3-way tables. Selection (MST, AIM)
avoids it by not measuring weak pairs; shrinkage keeps every measurement and
lets each pair's own noisy residual say how much of it to believe.

What it computes
----------------
ResidualPlanner's release of a table ``A`` (``|A| >= 2``) is
``y_A = z_A + e_A`` with ``z_A = (⊗_{j∈A} Q_jᵀ) T_A`` in an orthonormal
(Helmert) basis and ``e_A ~ N(0, σ_A² I_p)``, ``p = Π (L_j - 1)``
(:mod:`skdp_synth.attribute_workload`). Independence of the attributes of
``A`` predicts ``m_A = (⊗ Q_jᵀ)(n̂ ⊗_{j∈A} p̂_j)`` from the released total
and 1-way tables (:func:`skdp_synth.generator._one_way_estimates`). The
positive-part James--Stein estimator (James & Stein 1961; Efron & Morris
1973, with a data-independent centre) is::

    ẑ_A = m_A + f_A (y_A - m_A),   f_A = max(0, 1 - (p - 2) σ_A² / ||y_A - m_A||²)

For ``p >= 3`` and a fixed centre it has a lower expected squared error than
``y_A`` for *every* ``z_A`` (Stein 1956; the positive part improves on it
again, Baranchik 1964). The centre here is not fixed but is a function of
the 1-way and total residuals only, whose noise is independent of ``e_A``
(ResidualPlanner measures each residual with independent noise), so
conditionally on them it is fixed and the dominance holds conditionally,
hence on average. Strongly dependent pairs keep ``f_A ≈ 1``; pairs whose
measured interaction is about its noise are pulled towards independence.

:func:`shrink_towards_rows` applies the same factor with another centre:
the residual of rows fitted to the *other* measurements. The release's
default (``shrinkage="james-stein"``) uses it for every table:
the tables are split into folds and each fold is centred at rows fitted
without it (cross-fitting), so a weak pair is weighed against what its
neighbours imply rather than against independence; ``target=``'s 3-way
tables are centred at what the pairs imply.
:func:`shrink_interactions` is the independence centre
(``shrinkage="james-stein-independence"``).

Privacy
-------
Everything here reads released values and public noise scales: it is
post-processing (Dwork & Roth 2014, Prop. 2.1), so the recorded ``(ε, δ)``
is unchanged (``doc/privacy.md``, "Shrinkage of weak interactions").
"""

from __future__ import annotations

import numpy as np

from ..generator import Measurement, _one_way_estimates

__all__ = ["james_stein_factor", "shrink_interactions", "shrink_towards_rows"]


def james_stein_factor(residual, sigma):
    """``f = max(0, 1 - (p - 2) σ² / ||r||²)`` for ``r`` of ``p >= 3`` entries.

    ``residual`` is ``y - m`` (the measurement minus its centre). ``p < 3``:
    1 (Stein's estimator improves on the raw one only from 3 dimensions on).
    """
    r = np.asarray(residual, dtype=np.float64).ravel()
    p = r.size
    if p < 3:
        return 1.0
    norm2 = float(r @ r)
    if norm2 <= 0.0:
        return 0.0
    return max(0.0, 1.0 - (p - 2) * float(sigma) ** 2 / norm2)


def shrink_interactions(measurements, n_levels, total, *, keep=(), context=()):
    """Measurements with every interaction residual shrunk towards independence.

    Parameters
    ----------
    measurements : list of Measurement
        Released measurements; those of ``|A| >= 2`` attributes whose query
        is a residual map (any linear map of ``T_A`` with i.i.d. noise) are
        shrunk, the others (total, 1-way tables) returned unchanged.
    n_levels : sequence of int
        Levels of each attribute (public).
    total : float
        The released total ``n̂`` (the scale of the independence centre).
    keep : collection of int, default=()
        Attributes whose tables are left unshrunk (``target=``: the user
        said those tables matter, and a rare target's interactions are small
        in squared counts, which is what the estimator weighs; the target's
        3-way tables are shrunk by :func:`shrink_towards_rows` instead).
    context : list of Measurement, default=()
        Further released measurements used only for the 1-way tables of the
        centre, never shrunk or returned (the exact residuals of invariants:
        a 1-way table published exactly has no noisy measurement).

    Returns
    -------
    shrunk : list of Measurement
        Same order, attributes, queries and noise scales; only values change.
    factors : dict
        ``{attributes: f_A}`` of every measurement that was shrunk
        (``p >= 3`` values, outside ``keep``).
    """
    n_levels = np.asarray(n_levels, dtype=np.int64)
    keep = set(int(j) for j in keep)
    total = max(float(total), 1.0)
    one_way = _one_way_estimates(list(measurements) + list(context), n_levels, total)
    out, factors = [], {}
    for m in measurements:
        A = m.attributes
        if len(A) < 2 or keep.intersection(A) or m.values.size < 3:
            out.append(m)  # unchanged (Stein's gain needs p >= 3)
            continue
        table = total * one_way[A[0]]
        for j in A[1:]:
            table = np.multiply.outer(table, one_way[j])
        centre = table.ravel()
        if m.query is not None:
            centre = m.query @ centre
        f = james_stein_factor(m.values - centre, m.sigma)
        factors[A] = f
        out.append(Measurement(A, m.query, centre + f * (m.values - centre), m.sigma))
    return out, factors


def shrink_towards_rows(measurements, rows, workload, total, *, select):
    """Measurements shrunk towards what fitted rows already imply.

    The centre of a selected measurement ``y_A = Q_A T_A + e_A`` is
    ``m_A = Q_A T_A(R) n̂/N``, the same query of the table of the ``N`` rows
    ``R`` scaled to the released total, and ``ẑ_A = m_A + f_A (y_A - m_A)``
    with the positive-part factor of :func:`james_stein_factor`. ``target=``
    adds the target's 3-way tables, whose residuals (what a triple holds
    beyond its pairs) are mostly noise at small budgets; fitted as measured
    they replaced the 3-way structure the pairs imply by that noise
    (diamonds at ε = 0.3: target-triple TV .055 -> .069 with the triples
    at 1/50 of the weight). Centred at the rows of a generator fitted to the
    *other* measurements, only the part the pairs do not explain is weighed
    against the noise.

    Dominance: ResidualPlanner measures each residual with independent
    noise, and rows fitted to the other residuals (plus the generator's own
    random stream) are independent of ``e_A``, so conditionally on them the
    centre is fixed and the James--Stein estimator beats ``y_A`` in expected
    squared error (Stein 1956), hence on average. Post-processing: reads
    released values, public scales and rows fitted to released values.

    Parameters
    ----------
    measurements : list of Measurement
        Released measurements; the selected ones need a residual query
        (``m.query`` not None) of ``p >= 3`` values to be shrunk.
    rows : ndarray of shape (N, a)
        Level indices of rows fitted without the selected measurements.
    workload : AttributeMarginalWorkload
        Any workload over the attributes (public levels): its
        :meth:`~skdp_synth.attribute_workload.AttributeMarginalWorkload.table`
        counts the rows' tables.
    total : float
        The released total ``n̂``.
    select : callable
        ``select(attributes) -> bool``: which measurements to shrink.

    Returns
    -------
    shrunk : list of Measurement
        Same order, attributes, queries and noise scales; only the selected
        values change.
    factors : dict
        ``{attributes: f_A}`` of every measurement that was shrunk.
    """
    rows = np.asarray(rows, dtype=np.int64)
    scale = max(float(total), 1.0) / max(len(rows), 1)
    out, factors = [], {}
    for m in measurements:
        A = m.attributes
        if not select(A) or m.query is None or m.values.size < 3:
            out.append(m)
            continue
        centre = m.query @ (workload.table(rows, A) * scale)
        f = james_stein_factor(m.values - centre, m.sigma)
        factors[A] = f
        out.append(Measurement(A, m.query, centre + f * (m.values - centre), m.sigma))
    return out, factors
