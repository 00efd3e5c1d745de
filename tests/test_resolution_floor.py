"""A float column that lives at the fine grid's resolution near 0 is named.

The private bins of a float column resolve no finer than ``RES_FLOOR``
(2^-10) near 0: the cells ``[0, 2^-10)`` and ``[-2^-10, 0)`` decode as
exactly 0, so that a heap of zeros comes back exactly. Rates of 0-0.003
came back 62 % exactly 0 without a word. The encoder now names a column
whose released domain keeps such a cell beside a leaf at the floor's scale
(``_domain_warnings._at_resolution_floor``), from the released leaves only,
and the release measures the cell's part above ``2^-14``
(``_floor_parts``, ``tests/test_floor_parts.py``).
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
    FLOOR_MASS_SHARE,
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


def test_a_floor_cell_holding_a_sliver_of_the_mass_is_not_named():
    """A standard normal: its centre splits finely beside the floor cell,
    which holds 0.04 % of the rows. Under :data:`FLOOR_MASS_SHARE` it is not
    named; on the parent 20,000 rows of N(0, 1) at ε = 0.5 were named in 8
    of 10 fits (seeds 0-9), here in none."""
    near = 2.4 * F
    total = 100_000.0
    share = FLOOR_MASS_SHARE * total
    rest = total - share - 100.0
    assert _at_resolution_floor(_spec([0, F, near, 1.0], [share, 100, rest]))
    low = share * 0.99
    assert not _at_resolution_floor(_spec([0, F, near, 1.0], [low, 100, rest]))
    x = pd.DataFrame({"a": np.random.default_rng(1).normal(size=20000)})
    named = 0
    for seed in range(10):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            BooleanEncoder(epsilon=0.5, random_state=seed).fit(x)
        named += any("resolution near 0" in str(w.message) for w in caught)
    assert named == 0


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


def _under_floor(rows, df):
    """The rows' share exactly 0, and how far their share in ``(0, F)`` is
    from the data's share under ``F`` (none of the data is 0)."""
    r = rows["rate"].to_numpy(dtype=float)
    inside = float(np.mean((r > 0.0) & (r < F)))
    return float(np.mean(r == 0.0)), abs(inside - float(np.mean(df["rate"] < F)))


@pytest.mark.parametrize("seed", [1, 2])
def test_rates_at_the_floor_are_named_and_bounds_keep_them(seed):
    """Named either way. The floor cell's part above ``F / 16`` is measured
    by the release (``_floor_parts``): 62 % of the rows came back as exactly
    0 before it (62.2 % and 62.6 % at seeds 1 and 2, 62.5 % and 62.3 % of
    the data under ``F``), 0.07 % with it, and 62.7 % and 62.1 % in (0,
    F). Their shape inside the cell is still lost, hence the warning."""
    df = _rates(seed)
    rows, named = _fit(df, seed)
    zero, off = _under_floor(rows, df)
    assert zero < 0.01 and off < 0.03
    assert len(named) == 1 and "['rate']" in named[0] and "bounds=" in named[0]
    rows, named = _fit(df, seed, bounds={"rate": (0.0, 0.003)})
    assert named == [] and float(np.mean(rows["rate"] == 0.0)) < 0.05
    # one side declared leaves the root, and the floor, as they were
    rows, named = _fit(df, seed, bounds={"rate": (0.0, None)})
    zero, off = _under_floor(rows, df)
    assert len(named) == 1 and zero < 0.01 and off < 0.03


def test_a_column_far_above_the_floor_is_not_named():
    df = _rates(1).assign(rate=lambda d: d["rate"] * 1000.0)  # 0-3
    rows, named = _fit(df, 1)
    assert named == [] and float(np.mean(rows["rate"] == 0.0)) < 0.05


def test_the_floor_binds_only_its_two_cells():
    """The floor cells ``[-F, 0)`` and ``[0, F)`` never split; any other
    node splits below the floor's width (PrivTree decides, up to
    ``MAX_DEPTH``). On the parent every float node narrower than ``2 F``
    stayed a leaf, wherever it lay."""
    from skdp_synth.preprocessing._numeric_domain import MAX_DEPTH, _can_split

    assert not _can_split(0.0, F, 0, False, F)
    assert not _can_split(-F, 0.0, 0, False, F)
    assert _can_split(1.386, 1.386 + F, 12, False, F)
    assert _can_split(-2.0, -2.0 + F / 8, 20, False, F)
    assert _can_split(F, 2.0 * F, 9, False, F)  # beside the floor cell, outside it
    assert not _can_split(1.386, 1.386 + F, MAX_DEPTH, False, F)
    assert not _can_split(5.0, 6.0, 3, True, F)  # integers: width 1 as before


