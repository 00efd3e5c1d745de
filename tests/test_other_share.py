"""A categorical column that lost levels to ``"other"`` is named.

Level discovery keeps a level only above a threshold set by the budget, the
δ and the number of such columns, however few levels the column has: a
column of three levels at 50 / 30 / 20 % of 1,000 rows keeps its commonest
alone at ε = 1, and half its rows came back as ``"other"`` without a word.
The pipeline now names a column whose ``"other"`` level the release puts at
``OTHER_SHARE`` of the rows or more, ``DEGENERATE_Z`` sds to spare
(``_pipeline_levels.other_share_reason``): the release's estimates only.
"""

from __future__ import annotations

import types
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth._pipeline_levels import OTHER_SHARE, other_share_reason
from skdp_synth.exceptions import DegenerateColumnWarning
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing._decoding import DEGENERATE_Z


def _spec(levels=("a", "other"), kind="nominal", other=True):
    return types.SimpleNamespace(levels=list(levels), kind=kind, other=other)


def test_the_threshold_is_the_share_below_the_estimate_by_its_noise():
    n_hat, sd = 1000.0, 20.0
    at = OTHER_SHARE * n_hat + DEGENERATE_Z * sd  # 140: exactly on the line
    assert at == 140.0
    named = other_share_reason(_spec(), [(860.0, sd), (at, sd)], n_hat)
    assert named is not None and "14%" in named and "categories=" in named
    below = other_share_reason(_spec(), [(860.0, sd), (at - 0.5, sd)], n_hat)
    assert below is None


def test_only_a_discovered_catch_all_beside_other_levels_is_read():
    est = [(100.0, 5.0), (900.0, 5.0)]
    assert other_share_reason(_spec(), est, 1000.0) is not None
    assert other_share_reason(_spec(other=False), est, 1000.0) is None
    assert other_share_reason(_spec(kind="numeric"), est, 1000.0) is None
    # "other" alone: the encoder's CoarseDomainWarning names that column
    assert other_share_reason(_spec(levels=("other",)), est[1:], 1000.0) is None
    assert other_share_reason(_spec(), None, 1000.0) is None
    assert other_share_reason(_spec(), est, None) is None


def _three_levels(n, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "cat": rng.choice(list("abc"), n, p=[0.5, 0.3, 0.2]),
            "x": rng.normal(50.0, 10.0, n),
            "y": rng.exponential(3.0, n),
            "k": rng.integers(0, 5, n),
        }
    )


def _fit(df, seed=0, **encoder):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe = make_synthesis_pipeline(
            BooleanEncoder(epsilon="auto", random_state=seed, **encoder),
            ProjectedGaussianRelease(epsilon=1.0, random_state=seed),
        ).fit(df)
        rows = pipe.sample(len(df))
    named = [
        str(w.message)
        for w in caught
        if issubclass(w.category, DegenerateColumnWarning) and "'cat'" in str(w.message)
    ]
    return pipe, rows, named


@pytest.mark.parametrize("seed", [0, 1])
def test_a_column_that_lost_its_levels_to_other_is_named(seed):
    _, rows, named = _fit(_three_levels(1000, seed), seed)
    share = float(np.mean(rows["cat"] == "other"))
    assert share > 0.4  # the levels of 300 and 200 rows were not discovered
    assert len(named) == 1 and "of its rows in 'other'" in named[0]


def test_declared_or_discovered_levels_are_not_named():
    df = _three_levels(1000)
    _, rows, named = _fit(df, categories={"cat": ["a", "b", "c"]})
    assert named == [] and set(rows["cat"]) <= {"a", "b", "c"}
    _, rows, named = _fit(_three_levels(20000))  # every level discovered
    assert named == [] and float(np.mean(rows["cat"] == "other")) < 0.02


def test_a_text_column_of_numbers_is_left_to_its_own_warning():
    est = [(50.0, 5.0), (50.0, 5.0), (900.0, 5.0)]
    text = np.dtype(object)
    numbers = _spec(levels=("1", "2", "other"))
    numbers.dtype = text
    assert other_share_reason(numbers, est, 1000.0) is None  # NumbersAsTextWarning
    words = _spec(levels=("red", "blue", "other"))
    words.dtype = text
    assert other_share_reason(words, est, 1000.0) is not None
    numbers.dtype = pd.CategoricalDtype(["1", "2"])  # not text: no other warning
    assert other_share_reason(numbers, est, 1000.0) is not None
