"""ProjectedGaussianRelease: near-optimal (ε, δ)-DP release of linear queries.

:cite:`Nikolov2013` (Nikolov, Talwar & Zhang, *The geometry of differential privacy:
the sparse and approximate cases*) and :cite:`Gao2022` (Gao, Gong & Yu, *Subspace
differential privacy*). The release is the answer vector ``y = A x``
of a workload (default: every d-way marginal table of Boolean data) plus
noise shaped by the geometry of the workload, optionally refined by least
squares (:cite:`Nikolov2013` Algorithm 3) and constrained by exact public invariants
(:cite:`Gao2022`).

The pipeline, all of it data-independent except the marked steps:

1. **Rank reduction.** Work in an orthonormal basis ``P`` of ``range(A)``
   (coordinates ``z = Pᵀ y``, record contributions ``g_u = Pᵀ a_u``); the
   marginal workload has a closed-form Fourier basis
   (:mod:`skdp_synth.workloads`).
2. **Ellipsoid.** The MEE of ``K = sym conv{g_u}`` (or of ``conv{g_u - g_v}``
   under replace-one) -- Khachiyan / Kumar--Yıldırım, or in closed form for
   the symmetric marginal workload
   (:mod:`skdp_synth.mechanisms.ellipsoid`).
3. **Base decomposition** (:cite:`Nikolov2013` Algorithm 1) into orthogonal pieces
   ``U_i`` with radii ``r_i = max_u ||U_iᵀ g_u||``.
4. **Whitening.** The noise of every Gaussian mechanism here has the form
   ``Tᵀ diag(s) w`` with ``w ~ N(0, c² I)`` and ``T`` with orthonormal rows,
   and ``max_u ||diag(s)⁻¹ T g_u||_2 <= 1`` (*checked numerically on the
   whole sensitivity set before any data is read*). So the whitened
   coordinates ``t = diag(s)⁻¹ T z`` are a query of ℓ2-sensitivity 1, the
   noisy ``t~ = t + w`` is drawn by the (secure, when ``random_state=None``)
   Gaussian sampler :meth:`~skdp_synth.mechanisms.NoiseSource.gaussian`, and the release
   ``(I - TᵀT) z + Tᵀ diag(s) t~`` is post-processing. ``(I - TᵀT) z`` is the
   part of the answers with sensitivity 0 (e.g. the total ``n`` under
   replace-one), which is public.

   =========================  ==================================  ===========
   ``mechanism``              noise ``Tᵀ diag(s) w``              source
   =========================  ==================================  ===========
   ``"correlated"``           ``√k Σ_i r_i U_i w_i``              Nikolov2013 Alg. 2
   ``"correlated-weighted"``  ``Σ_i (r_i/√α_i) U_i w_i``,         refinement
                              ``α_i ∝ √d_i r_i``
   ``"mee"``                  ``F w`` with ``E = F B_2`` the MEE  Nikolov2013 Cor. 8
   ``"isotropic-gaussian"``   ``Δ_2(A) w`` on all ``q`` answers   Nikolov2013 Lemma 4
   ``"laplace"``              ``Δ_1(A) Lap(1/ε)`` on all answers  Gao2022 Lemma 16
   =========================  ==================================  ===========

   ``"correlated-weighted"`` is private by the same argument as :cite:`Nikolov2013`
   Corollary 9 with Cauchy--Schwarz weighted by ``α`` (``Σ α_i = 1``):
   the whitened sensitivity is ``Σ_i α_i ||U_iᵀ g||²/r_i² <= 1``. Its error
   ``c² (Σ_i √d_i r_i)²`` is never above :cite:`Nikolov2013`'s ``c² k Σ_i d_i r_i²``.
5. **Calibration.** After whitening the sensitivity is 1, so ``c`` is the
   Gaussian-mechanism σ for sensitivity 1: the analytic Gaussian mechanism
   (Balle & Wang 2018) by default, or the papers' constants
   ``(1 + sqrt(2 ln(1/δ)))/ε`` (:cite:`Nikolov2013` §3.2) /
   ``(1 + sqrt(1 + ln(1/δ)))/ε`` (:cite:`Gao2022` Lemma 13; not valid for larger ε --
   the recorded ``delta_`` is then the δ it actually achieves).
6. **Sparse case** (:cite:`Nikolov2013` Algorithm 3; its box was lost in
   extraction): with a public bound ``n_rows >= ||x||_1``, let ``t`` be the
   largest ``i`` with ``d_i >= ε n_rows``, ``X = [U_1..U_t]``; the release's
   ``X``-part is replaced by the least-squares point of ``n_rows XXᵀK``
   (Frank--Wolfe, :cite:`Nikolov2013` §4.2). Post-processing.
7. **Invariants** (:cite:`Gao2022`): ``C · release = C · A x`` exactly.
   ``framework="projection"`` (:cite:`Gao2022` Theorem 10, Corollaries 11, 14, 17): the
   release is ``Π_R y + Π_N ỹ`` for the unconstrained release ``ỹ``;
   ``framework="extension"`` (:cite:`Gao2022` Theorem 12, Corollaries 15, 18,
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

Distributed privatization (:cite:`Gao2022` Algorithm 4) is
:func:`distributed_privatize`.

Where the pieces live: the estimator asks its workload one question, its
sensitivity set (:class:`~skdp_synth.workloads.SensitivitySet`: closed-form
orbits or explicit points), and hands it to the noise model in
:mod:`skdp_synth.mechanisms.additive` (whitenings, :class:`AdditiveNoise`,
:func:`distributed_privatize`, the verification of step 4 and the lower
bound), which shapes and checks the noise without asking the workload
anything else. The least-squares step 6 is
:func:`skdp_synth.geometry.nearest_in_symmetric_hull`. ``AdditiveNoise`` and
``distributed_privatize`` are re-exported here.
"""

from __future__ import annotations

import itertools
import math
import warnings
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._chunked import reduce_rows
from .._linalg import orth_basis
from .._progress import stage
from .._sklearn_compat import Interval, StrOptions, _fit_context
from .._stats import (
    attribute_statistic,
    attribute_tables_from,
    workload_answers,
    workload_counts,
)
from ..base import POST_FIT_STREAM, PrivateSynthesizerMixin
from ..correction import reweight_to_targets
from ..generator import (
    MAX_TABLE_CELLS,
    Measurement,
    auto_model_rows,
    controlled_rows,
    fit_rows,
)
from ..geometry import nearest_in_symmetric_hull
from ..mechanisms import gaussian_delta, gaussian_sigma, make_generator
from ..mechanisms.additive import (
    AdditiveNoise,
    MaskWhitening,
    MatrixWhitening,
    distributed_privatize,
    explicit_whitening,
    gaussian_lower_bound,
    orbit_whitening,
    points_of,
    replace_one_offset,
    verify_sensitivity,
)
from ..plan import ReleasePlan
from ..privacy import INDUCED_SUBSPACE, PrivacyGuarantee
from ..validation import check_degree, check_dense_size, format_count
from ..workloads import (
    AttributeMarginalWorkload,
    ExplicitWorkload,
    MarginalWorkload,
    universe_points,
)
from ._invariants import (
    AttributeInvariants,
    repair_rows,
    rounded_tables,
    running_intersection_order,
)
from ._selection import (
    MAX_CANDIDATE_CELLS,
    SelectionResult,
    candidate_tables,
    measure,
    mst_edge_budget,
    select_aim,
    select_mst,
)
from ._shrinkage import shrink_interactions, shrink_towards_rows

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal, Self

    import pandas as pd
    from numpy.typing import ArrayLike

    from ..blocks import BlocksLike
    from ..privacy import BudgetAccountant
    from ..release import Release

__all__ = ["AdditiveNoise", "ProjectedGaussianRelease", "distributed_privatize"]

COORDINATE_MECHANISMS = ("correlated", "correlated-weighted", "mee")

