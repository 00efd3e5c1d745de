"""Walsh--Fourier analysis on the Boolean cube ``{0, 1}^p``: one sign convention.

For ``T ⊆ [p]`` the Walsh character is

    χ_T(u) = (-1)^{Σ_{j∈T} u_j} = Π_{j∈T} (1 - 2 u_j),

so a 0 bit maps to ``+1`` and a 1 bit to ``-1`` (the standard convention of
Fourier analysis on ``Z_2^p``; ``χ_T(u ⊕ v) = χ_T(u) χ_T(v)``). Every module of
the package uses this one convention: the marginal workload
(:mod:`skdp_synth.workloads`) and the private sampler's public Walsh helpers
(:mod:`skdp_synth.private_sampling`). It is pinned by
``tests/test_fourier.py``.

Walsh matrices and coefficient vectors index their columns by the subsets of
:func:`walsh_subsets`: the empty set, then subsets by size, each size in
lexicographic order (``itertools.combinations``). Conjunction marginals
``E Π_{j∈J} u_j`` and Walsh coefficients ``E χ_J(u)`` determine each other
(:func:`walsh_to_marginals`, :func:`marginals_to_walsh`)::

    Π_{j∈J} u_j = 2^{-|J|} Σ_{K⊆J} (-1)^{|K|} χ_K(u),
    χ_J(u) = Σ_{K⊆J} (-2)^{|K|} Π_{j∈K} u_j.

Examples
--------
>>> walsh_matrix([[1, 0, 1]], 1)          # (), (0,), (1,), (2,)
array([[ 1., -1.,  1., -1.]])
>>> hadamard(1)                           # H[beta, l] = χ_l(beta)
array([[ 1.,  1.],
       [ 1., -1.]])
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .validation import (
    check_boolean,
    check_degree,
    check_integer,
    format_bytes,
    format_count,
)

__all__ = [
    "degree_signs",
    "MAX_WALSH_BYTES",
    "check_walsh_memory",
    "hadamard",
    "marginals_to_walsh",
    "to_signs",
    "walsh_coefficients",
    "walsh_dimension",
    "walsh_matrix",
    "walsh_subsets",
    "walsh_sums",
    "walsh_to_marginals",
]

#: Largest Walsh matrix plus Gram matrix (``8 (m D + D^2)`` bytes) that
#: :class:`~skdp_synth.PrivateSampler` and
#: :func:`~skdp_synth.correction.marginal_correction` will allocate.
MAX_WALSH_BYTES = 2 * 1024**3


def check_walsh_memory(m, D):
    """Refuse a Walsh matrix of ``m`` points and ``D`` functions above the limit."""
    need = 8 * (int(m) * int(D) + int(D) * int(D))  # exact: no float overflow
    if need > MAX_WALSH_BYTES:
        raise MemoryError(
            f"the Walsh matrix of m={format_count(m)} points and "
            f"D={format_count(D)} Walsh functions needs {format_bytes(need)} "
            f"(limit skdp_synth.fourier.MAX_WALSH_BYTES = "
            f"{format_bytes(MAX_WALSH_BYTES)}): p is too large for this degree d. "
            "Lower d, or pass a smaller m (at least D)."
        )


def to_signs(U):
    """``1 - 2u``: 0/1 entries to the signs ``χ_{{j}}(u) ∈ {+1, -1}`` (float64)."""
    return 1.0 - 2.0 * np.asarray(U, dtype=np.float64)


def check_p_d(p, d):
    """``p`` and ``d`` non-negative integers with ``d <= p``; returns ints."""
    p = check_integer(p, "p", min_value=0)
    return p, check_degree(d, p, min_degree=0, of="columns")


def walsh_dimension(p, d):
    """``D = sum_{i=0}^{d} C(p, i)``: the number of Walsh functions of degree <= d.

    Examples
    --------
    >>> walsh_dimension(64, 2)
    2081
    """
    p, d = check_p_d(p, d)
    return sum(math.comb(p, i) for i in range(d + 1))


def walsh_subsets(p, d):
    """The subsets ``J`` (tuples) indexing Walsh functions of degree ``<= d``.

    The empty set first, then by size, each size in lexicographic order.

    Examples
    --------
    >>> walsh_subsets(3, 2)
    [(), (0,), (1,), (2,), (0, 1), (0, 2), (1, 2)]
    """
    p, d = check_p_d(p, d)
    out = [()]
    for r in range(1, d + 1):
        out.extend(itertools.combinations(range(p), r))
    return out


def sign_products(S, d, out=None):
    """``Π_{j∈J} S[:, j]`` for every ``|J| <= d``, in :func:`walsh_subsets` order.

    ``S`` holds signs (``±1``); this is convention-free: ``S = to_signs(U)``
    gives the Walsh matrix ``χ_J(u)`` of 0/1 rows ``U``. Built degree by
    degree: a column ``J = P + {j}`` (``j > max P``) is column ``P`` times
    ``S[:, j]``; for a fixed prefix ``P`` its extensions are contiguous in
    the lexicographic order, so each prefix costs one broadcasted product.
    """
    m, p = S.shape
    D = sum(math.comb(p, i) for i in range(d + 1))
    M = np.empty((m, D)) if out is None else out
    M[:, 0] = 1.0
    if d == 0:
        return M
    M[:, 1 : p + 1] = S
    prev_start, prev_subsets = 1, [(j,) for j in range(p)]
    col = p + 1
    for _ in range(2, d + 1):
        start, subsets = col, []
        for offset, P in enumerate(prev_subsets):
            last = P[-1]
            width = p - last - 1
            if width <= 0:
                continue
            M[:, col : col + width] = M[:, prev_start + offset, None] * S[:, last + 1 :]
            subsets.extend(P + (j,) for j in range(last + 1, p))
            col += width
        prev_start, prev_subsets = start, subsets
    return M


def as_binary(X, name="X"):
    """``X`` as a float64 2-D array of 0/1 values with at least one row."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {X.shape}")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows")
    return check_boolean(X, name)


