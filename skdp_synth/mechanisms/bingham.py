"""Exact sampling of the Bingham distribution, and the private PCA of
:cite:`Boedihardjo2024` §5.1.

The Bingham distribution on the unit sphere ``S^{q-1}`` of ``R^q`` with
parameter matrix ``A`` (symmetric) has density with respect to the uniform
measure proportional to ``exp(x^T A x)``. :cite:`Boedihardjo2024` uses it as the
*exponential mechanism* for a private principal direction:

* ``PVEC(A)`` (:cite:`Boedihardjo2024` Algorithm 2): one draw from that density;
* ``PROJ(A, t)`` (:cite:`Boedihardjo2024` Algorithm 3): ``v_1 = PVEC(A)``, then
  ``v_{i+1} = PVEC(A_i)`` with ``A_i`` the compression of ``A`` to the
  orthogonal complement ``V_i`` of ``v_1, ..., v_i``; the output is the
  orthogonal projection onto ``span(v_1, ..., v_t)``.

Privacy needs the draw to be *exact*: an approximate sampler (MCMC, a wrong
rejection ratio) has no privacy guarantee at all.

The sampler: Kent, Ganeiber & Mardia (2013)
-------------------------------------------
Kent, Ganeiber & Mardia, "A new method to simulate the Bingham and related
distributions in directional data analysis with applications" (arXiv
1310.8110; J. Comput. Graph. Statist. 27(2), 2018) -- acceptance-rejection
from an *angular central Gaussian* (ACG) envelope. The derivation, which is
all the correctness of the sampler rests on:

1. **Shift.** On the sphere ``x^T x = 1``, so adding ``c I`` to ``A`` changes
   the density by the constant ``e^c``. Diagonalise ``A = U diag(a) U^T`` and
   write ``exp(x^T A x) = exp(a_max) exp(-y^T Lambda y)`` with ``y = U^T x``
   and ``Lambda = diag(a_max - a_i) >= 0``, whose smallest entry is exactly 0.
   It suffices to sample ``y`` with density ``f*(y) = exp(-y^T Lambda y)``
   and return ``x = U y``.
2. **Envelope.** For ``b > 0`` let ``Omega = I + 2 Lambda / b``. If
   ``z ~ N(0, Omega^{-1})`` then ``y = z/||z||`` is ACG with density
   proportional to ``g*(y) = (y^T Omega y)^{-q/2}``.
3. **Bound.** With ``s = y^T Lambda y >= 0`` we have ``y^T Omega y =
   1 + 2 s / b`` on the sphere, so ``log(f*/g*) = -s + (q/2) log(1 + 2s/b)``.
   This is concave in ``s``; its derivative ``-1 + q/(b + 2s)`` vanishes at
   ``s* = (q - b)/2``, which is ``>= 0`` when ``b <= q``. Hence, for every
   ``0 < b <= q`` and every unit ``y``,

       f*(y) / g*(y) <= M(b) = exp(-(q - b)/2) (q/b)^{q/2},

   and accepting a proposal with probability
   ``f*(y) / (M g*(y)) = exp(-y^T Lambda y) (y^T Omega y)^{q/2} / M`` (at
   most 1) yields an exact draw from ``f*``, whatever ``b`` is.
4. **Choice of b** (only efficiency depends on it): Kent et al. minimise the
   expected number of proposals, which gives ``sum_i 1/(b + 2 lambda_i) = 1``.
   The left side is decreasing in ``b``, at least 1 at ``b = 1`` (the term of
   ``lambda = 0`` is ``1/b``) and at most 1 at ``b = q``, so the root lies in
   ``[1, q]`` and step 3 applies.
5. **Efficiency.** The acceptance probability is ``c(Lambda) / (M c_ACG)``
   with ``c_ACG = |S^{q-1}| det(Omega)^{-1/2}``. It is 1 for the uniform
   distribution (``Lambda = 0``: ``b = q``, ``M = 1``) and, when all nonzero
   ``lambda_i -> infinity`` (``b -> 1``; Laplace's method for ``c(Lambda)``
   and Stirling's formula for ``Gamma(q/2)``), tends to
   ``(2e)^{(q-1)/2} Gamma(q/2) / (sqrt(pi) q^{q/2}) ~ sqrt(2/(e q))``: 0.523
   at ``q = 3``, 0.276 at ``q = 10``, 0.0496 at ``q = 300`` (the square-root
   form gives 0.495, 0.271, 0.0495), *whatever the concentration*. The
   acceptance rate does not collapse for large eigenvalue gaps (measured in
   ``benchmarks/bench_damped.py`` and pinned in ``tests/test_bingham.py``).

Everything is in log space: the acceptance test is
``log U < -s + (q/2) log1p(2s/b) - log M``, which neither overflows for
``lambda ~ 10^6`` nor underflows for ``q`` in the hundreds.

Two public implementations get step 3 wrong (we read them; nothing here is
copied from them): IBM diffprivlib's ``Bingham`` mechanism returns a proposal
when ``U >= ratio`` (the acceptance event inverted) with the ratio's ACG
factor ``(y^T Omega y)^{q/2}`` in the denominator and ``b`` solved from the
unshifted eigenvalues; the result is not the Bingham distribution, and the
loop rarely terminates at large concentration in high dimension.

Randomness comes from a NumPy ``Generator`` (``NoiseSource.rng``). Unlike the
Laplace noise of the secure path, this floating-point sampler is **not
hardened** against the attacks of Mironov (2012).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

__all__ = [
    "BinghamSampler",
    "bingham_envelope",
    "proj",
    "pvec",
]


def bingham_envelope(lam):
    """Envelope constants ``(b, log M)`` of the ACG rejection sampler.

    Parameters
    ----------
    lam : array-like of shape (q,)
        The shifted concentrations ``lambda_i >= 0`` with ``min lambda = 0``
        (density ``exp(-sum_i lambda_i y_i^2)``).

    Returns
    -------
    b : float
        Root in ``[1, q]`` of ``sum_i 1/(b + 2 lambda_i) = 1`` (Kent et al.
        2013; see the module docstring, step 4).
    log_m : float
        ``log M(b) = -(q - b)/2 + (q/2) log(q/b)`` (step 3).

    Examples
    --------
    >>> bingham_envelope([0.0, 0.0, 0.0])     # uniform: b = q, M = 1
    (3.0, 0.0)
    >>> b, log_m = bingham_envelope([0.0, 1e6, 1e6])
    >>> round(b, 4), round(log_m, 4)          # b -> 1 at high concentration
    (1.0, 0.648)
    """
    lam = np.asarray(lam, dtype=np.float64).ravel()
    q = lam.size
    if q == 0:
        raise ValueError("the sphere needs dimension q >= 1")
    if np.any(lam < 0) or not np.all(np.isfinite(lam)) or lam.min() != 0.0:
        raise ValueError("lambda must be finite, >= 0, with minimum exactly 0")

    def excess(b):
        return float(np.sum(1.0 / (b + 2.0 * lam))) - 1.0

    if excess(float(q)) >= 0.0:  # all lambda = 0: the uniform distribution
        b = float(q)
    else:
        b = float(optimize.brentq(excess, 1.0, float(q), xtol=1e-14, rtol=1e-14))
    log_m = -(q - b) / 2.0 + (q / 2.0) * math.log(q / b)
    return b, log_m


class BinghamSampler:
    """Exact sampler for the density ``proportional to exp(x^T A x)`` on ``S^{q-1}``.

    Kent, Ganeiber & Mardia (2013) acceptance-rejection from an angular
    central Gaussian envelope; see the module docstring for the derivation.

    Parameters
    ----------
    A : array-like of shape (q, q)
        Symmetric parameter matrix (any symmetric matrix; positive
        semidefinite in :cite:`Boedihardjo2024`).

    Attributes
    ----------
    dim : int
        ``q``.
    b, log_m : float
        The envelope constants (:func:`bingham_envelope`).
    n_proposed, n_accepted : int
        Running totals over all :meth:`sample` calls (their ratio is the
        empirical acceptance rate).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = BinghamSampler(np.diag([50.0, 0.0, 0.0]))
    >>> x = s.sample(2000, rng)
    >>> x.shape, bool(np.allclose(np.linalg.norm(x, axis=1), 1.0))
    ((2000, 3), True)
    >>> bool(np.mean(x[:, 0] ** 2) > 0.9)          # concentrated near +-e_1
    True
    """

    def __init__(self, A):
        A = np.asarray(A, dtype=np.float64)
        if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
            raise ValueError(f"A must be a non-empty square matrix, got {A.shape}")
        if not np.all(np.isfinite(A)):
            raise ValueError("A must be finite")
        a, U = np.linalg.eigh((A + A.T) / 2.0)
        # exp(x'Ax) = exp(a_max) exp(-y' Lambda y), y = U'x, Lambda = a_max - a
        lam = a.max() - a
        lam[np.argmax(a)] = 0.0  # exactly zero, whatever the rounding
        np.clip(lam, 0.0, None, out=lam)
        self.dim = A.shape[0]
        self._U = U
        self._lam = lam
        self.b, self.log_m = bingham_envelope(lam)
        # proposal z ~ N(0, Omega^{-1}), Omega = I + 2 Lambda / b (diagonal)
        self._inv_sqrt_omega = 1.0 / np.sqrt(1.0 + 2.0 * lam / self.b)
        self.n_proposed = 0
        self.n_accepted = 0

    def log_acceptance(self, y):
        """``log(f*(y) / (M g*(y))) <= 0`` for unit rows ``y`` in eigen-coordinates."""
        s = (y * y) @ self._lam
        return -s + 0.5 * self.dim * np.log1p(2.0 * s / self.b) - self.log_m

    def sample(self, size, rng):
        """Draw ``size`` independent points; returns an array of shape (size, q)."""
        size = int(size)
        q = self.dim
        out = np.empty((size, q))
        filled = 0
        # Expected acceptance >= ~sqrt(2/(e q)) (module docstring, step 5).
        rate = max(math.sqrt(2.0 / (math.e * q)) * 0.8, 0.02)
        while filled < size:
            batch = int(min(max(16, (size - filled) / rate * 1.2), 1_000_000))
            z = rng.standard_normal((batch, q)) * self._inv_sqrt_omega
            y = z / np.linalg.norm(z, axis=1, keepdims=True)
            accept = np.log(rng.random(batch)) < self.log_acceptance(y)
            self.n_proposed += batch
            self.n_accepted += int(accept.sum())
            y = y[accept]
            # the first `size` accepted draws of an i.i.d. sequence are i.i.d.;
            # any surplus is discarded
            take = min(y.shape[0], size - filled)
            out[filled : filled + take] = y[:take]
            filled += take
        return out @ self._U.T

    @property
    def acceptance_rate(self):
        """Empirical acceptance rate so far (``nan`` before any draw)."""
        return self.n_accepted / self.n_proposed if self.n_proposed else math.nan


def pvec(A, rng):
    """One draw of ``PVEC(A)`` (:cite:`Boedihardjo2024` Algorithm 2).

    Its density is proportional to ``exp(<Ax, x>)``.

    Parameters
    ----------
    A : array-like of shape (q, q)
        Symmetric (positive semidefinite) matrix.
    rng : numpy.random.Generator

    Returns
    -------
    x : ndarray of shape (q,), a unit vector
    """
    return BinghamSampler(A).sample(1, rng)[0]


def _complement_basis(y):
    """Orthonormal basis (q, q-1) of the orthogonal complement of the unit ``y``.

    Columns 2..q of the Householder reflection that maps ``e_1`` to ``+-y``.
    """
    q = y.shape[0]
    sign = 1.0 if y[0] >= 0 else -1.0
    u = y.copy()
    u[0] += sign
    H = np.eye(q) - (2.0 / float(u @ u)) * np.outer(u, u)
    return H[:, 1:]


def proj(A, t, rng):
    """``PROJ(A, t)`` (:cite:`Boedihardjo2024` Algorithm 3): ``t`` orthonormal private
    directions.

    ``v_1 = PVEC(A)``; for ``i = 1..t-1``, ``v_{i+1} = PVEC(A_i)`` where
    ``A_i = (I - P_{v_1..v_i}) A (I - P_{v_1..v_i})`` acts on
    ``V_i = ran(I - P_{v_1..v_i})``. We carry an orthonormal basis ``B_i``
    (p x (p - i)) of ``V_i``, draw ``y`` from the Bingham density of
    ``B_i^T A B_i`` on the unit sphere of ``R^{p-i}`` and map ``v = B_i y``:
    ``B_i`` is an isometry onto ``V_i`` and ``<A B_i y, B_i y> = <A_i v, v>``,
    so ``v`` has exactly the density of ``PVEC(A_i)`` on the sphere of
    ``V_i``. (The basis is built from ``v_1..v_i`` only.)

    Parameters
    ----------
    A : array-like of shape (p, p)
        Positive semidefinite matrix.
    t : int
        Number of directions, ``0 <= t <= p``.
    rng : numpy.random.Generator

    Returns
    -------
    V : ndarray of shape (p, t)
        Orthonormal columns ``v_1, ..., v_t``; the projection is ``V V^T``.

    References
    ----------
    :cite:`Boedihardjo2024` Algorithm 3; :cite:`Kent2013` for the Bingham
    draws.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> V = proj(np.diag([1e4, 5e3, 0.0, 0.0]), 2, rng)
    >>> bool(np.allclose(V.T @ V, np.eye(2)))
    True
    >>> np.round(np.abs(V[:, 0]), 1).tolist()     # close to e_1, then e_2
    [1.0, 0.0, 0.0, 0.0]
    """
    A = np.asarray(A, dtype=np.float64)
    p = A.shape[0]
    t = int(t)
    if not 0 <= t <= p:
        raise ValueError(f"PROJ needs 0 <= t <= p = {p}, got t = {t}")
    A = (A + A.T) / 2.0
    basis = np.eye(p)
    V = np.empty((p, t))
    for i in range(t):
        y = pvec(basis.T @ A @ basis, rng)
        V[:, i] = basis @ y
        if i + 1 < t:
            basis = basis @ _complement_basis(y)
    return V
