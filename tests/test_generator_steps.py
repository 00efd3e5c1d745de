"""The descent's step helpers against the plain passes they replace.

``_smallest_first`` must pick the same moves, in the same order, as a full
stable sort, and ``_greedy_disjoint`` the same swaps as the sequential
greedy pass: the generator's rows are the same to the bit either way
(``benchmarks/behaviour_hashes.py``).
"""

import itertools

import numpy as np
import pytest

from skdp_synth.generator._generator import (
    _greedy_disjoint,
    _paired_ranks,
    _smallest_first,
)


def _sequential(first, second):
    used, keep = set(), []
    for t in range(first.size):
        a, b = int(first[t]), int(second[t])
        if a not in used and b not in used:
            used.update((a, b))
            keep.append(t)
    return np.asarray(keep, dtype=np.int64)


@pytest.mark.parametrize("seed", range(20))
def test_smallest_first_is_the_stable_sorts_prefix(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    # few distinct values: many ties, which a stable sort orders by position
    values = rng.integers(-5, 5, size=n).astype(np.float64) * 0.25
    for k in {1, 2, max(1, n // 10), max(1, n // 4), n}:
        got = _smallest_first(values, k)
        want = np.argsort(values, kind="stable")[:k]
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(30))
def test_greedy_disjoint_is_the_sequential_pass(seed):
    rng = np.random.default_rng(seed)
    n_rows = int(rng.integers(2, 60))
    m = int(rng.integers(0, 300))
    first = rng.integers(0, n_rows, size=m)
    second = rng.integers(0, n_rows, size=m)
    np.testing.assert_array_equal(
        _greedy_disjoint(first, second, n_rows), _sequential(first, second)
    )


def test_greedy_disjoint_follows_a_chain_of_shared_rows():
    # (0,1), (1,2), (2,3), ...: every other pair kept; each round of the
    # array pass decides only the chain's head, so it finishes in order
    first = np.arange(0, 200)
    second = first + 1
    got = _greedy_disjoint(first, second, 201)
    np.testing.assert_array_equal(got, np.arange(0, 200, 2))
    np.testing.assert_array_equal(got, _sequential(first, second))


def _kron_state(levels, sets, R, seed):
    """The vectorised bookkeeping of noisy tables (noise sd 3) of ``sets``
    over 500 random rows of ``levels``, at the rows ``R``."""
    from skdp_synth.generator import Measurement
    from skdp_synth.generator._kron import _all_coefficients, _build_kron, _KronState

    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(500, len(levels)))
    ms = []
    for attrs in sets:
        idx = np.zeros(len(X), dtype=np.int64)
        for j in attrs:
            idx = idx * levels[j] + X[:, j]
        size = int(np.prod(levels[list(attrs)]))
        counts = np.bincount(idx, minlength=size).astype(float)
        ms.append(Measurement(attrs, None, counts + rng.normal(0, 3.0, size), 3.0))
    return _KronState(_build_kron(ms, levels, _all_coefficients(ms, levels)), R)


def test_best_moves_are_the_row_minima_of_the_move_deltas():
    """Attribute 3 is measured on its own, attribute 2 in one pair only: their
    best moves are computed once per (context, level) key and must equal the
    row-wise minimum of the full matrix exactly (the same float operations on
    the same numbers); attributes 0 and 1 take the full matrix."""
    levels = np.array([3, 4, 5, 7])
    R = np.random.default_rng(11).integers(0, levels, size=(400, 4))
    state = _kron_state(levels, [(0, 1), (1, 2), (0,), (3,)], R, 1)
    rows = np.arange(400)
    for j, L in enumerate(levels):
        best, gain = state.best_moves(j, int(L), rows)
        delta = state.move_deltas(j, int(L), rows)
        np.testing.assert_array_equal(best, np.argmin(delta, axis=1))
        np.testing.assert_array_equal(gain, delta[rows, best])
    # the keyed path ran where it can: one clique, fewer keys than rows
    assert state._plan(3).tot == 1 and state._plan(3).n_ctx == 1
    assert state._plan(2).tot == 1 and 4 * state._plan(2).n_ctx * 5 <= 400


@pytest.mark.parametrize("seed", range(10))
def test_paired_ranks_are_the_level_pairs_loop(seed):
    """The flat pairing equals the loop over pairs of levels it replaced,
    with a ranking per level and column, and with one order for every column
    (a lone attribute); empty levels included."""
    rng = np.random.default_rng(seed)
    L = int(rng.integers(2, 12))
    sizes = rng.integers(0, 6, size=L)
    n = int(sizes.sum())
    blocks = np.split(rng.permutation(n), np.cumsum(sizes)[:-1])
    for width in (L, 1):
        ranked_blocks = [
            np.stack([rng.permutation(b) for _ in range(width)], axis=1)
            if b.size
            else np.zeros((0, width), dtype=np.int64)
            for b in blocks
        ]
        first, second, los, his = [], [], [], []
        for lo, hi in itertools.combinations(range(L), 2):
            m = min(sizes[lo], sizes[hi])
            first.append(ranked_blocks[lo][:m, hi if width > 1 else 0])
            second.append(ranked_blocks[hi][:m, lo if width > 1 else 0])
            los.append(np.full(m, lo))
            his.append(np.full(m, hi))
        got = _paired_ranks(np.concatenate(ranked_blocks), sizes)
        for g, w in zip(got, (first, second, los, his)):
            np.testing.assert_array_equal(g, np.concatenate(w).astype(np.int64))


def test_best_moves_per_distinct_contexts_in_several_cliques():
    """Attribute 1 is in three pairs with attributes of 2 levels: at most
    2*2*2*3 distinct (contexts, level) keys among 400 rows, so its moves are
    computed once per key; they must equal the full matrix's row minima."""
    levels = np.array([2, 3, 2, 2])
    R = np.random.default_rng(12).integers(0, levels, size=(400, 4))
    state = _kron_state(levels, [(0, 1), (1, 2), (1, 3)], R, 2)
    rows = np.arange(400)
    assert state._plan(1).tot == 3 and state._plan(1).key_space * 3 * 4 <= 400
    best, gain = state.best_moves(1, 3, rows)
    delta = state.move_deltas(1, 3, rows)
    np.testing.assert_array_equal(best, np.argmin(delta, axis=1))
    np.testing.assert_array_equal(gain, delta[rows, best])


def test_swaps_of_a_lone_attribute_cannot_gain_and_are_skipped_only_then():
    """A lone attribute's swap gains are rounding errors far under the
    descent's threshold (1e-6) while its gradients are at most 1e9; an
    attribute in a pair is never skipped; a lone attribute with gradients
    past 1e9 (noise sd 1e-6) is not skipped either."""
    from skdp_synth.generator import Measurement
    from skdp_synth.generator._kron import _all_coefficients, _build_kron, _KronState

    levels = np.array([3, 4, 5])
    R = np.random.default_rng(13).integers(0, levels, size=(300, 3))
    state = _kron_state(levels, [(0, 1), (2,)], R, 3)
    assert state.swaps_cannot_gain(2) and not state.swaps_cannot_gain(0)
    r1, r2 = np.arange(150), np.arange(150, 300)
    keep = R[r1, 2] != R[r2, 2]
    gains = state.swap_gains(2, r1[keep], r2[keep])
    g = np.abs(state.by_attr[2][0][0].g).max()
    assert np.all(np.abs(gains) <= 4 * np.finfo(float).eps * g) and g <= 1e9
    assert np.all(gains > -1e-6)
    tiny = [Measurement((2,), None, np.array([1e3, 0.0, 0.0, 0.0, 0.0]), 1e-6)]
    big = _KronState(_build_kron(tiny, levels, _all_coefficients(tiny, levels)), R)
    assert np.abs(big.by_attr[2][0][0].g).max() > 1e9
    assert not big.swaps_cannot_gain(2)