def walsh_matrix(X, d):
    """Walsh features ``χ_J(x) = Π_{j∈J} (1 - 2x_j)`` of 0/1 rows, ``|J| <= d``.

    Parameters
    ----------
    X : array-like of shape (n, p)
        Boolean (0/1) rows.
    d : int
        Largest degree.

    Returns
    -------
    ndarray of shape (n, D)
        Entries +-1; columns in the order of :func:`walsh_subsets`.

    Examples
    --------
    >>> walsh_matrix([[1, 0, 1]], 2)
    array([[ 1., -1.,  1., -1., -1.,  1., -1.]])
    """
    X = as_binary(X)
    check_p_d(X.shape[1], d)
    return sign_products(to_signs(X), d)


def walsh_coefficients(X, d, *, chunk=4096):
    """The data's Walsh coefficients ``mu_J = (1/n) sum_a χ_J(x_a)``.

    Up to the factor ``2^p`` these are the low-degree Fourier coefficients of
    the empirical density (:cite:`Boedihardjo2022` §4); they determine all its marginals
    up to degree ``d`` (see :func:`walsh_to_marginals`). Computed in row
    blocks (memory ``chunk x D``).

    Examples
    --------
    >>> walsh_coefficients([[1, 1], [0, 1]], 2)   # (), (0,), (1,), (0, 1)
    array([ 1.,  0., -1.,  0.])
    """
    X = as_binary(X)
    return walsh_sums(X, d, chunk=chunk) / X.shape[0]


