"""The average total variation over d-way tables, computed the slow way (a
dict of cell frequencies per table): the reference the benchmarks' fast
marginal scores are checked against."""

from __future__ import annotations

import itertools


def brute_tv(real, syn, d):
    """Average TV over the d-way tables of two DataFrames' columns."""
    total = 0.0
    combos = list(itertools.combinations(real.columns, d))
    for cols in combos:
        p = real.groupby(list(cols)).size() / len(real)
        q = syn.groupby(list(cols)).size() / len(syn)
        cells = set(p.index) | set(q.index)
        total += 0.5 * sum(abs(p.get(c, 0.0) - q.get(c, 0.0)) for c in cells)
    return total / len(combos)
