"""The public limits of a numeric column's fine grid: its resolution floor
near 0, the natural limits a point mass may sit at (0, and a percentage's
100), the levels a leaf there must pass to be kept as a point mass, and
the cells a float tree is cut into at 100 so that a spike there is a leaf
of its own. Every quantity here is public (the dtype, constants, the
released tree and its public noise scale): post-processing of the private
domain of :mod:`._numeric_domain`, which imports from here.
"""

from __future__ import annotations

import math

import numpy as np

from ..mechanisms import NoiseSource

#: The resolution floor of a float column's fine grid near 0:
#: ``[-RES_FLOOR, 0)`` and ``[0, RES_FLOOR)`` are cells of the fixed depth-0
#: partition (:func:`privtree_histogram`) that never split, so an
#: exact 0 is a finest leaf (an atom, decoded as 0) at depth 0, with no
#: depth bias to pay. Without it the symmetric-log grid has ever finer
#: leaves near 0: credit's ``Assets`` (37 % zeros, float64 for its missing
#: values) kept ``[0, 0.0027)`` as its only leaf in 8 of 20 fits at ε = 1
#: and every value decoded near 0.003 (``benchmarks/bench_skewed.py``).
#: Public; integer columns have their own floor (width 1), and declared
#: bounds narrower than ``2^20 RES_FLOOR`` scale it down
#: (:func:`resolution_floor`).
#:
#: The floor binds those two cells only (``_numeric_domain._can_split``): a
#: node away from 0 splits below ``2 RES_FLOOR`` wherever PrivTree's noisy
#: count says so, down to ``MAX_DEPTH`` (what it grows there is kept only as
#: a heap's chain, :func:`sub_floor_leaves`), so a heap at a value that is not
#: round sits in a leaf as narrow as its count pays for, and where that is
#: narrow against the value's decimals it decodes at the value
#: (:mod:`._round_heaps`). Under a floor on every node, doctorcontacts'
#: ``lfam`` (27.4 % of its rows at ``log 4``, stored as 1.386294) kept the
#: heap in ``[1.38505, 1.38630)`` and spread its rows over it (99 % below the
#: value, none at it); with the floor at its two cells, in a leaf 9.5e-9
#: wide: 27.3 % of the rows exactly 1.386294 (ε = 1, seed 0 of ``python -m
#: benchmarks.bench_suite --half report --tables doctorcontacts``; the
#: suite's results, "The resolution floor kept to its two cells"). A
#: lighter heap stops in a wider leaf and is still drawn inside it.
RES_FLOOR = 2.0**-10


def resolution_floor(integer, root=None):
    """The narrowest leaf of the fine grid (public: the dtype and the
    declared root only): 1 for integer columns, :data:`RES_FLOOR` for float
    ones, or ``2^-20`` of a declared root's width where that is smaller."""
    if integer:
        return 1.0
    if root is None:
        return RES_FLOOR
    return min(RES_FLOOR, (float(root[1]) - float(root[0])) * 2.0**-20)


#: A node the floor once stopped (at most ``2 RES_FLOOR`` wide, outside the
#: floor cells) keeps what PrivTree made of it below the floor only where
#: its deepest leaf lies at least this many levels down
#: (:func:`sub_floor_leaves`): a heap's chain, not a dense stretch's chance
#: splits. On 15,000 rows of N(3, 0.5) at ε = 1 (a column's whole budget),
#: 4 of the 512 floor-wide nodes of 20 fits split 8 to 11 levels down, the
#: rest 1-7, none to ``MAX_DEPTH``, which a chain must reach as well
#: (``_tree_grid.below_floor_leaves``); a heap of 4,000 rows beside them went
#: 18 levels down (to ``MAX_DEPTH``) in each fit. 8 levels: the heap's leaf is at most
#: ``2^-7 RES_FLOOR`` (7.6e-6) wide, narrow enough to decode a value of up
#: to 4 decimals at it (``_round_heaps.SPACING_SHARE``). Public, not searched.
SUB_FLOOR_LEVELS = 8


