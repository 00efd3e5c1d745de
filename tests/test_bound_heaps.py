"""A heap at a declared bound decodes at the bound.

``bounds=(lo, hi)`` makes ``[lo, hi]`` PrivTree's root, and the encoder clips
to it: a heap at ``hi`` (a share's 100, a visibility capped at 10 miles) sits
in the root's last leaf, a finest leaf ``[hi - w, hi]``. Decoded at its edge
nearer 0, as other finest leaves are, it came back at ``hi - w``: with
``bounds=(0, 100)``, 80 % of 3,000 rows at exactly 100 came back at
99.99999999997, none at 100 (ε = 1, seeds 0-2), while without bounds they
came back at 100 (``_decoding._root_end``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing._decoding import _root_end
from skdp_synth.preprocessing._numeric_domain import FineHistogram


def _heaped(at, lo, hi, share, n=3000, seed=0):
    rng = np.random.default_rng(seed)
    v = np.where(rng.random(n) < share, at, rng.uniform(lo, hi, n))
    return pd.DataFrame({"v": v, "g": rng.choice(["a", "b"], n)})


def _rows(df, seed, **enc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_synthesis_pipeline(
            BooleanEncoder(random_state=seed, **enc),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=seed),
        )
        pipe.fit(df)
    return pipe.sample(len(df), random_state=seed)["v"].astype(float)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    ("at", "lo", "hi", "share"),
    [(100.0, 0.0, 100.0, 0.8), (10.0, 0.0, 10.0, 0.8), (-5.0, -5.0, 5.0, 0.6)],
)
def test_a_heap_at_a_declared_bound_comes_back_at_the_bound(seed, at, lo, hi, share):
    """The heap's rows come back exactly at the bound, within the release's
    noise of its share (the release's sd of a bin's share here is under
    0.01; 0.1 is more than 10 of them), and no value leaves the bounds.
    Before ``_root_end`` the two upper bounds failed (no row exactly at the
    bound: the values within 1e-10 of it, on its inside); the lower bound's
    heap came back at -5 through the round-heap rule (``_round_heaps``:
    the leaf ``[-5, -4.99...)`` holds its round number, a half-open leaf
    ending at 100 does not)."""
    df = _heaped(at, lo, hi, share)
    s = _rows(df, seed, bounds={"v": (lo, hi)})
    assert abs(float((s == at).mean()) - share) < 0.1
    assert s.min() >= lo and s.max() <= hi


def test_the_root_end_is_read_only_for_a_finest_leaf_at_it():
    """``_root_end``: the root's end for a finest leaf at either end, NaN
    for an inner finest leaf and for an end leaf that is not finest (the
    default root, ``±2^40``, is never a finest leaf)."""
    edges = np.array([0.0, 50.0, 99.99, 100.0])
    hist = FineHistogram(
        edges, np.ones(3), 0.0, np.array([False, True, True]), False, (0.0, 100.0)
    )
    out = _root_end(hist, np.array([0, 1, 2]))
    assert np.isnan(out[0]) and np.isnan(out[1]) and out[2] == 100.0
    low = FineHistogram(
        np.array([-5.0, -4.999, 5.0]),
        np.ones(2),
        0.0,
        np.array([True, False]),
        False,
        (-5.0, 5.0),
    )
    assert _root_end(low, np.array([0, 1]))[0] == -5.0
    assert np.isnan(_root_end(low, np.array([0, 1]))[1])
