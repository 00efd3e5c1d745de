"""``benchmarks/bench_heavy_leaves.py``: which leaves count as heavy and wide."""

from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks.bench_heavy_leaves import heavy_leaves


def _spec(edges, counts_b, finest, b=10.0):
    fine = SimpleNamespace(
        edges=np.asarray(edges, dtype=float),
        counts=np.asarray(counts_b, dtype=float) * b,
        scale=b,
        finest=np.asarray(finest, dtype=bool),
    )
    return SimpleNamespace(fine=fine)


def test_a_heavy_wide_leaf_and_the_share_it_holds():
    """``[16, 256)`` (4 in ``t``) at 12 b is heavy and wide; ``[0, 1)`` at
    20 b is finest, ``[256, 300)`` (0.22 in ``t``) at 9 b narrow, ``[300,
    1024)`` at 5 b light: one leaf, 12 of the 46 b kept."""
    spec = _spec(
        [0, 1, 16, 256, 300, 1024],
        [20, 0, 12, 9, 5],
        [True, False, False, False, False],
    )
    idx, share = heavy_leaves(spec, 8.0, 0.5)
    assert idx.tolist() == [2]
    assert share == pytest.approx(12 / 46, rel=1e-12)
    idx, share = heavy_leaves(spec, 4.0, 0.5)  # [300, 1024) now heavy too
    assert idx.tolist() == [2, 4] and share == pytest.approx(17 / 46, rel=1e-12)
