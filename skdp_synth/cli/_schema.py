"""The command line's schema files: the full public domain, or column types only.

A schema file is one of two forms.

**Types only** -- a ``"columns"`` mapping from every column of the input to
its type, with whatever public knowledge the user has::

    {"columns": {
        "age":       "numeric",
        "wage":      {"type": "numeric", "bounds": [0, 5000]},
        "hours":     {"type": "numeric", "integer": true, "missing": false},
        "education": {"type": "ordinal", "levels": ["none", "school", "degree"]},
        "sector":    "categorical",
        "region":    {"type": "categorical", "levels": ["N", "S", null]},
        "hired":     {"type": "datetime", "unit": "D"},
        "waited":    {"type": "duration", "unit": "min"}}}

A column given as a bare string is ``{"type": that string}``. Per column:

* ``type`` (required): ``"numeric"``, ``"categorical"``, ``"ordinal"``,
  ``"datetime"`` (ISO 8601 dates and times: a numeric column of whole
  ``"unit"``s since 1970-01-01, ``"s"`` by default, ``"D"`` for dates;
  ``bounds`` and ``bin_edges`` as ISO strings; out of core too) or
  ``"duration"`` (time spans, ``timedelta64``: whole ``"unit"``s as for
  dates; ``bounds`` and ``bin_edges`` as ISO 8601 durations, ``"PT30M"``).
* ``levels``: the public levels of a categorical column (``null`` among them:
  the column can be missing); required for an ordinal column (their order).
  A categorical column without levels has its frequent levels discovered
  privately (a noisy threshold, paying a share of ``δ``; the rare ones
  become ``"other"``).
* ``bounds`` ``[lo, hi]``: public bounds of a numeric column (``null`` for a
  side learned privately, ``[0, null]`` for a count; values outside
  are clipped, silently: a warning would depend on the data); its bins are still learned
  privately inside them. ``bin_edges``: public bins (nothing learned).
  Neither: private bounds and bins (PrivTree), paid from the ``ε`` written.
* ``point_masses`` ``[v, ...]``: public values of a numeric column whose
  bins are learned privately that hold heaps (a code such as 999999, a
  cap): each comes back as itself (``BooleanEncoder(point_masses=...)``).
* ``decimals``: a numeric column's values are written with this many
  decimals (public formatting; decoded values are otherwise full floats).
* ``integer``: ``true`` reads the column as integers (``Int64``, so that a
  missing cell does not turn it into floats); decoded values are integral.
* ``missing``: ``true``/``false`` declares whether the column can be
  missing; absent, a noisy count decides for the privately learned
  columns (``BooleanEncoder``'s ``missing="infer"``).

Other top-level keys are the encoder's options that are not domains
(``n_bins``, ``numeric_value``, ``numeric_encoding``, ``out_of_bounds``,
``decode``, ``missing`` as the default of the columns that do not say;
``refine_cells``, the memory mode of an out-of-core fit's private numeric
domains, ``doc/user_guide/out_of_core.md``).

It is translated into :class:`~skdp_synth.preprocessing.BooleanEncoder`
arguments (``categories``, ``ordinal``, ``bin_edges``, ``bounds``,
``missing``) plus the type each column is read as, so the pipeline pays for
every domain that is not declared from the ``ε`` the user wrote (its
``domain_share``; ``doc/privacy.md``, "Private domains").

**Full domain** -- the ``BooleanEncoder`` arguments themselves
(``categories``, ``ordinal``, ``bin_edges``, ``bounds``, ``missing``, ...),
as before; columns it does not name are typed by pandas.

Either form may add ``"rules"``, a list of public rules every synthetic
row keeps (:mod:`skdp_synth.rules`; :func:`parse_rules`): a derived column
(``{"derived": "mature", "expression": "mage >= 35"}``, in the input and
dropped before the fit; its expression read by a closed-vocabulary parser,
never ``eval``), an inequality, an implication, a structural zero, fixed
combinations.

Every error names the key or the column, never a value of the data (the
schema's own values are public and may be quoted).
"""

from __future__ import annotations

import json
import math
import numbers

from ..preprocessing._boolean_encoder import SCHEMA_KEYS

__all__ = ["Schema", "load_schema", "parse_schema"]