def test_a_heap_at_a_value_that_is_not_round_is_decoded_at_it():
    """A log family size (doctorcontacts' ``lfam``: 27 % of the rows at
    ``log 4``, stored as 1.386294) kept its heap in a leaf about ``F`` wide
    under a floor on every node, and the rows drawn there spread over it.
    On the parent, here: the leaf ``[1.38505, 1.38630)`` in all 20 fits,
    none decoded at 1.386294. Now the tree splits the heap's leaf until its
    count stops paying for the depth (1e-8 to 6e-8 wide here in 19 fits), and
    :mod:`._round_heaps` decodes a leaf that narrow at its value: 19 of 20.
    In the other fit a chance chain of empty nodes reached ``MAX_DEPTH``
    in the heap's floor-wide node too, and the heap is drawn inside the
    span of the two (2.8e-4 wide): the tree's shape cannot tell them apart,
    and the span keeps the heap inside one leaf."""
    from skdp_synth.mechanisms import NoiseSource
    from skdp_synth.preprocessing import _numeric_domain as nd
    from skdp_synth.preprocessing._round_heaps import round_values

    rng = np.random.default_rng(0)
    heap = 1.386294
    x = np.concatenate([np.full(4000, heap), rng.normal(3.0, 0.5, 11000)])
    exact = 0
    for s in range(20):
        h = nd.privtree_histogram(x, 1.0, NoiseSource(s))
        j = int(np.searchsorted(h.edges, heap, "right")) - 1
        assert h.edges[j + 1] - h.edges[j] < F
        exact += round_values(h)[j] == heap
    assert exact >= 18


def test_a_chain_below_the_floor_becomes_three_leaves():
    """``sub_floor_leaves``: the deepest leaf of what PrivTree grew under a
    node the floor once stopped, with the node's stretches on either side
    of it as one leaf each -- or the node whole where that leaf is fewer
    than ``SUB_FLOOR_LEVELS`` levels down (a dense stretch, not a heap)."""
    from skdp_synth.preprocessing._natural_limits import (
        SUB_FLOOR_LEVELS,
        sub_floor_leaves,
    )

    node = (1.0, 1.0 + 2 * F, 10)
    k = SUB_FLOOR_LEVELS
    w = 2 * F / 2**k
    chain = [(1.0, 1.0 + F, 11), (1.0 + F + w, 1.0 + 2 * F, 11)]
    chain += [(1.0 + F, 1.0 + F + w, 10 + k)]
    assert sub_floor_leaves(node, chain) == [
        (1.0, 1.0 + F),
        (1.0 + F, 1.0 + F + w),
        (1.0 + F + w, 1.0 + 2 * F),
    ]
    shallow = [(1.0, 1.0 + F, 11), (1.0 + F, 1.0 + 2 * F, 11)]
    assert sub_floor_leaves(node, shallow) == [(1.0, 1.0 + 2 * F)]
    # the deepest at the node's lower edge: no empty piece below it
    low = [(1.0, 1.0 + w, 10 + k), (1.0 + w, 1.0 + 2 * F, 11)]
    assert sub_floor_leaves(node, low) == [(1.0, 1.0 + w), (1.0 + w, 1.0 + 2 * F)]
    # two deepest leaves: the stretch from the first to the last
    two = [(1.0, 1.0 + w, 10 + k), (1.0 + w, 1.0 + F, 11)]
    two += [(1.0 + F, 1.0 + F + w, 10 + k), (1.0 + F + w, 1.0 + 2 * F, 11)]
    assert sub_floor_leaves(node, two) == [
        (1.0, 1.0 + F + w),
        (1.0 + F + w, 1.0 + 2 * F),
    ]


