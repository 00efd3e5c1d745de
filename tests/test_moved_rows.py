"""Where a dropped level's model rows go: to the level of a row alike on
the attributes the plan measured with the column (a hot-deck draw from the
model's conditional), not to a draw from the column's marginal. Both are
post-processing of the model's rows."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.gaussian_release import _generating
from skdp_synth.gaussian_release._generating import move_level
from skdp_synth.preprocessing import BooleanEncoder


def _tied_rows():
    # attribute 0 (the column): levels 0 and 2 follow attribute 1 exactly
    # (0 <-> 0, 2 <-> 1); level 1 is the dropped one, 20 rows at each value
    # of attribute 1; attribute 2 is unrelated noise
    rng = np.random.default_rng(5)
    a = np.repeat([0, 2, 1, 1], [60, 40, 20, 20])
    b = np.repeat([0, 1, 0, 1], [60, 40, 20, 20])
    c = rng.integers(0, 3, size=a.size)
    return np.column_stack([a, b, c]).astype(np.int64)


def test_moved_rows_take_the_level_their_neighbours_go_with():
    """Matched on attribute 1, every moved row takes the one level that
    goes with its value there: exactly, since every donor alike on it has
    that level."""
    rows = _tied_rows()
    out = move_level(rows, 0, 1, lambda: np.random.default_rng(0), neighbours=[1])
    assert not np.any(out[:, 0] == 1)
    np.testing.assert_array_equal(out[:, 0], np.where(out[:, 1] == 0, 0, 2))
    np.testing.assert_array_equal(out[:, 1:], rows[:, 1:])


def test_without_neighbours_the_level_is_drawn_from_the_marginal():
    """The old draw (``neighbours=None``) breaks the tie: a moved row at 0
    on attribute 1 takes level 2 with probability 40 / 100. Of the 40
    moved rows, the count that break it is Binomial(40, 0.4); at seed 0
    it is at least 1 except with probability 0.6^40 < 1e-8."""
    rows = _tied_rows()
    out = move_level(rows, 0, 1, lambda: np.random.default_rng(0))
    moved = rows[:, 0] == 1
    broken = np.sum(out[moved, 0] != np.where(out[moved, 1] == 0, 0, 2))
    assert broken >= 1


def test_ties_are_broken_uniformly_among_equally_near_rows():
    """Donors all alike on the neighbour: the moved rows' levels follow the
    donors' (300 at 0, 100 at 2). 2,000 moved rows, a two-sided binomial test
    of the share at 2 against 1/4 at a false-failure rate of 1e-6."""
    a = np.repeat([0, 2, 1], [300, 100, 2000])
    rows = np.column_stack([a, np.zeros_like(a)]).astype(np.int64)
    out = move_level(rows, 0, 1, lambda: np.random.default_rng(1), neighbours=[1])
    at_two = int(np.sum(out[400:, 0] == 2))
    assert int(np.sum(out[400:, 0] == 0)) + at_two == 2000
    assert stats.binomtest(at_two, 2000, 0.25).pvalue > 1e-6


def test_a_kept_level_is_never_a_destination_when_matched():
    """``keep`` holds under the hot-deck draw too: the nearest rows are at
    the kept level 3, yet no moved row goes there while others exist."""
    a = np.repeat([0, 3, 1], [10, 50, 20])
    b = np.repeat([1, 0, 0], [10, 50, 20])
    rows = np.column_stack([a, b]).astype(np.int64)
    out = move_level(
        rows, 0, 1, lambda: np.random.default_rng(0), keep=(3,), neighbours=[1]
    )
    assert np.bincount(out[:, 0], minlength=4).tolist() == [30, 0, 0, 50]


def test_more_donors_than_compared_draws_from_a_subset(monkeypatch):
    """A moved row with no donor alike on every neighbour is compared level
    by level, past ``MAX_DONORS`` donors with a random subset of them: with
    8 of 400, the moved rows (``(0, 5)`` on the neighbours, no donor has
    it) take the level of the donors one level away (``(0, 0)``, level 0)
    wherever the subset holds one; its 300 of 400 make a subset without one
    a 0.25^8 < 2e-5 event."""
    monkeypatch.setattr(_generating, "MAX_DONORS", 8)
    monkeypatch.setattr(_generating, "MIN_DONORS", 8)
    a = np.repeat([0, 2, 1], [300, 100, 10])
    b = np.repeat([0, 1, 0], [300, 100, 10])
    c = np.repeat([0, 1, 5], [300, 100, 10])
    rows = np.column_stack([a, b, c]).astype(np.int64)
    out = move_level(rows, 0, 1, lambda: np.random.default_rng(2), neighbours=[1, 2])
    assert set(np.unique(out[400:, 0]).tolist()) == {0}
    np.testing.assert_array_equal(out[:400], rows[:400])


def _pipeline(donors):
    # two columns tied exactly (a = b for levels x, y), one rare level z of
    # a, and a third independent column
    rng = np.random.default_rng(0)
    n = 3000
    b = rng.choice(["x", "y"], size=n)
    a = b.copy()
    a[:60] = "z"
    c = rng.choice(["p", "q", "r"], size=n)
    df = pd.DataFrame({"a": a, "b": b, "c": c})
    cats = {"a": ["x", "y", "z"], "b": ["x", "y"], "c": ["p", "q", "r"]}
    rel = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, selection="mst")
    rel._rules = dataclasses.replace(rel._rules, moved_row_donors=donors)
    rel.set_params(random_state=0)
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories=cats, random_state=0), rel
    ).fit(df)
    return pipe[-1]


def _moved_agreement(rel):
    names = [str(x) for x in rel.blocks_.names]
    j, k = names.index("a"), names.index("b")
    rows = rel._model_rows.copy()
    at = rows[:, j] == 2
    assert at.sum() >= 40
    assert rel._drop_unsupported_level(j, 2, z=1e9)
    moved = rel._model_rows[at]
    kept = rows[~at]
    return np.mean(moved[:, j] == moved[:, k]), np.mean(kept[:, j] == kept[:, k])


def test_the_release_matches_moved_rows_on_its_measured_tables():
    """A release that measured ``(a, b)`` moves the model's rows at ``a = z``
    to the level of ``a`` that goes with their ``b``: the model's other
    rows tie them exactly, and so do the moved ones. Drawn from ``a``'s
    marginal (``"any"``), each moved row agrees with probability about
    1/2: of 40 or more, at least 3/4 agree with probability below 1e-3.
    ``_model_neighbours`` is the measured tables' attributes beside ``a``."""
    rel = _pipeline("neighbours")
    names = [str(x) for x in rel.blocks_.names]
    j = names.index("a")
    tied = {names.index(str(x)) for t in rel.marginals_ if "a" in t for x in t}
    assert rel._model_neighbours(j) == sorted(tied - {j})
    assert names.index("b") in rel._model_neighbours(j)
    agree, base = _moved_agreement(rel)
    assert base == 1.0 and agree == 1.0
    marginal = _pipeline("any")
    assert marginal._model_neighbours(j) is None
    agree, base = _moved_agreement(marginal)
    assert base == 1.0 and agree < 0.75


def test_an_unknown_donor_rule_is_refused():
    rel = _pipeline("neighbours")
    rel._rules = dataclasses.replace(rel._rules, moved_row_donors="nearest")
    with pytest.raises(ValueError, match="moved_row_donors"):
        rel._model_neighbours(0)