#: The column types of a types-only schema.
TYPES = ("numeric", "categorical", "boolean", "ordinal", "datetime", "duration")
#: The types as the messages offer them.
TYPE_WORDS = '"numeric", "categorical", "boolean", "ordinal", "datetime" or "duration"'
#: The keys a column of a types-only schema may have, by type.
_COLUMN_KEYS = {
    "boolean": {"type", "missing"},
    "numeric": {
        "type",
        "bounds",
        "bin_edges",
        "integer",
        "missing",
        "decimals",
        "point_masses",
    },
    "categorical": {"type", "levels", "missing"},
    "ordinal": {"type", "levels", "missing"},
    "datetime": {"type", "bounds", "bin_edges", "unit", "missing", "timezone"},
    "duration": {"type", "bounds", "bin_edges", "unit", "missing"},
}
#: Domain keys that a types-only schema declares per column instead.
_DOMAIN_KEYS = frozenset({"categories", "ordinal", "bin_edges", "bounds"})


class SchemaError(ValueError):
    """A malformed schema file: reported by the CLI in one line, exit status 2."""


class Schema:
    """A parsed schema: the encoder's arguments and how each column is read.

    Attributes
    ----------
    encoder : dict
        Keyword arguments of :class:`~skdp_synth.preprocessing.BooleanEncoder`.
    types : dict or None
        ``{column: "numeric" | "integer" | "categorical" | "ordinal" |
        "datetime" | "duration"}`` for a
        types-only schema (every column of the input must be listed); ``None``
        for a full-domain schema.
    """

    def __init__(self, encoder, types=None, decimals=None, timezones=None, rules=()):
        self.encoder = encoder
        self.types = types
        #: ``{column: k}``: numeric columns written with ``k`` decimals
        self.decimals = dict(decimals or {})
        #: ``{column: zone}``: datetime columns read in this time zone (cells
        #: with any offsets, as pandas writes a zone with daylight saving)
        self.timezones = dict(timezones or {})
        #: the declared rules (:mod:`skdp_synth.rules`), from ``"rules"``
        self.rules = tuple(rules)

    @property
    def types_only(self):
        return self.types is not None

    def levels(self):
        """``{column: declared levels}`` of the categorical and ordinal columns."""
        return {
            **(self.encoder.get("categories") or {}),
            **(self.encoder.get("ordinal") or {}),
        }

    def check_columns(self, columns, where="the input"):
        """A types-only schema must list exactly the columns of ``where``
        (names only; ``where`` names the file in the messages)."""
        if self.types is None:
            return
        columns = list(columns)
        missing = [c for c in columns if c not in self.types]
        extra = [c for c in self.types if c not in columns]
        problems = []
        if missing:
            problems.append(
                f'the schema\'s "columns" gives no type for the columns {missing} '
                f"of {where}: list every column ({TYPE_WORDS})"
            )
        if extra:
            problems.append(
                f'the schema\'s "columns" names {extra}, which {where} does not '
                f"have (its columns: {columns})"
            )
        if problems:
            # both at once: a typo'd name is one of each (said one at a
            # time, the second would come on the next run)
            raise SchemaError("; and ".join(problems))


def load_schema(path):
    """Read and parse a schema file (JSON; YAML when PyYAML is installed)."""
    if path is None:
        return Schema({})
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if str(path).endswith((".yml", ".yaml")):
        try:
            import yaml
        except ImportError:  # pragma: no cover - depends on the environment
            raise SchemaError("YAML schemas need PyYAML (pip install pyyaml)") from None
        try:
            raw = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise SchemaError(f"{path}: not valid YAML ({exc})") from None
    else:
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"{path}: not valid JSON ({exc})") from None
    return parse_schema(raw)


