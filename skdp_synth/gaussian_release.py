"""ProjectedGaussianRelease: near-optimal (ε, δ)-DP release of linear queries.

Papers 002 (Nikolov, Talwar & Zhang, *The geometry of differential privacy:
the sparse and approximate cases*) and 004 (Gao, Gong & Yu, *Subspace
differential privacy*); SPEC §4. The release is the answer vector ``y = A x``
of a workload (default: every d-way marginal table of Boolean data) plus
noise shaped by the geometry of the workload, optionally refined by least
squares (002 Algorithm 3) and constrained by exact public invariants (004).

The pipeline, all of it data-independent except the marked steps:

1. **Rank reduction.** Work in an orthonormal basis ``P`` of ``range(A)``
   (coordinates ``z = Pᵀ y``, record contributions ``g_u = Pᵀ a_u``); the
   marginal workload has a closed-form Fourier basis
   (:mod:`skdp_synth.workloads`).
2. **Ellipsoid.** The MEE of ``K = sym conv{g_u}`` (or of ``conv{g_u - g_v}``
   under replace-one) -- Khachiyan / Kumar--Yıldırım, or in closed form for
   the symmetric marginal workload
   (:mod:`skdp_synth.mechanisms.ellipsoid`).
3. **Base decomposition** (002 Algorithm 1) into orthogonal pieces ``U_i``
   with radii ``r_i = max_u ||U_iᵀ g_u||``.
4. **Whitening.** The noise of every Gaussian mechanism here has the form
   ``Tᵀ diag(s) w`` with ``w ~ N(0, c² I)`` and ``T`` with orthonormal rows,
   and ``max_u ||diag(s)⁻¹ T g_u||_2 <= 1`` (*checked numerically on the
   whole sensitivity set before any data is read*). So the whitened
   coordinates ``t = diag(s)⁻¹ T z`` are a query of ℓ2-sensitivity 1, the
   noisy ``t~ = t + w`` is drawn by the (secure, when ``random_state=None``)
   Gaussian sampler :meth:`NoiseSource.gaussian`, and the release
   ``(I - TᵀT) z + Tᵀ diag(s) t~`` is post-processing. ``(I - TᵀT) z`` is the
   part of the answers with sensitivity 0 (e.g. the total ``n`` under
   replace-one), which is public.

   ========================  ==================================  ===========
   ``mechanism``             noise ``Tᵀ diag(s) w``              source
   ========================  ==================================  ===========
   ``"correlated"``          ``√k Σ_i r_i U_i w_i``              002 Alg. 2
   ``"correlated-weighted"`` ``Σ_i (r_i/√α_i) U_i w_i``,         refinement
                             ``α_i ∝ √d_i r_i``
   ``"mee"``                 ``F w`` with ``E = F B_2`` the MEE  002 Cor. 8
   ``"isotropic-gaussian"``  ``Δ_2(A) w`` on all ``q`` answers   002 Lemma 4
   ``"laplace"``             ``Δ_1(A) Lap(1/ε)`` on all answers  004 Lemma 16
   ========================  ==================================  ===========

   ``"correlated-weighted"`` is private by the same argument as 002
   Corollary 9 with Cauchy--Schwarz weighted by ``α`` (``Σ α_i = 1``):
   the whitened sensitivity is ``Σ_i α_i ||U_iᵀ g||²/r_i² <= 1``. Its error
   ``c² (Σ_i √d_i r_i)²`` is never above 002's ``c² k Σ_i d_i r_i²``.
5. **Calibration.** After whitening the sensitivity is 1, so ``c`` is the
   Gaussian-mechanism σ for sensitivity 1: the analytic Gaussian mechanism
   (Balle & Wang 2018) by default, or the papers' constants
   ``(1 + sqrt(2 ln(1/δ)))/ε`` (002 §3.2) / ``(1 + sqrt(1 + ln(1/δ)))/ε``
   (004 Lemma 13; not valid for larger ε -- the recorded ``delta_`` is then
   the δ it actually achieves).
6. **Sparse case** (002 Algorithm 3, SPEC §4; its box was lost in
   extraction): with a public bound ``n_rows >= ||x||_1``, let ``t`` be the
   largest ``i`` with ``d_i >= ε n_rows``, ``X = [U_1..U_t]``; the release's
   ``X``-part is replaced by the least-squares point of ``n_rows XXᵀK``
   (Frank--Wolfe, 002 §4.2). Post-processing.
7. **Invariants** (004): ``C · release = C · A x`` exactly.
   ``framework="projection"`` (004 Theorem 10, Corollaries 11, 14, 17): the
   release is ``Π_R y + Π_N ỹ`` for the unconstrained release ``ỹ``;
   ``framework="extension"`` (004 Theorem 12, Corollaries 15, 18,
   Algorithm 3): the mechanism is built for ``Q_Nᵀ A`` and extended by
   ``Π_R y``. For the coordinate mechanisms the invariants are first
   restricted to ``range(A)`` (``C ↦ C P``), which changes nothing on
   achievable answers.
8. **Synthetic rows** (post-processing). Marginal workloads: the shared
   generator (:mod:`skdp_synth.generator`) fits a table of valid rows (one
   level per block of ``blocks_``) to the released tables by maximum
   likelihood under the Gaussian noise -- for ``"residual"`` the residuals
   with their exact noise scales, for the bit-level mechanisms every bit
   table as a linear measurement of its attributes' table with the common
   cell variance ``expected_error_ / q`` (their correlations ignored) -- and
   ``sample(n)`` rounds that table to ``n`` rows (controlled rounding, no
   i.i.d. sampling error when ``n`` is the released total). The generator
   sees only the released values and public scales. Explicit workloads
   (``p <= 16``): candidate rows (the universe, or draws from the released
   1-way marginals) are reweighted to the release
   (:func:`skdp_synth.correction.reweight_to_targets`).

Distributed privatization (004 Algorithm 4) is
:func:`distributed_privatize`.
"""

from __future__ import annotations

import itertools
import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._chunked import reduce_rows
from ._linalg import numerical_rank
from ._sklearn_compat import Interval, StrOptions
from ._stats import attribute_tables, workload_answers, workload_counts
from .attribute_workload import AttributeMarginalWorkload
from .base import PrivateSynthesizerMixin
from .correction import reweight_to_targets
from .generator import Measurement, controlled_rows, fit_rows
from .mechanisms import gaussian_delta, gaussian_sigma
from .mechanisms.ellipsoid import (
    base_decomposition_orbits,
    base_decomposition_points,
    gaussian_optimum_orbits,
    gaussian_optimum_points,
    mee_orbits,
    mee_points,
)
from .plan import ReleasePlan
from .privacy import PrivacyGuarantee
from .validation import check_degree
from .workloads import (
    MAX_EXPLICIT_FEATURES,
    ExplicitWorkload,
    MarginalWorkload,
    universe_points,
)

