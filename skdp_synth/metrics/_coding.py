"""Coding tables of mixed columns for total variation (the fidelity report's
and the ``kind="tv"`` scorer's one rule).

Declared categories, ordinal levels and bin edges fix a column's levels; a
numeric column with more than :data:`MAX_RAW_LEVELS` values is cut into
:data:`N_QUANTILE_BINS` bins at the *real* column's quantiles; dates and
times are numbers of seconds; other columns are compared value by value.
Missing values are a level of their own.
"""

from __future__ import annotations

import numpy as np

from .._datetime import is_time_dtype, to_units
from ._marginals import MAX_RAW_LEVELS, _tv_tables

#: The label of the missing level in the tables.
MISSING = "<missing>"


def catch_alls(source):
    """``{column: (kept levels, catch-all label)}`` of the columns whose
    levels ``source`` discovered privately, folding the rest into a
    catch-all (``"other"``): read from a fitted encoder, a pipeline's first
    one, or a :class:`~skdp_synth.Release`'s decoder (public: the release)."""
    specs = None
    if hasattr(source, "steps"):
        for _, step in source.steps[:-1]:
            if step not in (None, "passthrough"):
                specs = getattr(step, "specs_", None)
                break
    elif hasattr(source, "specs_"):
        specs = source.specs_
    elif callable(getattr(source, "decoder", None)):
        encoder = source.decoder()
        specs = getattr(encoder, "specs_", None)
    return {
        spec.name: (list(spec.levels[:-1]), spec.levels[-1])
        for spec in specs or ()
        if getattr(spec, "other", False)
    }


def catch_all_notes(real, rows, folds):
    """Notes on the columns of ``folds`` (:func:`catch_alls`): how many real
    levels the release did not discover, the share of real rows they hold,
    and the column's 1-way TV had those rows been scored as its catch-all.

    The scores stay raw: the synthetic rows do lack those levels, and
    folding the real ones by the release's own kept levels scored a release
    that found no level best. A hotel table's ``country`` (98 levels, 5
    found) read TV1 .246 with no word of why: the note says it."""
    import pandas as pd

    notes = []
    for col, (kept, other) in folds.items():
        if col not in real.columns or col not in rows.columns:
            continue
        values = real[col].astype(object)
        rare = values.notna() & ~values.isin(kept)
        if not rare.any():
            continue
        folded = values.where(~rare, other)

        def shares(v):
            return v.astype(str).where(v.notna(), MISSING).value_counts(normalize=True)

        a, b = shares(folded), shares(rows[col].astype(object))
        tv = 0.5 * float(
            pd.concat([a, b], axis=1).fillna(0.0).diff(axis=1).abs().sum().iloc[1]
        )
        notes.append(
            f"column {col!r}: {values[rare].nunique()} real levels "
            f"({100 * float(rare.mean()):.1f} % of the real rows) were not "
            f"discovered by the release, which gives such rows as {other!r}; "
            f"scored as {other!r}, the column's TV1 would be {tv:.3f}"
        )
    return notes


def _bin_labels(edges):
    e = [f"{x:g}" for x in edges]
    return [f"[{a}, {b})" for a, b in zip(e[:-2], e[1:-1])] + [f"[{e[-2]}, {e[-1]}]"]


