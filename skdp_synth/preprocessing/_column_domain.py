"""One column's domain: declared by the user, or learned privately.

A :class:`BooleanEncoder` needs every column's domain -- its categories,
level order or numeric bins, and whether it can be missing -- before it can
lay out bits. This module decides it, per column, from three sources:

* **declared** (``categories=``, ``ordinal=``, ``bin_edges=``, both sides of
  ``bounds=``, ``missing=``): public, free, and a contract the data must keep
  (:meth:`_ColumnDomainMixin._column_spec`,
  :meth:`_ColumnDomainMixin._check_declared_contract`; a refusal names the
  column, never a value);
* **learned privately** (``epsilon``, ``delta``):
  :meth:`_ColumnDomainMixin._private_spec`, with the mechanisms of
  ``_numeric_domain``;
* **learned without privacy** (no budget): from the data, flagged as
  ``inferred_`` (``fit`` warns).

Privacy of the learned domains (``doc/privacy.md``, "Private domains"). The
columns that need a budget, and its split, are a function of the parameters
and the schema (names, dtypes) only, fixed before any value is read
(:meth:`_ColumnDomainMixin._private_columns`,
:meth:`_ColumnDomainMixin._domain_budget`). Each record is in every column,
so the columns' mechanisms compose sequentially (:cite:`Boedihardjo2024`
Lemma 2.5): ``epsilon`` is split equally over the paid columns; the
columns whose levels are discovered spend their shares and all of ``delta``
together in one joint Gaussian partition selection (:cite:`Wilson2020`,
:cite:`Desfontaines2022`; ``_level_selection``), or, with
``level_selection="laplace"``, each its share and an equal share of
``delta``; a Boolean dtype's levels ``[False, True]`` are public and cost
nothing. Every histogram counts each row in one cell: sensitivity ``1``
under add/remove-one, ``2`` under replace-one (two cells move by one); the
joint selection's L2 sensitivity is ``√c`` (``√(2c)``) for ``c`` columns. A
numeric column gets PrivTree bins and a Laplace fine histogram
(:cite:`Zhang2016` §3.2, Algorithm 2; ``privtree_histogram``), a categorical
one its frequent levels by the joint selection or the stability-based
histogram (:cite:`Korolova2009`, :cite:`Vadhan2017` Proposition 3.5;
``stable_levels``). A column's missing level reads no
value: declared by ``missing=``, else given to every column whose dtype can
hold a missing value (``can_hold_missing``), so the release measures its
share. What follows from those outputs (coarse bins, split heaps,
``"other"``) is post-processing.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from .._datetime import (
    UNITS,
    calendar_cuts,
    is_date_dtype,
    is_day_dtype,
    is_duration_dtype,
    is_time_dtype,
    keep_axis,
    to_units,
)
from ..validation import check_finite_width
from ._coarse_bins import coarse_edges, split_heavy_leaves
from ._column_spec import (
    OTHER_LABEL,
    _bit_names,
    _ColumnSpec,
    _hashable,
    _is_missing,
    _is_missing_scalar,
    _numbers,
    _public_text,
    can_hold_missing,
)
from ._domain_warnings import _DomainWarningsMixin
from ._floor_parts import cut_floor_cells
from ._level_selection import (
    gaussian_selection_params,
    level_counts,
    select_column_levels,
    select_levels,
    stable_levels,
)
from ._numeric_domain import ROOT, privtree_histogram
from ._wide_leaves import cut_bins, cut_tail_leaves, split_wide_leaves


class _ColumnDomainMixin(_DomainWarningsMixin):
    """The column domains of :class:`BooleanEncoder` (see the module): what
    its parameters declare, what is learned privately and with which share
    of the budget, and each column's :class:`_ColumnSpec`. Reads the
    encoder's parameters only; sets no attribute."""

    # ----------------------------------------- the parameters, per column
    def _missing_map(self):
        return self.missing if isinstance(self.missing, dict) else {}

    def _unit_map(self):
        return self.datetime_unit if isinstance(self.datetime_unit, dict) else {}

    def _unit(self, col, dtype):
        """The unit a time column is counted in; ``None`` for other columns."""
        if not is_time_dtype(dtype):
            return None
        if is_day_dtype(dtype):  # calendar days only: no time of day
            return "D"
        return self._unit_map().get(
            col, "s" if self._unit_map() else self.datetime_unit
        )

    def _check_units(self, dtypes):
        """``datetime_unit`` as a dict names time columns with known units
        (the schema only: public)."""
        for col, unit in self._unit_map().items():
            if unit not in UNITS:
                raise ValueError(
                    f"datetime_unit[{col!r}] must be one of {list(UNITS)}, got {unit!r}"
                )
            if not is_time_dtype(dtypes[col]):
                raise ValueError(
                    f"datetime_unit names column {col!r}, whose dtype "
                    f"{dtypes[col]} is not a date/time or duration"
                )
            if is_day_dtype(dtypes[col]) and unit != "D":
                raise ValueError(
                    f"datetime_unit names column {col!r}, whose dtype "
                    f"{dtypes[col]} holds calendar days: its unit is 'D'"
                )

    def _bounds(self, col, dtype):
        """``(lo, hi)`` of ``bounds[col]``; a side given as ``None`` is
        infinite (one-sided bounds: that end is learned privately)."""
        declared = self.bounds[col]
        try:
            lo, hi = declared
        except (TypeError, ValueError):
            raise ValueError(
                f"bounds[{col!r}] must be a pair (lo, hi); None for a side "
                "learned privately"
            ) from None
        sides = [v for v in (lo, hi) if v is not None]
        numbers = iter(self._public_numbers(col, dtype, sides))
        lo = -np.inf if lo is None else next(numbers)
        hi = np.inf if hi is None else next(numbers)
        return _check_bounds(col, (lo, hi))

    def _root_cuts(self, col, dtype):
        """Public cuts of a private numeric domain's depth-0 cells: a
        date/time column's calendar in its unit (``_datetime.calendar_cuts``);
        ``None`` for other columns (durations included: their lengths are
        magnitudes, the log grid's case). The unit and the dtype only."""
        unit = self._unit(col, dtype)
        if unit is None or not is_date_dtype(dtype):
            return None
        return calendar_cuts(unit)

    def _keep_axis(self, col, dtype):
        """A date/time column's ``(origin, span, cuts)`` of its domain's
        keep rules' coordinate and calendar, in its unit
        (``_datetime.keep_axis``); ``None``
        for other columns. The unit and the dtype only."""
        unit = self._unit(col, dtype)
        if unit is None or not is_date_dtype(dtype):
            return None
        return keep_axis(unit)

    def _public_numbers(self, col, dtype, values):
        """Declared bounds or bin edges of a column as numbers: dates and
        durations of a time column in its unit."""
        unit = self._unit(col, dtype)
        if unit is None:
            _check_exact_in_float(col, values)
            return values
        plain = [
            v
            for v in values
            if isinstance(v, numbers.Number | np.number)
            and not isinstance(v, np.datetime64 | np.timedelta64)
        ]
        if plain:
            # pandas reads a bare number as nanoseconds: (0, 3600) as bounds
            # of a duration clipped every row to 0 seconds, and epoch seconds
            # of a date crashed deep in the bins
            kind = "durations" if is_duration_dtype(dtype) else "dates"
            example = "'90 min'" if kind == "durations" else "'2020-01-31'"
            raise ValueError(
                f"the declared bounds or bin edges of time column {col!r} are "
                f"{kind} ({example}), not numbers: a bare number has no unit"
            )
        try:
            return to_units(list(values), dtype, unit).tolist()
        except (pd.errors.OutOfBoundsDatetime, OverflowError):
            raise ValueError(
                f"the declared bounds or bin edges of time column {col!r} reach "
                "past the dates and durations pandas holds; declare them inside"
            ) from None

    # ------------------------- which columns are paid for, and how much
    def _private_columns(self, columns, dtypes):
        """``{column: "numeric" | "levels" | "bool"}`` whose domain is learned
        privately. A function of the parameters and the schema (names,
        dtypes) only: public."""
        if self.epsilon is None:
            return {}
        declared = set(self.categories or {}) | set(self.ordinal or {})
        declared |= set(self.bin_edges or {})
        out = {}
        for col, dt in zip(columns, dtypes):
            if col in declared:
                continue
            if pd.api.types.is_bool_dtype(dt):
                # {False, True} is public (the dtype) and costs nothing, also
                # when no other column needs a budget and a pipeline left
                # epsilon="auto" unresolved: it was learned as a numeric
                # range from the data, with a PrivacyLeakWarning
                out[col] = "bool"
            elif self.epsilon == "auto":
                continue
            elif isinstance(dt, pd.CategoricalDtype) and dt.ordered:
                continue  # level order from the dtype: learned as before
            elif pd.api.types.is_numeric_dtype(dt) or is_time_dtype(dt):
                out[col] = "numeric"
            elif self.delta > 0:
                out[col] = "levels"
        return out

    def _private_probe(self, X, delta=None):
        columns, dtypes = getattr(X, "columns", None), getattr(X, "dtypes", None)
        if (columns is None or dtypes is None) and isinstance(X, np.ndarray):
            # an array's schema is its shape and one dtype (public): ``fit``
            # sees the same columns 0..p-1 and dtypes (``_as_frame``), so an
            # array gets the private domains a DataFrame of that dtype gets.
            # A list is not probed: its dtype would be inferred from values.
            if X.ndim != 2:
                return []
            columns, dtypes = range(X.shape[1]), [X.dtype] * X.shape[1]
        if columns is None or dtypes is None:
            return []
        probe = self._private_columns.__func__(_Probe(self, delta), columns, dtypes)
        return list(probe.values())

    def _needs_budget(self, X, delta=None):
        """Whether fitting on ``X`` with a budget would learn a domain
        privately: a function of the parameters and ``X``'s schema only.
        ``delta``: the δ the encoder would get (``None``: its own, or any
        when it has ``"auto"``); without one no level is discovered."""
        return any(how != "bool" for how in self._private_probe(X, delta))

    def _n_paid_columns(self, X, delta=None):
        """How many columns of ``X`` would have a domain learned with a share
        of the budget (numeric bins, level discovery): the parameters and
        ``X``'s schema only."""
        return sum(how != "bool" for how in self._private_probe(X, delta))

    def _needs_delta(self, X, delta=None):
        """Whether that budget needs a ``δ``: only the level discovery of an
        undeclared categorical column does (numeric domains are pure ``ε``).
        A function of the parameters and ``X``'s schema only."""
        return "levels" in self._private_probe(X, delta)

    def _domain_budget(self, private):
        """``(paid, n_levels, eps_col, delta_col, sens)`` for the columns
        ``private`` learns (:meth:`_private_columns`): the columns paid for
        (all but Boolean ones), how many discover levels, each paid column's
        ``epsilon`` and each level discovery's ``delta`` (equal shares;
        sequential composition, see the module) and the histograms'
        sensitivity under the neighbouring relation. Public: the parameters
        and the schema only. With ``level_selection="gaussian"`` the level
        columns' shares are spent together (:meth:`_levels_budget`)."""
        paid = [c for c, how in private.items() if how != "bool"]
        n_levels = sum(how == "levels" for how in private.values())
        eps_col = self.epsilon / len(paid) if paid else 0.0
        delta_col = self.delta / n_levels if n_levels else 0.0
        sens = 2.0 if self.neighbouring == "replace-one" else 1.0
        return paid, n_levels, eps_col, delta_col, sens

    def _levels_budget(self, private):
        """``(columns, epsilon, delta)`` of the joint Gaussian level selection
        (``level_selection="gaussian"``): the level-discovering columns in
        the schema's order, the sum of their equal shares of ``epsilon``
        (``c ε_D / k`` for ``c`` of the ``k`` paid columns; each numeric
        column keeps its ``ε_D / k``) and all of ``delta`` (numeric domains
        are pure ``ε``): ``(ε_D, δ_D)`` in all by sequential composition.
        ``None`` with ``"laplace"`` or no such column. Public: the
        parameters and the schema only."""
        columns = [c for c, how in private.items() if how == "levels"]
        if self.level_selection != "gaussian" or not columns:
            return None
        paid = sum(how != "bool" for how in private.values())
        return columns, self.epsilon * len(columns) / paid, float(self.delta)

    def _select_private_levels(self, df, private, source, weights=None):
        """``{column: released levels}`` of every level-discovering column,
        by one joint Gaussian partition selection (:cite:`Wilson2020`;
        ``_level_selection.select_levels``) with :meth:`_levels_budget`;
        ``{}`` with ``level_selection="laplace"`` (each column then draws
        its own stable levels in :meth:`_private_spec`)."""
        budget = self._levels_budget(private)
        if budget is None:
            return {}, {}
        columns, eps, delta = budget
        levels, missing = select_column_levels(
            [df[c] for c in columns], eps, delta, source, self.neighbouring, weights
        )
        return dict(zip(columns, levels)), self._missing_noise(columns, missing, budget)

    def _missing_noise(self, columns, missing, budget):
        """``{column: (noisy missing count, its noise variance)}`` of a joint
        level selection (``budget``: its columns, ε and δ): a cell of the
        same Gaussian histogram, ``σ²`` from the public parameters. Released
        with the levels; read by a pipeline's missing-level test
        (``_missing_support``)."""
        _, eps, delta = budget
        sigma, *_ = gaussian_selection_params(
            eps, delta, len(columns), self.neighbouring
        )
        return {c: (float(m), float(sigma) ** 2) for c, m in zip(columns, missing)}

    def _check_declared_columns(self, columns, dtypes):
        """Every column named in a parameter is in ``X``, and the time units
        fit their dtypes (the schema only; in memory and from Dask chunks)."""
        declared = [self.categories or {}, self.ordinal or {}, self.bin_edges or {}]
        declared += [self.bounds or {}, self._missing_map(), self._unit_map()]
        declared += [getattr(self, "point_masses", None) or {}]
        for d in declared:
            unknown = [c for c in d if c not in columns]
            if unknown:
                raise ValueError(
                    f"columns {unknown} are declared in the encoder's parameters "
                    f"but not present in X (columns: {list(columns)})"
                )
        self._check_units(dtypes)
        self._check_bounds_columns(dtypes)

    def _check_bounds_columns(self, dtypes):
        """``bounds=`` names numeric or time columns that no other domain
        parameter declares: it was dropped without a word on a text, bool or
        categorical column and beside ``categories=`` (the schema only)."""
        for col in self.bounds or {}:
            dtype = dtypes[col]
            also = [
                name
                for name, d in (
                    ("categories=", self.categories),
                    ("ordinal=", self.ordinal),
                    ("bin_edges=", self.bin_edges),
                )
                if col in (d or {})
            ]
            if also:
                raise ValueError(
                    f"column {col!r} is declared in bounds= and {also[0]}, which "
                    "fixes its domain already: drop bounds= for it"
                )
            if not (_is_numeric_dtype(dtype) or is_time_dtype(dtype)):
                raise ValueError(
                    f"bounds= names column {col!r}, whose dtype {dtype} is not "
                    "numeric: bounds are for numbers, dates and durations (a "
                    "column of levels is declared in categories= or ordinal=)"
                )

    def _check_point_masses(self, private, dtypes):
        """``point_masses=`` names numeric columns whose domains are learned
        privately, with finite values (whole ones for an integer dtype)
        inside any declared bounds. The parameters, the schema and the
        public verdict of :meth:`_private_columns` only: refused before any
        value is read."""
        for col, values in (getattr(self, "point_masses", None) or {}).items():
            dtype = dtypes[col]
            timed = is_time_dtype(dtype)
            if private.get(col) != "numeric" or timed:
                raise ValueError(
                    f"point_masses= names column {col!r}, whose domain is not a "
                    "numeric one learned privately (a declared domain, a "
                    "categorical or date/time column, or no budget): declare "
                    "its values there instead"
                )
            try:
                v = np.asarray(list(values), dtype=np.float64)
            except (TypeError, ValueError):
                v = np.array([np.nan])
            if v.size == 0 or not np.all(np.isfinite(v)):
                raise ValueError(
                    f"point_masses[{col!r}] must be a non-empty list of finite numbers"
                )
            if pd.api.types.is_integer_dtype(dtype) and np.any(v != np.round(v)):
                raise ValueError(
                    f"point_masses[{col!r}] must hold whole numbers: the column's "
                    "dtype is an integer one"
                )
            lo, hi = (self.bounds or {}).get(col, (None, None))
            outside = (lo is not None and np.any(v < float(lo))) or (
                hi is not None and np.any(v > float(hi))
            )
            if outside:
                raise ValueError(
                    f"point_masses[{col!r}] holds values outside its declared "
                    "bounds= (every value is clipped to them)"
                )

    def _point_masses(self, col):
        """The column's declared point masses (a tuple of floats; public)."""
        values = (getattr(self, "point_masses", None) or {}).get(col, ())
        return tuple(sorted({float(x) for x in values}))

    def _domains_mechanism(self):
        """The mechanisms of the private domains, as the guarantee names them
        (in memory and from Dask chunks alike)."""
        levels = (
            "joint Gaussian level selection (Wilson2020)"
            if self.level_selection == "gaussian"
            else "stability-based level discovery (Korolova2009)"
        )
        return (
            "private domains: PrivTree bins and Laplace fine histograms "
            f"(Zhang2016), {levels}"
        )

    def _select_levels_from_counts(self, stats, private, meta, source):
        """:meth:`_select_private_levels` on a Dask fit's merged chunk counts
        (``stats.levels_table``): the same counts, so the same noise draws
        and the same released levels as in memory."""
        budget = self._levels_budget(private)
        if budget is None:
            return {}, {}
        columns, eps, delta = budget
        counted = [level_counts(*stats.levels_table(c, meta[c].dtype)) for c in columns]
        levels, missing = select_levels(
            [c for c, _ in counted],
            [m for _, m in counted],
            eps,
            delta,
            source,
            self.neighbouring,
        )
        return dict(zip(columns, levels)), self._missing_noise(columns, missing, budget)

    # ----------------------------------------------------- declared domains
    def _column_spec(self, col, series):
        """Domain of one column: declared if possible, else learned (flagged)."""
        has_missing = bool(_is_missing(series).any())
        inferred = False
        cats = (self.categories or {}).get(col)
        levels = (self.ordinal or {}).get(col)
        edges = (self.bin_edges or {}).get(col)
        if sum(v is not None for v in (cats, levels, edges)) > 1:
            raise ValueError(
                f"column {col!r} is declared in more than one of "
                "categories=, ordinal= and bin_edges="
            )

        declared_missing = False
        if cats is not None:
            kind, values = "nominal", list(cats)
        elif levels is not None:
            kind, values = "ordinal", list(levels)
        elif edges is not None:
            edges = self._public_numbers(col, series.dtype, edges)
            kind, values = "numeric", _check_edges(col, edges)
        elif col in (self.bounds or {}):
            lo, hi = self._bounds(col, series.dtype)
            if _one_sided(lo, hi):
                raise ValueError(
                    f"bounds[{col!r}] has an open side (None or infinite), to be "
                    "learned privately: that needs a budget (epsilon); without "
                    "one, declare both sides or bin_edges"
                )
            kind, values = "numeric", list(np.linspace(lo, hi, self.n_bins + 1))
        elif isinstance(series.dtype, pd.CategoricalDtype) and series.cat.ordered:
            kind, values, inferred = "ordinal", list(series.cat.categories), True
        elif _is_numeric(series) or is_time_dtype(series.dtype):
            finite = _numbers(series, self._unit(col, series.dtype))
            finite = finite[~np.isnan(finite)]
            if finite.size == 0:
                raise ValueError(
                    f"numeric column {col!r} has no observed values; "
                    "declare its bin_edges"
                )
            lo, hi = float(finite.min()), float(finite.max())
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise ValueError(
                    f"numeric column {col!r} has infinite values; declare its "
                    "bin_edges (values outside them are rejected)"
                )
            if hi <= lo:
                hi = lo + 1.0
            check_finite_width(lo, hi, f"the observed range of column {col!r}")
            kind, values, inferred = (
                "numeric",
                list(np.linspace(lo, hi, self.n_bins + 1)),
                True,
            )
        else:
            # distinct by kind and value (pandas' unique merges 1, 1.0, True)
            observed = list(
                {_hashable(v): v for v in reversed(series.dropna().tolist())}.values()
            )[::-1]
            try:
                observed = sorted(observed)
            except TypeError:
                observed = sorted(observed, key=str)
            kind, values, inferred = "nominal", observed, True

        missing_value = np.nan
        if kind in ("nominal", "ordinal"):
            declared_missing = any(_is_missing_scalar(v) for v in values)
            if any(v is None for v in values):
                missing_value = None
            values = [v for v in values if not _is_missing_scalar(v)]
            if len(values) != len(set(map(_hashable, values))):
                raise ValueError(f"column {col!r}: categories/levels must be unique")
            if not values:
                raise ValueError(f"column {col!r} needs at least one category")

        if col in self._missing_map():
            missing = bool(self._missing_map()[col])
        elif self.missing == "always":
            missing = True
        elif self.missing == "never":
            missing = False
        elif not inferred:
            # a declared domain (categories=, ordinal=, bin_edges=, bounds=):
            # whether the column can be missing is declared too (None among
            # its categories, or missing=). Inferred from the data it was
            # silent when no value was missing, yet the bit layout differed
            # from a neighbour's with one (a neighbour-diff check showed it):
            # a missing value is a breach of the declaration, refused like
            # missing={column: False} (doc/privacy.md)
            missing = declared_missing
            if has_missing and not declared_missing:
                raise _UndeclaredMissing(col, numeric=kind == "numeric")
        else:
            missing = declared_missing or has_missing
            if has_missing and not declared_missing:
                inferred = True
        if kind == "nominal" and len(values) == 2 and not missing:
            kind = "binary"
        unit = self._unit(col, series.dtype) if kind == "numeric" else None
        integer = pd.api.types.is_integer_dtype(series.dtype) or unit is not None
        spec = _ColumnSpec(
            name=col,
            kind=kind,
            levels=values,
            missing=missing,
            dtype=series.dtype,
            encoding=self.numeric_encoding,
            integer=integer,
            time_unit=unit,
            missing_value=missing_value,
        )
        if kind == "numeric" and (
            self.out_of_bounds == "clip"
            or (self.out_of_bounds == "auto" and col in (self.bounds or {}))
        ):
            spec.clip = "warn"
        spec.bits = _bit_names(spec)
        return spec, inferred

    def _check_declared_contract(self, col, series, how):
        """What the user declared about a privately learned column, checked
        before its noise is drawn: no missing value where ``missing`` says
        none can be, no value outside public ``bounds`` under
        ``out_of_bounds="error"``. Each refusal names the column, never a
        value or a count (doc/privacy.md: refusals by declaration)."""
        declared = self._missing_map().get(col)
        if self.missing == "never":
            declared = False
        if declared is False and bool(_is_missing(series).any()):
            raise _UndeclaredMissing(col, numeric=how == "numeric")
        if (
            how == "numeric"
            and self.out_of_bounds == "error"
            and col in (self.bounds or {})
        ):
            lo, hi = self._bounds(col, series.dtype)
            v = _numbers(series, self._unit(col, series.dtype))
            if np.any(~np.isnan(v) & ((v < lo) | (v > hi))):
                spec = _ColumnSpec(col, "numeric", [lo, hi], False, series.dtype)
                spec.time_unit = self._unit(col, series.dtype)
                raise ValueError(
                    f"column {col!r} has values outside its bounds "
                    f"[{_public_text(spec, lo)}, {_public_text(spec, hi)}] "
                    "(not shown: they are private)"
                )

    # ------------------------------------------------ privately learned domains
    def _private_spec(
        self,
        col,
        series,
        how,
        eps,
        delta,
        sens,
        source,
        weights=None,
        levels=None,
        histogram=None,
        missing_noise=None,
    ):
        """The domain of one undeclared column, learned privately
        (``weights``: the counts of a table of counts, or ``None``;
        ``levels``: a level column's levels already released by the joint
        selection, :meth:`_select_private_levels`, or ``None``, and
        ``missing_noise`` its noisy missing count and that noise's variance;
        ``histogram``: what computes a numeric column's PrivTree histogram,
        called as :func:`privtree_histogram` -- the Dask fit passes one that
        reads merged chunk counts, ``_domain_stats.privtree_from_counts``).

        ``how`` is :meth:`_private_columns`' verdict, ``eps``, ``delta`` and
        ``sens`` this column's share and sensitivity (:meth:`_domain_budget`).
        A Boolean column draws nothing; a categorical one pays ``(eps,
        delta)`` for its stable levels (:cite:`Korolova2009`,
        :cite:`Vadhan2017` Proposition 3.5); a numeric one ``eps`` for its
        PrivTree bins and Laplace fine histogram (:cite:`Zhang2016` §3.2,
        Algorithm 2; ``doc/privacy.md``, "Private domains"). Everything
        after those draws is post-processing. Whether the column has a
        missing level reads no value: ``missing=`` where declared, else its
        dtype (:func:`can_hold_missing`)."""
        dtype = series.dtype
        declared = self._missing_map().get(col)
        if self.missing in ("always", "never"):
            declared = self.missing == "always"
        # the missing level: declared (missing=), else from the dtype -- a
        # column that can hold a missing value gets one, whatever its values
        # (public); the release measures its share and a pipeline keeps the
        # level where that estimate is above its noise (MISSING_SUPPORT_Z).
        # Decided on the encoder's noisy missing count (a level iff above
        # 0.51 b), births14's ``gained`` (42 missing of 1,000; b = 54 rows
        # at epsilon 1) got no level in 3 of 5 fits and no missing row in 5
        learned = declared is None
        missing = can_hold_missing(dtype) if learned else bool(declared)
        if how == "bool":
            kind = "nominal" if missing else "binary"
            spec = _ColumnSpec(col, kind, [False, True], missing, dtype)
            spec.missing_learned = learned
            spec.bits = _bit_names(spec)
            return spec, False
        if how == "levels":
            if levels is None:
                levels, raw = stable_levels(
                    series, eps, delta, source, sensitivity=sens, weights=weights
                )
                missing_noise = (float(raw), 2.0 * (float(sens) / float(eps)) ** 2)
            other = OTHER_LABEL
            while other in levels:
                other = f"<{other}>"
            levels = [*levels, other]
            if isinstance(dtype, pd.CategoricalDtype):
                dtype = pd.CategoricalDtype(levels)
            spec = _ColumnSpec(col, "nominal", levels, missing, dtype)
            spec.other = True
            spec.missing_learned = learned
            spec.missing_noise = missing_noise if missing else None
            spec.bits = _bit_names(spec)
            return spec, False
        unit = self._unit(col, dtype)
        values = _numbers(series, unit)
        integer = pd.api.types.is_integer_dtype(dtype) or unit is not None
        root = None
        if col in (self.bounds or {}):
            lo, hi = self._bounds(col, dtype)
            if integer:
                lo, hi = float(np.ceil(lo)), float(np.floor(hi)) + 1.0
            values = np.where(np.isnan(values), np.nan, np.clip(values, lo, hi))
            # a side declared None: PrivTree's own root there (2^40), or
            # 2^40 past the public side when that lies beyond it (an epoch
            # in milliseconds, 1.7e12, crashed with an IndexError): a
            # function of the declared side only
            root = (
                lo if np.isfinite(lo) else min(-ROOT, hi - ROOT),
                hi
                if np.isfinite(hi)
                else max(ROOT, lo + ROOT) + (1.0 if integer else 0.0),
            )
        # declared point masses (public; the Dask fit's histogram takes them too)
        masses = self._point_masses(col)
        declared = {"point_masses": masses} if masses else {}
        hist = (histogram or privtree_histogram)(
            values,
            eps,
            source,
            integer=integer,
            sensitivity=sens,
            root=root,
            weights=weights,
            cuts=self._root_cuts(col, dtype),
            time_axis=self._keep_axis(col, dtype),
            **declared,
        )
        edges, split = split_heavy_leaves(
            hist, coarse_edges(hist, self.n_bins), self.n_bins
        )
        edges, split = cut_tail_leaves(hist, edges, split)
        if unit is None:  # a date/time column's floor is its unit
            edges, split = cut_floor_cells(hist, edges, split)
        before = edges
        edges, split = split_wide_leaves(hist, edges, split, self.n_bins)
        wide = cut_bins(before, edges)
        # bins of a tentative run of leaves: kept where the release says so
        split = sorted(set(split) | set(hist.tentative_bins(edges)))
        spec = _ColumnSpec(
            col,
            "numeric",
            edges,
            missing,
            dtype,
            encoding=self.numeric_encoding,
            integer=integer,
        )
        spec.fine = hist
        spec.split = tuple(split)
        spec.wide = tuple(wide)
        spec.missing_learned = learned
        spec.time_unit = unit
        spec.clip = "warn" if root is not None else "silent"
        if root is not None:
            spec.bounds = self._bounds(col, dtype)
        if self.out_of_bounds == "error":
            spec.clip = False
        spec.bits = _bit_names(spec)
        return spec, False


