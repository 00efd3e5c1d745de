"""Numerical linear algebra shared by the package: one SVD rank cut-off.

Every numerical rank in the package -- the range of an explicit workload, the
orthonormal bases and null spaces of the Gaussian release, the thin
factorisation of the reweighting LP/QP, the spanning check of the MEE -- is
decided by :func:`numerical_rank`: a singular value counts when

    s_i > RANK_TOL_FACTOR * max(m, n) * eps * s_max.

``max(m, n) * eps * s_max`` is the usual bound on the rounding error of a
computed SVD (LAPACK, ``numpy.linalg.matrix_rank``); the factor 10 leaves a
margin for matrices that are themselves the result of a few rounded products
(bases of invariants, Walsh matrices scaled by ``1/sqrt(m)``), whose zero
singular values come out a few ``eps`` above zero. Values within a factor 10
of the rounding bound are indistinguishable from zero, so counting them would
only add noise directions.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "RANK_TOL_FACTOR",
    "null_basis",
    "numerical_rank",
    "orth_basis",
    "rank_tolerance",
]

#: safety factor over the SVD rounding bound ``max(m, n) eps s_max``
RANK_TOL_FACTOR = 10.0


def rank_tolerance(s, shape):
    """The cut-off below which singular values ``s`` of a matrix of ``shape`` are 0."""
    s = np.asarray(s, dtype=np.float64)
    if s.size == 0:
        return 0.0
    return float(s.max()) * max(shape) * np.finfo(np.float64).eps * RANK_TOL_FACTOR


def numerical_rank(s, shape):
    """Number of singular values ``s`` above :func:`rank_tolerance`.

    Examples
    --------
    >>> numerical_rank([2.0, 1.0, 1e-17], (3, 3))
    2
    >>> numerical_rank([], (0, 3))
    0
    """
    s = np.asarray(s, dtype=np.float64)
    if s.size == 0 or s.max() == 0:
        return 0
    return int(np.sum(s > rank_tolerance(s, shape)))


def orth_basis(M):
    """Orthonormal basis of the column space of ``M`` (columns; rank as above)."""
    if M.size == 0:
        return np.zeros((M.shape[0], 0))
    U, s, _ = np.linalg.svd(M, full_matrices=False)
    return U[:, : numerical_rank(s, M.shape)]


def null_basis(C, dim):
    """Orthonormal basis of the null space of ``C`` (``n_c × dim``), as columns."""
    if C.shape[0] == 0:
        return np.eye(dim)
    _, s, Vt = np.linalg.svd(C, full_matrices=True)
    rank = numerical_rank(s, C.shape)
    return Vt[rank:].T
