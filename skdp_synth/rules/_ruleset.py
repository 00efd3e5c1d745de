"""The rules of one table, checked together and held together.

:class:`RuleSet` validates a list of rules once (unknown columns, a rule on a
derived column, derived columns in a cycle, contradictions) and applies them
to synthetic rows in a fixed order: inequalities (projection), categorical
groups (redraw), then the derived columns (recomputed from the repaired
rows). Each stage touches columns no other stage touches, so every row
leaves keeping every rule.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._datetime import is_date_dtype, is_duration_dtype
from ._base import Rule
from ._categorical import OTHER, allowed_combinations, repair_group
from ._inequality import DifferenceNetwork, is_timedelta, repair_inequalities

__all__ = ["RULES_SPAWN_KEY", "RuleSet", "rules_seed"]

#: The spawn key under which ``sample(random_state=...)`` derives the seed
#: of the rules' redraws (a stream apart from the draw's and the decoders').
RULES_SPAWN_KEY = 0x7E1E5


def rules_seed(random_state):
    """The rules' seed from ``sample``'s ``random_state``: ``None`` stays
    ``None`` (fresh entropy); an int seeds a ``SeedSequence`` child; a
    Generator or RandomState gives one integer of entropy (and advances)."""
    if random_state is None:
        return None
    if isinstance(random_state, (int, np.integer)):
        entropy = int(random_state)
    elif isinstance(random_state, np.random.RandomState):
        entropy = int(random_state.randint(0, 2**31 - 1))
    else:
        entropy = int(np.random.default_rng(random_state).integers(0, 2**63 - 1))
    return np.random.SeedSequence(entropy, spawn_key=(RULES_SPAWN_KEY,))


@dataclass(frozen=True)
class RuleSet:
    """Rules that every synthetic row keeps: validated together, applied together.

    Rules are public knowledge about the schema, never checked against the
    private rows: a rule the real data breaks is not detected (that would
    leak), and the synthetic rows keep it all the same (the repair moves
    them onto it).

    Parameters
    ----------
    rules : sequence of rules
        :class:`Derived`, :class:`Inequality`, :class:`Implies`,
        :class:`StructuralZero`, :class:`FixedCombinations`.
    columns : sequence of str, default=None
        The table's columns, in order (its schema, public): when given, a
        rule naming another column is refused, and :meth:`enforce` returns
        the columns in this order (derived columns where they stand, or
        after the others).

    Raises
    ------
    ValueError
        A rule naming an unknown column, a rule other than ``Derived``
        naming a derived column, a column defined twice or in a cycle of
        derived columns, a column under both inequalities and categorical
        rules, or rules that no row can keep together (``x <= y``, ``y <=
        x - 1``; an implication whose consequence is a structural zero).

    Examples
    --------
    >>> import pandas as pd
    >>> from skdp_synth.rules import Derived, Inequality, RuleSet
    >>> rules = RuleSet([Derived("mature", "mage >= 35"),
    ...                  Inequality("weeks", "<=", 45)])
    >>> rows = pd.DataFrame({"mage": [20, 40], "weeks": [39, 50]})
    >>> rules.enforce(rows, random_state=0)
       mage  weeks  mature
    0    20     39   False
    1    40     45    True
    """

    rules: tuple
    columns: tuple | None = field(default=None)

    def __post_init__(self):
        rules = tuple(
            self.rules.rules if isinstance(self.rules, RuleSet) else self.rules
        )
        for rule in rules:
            if not isinstance(rule, Rule):
                raise TypeError(
                    f"{rule!r} is not a rule (Derived, Inequality, Implies, "
                    "StructuralZero, FixedCombinations)"
                )
        object.__setattr__(self, "rules", rules)
        if self.columns is not None:
            object.__setattr__(self, "columns", tuple(self.columns))
        self._check_derived()
        self._check_kinds()
        if self.columns is not None:
            self._check_known()
        self._check_numeric()
        self._check_categorical()

    # -- the pieces
    @property
    def derived(self) -> tuple:
        """The derived rules, in an order where each comes after its inputs."""
        pending, order, done = list(self._of("derived")), [], set()
        names = {r.column for r in pending}
        while pending:
            ready = [r for r in pending if set(r.inputs) & names <= done]
            if not ready:
                raise ValueError(
                    "the derived columns "
                    f"{sorted(str(r.column) for r in pending)} depend on one "
                    "another in a cycle"
                )
            order.append(ready[0])
            done.add(ready[0].column)
            pending.remove(ready[0])
        return tuple(order)

    @property
    def derived_columns(self) -> tuple:
        """The columns dropped before the fit and computed after sampling."""
        return tuple(r.column for r in self._of("derived"))

    def _of(self, kind):
        return [r for r in self.rules if r.kind == kind]

    # -- validation (the rules and the schema only)
    def _check_derived(self):
        seen = set()
        for rule in self._of("derived"):
            if rule.column in seen:
                raise ValueError(f"the derived column {rule.column!r} is defined twice")
            seen.add(rule.column)
        self.derived  # noqa: B018 -- raises on a cycle

    def _check_kinds(self):
        derived = set(self.derived_columns)
        numeric, categorical = set(), set()
        for rule in self.rules:
            if rule.kind == "derived":
                continue
            on_derived = [c for c in rule.columns if c in derived]
            if on_derived:
                raise ValueError(
                    f"{rule!r} names the derived column {on_derived[0]!r}, "
                    "which is recomputed after every repair: declare the rule "
                    "on the columns it is derived from"
                )
            (numeric if rule.kind == "numeric" else categorical).update(rule.columns)
        both = numeric & categorical
        if both:
            raise ValueError(
                f"column {sorted(map(str, both))[0]!r} is under both an "
                "Inequality and a categorical rule: one column, one kind of rule"
            )

    def _check_known(self):
        known = set(self.columns) | set(self.derived_columns)
        for rule in self.rules:
            unknown = [c for c in rule.columns if c not in known]
            if unknown:
                raise ValueError(
                    f"{rule!r} names the column {unknown[0]!r}, which is not a "
                    f"column of the table ({list(self.columns)[:20]})"
                )

    def _check_numeric(self, integer=()):
        inequalities = self._of("numeric")
        if not inequalities:
            return
        bad = DifferenceNetwork(inequalities, integer).contradiction()
        if bad:
            whole = " (whole numbers)" if integer else ""
            raise ValueError(
                "the inequalities on columns "
                f"{[c for c in bad if c != '<constant>']}{whole} contradict "
                "one another: no row can keep them all"
            )

    def _check_categorical(self, dtypes=None):
        for rules, columns in self._groups():
            domains = {}
            for c in columns:
                levels = []
                for rule in rules:
                    levels += [v for v in rule.named().get(c, ()) if v not in levels]
                dtype = None if dtypes is None else dtypes.get(c)
                if isinstance(dtype, pd.CategoricalDtype):
                    levels = list(dtype.categories)  # the declared levels
                else:
                    levels.append(OTHER)
                domains[c] = levels
            if allowed_combinations(rules, columns, domains).empty:
                raise ValueError(
                    f"the rules {[repr(r) for r in rules]} contradict one "
                    f"another: no combination of {list(columns)} keeps them all"
                )

    def check_schema(self, X) -> RuleSet:
        """This rule set bound to ``X``'s columns, checked against their
        names and dtypes (public; no value of ``X`` is read).

        Raises
        ------
        TypeError
            ``X`` without named columns, or an inequality on a column that
            is not numeric.
        ValueError
            As the class (a rule naming a column ``X`` lacks, ...).
        """
        if not (hasattr(X, "columns") and hasattr(X, "dtypes")):
            raise TypeError(
                f"rules name columns: pass a pandas DataFrame, got {type(X).__name__}"
            )
        dtypes = dict(X.dtypes.items())
        bound = RuleSet(
            tuple(_with_dtype(rule, dtypes) for rule in self.rules),
            columns=tuple(X.columns),
        )
        for rule in bound._of("numeric"):
            _check_inequality_kinds(rule, dtypes)
        bound._check_numeric(
            [c for c, t in dtypes.items() if pd.api.types.is_integer_dtype(t)]
        )
        bound._check_categorical(dtypes)
        return bound

    def _groups(self):
        """``[(rules, columns)]``: the categorical rules, grouped by the
        columns they tie together (connected components)."""
        groups = []
        for rule in self._of("categorical"):
            cols = set(rule.columns)
            merged = [g for g in groups if g[1] & cols]
            rules = [rule]
            for g in merged:
                groups.remove(g)
                rules = g[0] + rules
                cols |= g[1]
            groups.append((rules, cols))
        out = []
        for rules, _ in groups:
            order = []
            for rule in rules:
                order += [c for c in rule.columns if c not in order]
            out.append((rules, tuple(order)))
        return out

    # -- applied to rows
    def drop_derived(self, X):
        """``X`` without the derived columns it holds (before any fit)."""
        present = [c for c in self.derived_columns if c in X.columns]
        return X.drop(columns=present) if present else X

    def broken(self, X) -> pd.DataFrame:
        """One boolean column per rule (named by its ``repr``): the rows of
        ``X`` that break it. ``.mean()`` gives each rule's share of broken
        rows. Not private when ``X`` is the real table."""
        return pd.DataFrame(
            {repr(rule): rule.broken(X) for rule in self.rules}, index=X.index
        )

    def enforce(self, X, random_state=None):
        """``X`` (synthetic rows) repaired so that every row keeps every rule.

        Inequalities: each broken value projected to its boundary (its
        ``left`` column moved), rows that keep them untouched. Categorical
        rules: a broken row's columns redrawn from the nearest allowed
        combinations, weighted by the rule-keeping rows. Derived columns:
        recomputed (added when absent). Post-processing of rows that are
        already released; ``random_state`` seeds the redraws.

        Returns
        -------
        X_repaired : DataFrame
            A copy, in ``columns`` order when the set is bound to a schema.
        """
        if not (hasattr(X, "columns") and hasattr(X, "dtypes")):
            raise TypeError(f"rules apply to a DataFrame, got {type(X).__name__}")
        rng = _generator(random_state)
        out = X.copy()
        inequalities = self._of("numeric")
        if inequalities:
            integer = [
                c
                for r in inequalities
                for c in r.columns
                if pd.api.types.is_integer_dtype(out[c].dtype)
            ]
            out = repair_inequalities(out, inequalities, integer)
        for rules, columns in self._groups():
            out = repair_group(out, rules, columns, rng)
        for rule in self.derived:
            out[rule.column] = rule.column_values(out)
        if self.columns is not None:
            order = [c for c in self.columns if c in out.columns]
            order += [c for c in out.columns if c not in order]
            out = out[order]
        return out


def _with_dtype(rule, dtypes):
    """A derived rule bound to its column's dtype in the table (public: the
    schema), unless it has one, or the column is categorical (its
    categories may be the data's) or ``object``: other rules as they are."""
    if rule.kind != "derived" or rule.dtype is not None:
        return rule
    dtype = dtypes.get(rule.column)
    if dtype is None or isinstance(dtype, pd.CategoricalDtype):
        return rule
    if pd.api.types.is_object_dtype(dtype):
        return rule
    return dataclasses.replace(rule, dtype=dtype)


def _value_kind(dtype):
    """``"number"``, ``"date"``, ``"duration"`` or ``None`` (no inequality
    compares it): what an inequality's column holds."""
    if is_duration_dtype(dtype):
        return "duration"
    if is_date_dtype(dtype):
        return "date"
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        return "number"
    return None


def _check_inequality_kinds(rule, dtypes):
    """An inequality compares numbers with numbers (a number offset or
    constant), or two date or two duration columns (a timedelta offset, no
    constant: such a column's bounds are the encoder's ``bounds=``)."""
    kinds = {}
    for c in rule.columns:
        dtype = dtypes.get(c)
        if dtype is None:
            continue
        kinds[c] = _value_kind(dtype)
        if kinds[c] is None:
            raise TypeError(
                f"{rule!r}: column {c!r} is {dtype}, not numeric, a date or a duration"
            )
    found = set(kinds.values())
    if len(found) > 1:
        raise TypeError(
            f"{rule!r}: columns {list(kinds)} hold {sorted(found)}: an inequality "
            "compares numbers with numbers, dates with dates, durations with durations"
        )
    timed = found & {"date", "duration"}
    if timed and len(rule.columns) == 1:
        raise TypeError(
            f"{rule!r}: a date or duration column is bounded by a constant through "
            "the encoder's bounds= (public bounds), not by a rule"
        )
    if timed and rule.offset_value != 0.0 and not is_timedelta(rule.offset):
        raise TypeError(
            f"{rule!r}: between dates or durations give the offset as a "
            "pd.Timedelta (offset=pd.Timedelta('1D'))"
        )
    if found == {"number"} and is_timedelta(rule.offset):
        raise TypeError(f"{rule!r}: a timedelta offset compares dates or durations")


def _generator(random_state):
    """A NumPy Generator from ``None`` (fresh OS entropy), an int, a
    ``SeedSequence``, a ``Generator`` (used as it is) or a ``RandomState``
    (one integer drawn from it)."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(int(random_state.randint(0, 2**31 - 1)))
    return np.random.default_rng(random_state)
