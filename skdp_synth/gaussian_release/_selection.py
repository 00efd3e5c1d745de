"""Private selection of the marginal tables to measure (MST- and AIM-style).

When ``ε n`` is small against the number of tables, measuring every ``d``-way
table drowns each one in noise; measuring fewer, *chosen* tables wins
(the project's notes on the field). This module chooses them privately and
measures them:

* :func:`select_mst` -- :cite:`McKenna2021` (MST) §3: all 1-way tables, then a
  maximum spanning tree over attribute pairs grown edge by edge (Kruskal) by
  the exponential mechanism on the L1 dependence score
  ``w_r ||T_r(D) - n̂ p̂_i ⊗ p̂_j||_1`` (``p̂`` the noisy 1-way tables).
* :func:`select_aim` -- :cite:`McKenna2022` (AIM) Algorithm 1: all 1-way tables,
  then rounds of (select by the exponential mechanism on
  ``w_r (||M_r(p̂) - M_r(D)||_1 - sqrt(2/π) σ_r n_r)``, measure, refit the
  model ``p̂``), with AIM's budget annealing (σ halved, ε doubled when a new
  measurement moved the model less than its noise). The model is our
  generator (:func:`skdp_synth.generator.fit_rows`), warm-started each round.

Every measurement is ResidualPlanner's optimal Gaussian noise on a set of
tables (:func:`measure`, :mod:`skdp_synth.attribute_workload`), so the
measured values feed the generator as residuals with exact noise scales.

Accounting: Gaussian differential privacy
-----------------------------------------
The release without selection is the Gaussian mechanism at whitened
sensitivity 1 with noise ``c``, ``c`` calibrated to ``(ε, δ)`` (analytic
calibration, :cite:`Balle2018`): it is ``μ``-GDP with ``μ = 1/c``
(:cite:`Dong2022` Corollary 2.13 is the same duality). With selection the
budget ``μ² = 1/c²`` is split into *shares* ``f_i`` (``Σ f_i <= 1``):

* a Gaussian measurement at share ``f`` has whitened sensitivity 1 and noise
  ``c / sqrt(f)``: it is ``sqrt(f)/c``-GDP;
* an exponential mechanism at share ``f`` runs at the pure ``ε_f`` with
  ``μ(ε_f) = sqrt(f)/c``, where an ``ε``-DP mechanism is
  ``μ(ε) = -2 Φ⁻¹(1/(1+e^ε))``-GDP (trade-off functions, :cite:`Dong2022`
  §2; tight for randomised response; :func:`gdp_mu_of_pure_dp`);
* adaptive composition of ``μ_i``-GDP mechanisms is ``sqrt(Σ μ_i²)``-GDP
  (:cite:`Dong2022` Corollary 3.3; with shares chosen adaptively under a
  fixed total, a privacy filter, :cite:`Smith2022`), so the whole fit is
  ``1/c``-GDP and hence
  ``(ε, δ)``-DP, the guarantee of the release without selection. The choice
  between selection and no selection (made from a noisy total that is part
  of both) is adaptive composition too: every branch spends the same
  ``μ``. The derivation, the sensitivities and the tests are in
  ``doc/privacy.md`` ("Selection of marginals").

Scores and their sensitivity
----------------------------
Both rules score a candidate table ``r`` by ``w_r (||T_r(D) - m_r||_1 - b_r)``
with ``m_r`` and ``b_r`` computed from earlier releases only (public). Adding
or removing one record changes one cell of ``T_r(D)`` by 1, so the score by at
most ``w_r``; replacing one record changes two cells by 1 each, so by at most
``2 w_r``. The exponential mechanism uses ``Δ = max_r w_r`` (add/remove) or
``2 max_r w_r`` (replace-one): :func:`score_sensitivity`, checked by brute
force over neighbouring datasets in ``tests/test_selection.py``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtr, ndtri

from .._progress import Ticker
from ..generator import Measurement, fit_rows
from ..workloads import AttributeMarginalWorkload

__all__ = [
    "SelectionResult",
    "exponential_mechanism",
    "gdp_mu_of_pure_dp",
    "l1_scores",
    "mst_edge_budget",
    "measure",
    "pure_dp_of_gdp_mu",
    "score_sensitivity",
    "select_aim",
    "select_mst",
]

#: largest table (cells) a selection rule may choose: the generator holds a
#: dense ``cells x cells`` matrix per clique (generator._MAX_CLIQUE_ENTRIES)
MAX_CANDIDATE_CELLS = 2000
#: rows of the generator's model during AIM's rounds (answers and noise
#: scaled by ``N / n̂``, as ``max_model_rows`` does; post-processing).
#: ``generator.BATCH_ROWS``, so every step of each refit's descent sees the
#: whole model. Measured on the same seeds, 6000 → 4096: diamonds ε = 0.1
#: (auto's AIM, 6 seeds) TV1 .01054 → .01038, TV2 .0504 → .0501, TV3 .1043
#: → .1034, 4.97 s → 3.70 s (0.16× mbi's MST, 23 s); mpls_stops ε = 0.1
#: (``selection="aim"``, 4 seeds) TV2 .0363 → .0333, TV3 .0735 → .0676;
#: diamonds on 15,000 rows, ε = 0.3 (auto's AIM, 4 seeds) TV2 .0619 → .0627
#: (± .002), 4.09 s → 3.67 s. 3000 rows: diamonds ε = 0.1 TV2 .0515, 3.95 s.
AIM_MODEL_ROWS = 4096
#: AIM's rounds ``T`` (the initial round share is ``share_rounds / T``) per
#: attribute of at least 2 levels. Measured (ε = 0.1, our AIM,
#: TV2 over 9 seeds): 2 per attribute -> 3 per attribute, diamonds .0541 ->
#: .0500 (mbi's AIM, 32 rounds, seed 0: .0530), nassCDS .0349 -> .0341;
#: 4, 6 and 8 per attribute were not better (3 seeds each)
AIM_ROUNDS_PER_ATTRIBUTE = 3
#: the part of each AIM round's share spent on its exponential mechanism
#: (the rest measures the chosen table)
AIM_SELECT_FRACTION = 0.1


# ------------------------------------------------------------- accounting
def gdp_mu_of_pure_dp(epsilon):
    """``μ`` such that every ``ε``-DP mechanism is ``μ``-GDP.

    ``μ = -2 Φ⁻¹(1 / (1 + e^ε))``: the trade-off function of ``ε``-DP,
    ``f_{ε,0}(α) = max(0, 1 - e^ε α, e^{-ε}(1 - α))``, lies above
    ``G_μ(α) = Φ(Φ⁻¹(1 - α) - μ)`` (:cite:`Dong2022` §2), with equality at
    the kink ``α = 1/(1+e^ε)`` (randomised response); checked on a grid in
    ``tests/test_selection.py``.
    """
    epsilon = float(epsilon)
    if not epsilon > 0:
        raise ValueError("epsilon must be > 0")
    return float(-2.0 * ndtri(1.0 / (1.0 + math.exp(epsilon))))


def pure_dp_of_gdp_mu(mu):
    """The inverse of :func:`gdp_mu_of_pure_dp`: ``ε = log(1/Φ(-μ/2) - 1)``."""
    mu = float(mu)
    if not mu > 0:
        raise ValueError("mu must be > 0")
    tail = float(ndtr(-mu / 2.0))
    if tail == 0.0:  # μ past ~75: ε = inf (float division by zero warned)
        return math.inf
    return float(math.log(1.0 / tail - 1.0))


def score_sensitivity(weights, neighbouring):
    """``Δ`` of the L1 scores ``w_r ||T_r(D) - m_r||_1``: ``max w`` or ``2 max w``.

    One record added or removed moves one cell of every table by 1 (each
    score by at most ``w_r``); replaced, it moves two cells by 1 (each score
    by at most ``2 w_r``). Module docstring; brute force in the tests.
    """
    w = float(np.max(np.asarray(weights, dtype=np.float64)))
    return w if neighbouring == "add-remove-one" else 2.0 * w


def exponential_mechanism(scores, epsilon, sensitivity, rng):
    """Index ``r`` drawn with probability ``∝ exp(ε q_r / (2 Δ))`` (ε-DP).

    McSherry & Talwar's exponential mechanism, the selection step of MST
    (:cite:`McKenna2021` §3) and AIM (:cite:`McKenna2022` Algorithm 1), with
    scores of sensitivity ``Δ``. ``rng`` is the fit's generator (a secure
    seed when ``random_state=None``; the draw itself is NumPy's).
    """
    q = np.asarray(scores, dtype=np.float64)
    gap = q - q.max()
    factor = float(epsilon) / (2.0 * float(sensitivity))
    if math.isinf(factor):
        # the limit ε -> ∞ (a split of a huge ε whose share converts to
        # ε = inf, :func:`pure_dp_of_gdp_mu`): uniform among the best
        # scores; ``inf * 0`` made every probability NaN
        p = (gap == 0).astype(np.float64)
    else:
        p = np.exp(factor * gap)
    p /= p.sum()
    return int(rng.choice(q.size, p=p))


def l1_scores(data_tables, model_tables, weights, penalty=None):
    """``w_r (||T_r(D) - m_r||_1 - b_r)`` per candidate (``b_r = 0`` by default)."""
    out = np.array(
        [
            float(np.abs(np.asarray(t, float) - np.asarray(m, float)).sum())
            for t, m in zip(data_tables, model_tables)
        ]
    )
    if penalty is not None:
        out = out - np.asarray(penalty, dtype=np.float64)
    return np.asarray(weights, dtype=np.float64) * out


# ------------------------------------------------------------ measurement
def table_counts(tables, S, n_levels):
    """Counts of table ``S`` from the exact candidate tables (a superset summed out)."""
    S = tuple(S)
    if S in tables:
        return np.asarray(tables[S], dtype=np.float64)
    for T, counts in tables.items():
        if set(S) <= set(T):
            full = np.asarray(counts, dtype=np.float64).reshape(
                tuple(int(n_levels[j]) for j in T)
            )
            drop = tuple(i for i, j in enumerate(T) if j not in S)
            return full.sum(axis=drop).ravel()
    raise KeyError(f"no counted table contains {S}")


def measure(tables, W, share, c, neighbouring, source, total=None):
    """ResidualPlanner's Gaussian noise on the tables of ``W`` at budget ``share``.

    The residuals are whitened by ``W``'s calibrated scales ``τ`` (whitened
    ℓ2-sensitivity exactly 1,
    :meth:`~skdp_synth.attribute_workload.AttributeMarginalWorkload.calibrated_scales`)
    and receive noise ``c / sqrt(share)``: ``sqrt(share)/c``-GDP.

    Returns
    -------
    noisy : dict
        ``{A: z~_A}`` (``z_∅ = total`` when it is public).
    scales : ndarray
        Noise standard deviation of each residual (``W.subsets`` order).
    measurements : list of Measurement
        The non-empty residuals as generator measurements.
    """
    tau, _ = W.calibrated_scales(neighbouring)
    sigma = float(c) / math.sqrt(float(share))
    z = W.residuals({S: table_counts(tables, S, W.n_levels) for S in W.tables})
    t = W.whiten(z, tau)
    noisy = W.unwhiten(source.gaussian(t, sigma), tau, total=total)
    scales = sigma * tau
    ms = [
        Measurement(A, W.residual_matrix(A), noisy[A], float(scales[i]))
        for i, A in enumerate(W.subsets)
        if A and tau[i] > 0
    ]
    return noisy, scales, ms


def _cell_std(n_levels, S, share, c, neighbouring):
    """Per-cell noise std of table ``S`` measured alone by :func:`measure`."""
    W = AttributeMarginalWorkload(n_levels, len(S), tables=[S])
    tau, _ = W.calibrated_scales(neighbouring)
    return math.sqrt(W.cell_variance(tau, float(c) / math.sqrt(share), S))


@dataclass
class SelectionResult:
    """What a selection rule chose and released (public: post-processing).

    Attributes
    ----------
    rule : str
    chosen : list of tuple
        The tables chosen, in the order chosen.
    measurements : list of Measurement
        Every noisy measurement made (1-way tables, AIM's rounds).
    totals : list of (float, float)
        Noisy totals ``(value, variance)`` released on the way (add/remove).
    spent : dict
        Budget shares spent per step kind (``"measure"``, ``"select"``).
    epsilons : list of float
        The pure ε of each exponential mechanism run.
    probs : dict
        MST's released 1-way estimates ``{j: level shares}`` (clipped and
        normalised; post-processing of its first measurement).
    """

    rule: str
    chosen: list = field(default_factory=list)
    measurements: list = field(default_factory=list)
    totals: list = field(default_factory=list)
    spent: dict = field(default_factory=lambda: {"measure": 0.0, "select": 0.0})
    epsilons: list = field(default_factory=list)
    probs: dict = field(default_factory=dict)


def _one_ways(tables, n_levels, share, c, neighbouring, source, total, result):
    """Measure every 1-way table; return the clipped, normalised estimates."""
    informative = [j for j in range(len(n_levels)) if n_levels[j] >= 2]
    W1 = AttributeMarginalWorkload(n_levels, 1, tables=[(j,) for j in informative])
    noisy, scales, ms = measure(tables, W1, share, c, neighbouring, source, total)
    result.measurements.extend(ms)
    result.spent["measure"] += share
    if total is None:
        result.totals.append((float(noisy[()][0]), float(scales[0]) ** 2))
    probs = {}
    for j in range(len(n_levels)):
        if n_levels[j] < 2:
            probs[j] = np.ones(1)
            continue
        t = np.clip(W1.reconstruct(noisy, (j,)), 0.0, None)
        probs[j] = t / t.sum() if t.sum() > 0 else np.full(t.size, 1.0 / t.size)
    return probs


def _total(result, public_total):
    if public_total is not None:
        return float(public_total)
    vals = np.array([v for v, _ in result.totals])
    var = np.array([s for _, s in result.totals])
    return max(1.0, float(np.sum(vals / var) / np.sum(1.0 / var)))


def select_mst(
    tables,
    n_levels,
    candidates,
    weights,
    *,
    share_one,
    share_select,
    c,
    neighbouring,
    source,
    total=None,
    totals=(),
):
    """MST's selection (:cite:`McKenna2021` §3): 1-ways, then a spanning tree.

    Parameters
    ----------
    tables : dict
        Exact counts of the candidate tables and the 1-way tables (private;
        read only through :func:`measure` and the scores).
    n_levels : ndarray
    candidates : list of tuple
        Candidate pairs (public).
    weights : ndarray
        Weight ``w_r`` of each candidate (public).
    share_one, share_select : float
        Budget shares of the 1-way measurement and of all the tree's
        exponential mechanisms together (one per edge, equal shares).
    c : float
        The release's Gaussian σ at whitened sensitivity 1 (``μ = 1/c``).
    neighbouring : str
    source : NoiseSource
    total : float, optional
        The public total (replace-one); else the noisy totals.
    totals : sequence of (value, variance)
        Noisy totals released before (add/remove).

    Returns
    -------
    SelectionResult
    """
    result = SelectionResult("mst", totals=list(totals))
    probs = _one_ways(
        tables, n_levels, share_one, c, neighbouring, source, total, result
    )
    result.probs = probs
    n_hat = _total(result, total)
    weight_of = {tuple(r): float(x) for r, x in zip(candidates, weights)}
    pairs = [tuple(r) for r in candidates if len(r) == 2]
    w = np.array([weight_of[r] for r in pairs])
    if not pairs:
        return result
    data = [table_counts(tables, r, n_levels) for r in pairs]
    model = [n_hat * np.outer(probs[i], probs[j]).ravel() for i, j in pairs]
    scores = l1_scores(data, model, w)
    delta = score_sensitivity(w, neighbouring)
    nodes = sorted({j for r in pairs for j in r})
    forest = _Components(nodes)
    # the number of edges of a spanning forest of the candidate graph is
    # public (candidates are public), so is the per-edge share
    n_edges = len(nodes) - _n_components(nodes, pairs)
    if n_edges == 0:
        return result
    eps = pure_dp_of_gdp_mu(math.sqrt(share_select / n_edges) / c)
    for _ in range(n_edges):
        live = [k for k, r in enumerate(pairs) if forest.apart(r)]
        k = live[exponential_mechanism(scores[live], eps, delta, source.rng)]
        forest.join(pairs[k])
        result.chosen.append(pairs[k])
        result.epsilons.append(eps)
        result.spent["select"] += share_select / n_edges
    return result


def mst_edge_budget(n_levels, candidates, share_final, c, neighbouring, n, threshold):
    """How many edges of a spanning tree would be worth their noise (public).

    MST measures ``a - 1`` pairs whatever ``n`` and ``ε``; when ``ε n`` is
    small against the domain (a wide table, few rows) each of them drowns in
    noise and the rows come out *worse* than independent columns (measured:
    Caravan, 86 columns, 4.7k rows, ε = 1). A pair ``r`` measured as one of
    ``K`` tables at the final share ``f`` gets at most the per-cell noise of
    ``r`` measured alone at share ``f / K`` (equal split; ResidualPlanner's
    optimum is no worse), ``σ_r(K) = σ_r(1) sqrt(K / f)``, so its expected TV
    noise is ``e_r(K) = k_r sqrt(2/π) σ_r(K) / (2 n)`` (``k_r`` cells).
    A pair qualifies at ``K`` when ``e_r(K) <= threshold``; ``K`` is the
    largest number of edges that a spanning forest of the pairs qualifying
    at ``K`` can have. ``selection="auto"`` runs MST when ``K`` is at least
    half a spanning tree, else measures the 1-way tables only.

    Every input is public (the domain, the candidates, the budget, and a
    public or noisy ``n``), so the result is too.

    Returns
    -------
    K : int
    allowed : list of tuple
        The candidate pairs qualifying at ``K`` (empty when ``K = 0``).
    """
    pairs = [tuple(r) for r in candidates if len(r) == 2]
    if not pairs:
        return 0, []
    k_max = _pair_capacity(n_levels, pairs, share_final, c, neighbouring, n, threshold)
    nodes = sorted({j for r in pairs for j in r})
    for K in range(len(nodes) - 1, 0, -1):
        allowed = [r for r, k in zip(pairs, k_max) if k >= K]
        if not allowed:
            continue
        sub = sorted({j for r in allowed for j in r})
        if len(sub) - _n_components(sub, allowed) >= K:
            return K, allowed
    return 0, []


def _pair_capacity(n_levels, pairs, share_final, c, neighbouring, n, threshold):
    """For each pair, the most tables ``K`` it can share the final
    measurement (share ``share_final``) with and still have an expected TV
    noise ``e_r(K)`` of at most ``threshold`` (:func:`mst_edge_budget`;
    public)."""
    n = max(float(n), 1.0)
    l1 = expected_l1_noise(n_levels, pairs, c, neighbouring)
    # e_r(K) <= threshold  <=>  K <= f (2 n threshold / (k_r sqrt(2/π) σ_r(1)))²
    return share_final * (2.0 * n * threshold / l1) ** 2


def expected_l1_noise(n_levels, tables, c, neighbouring):
    """Each table's expected ℓ1 noise measured alone at share 1, ``k_r
    sqrt(2/π) σ_r(1)`` (``k_r`` cells, ``σ_r(1)`` the per-cell noise of
    :func:`_cell_std`; the same for every table of one shape). Public."""
    std_of, out = {}, np.empty(len(tables))
    for i, r in enumerate(tables):
        shape = tuple(int(n_levels[j]) for j in r)
        if shape not in std_of:
            std_of[shape] = _cell_std(n_levels, r, 1.0, c, neighbouring)
        out[i] = float(np.prod(shape)) * math.sqrt(2.0 / math.pi) * std_of[shape]
    return out


class _Components:
    """The components of a graph over attributes, as tables join them
    (union-find with path halving): MST's tree and the joins of auto's AIM."""

    def __init__(self, nodes):
        self.parent = {j: j for j in nodes}

    def find(self, j):
        parent = self.parent
        while parent[j] != j:
            parent[j] = parent[parent[j]]
            j = parent[j]
        return j

    def join(self, table):
        """Join the attributes of ``table`` (a pair, or a clique of any
        size) that are nodes."""
        inside = [j for j in table if j in self.parent]
        for i, j in zip(inside, inside[1:]):
            self.parent[self.find(i)] = self.find(j)

    def apart(self, pair):
        """Whether a pair's two attributes lie in different components."""
        return self.find(pair[0]) != self.find(pair[1])

    def roots(self):
        return {self.find(j) for j in self.parent}


