"""auto's AIM weighs a pair's noise by ``λ = ReleaseRules.aim_penalty_factor``.

AIM's rounds (:cite:`McKenna2022` Algorithm 1) score a candidate by its L1
error less the expected L1 noise a measurement of it would add, and anneal
their budget against the same noise. ``select_aim(penalty_factor=λ)`` scales
that noise in both places; ``selection="aim"`` keeps the paper's ``λ = 1``.
λ is public, so neither the scores' sensitivity nor any share spent moves.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_selection import _frame, _mu2, _pipe, _set_rules

from skdp_synth.gaussian_release import _selection as sel
from skdp_synth.gaussian_release._rules import DEFAULT_RULES
from skdp_synth.mechanisms import NoiseSource, analytic_gaussian_sigma


def _exact_tables(rows, levels, tables):
    """``{S: counts}``: each table's exact counts, flattened as the release
    codes them (the first attribute's level varies slowest)."""
    out = {}
    for S in tables:
        idx = np.zeros(len(rows), dtype=np.int64)
        for j in S:
            idx = idx * int(levels[j]) + rows[:, j]
        size = int(np.prod([levels[j] for j in S]))
        out[S] = np.bincount(idx, minlength=size).astype(np.float64)
    return out


def _strong_wide_pair(n=4000, seed=0):
    """Two 10-level columns equal in 90 % of rows (the pair's TV to the
    product of its margins about 0.8) and two binary columns weakly
    dependent (about 0.05): the coded rows and their levels."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 10, n)
    y = np.where(rng.random(n) < 0.9, x, rng.integers(0, 10, n))
    b1 = rng.integers(0, 2, n)
    b2 = np.where(rng.random(n) < 0.1, b1, rng.integers(0, 2, n))
    return np.column_stack([x, y, b1, b2]), np.array([10, 10, 2, 2])


def _first_round_scores(monkeypatch, factor, n=4000, share=0.002):
    """The scores of AIM's first round at ``penalty_factor = factor`` (a spy
    on :func:`l1_scores`), and the penalty it was given, on
    :func:`_strong_wide_pair`'s rows; every pair a candidate."""
    rows, levels = _strong_wide_pair(n)
    seen = []
    original = sel.l1_scores

    def spy(data, model, w, penalty=None):
        out = original(data, model, w, penalty)
        seen.append((np.array(out), None if penalty is None else np.array(penalty)))
        return out

    monkeypatch.setattr(sel, "l1_scores", spy)
    cand = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    c = analytic_gaussian_sigma(1.0, 1e-6)
    ones = [(j,) for j in range(len(levels))]
    sel.select_aim(
        _exact_tables(rows, levels, ones + cand),
        levels,
        cand,
        np.ones(len(cand)),
        share_one=share,
        share_rounds=share,
        c=c,
        neighbouring="add-remove-one",
        source=NoiseSource(0),
        total=n,
        max_rounds=1,
        penalty_factor=factor,
    )
    return cand, seen[0]


def test_the_penalty_is_the_papers_expected_noise_times_the_factor(monkeypatch):
    """At ``λ`` the penalty is ``λ sqrt(2/π) σ_r n_r`` (:cite:`McKenna2022`
    Algorithm 1): at 1 the paper's, recomputed here from the round's
    measured share (one round of ``share``, 90 % of it measuring: ``σ_r``
    the per-cell noise of ``r`` measured alone at ``0.9 share``), and λ
    times it otherwise (to rounding: the products reassociated)."""
    cand, (_, paper) = _first_round_scores(monkeypatch, 1.0)
    _, (_, quarter) = _first_round_scores(monkeypatch, 0.25)
    _, levels = _strong_wide_pair()
    c = analytic_gaussian_sigma(1.0, 1e-6)
    expected = [
        np.sqrt(2.0 / np.pi)
        * sel._cell_std(levels, r, 0.9 * 0.002, c, "add-remove-one")
        * np.prod(levels[list(r)])
        for r in cand
    ]
    np.testing.assert_allclose(paper, expected, rtol=1e-12)
    np.testing.assert_allclose(quarter, 0.25 * paper, rtol=1e-12)