def parse_schema(raw):
    """A :class:`Schema` from the decoded file (a dict).

    Examples
    --------
    >>> s = parse_schema({"columns": {"age": "numeric", "sex": {"type": "categorical",
    ...                   "levels": ["F", "M"]}}})
    >>> s.encoder, s.types
    ({'categories': {'sex': ['F', 'M']}}, {'age': 'numeric', 'sex': 'categorical'})
    """
    allowed = sorted(SCHEMA_KEYS | {"columns", "rules"})
    if not isinstance(raw, dict):
        raise SchemaError(
            f"the schema must be a mapping (keys among {allowed}), not a "
            f"{type(raw).__name__}"
        )
    unknown = set(raw) - SCHEMA_KEYS - {"columns", "rules"}
    if unknown:
        raise SchemaError(f"unknown schema keys {sorted(unknown)}; allowed: {allowed}")
    raw = dict(raw)
    rules = parse_rules(raw.pop("rules", []), raw.get("columns"))
    if "columns" not in raw:
        return _without_derived(Schema(raw, rules=rules))
    both = sorted(_DOMAIN_KEYS & set(raw))
    if both:
        raise SchemaError(
            f'a schema with "columns" declares each column\'s domain there, not '
            f'in {both} (use "levels", "bounds" or "bin_edges" in the column)'
        )
    columns = raw["columns"]
    if not isinstance(columns, dict) or not columns:
        raise SchemaError(
            '"columns" must map each column name to its type, e.g. '
            '{"age": "numeric", "sector": "categorical"}'
        )
    encoder = {k: v for k, v in raw.items() if k != "columns"}
    default_missing = encoder.pop("missing", "infer")
    if isinstance(default_missing, dict):
        raise SchemaError(
            'with "columns", declare missing values per column '
            '({"type": ..., "missing": true}); the top-level "missing" may only '
            'be "infer", "always" or "never"'
        )
    categories, ordinal, bin_edges, bounds, missing = {}, {}, {}, {}, {}
    types, units, decimals, timezones, masses = {}, {}, {}, {}, {}
    for name, spec in columns.items():
        if isinstance(spec, str):
            spec = {"type": spec}
        if not isinstance(spec, dict) or "type" not in spec:
            raise SchemaError(
                f"column {name!r}: give its type, as {TYPE_WORDS}, or as "
                '{"type": ..., ...}'
            )
        kind = spec["type"]
        if kind not in TYPES:
            raise SchemaError(
                f"column {name!r}: unknown type {kind!r}; allowed: {list(TYPES)}"
            )
        extra = set(spec) - _COLUMN_KEYS[kind]
        if extra:
            raise SchemaError(
                f"column {name!r} ({kind}): unknown keys {sorted(extra)}; "
                f"allowed: {sorted(_COLUMN_KEYS[kind])}"
            )
        if "missing" in spec:
            if not isinstance(spec["missing"], bool):
                raise SchemaError(f'column {name!r}: "missing" must be true or false')
            missing[name] = spec["missing"]
        types[name] = kind
        if kind == "numeric":
            _numeric(name, spec, bin_edges, bounds)
            if "point_masses" in spec:
                v = spec["point_masses"]
                if not isinstance(v, list) or not v or not all(map(_is_number, v)):
                    raise SchemaError(
                        f'column {name!r}: "point_masses" must be a non-empty list '
                        "of finite numbers"
                    )
                masses[name] = [float(x) for x in v]
            if "decimals" in spec:
                k = spec["decimals"]
                if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= 15:
                    raise SchemaError(
                        f'column {name!r}: "decimals" must be a whole number 0-15'
                    )
                decimals[name] = k
            if spec.get("integer", False):
                types[name] = "integer"
            continue
        if kind == "datetime":
            _datetime(name, spec, bin_edges, bounds, units)
            if "timezone" in spec:
                timezones[name] = _timezone(name, spec["timezone"])
            continue
        if kind == "duration":
            _duration(name, spec, bin_edges, bounds, units)
            continue
        if kind == "boolean":
            # the levels are public by the type: true and false (in any
            # case), null too where it can be missing (discovered privately,
            # a rare true could become "other")
            types[name] = "categorical"
            categories[name] = [False, True] + ([None] if spec.get("missing") else [])
            continue
        levels = spec.get("levels")
        if levels is None:
            if kind == "ordinal":
                raise SchemaError(
                    f'column {name!r}: an ordinal column needs its "levels", in '
                    "order (the order cannot be learned from the data)"
                )
            continue
        if not isinstance(levels, list) or not [v for v in levels if v is not None]:
            raise SchemaError(f'column {name!r}: "levels" must be a non-empty list')
        if None in levels and spec.get("missing") is False:
            # otherwise the encoder says "add null", which is there
            raise SchemaError(
                f'column {name!r}: null among its "levels" says it can be '
                'missing, and "missing": false that it cannot; keep one'
            )
        if len({json.dumps(v) for v in levels}) != len(levels):
            raise SchemaError(f'column {name!r}: "levels" has duplicates')
        (categories if kind == "categorical" else ordinal)[name] = list(levels)
    for key, value in (
        ("categories", categories),
        ("ordinal", ordinal),
        ("bin_edges", bin_edges),
        ("bounds", bounds),
        ("datetime_unit", units),
        ("point_masses", masses),
    ):
        if value:
            encoder[key] = value
    if missing:
        if default_missing in ("always", "never"):
            # the encoder takes one form: a dict covers every listed column
            missing = {c: missing.get(c, default_missing == "always") for c in columns}
        encoder["missing"] = missing
    elif default_missing != "infer":
        encoder["missing"] = default_missing
    return _without_derived(Schema(encoder, types, decimals, timezones, rules))


