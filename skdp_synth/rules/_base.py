"""What every rule is: named columns and a vectorized test of the rows that break it.

A rule is public knowledge about the schema (a definition, a law of the
domain), never a statistic of the private rows: rules are checked against
synthetic rows only, after sampling (post-processing, free in privacy).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import pandas as pd

__all__ = ["Rule", "as_values", "is_number"]


class Rule:
    """Base of the rules: ``columns`` read, ``broken(frame)`` tests rows.

    ``kind`` says how a broken row is repaired: ``"derived"`` (recomputed),
    ``"numeric"`` (projected to the boundary), ``"categorical"`` (the
    offending columns redrawn from the row's allowed combinations).
    """

    kind = ""

    @property
    def columns(self) -> tuple:
        """Every column the rule names, in the order it names them."""
        raise NotImplementedError

    def broken(self, frame: pd.DataFrame) -> np.ndarray:
        """Boolean mask: the rows of ``frame`` that break the rule.

        A missing value breaks no inequality (it is compared with nothing);
        for a categorical rule it is a level of its own, equal to no named
        value.
        """
        raise NotImplementedError


def is_number(value) -> bool:
    """A real constant (not a column name, not a bool)."""
    return isinstance(value, (Real, np.number)) and not isinstance(
        value, (bool, np.bool_)
    )


def as_values(value) -> tuple:
    """A named value or a list of them, as a tuple (a string is one value)."""
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray, pd.Index)):
        values = tuple(value)
        if not values:
            raise ValueError("an empty list of values matches no row")
        return values
    return (value,)
