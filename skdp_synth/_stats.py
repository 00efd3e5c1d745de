"""The sufficient statistics through which the private estimators read their data.

Each function here is *additive over rows*: its value on a table is the sum
of its values on the parts of any partition of the rows. The estimators call
them only through :func:`skdp_synth._chunked.reduce_rows`, which applies them
to the whole in-memory table (one chunk) or sums them over the chunks of a
Dask array. Everything a fit does with the data afterwards -- the noise, the
projections, the solvers -- reads the summed statistic only, so the
out-of-core fit is the in-memory fit (``doc/privacy.md``, "Fits from
sufficient statistics").

============================  ==========================================  ====
estimator                     statistic (pass)                            exact
============================  ==========================================  ====
ProjectedGaussianRelease      :func:`attribute_tables` (residual mech.)   yes
                              :func:`workload_counts` (bit-level mech.)   yes
DampedPrivateSynthesizer      :func:`moment_sums` (pass 1, for PROJ),     0/1
                              :func:`damped_cell_sums` (pass 2, after
                              the private subspace is drawn)
PrivateSampler                :func:`walsh_sums`                          yes
============================  ==========================================  ====

"exact": integer-valued, so the sum over chunks is bit-identical to the
in-memory value (float64 represents the integers exactly up to ``2^53``);
"0/1": exact for Boolean data, equal up to the order of floating-point
summation for box data.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .fourier import walsh_sums as _walsh_sums
from .workloads import ExplicitWorkload, universe_index

__all__ = [
    "attribute_tables",
    "cell_sums",
    "damped_cell_sums",
    "moment_sums",
    "walsh_sums",
    "workload_answers",
    "workload_counts",
]


# -------------------------------------------------- ProjectedGaussianRelease
def attribute_tables(U, workload, blocks):
    """Counts of every maximal table of an attribute-level marginal workload.

    ``{S: counts of table S}`` for ``S`` in ``workload.tables`` (flattened,
    C order), from the level rows ``blocks.to_levels(U)``. The residuals
    follow by :meth:`AttributeMarginalWorkload.residuals` (002/004 residual
    mechanism, :mod:`skdp_synth.attribute_workload`).
    """
    L = blocks.to_levels(U)
    return {S: workload.table(L, S) for S in workload.tables}


def workload_counts(U, workload):
    """The counts a bit-level workload's answers are linear in.

    :class:`~skdp_synth.workloads.MarginalWorkload`: its cell counts
    ``y = A x`` themselves; :class:`~skdp_synth.workloads.ExplicitWorkload`:
    the histogram ``x`` over ``{0,1}^p`` (the answers are ``A x``, by
    :func:`workload_answers`).
    """
    X = np.asarray(U).astype(np.int8)
    if isinstance(workload, ExplicitWorkload):
        hist = np.bincount(universe_index(X), minlength=workload.universe_size)
        return hist.astype(np.float64)
    return workload.answers(X)


def workload_answers(counts, workload):
    """The answers ``y = A x`` from :func:`workload_counts` (data-free)."""
    if isinstance(workload, ExplicitWorkload):
        return workload.matrix @ counts
    return counts


# -------------------------------------------------- DampedPrivateSynthesizer
def moment_sums(U):
    """``(Uᵀ U, Σ_i u_i)``: pass 1 of the damped synthesizer (000 Algorithm 1).

    The second-moment matrix of 000 Algorithm 1 step 1 is ``UᵀU / n`` (on
    the unit-ball scale ``/ p``), and the column sums give the mean for the
    moment about a public centre.
    """
    U = np.asarray(U, dtype=np.float64)
    return U.T @ U, U.sum(axis=0)


def cell_sums(X, labels, n_cells):
    """``(counts, sums)`` of the rows of ``X`` in cells ``0..n_cells-1``.

    ``counts[j] = |F_j|``, ``sums[j] = Σ_{i∈F_j} x_i`` (000 eq. 5.4 before
    the damped division).
    """
    n = X.shape[0]
    counts = np.bincount(labels, minlength=n_cells)
    indicator = sparse.csr_matrix(
        (np.ones(n), (labels, np.arange(n))), shape=(n_cells, n)
    )
    return counts, np.asarray(indicator @ X)


def damped_cell_sums(U, V, covering, centre, radius):
    """Pass 2 of the damped synthesizer: per-cell counts and sums (000 Alg. 4).

    The rows are projected on the private subspace ``V`` (drawn on the
    driver from pass 1), labelled by the nearest point of the public
    covering (000 Algorithm 4 steps 6-7) and summed per cell.
    """
    n, p = U.shape
    root_p = np.sqrt(p)
    if V.shape[1] > 0:
        Z = (U @ V) / root_p
        if centre is not None:
            Z = (Z - (centre @ V) / root_p) / radius
        labels = covering.nearest(Z)
    else:
        labels = covering.nearest(np.zeros((n, 0)))
    return cell_sums(U, labels, covering.n_points)


# ------------------------------------------------------------ PrivateSampler
#: ``Σ_a χ_J(x_a)`` (001 §4): :func:`skdp_synth.fourier.walsh_sums`
walsh_sums = _walsh_sums
