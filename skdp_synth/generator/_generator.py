"""From noisy marginal measurements to synthetic rows (post-processing only).

Every function here reads *released* statistics -- noisy linear measurements
of attribute-level marginal tables and their public noise scales -- and
never the private data (the signatures take no data; ``tests/test_generator``
checks this by construction). So whatever it returns costs no privacy beyond
the release it is given (post-processing, Dwork & Roth 2014, Prop. 2.1).

What it computes
----------------
Measurements ``y_m = Q_m T_{A_m} + e_m`` of marginal tables ``T_A`` of a
categorical table, with independent noise ``e_m ~ N(0, σ_m² I)``. The
maximum-likelihood synthetic table of ``N`` rows minimises the
noise-weighted squared loss (generalised least squares in the noise metric,
the objective of Private-PGM, McKenna, Sheldon & Miklau 2019)::

    loss(R) = Σ_m || Q_m T_{A_m}(R) - y_m ||² / σ_m²

over tables ``R`` of ``N`` *valid rows* (each attribute one of its levels).
Instead of a graphical model whose cliques would have to cover every measured
pair (with all 2-way tables measured the triangulated graph is complete and
the model is the full domain), the model here is the synthetic table itself:
``N`` integer rows, improved by exact local search.

* **Loss per clique.** Every measurement is folded into one *clique* (a
  maximal measured attribute set containing it) as a quadratic form of the
  clique's table ``T_S``: ``T_Sᵀ H_S T_S - 2 b_Sᵀ T_S + const`` with
  ``H_S = Σ M_mᵀ M_m / σ_m²``, ``b_S = Σ M_mᵀ y_m / σ_m²`` and ``M_m = Q_m``
  composed with the marginalisation ``T_S -> T_{A_m}``.
* **Moves.** Changing attribute ``j`` of one row moves it from cell ``o`` to
  cell ``c`` of every clique containing ``j``; the exact change of the loss
  is ``Σ_S g_S[c] - g_S[o] + H_S[c,c] + H_S[o,o] - 2 H_S[c,o]`` with
  ``g_S = 2(H_S T_S - b_S)``. For one attribute at a time the best level of
  every row is found at once (vectorised over rows); a fraction of the
  improving moves is applied, the loss is recomputed and the step is undone
  and halved if the loss did not decrease -- so the loss never increases.
* **Swaps.** When no single move helps, pairs of rows exchange the level
  of one attribute (which keeps its 1-way table), with the same exact
  gain and the same safeguard; the two kinds alternate until neither helps.
* **Start.** Rows drawn from a Chow--Liu tree over the pair tables implied
  by the measurements (least squares, clipped at 0), by controlled
  rounding, so the search starts from the strongest dependences.

The pieces live in sibling modules: the measurements folded into cliques
(:mod:`._cliques`, dense ``H_S``) or into Kronecker families
(:mod:`._kron`, the vectorised bookkeeping), the least-squares tables and
the Chow--Liu start (:mod:`._estimates`), and the rounding of the fitted
table into rows (:mod:`._rounding`). This module holds the measurement and
result types and the descent itself (:func:`fit_rows`).
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._progress import Ticker
from ._cliques import _build_cliques, _DenseState
from ._estimates import _tree_start
from ._kron import _all_coefficients, _build_kron, _KronState
from ._zeros import Zeros

__all__ = [
    "Measurement",
    "GeneratorResult",
    "fit_rows",
]

#: a sweep that lowers the loss by less than this fraction ends the descent
_REL_TOL = 1e-3
#: ... or by less than this many noise variances per measured value (changes
#: far below the noise: statistically invisible)
_NOISE_TOL = 0.01
#: tables up to this many rows try every pair of rows in the swap phase
_ALL_PAIRS_ROWS = 400
#: rows examined per attribute step of the descent (a random subset of a
#: larger model table; ``max(BATCH_ROWS, N // 16)``). Smaller steps move
#: fewer rows per sweep, so the descent ends, at the same 2-way fit, with more
#: of the start's (Chow--Liu tree) higher-order structure and in fewer row
#: evaluations. Measured against 16384 rows per step (4 seeds, default
#: release, model tables of 14k-43k rows): TV3 of the rows nass_cds
#: ε = 1 / 3 .0220 -> .0193 / .0166 -> .0133, mpls_stops .0264 -> .0224 /
#: .0189 -> .0170, diamonds .0512 -> .0468 / .0368 -> .0344; TV2 within
#: ±2 %; train-on-synthetic scores +.000 to +.009 (2 seeds, 6 targets);
#: fit + sample 35-64 % faster. 2048 was about as good on TV3 with a
#: slightly worse TV1; 8192 in between. Tables of at most BATCH_ROWS rows
#: are fitted as before (every all-tables release at ε = 0.3 on those
#: tables). Where selection leaves pairs unmeasured the model keeps n̂ rows
#: and AIM's rounds refitted 6,000 (``selection.AIM_MODEL_ROWS``, now
#: 4096): nass_cds ε = 0.1 (MST, 2 seeds) TV2 .0320
#: -> .0315; diamonds ε = 0.1 (AIM, 6 seeds) TV1 .0096 -> .0105, TV2 .0516
#: -> .0503, TV3 .1074 -> .1043 (each within about one standard error),
#: 6.5 s -> 4.9 s.
BATCH_ROWS = 4096

#: Structural zeros (``fit_rows(zeros=...)``): after the unconstrained
#: descent, each broken zero of a row costs ``λ`` in the objective, with
#: ``λ σ_min² = _PENALTY_START · _PENALTY_GROWTH^k`` for ``k = 0, 1, ...``
#: (``σ_min``: the smallest noise scale; moving one row changes a cell of
#: that measurement by one count, a loss change of about ``1/σ_min²``), at
#: most ``_PENALTY_SWEEPS`` sweeps each, until no row breaks one. Moves
#: under hard constraints alone cannot carry a row between feasible regions
#: one attribute at a time ("No" internet service and the six service
#: columns that follow it). Measured on the churn table
#: (``benchmarks/bench_structural_zeros.py``, ε = 1, seeds 0-2, mean TV of
#: the categorical columns' 2-way tables; repair after sampling alone
#: .01010): a repair of the fitted rows then the hard descent .01057 (its
#: loss 572 against 430 unconstrained, seed 2); the repair alone .01025;
#: penalty steps growing 3-fold, 30 sweeps each, .00943; 4-fold, 10 sweeps,
#: .00935 at about half the time (both with the shrinkage centres' fits
#: under the zeros too; without, as the release now fits them, .00949).
_PENALTY_START = 0.05
_PENALTY_GROWTH = 4.0
_PENALTY_STEPS = 10
_PENALTY_SWEEPS = 10


@dataclass(frozen=True)
class Measurement:
    """One released linear measurement of an attribute-level marginal table.

    Parameters
    ----------
    attributes : tuple of int
        The attribute set ``A`` (sorted); ``()`` measures the total count.
    query : ndarray of shape (k, cells) or None
        ``Q``: rows are linear functions of the flattened table ``T_A`` (C order
        over ``attributes``); ``None`` is the identity (the table itself).
    values : ndarray of shape (k,)
        The noisy answers ``y = Q T_A + e``.
    sigma : float
        Standard deviation of each entry of ``e`` (independent entries).
    """

    attributes: tuple
    query: object
    values: object
    sigma: float

    def __post_init__(self):
        object.__setattr__(self, "attributes", tuple(int(j) for j in self.attributes))
        if list(self.attributes) != sorted(set(self.attributes)):
            raise ValueError("measurement attributes must be sorted and distinct")
        values = np.asarray(self.values, dtype=np.float64).ravel()
        object.__setattr__(self, "values", values)
        if self.query is not None:
            Q = np.asarray(self.query, dtype=np.float64)
            if Q.ndim != 2 or Q.shape[0] != values.size:
                raise ValueError("query must have one row per value")
            object.__setattr__(self, "query", Q)
        if not (np.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError("sigma must be positive and finite")


@dataclass
class GeneratorResult:
    """The fitted synthetic table and how well it matches the measurements."""

    rows: np.ndarray  # (N, a) int level indices
    loss: float  # Σ_m ||Q_m T(R) - y_m||² / σ_m² at the end
    initial_loss: float
    n_measured: int  # number of measured values (excluding the total)
    sweeps: int


def _one_blas_thread(fit):
    """Run ``fit`` with one BLAS thread (threadpoolctl, restored afterwards,
    as :func:`skdp_synth.correction.shrink_and_project` does). The descent
    makes thousands of small array operations; after any BLAS call OpenBLAS's
    idle threads spin on the other cores, which costs CPU time and brings no
    speed: on 2 cores, a whole fit where auto runs AIM (29 and 43 fits of the
    generator) took 7.5 s of CPU in 4.7 s of wall time with two threads and
    5.1 s in 4.7 s with one on the ``flights`` table at ε = 1, 8.4 s in 7.0 s
    and 7.5 s in 7.1 s on ``baseball`` (seed 0, the same rows; ``python -m
    benchmarks.bench_suite``'s tables). One thread also keeps the rows
    independent of how many cores the machine has."""

    @functools.wraps(fit)
    def wrapped(*args, **kwargs):
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            return fit(*args, **kwargs)

    return wrapped


@_one_blas_thread
def fit_rows(
    measurements,
    n_levels,
    n_rows,
    *,
    rng,
    max_sweeps=300,
    batch=None,
    init=None,
    kicks=0,
    warn=True,
    vectorised=None,
    check_agreement=True,
    zeros=None,
    max_swap_sweeps=None,
):
    """The maximum-likelihood synthetic table of ``n_rows`` valid rows.

    Parameters
    ----------
    measurements : list of Measurement
        Released measurements (noisy answers and public noise scales).
    n_levels : sequence of int
        Levels of each attribute (public domain).
    n_rows : int
        Rows of the synthetic table (e.g. the released, noisy total).
    rng : numpy.random.Generator
        Randomness of the start and of the order of moves (post-processing).
    max_sweeps : int, default=300
        Passes over the attributes.
    batch : int, default=None
        Rows examined per attribute step (a random subset when ``N`` is
        larger); ``None``: ``max(BATCH_ROWS, N // 16)`` (``BATCH_ROWS``
        = 4096; every row for tables up to that size).
    init : ndarray of shape (n_rows, a), optional
        Start rows (level indices); default: rows drawn along a Chow--Liu
        tree of the estimated 2-way tables (:func:`_tree_start`).
    kicks : int, default=0
        Rounds of iterated local search after the descent: a few attributes
        of rows in over-filled cells are re-drawn, the descent is repeated
        and the better table kept (the loss never increases). Single moves
        and swaps can stall on a cycle of +-1 cells that only a coordinated
        change of three or more rows removes; kicks escape it. Useful for
        (near) noise-free tables; with noisy tables the loss is at the noise
        level long before and kicks change little.
    warn : bool, default=True
        Warn when the measurements disagree with each other far more than
        their noise explains (the fitted table's normalised loss exceeds the
        number of measured values by more than ``6 sqrt(2 k)``).
    check_agreement : bool, default=True
        Give the ``warn`` about tables that disagree. ``False`` when the
        measurements were scaled down to a table of fewer rows than they
        count (``max_model_rows``): the loss then also holds that table's own
        coarseness (a row is ``n̂/N`` counts), so its excess would not show
        that the released tables disagree.
    vectorised : bool or None, default=None
        ``None``: the vectorised bookkeeping (:class:`_KronState`: the cliques
        of one shape move together, ``H_S`` never formed) when every
        measurement allows it -- identity queries and ResidualPlanner's
        residuals do -- else the per-clique dense one. ``False``: the
        per-clique dense bookkeeping (as before; for comparison). ``True``:
        the vectorised one or an error. Both compute the same exact loss
        changes and take the same steps.
    zeros : list of (tuple of int, ndarray of bool), default=None
        Structural zeros (public): ``(attributes, mask)`` with ``mask`` of
        the attributes' table shape, true on the cells no row may occupy
        (:mod:`._zeros`). The start's pair tables have those cells at 0;
        after the descent, a penalty per broken zero is raised step by step
        (``_PENALTY_START``) until no row breaks one, the rows still broken
        are moved to the nearest feasible ones (:meth:`~._zeros.Zeros.make_feasible`)
        and the descent goes on with no move or swap entering an impossible
        cell: every returned row keeps them and the fitted tables put exactly
        0 on those cells. ``None`` or empty: the descent as before (the same
        steps, bit for bit).
    max_swap_sweeps : int or None, default=None
        At most this many sweeps of swaps in the whole fit; once they are
        spent, the descent stops where single moves stall. ``None``: no
        limit (a sweep of swaps whenever single moves stall, until one
        gains nothing). A refit whose rows are read for a choice rather than
        released (AIM's rounds, :func:`~skdp_synth.gaussian_release.select_aim`)
        needs less than the last descent, and its swap sweeps (with the
        single moves they set off) cost most of it: without them auto's AIM
        fits took 0.48 times the CPU on the TUNE half.

    Returns
    -------
    GeneratorResult
    """
    n_levels = np.asarray(n_levels, dtype=np.int64)
    a = n_levels.size
    N = int(n_rows)
    if N < 1:
        raise ValueError("n_rows must be >= 1")
    if max_swap_sweeps is not None and (
        isinstance(max_swap_sweeps, bool)
        or not isinstance(max_swap_sweeps, (int, np.integer))
        or max_swap_sweeps < 0
    ):
        raise ValueError(
            f"max_swap_sweeps must be None or an integer >= 0, got {max_swap_sweeps!r}"
        )
    n_measured = int(sum(m.values.size for m in measurements if m.attributes))
    betas = _all_coefficients(measurements, n_levels)
    families = None
    if betas is not None and vectorised is not False:
        families = _build_kron(measurements, n_levels, betas)
    if vectorised and families is None:
        raise ValueError(
            "vectorised=True needs every measurement's QᵀQ to be a sum of "
            "Kronecker products of identity and all-ones matrices"
        )
    if families is None:
        cliques, _ = _build_cliques(measurements, n_levels)
    if batch is None:
        batch = max(BATCH_ROWS, N // 16)
    zeros = Zeros(zeros or (), n_levels) if zeros else None
    if zeros is not None and not zeros:
        zeros = None
    if init is None:
        R = _tree_start(measurements, n_levels, N, rng, betas, zeros=zeros)
    else:
        R = np.array(init, dtype=np.int64, copy=True)
        if R.shape != (N, a):
            raise ValueError(f"init must have shape {(N, a)}")
    R = R.reshape(N, a)
    # the zeros the moves hold as hard constraints: none in the first
    # descent and the penalty steps (a row cannot cross between two feasible
    # regions one attribute at a time -- "No" internet service and the six
    # service columns that follow it), every one in the last descent
    active = [None]
    # the weight of a broken zero (per row) in the penalty phase's objective
    penalty = [0.0]

    if families is not None:
        state = _KronState(families, R)
    else:
        state = _DenseState(cliques, R)
    initial = state.loss()
    fraction = np.full((2, a), 0.5)

    def single_moves(j, L):
        """Best new level of each (sampled) row; returns rows, levels, gains."""
        rows = np.arange(N) if N <= batch else rng.choice(N, size=batch, replace=False)
        if active[0] is None and penalty[0] == 0:
            best, gain = state.best_moves(j, L, rows)
            return rows[:, None], best[:, None], gain
        delta = state.move_deltas(j, L, rows)
        if active[0] is not None:
            delta[active[0].forbidden(R, j, rows)] = np.inf
        elif penalty[0] > 0:
            c = zeros.counts(R, j, rows)
            delta += penalty[0] * (c - c[np.arange(rows.size), R[rows, j]][:, None])
        best = np.argmin(delta, axis=1)
        gain = delta[np.arange(rows.size), best]
        return rows[:, None], best[:, None], gain

    def swap_moves(j, L):
        """Exchange attribute ``j`` between two rows (keeps its 1-way table).

        Rows at level ``a`` that gain most from ``b`` are paired with rows at
        ``b`` that gain most from ``a``; the exact gain of each pair is then
        computed, and pairs sharing a row are dropped (best first).
        """
        if penalty[0] == 0 and state.swaps_cannot_gain(j):
            if N > max(batch, _ALL_PAIRS_ROWS):
                rng.choice(N, size=batch, replace=False)  # the same draws after
            return np.zeros((0, 2), np.int64), np.zeros((0, 2), np.int64), np.zeros(0)
        bound = state.swap_bound(j)
        if N <= _ALL_PAIRS_ROWS:  # small tables: every pair of rows
            r1, r2 = np.triu_indices(N, 1)
            keep = R[r1, j] != R[r2, j]
            r1, r2 = r1[keep], r2[keep]
            if bound is not None:
                delta = state.move_deltas(j, L, np.arange(N))
                keep = promising(delta[r1, R[r2, j]] + delta[r2, R[r1, j]], bound)
                r1, r2 = r1[keep], r2[keep]
            return swap_gains(j, r1, r2)
        rows = np.arange(N) if N <= batch else rng.choice(N, size=batch, replace=False)
        delta = state.move_deltas(j, L, rows)
        cur = R[rows, j]
        # each level's rows, ranked by their gain towards every other level
        # (column ``c``: the level's rows by ``delta[:, c]``, stable): one
        # sort per level instead of two per pair of levels (a column of
        # ~60 levels has ~1,800 pairs); the same pairs in the same order
        by_level = np.argsort(cur, kind="stable")  # each level's rows in order
        sizes = np.bincount(cur, minlength=L)
        if state.one_context(j):
            # every row of a level has the same changes (j is measured on
            # its own): a stable sort leaves the level's rows in order
            ranked = by_level[:, None]
        else:
            ranked = np.concatenate(
                [
                    g[np.argsort(delta[g], axis=0, kind="stable")]
                    for g in np.split(by_level, np.cumsum(sizes)[:-1])
                ]
            )
        at_lo, at_hi, lo, hi = _paired_ranks(ranked, sizes)
        if not lo.size:
            return np.zeros((0, 2), np.int64), np.zeros((0, 2), np.int64), np.zeros(0)
        if bound is not None:  # elementwise: one test for every level pair
            keep = promising(delta[at_lo, hi] + delta[at_hi, lo], bound)
            at_lo, at_hi = at_lo[keep], at_hi[keep]
        return swap_gains(j, rows[at_lo], rows[at_hi])

    def promising(singles, bound):
        """Pairs whose swap can gain: the swap's exact gain is the two single
        moves' gains plus an interaction of absolute value at most ``bound``
        (:meth:`_KronState.swap_bound`), so a pair with ``singles - bound``
        above the threshold cannot improve and would be dropped by
        ``swap_gains`` anyway (the kept pairs and their order are the same)."""
        return singles - bound * (1.0 + 1e-9) - 1e-9 < -1e-6

    def swap_gains(j, r1, r2):
        """Exact gains of the swaps ``(r1, r2)``; pairs sharing a row dropped."""
        if active[0] is not None and r1.size:
            ok = active[0].feasible_levels(R, r1, j, R[r2, j])
            ok &= active[0].feasible_levels(R, r2, j, R[r1, j])
            r1, r2 = r1[ok], r2[ok]
        lv1, lv2 = R[r1, j], R[r2, j]
        gain = state.swap_gains(j, r1, r2)
        if penalty[0] > 0 and r1.size:
            c1, c2 = zeros.counts(R, j, r1), zeros.counts(R, j, r2)
            at = np.arange(r1.size)
            gain = gain + penalty[0] * (
                c1[at, lv2] - c1[at, lv1] + c2[at, lv1] - c2[at, lv2]
            )
        order = np.flatnonzero(gain < -1e-6)
        order = order[np.argsort(gain[order], kind="stable")]
        keep = _greedy_disjoint(r1[order], r2[order], N)
        keep = order[keep]
        return (
            np.column_stack([r1[keep], r2[keep]]),
            np.column_stack([lv2[keep], lv1[keep]]),
            gain[keep],
        )

    def apply_best(kind, j, rows, levels, gain):
        """Apply the best fraction of improving moves if the exact loss decreases.

        The place for hard constraints (e.g. tables held exactly): a move or
        swap that breaks one would be filtered here, before the trial.
        """
        improving = np.flatnonzero(gain < -1e-6)
        if improving.size == 0:
            return 0.0
        ranked = None
        while True:
            k = max(1, int(math.ceil(fraction[kind, j] * improving.size)))
            # the k best moves, ties in row order (the same choice on every
            # CPU: tests/test_portability.py); k only shrinks on a retry, so
            # a retry's moves are a prefix of the first try's
            if ranked is None:
                ranked = improving[_smallest_first(gain[improving], k)]
            top = ranked[:k]
            chosen, new_level = rows[top].ravel(), levels[top].ravel()
            old_loss, new_loss, trial = state.trial(j, chosen, new_level)
            if penalty[0] > 0:
                new_loss += penalty[0] * zeros.change(R, j, chosen, new_level)
            if new_loss < old_loss - 1e-12 or k == 1:
                break
            fraction[kind, j] = max(fraction[kind, j] / 2.0, 1.0 / N)
        if new_loss >= old_loss:
            return 0.0  # even the single best move did not help (rounding)
        state.commit(j, chosen, new_level, trial)
        fraction[kind, j] = min(1.0, fraction[kind, j] * 1.5)
        return old_loss - new_loss

    stalled = [True]
    swaps_left = [math.inf if max_swap_sweeps is None else int(max_swap_sweeps)]

    def descend(max_sweeps):
        swapping, done = False, 0
        stalled[0] = False
        ticker = Ticker("generator sweeps", max_sweeps)
        for done in range(1, max_sweeps + 1):
            ticker.tick(done - 1)
            improved_total = 0.0
            for j in rng.permutation(a):
                L = int(n_levels[j])
                if L < 2 or not state.has_members(j):
                    continue
                moves = swap_moves if swapping else single_moves
                improved_total += apply_best(int(swapping), j, *moves(j, L))
            current = state.loss()
            if current <= 0.0:
                stalled[0] = True
                break
            if improved_total <= max(_REL_TOL * current, _NOISE_TOL * n_measured):
                if swapping or swaps_left[0] < 1:
                    stalled[0] = True
                    break
                swapping = True  # single moves are stuck: exchange values between rows
                swaps_left[0] -= 1
            elif swapping:
                swapping = False  # a swap helped: single moves may have gains again
        return done

    sweeps = descend(max_sweeps)
    if zeros is not None:
        # a penalty on every broken zero, raised step by step, lets rows
        # cross between feasible regions through infeasible cells while the
        # loss still pays for it; then the rows left broken are moved to the
        # nearest feasible ones and the descent goes on without leaving them
        sigma = min((m.sigma for m in measurements), default=1.0)
        for k in range(_PENALTY_STEPS):
            if not zeros.broken(R).any():
                break
            penalty[0] = _PENALTY_START * _PENALTY_GROWTH**k / sigma**2
            sweeps += descend(min(max_sweeps, _PENALTY_SWEEPS))
        penalty[0] = 0.0
        zeros.make_feasible(R, rng)
        state.reset()
        active[0] = zeros
        sweeps += descend(max_sweeps)
    best_rows, best_loss = R.copy(), state.loss()
    for _ in range(int(kicks)):
        if best_loss <= 0.0:
            break
        # iterated local search: re-draw a few attributes of rows that sit in
        # over-filled cells (positive gradient), descend again, keep the best
        pool = np.flatnonzero(state.over_filled())
        if pool.size == 0:
            break
        picked = rng.choice(
            pool, size=min(pool.size, 2 + int(rng.integers(0, 6))), replace=False
        )
        for r in picked:
            j = int(rng.integers(0, a))
            old = R[r, j]
            R[r, j] = int(rng.integers(0, int(n_levels[j])))
            if zeros is not None and zeros.broken(R[r : r + 1])[0]:
                R[r, j] = old  # a kick never leaves the feasible rows
        state.reset()
        sweeps += descend(max_sweeps)
        if state.loss() <= best_loss:  # equal: drift along the plateau
            best_rows, best_loss = R.copy(), state.loss()
        else:
            R[:] = best_rows
            state.reset()
    loss = state.loss()
    if warn and not stalled[0]:
        warnings.warn(
            f"the generator stopped after max_sweeps={max_sweeps} sweeps while the "
            f"loss was still falling (now {loss:.4g}); raise max_sweeps for a "
            "closer fit",
            ConvergenceWarning,
            stacklevel=2,
        )
    elif warn and check_agreement:
        warn_disagreement(loss, n_measured, stacklevel=2)
    return GeneratorResult(R, loss, initial, n_measured, sweeps)


def warn_disagreement(loss, n_measured, stacklevel=1):
    """Warn when a fitted table's normalised ``loss`` (in the measurements'
    own noise metric) exceeds its ``n_measured`` values by more than
    ``6 sqrt(2 k)``: the released tables then disagree far more than their
    noise explains (``fit_rows``'s ``warn``). ``stacklevel`` as in
    ``warnings.warn``, counted from the caller."""
    if n_measured > 0 and loss > n_measured + 6.0 * math.sqrt(2.0 * n_measured):
        warnings.warn(
            f"the released tables disagree more than their noise explains: the "
            f"fitted table's normalised loss is {loss:.4g} for {n_measured} measured "
            "values (expected about that many or fewer). The synthetic rows follow a "
            "least-squares compromise between the tables.",
            UserWarning,
            stacklevel=stacklevel + 1,
        )


def rows_loss(measurements, rows, n_levels):
    """``Σ_m ||Q_m T_{A_m}(R) - y_m||² / σ_m²`` of any ``rows`` (level
    indices, one column per attribute): the loss :func:`fit_rows` minimises,
    computed from scratch, e.g. in the noise metric of measurements a fit
    saw with other weights."""
    rows = np.asarray(rows, dtype=np.int64)
    n_levels = np.asarray(n_levels, dtype=np.int64)
    total = 0.0
    for m in measurements:
        A = list(m.attributes)
        if A:
            cells = np.ravel_multi_index(tuple(rows[:, A].T), tuple(n_levels[A]))
            table = np.bincount(cells, minlength=int(np.prod(n_levels[A])))
        else:
            table = np.array([rows.shape[0]])
        fitted = table if m.query is None else m.query @ table
        total += float(np.sum((fitted - m.values) ** 2)) / m.sigma**2
    return total


def _paired_ranks(ranked, sizes):
    """Each pair of levels ``lo < hi`` (in order) with its ``m`` best-ranked
    rows of each: ``ranked`` holds the levels' rows one block after the
    other (``sizes``), column ``c`` ranking a block towards level ``c`` (one
    column: the same order towards every level). Returns the rows at ``lo``
    (ranked towards ``hi``), at ``hi`` (towards ``lo``), and ``lo``, ``hi``
    per pair of rows: ``ranked_lo[:m, hi]`` beside ``ranked_hi[:m, lo]`` for
    every pair of levels, ``m = min(size_lo, size_hi)``, as flat arrays."""
    L = sizes.size
    start = np.cumsum(sizes) - sizes
    lo_p, hi_p = np.triu_indices(L, 1)
    m = np.minimum(sizes[lo_p], sizes[hi_p])
    lo, hi = np.repeat(lo_p, m), np.repeat(hi_p, m)
    rank = np.arange(lo.size) - np.repeat(np.cumsum(m) - m, m)
    col = (0, 0) if ranked.shape[1] == 1 else (hi, lo)
    return ranked[start[lo] + rank, col[0]], ranked[start[hi] + rank, col[1]], lo, hi


def _smallest_first(values, k):
    """Positions of the ``k`` smallest ``values``, smallest first, ties in
    position order: ``np.argsort(values, kind="stable")[:k]``, exactly.

    For ``k`` well under ``values.size`` the ``k``-th smallest value is
    found by ``np.partition`` (a value, so the same on every CPU; the
    positions ``np.argpartition`` returns for equal values are not), and
    only the ``k`` chosen positions are sorted.
    """
    n = values.size
    if 4 * k >= n:
        return np.argsort(values, kind="stable")[:k]
    kth = np.partition(values, k - 1)[k - 1]
    below = np.flatnonzero(values < kth)
    ties = np.flatnonzero(values == kth)[: k - below.size]
    pick = np.sort(np.concatenate([below, ties]))
    return pick[np.argsort(values[pick], kind="stable")]


def _greedy_disjoint(first, second, n_rows):
    """Positions of the pairs ``(first[t], second[t])`` that a greedy pass in
    order keeps: a pair is kept when neither of its rows is in a pair kept
    before it. Exactly that pass, mostly as array operations: a pair that
    is the earliest undecided pair of both its rows is kept (an earlier pair
    holding one of its rows is decided, and was dropped), then the undecided
    pairs that share a row with a kept one are dropped; the few pairs left
    after a round that decides little are passed over one by one.
    Returns the kept positions in increasing order."""
    m = first.size
    keep = np.zeros(m, dtype=bool)
    alive = np.arange(m)
    earliest = np.full(n_rows, m, dtype=np.int64)
    used = np.zeros(n_rows, dtype=bool)
    while alive.size:
        f, s = first[alive], second[alive]
        earliest[f] = m
        earliest[s] = m
        np.minimum.at(earliest, f, alive)
        np.minimum.at(earliest, s, alive)
        won = (earliest[f] == alive) & (earliest[s] == alive)
        kept = alive[won]
        keep[kept] = True
        used[first[kept]] = True
        used[second[kept]] = True
        before = alive.size
        alive = alive[~won & ~used[f] & ~used[s]]
        if 4 * (before - alive.size) < before:
            break  # chains of shared rows: finish in order
    taken = set()
    for t in alive.tolist():
        a_, b_ = int(first[t]), int(second[t])
        if a_ not in taken and b_ not in taken:
            taken.update((a_, b_))
            keep[t] = True
    return np.flatnonzero(keep)
