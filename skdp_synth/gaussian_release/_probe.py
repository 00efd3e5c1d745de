"""A private probe of the pairs' dependence for ``selection="auto"``.

``selection="auto"`` weighs MST's tree, AIM's rounds and the 1-way tables
alone by their expected 2-way TV error (:func:`~._selection.auto_estimates`).
What a pair loses when no measured table holds it is its dependence, the
TV distance between its 2-way table and the product of its 1-way tables;
without the probe that loss is a public constant
(``ReleaseRules.auto_tv_threshold``), the same for every table. Two tables
of alike shape can differ there by a factor of two, and only the data says
which. Where auto has decided against measuring every table, the probe
spends a share ``ReleaseRules.auto_probe_share`` of what is left of the
budget on one Gaussian release of the mean dependence over the candidate
pairs, and the choice between the selected plans uses it.

The statistic
-------------
For a pair ``r = (a, b)`` with counts ``N_xy`` (``n`` records, 1-way counts
``N_x``, ``N_y``),

    ``g_r(D) = 1/2 Σ_xy |N_xy - N_x N_y / n|``     (``0`` when ``n = 0``),

``n`` times the TV distance of the pair's table to the product of its
1-way tables, and the probe releases ``G(D) = (1/M) Σ_r g_r(D)`` over the
``M`` candidate pairs. Divided by the noisy (or public) ``n̂`` it estimates
the mean TV a pair loses when its two columns are drawn independently.

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

One record enters every pair, so the mean ``G`` moves by at most the same
``Δ = 2`` (add/remove) or ``3`` (replace-one) (:func:`probe_sensitivity`;
checked against every neighbour of small random datasets in
``tests/test_probe.py``). The bounds are not tight for every ``n`` (the
largest change found by enumeration is below them), and none is smaller.

Accounting
----------
``G`` is released once with Gaussian noise ``Δ c / sqrt(f)`` (``c`` the
release's noise at whitened sensitivity 1, ``f`` the probe's share of
``μ² = 1/c²``): ``sqrt(f)/c``-GDP, one more step of the adaptive
composition of ``doc/privacy/gaussian_release.md`` ("Selection of
marginals"). It is recorded in ``selection_shares_["probe"]``; the rule
then runs on what is left, so the fit stays ``1/c``-GDP and its
``epsilon_``, ``delta_`` are the release's own. Everything computed from
the noisy ``G`` afterwards is post-processing.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["dependence", "probe_sensitivity", "release_dependence"]


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


def release_dependence(tables, n_levels, pairs, share, c, neighbouring, source):
    """The noisy mean dependence ``G~ = G + N(0, (Δ c / sqrt(share))²)``.

    ``tables`` holds the exact counts of every pair (private; read only
    here); ``pairs``, ``share``, ``c`` and ``neighbouring`` are public.
    ``sqrt(share)/c``-GDP. Returns ``(value, std)``.
    """
    pairs = [tuple(r) for r in pairs]
    if not pairs:
        raise ValueError("the probe needs at least one pair")
    total = math.fsum(
        dependence(tables[r], tuple(int(n_levels[j]) for j in r)) for r in pairs
    )
    std = probe_sensitivity(neighbouring) * float(c) / math.sqrt(float(share))
    value = float(source.gaussian(np.array([total / len(pairs)]), std)[0])
    return value, std