class _UndeclaredMissing(ValueError):
    """A column with missing values whose declared domain has no missing
    level (collected by ``fit`` into one error naming every such column)."""

    def __init__(self, col, numeric=False):
        super().__init__(_undeclared_missing_text([col], numeric))
        self.numeric = numeric


def _undeclared_missing_text(cols, numeric=False):
    """The refusal of missing values a declaration rules out: the columns,
    never a value or a count. ``numeric``: every column is a number, whose
    only remedy is ``missing=`` (levels do not apply: the generic text told
    users to put null among a numeric column's levels)."""
    which = f"column {cols[0]!r} has" if len(cols) == 1 else f"columns {cols} have"
    remedy = (
        "missing={column: True}"
        if numeric
        else "None among its categories or ordinal levels, or missing={column: True}"
    )
    return (
        f"{which} missing values but no missing category in the declared "
        f"domain: declare it ({remedy})"
    )


def _is_numeric(series):
    return _is_numeric_dtype(series.dtype)


def _is_numeric_dtype(dt):
    return pd.api.types.is_numeric_dtype(dt) and not pd.api.types.is_bool_dtype(dt)


class _Probe:
    """The encoder's parameters with a budget: what would be learned privately."""

    def __init__(self, encoder, delta=None):
        self.categories, self.ordinal = encoder.categories, encoder.ordinal
        self.bin_edges = encoder.bin_edges
        if delta is None:  # the encoder's own δ; with "auto", any
            own = encoder.delta if encoder.epsilon != "auto" else 1.0
            delta = own or 0.0
        self.epsilon, self.delta = 1.0, float(delta)


