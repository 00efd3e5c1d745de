"""Inequalities between numeric columns, and against constants, held by projection.

``Inequality("tenure", "<=", "age", offset=-14)`` is ``tenure <= age - 14``;
``Inequality("weeks", ">=", 20)`` bounds one column. Dates and durations
compare as seconds: ``Inequality("discharged", ">=", "admitted")``, with a
``pd.Timedelta`` offset (``offset=pd.Timedelta("1D")``). Together they are a
system of difference constraints ``x_a - x_b <= c`` (a constant is a column
``x_0 = 0``), whose shortest-path closure (Floyd-Warshall) is its minimal
network: a negative cycle is a contradiction, and a closed network is
*decomposable* -- values given to any columns in turn, each inside the
bounds the closure sets from those already given, never run out of room
(Dechter, Meiri & Pearl, "Temporal constraint networks", Artificial
Intelligence 49, 1991, §3, the simple temporal problem). ``repair``
does exactly that, row by row in one vectorized pass: each column is
clipped into its interval, so a row that keeps every rule is left as it
is and a broken one is moved to the nearest boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import numpy as np
import pandas as pd

from .._datetime import is_duration_dtype, is_time_dtype, native_time_dtype, to_units
from ._base import Rule, is_number

__all__ = ["DifferenceNetwork", "Inequality", "repair_inequalities"]

_OPS = ("<=", ">=")


@dataclass(frozen=True)
class Inequality(Rule):
    """``left op right + offset`` on every row: between columns or against a constant.

    Parameters
    ----------
    left : str
        The column that is moved when a row breaks the rule (projected to
        the boundary the other side sets).
    op : {"<=", ">="}
        Non-strict: a strict bound on whole numbers is the non-strict one
        shifted by 1 (``x < 37`` is ``x <= 36``).
    right : str or float
        A column name, or a constant (a number: a date or duration column
        is bounded by the encoder's ``bounds=`` instead).
    offset : float or timedelta, default=0.0
        Added to ``right``: a number between number columns, a
        ``pd.Timedelta`` (or ``datetime.timedelta``) between two date or two
        duration columns, which compare as seconds.

    Examples
    --------
    >>> import pandas as pd
    >>> from skdp_synth.rules import Inequality
    >>> rule = Inequality("tenure", "<=", "age", offset=-14)
    >>> rule.broken(pd.DataFrame({"tenure": [3, 30], "age": [40, 40]})).tolist()
    [False, True]
    """

    left: str
    op: str
    right: str | float
    offset: float | timedelta = 0.0

    kind = "numeric"

    def __post_init__(self):
        if self.op not in _OPS:
            raise ValueError(
                f"Inequality op must be one of {_OPS}, got {self.op!r} (a strict "
                "bound on whole numbers is the non-strict one shifted by 1)"
            )
        if is_timedelta(self.offset):
            if pd.isna(pd.Timedelta(self.offset)) or is_number(self.right):
                raise ValueError(
                    "Inequality offset may be a timedelta only between two "
                    f"columns (dates or durations), got {self.offset!r}"
                )
        elif not is_number(self.offset) or not np.isfinite(self.offset):
            raise ValueError(
                "Inequality offset must be a finite number or a timedelta, got "
                f"{self.offset!r}"
            )
        if is_number(self.right) and not np.isfinite(self.right):
            raise ValueError(f"Inequality bound must be finite, got {self.right!r}")
        if self.right == self.left:
            raise ValueError(f"Inequality compares {self.left!r} with itself")

    @property
    def columns(self) -> tuple:
        return (self.left,) if is_number(self.right) else (self.left, self.right)

    @property
    def offset_value(self) -> float:
        """The offset as a number: a timedelta in seconds (the unit a date
        or duration column is compared in)."""
        if is_timedelta(self.offset):
            return pd.Timedelta(self.offset).total_seconds()
        return float(self.offset)

    def _sides(self, frame):
        x = _as_float(frame[self.left])
        if is_number(self.right):
            bound = np.full(len(frame), float(self.right) + self.offset_value)
        else:
            bound = _as_float(frame[self.right]) + self.offset_value
        return x, bound

    def broken(self, frame: pd.DataFrame) -> np.ndarray:
        x, bound = self._sides(frame)
        # to within a few units in the last place: a value projected onto
        # ``y - c`` compares with ``y`` after one more rounding
        tol = 4 * np.spacing(np.maximum(np.abs(x), np.abs(bound)))
        with np.errstate(invalid="ignore"):
            bad = x > bound + tol if self.op == "<=" else x < bound - tol
        return bad & ~np.isnan(x) & ~np.isnan(bound)

    def edge(self):
        """``(a, b, c)``: the rule as ``x_a - x_b <= c`` (``b`` is ``None``
        for a constant, the zero column)."""
        right = None if is_number(self.right) else self.right
        c = self.offset_value + (float(self.right) if right is None else 0.0)
        if self.op == "<=":
            return self.left, right, c
        return right, self.left, -c


class DifferenceNetwork:
    """The inequalities' minimal network over their columns (and ``x_0 = 0``).

    ``D[a, b]`` is the tightest ``c`` with ``x_a - x_b <= c`` that the rules
    imply (``inf``: none). ``integer`` names the columns of whole numbers:
    between them (and the constants) a bound is rounded down to a whole
    number (``x <= 3.5`` is ``x <= 3``) and the network closed again, until
    nothing moves, so that their part of it is closed over the integers;
    they are given values first (each whole-number interval then holds a
    whole number), the other columns after them (the real network extends
    any values that keep it). Within each kind, a ``left`` column comes
    after the columns it is compared with.
    """

    def __init__(self, rules, integer=()):
        self.rules = list(rules)
        integer = set(integer)
        order = _repair_order(self.rules)
        order = [c for c in order if c in integer] + [
            c for c in order if c not in integer
        ]
        self.columns = order
        index = {name: i + 1 for i, name in enumerate(order)}
        k = len(order) + 1
        W = np.full((k, k), np.inf)
        np.fill_diagonal(W, 0.0)
        for rule in self.rules:
            a, b, c = rule.edge()
            W[index.get(a, 0), index.get(b, 0)] = min(
                W[index.get(a, 0), index.get(b, 0)], c
            )
        whole = np.ix_(*[[0] + [index[c] for c in order if c in integer]] * 2)
        D = W
        for _ in range(4 * k * k + 8):
            for m in range(k):
                D = np.minimum(D, D[:, m : m + 1] + D[m : m + 1, :])
            if (np.diag(D) < -1e-9).any():
                break  # a contradiction: contradiction() names it
            rounded = np.floor(D[whole] + 1e-9)
            if not (rounded < D[whole]).any():
                break
            D[whole] = np.minimum(D[whole], rounded)
        self.D = D
        self.integer = integer

    def contradiction(self):
        """The columns on a cycle that the rules cannot all keep (empty: the
        rules can all hold)."""
        bad = np.flatnonzero(np.diag(self.D) < -1e-9)
        return [self.columns[i - 1] if i else "<constant>" for i in bad]

    def repair(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` with every inequality held: each column in turn clipped
        into the interval its constant bounds and the columns before it set.
        A missing value is neither moved nor a bound."""
        D = self.D
        values = {}
        for t, name in enumerate(self.columns, start=1):
            x = _as_float(frame[name])
            hi = np.full(len(frame), D[t, 0])
            lo = np.full(len(frame), -D[0, t])
            for s, other in enumerate(self.columns[: t - 1], start=1):
                y = values[other]
                known = ~np.isnan(y)
                if np.isfinite(D[t, s]):
                    hi = np.where(known, np.minimum(hi, y + D[t, s]), hi)
                if np.isfinite(D[s, t]):
                    lo = np.where(known, np.maximum(lo, y - D[s, t]), lo)
            if name in self.integer:
                hi, lo = np.floor(hi + 1e-9), np.ceil(lo - 1e-9)
            with np.errstate(invalid="ignore"):
                moved = np.where(x > hi, hi, x)
                moved = np.where(moved < lo, lo, moved)
            values[name] = moved
            changed = ~np.isnan(x) & (moved != x)
            if changed.any():
                frame[name] = _restore(frame[name], moved, changed)
        return frame


def repair_inequalities(frame, rules, integer=()):
    """``frame`` with every inequality held (:meth:`DifferenceNetwork.repair`).

    A missing value is compared with nothing, so the rules naming it do not
    bind its row -- nor do the bounds they imply on other columns
    (``x1 >= x0 >= -11`` does not bound ``x1`` where ``x0`` is missing): the
    rows are repaired per pattern of missing values, each by the network of
    the rules whose columns it holds.
    """
    columns = list(dict.fromkeys(c for r in rules for c in r.columns))
    missing = np.stack([np.isnan(_as_float(frame[c])) for c in columns], axis=1)
    if not missing.any():
        return DifferenceNetwork(rules, integer).repair(frame)
    patterns, inverse = np.unique(missing, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    for p, pattern in enumerate(patterns):
        absent = {c for c, gone in zip(columns, pattern) if gone}
        kept = [r for r in rules if not absent & set(r.columns)]
        if not kept:
            continue
        rows = np.flatnonzero(inverse == p)
        part = DifferenceNetwork(kept, integer).repair(frame.iloc[rows].copy())
        for c in columns:
            before = _as_float(frame[c])
            moved = before.copy()
            moved[rows] = _as_float(part[c])
            changed = ~np.isnan(before) & (moved != before)
            if changed.any():
                frame[c] = _restore(frame[c], moved, changed)
    return frame


def _repair_order(rules):
    """The columns in the order they are given values: a column that is
    moved (a ``left``) after the columns it is compared with, so a broken
    ``tenure <= age - 14`` moves ``tenure``, not ``age`` (Kahn's order;
    on a cycle, the first-named column first)."""
    names, after = [], {}
    for rule in rules:
        for name in rule.columns:
            if name not in names:
                names.append(name)
                after[name] = set()
        if not is_number(rule.right):
            after[rule.left].add(rule.right)
    order = []
    while len(order) < len(names):
        ready = [n for n in names if n not in order and after[n] <= set(order)]
        order.append(ready[0] if ready else next(n for n in names if n not in order))
    return order


def is_timedelta(value) -> bool:
    """A duration (``pd.Timedelta``, ``datetime.timedelta``, ``np.timedelta64``)."""
    return isinstance(value, (timedelta, np.timedelta64))


def _as_float(column):
    """A column as float64 (NaN where missing): dates as seconds since
    1970-01-01 (UTC for a zoned column), durations as seconds."""
    if is_time_dtype(column.dtype):
        return to_units(column, column.dtype, "s")
    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _restore(column, moved, changed):
    """``moved`` written back in the column's own dtype, on changed rows only."""
    out = column.copy()
    values = moved[changed]
    if is_time_dtype(column.dtype):
        values = _times_of_seconds(values, column.dtype)
    elif pd.api.types.is_integer_dtype(column.dtype):
        values = np.round(values).astype(np.int64)
    out.iloc[np.flatnonzero(changed)] = values
    return out


def _times_of_seconds(seconds, dtype):
    """Seconds (since 1970-01-01 UTC, or of a duration) as values of the
    date or duration column ``dtype``, to the nanosecond."""
    native = native_time_dtype(dtype)
    ns = np.round(np.asarray(seconds, dtype=np.float64) * 1e9).astype(np.int64)
    if is_duration_dtype(native):
        values = pd.Series(pd.to_timedelta(ns, unit="ns"))
    else:
        values = pd.Series(pd.to_datetime(ns, unit="ns"))
        tz = getattr(native, "tz", None)
        if tz is not None:
            values = values.dt.tz_localize("UTC").dt.tz_convert(tz)
    return values.astype(dtype).array
