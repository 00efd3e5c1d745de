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
import warnings
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import Interval, StrOptions, _fit_context
from ..base import POST_FIT_STREAM, PrivateSynthesizerMixin
from ..exceptions import IndependentColumnsWarning
from ..generator import controlled_rows
from ..mechanisms import make_generator
from ..mechanisms.additive import AdditiveNoise, distributed_privatize
from ..validation import user_stacklevel
from ..workloads import (
    AttributeMarginalWorkload,
    ExplicitWorkload,
    MarginalWorkload,
)
from ._generating import fit_model, generate, hold_invariants, move_level
from ._measuring import measure
from ._plan_choice import noise_tv, untargeted_noise_tv
from ._planning import make_plan, one_way_weighted, stage_plan
from ._reconstructing import (
    one_way_level_estimate,
    one_way_share_estimate,
    reconstruct,
)
from ._rules import DEFAULT_RULES
from ._values import ReleaseSpec

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

#: ``DEFAULT_RULES.level_support_z``, for the code that reads it by this name
#: (a copy: to change the rule, replace ``ProjectedGaussianRelease._rules``)
LEVEL_SUPPORT_Z = DEFAULT_RULES.level_support_z


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
        containing it is weighted ``ReleaseRules.target_weight`` (2) times, and with the
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
        the noisy total that every plan releases first -- the plan of least
        expected 2-way TV error (``gaussian_release._plan_choice.auto_rule``):
        ``"none"`` (every table; its expected noise per table times
        ``ReleaseRules.auto_none_factor``, 0.5, tuned on real tables,
        ``benchmarks/bench_suite.py --tune-none-models``), ``"aim"`` (on at most
        ``ReleaseRules.auto_aim_max_attributes`` = 24 attributes and never
        with ``target``: the pairs its rounds can afford at that ``ε n``,
        its 1-way tables at a smaller share), ``"mst"``, or ``"one-way"``
        (the 1-way tables only; with ``target``, also the target's pairs
        worth their noise, chosen by their dependences on the target,
        measured on ``ReleaseRules.auto_target_pair_share`` = 5 % of what
        the noisy total left, ``selection_shares_["target_pairs"]``); with
        ``target`` the all-tables estimate is the smaller of the plan's and
        that of the same release's all-pairs plan without the target (its
        3-way tables' cells would otherwise push the choice to MST's target
        star). Each
        estimate is a smooth function of ``ε``, ``n`` and the levels
        (``gaussian_release._plan_choice.auto_estimates``): no threshold on
        the noise (AIM's cap on the attributes is the only fixed boundary).
        Where the choice could depend on how strongly the columns depend on
        each other, ``"auto"`` first measures it (the mean pair's TV to the
        product of its margins, ``ReleaseRules.auto_dependence_share`` = 2 %
        of the budget, ``selection_shares_["dependence"]``; without
        ``target`` and with a noisy total only;
        ``doc/privacy/gaussian_release.md``, "The pairs' dependence").
        ``"one-way"``
        (explicitly): the 1-way tables and, with ``target``, every pair
        with the target, on the whole budget, data-independently -- a
        naive-Bayes-like model for the target, which where the predictors
        are not redundant beat MST's tree for train-on-synthetic scores
        (16 seeds, ε = 1: Wage R² .302 -> .318, credit AUC .769 -> .786)
        and where they are lost to it (diamonds' ``cut`` at ε = 0.1,
        accuracy .649 -> .578; ``benchmarks/README.md``), so ``"auto"``
        does not choose it for you. The same
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
        it is kept (factor near 1). ``"james-stein"``
        centres each table at rows fitted without it: the tables are dealt
        into ``ReleaseRules.shrinkage_folds`` (4) folds, and fold ``k`` is centred at a
        short generator fit to every measurement outside fold ``k``, so a
        weak pair is weighed against what its neighbours imply
        (cross-fitting; the centre's noise is independent of the table's).
        ``"james-stein-independence"`` centres every table at the
        independence of its attributes (without the centre fits; for
        reproducing the figures measured that way). The tables containing
        ``target`` are not shrunk that way: its pairs are fitted as
        measured, and its triples (their residual is the interaction beyond
        the pairs) are shrunk towards rows first fitted to every other
        measurement (:func:`skdp_synth.shrinkage.shrink_towards_rows`).
        Nothing is shrunk when the expected TV noise per table of the tables
        shrunk (with ``target``, those without it) exceeds
        ``ReleaseRules.shrinkage_max_noise_tv`` (0.1; on wide tables with little signal
        the 1-way tables that centre it are too noisy) or the table has
        fewer than ``ReleaseRules.shrinkage_min_attributes`` (8) attributes (few weak
        pairs to gain on; measured slightly worse on 3 and some 5 columns).
        Post-processing: ``released_`` keeps the unbiased answers and the
        guarantee is unchanged; the factors are in ``shrinkage_factors_``.
        Measured (4 seeds, TV2 of the rows): towards independence
        against ``None``, nass_cds ε = 0.3 -13 %, mpls_stops ε = 0.1 -6 %,
        ε = 1 unchanged; cross-fitted against independence, diamonds
        ε = 0.3 -6 %, mpls_stops ε = 0.1 -5 %, ε = 0.3 -2 %, nass_cds
        ε = 0.3 and every table at ε = 1 between -1 % and 0, at 1.5-2.5 s
        more per fit; with ``d = 3`` at ε = 1, TV2 / TV3 nass_cds -10 / -9 %,
        mpls_stops -5 / -5 %, at about 4 times the fit's seconds
        (``benchmarks/README.md``).
        ``None``: the release's residuals as measured (the behaviour before;
        the papers' least squares).
    structural_zeros : None or list of (attributes, mask), default=None
        Cells that no row can occupy, declared (public, never read from the
        data): ``attributes`` a tuple of names (or indices) of ``blocks_``,
        ``mask`` a boolean array of the shape of their table (levels in the
        order of ``blocks_``, e.g. an encoder's levels), true on the
        impossible cells. A :class:`~skdp_synth.SynthesisPipeline` fills it
        from its ``rules`` (:func:`skdp_synth.rules.impossible_cells`:
        ``Implies``, ``StructuralZero``, ``FixedCombinations``, an
        ``Inequality`` on binned columns). The generator (marginal
        workloads) fits its table under them
        (:func:`skdp_synth.generator.fit_rows`): the least-squares start's
        pair tables have those cells at 0, a penalty per broken zero is
        raised step by step after the descent, and the rows still broken
        are moved to the nearest feasible ones before a last descent that
        enters none, so the model's tables put exactly 0 mass there and the
        noise measured in them is not fitted. Post-processing of the noisy
        measurements: the plan, the noise and the guarantee are those of the
        same release without it, and ``released_`` keeps the unbiased
        answers. A mask that forbids every cell of its table is refused
        (``ValueError``) before the data is read. Explicit workloads ignore
        it.
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
        is large, coarsened the unmeasured 3-way tables and is off,
        ``ReleaseRules.model_rows_noise_rule``); the choice is recorded in
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
        ``"auto"``'s MST spends ``ReleaseRules.auto_mst_shares`` of the
        budget on its steps, an explicit ``"mst"`` the paper's thirds
        (``selection_shares_`` says which): to refit the same release, pass
        ``"auto"`` again, not ``selection_``.
    marginals_ : list of tuple of str
        The attribute tables measured with ResidualPlanner's noise at the end
        (all tables of the workload for ``"none"``), by name. Where auto's
        tree measured its pairs on groups of their columns' levels
        (``ReleaseRules.auto_mst_pair_kappa``) those pairs are listed too,
        but :meth:`marginal_table` answers only the tables ``workload_`` holds.
    selection_shares_ : dict
        Budget shares (of ``μ² = 1/c²``) spent by each step (``"count"``:
        ``"auto"``'s noisy total, ``"dependence"``: its measurement of the
        pairs' dependence, ``"target_pairs"``: with ``target``, its
        measurement of the target's pairs' dependences, ``"final"``: the
        measured tables, and the selection's own steps); they sum to at most
        1 (``doc/privacy.md``).
    shrinkage_factors_ : dict
        ``{table (names): f}``: the James--Stein factor by which each
        interaction residual's distance from its centre was multiplied
        before the generator fitted it (see
        ``shrinkage``; empty when nothing was shrunk; set by
        ``mechanism="residual"`` fits, like ``selection_``). Covered by the
        recorded guarantee: a function of the released residuals, their
        public scales and rows fitted to them (``doc/privacy.md``).
    structural_zeros_ : list of (tuple of int, ndarray of bool)
        ``structural_zeros`` resolved against ``blocks_`` (attribute
        indices sorted, the mask's axes in that order); empty without.
        Public: a parameter.
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

    #: the public tuning the stages read (:class:`~._rules.ReleaseRules`); a
    #: benchmark or test swaps in ``dataclasses.replace(DEFAULT_RULES, ...)``
    _rules = DEFAULT_RULES

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
        "structural_zeros": [None, list, tuple],
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
        structural_zeros: Sequence | None = None,
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
        self.structural_zeros = structural_zeros
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
    def _spec(self):
        """The parameters and ``blocks_`` as the stages read them."""
        return ReleaseSpec.of(self)

    def _make_plan(self, n_samples, n_features):
        """The planning stage: the whole noise model, calibrated and verified
        before the data is read (:func:`._planning.make_plan`)."""
        spec = self._spec()
        spec.zero_cells()  # refused before the data is read (public)
        return make_plan(spec, self._rules, n_samples, n_features)

    #: expected TV noise per table of a plan (:func:`._plan_choice.noise_tv`)
    _noise_tv = staticmethod(noise_tv)

    def _one_way_weighted(self, W, inv):
        """:func:`._planning.one_way_weighted` for these parameters."""
        return one_way_weighted(self._spec(), self._rules, W, inv)

    def _untargeted_noise_tv(self, W, c, n):
        """:func:`._plan_choice.untargeted_noise_tv` for these parameters."""
        default_pairs = self.workload is None and self.d == 2
        return untargeted_noise_tv(
            W, c, n, self._rules, self.neighbouring, self.target, default_pairs
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

    # --------------------------------------------------------------- fit
    def _fit(self, U, plan, source):
        """The stages after planning (:meth:`_make_plan`): the plan wrapped
        for them, the only step that reads ``U``, then post-processing of
        the noisy answers alone; each stage's value sets its attributes."""
        self.mechanism_ = plan.mechanism
        staged = stage_plan(plan, self._spec(), self._rules)
        self.structural_zeros_ = staged.spec.zero_cells()
        measured = measure(U, staged, source)
        if measured.selection is not None:
            self._selection_result = measured.selection
        # what selection="auto" measured of the pairs' dependence (covered by
        # the recorded guarantee: a Gaussian measurement at its share)
        self._auto_dependence = measured.dependence
        reconstruction = reconstruct(measured, staged, source, fit_model)
        self._set_fitted(reconstruction.fitted)
        self._fit_generator(reconstruction, source)
        self._warn_independent_columns()

    def _warn_independent_columns(self):
        """:class:`~skdp_synth.exceptions.IndependentColumnsWarning` where
        ``selection="auto"`` took the 1-way tables alone without ``target``
        (the choice is public: ``selection_``)."""
        if not (
            self.selection == "auto"
            and getattr(self, "selection_", None) == "one-way"
            and self.target is None
        ):
            return
        warnings.warn(
            'selection="auto" measured only the 1-way tables: at this epsilon '
            "and table size it expected pairs measured in their noise to cost "
            "more than the dependence they keep, so the synthetic columns are "
            "independent of one another and a model trained on the rows learns "
            "nothing from its features. If one will be, pass target= (the "
            'column it predicts; its pairs are measured); selection="mst" '
            "keeps a tree of pairs.",
            IndependentColumnsWarning,
            stacklevel=user_stacklevel(),
        )

    def _set_fitted(self, fitted):
        """Set the fitted attributes a stage determined (by name)."""
        for name, value in fitted.items():
            setattr(self, name, value)

    def _fit_generator(self, reconstruction, source):
        """The generating stage: the synthetic model of ``reconstruction``
        (:func:`._generating.generate`; post-processing)."""
        generated = generate(reconstruction, source)
        self._model_rows = generated.rows
        self._set_fitted(generated.fitted)
        self._invariant_tables = generated.invariant_tables

    def _one_way_released(self):
        """What the 1-way estimates read: the workload, the 1-way residuals'
        measurements, the residual scales and the released residuals."""
        return (
            getattr(self, "workload_", None),
            getattr(self, "_one_way_residuals", {}),
            getattr(self, "residual_scales_", None),
            getattr(self, "_residuals", None),
        )

    def _one_way_level_estimate(self, j, level):
        """``(T̂_j[level], σ_j)``: the release's estimate of one 1-way count
        and its noise standard deviation, or ``None``
        (:func:`._reconstructing.one_way_level_estimate`; post-processing)."""
        return one_way_level_estimate(*self._one_way_released(), j, level)

    def _total_estimate(self):
        """``(n̂, σ_∅)``: the released total and its noise standard deviation
        (the residual scale of ``∅``, public), or ``None`` where the release
        has no residuals (bit-level workloads). What a column without bits
        (one level, never missing) is measured by: all of its rows are the
        table's (``_pipeline_levels._reconcile_bitless``). Post-processing."""
        W, _, scales, residuals = self._one_way_released()
        if not isinstance(W, AttributeMarginalWorkload) or scales is None:
            return None
        if residuals is None or () not in W.subsets:
            return None
        sd = float(scales[W.subsets.index(())])
        return float(residuals[()][0]), sd

    def _one_way_share_estimate(self, j, level):
        """``(p̂, sd)``: the release's estimate of one level's share of the
        rows and its noise standard deviation, the total's noise included,
        or ``None`` (:func:`._reconstructing.one_way_share_estimate`;
        post-processing)."""
        return one_way_share_estimate(*self._one_way_released(), j, level)

    def _drop_unsupported_level(self, j, level, z=None, keep=()):
        """Drop ``level`` of attribute ``j`` from the model's rows unless the
        release supports it (post-processing; no privacy cost).

        An encoder adds a level on a noisy count of its own (a learned missing
        level): with a true count of 0 it is added with a fixed probability,
        and the generator then gives it a few rows fitted to noise. The
        release measured the same level again, with its own share of the
        budget (:meth:`_one_way_level_estimate`). When ``T̂_j[level] < z σ_j``
        (``z = ReleaseRules.level_support_z`` unless given) the model's rows
        at that level move to levels of ``j`` that the model's other rows hold,
        each taking the level of a row alike on ``j``'s neighbours in the plan
        (:meth:`_model_neighbours`, ``ReleaseRules.moved_row_donors``), so
        ``sample`` never returns it. A function of released values and public
        scales only. Returns whether the level was dropped; nothing is done
        (and ``False`` returned) for bit-level workloads, invariants, or a
        release without a generator table. ``keep``: levels of ``j`` the
        moved rows never go to (:func:`._generating.move_level`).
        """
        check_is_fitted(self)
        rows = getattr(self, "_model_rows", None)
        found = self._one_way_level_estimate(j, level)
        if rows is None or found is None or self.invariants is not None:
            return False
        j, level = int(j), int(level)
        estimate, sd = found
        z = self._rules.level_support_z if z is None else float(z)
        if not estimate < z * sd:
            return False
        rows = move_level(
            rows,
            j,
            level,
            lambda: make_generator(self.random_state, stream=POST_FIT_STREAM),
            zeros=getattr(self, "structural_zeros_", None),
            n_levels=self.blocks_.n_levels,
            keep=keep,
            neighbours=self._model_neighbours(j),
        )
        if rows is None:
            return False
        self._model_rows = rows
        return True

    def _model_neighbours(self, j):
        """The attributes that share a measured table or a structural zero
        with attribute ``j`` (public: the plan and the declared rules), in
        index order, or ``None`` under ``ReleaseRules.moved_row_donors =
        "any"``. The model's rows are fitted to the measured tables alone, so
        what they hold of ``j``'s dependence on the rest of the row runs
        through these attributes: a row moved off ``j``'s level takes its new
        level from rows alike on them (:func:`._generating.move_level`)."""
        donors = self._rules.moved_row_donors
        if donors not in ("neighbours", "any"):
            raise ValueError(
                f"moved_row_donors must be 'neighbours' or 'any', got {donors!r}"
            )
        if donors == "any":
            return None
        names = [str(name) for name in self.blocks_.names]
        tied = set()
        for table in getattr(self, "marginals_", None) or ():
            idx = [names.index(str(a)) for a in table]
            if j in idx:
                tied.update(idx)
        for attrs, _ in getattr(self, "structural_zeros_", None) or ():
            if j in attrs:
                tied.update(int(a) for a in attrs)
        tied.discard(j)
        return sorted(tied)

    # ---------------------------------------------------------- sampling
    def _sample_cube(self, n, source):
        if getattr(self, "_model_rows", None) is not None:
            rows = controlled_rows(self._model_rows, n, source.rng)
            rows = hold_invariants(
                rows,
                getattr(self, "_invariant_tables", None),
                n,
                self.blocks_.n_levels,
                source.rng,
            )
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
        S = tuple(sorted(pos))
        coarsened = {
            tuple(sorted(names.index(str(a)) for a in T))
            for T in getattr(self, "marginals_", None) or ()
        } - set(W.tables)
        if S in coarsened:
            raise ValueError(
                f"the table {[names[j] for j in S]} was measured on groups of its "
                "columns' levels (auto's tree, ReleaseRules.auto_mst_pair_kappa); "
                "marginal_table answers only the tables measured on every level: "
                f"{[tuple(names[j] for j in T) for T in W.tables]}"
            )
        if len(set(pos)) != len(pos) or not 1 <= len(pos) <= W.d:
            raise ValueError(
                f"need 1 to {W.d} distinct attributes of {names}, got {list(columns)}"
            )
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