def _discretize(real, synthetic, schema, times=()):
    """Integer codes of both tables on a common level list per column.

    Declared categories / ordinal levels / bin edges (the public schema,
    ``BooleanEncoder``'s arguments) fix the levels; other columns use the
    union of the values seen (noted). Missing values are a level of their own.
    """
    import pandas as pd

    cats = {**(schema.get("categories") or {}), **(schema.get("ordinal") or {})}
    edges = schema.get("bin_edges") or {}
    n, m = len(real), len(synthetic)
    cx = np.empty((n, real.shape[1]), dtype=np.int64)
    cy = np.empty((m, real.shape[1]), dtype=np.int64)
    levels, sizes, notes = {}, [], []
    for j, col in enumerate(real.columns):
        xs, ys = real[col], synthetic[col]
        miss_x, miss_y = xs.isna().to_numpy(), ys.isna().to_numpy()
        if col in cats:
            labs = [v for v in cats[col] if v is not None]
            cx[:, j] = _declared_codes(xs, labs, miss_x, col, "real")
            cy[:, j] = _declared_codes(ys, labs, miss_y, col, "synthetic")
        elif col in edges:
            e = np.asarray(edges[col], dtype=float)
            labs = _bin_labels(e)
            cx[:, j] = _bin_codes(xs, e, miss_x, col, "real")
            cy[:, j] = _bin_codes(ys, e, miss_y, col, "synthetic")
        elif (
            quantiles := _quantile_codes(xs, ys, miss_x, miss_y, col in times)
        ) is not None:
            cx[:, j], cy[:, j], labs = quantiles
            notes.append(
                f"column {col!r} is numeric without declared bin edges: its "
                f"tables use {len(labs)} bins at quantiles of the real column, "
                "and its KS statistic compares the values themselves"
            )
        else:
            both = pd.concat([xs.astype(object), ys.astype(object)], ignore_index=True)
            try:  # levels in their order, as the page says (not in the
                # order of appearance)
                codes, uniq = pd.factorize(both, use_na_sentinel=True, sort=True)
            except TypeError:  # levels that do not compare (mixed types)
                codes, uniq = pd.factorize(both, use_na_sentinel=True)
            cx[:, j], cy[:, j] = codes[:n], codes[n:]
            labs = list(uniq)
            if len(labs) > 20:
                notes.append(
                    f"column {col!r} has {len(labs)} distinct values and no declared "
                    "levels or bin edges: its TV compares raw values; declare "
                    "its levels (a category) or bin_edges (a number) in the schema"
                )
            elif schema:
                notes.append(f"levels of column {col!r} are those seen in the tables")
        if miss_x.any() or miss_y.any():
            cx[miss_x, j] = cy[miss_y, j] = len(labs)
            labs = [*labs, MISSING]
        levels[str(col)] = tuple(labs)
        sizes.append(max(len(labs), 1))
    return cx, cy, sizes, levels, notes


#: Numeric columns with more distinct values than ``MAX_RAW_LEVELS`` (20,
#: defined with the tables in ``_marginals``; no declared bins) are compared
#: on this many bins at the real column's quantiles.
N_QUANTILE_BINS = 10


