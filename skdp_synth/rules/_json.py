"""Rules as plain JSON values, and back: the schema file's ``"rules"`` form.

A release file stores its pipeline's declared rules in the form a CLI schema
declares them (``doc/user_guide/rules.md``; ``skdp-synth`` ``--schema``)::

    {"derived": "mature", "expression": "mage >= 35"}
    {"inequality": ["tenure", "<=", "age"], "offset": -14}
    {"inequality": ["discharged", ">=", "admitted"], "offset": "P1D"}
    {"implies": [{"internet": "No"}, {"tv": "No internet service"}]}
    {"structural_zero": {"sex": "M", "pregnant": "yes"}}
    {"fixed_combinations": ["city", "state"], "combinations": [["Austin", "TX"]]}

:func:`rule_from_json` reads one entry as untrusted input: a derived
column's expression through :class:`~skdp_synth.rules.Expression` (a closed
vocabulary, never ``eval``), every value a JSON scalar, and anything else
refused with ``ValueError``. :func:`rule_to_json` is its inverse for the
rules that have a JSON form (not a :class:`Derived` of a Python function,
nor values JSON cannot hold, e.g. dates): those give ``None``.
"""

from __future__ import annotations

import math
import re
from numbers import Integral, Real

import numpy as np
import pandas as pd

from .._datetime import parse_duration
from ._categorical import FixedCombinations, Implies, StructuralZero
from ._derived import Derived
from ._expression import Expression
from ._inequality import Inequality, is_timedelta

__all__ = ["RULE_FORMS", "RULE_KEYS", "RuleFormError", "rule_from_json", "rule_to_json"]

#: each rule's key, and the other keys it takes
RULE_KEYS = {
    "derived": {"expression", "dtype"},
    "inequality": {"offset"},
    "implies": set(),
    "structural_zero": set(),
    "fixed_combinations": {"combinations"},
}
#: one example of each form, for error messages
RULE_FORMS = (
    '{"derived": "mature", "expression": "mage >= 35"}, '
    '{"inequality": ["tenure", "<=", "age"], "offset": -14}, '
    '{"implies": [{"internet": "No"}, {"tv": "No internet service"}]}, '
    '{"structural_zero": {"sex": "M", "pregnant": "yes"}} or '
    '{"fixed_combinations": ["city", "state"], "combinations": [["Austin", "TX"]]}'
)


class RuleFormError(ValueError):
    """A rule entry that is not one of the five forms; ``kind`` is the
    rule's key where the entry has one (``None``: not a rule mapping)."""

    def __init__(self, message, kind=None):
        super().__init__(message)
        self.kind = kind


def _scalar(v):
    """A JSON scalar for ``v`` or raise ``TypeError`` (no JSON form)."""
    if v is None or isinstance(v, (bool, np.bool_)):
        return None if v is None else bool(v)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, Integral):
        return int(v)
    if isinstance(v, Real):
        x = float(v)
        if math.isnan(x):
            return None  # a missing value (NaN and None alike)
        if not math.isfinite(x):
            raise TypeError("an infinite value has no JSON form")
        return x
    raise TypeError(f"a value of type {type(v).__name__} has no JSON form")


def _values(values):
    values = [_scalar(v) for v in values]
    return values[0] if len(values) == 1 else values


def _cell(cell):
    return {str(c): _values(v) for c, v in cell.items()}


def rule_to_json(rule):
    """``rule`` in the schema's ``"rules"`` form, or ``None`` when it has
    none (a derived column of a Python function; a value that is not a
    string, number, bool or missing; a column name that is not a string)."""
    try:
        if any(not isinstance(c, str) for c in rule.columns):
            return None
        if isinstance(rule, Derived):
            f = rule.function
            text = f.text if isinstance(f, Expression) else f
            if not isinstance(text, str):
                return None
            out = {"derived": rule.column, "expression": text}
            dtype = _dtype_text(rule.dtype)
            if dtype is not None:
                out["dtype"] = dtype
            return out
        if isinstance(rule, Inequality):
            out = {"inequality": [rule.left, rule.op, _scalar(rule.right)]}
            if is_timedelta(rule.offset):  # an ISO 8601 duration: "P1DT0H0M0S"
                out["offset"] = pd.Timedelta(rule.offset).isoformat()
            elif float(rule.offset) != 0.0:
                out["offset"] = float(rule.offset)
            return out
        if isinstance(rule, Implies):
            return {"implies": [_cell(rule.condition), _cell(rule.consequence)]}
        if isinstance(rule, StructuralZero):
            return {"structural_zero": _cell(rule.cell)}
        if isinstance(rule, FixedCombinations):
            return {
                "fixed_combinations": list(rule.column_names),
                "combinations": [[_scalar(v) for v in c] for c in rule.combinations],
            }
    except TypeError:
        return None
    return None


