"""The encoded cells a rule makes impossible (structural zeros).

A synthesizer that fits encoded attributes (a
:class:`~skdp_synth.preprocessing.BooleanEncoder`'s levels and bins) can be
told which cells of its attribute tables no row can occupy, before it fits
its rows (``ProjectedGaussianRelease(structural_zeros=...)``). This module
maps declared rules onto those cells, from the encoder's public levels:

* a categorical rule (:class:`StructuralZero`, :class:`Implies` -- one
  table per consequence column -- and :class:`FixedCombinations`) makes a
  cell of its columns' table impossible when every value the cell's levels
  stand for breaks it. A level stands for its value; the encoder's "other"
  level for every value it did not name (:data:`OTHER`) and for the rule's
  named values the encoder does not have; a missing level for the missing
  value.
* an :class:`Inequality` ``x_a - x_b <= c`` between binned numeric columns
  (or against a constant) makes a cell of bins impossible when the smallest
  ``x_a`` of its bin less the largest ``x_b`` of its bin exceeds ``c``; the
  outer bins are open (values clipped into them), and the missing level
  breaks no inequality.

Derived columns are dropped before the fit and make no cell impossible. A
rule on columns the encoder does not have as one attribute each (a constant
column, a date column) is skipped: the cells are only a help to the fit,
the rows are repaired afterwards all the same.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ._categorical import OTHER, FixedCombinations, Implies, StructuralZero
from ._inequality import Inequality

__all__ = ["impossible_cells"]

#: the most cells one rule's table may have to be mapped (its columns'
#: levels multiplied; larger tables are skipped: repaired after sampling)
MAX_RULE_CELLS = 100_000


def impossible_cells(rules, levels, bins=None):
    """``[(columns, mask)]``: each rule's impossible encoded cells.

    Parameters
    ----------
    rules : RuleSet or sequence of rules
    levels : dict
        ``{column: [values of level 0, values of level 1, ...]}`` for the
        categorical attributes: each level's list of the values it stands
        for (:data:`OTHER` for "any value not named").
    bins : dict, default=None
        ``{column: [(low, high) of level 0, ...]}`` for binned numeric
        attributes (``-inf``/``inf`` for open outer bins, ``None`` for a
        missing level).

    Returns
    -------
    list of (tuple of str, ndarray of bool)
        One entry per rule (per consequence column of an :class:`Implies`)
        that makes some cell impossible; masks of the columns' levels' shape.
    """
    bins = bins or {}
    rules = getattr(rules, "rules", rules)
    out = []
    for rule in rules:
        if isinstance(rule, Implies):
            for column, values in rule.consequence.items():
                part = Implies(rule.condition, {column: values})
                found = _categorical(part, levels)
                if found is not None:
                    out.append(found)
        elif isinstance(rule, (StructuralZero, FixedCombinations)):
            found = _categorical(rule, levels)
            if found is not None:
                out.append(found)
        elif isinstance(rule, Inequality):
            found = _inequality(rule, bins)
            if found is not None:
                out.append(found)
    return out


def _categorical(rule, levels):
    columns = tuple(rule.columns)
    if any(c not in levels for c in columns):
        return None
    shape = tuple(len(levels[c]) for c in columns)
    if int(np.prod(shape, dtype=float)) > MAX_RULE_CELLS:
        return None
    named = rule.named()
    reps = {}
    for c in columns:
        known = {_key(v) for values in levels[c] for v in values}
        reps[c] = [
            list(values)
            + (
                [v for v in named.get(c, ()) if _key(v) not in known]
                if any(v is OTHER for v in values)
                else []
            )
            for values in levels[c]
        ]
    mask = np.zeros(shape, dtype=bool)
    for cell in itertools.product(*(range(s) for s in shape)):
        combos = list(itertools.product(*(reps[c][k] for c, k in zip(columns, cell))))
        if not combos:
            continue
        frame = pd.DataFrame(combos, columns=list(columns), dtype=object)
        mask[cell] = bool(np.all(rule.broken(frame)))
    return (columns, mask) if mask.any() else None


def _inequality(rule, bins):
    a, b, c = rule.edge()
    columns = tuple(x for x in (a, b) if x is not None)
    if any(x not in bins for x in columns):
        return None

    def span(x, k, side):
        lohi = bins[x][k]
        if lohi is None:  # missing: breaks no inequality
            return np.nan
        return lohi[side]

    shape = tuple(len(bins[x]) for x in columns)
    mask = np.zeros(shape, dtype=bool)
    for cell in itertools.product(*(range(s) for s in shape)):
        at = dict(zip(columns, cell))
        low_a = 0.0 if a is None else span(a, at[a], 0)
        high_b = 0.0 if b is None else span(b, at[b], 1)
        with np.errstate(invalid="ignore"):
            mask[cell] = bool(low_a - high_b > c)
    if not mask.any():
        return None
    if len(columns) == 2 and columns[0] == columns[1]:  # pragma: no cover
        return None
    return columns, mask


def _key(v):
    if v is OTHER:
        return ("other",)
    try:
        if pd.isna(v):
            return ("missing",)
    except (TypeError, ValueError):
        pass
    return (type(v).__name__, v) if not isinstance(v, str) else ("str", v)