def _quantile_codes(xs, ys, miss_x, miss_y, is_time=False):
    """``(real codes, synthetic codes, labels)`` of a numeric column on bins at
    the real column's quantiles, or ``None`` when the column is not numeric
    (or has at most ``MAX_RAW_LEVELS`` values: compared value by value).

    Edges are the real column's ``k / N_QUANTILE_BINS`` quantiles (ties
    merged), each moved down to the midpoint between the real values on
    its sides where it lies on one (:func:`_between_values`); synthetic
    values below the first or above the last edge fall in the end bins,
    whose labels are open (``< b``, ``>= a``).
    """
    import pandas as pd

    if not pd.api.types.is_numeric_dtype(xs) or pd.api.types.is_bool_dtype(xs):
        return None
    x = xs.to_numpy(dtype=float, na_value=np.nan)[~miss_x]
    if np.unique(x).size <= MAX_RAW_LEVELS:
        return None
    y = pd.to_numeric(ys, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    if np.any(np.isnan(y) & ~miss_y):
        return None  # synthetic cells that are not numbers: compared as values
    inner = np.unique(np.quantile(x, np.linspace(0, 1, N_QUANTILE_BINS + 1)[1:-1]))
    inner = _between_values(inner, np.unique(x))
    cx = np.searchsorted(
        inner, np.where(miss_x, 0.0, xs.to_numpy(float, na_value=0.0)), side="right"
    )
    cy = np.searchsorted(inner, np.where(miss_y, 0.0, y), side="right")
    e = _time_labels(inner) if is_time else [f"{v:.4g}" for v in inner]
    labs = [f"< {e[0]}"] + [f"[{a}, {b})" for a, b in zip(e[:-1], e[1:])]
    labs.append(f">= {e[-1]}")
    return cx.astype(np.int64), cy.astype(np.int64), labs


def _between_values(edges, values):
    """``edges`` that lie on a real value moved to the midpoint between it and
    the next smaller one. A quantile edge on a heap (a height recorded in
    whole inches: 34 distinct values) put every real row of the heap above
    it and the synthetic values placed around the heap on both sides, so the
    column read as the report's worst on binning alone; between two
    values, the edge splits no value."""
    values = np.asarray(values, dtype=float)
    at = np.searchsorted(values, edges, side="left")
    on = (at < values.size) & (values[np.minimum(at, values.size - 1)] == edges)
    on &= at > 0
    moved = np.array(edges, dtype=float)
    moved[on] = 0.5 * (values[at[on] - 1] + values[at[on]])
    return np.unique(moved)


def _declared_codes(values, labs, miss, col, which):
    import pandas as pd

    codes = pd.Categorical(values, categories=labs).codes.astype(np.int64)
    if np.any((codes < 0) & ~miss):
        raise ValueError(
            f"column {col!r} of the {which} table has values that are not among "
            f"its declared levels {labs} (not shown: they may be private)"
        )
    return codes


def _bin_codes(values, e, miss, col, which):
    import pandas as pd

    try:
        v = pd.to_numeric(values).to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"column {col!r} of the {which} table has bin_edges but non-numeric values"
        ) from None
    ok = ~miss
    if np.any(ok & ((v < e[0]) | (v > e[-1]))):
        raise ValueError(
            f"column {col!r} of the {which} table has values outside its bin "
            f"edges [{e[0]:g}, {e[-1]:g}] (not shown: they may be private)"
        )
    codes = np.searchsorted(e, np.where(ok, v, e[0]), side="right") - 1
    return np.minimum(codes, len(e) - 2)  # the last bin is closed


def _time_labels(seconds):
    """Bin edges of a date/time column (seconds since 1970, UTC) as dates,
    or dates and times where an edge is not at midnight."""
    import pandas as pd

    stamps = pd.to_datetime(np.round(np.asarray(seconds, dtype=float)), unit="s")
    if (stamps == stamps.normalize()).all():
        return [str(t.date()) for t in stamps]
    return [str(t) for t in stamps]


def _times_as_seconds(real, synthetic):
    """Date/time and duration columns of ``real`` (and the same columns of
    ``synthetic``) as seconds since 1970-01-01 UTC, or of the duration: they
    are then scored as numeric columns (KS, quantile bins, correlations)."""
    import pandas as pd

    times = [c for c in real.columns if is_time_dtype(real[c].dtype)]
    if not times:
        return real, synthetic
    real, synthetic = real.copy(), synthetic.copy()
    for c in times:
        dtype = real[c].dtype
        real[c] = to_units(real[c], dtype, "s")
        ys = synthetic[c]
        if not is_time_dtype(ys.dtype):  # e.g. strings read back from a CSV
            convert = pd.to_timedelta if dtype.kind == "m" else pd.to_datetime
            ys = convert(ys)
        synthetic[c] = to_units(ys, ys.dtype, "s")
    return real, synthetic


def _time_edges_as_seconds(schema, real):
    """Declared ``bin_edges`` of date/time columns (dates, ISO strings) in
    seconds, as :func:`_times_as_seconds` scores their values."""
    edges = schema.get("bin_edges") or {}
    times = {
        c: to_units(list(e), real[c].dtype, "s").tolist()
        for c, e in edges.items()
        if c in real.columns and is_time_dtype(real[c].dtype)
    }
    if not times:
        return schema
    return {**schema, "bin_edges": {**edges, **times}}


def _average_tvs(cx, cy, sizes, ds):
    w = np.full(cx.shape[0], 1.0 / cx.shape[0])
    v = np.full(cy.shape[0], 1.0 / cy.shape[0])
    out = {}
    for k in ds:
        total = 0.0
        tables = _tv_tables(cx, cy, sizes, k, w, v)
        for _, t in tables:
            total += t
        out[f"TV{k}"] = total / len(tables)
    return out
