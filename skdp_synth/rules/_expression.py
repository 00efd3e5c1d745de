"""A safe expression over columns: what a schema file's derived column may say.

``Expression("mage >= 35")`` is parsed once with :mod:`ast` and evaluated by
walking that tree over a DataFrame's columns; nothing is handed to ``eval``
or ``pandas.eval`` (whose ``@name`` and attribute access reach Python
objects). The vocabulary is closed:

* column names (Python identifiers) and constants (numbers, strings,
  ``True``/``False``);
* arithmetic ``+ - * / // % **`` and unary ``-``/``+``;
* comparisons ``== != < <= > >=`` (chained: ``18 <= age < 65``), and
  ``in``/``not in`` a list of constants;
* ``and``, ``or``, ``not``; ``A if condition else B``.

Anything else -- a call, an attribute, a subscript, a lambda, a name that is
not a column -- is refused when the expression is read, before any row is.
"""

from __future__ import annotations

import ast
import operator

import numpy as np
import pandas as pd

__all__ = ["Expression"]

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_ALLOWED = (
    "column names, numbers, strings, True/False, + - * / // % **, "
    "== != < <= > >=, in [...], and, or, not, A if condition else B"
)


class Expression:
    """A closed-vocabulary expression over columns, callable on a DataFrame.

    Parameters
    ----------
    text : str
        The expression, e.g. ``"mage >= 35"`` or ``"'premie' if weeks < 37
        else 'full term'"``.

    Raises
    ------
    ValueError
        The text is not a Python expression, or uses anything outside the
        vocabulary (named in the message).

    Examples
    --------
    >>> import pandas as pd
    >>> from skdp_synth.rules import Expression
    >>> e = Expression("'mature' if mage >= 35 else 'younger'")
    >>> e.names
    ('mage',)
    >>> e(pd.DataFrame({"mage": [20, 40]})).tolist()
    ['younger', 'mature']
    >>> Expression("__import__('os').system('ls')")
    Traceback (most recent call last):
    ...
    ValueError: ...a function call is not allowed...
    """

    def __init__(self, text):
        if not isinstance(text, str):
            raise TypeError(f"an expression is a string, not {type(text).__name__}")
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as exc:
            raise ValueError(f"{text!r} is not an expression ({exc.msg})") from None
        names = []
        for node in ast.walk(tree):
            _check_node(node, text)
            if isinstance(node, ast.Name) and node.id not in names:
                names.append(node.id)
        if not names:
            raise ValueError(f"{text!r} reads no column (a constant needs no rule)")
        self.text = text
        self.names = tuple(names)
        self._tree = tree

    def __call__(self, frame):
        """The expression's value on each row of ``frame`` (a Series or array)."""
        return _evaluate(self._tree.body, frame)

    def __repr__(self):
        return f"Expression({self.text!r})"

    def __eq__(self, other):
        return isinstance(other, Expression) and other.text == self.text

    def __hash__(self):
        return hash(("Expression", self.text))

    def __reduce__(self):
        return (Expression, (self.text,))


def _check_node(node, text):
    allowed = (
        ast.Expression,
        ast.Name,
        ast.Load,
        ast.Constant,
        ast.BinOp,
        ast.UnaryOp,
        ast.BoolOp,
        ast.Compare,
        ast.IfExp,
        ast.List,
        ast.Tuple,
        ast.And,
        ast.Or,
        ast.Not,
        ast.USub,
        ast.UAdd,
        ast.In,
        ast.NotIn,
        *_BINARY,
        *_COMPARE,
    )
    what = None
    if isinstance(node, ast.Call):
        what = "a function call"
    elif isinstance(node, ast.Attribute):
        what = "an attribute"
    elif isinstance(node, ast.Subscript):
        what = "a subscript"
    elif not isinstance(node, allowed):
        what = f"{type(node).__name__!r}"
    elif isinstance(node, ast.Constant) and not isinstance(
        node.value, (bool, int, float, str)
    ):
        what = f"the constant {node.value!r}"
    elif isinstance(node, ast.Name) and node.id.startswith("__"):
        what = f"the name {node.id!r}"
    elif isinstance(node, (ast.List, ast.Tuple)) and not all(
        isinstance(e, ast.Constant) for e in node.elts
    ):
        what = "a list of anything but constants"
    elif isinstance(node, ast.Compare):
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)) != isinstance(
                right, (ast.List, ast.Tuple)
            ):
                what = "'in' other than with a list of constants"
    if what is not None:
        raise ValueError(
            f"{text!r}: {what} is not allowed in a rule's expression; it may "
            f"use {_ALLOWED}"
        )


def _evaluate(node, frame):
    if isinstance(node, ast.Name):
        return frame[node.id]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts]
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, frame), _evaluate(node.right, frame)
        return _BINARY[type(node.op)](*_numbers(left, right))
    if isinstance(node, ast.UnaryOp):
        value = _evaluate(node.operand, frame)
        if isinstance(node.op, ast.Not):
            return ~_truth(value)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BoolOp):
        values = [_truth(_evaluate(v, frame)) for v in node.values]
        combine = operator.and_ if isinstance(node.op, ast.And) else operator.or_
        result = values[0]
        for value in values[1:]:
            result = combine(result, value)
        return result
    if isinstance(node, ast.Compare):
        left, result = _evaluate(node.left, frame), None
        for op, right_node in zip(node.ops, node.comparators):
            right = _evaluate(right_node, frame)
            if isinstance(op, (ast.In, ast.NotIn)):
                held = pd.Series(left).isin(right).to_numpy()
                held = ~held if isinstance(op, ast.NotIn) else held
            else:
                held = _truth(_COMPARE[type(op)](left, right))
            result = held if result is None else result & held
            left = right
        return result
    if isinstance(node, ast.IfExp):
        test = _truth(_evaluate(node.test, frame))
        body, orelse = _evaluate(node.body, frame), _evaluate(node.orelse, frame)
        values = np.where(test, _array(body), _array(orelse))
        return values.astype(object) if values.dtype.kind == "U" else values
    raise AssertionError(type(node).__name__)  # pragma: no cover - checked above


def _numbers(left, right):
    """Arithmetic is on numbers only (a string times a number would repeat
    it); constants as floats (a power of whole numbers cannot grow without
    bound: it overflows at once)."""
    for value in (left, right):
        dtype = getattr(value, "dtype", None)
        if isinstance(value, str) or (
            dtype is not None and not pd.api.types.is_numeric_dtype(dtype)
        ):
            raise ValueError("arithmetic in a rule's expression is on numbers only")
    if isinstance(left, int) and isinstance(right, int):
        return float(left), float(right)
    return left, right


def _truth(value):
    """A boolean array (a missing value is false, as a comparison with it)."""
    if isinstance(value, (bool, np.bool_)):
        return np.bool_(value)
    array = np.asarray(
        value.to_numpy(dtype=object) if hasattr(value, "to_numpy") else value
    )
    if array.dtype == bool:
        return array
    return np.array([not pd.isna(v) and bool(v) for v in array.ravel()]).reshape(
        array.shape
    )


def _array(value):
    return value.to_numpy() if hasattr(value, "to_numpy") else value
