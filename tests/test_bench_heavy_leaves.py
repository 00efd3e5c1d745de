"""``benchmarks/bench_heavy_leaves.py``: which leaves count as heavy and wide."""

from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks.bench_heavy_leaves import heavy_leaves, second_stage_tv


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


def test_the_second_stage_oracle_reads_the_rows_inside_a_leaf():
    """``[16, 256)`` cut in two midway in ``t`` (``t`` = log2(1 + x): at
    65.1): 30 rows below it and 10 above. Uniform shares are 0.25 off in
    TV; at a noise of 1e-9 ``b`` the sub-cells tell the shares exactly."""
    spec = _spec([0, 16, 256], [0, 12], [False, False])
    values = np.r_[np.full(30, 20.0), np.full(10, 200.0)]
    rng = np.random.default_rng(0)
    [(uniform, told)] = second_stage_tv(spec, values, [1], 2, 1e-9, rng)
    assert uniform == pytest.approx(0.25, abs=1e-12)
    assert told == pytest.approx(0.0, abs=1e-9)
    assert second_stage_tv(spec, values + 1000.0, [1], 2, 1.0, rng) == []