def _n_components(nodes, tables):
    """The number of components of the graph ``tables`` make of ``nodes``."""
    forest = _Components(nodes)
    for r in tables:
        forest.join(r)
    return len(forest.roots())


def select_aim(
    tables,
    n_levels,
    candidates,
    weights,
    *,
    share_one,
    share_rounds,
    c,
    neighbouring,
    source,
    total=None,
    totals=(),
    max_rounds=None,
    cover=None,
    penalty_factor=1.0,
    refit_swap_sweeps=None,
):
    """AIM's adaptive rounds (:cite:`McKenna2022` Algorithm 1) with our generator.

    After the 1-way tables (share ``share_one``), each round ``t`` spends
    ``f_t`` of the budget: 10 % on the exponential mechanism over the
    candidates' scores ``w_r (||M_r(p̂) - M_r(D)||_1 - sqrt(2/π) σ_r n_r)``
    (``σ_r`` the per-cell noise ``r`` would receive, ``n_r`` its cells) and
    90 % on measuring the chosen table (:func:`measure`). The model ``p̂`` is
    the generator refitted on every measurement so far. Budget annealing
    (AIM §4.3): when ``||M_r(p̂_new) - M_r(p̂_old)||_1 <= sqrt(2/π) σ_r n_r``
    the round share is multiplied by 4 (σ halved). The initial round share
    is ``share_rounds / max_rounds`` (``max_rounds`` default:
    ``AIM_ROUNDS_PER_ATTRIBUTE = 3`` times the number of attributes; the
    paper's ``16 d`` spends less per round than a model refitted each round
    can use here); when what is left is below twice the round
    share, the last round spends all of it.

    Parameters are those of :func:`select_mst`, with ``share_rounds`` the
    budget of all rounds together. ``cover`` (``None``: the paper's AIM;
    ``(share, share_final, threshold)``) joins the columns the rounds left
    in no chosen table to the rest after the rounds
    (:func:`_cover_attributes`), spending at most ``share``; what it does
    not spend is left to the caller's final measurement.
    ``penalty_factor`` (``λ``; 1: the paper's) scales the expected noise
    ``sqrt(2/π) σ_r n_r`` in both places it enters, the scores and the
    annealing test: the noise a measurement leaves in the generator's
    model, which fits every measured table at once and holds no negative
    count, rather than in the noisy table itself. A public constant, so
    the scores' sensitivity and every share spent are the same at any
    ``λ`` (``ReleaseRules.aim_penalty_factor``).
    ``refit_swap_sweeps`` (``None``: the generator's full descent) caps the
    sweeps of swaps in each round's refit (:func:`~skdp_synth.generator.fit_rows`'s
    ``max_swap_sweeps``): the refit's rows are read only for the next
    round's scores and annealing test, never released, so a looser fit
    changes which tables are chosen but no share spent and no sensitivity
    (``ReleaseRules.aim_refit_swap_sweeps``).

    Returns
    -------
    SelectionResult
    """
    result = SelectionResult("aim", totals=list(totals))
    _one_ways(tables, n_levels, share_one, c, neighbouring, source, total, result)
    n_hat = _total(result, total)
    weight_of = {tuple(r): float(x) for r, x in zip(candidates, weights)}
    cand = [tuple(r) for r in candidates if len(r) >= 2]
    if not cand:
        return result
    w = np.array([weight_of[r] for r in cand])
    delta = score_sensitivity(w, neighbouring)
    data = [table_counts(tables, r, n_levels) for r in cand]
    cells = np.array([d.size for d in data], dtype=np.float64)
    # per-cell noise std at share 1 (public): σ_r(f) = base_r / sqrt(f)
    base = np.array([_cell_std(n_levels, r, 1.0, c, neighbouring) for r in cand])
    a = int(np.sum(np.asarray(n_levels) >= 2))
    T = (
        int(max_rounds)
        if max_rounds is not None
        else AIM_ROUNDS_PER_ATTRIBUTE * max(a, 1)
    )
    f_round = share_rounds / T
    left = float(share_rounds)
    N = int(min(max(1, round(n_hat)), AIM_MODEL_ROWS))
    rows = None

    def model_tables(R):
        scale = n_hat / R.shape[0]
        out = []
        for r in cand:
            idx = np.zeros(R.shape[0], dtype=np.int64)
            for j in r:
                idx = idx * int(n_levels[j]) + R[:, j]
            size = int(np.prod([n_levels[j] for j in r]))
            out.append(scale * np.bincount(idx, minlength=size).astype(np.float64))
        return out

    def refit(init):
        k = N / n_hat
        ms = [
            Measurement(m.attributes, m.query, m.values * k, m.sigma * k)
            for m in result.measurements
        ]
        res = fit_rows(
            ms,
            n_levels,
            N,
            rng=source.rng,
            init=init,
            warn=False,
            max_swap_sweeps=refit_swap_sweeps,
        )
        return res.rows

    rows = refit(None)
    current = model_tables(rows)
    ticker = Ticker("AIM rounds")
    while left > 1e-12:
        ticker.tick(len(result.chosen))
        if left < 2.0 * f_round:
            f_round = left
        f_sel = AIM_SELECT_FRACTION * f_round
        f_meas = f_round - f_sel
        sigma_r = base / math.sqrt(f_meas)
        penalty = penalty_factor * math.sqrt(2.0 / math.pi) * sigma_r * cells
        scores = l1_scores(data, current, w, penalty)
        eps = pure_dp_of_gdp_mu(math.sqrt(f_sel) / c)
        k = exponential_mechanism(scores, eps, delta, source.rng)
        r = cand[k]
        Wr = AttributeMarginalWorkload(n_levels, len(r), tables=[r])
        noisy, scales, ms = measure(tables, Wr, f_meas, c, neighbouring, source, total)
        result.measurements.extend(ms)
        if total is None:
            result.totals.append((float(noisy[()][0]), float(scales[0]) ** 2))
        result.chosen.append(r)
        result.epsilons.append(eps)
        result.spent["select"] += f_sel
        result.spent["measure"] += f_meas
        left -= f_round
        before = current[k]
        rows = refit(rows)
        current = model_tables(rows)
        if np.abs(current[k] - before).sum() <= penalty[k]:
            f_round = min(4.0 * f_round, left)
    if cover is not None and cover[0] > 0:
        _cover_attributes(
            result,
            cand,
            data,
            current,
            w,
            delta,
            cover,
            n_levels,
            n_hat,
            c,
            neighbouring,
            source.rng,
        )
    return result