__all__ = ["AdditiveNoise", "ProjectedGaussianRelease", "distributed_privatize"]

COORDINATE_MECHANISMS = ("correlated", "correlated-weighted", "mee")
#: slack allowed on the numerically verified whitened sensitivity (rounding)
_SENSITIVITY_SLACK = 1e-9
#: Khachiyan's stopping rule for explicit workloads: max g <= (1 + tol) r or
#: this many steps (002 §4.1: an O(1)-approximate MEE suffices; privacy never
#: depends on it because the ellipsoid is scaled to contain every point)
_MEE_TOL = 1e-6
_MEE_MAX_ITER = 5_000


# ====================================================================== noise
class _MaskWhitening:
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


class _MatrixWhitening:
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
    """The data-independent noise of a fitted :class:`ProjectedGaussianRelease`.

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

        ``release = answers + noise`` (004 eq. (2)); used by
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
    """Distributed privatization from a shared seed (004 Algorithm 4).

    Agent ``ℓ`` holds the true answers ``parts[ℓ]`` at positions
    ``indices[ℓ]`` of the answer vector (the sets partition ``range(q)``).
    Each agent independently regenerates the *same* noise vector ``e`` from
    the shared ``seed`` (the noise is additive and data-independent, 004
    eq. (2)) and releases ``parts[ℓ] + e[indices[ℓ]]``. The concatenation is
    exactly the release that one agent holding everything would produce, and
    it satisfies the invariants of ``noise`` up to rounding.

    The seed must be a secret shared by the agents only: whoever knows it can
    subtract the noise. Seeded NumPy noise is not hardened against
    floating-point attacks (see :class:`~skdp_synth.mechanisms.NoiseSource`).

    Parameters
    ----------
    noise : AdditiveNoise
        E.g. ``estimator.noise_model_`` of a fitted :class:`ProjectedGaussianRelease`.
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


# ============================================================== building
def _orth_basis(M):
    """Orthonormal basis of the column space of ``M`` (rank: :mod:`._linalg`)."""
    if M.size == 0:
        return np.zeros((M.shape[0], 0))
    U, s, _ = np.linalg.svd(M, full_matrices=False)
    return U[:, : numerical_rank(s, M.shape)]


def _null_basis(C, dim):
    """Orthonormal basis of the null space of ``C`` (``n_c × dim``)."""
    if C.shape[0] == 0:
        return np.eye(dim)
    _, s, Vt = np.linalg.svd(C, full_matrices=True)
    rank = numerical_rank(s, C.shape)
    return Vt[rank:].T


def _universe_coords(workload):
    """``g_u`` of every record type as columns (enumerates ``{0,1}^p``)."""
    if isinstance(workload, ExplicitWorkload):
        return workload.points
    if workload.n_features > MAX_EXPLICIT_FEATURES:
        raise ValueError(
            f"this option enumerates the universe {{0,1}}^p; supported for "
            f"p <= {MAX_EXPLICIT_FEATURES}, got p = {workload.n_features}"
        )
    return workload.point_coords(universe_points(workload.n_features)).T


def _sensitivity_points(G, neighbouring):
    """The points whose norms bound the sensitivity: ``g_u`` or ``g_u - g_v``."""
    if neighbouring == "add-remove-one":
        return G
    N = G.shape[1]
    if N * (N - 1) // 2 > 500_000:
        raise ValueError(
            f"replace-one neighbours with an explicit sensitivity set enumerate "
            f"all {N * (N - 1) // 2} pairs of record types; supported up to "
            "500000 pairs (universe size <= 1000)"
        )
    iu, iv = np.triu_indices(N, k=1)
    return G[:, iu] - G[:, iv]


def _explicit_whitening(H, mechanism, tol):
    """Whitening for explicit sensitivity points ``H`` (columns, any dimension).

    Returns ``(T, scales, info)`` with ``T`` (m × dim) orthonormal rows spanning
    the points.
    """
    B = _orth_basis(H)
    Hr = B.T @ H
    info = {}
    if mechanism == "mee":
        E = mee_points(Hr, tol=tol, max_iter=_MEE_MAX_ITER)
        vals, vecs = E.semi_axes()
        T = (B @ vecs).T
        scales = np.sqrt(vals)
        info["ellipsoid"] = E
    else:
        dec = base_decomposition_points(Hr, tol=tol, max_iter=_MEE_MAX_ITER)
        rows, scales = [], []
        alphas = _piece_weights(dec, mechanism)
        for U, r_i, a_i in zip(dec.pieces, dec.radii, alphas):
            rows.append((B @ U).T)
            scales.append(np.full(U.shape[1], r_i / math.sqrt(a_i)))
        T = np.vstack(rows)
        scales = np.concatenate(scales)
        info["decomposition"] = dec
    return T, scales, info


def _piece_weights(dec, mechanism):
    """``α_i`` of the pieces: ``1/k`` (002 Alg. 2) or ``∝ √d_i r_i`` (weighted)."""
    k = dec.k
    if mechanism == "correlated":
        return np.full(k, 1.0 / k)
    w = np.sqrt(dec.dims) * dec.radii
    if not np.all(w > 0):  # pragma: no cover - every piece carries sensitivity
        return np.full(k, 1.0 / k)
    return w / w.sum()


