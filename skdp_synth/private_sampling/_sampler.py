"""Private sampling: noiseless epsilon-DP synthetic Boolean data
(:cite:`Boedihardjo2022`).

Boedihardjo, Strohmer and Vershynin, *Private sampling: a noiseless approach
for generating differentially private synthetic data* (:cite:`Boedihardjo2022`),
Algorithm 2:

1. draw a *reduced space* ``S = (theta_1..theta_m)`` uniformly from
   ``{-1, 1}^p``, independently of the data;
2. form the Walsh matrix ``M[i, J] = w_J(theta_i) = prod_{j in J}
   theta_i(j)`` over all ``|J| <= d`` (``m x D``, ``D = sum_{i<=d} C(p, i)``)
   and accept ``S`` only if it is *well conditioned*,
   ``sigma_min(M) >= sqrt(m) / (2 e^d)`` (:cite:`Boedihardjo2022` §9, eq. 9.1);
3. compute the data's Walsh coefficients ``mu_J = (1/n) sum_a w_J(x_a)``
   (``mu_{emptyset} = 1``): ``M^T h = mu`` says that the density ``h`` on
   ``S`` has all the data's marginals up to degree ``d`` (:cite:`Boedihardjo2022` §4);
4. shrink toward the uniform density ``u = 1/m``: ``lam*`` is the smallest
   ``lam in [0, 1]`` such that ``M^T h = (1 - lam) mu + lam M^T u`` has a
   solution with ``2 delta/m <= h <= (Delta - delta)/m`` (an LP);
5. ``h* = argmin ||h - u||_2`` over ``M^T h = (1 - lam*) mu + lam* M^T u``,
   ``delta/m <= h <= Delta/m`` (a QP);
6. release ``k`` i.i.d. draws from ``S`` with probabilities ``h*``.

``delta`` and ``Delta`` here are the paper's *density bounds* -- nothing to do
with the ``delta`` of (epsilon, delta)-DP; the parameters are called
``density_lower`` and ``density_upper``. The mechanism adds no noise: its
privacy comes from the stability of ``h*`` (:cite:`Boedihardjo2022` Lemma 12.1) and the
private-sampling lemma (:cite:`Boedihardjo2022` Lemma 3.3), and its cost grows linearly
with the number of rows released -- see :func:`sampling_epsilon` and the privacy
section of :class:`PrivateSampler`.

Where the pieces live
---------------------
This module holds the estimator. Its privacy cost (:cite:`Boedihardjo2022` Lemma
12.1, Theorem 12.2: :func:`density_sensitivity`, :func:`sampling_epsilon`,
:func:`max_draws`) is in :mod:`skdp_synth.private_sampling._accounting`.
Steps 4-5 -- the shrinkage LP and the proximal QP, their solver dispatch
and thread limits -- and :func:`marginal_correction`, which
reuses them, live with the other reweighting code in
:mod:`skdp_synth.correction` (re-exported here); the Walsh matrix and its
memory limit in :mod:`skdp_synth.fourier`.

Walsh helpers
-------------
The public Walsh helpers (:func:`walsh_matrix`, :func:`walsh_coefficients`,
:func:`walsh_to_marginals`, :func:`marginals_to_walsh`, :func:`walsh_subsets`,
:func:`walsh_dimension`) are those of :mod:`skdp_synth.fourier`, with its one
sign convention ``χ_J(x) = Π_{j∈J} (1 - 2x_j)`` (``0 -> +1``), shared with
:mod:`skdp_synth.workloads`.

Internally the solver works on the mirrored signs ``s = 2x - 1`` (``1 ->
+1``), i.e. on ``w_J = (-1)^{|J|} χ_J`` -- the paper's notation above. Both
the Walsh matrix and the coefficient vector pick up the same diagonal factor
``(-1)^{|J|}`` (:func:`~skdp_synth.fourier.degree_signs`), so the constraint
``M^T h = mu`` and every solution are the same; converting at this boundary
keeps the sampler's results bit for bit what they were.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._chunked import reduce_rows
from .._sklearn_compat import Interval, StrOptions, _fit_context
from .._ssn import Gram
from .._stats import walsh_sums
from ..base import SAMPLE_STREAM, PrivateSynthesizerMixin
from ..correction import MarginalCorrection, marginal_correction, shrink_and_project
from ..exceptions import BudgetError, InfeasibleProblemError
from ..fourier import (
    MAX_WALSH_BYTES,
    check_walsh_memory,
    degree_signs,
    marginals_to_walsh,
    sign_products,
    walsh_coefficients,
    walsh_dimension,
    walsh_matrix,
    walsh_subsets,
    walsh_to_marginals,
)
from ..mechanisms import NoiseSource
from ..plan import SamplerPlan
from ..privacy import (
    REPLACE_ONE,
    not_private,
    warn_if_large_epsilon,
)
from ..validation import check_degree, format_count
from ._accounting import (
    _check_density_bounds,
    _draws_guarantee,
    _epsilon_per_draw,
    max_draws,
)

if TYPE_CHECKING:
    from typing import Literal, Self

    from numpy.typing import ArrayLike

    from ..blocks import BlocksLike
    from ..privacy import BudgetAccountant
    from ..release import Release

__all__ = [
    "MAX_WALSH_BYTES",
    "MarginalCorrection",
    "PrivateSampler",
    "marginal_correction",
    "marginals_to_walsh",
    "walsh_coefficients",
    "walsh_dimension",
    "walsh_matrix",
    "walsh_subsets",
    "walsh_to_marginals",
]

#: Default reduced-space size ``m = ceil(DEFAULT_M_FACTOR * e^{2d} * D)``
#: (Boedihardjo2022 Theorem 3.5: ``m ~ e^{2d} D``). Proposition 9.3's sufficient
#: ``16 gamma^{-2} e^{2d} D`` is a worst-case bound; with the factor 1 the
#: well-conditioning test of step 2 passed on every draw we measured
#: (``benchmarks/bench_private_sampling.py``), and the privacy cost grows
#: like ``m^{3/4}``, so a smaller ``m`` is also the more private one.
DEFAULT_M_FACTOR = 1.0


def _check_rows_memory(k):
    """The paid rows are drawn at fit and kept: refuse sizes that cannot be."""
    need = 8.0 * k
    if need > MAX_WALSH_BYTES:
        raise MemoryError(
            f"k={k} paid rows are drawn at fit and kept, which needs "
            f"{need / 1024**3:.1f} GiB for their indices alone (limit "
            f"MAX_WALSH_BYTES = {MAX_WALSH_BYTES / 1024**3:.1f} GiB); lower k"
        )


# --------------------------------------------------------------- estimator
class PrivateSampler(PrivateSynthesizerMixin, BaseEstimator):
    """Noiseless epsilon-DP synthetic Boolean data by private sampling
    (:cite:`Boedihardjo2022`).

    Draws a data-independent reduced space ``S`` of ``m`` points of the cube,
    finds the density ``h*`` on ``S`` closest to uniform that has the data's
    marginals up to degree ``d`` (shrunk toward uniform just enough to be
    bounded in ``[delta/m, Delta/m]``), and releases rows drawn from ``S``
    with probabilities ``h*`` -- :cite:`Boedihardjo2022` Algorithm 2; the module
    docstring lists the steps.

    Privacy. Pure epsilon-DP under **replace-one** neighbours (:cite:`Boedihardjo2022`
    Definition 2.1: datasets of the same public size ``n`` differing in one row). The
    cost is *per released row*: ``eps(k) = k * eps_1`` with ``eps_1 = log
    min(1 + eta m/delta, Delta/delta)`` and ``eta`` the density sensitivity
    of :cite:`Boedihardjo2022` Lemma 12.1 (:func:`sampling_epsilon`,
    :func:`density_sensitivity`, ``doc/privacy.md``). ``fit`` pays for ``k`` rows (or
    for as many as a target ``epsilon`` allows) and records ``epsilon_``; ``sample`` and
    ``transform`` count the rows they release and refuse to release more
    than were paid for -- unless an ``accountant`` is given, which is then
    charged ``eps_1`` per extra row. **The guarantee is vacuous at realistic
    sizes**: with the default bounds and ``m``, one row costs less than
    epsilon = 1 only from about ``n = 2e7`` records for ``p = 10, d = 1``,
    ``1e9`` for ``p = 64, d = 1`` and ``4e11`` for ``p = 20, d = 2``, and
    0.01 per row needs ``n ~ 7e11``, ``2e13`` and ``1e16`` (table in
    ``doc/privacy.md``); below that the cap ``log(Delta/delta) = 2.3``
    applies to every row.

    The release. ``fit`` draws the ``k`` rows paid for once and keeps them
    (:cite:`Boedihardjo2022` Algorithm 2 step 6); ``sample`` and ``transform`` hand them
    out (in turn without a seed, from the first with an integer seed) and every
    row they return is one of them, so ``epsilon_`` covers everything they
    return. ``to_release()`` gives those rows with the guarantee: that, not
    the fitted object, is what to publish. Pickling, ``copy`` and
    ``deepcopy`` keep the paid rows but not the exact density, so a copy can
    never draw (and pay for) rows again; ``clone`` shares the ``accountant``
    by identity.

    What is *not* private: the density ``h*`` and everything computed from
    it exactly (``density_``, ``shrinkage_``, ``shrinkage_lower_bound_``,
    ``solver_``) are kept as private state; reading the public names warns
    with :class:`~skdp_synth.exceptions.PrivacyLeakWarning`. ``score`` reads
    only the paid rows. A fit whose ``epsilon_`` exceeds
    :data:`~skdp_synth.privacy.LARGE_EPSILON` warns with
    :class:`~skdp_synth.exceptions.PrivacyBudgetWarning`.

    Parameters
    ----------
    m : int, default=None
        Size of the reduced space. ``None``: ``ceil(e^{2d} D)``
        (:cite:`Boedihardjo2022` Theorem 3.5, ``DEFAULT_M_FACTOR = 1``). Must be at
        least ``D``.
    d : int, default=2
        Degree of the marginals to preserve (``1 <= d <= p``).
    k : int, default=None
        Number of synthetic rows to pay for at fit (and the default size of
        ``sample()``). With ``epsilon`` also given, ``k`` must fit in it.
    epsilon : float, default=None
        Target budget; with ``k=None`` the estimator pays for the largest
        ``k`` it allows (an error when that is zero). One of ``k`` and
        ``epsilon`` is required.
    density_lower : float, default=0.25
        The paper's ``delta``: ``h* >= density_lower/m`` (and the shrinkage
        targets ``>= 2 density_lower/m``). Not the ``delta`` of
        (epsilon, delta)-DP.
    density_upper : float, default=2.5
        The paper's ``Delta``: ``h* <= density_upper/m``. The bounds must
        satisfy ``2 delta < 1 < Delta - delta``.
    max_redraws : int, default=10
        Reduced spaces failing the well-conditioning test
        ``sigma_min(M) >= sqrt(m)/(2 e^d)`` are redrawn (data-independently)
        up to this many times, then ``fit`` fails.
    solver : {"auto", "newton", "cvxpy"}, default="auto"
        How steps 4-5 are solved: ``"newton"`` (matrix-free semismooth Newton
        on the duals, ``skdp_synth._ssn``; ``m D`` memory, seconds for ``m`` in
        the tens of thousands), ``"cvxpy"`` (HiGHS for the LP, Clarabel via
        :func:`skdp_synth.correction.reweight_to_targets` for the QP; exact
        but ~10 s already at ``m D ~ 2.4e6``), ``"auto"`` (Newton, falling
        back to cvxpy if it does not converge).
    tol : float, default=1e-9
        Accuracy of the marginal constraints (Walsh coefficients) and of the
        shrinkage ``lam*``. The privacy analysis assumes exact solutions; the
        solvers deliver them up to ``tol``.
    blocks : "auto", None, Blocks or list, default="auto"
        %(blocks)s
        The reduced space stays uniform on the whole cube: restricted to
        valid rows, a one-hot block's bits sum to 1, so the Walsh matrix
        would have linearly dependent columns and fail the conditioning test
        of :cite:`Boedihardjo2022` §9 on every draw. Instead, each *released* row is
        repaired (:meth:`Blocks.repair <skdp_synth.blocks.Blocks.repair>`: valid
        blocks unchanged, each invalid block redrawn from its bits read as
        fractions, e.g. one of the ones of a one-hot block uniformly). The
        repair reads only the released row and fresh randomness, so it is
        post-processing and costs no privacy; it changes the rows'
        marginals, and ``score`` still reads the unrepaired density.
    accountant : BudgetAccountant, default=None
        Checked before and charged after ``fit``; charged again for every row
        sampled beyond those paid for at fit.
    random_state : None, int, RandomState or Generator, default=None
        Reduced space (fit) and draws (sample). ``None``: fresh OS entropy.

    Attributes
    ----------
    plan_ : SamplerPlan
        Everything fixed before the data was read (:mod:`skdp_synth.plan`):
        ``m``, ``D``, the price of one row, the rows paid for and the
        guarantee (updated when extra rows are charged).
        Public: a function of the parameters and sizes only.
    reduced_space_ : ndarray of shape (m, ``n_features_in_``)
        The points ``theta_i`` of ``S``, as 0/1 rows.
    density_ : ndarray of shape (m,)
        ``h*``: the probabilities with which rows are drawn. **Not private**:
        reading it warns (``PrivacyLeakWarning``); absent on copies.
    shrinkage_ : float
        ``lam*`` used (0: the data's marginals are matched exactly). Not
        private: reading it warns.
    shrinkage_lower_bound_ : float
        Certified lower bound on the exact ``lam*`` (equal to ``shrinkage_``
        for the cvxpy solver); the gap is the solver's tolerance. Not
        private: reading it warns.
    condition_number_ : float
        ``sigma_max(M) / sigma_min(M)`` of the accepted reduced space.
    min_singular_value_ : float
        ``sigma_min(M) / sqrt(m)`` (the test needs ``>= 1/(2 e^d)``).
    n_redraws_ : int
        Reduced spaces rejected before the accepted one.
    m_ : int
        Size of the reduced space.
    n_walsh_ : int
        ``D``, the number of Walsh functions (marginal constraints).
    epsilon_per_draw_ : float
        ``eps_1``, the cost of one released row.
    n_draws_paid_ : int
        Rows paid for so far (at fit, plus extra rows charged to the
        accountant).
    n_draws_released_ : int
        Rows released so far by ``sample`` and ``transform``.
    epsilon_, delta_, neighbouring_, privacy_guarantee_
        What was spent: ``epsilon_ = n_draws_paid_ * epsilon_per_draw_``,
        ``delta_ = 0``, ``"replace-one"``.
    solver_ : str
        The solver used (``"auto"`` falls back depending on the data: not
        private, reading it warns).
    blocks_ : Blocks
        The blocks used (see ``blocks``).

    References
    ----------
    :cite:`Boedihardjo2022`: private sampling (Algorithm 2), the density
    sensitivity (Lemma 12.1) and the size of the reduced space
    (Theorem 3.5).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp_synth import PrivateSampler
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((2000, 6)) < 0.5).astype(int)
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     ps = PrivateSampler(d=2, k=100, random_state=0).fit(X)
    ...     shrinkage = ps.shrinkage_             # exact, not private: warns
    >>> sorted({w.category.__name__ for w in caught})
    ['PrivacyBudgetWarning', 'PrivacyLeakWarning']
    >>> ps.m_, ps.n_walsh_, shrinkage
    (1202, 22, 0.0)
    >>> Y = ps.sample()                       # the 100 rows paid for
    >>> Y.shape
    (100, 6)
    >>> round(ps.epsilon_, 1)                 # honest, and far from private
    230.3
    >>> ps.sample(1)
    Traceback (most recent call last):
    ...
    skdp_synth.exceptions.BudgetError: releasing 1 more rows needs epsilon=...
    >>> ps.to_release().arrays["rows"].shape  # what may be published
    (100, 6)
    """

    _fixed_domain = "boolean"
    _supports_chunked = True  # reads the data through reduce_rows only
    #: the released rows are NumPy draws from h*: never ``hardened_noise``
    _hardened_mechanism = False

    _parameter_constraints = {
        "m": [Interval(Integral, 1, None, closed="left"), None],
        "d": [Interval(Integral, 1, None, closed="left")],
        "k": [Interval(Integral, 1, None, closed="left"), None],
        "epsilon": [Interval(Real, 0, np.inf, closed="neither"), None],
        "density_lower": [Interval(Real, 0, 0.5, closed="neither")],
        "density_upper": [Interval(Real, 1, np.inf, closed="neither")],
        "max_redraws": [Interval(Integral, 0, None, closed="left")],
        "solver": [StrOptions({"auto", "newton", "cvxpy"})],
        "tol": [Interval(Real, 0, 1e-3, closed="neither")],
    }

    def __init__(
        self,
        *,
        m: int | None = None,
        d: int = 2,
        k: int | None = None,
        epsilon: float | None = None,
        density_lower: float = 0.25,
        density_upper: float = 2.5,
        max_redraws: int = 10,
        solver: Literal["auto", "newton", "cvxpy"] = "auto",
        tol: float = 1e-9,
        blocks: Literal["auto"] | BlocksLike | None = "auto",
        accountant: BudgetAccountant | None = None,
        random_state: int | np.random.RandomState | np.random.Generator | None = None,
    ) -> None:
        self.m = m
        self.d = d
        self.k = k
        self.epsilon = epsilon
        self.density_lower = density_lower
        self.density_upper = density_upper
        self.max_redraws = max_redraws
        self.solver = solver
        self.tol = tol
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
        """Fit the private density from ``X`` (0/1 rows) and draw the paid rows.

        Parameters
        ----------
        X : array-like, DataFrame or Dask collection of shape (n_rows, n_features)
            Training rows, or the *distinct* rows of a contingency table when
            ``sample_weight`` gives their counts.
        y : None
            Ignored.
        blocks : None, Blocks or list, default=None
            Categorical blocks handed over by a pipeline (public).
        sample_weight : array-like of shape (n_rows,), default=None
            Counts (non-negative integers): row ``i`` stands for that many
            records. The Walsh sums are the expanded table's
            (:func:`skdp_synth._stats.walsh_sums`, the same integers), so the
            result is the expanded fit's for the same ``random_state``; ``n``
            is the total count (public: replace-one).

        Returns
        -------
        self : PrivateSampler
        """
        return self._fit_validated(X, blocks, sample_weight)

    # ------------------------------------------------------------ privacy
    def _resolve_sizes(self, p):
        """``(m, D)`` from the parameters and the public ``p``; data-independent."""
        check_degree(self.d, p, hint="; marginals of degree d need at least d columns")
        D = walsh_dimension(p, self.d)
        check_walsh_memory(D, D)  # m >= D: refuses a huge D before any float
        if self.m is None:
            m = math.ceil(DEFAULT_M_FACTOR * math.exp(2 * self.d) * D)
        else:
            m = int(self.m)
            if m < D:
                raise ValueError(
                    f"m={m} is smaller than the number of Walsh functions "
                    f"D={format_count(D)} for p={p}, d={self.d}: M cannot have full "
                    "column rank, so no "
                    "reduced space is well conditioned. Use m >= D (default "
                    "ceil(e^{2d} D))."
                )
        check_walsh_memory(m, D)
        return m, D

    def _make_plan(self, n_samples, n_features):
        """Sizes and the price of a row (:cite:`Boedihardjo2022` Thm 12.2), before the
        data is read.

        ``n`` is public (replace-one neighbours): the price of one row,
        :func:`sampling_epsilon`, depends on ``(n, p, d, m)`` and the density
        bounds only, and the number of rows ``k`` is fixed here (``k`` given,
        or the most that ``epsilon`` pays for).
        """
        n, p = n_samples, n_features
        dl, du = _check_density_bounds(self.density_lower, self.density_upper)
        m, D = self._resolve_sizes(p)
        per = _epsilon_per_draw(n, p, self.d, m, dl, du)
        if self.k is None and self.epsilon is None:
            raise ValueError(
                "PrivateSampler needs k (the number of synthetic rows to pay for) "
                "or epsilon (a target budget); its privacy cost is per released "
                f"row: here each row costs epsilon={per:.4g}"
            )
        if self.k is None:
            k = max_draws(self.epsilon, n, p, self.d, m, dl, du)
            if k == 0:
                raise ValueError(
                    f"epsilon={self.epsilon:g} does not pay for a single row: one "
                    f"released row costs epsilon={per:.4g} with n={n}, p={p}, "
                    f"d={self.d}, m={m} (Boedihardjo2022 Theorem 12.2; see "
                    "doc/privacy.md)"
                )
        else:
            k = int(self.k)
            if self.epsilon is not None and k * per > self.epsilon:
                allowed = max_draws(self.epsilon, n, p, self.d, m, dl, du)
                raise ValueError(
                    f"k={k} rows cost epsilon={k * per:.4g} > epsilon="
                    f"{self.epsilon:g}, which allows at most {allowed} rows "
                    f"(each costs {per:.4g})"
                )
        _check_rows_memory(k)
        return SamplerPlan(
            n_samples=n,
            n_features=p,
            guarantee=_draws_guarantee(k, per),
            d=int(self.d),
            m=m,
            n_walsh=D,
            density_lower=dl,
            density_upper=du,
            condition_threshold=1.0 / (2.0 * math.exp(self.d)),  # Boedihardjo2022 eq.
            # (9.1)
            epsilon_per_draw=per,
            n_draws=k,
        )

    # ---------------------------------------------------------------- fit
    def _fit(self, U, plan, source):
        m, D, k = plan.m, plan.n_walsh, plan.n_draws
        p, d = U.shape[1], plan.d
        dl, du = plan.density_lower, plan.density_upper
        rng = source.rng
        threshold = plan.condition_threshold  # sigma_min(M)/sqrt(m), Boedihardjo2022
        # eq. (9.1)
        # Step 3 (done first: the only data pass; it reads no randomness, so
        # the order changes no result, and the pass's memory is freed before
        # the m x D matrix A -- 0.7 GB at p = 50, d = 2 -- is allocated: the
        # peak is the larger of the two, not their sum): the data's Walsh
        # coefficients (U is 0/1), from the additive statistic walsh_sums, in
        # memory or summed over Dask chunks.
        mu = reduce_rows(U, walsh_sums, d) / U.shape[0]
        mu = mu * degree_signs(p, d)  # to mirrored signs
        A = np.empty((m, D))
        best, n_rejected = 0.0, 0
        for _ in range(self.max_redraws + 1):
            # Step 1-2: data-independent reduced space and its Walsh matrix.
            theta = rng.integers(0, 2, size=(m, p), dtype=np.int8)
            sign_products(2.0 * theta - 1.0, d, out=A)  # mirrored signs, see top
            A *= 1.0 / math.sqrt(m)
            gram = Gram(A)
            eig = np.linalg.eigvalsh(gram.matrix)
            smin = math.sqrt(max(eig[0], 0.0))
            best = max(best, smin)
            if smin >= threshold:
                break
            n_rejected += 1
        else:
            raise InfeasibleProblemError(
                f"no well-conditioned reduced space in {self.max_redraws + 1} "
                f"draws: sigma_min(M)/sqrt(m) reached {best:.3g} < 1/(2e^d) = "
                f"{threshold:.3g} (Boedihardjo2022 Algorithm 2, step 2). Increase m "
                f"(now {m}; D = {D}) or max_redraws."
            )
        # Steps 4-5.
        sol = shrink_and_project(
            A,
            gram,
            mu,
            (2 * dl, du - dl),
            (dl, du),
            solver=self.solver,
            tol=float(self.tol),
        )
        self.reduced_space_ = theta.astype(np.float64)
        # Exact functions of the data, not covered by epsilon: kept private
        # (the public names warn, see ``not_private``); ``_density`` is never
        # copied (``__getstate__``), so only this object can draw new rows.
        self._density = sol.weights
        self._shrinkage = sol.shrinkage
        self._shrinkage_lower_bound = sol.shrinkage_lower
        self._solver = sol.solver
        self.condition_number_ = math.sqrt(eig[-1] / eig[0])
        self.min_singular_value_ = smin
        self.n_redraws_ = n_rejected
        self.m_ = m
        self.n_walsh_ = D
        self.epsilon_per_draw_ = plan.epsilon_per_draw
        self.n_draws_paid_ = k
        self.n_draws_released_ = 0
        # the ledger that paid for the fit: extra rows are charged to it,
        # never to one swapped in by set_params after fit (a fresh ledger
        # must not lift the limit)
        self._fit_accountant = self.accountant
        # Boedihardjo2022 Algorithm 2 step 6, done once: the k rows paid for are drawn
        # now
        # (from the sample stream, so that they are the rows an integer seed
        # gave before) and are the release; ``sample`` hands them out.
        draws = NoiseSource(self.random_state, stream=SAMPLE_STREAM).rng
        self._paid_index = draws.choice(m, size=k, p=self._density)

    # ------------------------------------------------------------- sample
    def _default_n_samples(self):
        return self.n_draws_paid_

    def _charge_draws(self, n, rng):
        """Count ``n`` released rows; pay for the excess or refuse (Lemma 3.3).

        Rows beyond those held are new draws from ``h*``: they need the exact
        density (held only by the fitted object itself, never by a copy) and
        an accountant to charge; they join the held rows, which are the
        release.
        """
        extra = self.n_draws_released_ + n - self.n_draws_paid_
        if extra > 0:
            cost = extra * self.epsilon_per_draw_
            if self.accountant is None:
                raise BudgetError(
                    f"releasing {n} more rows needs epsilon={cost:.4g} beyond the "
                    f"{self.n_draws_paid_} rows paid for at fit "
                    f"({self.n_draws_released_} already released; each row costs "
                    f"{self.epsilon_per_draw_:.4g}). Refit with a larger k, or "
                    "pass an accountant to be charged."
                )
            if "_density" not in self.__dict__:
                raise BudgetError(
                    f"releasing {n} more rows needs {extra} new draws, but this "
                    "PrivateSampler is a copy (pickle, copy or deepcopy): copies "
                    f"hold only the {self.n_draws_paid_} rows already paid for, so "
                    "that a copy cannot spend the budget again. Draw more rows "
                    "from the fitted object itself."
                )
            paid_by = self.__dict__.get("_fit_accountant")
            if paid_by is not None and self.accountant is not paid_by:
                raise BudgetError(
                    "the accountant was replaced after fit: more rows are "
                    "charged to the ledger that paid for the fit, so that a "
                    "fresh ledger cannot lift its limit. Set it back, or refit "
                    "with the new accountant."
                )
            self.accountant.spend(
                cost, 0.0, REPLACE_ONE, mechanism=f"{type(self).__name__}.sample"
            )
            _check_rows_memory(self.n_draws_paid_ + extra)
            new = rng.choice(self.m_, size=extra, p=self._density)
            self._paid_index = np.concatenate([self._paid_index, new])
            self.n_draws_paid_ += extra
            guarantee = _draws_guarantee(self.n_draws_paid_, self.epsilon_per_draw_)
            self.plan_ = self.plan_.replace(
                n_draws=self.n_draws_paid_, guarantee=guarantee
            )
            self.epsilon_ = guarantee.epsilon
            self.privacy_guarantee_ = guarantee
            warn_if_large_epsilon(
                self.epsilon_,
                f"{type(self).__name__} after {self.n_draws_paid_} paid rows",
                stacklevel=5,
            )
        start = self.n_draws_released_
        self.n_draws_released_ += n
        return start

    def _sample_cube(self, n, source):
        check_is_fitted(self)
        start = self._charge_draws(n, source.rng)
        # Every row handed out is one of the rows paid for. Without a seed
        # they are handed out in turn (fresh rows on every call); with one,
        # a call starts again from the first (the same rows for the same
        # seed, as for every estimator), still counted.
        if not source.secure:
            start = 0
        rows = self.reduced_space_[self._paid_index[start : start + n]]
        if not self.blocks_.is_all_binary:
            # post-processing of the released rows (see the blocks parameter)
            rows = self.blocks_.repair(rows, source.rng).astype(np.float64)
        return rows

    def _lazy_parts(self, sizes, source):
        """The paid rows of each lazy chunk, charged now, once (as ``sample``).

        ``sample(n, chunks=...)`` releases the rows ``sample(n)`` would: the
        next ``n`` rows paid for (from the first with a seed), charging the
        accountant here, on the driver, for any beyond those paid, exactly
        as the eager call (:meth:`_charge_draws`); the chunks only read
        their slice of the paid rows. New paid rows are drawn from the
        driver's child stream, so they differ from the eager call's.
        """
        n = int(sum(sizes))
        start = self._charge_draws(n, source.rng)
        if not source.secure:
            start = 0
        index = self._paid_index[start : start + n]
        bounds = np.cumsum([0, *sizes])
        return [index[a:b].copy() for a, b in zip(bounds[:-1], bounds[1:])]

    def _lazy_chunk_cube(self, size, source, part):
        rows = self.reduced_space_[part]
        if not self.blocks_.is_all_binary:
            # post-processing of the released rows (see the blocks parameter)
            rows = self.blocks_.repair(rows, source.rng).astype(np.float64)
        return rows

    def _synthetic_distribution(self):
        # The released rows, equally weighted: scoring reads the release
        # only, never the exact density.
        rows = self.reduced_space_[self._paid_index]
        return rows, np.full(rows.shape[0], 1.0 / rows.shape[0])

    def __getstate__(self):
        # A copy keeps the rows already paid for but not the exact density:
        # it cannot draw (and charge) new rows, so pickling, copy and deepcopy
        # can never reset or duplicate the per-row budget.
        state = super().__getstate__()
        if "_density" in state:
            state = dict(state)
            del state["_density"]
        return state

    def to_release(self) -> Release:
        """The release: the rows paid for, with the guarantee that covers them.

        Holds ``rows`` (every row paid for: the ``k`` drawn at fit plus any
        extra rows charged to the accountant), the public plan (``d``, ``m``,
        the price of one row) and ``privacy_guarantee_``. Not the density
        ``h*``, nor anything else computed exactly from the data. See
        :class:`skdp_synth.release.Release`.
        """
        from ..release import release_from

        check_is_fitted(self)
        return release_from(
            self,
            {"rows": self.reduced_space_[self._paid_index]},
            {
                "sampler": "rows",
                "domain": "boolean",
                "d": self.plan_.d,
                "m": self.plan_.m,
                "epsilon_per_row": self.plan_.epsilon_per_draw,
                "n_rows": self.plan_.n_draws,
            },
        )

    # ----------------------------------------------------- not private
    density_ = not_private(
        "_density", "h*: exact function of the data (not private; warns)."
    )
    shrinkage_ = not_private(
        "_shrinkage", "lam*: exact function of the data (not private; warns)."
    )
    shrinkage_lower_bound_ = not_private(
        "_shrinkage_lower_bound", "Certified lower bound on lam* (not private)."
    )
    solver_ = not_private(
        "_solver", "Solver used; the auto fallback depends on the data (warns)."
    )
