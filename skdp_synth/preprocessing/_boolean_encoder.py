"""Tabular data (categorical, ordinal, numeric, missing)  <->  ``{0, 1}^p``.

The Boolean synthesizers of :cite:`Boedihardjo2024` and :cite:`Boedihardjo2022` work on
the cube ``{0,1}^p``; this encoder is the bridge to real tables. Its design choices:

* **Nominal columns** are one-hot encoded, and a missing value is one more
  category, so every valid row has exactly one 1 per block. A nominal column
  with exactly two categories and no missing value is a single bit (1 = the
  second category): the second bit of a two-bit one-hot block is redundant
  and would only add a perfectly anti-correlated column.
* **Numeric and ordinal columns** are binned (user-given bin edges / level
  order) and encoded by a *thermometer* code: bit ``i`` is ``1[x >= edge_i]``.
  We prefer it to one-hot because the 1-way marginals of a thermometer block
  are the column's empirical CDF at the edges and its 2-way marginals are
  joint CDFs, so the synthesizers' marginal guarantees translate directly
  into CDF (Kolmogorov-type) guarantees and ordinal closeness is kept;
  one-hot loses the order. ``numeric_encoding="onehot"`` is available.
* **Public domains.** Categories, level orders and bin edges are parameters;
  anything not given is learned from the data with a
  :class:`~skdp_synth.exceptions.PrivacyLeakWarning`.

Decoding rule (:meth:`BooleanEncoder.inverse_transform`)
--------------------------------------------------------
Any row with entries in ``[0, 1]`` -- including rows with zero or several ones
in a one-hot block, as randomized rounding produces -- decodes to a valid row:

* one-hot block with exactly one 1: that category;
* any other one-hot block (zero or several ones, fractional values):
  ``decode="sample"`` (default) draws a category with probability
  proportional to the block's values; an all-zero block draws proportionally
  to the block's column means over the rows being decoded (the synthetic
  data's own marginal: post-processing, no privacy cost), and uniformly if
  those are zero too. ``decode="argmax"`` takes the largest value, ties and
  all-zero blocks going to the most frequent category of the decoded rows;
* single-bit binary column: ``1`` is the second category; a fractional value
  ``v`` is the second category with probability ``v`` ("sample") or if
  ``v >= 1/2`` ("argmax");
* thermometer block: the level index is the number of ones (so ``1 0 1``
  decodes to level 2); for fractional values the sum ``s`` is rounded to
  ``floor(s) + Bernoulli(s - floor(s))`` ("sample", which keeps the mean
  index) or to the nearest integer ("argmax");
* a numeric bin decodes to its midpoint (``numeric_value="midpoint"``) or to
  a uniform draw inside the bin (``"uniform"``); integer columns are rounded
  to the nearest integer inside the bin;
* the missing bit of a numeric or ordinal column, when set, decodes to a
  missing value regardless of the other bits.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted

from .._datetime import UNITS
from .._sklearn_compat import Interval, StrOptions, _fit_context, validate_data
from ..exceptions import PrivacyLeakWarning
from ..mechanisms import NoiseSource, make_generator
from ..privacy import PrivacyGuarantee
from ..validation import (
    as_pandas,
    check_budget_params,
    check_counts,
    check_one_column_delimiter,
    is_arrow,
    reject_bool_params,
    restore_on_failure,
    user_stacklevel,
)
from ._column_domain import (
    _ColumnDomainMixin,
    _undeclared_missing_text,
    _UndeclaredMissing,
)
from ._column_spec import _blocks
from ._declared_bins import warn_wide_declared_bins
from ._decoding import (
    copula_columns,
    decode_index,
    decoded_output,
    quantiles_in_bins,
    values_from_index,
)
from ._encoding import encode_column
from ._level_selection import LEVEL_SELECTIONS

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, Literal, Self

    from numpy.typing import ArrayLike, NDArray

__all__ = ["BooleanEncoder"]


def _is_dask_frame(X):
    from .._chunked import is_dask_collection

    return is_dask_collection(X) and hasattr(X, "columns") and hasattr(X, "dtypes")


def _frame_key(X):
    """Dask's name of a collection (a token of its graph)."""
    return getattr(X, "_name", None) or id(X)


def _encode_partition(encoder, df, index):
    """One partition encoded; errors name the chunk (and the column, as ever)."""
    try:
        return encoder._encode(df)
    except ValueError as exc:
        raise ValueError(f"chunk {index} of the data: {exc}") from None


