"""Rules between categorical columns, held by redrawing the offending columns.

Three ways to say which combinations of levels cannot occur:
:class:`StructuralZero` (one impossible cell), :class:`Implies` ("No
internet service" in one column implies it in others) and
:class:`FixedCombinations` (the only combinations there are). Columns named
together by any rules form a group; its allowed combinations are the product
of its columns' levels less every cell a rule forbids. A broken row is
repaired inside its group: among the allowed combinations nearest to it (the
fewest columns changed -- for a broken implication, the consequence *or* the
condition), one is drawn with probability proportional to how often it
occurs in the sample's rows that keep every rule (uniformly when none
does). Rows that keep the rules are left alone; the repaired rows follow the
rule-keeping rows' distribution, so the marginals move only by the broken
rows' share, towards the rule-keeping rows.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._base import Rule, as_values

__all__ = [
    "FixedCombinations",
    "Implies",
    "StructuralZero",
    "allowed_combinations",
    "repair_group",
]

#: The most combinations a group of columns may have (product of levels).
MAX_COMBINATIONS = 200_000


class _Other:
    """A level no rule names (all such levels behave alike for the rules)."""

    def __repr__(self):
        return "<any other level>"


OTHER = _Other()


def _matches(frame, cell):
    """Rows whose value is one of the cell's values, in every column."""
    mask = np.ones(len(frame), dtype=bool)
    for column, values in cell.items():
        mask &= frame[column].isin(values).to_numpy()
    return mask


def _cell(mapping, what):
    if not isinstance(mapping, dict) or not mapping:
        raise TypeError(f"{what} must be a non-empty dict {{column: value(s)}}")
    return {column: as_values(v) for column, v in mapping.items()}


@dataclass(frozen=True)
class StructuralZero(Rule):
    """A cell that cannot occur: no row has these values together.

    Parameters
    ----------
    cell : dict
        ``{column: value or list of values}``; a row is in the cell when
        each column holds (one of) its value(s).

    Examples
    --------
    >>> import pandas as pd
    >>> from skdp_synth.rules import StructuralZero
    >>> rule = StructuralZero({"sex": "male", "pregnant": "yes"})
    >>> rows = pd.DataFrame({"sex": ["male", "female"], "pregnant": ["yes", "yes"]})
    >>> rule.broken(rows).tolist()
    [True, False]
    """

    cell: dict

    kind = "categorical"

    def __post_init__(self):
        object.__setattr__(self, "cell", _cell(self.cell, "StructuralZero's cell"))

    @property
    def columns(self) -> tuple:
        return tuple(self.cell)

    def named(self):
        return self.cell

    def broken(self, frame: pd.DataFrame) -> np.ndarray:
        return _matches(frame, self.cell)


@dataclass(frozen=True)
class Implies(Rule):
    """An implication: rows in the ``condition`` cell hold the ``consequence``.

    Parameters
    ----------
    condition : dict
        ``{column: value or list of values}``.
    consequence : dict
        ``{column: value or list of values}``: when the condition holds,
        each of these columns holds (one of) its value(s).

    Examples
    --------
    >>> import pandas as pd
    >>> from skdp_synth.rules import Implies
    >>> rule = Implies({"internet": "No"}, {"streaming": "No internet service"})
    >>> rows = pd.DataFrame({"internet": ["No", "No", "DSL"],
    ...                      "streaming": ["Yes", "No internet service", "Yes"]})
    >>> rule.broken(rows).tolist()
    [True, False, False]
    """

    condition: dict
    consequence: dict

    kind = "categorical"

    def __post_init__(self):
        object.__setattr__(self, "condition", _cell(self.condition, "condition"))
        object.__setattr__(self, "consequence", _cell(self.consequence, "consequence"))
        both = set(self.condition) & set(self.consequence)
        if both:
            raise ValueError(
                f"Implies names {sorted(map(str, both))} in both its condition "
                "and its consequence"
            )

    @property
    def columns(self) -> tuple:
        return (*self.condition, *self.consequence)

    def named(self):
        return {**self.condition, **self.consequence}

    def broken(self, frame: pd.DataFrame) -> np.ndarray:
        held = _matches(frame, self.condition)
        kept = np.ones(len(frame), dtype=bool)
        for column, values in self.consequence.items():
            kept &= frame[column].isin(values).to_numpy()
        return held & ~kept


@dataclass(frozen=True)
class FixedCombinations(Rule):
    """The only combinations of levels the ``column_names`` take together.

    Declared, not read from the data (reading them would release which
    combinations occur).

    Parameters
    ----------
    column_names : sequence of str
    combinations : sequence of tuples
        Each a tuple of one level per column.

    Examples
    --------
    >>> import pandas as pd
    >>> from skdp_synth.rules import FixedCombinations
    >>> rule = FixedCombinations(["city", "state"],
    ...                          [("Austin", "TX"), ("Boston", "MA")])
    >>> rule.broken(pd.DataFrame({"city": ["Austin", "Austin"],
    ...                           "state": ["TX", "MA"]})).tolist()
    [False, True]
    """

    column_names: tuple
    combinations: tuple

    kind = "categorical"

    def __post_init__(self):
        columns = tuple(self.column_names)
        combos = tuple(tuple(c) for c in self.combinations)
        if len(columns) < 2 or len(set(columns)) != len(columns):
            raise ValueError("FixedCombinations needs two or more distinct columns")
        if not combos:
            raise ValueError("FixedCombinations needs at least one combination")
        bad = [c for c in combos if len(c) != len(columns)]
        if bad:
            raise ValueError(
                f"FixedCombinations: combination {bad[0]!r} does not have one "
                f"level for each of {list(columns)}"
            )
        object.__setattr__(self, "column_names", columns)
        object.__setattr__(self, "combinations", combos)

    @property
    def columns(self) -> tuple:
        return self.column_names

    def named(self):
        return {
            column: tuple(dict.fromkeys(c[i] for c in self.combinations))
            for i, column in enumerate(self.columns)
        }

    def broken(self, frame: pd.DataFrame) -> np.ndarray:
        index = pd.MultiIndex.from_frame(frame[list(self.columns)])
        return ~index.isin(list(self.combinations))


