"""A float column that lives at the fine grid's resolution near 0 is named.

The private bins of a float column resolve no finer than ``RES_FLOOR``
(2^-10) near 0: the cells ``[0, 2^-10)`` and ``[-2^-10, 0)`` decode as
exactly 0, so that a heap of zeros comes back exactly. Rates of 0-0.003
came back 62 % exactly 0 without a word. The encoder now names a column
whose released domain keeps such a cell beside a leaf at the floor's scale
(``_domain_warnings._at_resolution_floor``), from the released leaves only.
"""

from __future__ import annotations

import types
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.exceptions import CoarseDomainWarning
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing._domain_warnings import (
    NEAR_FLOOR_SPAN,
    _at_resolution_floor,
)
from skdp_synth.preprocessing._natural_limits import RES_FLOOR

F = RES_FLOOR


def _spec(edges, counts, integer=False):
    hist = types.SimpleNamespace(
        edges=np.asarray(edges, dtype=float), counts=np.asarray(counts, dtype=float)
    )
    return types.SimpleNamespace(fine=hist, integer=integer, time_unit=None)


def test_a_floor_cell_beside_a_leaf_at_its_scale_is_named():
    near = NEAR_FLOOR_SPAN * F
    assert _at_resolution_floor(_spec([0, F, 2.4 * F, 1.0], [2000, 1100, 0]))
    # the leaf next to it just narrower than the span, and just not
    assert _at_resolution_floor(_spec([0, F, F + near * 0.999, 1.0], [9, 9, 0]))
    assert not _at_resolution_floor(_spec([0, F, F + near, 1.0], [9, 9, 0]))
    # below 0, mirrored
    assert _at_resolution_floor(_spec([-1.0, -2.4 * F, -F, 0], [0, 1100, 2000]))
    assert not _at_resolution_floor(_spec([-1.0, -F - near, -F, 0], [0, 9, 9]))


def test_a_heap_of_zeros_beside_empty_leaves_is_not_named():
    # a zero-inflated amount: the floor cell kept, the leaves next to it empty
    assert not _at_resolution_floor(_spec([0, F, 2 * F, 1.0, 64.0], [900, 0, 0, 40]))
    assert not _at_resolution_floor(_spec([0, F, 2 * F, 1.0], [0, 500, 0]))
    # integer columns have a floor of one unit
    assert not _at_resolution_floor(_spec([0, F, 2 * F], [9, 9], integer=True))


def _rates(seed, n=3000):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "cat": rng.choice(list("abc"), n),
            "x": rng.normal(50.0, 10.0, n),
            "rate": rng.beta(2.0, 5.0, n) * 0.003,
        }
    )


def _fit(df, seed, **encoder):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = (
            make_synthesis_pipeline(
                BooleanEncoder(epsilon="auto", random_state=seed, **encoder),
                ProjectedGaussianRelease(epsilon=1.0, random_state=seed),
            )
            .fit(df)
            .sample(len(df))
        )
    named = [
        str(w.message)
        for w in caught
        if issubclass(w.category, CoarseDomainWarning)
        and "resolution near 0" in str(w.message)
    ]
    return rows, named


@pytest.mark.parametrize("seed", [1, 2])
def test_rates_at_the_floor_are_named_and_bounds_keep_them(seed):
    df = _rates(seed)
    rows, named = _fit(df, seed)
    assert float(np.mean(rows["rate"] == 0.0)) > 0.5  # none is 0 in the data
    assert len(named) == 1 and "['rate']" in named[0] and "bounds=" in named[0]
    rows, named = _fit(df, seed, bounds={"rate": (0.0, 0.003)})
    assert named == [] and float(np.mean(rows["rate"] == 0.0)) < 0.05
    # one side declared leaves the root, and the floor, as they were
    rows, named = _fit(df, seed, bounds={"rate": (0.0, None)})
    assert len(named) == 1 and float(np.mean(rows["rate"] == 0.0)) > 0.5


def test_a_column_far_above_the_floor_is_not_named():
    df = _rates(1).assign(rate=lambda d: d["rate"] * 1000.0)  # 0-3
    rows, named = _fit(df, 1)
    assert named == [] and float(np.mean(rows["rate"] == 0.0)) < 0.05
