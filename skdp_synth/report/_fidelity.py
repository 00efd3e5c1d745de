"""The fidelity report's scores: real against synthetic tables, column by column.

**A report reads the real data: it is not private.** It is for the data
owner deciding whether to publish a release, never for publication next to
it.

:func:`fidelity_report` compares a real (or held-out) table with a synthetic
one -- or with rows drawn from a fitted estimator, pipeline or
:class:`~skdp_synth.Release` -- column by column and pair by pair, and states
what the release is covered by. It follows sdmetrics' ``QualityReport``
conventions: two properties, *Column Shapes* (1-way tables) and *Column Pair
Trends* (2-way tables), each table scored ``1 - TV`` in ``[0, 1]`` (sdmetrics'
``TVComplement`` and ``ContingencySimilarity``), a property's score the mean of
its tables' scores, and the overall score the mean of the properties'.
``TV = 1/2 sum_cells |p_real - p_syn|`` is computed by the same routine as
``marginal_error(kind="tv")`` (:func:`skdp_synth.metrics.marginal_tv`), so the
report's averages are exactly that metric's values.

Given an estimator the report uses only its public interface: ``sample()``,
the public guarantee attributes (``privacy_guarantee_``,
``privacy_summary_``) and ``to_release()``. It never reads private state nor
the attributes that are marked not private.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from skdp_synth.report import fidelity_report
>>> rng = np.random.default_rng(0)
>>> real = pd.DataFrame({"colour": rng.choice(["red", "blue"], 500),
...                      "size": rng.choice(["S", "M", "L"], 500)})
>>> syn = real.sample(500, replace=True, random_state=1)
>>> rep = fidelity_report(real, syn)
>>> {k: round(v, 3) for k, v in rep.properties.items()}   # 1 - average TV
{'Column Shapes': 0.981, 'Column Pair Trends': 0.97}
>>> rep.guarantee.kind                   # rows given without an estimator
'unknown'
>>> rep.to_frame().columns.tolist()
['property', 'columns', 'metric', 'tv', 'score']
"""

from __future__ import annotations

