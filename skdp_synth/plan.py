"""Plans: everything a fit fixes before it reads the data.

Every synthesizer's ``fit`` runs in three steps (:mod:`skdp_synth.base`)::

    U = validate(X)                          # shape, domain, blocks
    plan = est._make_plan(n_samples, n_features)   # parameters + public sizes only
    est._fit(U, plan, source)                # the only step that reads U

``_make_plan`` returns one frozen :class:`Plan` per estimator, holding every
size, scale and noise model of the fit and, for a private estimator, the
:class:`~skdp_synth.privacy.PrivacyGuarantee` they give. The base checks that
guarantee against the accountant before ``_fit`` and charges it after, and
keeps the plan as the public fitted attribute ``plan_``. A privacy reviewer
reads one plan per estimator and knows the whole guarantee.

A plan is a function of the parameters, the public blocks and the public
sizes only, so it is identical on neighbouring datasets and safe to publish
(``tests/test_faults.py`` checks it). Under add/remove neighbours the number
of rows is private: the plan then records ``n_samples=None`` and nothing
derived from ``n`` (the base refuses a plan that breaks this rule).

The derivation of each number is in the docstring of the function that
computes it (named in the field's description) and in ``doc/privacy.md``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from .privacy import PrivacyGuarantee

__all__ = [
    "DampedPlan",
    "MicroaggregationPlan",
    "Plan",
    "ReleasePlan",
    "SamplerPlan",
]


@dataclass(frozen=True, eq=False)
class Plan:
    """What a fit fixes before reading the data (base of every plan).

    Parameters
    ----------
    n_samples : int or None
        The number of training rows when it is public (replace-one
        neighbours, or no differential privacy); ``None`` under add/remove
        neighbours, where ``n`` is private.
    n_features : int
        The number of columns ``p`` (public: the schema).
    guarantee : PrivacyGuarantee or None
        The guarantee of the fit (``None`` for the anonymity-based
        microaggregator). ``fit`` checks it against the ``accountant`` before
        the data is read and charges it after success.

    Notes
    -----
    Plans are frozen: fields cannot be reassigned and array fields are
    read-only copies. They compare by identity (they may hold arrays);
    compare two plans with :meth:`summary` or field by field.
    """

    n_samples: int | None
    n_features: int
    guarantee: PrivacyGuarantee | None

    def __post_init__(self):
        # frozen all the way down: array fields become read-only copies (a
        # caller's array, e.g. the invariants, is never flagged itself)
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                value = np.array(value, copy=True)
                value.flags.writeable = False
                object.__setattr__(self, f.name, value)

    def summary(self) -> dict[str, Any]:
        """The plan's numbers and names as plain values (arrays as lists).

        Fields holding objects (a workload, a noise model, a covering) are
        left out; they are described by the estimator's release instead.

        Examples
        --------
        >>> from skdp_synth.plan import Plan
        >>> Plan(n_samples=10, n_features=3, guarantee=None).summary()
        {'n_samples': 10, 'n_features': 3}
        """
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "guarantee":
                continue
            if isinstance(value, np.ndarray):
                value = value.tolist()
            elif isinstance(value, (np.integer, np.floating, np.bool_)):
                value = value.item()
            elif isinstance(value, tuple):
                value = list(value)
            elif value is not None and not isinstance(value, (bool, int, float, str)):
                continue
            out[f.name] = value
        return out

    def replace(self, **changes: Any) -> Plan:
        """A copy with some fields changed (the plan itself is frozen)."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, eq=False)
class MicroaggregationPlan(Plan):
    """Plan of :class:`~skdp_synth.CovarianceLossMicroaggregator`
    (:cite:`Boedihardjo2024` Alg. 1).

    Parameters
    ----------
    n_groups : int
        ``k``, the number of groups (``max(1, n // 10)`` by default).
    partition : {"spectral", "pinning"}
    n_components : int
        ``t`` of the spectral partition (:cite:`Boedihardjo2024` Alg. 1 step 2; ``0``
        for pinning).
    alpha : float or None
        The covering radius of the spectral partition (``None`` when
        ``t = 0`` or for pinning).
    division : {"bisection", "input_order"}
    """

    n_groups: int
    partition: str
    n_components: int
    alpha: float | None
    division: str


@dataclass(frozen=True, eq=False)
class DampedPlan(Plan):
    """Plan of :class:`~skdp_synth.DampedPrivateSynthesizer` (:cite:`Boedihardjo2024`
    §5, Thm 5.12).

    Parameters
    ----------
    centre : ndarray of shape (n_features,) or None
        The public centre ``c`` in the cube (``None``: the paper's origin).
    radius, l1_radius : float
        ``M`` and ``R_1`` of ``skdp_synth.damped.centre_radii``
        (``1`` without a centre).
    alpha : float
        Covering radius.
    n_components : int
        ``t``, the dimension of the private projection.
    damping : float
        ``b``.
    covering : LatticeCovering
        The ``alpha``-covering of the unit ball of ``ran(P)``.
    n_cells : int
        ``s``, its number of points (every cell gets noise, empty or not).
    projection_scale : float
        ``n eps/(6t)`` (:func:`~skdp_synth.damped.projection_scale`; ``0``
        when ``t = 0``), budget ``eps/3``.
    weight_noise_scale : float
        Laplace scale ``6/(n eps)`` of the cell weights
        (:func:`~skdp_synth.damped.weight_noise_scale`), budget ``eps/3``.
    mean_noise_scale : float
        Laplace scale ``12 sqrt(p) R_1/(b eps)`` of the damped cell means
        (:func:`~skdp_synth.damped.mean_noise_scale`), budget ``eps/3``.
    budget_split : tuple of float
        Shares of ``eps`` on PROJ, the weights and the means (or sums).
    geometry : BlockGeometry or None
        ``parameters="optimal"`` (the default release, ``doc/privacy.md``):
        the public geometry of the blocks
        (:func:`~skdp_synth.damped.block_geometry`); the fields above then
        read: ``centre`` the shrink centre (``None`` for
        ``centre="marginals"``, set from the released sums), ``radius`` PROJ's
        ``M`` about the blocks' centroid, ``l1_radius`` ``R_s/p``,
        ``projection_scale`` ``n eps_1/(2 t M^2)``, ``weight_noise_scale``
        ``2/(n eps_2)`` (0 with one cell), ``mean_noise_scale`` the Laplace
        scale ``Delta/eps_3`` of the cell sums; ``None`` otherwise (Theorem
        5.12's damped-mean noise).
    """

    centre: np.ndarray | None
    radius: float
    l1_radius: float
    alpha: float
    n_components: int
    damping: float
    covering: Any
    n_cells: int
    projection_scale: float
    weight_noise_scale: float
    mean_noise_scale: float
    budget_split: tuple = (1 / 3, 1 / 3, 1 / 3)
    geometry: Any = None


