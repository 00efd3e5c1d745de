"""Additive noise shaped by a workload's sensitivity set (:cite:`Nikolov2013` and
:cite:`Gao2022`).

The noise model of :class:`~skdp_synth.ProjectedGaussianRelease`, on its own:
every mechanism here adds ``Tᵀ diag(s) w`` with ``w ~ N(0, c² I)`` (or
``Lap(c)``) and ``T`` with orthonormal rows, and is private because the
whitened sensitivity ``max_h ||diag(s)⁻¹ T h||`` over the workload's
:class:`~skdp_synth.workloads.SensitivitySet` is at most 1 -- checked
numerically by :func:`verify_sensitivity` on the whole set before any data is
read. The derivation (whitening, the mechanisms' table, calibration,
invariants) is in the module docstring of :mod:`skdp_synth.gaussian_release`;
this module holds:

* the whitenings (:class:`MaskWhitening`, :class:`MatrixWhitening`) and the
  noise model :class:`AdditiveNoise` with :cite:`Gao2022` Algorithm 4
  (:func:`distributed_privatize`);
* the shaping of the noise from a sensitivity set: :func:`orbit_whitening`
  (closed form, the marginal workload's orbits) and
  :func:`explicit_whitening` (explicit points: :cite:`Nikolov2013` Algorithm 1's base
  decomposition, or the MEE, :cite:`Nikolov2013` Corollary 8);
* the checks: :func:`verify_sensitivity` (enumeration, or the orbit closed
  form with a spot check) and :func:`gaussian_lower_bound` (the weak-duality
  bound on every Gaussian mechanism).

It reads the sensitivity set as plain data -- ``orbits``, ``points``,
``enumerable``, ``spot_points`` (and ``max_norm``, ``origin``) -- and never
asks the workload anything.
"""

from __future__ import annotations

import math

import numpy as np

from .._linalg import orth_basis
from .ellipsoid import (
    base_decomposition_orbits,
    base_decomposition_points,
    gaussian_optimum_orbits,
    gaussian_optimum_points,
    mee_orbits,
    mee_points,
)

__all__ = [
    "AdditiveNoise",
    "MaskWhitening",
    "MatrixWhitening",
    "distributed_privatize",
    "explicit_whitening",
    "gaussian_lower_bound",
    "orbit_whitening",
    "points_of",
    "replace_one_offset",
    "verify_sensitivity",
]

#: slack allowed on the numerically verified whitened sensitivity (rounding)
SENSITIVITY_SLACK = 1e-9
#: Khachiyan's stopping rule for explicit points: max g <= (1 + tol) r or
#: this many steps (Nikolov2013 §4.1: an O(1)-approximate MEE suffices; privacy never
#: depends on it because the ellipsoid is scaled to contain every point)
MEE_TOL = 1e-6
MEE_MAX_ITER = 5_000


# ====================================================================== noise
class MaskWhitening:
    """``T`` = a selection of coordinates: ``t = v[index] / scales``."""

    def __init__(self, dim, index, scales):
        self.dim = int(dim)
        self.index = np.asarray(index, dtype=np.int64)
        self.scales = np.asarray(scales, dtype=np.float64)

    @property
    def n_private(self):
        return self.index.size

    def forward(self, v):
        return np.asarray(v, dtype=np.float64)[..., self.index] / self.scales

    def backward(self, t):
        out = np.zeros(self.dim)
        out[self.index] = self.scales * t
        return out

    def exact_part(self, v):
        out = np.array(v, dtype=np.float64)
        out[self.index] = 0.0
        return out

    def scaled_rows(self, Q):
        """``diag(s) T Q``."""
        return Q[self.index] * self.scales[:, None]

    def rescale(self, factor):
        self.scales = self.scales * factor


class MatrixWhitening:
    """``T`` with orthonormal rows: ``t = (T v) / scales``."""

    def __init__(self, T, scales):
        self.T = np.asarray(T, dtype=np.float64)
        self.dim = self.T.shape[1]
        self.scales = np.asarray(scales, dtype=np.float64)

    @property
    def n_private(self):
        return self.T.shape[0]

    def forward(self, v):
        return (np.asarray(v, dtype=np.float64) @ self.T.T) / self.scales

    def backward(self, t):
        return self.T.T @ (self.scales * t)

    def exact_part(self, v):
        v = np.asarray(v, dtype=np.float64)
        return v - self.T.T @ (self.T @ v)

    def scaled_rows(self, Q):
        return (self.T @ Q) * self.scales[:, None]

    def rescale(self, factor):
        self.scales = self.scales * factor