import numbers
import warnings
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from ..exceptions import PrivacyBudgetWarning, PrivacyLeakWarning
from ..metrics._coding import (
    _average_tvs,
    _discretize,
    _time_edges_as_seconds,
    _times_as_seconds,
    catch_all_notes,
    catch_alls,
)
from ..metrics._marginals import _table_tv, _tv_tables
from ..preprocessing._boolean_encoder import SCHEMA_KEYS
from ._columns import column_views
from ._guarantee import _guarantee_of
from ._model import train_synthetic_test_real
from ._report import PROPERTIES, FidelityReport, TableComparison
from ._verdict import (
    REFERENCE_SEED,
    Reference,
    alerts,
    check_rules,
    independent_columns,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    import pandas as pd

__all__ = ["fidelity_report"]


def _check_schema(schema):
    if schema is None:
        return {}
    if not isinstance(schema, dict):
        raise TypeError(
            f"schema must be a dict of BooleanEncoder arguments, got {schema!r}"
        )
    unknown = set(schema) - SCHEMA_KEYS
    if unknown:
        raise ValueError(
            f"unknown schema keys {sorted(unknown)}; allowed: {sorted(SCHEMA_KEYS)}"
        )
    return schema


def _format_warning(w):
    if isinstance(w, str):
        return w
    category = getattr(w, "category", type(getattr(w, "message", w)))
    message = getattr(w, "message", w)
    return f"{category.__name__}: {message}"


def fidelity_report(
    real: pd.DataFrame,
    synthetic: Any,
    schema: Mapping[str, Any] | None = None,
    *,
    d: int | Sequence[int] = (1, 2),
    release: Any = None,
    n_samples: int | None = None,
    random_state: int | np.random.RandomState | np.random.Generator | None = None,
    n_worst: int = 5,
    extra_warnings: Iterable[str | warnings.WarningMessage] = (),
    held_out: bool | None = None,
    target: Any = None,
    real_train: pd.DataFrame | None = None,
    rules: Any = None,
) -> FidelityReport:
    """Compare synthetic rows with a real table; read the release's guarantee.

    **Not private**: the result is computed from ``real``.

    Parameters
    ----------
    real : DataFrame
        The real table (or a held-out part of it): categorical, Boolean,
        ordinal or binned numeric columns.
    synthetic : DataFrame, array, fitted estimator/pipeline, or Release
        Synthetic rows with ``real``'s columns, or something to draw them
        from with ``sample(n_samples, random_state=random_state)``: a fitted
        estimator or pipeline (its guarantee is read from its public
        attributes and ``to_release()``) or a :class:`~skdp_synth.Release`
        whose rows have ``real``'s columns.
    schema : dict, default=None
        The public domain, as the ``BooleanEncoder`` arguments the CLI's
        schema file holds: ``categories`` and ``ordinal`` fix the levels of a
        column, ``bin_edges`` bins a numeric one (``[e_{i-1}, e_i)``, the last
        bin closed, as the encoder does). Other columns are compared on the
        values seen in either table. Other keys are accepted and ignored.
    d : int or tuple of int, default=(1, 2)
        Table degrees: 1 (Column Shapes), 2 (Column Pair Trends), 3
        (summary of the 3-way tables).
    release : estimator, pipeline or Release, default=None
        Where to read the guarantee when ``synthetic`` is rows.
    n_samples : int, default=None
        Rows to draw from an estimator or release; ``len(real)`` by default.
    random_state : int, RandomState or None, default=None
        Passed to ``sample``.
    n_worst : int, default=5
        Worst tables kept per degree, with their cells.
    extra_warnings : iterable of str or warnings.WarningMessage, default=()
        Warnings recorded elsewhere (e.g. while fitting) to list in the report.
    held_out : bool or None, default=None
        Whether ``real`` was held out of the fit (``True``), is the table the
        synthesizer was fitted on (``False``) or is not stated (``None``).
        Recorded and said on the page: scores on the fitted rows are
        in-sample and flatter the synthesizer. With ``True`` the report also
        scores real rows as a reference (``references``): a second real
        sample, the sampling floor.
    target : column name, default=None
        Also train a model predicting ``target`` on the synthetic rows and
        score it on ``real`` (:func:`train_synthetic_test_real`):
        ``model`` holds the result and the page says it.
    real_train : DataFrame, default=None
        With ``target``: the real rows the synthesizer was fitted on, for
        the like-for-like reference (the same model trained on them);
        without them the reference is trained on half of ``real``. Also
        the source of the references: independent columns are drawn from
        their 1-way tables, and (``held_out=True``) a sample of them is the
        second real sample (else: half of ``real`` against the other half).

    rules : sequence of rules or RuleSet, default=None
        Declared rules (:mod:`skdp_synth.rules`) to test on the rows: a
        rule some synthetic rows break is an alert with the share of
        synthetic rows breaking it; the share of real rows breaking it is
        given beside, as information (``FidelityReport.rule_checks``). By
        default the rules of a fitted pipeline given as ``synthetic`` or
        ``release`` (its public ``rules_``), else none.

    The report's ``references`` put ``FidelityReport.score`` in context
    and its ``alerts`` list what the synthetic rows got wrong
    (``skdp_synth.report._verdict``, thresholds included).

    Returns
    -------
    FidelityReport
    """
    import pandas as pd

    from ..validation import as_pandas

    # polars frames and pyarrow tables: their pandas twins
    real, synthetic = as_pandas(real), as_pandas(synthetic)
    real_train = None if real_train is None else as_pandas(real_train)
    if not isinstance(real, pd.DataFrame):
        raise TypeError("real must be a pandas DataFrame (the table's columns named)")
    if len(real) == 0 or real.shape[1] == 0:
        raise ValueError("real has no rows or no columns")
    ds = (d,) if isinstance(d, numbers.Integral) else tuple(d)
    if not ds or any(
        isinstance(k, bool) or not isinstance(k, numbers.Integral) or k not in (1, 2, 3)
        for k in ds
    ):
        raise ValueError(f"d must be 1, 2, 3 or a tuple of them, got {d!r}")
    ds = tuple(sorted({int(k) for k in ds if k <= real.shape[1]}))
    schema = _check_schema(schema)
    recorded = [_format_warning(w) for w in extra_warnings]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if hasattr(synthetic, "sample") and not isinstance(synthetic, pd.DataFrame):
            source = synthetic
            n = len(real) if n_samples is None else n_samples
            rows = synthetic.sample(n, random_state=random_state)
        else:
            source, rows = release, synthetic
        guarantee = _guarantee_of(source)
    for w in caught:
        if issubclass(w.category, PrivacyLeakWarning | PrivacyBudgetWarning):
            recorded.append(_format_warning(w))
        else:  # not ours to swallow
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    rows = _as_frame(rows, real)
    if len(rows) == 0:
        # 1/len(rows) below (else a ZeroDivisionError traceback from the CLI)
        raise ValueError("synthetic has no rows")
    # the real levels the release gives as its "other": said in a note
    folds = catch_alls(source) if source is not None else {}
    fold_notes = catch_all_notes(real, rows, folds)
    model = None
    if target is not None:
        if target not in real.columns:
            raise ValueError(f"target {target!r} is not a column of real")
        scores = train_synthetic_test_real(rows, real, target, real_train=real_train)
        model = MappingProxyType({**scores, "target": str(target)})
    if rules is None and source is not None:
        from ..rules import RuleSet

        rules = getattr(source, "rules_", None)  # a pipeline's: public
        if not isinstance(rules, RuleSet):
            rules = None
    checks = check_rules(rules, real, rows)
    found = alerts(real, rows, schema, folds, model, rules, checks)
    schema_s = _time_edges_as_seconds(schema, real)
    times = [c for c in real.columns if pd.api.types.is_datetime64_any_dtype(real[c])]
    references = _references(real, len(rows), schema_s, times, ds, held_out, real_train)
    schema = schema_s
    real, rows = _times_as_seconds(real, rows)
    views = column_views(real, rows, schema, times)
    cx, cy, sizes, levels, notes = _discretize(real, rows, schema, times)
    notes = fold_notes + list(notes)
    w = np.full(len(real), 1.0 / len(real))
    v = np.full(len(rows), 1.0 / len(rows))
    names = tuple(str(c) for c in real.columns)
    tv, worst = {}, {}
    for k in ds:
        tables = _tv_tables(cx, cy, sizes, k, w, v)
        tv[k] = tuple((tuple(names[j] for j in cols), t) for cols, t in tables)
        order = sorted(range(len(tables)), key=lambda i: -tables[i][1])[:n_worst]
        worst[k] = tuple(
            _comparison(cx, cy, tables[i][0], sizes, w, v, names, levels) for i in order
        )
    ks = _ks_statistics(real, rows, schema)
    return FidelityReport(
        columns=names,
        levels=MappingProxyType(levels),
        n_real=len(real),
        n_synthetic=len(rows),
        tv=MappingProxyType(tv),
        worst=MappingProxyType(worst),
        guarantee=guarantee,
        privacy_warnings=tuple(recorded),
        notes=tuple(notes),
        ks=MappingProxyType(ks),
        held_out=None if held_out is None else bool(held_out),
        model=model,
        alerts=found,
        references=references,
        column_views=views,
        rule_checks=checks,
    )


def _properties(real, other, schema, times, ds, noise=1.0):
    """``{property: score}`` of ``other`` against ``real``, as the report's;
    each average TV multiplied by ``noise`` first (a number, or a mapping
    ``{degree: factor}``, 1 for a degree it leaves out)."""
    real, other = _times_as_seconds(real, other)
    cx, cy, sizes, _, _ = _discretize(real, other, schema, times)
    tvs = _average_tvs(cx, cy, sizes, ds)
    if not isinstance(noise, dict):
        noise = dict.fromkeys(ds, noise)
    return {PROPERTIES[d]: 1.0 - noise.get(d, 1.0) * tvs[f"TV{d}"] for d in ds}


def _reference(name, real, other, schema, times, ds, description, noise=1.0, **rows):
    """A :class:`Reference`: ``other`` scored against ``real``; ``rows``
    says which real rows each was (``drawn_from``, ``scored_on``)."""
    props = _properties(real, other, schema, times, ds, noise)
    return Reference(
        name=name,
        score=float(np.mean(list(props.values()))),
        properties=MappingProxyType(props),
        n_rows=len(other),
        description=description,
        n_scored=len(real),
        **rows,
    )


def _noise_scale(n_real, n_rows, a, b):
    """How much smaller the sampling noise of a table's TV is between
    ``n_real`` and ``n_rows`` rows than between ``a`` and ``b``: a share's
    standard error goes as ``sqrt(1/a + 1/b)``. On tables drawn from one
    distribution it put the scaled score of two halves of 400 rows within
    0.02 of a perfect synthesizer's (1,600 rows against the 400)."""
    return float(np.sqrt((1 / n_real + 1 / n_rows) / (1 / a + 1 / b)))


def _split_noise_scale(n_real, n_rows, a, b):
    """The noise scale of independent columns drawn (``n_rows`` rows) from
    ``a`` rows and scored against ``b`` others, to ``n_rows`` rows scored
    against ``n_real``: ``sqrt((1/n_real + 1/n_rows) / (1/a + 1/n_rows +
    1/b))``, the draw's own noise counted on both sides. It applies to the
    1-way tables only: theirs are the source rows' own 1-way tables, so
    their TV is sampling noise alone; a pair's TV holds the relation the
    draw loses, which no scale may shrink. On ``_mixed(2000)`` of
    ``tests/test_report.py`` the scaled Column Shapes score (0.964) met
    that of independent columns drawn from 2,000 fresh rows (0.963-0.964,
    three seeds); unscaled it was 0.943."""
    return float(np.sqrt((1 / n_real + 1 / n_rows) / (1 / a + 1 / n_rows + 1 / b)))


#: Held-out rows below this are not split in two for the references.
MIN_SPLIT_ROWS = 20


def _halves(real):
    """Two disjoint halves of ``real`` (a seeded permutation): the rows a
    reference is drawn from, and those it is scored on."""
    n = len(real)
    order = np.random.default_rng(REFERENCE_SEED).permutation(n)
    return real.iloc[order[: n // 2]], real.iloc[order[n // 2 :]]


_INDEPENDENT = (
    "rows whose columns are drawn one by one from the 1-way tables of {src} "
    "(seeded) and scored against {dst}: each column's shape kept, every "
    "relation between columns lost. A synthesizer scoring no higher learned "
    "nothing the tables measure beyond the single columns"
)


def _references(real, n_rows, schema, times, ds, held_out, real_train):
    """The scores the synthetic rows' score is read against: independent
    columns always; real rows when ``real`` was held out of the fit.

    No reference scores the rows it was drawn from where the real rows were
    held out: drawn from ``real_train`` when given, else from one half of
    the held-out rows and scored against the other half (independent
    columns drawn from the rows they are scored against match those rows'
    own sampling noise, a score no synthesizer fitted elsewhere can reach).
    Without held-out rows nor ``real_train`` the independent columns are
    drawn from the scored rows, in-sample as the synthetic rows' score then
    is, and say so."""
    n = len(real)
    cols = list(real.columns)
    split = held_out and real_train is None and n >= MIN_SPLIT_ROWS
    halves = _halves(real) if split else None
    if real_train is not None:
        drawn, scored = real_train[cols], real
        src = "the real rows the synthesizer was fitted on (real_train)"
        dst = (
            f"the held-out real rows ({n:,})"
            if held_out
            else f"the real rows given (real, {n:,})"
        )
        note = ""
    elif split:
        (drawn, scored) = halves
        src = f"one half of the held-out real rows ({len(drawn):,})"
        dst = f"the other half ({len(scored):,})"
        note = (
            ": its pairs' TVs carry the sampling noise of two halves, so with "
            "few held-out rows it reads low (on births14, 0.84 from halves of "
            "200 held-out rows against 0.89 drawn from the 800 fitted ones). "
            "Give the fitted rows, real_train, to draw from them and score "
            "against every held-out row"
        )
    else:
        drawn, scored = real, real
        src = dst = "the real rows given (real)"
        note = (
            ": drawn from the rows it is scored against, which flatters it "
            f"(too few held-out rows to split, under {MIN_SPLIT_ROWS}; give "
            "the fitted rows, real_train, to draw from them instead)"
            if held_out
            else ": in-sample, drawn from the rows it is scored against, as "
            "the synthetic rows' score is when the synthesizer was fitted on "
            "them (give held-out rows, held_out=True, or the fitted rows, "
            "real_train, for a reference drawn from other rows)"
        )
    noise = 1.0
    if split:
        scale = _split_noise_scale(n, n_rows, len(drawn), len(scored))
        noise = {1: scale}
        note += (
            f"; its 1-way TVs are scaled to the sampling noise of {n:,} real "
            f"against {n_rows:,} synthetic rows (x {scale:.2f}), its pairs' "
            "are not"
        )
    out = [
        _reference(
            "independent columns",
            scored,
            independent_columns(drawn, n_rows, REFERENCE_SEED),
            schema,
            times,
            ds,
            f"{n_rows:,} " + _INDEPENDENT.format(src=src, dst=dst) + note,
            noise,
            drawn_from=src,
            scored_on=dst,
        )
    ]
    if not held_out:
        return tuple(out)
    if real_train is not None:
        k = min(n_rows, len(real_train))
        other = real_train[cols].sample(k, random_state=REFERENCE_SEED)
        out.append(
            _reference(
                "real rows",
                real,
                other,
                schema,
                times,
                ds,
                f"{k:,} of the real rows the synthesizer was fitted on, scored "
                "against the held-out ones: two real samples differ by "
                "sampling noise alone, so this is about the best a synthesizer "
                "can be expected to reach",
                _noise_scale(n, n_rows, n, k),
                drawn_from=f"{k:,} of the real rows the synthesizer was fitted "
                "on (real_train)",
                scored_on=f"the held-out real rows ({n:,})",
            )
        )
    elif split:
        a, b = halves
        out.append(
            _reference(
                "real rows",
                a,
                b,
                schema,
                times,
                ds,
                f"half of the held-out real rows scored against the other half, "
                "each average TV scaled to the sampling noise of "
                f"{n:,} real against {n_rows:,} synthetic rows (x "
                f"{_noise_scale(n, n_rows, len(a), len(b)):.2f}): two real "
                "samples differ by sampling noise alone, so this is about the "
                "best a synthesizer can be expected to reach",
                _noise_scale(n, n_rows, len(a), len(b)),
                drawn_from=f"the other half of the held-out real rows ({len(b):,})",
                scored_on=f"one half of the held-out real rows ({len(a):,})",
            )
        )
    return tuple(out)


def _ks_statistics(real, synthetic, schema):
    """KS statistic of each numeric column without declared levels or bins."""
    import pandas as pd
    from scipy.stats import ks_2samp

    declared = {
        *(schema.get("categories") or {}),
        *(schema.get("ordinal") or {}),
        *(schema.get("bin_edges") or {}),
    }
    out = {}
    for col in real.columns:
        if col in declared:
            continue
        xs = pd.to_numeric(real[col], errors="coerce")
        ys = pd.to_numeric(synthetic[col], errors="coerce")
        numeric = (
            pd.api.types.is_numeric_dtype(real[col])
            and not pd.api.types.is_bool_dtype(real[col])
            and ys.notna().sum() == synthetic[col].notna().sum()
        )
        x, y = xs.dropna().to_numpy(float), ys.dropna().to_numpy(float)
        if numeric and len(x) and len(y):
            # the statistic only; "asymp" skips the costly exact p-value
            out[str(col)] = float(ks_2samp(x, y, method="asymp").statistic)
    return out


def _as_frame(rows, real):
    import pandas as pd

    if isinstance(rows, pd.DataFrame):
        missing = [c for c in real.columns if c not in rows.columns]
        if missing:
            raise ValueError(
                f"the synthetic rows lack the real table's columns {missing}"
            )
        return rows[list(real.columns)]
    arr = np.asarray(rows)
    if arr.ndim != 2 or arr.shape[1] != real.shape[1]:
        raise ValueError(
            f"the synthetic rows have shape {arr.shape}, the real table "
            f"{real.shape[1]} columns; pass rows in the real table's schema (a "
            "pipeline decodes its samples; a bare estimator's need encoded real rows)"
        )
    if len(arr) == 0:
        raise ValueError("no synthetic rows")
    return pd.DataFrame(arr, columns=real.columns)


def _comparison(cx, cy, cols, sizes, w, v, names, levels):
    tv, px, py, cells = _table_tv(cx, cy, cols, sizes, w, v)
    labs = [levels[names[j]] for j in cols]
    keep = np.flatnonzero((px > 0) | (py > 0))
    if len(cols) == 1:  # bars: every level, in order
        keep = np.arange(len(px))
    if cells is None:
        idx = np.unravel_index(keep, [sizes[j] for j in cols])
        lab = [
            tuple(labs[a][i[r]] for a, i in enumerate(idx)) for r in range(len(keep))
        ]
    else:
        lab = [tuple(labs[a][c] for a, c in enumerate(cells[r])) for r in keep]
    return TableComparison(
        columns=tuple(names[j] for j in cols),
        tv=tv,
        cells=tuple(lab),
        real=tuple(float(x) for x in px[keep]),
        synthetic=tuple(float(x) for x in py[keep]),
    )
