"""A private probe of the pairs' dependence for ``selection="auto"``.

``selection="auto"`` weighs MST's tree, AIM's rounds and the 1-way tables
alone by their expected 2-way TV error (:func:`~._selection.auto_estimates`).
What a pair loses when no measured table holds it is its dependence, the
TV distance between its 2-way table and the product of its 1-way tables;
without the probe that loss is a pair of public constants
(``ReleaseRules.auto_edge_threshold`` for the pairs a tree would choose,
``ReleaseRules.auto_tv_threshold`` for the others), the same for every
table. Two tables of alike shape can differ there, and only the data says
how. Where auto has decided against measuring every table, the probe spends
a share ``ReleaseRules.auto_probe_share`` of what is left of the budget on
one Gaussian release of two means of the pairs' dependence, and the choice
between the selected plans uses them in place of the constants.

The statistics
--------------
For a pair ``r = (a, b)`` with counts ``N_xy`` (``n`` records, 1-way counts
``N_x``, ``N_y``),

    ``g_r(D) = 1/2 Σ_xy |N_xy - N_x N_y / n|``     (``0`` when ``n = 0``),

``n`` times the TV distance of the pair's table to the product of its
1-way tables. Over the ``M`` candidate pairs the probe releases

* ``G(D) = (1/M) Σ_r g_r(D)``, the mean, and
* ``G_T(D) = (1/K) max_F Σ_{r ∈ F} g_r(D)``, the mean over the edges of a
  maximum spanning forest ``F`` of the candidate graph weighted by ``g``
  (:func:`tree_mean`; every spanning forest of that graph has the same
  number ``K`` of edges, a function of the candidates alone: public).

Divided by the noisy (or public) ``n̂`` they give the mean TV a tree's pairs
and the other pairs lose when their columns are drawn independently
(:func:`probed_terms`), the two terms of auto's estimates.

Sensitivity
-----------
*Add/remove one record* (``n → n + 1``, the record at ``(x₀, y₀)``; removal
is the same change read backwards). The joint term moves one cell by 1.
With ``p = N_x / n``, ``q = N_y / n``, ``e = 1[x = x₀]``, ``e' = 1[y = y₀]``,
the product term ``P = n p ⊗ q`` becomes
``P' = (n p + e)(n q + e') / (n + 1)`` and

    ``P' - P = (n (p e' + e q - p q) + e e') / (n + 1)``.

Its entries have one sign in each of the four blocks ``x = x₀`` or not,
``y = y₀`` or not; summing them, with ``u = 1 - p_{x₀}``,
``v = 1 - q_{y₀}``: ``||P' - P||_1 = (n (1 + 2 u v) + 1) / (n + 1) < 3``.
By the triangle inequality ``|g_r(D') - g_r(D)| ≤ (1 + 3) / 2 = 2``
(``n = 0``: both are 0).

*Replace one record* (``n`` fixed): two cells of the joint move by 1, and
``N_x N_y`` becomes ``(N_x + δ_x)(N_y + δ_y) = N_x N_y + δ_x N'_y + N_x δ_y``
with ``||δ||_1 ≤ 2``, so ``||P' - P||_1 ≤ (2 n + 2 n) / n = 4`` and
``|g_r(D') - g_r(D)| ≤ (2 + 4) / 2 = 3``.

One record enters every pair, and every ``g_r`` moves by at most ``Δ = 2``
(add/remove) or ``3`` (replace-one) (:func:`probe_sensitivity`), so the
mean ``G`` moves by at most ``Δ``, and so does ``G_T``: each forest's sum
moves by at most ``K Δ``, hence so does their maximum. The pair
``(G, G_T)`` has ℓ2-sensitivity at most ``√2 Δ``. Checked against every
neighbour of small random datasets in ``tests/test_probe.py``; the bounds
are upper bounds (the largest change found there is below them, and above
half of them).

Accounting
----------
``(G, G_T)`` is released once with Gaussian noise ``√2 Δ c / sqrt(f)`` on
each coordinate (``c`` the release's noise at whitened sensitivity 1, ``f``
the probe's share of ``μ² = 1/c²``): ``sqrt(f)/c``-GDP, one more step of the
adaptive composition of ``doc/privacy/gaussian_release.md`` ("Selection of
marginals"). It is recorded in ``selection_shares_["probe"]``; the rule
then runs on what is left, so the fit stays ``1/c``-GDP and its
``epsilon_``, ``delta_`` are the release's own. Everything computed from
the noisy values afterwards is post-processing.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "dependence",
    "probe_sensitivity",
    "probed_terms",
    "release_dependence",
    "tree_mean",
]


def probe_sensitivity(neighbouring):
    """``Δ`` of the mean dependence ``G``: 2 (add/remove), 3 (replace-one).

    Module docstring; brute force in ``tests/test_probe.py``.
    """
    return 2.0 if neighbouring == "add-remove-one" else 3.0


def dependence(counts, shape):
    """``g_r = 1/2 Σ |N_xy - N_x N_y / n|`` of one pair's counts (private).

    ``counts`` is the pair's table in C order of ``shape``; 0 when empty.
    """
    t = np.asarray(counts, dtype=np.float64).reshape(shape)
    n = float(t.sum())
    if n <= 0:
        return 0.0
    prod = np.outer(t.sum(axis=1), t.sum(axis=0)) / n
    return 0.5 * float(np.abs(t - prod).sum())


def tree_mean(values, pairs):
    """The mean weight of a maximum spanning forest of ``pairs`` weighted by
    ``values`` (Kruskal), and its number of edges ``K`` (a function of the
    pairs alone: the nodes less the components)."""
    parent = {}

    def find(j):
        parent.setdefault(j, j)
        while parent[j] != j:
            parent[j] = parent[parent[j]]
            j = parent[j]
        return j

    total, k = 0.0, 0
    for i in np.argsort(-np.asarray(values, dtype=np.float64), kind="stable"):
        a, b = find(pairs[i][0]), find(pairs[i][1])
        if a != b:
            parent[a] = b
            total += float(values[i])
            k += 1
    return total / max(k, 1), k


def release_dependence(tables, n_levels, pairs, share, c, neighbouring, source):
    """The noisy mean dependences ``(G~, G~_T)`` of the pairs and of a
    maximum spanning forest's edges, each with noise ``N(0, 2 (Δ c)² /
    share)`` (``sqrt(share)/c``-GDP: the pair has ℓ2-sensitivity ``√2 Δ``).

    ``tables`` holds the exact counts of every pair (private; read only
    here); ``pairs``, ``share``, ``c`` and ``neighbouring`` are public.
    Returns ``{"mean": G~, "tree": G~_T, "std": .., "tree_part": K / M}``
    (``K`` the forest's edges, ``M`` the pairs: public).
    """
    pairs = [tuple(r) for r in pairs]
    if not pairs:
        raise ValueError("the probe needs at least one pair")
    g = [dependence(tables[r], tuple(int(n_levels[j]) for j in r)) for r in pairs]
    tree, k = tree_mean(g, pairs)
    exact = np.array([math.fsum(g) / len(g), tree])
    std = math.sqrt(2.0) * probe_sensitivity(neighbouring) * float(c)
    std /= math.sqrt(float(share))
    noisy = source.gaussian(exact, std)
    return {
        "mean": float(noisy[0]),
        "tree": float(noisy[1]),
        "std": std,
        "tree_part": k / len(pairs),
    }


def probed_terms(probe, n):
    """``(D_T, D_R)``: the mean TV of a tree's pairs and of the other pairs
    from a released probe and the public or noisy ``n`` (post-processing):
    ``D_T = G~_T / n``, ``D_R = (G~ - p G~_T) / ((1 - p) n)`` with ``p =
    K / M`` the tree's part of the pairs (``D_R = G~ / n`` when every pair
    is in the tree)."""
    n = max(float(n), 1.0)
    p = float(probe["tree_part"])
    rest = (
        probe["mean"] if p >= 1.0 else (probe["mean"] - p * probe["tree"]) / (1.0 - p)
    )
    return probe["tree"] / n, rest / n
