"""Declared rules that every synthetic row keeps.

Public knowledge about a table's schema -- a column defined from others, an
inequality, an implication between categorical columns, an impossible cell
-- given to a :class:`~skdp_synth.SynthesisPipeline` as ``rules=[...]``:
derived columns are dropped before the fit (no budget is spent on them) and
recomputed after sampling; every other rule is held by repairing the
sampled rows (post-processing, free in privacy). :class:`Expression` is the
closed-vocabulary expression a schema file's derived column is read with. See
``doc/user_guide/rules.md``.
"""

from ._base import Rule
from ._categorical import OTHER, FixedCombinations, Implies, StructuralZero
from ._derived import Derived
from ._expression import Expression
from ._inequality import Inequality
from ._json import (
    RULE_FORMS,
    RULE_KEYS,
    RuleFormError,
    rule_from_json,
    rule_to_json,
    ruleset_from_json,
    ruleset_to_json,
)
from ._ruleset import RULES_SPAWN_KEY, RuleSet, rules_seed
from ._zeros import impossible_cells

__all__ = [
    "RULE_FORMS",
    "RULE_KEYS",
    "RuleFormError",
    "Derived",
    "Expression",
    "FixedCombinations",
    "Implies",
    "Inequality",
    "OTHER",
    "RULES_SPAWN_KEY",
    "Rule",
    "RuleSet",
    "StructuralZero",
    "impossible_cells",
    "rule_from_json",
    "rule_to_json",
    "rules_seed",
    "ruleset_from_json",
    "ruleset_to_json",
]