def _cover_attributes(
    result, cand, data, model, w, delta, cover, n_levels, n_hat, c, neighbouring, rng
):
    """Join the components AIM's chosen tables leave, MST-style (public count).

    AIM's scores charge a pair its noise over all its cells, so a column of
    many levels whose pairs each hold little dependence per cell is never
    chosen: the rows then keep none of its dependence and a model of it
    trained on them learns nothing. nmes1988 at ε = 3 (``python -m
    benchmarks.bench_suite --half tune --tables nmes1988 --eps 3 --seeds
    10 --methods auto,auto-mst``): the rounds chose 13-26 pairs and left 4-6
    of the 19 columns in none (``visits``, ``nvisits``, ``ovisits``,
    ``novisits``, ``emergency``, ``hospital``); train-on-synthetic R² of
    ``visits`` -0.044 against auto's tree's 0.059.

    ``cover = (share, share_final, threshold)``. After the rounds
    (:cite:`McKenna2022` Algorithm 1), as MST's tree (:cite:`McKenna2021`
    §3, :func:`select_mst`), a candidate pair that joins two components of
    the chosen tables' graph is picked by the exponential mechanism on the L1
    distance of the data's table to the AIM model's (:func:`l1_scores`),
    until no pair worth its noise joins two: a pair is worth it where,
    measured as one of the final measurement's ``K`` tables at
    ``share_final``, its expected TV noise is at most ``threshold``
    (:func:`_pair_capacity`, as auto's tree trims its edges,
    :func:`mst_edge_budget`), with ``K`` the chosen tables and one join per
    component beyond the first (an upper bound). The number of joins is a
    function of the released choices and public quantities; each costs
    ``share / (a - 1)``, the per-edge share of a tree's selection at
    ``share``, with sensitivity ``delta`` (:func:`score_sensitivity`).
    Appends the joins to ``result.chosen`` (the final measurement measures
    them) and records each mechanism's ``ε`` and share."""
    share, share_final, threshold = cover
    pairs = [k for k, r in enumerate(cand) if len(r) == 2]
    nodes = sorted({j for k in pairs for j in cand[k]})
    if not nodes:
        return
    forest = _Components(nodes)
    for r in result.chosen:
        forest.join(r)
    roots = forest.roots()
    K = len(set(result.chosen)) + len(roots) - 1
    capacity = _pair_capacity(
        n_levels,
        [cand[k] for k in pairs],
        share_final,
        c,
        neighbouring,
        n_hat,
        threshold,
    )
    pairs = [k for k, cap in zip(pairs, capacity) if cap >= K]
    # the joins: components now less those of the chosen tables (cliques of
    # any size) with every pair worth its noise added (public)
    n_edges = len(roots) - _n_components(
        roots, [tuple(forest.find(j) for j in cand[k]) for k in pairs]
    )
    if n_edges <= 0:
        return
    share_edge = share / max(int(np.sum(np.asarray(n_levels) >= 2)) - 1, 1)
    eps = pure_dp_of_gdp_mu(math.sqrt(share_edge) / c)
    scores = l1_scores([data[k] for k in pairs], [model[k] for k in pairs], w[pairs])
    for _ in range(n_edges):
        live = [i for i, k in enumerate(pairs) if forest.apart(cand[k])]
        i = live[exponential_mechanism(scores[live], eps, delta, rng)]
        forest.join(cand[pairs[i]])
        result.chosen.append(cand[pairs[i]])
        result.epsilons.append(eps)
        result.spent["select"] += share_edge