def parse_rules(raw, columns=None):
    """The ``"rules"`` list as :mod:`skdp_synth.rules` objects, checked together.

    ``columns`` (a types-only schema's ``"columns"``) names the columns the
    rules may name, and their types: an inequality compares numeric
    columns, or two datetime or two duration columns. A derived
    column's expression is read by
    :class:`~skdp_synth.rules.Expression` (a closed vocabulary,
    never ``eval``).

    Examples
    --------
    >>> parse_rules([{"derived": "mature", "expression": "mage >= 35"},
    ...              {"inequality": ["weeks", "<=", 45]}])
    (Derived(column='mature', function=Expression('mage >= 35'), inputs=('mage',)), \
Inequality(left='weeks', op='<=', right=45, offset=0.0))
    """
    from ..rules import RULE_FORMS, RuleSet
    from ..rules._inequality import is_timedelta

    if not isinstance(raw, list):
        raise SchemaError(f'"rules" must be a list of rules, e.g. [{RULE_FORMS}]')
    rules = tuple(_rule(i, entry) for i, entry in enumerate(raw))
    try:
        ruleset = RuleSet(rules, columns=None if columns is None else list(columns))
    except (TypeError, ValueError) as exc:
        raise SchemaError(f'"rules": {exc}') from None
    if isinstance(columns, dict):
        for i, rule in enumerate(rules):
            if rule.kind != "numeric":
                continue
            kinds = []
            for c in rule.columns:
                spec = columns[c]
                kind = spec if isinstance(spec, str) else spec.get("type")
                if kind not in ("numeric", "datetime", "duration"):
                    raise SchemaError(
                        f'"rules"[{i}] (inequality): column {c!r} is {kind}, '
                        "not numeric, datetime or duration"
                    )
                kinds.append(kind)
            # (the rule's own checks say these at the fit, after the read)
            timed = set(kinds) - {"numeric"}
            if timed and (len(set(kinds)) > 1 or len(kinds) < 2):
                other = f"a {kinds[1]} column" if len(kinds) > 1 else "a number"
                raise SchemaError(
                    f'"rules"[{i}] (inequality): it compares a {kinds[0]} column '
                    f"with {other}; a datetime or duration column is compared "
                    'with another of its type only (with an ISO 8601 "offset", '
                    '"P1D"); bound it with its "bounds"'
                )
            duration = is_timedelta(rule.offset)
            if (duration and not timed) or (timed and not duration and rule.offset):
                raise SchemaError(
                    f'"rules"[{i}] (inequality): its "offset" is '
                    + (
                        'a duration between date or duration columns ("P1D")'
                        if timed
                        else "a number between numeric columns"
                    )
                )
    return ruleset.rules


def _rule(i, entry):
    """Entry ``i`` of ``"rules"`` as a rule (``rules.rule_from_json``, the
    reader release files use too), a mistake as one line naming its place."""
    from ..rules import RULE_FORMS, RuleFormError, rule_from_json

    try:
        return rule_from_json(entry)
    except RuleFormError as exc:
        if exc.kind is None:
            raise SchemaError(f'"rules"[{i}]: {exc}, e.g. {RULE_FORMS}') from None
        raise SchemaError(f'"rules"[{i}] ({exc.kind}): {exc}') from None


def _without_derived(schema):
    """A derived column is dropped before the encoder sees the table: the
    encoder's arguments do not name it (it is still read as its type)."""
    derived = {r.column for r in schema.rules if r.kind == "derived"}
    if not derived:
        return schema
    for key, value in list(schema.encoder.items()):
        if isinstance(value, dict):
            schema.encoder[key] = {c: v for c, v in value.items() if c not in derived}
            if not schema.encoder[key]:
                del schema.encoder[key]
    return schema


def _timezone(name, zone):
    """A datetime column's ``"timezone"``: a name pandas knows (public)."""
    import pandas as pd

    try:
        if not isinstance(zone, str):
            raise TypeError
        pd.Timestamp(0, tz=zone)
    except Exception:  # pandas raises several kinds for an unknown zone
        raise SchemaError(
            f'column {name!r}: "timezone" must be a time zone name such as '
            '"UTC" or "America/New_York"'
        ) from None
    return zone