def _is_number(v):
    return (
        isinstance(v, (int, float))
        and not isinstance(v, bool)
        and math.isfinite(float(v))
    )


def _json_value(v, where):
    if v is None or isinstance(v, (bool, str)) or _is_number(v):
        return v
    raise ValueError(f"{where}: a value must be a string, number, bool or null")


def _json_cell(raw, where):
    if not isinstance(raw, dict):  # an empty one: the rule's own refusal
        raise ValueError(f"{where} must be a mapping {{column: value(s)}}")
    out = {}
    for column, value in raw.items():
        if not isinstance(column, str):
            raise ValueError(f"{where}: a column name must be a string")
        if isinstance(value, list):
            out[column] = [_json_value(v, where) for v in value]
        else:
            out[column] = _json_value(value, where)
    return out


def rule_from_json(entry):
    """One rule from its schema form (untrusted input: a CLI schema file's
    ``"rules"`` entry or a release file's ``plan["rules"]``).

    Raises
    ------
    RuleFormError
        Anything but one of the five forms (:data:`RULE_FORMS`) with JSON
        values; an expression outside :class:`~skdp_synth.rules.Expression`'s
        vocabulary; what the rule itself refuses. ``kind`` says which form.
    """
    kinds = sorted(set(entry) & set(RULE_KEYS)) if isinstance(entry, dict) else []
    if len(kinds) != 1:
        raise RuleFormError(
            f"a rule is a mapping with one of the keys {sorted(RULE_KEYS)}"
        )
    kind = kinds[0]
    extra = set(entry) - {kind} - RULE_KEYS[kind]
    if extra:
        raise RuleFormError(
            f"unknown keys {sorted(extra)}; allowed: "
            f"{sorted({kind} | RULE_KEYS[kind])}",
            kind,
        )
    try:
        return _rule(kind, entry[kind], entry)
    except (TypeError, ValueError) as exc:
        raise RuleFormError(str(exc), kind) from None


def _rule(kind, value, entry):
    if kind == "derived":
        text = entry.get("expression")
        if not isinstance(value, str) or not isinstance(text, str):
            raise ValueError(
                'give the column\'s name and its "expression", as '
                '{"derived": "mature", "expression": "mage >= 35"}'
            )
        expression = Expression(text)
        dtype = _dtype_of(entry["dtype"]) if "dtype" in entry else None
        return Derived(value, expression, inputs=expression.names, dtype=dtype)
    if kind == "inequality":
        if not (
            isinstance(value, list)
            and len(value) == 3
            and isinstance(value[0], str)
            and isinstance(value[1], str)
            and (isinstance(value[2], str) or _is_number(value[2]))
        ):
            raise ValueError(
                'give [column, "<=" or ">=", column or number], as '
                '["tenure", "<=", "age"]'
            )
        offset = entry.get("offset", 0.0)
        if isinstance(offset, str) and isinstance(value[2], str):
            offset = _duration(offset)
        elif not _is_number(offset):
            raise ValueError(
                '"offset" must be a finite number, or between two date or '
                'duration columns an ISO 8601 duration ("P1D")'
            )
        return Inequality(value[0], value[1], value[2], offset=offset)
    if kind == "implies":
        if not (isinstance(value, list) and len(value) == 2):
            raise ValueError(
                "give [condition, consequence], two mappings {column: "
                'value or [values]}, as [{"internet": "No"}, {"tv": "No '
                'internet service"}]'
            )
        return Implies(
            _json_cell(value[0], "its condition"),
            _json_cell(value[1], "its consequence"),
        )
    if kind == "structural_zero":
        return StructuralZero(_json_cell(value, "a structural zero"))
    combinations = entry.get("combinations")
    if not (
        isinstance(value, list)
        and all(isinstance(c, str) for c in value)
        and isinstance(combinations, list)
        and all(isinstance(c, list) for c in combinations)
    ):
        raise ValueError(
            'give the columns and their "combinations", as '
            '{"fixed_combinations": ["city", "state"], "combinations": '
            '[["Austin", "TX"], ["Boston", "MA"]]}'
        )
    combos = [tuple(_json_value(v, "a combination") for v in c) for c in combinations]
    return FixedCombinations(value, combos)