def candidate_tables(n_levels, workload, max_cells=MAX_CANDIDATE_CELLS):
    """AIM's candidates: the downward closure of the workload (arity >= 2).

    Weight of a candidate ``r``: ``Σ_{S ⊇ r} w_S`` over the workload's tables
    (how much of the workload it feeds). Tables over ``max_cells`` cells are
    left out (the generator's dense clique limit). Public.
    """
    weight = {}
    for S, w in workload.items():
        for k in range(2, len(S) + 1):
            for r in itertools.combinations(S, k):
                cells = int(np.prod([n_levels[j] for j in r]))
                if cells <= max_cells and all(n_levels[j] >= 2 for j in r):
                    weight[r] = weight.get(r, 0.0) + float(w)
    cand = sorted(weight, key=lambda r: (len(r), r))
    return cand, np.array([weight[r] for r in cand])


# ============================================================ the auto rule
def with_one_way_tables(W, weight):
    """``W`` with every 1-way table added at ``weight`` (public: the levels)."""
    ones = [(j,) for j in range(len(W.n_levels)) if W.n_levels[j] >= 2]
    tables = list(W.tables) + [S for S in ones if S not in W.tables]
    weights = list(W.weights) + [weight] * (len(tables) - len(W.tables))
    return AttributeMarginalWorkload(W.n_levels, W.d, tables=tables, weights=weights)


def allocated_scales(W, plan_W, neighbouring, ext=()):
    """``(τ, sensitivity)`` of ``W``'s residuals under ``plan_W``'s allocation.

    ``plan_W`` holds ``W``'s tables and more (the same residuals plus some):
    its calibrated scales, indexed by ``W.subsets``; the sensitivity divided
    out is ``plan_W``'s, which on ``W`` is exactly 1 (same ``s_A``).
    """
    tau_p, sens = plan_W.calibrated_scales(neighbouring, ext)
    return np.array([tau_p[plan_W.subsets.index(A)] for A in W.subsets]), sens