def _check_bounds(col, bounds):
    """Numeric ``(lo, hi)``, ``lo < hi``; ``-inf`` / ``inf`` (or a side
    declared ``None``) leave that side to be learned privately."""
    try:
        lo, hi = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ValueError(
            f"bounds[{col!r}] must be two numbers (None for a side learned privately)"
        ) from None
    if np.isnan(lo) or np.isnan(hi) or lo == np.inf or hi == -np.inf or not lo < hi:
        raise ValueError(
            f"bounds[{col!r}] must have lo < hi (None for a side learned privately)"
        )
    if not (np.isfinite(lo) or np.isfinite(hi)):
        raise ValueError(
            f"bounds[{col!r}] has no finite side: leave the column out of "
            "bounds= to learn its range privately"
        )
    return lo, hi


def _one_sided(lo, hi):
    return not (np.isfinite(lo) and np.isfinite(hi))


#: The largest whole number float64 holds exactly (and every one below it).
EXACT_INTEGERS = 2**53


def _check_exact_in_float(col, values):
    """Declared whole numbers past ``2**53`` are refused: the encoder's
    numbers are float64, which holds them only to a multiple of 2 or more,
    so bounds ``(2**62, 2**62 + 1000)`` were one value (every row came back
    as ``2**62``) and strictly increasing edges were not."""
    big = [
        v
        for v in values
        if isinstance(v, numbers.Integral)
        and not isinstance(v, bool | np.bool_)
        and abs(int(v)) > EXACT_INTEGERS
    ]
    if big:
        raise ValueError(
            f"the declared bounds or bin edges of column {col!r} hold whole "
            "numbers past 2**53, which float64 (the encoder's numbers) does "
            "not hold exactly: subtract an offset from the column first, or "
            "declare an identifier categorical"
        )


def _check_edges(col, edges):
    edges = np.asarray(edges, dtype=np.float64)
    if edges.ndim != 1 or edges.size < 2:
        raise ValueError(f"bin_edges[{col!r}] needs at least two edges")
    if not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
        raise ValueError(f"bin_edges[{col!r}] must be finite and strictly increasing")
    check_finite_width(edges[:1], edges[-1:], f"bin_edges[{col!r}]")
    return edges.tolist()
