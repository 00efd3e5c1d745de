"""Census-style invariants: marginal tables of attributes published exactly.

A census publishes some statistics without noise -- the total population,
the counts per region -- and the rest with noise. :cite:`Gao2022` calls them
*invariants* (Definition 2: linear equalities ``C y = C A x`` the release
satisfies with probability one) and gives the guarantee that is left,
*induced subspace differential privacy* (Definition 6): the release holds the
invariants exactly and its part orthogonal to them is ``(ε, δ)``-DP
(Definition 5). This module holds what the invariants are *over attributes*:

* :class:`AttributeInvariants` -- the attribute sets whose marginal tables are
  exact (``()`` is the total), parsed from ``invariants=[("region",),
  ("region", "sex")]`` or ``{"total": True}``; their downward closure, which
  is the set of residuals of the attribute workload that are exact
  (:mod:`skdp_synth.attribute_workload`); the labels that go into the
  recorded guarantee;
* :func:`rounded_tables` -- integer tables for ``n`` rows that agree with
  each other, exact for ``n`` = the invariant total and within one count per
  cell of the scaled tables otherwise (controlled rounding along a running
  intersection order);
* :func:`repair_rows` -- the fewest changes of attribute values that make
  rows hold those tables exactly.

What the invariants reveal (``doc/privacy.md``, "Census-style releases"):
the invariant tables themselves, exactly, and hence every table they
determine -- any invariant table determines the total ``n``. The guarantee
says nothing about them: under add/remove neighbours an exact total tells
whether a record is in the data, given the rest. Rows are repaired after the
release (post-processing of the released, exact tables).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral

import numpy as np

__all__ = [
    "AttributeInvariants",
    "repair_rows",
    "rounded_tables",
    "running_intersection_order",
]


@dataclass(frozen=True)
class AttributeInvariants:
    """Attribute sets whose marginal tables are published exactly (public).

    Parameters
    ----------
    sets : tuple of tuple of int
        Sorted attribute indices of every invariant table; ``()`` is the total
        count. Sets contained in another one are implied and dropped.
    names : tuple of str
        The attributes' names (for labels and messages).

    Examples
    --------
    >>> inv = AttributeInvariants.parse(
    ...     [("region",), ("sex", "region")], ["region", "age", "sex"])
    >>> inv.sets
    ((0,), (0, 2))
    >>> inv.maximal()
    ((0, 2),)
    >>> sorted(inv.closure())
    [(), (0,), (0, 2), (2,)]
    >>> inv.labels()
    ('total', 'table region', 'table region x sex')
    """

    sets: tuple
    names: tuple

    @classmethod
    def is_spec(cls, spec: object) -> bool:
        """Whether ``spec`` names attribute tables (not a matrix ``C``)."""
        if isinstance(spec, Mapping):
            return True
        if isinstance(spec, (str, bytes)) or not isinstance(spec, Sequence):
            return False
        return len(spec) > 0 and all(
            isinstance(s, tuple) and all(isinstance(a, str) for a in s) for s in spec
        )

    @classmethod
    def parse(cls, spec: object, names: Sequence[str]) -> AttributeInvariants:
        """Attribute sets from ``[("region",), ("region", "sex")]`` or a dict.

        The dict form is ``{"total": True, "tables": [("region",), ...]}``
        (both keys optional). Attribute names are those of the fitted blocks
        (:attr:`~skdp_synth.blocks.Blocks.names`: the encoder's columns, or
        ``x0, x1, ..`` for bare 0/1 columns).
        """
        names = tuple(str(c) for c in names)
        if isinstance(spec, Mapping):
            unknown = set(spec) - {"total", "tables"}
            if unknown:
                raise ValueError(
                    f"invariants: unknown keys {sorted(unknown)}; use 'total' "
                    "and/or 'tables'"
                )
            tables = list(spec.get("tables", ()))
            if spec.get("total", False):
                tables.append(())
        else:
            tables = list(spec)
        if not tables:
            raise ValueError("invariants: no table is named")
        sets = []
        for t in tables:
            if isinstance(t, str) or not isinstance(t, Sequence):
                raise ValueError(
                    "invariants: each table is a tuple of attribute names, e.g. "
                    f"('region', 'sex'); got {t!r}"
                )
            idx = []
            for a in t:
                if isinstance(a, Integral) and not isinstance(a, bool):
                    raise ValueError(
                        "invariants: name attributes by their names, e.g. "
                        f"('region',), not by position ({a!r})"
                    )
                if str(a) not in names:
                    raise ValueError(
                        f"invariants: unknown attribute {a!r}; the attributes "
                        f"are {list(names)}"
                    )
                idx.append(names.index(str(a)))
            if len(set(idx)) != len(idx):
                raise ValueError(f"invariants: repeated attribute in {tuple(t)!r}")
            sets.append(tuple(sorted(idx)))
        # every listed table is kept (the rows are rounded and repaired to
        # each of them, in a running intersection order); the total is implied
        listed = sorted(set(sets), key=lambda S: (len(S), S))
        return cls(tuple(listed), names)

    def maximal(self) -> tuple:
        """The invariant sets not inside another (the others are their sums)."""
        return tuple(
            S for S in self.sets if not any(set(S) < set(T) for T in self.sets)
        )

    def closure(self) -> set:
        """Every subset of an invariant set: the exact residuals ``z_A``.

        Table ``T_S`` is the sum over ``A ⊆ S`` of the expansions of the
        residuals ``z_A`` (:mod:`skdp_synth.attribute_workload`), and ``z_A``
        is a linear function of ``T_A``, itself a marginal of ``T_S``: the
        tables ``{T_S}`` and the residuals ``{z_A : A ⊆ some S}`` determine
        each other.
        """
        out = set()
        for S in self.sets:
            for k in range(len(S) + 1):
                out.update(itertools.combinations(S, k))
        return out

    @property
    def max_size(self) -> int:
        return max(len(S) for S in self.sets)

    def labels(self) -> tuple:
        """What is published exactly, for the recorded guarantee.

        ``"total"`` always (every invariant table sums to ``n``), then each
        table as ``"table a x b"``.
        """
        out = ["total"]
        for S in self.sets:
            if S:
                out.append("table " + " x ".join(self.names[j] for j in S))
        return tuple(out)


def running_intersection_order(sets):
    """An order of ``sets`` with the running intersection property, or ``None``.

    Each set's intersection with the union of the earlier ones lies inside
    one earlier set (:cite:`Gao2022` does not need this; exact *rows* do: the
    tables of such a family -- e.g. nested tables, or tables sharing one
    attribute -- can be reached one after the other without undoing the
    earlier ones). Tried from every start, greedily.
    """
    sets = [tuple(S) for S in sets]
    for first in range(len(sets)):
        order = [sets[first]]
        rest = sets[:first] + sets[first + 1 :]
        while rest:
            union = set().union(*order)
            pick = next(
                (S for S in rest if any(set(S) & union <= set(T) for T in order)),
                None,
            )
            if pick is None:
                break
            order.append(pick)
            rest.remove(pick)
        if not rest:
            return order
    return None


def _grid_index(levels, S, n_levels):
    """Flat C-order cell index of every row of ``levels`` in table ``S``."""
    index = np.zeros(levels.shape[0], dtype=np.int64)
    for j in S:
        index = index * int(n_levels[j]) + levels[:, j]
    return index


def _round_to_sum(x, total):
    """Integers ``k`` with ``Σ k = total`` and ``|k_i - x_i| < 1`` (``x_i`` exact
    when integral) when ``floor(Σ x) <= total <= ceil(Σ x)``.

    Floors, then one more for the ``total - Σ floor`` cells with the largest
    fractional parts (ties by position: deterministic). Another total: the
    same for ``x`` rescaled to sum to it (each cell within one of the
    rescaled value).
    """
    x = np.asarray(x, dtype=np.float64)
    base = np.floor(x + 1e-9)
    frac = np.clip(x - base, 0.0, None)
    extra = int(total - base.sum())
    if extra < 0 or extra > int(np.count_nonzero(frac > 1e-9)):
        # the total is off by more than the rounding of Σ x (an overlap that
        # is not itself a listed table): round x rescaled to the total
        s = float(x.sum())
        x = x * (total / s) if s > 0 else np.full(x.shape, total / max(x.size, 1))
        base = np.floor(x + 1e-9)
        frac = np.clip(x - base, 0.0, None)
        extra = int(total - base.sum())
    k = base.astype(np.int64)
    if extra:
        k[np.argsort(-frac, kind="stable")[:extra]] += 1
    return k


def rounded_tables(tables, n, n_levels):
    """Integer invariant tables for ``n`` rows, each cell within one count.

    ``tables`` maps every invariant set ``S`` (in a running intersection
    order, :func:`running_intersection_order`) to its exact counts (C order,
    summing to the total ``N``). With ``n = N`` they are returned as they
    are. Otherwise every table is scaled by ``n / N`` and rounded along the
    order: the first table to integers summing to ``n``; table ``S_k`` then,
    for each cell ``g`` of the part ``B = S_k ∩ (S_1 ∪ .. ∪ S_{k-1})`` (a
    marginal of an earlier, already rounded table, count ``c_g``), its slice
    to integers summing to ``c_g``. The tables agree on their shared
    margins by construction. When ``B`` is itself an earlier listed table
    (or empty) -- nested tables such as total, region, region x sex -- ``c_g``
    is within one of the slice's scaled sum ``s``, so it is ``floor(s)`` or
    ``ceil(s)``, which lie between the sums of the slice's floors and
    ceilings: each cell is rounded up or down (:func:`_round_to_sum`),
    *within one count* of ``n T / N``. Otherwise the slice is rescaled to
    ``c_g`` first (within one count of the rescaled value).
    """
    order = list(tables)
    totals = {float(np.sum(tables[S])) for S in order}
    N = totals.pop()
    out = {}
    done = []
    for S in order:
        T = np.asarray(tables[S], dtype=np.float64)
        if n == round(N):
            out[S] = np.rint(T).astype(np.int64)
            done.append(S)
            continue
        scaled = T * (n / N)
        shape = tuple(int(n_levels[j]) for j in S)
        union = set().union(*done) if done else set()
        B = tuple(j for j in S if j in union)
        if not B:
            out[S] = _round_to_sum(scaled, n)
        else:
            parent = next(P for P in done if set(B) <= set(P))
            Pt = out[parent].reshape(tuple(int(n_levels[j]) for j in parent))
            drop = tuple(i for i, j in enumerate(parent) if j not in B)
            counts_B = Pt.sum(axis=drop)  # axes of B in parent order = sorted
            axes_B = [S.index(j) for j in B]
            axes_R = [i for i in range(len(S)) if S[i] not in B]
            X = np.transpose(scaled.reshape(shape), axes_B + axes_R)
            X = X.reshape(int(np.prod(counts_B.shape, dtype=np.int64)), -1)
            K = np.empty(X.shape, dtype=np.int64)
            for g, c in enumerate(counts_B.ravel()):
                K[g] = _round_to_sum(X[g], int(c))
            K = K.reshape([shape[a] for a in axes_B + axes_R])
            out[S] = np.transpose(K, np.argsort(axes_B + axes_R)).ravel()
        done.append(S)
    return out


def repair_rows(levels, targets, n_levels, rng):
    """Change the fewest attribute values so that rows hold ``targets`` exactly.

    ``levels``: ``(n, a)`` level rows; ``targets``: ``{S: integer table}`` in
    a running intersection order (:func:`rounded_tables`), each summing to
    ``n``. For table ``S_k``, only the attributes of ``S_k`` not in an
    earlier table are changed, inside each group of rows that agree on the
    rest ``B`` of ``S_k`` (whose counts an earlier table already fixed, so
    every group has exactly as many rows as the slice of ``S_k`` needs):
    in a group, rows of cells with a surplus (chosen at random by ``rng``)
    move to the cells with a deficit. That is
    ``Σ_cells max(0, count - target)`` rows per table, the fewest any repair
    can change, and the earlier tables are untouched (their attributes are
    not changed). Other attributes of a moved row are kept.
    """
    L = np.array(levels, dtype=np.int64, copy=True)
    n = L.shape[0]
    done = []
    for S, target in targets.items():
        target = np.asarray(target, dtype=np.int64)
        if int(target.sum()) != n:
            raise ValueError(  # pragma: no cover - a bug in the caller
                "an invariant table does not sum to the number of rows"
            )
        union = set().union(*done) if done else set()
        B = [j for j in S if j in union]
        R = [j for j in S if j not in union]
        done.append(S)
        if not R:  # every attribute fixed by earlier tables: already holds
            continue
        shape = tuple(int(n_levels[j]) for j in S)
        axes = [S.index(j) for j in B] + [S.index(j) for j in R]
        tgt = np.transpose(target.reshape(shape), axes).reshape(
            int(np.prod([n_levels[j] for j in B], dtype=np.int64)), -1
        )
        group = _grid_index(L, B, n_levels)
        cell = _grid_index(L, R, n_levels)
        r_shape = tuple(int(n_levels[j]) for j in R)
        for g in np.unique(group):
            rows = np.flatnonzero(group == g)
            have = np.bincount(cell[rows], minlength=tgt.shape[1])
            need = tgt[g]
            if np.array_equal(have, need):
                continue
            movers = []
            for c in np.flatnonzero(have > need):
                members = rows[cell[rows] == c]
                movers.append(rng.permutation(members)[: have[c] - need[c]])
            movers = rng.permutation(np.concatenate(movers))
            deficits = np.repeat(np.arange(tgt.shape[1]), np.clip(need - have, 0, None))
            new = np.array(np.unravel_index(deficits, r_shape)).T
            L[np.ix_(movers, R)] = new
    return L