def sub_floor_leaves(node, leaves):
    """The leaves that replace the subtree PrivTree grew under ``node``
    (``(lo, hi, depth)``, a node narrower than ``2 RES_FLOOR`` away from 0)
    from its ``leaves`` (``(lo, hi, depth)``): the deepest of them (all of
    the deepest, and what lies between them), and the stretches of
    ``node`` on either side of it as one leaf each -- or ``node`` whole
    where the deepest is less than :data:`SUB_FLOOR_LEVELS` levels down.

    So a heap at a value that is not round gets a leaf as narrow as its
    count paid for, beside two leaves, instead of a chain of one empty
    sibling per level: each is one more leaf in every ``b ln(L / 0.01)``
    and one more chance for a noise leaf kept beside the heap (medicaldata
    ``covid_testing``'s ``ct_result``, 94 % of its rows at 45: its positives
    were lost more often with the chain). A chance chain of empty nodes as
    deep as the heap's, in the same node, puts both in the middle leaf: the
    shape cannot tell them apart, and the heap stays inside one leaf.
    Post-processing of the tree's public shape: the leaves' counts are
    measured after it."""
    lo_n, hi_n, d_n = node
    deepest = max(d for _, _, d in leaves)
    if deepest - d_n < SUB_FLOOR_LEVELS:
        return [(lo_n, hi_n)]
    lo_h = min(lo for lo, _, d in leaves if d == deepest)
    hi_h = max(hi for _, hi, d in leaves if d == deepest)
    return [(a, b) for a, b in ((lo_n, lo_h), (lo_h, hi_h), (hi_h, hi_n)) if b > a]


#: :func:`_limit_cells` cuts the leaf holding 100 only where it is at most
#: this share of 100 wide: a tree that split down near 100 (loans'
#: ``account_never_delinq_percent``, 57 % of its rows at 100: leaves like
#: ``[99.78, 100.04)``). A wide leaf there holds few rows, and its three
#: noise cells were three more chances for a noise core where nothing is
#: significant (iris's sepal width at ε = 0.05: far kept ranges 4 -> 5 of
#: 40 seeds with every leaf cut, ``test_with_nothing_significant_the_core_
#: prefers_values_near_zero``). Public: a function of the released tree.
LIMIT_LEAF_WIDTH = 0.5


def _declared_width(integer):
    """The width of a declared point mass's cell: one integer, or the float
    resolution floor :data:`RES_FLOOR` (public: the dtype)."""
    return 1.0 if integer else RES_FLOOR


def _declared_cells(edges, finest, integer, declared):
    """``(edges, finest)`` with the leaf holding each declared point mass
    ``v`` (``BooleanEncoder(point_masses=...)``, public) cut at ``v`` and
    at ``v + w`` (:func:`_declared_width`), whatever the leaf's width, so
    ``[v, v + w)`` is a finest leaf: the declaration says a heap is there,
    and the tree need not reach it (a code at 999,999 lies in ``[2^16,
    2^20)``, which PrivTree splits too few times at small budgets). A fixed
    refinement of the released tree by public values: post-processing."""
    edges = np.asarray(edges, dtype=np.float64)
    finest = np.asarray(finest, dtype=bool)
    w = _declared_width(integer)
    for v in sorted(set(float(x) for x in declared)):
        j = int(np.searchsorted(edges, v, "right")) - 1
        if 0 <= j < edges.size - 1:
            edges, finest = _cut_leaf(edges, finest, j, v, w)
    return edges, finest


def _cut_leaf(edges, finest, j, v, w):
    """``(edges, finest)`` with leaf ``j`` cut at ``v`` and ``v + w`` where
    they fall inside it; ``[v, v + w)`` is finest, the other parts as the
    leaf was."""
    lo, hi = float(edges[j]), float(edges[j + 1])
    cuts = [c for c in (v, v + w) if lo < c < hi]
    if not cuts:
        return edges, finest
    parts = [lo, *cuts, hi]
    fin = [
        (a == v and b <= v + w) or bool(finest[j])
        for a, b in zip(parts[:-1], parts[1:])
    ]
    edges = np.concatenate([edges[:j], parts, edges[j + 2 :]])
    finest = np.concatenate([finest[:j], fin, finest[j + 1 :]])
    return edges, finest


#: A public candidate's finest leaf (:data:`ATOM_CANDIDATES`: 0, 100) that
#: the keep rules left out is kept as a tentative leaf where its noisy count
#: passes ``b ln(K / (CANDIDATE_TENTATIVE_LEVEL s))`` (``K`` candidates, ``s =``
#: :data:`ATOM_CANDIDATE_SHARE`; 3.0 b for 0 and 100), the candidates' share
#: of a tentative run's false level (:func:`_tentative_candidates`). An empty
#: candidate passes it with probability ``e^-3 / 2 = 2.5 %`` and its bin
#: then the release's ``3 sigma`` test with ``Phi(-3) = 0.13 %``. Credit_card's
#: ``expenditure`` (24 % of 1,055 rows at 0, ``b = 41.7`` at ε = 1) drew
#: 5.94 b at seed 2, under the atom level 5.99 b, and every zero came back
#: at 26 or more.
CANDIDATE_TENTATIVE_LEVEL = 0.2


