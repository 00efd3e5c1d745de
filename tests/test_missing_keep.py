"""A numeric column's kept missing level keeps its share when one of its
value bins is dropped: the dropped bin's model rows go to the column's
other values, never to missing. Post-processing of the model's rows."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from _fine_hist import fine_hist
from sklearn.base import BaseEstimator

from skdp_synth._pipeline_levels import PipelineLevelsMixin
from skdp_synth.gaussian_release._generating import move_level


def _rows():
    # one attribute: value levels 0, 1, 2 (40, 10 and 10 rows), 3 the
    # missing level (140 rows: 70 % missing)
    col = np.repeat([0, 1, 2, 3], [40, 10, 10, 140])
    return col[:, None].astype(np.int64)


def test_a_dropped_value_bins_rows_never_go_to_missing():
    """Level 1 dropped with ``keep=(3,)``: its 10 rows go to levels 0 and 2
    only, the missing level keeps its 140. Without ``keep`` (before:
    drawn from every other row) 70 % of them went to missing -- loans'
    ``months_since_90d_late`` at ε = 1, seed 2: 79.8 % missing in the rows
    against a released 77.8 ± 0.7 %."""
    rows = _rows()
    out = move_level(rows, 0, 1, lambda: np.random.default_rng(0), keep=(3,))
    counts = np.bincount(out[:, 0], minlength=4)
    assert counts[1] == 0 and counts[3] == 140 and counts[0] + counts[2] == 60
    # every other row at a kept level: they are drawn from as before
    only = np.repeat([1, 3], [10, 50])[:, None]
    out = move_level(only, 0, 1, lambda: np.random.default_rng(0), keep=(3,))
    assert np.bincount(out[:, 0], minlength=4)[3] == 60


class _Final:
    """A last step recording how the pipeline asks it to drop levels."""

    def __init__(self, estimates, n_levels):
        self.blocks_ = SimpleNamespace(names=["late"], n_levels=np.array([n_levels]))
        self.estimates = estimates
        self.calls = []

    def _one_way_level_estimate(self, j, level):
        return self.estimates[level]

    def _drop_unsupported_level(self, j, level, z=None, keep=()):
        self.calls.append((level, tuple(keep)))
        est, sd = self.estimates[level]
        return bool(est < (2.0 if z is None else z) * sd)


def test_the_pipeline_keeps_a_kept_missing_levels_share():
    """A split one-integer bin of a column with a kept missing level is
    dropped with the missing level in ``keep``; with the missing level
    dropped, nothing is kept."""
    hist = fine_hist([0, 1, 2, 16], [500.0, 30.0, 400.0], scale=40.0, integer=True)
    spec = SimpleNamespace(
        name="late",
        kind="numeric",
        levels=[0.0, 1.0, 2.0, 15.0],
        n_levels=3,
        fine=hist,
        split=(1,),
        missing=True,
        other=False,
    )
    est = [(500.0, 40.0), (30.0, 40.0), (400.0, 40.0), (3000.0, 40.0)]
    for missing_dropped, keep in ((False, (3,)), (True, ())):
        blocks = object()
        encoder = SimpleNamespace(blocks_=blocks, specs_=[spec])
        final = _Final(est, 4)
        final._model_rows = _rows()
        pipe = SimpleNamespace(
            _iter=lambda with_final, e=encoder: [(0, "enc", e)],
            _drop_missing_level=lambda *a, d=missing_dropped: d,
            _warn_degenerate=lambda *a: None,
        )
        PipelineLevelsMixin._drop_unsupported_levels(pipe, final, {"blocks": blocks})
        assert (1, keep) in final.calls
        assert pipe.integer_bins_dropped_ == {"late": [1.0]}


class _Cells(BaseEstimator):
    """The damped synthesizer's state for one one-hot attribute of four
    levels (the last its missing level) over two cells."""

    def __init__(self):
        from skdp_synth.blocks import Block

        self.blocks_ = SimpleNamespace(blocks=[Block("late", "onehot", 0, 4)])
        self.cell_means_ = np.array([[0.40, 0.05, 0.05, 0.50], [0.2, 0.1, 0.0, 0.7]])

    def fit(self):
        return self

    def _domain(self):
        return "boolean"

    def _one_way_level_estimate(self, j, level):
        return (0.0, 10.0)


def test_the_damped_release_keeps_a_kept_missing_levels_share():
    """Level 1 dropped with ``keep=(3,)``: each cell's missing probability
    stays (0.5, 0.7), levels 0 and 2 take level 1's mass in proportion;
    without ``keep`` the missing level took its share of it too."""
    from skdp_synth.damped._estimator import DampedPrivateSynthesizer

    cells = _Cells()
    assert DampedPrivateSynthesizer._drop_unsupported_level(cells, 0, 1, keep=(3,))
    np.testing.assert_allclose(cells.cell_means_[:, 3], [0.5, 0.7])
    np.testing.assert_allclose(cells.cell_means_[:, 1], [0.0, 0.0])
    np.testing.assert_allclose(
        cells.cell_means_[0, :3], [0.4 / 0.45 * 0.5, 0.0, 0.05 / 0.45 * 0.5]
    )
    np.testing.assert_allclose(cells.cell_means_[1, :3], [0.3, 0.0, 0.0])
    cells = _Cells()
    DampedPrivateSynthesizer._drop_unsupported_level(cells, 0, 1)
    np.testing.assert_allclose(cells.cell_means_[:, 3], [0.5 / 0.95, 0.7 / 0.9])
