"""The report's verdict: alerts on what the synthetic rows got wrong, and the
references its overall score is read against.

**A report reads the real data: it is not private.**

:func:`alerts` compares every column of the real and the synthetic rows on
plain facts a user checks first -- the range and spread of a numeric
column, the share of missing cells, the levels a release folded into a
catch-all -- and a model's score against the trivial baseline. Each alert is
an :class:`Alert`; the thresholds are the module constants below.

:func:`independent_columns` draws the first reference: columns drawn
independently from the real 1-way tables, what a synthesizer that learned
each column and no relation between them would give.

:func:`check_rules` tests the declared rules (:mod:`skdp_synth.rules`) on
the synthetic rows: a rule some of them break is an alert
(``"rule_broken"``), with the share of synthetic rows breaking it. The
share of real rows breaking it is given beside, as information about the
data (the report reads the real rows for its scores anyway), never as an
alert.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

__all__ = [
    "Alert",
    "Reference",
    "RuleCheck",
    "alerts",
    "check_rules",
    "independent_columns",
]

#: A numeric column is *collapsed* when the synthetic values' central range
#: (the 1st to the 99th percentile) is narrower than this share of the real
#: values' central range.
COLLAPSED_RANGE = 0.5
#: A numeric column is *shifted* when the synthetic median is further from
#: the real median than this share of the real central range.
SHIFTED_RANGE = 0.25
#: The central range: between these percentiles (ignores a few outliers).
RANGE_PERCENTILES = (1.0, 99.0)
#: The synthetic / real standard deviation ratio alerted outside these.
STD_RATIO = (0.5, 2.0)
#: Missing cells are *lost* (or *invented*) when the synthetic share of
#: missing cells in a column is below (above) the real share by more than
#: this (an absolute difference of shares: 0.02 = 2 percentage points).
MISSING_SHARE = 0.02
#: Levels are *lost* when real levels absent from the synthetic rows (or
#: given as the release's catch-all, "other") hold at least this share of
#: the real rows.
LOST_LEVELS_SHARE = 0.02
#: A model's score at or below this is no better than the trivial model:
#: predicting the mean (R² 0) or ranking at random (AUC 0.5).
TRIVIAL_SCORE = {"r2": 0.0, "auc": 0.5, "auc-ovr": 0.5}
#: The seed of the independent-columns reference (the same rows every time).
REFERENCE_SEED = 0


@dataclass(frozen=True)
class Alert:
    """One thing the synthetic rows got wrong, computed from both tables.

    Attributes
    ----------
    column : str
        The column (for a model alert: the target).
    kind : str
        ``"range_collapsed"``, ``"range_shifted"``, ``"std_ratio"``,
        ``"missing_lost"``, ``"missing_invented"``, ``"levels_lost"``,
        ``"rule_broken"`` or ``"model_below_baseline"``.
    message : str
        The alert in plain words, with its numbers.
    evidence : mapping
        The numbers it was decided on (real and synthetic values and the
        threshold), JSON-ready.
    """

    column: str
    kind: str
    message: str
    evidence: MappingProxyType = field(
        default_factory=lambda: MappingProxyType({}), compare=False
    )

    def to_dict(self) -> dict:
        return {
            "column": self.column,
            "kind": self.kind,
            "message": self.message,
            "evidence": dict(self.evidence),
        }


@dataclass(frozen=True)
class Reference:
    """An overall score to read the synthetic rows' score against.

    ``name`` is ``"independent columns"`` (each column drawn from the real
    1-way table, no relation between columns kept) or ``"real rows"`` (a
    second real sample: the score of sampling noise alone, the floor of
    what a synthesizer can be expected to reach). ``properties`` holds the
    property scores, as ``FidelityReport.properties``. ``drawn_from`` says
    which real rows its ``n_rows`` rows come from, ``scored_on`` which
    ``n_scored`` real rows they are scored against: disjoint rows wherever
    the real rows were held out, so that no reference scores rows it was
    drawn from.
    """

    name: str
    score: float
    properties: MappingProxyType
    n_rows: int
    description: str
    drawn_from: str = ""
    scored_on: str = ""
    n_scored: int | None = None

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "score": self.score,
            "properties": dict(self.properties),
            "n_rows": self.n_rows,
            "description": self.description,
            "drawn_from": self.drawn_from,
            "scored_on": self.scored_on,
            "n_scored": self.n_scored,
        }


@dataclass(frozen=True)
class RuleCheck:
    """One declared rule tested on the synthetic and the real rows.

    ``rule`` is the rule as written (:func:`rule_text`), ``columns`` the
    columns it names; ``synthetic_broken`` the share of synthetic rows
    breaking it (``None`` when the rows lack a column it names), and
    ``real_broken`` the share of real rows breaking it: information about
    the data (a rule the real rows break is no fault of the synthesizer),
    ``None`` when not computed.
    """

    rule: str
    columns: tuple
    synthetic_broken: float | None
    real_broken: float | None
    note: str = ""

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "columns": list(self.columns),
            "synthetic_broken": self.synthetic_broken,
            "real_broken": self.real_broken,
            "note": self.note,
        }


def rule_text(rule) -> str:
    """A rule as a user wrote it: ``weeks <= 45``, ``mature = mage >= 35``,
    else its ``repr``."""
    from ..rules import Derived, Inequality
    from ..rules._base import is_number

    if isinstance(rule, Inequality):
        right = f"{rule.right:g}" if is_number(rule.right) else str(rule.right)
        if rule.offset:
            sign = "+" if rule.offset > 0 else "-"
            right += f" {sign} {abs(rule.offset):g}"
        return f"{rule.left} {rule.op} {right}"
    if isinstance(rule, Derived):
        # an expression string, or a schema file's Expression (its text)
        text = rule.function if isinstance(rule.function, str) else None
        text = getattr(rule.function, "text", text)
        if isinstance(text, str):
            return f"{rule.column} = {text}"
    return repr(rule)


def _rule_list(rules):
    """``rules`` (a RuleSet, a list of rules, or ``None``) as a tuple."""
    from ..rules import Rule, RuleSet

    if rules is None:
        return ()
    if isinstance(rules, RuleSet):
        return tuple(rules.rules)
    if isinstance(rules, Rule):
        return (rules,)
    out = tuple(rules)
    for rule in out:
        if not isinstance(rule, Rule):
            raise TypeError(
                f"rules must be rules of skdp_synth.rules (Derived, Inequality, "
                f"Implies, StructuralZero, FixedCombinations) or a RuleSet, got "
                f"{type(rule).__name__}"
            )
    return out


def _broken_share(rule, frame):
    """The share of ``frame``'s rows breaking ``rule`` (``None`` when a
    column it names is absent). A derived column read from a file as the
    text ``"True"``/``"False"`` is compared as the Booleans it spells."""
    from ..rules import Derived

    if any(c not in frame.columns for c in rule.columns):
        return None
    if not len(frame):
        return 0.0
    if isinstance(rule, Derived):
        col = frame[rule.column]
        spelled = col.dropna().astype(str)
        if col.dtype == object and spelled.isin(["True", "False"]).all():
            frame = frame.assign(**{rule.column: col.map(_TRUTH)})
    return float(np.mean(rule.broken(frame)))


_TRUTH = {"True": True, "False": False, True: True, False: False}


def check_rules(rules, real, synthetic):
    """A :class:`RuleCheck` of every rule, in the order given: the share of
    synthetic rows breaking it, and of real rows (information)."""
    out = []
    for rule in _rule_list(rules):
        syn, rea = _broken_share(rule, synthetic), _broken_share(rule, real)
        lacking = [c for c in rule.columns if c not in synthetic.columns]
        note = (
            f"not checked: the synthetic rows have no column {lacking}"
            if lacking
            else ""
        )
        out.append(RuleCheck(rule_text(rule), tuple(rule.columns), syn, rea, note))
    return tuple(out)


def _rule_alerts(checks, rules):
    """A ``"rule_broken"`` alert for every rule some synthetic rows break."""
    out = []
    for check, rule in zip(checks, _rule_list(rules), strict=True):
        share = check.synthetic_broken
        if share is None or share <= 0:
            continue
        column = getattr(rule, "left", None) or getattr(rule, "column", None)
        column = str(column if column is not None else rule.columns[0])
        real = (
            ""
            if check.real_broken is None
            else f"; for information: {100 * check.real_broken:.1f} % of the "
            "real rows break it (a rule the real rows break is no fault of "
            "the synthesizer)"
        )
        out.append(
            Alert(
                column,
                "rule_broken",
                f"declared rule {check.rule}: broken by {100 * share:.1f} % of "
                f"the synthetic rows{real}",
                MappingProxyType(
                    {
                        "rule": check.rule,
                        "columns": list(check.columns),
                        "synthetic_broken": share,
                        "real_broken": check.real_broken,
                    }
                ),
            )
        )
    return out


def independent_columns(real, n_rows, seed=REFERENCE_SEED):
    """``n_rows`` rows, each column drawn with replacement from the real
    column on its own: a sample of the product of the real 1-way tables
    (missing cells included), with a fixed seed."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            c: real[c].iloc[rng.integers(0, len(real), n_rows)].to_numpy()
            for c in real.columns
        },
        columns=real.columns,
    ).astype(real.dtypes.to_dict())