class AdditiveNoise:
    """The data-independent noise of a fitted
    :class:`~skdp_synth.ProjectedGaussianRelease`.

    A release is ``Π_R v + Π_N [ n o + Tᵀ diag(s) (t + w) ]`` with
    ``t = diag(s)⁻¹ T v`` (sensitivity 1), ``w`` i.i.d. ``N(0, scale²)`` or
    ``Lap(scale)``, ``Π_R``/``Π_N`` the projections onto the row and null
    space of the invariants (``Π_N = I`` without invariants), and ``n o`` the
    part of the answers that no neighbouring change moves: ``(I - TᵀT) v``,
    which equals ``n (I - TᵀT) g_u`` for any record ``u`` under replace-one
    (``n`` public) and vanishes under add/remove. It is computed from ``n``
    and ``o = (I - TᵀT) g_0``, not from the data, so the release depends on
    the data only through ``t`` (noised by the sampler) and ``Π_R v`` (the
    invariants). ``v`` is the answer vector in ``space`` (``"cells"``: the
    ``q`` answers; ``"coords"``: their coordinates in a basis of
    ``range(A)``). Everything here is public: it depends on the workload,
    the invariants and the privacy parameters only.

    Attributes
    ----------
    space : {"cells", "coords"}
    kind : {"gaussian", "laplace"}
    scale : float
        ``c`` (Gaussian σ at sensitivity 1) or the Laplace scale ``1/ε``.
    n_private : int
        Number of whitened coordinates that receive noise.
    """

    def __init__(
        self, space, whitening, kind, scale, to_cells, invariant_basis=None, offset=None
    ):
        self.space = space
        self.whitening = whitening
        self.kind = kind
        self.scale = float(scale)
        self._to_cells = to_cells
        self.invariant_basis = invariant_basis
        self.offset = offset

    @property
    def n_private(self):
        return self.whitening.n_private

    def _project(self, v, truth=None):
        Q = self.invariant_basis
        if Q is None:
            return v
        out = v - Q @ (Q.T @ v)
        if truth is not None:
            out = out + Q @ (Q.T @ truth)
        return out

    def privatize(self, v, source, n=None):
        """Release ``v`` (true answers in ``space``) with noise from ``source``.

        The noise is added by ``source.gaussian`` / ``source.laplace`` to the
        whitened true values, so the secure sampler applies; everything after
        is post-processing. ``n`` (the public number of rows) is needed under
        replace-one neighbours, where part of the answers is a function of it.
        """
        W = self.whitening
        t = W.forward(v)
        if self.kind == "gaussian":
            noisy = source.gaussian(t, self.scale)
        else:
            noisy = source.laplace(t, self.scale)
        out = W.backward(noisy)
        if self.offset is not None:
            if n is None:
                raise ValueError("replace-one releases need the public n")
            out = out + n * self.offset
        return self._project(out, truth=v)

    def sample_noise(self, rng):
        """One draw of the noise in the *cells* space, from a NumPy generator.

        ``release = answers + noise`` (:cite:`Gao2022` eq. (2)); used by
        :func:`distributed_privatize`. Not hardened (seeded NumPy noise).
        """
        m = self.n_private
        if self.kind == "gaussian":
            w = rng.normal(0.0, self.scale, size=m)
        else:
            w = rng.laplace(0.0, self.scale, size=m)
        e = self._project(self.whitening.backward(w))
        return self._to_cells(e)

    @property
    def variance(self):
        """Variance of one whitened noise coordinate."""
        return self.scale**2 * (1.0 if self.kind == "gaussian" else 2.0)

    def expected_error(self):
        """``E ||release - answers||²`` summed over the ``q`` answers.

        ``variance · ||Π_N Tᵀ diag(s)||_F²``; the bases are orthonormal, so the
        coordinates' error equals the cells' error.
        """
        s2 = float(np.sum(self.whitening.scales**2))
        if self.invariant_basis is not None:
            s2 -= float(np.sum(self.whitening.scaled_rows(self.invariant_basis) ** 2))
        return self.variance * s2

    def covariance(self):
        """Covariance of the noise in ``space`` (dense; for small problems)."""
        W = self.whitening
        B = np.stack([W.backward(e) for e in np.eye(W.n_private)], axis=1)
        B = np.stack([self._project(col) for col in B.T], axis=1)
        return self.variance * B @ B.T

    def __repr__(self):
        return (
            f"AdditiveNoise(space={self.space!r}, kind={self.kind!r}, "
            f"scale={self.scale:.4g}, n_private={self.n_private})"
        )


