"""Values to bits: how a :class:`BooleanEncoder` encodes one column.

``transform`` -- and ``fit``, which checks the training rows against the
domain it has just fixed -- turns each column into the block of bits its
``_ColumnSpec`` describes: a level index per row (looked up once per
distinct value; numbers binned at the edges), then the one-hot, single-bit
or thermometer code and the missing bit. It is a function of the spec and
the values only, so it lives apart from the estimator. Its refusals name the
column and the problem, never a value, a row or a count: those are private.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from ._column_spec import _hashable, _is_bool, _is_missing, _numbers, _public_text


def encode_column(spec, series, clipped):
    """Column ``spec``'s bits of the values ``series``: its one-hot,
    single-bit or thermometer block (then its missing bit), ``uint8``.
    Refuses, naming the column only, a missing value its domain has no level
    for, an undeclared level and a value outside declared edges or bounds;
    appends the column's name to ``clipped`` where values were clipped to
    public bounds (the caller warns)."""
    n = len(series)
    miss = np.asarray(_is_missing(series), dtype=bool)
    fill = None  # the number that missing values are encoded as, if any
    if (
        miss.any()
        and not spec.missing
        and spec.missing_learned
        and spec.fine is not None
    ):
        # a private domain without a missing level that was not declared
        # (a NumPy integer column at fit, given NaN later; a state saved when
        # a noisy count decided the level): the missing values go to the
        # middle bin (documented)
        # (in the column's units: a date column cannot be cast to float,
        # which crashed the fit after its noise)
        fill = spec.levels[(len(spec.levels) - 1) // 2]
    elif miss.any() and not spec.missing and spec.missing_learned and spec.other:
        # a privately learned categorical column without a missing level
        # (a state saved when a noisy count decided it): the missing values
        # are one more
        # undiscovered level, "other" (an error here would say whether the
        # column has missing values, which the release keeps private)
        series = pd.Series(
            np.where(miss, spec.levels[-1], series.astype(object)),
            index=series.index,
            dtype=object,
        )
        miss = np.zeros(len(series), dtype=bool)
    elif miss.any() and not spec.missing:
        raise ValueError(
            f"column {spec.name!r} has missing values but its domain has no "
            "missing category: declare it (missing={column: True}, or None "
            "among its categories or ordinal levels)"
        )
    if spec.kind in ("nominal", "binary", "ordinal"):
        index = _category_index(spec, series, miss)
    else:
        values = _numbers(series, spec.time_unit)
        if fill is not None:
            values = np.where(miss, fill, values)
            miss = np.zeros(len(series), dtype=bool)
        edges = np.asarray(spec.levels)
        bad = ~miss & ~((values >= edges[0]) & (values <= edges[-1]))
        if bad.any():
            # only a value outside the public bounds is said or refused: a
            # private domain's edges end at its private cap, inside them
            lo, hi = spec.bounds or (-np.inf, np.inf)
            outside = (~miss & ~((values >= lo) & (values <= hi))).any()
            if not spec.clip and spec.fine is None:
                # name the column and the problem, never the value or row
                raise ValueError(
                    f"column {spec.name!r} has values outside the bin edges "
                    f"[{_public_text(spec, edges[0])}, "
                    f"{_public_text(spec, edges[-1])}] "
                    "(not shown: they are private)"
                )
            if not spec.clip and outside:
                raise ValueError(
                    f"column {spec.name!r} has values outside its bounds "
                    f"[{_public_text(spec, spec.bounds[0])}, "
                    f"{_public_text(spec, spec.bounds[1])}] "
                    "(not shown: they are private)"
                )
            if spec.clip == "warn" and (spec.bounds is None or outside):
                clipped.append(spec.name)
            values = np.where(miss, np.nan, np.clip(values, edges[0], edges[-1]))
        index = np.clip(
            np.searchsorted(edges, np.where(miss, edges[0], values), side="right") - 1,
            0,
            len(edges) - 2,
        )
    index = np.where(miss, -1, index)

    if spec.kind == "binary":
        return (index == 1).astype(np.uint8)[:, None]
    if spec.kind == "nominal" or spec.encoding == "onehot":
        width = spec.n_levels + (1 if spec.missing else 0)
        out = np.zeros((n, width), dtype=np.uint8)
        col = np.where(miss, spec.n_levels, index)
        out[np.arange(n), col] = 1
        return out
    # thermometer: bit i (i = 1..L-1) is 1[index >= i]; then the missing bit
    thresholds = np.arange(1, spec.n_levels)
    out = (index[:, None] >= thresholds[None, :]).astype(np.uint8)
    out[miss] = 0
    if spec.missing:
        out = np.hstack([out, miss.astype(np.uint8)[:, None]])
    return out


def _category_index(spec, series, miss):
    """Each row's level index (declared order), resolved once per distinct
    value: rows are grouped by (Python type, value), so that ``1``, ``1.0``
    and ``True`` -- equal for pandas' hashing -- are still told apart as
    :func:`_hashable` keys them. Unhashable values take the row loop."""
    lookup = {_hashable(v): i for i, v in enumerate(spec.levels)}
    series = pd.Series(series).reset_index(drop=True)
    try:
        if series.dtype == object:
            # mixed Python types are possible only here
            kinds, _ = pd.factorize(series.map(type), use_na_sentinel=False)
        else:
            kinds = np.zeros(len(series), dtype=np.int64)
        codes, _ = pd.factorize(series, use_na_sentinel=True)
    except TypeError:  # an unhashable value (a list): one row at a time
        groups = np.arange(len(series))
    else:
        groups = np.unique(
            (codes.astype(np.int64) + 1) * (int(kinds.max(initial=0)) + 1) + kinds,
            return_inverse=True,
        )[1].reshape(-1)
    n_groups = int(groups.max(initial=-1)) + 1
    # one representative row per group, among the rows that are not missing
    live = np.flatnonzero(~np.asarray(miss, dtype=bool))
    first = np.full(n_groups, -1, dtype=np.int64)
    first[groups[live][::-1]] = live[::-1]
    resolved = np.zeros(n_groups, dtype=int)
    unknown = False
    for g in np.flatnonzero(first >= 0):
        j = _level_of(spec, lookup, series.iloc[int(first[g])])
        if j is None:
            unknown = True
        else:
            resolved[g] = j
    if unknown:
        # neither the values nor how many there are: both are private
        raise ValueError(
            f"column {spec.name!r} has values that are not among its declared "
            f"{'levels' if spec.kind == 'ordinal' else 'categories'} "
            f"{[*spec.levels, None] if spec.missing else spec.levels} "
            "(not shown: they are private)"
        )
    index = resolved[groups] if len(series) else np.zeros(0, dtype=int)
    index[np.asarray(miss, dtype=bool)] = 0
    return index


def numeric_level(levels, v):
    """The index of the first of ``levels`` numerically equal to ``v``, both
    numbers and neither a bool (1 vs 1.0 vs np.int64, but True is not the
    level 1), or ``None``."""
    if not isinstance(v, numbers.Number) or _is_bool(v):
        return None
    return next(
        (
            k
            for k, c in enumerate(levels)
            if isinstance(c, numbers.Number) and not _is_bool(c) and c == v
        ),
        None,
    )


def _level_of(spec, lookup, v):
    """The index of value ``v`` among the levels, ``"other"``, or ``None``."""
    j = lookup.get(_hashable(v))
    if j is None:
        j = numeric_level(spec.levels, v)
    if j is None and spec.other:
        j = len(spec.levels) - 1
    return j