def _candidate_tentative_levels(edges, finest, scale, declared=()):
    """Per leaf, the level a left-out candidate leaf must pass to be kept as
    tentative (:data:`CANDIDATE_TENTATIVE_LEVEL`): ``0`` for a declared
    point mass (the declaration says a heap is there: any positive count),
    ``b ln(K / (CANDIDATE_TENTATIVE_LEVEL s))`` for 0 and 100, ``inf``
    elsewhere.
    Public: the tree, ``b``, constants and parameters."""
    edges = np.asarray(edges, dtype=np.float64)
    declared = [float(v) for v in declared]
    k = len(_candidates(declared))
    loose = scale * math.log(k / (CANDIDATE_TENTATIVE_LEVEL * ATOM_CANDIDATE_SHARE))
    level = np.where(np.isin(edges[:-1], ATOM_CANDIDATES), loose, np.inf)
    level = np.where(np.isin(edges[:-1], declared), 0.0, level)
    return np.where(np.asarray(finest, dtype=bool), level, np.inf)


def _tentative_candidates(out, counts, edges, finest, declared, tentative, cap, scale):
    """``(out, tentative, cap)`` with each point-mass candidate's leaf that
    the keep rules left out but whose noisy count passes its tentative level
    kept as a tentative leaf (its own coarse bin,
    ``_coarse_bins._tentative_cuts``), inside the cap
    (:func:`_candidate_tentative_levels`): a declared point mass where its
    count is positive (the declaration says a heap is there), 0 and 100
    above :data:`CANDIDATE_TENTATIVE_LEVEL`'s level. A pipeline keeps the
    bin only where its release's own estimate supports it (as it does a
    tentative run). Below its atom level alone (5.99-6.4 b) a code held by
    8 % of 5,000 rows at ε = 0.3 (3.6 b) was lost in 2 of 3 fits. A 0 or
    100 outside the kept range takes the emptied leaves between it and the
    range into its tentative bin.
    Post-processing of the noisy counts and public values."""
    level = _candidate_tentative_levels(edges, finest, scale, declared)
    at = (out <= 0) & (np.asarray(counts) > level)
    if not at.any():
        return out, tentative, cap
    tentative = np.asarray(tentative, dtype=bool) | at
    body = np.flatnonzero((out > 0) & ~tentative)
    for j in np.flatnonzero(at & ~np.isin(edges[:-1], declared)):
        # a 0 or 100 past the kept range: its bin spans the emptied leaves
        # between, so the body's outer bin stays where it was when the
        # release drops it (a bin from 0.001 up drew a no-zero column's rows
        # below its kept range)
        if body.size and j < body[0]:
            tentative[j : body[0]] = True
        elif body.size and j > body[-1]:
            tentative[body[-1] + 1 : j + 1] = True
    out = np.where(at, counts, out)
    lo = min(float(cap[0]), float(edges[:-1][at].min()))
    hi = max(float(cap[1]), float(edges[1:][at].max()))
    return out, tentative, (lo, hi)


