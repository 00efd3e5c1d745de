"""The refinement passes of the bounded mode (``refine_cells=K``) of the
private domains learned from a Dask DataFrame: what a later pass counts
for the numeric columns whose trees have not run yet."""

import warnings

import numpy as np
import pandas as pd
import pytest
from _skewed_columns import four_skewed_columns

from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing import _count_grid as cg
from skdp_synth.preprocessing import _domain_stats as ds
from skdp_synth.preprocessing import _refine_bounds as rb

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

pytestmark = [
    pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.PrivacyBudgetWarning"),
    pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.CoarseDomainWarning"),
]


def _fits(frame, passes, **params):
    """The in-memory and the Dask fit; ``passes`` gets, per refinement
    pass, its columns and which of them had started their tree."""
    real = ds.DomainStatistics.refine

    def refine(self, wanted):
        if wanted:
            passes.append({c: self.counters[c].started for c in wanted})
        return real(self, wanted)

    ddf = dd.from_pandas(frame, npartitions=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = BooleanEncoder(**params).fit(ddf.compute())
        ds.DomainStatistics.refine = refine
        try:
            with dask.config.set(scheduler="threads"):
                b = BooleanEncoder(**params).fit(ddf)
        finally:
            ds.DomainStatistics.refine = real
    return a, b


def _state(enc):
    return [
        (s.name, list(s.bits), s.fine.edges.tolist(), s.fine.counts.tolist())
        for s in enc.specs_
        if getattr(s, "fine", None) is not None
    ]


@pytest.mark.parametrize("seed", [1, 4])
def test_a_later_pass_counts_deeper_for_the_columns_to_come(seed, monkeypatch):
    """A refinement pass after the first (a tree asked for a cell below what
    the first pass counted) also counts deeper inside the grid cells the
    first pass refined for the columns whose trees have not run, from the
    exact counts of their kept cells (:meth:`ColumnCounts.kept_reach`): two
    refinement passes on these draws where counting only their grid cells
    not refined yet took three (50,000 rows, 4 chunks, the grid 10 deep,
    ``refine_cells=2^14``; on the parent commit the second and third
    passes were wage's and assets' for seed 1, wage's and debt's for seed
    4, each for its own column only). The domains stay the in-memory
    ones. The passes as planned without running the trees ahead (OpenDP's
    noise, which cannot be drawn twice); run ahead on the seeded noise,
    the first pass serves every tree on these draws."""
    monkeypatch.setattr(cg, "GRID_DEPTH", 10)
    params = dict(epsilon=1.0, random_state=seed, refine_cells=2**14)
    ahead = []
    a, b = _fits(four_skewed_columns(seed), ahead, **params)
    assert _state(a) == _state(b)
    assert len(ahead) == 1
    monkeypatch.setattr(ds, "can_run_ahead", lambda source: False)
    passes = []
    a, b = _fits(four_skewed_columns(seed), passes, **params)
    assert _state(a) == _state(b)
    assert len(passes) == 2
    # the second pass is a tree's on demand, and serves a column to come
    asking = [c for c, started in passes[1].items() if started]
    assert len(asking) == 1
    assert any(not started for started in passes[1].values())


def test_kept_cells_to_count_deeper_are_the_likely_splits():
    """:meth:`ColumnCounts.kept_reach`: a kept cell's bound is its grid
    cell's reach times PrivTree's split probabilities down to it (the grid
    cell's count at the depths between, its own at its depth); a cell
    PrivTree cannot split, or an empty one, gets 0; the least likely are
    left out up to :data:`REFINE_MISS` in all."""
    rng = np.random.default_rng(3)
    x = np.sort(np.round(rng.lognormal(6, 0.3, 40_000), 1))
    edges, *_ = ds.grid_for(False, None, 8)
    grid = np.bincount(np.searchsorted(edges, x, "right") - 1, minlength=edges.size - 1)
    counter = ds.ColumnCounts(False, None, 8, grid, 0, None, cap=2**12)
    counter.lam = 40.0
    cells, reach = ds._reach(counter, 2.0, 1.0)
    top = cells[np.argsort(reach)[-3:]]  # three likely grid cells
    from skdp_synth.preprocessing import _chunk_counts as cc

    targets = counter.grid_targets(top, None, np.full(3, 11))
    lo, hi, depth, count = cc.refined_counts(
        x, targets, False, counter.floor, counter.root_hi
    )
    counter.add_cells(targets, lo, hi, depth, count)
    i, r = counter.kept_reach(cells, reach)
    assert i.size and np.all(r > 0)
    assert np.all(counter.cell_depth[i] == 11)
    # the bound, recomputed for each kept cell
    bound = []
    for j in range(counter.lo.size):
        k = int(np.searchsorted(edges, counter.lo[j], "right") - 1)
        p = reach[np.searchsorted(cells, k)]
        for d in range(9, 11):
            p *= ds.split_probability(grid[k], d, 40.0)
        c = counter.cell_cum[j + 1] - counter.cell_cum[j]
        p *= ds.split_probability(c, 11, 40.0)
        bound.append(
            float(p) if counter.hi[j] - counter.lo[j] > 2 * counter.floor else 0.0
        )
    bound = np.asarray(bound)
    np.testing.assert_allclose(r, bound[i], rtol=1e-9)
    assert bound.sum() - r.sum() <= rb.REFINE_MISS + 1e-12


@pytest.mark.parametrize("seed", [3, 8])
def test_every_pass_shares_the_cells_of_all_columns_but_the_asking_one(
    seed, monkeypatch
):
    """Every refinement pass predicts the columns still to come within
    ``refine_cells`` cells for each numeric column but the asking one,
    however many are still to come (before: one share per column still
    to come, so a pass late in the table's order counted fewer cells).
    The four skewed columns in reverse order (``income``, the hardest,
    last; 50,000 rows, 4 chunks, the grid 10 deep, ``refine_cells=2^14``):
    two refinement passes where the parent commit took three, with the
    in-memory domains. Planned without running the trees ahead (OpenDP's
    noise); run ahead on the seeded noise, the trees decided to the end
    take part of the shares (the prediction the rest), and the passes are
    no more."""
    monkeypatch.setattr(cg, "GRID_DEPTH", 10)
    cap = 2**14
    shares = []
    real = ds.joint_stops

    def joint_stops(counters, chosen, lam, cap=None, deeper=None, **kw):
        shares.append(kw.get("shares", len(counters)))
        return real(counters, chosen, lam, cap, deeper, **kw)

    monkeypatch.setattr(ds, "joint_stops", joint_stops)
    frame = four_skewed_columns(seed)[["assets", "debt", "wage", "income"]]
    ahead = []
    a, b = _fits(frame, ahead, epsilon=1.0, random_state=seed, refine_cells=cap)
    assert _state(a) == _state(b)
    assert shares and max(shares) <= 3
    assert len(ahead) <= 2
    monkeypatch.setattr(ds, "can_run_ahead", lambda source: False)
    shares.clear()
    passes = []
    a, b = _fits(frame, passes, epsilon=1.0, random_state=seed, refine_cells=cap)
    assert _state(a) == _state(b)
    assert shares and set(shares) == {3}  # four numeric columns, one asking
    assert len(passes) == 2


def test_pass_one_bounds_distinct_values_by_the_decimals(monkeypatch):
    """Pass 1 of the bounded mode also notes the decimals of each numeric
    column's values (:func:`decimal_resolution`: the least ``d`` with
    every value ``round(x 10^d) / 10^d``), so a grid cell's distinct
    values are bounded by the values of ``d`` decimals it can hold
    (:func:`decimal_values`) as well as by its count and the sum over the
    chunks of their distinct values in it. A score of one decimal, 4
    chunks, the grid 12 deep: a grid cell narrower than 0.1 holding a
    value in every chunk is bounded by 2 values, not 4 (the parent
    commit's bound, the sum over the chunks, which made
    the 10^7-row bench table's first refinement pass plan for 10 times
    the values it read). Never below the cell's distinct values; the
    domains stay the in-memory ones."""
    monkeypatch.setattr(cg, "GRID_DEPTH", 12)
    rng = np.random.default_rng(5)
    n = 40_000
    frame = pd.DataFrame(
        {
            "score": np.round(rng.normal(60, 3, n), 1),
            "wage": rng.lognormal(7, 1.2, n).round(2),
            "income": rng.lognormal(10, 1, n),
        }
    )
    seen = []
    real = ds.DomainStatistics.refine

    def refine(self, wanted):
        seen.append(self)
        return real(self, wanted)

    monkeypatch.setattr(ds.DomainStatistics, "refine", refine)
    a, b = _fits(frame, [], epsilon=1.0, random_state=2, refine_cells=2**14)
    assert _state(a) == _state(b)
    stats = next(s for s in seen if s.frame is not None)
    counter = stats.counters["score"]
    occupied = np.flatnonzero(counter.grid)
    narrow = np.diff(counter.edges)[occupied] < 0.1
    repeated = counter.distinct[occupied] == 4  # a value in every chunk
    assert np.sum(narrow & repeated) > 10
    assert np.all(counter.distinct_of(occupied)[narrow] <= 2)
    decimals = {c: k.decimals for c, k in stats.counters.items()}
    assert decimals == {"score": 1, "wage": 2, "income": None}
    for col, counter in stats.counters.items():
        occupied = np.flatnonzero(counter.grid)
        bound = counter.distinct_of(occupied)
        x = np.unique(frame[col].dropna())
        true = np.bincount(
            np.searchsorted(counter.edges, x, "right") - 1,
            minlength=counter.grid.size,
        )[occupied]
        assert np.all(bound >= true)


def test_decimal_values_bound_the_values_a_cell_can_hold():
    """:func:`decimal_values` is at least the distinct values of ``d``
    decimals (parsed as a CSV parses them) in ``[lo, hi]``, closed ends
    included, and None-free: no bound (``2^62``) where the magnitude leaves
    no room for the rounding; :func:`decimal_resolution` finds the least
    ``d`` and None for values of more than ``DECIMALS``."""
    from skdp_synth.preprocessing import _chunk_counts as cc

    rng = np.random.default_rng(0)
    for d in (0, 1, 2, 4):
        k = rng.integers(-(10 ** (d + 4)), 10 ** (d + 4), 20_000)
        x = np.unique(np.array([float(f"{v / 10**d:.{d}f}") for v in k]))
        assert cc.decimal_resolution(x) == d
        lo = np.sort(rng.choice(x, 500))
        hi = lo + rng.random(500) * rng.choice([1e-3, 0.1, 10.0], 500)
        n = np.searchsorted(x, hi, "right") - np.searchsorted(x, lo, "left")
        assert np.all(cc.decimal_values(lo, hi, d) >= n)
    assert cc.decimal_resolution(np.array([0.1, 0.2, 0.1 + 0.2])) is None
    assert cc.decimal_resolution(rng.random(10)) is None
    assert cc.decimal_values([1e20], [1e20 + 1e6], 2)[0] == 2**62


def test_one_value_cells_are_kept_only_where_every_chunk_agrees():
    """:func:`one_valued_cells`: a grid cell is kept as one value and its
    count only where every chunk noted the same value and the notes hold
    all the cell's rows, on at least ``ONE_VALUE_CELL_ROWS`` in all."""
    from skdp_synth.preprocessing import _chunk_counts as cc

    rows = cc.ONE_VALUE_CELL_ROWS
    grid = np.array([0, 2 * rows, 2 * rows, 2 * rows + 5, rows - 1])
    notes = [
        (np.array([1, 2, 3, 4]), np.array([1.5, 2.5, 3.5, 4.5]), np.full(4, rows)),
        (np.array([1, 2, 3]), np.array([1.5, 2.75, 3.5]), np.full(3, rows)),
    ]
    cells, values, counts = cc.one_valued_cells(notes, grid)
    # 1: the same value in both chunks; 2: two values; 3: 5 rows not noted
    # (a chunk of more values or fewer rows there); 4: too few rows
    assert cells.tolist() == [1]
    assert values.tolist() == [1.5]
    assert counts.tolist() == [2 * rows]


def test_a_cell_of_one_value_needs_no_pass(monkeypatch):
    """A column whose grid cells each hold one value (a score of one
    decimal, 200,000 rows, 4 chunks, the grid 12 deep, cells narrower than
    0.1): its tree's counts below the grid come from pass 1's one-value
    cells, so it asks for no pass (every such cell kept here: the row
    thresholds at 1); without them (thresholds above ``n``) it asks, as
    before. The in-memory domains either way."""
    from skdp_synth.preprocessing import _chunk_counts as cc

    monkeypatch.setattr(cg, "GRID_DEPTH", 12)
    rng = np.random.default_rng(4)
    n = 200_000
    frame = pd.DataFrame({"score": np.round(rng.normal(50, 3, n), 1)})
    params = dict(epsilon=1.0, random_state=0, refine_cells=2**12)
    for rows, asks in ((1, False), (n + 1, True)):
        monkeypatch.setattr(cc, "ONE_VALUE_CHUNK_ROWS", rows)
        monkeypatch.setattr(cc, "ONE_VALUE_CELL_ROWS", rows)
        passes = []
        a, b = _fits(frame, passes, **params)
        assert _state(a) == _state(b)
        assert bool(passes) == asks
