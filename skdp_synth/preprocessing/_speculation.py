"""The numeric trees of a Dask private domain run ahead on a copy of the
noise, to plan a refinement pass from the cells they will read.

A bounded-mode refinement pass (``_domain_stats``) counts what the asking
tree needs now and predicts, from the grid counts and the public budget,
what the trees still to come are likely to need (:func:`joint_stops`).
Where the fit's noise comes from a seeded generator (``random_state``
given), the noise the trees are going to draw is also known before it is
drawn: a copy of the generator draws the same numbers. So before the pass
the trees are run ahead (:func:`run_ahead`) -- the asking one from its
start, then every numeric tree after it, in the fit's order, with the same
Laplace vectors -- on the counts known so far, and the nodes they visit
below what was counted are added to the pass (:meth:`DomainStatistics
._speculated`): the pass then reads every cell they will enter, and no
tree asks for another one.

A tree's node of depth ``d`` splits when ``max(c - d δ, θ - δ) + z > θ``
(:func:`privtree_leaves`), a function of its count ``c`` that does not
decrease. A node inside a cell not counted deep enough has an unknown count
at most ``U``, the cell's; it is decided all the same where ``max(U - d δ,
θ - δ) + z <= θ`` (it does not split even with ``U`` rows) or ``θ - δ + z >
θ`` (it splits even with none) -- in particular whenever ``U <= θ + (d -
1) δ``, a *light* cell's nodes, whose splits are the noise's alone. Where
neither holds the run stops (:class:`Undecided`): every node visited so far
is one the tree visits, and the trees after it are left to the prediction.
Leaves are visited nodes, so their counts are among the cells read.

What runs ahead never reaches the fit: its noise is a copy, drawn again by
the tree itself, in the same order; its counts are the known ones or
bounds; its output is discarded. The domains are the in-memory ones
whatever it plans (the trees read exact counts, a pass on demand where a
plan falls short). With OpenDP's noise (``random_state=None``) nothing can
be drawn twice: no tree runs ahead, and the pass is planned from the
prediction alone.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from ._chunk_counts import VALUES
from ._natural_limits import _child_source, _limit_cells_added
from ._numeric_domain import privtree_leaves, privtree_theta, root_cells
from ._privtree_budget import column_tree_share
from ._tree_grid import _can_split, _split_point, chain_cells_added

__all__ = ["Undecided", "can_run_ahead", "run_ahead", "tree_parameters"]


class Undecided(Exception):
    """A node's split depends on a count not known yet."""


def tree_parameters(integer, root, cuts, epsilon, sensitivity, tree_share=None):
    """``(cells, floor, lam, scale, theta)`` of a column's PrivTree: its
    depth-0 cells, resolution floor, the splits' Laplace scale
    ``λ = 3Δ/ε_tree`` (:cite:`Zhang2016` §3.2, Theorem 3.2, fanout 2), the
    leaf counts' ``Δ/(ε - ε_tree)`` (the Laplace mechanism) and the
    threshold -- public (the budget and the schema), as
    :func:`privtree_from_counts` uses them and as
    :func:`._numeric_domain.privtree_histogram` computes them in memory
    (the Dask fit's domains equal the in-memory fit's,
    ``tests/test_dask_domains.py``, so a change to either fails there)."""
    cells, floor = root_cells(integer, root, cuts)
    share = column_tree_share(epsilon) if tree_share is None else tree_share
    eps_tree = epsilon * share
    lam = 3.0 * sensitivity / eps_tree
    scale = sensitivity / (epsilon - eps_tree)
    return cells, floor, lam, scale, privtree_theta(scale)


def can_run_ahead(source):
    """Whether ``source`` (a :class:`NoiseSource`) can be copied to draw its
    next numbers ahead: a seeded generator, not OpenDP's."""
    return source is not None and not getattr(source, "secure", True)