def allowed_combinations(rules, columns, domains):
    """The combinations of ``columns`` (levels from ``domains``) that break
    none of ``rules``, as a DataFrame (empty: the rules contradict)."""
    size = int(np.prod([len(domains[c]) for c in columns], dtype=float))
    if size > MAX_COMBINATIONS:
        raise ValueError(
            f"the rules tie columns {list(columns)} together, whose levels "
            f"make {size:,} combinations (at most {MAX_COMBINATIONS:,}): "
            "declare fewer, smaller groups of rules"
        )
    combos = pd.DataFrame(
        list(itertools.product(*(domains[c] for c in columns))), columns=list(columns)
    )
    keep = np.ones(len(combos), dtype=bool)
    for rule in rules:
        keep &= ~rule.broken(combos)
    return combos[keep].reset_index(drop=True)


def repair_group(frame, rules, columns, rng):
    """Redraw ``columns`` of the rows of ``frame`` that break any of ``rules``
    (every rule names only ``columns``): the nearest allowed combinations,
    weighted by their counts among the rows that keep the rules."""
    broken = np.zeros(len(frame), dtype=bool)
    for rule in rules:
        broken |= rule.broken(frame)
    if not broken.any():
        return frame
    columns = list(columns)
    domains = {}
    for c in columns:
        levels = list(pd.unique(frame[c]))
        for rule in rules:
            levels += [v for v in rule.named().get(c, ()) if v not in levels]
        # a missing level last: the codes of the others are their positions
        missing = [v for v in levels if _is_missing(v)]
        domains[c] = [v for v in levels if not _is_missing(v)] + missing[:1]
    allowed = allowed_combinations(rules, columns, domains)
    if allowed.empty:
        raise ValueError(
            f"the rules {[repr(r) for r in rules]} leave no combination of "
            f"{columns} allowed: they contradict one another"
        )
    codes = np.stack([_codes(frame[c], domains[c]) for c in columns], axis=1)
    allowed_codes = np.stack([_codes(allowed[c], domains[c]) for c in columns], axis=1)
    # how often each allowed combination occurs among the rows keeping the rules
    keep_rows = codes[~broken]
    weight = np.zeros(len(allowed))
    radix = np.array([len(domains[c]) for c in columns], dtype=np.int64)
    if len(keep_rows):
        key = _keys(keep_rows, radix)
        found, counts = np.unique(key, return_counts=True)
        position = np.searchsorted(found, _keys(allowed_codes, radix))
        position = np.minimum(position, len(found) - 1)
        hit = found[position] == _keys(allowed_codes, radix)
        weight[hit] = counts[position[hit]]
    rows = np.flatnonzero(broken)
    _, first, inverse = np.unique(
        _keys(codes[rows], radix), return_index=True, return_inverse=True
    )
    patterns = codes[rows[first]]
    inverse = np.asarray(inverse).reshape(-1)
    chosen = np.empty(len(rows), dtype=np.int64)
    order = np.argsort(inverse, kind="stable")
    groups = np.split(order, np.cumsum(np.bincount(inverse))[:-1])
    for pattern, members in zip(patterns, groups):
        distance = (allowed_codes != pattern).sum(axis=1)
        nearest = np.flatnonzero(distance == distance.min())
        w = weight[nearest]
        prob = w / w.sum() if w.sum() > 0 else None
        chosen[members] = rng.choice(nearest, size=len(members), p=prob)
    out = frame.copy()
    for c in columns:
        values = allowed[c].to_numpy(dtype=object)[chosen]
        column = out[c]
        if isinstance(column.dtype, pd.CategoricalDtype):
            missing = set(values) - set(column.cat.categories) - {np.nan, None}
            if missing:
                column = column.cat.add_categories(sorted(missing, key=str))
        else:
            if _fits(column, values):
                # the values in the column's own dtype: object values written
                # into an int64 column warned (pandas' incompatible dtype)
                values = pd.Series(values).astype(column.dtype).to_numpy()
            else:
                column = column.astype(object)
        column = column.copy()
        column.iloc[rows] = values
        out[c] = column
    return out


def _codes(column, levels):
    """Each value's position in ``levels`` (whose missing level, if any, is
    last; every value of ``column`` is among them)."""
    present = [v for v in levels if not _is_missing(v)]
    codes = pd.Categorical(
        column.to_numpy(dtype=object), categories=pd.Index(present, dtype=object)
    ).codes.astype(np.int64)
    codes[codes < 0] = len(present)
    return codes


def _is_missing(value):
    return (
        value is None
        or (isinstance(value, float) and np.isnan(value))
        or (value is pd.NA or value is pd.NaT)
    )


def _keys(codes, radix):
    key = np.zeros(len(codes), dtype=np.int64)
    for j, r in enumerate(radix):
        key = key * r + codes[:, j]
    return key


def _fits(column, values):
    """Whether ``values`` can be written into ``column`` keeping its dtype."""
    try:
        converted = pd.Series(values).astype(column.dtype)
    except (TypeError, ValueError):
        return False
    return bool(
        (converted.to_numpy(dtype=object) == values).all()
        or pd.Series(values).isna().all()
    )