# ============================================================== estimator
class ProjectedGaussianRelease(PrivateSynthesizerMixin, BaseEstimator):
    """Near-optimal (ε, δ)-DP release of marginals with correlated Gaussian noise.

    Releases every ``d``-way marginal table of Boolean data (or any linear
    workload over ``{0,1}^p``) with noise shaped by the minimum-volume
    ellipsoid of the workload's sensitivity polytope and its base
    decomposition (paper 002, Algorithms 1--3), optionally holding public
    linear invariants exactly (paper 004), and samples synthetic rows whose
    marginals match the release. See the module docstring for the
    algorithm and ``doc/privacy.md`` for the privacy derivation.

    Categorical or numeric data: encode it first with
    :class:`~skdp_synth.preprocessing.BooleanEncoder` (categories and bin
    edges as public parameters), e.g. in
    :func:`~skdp_synth.make_synthesis_pipeline`.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy parameter ``ε > 0``.
    delta : float, default=1e-6
        Privacy parameter ``0 < δ < 1/2`` (ignored by ``mechanism="laplace"``,
        which is ``(ε, 0)``-DP).
    d : int, default=2
        Arity of the marginal tables of the default workload.
    workload : None, array-like of shape (q, 2^p) or a workload, default=None
        ``None``: all ``d``-way marginal tables over the ``p`` columns
        (:class:`~skdp_synth.workloads.MarginalWorkload`, any ``p`` whose
        ``C(p, d) 2^d`` cells fit in memory). A matrix: any linear queries
        over ``{0,1}^p`` (column ``k`` = the record type with
        :func:`~skdp_synth.workloads.universe_index` ``k``; ``p <= 16``).
    invariants : None or array-like of shape (n_c, q), default=None
        ``C``: the release satisfies ``C · released_ = C · (true answers)``
        exactly (004 Definition 2). The guarantee is then *induced subspace*
        DP (004 Definition 6): DP for everything orthogonal to the invariants.
    mechanism : {"auto", "residual", "correlated", "correlated-weighted", "mee", \
"isotropic-gaussian", "laplace"}, default="auto"
        The noise. ``"residual"``: the d-way tables of the *attributes* given
        by ``blocks_`` (every bit its own attribute on a bare 0/1 matrix),
        released through their residuals with ResidualPlanner's optimal
        Gaussian variances (:mod:`skdp_synth.attribute_workload`; optimal
        among Gaussian mechanisms for the total squared error of the
        workload). The others act on the bit-level workload (see the module
        docstring's table). ``"auto"``: ``"residual"`` for the default
        workload without invariants, else ``"correlated-weighted"``; the
        choice is recorded in ``mechanism_``.
    calibration : {"analytic", "nikolov2013", "gao2022"}, default="analytic"
        Gaussian noise magnitude ``c`` at whitened sensitivity 1.
    neighbouring : {"add-remove-one", "replace-one"}, default="add-remove-one"
        The neighbouring relation (002 uses add/remove, 004 replace-one).
        Sensitivities are computed for the one chosen (replace-one uses the
        differences ``a_u - a_v``).
    n_rows : int, default=None
        Public upper bound on the number of rows. Enables the least-squares
        step of 002 Algorithm 3 (sparse case; enumerates ``{0,1}^p``,
        ``p <= 16``) and is the default output size under add/remove.
    framework : {"projection", "extension"}, default="projection"
        How invariants are imposed (004 §3.1/§3.2). ``"extension"`` builds the
        mechanism for ``Q_Nᵀ A`` and needs the universe enumerated
        (``p <= 16``).
    n_candidates : int, default=500
        Size of the candidate set reweighted by ``sample`` for explicit
        workloads (post-processing); unused for marginal workloads.
    blocks : "auto", None, Blocks or list, default="auto"
        %(blocks)s
        With ``mechanism="residual"`` the blocks define the attributes whose
        tables are released; every sampled row is valid for them.
    accountant : BudgetAccountant, default=None
        Checked before and charged after ``fit``.
    random_state : None, int, RandomState or Generator, default=None
        ``None``: secure noise (OpenDP). An integer: reproducible, not hardened.

    Attributes
    ----------
    plan_ : ReleasePlan
        Everything fixed before the data was read (:mod:`skdp_synth.plan`):
        the mechanism, workload, calibrated noise model, verified
        sensitivity and the guarantee.
        Public: a function of the parameters and sizes only.
    released_ : ndarray of shape (q,)
        The released answers (counts; cells of the marginal tables in the
        workload's order).
    query_index_ : pandas.MultiIndex
        ``(table, cell)`` labels of ``released_``.
    released_series_ : pandas.Series
        ``released_`` indexed by ``query_index_``.
    expected_error_ : float
        ``E ||released_ - true answers||²`` (total squared error over the
        ``q`` answers) of the noise-adding step; exact for the dense case,
        an upper bound after least squares (a projection onto a convex set
        containing the truth never increases the error).
    gaussian_optimal_error_ : float or None
        A lower bound on the expected squared error of *every* additive
        Gaussian mechanism (any noise covariance, including the matrix
        mechanism and all of 002's and 004's Gaussian mechanisms) with the same
        ``(ε, δ)`` calibration, neighbouring relation and invariants:
        ``c² max_π tr((Σ_u π_u h_u h_uᵀ)^{1/2})²`` over the sensitivity set
        ``{h_u}`` (weak duality holds for every design ``π``; we report the best
        found, which for the marginal workload is the exact optimum, attained
        by ``mechanism="correlated-weighted"``). It is *not* a bound for
        non-Gaussian mechanisms. 002's own lower bounds (spectral and
        determinant) hold only up to unspecified absolute constants and for
        "small enough" ε, δ, so they cannot be evaluated numerically. ``None``
        for the Laplace mechanism or when the bound needs an enumeration that
        is too large. For ``mechanism="residual"`` under add/remove it is set
        to ``expected_error_``: ResidualPlanner's allocation is reported
        optimal among Gaussian mechanisms for the attribute workload (checked
        here on Boolean attributes, where it equals the bit-level optimum);
        ``None`` under replace-one, where the allocation is not optimised.
    noise_model_ : AdditiveNoise
        The public noise model (see :func:`distributed_privatize`).
    decomposition_ : BaseDecomposition or None
        Pieces ``d_i`` and radii ``r_i`` of 002 Algorithm 1.
    sensitivity_ : float
        Whitened sensitivity verified numerically before the noise was added
        (``<= 1``). For ``"residual"``: 1, by construction (the allocation's
        sensitivity is computed before any data is read and divided out).
    n_estimate_ : float or None
        Released (noisy under add/remove) total count.
    mechanism_ : str
        The mechanism used (``"auto"`` resolved).
    residual_scales_ : ndarray
        ``"residual"`` only: the noise standard deviation ``c τ_A`` of each
        residual, in ``workload_.subsets`` order (0 for the public total under
        replace-one). Public.
    generator_loss_ : float
        Noise-weighted squared loss ``Σ_m ||Q_m T(R) - y_m||²/σ_m²`` left by the
        generator between the synthetic table ``R`` and the released
        measurements (marginal workloads; :mod:`skdp_synth.generator`). About
        the number of measured values or less when the release is consistent.
    candidates_, weights_ : ndarray or None
        Explicit workloads only: the weighted candidate rows ``sample`` draws
        from (``weights_`` is ``None`` when the release does not determine the
        number of rows). ``None`` for marginal workloads, whose rows come from
        the generator.
    reweight_residual_ : float
        ``||F h - z~/n~||`` left by the reweighting (0 when the candidates can
        match the released marginals exactly).
    workload_ : MarginalWorkload or ExplicitWorkload
        The workload (public).
    blocks_ : Blocks
        The blocks used (see ``blocks``).
    epsilon_, delta_, neighbouring_, privacy_guarantee_
        What was spent (see :class:`~skdp_synth.base.PrivateSynthesizerMixin`).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((500, 6)) < 0.3).astype(int)
    >>> est = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, mechanism="correlated",
    ...                                random_state=0).fit(X)
    >>> est.released_.shape                      # 15 tables x 4 cells
    (60,)
    >>> est.decomposition_.dims.tolist()         # degrees 2, 1 and 0
    [15, 6, 1]
    >>> bool(est.gaussian_optimal_error_ <= est.expected_error_)
    True
    >>> est.marginal_table(["x0", "x1"]).shape
    (4,)
    >>> est.sample(5).shape
    (5, 6)
    """

    _fixed_domain = "boolean"
    _supports_chunked = True  # reads the data through reduce_rows only

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, np.inf, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "d": [Interval(Integral, 1, None, closed="left")],
        "workload": [None, "array-like", MarginalWorkload, ExplicitWorkload],
        "invariants": [None, "array-like"],
        "mechanism": [
            StrOptions(
                {
                    "auto",
                    "residual",
                    "correlated",
                    "correlated-weighted",
                    "mee",
                    "isotropic-gaussian",
                    "laplace",
                }
            )
        ],
        "calibration": [StrOptions({"analytic", "nikolov2013", "gao2022"})],
        "neighbouring": [StrOptions({"add-remove-one", "replace-one"})],
        "n_rows": [Interval(Integral, 1, None, closed="left"), None],
        "framework": [StrOptions({"projection", "extension"})],
        "n_candidates": [Interval(Integral, 2, None, closed="left")],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-6,
        d=2,
        workload=None,
        invariants=None,
        mechanism="auto",
        calibration="analytic",
        neighbouring="add-remove-one",
        n_rows=None,
        framework="projection",
        n_candidates=500,
        blocks="auto",
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.d = d
        self.workload = workload
        self.invariants = invariants
        self.mechanism = mechanism
        self.calibration = calibration
        self.neighbouring = neighbouring
        self.n_rows = n_rows
        self.framework = framework
        self.n_candidates = n_candidates
        self.blocks = blocks
        self.accountant = accountant
        self.random_state = random_state

    # ------------------------------------------------------------ privacy
    def _mechanism(self):
        """The mechanism ``"auto"`` stands for (public: depends on parameters only).

        ``"residual"`` -- the Gaussian-optimal noise on the attribute-level
        tables -- for the default marginal workload without invariants,
        ``"correlated-weighted"`` (Gaussian-optimal on the bit-level marginal
        workload, near-optimal otherwise) for explicit workloads and invariants.
        """
        if self.mechanism != "auto":
            return self.mechanism
        if self.workload is None and self.invariants is None:
            return "residual"
        return "correlated-weighted"

    def _noise_magnitude(self):
        """``(c, achieved δ)``: Gaussian σ at sensitivity 1 and the δ it gives."""
        if self._mechanism() == "laplace":
            return 1.0 / self.epsilon, 0.0
        if not self.delta < 0.5:
            raise ValueError(
                f"delta must be < 0.5 for a Gaussian mechanism, got {self.delta}"
            )
        with warnings.catch_warnings():
            # the gao2022 warning is raised once, by _guarantee
            warnings.simplefilter("ignore", UserWarning)
            c = gaussian_sigma(self.epsilon, self.delta, 1.0, self.calibration)
        achieved = gaussian_delta(c, self.epsilon, 1.0)
        return c, max(float(self.delta), achieved)

    def _guarantee(self, delta):
        """The guarantee of the noise calibrated by :meth:`_noise_magnitude`."""
        if self._mechanism() != "laplace" and delta > self.delta:
            warnings.warn(
                f"calibration={self.calibration!r} is not valid at epsilon="
                f"{self.epsilon:g}, delta={self.delta:g}: the noise achieves only "
                f"delta={delta:.3g}, which is what is recorded and charged. Use "
                "calibration='analytic'.",
                UserWarning,
                stacklevel=4,
            )
        names = {
            "residual": "Gaussian noise on attribute-level marginal residuals, "
            "optimal variances (ResidualPlanner, McKenna et al. 2023)",
            "correlated": "correlated Gaussian noise (002 Alg. 2)",
            "correlated-weighted": "weighted correlated Gaussian noise (002 Alg. 1-2)",
            "mee": "MEE-shaped Gaussian noise (002 Cor. 8)",
            "isotropic-gaussian": "Gaussian mechanism (002 Lemma 4)",
            "laplace": "Laplace mechanism (004 Lemma 16)",
        }
        text = names[self._mechanism()]
        if self.invariants is not None:
            text += (
                f"; induced subspace DP with exact invariants (004 Def. 6, "
                f"{self.framework} framework)"
            )
        return PrivacyGuarantee(self.epsilon, delta, self.neighbouring, text)

    def _make_plan(self, n_samples, n_features):
        """The whole noise model, calibrated and verified before the data is read.

        The mechanism, the workload, the invariants, the noise magnitude ``c``
        and the guarantee; for the bit-level mechanisms the whitening
        (:class:`AdditiveNoise`) with its whitened sensitivity checked on the
        whole sensitivity set; for ``"residual"`` ResidualPlanner's scales.
        Under add/remove neighbours ``n`` is private and the plan does not
        record it (it is only compared with the public bound ``n_rows``).
        """
        c, delta = self._noise_magnitude()
        common = {
            "n_samples": n_samples if self.neighbouring == "replace-one" else None,
            "n_features": n_features,
            "guarantee": self._guarantee(delta),
            "mechanism": self._mechanism(),
            "calibration": self.calibration,
            "neighbouring": self.neighbouring,
            "noise_sigma": c,
        }
        if common["mechanism"] == "residual":
            return self._residual_plan(n_samples, common)
        workload = self._make_workload(n_features)
        C = self._check_invariants(workload)
        self._check_n_rows(n_samples)
        sparse = self.n_rows is not None and common["mechanism"] in (
            "correlated",
            "correlated-weighted",
        )
        if sparse and C is not None:
            raise ValueError(
                "the least-squares step (n_rows) and invariants cannot be combined: "
                "each post-processing step would undo the other"
            )
        return self._noise_plan(workload, C, sparse, common)

    def _check_n_rows(self, n_samples):
        if self.n_rows is not None and n_samples > self.n_rows:
            raise ValueError(
                f"n_rows={self.n_rows} is declared a public upper bound on the "
                "number of rows, but X has more rows"
            )

    def _default_n_samples(self):
        # n is public only under replace-one; under add/remove use the public
        # bound or the released (noisy) total, never the private n.
        if self.neighbouring == "replace-one":
            return self.n_samples_fit_
        if self.n_rows is not None:
            return int(self.n_rows)
        if self.n_estimate_ is None:
            raise ValueError(
                "under add/remove neighbours the number of rows is private and "
                "this workload does not release it; pass n_samples (or n_rows)"
            )
        return max(1, int(round(self.n_estimate_)))

    # ---------------------------------------------------------- building
    def _make_workload(self, p):
        W = self.workload
        if W is None:
            check_degree(self.d, p)
            return MarginalWorkload(p, self.d)
        if isinstance(W, (MarginalWorkload, ExplicitWorkload)):
            if W.n_features != p:
                raise ValueError(
                    f"the workload is over {W.n_features} features, X has {p}"
                )
            return W
        return ExplicitWorkload(W, p)

    def _check_invariants(self, workload):
        if self.invariants is None:
            return None
        C = np.asarray(self.invariants, dtype=np.float64)
        if C.ndim == 1:
            C = C[None, :]
        if C.ndim != 2 or C.shape[1] != workload.n_queries:
            raise ValueError(
                f"invariants must have shape (n_c, q) with q = {workload.n_queries} "
                f"answers; got {C.shape}"
            )
        if not np.all(np.isfinite(C)):
            raise ValueError("invariants must be finite")
        return C

    def _noise_plan(self, workload, C, sparse, common):
        """The (public, data-independent) noise model of the bit-level mechanisms."""
        c = common["noise_sigma"]
        decomposition = None
        nb, mech = self.neighbouring, common["mechanism"]
        tol = _MEE_TOL

        if mech in ("isotropic-gaussian", "laplace"):
            space = "cells"
            q = workload.n_queries
            ord_ = 2 if mech == "isotropic-gaussian" else 1
            to_cells = np.asarray
            if C is not None and self.framework == "extension":
                G = workload.to_cells(_universe_coords(workload))  # (q, N) = A
                QN = _null_basis(C, q)
                H = _sensitivity_points(QN.T @ G, nb)
                sens = float(np.max(np.linalg.norm(H, ord=ord_, axis=0)))
                whitening = _MatrixWhitening(QN.T, np.full(QN.shape[1], sens))
                inv_basis = _orth_basis(C.T)
            else:
                sens = workload.sensitivity(nb, ord=ord_)
                whitening = _MaskWhitening(q, np.arange(q), np.full(q, sens))
                inv_basis = _orth_basis(C.T) if C is not None else None
            noise = AdditiveNoise(
                "cells",
                whitening,
                "gaussian" if ord_ == 2 else "laplace",
                c,
                to_cells,
                inv_basis,
            )
            verified = self._verify_cells(workload, noise)
        else:
            space = "coords"
            to_cells = workload.to_cells
            C_coords = None if C is None else workload.to_coords(C.T).T
            if isinstance(workload, MarginalWorkload) and (
                C is None or self.framework == "projection"
            ):
                whitening, decomposition = self._structured_whitening(
                    workload, mech, tol
                )
            else:
                G = _universe_coords(workload)
                if C is not None and self.framework == "extension":
                    QN = _null_basis(C_coords, workload.rank)
                    H = _sensitivity_points(QN.T @ G, nb)
                    T, scales, info = _explicit_whitening(H, mech, tol)
                    T = T @ QN.T
                else:
                    H = _sensitivity_points(G, nb)
                    T, scales, info = _explicit_whitening(H, mech, tol)
                decomposition = info.get("decomposition")
                whitening = _MatrixWhitening(T, scales)
            inv_basis = None
            if C is not None:
                inv_basis = _orth_basis(C_coords.T)
                if inv_basis.shape[1] >= workload.rank:
                    raise ValueError(
                        "the invariants fix every answer; nothing is private"
                    )
            noise = AdditiveNoise(
                "coords", whitening, "gaussian", c, to_cells, inv_basis
            )
            verified = self._verify_coords(workload, noise)
        noise.offset = self._offset(workload, noise, space)
        return ReleasePlan(
            **common,
            workload=workload,
            invariants=C,
            sparse=sparse,
            space=space,
            noise=noise,
            decomposition=decomposition,
            residual_scales=None,
            sensitivity=verified,
            expected_error=noise.expected_error(),
            lower_bound=self._lower_bound(workload, C, c),
        )

    def _residual_plan(self, n_samples, common):
        """ResidualPlanner's scales for the attribute-level tables (no data)."""
        if self.workload is not None or self.invariants is not None:
            raise ValueError(
                "mechanism='residual' releases the attribute-level marginal "
                "workload and takes no explicit workload or invariants; use "
                "mechanism='correlated-weighted' (or 'auto')"
            )
        blocks = self.blocks_
        check_degree(self.d, blocks.n_attributes, of="attributes")
        self._check_n_rows(n_samples)
        W = AttributeMarginalWorkload(blocks.n_levels, self.d)
        c = common["noise_sigma"]
        # ResidualPlanner's allocation and its whitened ℓ2-sensitivity, computed
        # once (the replace-one maximum enumerates the attribute sets); dividing
        # it out gives sensitivity exactly 1 (homogeneity, see
        # AttributeMarginalWorkload.optimal_scales), so c is the Gaussian σ at
        # sensitivity 1. These are optimal_scales' τ, bit for bit.
        raw = W.allocation(self.neighbouring)  # public
        sens = W.whitened_sensitivity(raw, self.neighbouring)
        self._guard_residual(sens)
        tau = raw * sens
        expected = W.expected_error(tau, c)
        return ReleasePlan(
            **common,
            workload=W,
            invariants=None,
            sparse=False,
            space="residuals",
            noise=None,
            decomposition=None,
            residual_scales=tau,
            sensitivity=1.0,  # the allocation's sensitivity is divided out
            expected_error=expected,
            lower_bound=expected if self.neighbouring == "add-remove-one" else None,
        )

    def _offset(self, W, noise, space):
        """``o = (I - TᵀT) g_0``: the part of one record's answers that no
        replace-one change moves (``None`` under add/remove, where it is 0)."""
        if self.neighbouring == "add-remove-one":
            return None
        g0 = W.point_coords(np.zeros((1, W.n_features), dtype=np.int8))[0]
        if space == "cells":
            g0 = W.to_cells(g0)
        offset = noise.whitening.exact_part(g0)
        offset[np.abs(offset) < 1e-12 * max(1.0, np.abs(g0).max())] = 0.0
        return offset

    def _structured_whitening(self, W, mechanism, tol):
        """Whitening of the marginal workload from its orbit/block structure.

        Returns ``(whitening, decomposition)`` (``None`` for ``"mee"``).
        """
        norms, mult = W.orbit_norms(self.neighbouring)
        deg_scale = np.zeros(W.d + 1)
        dec = None
        if mechanism == "mee":
            E = mee_orbits(norms, mult)
            deg_scale = np.sqrt(E.axes)
        else:
            dec = base_decomposition_orbits(norms, mult)
            alphas = _piece_weights(dec, mechanism)
            for piece, r_i, a_i in zip(dec.pieces, dec.radii, alphas):
                deg_scale[piece] = r_i / math.sqrt(a_i)
        active = np.flatnonzero(deg_scale[W.degrees] > 0)
        return _MaskWhitening(W.rank, active, deg_scale[W.degrees][active]), dec

    # ------------------------------------------------------- verification
    def _spot_points(self, W):
        """Data-independent records (and pairs) to cross-check a closed form."""
        rng = np.random.default_rng(0)
        U = (rng.random((64, W.n_features)) < 0.5).astype(np.int8)
        U[0], U[1] = 0, 1
        g = W.point_coords(U)
        if self.neighbouring == "add-remove-one":
            return g
        V = U.copy()
        V[:32] = 1 - U[:32]  # complements: the widest pairs
        V[32:] = (rng.random((32, W.n_features)) < 0.5).astype(np.int8)
        return g - W.point_coords(V)

    def _enumerable_pairs(self, W):
        """Whether the sensitivity set is small enough to check point by point."""
        N = W.universe_size if W.n_features <= MAX_EXPLICIT_FEATURES else np.inf
        n_points = N if self.neighbouring == "add-remove-one" else N * (N - 1) / 2
        return n_points <= 500_000 and n_points * max(W.rank, W.n_queries) <= 5e7

    def _verify_coords(self, W, noise):
        """Largest whitened ℓ2 sensitivity over the whole sensitivity set.

        Enumerated exactly when the universe (or its pairs) is small enough;
        for a larger marginal workload, computed per orbit from the closed form
        (exact by the symmetry argument of :mod:`skdp_synth.workloads`) and
        cross-checked on data-independent random records. Rescales the noise
        up if rounding left it above 1; raises if it is materially above 1.
        """
        wh = noise.whitening
        if isinstance(wh, _MatrixWhitening) or self._enumerable_pairs(W):
            H = _sensitivity_points(_universe_coords(W), self.neighbouring)
            sens2 = float(np.max(np.sum(wh.forward(H.T) ** 2, axis=1)))
        else:
            norms, mult = W.orbit_norms(self.neighbouring)
            s_deg = np.full(W.d + 1, np.inf)
            s_deg[W.degrees[wh.index]] = wh.scales
            sens2 = float(np.max(norms @ (mult / s_deg**2)))
            check = float(np.max(np.sum(wh.forward(self._spot_points(W)) ** 2, axis=1)))
            if check > sens2 * (1 + 1e-9) + 1e-12:  # pragma: no cover - a bug
                raise RuntimeError(
                    "whitened sensitivity: closed form fails a spot check"
                )
        return self._guard(noise, math.sqrt(sens2))

    def _verify_cells(self, W, noise):
        """Whitened sensitivity (ℓ2 or ℓ1) of the cell answers, checked."""
        wh = noise.whitening
        ord_ = 2 if noise.kind == "gaussian" else 1
        if isinstance(wh, _MatrixWhitening) or self._enumerable_pairs(W):
            A = W.to_cells(_universe_coords(W))
            H = _sensitivity_points(A, self.neighbouring)
            sens = float(np.max(np.linalg.norm(wh.forward(H.T), ord=ord_, axis=1)))
        else:
            # closed form (MarginalWorkload.sensitivity) with a spot check
            pts = W.to_cells(self._spot_points(W).T).T
            check = float(np.max(np.linalg.norm(wh.forward(pts), ord=ord_, axis=1)))
            if check > 1 + 1e-9:  # pragma: no cover - a bug
                raise RuntimeError(
                    "whitened sensitivity: closed form fails a spot check"
                )
            sens = 1.0
        return self._guard(noise, sens)

    @staticmethod
    def _guard(noise, sens):
        """Calibrate the whitening to the verified sensitivity ``sens``.

        By construction ``sens <= 1`` (002 Corollaries 8-9); anything
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
        noise.whitening.rescale(sens * (1 + _SENSITIVITY_SLACK))
        return sens

    # -------------------------------------------------------- lower bound
    def _lower_bound(self, W, C, c):
        """``c² max_π tr(M_π^{1/2})²`` over the sensitivity set (see Attributes)."""
        if self._mechanism() == "laplace":
            return None
        c2 = c**2
        if C is None and isinstance(W, MarginalWorkload):
            norms, mult = W.orbit_norms(self.neighbouring)
            return c2 * gaussian_optimum_orbits(norms, mult)
        try:
            G = _universe_coords(W)
            if C is not None:
                QN = _null_basis(W.to_coords(C.T).T, W.rank)
                G = QN.T @ G
            H = _sensitivity_points(G, self.neighbouring)
        except ValueError:
            return None
        B = _orth_basis(H)
        return c2 * gaussian_optimum_points(B.T @ H)

    # --------------------------------------------------------------- fit
    def _fit(self, U, plan, source):
        self.mechanism_ = plan.mechanism
        if plan.space == "residuals":
            self._fit_residual(U, plan, source)
            return
        n = U.shape[0]
        workload = plan.workload

        # ---- the only steps that read the data: one additive statistic
        # (_stats.workload_counts), in memory or summed over Dask chunks
        y = workload_answers(reduce_rows(U, workload_counts, workload), workload)
        v = workload.to_coords(y) if plan.space == "coords" else y
        released = plan.noise.privatize(v, source, n=plan.n_samples)
        del y, v
        # ---- post-processing from here on
        if plan.sparse:
            released = self._least_squares(workload, plan, released)
        if plan.space == "coords":
            coords = released
            cells = workload.to_cells(released)
        else:
            cells = released
            coords = workload.to_coords(released)
        self.workload_ = workload
        self.noise_model_ = plan.noise
        self.decomposition_ = plan.decomposition
        self.sensitivity_ = plan.sensitivity
        self.expected_error_ = plan.expected_error
        self.gaussian_optimal_error_ = plan.lower_bound
        self.released_ = cells
        self._released_coords = coords
        self.n_estimate_ = self._total_estimate(workload, coords, cells, n)
        self._model_rows = None
        if isinstance(workload, MarginalWorkload) and self.n_estimate_ is not None:
            sigma = math.sqrt(self.expected_error_ / workload.n_queries)
            measurements = _bit_table_measurements(workload, self.blocks_, cells, sigma)
            self._fit_generator(measurements, source)
        else:
            self._fit_candidates(workload, coords, source)

    def _fit_residual(self, U, plan, source):
        """Release the attribute-level residuals with optimal Gaussian noise.

        See :mod:`skdp_synth.attribute_workload` for the residual basis, the
        per-record sensitivity ``s_A`` and ResidualPlanner's variances. Like
        every mechanism here, the noise is added to the whitened true values
        (``z_A / τ_A``, ℓ2-sensitivity verified ``<= 1`` by the plan, before
        any data is read) by :meth:`NoiseSource.gaussian`; the rest is
        post-processing.
        """
        W, c, tau = plan.workload, plan.noise_sigma, plan.residual_scales
        noisy = [i for i, A in enumerate(W.subsets) if tau[i] > 0]

        # ---- the only steps that read the data: the counts of the maximal
        # tables (_stats.attribute_tables), in memory or summed over chunks
        z = W.residuals(reduce_rows(U, attribute_tables, W, self.blocks_))
        t = np.concatenate([z[W.subsets[i]] / tau[i] for i in noisy])
        t_noisy = source.gaussian(t, c)
        del z, t
        # ---- post-processing from here on
        released, pos = {}, 0
        for i in noisy:
            A = W.subsets[i]
            k = W.residual_size(A)
            released[A] = tau[i] * t_noisy[pos : pos + k]
            pos += k
        if () not in released:  # replace-one: the total n is public
            released[()] = np.array([float(plan.n_samples)])
        self.workload_ = W
        self.noise_model_ = None
        self.decomposition_ = None
        self.sensitivity_ = plan.sensitivity
        self.residual_scales_ = c * tau
        self.expected_error_ = plan.expected_error
        self.gaussian_optimal_error_ = plan.lower_bound
        self._residuals = released
        self.released_ = np.concatenate([W.reconstruct(released, S) for S in W.tables])
        self.n_estimate_ = float(released[()][0])
        measurements = [
            Measurement(A, W.residual_matrix(A), released[A], c * tau[i])
            for i, A in enumerate(W.subsets)
            if A and tau[i] > 0
        ]
        self._fit_generator(measurements, source)

    @staticmethod
    def _guard_residual(sens):
        """The allocation's sensitivity must be a positive finite number."""
        if not (0.0 < sens < math.inf):  # pragma: no cover - defensive
            raise RuntimeError(
                f"whitened sensitivity {sens} of the residual allocation is not a "
                "positive finite number; refusing to release"
            )

    def _fit_generator(self, measurements, source):
        """Fit the synthetic table to the released measurements (post-processing).

        :func:`skdp_synth.generator.fit_rows` sees only the noisy answers and
        their public noise scales. It has as many rows as the released tables
        count (the public ``n`` under replace-one, else the released noisy
        total), so that rows and tables are on one scale; ``sample(n)`` then
        rounds it to any ``n``.
        """
        N = max(1, int(round(self.n_estimate_)))
        result = fit_rows(measurements, self.blocks_.n_levels, N, rng=source.rng)
        self._model_rows = result.rows
        self.generator_loss_ = result.loss
        self.candidates_ = None
        self.weights_ = None
        self.reweight_residual_ = None

    def _total_estimate(self, W, coords, cells, n):
        if self.neighbouring == "replace-one":
            return float(n)  # public
        if isinstance(W, MarginalWorkload):
            return float(coords[0] / math.sqrt(W.eigenvalues[0]))
        w = W.total_weights()
        return None if w is None else float(w @ cells)

    # ---------------------------------------------------- least squares
    def _least_squares(self, W, plan, z_noisy):
        """002 Algorithm 3: project the X-part onto ``n_rows X Xᵀ K``."""
        dec = plan.decomposition
        eps_n = self.epsilon * self.n_rows
        big = [i for i in range(dec.k) if dec.dims[i] >= eps_n]
        if not big:
            return z_noisy
        t = max(big) + 1
        wh = plan.noise.whitening
        if isinstance(wh, _MaskWhitening):
            cols = np.flatnonzero(np.isin(W.degrees, np.concatenate(dec.pieces[:t])))
            Xb = np.eye(W.rank)[:, cols]
        else:
            m = int(np.sum(dec.dims[:t]))
            Xb = wh.T[:m].T
        G = _universe_coords(W)
        H = self.n_rows * (Xb.T @ G)
        b = Xb.T @ z_noisy
        xhat = _frank_wolfe_l1(H, b)
        return z_noisy - Xb @ b + Xb @ xhat

    # ---------------------------------------------------------- sampling
    def _fit_candidates(self, W, coords, source):
        m = int(self.n_candidates)
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
        if self.n_estimate_ is None:
            self.candidates_ = cand.astype(np.float64)
            self.weights_ = None
            self.reweight_residual_ = None
            return
        F = W.point_coords(cand)
        # a noisy total can be tiny or negative on small data: floor it at 1
        result = reweight_to_targets(F, coords / max(self.n_estimate_, 1.0))
        self.candidates_ = cand.astype(np.float64)
        self.weights_ = result.weights
        self.reweight_residual_ = result.residual

    def _sample_cube(self, n, source):
        if getattr(self, "_model_rows", None) is not None:
            rows = controlled_rows(self._model_rows, n, source.rng)
            return self.blocks_.to_bits(rows).astype(np.float64)
        if self.weights_ is None:
            raise ValueError(
                "this release does not determine the number of rows (add/remove "
                "neighbours and a workload whose row space lacks the total), so "
                "it cannot be normalised into a distribution"
            )
        idx = source.rng.choice(len(self.candidates_), size=n, p=self.weights_)
        rows = self.candidates_[idx]
        if not self.blocks_.is_all_binary:
            # temporary: repair invalid blocks (post-processing of released rows)
            rows = self.blocks_.repair(rows, source.rng).astype(np.float64)
        return rows

    def _synthetic_distribution(self):
        if getattr(self, "_model_rows", None) is not None:
            rows, counts = np.unique(self._model_rows, axis=0, return_counts=True)
            return self.blocks_.to_bits(rows).astype(np.float64), counts / counts.sum()
        if self.weights_ is None:
            return None
        return self.candidates_, self.weights_

    # ----------------------------------------------------------- outputs
    def _feature_names(self):
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            return [f"x{j}" for j in range(self.n_features_in_)]
        return [str(c) for c in names]

    @property
    def query_index_(self):
        import pandas as pd

        check_is_fitted(self)
        if isinstance(self.workload_, AttributeMarginalWorkload):
            labels = self.workload_.query_labels(self.blocks_.names)
            return pd.MultiIndex.from_tuples(labels, names=["table", "cell"])
        labels = self.workload_.query_labels(self._feature_names())
        return pd.MultiIndex.from_tuples(labels, names=["table", "cell"])

    @property
    def released_series_(self):
        import pandas as pd

        return pd.Series(self.released_, index=self.query_index_, name="count")

    def _attribute_table(self, columns):
        import pandas as pd

        names = list(self.blocks_.names)
        pos = [
            names.index(str(c)) if not isinstance(c, Integral) else int(c)
            for c in columns
        ]
        W = self.workload_
        if len(set(pos)) != len(pos) or not 1 <= len(pos) <= W.d:
            raise ValueError(
                f"need 1 to {W.d} distinct attributes of {names}, got {list(columns)}"
            )
        S = tuple(sorted(pos))
        values = W.reconstruct(self._residuals, S).reshape(
            tuple(int(W.n_levels[j]) for j in S)
        )
        values = np.transpose(values, [S.index(j) for j in pos])
        idx = pd.MultiIndex.from_product(
            [range(int(W.n_levels[j])) for j in pos], names=[names[j] for j in pos]
        )
        return pd.Series(values.ravel(), index=idx, name="count")

    def marginal_table(self, columns):
        """The released marginal table of ``columns`` as a labelled Series.

        Parameters
        ----------
        columns : list of str or int
            ``d`` feature names (or indices), in any order.

        Returns
        -------
        pandas.Series
            Released counts indexed by the columns' values (a MultiIndex).
        """
        import pandas as pd

        check_is_fitted(self)
        W = self.workload_
        if isinstance(W, AttributeMarginalWorkload):
            return self._attribute_table(columns)
        if not isinstance(W, MarginalWorkload):
            raise ValueError("marginal tables exist only for the marginal workload")
        names = self._feature_names()
        pos = [
            names.index(str(c)) if not isinstance(c, Integral) else int(c)
            for c in columns
        ]
        if len(set(pos)) != W.d:
            raise ValueError(f"need {W.d} distinct columns, got {list(columns)}")
        order = np.argsort(pos)
        S = tuple(int(pos[i]) for i in order)
        t = next(i for i, row in enumerate(W.tables) if tuple(row) == S)
        values = self.released_[t * W.n_cells : (t + 1) * W.n_cells]
        cells = list(itertools.product((0, 1), repeat=W.d))
        # cells are ordered by the sorted columns; relabel in the requested order
        inv = np.argsort(order)
        idx = pd.MultiIndex.from_tuples(
            [tuple(cell[i] for i in inv) for cell in cells],
            names=[names[pos[i]] for i in range(len(pos))],
        )
        return pd.Series(values, index=idx, name="count").sort_index()

    # ----------------------------------------------------------- release
    def to_release(self):
        """The release: the noisy answers and the public plan (002, 004).

        Holds ``released`` (the noisy answers, ``released_``), the weighted
        candidate rows ``points``/``weights`` that ``sample`` draws from
        (post-processing of the release, when it determines a distribution)
        and the public plan: workload, mechanism, calibration, neighbouring
        relation, verified sensitivity, expected error, the table/cell label
        of every answer and the default output size (the public ``n`` under
        replace-one; ``n_rows`` or the released noisy total under add/remove,
        never the private ``n``). Kept in this one method so that it follows
        the mechanism when the sampling step changes.
        """
        from .release import release_from

        check_is_fitted(self)
        arrays = {"released": self.released_}
        dist = self._synthetic_distribution()
        if dist is not None:  # the generator's table or the weighted candidates
            arrays["points"], arrays["weights"] = dist
        try:
            default_n = int(self._default_n_samples())
        except ValueError:
            default_n = None
        labels = [[str(t), str(c)] for t, c in self.query_index_]
        plan = {
            "sampler": "weighted-points" if dist is not None else "none",
            "selection": "controlled" if self._model_rows is not None else "iid",
            "reason": "the release does not determine the number of rows",
            "rounding": "none",
            "domain": "boolean",
            "workload": type(self.plan_.workload).__name__,
            "d": int(self.d),
            "query_labels": labels,
            "mechanism": self.plan_.mechanism,
            "calibration": self.plan_.calibration,
            "neighbouring": self.plan_.neighbouring,
            "sensitivity": float(self.plan_.sensitivity),
            "expected_error": float(self.plan_.expected_error),
            "n_estimate": self.n_estimate_,
            "default_n_samples": default_n,
        }
        return release_from(self, arrays, plan)


# ========================================================== generator input
def _bit_table_measurements(workload, blocks, cells, sigma):
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


# ============================================================ Frank-Wolfe
def _frank_wolfe_l1(H, b, *, max_iter=2000, tol=1e-9):
    """``argmin ||x - b||`` over ``conv{±h_u}`` (columns of ``H``), 002 §4.2.

    Frank--Wolfe with exact line search; the linear minimisation oracle is a
    maximum over the enumerated columns. Stops when the duality gap is below
    ``tol · max(1, ||b||²)``.
    """
    x = np.zeros_like(b)
    scale = max(1.0, float(b @ b))
    for _ in range(max_iter):
        grad = x - b
        scores = grad @ H
        j = int(np.argmax(np.abs(scores)))
        s = -np.sign(scores[j]) * H[:, j] if scores[j] != 0 else np.zeros_like(b)
        direction = s - x
        gap = -float(grad @ direction)
        if gap <= tol * scale:
            break
        denom = float(direction @ direction)
        gamma = min(1.0, gap / denom) if denom > 0 else 0.0
        x = x + gamma * direction
    return x