def _numeric(name, spec, bin_edges, bounds):
    if "integer" in spec and not isinstance(spec["integer"], bool):
        raise SchemaError(f'column {name!r}: "integer" must be true or false')
    if "bounds" in spec and "bin_edges" in spec:
        raise SchemaError(
            f'column {name!r}: give "bounds" (bins learned privately inside '
            'them) or "bin_edges" (public bins), not both'
        )
    if "bounds" in spec:
        b = spec["bounds"]
        if (
            not isinstance(b, list)
            or len(b) != 2
            or b == [None, None]
            or not all(v is None or _is_number(v) for v in b)
            or (None not in b and not b[0] < b[1])
        ):
            raise SchemaError(
                f'column {name!r}: "bounds" must be [lo, hi], two finite numbers '
                "with lo < hi, or one number and null (that side learned "
                "privately: [0, null] for a count)"
            )
        bounds[name] = [None if v is None else float(v) for v in b]
    if "bin_edges" in spec:
        e = spec["bin_edges"]
        if (
            not isinstance(e, list)
            or len(e) < 2
            or not all(_is_number(v) for v in e)
            or any(a >= b for a, b in zip(e, e[1:]))
        ):
            raise SchemaError(
                f'column {name!r}: "bin_edges" must be at least two finite, '
                "increasing numbers"
            )
        bin_edges[name] = list(e)


def _datetime(name, spec, bin_edges, bounds, units):
    import pandas as pd

    def parse(x):
        try:
            t = pd.Timestamp(x)
        except (TypeError, ValueError):
            return None
        return None if pd.isna(t) else t

    form = 'ISO dates, as "2020-01-31" or "2020-01-31T12:00"'
    _time_column(name, spec, bin_edges, bounds, units, parse, form, keep=True)


def _duration(name, spec, bin_edges, bounds, units):
    """A duration column: as a datetime one, its ``bounds``/``bin_edges``
    durations as text (ISO 8601 or pandas' form, read strictly:
    :func:`~skdp_synth._datetime.parse_duration`), given to the encoder in
    ISO 8601 -- a number is refused, as its unit would be a guess."""
    from .._datetime import parse_duration

    form = (
        'durations, ISO 8601 as "PT30M" or "P1DT12H" (weeks, days, hours, '
        'minutes, seconds) or as pandas writes them, "1 days 12:00:00"'
    )
    _time_column(name, spec, bin_edges, bounds, units, parse_duration, form)


def _time_column(name, spec, bin_edges, bounds, units, parse, form, keep=False):
    """A datetime or duration column's ``unit``, ``bounds`` and ``bin_edges``,
    each point read by ``parse`` (``None``: not one); ``keep``: the points
    go to the encoder as written, else as ``parse``'s values in ISO 8601."""
    from .._datetime import UNITS

    unit = spec.get("unit", "s")
    if unit not in UNITS:
        raise SchemaError(f'column {name!r}: "unit" must be one of {list(UNITS)}')
    units[name] = unit
    if "bounds" in spec and "bin_edges" in spec:
        raise SchemaError(f'column {name!r}: give "bounds" or "bin_edges", not both')
    for key, least, target in (("bounds", 2, bounds), ("bin_edges", 2, bin_edges)):
        if key not in spec:
            continue
        v = spec[key]
        # bounds may leave one side null, learned privately (as numeric ones)
        given = (
            [x for x in v if not (key == "bounds" and x is None)]
            if isinstance(v, list)
            else None
        )
        points = [parse(x) for x in given] if given is not None else None
        if (
            points is None
            or not points
            or len(v) < least
            or (key == "bounds" and len(v) != 2)
            or any(t is None for t in points)
            or any(a >= b for a, b in zip(points, points[1:]))
        ):
            raise SchemaError(
                f'column {name!r}: "{key}" must be '
                + ("[lo, hi]" if key == "bounds" else "at least two")
                + f" increasing {form}"
                + (" (null for a side learned privately)" if key == "bounds" else "")
            )
        target[name] = (
            list(v)
            if keep
            else [None if x is None else parse(x).isoformat() for x in v]
        )


def _is_number(v):
    return (
        isinstance(v, numbers.Real)
        and not isinstance(v, bool)
        and math.isfinite(float(v))
    )
