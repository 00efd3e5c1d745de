"""Structural zeros: cells of attribute tables that no row may occupy.

Public knowledge about the schema (an implication between categorical
columns, a declared impossible combination), given as ``(attributes,
mask)`` with ``mask[cell]`` true where the cell of those attributes' table
is impossible. The generator's descent (:func:`~._generator.fit_rows`)
fits its rows under them: a penalty per broken zero raised step by step,
then a repair of the rows still broken to the nearest feasible ones, then
a descent in which no move or swap enters an impossible cell. The fitted
table -- a local maximum of the noise-weighted likelihood over tables of
*feasible* rows, the noisy measurements projected onto the feasible tables
in the noise metric -- puts exactly 0 mass on them, and the noise measured
in those cells is not fitted. It reads the released measurements and the
public zeros only (post-processing).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Zeros", "check_zeros"]


def check_zeros(zeros, n_levels, names=None):
    """``[(attributes, mask)]`` validated against the domain ``n_levels``:
    sorted distinct attribute indices, a boolean mask of the table's shape
    that forbids some cell but not all. Returns the normalised list
    (attributes sorted, the mask's axes in that order); public inputs only.
    ``names``: the attributes' names, for the messages.
    """
    n_levels = np.asarray(n_levels, dtype=np.int64)

    def shown(attrs):
        if names is None:
            return str(attrs)
        return str([str(names[j]) for j in attrs])

    out = []
    for k, item in enumerate(zeros):
        try:
            attrs, mask = item
        except (TypeError, ValueError):
            raise ValueError(
                f"structural zero {k}: expected (attributes, mask), got {item!r}"
            ) from None
        attrs = tuple(int(j) for j in attrs)
        if not attrs or len(set(attrs)) != len(attrs):
            raise ValueError(
                f"structural zero {k}: needs one or more distinct attributes, got "
                f"{attrs}"
            )
        if any(not 0 <= j < n_levels.size for j in attrs):
            raise ValueError(
                f"structural zero {k}: attribute index out of range ({attrs}; "
                f"{n_levels.size} attributes)"
            )
        mask = np.asarray(mask)
        if mask.dtype != bool:
            raise ValueError(
                f"structural zero {k}: the mask must be boolean (True = impossible)"
            )
        shape = tuple(int(n_levels[j]) for j in attrs)
        if mask.shape != shape:
            raise ValueError(
                f"structural zero {k}: the mask has shape {mask.shape}, the table "
                f"of {shown(attrs)} has {shape}"
            )
        if mask.all():
            raise ValueError(
                f"structural zero {k}: every cell of the table of {shown(attrs)} "
                "is impossible, so no row can exist: the rule forbids every "
                "combination of their levels (check it against the declared "
                "levels)"
            )
        order = np.argsort(attrs)
        attrs = tuple(attrs[i] for i in order)
        mask = np.transpose(mask, order)
        if mask.any():
            out.append((attrs, np.ascontiguousarray(mask)))
    for attrs, members in _groups(out):
        if not _allowed(attrs, members, n_levels).any():
            raise ValueError(
                f"the structural zeros on {shown(attrs)} together forbid every "
                "combination of their levels, so no row can exist: the rules "
                "contradict one another on the declared levels"
            )
    return out


def _groups(zeros):
    """``[(attributes, zeros)]``: the zeros tied by shared attributes."""
    groups = []
    for attrs, mask in zeros:
        cols = set(attrs)
        merged = [g for g in groups if g[0] & cols]
        members = [(attrs, mask)]
        for g in merged:
            groups.remove(g)
            cols |= g[0]
            members = g[1] + members
        groups.append((cols, members))
    return [(tuple(sorted(cols)), members) for cols, members in groups]


def _allowed(attrs, zeros, n_levels):
    """Whether each combination of ``attrs``' levels (C order) keeps every
    one of ``zeros``; a group too large to enumerate is refused."""
    sizes = [int(n_levels[j]) for j in attrs]
    if float(np.prod(sizes, dtype=float)) > MAX_GROUP_CELLS:
        raise ValueError(
            f"the structural zeros tie attributes {list(attrs)} together, "
            f"whose levels make more than {MAX_GROUP_CELLS:,} combinations: "
            "declare fewer, smaller groups"
        )
    pos = {j: i for i, j in enumerate(attrs)}
    grid = np.indices(sizes).reshape(len(sizes), -1).T
    ok = np.ones(grid.shape[0], dtype=bool)
    for za, mask in zeros:
        ok &= ~mask[tuple(grid[:, pos[j]] for j in za)]
    return ok


class Zeros:
    """The structural zeros of one fit, indexed for the descent's checks."""

    def __init__(self, zeros, n_levels):
        self.n_levels = np.asarray(n_levels, dtype=np.int64)
        self.zeros = check_zeros(zeros, self.n_levels)
        # per attribute: (other attributes, their radix, mask with j last, flat)
        self._by_attr = {}
        for attrs, mask in self.zeros:
            for p, j in enumerate(attrs):
                others = tuple(k for k in attrs if k != j)
                L = int(self.n_levels[j])
                flat = np.moveaxis(mask, p, -1).reshape(-1, L)
                mult = _radix([int(self.n_levels[k]) for k in others])
                self._by_attr.setdefault(j, []).append((others, mult, flat))

    def __bool__(self):
        return bool(self.zeros)

    def broken(self, R):
        """Rows of ``R`` in an impossible cell of some zero."""
        bad = np.zeros(R.shape[0], dtype=bool)
        for attrs, mask in self.zeros:
            bad |= mask[tuple(R[:, j] for j in attrs)]
        return bad

    def forbidden(self, R, j, rows):
        """``(rows.size, L_j)``: setting attribute ``j`` of each row to each
        level would put the row in an impossible cell."""
        out = np.zeros((rows.size, int(self.n_levels[j])), dtype=bool)
        for others, mult, flat in self._by_attr.get(int(j), ()):
            if others:
                idx = R[np.ix_(rows, others)] @ mult
            else:
                idx = np.zeros(rows.size, dtype=np.int64)
            out |= flat[idx]
        return out

    def counts(self, R, j, rows):
        """``(rows.size, L_j)``: how many zeros containing ``j`` each row
        would break with ``j`` at each level."""
        out = np.zeros((rows.size, int(self.n_levels[j])), dtype=np.int64)
        for others, mult, flat in self._by_attr.get(int(j), ()):
            if others:
                idx = R[np.ix_(rows, others)] @ mult
            else:
                idx = np.zeros(rows.size, dtype=np.int64)
            out += flat[idx]
        return out

    def change(self, R, j, rows, levels):
        """The change of the number of broken zeros when attribute ``j`` of
        ``rows`` (distinct) is set to ``levels``."""
        if rows.size == 0:
            return 0
        c = self.counts(R, j, rows)
        at = np.arange(rows.size)
        return int(c[at, levels].sum() - c[at, R[rows, j]].sum())

    def feasible_levels(self, R, rows, j, levels):
        """Whether each ``R[rows]`` with ``j`` set to ``levels`` is allowed."""
        f = self.forbidden(R, j, rows)
        return ~f[np.arange(rows.size), levels]

    def pair_mask(self, j, k):
        """``(L_j, L_k)`` cells of the pair ``(j, k)`` that a zero on ``j``,
        on ``k`` or on exactly the two forbids (for the start's tables)."""
        out = np.zeros((int(self.n_levels[j]), int(self.n_levels[k])), dtype=bool)
        for attrs, mask in self.zeros:
            if attrs == (j, k):
                out |= mask
            elif attrs == (k, j):
                out |= mask.T
            elif attrs == (j,):
                out |= mask[:, None]
            elif attrs == (k,):
                out |= mask[None, :]
        return out

    def level_mask(self, j):
        """Levels of ``j`` that a zero on ``j`` alone forbids."""
        out = np.zeros(int(self.n_levels[j]), dtype=bool)
        for attrs, mask in self.zeros:
            if attrs == (j,):
                out |= mask
        return out

    def make_feasible(self, R, rng):
        """``R`` with every broken row moved, in place, to the nearest allowed
        combination of each group of zeros' attributes (zeros sharing an
        attribute form a group): among the allowed combinations that change
        the fewest of the group's attributes, one drawn with probability
        proportional to its count among the rows that keep the group's
        zeros (uniformly when none does). Rows that keep them are left
        alone. Raises ``ValueError`` when a group allows no combination."""
        for attrs, zeros in _groups(self.zeros):
            self._repair_group(R, attrs, zeros, rng)
        return R

    def _repair_group(self, R, attrs, zeros, rng):
        pos = {j: i for i, j in enumerate(attrs)}
        sizes = [int(self.n_levels[j]) for j in attrs]
        ok = _allowed(attrs, zeros, self.n_levels)
        grid = np.indices(sizes).reshape(len(sizes), -1).T  # every combination
        if not ok.any():  # pragma: no cover - refused by check_zeros
            raise ValueError("the structural zeros leave no row possible")
        codes = R[:, list(attrs)]
        bad = np.zeros(R.shape[0], dtype=bool)
        for za, mask in zeros:
            bad |= mask[tuple(codes[:, pos[j]] for j in za)]
        if not bad.any():
            return
        allowed = grid[ok]
        mult = _radix(sizes)
        weight = np.bincount(codes[~bad] @ mult, minlength=grid.shape[0])[ok]
        weight = weight.astype(np.float64)
        rows = np.flatnonzero(bad)
        patterns, inverse = np.unique(codes[rows], axis=0, return_inverse=True)
        inverse = np.asarray(inverse).reshape(-1)
        for p, pattern in enumerate(patterns):
            members = rows[inverse == p]
            distance = (allowed != pattern).sum(axis=1)
            nearest = np.flatnonzero(distance == distance.min())
            w = weight[nearest]
            prob = w / w.sum() if w.sum() > 0 else None
            pick = rng.choice(nearest, size=members.size, p=prob)
            R[np.ix_(members, list(attrs))] = allowed[pick]


#: the most combinations one group of tied attributes may have
MAX_GROUP_CELLS = 1_000_000


def _radix(sizes):
    mult = np.ones(len(sizes), dtype=np.int64)
    for i in range(len(sizes) - 2, -1, -1):
        mult[i] = mult[i + 1] * sizes[i + 1]
    return mult
