"""The public hierarchy of a numeric column's PrivTree: where a node splits,
whether it may, and which leaves are finest -- and the tree's part below the
resolution floor, grown on its own noise stream.

Every function here reads public quantities only (a node's edges and depth,
the dtype, the public floor) or, in :func:`below_floor_leaves`, runs
PrivTree's own split rule (:cite:`Zhang2016` §3.2, Algorithm 2) on the
nodes' exact counts with fresh Laplace coins; :mod:`._numeric_domain` builds
the tree from them, and the out-of-core fit (:mod:`._count_grid`,
:mod:`._chunk_counts`, :mod:`._speculation`) counts the same nodes. A
date/time column with no significant core merges even sibling leaves back
into their node (:func:`merge_even_siblings`: the hierarchy, read from the
released edges, and the noisy counts only).
"""

from __future__ import annotations

import math

import numpy as np

from . import _natural_limits as nl
from ._fences import _t, _x

__all__ = ["FINEST_T", "MAX_DEPTH", "below_floor_leaves"]

#: The deepest PrivTree level (data-independent; :cite:`Zhang2016` allows any
#: cap, the privacy proof does not depend on the depth).
MAX_DEPTH = 30
#: A float leaf narrower than this in the log coordinate (a relative width
#: of about 0.07 %) is "finest": it decodes to its edge nearer to 0 where
#: that edge is a whole number, and at a declared bound where it ends the
#: root (:func:`._decoding.decode_fine`, ``_root_end``).
FINEST_T = 1e-3


def _split_point(lo, hi, integer):
    """Midpoint of ``[lo, hi)`` in the log coordinate (an integer if asked)."""
    mid = float(_x((_t(lo) + _t(hi)) / 2.0))
    if integer:
        mid = float(np.floor(mid))
        if not lo < mid < hi:
            mid = float(np.floor((lo + hi) / 2.0))
    elif not lo < mid < hi:  # rounding of t at large magnitudes
        mid = lo + (hi - lo) / 2.0
    return mid if lo < mid < hi else None


def _can_split(lo, hi, depth, integer, floor=0.0):
    """Whether PrivTree may split ``[lo, hi)``: above ``MAX_DEPTH``, an
    integer column's node of 2 or more, a float node anywhere but in the
    resolution floor's two cells (``nl.RES_FLOOR``)."""
    if depth >= MAX_DEPTH:
        return False
    if integer:
        return hi - lo >= 2.0
    return hi - lo > 2.0 * floor or lo >= floor or hi <= -floor


def _finest(lo, hi, integer, floor=0.0):
    if integer:
        return hi - lo <= 1.0
    return float(_t(hi) - _t(lo)) < FINEST_T or hi - lo <= 2.0 * floor


def below_floor(lo, hi, integer, floor):
    """Whether a node is one the floor once stopped: a float node at most
    ``2 floor`` wide (its splits go to :func:`below_floor_leaves`)."""
    return not integer and hi - lo <= 2.0 * floor


def below_floor_leaves(nodes, count_nodes, lam, source, floor, theta):
    """The leaves that replace ``nodes`` (``(lo, hi, depth)``: float nodes
    the floor once stopped, each of which PrivTree's coin split) in the
    tree of :func:`._numeric_domain.privtree_leaves`: PrivTree goes on under
    each with its own rule, ``λ`` and ``θ``, down to ``MAX_DEPTH``, its coins
    drawn from a child stream of ``source`` (``nl._child_source``), so that
    the main tree, the leaf counts, the other columns and the release draw
    what they drew while the floor stopped these nodes (a kept chain's extra
    leaves draw their counts from the histogram's child stream too,
    :func:`chain_cells_added`); what it grows under
    each is kept only as a heap's chain (``nl.sub_floor_leaves``), and only
    where the chain reached ``MAX_DEPTH``. A heap whose count ran out first
    ends among chance splits of its empty siblings as deep as its own chain,
    and the deepest leaf is then as often one of theirs: doctorcontacts'
    ``lpi`` (a heap of 2,751 rows at 6.907755, ε = 1, seed 0) kept a
    2e-6-wide leaf of no rows, and the heap's rows came back all above the
    value in the leaf beside it (KS .096 -> .174; in 5 of 10 seeds .17).
    Returns ``[(lo, hi), ...]``, every one a finest leaf (as narrow as its
    node)."""
    if not nodes:
        return []
    child = nl._child_source(source)
    bias = lam * math.log(2.0)
    under = {node: [] for node in nodes}
    level = []
    for lo, hi, d in nodes:
        mid = _split_point(lo, hi, False)
        level += [(lo, mid, d + 1, (lo, hi, d)), (mid, hi, d + 1, (lo, hi, d))]
    while level:
        counts = np.asarray(count_nodes([n[:3] for n in level]), dtype=np.float64)
        depth = np.array([n[2] for n in level], dtype=np.float64)
        noisy = child.laplace(np.maximum(counts - depth * bias, theta - bias), lam)
        nxt = []
        for (lo, hi, d, node), b in zip(level, noisy):
            mid = _split_point(lo, hi, False) if b > theta else None
            if mid is not None and _can_split(lo, hi, d, False, floor):
                nxt += [(lo, mid, d + 1, node), (mid, hi, d + 1, node)]
            else:
                under[node].append((lo, hi, d))
        level = nxt
    out = []
    for node, leaves in under.items():
        capped = max(d for _, _, d in leaves) >= MAX_DEPTH
        out += nl.sub_floor_leaves(node, leaves) if capped else [node[:2]]
    return out