def walsh_sums(X, d, *, chunk=4096):
    """``Σ_a χ_J(x_a)`` for every ``|J| <= d``: :func:`walsh_coefficients` times ``n``.

    Integers, additive over rows (the sufficient statistic of
    :class:`~skdp_synth.PrivateSampler`, summed over chunks for out-of-core
    data). Computed in row blocks (memory ``chunk x D``).

    Examples
    --------
    >>> walsh_sums([[1, 1], [0, 1]], 2)
    array([ 2.,  0., -2.,  0.])
    """
    X = as_binary(X)
    check_p_d(X.shape[1], d)
    total = np.zeros(walsh_dimension(X.shape[1], d))
    for s in range(0, X.shape[0], chunk):
        total += sign_products(to_signs(X[s : s + chunk]), d).sum(axis=0)
    return total


def _subset_index(p, d):
    return {J: i for i, J in enumerate(walsh_subsets(p, d))}


def walsh_to_marginals(mu, p, d):
    """Conjunction marginals ``E prod_{j in J} x_j`` from Walsh coefficients.

    With ``x_j = (1 - χ_{{j}})/2``: ``Π_{j∈J} x_j = 2^{-|J|} Σ_{K⊆J}
    (-1)^{|K|} χ_K``. Every marginal table of up to ``d`` columns (any
    values, not only ones) follows from these by inclusion-exclusion.

    Examples
    --------
    >>> mu = walsh_coefficients([[1, 1], [0, 1]], 2)
    >>> walsh_to_marginals(mu, 2, 2)     # 1, P(x0=1), P(x1=1), P(x0=x1=1)
    array([1. , 0.5, 1. , 0.5])
    """
    mu = np.asarray(mu, dtype=np.float64)
    subsets = walsh_subsets(p, d)
    if mu.shape != (len(subsets),):
        raise ValueError(f"expected {len(subsets)} Walsh coefficients, got {mu.shape}")
    return _subset_sums(mu, p, d, base=-1.0, scale=0.5)


def marginals_to_walsh(marginals, p, d):
    """Inverse of :func:`walsh_to_marginals`: ``χ_J = Σ_{K⊆J} (-2)^{|K|} Π_{j∈K} x_j``.

    Examples
    --------
    >>> marginals_to_walsh([1.0, 0.5, 1.0, 0.5], 2, 2)
    array([ 1.,  0., -1.,  0.])
    """
    marg = np.asarray(marginals, dtype=np.float64)
    subsets = walsh_subsets(p, d)
    if marg.shape != (len(subsets),):
        raise ValueError(f"expected {len(subsets)} marginals, got {marg.shape}")
    return _subset_sums(marg, p, d, base=-2.0, scale=1.0)


def _subset_sums(values, p, d, *, base, scale):
    """``out_J = scale^{|J|} Σ_{K⊆J} base^{|K|} values_K`` over ``|J| <= d``."""
    subsets = walsh_subsets(p, d)
    index = _subset_index(p, d)
    out = np.empty_like(values)
    for i, J in enumerate(subsets):
        acc = 0.0
        for r in range(len(J) + 1):
            for K in itertools.combinations(J, r):
                acc += base**r * values[index[K]]
        out[i] = acc * scale ** len(J)
    return out


def degree_signs(p, d):
    """``(-1)^{|J|}`` for the subsets of :func:`walsh_subsets`.

    ``Π_{j∈J} (2x_j - 1) = (-1)^{|J|} χ_J(x)``: the factor between this
    module's convention and the mirrored one (``1 -> +1``).
    """
    p, d = check_p_d(p, d)
    return np.repeat(
        [(-1.0) ** j for j in range(d + 1)], [math.comb(p, j) for j in range(d + 1)]
    )


def hadamard(k):
    """Sylvester--Hadamard matrix ``H[beta, l] = χ_l(beta) = (-1)^{|beta & l|}``.

    ``2^k x 2^k``, float64; rows and columns index ``{0,1}^k`` (first bit most
    significant), so column ``l`` is the character of the set of bits of ``l``.
    """
    b = np.arange(2**k)
    parity = np.vectorize(lambda v: bin(v).count("1"))(b[:, None] & b[None, :]) % 2
    return (1 - 2 * parity).astype(np.float64)