#: weight factor of the tables that contain ``target`` (and of its triples)
TARGET_WEIGHT = 2.0
#: budget shares (of ``μ² = 1/c²``, after the noisy total) of each rule's
#: steps; doc/privacy.md "Selection of marginals"
SELECTION_SHARES = {
    "mst": {"one_way": 1 / 3, "select": 1 / 3, "final": 1 / 3},
    "aim": {"one_way": 0.1, "rounds": 0.6, "final": 0.3},
}
#: the shares of MST's steps when ``selection="auto"`` runs it (an explicit
#: ``"mst"`` keeps the paper's thirds): less on the 1-way tables and the
#: tree's choice, more on the chosen pairs. Measured (paired seeds, TV2 of the
#: rows, ε = 0.1 unless said; issue 21): nass_cds .0344 -> .0314 (6 seeds),
#: diamonds .0644 -> .0593, mpls_stops .0422 -> .0403, nass_cds 5k rows
#: ε = 0.3 .0552 -> .0524, Caravan's first 30 columns ε = 1 .1499 -> .1500
#: (4 seeds each)
AUTO_MST_SHARES = {"one_way": 0.25, "select": 0.15, "final": 0.6}
#: ``selection="auto"`` measures chosen tables when the all-tables plan's
#: expected TV noise per table exceeds this, with AIM's rounds above
#: ``AUTO_AIM_THRESHOLD`` and MST's tree below. Measured (``benchmarks/
#: bench_selection.py``, 80/20 splits, one seed): all tables won at 0.018,
#: 0.025, 0.029, 0.045 (mpls_stops, ε = 0.1); MST at 0.051 (nass_cds, ε = 0.1)
#: and 0.076 (nass_cds 5k rows, ε = 0.3); AIM at 0.082 (diamonds, ε = 0.1)
#: and 0.21 (nass_cds 5k rows, ε = 0.1)
#: With ``target=`` set auto never picks AIM: train-on-synthetic AUC of a
#: model for the target, ε = 0.1, 3 seeds, AIM (auto) -> MST: nass_cds dead
#: .866 -> .969, seatbelt .636 -> .689; mpls_stops vehicleSearch .947 ->
#: .943; diamonds cut .644 -> .645, price .709 -> .710 (issue 21)
#: With ``target=`` set, every table is also measured when the all-pairs
#: plan without the target is within AUTO_TV_THRESHOLD
#: (:meth:`ProjectedGaussianRelease._untargeted_noise_tv`): the target's
#: triples raise the plan's own noise past it where measuring every table
#: still wins. Measured (round eight, 2 seeds, MST's target star -> every
#: table): diamonds ε = 0.3 price TSTR .710 -> .780, TV2 .096 -> .033, cut
#: .655 -> .616, TV2 .059 -> .036; mpls_stops ε = 0.1 problem .833 -> .843,
#: TV2 .109 -> .038, vehicleSearch .941 -> .953, TV2 .050 -> .038; unchanged
#: elsewhere on the three tables at ε ∈ {0.1, 0.3} and on the mixed tables
AUTO_TV_THRESHOLD = 0.048
AUTO_AIM_THRESHOLD = 0.08
#: ... and AIM only up to this many attributes (its rounds refit the
#: generator; on wider tables the tree's ``a - 1`` pairs cover more; not
#: measured on wide tables)
AUTO_AIM_MAX_ATTRIBUTES = 24
#: ``selection="auto"`` on a table of at least this many attributes, when
#: the all-tables plan is too noisy, measures the 1-way tables (and the
#: ``target``'s pairs) with the whole budget: a tree covers ``2/a`` of the
#: pairs and takes 2/3 of the budget from the 1-way tables that every other
#: pair rests on. Measured on Caravan (86 columns, 4.7k rows; issue 21):
#: TV2 one-way / trimmed tree / all tables 0.063 / 0.067 / 0.129 at ε = 1,
#: 0.050 / 0.055 / 0.061 at ε = 3, 0.105 / 0.122 / 0.299 at ε = 0.3
AUTO_ONE_WAY_MIN_ATTRIBUTES = 40
#: ``selection="auto"`` runs MST only when at least half the edges of a
#: spanning tree would have an expected TV noise of at most this
#: (:func:`skdp_synth.selection.mst_edge_budget`), else measures the 1-way
#: tables. Measured (80/20 splits, two seeds; issue 21): Caravan's first 30
#: columns, ε = 0.3: 3-4 edges qualify, TV2 one-way 0.179 / tree 0.24; ε = 1:
#: 21-25 of 29, TV2 tree 0.151 / one-way 0.155; nass_cds ε = 0.1: 11 of 11
AUTO_EDGE_THRESHOLD = 0.15
#: The default pairs' noise is allocated as if every 1-way table were in the
#: workload with this weight (a pair's is 1): ResidualPlanner's optimum for
#: the pairs alone spends little on the 1-way residuals
#: (:meth:`ProjectedGaussianRelease._one_way_weighted`). Measured (issue 21,
#: round six, 6 seeds, nass_cds / mpls_stops / diamonds): ε = 1, TV1 -4 % /
#: -8 % / -14 %, TV2 +0.6 % / -1.1 % / -0.3 %; ε = 0.3, TV1 -6 % / -5 % /
#: -11 %, TV2 +0.3 % / -0.2 % / -0.1 %. Weight 4: TV1 -8 to -26 %, TV2 up to
#: +1.6 %. 4 since round ten, re-measured after the model-rows change
#: (6 seeds, weight 1 -> 4, TV1 / TV2 / TV3 of nass_cds, mpls_stops,
#: diamonds; ``bench_auto_rules oneway``):
#: ε = 0.3 -8 / -0.4 / +0.7 %, -7 / +0.6 / +1.3 %, -13 / +1.0 / +0.9 %;
#: ε = 1 -3 / +1.2 / +0.9 %, -12 / 0.0 / +0.1 %, -16 / +0.6 / -0.7 %.
#: 0 restores the pairs' optimum.
ONE_WAY_WEIGHT = 4.0
#: ... on tables of at least this many attributes (measured on 10 and 12;
#: on 3 columns the pairs' expected error rose 6 % and one example pair's
#: TV from 0.050 to 0.064, so narrow tables keep the pairs' optimum)
ONE_WAY_MIN_ATTRIBUTES = 10
#: Whether ``max_model_rows="auto"`` also lowers the generator's table to
#: the noise rule of :func:`~skdp_synth.generator.auto_model_rows` (rounding
#: at 5 % of the noise per cell of the *measured* tables). ``False`` since
#: round nine: the table keeps ``min(n̂, max(C / (8 τ), C))`` rows (the TV
#: ceiling alone; the model still does not grow with ``n``), because its
#: rows also carry the 3-way tables nobody measures, which a table of a few
#: thousand rows coarsens. Measured (issue 21, 2 seeds, same fits, noise rule
#: → none): TV3 of the rows at ε = 0.3 nass_cds .0382 → .0286, mpls_stops
#: .0406 → .0319, diamonds .0809 → .0613; at ε = 1 .0195 → .0171, .0224 →
#: .0201, .0471 → .0409; TV2 within -1.6 % / +1.0 %; train-on-synthetic
#: (first target) .967 → .974, .836 → .861, .619 → .658 at ε = 0.3.
MODEL_ROWS_NOISE_RULE = False
#: ``shrinkage="james-stein"`` applies while the all-tables plan's expected TV
#: noise per table (:meth:`ProjectedGaussianRelease._noise_tv`; public) is at
#: most this; with ``target``, the mean over the tables without the target
#: (round ten: its triples, many cells, had lifted the mean past 0.1 on
#: diamonds at ε = 0.3 -- 0.100 and 0.127 against the pairs' 0.030 -- and
#: switched the pairs' shrinkage off). Below it the shrinkage helped everywhere
#: measured (issue 21, TV2 of the rows, all tables measured: diamonds ε = 0.1,
#: noise 0.081, .0579 -> .0538; nass_cds ε = 0.1, 0.050, .0411 -> .0310); above
#: it, on Caravan (86 columns, 4.7k rows; noise 0.29 at ε = 3, 0.76 at ε = 1),
#: it hurt: TV2 .0619 -> .0812 and .128 -> .163. There the 1-way tables that
#: centre the shrinkage are themselves too noisy (TV1 0.088 at ε = 1) and 85
#: shrunk pairs per column pull the rows' 1-way tables towards them. Nothing
#: was measured between 0.081 and 0.29.
SHRINKAGE_MAX_NOISE_TV = 0.1
#: ... and on tables of at least this many attributes. Measured (issue 21,
#: 6 seeds, all tables measured, TV2 / TV3 with and without): the first 8
#: columns of nass_cds, ε = 0.1 / 0.3 / 1: -20 / -16 %, -9 / -4 %, 0 / -3 %;
#: 12 columns: below. The first 5 columns: nass_cds +3 / +6 % at ε = 0.1,
#: mpls_stops 0 / +12 %, diamonds -8 / -5 %; the docs' 3-column example
#: (12 seeds) +0.7 to +1.9 % TV2. Narrow tables have few weak pairs to gain
#: on, and their rows are fitted as measured.
SHRINKAGE_MIN_ATTRIBUTES = 8
#: ``shrinkage="james-stein"`` centres each shrunk table at rows fitted
#: without it (cross-fitting, round eleven): the shrunk tables are dealt,
#: in the workload's order, into this many folds, and the tables of fold
#: ``k`` are shrunk towards the rows of a generator fitted to every
#: measurement outside fold ``k`` (``_shrink_cross_fitted``).
#: More folds leave more of a table's neighbours in its centre fit, at one
#: generator fit per fold. Measured (issue 21, 4 seeds, TV2 of the rows,
#: centred at independence -> 2 / 4 / 8 folds, full fits): diamonds ε = 0.3
#: .02316 -> .02251 / .02193 / .02147; nass_cds ε = 0.3 .01371 -> .01368 /
#: .01377; mpls_stops ε = 0.3 .01245 -> .01206 (4); ε = 0.1 .02936 -> .02772
#: (4); diamonds ε = 1 .00878 -> .00867 (4). Centre fits on the other folds
#: shrunk towards independence first (still independent of the fold's
#: noise) were worse on 3 of 4 of these settings (diamonds ε = 0.3 .02196
#: against .02169 at 8 sweeps).
SHRINKAGE_FOLDS = 4
#: ... and, when every shrunk table is a pair, each centre fit stops after
#: this many generator sweeps (a full fit takes about 25 on these tables).
#: A pair's centre need not fit every table tightly: 4 folds at 8 sweeps gave
#: diamonds ε = 0.3 TV2 .02169 (full fits .02193) and mpls_stops ε = 0.1
#: .02798 (.02772) at about half the time. With tables of three or more
#: attributes (``d = 3``) the centre fits run to convergence: the rows' 3-way
#: structure needs the full descent (mpls_stops ``d = 3``, ε = 1, 2-3 seeds,
#: TV2 / TV3: independence .00773 / .0174, 8 sweeps .00832 / .0187, 16 sweeps
#: .00775 / .0177, full .00750 / .0169; nass_cds .00900 / .0192, 8 sweeps
#: .00815 / .0175, full .00811 / .0175).
SHRINKAGE_CENTRE_SWEEPS = 8
#: A missing level (declared, or added by
#: :class:`~skdp_synth.preprocessing.BooleanEncoder` on a noisy count) is
#: dropped from the generator's rows by a ``SynthesisPipeline`` when the
#: release's own estimate of its 1-way count is below this many of that
#: estimate's noise standard deviations
#: (:meth:`ProjectedGaussianRelease._drop_unsupported_level`; post-processing).
#: A level whose true count is 0 survives with probability ``1 - Φ(z)``
#: (2.3 % at z = 2); one of true count ``m`` is dropped with probability
#: ``Φ(z - m/σ)``. Measured: ``python -m benchmarks.bench_missing_levels``
#: (benchmarks/README.md, round six); z = 2.5 would lose real 2 % missing
#: levels at 2,400 rows (σ ≈ 19 rows there).
LEVEL_SUPPORT_Z = 2.0


