"""0 bounds a numeric column whose kept leaves on one side of it are noise.

Growth keeps a leaf from ``2 b``, so a column of proportions (none below 0)
kept ``[-1, -2^-10)`` and ``[-2^-10, 0)`` on noise beside its body, and 1.5 %
of its rows came back negative. The encoder now drops the kept leaves of one
side of 0 that pool at most ``b ln(L / 0.01)`` where the other side pools
more, and moves the cap to 0 (``_natural_limits.bound_at_zero``):
post-processing of the released counts.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing._natural_limits import ZERO_SIDE_LEVEL, bound_at_zero
from skdp_synth.preprocessing._numeric_domain import FineHistogram

B = 10.0
EDGES = np.array([-64.0, -1.0, -(2.0**-10), 0.0, 2.0**-10, 1.0, 16.0, 64.0])
STRICT = B * math.log((EDGES.size - 1) / ZERO_SIDE_LEVEL)


def _hist(counts, tentative=None, cap=(-64.0, 64.0)):
    counts = np.asarray(counts, dtype=float)
    finest = np.zeros(counts.size, dtype=bool)
    finest[[2, 3]] = True  # the floor cells
    return FineHistogram(
        EDGES, counts, 0.0, finest, False, cap, True, B, tentative, raw=counts.copy()
    )


def test_a_weak_side_of_zero_is_dropped_and_the_cap_moves_to_zero():
    hist = _hist([0, 28, 31, 0, 0, 900, 300], tentative=np.eye(7, dtype=bool)[1])
    out = bound_at_zero(hist)
    assert list(out.counts) == [0, 0, 0, 0, 0, 900, 300]
    assert out.cap == (0.0, 64.0) and not out.tentative.any()
    np.testing.assert_array_equal(out.raw, hist.raw)  # the raw draws stay
    # mirrored: a negative body, noise above 0
    flipped = _hist([300, 900, 0, 0, 31, 28, 0])
    out = bound_at_zero(flipped)
    assert list(out.counts) == [300, 900, 0, 0, 0, 0, 0] and out.cap == (-64.0, 0.0)


def test_the_side_is_dropped_up_to_its_level_and_not_past_it():
    at = _hist([0, STRICT / 2, STRICT / 2, 0, 0, 900, 300])
    assert float(at.counts[1:3].sum()) == STRICT
    assert not bound_at_zero(at).counts[1:3].any()
    over = _hist([0, STRICT / 2, STRICT / 2 + 0.01, 0, 0, 900, 300])
    assert bound_at_zero(over) is over


def test_two_real_sides_or_no_body_are_left_alone():
    signed = _hist([400, 500, 0, 0, 0, 900, 300])  # a balance's negatives
    assert bound_at_zero(signed) is signed
    noise = _hist([0, 28, 31, 0, 0, 30, 20])  # neither side passes
    assert bound_at_zero(noise) is noise


def _fit(values, seed, eps=1.0):
    rng = np.random.default_rng(seed)
    n = values.size
    df = pd.DataFrame(
        {"cat": rng.choice(list("abc"), n), "x": rng.normal(50.0, 10.0, n), "v": values}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_synthesis_pipeline(
            BooleanEncoder(epsilon="auto", random_state=seed),
            ProjectedGaussianRelease(epsilon=eps, random_state=seed),
        ).fit(df)
    return pipe.sample(n)["v"]


@pytest.mark.parametrize("seed", [0, 5])
def test_a_proportion_comes_back_without_negative_values(seed):
    """Seeds 0 and 5 of a Beta(2, 5) column on 3,000 rows at ε = 1 put 1.5 %
    and 1.9 % of their rows below 0 (down to -0.14 and -0.20) before."""
    values = np.random.default_rng(100 + seed).beta(2.0, 5.0, 3000)
    rows = _fit(values, seed)
    assert rows.min() >= 0.0


def test_a_signed_column_keeps_its_negative_values():
    rng = np.random.default_rng(7)
    n = 4000
    values = np.where(rng.random(n) < 0.3, -rng.uniform(100, 5000, n), 0.0)
    values = np.where(rng.random(n) < 0.4, rng.uniform(100, 5000, n), values)
    rows = _fit(values, 1)
    share = float(np.mean(rows < 0))
    assert 0.15 < share < 0.45  # the real share is about 0.18