def distributed_privatize(noise, parts, indices, *, seed):
    """Distributed privatization from a shared seed (:cite:`Gao2022` Algorithm 4).

    Agent ``ℓ`` holds the true answers ``parts[ℓ]`` at positions
    ``indices[ℓ]`` of the answer vector (the sets partition ``range(q)``).
    Each agent independently regenerates the *same* noise vector ``e`` from
    the shared ``seed`` (the noise is additive and data-independent, :cite:`Gao2022`
    eq. (2)) and releases ``parts[ℓ] + e[indices[ℓ]]``. The concatenation is
    exactly the release that one agent holding everything would produce, and
    it satisfies the invariants of ``noise`` up to rounding.

    The seed must be a secret shared by the agents only: whoever knows it can
    subtract the noise. Seeded NumPy noise is not hardened against
    floating-point attacks (see :class:`~skdp_synth.mechanisms.NoiseSource`).

    Parameters
    ----------
    noise : AdditiveNoise
        E.g. ``estimator.noise_model_`` of a fitted
        :class:`~skdp_synth.ProjectedGaussianRelease`.
    parts : list of array-like
        Each agent's true answers.
    indices : list of array-like of int
        Their positions in the answer vector.
    seed : int
        The shared seed.

    Returns
    -------
    release : ndarray of shape (q,)
        The agents' releases put back in answer order.
    """
    if len(parts) != len(indices):
        raise ValueError("parts and indices must have the same length")
    idx = [np.asarray(i, dtype=np.int64).ravel() for i in indices]
    allidx = np.concatenate(idx) if idx else np.array([], dtype=np.int64)
    q = allidx.size
    if np.unique(allidx).size != q or (q and (allidx.min() < 0 or allidx.max() >= q)):
        raise ValueError("indices must partition range(q)")
    release = np.empty(q)
    for values, ix in zip(parts, idx):
        values = np.asarray(values, dtype=np.float64).ravel()
        if values.size != ix.size:
            raise ValueError("each part must have as many values as its indices")
        # each agent on its own: same seed, same noise
        e = noise.sample_noise(np.random.default_rng(np.random.SeedSequence(seed)))
        release[ix] = values + e[ix]
    return release


# ========================================================= explicit points
def explicit_whitening(H, mechanism, tol=None):
    """Whitening for explicit sensitivity points ``H`` (columns, any dimension).

    Returns ``(T, scales, info)`` with ``T`` (m × dim) orthonormal rows spanning
    the points.
    """
    tol = MEE_TOL if tol is None else tol
    B = orth_basis(H)
    Hr = B.T @ H
    info = {}
    if mechanism == "mee":
        E = mee_points(Hr, tol=tol, max_iter=MEE_MAX_ITER)
        vals, vecs = E.semi_axes()
        T = (B @ vecs).T
        scales = np.sqrt(vals)
        info["ellipsoid"] = E
    else:
        dec = base_decomposition_points(Hr, tol=tol, max_iter=MEE_MAX_ITER)
        rows, scales = [], []
        alphas = dec.weights(uniform=mechanism == "correlated")
        for U, r_i, a_i in zip(dec.pieces, dec.radii, alphas):
            rows.append((B @ U).T)
            scales.append(np.full(U.shape[1], r_i / math.sqrt(a_i)))
        T = np.vstack(rows)
        scales = np.concatenate(scales)
        info["decomposition"] = dec
    return T, scales, info


# ============================================================ from the set
def orbit_whitening(orbits, mechanism):
    """Whitening of a sensitivity set given in closed form by its orbits.

    ``orbits = (norms, multiplicity, blocks)`` (see
    :class:`~skdp_synth.workloads.SensitivitySet`). ``"mee"``: the MEE in
    closed form (:func:`~skdp_synth.mechanisms.ellipsoid.mee_orbits`); else
    :cite:`Nikolov2013` Algorithm 1's base decomposition with piece weights
    :meth:`~skdp_synth.mechanisms.ellipsoid.BaseDecomposition.weights`.
    Returns ``(MaskWhitening, decomposition)`` (``None`` for ``"mee"``).
    """
    norms, mult, blocks = orbits
    deg_scale = np.zeros(norms.shape[1])
    dec = None
    if mechanism == "mee":
        E = mee_orbits(norms, mult)
        deg_scale = np.sqrt(E.axes)
    else:
        dec = base_decomposition_orbits(norms, mult)
        alphas = dec.weights(uniform=mechanism == "correlated")
        for piece, r_i, a_i in zip(dec.pieces, dec.radii, alphas):
            deg_scale[piece] = r_i / math.sqrt(a_i)
    active = np.flatnonzero(deg_scale[blocks] > 0)
    return MaskWhitening(blocks.size, active, deg_scale[blocks][active]), dec


