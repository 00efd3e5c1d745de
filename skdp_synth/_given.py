"""Conditional sampling: rows of a released distribution *given* a condition.

A synthesis pipeline's model of rows is a finite weighted set of encoded
rows (the generator's table, or weighted candidate rows; a release file
holds it as ``points``/``weights``). Sampling it given ``{"churn": "yes"}``
is sampling the restriction of that set to the points whose decoded value
matches, their weights renormalised: the model's own conditional
distribution, drawn directly (no rejection that could stall on a rare
condition). Post-processing of the released model: free in privacy.

A condition is a dict of column -> value, list of values, or ``(lo, hi)``
range of a numeric or time column (either end ``None`` for an open one);
a list of dicts means "any of them". On the encoded bits:

* a categorical level is a bit pattern: the points at the wanted levels
  keep their weight, the others get none;
* a numeric range covers whole bins and parts of at most two: the points
  of every bin it meets keep their weight, and a row of a partly covered
  bin whose decoded value falls outside the range is drawn again (at most
  ``REDRAW_ROUNDS`` rounds; only those rows, so never a stall): the
  model's own conditional distribution, the decoder's within-bin values
  included. The rows left after the rounds (a range that covers a sliver
  of its bins, or one value of a decimal column) keep their other columns
  and get a value inside the range: one of that bin's values that fell
  inside (drawn), else uniform on the covered part of the bin (whole
  numbers for an integer column).

A condition with no mass in the model is refused naming the condition, as
are unknown columns and levels; those errors carry only the condition and
the decoder's public levels, never a count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._datetime import from_units, to_units
from .preprocessing._column_spec import _hashable, _is_missing_scalar
from .preprocessing._decoding import decode_index
from .preprocessing._encoding import numeric_level
from .validation import sample_chunk_rows

__all__ = ["ConditionalModel", "check_given", "draw_given"]

#: Rounds of redrawing the rows of partly covered bins whose value fell
#: outside the range, before the rest get a value inside it.
REDRAW_ROUNDS = 8


@dataclass(frozen=True)
class _Condition:
    """One column's condition: wanted level indices (categorical) or a
    range ``[lo, hi]`` in the column's units (numeric), and whether its
    missing value is wanted."""

    k: int
    name: str
    text: str
    levels: tuple = ()
    missing: bool = False
    lo: float | None = None
    hi: float | None = None

    @property
    def is_range(self):
        return self.lo is not None


def check_given(given):
    """``given`` as a list of clauses (dicts), checked for its shape."""
    if isinstance(given, Mapping):
        clauses = [given]
    elif (
        isinstance(given, (list, tuple))
        and given
        and all(isinstance(c, Mapping) for c in given)
    ):
        clauses = list(given)
    else:
        raise TypeError(
            "given must be a dict of column -> value, list of values or (lo, hi) "
            f"range, or a non-empty list of such dicts; got {type(given).__name__}"
        )
    for clause in clauses:
        if not clause:
            raise ValueError("given holds an empty condition ({})")
    return clauses


def _text(clause):
    return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in clause.items()) + "}"


def _categorical(k, spec, name, want, text):
    values = list(want) if isinstance(want, (list, tuple, set, frozenset)) else [want]
    if not values:
        raise ValueError(f"given {text}: no value wanted for column {name!r}")
    keys = {_hashable(v): i for i, v in enumerate(spec.levels)}
    by_text = {}
    for i, v in enumerate(spec.levels):
        by_text.setdefault(str(v), []).append(i)
    wanted, missing = set(), False
    for v in values:
        if _is_missing_scalar(v):
            if not spec.missing:
                raise ValueError(
                    f"given {text}: column {name!r} has no missing value in the model"
                )
            missing = True
            continue
        i = keys.get(_hashable(v))
        if i is None and len(by_text.get(str(v), ())) == 1:
            i = by_text[str(v)][0]  # '1' for the level 1 (a CLI's text)
        if i is None:  # 2.0 for the level 2, as the encoder reads a cell
            i = numeric_level(spec.levels, v)
        if i is None:
            shown = [str(x) for x in spec.levels[:20]]
            more = ", ..." if len(spec.levels) > 20 else ""
            raise ValueError(
                f"given {text}: {v!r} is not a level of column {name!r} (its "
                f"levels: {', '.join(shown)}{more})"
            )
        wanted.add(i)
    return _Condition(k, name, text, tuple(sorted(wanted)), missing)


def _number(spec, v, name, text):
    if v is None:
        return None
    if spec.time_unit is not None:
        out = float(to_units([v], spec.dtype, spec.time_unit)[0])
    else:
        try:
            out = float(v)
        except (TypeError, ValueError):
            raise ValueError(
                f"given {text}: column {name!r} is numeric; {v!r} is not a number"
            ) from None
    if math.isnan(out):
        raise ValueError(f"given {text}: a range end of {name!r} is not a number")
    return out


def _numeric(k, spec, name, want, text):
    if isinstance(want, str) and ".." in want:  # "lo..hi" (a CLI's text)
        want = tuple(v.strip() or None for v in want.split("..", 1))
    if isinstance(want, (list, tuple)):
        if len(want) != 2:
            raise ValueError(
                f"given {text}: a numeric column ({name!r}) takes one value or a "
                "(lo, hi) range"
            )
        lo, hi = (_number(spec, v, name, text) for v in want)
        lo = -math.inf if lo is None else lo
        hi = math.inf if hi is None else hi
        if lo > hi:
            raise ValueError(f"given {text}: the range of {name!r} is empty (lo > hi)")
        return _Condition(k, name, text, lo=lo, hi=hi)
    if _is_missing_scalar(want):
        if not spec.missing:
            raise ValueError(
                f"given {text}: column {name!r} has no missing value in the model"
            )
        return _Condition(k, name, text, missing=True)
    v = _number(spec, want, name, text)
    return _Condition(k, name, text, lo=v, hi=v)


def _parse(clauses, specs, derived):
    names = {str(spec.name): k for k, spec in enumerate(specs)}
    out = []
    for clause in clauses:
        text = _text(clause)
        conds = []
        for col, want in clause.items():
            key = str(col)
            if key in derived:
                raise ValueError(
                    f"given {text}: {key!r} is a derived column of the rules "
                    "(computed after sampling); condition on the columns it is "
                    "computed from"
                )
            if key not in names:
                raise ValueError(
                    f"given {text}: unknown column {key!r} (the columns: "
                    f"{', '.join(names)})"
                )
            k = names[key]
            spec = specs[k]
            make = _numeric if spec.kind == "numeric" else _categorical
            conds.append(make(k, spec, key, want, text))
        out.append(conds)
    return out


def _bin_share(edges, lo, hi, integer):
    """The share of each bin ``[edges[i], edges[i+1])`` (the last closed)
    inside ``[lo, hi]``: uniform within a bin, whole numbers counted for an
    integer column; a single value (``lo == hi``) gives its bin(s) 1."""
    a, b = edges[:-1], edges[1:]
    last = np.arange(a.size) == a.size - 1
    if integer:
        first_int = np.ceil(a)
        last_int = np.where(last, np.floor(b), np.ceil(b) - 1)
        total = np.maximum(last_int - first_int + 1, 0)
        inside = np.maximum(
            np.minimum(last_int, math.floor(hi) if math.isfinite(hi) else np.inf)
            - np.maximum(first_int, math.ceil(lo) if math.isfinite(lo) else -np.inf)
            + 1,
            0,
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, inside / np.maximum(total, 1), 0.0)
    if lo == hi:
        return ((a <= lo) & ((lo < b) | (last & (lo <= b)))).astype(np.float64)
    width = np.maximum(np.minimum(b, hi) - np.maximum(a, lo), 0.0)
    return width / (b - a)


def _range_edges(spec):
    """Numeric column ``spec``'s bin edges as conditional sampling reads
    them: an integer column's closed last bin ends at the largest integer
    inside its private cap (its fine histogram's bounds, exclusive), since
    the decoder never gives one past it (the split bins' last edge lies one
    past the cap: ``_coarse_bins._own_last_integers``). Public: the
    released domain."""
    edges = np.asarray(spec.levels, dtype=np.float64)
    fine = getattr(spec, "fine", None)
    if spec.integer and fine is not None and edges.size > 1:
        top = fine.last_integer
        if edges[-2] <= top < edges[-1]:
            edges = edges.copy()
            edges[-1] = top
    return edges


def _cover(edges, j, lo, hi, integer):
    """``[left, right]`` of bin ``j`` inside ``[lo, hi]`` (whole numbers
    for an integer column)."""
    a, b = float(edges[j]), float(edges[j + 1])
    last = j == len(edges) - 2
    left, right = max(a, lo), min(b, hi)
    if integer:
        left = math.ceil(left)
        right = math.floor(right) if (last or right < b) else math.ceil(b) - 1
    return left, right


class ConditionalModel:
    """The weighted points of a released model restricted to ``given``.

    Parameters
    ----------
    points, weights : ndarray
        The model's encoded rows (0/1 bits) and their weights.
    encoder : BooleanEncoder
        The fitted encoder (or a release's decoder) that decodes them.
    given : dict or list of dict
        The condition (see the module docstring).
    controlled : bool
        Draw by controlled rounding of the expected counts (the generator's
        table), else i.i.d.
    derived : collection of str
        Columns computed after sampling (the rules' derived columns): refused.
    """

    def __init__(self, points, weights, encoder, given, *, controlled, derived=()):
        self.encoder = encoder
        self.controlled = bool(controlled)
        specs = encoder.specs_
        self.specs = specs
        clauses = check_given(given)
        self.clauses = _parse(clauses, specs, set(map(str, derived)))
        self.text = " or ".join(_text(c) for c in clauses)
        points = np.asarray(points, dtype=np.float64)
        m = points.shape[0]
        index = np.zeros((m, len(specs)), dtype=np.int64)
        miss = np.zeros((m, len(specs)), dtype=bool)
        start = 0
        for k, spec in enumerate(specs):
            width = len(spec.bits)
            if width:
                block = points[:, start : start + width]
                index[:, k], miss[:, k] = decode_index(spec, block, None, "argmax")
            start += width
        share = np.stack([self._share(c, index, miss) for c in self.clauses], 1)
        weights = np.asarray(weights, dtype=np.float64)
        #: the probability the model gives the condition (post-processing of
        #: the released weights; partly covered bins read as uniform)
        self.probability = float(weights @ share.max(axis=1) / weights.sum())
        # every point whose bin meets the range, at its full weight: the
        # rows it decodes to outside the range are drawn again (``draw``)
        mass = weights * (share.max(axis=1) > 0)
        keep = np.flatnonzero(mass > 0)
        if keep.size == 0 or not mass.sum() > 0:
            raise ValueError(
                f"given {self.text}: the model gives this condition no probability "
                "(no synthetic row can match it); widen or drop it"
            )
        self.points = points[keep]
        self.weights = mass[keep] / mass[keep].sum()
        self.index = index[keep]
        self.miss = miss[keep]
        self.clause = np.argmax(share[keep], axis=1)

    def _share(self, clause, index, miss):
        share = np.ones(index.shape[0])
        for c in clause:
            spec = self.specs[c.k]
            ok_missing = miss[:, c.k] & c.missing
            if c.is_range:
                edges = _range_edges(spec)
                per_bin = _bin_share(edges, c.lo, c.hi, spec.integer)
                inside = np.where(miss[:, c.k], 0.0, per_bin[index[:, c.k]])
                share *= np.where(ok_missing, 1.0, inside)
            else:
                at = np.isin(index[:, c.k], c.levels) & ~miss[:, c.k]
                share *= (at | ok_missing).astype(np.float64)
        return share

    def draw(self, n, rng):
        """``n`` decoded rows, every one matching (the encoder's own
        ``random_state`` seeds its decoding, as in an unconditioned draw).

        A row of a partly covered bin whose decoded value falls outside the
        range is drawn again, for ``REDRAW_ROUNDS`` rounds at most: the
        model's own conditional distribution, value and other columns
        alike (what filtering a large sample keeps). The rows left after
        them (a range covering a sliver of its bins) keep their other
        columns and get a value inside the range (``_in_range``). A point
        that is not a valid bit pattern (a candidate row of an explicit
        workload) may decode outside a categorical condition: drawn again
        likewise."""
        picks = self._picks(n, rng, self.controlled)
        Y = self.encoder.inverse_transform(self.points[picks])
        ok = self.matches(Y)
        for r in range(4 * REDRAW_ROUNDS):
            if r == REDRAW_ROUNDS and not ok.all():
                Y = self._in_range(Y, picks, rng)
                ok = self.matches(Y)
            if ok.all():
                return Y
            bad = np.flatnonzero(~ok)
            more = self._picks(bad.size, rng, False)
            extra = self.encoder.inverse_transform(self.points[more])
            if r >= REDRAW_ROUNDS:
                extra = self._in_range(extra, more, rng)
            hit = self.matches(extra)
            fill = bad[hit]
            order = np.arange(len(Y))
            order[fill] = len(Y) + np.flatnonzero(hit)
            Y = _take(_concat([Y, extra]), order)
            picks[fill] = more[hit]
            ok[fill] = True
        if ok.all():
            return Y
        raise ValueError(  # pragma: no cover - points that rarely decode
            f"given {self.text}: the model's rows under this condition decode "
            "outside it (they are not valid bit patterns)"
        )

    def _picks(self, n, rng, controlled):
        """``n`` indices of the restricted points, by their weights."""
        m = self.points.shape[0]
        if controlled:
            from .generator import controlled_rows

            return controlled_rows(
                np.arange(m)[:, None], n, rng, weights=self.weights
            ).ravel()
        return rng.choice(m, size=n, p=self.weights)

    def _in_range(self, Y, picks, rng):
        """Values of ranged columns moved inside their range (see the module
        docstring); categorical columns match by construction."""
        clause_of = self.clause[picks]
        for ci, clause in enumerate(self.clauses):
            rows = np.flatnonzero(clause_of == ci)
            for c in clause:
                if c.is_range and rows.size:
                    Y = self._fix_column(Y, c, rows, self.index[picks[rows], c.k], rng)
        return Y

    def _fix_column(self, Y, c, rows, bins, rng):
        spec = self.specs[c.k]
        frame = hasattr(Y, "iloc")
        column = Y.iloc[:, c.k] if frame else pd.Series(Y[:, c.k])
        if spec.time_unit is not None:
            x = to_units(column, column.dtype, spec.time_unit)
        else:
            x = pd.to_numeric(column, errors="coerce").to_numpy(
                dtype=np.float64, na_value=np.nan
            )
        sub = x[rows]
        bad = ~((sub >= c.lo) & (sub <= c.hi))
        if not bad.any():
            return Y
        edges = _range_edges(spec)
        integer = spec.integer or pd.api.types.is_integer_dtype(column.dtype)
        new = sub.copy()
        for j in np.unique(bins[bad]):
            at = bad & (bins == j)
            pool = sub[~bad & (bins == j)]
            if pool.size:
                new[at] = pool[rng.integers(0, pool.size, size=int(at.sum()))]
                continue
            left, right = _cover(edges, int(j), c.lo, c.hi, integer)
            if integer:
                new[at] = rng.integers(int(left), int(right) + 1, size=int(at.sum()))
            else:
                new[at] = left + rng.random(int(at.sum())) * (right - left)
        x = x.copy()
        x[rows] = new
        if spec.time_unit is not None:
            values = from_units(x, column.dtype, spec.time_unit)
        elif pd.api.types.is_integer_dtype(column.dtype) and not np.isnan(x).any():
            values = pd.Series(np.rint(x)).astype(column.dtype)
        else:
            values = pd.Series(x).astype(
                column.dtype if column.dtype.kind == "f" else np.float64
            )
        # Y is this draw's own decoded output: changed in place, in the
        # column's dtype (through NumPy, a zoned datetime64[us] column came
        # back as datetime64[ns] and a pyarrow one as NumPy's)
        if frame:
            Y[Y.columns[c.k]] = pd.Series(values.array, index=Y.index)
        else:
            Y[:, c.k] = values.to_numpy()
        return Y

    def matches(self, Y):
        """Which rows of ``Y`` (decoded, possibly repaired by rules) match
        some clause, read from their values."""
        n = len(Y)
        out = np.zeros(n, dtype=bool)
        for clause in self.clauses:
            ok = np.ones(n, dtype=bool)
            for c in clause:
                spec = self.specs[c.k]
                name = spec.name
                if hasattr(Y, "columns"):
                    column = Y[name] if name in Y.columns else Y.iloc[:, c.k]
                else:
                    column = pd.Series(np.asarray(Y)[:, c.k])
                missing = column.isna().to_numpy()
                if c.is_range:
                    if spec.time_unit is not None:
                        x = to_units(column, column.dtype, spec.time_unit)
                    else:
                        x = pd.to_numeric(column, errors="coerce").to_numpy(
                            dtype=np.float64, na_value=np.nan
                        )
                    hit = (x >= c.lo) & (x <= c.hi)
                else:
                    wanted = [spec.levels[i] for i in c.levels]
                    hit = column.isin(wanted).to_numpy() & ~missing
                ok &= hit | (missing & c.missing)
            out |= ok
        return out


def draw_given(model, n, rng, *, chunk_rows, rules=None, rules_seed=None):
    """``n`` rows of ``model`` (a :class:`ConditionalModel`), drawn and
    decoded ``chunk_rows`` at a time, with ``rules`` enforced
    (``RuleSet.enforce``, seeded by ``rules_seed``). Rows that the rules'
    repair moved out of the condition are replaced by further conditional
    draws; when 20 rounds leave some, the rules and the condition are
    refused together (they leave the condition next to no rows)."""

    def block(size, seed):
        model.encoder.random_state = int(rng.integers(0, 2**32 - 1))
        Y = model.draw(size, rng)
        return Y if rules is None else rules.enforce(Y, random_state=seed)

    parts = [block(min(chunk_rows, n - s), rules_seed) for s in range(0, n, chunk_rows)]
    Y = parts[0] if len(parts) == 1 else _concat(parts)
    if rules is None:
        return Y
    ok = model.matches(Y)
    if ok.all():
        return Y
    kept = [Y[ok]]
    need = int((~ok).sum())
    for _ in range(20):
        extra = block(min(max(2 * need, 1024), chunk_rows), rng)
        extra = extra[model.matches(extra)]
        kept.append(extra.iloc[:need] if hasattr(extra, "iloc") else extra[:need])
        need -= len(kept[-1])
        if need == 0:
            return _concat(kept)
    raise ValueError(
        f"given {model.text}: the rules repair the rows drawn under this "
        "condition out of it (almost no row keeps both); relax the condition "
        "or the rules"
    )


def _take(Y, order):
    if hasattr(Y, "iloc"):
        return Y.iloc[order].reset_index(drop=True)
    return Y[order]


def _concat(parts):
    if hasattr(parts[0], "iloc"):
        return pd.concat(parts, ignore_index=True)
    return np.concatenate(parts, axis=0)


def given_with_rules(release, n, rng, given, rules, rules_seed):
    """``n`` decoded rows of ``release`` (a :class:`~skdp_synth.release.Release`
    with a decoder and stored rules) conditional on ``given`` that keep
    ``rules`` (:func:`draw_given`, as the pipeline draws them)."""
    model = ConditionalModel(
        release.arrays["points"],
        release.arrays["weights"],
        release.decoder(),
        given,
        controlled=release.plan.get("selection") == "controlled",
        derived=rules.derived_columns,
    )
    size = sample_chunk_rows(release.arrays["points"].shape[1])
    return draw_given(
        model, n, rng, chunk_rows=size, rules=rules, rules_seed=rules_seed
    )


def stored_rules(plan, arrays):
    """The rules a release file stores (``plan["rules"]``, the CLI schema's
    ``"rules"`` form) as a :class:`~skdp_synth.rules.RuleSet`, checked as
    untrusted input: every rule read by
    :func:`skdp_synth.rules.rule_from_json` (a derived column's expression by
    the closed :class:`~skdp_synth.rules.Expression`, never ``eval``), naming
    only columns the release's decoder writes or the rules derive. Raises
    ``ValueError``."""
    from .preprocessing._decoder_state import decoder_from_state
    from .rules import ruleset_from_json

    if "decoder" not in plan:
        raise ValueError("rules need a decoder (they name decoded columns)")
    rules = ruleset_from_json(plan["rules"])
    decoder = decoder_from_state(
        plan["decoder"], arrays, n_features=plan.get("n_features")
    )
    decoded = {str(spec.name) for spec in decoder.specs_}
    known = decoded | set(rules.derived_columns)
    for rule in rules.rules:
        unknown = [c for c in rule.columns if c not in known]
        if unknown:
            raise ValueError(f"a rule names {unknown[0]!r}, not a column")
    if rules.columns is not None and not decoded <= set(rules.columns):
        raise ValueError("columns must list every decoded column")
    return rules