# ============================================================== estimator
class ProjectedGaussianRelease(PrivateSynthesizerMixin, BaseEstimator):
    """Near-optimal (ε, δ)-DP release of marginals with correlated Gaussian noise.

    Releases every ``d``-way marginal table of Boolean data (or any linear
    workload over ``{0,1}^p``) with noise shaped by the minimum-volume
    ellipsoid of the workload's sensitivity polytope and its base
    decomposition (:cite:`Nikolov2013`, Algorithms 1--3), optionally holding public
    linear invariants exactly (:cite:`Gao2022`), and samples synthetic rows whose
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
    workload : None, dict, array-like of shape (q, 2^p) or a workload, default=None
        A dict: marginal tables of the attributes with weights,
        ``{("age", "sex"): 2.0, ("income",): 1.0, ...}`` (attribute names of
        ``blocks_``, e.g. the columns of the table in
        :func:`~skdp_synth.make_synthesis_pipeline`, or indices), released
        with ``mechanism="residual"``: the noise allocation minimises
        ``Σ_S w_S E||T~_S - T_S||²`` and the weights steer ``selection``.
        ``None``: all ``d``-way marginal tables over the ``p`` columns
        (:class:`~skdp_synth.workloads.MarginalWorkload`, any ``p`` whose
        ``C(p, d) 2^d`` cells fit in memory). A matrix: any linear queries
        over ``{0,1}^p`` (column ``k`` = the record type with
        :func:`~skdp_synth.workloads.universe_index` ``k``; ``p <= 16``).
    invariants : None, list of tuple of str, dict or array-like of shape (n_c, q), \
default=None
        Statistics published *exactly*. Over attributes (census style):
        ``[("region",), ("region", "sex")]`` -- marginal tables of the
        attributes ``blocks_.names`` -- or ``{"total": True, "tables": [...]}``;
        with ``mechanism="residual"`` (chosen by ``"auto"``) their residuals are
        released without noise (:mod:`skdp_synth.invariants`), and
        ``sample(n)`` rows hold the tables exactly when ``n`` is the
        invariant total, within one count per cell otherwise. A matrix
        ``C``: the release satisfies ``C · released_ = C · (true answers)``
        (:cite:`Gao2022` Definition 2). Either way the guarantee is *induced
        subspace* DP (:cite:`Gao2022` Definition 6): DP for everything
        orthogonal to the invariants, nothing for the invariants themselves
        -- every invariant table publishes the total ``n``.
        ``privacy_guarantee_.kind`` is then ``"induced-subspace"``.
    mechanism : {"auto", "residual", "correlated", "correlated-weighted", "mee", \
"isotropic-gaussian", "laplace"}, default="auto"
        The noise. ``"residual"``: the d-way tables of the *attributes* given
        by ``blocks_`` (every bit its own attribute on a bare 0/1 matrix),
        released through their residuals with ResidualPlanner's optimal
        Gaussian variances (:mod:`skdp_synth.attribute_workload`; optimal
        among Gaussian mechanisms for the total squared error of the
        workload). The others act on the bit-level workload (see the module
        docstring's table). ``"auto"``: ``"residual"`` for the default
        workload without invariants or with invariants over attributes, else
        ``"correlated-weighted"``; the choice is recorded in ``mechanism_``.
    calibration : {"analytic", "nikolov2013", "gao2022"}, default="analytic"
        Gaussian noise magnitude ``c`` at whitened sensitivity 1.
    target : None, str or int, default=None
        An attribute whose tables matter most (e.g. the label a model will be
        trained on; ``mechanism="residual"``): every table of the workload
        containing it is weighted ``TARGET_WEIGHT`` (2) times, and with the
        default workload (``d=2``) its 3-way tables with every pair of other
        attributes (up to ``MAX_CANDIDATE_CELLS`` cells) join the workload.
    selection : {"auto", "none", "mst", "aim", "one-way"}, default="auto"
        Which tables of the workload are measured (``mechanism="residual"``;
        :mod:`skdp_synth.selection`, ``doc/privacy.md``). ``"none"``: all of
        them, data-independently. ``"mst"``: noisy 1-way tables and a spanning
        tree of pairs chosen by the exponential mechanism
        (:cite:`McKenna2021`); ``"aim"``: adaptive rounds (:cite:`McKenna2022`).
        Both then measure the chosen tables with ResidualPlanner's weighted
        optimal noise. ``"auto"``: from public quantities only -- ``ε, δ``,
        the domain, and ``n`` (public under replace-one), ``n_rows``, or else
        the noisy total that every plan releases first -- ``"mst"`` when the
        all-tables plan's expected TV noise per table exceeds
        ``AUTO_TV_THRESHOLD`` (0.048), ``"aim"`` above
        ``AUTO_AIM_THRESHOLD`` (0.08; never with ``target``), else
        ``"none"`` (thresholds measured on real tables,
        ``benchmarks/bench_selection.py``); with ``target``, also ``"none"``
        when the same release's all-pairs plan without the target is within
        the threshold (its 3-way tables' cells would otherwise push the
        choice to MST's target star). Where it would
        run MST, ``"auto"`` measures the 1-way tables only (``"one-way"``;
        with ``target``, also the target's pairs worth their noise) on tables
        of at least ``AUTO_ONE_WAY_MIN_ATTRIBUTES`` (40) attributes or when
        fewer than half a tree's edges are worth their noise
        (:func:`~skdp_synth.selection.mst_edge_budget`). ``"one-way"``
        (explicitly): the 1-way tables and, with ``target``, every pair
        with the target, on the whole budget, data-independently -- a
        naive-Bayes-like model for the target, which where the predictors
        are not redundant beat MST's tree for train-on-synthetic scores
        (issue 22, 16 seeds, ε = 1: Wage R² .302 -> .318, credit AUC .769
        -> .786) and where they are lost to it (diamonds' ``cut`` at
        ε = 0.1, accuracy .649 -> .578; ``benchmarks/README.md``, round
        fifteen), so ``"auto"`` does not choose it for you. The same
        ``(ε, δ)`` in every case (Gaussian DP accounting); the choice is in
        ``selection_``.
    shrinkage : str or None, default="james-stein"
        ``"james-stein"``, ``"james-stein-independence"`` or ``None``.
        When every table of the workload is measured (``selection_`` is
        ``"none"``), the generator fits each interaction residual (tables of
        2 or more attributes) shrunk towards a centre ``m`` by the
        positive-part James--Stein factor
        ``max(0, 1 - (p - 2) σ² / ||y - m||²)`` (:mod:`skdp_synth.shrinkage`):
        a table whose measured residual is about its noise away from the
        centre is pulled to it instead of fitted as structure; one far from
        it is kept (factor near 1). ``"james-stein"`` (round eleven)
        centres each table at rows fitted without it: the tables are dealt
        into ``SHRINKAGE_FOLDS`` (4) folds, and fold ``k`` is centred at a
        short generator fit to every measurement outside fold ``k``, so a
        weak pair is weighed against what its neighbours imply
        (cross-fitting; the centre's noise is independent of the table's).
        ``"james-stein-independence"`` centres every table at the
        independence of its attributes (rounds seven to ten, without the
        centre fits; for reproducing those figures). The tables containing
        ``target`` are not shrunk that way: its pairs are fitted as
        measured, and its triples (their residual is the interaction beyond
        the pairs) are shrunk towards rows first fitted to every other
        measurement (:func:`skdp_synth.shrinkage.shrink_towards_rows`).
        Nothing is shrunk when the expected TV noise per table of the tables
        shrunk (with ``target``, those without it) exceeds
        ``SHRINKAGE_MAX_NOISE_TV`` (0.1; on wide tables with little signal
        the 1-way tables that centre it are too noisy) or the table has
        fewer than ``SHRINKAGE_MIN_ATTRIBUTES`` (8) attributes (few weak
        pairs to gain on; measured slightly worse on 3 and some 5 columns).
        Post-processing: ``released_`` keeps the unbiased answers and the
        guarantee is unchanged; the factors are in ``shrinkage_factors_``.
        Measured (issue 21, 4 seeds, TV2 of the rows): towards independence
        against ``None``, nass_cds ε = 0.3 -13 %, mpls_stops ε = 0.1 -6 %,
        ε = 1 unchanged; cross-fitted against independence, diamonds
        ε = 0.3 -6 %, mpls_stops ε = 0.1 -5 %, ε = 0.3 -2 %, nass_cds
        ε = 0.3 and every table at ε = 1 between -1 % and 0, at 1.5-2.5 s
        more per fit; with ``d = 3`` at ε = 1, TV2 / TV3 nass_cds -10 / -9 %,
        mpls_stops -5 / -5 %, at about 4 times the fit's seconds
        (``benchmarks/README.md``).
        ``None``: the release's residuals as measured (the behaviour before;
        the papers' least squares).
    neighbouring : {"add-remove-one", "replace-one"}, default="add-remove-one"
        The neighbouring relation (:cite:`Nikolov2013` uses add/remove, :cite:`Gao2022`
        replace-one). Sensitivities are computed for the one chosen (replace-one uses
        the differences ``a_u - a_v``).
    n_rows : int, default=None
        Public upper bound on the number of rows. Enables the least-squares
        step of :cite:`Nikolov2013` Algorithm 3 (sparse case; enumerates ``{0,1}^p``,
        ``p <= 16``) and is the default output size under add/remove. Under
        replace-one a larger ``X`` is refused; under add/remove ``n`` is
        private and is not compared with it (the step is post-processing:
        a wrong bound costs accuracy, not privacy).
    framework : {"projection", "extension"}, default="projection"
        How invariants are imposed (:cite:`Gao2022` §3.1/§3.2). ``"extension"`` builds
        the mechanism for ``Q_Nᵀ A`` and needs the universe enumerated
        (``p <= 16``).
    n_candidates : int, default=500
        Size of the candidate set reweighted by ``sample`` for explicit
        workloads (post-processing); unused for marginal workloads.
    max_model_rows : "auto", int or None, default="auto"
        Rows ``N`` of the generator's model table (marginal workloads;
        post-processing). ``"auto"``: chosen from public quantities and the
        released total, capped by the domain, not growing with the number
        of rows (:func:`skdp_synth.generator.auto_model_rows` with
        ``noise_rule=False``: ``n̂`` rows, at most enough that rounding the
        table moves no measured table by more than 2.5e-4 in total
        variation; the noise rule, which also lowered ``N`` where the noise
        is large, coarsened the unmeasured 3-way tables and is off since
        round nine, ``MODEL_ROWS_NOISE_RULE``); the choice is recorded in
        ``model_rows_`` and its rule in ``plan_``. An integer: at most that
        many rows (a cap).
        ``None``: as many rows as the released tables count ``n̂`` (the
        behaviour before ``"auto"``; for reproduction). With ``N`` below
        ``n̂`` every measurement and its noise scale are multiplied by
        ``N / n̂`` (the same proportions on ``N`` rows) and ``sample(n)``
        rounds the ``N`` rows to any ``n`` (controlled rounding): the
        generator's memory and time then depend on ``N``, not on the data
        size. The guarantee is unchanged.
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
        mechanism and all of :cite:`Nikolov2013`'s and :cite:`Gao2022`'s Gaussian
        mechanisms) with the same ``(ε, δ)`` calibration, neighbouring relation and
        invariants: ``c² max_π tr((Σ_u π_u h_u h_uᵀ)^{1/2})²`` over the sensitivity set
        ``{h_u}`` (weak duality holds for every design ``π``; we report the best
        found, which for the marginal workload is the exact optimum, attained
        by ``mechanism="correlated-weighted"``). It is *not* a bound for
        non-Gaussian mechanisms. :cite:`Nikolov2013`'s own lower bounds (spectral and
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
        Pieces ``d_i`` and radii ``r_i`` of :cite:`Nikolov2013` Algorithm 1.
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
    selection_ : str
        ``"none"``, ``"mst"``, ``"aim"`` or ``"one-way"``: the rule used
        (``"auto"`` resolved; ``"none"`` for the bit-level mechanisms).
        ``"auto"``'s MST spends ``gaussian_release.AUTO_MST_SHARES`` of the
        budget on its steps, an explicit ``"mst"`` the paper's thirds
        (``selection_shares_`` says which): to refit the same release, pass
        ``"auto"`` again, not ``selection_``.
    marginals_ : list of tuple of str
        The attribute tables measured with ResidualPlanner's noise at the end
        (all tables of the workload for ``"none"``), by name.
    selection_shares_ : dict
        Budget shares (of ``μ² = 1/c²``) spent by each step; they sum to at
        most 1 (``doc/privacy.md``).
    shrinkage_factors_ : dict
        ``{table (names): f}``: the James--Stein factor by which each
        interaction residual's distance from its centre was multiplied
        before the generator fitted it (see
        ``shrinkage``; empty when nothing was shrunk; set by
        ``mechanism="residual"`` fits, like ``selection_``). Covered by the
        recorded guarantee: a function of the released residuals, their
        public scales and rows fitted to them (``doc/privacy.md``).
    model_rows_ : int
        Rows ``N`` of the generator's fitted table (marginal workloads; see
        ``max_model_rows``). Public: a function of the release.
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

    References
    ----------
    :cite:`Nikolov2013` Algorithms 1--3: the ellipsoid, its base
    decomposition and the correlated Gaussian noise.

    :cite:`Gao2022`: exact invariants and induced subspace DP
    (Definitions 2 and 6, §3.1--3.2).

    :cite:`Balle2018`: the analytic Gaussian calibration
    (``calibration="analytic"``).

    :cite:`Khachiyan1996`, :cite:`Kumar2005`: the minimum-volume enclosing
    ellipsoid of explicit sensitivity points.

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
        "workload": [None, dict, "array-like", MarginalWorkload, ExplicitWorkload],
        "invariants": [None, "array-like", dict],
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
        "max_model_rows": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
            None,
        ],
        "target": [None, str, Integral],
        "selection": [StrOptions({"auto", "none", "mst", "aim", "one-way"})],
        "shrinkage": [StrOptions({"james-stein", "james-stein-independence"}), None],
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        d: int = 2,
        workload: dict | ArrayLike | MarginalWorkload | ExplicitWorkload | None = None,
        invariants: ArrayLike | None = None,
        mechanism: str = "auto",
        calibration: Literal["analytic", "nikolov2013", "gao2022"] = "analytic",
        neighbouring: Literal["add-remove-one", "replace-one"] = "add-remove-one",
        n_rows: int | None = None,
        framework: Literal["projection", "extension"] = "projection",
        n_candidates: int = 500,
        max_model_rows: Literal["auto"] | int | None = "auto",
        target: str | int | None = None,
        selection: Literal["auto", "none", "mst", "aim", "one-way"] = "auto",
        shrinkage: Literal["james-stein", "james-stein-independence"]
        | None = "james-stein",
        blocks: Literal["auto"] | BlocksLike | None = "auto",
        accountant: BudgetAccountant | None = None,
        random_state: int | np.random.RandomState | np.random.Generator | None = None,
    ) -> None:
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
        self.max_model_rows = max_model_rows
        self.target = target
        self.selection = selection
        self.shrinkage = shrinkage
        self.blocks = blocks
        self.accountant = accountant
        self.random_state = random_state

    # ---------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self,
        X: ArrayLike,
        y: None = None,
        *,
        blocks: BlocksLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> Self:
        """Release the workload's answers on ``X`` and fit the synthetic rows.

        Parameters
        ----------
        X : array-like, DataFrame or Dask collection of shape (n_rows, n_features)
            Training rows (0/1), or the *distinct* rows (cells) of a
            contingency table when ``sample_weight`` gives their counts.
        y : None
            Ignored.
        blocks : None, Blocks or list, default=None
            The columns' categorical blocks, handed over by
            :class:`~skdp_synth.SynthesisPipeline` (public).
        sample_weight : array-like of shape (n_rows,), default=None
            Counts: row ``i`` stands for ``sample_weight[i]`` identical
            records (the scikit-learn convention). Non-negative integers; a
            record is one unit of count, so the neighbouring relation is
            unchanged (one unit of one count added, removed or moved). The
            release is that of the expanded rows -- identical for the same
            ``random_state``, because the sufficient statistics are the same
            integers (:mod:`skdp_synth._stats`) -- and no record is
            materialised: memory depends on the distinct rows only. Under
            replace-one the total count is the public ``n``.

        Returns
        -------
        self : ProjectedGaussianRelease
        """
        return self._fit_validated(X, blocks, sample_weight)

    # ------------------------------------------------------------ privacy
    def _mechanism(self):
        """The mechanism ``"auto"`` stands for (public: depends on parameters only).

        ``"residual"`` -- the Gaussian-optimal noise on the attribute-level
        tables -- for the default marginal workload without invariants or
        with invariants over attributes, ``"correlated-weighted"``
        (Gaussian-optimal on the bit-level marginal workload, near-optimal
        otherwise) for explicit workloads and invariant matrices.
        """
        if self.mechanism != "auto":
            return self.mechanism
        if (self.workload is None or isinstance(self.workload, dict)) and (
            self.invariants is None or AttributeInvariants.is_spec(self.invariants)
        ):
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
            "optimal variances (ResidualPlanner, Xiao2023)",
            "correlated": "correlated Gaussian noise (Nikolov2013 Alg. 2)",
            "correlated-weighted": "weighted correlated Gaussian noise (Nikolov2013 "
            "Alg. 1-2)",
            "mee": "MEE-shaped Gaussian noise (Nikolov2013 Cor. 8)",
            "isotropic-gaussian": "Gaussian mechanism (Nikolov2013 Lemma 4)",
            "laplace": "Laplace mechanism (Gao2022 Lemma 16)",
        }
        text = names[self._mechanism()]
        if self.invariants is None:
            return PrivacyGuarantee(self.epsilon, delta, self.neighbouring, text)
        # Gao2022 Def. 6: exact invariants, (ε, δ)-DP only orthogonal to them
        text += (
            f"; induced subspace DP with exact invariants (Gao2022 Def. 6, "
            f"{self.framework} framework)"
        )
        return PrivacyGuarantee(
            self.epsilon,
            delta,
            self.neighbouring,
            text,
            kind=INDUCED_SUBSPACE,
            invariants=self._invariant_labels(),
        )

    def _attribute_invariants(self):
        """The invariants as :class:`AttributeInvariants`, or ``None`` (a matrix)."""
        if self.invariants is None or not AttributeInvariants.is_spec(self.invariants):
            return None
        return AttributeInvariants.parse(self.invariants, self.blocks_.names)

    def _invariant_labels(self):
        """What the invariants publish exactly, for the recorded guarantee."""
        inv = self._attribute_invariants()
        if inv is not None:
            return inv.labels()
        C = np.atleast_2d(np.asarray(self.invariants, dtype=np.float64))
        return (f"{C.shape[0]} linear equalities C y = C A x (Gao2022 Def. 2)",)

    def _make_plan(self, n_samples, n_features):
        """The whole noise model, calibrated and verified before the data is read.

        The mechanism, the workload, the invariants, the noise magnitude ``c``
        and the guarantee; for the bit-level mechanisms the whitening
        (:class:`AdditiveNoise`) with its whitened sensitivity checked on the
        whole sensitivity set; for ``"residual"`` ResidualPlanner's scales.
        Under add/remove neighbours ``n`` is private: the plan does not
        record it and nothing here depends on it (not even a comparison with
        the public bound ``n_rows``: ``doc/privacy.md``, "Errors").
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
            return self._with_model_rows_rule(self._residual_plan(n_samples, common))
        if isinstance(self.workload, dict) or self.target is not None:
            raise ValueError(
                "a workload of attribute tables (dict) and target= are released "
                "by mechanism='residual' (or 'auto')"
            )
        if self.selection in ("mst", "aim", "one-way"):
            raise ValueError(
                f"selection={self.selection!r} needs mechanism='residual' (or 'auto')"
            )
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
        return self._with_model_rows_rule(self._noise_plan(workload, C, sparse, common))

    def _with_model_rows_rule(self, plan):
        """The plan with the public rule of the generator's table size.

        ``max_model_rows="auto"`` (:func:`~skdp_synth.generator.auto_model_rows`)
        needs the noise per cell and the largest table, both fixed here
        before the data is read; the released total comes later.
        """
        if self.max_model_rows != "auto":
            return plan
        if plan.mechanism == "residual":
            sd = _residual_cell_sd(
                plan.workload, plan.noise_sigma * plan.residual_scales
            )
        elif isinstance(plan.workload, MarginalWorkload):
            sd = math.sqrt(plan.expected_error / plan.workload.n_queries)
        else:
            return plan
        if plan.mechanism == "residual":
            # the largest table of the (weighted, possibly 3-way) workload
            floor = max(int(plan.workload.n_cells(S)) for S in plan.workload.tables)
        else:
            levels = np.sort(np.asarray(self.blocks_.n_levels, dtype=np.int64))[::-1]
            floor = int(np.prod(levels[: min(int(self.d), levels.size)]))
        return plan.replace(model_rows_cell_sd=sd, model_rows_floor=floor)

    def _check_n_rows(self, n_samples):
        # Under add/remove neighbours n is private: a refusal that depends on
        # n > n_rows would answer that comparison exactly, for free (a binary
        # search over n_rows finds n; issue 23, finding 2). The least-squares
        # step is post-processing of the noisy answers, so its privacy does
        # not need n <= n_rows (only its accuracy bound does): not checked.
        if self.neighbouring != "replace-one":
            return
        if self.n_rows is not None and n_samples > self.n_rows:
            raise ValueError(
                f"n_rows={self.n_rows} is declared a public upper bound on the "
                "number of rows, but X has more rows"
            )

    def _default_n_samples(self):
        # n is public only under replace-one; under add/remove use the public
        # bound or the released (noisy) total, never the private n. The
        # relation and the bound are the fit's, not the current parameters.
        if self.plan_.neighbouring == "replace-one":
            return self.n_samples_fit_
        n_rows = self._fitted_param("n_rows")
        if n_rows is not None:
            return int(n_rows)
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
            n_tables = math.comb(p, int(self.d))
            n_queries = n_tables * 2 ** int(self.d)
            widest = max(self.blocks_.blocks, key=lambda b: b.width)
            # at least the tables' column indices and one answer per cell
            check_dense_size(
                n_tables * int(self.d) + n_queries,
                f"the bit-level {self.d}-way marginal workload over p={p} bits "
                f"({format_count(n_queries)} answers; the widest block is "
                f"{widest.name!r} with {widest.width} bits)",
                "Use mechanism='residual' (attribute-level tables), declare "
                "fewer levels for the widest columns, or lower d.",
            )
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
        inv = self._attribute_invariants()
        if inv is not None:
            return self._bit_invariants(workload, inv)
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

    def _bit_invariants(self, workload, inv):
        """Attribute invariants as :cite:`Gao2022`'s ``C`` on the bit-level tables.

        With every attribute a single bit (``blocks_`` all binary), the table of
        an attribute set ``S`` with ``|S| <= d`` is a marginal of the first
        ``d``-way table ``t ⊇ S`` of the workload: each cell of ``T_S`` is the
        sum of the cells of ``t`` whose bits at ``S`` match (``S = ()``: all
        of them, the total). Other encodings would need the joint table of a
        block's bits, which the bit-level workload does not hold.
        """
        if not isinstance(workload, MarginalWorkload) or not self.blocks_.is_all_binary:
            raise ValueError(
                "invariants over attributes need mechanism='residual' (the "
                "default) unless every attribute is one bit of the default "
                "marginal workload"
            )
        if inv.max_size > workload.d:
            raise ValueError(
                f"an invariant table has more attributes than d={workload.d}; "
                "raise d or name smaller tables"
            )
        rows = []
        tables = [tuple(int(u) for u in t) for t in workload.tables]
        for S in inv.sets:
            t = next(i for i, T in enumerate(tables) if set(S) <= set(T))
            T = tables[t]
            cells = np.array(list(itertools.product((0, 1), repeat=workload.d)))
            pos = [T.index(j) for j in S]
            key = cells[:, pos] @ (1 << np.arange(len(S) - 1, -1, -1)) if S else 0
            for value in range(2 ** len(S)):
                row = np.zeros(workload.n_queries)
                row[t * workload.n_cells : (t + 1) * workload.n_cells] = key == value
                rows.append(row)
        return np.array(rows)

    def _noise_plan(self, workload, C, sparse, common):
        """The (public, data-independent) noise model of the bit-level mechanisms.

        The workload is asked one thing, its sensitivity set
        (:meth:`~skdp_synth.workloads.MarginalWorkload.sensitivity_set`); the
        noise is shaped from it and verified on it by
        :mod:`skdp_synth.mechanisms.additive`.
        """
        c = common["noise_sigma"]
        nb, mech = self.neighbouring, common["mechanism"]
        # Gao2022: the extension framework builds the mechanism on the invariants'
        # null space; the projection framework projects afterwards
        ext = C if (C is not None and self.framework == "extension") else None
        space = "cells" if mech in ("isotropic-gaussian", "laplace") else "coords"
        ord_ = 1 if mech == "laplace" else 2
        # the workload's answers: the sensitivity sets the noise is shaped from
        # and verified on, and the invariants' basis in the noise's space
        shaped = workload.sensitivity_set(nb, invariants=ext, space=space, ord=ord_)
        whole = shaped if ext is None else workload.sensitivity_set(nb, space=space)
        bound = None  # the set of the lower bound: in coords, restricted to C
        if mech != "laplace":
            if space == "coords" and (C is None or ext is not None):
                bound = shaped
            else:
                bound = workload.sensitivity_set(nb, invariants=C)
        inv_basis = None
        if C is not None:
            inv_basis = orth_basis(C.T if space == "cells" else workload.to_coords(C.T))
        to_cells = np.asarray if space == "cells" else workload.to_cells

        # the mechanism: shaped, calibrated and verified from the sets alone
        decomposition = None
        if space == "cells":
            q = workload.n_queries
            if ext is not None:
                H = points_of(shaped)
                sens = float(np.max(np.linalg.norm(H, ord=ord_, axis=0)))
                R = shaped.restriction
                whitening = MatrixWhitening(R, np.full(R.shape[0], sens))
            else:
                sens = shaped.max_norm
                whitening = MaskWhitening(q, np.arange(q), np.full(q, sens))
            kind = "gaussian" if ord_ == 2 else "laplace"
        else:
            if shaped.orbits is not None:
                whitening, decomposition = orbit_whitening(shaped.orbits, mech)
            else:
                T, scales, info = explicit_whitening(points_of(shaped), mech)
                if shaped.restriction is not None:
                    T = T @ shaped.restriction
                decomposition = info.get("decomposition")
                whitening = MatrixWhitening(T, scales)
            if inv_basis is not None and inv_basis.shape[1] >= workload.rank:
                raise ValueError("the invariants fix every answer; nothing is private")
            kind = "gaussian"
        noise = AdditiveNoise(space, whitening, kind, c, to_cells, inv_basis)
        verified = verify_sensitivity(noise, whole)
        noise.offset = replace_one_offset(noise, whole)
        expected = noise.expected_error()
        lower = None if bound is None else gaussian_lower_bound(bound, c)
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
            expected_error=expected,
            lower_bound=lower,
        )

    def _residual_plan(self, n_samples, common):
        """ResidualPlanner's scales for the attribute-level tables (no data)."""
        inv = self._attribute_invariants()
        if (self.workload is not None and not isinstance(self.workload, dict)) or (
            self.invariants is not None and inv is None
        ):
            raise ValueError(
                "mechanism='residual' releases the attribute-level marginal "
                "workload and takes no explicit workload or invariant matrix "
                "(name invariant tables by attributes, e.g. [('region',)]); use "
                "mechanism='correlated-weighted' (or 'auto')"
            )
        blocks = self.blocks_
        if not isinstance(self.workload, dict):
            # a column of one level or bin has no bits and is no attribute; a
            # pipeline's private domains can leave too few (iris, 150 rows,
            # at epsilon=1: every numeric domain collapsed on some seeds)
            hint = (
                "; a column with a single level or bin carries no attribute. "
                "If an encoder learned the domains (see its CoarseDomainWarning),"
                " declare them (bounds=, bin_edges=, categories=) or give them "
                "a larger share of the budget (domain_share=)"
            )
            check_degree(self.d, blocks.n_attributes, of="attributes", hint=hint)
        self._check_n_rows(n_samples)
        if not isinstance(self.workload, dict):
            _check_table_cells(blocks, self.d)  # before the workload allocates
        tables, weights = self._attribute_tables()
        W = AttributeMarginalWorkload(
            blocks.n_levels, max(len(S) for S in tables), tables=tables, weights=weights
        )
        c = common["noise_sigma"]
        exact = ()
        if inv is not None:
            exact = self._exact_residuals(W, inv)
        # ResidualPlanner's allocation and its whitened ℓ2-sensitivity, computed
        # once (the replace-one maximum enumerates the attribute sets); dividing
        # it out gives sensitivity exactly 1 (homogeneity, see
        # AttributeMarginalWorkload.optimal_scales), so c is the Gaussian σ at
        # sensitivity 1. These are optimal_scales' τ, bit for bit. Invariants
        # (Gao2022, doc/privacy.md "Census-style releases"): the extension
        # framework allocates over the other residuals only; the projection
        # framework keeps the unconstrained allocation and drops the noise of
        # the exact residuals.
        ext = exact if self.framework == "extension" else ()
        plain = inv is None and self.neighbouring == "add-remove-one"
        plan_W = self._one_way_weighted(W, inv)
        if plan_W is None:
            tau, sens = W.calibrated_scales(self.neighbouring, ext)  # public
        else:
            # the default pairs: the noise is allocated for the pairs and the
            # 1-way tables (ONE_WAY_WEIGHT). Same residuals, hence the same
            # sensitivity weights s_A: τ indexes W's residuals and its
            # sensitivity on W is the one divided out (exactly 1)
            tau, sens = _allocated_scales(W, plan_W, self.neighbouring, ext)
        self._guard_residual(sens)
        kept = np.array([A not in set(exact) for A in W.subsets])
        expected = W.expected_error(tau * kept, c)
        optimum = expected
        if plan_W is not None and plain:
            # the pairs' own optimum, c² (Σ_A sqrt(s_A v_A))² (module
            # docstring of attribute_workload; no sensitivity enumeration)
            K = float(np.sum(np.sqrt(W.sensitivity_weights() * W.variance_weights())))
            optimum = c**2 * K**2
        return ReleasePlan(
            **common,
            workload=W,
            invariants=inv,
            sparse=False,
            space="residuals",
            noise=None,
            decomposition=None,
            residual_scales=tau,
            sensitivity=1.0,  # the allocation's sensitivity is divided out
            expected_error=expected,
            lower_bound=optimum if plain else None,
            selection=self._selection_plan(W, tau, c, n_samples, inv),
        )

    def _one_way_weighted(self, W, inv):
        """The workload the default pairs' noise is allocated for, or ``None``.

        The default (no ``workload``, ``target`` or invariants, ``d = 2``, at
        least ``ONE_WAY_MIN_ATTRIBUTES`` attributes) measures every pair.
        ResidualPlanner's optimum for the pairs alone spends little on the
        1-way residuals, which each pair's cells share ``1/L_k``-fold, while
        each pair's TV counts them in full. Adding every 1-way table with
        ``ONE_WAY_WEIGHT`` moves the allocation (public: the levels); the
        released tables stay the pairs. ``expected_error_`` is then the
        pairs' error under this allocation and ``gaussian_optimal_error_``
        the pairs' optimum.
        """
        if (
            ONE_WAY_WEIGHT <= 0
            or len(W.n_levels) < ONE_WAY_MIN_ATTRIBUTES
            or self.workload is not None
            or self.target is not None
            or inv is not None
            or self.d != 2
        ):
            return None
        return _with_one_way_tables(W)

    def _exact_residuals(self, W, inv):
        """The residuals the invariant tables fix: their downward closure."""
        if inv.max_size > W.d:
            raise ValueError(
                f"an invariant table has more attributes than d={W.d}; raise d "
                "or name smaller tables"
            )
        if running_intersection_order(inv.sets) is None:
            raise ValueError(
                "the invariant tables must have a running intersection order "
                "(e.g. nested tables, or tables sharing one attribute) so that "
                "synthetic rows can hold all of them exactly"
            )
        exact = tuple(A for A in W.subsets if A in inv.closure())
        if len(exact) == len(W.subsets):
            raise ValueError("the invariants fix every answer; nothing is private")
        return exact

    def _attribute_index(self, key):
        """The index of attribute ``key`` (a name or an index; public)."""
        names = [str(x) for x in self.blocks_.names]
        if isinstance(key, Integral) and not isinstance(key, bool):
            if not 0 <= int(key) < len(names):
                raise ValueError(f"attribute index {key} out of range")
            return int(key)
        if str(key) not in names:
            import difflib

            lower = {name.lower(): name for name in names}
            close = difflib.get_close_matches(str(key).lower(), list(lower), n=1)
            hint = f" Did you mean {lower[close[0]]!r}?" if close else ""
            raise ValueError(
                f"unknown attribute {key!r} (the columns are the attributes): "
                f"{names}.{hint}"
            )
        return names.index(str(key))

    def _attribute_tables(self):
        """The workload's tables and weights (public: parameters and blocks).

        ``workload`` as a dict, else all ``d``-way tables with weight 1; with
        ``target`` the tables containing it weigh ``TARGET_WEIGHT`` times
        more and, for the default ``d = 2`` workload, its 3-way tables join.
        """
        levels = self.blocks_.n_levels
        a = len(self.blocks_.names)
        index = self._attribute_index

        if isinstance(self.workload, dict):
            spec = {}
            for key, w in self.workload.items():
                keys = (key,) if isinstance(key, (str, Integral)) else tuple(key)
                S = tuple(sorted(index(k) for k in keys))
                if not S or len(set(S)) != len(S):
                    raise ValueError(f"workload table {key!r} is empty or repeats")
                w = float(w)
                if not (math.isfinite(w) and w > 0):
                    raise ValueError(f"workload weight of {key!r} must be positive")
                spec[S] = spec.get(S, 0.0) + w
            if not spec:
                raise ValueError("the workload dict is empty")
        else:
            spec = {S: 1.0 for S in itertools.combinations(range(a), self.d)}
        if self.target is not None:
            t = index(self.target)
            if self.workload is None and self.d == 2:
                others = [j for j in range(a) if j != t]
                for i, j in itertools.combinations(others, 2):
                    S = tuple(sorted((t, i, j)))
                    cells = int(levels[t]) * int(levels[i]) * int(levels[j])
                    if cells <= MAX_CANDIDATE_CELLS:
                        spec.setdefault(S, 1.0)
            spec = {S: w * (TARGET_WEIGHT if t in S else 1.0) for S, w in spec.items()}
        tables = sorted(spec, key=lambda S: (len(S), S))
        return tables, [spec[S] for S in tables]

    def _selection_plan(self, W, tau, c, n_samples, inv=None):
        """What ``selection`` fixes before the data is read (public).

        With invariants every table is measured (the exact residuals fix
        tables that selection could leave out): ``"auto"`` keeps all tables,
        an explicit rule is refused.

        The rule (or ``"auto"`` when it waits for the noisy total), the
        candidates and their weights, the budget shares, and for ``"auto"``
        the share of the noisy total ``f_0 = s_∅/τ_∅²`` -- its share in the
        all-tables plan, so that the all-tables branch is that plan exactly.
        """
        rule = self.selection
        if inv is not None:
            if rule not in ("auto", "none"):
                raise ValueError(
                    f"selection={rule!r} cannot be combined with invariants: "
                    "use selection='none' (or 'auto', which then keeps all tables)"
                )
            return {"rule": "none"}
        levels = self.blocks_.n_levels
        public_n = n_samples if self.neighbouring == "replace-one" else self.n_rows
        auto = rule == "auto"
        if auto and public_n is not None:
            rule = self._auto_rule(W, tau, c, public_n)
        if rule == "none":
            return {"rule": "none"}
        spec = dict(zip(W.tables, W.weights))
        cand, cw = candidate_tables(levels, spec)
        if not cand:
            return {"rule": "none"}
        out = {
            "rule": rule,
            "candidates": cand,
            "candidate_weights": cw,
            "shares": {
                r: dict(AUTO_MST_SHARES if (auto and r == "mst") else v)
                for r, v in SELECTION_SHARES.items()
                if rule in ("auto", r)
            },
            # "auto" replaces MST by the 1-way tables when fewer than half a
            # tree's edges are worth their noise (selection.mst_edge_budget);
            # an explicit "mst" is the paper's
            "trim": auto,
            "public_n": public_n,
        }
        if rule == "auto":
            i0 = W.subsets.index(())
            out["count_share"] = float(1.0 / tau[i0] ** 2)
            out["threshold"] = AUTO_TV_THRESHOLD
        return out

    @staticmethod
    def _noise_tv(W, tau, c, n, without=None):
        """Expected TV noise per table of the all-tables plan at ``n`` rows.

        ``E|e| = sqrt(2/π) σ`` per cell of a table ``S`` with per-cell noise
        ``σ_S`` (:meth:`AttributeMarginalWorkload.cell_variance`), so its TV
        error is ``≈ k_S sqrt(2/π) σ_S / (2 n)``; the ``w_S``-weighted mean,
        over the tables that do not contain attribute ``without`` when it is
        given (and some do not). Public: a function of the plan and a public
        or noisy ``n``.
        """
        n = max(float(n), 1.0)
        weighted = list(zip(W.tables, W.weights))
        if without is not None and any(without not in S for S, _ in weighted):
            weighted = [(S, w) for S, w in weighted if without not in S]
        tv = [
            W.n_cells(S)
            * math.sqrt(2.0 / math.pi * W.cell_variance(tau, c, S))
            / (2 * n)
            for S, _ in weighted
        ]
        return float(np.average(tv, weights=[w for _, w in weighted]))

    def _untargeted_noise_tv(self, W, c, n):
        """:meth:`_noise_tv` of the plan the release would make without ``target``.

        ``target`` adds its 3-way tables to the default pairs and weighs its
        tables up; the triples' many cells raise the plan's mean TV noise, so
        the same table and budget that measure every pair without a target
        looked too noisy for it. Whether the signal suffices to measure every
        pair is a property of the pairs: this is the all-pairs plan
        (:meth:`_one_way_weighted` as without a target) at the same ``c`` and
        ``n``. ``None`` unless ``target`` is set on the default workload
        (``d = 2``). Public: the domain, ``c`` and a public or noisy ``n``.
        """
        if self.target is None or self.workload is not None or self.d != 2:
            return None
        pairs = [S for S in W.tables if len(S) == 2]
        if not pairs:
            return None
        W0 = AttributeMarginalWorkload(W.n_levels, 2, tables=pairs)
        plan_W = W0
        if ONE_WAY_WEIGHT > 0 and len(W.n_levels) >= ONE_WAY_MIN_ATTRIBUTES:
            plan_W = _with_one_way_tables(W0)
        tau0, _ = _allocated_scales(W0, plan_W, self.neighbouring)
        return self._noise_tv(W0, tau0, c, n)

    def _auto_rule(self, W, tau, c, n):
        """``"none"``, ``"mst"`` or ``"aim"`` from the expected TV noise (public).

        With ``target``, every table is measured when either the plan itself
        or the same release's all-pairs plan without the target
        (:meth:`_untargeted_noise_tv`) is within ``AUTO_TV_THRESHOLD``.
        """
        noise = self._noise_tv(W, tau, c, n)
        if noise <= AUTO_TV_THRESHOLD:
            return "none"
        untargeted = self._untargeted_noise_tv(W, c, n)
        if untargeted is not None and untargeted <= AUTO_TV_THRESHOLD:
            return "none"
        if W.n_attributes >= AUTO_ONE_WAY_MIN_ATTRIBUTES:
            return "one-way"
        if (
            noise > AUTO_AIM_THRESHOLD
            and W.n_attributes <= AUTO_AIM_MAX_ATTRIBUTES
            and self.target is None
        ):
            # with a target, MST's tree (on the target-weighted scores) serves
            # the model better than AIM's rounds (AUTO_AIM_THRESHOLD's note)
            return "aim"
        return "mst"

    # --------------------------------------------------------------- fit
    def _fit(self, U, plan, source):
        self.mechanism_ = plan.mechanism
        self._generator_plan = plan  # its public rule for the model's size
        if plan.space == "residuals":
            self._fit_residual(U, plan, source)
            return
        workload = plan.workload

        # ---- the only steps that read the data: one additive statistic
        # (_stats.workload_counts), in memory or summed over Dask chunks
        with stage("counting (one pass over the data)"):
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
        # the total the release carries (public n under replace-one)
        if self.neighbouring == "replace-one":
            self.n_estimate_ = float(plan.n_samples)
        else:
            self.n_estimate_ = workload.released_total(coords, cells)
        self._model_rows = None
        if isinstance(workload, MarginalWorkload) and self.n_estimate_ is not None:
            sigma = math.sqrt(self.expected_error_ / workload.n_queries)
            measurements = _bit_table_measurements(workload, self.blocks_, cells, sigma)
            self._fit_generator(measurements, source)
        else:
            self._fit_candidates(workload, coords, source)
        inv = self._attribute_invariants()
        if inv is not None:
            # C · release = C · y (exact up to the projection's rounding)
            C = plan.invariants
            values = C @ cells
            tables, pos = {}, 0
            for S in inv.sets:
                tables[S] = values[pos : pos + 2 ** len(S)]
                pos += 2 ** len(S)
            self._set_invariant_tables(inv, tables)
        else:
            self._invariant_tables = None

    def _fit_residual(self, U, plan, source):
        """Release the attribute-level residuals with optimal Gaussian noise.

        See :mod:`skdp_synth.attribute_workload` for the residual basis, the
        per-record sensitivity ``s_A`` and ResidualPlanner's variances. Like
        every mechanism here, the noise is added to the whitened true values
        (``z_A / τ_A``, ℓ2-sensitivity verified ``<= 1`` by the plan, before
        any data is read) by
        :meth:`~skdp_synth.mechanisms.NoiseSource.gaussian`; the rest is
        post-processing.
        """
        W, c, tau = plan.workload, plan.noise_sigma, plan.residual_scales
        sel = plan.selection or {"rule": "none"}
        if sel["rule"] != "none":
            self._fit_selected(U, plan, source)
            return

        # ---- the only steps that read the data: the counts of the maximal
        # tables (_stats.attribute_statistic), in memory or summed over chunks
        with stage("counting (one pass over the data)"):
            stat = reduce_rows(U, attribute_statistic, W, self.blocks_)
        z = W.residuals(attribute_tables_from(stat, W))
        t = W.whiten(z, tau)
        t_noisy = source.gaussian(t, c)
        inv = plan.invariants
        exact = set() if inv is None else set(inv.closure()) & set(W.subsets)
        # the invariants (Gao2022 Def. 2), published exactly: under the
        # projection framework their noise, drawn above, is projected away
        # (Theorem 10: A x + Π_N (M(x) - A x), Π_N zeroes the exact residual
        # coordinates); under the extension framework they drew none
        z_exact = {A: z[A] for A in exact}
        del stat, z, t
        # ---- post-processing from here on (replace-one: the total n is public)
        if exact and self.framework == "projection":
            tau = tau * np.array([A not in exact for A in W.subsets])
        released = W.unwhiten(t_noisy, plan.residual_scales, total=plan.n_samples)
        released.update(z_exact)
        self._finish_residual(
            W, plan, c, tau, released, [], source, "none", exact=exact, inv=inv
        )

    def _finish_residual(
        self, W, plan, c, tau, released, extra, source, rule, exact=(), inv=None
    ):
        """Fitted attributes and the generator (post-processing).

        ``exact``: the residuals the invariants publish exactly (``inv``);
        never with selection (``_selection_plan``).
        """
        self.selection_ = rule
        names = [str(x) for x in self.blocks_.names]
        self.marginals_ = [tuple(names[j] for j in S) for S in W.tables]
        if rule == "none":
            self.selection_shares_ = {"final": 1.0}
        self.workload_ = W
        self.noise_model_ = None
        self.decomposition_ = None
        self.sensitivity_ = plan.sensitivity
        self.residual_scales_ = c * tau
        if rule == "none":
            self.expected_error_ = plan.expected_error
            self.gaussian_optimal_error_ = plan.lower_bound
        else:
            self.expected_error_ = W.expected_error(tau, c)
            self.gaussian_optimal_error_ = None
        self._residuals = released
        self.released_ = W.all_tables(released)
        self.n_estimate_ = float(released[()][0])
        measurements = list(extra) + [
            Measurement(A, W.residual_matrix(A), released[A], c * tau[i])
            for i, A in enumerate(W.subsets)
            if A and tau[i] > 0
        ]
        exact_measurements = []
        if exact:
            # exact residuals steer the generator with the weight of its most
            # precise measurement, but not below half a row of its model table
            # (the model's integer rows cannot match closer; a smaller scale
            # would let that rounding dominate its loss). The rows are made to
            # hold the invariants exactly by _hold_invariants.
            n_model = float(self._model_table_rows())
            sharp = max(
                float(np.min(c * tau[tau > 0])), 0.5 * self.n_estimate_ / n_model
            )
            exact_measurements = [
                Measurement(A, W.residual_matrix(A), released[A], sharp)
                for A in W.subsets
                if A in exact and A
            ]
        self.shrinkage_factors_ = {}
        t = None if self.target is None else self._attribute_index(self.target)
        keep = [] if t is None else [t]
        shrink_triples = False
        # the gate reads the noise of the tables shrunk towards independence:
        # with ``target``, the target's triples (many cells) would otherwise
        # lift the mean past the threshold and switch the pairs' shrinkage
        # off (SHRINKAGE_MAX_NOISE_TV's note, round ten)
        if (
            rule == "none"
            and self.shrinkage is not None
            and W.n_attributes >= SHRINKAGE_MIN_ATTRIBUTES
            and self._noise_tv(W, tau, c, self.n_estimate_, without=t)
            <= SHRINKAGE_MAX_NOISE_TV
        ):
            # every table measured: the weak interactions are pulled towards
            # what the other measurements imply ("james-stein", cross-fitted)
            # or towards independence (skdp_synth.shrinkage; post-processing).
            # The generator's input only: released_ keeps the unbiased
            # answers. Exact (invariant) residuals are never shrunk, but they
            # centre the others (an invariant 1-way table has no noisy
            # measurement).
            if self.shrinkage == "james-stein-independence":
                measurements, factors = shrink_interactions(
                    measurements,
                    self.blocks_.n_levels,
                    self.n_estimate_,
                    keep=keep,
                    context=[m for m in exact_measurements if len(m.attributes) == 1],
                )
            else:
                measurements, factors = self._shrink_cross_fitted(
                    measurements, exact_measurements, W, t, source
                )
            self.shrinkage_factors_ = {
                tuple(names[j] for j in A): f for A, f in factors.items()
            }
            shrink_triples = t is not None
        # every noisy measurement of a 1-way residual (the selection rounds'
        # and the final plan's): _drop_unsupported_level combines them
        self._one_way_residuals = {}
        for m in measurements:
            if len(m.attributes) == 1:
                self._one_way_residuals.setdefault(m.attributes[0], []).append(
                    (np.asarray(m.values, dtype=np.float64), float(m.sigma))
                )
        if shrink_triples:
            measurements = self._shrink_target_triples(
                measurements, exact_measurements, W, t, source
            )
        measurements += exact_measurements
        self._fit_generator(measurements, source)
        self._set_invariant_tables(
            inv,
            {S: W.reconstruct(released, S) for S in ([] if inv is None else inv.sets)},
        )

    def _shrink_cross_fitted(self, noisy, exact, W, t, source):
        """Each interaction residual shrunk towards rows fitted without it.

        The noisy tables of two or more attributes without ``t`` (the ones
        ``"james-stein-independence"`` shrinks) are dealt, in the workload's
        order, into ``SHRINKAGE_FOLDS`` folds. For fold ``k`` the generator
        is fitted (``SHRINKAGE_CENTRE_SWEEPS`` sweeps when every shrunk
        table is a pair, to convergence otherwise) to every measurement
        outside the fold -- the other folds as measured, the 1-way tables,
        the total, the target's pairs and the exact residuals, but not the
        target's triples (fitted exactly they would carry their noise into
        the centre) -- and the fold's tables are shrunk towards what those
        rows imply (:func:`skdp_synth.shrinkage.shrink_towards_rows`). The
        centre of a table is a function of measurements whose noise is
        independent of its own (plus the generator's stream), so the
        James--Stein dominance holds conditionally on it, as for the
        target's triples (``doc/privacy.md``). Independence is the centre
        the rows fall back to where nothing else constrains a pair; where
        other pairs do (diamonds: the factors towards independence average
        .92 at ε = 0.3, towards the rows .64), weak residuals are weighed
        against what the neighbours imply. Costs ``SHRINKAGE_FOLDS`` short
        generator fits. Post-processing.

        Returns the measurements (same order, only the shrunk values
        changed) and ``{attributes: f_A}``.
        """

        def target_triple(A):
            return t is not None and len(A) >= 3 and t in A

        tables = [
            m.attributes
            for m in noisy
            if len(m.attributes) >= 2
            and (t is None or t not in m.attributes)
            and m.query is not None
            and m.values.size >= 3
        ]
        fold = {A: i % SHRINKAGE_FOLDS for i, A in enumerate(tables)}
        # short centre fits for pairs; 3-way centres need the full descent
        sweeps = SHRINKAGE_CENTRE_SWEEPS if all(len(A) == 2 for A in tables) else None
        out, factors = list(noisy), {}
        for k in range(min(SHRINKAGE_FOLDS, len(tables))):

            def select(A, k=k):
                return fold.get(A) == k

            others = [
                m
                for m in noisy
                if not select(m.attributes) and not target_triple(m.attributes)
            ] + list(exact)
            shrunk, f = self._shrink_towards_fit(
                noisy, others, W, select, source, sweeps, f"shrinkage fold {k + 1}"
            )
            out = [
                new if select(m.attributes) else old
                for m, new, old in zip(noisy, shrunk, out)
            ]
            factors.update(f)
        return out, factors

    def _shrink_towards_fit(self, noisy, others, W, select, source, sweeps, label):
        """The ``select``-ed measurements of ``noisy`` shrunk towards rows
        fitted to ``others`` (:func:`skdp_synth.shrinkage.shrink_towards_rows`).

        The centre's fit does not warn (the final fit does) and stops after
        ``sweeps`` sweeps (``None``: at convergence). Returns the
        measurements and ``{attributes: f_A}``. Post-processing.
        """
        with stage(f"fitting the centre of {label}"):
            self._fit_generator(others, source, max_sweeps=sweeps, centre=True)
        return shrink_towards_rows(
            noisy, self._model_rows, W, self.n_estimate_, select=select
        )

    def _shrink_target_triples(self, noisy, exact, W, t, source):
        """The target's noisy 3-way residuals shrunk towards the pairs' rows.

        The generator is first fitted to every other measurement (the
        pairs, 1-way tables, total and exact residuals); each noisy table of
        three or more attributes containing ``t`` is then shrunk towards
        what those rows imply (:func:`skdp_synth.shrinkage.shrink_towards_rows`)
        and the caller refits on everything. Measured (issue 21, round ten,
        ε = 0.3, 4 seeds, train-on-synthetic with ``target=``; fitted as
        measured -> shrunk towards 0 (2-3 seeds) -> towards the pairs'
        rows): diamonds cut .637 -> .648 -> .658, price .799 -> .803 ->
        .784; nass_cds seatbelt .675 -> .683 -> .699, dead .970 -> .966 ->
        .968. Costs one more generator fit. Post-processing.
        """
        names = self.blocks_.names

        def select(A):
            return len(A) >= 3 and t in A

        if not any(select(m.attributes) for m in noisy):
            return noisy
        others = [m for m in noisy if not select(m.attributes)] + list(exact)
        shrunk, factors = self._shrink_towards_fit(
            noisy, others, W, select, source, None, "the target's triples"
        )
        self.shrinkage_factors_.update(
            {tuple(names[j] for j in A): f for A, f in factors.items()}
        )
        return shrunk

    def _fit_selected(self, U, plan, source):
        """Selection, then ResidualPlanner's weighted noise on the chosen tables.

        Budget in Gaussian DP (:mod:`skdp_synth.selection`, ``doc/privacy.md``):
        the release is ``1/c``-GDP in every branch. ``"auto"`` first releases
        the noisy total with the all-tables plan's noise (share ``f_0``),
        decides from it, and either completes the all-tables plan (exactly
        the release without selection) or runs the rule on ``1 - f_0``.
        """
        W, c, tau = plan.workload, plan.noise_sigma, plan.residual_scales
        sel = plan.selection
        levels = self.blocks_.n_levels
        cand = sel["candidates"]
        public_n = plan.n_samples  # replace-one only
        needed = set(W.tables) | set(cand)
        needed |= {(j,) for j in range(len(levels)) if levels[j] >= 2}
        needed = sorted(needed, key=lambda S: (len(S), S))
        Wc = AttributeMarginalWorkload(
            levels, max(len(S) for S in needed), tables=needed
        )
        # ---- the only data access: exact counts of the candidate tables
        # (private; read below only through noisy measurements and the
        # exponential mechanism's scores)
        with stage("counting (one pass over the data)"):
            tables = attribute_tables_from(
                reduce_rows(U, attribute_statistic, Wc, self.blocks_), Wc
            )
        rule, left, totals = sel["rule"], 1.0, []
        shares = {}
        if rule == "auto":
            i0 = W.subsets.index(())
            f0 = sel["count_share"]
            z = W.residuals({S: tables[S] for S in W.tables})
            t = W.whiten(z, tau)
            # the all-tables plan's noise, drawn as without selection (one
            # call, the same stream); only the noisy total z_∅ (coordinate 0)
            # is read before the decision, and with selection the other
            # coordinates are discarded unread (never released)
            t_noisy = source.gaussian(t, c)
            n_noisy = float(t_noisy[0] * tau[i0])
            totals.append((n_noisy, float(c * tau[i0]) ** 2))
            rule = self._auto_rule(W, tau, c, n_noisy)
            if rule == "none":
                released = W.unwhiten(t_noisy, tau, total=None)
                del tables, z, t
                self._finish_residual(W, plan, c, tau, released, [], source, "none")
                return
            del z, t, t_noisy
            shares["count"] = f0
            left -= f0
        n_now = sel.get("public_n")
        if n_now is None and totals:
            n_now = totals[0][0]
        split = sel["shares"].get(rule, {})
        if rule == "mst" and sel.get("trim"):
            # auto's MST: a tree of which fewer than half the edges are worth
            # their noise is not worth 2/3 of the budget (one-way instead)
            K, _ = mst_edge_budget(
                levels,
                cand,
                left * split["final"],
                c,
                self.neighbouring,
                n_now,
                AUTO_EDGE_THRESHOLD,
            )
            informative = int(np.sum(np.asarray(levels) >= 2))
            if K < (informative - 1) / 2:
                rule = "one-way"
        if rule == "one-way":
            # the whole budget on the 1-way tables and, with ``target``, on
            # its pairs that are worth their noise (a public choice: no
            # selection step)
            res = SelectionResult("one-way", totals=list(totals))
            if self.target is not None:
                t = self._attribute_index(self.target)
                star = [r for r in cand if len(r) == 2 and t in r]
                res.chosen = star  # an explicit "one-way": every one of them
                if sel.get("trim"):
                    _, res.chosen = mst_edge_budget(
                        levels,
                        star,
                        left,
                        c,
                        self.neighbouring,
                        n_now,
                        AUTO_EDGE_THRESHOLD,
                    )
        else:
            # the rule's own step: MST's tree selection or AIM's rounds
            select, step = (
                (select_mst, "select") if rule == "mst" else (select_aim, "rounds")
            )
            with stage(f"selection ({rule})"):
                res = select(
                    tables,
                    levels,
                    cand,
                    sel["candidate_weights"],
                    share_one=left * split["one_way"],
                    total=public_n,
                    totals=totals,
                    c=c,
                    neighbouring=self.neighbouring,
                    source=source,
                    **{"share_" + step: left * split[step]},
                )
        shares.update(
            {"selection_" + k: float(v) for k, v in res.spent.items() if v > 0}
        )
        final_share = left - sum(res.spent.values())
        weight = dict(zip(cand, sel["candidate_weights"]))
        chosen = sorted(set(res.chosen), key=lambda S: (len(S), S))
        chosen += [
            (j,)
            for j in range(len(levels))
            if levels[j] >= 2 and not any(j in S for S in chosen)
        ]
        Wf = AttributeMarginalWorkload(
            levels,
            max(len(S) for S in chosen),
            tables=chosen,
            weights=[weight.get(S, 1.0) for S in chosen],
        )
        released, scales, _ = measure(
            tables, Wf, final_share, c, self.neighbouring, source, public_n
        )
        del tables
        # ---- post-processing: the total from every noisy total released
        if public_n is None:
            i0 = Wf.subsets.index(())
            allt = res.totals + [(float(released[()][0]), float(scales[i0]) ** 2)]
            v = np.array([x for x, _ in allt])
            var = np.array([s for _, s in allt])
            released[()] = np.array([float(np.sum(v / var) / np.sum(1 / var))])
        shares["final"] = float(final_share)
        self.selection_shares_ = shares
        self._selection_result = res
        tau_f = scales / c  # noise c τ_f (share folded in)
        self._finish_residual(
            Wf, plan, c, tau_f, released, res.measurements, source, rule
        )

    @staticmethod
    def _guard_residual(sens):
        """The allocation's sensitivity must be a positive finite number."""
        if not (0.0 < sens < math.inf):  # pragma: no cover - defensive
            raise RuntimeError(
                f"whitened sensitivity {sens} of the residual allocation is not a "
                "positive finite number; refusing to release"
            )

    def _fit_generator(self, measurements, source, max_sweeps=None, centre=False):
        """Fit the synthetic table to the released measurements (post-processing).

        :func:`skdp_synth.generator.fit_rows` sees only the noisy answers and
        their public noise scales. Its table has ``N`` rows
        (``max_model_rows``; ``"auto"``:
        :func:`~skdp_synth.generator.auto_model_rows` from the plan's public
        rule and the released total ``n̂``); ``sample(n)`` then rounds it to
        any ``n``. ``centre``: a shrinkage centre's fit, which does not
        warn (the final fit does); ``max_sweeps`` caps its descent.
        """
        n_hat = max(1, int(round(self.n_estimate_)))
        N = self._model_table_rows()
        if N < n_hat:
            # the same proportions on fewer rows: answers and noise scales
            # scale together, so the fit's objective (in noise variances) has
            # the same shape (``max_model_rows`` in the class docstring)
            scale = N / n_hat
            measurements = [
                Measurement(m.attributes, m.query, m.values * scale, m.sigma * scale)
                for m in measurements
            ]
        with stage("fitting the generator"):
            short = {} if max_sweeps is None else {"max_sweeps": max_sweeps}
            result = fit_rows(
                measurements,
                self.blocks_.n_levels,
                N,
                rng=source.rng,
                check_agreement=N >= n_hat,
                warn=not centre,
                **short,
            )
        self._model_rows = result.rows
        self.model_rows_ = int(N)
        self.generator_loss_ = result.loss
        self.candidates_ = None
        self.weights_ = None
        self.reweight_residual_ = None

    def _one_way_level_estimate(self, j, level):
        """``(T̂_j[level], σ_j)``: the release's estimate of one 1-way count and
        its noise standard deviation, or ``None`` (post-processing).

        ``T̂_j`` is rebuilt (:meth:`AttributeMarginalWorkload.reconstruct`)
        from the released total and the inverse-variance mean ``z̄_j`` of
        every noisy measurement of the residual ``z_j`` (the selection
        rounds' and the final plan's, :cite:`Xiao2023`). Its noise standard
        deviation is ``σ_j = sqrt(σ_∅²/L_j² + var(z̄_j)(1 - 1/L_j))``
        (:meth:`AttributeMarginalWorkload.cell_variance` for ``S = (j,)``;
        ``σ_∅`` is the plan's scale of the total, an upper bound where the
        total was averaged with earlier noisy totals). ``None`` for bit-level
        workloads and where ``z_j`` was not measured.
        """
        W = getattr(self, "workload_", None)
        found = getattr(self, "_one_way_residuals", {}).get(int(j))
        if not found or not isinstance(W, AttributeMarginalWorkload):
            return None
        j = int(j)
        prec = np.array([1.0 / s**2 for _, s in found])
        z_j = sum(p * z for p, (z, _) in zip(prec, found)) / prec.sum()
        var_j = 1.0 / prec.sum()
        var_0 = float(self.residual_scales_[W.subsets.index(())]) ** 2
        L = float(W.n_levels[j])
        table = W.reconstruct({(): self._residuals[()], (j,): z_j}, (j,))
        return float(table[int(level)]), math.sqrt(var_0 / L**2 + var_j * (1 - 1 / L))

    def _drop_unsupported_level(self, j, level):
        """Drop ``level`` of attribute ``j`` from the model's rows unless the
        release supports it (post-processing; no privacy cost).

        An encoder adds a level on a noisy count of its own (a learned missing
        level): with a true count of 0 it is added with a fixed probability,
        and the generator then gives it a few rows fitted to noise. The
        release measured the same level again, with its own share of the
        budget (:meth:`_one_way_level_estimate`). When ``T̂_j[level] < z σ_j``
        (``z = LEVEL_SUPPORT_Z``) the model's rows at that level move to
        levels of ``j`` drawn from the model's other rows, so ``sample``
        never returns it. A function of released values and public scales
        only. Returns whether the level was dropped; nothing is done (and
        ``False`` returned) for bit-level workloads, invariants, or a release
        without a generator table.
        """
        check_is_fitted(self)
        rows = getattr(self, "_model_rows", None)
        found = self._one_way_level_estimate(j, level)
        if rows is None or found is None or self.invariants is not None:
            return False
        j, level = int(j), int(level)
        estimate, sd = found
        if not estimate < LEVEL_SUPPORT_Z * sd:
            return False
        at = rows[:, j] == level
        if at.all():
            return False
        if at.any():
            rng = make_generator(self.random_state, stream=POST_FIT_STREAM)
            others = rows[~at, j]
            rows = rows.copy()
            rows[at, j] = others[rng.integers(0, others.size, size=int(at.sum()))]
            self._model_rows = rows
        return True

    def _model_table_rows(self):
        """``N``, the rows of the generator's table, from the released total
        ``n̂`` and the plan's public rule (``max_model_rows``)."""
        n_hat = max(1, int(round(self.n_estimate_)))
        if self.max_model_rows == "auto":
            plan = self._generator_plan
            if not self._every_pair_measured():
                # a pair no table measures is implied by the model's rows
                # alone: from N < n̂ rows it carries the sampling error of N
                # rows (Caravan, 86 columns, 1-way tables only: TV2 0.073 at
                # N = 423 against 0.063 at N = n̂; issue 21), so the table keeps
                # n̂ rows
                return n_hat
            if plan.model_rows_cell_sd is not None:
                return auto_model_rows(
                    n_hat,
                    plan.model_rows_cell_sd,
                    plan.model_rows_floor,
                    noise_rule=MODEL_ROWS_NOISE_RULE,
                )
            return n_hat
        if self.max_model_rows is not None:
            return min(n_hat, int(self.max_model_rows))
        return n_hat

    def _every_pair_measured(self):
        """Whether every pair of attributes (of >= 2 levels) lies in a
        released table (public: the plan's or the released choice's)."""
        W = getattr(self, "workload_", None)
        if not isinstance(W, AttributeMarginalWorkload):
            # bit-level workloads: the size rule as before
            return True
        tables = W.tables
        levels = np.asarray(self.blocks_.n_levels)
        live = [j for j in range(levels.size) if levels[j] >= 2]
        covered = set()
        for S in tables:
            covered.update(itertools.combinations(sorted(S), 2))
        return all(p in covered for p in itertools.combinations(live, 2))

    def _set_invariant_tables(self, inv, tables):
        """Keep the exact invariant tables (released values) for the rows.

        The released tables are counts computed exactly up to floating-point
        rounding of the residual transform (or of the projection); they are
        integers, so they are rounded to them -- after checking that the
        rounding is far below one count (it would reveal a bug, not data).
        """
        if inv is None:
            self._invariant_tables = None
            return
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
        self._invariant_tables = out

    def _hold_invariants(self, levels, n, rng):
        """Rows that hold the invariant tables (post-processing of the release).

        ``n`` = the invariant total: the tables exactly; other ``n``: the
        tables rounded to ``n`` rows within one count per cell
        (:func:`skdp_synth.invariants.rounded_tables`). The fewest attribute
        values are changed (:func:`skdp_synth.invariants.repair_rows`).
        """
        if getattr(self, "_invariant_tables", None) is None:
            return levels
        targets = rounded_tables(self._invariant_tables, n, self.blocks_.n_levels)
        return repair_rows(levels, targets, self.blocks_.n_levels, rng)

    # ---------------------------------------------------- least squares
    def _least_squares(self, W, plan, z_noisy):
        """:cite:`Nikolov2013` Algorithm 3: project the X-part onto
        ``n_rows X Xᵀ K``."""
        dec = plan.decomposition
        eps_n = self.epsilon * self.n_rows
        big = [i for i in range(dec.k) if dec.dims[i] >= eps_n]
        if not big:
            return z_noisy
        t = max(big) + 1
        wh = plan.noise.whitening
        if isinstance(wh, MaskWhitening):
            cols = np.flatnonzero(np.isin(W.degrees, np.concatenate(dec.pieces[:t])))
            Xb = np.eye(W.rank)[:, cols]
        else:
            m = int(np.sum(dec.dims[:t]))
            Xb = wh.T[:m].T
        G = W.universe_coords()
        H = self.n_rows * (Xb.T @ G)
        b = Xb.T @ z_noisy
        xhat = nearest_in_symmetric_hull(H, b)
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
            rows = self._hold_invariants(rows, n, source.rng)
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
    def query_index_(self) -> pd.MultiIndex:
        import pandas as pd

        check_is_fitted(self)
        if isinstance(self.workload_, AttributeMarginalWorkload):
            labels = self.workload_.query_labels(self.blocks_.names)
            return pd.MultiIndex.from_tuples(labels, names=["table", "cell"])
        labels = self.workload_.query_labels(self._feature_names())
        return pd.MultiIndex.from_tuples(labels, names=["table", "cell"])

    @property
    def released_series_(self) -> pd.Series:
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
        if not any(set(S) <= set(T) for T in W.tables):
            raise ValueError(
                f"the table {[names[j] for j in S]} was not measured (selection_="
                f"{getattr(self, 'selection_', 'none')!r}); measured: "
                f"{getattr(self, 'marginals_', None)}"
            )
        values = W.reconstruct(self._residuals, S).reshape(
            tuple(int(W.n_levels[j]) for j in S)
        )
        values = np.transpose(values, [S.index(j) for j in pos])
        idx = pd.MultiIndex.from_product(
            [range(int(W.n_levels[j])) for j in pos], names=[names[j] for j in pos]
        )
        return pd.Series(values.ravel(), index=idx, name="count")

    def marginal_table(self, columns: Sequence[int | str]) -> pd.Series:
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
    def to_release(self) -> Release:
        """The release: the noisy answers and the public plan (:cite:`Nikolov2013`,
        :cite:`Gao2022`).

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
        from ..release import release_from

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
            "d": int(self._fitted_param("d")),
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


def _with_one_way_tables(W):
    """``W`` with every 1-way table added at ``ONE_WAY_WEIGHT`` (public: the levels)."""
    ones = [(j,) for j in range(len(W.n_levels)) if W.n_levels[j] >= 2]
    tables = list(W.tables) + [S for S in ones if S not in W.tables]
    weights = list(W.weights) + [ONE_WAY_WEIGHT] * (len(tables) - len(W.tables))
    return AttributeMarginalWorkload(W.n_levels, W.d, tables=tables, weights=weights)


def _allocated_scales(W, plan_W, neighbouring, ext=()):
    """``(τ, sensitivity)`` of ``W``'s residuals under ``plan_W``'s allocation.

    ``plan_W`` holds ``W``'s tables and more (the same residuals plus some):
    its calibrated scales, indexed by ``W.subsets``; the sensitivity divided
    out is ``plan_W``'s, which on ``W`` is exactly 1 (same ``s_A``).
    """
    tau_p, sens = plan_W.calibrated_scales(neighbouring, ext)
    return np.array([tau_p[plan_W.subsets.index(A)] for A in W.subsets]), sens


def _check_table_cells(blocks, d):
    """Refuse, at plan time, attribute tables too large for the generator.

    The generator holds a dense ``cells x cells`` matrix per maximal table
    (:data:`~skdp_synth.generator.MAX_TABLE_CELLS`); the largest ``d``-way
    table is that of the ``d`` attributes with the most levels. The sizes
    are the declared domain's (public), so the check names the columns.
    """
    levels = [int(v) for v in blocks.n_levels]
    order = sorted(range(len(levels)), key=lambda j: -levels[j])[: int(d)]
    cells = math.prod(levels[j] for j in order)
    if cells > MAX_TABLE_CELLS:
        names = [blocks.names[j] for j in order]
        shown = " x ".join(
            f"{n!r} ({format_count(levels[j])} levels)" for n, j in zip(names, order)
        )
        raise ValueError(
            f"the {d}-way table of {shown} has {format_count(cells)} cells, more "
            f"than the {MAX_TABLE_CELLS} the generator can fit (checked before "
            f"the data is read). Declare fewer levels for {names[0]!r} (merge "
            "rare levels, or bin it), or lower d."
        )


# ========================================================== generator input
def _residual_cell_sd(W, scales):
    """Smallest noise standard deviation of one cell over the released tables.

    A cell of the table ``T_S`` rebuilt from the residuals has the variance
    ``Σ_{A⊆S} σ_A² Π_{j∈A}(1 - 1/L_j) Π_{j∈S∖A} 1/L_j²`` (σ_A = ``scales``;
    :meth:`AttributeMarginalWorkload.cell_variance`), the same for all cells
    of ``S``. Public (the noise scales and the levels).
    """
    sigma = dict(zip(W.subsets, np.asarray(scales, dtype=np.float64)))
    L = np.asarray(W.n_levels, dtype=np.float64)
    best = math.inf
    for S in W.tables:
        var = 0.0
        for k in range(len(S) + 1):
            for A in itertools.combinations(S, k):
                sa = sigma.get(A)
                if not sa:
                    continue
                inside = np.prod([1.0 - 1.0 / L[j] for j in A])
                outside = np.prod([1.0 / L[j] ** 2 for j in S if j not in A])
                var += sa**2 * inside * outside
        best = min(best, var)
    return math.sqrt(best) if math.isfinite(best) else 0.0


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