def _limit_cells(edges, finest, integer, declared=()):
    """A float tree's leaves with the leaf holding a point-mass candidate
    other than 0 (:data:`ATOM_CANDIDATES`: a percentage's 100) cut at ``v``
    and at ``v + RES_FLOOR``, so ``[v, v + RES_FLOOR)`` is a finest leaf
    (decoded at ``v``), as ``[0, RES_FLOOR)`` is a depth-0 cell
    (:data:`RES_FLOOR`). PrivTree's midpoint splits never land on 100, so no
    float leaf started there and the candidate's level was never applied:
    a percentage's spike at 100 fell in a leaf such as ``[99.78, 100.04)``,
    decoded uniformly across 100 (loans' ``account_never_delinq_percent``,
    57 % of its rows at 100: none came back at 100 and 2-9 % above it at
    ε = 0.3, ``benchmarks/results/bench_limit_atoms.md``). Cutting at 100
    before the midpoints (a split rule) isolated the spike at depth 1 and
    left the body below it in leaves as wide as ``[16, 100)``. A fixed
    refinement of the released tree: post-processing (the leaf counts are
    then drawn on these leaves, still a partition). Returns ``(edges,
    finest)``. ``declared``: the column's declared point masses, cut first
    (:func:`_declared_cells`)."""
    if len(declared):
        edges, finest = _declared_cells(edges, finest, integer, declared)
    if integer:
        return edges, finest
    edges = np.asarray(edges, dtype=np.float64)
    finest = np.asarray(finest, dtype=bool)
    for v in ATOM_CANDIDATES:
        if v == 0.0:
            continue
        j = int(np.searchsorted(edges, v, "right")) - 1
        if not 0 <= j < edges.size - 1:
            continue
        if float(edges[j + 1]) - float(edges[j]) > LIMIT_LEAF_WIDTH * v:
            continue  # the tree did not split down to 100: no rows there
        edges, finest = _cut_leaf(edges, finest, j, v, RES_FLOOR)
    return edges, finest


def _limit_cells_added(edges, integer, declared=()):
    """Which leaves :func:`_limit_cells` added: those starting at a
    candidate ``v`` or at ``v + RES_FLOOR`` (the part of the cut leaf below
    ``v`` keeps the leaf's place). Their counts draw their noise from a
    child stream (:func:`_child_source`), after the others, so that every
    other leaf and every later draw of the fit (the other columns' trees,
    the release) get the noise they had without the cut: the cut moved
    loans' other columns' KS by the draws alone (``balance`` .127 -> .181
    at ε = 0.3, ``benchmarks/results/bench_limit_atoms.md``)."""
    edges = np.asarray(edges, dtype=np.float64)
    return np.isin(edges[:-1], _limit_edges(integer, declared))


def _limit_edges(integer, declared=()):
    """The edges :func:`_limit_cells` may add: ``v`` and ``v + RES_FLOOR``
    for each candidate ``v`` but 0 (none for an integer column), and ``v``
    and ``v + w`` for each declared point mass (:func:`_declared_cells`)."""
    w = _declared_width(integer)
    own = tuple(float(v) for v in declared) + tuple(float(v) + w for v in declared)
    if integer:
        return own
    top = [v for v in ATOM_CANDIDATES if v != 0.0]
    return (*top, *(v + RES_FLOOR for v in top), *own)


def _child_source(source):
    """An independent noise source for the cells :func:`_limit_cells`
    added: a seeded source's child stream (``Generator.spawn``, which leaves
    the parent's state where it was), the secure source itself (its draws
    are fresh either way; so is any source without a seeded generator).
    Called once per noisy histogram, cut or not, so that the children follow
    the order in which the columns are fitted."""
    if hasattr(source, "child"):  # the out-of-core look-ahead's copy
        return source.child()
    rng = getattr(source, "rng", None)
    seeded = getattr(getattr(rng, "bit_generator", None), "seed_seq", None)
    if getattr(source, "secure", False) or seeded is None:
        return source
    return NoiseSource(rng.spawn(1)[0])


#: The natural limits (:func:`_keep_natural_limits`): a point mass at 0
#: bounds its column below, one at 100 (a percentage) above.
NATURAL_LIMITS = ((0.0, -1), (100.0, 1))


#: The false-atom level: all ``L`` finest leaves of an empty stretch
#: together pass their thresholds with probability at most half of it
#: (:func:`_atom_levels`; ``L exp(-x / b) / 2`` for ``L`` leaves at ``x``).
ATOM_FALSE_LEVEL = 0.01
#: The public candidates for a point mass: a finest leaf whose lower edge
#: is one of these (an integer column's ``[0, 1)``, a float column's
#: ``[0, RES_FLOOR)``) -- the natural limits, known before any row is read.
ATOM_CANDIDATES = tuple(v for v, _ in NATURAL_LIMITS)
#: The share of :data:`ATOM_FALSE_LEVEL` the candidates get (Bonferroni):
#: each of the ``K`` candidates passes ``b ln(K / (0.01 s))``, every other
#: finest leaf ``b ln(L / (0.01 (1 - s)))`` (:func:`_atom_levels`). At ``s =
#: 0.5`` a candidate needs 5.99 b instead of ``b ln(L / 0.01)`` (8.3 b at
#: credit's ``L = 40``), another leaf ``b ln 2 = 0.69 b`` more. Credit's
#: ``Assets`` (1,296 zeros of 3,526 rows, ``b = 139`` at ε = 0.3) lost its
#: zeros in 2 of 20 fits of ``python -m benchmarks.bench_suite --half tune
#: --tables credit --eps 0.3 --seeds 20 --methods auto --light`` (noisy
#: 6.8 b and 6.9 b, under 8.3 b; the column's rows came back with no 0).
ATOM_CANDIDATE_SHARE = 0.5