@dataclass(frozen=True, eq=False)
class SamplerPlan(Plan):
    """Plan of :class:`~skdp_synth.PrivateSampler` (:cite:`Boedihardjo2022` Algorithm
    2).

    The reduced space itself is drawn in ``_fit`` (from the fit's random
    stream, independently of the data); its size and the price of every
    released row are fixed here.

    Parameters
    ----------
    d : int
        The marginal degree.
    m : int
        The size of the reduced space.
    n_walsh : int
        ``D = sum_{i <= d} C(p, i)``, the number of Walsh functions.
    density_lower, density_upper : float
        The density bounds ``delta``, ``Delta`` of :cite:`Boedihardjo2022` Algorithm 2.
    condition_threshold : float
        ``1/(2 e^d)``: the smallest accepted ``sigma_min(M)/sqrt(m)``
        (:cite:`Boedihardjo2022` eq. 9.1).
    epsilon_per_draw : float
        The price of one released row
        (:func:`~skdp_synth.private_sampling.sampling_epsilon`).
    n_draws : int
        ``k``, the rows paid for (grows when extra rows are charged).
    """

    d: int
    m: int
    n_walsh: int
    density_lower: float
    density_upper: float
    condition_threshold: float
    epsilon_per_draw: float
    n_draws: int


@dataclass(frozen=True, eq=False)
class ReleasePlan(Plan):
    """Plan of :class:`~skdp_synth.ProjectedGaussianRelease` (:cite:`Nikolov2013`,
    :cite:`Gao2022`).

    Parameters
    ----------
    mechanism : str
        The mechanism (``"auto"`` resolved).
    calibration : str
    neighbouring : str
    noise_sigma : float
        ``c``: the Gaussian σ at whitened sensitivity 1 (or the Laplace scale
        ``1/ε``).
    workload : MarginalWorkload, ExplicitWorkload or AttributeMarginalWorkload
    invariants : ndarray of shape (n_c, q), AttributeInvariants or None
        ``C`` (:cite:`Gao2022` Definition 2); for ``"residual"`` the invariant
        tables over attributes (:class:`~skdp_synth.invariants.AttributeInvariants`).
    sparse : bool
        Whether the least-squares step of :cite:`Nikolov2013` Algorithm 3 runs
        (``n_rows``).
    space : {"cells", "coords", "residuals"}
        Where the noise is added.
    noise : AdditiveNoise or None
        The calibrated noise model of the bit-level mechanisms.
    decomposition : BaseDecomposition or None
        :cite:`Nikolov2013` Algorithm 1's pieces, when the mechanism uses them.
    residual_scales : ndarray or None
        ``"residual"``: ResidualPlanner's ``τ_A`` (noise ``c τ_A``).
    sensitivity : float
        The whitened sensitivity verified before any data is read (``<= 1``).
    expected_error : float
        ``E ||noise||²`` over the answers.
    lower_bound : float or None
        ``gaussian_optimal_error_`` (see the estimator).
    selection : dict or None
        ``"residual"``: what ``selection`` fixes before the data is read
        (:mod:`skdp_synth.selection`): ``rule`` (``"none"``, ``"mst"``,
        ``"aim"``, ``"one-way"``, or ``"auto"`` when the choice waits for the
        noisy total), the public candidates and their weights, the budget
        shares, whether auto may replace MST by the 1-way tables (``trim``)
        and the public ``n`` it decides from (``public_n``).
    model_rows_cell_sd, model_rows_floor : float or None, int or None
        ``max_model_rows="auto"``: the noise standard deviation of one cell
        (smallest over the released tables) and the cells of the largest
        table, from which the generator's table gets
        ``N = auto_model_rows(n̂, model_rows_cell_sd, model_rows_floor,
        noise_rule=ReleaseRules.model_rows_noise_rule)`` rows (``False`` by
        default: the cell sd is then unused) once the total ``n̂`` is released
        (:func:`skdp_synth.generator.auto_model_rows`); ``None`` otherwise.
    """

    mechanism: str
    calibration: str
    neighbouring: str
    noise_sigma: float
    workload: Any
    invariants: Any
    sparse: bool
    space: str
    noise: Any
    decomposition: Any
    residual_scales: np.ndarray | None
    sensitivity: float
    expected_error: float
    lower_bound: float | None
    selection: dict | None = None
    model_rows_cell_sd: float | None = None
    model_rows_floor: int | None = None
