"""The descent's step helpers against the plain passes they replace.

``_smallest_first`` must pick the same moves, in the same order, as a full
stable sort, and ``_greedy_disjoint`` the same swaps as the sequential
greedy pass: the generator's rows are the same to the bit either way
(``benchmarks/behaviour_hashes.py``).
"""

import numpy as np
import pytest

from skdp_synth.generator._generator import _greedy_disjoint, _smallest_first


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