def _candidates(declared=()):
    """The point-mass candidates, sorted: :data:`ATOM_CANDIDATES` and the
    column's declared point masses (public)."""
    return sorted(set(ATOM_CANDIDATES) | {float(v) for v in declared})


def _atom_levels(edges, finest, scale, declared=()):
    """Per leaf, the noisy count a finest leaf must pass to be kept as a
    point mass (an atom), from public quantities only: the ``K`` public
    candidates (:data:`ATOM_CANDIDATES`, a finest leaf starting at 0 or 100)
    ``b ln(K / (a s))``, the other leaves ``b ln(L / (a (1 - s)))`` (``a =``
    :data:`ATOM_FALSE_LEVEL`, ``s =`` :data:`ATOM_CANDIDATE_SHARE`, ``L``
    the leaves). Where no leaf holds a row, the chance that any passes is at
    most ``K a s / (2 K) + L a (1 - s) / (2 L) = a / 2``, as with one level
    ``b ln(L / a)`` for every leaf; the candidates are fixed before the
    data is read, so a leaf at 0 (a frequent zero) needs far less.
    ``declared``: the column's declared point masses
    (``BooleanEncoder(point_masses=...)``), candidates too: ``K`` counts
    them, so each candidate's level rises by ``b ln(K / 2)``.
    Post-processing: the tree, the public ``b``, constants and parameters."""
    edges = np.asarray(edges, dtype=np.float64)
    n = max(edges.size - 1, 1)
    candidates = _candidates(declared)
    k = len(candidates)
    s = ATOM_CANDIDATE_SHARE
    public = scale * math.log(k / (ATOM_FALSE_LEVEL * s))
    other = scale * math.log(n / (ATOM_FALSE_LEVEL * (1.0 - s)))
    candidate = np.asarray(finest, dtype=bool) & np.isin(edges[:-1], candidates)
    return np.where(candidate, public, other)


def _percentage(atom, edges, lo_i, hi_i):
    """Whether the range ``lo_i..hi_i`` holds a point mass at 100 (the
    upper natural limit, :data:`NATURAL_LIMITS`): then the column is a
    percentage, bounded by 0 and 100, and growth's jump from a range of
    point masses goes past neither. Post-processing."""
    top = dict((side, at) for at, side in NATURAL_LIMITS)[1]
    span = slice(lo_i, hi_i + 1)
    return bool(np.any(atom[span] & (edges[:-1][span] == top)))


def _empty_limit_cells(out, edges, finest, atom, declared=()):
    """``out`` less a float column's cells ``[100, 100 + f)``
    (:func:`_limit_cells`), ``[0, f)`` and ``[-f, 0)`` (:data:`RES_FLOOR`)
    where they are no atom (:func:`_atom_levels`): a cell ``f`` wide holds
    next to no row of a continuous column, and kept on its noise (growth's
    ``2 b`` passes with probability ``e^-2 / 2``; inside the range ``b``,
    ``e^-1 / 2``) it decodes ``2 b`` or so rows exactly at its value (a
    log-normal column around 55 at ``b = 323``: 8-15 % of its rows at 100 in
    3 of 40 fits; chile's ``statusquo``, a scale from -1.8 to 2.0 with 2 of
    2,146 training rows in ``[0, f)``, came back with 15-67 rows exactly at
    0 in 12 of 24 fits at ε = 1). A ``[0, f)`` cell past ``3 b`` is a
    tentative one's for the release to test (:func:`_tentative_candidates`).
    Post-processing."""
    at = np.asarray(finest, dtype=bool) & ~np.asarray(atom, dtype=bool)
    cells = list(ATOM_CANDIDATES) + [float(v) for v in declared]
    width = np.diff(edges)
    at &= np.isin(edges[:-1], cells) | (edges[1:] == 0.0)
    at &= width <= RES_FLOOR
    emptied = np.where(at, 0.0, out)
    return emptied if (emptied > 0).any() else out
