"""epsilon-DP synthetic data by private PCA and damped, noisy microaggregation.

Boedihardjo, Strohmer & Vershynin, *Covariance's loss is privacy's gain*
(:cite:`Boedihardjo2024`), §5: Algorithms 2-4, Theorems 5.9 and 5.12-5.15.

The mechanism, on records ``x_i`` in the convex set
``K = p^{-1/2} [0, 1]^p`` inside the unit ball (``validation.cube_to_unit_ball``):

1. ``S = X^T X / n``; ``alpha = (log n)^{-1/4}``;
   ``t = floor(kappa log n / log(7/alpha))`` (:cite:`Boedihardjo2024` §5.8; Algorithm 4
   step 3).
2. ``P = PROJ((n eps / (6 t)) S, t)`` (Algorithm 3; exact Bingham draws,
   :mod:`skdp_synth.mechanisms.bingham`).
3. The ``alpha``-covering ``nu_1..nu_s`` of the unit ball of ``ran(P)``
   (:class:`~skdp_synth.geometry.LatticeCovering`, ``s <= (7/alpha)^t <= n^kappa``)
   and the nearest-point partition ``F_1..F_s`` of the ``P x_i``.
4. Damped microaggregation (eq. 5.4): ``w_j = |F_j|/n``,
   ``y~_j = sum_{F_j} x_i / max(|F_j|, b)`` with ``b = sqrt(p n^{1-kappa}/eps)``
   (eq. 5.17).
5. Laplace noise on **every** cell, empty or not (Theorem 5.12):
   ``rho_j ~ Lap(6/(n eps))``, ``r_ji ~ Lap(12 sqrt(p)/(b eps))``.
6. Metric projections (eqs. 5.5-5.6): ``w_bar = pi_{Delta,1}(w + rho)``
   (negatives to 0, renormalise; all non-positive: uniform),
   ``y_bar_j = pi_{K,2}(y~_j + r_j)`` (clip to the box ``K``).
7. ``sample(m)``: bootstrap from ``(y_bar_j, w_bar_j)`` (§5.9), back to the
   cube, randomized rounding for Boolean data (§5.10) -- block by block
   when the columns have categorical blocks (:mod:`skdp_synth.blocks`).

This module holds the estimator: the plan, the two passes over the data,
the noise and the sampling. The parameters and noise scales, with their
privacy derivations, are in :mod:`skdp_synth.damped._parameters`; the damped
microaggregation and the block geometry in :mod:`skdp_synth.damped._damping`.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._chunked import reduce_rows
from .._sklearn_compat import Interval, StrOptions
from .._stats import damped_cell_sums, moment_sums, projected_cell_sums
from ..base import PrivateSynthesizerMixin
from ..blocks import Blocks
from ..geometry import LatticeCovering
from ..mechanisms.bingham import proj
from ..plan import DampedPlan
from ..privacy import REPLACE_ONE, PrivacyGuarantee, not_private
from ..validation import check_dense_size, check_integer, user_stacklevel
from ._damping import (
    _from_cell_sums,
    _hull_point,
    block_geometry,
    one_way_level_estimate,
    project_simplex_l1,
)
from ._parameters import (
    BUDGET_SPLIT,
    centre_radii,
    count_noise_scale,
    default_alpha,
    default_damping,
    default_n_components,
    mean_noise_scale,
    optimal_damping,
    optimal_parameters,
    projection_scale,
    resolve_block_plan,
    share_projection_scale,
    sum_noise_scale,
    weight_noise_scale,
)

#: A level of an attribute is kept (``_drop_unsupported_level``) where the
#: release's estimate of its count is at least this many noise sds (the
#: Gaussian release's ``ReleaseRules.level_support_z``).
LEVEL_SUPPORT_Z = 2.0

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike

    from ..blocks import BlocksLike
    from ..privacy import BudgetAccountant
    from ..release import Release

__all__ = ["DampedPrivateSynthesizer"]


class DampedPrivateSynthesizer(PrivateSynthesizerMixin, BaseEstimator):
    """epsilon-DP synthetic data: private PCA, damped noisy microaggregation.

    :cite:`Boedihardjo2024`, §5, Algorithm 4 and
    Theorems 5.12-5.15. Pure ``epsilon``-differential privacy under
    **replace-one** neighbours with ``n`` public (Theorem 5.12): ``eps/3``
    for the private projection ``PROJ((n eps/(6t)) S, t)``, ``eps/3`` for the
    Laplace noise on the cell weights, ``eps/3`` for the Laplace noise on
    the damped cell means. Every constant is derived in
    :mod:`skdp_synth.damped._parameters` and ``doc/privacy.md``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget, finite and ``> 0``.
    kappa : float, default=1/3
        Exponent ``0 < kappa < 1`` trading the covering size
        ``s <= n^kappa`` against the damping ``b = sqrt(p n^{1-kappa}/eps)``
        (:cite:`Boedihardjo2024` Theorem 5.13; ``1/3`` is the choice of Remark 5.16).
    m : int, default=None
        Default number of synthetic rows of :meth:`sample`; ``None`` uses
        ``n`` (public under replace-one).
    domain : {"boolean", "box"}, default="boolean"
        ``"boolean"``: records in ``{0, 1}^p`` (Algorithm 4; output by
        randomized rounding). ``"box"``: records in ``bounds`` (Theorem 5.14
        with ``K`` a box; output are the cell means).
    bounds : tuple (lo, hi), default=None
        Public bounds of the ``"box"`` domain (scalars or per column). When
        ``None`` they are read off the data with a
        :class:`~skdp_synth.exceptions.PrivacyLeakWarning`. Records outside
        are rejected, never clipped.
    n_components : int, default=None
        Override of ``t`` (``0 <= t <= p``); ``None`` uses the plan of
        ``parameters``. Any fixed number keeps the guarantee.
    alpha : float, default=None
        Override of the covering radius; ``None``: the plan's.
    damping : float, default=None
        Override of ``b > 0``; ``None``: the plan's.
    centre : "auto", "blocks", "cube", "marginals", None or array-like, default="auto"
        The public point the damped means shrink toward (and, for
        ``parameters="bound"``/``"paper"``, the centre of the whole
        mechanism). ``"auto"``: ``"blocks"`` for ``parameters="optimal"``,
        else ``"cube"``. ``"blocks"``: the blocks' centroids (``1/w`` per bit
        of a one-hot block of width ``w``, ``1/2`` per binary bit);
        ``"cube"``: ``1/2`` per bit; ``"marginals"`` (``parameters="optimal"``
        only): the 1-way marginals of the released cell sums, no extra
        budget; ``None``: the origin (the paper's); or ``p`` numbers in
        ``[0, 1]``.
    parameters : {"optimal", "bound", "paper"}, default="optimal"
        ``"optimal"``: block-aware geometry and noisy cell sums, with the
        data-independent plan :func:`block_plan` (``doc/privacy.md``, "The
        default release"). ``"bound"``: Theorem 5.12's noisy damped means,
        ``(t, alpha, b)`` minimising ``expected_error_proxy`` (the default
        before the block-aware release). ``"paper"``: Theorem 5.12 with the
        formulas of :cite:`Boedihardjo2024` §5.8 and eq. 5.17 (with
        ``centre=None``, Algorithm 4 exactly).
    keep_diagnostics : bool, default=False
        Also store the realised noise norms and the residual
        ``||(I-P)S(I-P)||_F`` needed to evaluate the Theorem 5.9 bound
        (:meth:`accuracy_bound`). **These are not private** (they are
        computed from the data and the noise); keep them for testing and
        auditing, never publish an estimator fitted with them.
    blocks : "auto", None, Blocks or list, default="auto"
        %(blocks)s
        With ``domain="boolean"``, :meth:`sample` rounds
        each released cell mean block by block (:meth:`Blocks.round
        <skdp_synth.blocks.Blocks.round>`: one valid code per block, with the
        block's mean in expectation when that mean is feasible), so every
        sampled row is valid; rounding a released mean is post-processing.
        With ``domain="box"`` the blocks are only recorded.
    accountant : BudgetAccountant, default=None
        Checked before the fit and charged ``epsilon`` after it succeeds.
    random_state : None, int, RandomState or Generator, default=None
        ``None``: Laplace noise from OpenDP's exact samplers; the Bingham
        draws, bootstrap and rounding from NumPy (not hardened). An integer
        gives reproducible, **not hardened** noise (experiments only).

    Attributes
    ----------
    epsilon_, delta_, neighbouring_, privacy_guarantee_
        What the fit spent: ``(epsilon, 0, "replace-one")``.
    plan_ : DampedPlan
        Everything fixed before the data was read (:mod:`skdp_synth.plan`):
        the covering, ``alpha``, ``t``, ``b``, the three noise scales and the
        guarantee.
        Public: a function of the parameters and sizes only.
    alpha_ : float
        Covering radius used.
    n_components_ : int
        ``t`` used.
    damping_ : float
        ``b`` used.
    components_ : ndarray of shape (t, p)
        The private directions ``v_1..v_t`` (orthonormal rows).
    projection_ : ndarray of shape (p, p)
        ``P = V V^T``.
    covering_ : LatticeCovering
        The covering of the unit ball of ``ran(P)`` in ``v``-coordinates.
    n_cells_ : int
        Number of cells ``s`` (all of them, empty or not).
    weights_ : ndarray of shape (``n_cells_``,)
        Released cell weights ``w_bar`` (on the simplex).
    cell_means_ : ndarray of shape (``n_cells_``, p)
        Released cell means ``sqrt(p) y_bar_j`` on the cube ``[0, 1]^p``.
    projection_scale_, weight_noise_scale_, mean_noise_scale_ : float
        ``n eps/(6t)``, ``6/(n eps)``, ``12 sqrt(p)/(b eps)`` (paper); for
        ``parameters="optimal"`` ``n eps_1/(2 t M^2)``, ``2/(n eps_2)`` (0
        with one cell) and the Laplace scale ``Delta/eps_3`` of the cell
        sums (cube scale).
    budget_split_ : tuple of float
        Shares of ``epsilon`` on PROJ, the weights and the means/sums.
    centre_ : ndarray of shape (p,) or None
        The centre used (see ``centre``).
    radius_ : float
        ``M`` of the projection's domain about its centre (unit-ball scale).
    noise_l1_weights_ : float
        ``||rho||_1`` (only with ``keep_diagnostics``; not private).
    noise_l2_means_ : float
        ``sum_j w_j ||r_j||_2`` (only with ``keep_diagnostics``; not private).
    residual_norm_ : float
        ``||(I-P)S(I-P)||_F`` (only with ``keep_diagnostics``; not private).
    blocks_ : Blocks
        The blocks used (see ``blocks``).
    n_features_in_, feature_names_in_, n_samples_fit_, bounds_
        As for every synthesizer.

    See Also
    --------
    skdp_synth.mechanisms.proj : the private projection (exact Bingham draws).

    Notes
    -----
    Accuracy (:cite:`Boedihardjo2024` Theorem 5.15): for Boolean data the average
    ``d``-marginal error squared is
    ``<~ 32^d (log log n/(kappa log n) + p/(n^{1-kappa} eps)
    + 1/m)`` -- the constants are large and the method needs ``n`` far above
    ``(p/eps)^{1+kappa}`` before the noise stops dominating (see
    ``benchmarks/bench_damped.py``). A fit on fewer than 10^4 records
    raises a :class:`~skdp_synth.exceptions.SmallTableWarning` (from ``n``
    alone, public under replace-one).

    Randomized rounding rounds every binary bit of a synthetic row
    independently and every categorical block (one-hot or thermometer, known
    from ``blocks_``) to one valid code. Without blocks (``blocks=None``, a
    bare matrix) a thermometer block rounded bit by bit decodes through its
    number of ones, which spreads bimodal columns over the middle levels (on
    binned digits the 1-way TV error stayed near 0.47 even at
    ``epsilon = 1e6``, against 0.03 with one-hot bins); in a pipeline the
    encoder's blocks avoid that.

    References
    ----------
    :cite:`Boedihardjo2024` §5: the algorithm (Algorithm 4), its privacy
    (Theorem 5.12) and its accuracy (Theorems 5.9 and 5.15, Remark 5.16).

    :cite:`Kent2013`: the exact Bingham sampler behind the private
    projection (:func:`~skdp_synth.mechanisms.proj`).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp_synth.damped import DampedPrivateSynthesizer
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((5000, 4)) < [0.1, 0.3, 0.6, 0.9]).astype(int)
    >>> est = DampedPrivateSynthesizer(epsilon=1.0, random_state=0).fit(X)
    >>> est.epsilon_, est.neighbouring_
    (1.0, 'replace-one')
    >>> est.n_components_, est.n_cells_        # the plan for (n, p, eps)
    (2, 13)
    >>> paper = DampedPrivateSynthesizer(parameters="paper", centre=None)
    >>> paper.set_params(random_state=0).fit(X).n_cells_  # Boedihardjo2024 Algorithm 4
    3
    >>> Y = est.sample(1000)
    >>> Y.shape, sorted(np.unique(Y).tolist())
    ((1000, 4), [0, 1])
    """

    _supports_chunked = True  # reads the data through reduce_rows only
    #: PROJ's draws come from NumPy: never ``hardened_noise``
    _hardened_mechanism = False

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, np.inf, closed="neither")],
        "kappa": [Interval(Real, 0, 1, closed="neither")],
        "m": [Interval(Integral, 1, None, closed="left"), None],
        "n_components": [Interval(Integral, 0, None, closed="left"), None],
        "alpha": [Interval(Real, 0, np.inf, closed="neither"), None],
        "damping": [Interval(Real, 0, np.inf, closed="neither"), None],
        "centre": [
            StrOptions({"auto", "cube", "blocks", "marginals"}),
            "array-like",
            None,
        ],
        "parameters": [StrOptions({"optimal", "bound", "paper"})],
        "keep_diagnostics": ["boolean"],
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        kappa: float = 1 / 3,
        m: int | None = None,
        domain: Literal["boolean", "box"] = "boolean",
        bounds: tuple[ArrayLike, ArrayLike] | None = None,
        n_components: int | None = None,
        alpha: float | None = None,
        damping: float | None = None,
        centre: str | ArrayLike | None = "auto",
        parameters: Literal["optimal", "bound", "paper"] = "optimal",
        keep_diagnostics: bool = False,
        blocks: Literal["auto"] | BlocksLike | None = "auto",
        accountant: BudgetAccountant | None = None,
        random_state: int | np.random.RandomState | np.random.Generator | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.kappa = kappa
        self.m = m
        self.domain = domain
        self.bounds = bounds
        self.n_components = n_components
        self.alpha = alpha
        self.damping = damping
        self.centre = centre
        self.parameters = parameters
        self.keep_diagnostics = keep_diagnostics
        self.blocks = blocks
        self.accountant = accountant
        self.random_state = random_state

    # --------------------------------------------------------------- plan
    def _before_fit(self, plan):
        super()._before_fit(plan)
        _warn_below_useful_size(type(self).__name__, plan.n_samples)

    def _make_plan(self, n_samples, n_features):
        """Every size and noise scale of :cite:`Boedihardjo2024` Theorem 5.12, before
        the data.

        ``n`` is public under replace-one neighbours, so the parameters and
        the three Laplace/PROJ scales may depend on it (each derived in the
        docstring of the function computing it and in ``doc/privacy.md``).
        """
        n, p = n_samples, n_features
        epsilon = float(self.epsilon)
        widest = max(self.blocks_.blocks, key=lambda b: b.width)
        # the second moment S (p x p, float64) is the largest array whose size
        # the domain decides: refused before the data is read
        check_dense_size(
            p * p,
            f"the {p} x {p} second-moment matrix (p={p} bits; the widest block "
            f"is {widest.name!r} with {widest.width} bits)",
            "Declare fewer levels for the widest columns (merge rare levels, "
            "or bin them).",
        )
        if self.parameters == "optimal":
            return self._make_block_plan(n, p, epsilon)
        c = self._resolve_centre(p)
        radius, l1_radius = (1.0, 1.0) if c is None else centre_radii(c)
        alpha, t, b = self._resolve_parameters(n, p, radius, l1_radius)
        # the data-independent covering of the ball of radius M of ran(P)
        # (Boedihardjo2024 Algorithm 4 step 6); refuses sizes that cannot be allocated
        covering = LatticeCovering(t, alpha)
        return DampedPlan(
            n_samples=n,
            n_features=p,
            guarantee=PrivacyGuarantee(
                epsilon,
                0.0,
                REPLACE_ONE,
                "Boedihardjo2024 Thm 5.12: PROJ (eps/3) + Laplace weights (eps/3) "
                "+ Laplace damped means (eps/3)",
            ),
            centre=c,
            radius=radius,
            l1_radius=l1_radius,
            alpha=alpha,
            n_components=t,
            damping=b,
            covering=covering,
            n_cells=covering.n_points,
            projection_scale=projection_scale(n, epsilon, t, radius) if t > 0 else 0.0,
            weight_noise_scale=weight_noise_scale(n, epsilon),
            mean_noise_scale=mean_noise_scale(p, b, epsilon, l1_radius),
        )

    def _make_block_plan(self, n, p, epsilon):
        """The plan of ``parameters="optimal"`` (:mod:`._parameters`, "The default
        release"): block geometry, :func:`resolve_block_plan`, the split."""
        geom = block_geometry(self._geometry_blocks(p))
        alpha, t, b, split = resolve_block_plan(
            n, p, epsilon, geom.sensitivity, self.n_components, self.alpha,
            self.damping,
        )  # fmt: skip
        eps_proj, eps_counts, eps_sums = (share * epsilon for share in split)
        if self.centre == "marginals":
            c = None  # post-processing of the released sums, set by _fit
        else:
            c = self._resolve_centre(p)
            c = np.zeros(p) if c is None else c
        covering = LatticeCovering(t, alpha)
        return DampedPlan(
            n_samples=n,
            n_features=p,
            guarantee=PrivacyGuarantee(
                epsilon,
                0.0,
                REPLACE_ONE,
                "Boedihardjo2024 Alg. 4, block-aware (doc/privacy.md): PROJ "
                "(0.2 eps) + Laplace counts (0.2 eps) + Laplace cell sums "
                "(0.6 eps); one cell: Laplace sums (eps)",
            ),
            centre=c,
            radius=math.sqrt(geom.radius2 / p),
            l1_radius=geom.sum_radius / p,
            alpha=alpha,
            n_components=t,
            damping=b,
            covering=covering,
            n_cells=covering.n_points,
            projection_scale=(
                share_projection_scale(n, eps_proj, t, geom.radius2) if t > 0 else 0.0
            ),
            weight_noise_scale=count_noise_scale(n, eps_counts) if t > 0 else 0.0,
            mean_noise_scale=sum_noise_scale(geom.sensitivity, eps_sums),
            budget_split=split,
            geometry=geom,
        )

    # ---------------------------------------------------------- parameters
    def _resolve_centre(self, p):
        """The public centre ``c`` in the cube (``None``: the paper's origin).

        ``"marginals"`` (``parameters="optimal"`` only) is resolved in
        :meth:`_fit` from the released sums; here it returns ``None``.
        """
        if self.centre is None:
            return None
        if isinstance(self.centre, str):
            if self.centre == "auto":
                centre = "blocks" if self.parameters == "optimal" else "cube"
            else:
                centre = self.centre
            if centre == "cube":
                return np.full(p, 0.5)
            if centre == "blocks":
                return block_geometry(self._geometry_blocks(p)).centroid
            if self.parameters != "optimal":
                raise ValueError(
                    "centre='marginals' shrinks toward the 1-way marginals of the "
                    "released cell sums: it needs parameters='optimal'"
                )
            return None
        c = np.asarray(self.centre, dtype=np.float64).reshape(-1)
        if c.shape != (p,) or not np.all((c >= 0) & (c <= 1)):
            raise ValueError(
                f"centre must be 'cube', None or {p} numbers in [0, 1] (the cube "
                "coordinates of a public point)"
            )
        return c

    def _resolve_parameters(self, n, p, radius=1.0, l1_radius=1.0):
        """``(alpha, t, b)`` from the overrides, the paper's formulas or the optimum."""
        epsilon, kappa = float(self.epsilon), float(self.kappa)
        if self.parameters == "bound":
            alpha_o, t_o, b_o = optimal_parameters(n, p, epsilon, radius, l1_radius)
        if self.alpha is not None:
            alpha = float(self.alpha)
        else:
            alpha = default_alpha(n) if self.parameters == "paper" else alpha_o
        if self.n_components is None:
            if self.parameters == "paper":
                t = min(max(default_n_components(n, kappa, alpha), 0), p)
            else:
                t = t_o
        else:
            t = int(self.n_components)
            if t > p:
                raise ValueError(
                    f"n_components={t} exceeds the number of features p={p}"
                )
        if self.damping is not None:
            b = float(self.damping)
        elif self.parameters == "paper":
            b = default_damping(n, p, kappa, epsilon)
        elif (t, alpha) == (t_o, alpha_o):
            b = b_o
        else:  # an override of t or alpha: the optimal b for that covering
            s = LatticeCovering(t, alpha).n_points
            b = optimal_damping(n, p, epsilon, s, radius, l1_radius)
        return alpha, t, b

    def _geometry_blocks(self, p):
        """The blocks whose valid rows bound the data: ``blocks_`` on Boolean
        data (rows validated), the cube (every bit binary) on box data."""
        if self._domain() == "boolean":
            return self.blocks_
        return Blocks.binary(p)

    # ----------------------------------------------------------------- fit
    def _fit(self, U, plan, source):
        if plan.geometry is not None:
            return self._fit_sums(U, plan, source)
        n, p = U.shape
        c, radius, t = plan.centre, plan.radius, plan.n_components
        # The unit-ball scale X = U / sqrt(p) (validation.cube_to_unit_ball) is
        # applied to the few derived quantities below rather than to a copy of
        # the data: S, the projections X V and the cell sums are linear in X.
        # With a centre c, the mechanism runs on X - c/sqrt(p) (a public
        # translation: the same mechanism on shifted data, radii (M, R_1)).
        root_p = math.sqrt(p)

        # 1-2. private projection, eps/3 (Boedihardjo2024 Theorem 5.12, Algorithm 3)
        # Pass 1 over the data: the additive statistic (U^T U, column sums)
        # (_stats.moment_sums), in memory or summed over Dask chunks.
        if t > 0 or self.keep_diagnostics:
            gram, column_sums = reduce_rows(U, moment_sums)
            S = gram / n / p  # second_moment(U) / p (Algorithm 1 step 1)
            if c is not None:  # second moment about c: S - mu c^T - c mu^T + c c^T
                mu = column_sums / n / root_p
                cs = c / root_p
                S = S - np.outer(mu, cs) - np.outer(cs, mu) + np.outer(cs, cs)
        else:
            S = None
        if t > 0:
            V = proj(plan.projection_scale * S, t, source.rng)
        else:
            V = np.zeros((p, 0))

        # 3. the plan's data-independent covering of the ball of radius M of
        #    ran(P); the nearest-point partition of the P x_i (Boedihardjo2024 Alg. 4
        #    st. 6-7)
        #    Pass 2 over the data (after V is drawn): per-cell counts and sums
        #    (_stats.damped_cell_sums), in memory or summed over Dask chunks.
        covering = plan.covering
        s = covering.n_points
        counts, sums = reduce_rows(U, damped_cell_sums, V, covering, c, radius)

        # 4. damped microaggregation (Boedihardjo2024 eq. 5.4), on the unit-ball scale
        w, y_tilde, _ = _from_cell_sums(counts, sums, n, plan.damping, centre=c)
        y_tilde /= root_p

        # 5. Laplace noise on every cell, empty or not (Boedihardjo2024 Theorem 5.12)
        w_noisy = source.laplace(w, plan.weight_noise_scale)
        y_noisy = source.laplace(y_tilde, plan.mean_noise_scale)

        # 6. metric projections (Boedihardjo2024 eqs. 5.5-5.6): simplex (l1), K (l2:
        # clip)
        w_bar = project_simplex_l1(w_noisy)
        if c is None:
            y_bar = np.clip(y_noisy, 0.0, 1.0 / root_p)
            means = np.clip(y_bar * root_p, 0.0, 1.0)
        else:  # K - c is the box [-c, 1 - c]/sqrt(p): clip, then shift back
            y_bar = np.clip(y_noisy, -c / root_p, (1.0 - c) / root_p)
            means = np.clip(y_bar * root_p + c, 0.0, 1.0)

        self.alpha_ = plan.alpha
        self.n_components_ = t
        self.damping_ = plan.damping
        self.centre_ = c
        self.radius_ = radius
        self._bound_radius = radius
        self.budget_split_ = BUDGET_SPLIT
        self.components_ = V.T.copy()
        self.projection_ = V @ V.T
        self.covering_ = covering
        self.n_cells_ = s
        self.weights_ = w_bar
        self.cell_means_ = means
        self.projection_scale_ = plan.projection_scale
        self.weight_noise_scale_ = plan.weight_noise_scale
        self.mean_noise_scale_ = plan.mean_noise_scale
        for name in (
            "_noise_l1_weights",
            "_noise_l2_means",
            "_residual_norm",
            "_one_way_totals",
        ):
            self.__dict__.pop(name, None)
        if self.keep_diagnostics:
            # not private: kept under private names, the public ones warn
            self._noise_l1_weights = float(np.abs(w_noisy - w).sum())
            self._noise_l2_means = float(w @ np.linalg.norm(y_noisy - y_tilde, axis=1))
            self._residual_norm = _residual_norm(S, V)
        return self

    def _fit_sums(self, U, plan, source):
        """``parameters="optimal"``: Boedihardjo2024 Algorithm 4 with block-aware
        geometry and noisy cell sums (:mod:`._parameters`, "The default release");
        every scale comes from the plan (:meth:`_make_block_plan`)."""
        n, p = U.shape
        geom = plan.geometry
        alpha, t, b = plan.alpha, plan.n_components, plan.damping
        split = plan.budget_split
        c0 = geom.centroid
        root_p = math.sqrt(p)
        # the PROJ radius on the unit-ball scale: ||x - c0/sqrt(p)|| <= M
        radius = plan.radius

        # 1-2. private projection of the second moment about the public
        #      centroid, eps_1 (Boedihardjo2024 Algorithm 3; share_projection_scale)
        # Pass 1 over the data: (U^T U, column sums) (_stats.moment_sums), in
        # memory or summed over Dask chunks.
        need_S = t > 0 or self.keep_diagnostics
        if need_S:
            gram, column_sums = reduce_rows(U, moment_sums)
            mu = column_sums / n  # U.mean(axis=0)
            S = gram / n - np.outer(mu, c0) - np.outer(c0, mu)  # second_moment(U)
            S += np.outer(c0, c0)  # cube scale: (1/n) sum (u - c0)(u - c0)^T
        scale = plan.projection_scale
        if t > 0:
            V = proj(scale * S, t, source.rng)
        else:
            V = np.zeros((p, 0))

        # 3. the plan's covering of the unit ball of ran(P); nearest-point
        #    partition of P(x - c0)/M (Boedihardjo2024 Algorithm 4 steps 6-7)
        #    Pass 2 (after V is drawn): per-cell counts and sums
        #    (_stats.projected_cell_sums), in memory or summed over Dask chunks.
        covering = plan.covering
        s = covering.n_points
        cell_counts, cell_totals = reduce_rows(
            U, projected_cell_sums, V, c0 @ V, math.sqrt(geom.radius2), covering
        )

        # 4-5. noisy counts (eps_2; none for one cell: the count is the public
        #      n) and noisy centred sums (eps_3), every cell, empty or not
        w, sums, counts = _from_cell_sums(
            cell_counts, cell_totals, n, 0.0, centre=geom.sum_centre, sums_only=True
        )
        w_scale, y_scale = plan.weight_noise_scale, plan.mean_noise_scale
        w_noisy = source.laplace(w, w_scale) if t > 0 else w.copy()
        sums_noisy = source.laplace(sums, y_scale)

        # 6. post-processing: estimated counts and sums, damped means toward
        #    the centre (Boedihardjo2024 eq. 5.4 on the estimates), metric projections
        n_hat = np.clip(w_noisy, 0.0, None) * n
        total_hat = sums_noisy + n_hat[:, None] * geom.sum_centre
        if plan.centre is None:  # centre="marginals": of the released sums
            c = _hull_point(self._geometry_blocks(p), total_hat.sum(axis=0) / n)
        else:
            c = plan.centre
        y_noisy = (total_hat - n_hat[:, None] * c) / np.maximum(n_hat, b)[:, None]
        w_bar = project_simplex_l1(w_noisy)
        means = np.clip(y_noisy + c, 0.0, 1.0)

        self.alpha_ = alpha
        self.n_components_ = t
        self.damping_ = b
        self.budget_split_ = split
        self.centre_ = c
        self.radius_ = radius
        self._bound_radius = centre_radii(c)[0]
        self.components_ = V.T.copy()
        self.projection_ = V @ V.T
        self.covering_ = covering
        self.n_cells_ = s
        self.weights_ = w_bar
        self.cell_means_ = means
        self.projection_scale_ = scale
        self.weight_noise_scale_ = w_scale
        self.mean_noise_scale_ = y_scale
        # the released bit totals, before any projection (one_way_level_estimate)
        self._one_way_totals = sums_noisy.sum(axis=0) + n * w_noisy.sum() * (
            geom.sum_centre
        )
        self._one_way_parts = (s, y_scale, n * w_scale, geom.sum_centre, n)
        for name in ("_noise_l1_weights", "_noise_l2_means", "_residual_norm"):
            self.__dict__.pop(name, None)
        if self.keep_diagnostics:
            # not private: kept under private names, the public ones warn.
            # Theorem 5.9 with the records x - c: the released means are the
            # damped means of x - c plus r_j (unit-ball scale)
            damped = (sums + counts[:, None] * (geom.sum_centre - c)) / np.maximum(
                counts, b
            )[:, None]
            self._noise_l1_weights = float(np.abs(w_noisy - w).sum())
            self._noise_l2_means = (
                float(w @ np.linalg.norm(y_noisy - damped, axis=1)) / root_p
            )
            mu = column_sums / n  # pass 1's statistic (need_S holds here)
            Sc = gram / n - np.outer(mu, c) - np.outer(c, mu) + np.outer(c, c)
            self._residual_norm = _residual_norm(Sc / p, V)
        return self

    # ------------------------------------------------------------- sample
    def _sample_cube(self, n_samples, source):
        idx = source.rng.choice(self.n_cells_, size=n_samples, p=self.weights_)
        if self._domain() != "boolean":
            return self.cell_means_[idx]
        # randomized rounding (Boedihardjo2024 §4.3, §5.10), one valid code per block;
        # exactly rng.random(shape) < points when every block is binary
        # (0/1 uint8 rows: from_cube makes them float64 in the pass it makes)
        return _round_cells(self.blocks_, self.cell_means_, idx, source.rng)

    def _one_way_level_estimate(self, j, level):
        """``(T̂_j[level], σ_j)``: the release's unbiased estimate of one 1-way
        count and its noise standard deviation, from the noisy cell sums and
        weights (:func:`._damping.one_way_level_estimate`), or ``None``
        (``parameters`` other than ``"optimal"``). Post-processing."""
        totals = self.__dict__.get("_one_way_totals")
        if totals is None or getattr(self, "blocks_", None) is None:
            return None
        parts = self._one_way_parts
        return one_way_level_estimate(self.blocks_, totals, parts, j, level)

    def _drop_unsupported_level(self, j, level, z=None, keep=()):
        """Drop ``level`` of attribute ``j`` from every cell unless the
        release's estimate of its count is at least ``LEVEL_SUPPORT_Z`` (or
        ``z``) of its noise: each cell's level distribution loses that level and is
        renormalised over the others (its expected code becomes the cell's
        mean), so ``sample`` never returns it; the levels in ``keep`` keep
        their probability (the level's mass goes to the others) where the
        others have any. Post-processing; returns whether the level was
        dropped."""
        check_is_fitted(self)
        found = self._one_way_level_estimate(j, level)
        if found is None or self._domain() != "boolean":
            return False
        estimate, sd = found
        if not estimate < (LEVEL_SUPPORT_Z if z is None else float(z)) * sd:
            return False
        block = self.blocks_.blocks[int(j)]
        P = block.level_probabilities(self.cell_means_[:, block.columns])
        gone = P[:, int(level)].copy()
        P[:, int(level)] = 0.0
        kept = [int(k) for k in keep if int(k) != int(level)]
        if kept:
            # the dropped mass goes to the levels outside ``keep`` alone
            free = np.ones(P.shape[1], dtype=bool)
            free[kept] = False
            rest = P[:, free].sum(axis=1, keepdims=True)
            ok = rest[:, 0] > 0
            scale = np.where(ok, 1.0 + gone / np.where(ok, rest[:, 0], 1.0), 1.0)
            P[:, free] *= scale[:, None]
        total = P.sum(axis=1, keepdims=True)
        if not np.all(total > 0):
            P[total[:, 0] <= 0] = 1.0
            P[:, int(level)] = 0.0
            total = P.sum(axis=1, keepdims=True)
        means = self.cell_means_.copy()
        means[:, block.columns] = (P / total) @ block.codes()
        self.cell_means_ = means
        return True

    def _synthetic_distribution(self):
        return self.cell_means_, self.weights_

    # --------------------------------------------------------- accuracy
    def accuracy_bound(self, d: int) -> float:
        """Right-hand side of :cite:`Boedihardjo2024` Theorem 5.9 (eq. 5.7) for the
        realised noise.

        ``4^d (4 alpha^2 + ||(I-P)S(I-P)||_F) + 2 d s b/n + 2 ||rho||_1
        + 2 d sum_j w_j ||r_j||_2`` -- a deterministic bound on
        ``||(1/n) sum_i x_i^{(x)d} - sum_j w_bar_j y_bar_j^{(x)d}||_2`` on the
        unit-ball scale ``x = u/sqrt(p)``. With a centre ``c`` (radius
        ``M`` of the cube about ``c``: ``radius_``, or for
        ``parameters="optimal"`` ``centre_radii(centre_)[0]``) both sides are
        for the shifted records ``x - c/sqrt(p)``, ``y_bar - c/sqrt(p)``
        and the bound is eq. 5.7 for
        ``(x - c)/M`` in the unit ball, times ``M^d``:
        ``M^d (4^d (4 alpha^2 + R/M^2) + 2 d s b/n + 2||rho||_1)
        + 2 d M^{d-1} sum_j w_j ||r_j||_2`` (compute the left side with
        :func:`skdp_synth.metrics.moment_error`). Needs
        ``keep_diagnostics=True``; the value is **not private** and every
        call raises a :class:`~skdp_synth.exceptions.PrivacyLeakWarning`, as
        reading the diagnostics it uses does.

        Parameters
        ----------
        d : int
            Tensor degree, ``>= 1``.

        Returns
        -------
        float
        """
        check_is_fitted(self)
        if "_residual_norm" not in self.__dict__:
            raise AttributeError(
                "accuracy_bound needs the realised noise: fit with "
                "keep_diagnostics=True"
            )
        check_integer(d, "d", min_value=1)
        # the bound reads the realised noise and the residual of the data,
        # as the diagnostics do: it warns as reading them does (not_private)
        import warnings

        from ..exceptions import PrivacyLeakWarning

        warnings.warn(
            f"{type(self).__name__}.accuracy_bound is computed exactly from the "
            "data and the realised noise and is not covered by the privacy "
            "guarantee; do not publish it (publish est.to_release() instead).",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        n = self.n_samples_fit_
        # radius of the cube about the centre (== radius_ except for the
        # default release, whose radius_ is PROJ's radius over valid rows)
        M = self.__dict__.get("_bound_radius", self.radius_)
        if M == 1.0:  # the paper's K in the unit ball (no centre): eq. 5.7
            return (
                4.0**d * (4.0 * self.alpha_**2 + self._residual_norm)
                + 2.0 * d * self.n_cells_ * self.damping_ / n
                + 2.0 * self._noise_l1_weights
                + 2.0 * d * self._noise_l2_means
            )
        # eq. 5.7 for the records (x - c)/M of the unit ball, times M^d
        return (
            M**d
            * (
                4.0**d * (4.0 * self.alpha_**2 + self._residual_norm / M**2)
                + 2.0 * d * self.n_cells_ * self.damping_ / n
                + 2.0 * self._noise_l1_weights
            )
            + 2.0 * d * M ** (d - 1) * self._noise_l2_means
        )

    # Diagnostics of keep_diagnostics=True: computed from the data and the
    # realised noise, not private; reading them warns.
    noise_l1_weights_ = not_private("_noise_l1_weights", "||rho||_1 (not private).")
    noise_l2_means_ = not_private("_noise_l2_means", "sum_j w_j ||r_j|| (not private).")
    residual_norm_ = not_private("_residual_norm", "||(I-P)S(I-P)||_F (not private).")

    # ------------------------------------------------------------- release
    def to_release(self) -> Release:
        """The release: what epsilon covers (:cite:`Boedihardjo2024` Theorem 5.12).

        Holds the noisy, projected cell weights ``weights`` (``w_bar``), the
        noisy, clipped cell means ``points`` (on the cube ``[0, 1]^p``), the
        private directions ``components`` (PROJ), the box ``bounds_lo/hi``
        for box data, and the public plan (``alpha``, ``t``, ``b``, the noise
        scales, the default output size ``m`` or the public ``n``). The
        realised noise and the diagnostics of ``keep_diagnostics`` are never
        included. Bounds read off the data are not covered by epsilon: the
        release then warns and records ``bounds_inferred``.
        """
        import warnings

        from ..exceptions import PrivacyLeakWarning
        from ..release import release_from

        check_is_fitted(self)
        boolean = self._domain() == "boolean"
        arrays = {
            "points": self.cell_means_,
            "weights": self.weights_,
            "components": self.components_,
        }
        inferred = not boolean and self._fitted_param("bounds") is None
        if not boolean:
            arrays["bounds_lo"], arrays["bounds_hi"] = self.bounds_
        if inferred:
            warnings.warn(
                "the box bounds of this release were read off the data and are "
                "not covered by epsilon; pass bounds=(lo, hi) before publishing.",
                PrivacyLeakWarning,
                stacklevel=2,
            )
        return release_from(
            self,
            arrays,
            {
                "sampler": "weighted-points",
                "rounding": "randomized" if boolean else "none",
                "domain": self._domain(),
                "bounds_inferred": inferred,
                "default_n_samples": int(self._default_n_samples()),
                "alpha": self.plan_.alpha,
                "n_components": self.plan_.n_components,
                "damping": self.plan_.damping,
                "projection_scale": self.plan_.projection_scale,
                "weight_noise_scale": self.plan_.weight_noise_scale,
                "mean_noise_scale": self.plan_.mean_noise_scale,
                "parameters": self._fitted_param("parameters"),
                "budget_split": [float(x) for x in self.plan_.budget_split],
            },
        )


#: the fewest records from which the damped release is worth its noise:
#: below 10^4-2.6*10^4 it loses to the noisy 1-way marginals on the
#: measured tables (doc/benchmarks.md; README, "Which method when")
USEFUL_SIZE = 10_000


def _warn_below_useful_size(name, n_samples):
    """A :class:`~skdp_synth.exceptions.SmallTableWarning` for a fit on fewer
    than :data:`USEFUL_SIZE` records, before the data is read.

    ``n`` is public here: the guarantee is replace-one (Theorem 5.12, ``n``
    public), so the plan is made from it, and so is this warning, which
    reads nothing else (no value, no count of a cell); the message states
    the threshold, not ``n``. With counts, ``n`` is their total, the
    plan's."""
    if n_samples is None or n_samples >= USEFUL_SIZE:
        return
    import warnings

    from ..exceptions import SmallTableWarning

    warnings.warn(
        f"{name} is fitted on fewer than {USEFUL_SIZE:,} records: it needs "
        "about 10^4-2.6*10^4 rows before its noise stops dominating "
        "(doc/benchmarks.md). For a smaller table use ProjectedGaussianRelease "
        "(the start-here method; (epsilon, delta)-DP) or, for pure epsilon-DP, "
        "expect coarse synthetic data.",
        SmallTableWarning,
        stacklevel=user_stacklevel(),
    )


def _round_cells(blocks, means, idx, rng):
    """``blocks.round(means[idx], rng)`` with each block's level distribution
    computed once per cell instead of once per row: the same uniforms
    ``rng.random((n, n_attributes))`` and the same inverse-CDF rule
    (:meth:`Block._round_uniform`), hence the same rows (``uint8``, as
    ``round`` returns them). The rows are written in chunks that stay in
    cache, all binary blocks of a chunk at once (``u < v``)."""
    n = idx.shape[0]
    u = rng.random((n, blocks.n_attributes))
    out = np.empty((n, blocks.n_features), dtype=np.uint8)
    binary, tables = [], []
    for a, block in enumerate(blocks.blocks):
        F = block._check_frac(means[:, block.columns])
        if block.kind == "binary":
            binary.append(a)
            continue
        P = block.level_probabilities(F)
        last = block.n_levels - 1 - np.argmax(P[:, ::-1] > 0, axis=1)
        tables.append((a, block.columns, np.cumsum(P, axis=1), last, block.codes()))
    bin_cols = np.array([blocks.blocks[a].start for a in binary], dtype=np.intp)
    F_bin = np.clip(means[:, bin_cols], 0.0, 1.0)  # _check_frac's clip
    step = max(1, _ROUND_CHUNK // max(1, blocks.n_features))
    for s in range(0, n, step):
        rows, uu = idx[s : s + step], u[s : s + step]
        if not tables:  # every block binary: u < v bit by bit
            np.less(uu, F_bin[rows], out=out[s : s + step])
        elif binary:
            out[s : s + step, bin_cols] = uu[:, binary] < F_bin[rows]
        for a, cols, cum, last, codes in tables:
            level = (cum[rows] <= uu[:, a, None]).sum(axis=1)
            out[s : s + step, cols] = codes[np.minimum(level, last[rows])]
    return out


#: values per row chunk of :func:`_round_cells` (a chunk stays in cache)
_ROUND_CHUNK = 1 << 18


def _residual_norm(S, V):
    """``||(I - P) S (I - P)||_F`` with ``P = V V^T``."""
    Q = S - V @ (V.T @ S)
    R = Q - (Q @ V) @ V.T
    return float(np.linalg.norm(R))