class BooleanEncoder(_ColumnDomainMixin, TransformerMixin, BaseEstimator):
    """Encode a table of categorical, ordinal, numeric and missing values as 0/1.

    See the module docstring for the encoding and the documented decoding rule
    of :meth:`inverse_transform`.

    Parameters
    ----------
    categories : dict, default=None
        ``{column: list of categories}`` for nominal columns (one-hot). Include
        ``None`` in the list to declare that the column can be missing.
    ordinal : dict, default=None
        ``{column: ordered list of levels}`` for ordinal columns (thermometer).
        ``None`` among the levels (anywhere; it is not ordered) declares a
        missing level, as in ``categories``.
    bin_edges : dict, default=None
        ``{column: increasing edges e_0 < ... < e_B}`` for numeric columns:
        ``B`` bins ``[e_{i-1}, e_i)``, the last one closed. Values outside
        ``[e_0, e_B]`` are rejected (see ``out_of_bounds``). A declared bin
        decodes to its midpoint (``numeric_value``); one wider than 25 times
        its column's median bin width raises a
        :class:`~skdp_synth.exceptions.WideBinWarning` at ``fit``.
    bounds : dict, default=None
        ``{column: (lo, hi)}``: public bounds of numeric columns whose bins are
        learned privately inside them (needs ``epsilon``). Values outside are
        clipped (see ``out_of_bounds``). One side may be ``None``, learned
        privately: ``(0, None)`` for a count, which then never comes back
        below 0 (a noise leaf below the data put counts at -248).
    point_masses : dict, default=None
        ``{column: [value, ...]}``: public values of numeric columns whose
        bins are learned privately that hold heaps of rows -- a code (an
        income of 999,999 for "refused"), a cap or a top code (a loan limit
        of 40,000), a round value. Each is cut out of PrivTree's released
        tree as a leaf of its own (one integer, or ``[v, v + 2^-10)``) and
        is a candidate point mass, kept when its noisy count passes
        ``b ln(K / 0.005)`` (``K``: 0, 100 and the column's declared values),
        and decoded exactly at ``v``. Public knowledge, as ``bounds=`` is:
        nothing is spent or read for it (``doc/privacy/encoder.md``); a
        Dask DataFrame's fit cuts them as the in-memory fit does.
    numeric_encoding : {"thermometer", "onehot"}, default="thermometer"
        Code for numeric and ordinal columns.
    n_bins : int, default=10
        Number of equal-width bins between the observed minimum and maximum
        when a numeric column's edges are not given (inferred, with a warning).
    missing : {"infer", "always", "never"} or dict, default="infer"
        Which columns get a missing category/bit. ``"always"``: every column
        (data-independent). ``"never"``: none, missing values are an error.
        ``"infer"``: columns whose declared categories contain ``None`` (a
        column with a declared domain -- ``categories``, ``ordinal``,
        ``bin_edges`` -- is missing only so, or by ``missing={column:
        True}``; a missing value it does not declare is refused, naming the
        column), plus undeclared columns where the training data has
        missing values -- learned from the data and warns -- except for
        columns whose domain is learned privately (``epsilon``): each gets a
        missing level iff its dtype can hold a missing value (float,
        ``datetime64``/``timedelta64``, object, category, string and the
        nullable ``Int64``/``Float64``/``boolean``, pyarrow-backed dtypes;
        not a NumPy integer or bool, nor a sparse column of one), whatever
        its values. The release measures the level's share
        with its own noise; in a :class:`~skdp_synth.SynthesisPipeline` a
        level whose released estimate is below one noise sd is dropped
        (``MISSING_SUPPORT_Z``), so a complete float column gets a few NaN
        (within the noise of its share) in about 16 % of fits: declare
        ``missing={column: False}`` where none can occur. A dict
        ``{column: bool}`` declares it per column (public; a column declared
        ``False`` never gets a missing value and rejects one); columns not in
        it follow ``"infer"``.
    epsilon : float, "auto" or None, default="auto"
        Budget for the domains that are not declared: numeric columns without
        ``bin_edges`` get private data-dependent bins (PrivTree) and a fine
        1-way histogram used to decode values; categorical columns without
        ``categories`` get their frequent levels by a noisy threshold (needs
        ``delta > 0``), the others merged into ``"other"``; boolean columns
        take ``[False, True]`` from their dtype. Split equally over those
        columns (the categorical ones spend their shares together, see
        ``level_selection``); derivation in ``doc/privacy/encoder.md``. A
        numeric domain whose kept range is not above the noise, or a domain
        that keeps a single bin of a numeric column or no level but
        ``"other"``, raises a
        :class:`~skdp_synth.exceptions.CoarseDomainWarning`. ``None``:
        such domains are learned without privacy, with a warning. ``"auto"``:
        in a :func:`~skdp_synth.make_synthesis_pipeline`, paid from the
        synthesizer's budget (its ``domain_share``); fitted alone, as
        ``None``.
    delta : float, default=0.0
        The ``δ`` for discovering categorical levels (all of it goes to
        them: numeric domains are pure ``ε``).
    level_selection : {"gaussian", "laplace"}, default="gaussian"
        How the levels of the ``c`` undeclared categorical columns are
        discovered (needs ``delta > 0``). ``"gaussian"``: one joint Gaussian
        partition selection over all ``c`` columns (:cite:`Wilson2020`,
        :cite:`Desfontaines2022`): Gaussian noise on every observed level's
        count, calibrated to the L2 sensitivity ``√c`` of a record's ``c``
        cells (``√(2c)`` under replace-one), with the ``c`` columns' shares
        of ``epsilon`` and all of ``delta``; its threshold grows like
        ``√c`` rather than ``c``. ``"laplace"``: a stability-based Laplace
        histogram per column (:cite:`Korolova2009`), each with its share of
        ``epsilon`` and ``delta / c`` -- lower thresholds for one or two
        such columns. Derivation in ``doc/privacy/encoder.md``.
    neighbouring : {"add-remove-one", "replace-one"}, default="add-remove-one"
        The relation the private domains are calibrated for.
    out_of_bounds : {"auto", "clip", "error"}, default="auto"
        Values outside the edges or bounds: ``"clip"`` to the nearest end
        -- silently when fitting (a warning there would say whether a
        training value lay outside: data-dependent), with a warning naming
        the columns (never a value or a count) in ``transform`` of other
        data -- ``"error"`` rejects them. ``"auto"``: an error for declared
        ``bin_edges``, clipping for ``bounds`` and private domains. A private
        domain's edges end at its private cap on the tails, inside the
        bounds: values between the cap and the bounds are always clipped to
        the cap (silently: the cap is private), and ``"error"`` refuses only
        values outside the public ``bounds``.
    decode : {"sample", "argmax"}, default="sample"
        Rule for ambiguous blocks in :meth:`inverse_transform`.
    numeric_value : {"auto", "fine", "midpoint", "uniform"}, default="auto"
        Value a decoded numeric bin takes. ``"fine"``: drawn from the private
        fine histogram inside the bin (columns with a private domain).
        ``"auto"``: ``"fine"`` where there is one, else ``"midpoint"``.
    datetime_unit : {"D", "h", "min", "s"} or dict, default="s"
        The unit a ``datetime64`` column (with or without a time zone) or a
        ``timedelta64`` column is counted in: it is a numeric column of whole
        units since 1970-01-01 (UTC) -- or of the duration -- and comes back
        in its own dtype, rounded to whole units. ``"D"`` for dates, so that
        they come back as dates and not times of day. A dict ``{column:
        unit}`` sets it per column (others: ``"s"``). Its ``bounds`` and
        ``bin_edges`` may be given as dates (``"2020-01-01"``, ``Timestamp``)
        or durations.
    within_bins : {"copula", "independent"}, default="copula"
        How decoded values of numeric columns with a private fine histogram
        are placed inside their coarse bins. ``"independent"``: column by
        column. ``"copula"``: jointly, by a Gaussian copula whose
        correlation comes from the released table of coarse bins
        (:meth:`fit_copula`; a pipeline fits it from its last step's
        release), so columns that move together between bins also do
        inside them; each column's own distribution is unchanged.
        Post-processing, no privacy cost; without a fitted copula, as
        ``"independent"``.
    refine_cells : int or None, default=None
        Memory of a fit from a Dask DataFrame (no effect in memory, and
        none on the domains: they are the in-memory ones either way). A
        private numeric domain reads counts below a public grid of 2^16
        cells per depth-0 cell where PrivTree may split deeper. ``None``:
        those grid cells keep their distinct values (memory grows with the
        data's distinct values there; pass 1, one refinement pass, rarely
        one more). An integer ``K``: they keep the counts of public
        sub-cells, or their values where cheaper, at most ``K`` per numeric
        column a pass (25 bytes each kept), so memory is bounded whatever
        ``n``, at the cost of more passes where the tree goes deep (a
        10^7-row table of 20 columns: 3 passes and 1.82 GiB peak with
        ``None``, 6 passes and 1.79 GiB with ``2**20``). Measured trade-off
        in ``doc/user_guide/out_of_core.md``.
    random_state : None, int or RandomState, default=None
        Randomness of ``decode="sample"`` and ``numeric_value="uniform"``.

    Attributes
    ----------
    columns_ : list
        Input columns, in order.
    specs_ : list of _ColumnSpec
        Per-column encoding (kind, levels, missing flag, output bits).
    inferred_ : list
        Columns whose domain was learned from the data without privacy.
    private_domains_ : list
        Columns whose domain was learned privately (``epsilon``).
    epsilon_, delta_ : float
        Spent on private domains (0 when none was learned).
    privacy_guarantee_ : PrivacyGuarantee or None
        What the private domains guarantee (``None`` without ``epsilon``).
    blocks_ : Blocks
        The bit layout as a :class:`~skdp_synth.blocks.Blocks`, one block per
        column (named ``str(column)``): ``"onehot"`` for nominal columns
        (the missing category is the last level) and for
        ``numeric_encoding="onehot"``, ``"binary"`` for two-category nominal
        columns without missing values, ``"thermometer"`` (with
        ``missing=True`` when the last bit is the missing indicator) for
        ordinal and numeric columns. A column with a single level and no
        missing value has no bits and no block. Public: it depends only on
        the declared domain. :func:`~skdp_synth.make_synthesis_pipeline`
        hands it to the synthesizer, whose sampled rows are then valid.
    copula_ : GaussianCopula or None
        Set by :meth:`fit_copula` (a pipeline calls it with its last step's
        released distribution; cleared by every ``fit``): each numeric
        column's bin CDF and the latent correlations that
        ``within_bins="copula"`` decodes with. Post-processing of that
        release; ``None`` when there is none (a last step without a
        guarantee).
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Examples
    --------
    >>> import pandas as pd
    >>> from skdp_synth.preprocessing import BooleanEncoder
    >>> df = pd.DataFrame({"colour": ["red", "blue", "red"], "age": [23, 61, 45]})
    >>> enc = BooleanEncoder(categories={"colour": ["red", "green", "blue"]},
    ...                      bin_edges={"age": [0, 30, 60, 100]}).fit(df)
    >>> enc.get_feature_names_out().tolist()
    ['colour=red', 'colour=green', 'colour=blue', 'age>=30', 'age>=60']
    >>> enc.transform(df)
    array([[1, 0, 0, 0, 0],
           [0, 0, 1, 1, 1],
           [1, 0, 0, 1, 0]], dtype=uint8)
    >>> enc.inverse_transform(enc.transform(df))
      colour  age
    0    red   15
    1   blue   80
    2    red   45
    >>> [(b.name, b.kind, b.width) for b in enc.blocks_.blocks]
    [('colour', 'onehot', 3), ('age', 'thermometer', 2)]
    """

    _parameter_constraints = {
        "categories": [dict, None],
        "ordinal": [dict, None],
        "bin_edges": [dict, None],
        "bounds": [dict, None],
        "point_masses": [dict, None],
        "numeric_encoding": [StrOptions({"thermometer", "onehot"})],
        "n_bins": [Interval(Integral, 1, None, closed="left")],
        "missing": [StrOptions({"infer", "always", "never"}), dict],
        "epsilon": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
            None,
        ],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "neighbouring": [StrOptions({"add-remove-one", "replace-one"})],
        "level_selection": [StrOptions(set(LEVEL_SELECTIONS))],
        "out_of_bounds": [StrOptions({"auto", "clip", "error"})],
        "decode": [StrOptions({"sample", "argmax"})],
        "numeric_value": [StrOptions({"auto", "fine", "midpoint", "uniform"})],
        "datetime_unit": [StrOptions(set(UNITS)), dict],
        "within_bins": [StrOptions({"copula", "independent"})],
        "refine_cells": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        categories: Mapping[Any, Sequence[Any]] | None = None,
        ordinal: Mapping[Any, Sequence[Any]] | None = None,
        bin_edges: Mapping[Any, ArrayLike] | None = None,
        bounds: Mapping[Any, tuple[float, float]] | None = None,
        point_masses: Mapping[Any, Sequence[float]] | None = None,
        numeric_encoding: Literal["thermometer", "onehot"] = "thermometer",
        n_bins: int = 10,
        missing: Literal["infer", "always", "never"] | Mapping[Any, bool] = "infer",
        epsilon: float | Literal["auto"] | None = "auto",
        delta: float = 0.0,
        neighbouring: Literal["add-remove-one", "replace-one"] = "add-remove-one",
        level_selection: Literal["gaussian", "laplace"] = "gaussian",
        out_of_bounds: Literal["auto", "clip", "error"] = "auto",
        decode: Literal["sample", "argmax"] = "sample",
        numeric_value: Literal["auto", "fine", "midpoint", "uniform"] = "auto",
        datetime_unit: Literal["D", "h", "min", "s"] | Mapping[Any, str] = "s",
        within_bins: Literal["copula", "independent"] = "copula",
        refine_cells: int | None = None,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.categories = categories
        self.ordinal = ordinal
        self.bin_edges = bin_edges
        self.bounds = bounds
        self.point_masses = point_masses
        self.numeric_encoding = numeric_encoding
        self.n_bins = n_bins
        self.missing = missing
        self.epsilon = epsilon
        self.delta = delta
        self.neighbouring = neighbouring
        self.level_selection = level_selection
        self.out_of_bounds = out_of_bounds
        self.decode = decode
        self.numeric_value = numeric_value
        self.datetime_unit = datetime_unit
        self.within_bins = within_bins
        self.refine_cells = refine_cells
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def _validate_params(self):
        check_budget_params(self)  # epsilon / delta in the project's words
        super()._validate_params()
        reject_bool_params(self)

    @restore_on_failure
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self, X: ArrayLike, y: None = None, sample_weight: ArrayLike | None = None
    ) -> Self:
        """Fix each column's domain and bit layout (learning what is not given).

        ``X`` may be a ``dask.dataframe.DataFrame``. Where every column's
        domain is declared (``categories=``, ``ordinal=``, ``bin_edges=``;
        a column can be missing only if declared so, with ``None`` among its
        categories or ``missing="always"``), nothing is read from the data
        here, and the rows are checked chunk by chunk by :meth:`transform`.
        With a budget, the undeclared domains are learned privately from
        per-chunk counts merged exactly (one pass, and one more where a
        numeric column needs finer counts; ``_domain_stats``): the same
        noise in the same order as the in-memory fit on the same rows, so
        the same domains for the same ``random_state`` and the same
        guarantee (``doc/user_guide/out_of_core.md``).

        ``sample_weight``: counts of the distinct rows of ``X`` (a
        contingency table; non-negative integers). The private domains count
        records, not rows: every histogram they read is a sum of counts, the
        same integers -- and the same noise draws -- as on the expanded
        records (``privtree_histogram``, ``stable_levels``), so the
        guarantee and the neighbouring relation are those of the expanded
        table. Domains inferred without a budget read every line, a count
        of 0 included (the cells the table lists).
        """
        if _is_dask_frame(X):
            return self._fit_chunked(X)
        if self.epsilon not in ("auto", None) and isinstance(X, (list, tuple)):
            # a list's column types are inferred from its values: one added
            # ["n/a", "x"] row turned a numeric column into a categorical one
            # (another bit layout) under a stated guarantee, as a diff of
            # neighbouring inputs showed; the pipeline refuses the same input
            raise TypeError(
                f"{type(self).__name__} learns domains with a budget: pass a "
                "pandas DataFrame or a NumPy array, whose column types are "
                "public (a list's are inferred from its values)"
            )
        df = self._as_frame(X, reset=True)
        weights = None
        if sample_weight is not None:
            weights = check_counts(sample_weight, df.shape[0])
        self._check_declared_columns(df.columns, df.dtypes)
        # the budget is fixed from the public schema before any value is read
        private = self._private_columns(df.columns, df.dtypes)
        self._check_point_masses(private, df.dtypes)
        paid, n_levels, eps_col, delta_col, sens = self._domain_budget(private)
        source = NoiseSource(self.random_state) if paid else None
        self.__dict__.pop("copula_", None)  # never an earlier fit's
        self.__dict__.pop("_copula_cols", None)
        # the declared domains' contracts first, before any noise is drawn:
        # a refusal (an undeclared level, a value outside bin_edges, a
        # missing value declared impossible) then follows no warning about
        # the private domains and no draw of their noise (which would tell
        # the refused data apart); the private domains themselves never refuse
        declared_specs = self._check_declarations(df, private)
        try:
            # the joint level selection's noise first, columns in the
            # schema's order (doc/privacy/encoder.md); none with "laplace"
            chosen, noise = self._select_private_levels(df, private, source, weights)
            specs, inferred = [], []
            for col in df.columns:
                if col in private:
                    spec, was_inferred = self._private_spec(
                        col,
                        df[col],
                        private[col],
                        eps_col,
                        delta_col,
                        sens,
                        source,
                        weights,
                        levels=chosen.get(col),
                        missing_noise=noise.get(col),
                    )
                else:
                    spec, was_inferred = declared_specs[col]
                specs.append(spec)
                if was_inferred:
                    inferred.append(col)
            if inferred:
                # an ordered categorical's levels come from its dtype, which
                # pandas builds from the values (astype("category")): said
                # so, not "learned"
                ordered = [
                    c
                    for c in inferred
                    if isinstance(df[c].dtype, pd.CategoricalDtype)
                    and df[c].dtype.ordered
                ]
                dtype_note = (
                    f" The levels of {ordered} were taken from their ordered "
                    "categorical dtype, which pandas may have built from the "
                    "values: declare them with ordinal= to make them public."
                    if ordered
                    else ""
                )
                warnings.warn(
                    f"the domains of columns {inferred} (categories, bin edges or "
                    "whether values can be missing) were learned from the data and "
                    "are not protected. Declare them via categories=, ordinal=, "
                    "bin_edges= and missing=." + dtype_note,
                    PrivacyLeakWarning,
                    stacklevel=user_stacklevel(),
                )
            self._record_domains(df, specs, private, eps_col, inferred, paid, n_levels)
            # Validate the training data against the (now fixed) domain; clipping
            # inside a private domain is part of the mechanism and does not warn.
            self._encode(df, warn=False)
        except BaseException as exc:
            self._charge_failed_fit(exc, paid, n_levels)
            raise
        return self

    def _record_domains(self, frame, specs, private, eps_col, inferred, paid, n_levels):
        """Warn about what the released domains say (coarse domains, numbers
        read as text), then record the fit: in memory and from Dask chunks
        alike. ``frame``: the data or its empty Dask meta (columns, dtypes)."""
        self._warn_coarse_private_domains(specs, private, eps_col, frame.dtypes)
        self._warn_numbers_as_text(specs, private, frame.dtypes)
        warn_wide_declared_bins(specs, self.bin_edges, self.numeric_value)
        self.columns_ = list(frame.columns)
        self.specs_ = specs
        self.inferred_ = inferred
        self.private_domains_ = list(private)
        self.epsilon_ = float(self.epsilon) if paid else 0.0
        self.delta_ = float(self.delta) if n_levels else 0.0
        self.privacy_guarantee_ = (
            None
            if self.epsilon is None or self.epsilon == "auto"
            else PrivacyGuarantee(
                self.epsilon_,
                self.delta_,
                self.neighbouring,
                self._domains_mechanism(),
            )
        )
        self.blocks_ = _blocks(specs)

    def _charge_failed_fit(self, exc, paid, n_levels):
        """Noise was drawn for the private domains: a fit that fails after it
        still answered (its error, its warnings), so the pipeline charges it
        (fail closed: a crash on a missing date once went uncharged)."""
        if paid:
            exc.skdp_spent = PrivacyGuarantee(
                float(self.epsilon),
                float(self.delta) if n_levels else 0.0,
                self.neighbouring,
                "private domains (a failed fit)",
            )

    def _check_declarations(self, df, private):
        """The declared domains' contracts on ``df`` (no noise drawn):
        ``{column: (spec, inferred)}`` of the columns not learned privately
        (``private``: those that are). Refuses, naming only columns, a level
        or value outside a declared domain and a missing value it rules out
        -- every such column at once (one per run took three fix-and-rerun
        cycles on the credit table)."""
        declared_specs, undeclared_missing, numeric = {}, [], True
        for col in df.columns:
            try:
                if col in private:
                    self._check_declared_contract(col, df[col], private[col])
                else:
                    declared_specs[col] = self._column_spec(col, df[col])
                    encode_column(declared_specs[col][0], df[col], [])
            except _UndeclaredMissing as exc:
                undeclared_missing.append(col)
                numeric = numeric and exc.numeric
        if undeclared_missing:
            raise ValueError(_undeclared_missing_text(undeclared_missing, numeric))
        return declared_specs

    def check_declarations(self, X: ArrayLike) -> None:
        """Check ``X`` against the declared domains, as ``fit`` does first,
        without fitting or drawing noise: raises ``ValueError`` naming the
        columns whose values the declarations rule out. The CLI runs it on
        the whole input before ``--holdout`` splits it, so the same command
        does not pass or fail by which rows the split kept. Reads the data:
        a refusal is outside the guarantee by design, as ``fit``'s
        (``doc/privacy.md``)."""
        probe = clone(self).set_params(
            epsilon=1.0 if self.epsilon in (None, "auto") else self.epsilon
        )
        df = probe._as_frame(X, reset=True)
        probe._check_units(df.dtypes)
        private = probe._private_columns(df.columns, df.dtypes)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probe._check_declarations(df, private)

    def _fit_chunked(self, X):
        """Fit on a Dask DataFrame: from its schema where every domain is
        declared, else learning the private ones from merged chunk counts
        (``_domain_stats``): the same noise, in the same order, as the
        in-memory fit on the same rows -- so the same domains and the same
        guarantee. The budget and its split are fixed from the schema
        before any value is read; the declared contracts are checked on
        every chunk in the first pass, before any noise is drawn."""
        from ._domain_stats import DomainStatistics

        meta = X._meta
        private = (
            self._private_columns(meta.columns, meta.dtypes)
            if self.epsilon not in (None, "auto")
            else {}
        )
        if self.point_masses:  # named columns must be private numeric ones
            self._check_declared_columns(meta.columns, meta.dtypes)
            self._check_point_masses(private, meta.dtypes)
        if not private:
            return self._fit_schema(meta)
        self._check_declared_columns(meta.columns, meta.dtypes)
        fixed = set(self.categories or {}) | set(self.ordinal or {})
        fixed |= set(self.bin_edges or {})
        undeclared = [c for c in meta.columns if c not in fixed and c not in private]
        if undeclared:
            raise ValueError(
                f"columns {undeclared} have no declared domain and none learned "
                "privately (a categorical column needs delta > 0, an ordered "
                "categorical its ordinal= levels): declare them in categories=, "
                "ordinal= or bin_edges= (learning a domain from the data without "
                "a budget would read it and is not private)."
            )
        unknown_cats = [
            c
            for c, how in private.items()
            if how == "levels"
            and isinstance(meta[c].dtype, pd.CategoricalDtype)
            and "__UNKNOWN_CATEGORIES__" in list(meta[c].dtype.categories)
        ]
        if unknown_cats:
            raise ValueError(
                f"columns {unknown_cats} are categorical with unknown categories "
                "in the Dask DataFrame: make them known (X[col].cat.as_known()) "
                "or give them as text"
            )
        # the budget is fixed from the public schema before any value is read
        paid, n_levels, eps_col, delta_col, sens = self._domain_budget(private)
        source = NoiseSource(self.random_state) if paid else None
        self.__dict__.pop("copula_", None)
        self.__dict__.pop("_copula_cols", None)
        stats = DomainStatistics(self, X, private, eps_col, sens, self.refine_cells)
        # pass 1 (and the refinement pass): the declared contracts of every
        # chunk are checked here, before any noise is drawn
        stats.first_pass()
        try:
            # the joint level selection's noise first, as in memory
            # (``_select_private_levels``), on the merged chunk counts
            chosen, noise = self._select_levels_from_counts(
                stats, private, meta, source
            )
            specs = []
            for col in meta.columns:
                how = private.get(col)
                if how is None:
                    specs.append(self._column_spec(col, meta[col])[0])
                    continue
                series, weights, histogram = meta[col], None, None
                if how == "levels":
                    series, weights = stats.levels_table(col, meta[col].dtype)
                elif how == "numeric":
                    histogram = stats.histogram(col)
                spec, _ = self._private_spec(
                    col,
                    series,
                    how,
                    eps_col,
                    delta_col,
                    sens,
                    source,
                    weights,
                    levels=chosen.get(col),
                    histogram=histogram,
                    missing_noise=noise.get(col),
                )
                specs.append(spec)
            validate_data(self, meta, reset=True, skip_check_array=True)
            self._fitted_on_frame = True
            self._record_domains(meta, specs, private, eps_col, [], paid, n_levels)
            # public (n): the encoding pass reuses them instead of a pass
            self._chunk_lengths = (_frame_key(X), stats.lengths)
        except BaseException as exc:
            self._charge_failed_fit(exc, paid, n_levels)
            raise
        return self

    def _fit_schema(self, meta):
        """Fit from a public schema only (the empty frame ``meta`` of a Dask frame)."""
        declared = set(self.categories or {}) | set(self.ordinal or {})
        declared |= set(self.bin_edges or {})
        unknown = [c for c in declared if c not in meta.columns]
        if unknown:
            raise ValueError(
                f"columns {unknown} are declared in the encoder's parameters "
                f"but not present in X (columns: {list(meta.columns)})"
            )
        undeclared = [c for c in meta.columns if c not in declared]
        if undeclared:
            raise ValueError(
                f"columns {undeclared} have no declared domain. A Dask DataFrame "
                "is encoded chunk by chunk from a public schema: declare every "
                "column in categories=, ordinal= or bin_edges= (learning a domain "
                "from the data would read it and is not private)."
            )
        self.__dict__.pop("copula_", None)
        self.__dict__.pop("_copula_cols", None)
        self.__dict__.pop("_chunk_lengths", None)
        specs = [self._column_spec(col, meta[col])[0] for col in meta.columns]
        warn_wide_declared_bins(specs, self.bin_edges, self.numeric_value)
        validate_data(self, meta, reset=True, skip_check_array=True)
        self._fitted_on_frame = True
        self.columns_ = list(meta.columns)
        self.specs_ = specs
        self.inferred_ = []
        self.blocks_ = _blocks(specs)
        return self

    def _transform_chunks(self, X):
        """Encode a Dask DataFrame partition by partition into a Dask array.

        The partition lengths (public: the number of rows) are computed first
        -- from the file metadata where Dask can (Parquet), else one pass --
        so that the array has known chunk sizes. A partition that does not
        fit the declared domain raises a ``ValueError`` naming the chunk and
        the column, never a value or a row.
        """
        import dask
        import dask.array as da

        if list(X.columns) != list(self.columns_):
            raise ValueError(
                f"X has columns {list(X.columns)}, the encoder was fitted on "
                f"{list(self.columns_)}"
            )
        width = len(self.get_feature_names_out())
        from .._chunked import partition_lengths

        known = getattr(self, "_chunk_lengths", None)
        if known is not None and known[0] == _frame_key(X):
            lengths = known[1]  # counted by the fit's first pass
        else:
            lengths = partition_lengths(X)
        encode = dask.delayed(_encode_partition, pure=True)
        parts = [
            da.from_delayed(
                encode(self, part, i), shape=(int(n), width), dtype=np.uint8
            )
            for i, (part, n) in enumerate(zip(X.to_delayed(), lengths))
        ]
        return da.concatenate(parts, axis=0)

    def fit_transform(
        self, X: ArrayLike, y: None = None, **fit_params: Any
    ) -> NDArray[np.uint8]:
        """:meth:`fit`, then the training rows encoded as :meth:`transform`
        does -- without its clipping warning: values clipped to public
        ``bounds`` while fitting are part of the mechanism, as in ``fit``
        (a pipeline fits its encoder this way; the warning's presence told
        whether some training row lay outside the bounds)."""
        self.fit(X, y, **fit_params)
        if _is_dask_frame(X):
            return self._transform_chunks(X)
        return self._encode(self._as_frame(X, reset=False), warn=False)

    # ------------------------------------------------------------ transform
    def transform(self, X: ArrayLike) -> NDArray[np.uint8]:
        """Encode rows as 0/1 (``uint8``); unknown categories and values outside
        the bin edges are rejected."""
        check_is_fitted(self)
        if _is_dask_frame(X):
            return self._transform_chunks(X)
        df = self._as_frame(X, reset=False)
        return self._encode(df)

    def _encode(self, df, warn=True):
        # a local list: kept on the object, it told after ``fit`` whether a
        # training value lay outside the public bounds (and survived
        # pickling)
        clipped = []
        blocks = [encode_column(spec, df[spec.name], clipped) for spec in self.specs_]
        if warn and clipped:
            # the columns, never a value, a row or how many
            warnings.warn(
                f"columns {clipped} have values outside their bounds; they "
                "were clipped to the nearest bound (out_of_bounds='error' rejects "
                "them instead)",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        if not blocks:
            return np.zeros((len(df), 0), dtype=np.uint8)
        return np.hstack(blocks).astype(np.uint8)

    # ---------------------------------------------------- inverse transform
    def inverse_transform(self, X: ArrayLike) -> pd.DataFrame | NDArray[np.object_]:
        """Decode 0/1 (or ``[0, 1]``-valued) rows to valid rows of the schema.

        Any row decodes, by the rule in the module docstring. Returns a
        DataFrame if the encoder was fitted on one, else an ndarray: of the
        fitted array's dtype where that is a number or bool dtype (a float
        array comes back float), else of objects.
        """
        check_is_fitted(self)
        Z = np.asarray(X, dtype=np.float64)
        if Z.ndim != 2 or Z.shape[1] != len(self.get_feature_names_out()):
            raise ValueError(
                f"expected an array with {len(self.get_feature_names_out())} columns, "
                f"got shape {Z.shape}"
            )
        if np.any(~np.isfinite(Z)) or np.any((Z < 0) | (Z > 1)):
            raise ValueError("encoded rows must have entries in [0, 1]")
        rng = make_generator(self.random_state)
        decoded, start = [], 0
        for spec in self.specs_:
            width = len(spec.bits)
            block = Z[:, start : start + width]
            decoded.append(decode_index(spec, block, rng, self.decode))
            start += width
        within = quantiles_in_bins(
            getattr(self, "copula_", None),
            getattr(self, "_copula_cols", None),
            decoded,
            rng,
            within_bins=self.within_bins,
            numeric_value=self.numeric_value,
        )
        out = {
            spec.name: values_from_index(
                spec, index, miss, rng, self.numeric_value, within.get(k)
            )
            for k, (spec, (index, miss)) in enumerate(zip(self.specs_, decoded))
        }
        df = pd.DataFrame(out, columns=self.columns_)
        return decoded_output(df, self.specs_, self._fitted_on_frame)

    def fit_copula(self, points: ArrayLike, weights: ArrayLike | None = None) -> Self:
        """Fit the Gaussian copula of ``within_bins="copula"`` from released
        encoded rows (post-processing: pass a synthesizer's release, never
        the data -- ``points`` are rows of 0/1 bits, ``weights`` their
        weights; a pipeline passes its last step's released distribution).
        Sets ``copula_`` (``None`` with fewer than two such columns)."""
        from ._copula import fit_copula, single_value_bins

        check_is_fitted(self)
        cols = copula_columns(self.specs_)
        if len(cols) < 2:
            self.copula_ = None
            return self
        Z = np.asarray(points, dtype=np.float64)
        w = np.ones(len(Z)) if weights is None else np.asarray(weights, dtype=float)
        starts = np.cumsum([0] + [len(spec.bits) for spec in self.specs_])
        idx, miss = [], []
        for k in cols:
            spec = self.specs_[k]
            B = Z[:, starts[k] : starts[k + 1]]
            index, m = decode_index(spec, B, None, "argmax")
            idx.append(index)
            miss.append(m)
        single = [
            single_value_bins(
                self.specs_[k].levels, self.specs_[k].integer, self.specs_[k].fine
            )
            for k in cols
        ]
        self.copula_ = fit_copula(
            np.stack(idx, 1),
            np.stack(miss, 1),
            [self.specs_[k].n_levels for k in cols],
            w,
            single,
        )
        self._copula_cols = cols
        return self

    # ------------------------------------------------------------- helpers
    def get_feature_names_out(
        self, input_features: ArrayLike | None = None
    ) -> NDArray[np.object_]:
        """Names of the output bits, e.g. ``colour=red``, ``age>=30``."""
        check_is_fitted(self)
        return np.asarray([b for spec in self.specs_ for b in spec.bits], dtype=object)

    def _as_frame(self, X, *, reset):
        X = as_pandas(X)  # polars, pyarrow: a pandas frame of the same types
        if sp.issparse(X):
            raise TypeError(
                "Sparse data was passed, but dense data is required by "
                "BooleanEncoder. Use X.toarray() to convert to a dense array."
            )
        if isinstance(X, pd.DataFrame):
            df = X
        else:
            arr = np.asarray(X) if hasattr(X, "__array__") else None
            ndim = arr.ndim if arr is not None else np.ndim(np.asarray(X, dtype=object))
            if ndim != 2:
                raise ValueError(
                    f"Expected 2D array, got {ndim}D array instead. Reshape your "
                    "data with array.reshape(-1, 1) for a single feature."
                )
            df = pd.DataFrame(arr if arr is not None else X)
        if any(pd.api.types.is_complex_dtype(dt) for dt in df.dtypes):
            raise ValueError("Complex data not supported")
        _refuse_unreleasable_dtypes(df, self.categories, self.ordinal)
        if df.shape[0] < 1:
            raise ValueError(
                "Found array with 0 sample(s) while a minimum of 1 is required."
            )
        if df.shape[1] < 1:
            # no shape in the message: its n is private
            raise ValueError("X has no columns (0 features); the encoder needs one")
        if reset and not any(
            df.columns[0] in (d or {})
            for d in (self.categories, self.ordinal, self.bin_edges, self.bounds)
        ):
            # a semicolon-delimited file read with the default ",": one
            # column named "a;b;c" (its name only: public)
            check_one_column_delimiter(df)
        validate_data(
            self,
            df if isinstance(X, pd.DataFrame) else np.asarray(df),
            reset=reset,
            skip_check_array=True,
        )
        if reset:
            self._fitted_on_frame = isinstance(X, pd.DataFrame)
        elif not isinstance(X, pd.DataFrame):
            df.columns = self.columns_
        return df

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.allow_nan = self.missing != "never"
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.transformer_tags.preserves_dtype = []
        return tags


#: The keys a schema file may hold: the ``BooleanEncoder`` arguments that
#: describe the public domain (every parameter but ``random_state`` and the
#: budget ``epsilon``, ``delta``, ``neighbouring``). The CLI
#: and the report read schemas against this one set.
SCHEMA_KEYS = frozenset(BooleanEncoder().get_params()) - {
    "random_state",
    "epsilon",  # a budget, not a domain: the pipeline sets it
    "delta",
    "neighbouring",
    "level_selection",  # the mechanism of the budget, not a domain
}


def _refuse_unreleasable_dtypes(df, categories, ordinal):
    """Refuse, naming the column and its dtype (public schema), a period or
    interval column not declared as levels: read as undiscovered text, a
    monthly period of 3,000 rows came back as ``"other"`` objects, the dtype
    lost. Declared in ``categories=``, its levels come back in its dtype.
    A pyarrow-backed nested column (``list``, ``struct``, ``map``) is
    refused declared or not: its cells are no levels (counting them raised
    pyarrow's ``ArrowNotImplementedError`` from inside level discovery)."""
    declared = set(categories or {}) | set(ordinal or {})
    for col, dt in df.dtypes.items():
        if is_arrow(dt, "nested"):  # list, struct, map, union
            raise ValueError(
                f"column {col!r} has dtype {dt}, which the encoder cannot release: "
                "flatten it into columns of numbers or text (series.list.flatten(), "
                "series.struct.explode()) or convert it to text (series.astype(str))"
            )
        if col in declared:
            continue
        if isinstance(dt, pd.PeriodDtype):
            how = "convert it to timestamps (series.dt.to_timestamp()) to release dates"
        elif isinstance(dt, pd.IntervalDtype):
            how = "convert it to numbers (e.g. its midpoints, series.array.mid)"
        else:
            continue
        raise ValueError(
            f"column {col!r} has dtype {dt}, which the encoder cannot release as "
            f"it is: {how}, or declare its levels in categories="
        )
