"""auto's AIM refits its model with at most ``aim_refit_swap_sweeps`` sweeps
of swaps (:func:`fit_rows`'s ``max_swap_sweeps``).

A round's refit (:cite:`McKenna2022` Algorithm 1, the model ``p̂`` refitted
on every measurement so far) is read only to score the next round's
candidates and to test its annealing; it is never released. Capping its
swaps changes which tables are chosen, never a share spent or a
sensitivity; ``selection="aim"`` keeps the full descent.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_aim_penalty import assert_auto_aim_spends_exactly_its_budget
from test_selection import _frame, _pipe

from skdp_synth.gaussian_release._rules import DEFAULT_RULES
from skdp_synth.generator import Measurement, fit_rows
from skdp_synth.generator import _generator as gen


def _swap_only_gain(n=200):
    """Two binary columns with exact 1-way tables (half the rows at each
    level) and a 2-way table saying they are equal, held to much tighter
    noise than the 1-ways; start rows with the right 1-ways and
    independent columns. A single move breaks a tight 1-way table, so only
    swaps (which keep every 1-way table) reach the 2-way one."""
    half = n // 2
    ones = [
        Measurement((j,), None, np.array([half, half], float), 0.01) for j in (0, 1)
    ]
    pair = Measurement((0, 1), None, np.array([half, 0, 0, half], float), 1.0)
    a = np.repeat([0, 1], half)
    b = np.tile([0, 1], half)
    return ones + [pair], np.array([2, 2]), np.column_stack([a, b])


def _fit(max_swap_sweeps=None, warn=False):
    """:func:`fit_rows` on :func:`_swap_only_gain` from its start rows."""
    ms, levels, start = _swap_only_gain()
    return fit_rows(
        ms,
        levels,
        len(start),
        rng=np.random.default_rng(0),
        init=start,
        max_swap_sweeps=max_swap_sweeps,
        warn=warn,
    )


def _count_swap_sweeps(monkeypatch):
    """Spy on the sweeps that swap: each call of the swap step with a new
    attribute order counts once per attribute; returns the list it fills."""
    calls = []
    original = gen._KronState.swap_gains

    def spy(self, j, r1, r2):
        calls.append(j)
        return original(self, j, r1, r2)

    monkeypatch.setattr(gen._KronState, "swap_gains", spy)
    return calls


def test_no_swap_sweep_leaves_what_only_swaps_reach(monkeypatch):
    """``max_swap_sweeps=0``: the descent stops where single moves stall,
    no swap is examined, and the 2-way table only swaps reach stays off;
    ``None`` (the default) swaps it to the data's (loss far lower)."""
    calls = _count_swap_sweeps(monkeypatch)
    capped = _fit(0)
    assert calls == []
    full = _fit(None)
    assert calls  # the default descent swapped
    assert full.loss < capped.loss / 10.0
    # the capped fit's rows keep their exact 1-way tables (no single move
    # paid for the 2-way one)
    for j in (0, 1):
        assert np.bincount(capped.rows[:, j], minlength=2).tolist() == [100, 100]


def test_one_swap_sweep_is_at_most_one(monkeypatch):
    """``max_swap_sweeps=1``: every swap examined belongs to one sweep (each
    attribute's swap step at most once), and its gains are kept."""
    _, levels, _ = _swap_only_gain()
    calls = _count_swap_sweeps(monkeypatch)
    one = _fit(1)
    assert calls and len(calls) == len(set(calls)) <= len(levels)
    capped = _fit(0)
    assert one.loss < capped.loss


@pytest.mark.parametrize("bad", [-1, 0.5, True, "1"])
def test_a_cap_that_is_not_a_count_is_refused(bad):
    """``max_swap_sweeps`` is ``None`` or a whole number of sweeps >= 0."""
    with pytest.raises(ValueError, match="max_swap_sweeps"):
        _fit(bad, warn=True)


def test_auto_aim_refits_read_the_rule_and_explicit_aim_does_not(monkeypatch):
    """auto's AIM hands ``aim_refit_swap_sweeps`` to every refit;
    ``selection="aim"`` refits with the full descent (``None``)."""
    import skdp_synth.gaussian_release._measuring as measuring
    import skdp_synth.gaussian_release._planning as planning
    import skdp_synth.gaussian_release._selection as sel

    seen = []
    original = sel.fit_rows

    def spy(*args, **kwargs):
        seen.append(kwargs.get("max_swap_sweeps"))
        return original(*args, **kwargs)

    monkeypatch.setattr(sel, "fit_rows", spy)
    df, cats = _frame()
    _pipe(cats, epsilon=0.5, selection="aim", random_state=0).fit(df)
    assert seen and set(seen) == {None}
    seen.clear()
    for site in (measuring, planning):
        monkeypatch.setattr(site, "auto_rule", lambda *a, **k: "aim")
    est = _pipe(cats, epsilon=0.5, selection="auto", random_state=0).fit(df)[-1]
    assert est.selection_ == "aim"
    assert seen and set(seen) == {DEFAULT_RULES.aim_refit_swap_sweeps}


@pytest.mark.parametrize("sweeps", [None, 0, 1])
def test_auto_aim_spends_exactly_its_budget_at_any_cap(monkeypatch, sweeps):
    """The cap is public and the refits are never released: auto's AIM
    spends exactly its budget at any cap."""
    assert_auto_aim_spends_exactly_its_budget(monkeypatch, aim_refit_swap_sweeps=sweeps)


def test_the_default_cap_is_the_measured_one():
    """The value the TUNE half set (``ReleaseRules.aim_refit_swap_sweeps``'s
    comment); a change must come with its measurement."""
    assert DEFAULT_RULES.aim_refit_swap_sweeps == 1