def test_a_dense_continuous_column_keeps_its_leaves_at_the_floor():
    """Without a heap, nothing below the floor survives: on 15,000 rows of
    N(3, 0.5) at ε = 1 (a column's whole budget), PrivTree split 512
    floor-wide nodes in 20 fits, 4 of them ``SUB_FLOOR_LEVELS`` or more
    levels down, none to ``MAX_DEPTH``; every one is its leaf of the parent
    again, and no leaf is narrower than ``F / 2`` (with the chains kept at 3
    levels and short of ``MAX_DEPTH``, 169 were)."""
    from skdp_synth.mechanisms import NoiseSource
    from skdp_synth.preprocessing import _numeric_domain as nd

    x = np.random.default_rng(0).normal(3.0, 0.5, 15000)
    narrow = 0
    for s in range(20):
        h = nd.privtree_histogram(x, 1.0, NoiseSource(s))
        narrow += int(np.sum(np.diff(h.edges) < F / 2))
    assert narrow == 0


def test_a_kept_chain_moves_no_other_draw(monkeypatch):
    """A kept chain's middle and right leaves draw their counts from the
    histogram's child stream (``_tree_grid.chain_cells_added``); the left
    one takes the draw its floor-wide node had. So every other leaf's noisy
    count, and every later draw of the fit, is the one the fit drew with
    the node whole. On the parent the two extra counts were drawn in the
    main vector: the leaves after the heap and the source's next draw
    moved (randhie, covid_testing and yrbss at ε = 1 moved 2-4 % over 3
    seeds, no heap of theirs gained)."""
    from skdp_synth.mechanisms import NoiseSource
    from skdp_synth.preprocessing import _natural_limits as nl
    from skdp_synth.preprocessing import _numeric_domain as nd

    rng = np.random.default_rng(0)
    heap = 1.386294
    x = np.concatenate([np.full(4000, heap), rng.normal(3.0, 0.5, 11000)])
    for s in range(3):
        kept_src, whole_src = NoiseSource(s), NoiseSource(s)
        kept = nd.privtree_histogram(x, 1.0, kept_src)
        with monkeypatch.context() as m:
            m.setattr(nl, "SUB_FLOOR_LEVELS", 10**6)  # every node stays whole
            whole = nd.privtree_histogram(x, 1.0, whole_src)
        assert np.min(np.diff(kept.edges)) < F / 2**7  # a chain was kept
        assert np.min(np.diff(whole.edges)) > F / 2**7
        cells = {(a, b): c for a, b, c in zip(whole.edges, whole.edges[1:], whole.raw)}
        same = [
            (c, cells[(a, b)])
            for a, b, c in zip(kept.edges, kept.edges[1:], kept.raw)
            if (a, b) in cells
        ]
        assert len(same) == len(whole.raw) - 1  # all but the chain's node
        got, want = np.array(same).T
        np.testing.assert_array_equal(got, want)
        assert kept_src.rng.random() == whole_src.rng.random()


def test_both_floor_cells_heavy_are_named():
    """Values on both sides of 0 inside the floor: both cells heavy and
    confirmed on their own counts (``b ln(L / 0.01)``), whatever lies beside
    them. A point mass at 0 falls in one cell (``[0, F)``) and is not named,
    nor are two kept noise cells. On the parent, N(0, 1e-9) on 3,000 rows at
    ε = 1 kept only these two cells and came back without a word (a few rows
    at -0.98 to -0.07 from the bottom bin's excess placed below it)."""
    edges = [-1.0, -F, 0, F, 1.0]
    sure = 16.7 * np.log(4 / 0.01)  # 100 rows: four leaves at b = 16.7

    def spec(counts):
        named = _spec(edges, counts)
        named.fine.scale = 16.7
        return named

    assert _at_resolution_floor(spec([0, 1416, 1508, 0]))
    assert _at_resolution_floor(spec([0, sure, sure, 0]))
    assert not _at_resolution_floor(spec([0, sure * 0.99, 1508, 0]))
    thin = FLOOR_MASS_SHARE * 150_000 * 0.99  # under the share of the kept mass
    assert not _at_resolution_floor(spec([0, thin, 150_000, 0]))
    assert not _at_resolution_floor(spec([0, 0, 1508, 40]))
    x = pd.DataFrame({"x": np.random.default_rng(0).normal(0.0, 1e-9, 3000)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        BooleanEncoder(epsilon=0.5, random_state=0).fit(x)
    assert any("resolution near 0" in str(w.message) for w in caught)