def test_a_smaller_factor_lets_a_strong_many_cell_pair_win(monkeypatch):
    """The paper's penalty charges the 10 x 10 pair its noise over 100 cells:
    at this budget its score is below a binary pair's though it holds by far
    the most dependence; at ``λ = 0.25`` it scores highest. Scores are the
    data's and the first model's tables (no draw decides them)."""
    cand, (paper, _) = _first_round_scores(monkeypatch, 1.0)
    _, (quarter, _) = _first_round_scores(monkeypatch, 0.25)
    wide = cand.index((0, 1))
    assert paper[wide] < paper[cand.index((2, 3))]
    assert int(np.argmax(quarter)) == wide


def assert_auto_aim_spends_exactly_its_budget(monkeypatch, **rules):
    """auto's AIM (the rule forced to AIM) under ``ReleaseRules`` changed by
    ``rules`` spends exactly its budget (Σ μ² = 1/c², every round's
    exponential mechanism counted; shares summing to 1) and records the
    same ``epsilon_``."""
    import skdp_synth.gaussian_release._measuring as measuring
    import skdp_synth.gaussian_release._planning as planning

    for site in (measuring, planning):
        monkeypatch.setattr(site, "auto_rule", lambda *a, **k: "aim")
    _set_rules(monkeypatch, **rules)
    df, cats = _frame()
    c = analytic_gaussian_sigma(0.5, 1e-6)
    est = _pipe(cats, epsilon=0.5, selection="auto", random_state=0).fit(df)[-1]
    assert est.selection_ == "aim"
    assert _mu2(est) == pytest.approx(1.0 / c**2, rel=1e-9)
    assert sum(est.selection_shares_.values()) == pytest.approx(1.0, rel=1e-12)
    assert est.epsilon_ == 0.5


@pytest.mark.parametrize("factor", [1.0, 0.25])
def test_auto_aim_spends_exactly_its_budget_at_any_factor(monkeypatch, factor):
    """λ is public: auto's AIM spends exactly its budget whatever λ."""
    assert_auto_aim_spends_exactly_its_budget(monkeypatch, aim_penalty_factor=factor)


def test_explicit_aim_keeps_the_papers_penalty(monkeypatch):
    """``selection="aim"`` is the paper's: the same tables and mechanisms
    whatever ``aim_penalty_factor``; auto's AIM reads it (here its rounds
    see a different penalty, spied on)."""
    df, cats = _frame()
    kw = dict(epsilon=0.5, selection="aim", random_state=0)
    paper = _pipe(cats, **kw).fit(df)[-1]._selection_result
    _set_rules(monkeypatch, aim_penalty_factor=0.25)
    again = _pipe(cats, **kw).fit(df)[-1]._selection_result
    assert again.chosen == paper.chosen and again.epsilons == paper.epsilons

    import skdp_synth.gaussian_release._measuring as measuring
    import skdp_synth.gaussian_release._planning as planning

    factors = []
    original = measuring.select_aim

    def spy(*args, **kwargs):
        factors.append(kwargs.get("penalty_factor", 1.0))
        return original(*args, **kwargs)

    monkeypatch.setattr(measuring, "select_aim", spy)
    for site in (measuring, planning):
        monkeypatch.setattr(site, "auto_rule", lambda *a, **k: "aim")
    _pipe(cats, epsilon=0.5, selection="auto", random_state=0).fit(df)
    assert factors == [0.25]


def test_the_default_factor_is_the_measured_one():
    """The value the TUNE half set (``ReleaseRules.aim_penalty_factor``'s
    comment); a change must come with its measurement."""
    assert DEFAULT_RULES.aim_penalty_factor == 0.25
