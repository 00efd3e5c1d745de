"""Tests of skdp_synth.invariants: parsing, rounding within one count, repair."""

import itertools

import numpy as np
import pytest

from skdp_synth.gaussian_release import (
    AttributeInvariants,
    repair_rows,
    rounded_tables,
    running_intersection_order,
)

LEVELS = np.array([4, 3, 2, 3])


def _table(L, S):
    index = np.zeros(L.shape[0], dtype=np.int64)
    for j in S:
        index = index * LEVELS[j] + L[:, j]
    return np.bincount(index, minlength=int(np.prod(LEVELS[list(S)])))


def _rows(n, seed):
    rng = np.random.default_rng(seed)
    p = [0.5, 0.3, 0.15, 0.05]
    return np.column_stack(
        [rng.choice(4, n, p=p)] + [rng.integers(0, k, n) for k in LEVELS[1:]]
    )


def test_parse_and_closure():
    names = ["a", "b", "c", "d"]
    inv = AttributeInvariants.parse({"total": True, "tables": [("c", "a")]}, names)
    assert inv.sets == ((), (0, 2))
    assert inv.closure() == {(), (0,), (2,), (0, 2)}
    assert inv.labels() == ("total", "table a x c")
    assert AttributeInvariants.is_spec([("a",)])
    assert not AttributeInvariants.is_spec(np.ones((2, 3)))
    assert not AttributeInvariants.is_spec([[1.0, 0.0]])
    with pytest.raises(ValueError, match="by their names"):
        AttributeInvariants.parse([(0,)], names)


def test_running_intersection_order():
    assert running_intersection_order([(0,), (0, 1), (0, 2)]) is not None
    assert running_intersection_order([(0, 1), (1, 2), (0, 2)]) is None
    order = running_intersection_order([(0,), (1,), (0, 1)])
    for k in range(1, len(order)):
        union = set().union(*order[:k])
        assert any(set(order[k]) & union <= set(T) for T in order[:k])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n", [1, 57, 1000, 2345])
def test_rounded_tables_are_consistent_and_within_one_count(seed, n):
    L = _rows(1000, seed)
    order = running_intersection_order([(0,), (0, 1), (0, 3), (0, 1, 2)])
    tables = {S: _table(L, S) for S in order}
    R = rounded_tables(tables, n, LEVELS)
    for S in order:
        assert R[S].sum() == n
        # nested tables: every overlap is a listed table, so within one count
        assert np.abs(R[S] - tables[S] * n / 1000).max() < 1
        if n == 1000:
            np.testing.assert_array_equal(R[S], tables[S])
    # shared margins agree (integers: exact)
    marg = R[(0, 1, 2)].reshape(4, 3, 2).sum(axis=2).ravel()
    np.testing.assert_array_equal(marg, R[(0, 1)])
    np.testing.assert_array_equal(R[(0, 3)].reshape(4, 3).sum(axis=1), R[(0,)])


@pytest.mark.parametrize("seed", range(4))
def test_repair_changes_the_fewest_rows(seed):
    rng = np.random.default_rng(seed)
    L = _rows(800, seed)
    start = _rows(800, seed + 100)
    order = running_intersection_order([(0,), (0, 1)])
    targets = {S: _table(L, S) for S in order}
    out = repair_rows(start, targets, LEVELS, rng)
    for S in order:
        np.testing.assert_array_equal(_table(out, S), targets[S])
    # attributes outside the invariants are never changed
    np.testing.assert_array_equal(out[:, 2:], start[:, 2:])
    # the first table: exactly its surplus rows change attribute 0
    surplus = np.clip(_table(start, (0,)) - targets[(0,)], 0, None).sum()
    assert np.count_nonzero(out[:, 0] != start[:, 0]) == surplus
    # the second: inside each level of attribute 0, the surplus of attribute 1
    moved = np.count_nonzero(out[:, 1] != start[:, 1])
    after_first = start.copy()
    after_first[:, 0] = out[:, 0]
    need = np.clip(_table(after_first, (0, 1)) - targets[(0, 1)], 0, None).sum()
    assert moved == need


def test_repair_of_rows_that_already_hold_the_tables_changes_nothing():
    L = _rows(300, 0)
    targets = {S: _table(L, S) for S in [(0,), (0, 1), (0, 3)]}
    out = repair_rows(L, targets, LEVELS, np.random.default_rng(0))
    np.testing.assert_array_equal(out, L)


def test_every_cell_level_combination_is_reachable():
    # a target with a cell absent from the start rows is still reached
    start = np.zeros((24, 4), dtype=np.int64)
    target = np.ones(24, dtype=np.int64)  # one row in each (a, b, c) cell
    grid = np.array(list(itertools.product(range(4), range(3), range(2))))
    targets = {(0,): np.full(4, 6), (0, 1): np.full(12, 2), (0, 1, 2): target}
    out = repair_rows(start, targets, LEVELS, np.random.default_rng(0))
    np.testing.assert_array_equal(np.unique(out[:, :3], axis=0), grid)