def ruleset_to_json(ruleset):
    """``(stored, left_out)``: ``{"rules": [...], "columns": [...] or None}``
    for the rules of ``ruleset`` that have a JSON form, and those that have
    none (:func:`rule_to_json`). ``columns``: the bound schema's column order
    (``None`` when unbound or when a name is not a string)."""
    stored, left_out = [], []
    for rule in ruleset.rules:
        entry = rule_to_json(rule)
        (left_out if entry is None else stored).append(rule if entry is None else entry)
    columns = ruleset.columns
    if columns is not None and not all(isinstance(c, str) for c in columns):
        columns = None
    return {"rules": stored, "columns": None if columns is None else list(columns)}, (
        left_out
    )


def ruleset_from_json(raw):
    """A :class:`~skdp_synth.rules.RuleSet` from :func:`ruleset_to_json`'s
    form (untrusted input: every rule through :func:`rule_from_json`, then
    the set's own checks). Raises ``ValueError`` naming the entry."""
    from ._ruleset import RuleSet

    if not (isinstance(raw, dict) and set(raw) == {"rules", "columns"}):
        raise ValueError('rules must be {"rules": [...], "columns": [...] or null}')
    entries, columns = raw["rules"], raw["columns"]
    if not isinstance(entries, list) or not entries:
        raise ValueError('"rules" must be a non-empty list')
    if columns is not None and not (
        isinstance(columns, list)
        and all(isinstance(c, str) for c in columns)
        and len(set(columns)) == len(columns)
    ):
        raise ValueError('"columns" must be distinct strings or null')
    rules = []
    for i, entry in enumerate(entries):
        try:
            rules.append(rule_from_json(entry))
        except ValueError as exc:
            raise ValueError(f"rules[{i}]: {exc}") from None
    try:
        return RuleSet(tuple(rules), columns=columns)
    except TypeError as exc:
        raise ValueError(str(exc)) from None


def _duration(text):
    """An ``"offset"`` given as text: an ISO 8601 duration ("P1D", "PT12H")
    or pandas' own form ("1 days"), refused without quoting anything else.
    Read by :func:`~skdp_synth._datetime.parse_duration`: pandas alone read
    "P1M" (a month) as a minute and "5" as five nanoseconds."""
    value = parse_duration(text)
    if value is None:
        raise ValueError(
            '"offset" must be a number, or between two date or duration columns '
            'a duration, ISO 8601 ("P1D", "PT12H"; no months or years: they '
            "have no fixed length)"
        )
    return value


#: A derived column's ``"dtype"``: a plain dtype name (``bool``, ``Int64``,
#: ``bool[pyarrow]``, ``string``), no zone, unit or parameter
_PLAIN_DTYPE = re.compile(r"[A-Za-z0-9_]{1,24}(\[pyarrow\])?")


def _dtype_text(dtype):
    """A derived column's dtype as the name pandas reads back, or ``None``
    (none, or one without a plain name: the computation's own is used)."""
    if dtype is None:
        return None
    text = str(dtype)
    if not _PLAIN_DTYPE.fullmatch(text):
        return None
    try:
        same = str(pd.api.types.pandas_dtype(text)) == text
    except (TypeError, ValueError, NotImplementedError):
        return None
    return text if same else None


def _dtype_of(text):
    """A ``"dtype"`` entry read back (untrusted: a plain name pandas knows)."""
    if not (isinstance(text, str) and _PLAIN_DTYPE.fullmatch(text)):
        raise ValueError('"dtype" must be a plain dtype name, as "bool" or "Int64"')
    try:
        return pd.api.types.pandas_dtype(text)
    except (TypeError, ValueError, NotImplementedError):
        raise ValueError('"dtype" must be a dtype pandas knows') from None
