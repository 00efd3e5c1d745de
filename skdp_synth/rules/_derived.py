"""A derived column: a deterministic function of other columns.

``Derived("mature", "mage >= 35")`` is dropped from the table before the
pipeline's first step sees it and recomputed on every sampled row: no budget
is spent on it, the fit is the fit of the table without it, and every
synthetic row holds the definition exactly.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._base import Rule

__all__ = ["Derived"]


@dataclass(frozen=True)
class Derived(Rule):
    """A column computed from other columns, never fitted.

    Parameters
    ----------
    column : str
        The derived column's name.
    function : str or callable
        A ``pandas.DataFrame.eval`` expression over column names
        (``"mage >= 35"``), or a function of a DataFrame holding the
        ``inputs`` columns returning one value per row
        (``lambda df: np.where(df["mage"] >= 35, "mature mom", "younger
        mom")``). Deterministic: the same rows give the same values.
    inputs : sequence of str, default=None
        The columns the function reads (it is given those alone). Read from
        the expression's names for a string; required for a callable.
    dtype : dtype, default=None
        The dtype the computed column is given where the cast keeps every
        value (``None``: the computation's own). A pipeline binds it to the
        table's column (``RuleSet.check_schema``), so that a
        ``bool[pyarrow]`` or ``boolean`` column does not come back as
        NumPy's ``bool``; a categorical or ``object`` column keeps the
        computation's values (its categories may be the data's).

    Examples
    --------
    >>> import pandas as pd
    >>> from skdp_synth.rules import Derived
    >>> rule = Derived("mature", "mage >= 35")
    >>> rule.inputs
    ('mage',)
    >>> rule.compute(pd.DataFrame({"mage": [20, 40]})).tolist()
    [False, True]
    """

    column: str
    function: str | Callable
    inputs: tuple | None = field(default=None)
    # out of the repr: a bound rule reads as the rule the user wrote (its
    # repr names its column in RuleSet.broken)
    dtype: object = field(default=None, repr=False)

    kind = "derived"

    def __post_init__(self):
        if isinstance(self.function, str):
            inputs = self.inputs
            if inputs is None:
                inputs = _expression_names(self.function)
        elif callable(self.function):
            if self.inputs is None:
                raise ValueError(
                    f"Derived({self.column!r}): a function needs inputs=, the "
                    "columns it reads (it is given those alone)"
                )
            inputs = self.inputs
        else:
            raise TypeError(
                f"Derived({self.column!r}): function must be an expression "
                f"string or a callable, got {type(self.function).__name__}"
            )
        inputs = (inputs,) if isinstance(inputs, str) else tuple(inputs)
        if self.column in inputs:
            raise ValueError(f"Derived({self.column!r}) reads its own column")
        object.__setattr__(self, "inputs", inputs)

    @property
    def columns(self) -> tuple:
        return (*self.inputs, self.column)

    def compute(self, frame: pd.DataFrame) -> np.ndarray:
        """The derived column's values for the rows of ``frame``."""
        inputs = frame[list(self.inputs)]
        if isinstance(self.function, str):
            values = inputs.eval(self.function)
        else:
            values = self.function(inputs)
        values = values.to_numpy() if hasattr(values, "to_numpy") else values
        values = np.asarray(values)
        if values.ndim == 0:
            values = np.full(len(frame), values[()])
        if values.shape != (len(frame),):
            raise ValueError(
                f"Derived({self.column!r}) gave {values.shape} values for "
                f"{len(frame)} rows: one value per row is needed"
            )
        return values

    def column_values(self, frame: pd.DataFrame):
        """The derived column for the rows of ``frame``, in the rule's
        ``dtype`` where the cast keeps every value (else as computed)."""
        values = pd.Series(self.compute(frame), index=frame.index)
        if self.dtype is None:
            return values
        try:
            cast = values.astype(self.dtype)
        except (TypeError, ValueError, OverflowError):
            return values
        same = cast.isna().equals(values.isna())
        if same and (cast.dropna() == values.dropna()).all():
            return cast
        return values

    def broken(self, frame: pd.DataFrame) -> np.ndarray:
        expected = pd.Series(self.compute(frame), index=frame.index)
        actual = frame[self.column]
        both_missing = expected.isna().to_numpy() & actual.isna().to_numpy()
        same = (expected == actual).to_numpy(dtype=bool, na_value=False)
        return ~(same | both_missing)


def _expression_names(expression):
    """The names a ``DataFrame.eval`` expression reads (``ast``: column
    names that are Python identifiers; other columns need ``inputs=``)."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ValueError(
            f"cannot read the columns of {expression!r} ({exc.msg}); pass "
            "inputs=[...] (a column name with spaces is written `like this` "
            "and needs inputs=)"
        ) from None
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in names:
            names.append(node.id)
    return tuple(names)