class _Ahead:
    """A copy of the fit's noise source that draws what the source will,
    and checks the split of each node whose count is only bounded."""

    def __init__(self, source):
        self.rng = copy.deepcopy(source.rng)
        self.check = None  # (unknown nodes, splittable, theta) of the level
        self.owner = self  # whose ``check`` the counts set

    def child(self):
        """The child stream ``_natural_limits._child_source`` gives the fit's
        source at this point (the tree below the resolution floor,
        ``_tree_grid.below_floor_leaves``), checked as this copy is."""
        out = _Ahead.__new__(_Ahead)
        out.rng, out.check, out.owner = self.rng.spawn(1)[0], None, self.owner
        return out

    def laplace(self, values, scale):
        # NoiseSource.laplace's own computation: values + Lap(0, scale)
        values = np.asarray(values, dtype=np.float64)
        z = self.rng.laplace(0.0, scale, size=values.shape)
        noisy = values + z
        if self.owner.check is not None:
            unknown, splittable, theta = self.owner.check
            self.owner.check = None
            # the floor privtree_leaves gives every count, plus the same z
            floor = (theta - scale * math.log(2.0)) + z
            # undecided: splits with the bound's count, not with no rows
            open_ = unknown & splittable & (noisy > theta) & (floor <= theta)
            if open_.any():
                raise Undecided
        return noisy


class _Bounded:
    """A column's counts for a tree run ahead: the exact count where it is
    known, the count of the cell holding the node where it is not (an upper
    bound); the nodes of the latter kind are noted (``nodes``)."""

    def __init__(self, counter, ahead, integer, floor, theta):
        self.counter, self.ahead = counter, ahead
        self.integer, self.floor, self.theta = integer, floor, theta
        self.nodes = []
        self.lam = None

    def counts(self, level):
        counts, unknown = self.counter.bounded_counts(level)
        splittable = np.array(
            [
                _split_point(lo, hi, self.integer) is not None
                and _can_split(lo, hi, d, self.integer, self.floor)
                for lo, hi, d in level
            ],
            dtype=bool,
        )
        self.nodes += [node for node, u in zip(level, unknown) if u]
        self.ahead.check = (unknown, splittable, self.theta)
        return counts


def run_ahead(counters, order, source, epsilon, sensitivity):
    """Run the trees of the columns ``order`` (in that order) ahead on a copy
    of ``source``, as :func:`privtree_from_counts` runs them: the nodes
    below what is counted that each visits (``{col: [(lo, hi, depth),
    ...]}``), and the columns whose whole tree was decided (the others'
    nodes are those visited before the run stopped)."""
    ahead = _Ahead(source)
    nodes, decided = {}, []
    for col in order:
        counter = counters[col]
        cells, floor, lam, scale, theta = tree_parameters(
            counter.integer, counter.root, counter.cuts, epsilon, sensitivity
        )
        bounded = _Bounded(counter, ahead, counter.integer, floor, theta)
        try:
            edges, _, chain = privtree_leaves(
                cells,
                bounded.counts,
                lam,
                ahead,
                counter.integer,
                floor,
                theta,
                counter.declared,
            )
        except Undecided:
            nodes[col] = bounded.nodes
            break
        # the leaf counts and the missing count: one Laplace vector (less
        # the cells added at 100 and a kept chain's extra leaves, drawn from
        # a child stream: :func:`_natural_limits._limit_cells_added`,
        # :func:`_tree_grid.chain_cells_added`); the former's edges are
        # counted from the values of the cells they lie inside
        added = _limit_cells_added(edges, counter.integer, counter.declared)
        aside = added | chain_cells_added(edges, chain)
        points = [(float(v), float(v), VALUES) for v in edges[np.append(added, False)]]
        nodes[col] = bounded.nodes + points
        decided.append(col)
        ahead.laplace(np.zeros(len(edges) - int(aside.sum())), scale)
        _child_source(ahead)  # the histogram's child stream, as the fit spawns it
    return nodes, decided