def _numbers(values):
    """The column as floats (``None`` when a cell is not a number)."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(values):
        return None
    out = pd.to_numeric(values, errors="coerce")
    if (out.isna() & values.notna()).any():
        return None
    return out.dropna().to_numpy(dtype=float)


def _numeric_columns(real, synthetic, schema):
    """``{column: (real floats, synthetic floats)}`` of the numeric columns
    (not declared as categories, not Boolean, every synthetic cell a number)."""
    import pandas as pd

    declared = {*(schema.get("categories") or {}), *(schema.get("ordinal") or {})}
    out = {}
    for col in real.columns:
        if col in declared or not pd.api.types.is_numeric_dtype(real[col]):
            continue
        x, y = _numbers(real[col]), _numbers(synthetic[col])
        if x is not None and y is not None and x.size > 1 and y.size > 1:
            out[str(col)] = (x, y)
    return out


def _range_alerts(col, x, y):
    out = []
    lo, hi = RANGE_PERCENTILES
    rl, rh = np.percentile(x, [lo, hi])
    sl, sh = np.percentile(y, [lo, hi])
    span = rh - rl
    if span <= 0:
        return out
    evidence = {
        "real_range": [float(rl), float(rh)],
        "synthetic_range": [float(sl), float(sh)],
        "percentiles": list(RANGE_PERCENTILES),
    }
    if (sh - sl) < COLLAPSED_RANGE * span:
        out.append(
            Alert(
                col,
                "range_collapsed",
                f"{col}: the synthetic values are collapsed: they span "
                f"{sl:.4g} to {sh:.4g}, the real ones {rl:.4g} to {rh:.4g} "
                f"({100 * (sh - sl) / span:.0f} % of the real range; alerted "
                f"below {100 * COLLAPSED_RANGE:.0f} %; ranges between the percentiles "
                f"{lo:g} and {hi:g})",
                MappingProxyType({**evidence, "threshold": COLLAPSED_RANGE}),
            )
        )
    mr, ms = float(np.median(x)), float(np.median(y))
    if abs(ms - mr) > SHIFTED_RANGE * span:
        out.append(
            Alert(
                col,
                "range_shifted",
                f"{col}: the synthetic values are shifted: median {ms:.4g} "
                f"against the real {mr:.4g}, {abs(ms - mr) / span:.2f} of the "
                f"real range {rl:.4g} to {rh:.4g} (alerted above "
                f"{SHIFTED_RANGE:g})",
                MappingProxyType(
                    {
                        **evidence,
                        "real_median": mr,
                        "synthetic_median": ms,
                        "threshold": SHIFTED_RANGE,
                    }
                ),
            )
        )
    return out


def _std_alert(col, x, y):
    sx, sy = float(np.std(x)), float(np.std(y))
    if sx <= 0:
        return []
    ratio = sy / sx
    low, high = STD_RATIO
    if low <= ratio <= high:
        return []
    what = "too narrow" if ratio < low else "too wide"
    return [
        Alert(
            col,
            "std_ratio",
            f"{col}: the synthetic spread is {what}: standard deviation "
            f"{sy:.4g} against the real {sx:.4g} (ratio {ratio:.2f}, alerted "
            f"outside [{low:g}, {high:g}])",
            MappingProxyType(
                {
                    "real_std": sx,
                    "synthetic_std": sy,
                    "ratio": ratio,
                    "threshold": list(STD_RATIO),
                }
            ),
        )
    ]


def _missing_alerts(real, synthetic):
    out = []
    for col in real.columns:
        a, b = float(real[col].isna().mean()), float(synthetic[col].isna().mean())
        if abs(b - a) <= MISSING_SHARE:
            continue
        lost = b < a
        out.append(
            Alert(
                str(col),
                "missing_lost" if lost else "missing_invented",
                f"{col}: missing cells are {'lost' if lost else 'invented'}: "
                f"{100 * b:.1f} % of the synthetic rows against "
                f"{100 * a:.1f} % of the real ones (alerted beyond "
                f"{100 * MISSING_SHARE:g} percentage points)",
                MappingProxyType(
                    {
                        "real_missing": a,
                        "synthetic_missing": b,
                        "threshold": MISSING_SHARE,
                    }
                ),
            )
        )
    return out


def _level_alerts(real, synthetic, numeric, folds):
    from .._datetime import is_time_dtype

    out = []
    for col in real.columns:
        if str(col) in numeric or is_time_dtype(real[col].dtype):
            continue
        x, y = real[col].dropna(), synthetic[col].dropna()
        if x.empty:
            continue
        kept, other = folds.get(col, (None, None))
        seen = set(y.astype(object).unique())
        if kept is not None:
            gone = ~x.astype(object).isin(kept)
        else:
            gone = ~x.astype(object).isin(seen)
        share = float(gone.mean()) * len(x) / len(real)
        if share < LOST_LEVELS_SHARE:
            continue
        invented = sorted(map(str, seen - set(x.astype(object).unique())))
        if other is None and invented:
            other = invented[0] if len(invented) == 1 else ", ".join(invented[:3])
        where = (
            f"; the synthetic rows give {other!r} instead" if other is not None else ""
        )
        n_gone = int(x[gone].nunique())
        out.append(
            Alert(
                str(col),
                "levels_lost",
                f"{col}: {n_gone} real level{'s' if n_gone != 1 else ''} holding "
                f"{100 * share:.1f} % of the real rows "
                f"{'are' if n_gone != 1 else 'is'} not in the synthetic "
                f"rows{where} (alerted from {100 * LOST_LEVELS_SHARE:g} %)",
                MappingProxyType(
                    {
                        "levels_lost": n_gone,
                        "real_share": share,
                        "catch_all": None if other is None else str(other),
                        "threshold": LOST_LEVELS_SHARE,
                    }
                ),
            )
        )
    return out


def _model_alert(model):
    if model is None:
        return []
    baseline = TRIVIAL_SCORE.get(model["metric"])
    score = model["synthetic"]
    if baseline is None or not score <= baseline:
        return []
    trivial = "predicting the mean" if model["metric"] == "r2" else "a random ranking"
    target = model["target"]
    return [
        Alert(
            target,
            "model_below_baseline",
            f"{target}: a model trained on the synthetic rows scores "
            f"{model['metric']} {score:.3f} on the real rows, no better than "
            f"{trivial} ({baseline:g}); trained on real rows: "
            f"{model['real']:.3f}"
            + (
                " (no better either: the other columns may not predict it)"
                if not model["real"] > baseline
                else ""
            ),
            MappingProxyType(
                {
                    "metric": model["metric"],
                    "synthetic": float(score),
                    "real": float(model["real"]),
                    "baseline": baseline,
                }
            ),
        )
    ]


def alerts(real, synthetic, schema, folds=None, model=None, rules=None, checks=()):
    """Every :class:`Alert` of the synthetic rows against the real ones,
    column by column in the real table's order, then the broken rules',
    the model's last.

    ``folds`` is :func:`~skdp_synth.metrics._coding.catch_alls`' mapping (the
    levels a release kept, and its catch-all); ``model`` the report's
    :func:`train_synthetic_test_real` result with its ``"target"``;
    ``rules`` the declared rules and ``checks`` their :func:`check_rules`.
    """
    numeric = _numeric_columns(real, synthetic, schema)
    by_column = {str(c): [] for c in real.columns}
    for col, (x, y) in numeric.items():
        by_column[col] += _range_alerts(col, x, y) + _std_alert(col, x, y)
    for alert in _missing_alerts(real, synthetic) + _level_alerts(
        real, synthetic, numeric, folds or {}
    ):
        by_column[alert.column].append(alert)
    out = [a for col in by_column.values() for a in col]
    return tuple(out + _rule_alerts(checks, rules) + _model_alert(model))