def chain_cells_added(edges, chain):
    """Which leaves a kept chain below the resolution floor added
    (:func:`._numeric_domain.privtree_leaves`'s ``chain``: the middle and
    right leaves of ``_natural_limits.sub_floor_leaves``; the left one keeps
    the place of the floor-wide node the tree had before, and its count that
    node's draw). Their counts draw from the histogram's child stream, so that the
    other leaves, the other columns and the release draw what they drew
    where the node stayed whole: on the fit's own stream the two extra
    draws moved randhie, covid_testing and yrbss at ε = 1 by 2-4 % (3 seeds)
    while only doctorcontacts' heap was gained."""
    edges = np.asarray(edges, dtype=np.float64)
    return np.isin(edges[:-1], np.asarray(chain, dtype=np.float64))


#: A date/time column whose leaves' core is not significant
#: (``_numeric_domain.core_is_significant``) merges sibling leaves (the two halves of a
#: node of its tree, from the calendar cells up) whose noisy counts differ
#: by less than this many noise scales ``b``, bottom up
#: (:func:`merge_even_siblings`), and keeps its leaves from those. A
#: calendar year is a depth-0 cell, so a long window's years split into
#: half-years of 1-3 ``b`` rows each at 1,000 rows: each pays ``2 b`` in the
#: core's sum, and its noise leaves in the 200 empty years outnumber them.
#: Measured (``python benchmarks/bench_datetime.py --only windows
#: --window-seeds 20 --n 1000``, 0 -> 2 -> 4 -> 6 -> 8): mean KS of 10 years
#: at ε = 1, seconds .164 -> .091 -> .084 -> .084 -> .081, dates .188 ->
#: .118 -> .109 -> .097 -> .107 (fits with KS above .5: 3 of 40 -> 0 for
#: every value); 1 week, 1 month and the ``day`` fixture unchanged (their
#: cores are significant). At ε = 0.3 (4): 1 week .513 / .586 -> .562 /
#: .609, 1 month .345 / .459 -> .411 / .487, 1 year .514 / .573 -> .407 /
#: .558, 10 years .856 / .842 -> .658 / .652. 4 is the least of these
#: that found a range for ``tests/test_bounded_release.py``'s 400 dates
#: over 8 years (``test_cli_refusals_of_cells_are_listed``).
TIME_MERGE_SCALES = 4.0


def merge_even_siblings(edges, finest, counts, scale, integer, cells):
    """The leaves ``edges`` of a date/time column's tree, with their noisy
    ``counts``, after merging sibling leaves whose counts differ by less
    than :data:`TIME_MERGE_SCALES` ``scale``, bottom up from the deepest:
    two halves of a node that are leaves (or merged to one) become the
    node, its count their sum. ``cells``: the tree's depth-0 cells (from the
    public calendar cuts, ``_numeric_domain.root_cells``), whose nodes are
    rebuilt from the edges with :func:`_split_point`. Post-processing: the edges are the
    released tree's, the test reads the noisy counts only. Returns
    ``(edges, finest, counts)``."""
    edges = np.asarray(edges, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    finest = np.asarray(finest, dtype=bool)
    leaf = {float(a): i for i, a in enumerate(edges[:-1])}
    level = TIME_MERGE_SCALES * float(scale)

    def node(lo, hi):
        i = leaf.get(lo)
        if i is not None and float(edges[i + 1]) == hi:
            return [(lo, float(counts[i]), bool(finest[i]))]
        mid = _split_point(lo, hi, integer)
        left, right = node(lo, mid), node(mid, hi)
        if len(left) == 1 and len(right) == 1:
            (_, cl, _), (_, cr, _) = left[0], right[0]
            if abs(cl - cr) < level:
                return [(lo, cl + cr, False)]
        return left + right

    out = [x for a, b in cells for x in node(float(a), float(b))]
    return (
        np.asarray([x[0] for x in out] + [float(edges[-1])]),
        np.asarray([x[2] for x in out], dtype=bool),
        np.asarray([x[1] for x in out], dtype=np.float64),
    )