def verify_sensitivity(noise, sset):
    """Largest whitened sensitivity of ``noise`` over the whole set ``sset``.

    ``sset`` is the unrestricted set in the noise's space. Enumerated exactly
    when the set is small enough (or the whitening is a matrix); otherwise
    computed per orbit from the closed form (exact by the symmetry argument of
    :mod:`skdp_synth.workloads`) -- in cells, the closed-form sensitivity the
    scales were built from -- and cross-checked on data-independent random
    records. Then calibrates the whitening to it (``calibrate``) and
    returns it; ℓ2 for Gaussian noise, ℓ1 for Laplace.
    """
    wh = noise.whitening
    exhaustive = isinstance(wh, MatrixWhitening) or sset.enumerable
    if sset.space == "coords":
        if exhaustive:
            H = points_of(sset)
            sens2 = float(np.max(np.sum(wh.forward(H.T) ** 2, axis=1)))
        else:
            norms, mult, blocks = sset.orbits
            s_deg = np.full(norms.shape[1], np.inf)
            s_deg[blocks[wh.index]] = wh.scales
            sens2 = float(np.max(norms @ (mult / s_deg**2)))
            check = float(np.max(np.sum(wh.forward(sset.spot_points) ** 2, axis=1)))
            if check > sens2 * (1 + 1e-9) + 1e-12:  # pragma: no cover - a bug
                raise RuntimeError(
                    "whitened sensitivity: closed form fails a spot check"
                )
        return calibrate(noise, math.sqrt(sens2))
    ord_ = 2 if noise.kind == "gaussian" else 1
    if exhaustive:
        H = points_of(sset)
        sens = float(np.max(np.linalg.norm(wh.forward(H.T), ord=ord_, axis=1)))
    else:
        # closed form (the workload's sensitivity) with a spot check
        pts = sset.spot_points
        check = float(np.max(np.linalg.norm(wh.forward(pts), ord=ord_, axis=1)))
        if check > 1 + 1e-9:  # pragma: no cover - a bug
            raise RuntimeError("whitened sensitivity: closed form fails a spot check")
        sens = 1.0
    return calibrate(noise, sens)


def calibrate(noise, sens):
    """Calibrate the whitening to the verified sensitivity ``sens``.

    By construction ``sens <= 1`` (:cite:`Nikolov2013` Corollaries 8-9); anything
    materially above is a bug and raises. The scales are multiplied by
    ``sens (1 + 1e-9)``: up, if rounding left ``sens`` a hair above 1;
    down, where the construction's bound is loose (e.g. under replace-one
    the pieces' radii are attained by different pairs of records, so
    ``Σ_i α_i ||U_iᵀ h||² / r_i² < 1`` for every difference ``h``). The
    whitened sensitivity is then exactly ``1 / (1 + 1e-9)``.
    """
    if not sens <= 1 + 1e-6:  # pragma: no cover - a bug, never accepted
        raise RuntimeError(
            f"the whitened sensitivity is {sens:.6g} > 1: the ellipsoid does "
            "not contain the sensitivity polytope"
        )
    if sens <= 0:  # pragma: no cover - guarded by rank reduction
        raise RuntimeError("the workload has zero sensitivity")
    noise.whitening.rescale(sens * (1 + SENSITIVITY_SLACK))
    return sens


def points_of(sset):
    """The set's explicit points; ``ValueError`` when it cannot be enumerated."""
    if sset.points is None:
        raise ValueError(sset.too_large or "the sensitivity set has a closed form only")
    return sset.points


def replace_one_offset(noise, sset):
    """``o = (I - TᵀT) g_0``: the part of one record's answers that no
    replace-one change moves (``None`` under add/remove, where it is 0)."""
    if sset.neighbouring == "add-remove-one":
        return None
    g0 = sset.origin
    offset = noise.whitening.exact_part(g0)
    offset[np.abs(offset) < 1e-12 * max(1.0, np.abs(g0).max())] = 0.0
    return offset


def gaussian_lower_bound(sset, c):
    """``c² max_π tr(M_π^{1/2})²`` over ``sset``: no Gaussian mechanism does better.

    Weak duality holds for every design ``π``; for orbits the optimum is in
    closed form, for points the best design found. ``None`` when the set
    cannot be enumerated.
    """
    c2 = c**2
    if sset.orbits is not None:
        norms, mult, _ = sset.orbits
        return c2 * gaussian_optimum_orbits(norms, mult)
    if sset.points is None:
        return None
    H = sset.points
    B = orth_basis(H)
    return c2 * gaussian_optimum_points(B.T @ H)
