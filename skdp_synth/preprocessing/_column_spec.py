"""What one column of a :class:`BooleanEncoder` is, and how its cells read.

A fitted encoder holds one :class:`_ColumnSpec` per input column: its kind
(nominal, binary, ordinal, numeric), its levels or bin edges, whether it has
a missing level, its dtype and time unit, and the names of its output bits.
The spec is the contract between the pieces that use it -- the domain that
builds it (``_column_domain``), ``transform``, the decoder (``_decoding``)
and a release's stored decoder (``_decoder_state``) -- so it and the pure
functions of it live here, apart from any of them: the bit names and the
:class:`~skdp_synth.blocks.Blocks` layout, the public text of an edge, and
how a cell is read as a level key (:func:`_hashable`) or as a number in the
column's unit (:func:`_numbers`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._datetime import from_units, is_duration_dtype, native_time_dtype, to_units
from ..blocks import Block, Blocks

MISSING_LABEL = "<missing>"
#: The level that undiscovered categories of a privately learned column map to.
OTHER_LABEL = "other"


def _is_missing(values):
    return pd.isna(values)


def can_hold_missing(dtype):
    """Whether a column of ``dtype`` can hold a missing value: every dtype
    but NumPy's integers and booleans (float NaN, ``datetime64`` and
    ``timedelta64`` NaT, object and categorical ``None``/NaN, the nullable
    ``Int64``, ``Float64``, ``boolean`` and ``string`` ``pd.NA``). Public:
    the schema only, never the values. A sparse column can where its
    subtype can (``pd.get_dummies(sparse=True)``'s ``Sparse[bool, False]``
    got a missing level, and rows with one came back as ``object``)."""
    if isinstance(dtype, pd.SparseDtype):
        return can_hold_missing(np.dtype(dtype.subtype))
    return not (isinstance(dtype, np.dtype) and dtype.kind in "iub")


@dataclass
class _ColumnSpec:
    """How one input column maps to a block of bits."""

    name: object
    kind: str  # "nominal", "binary", "ordinal", "numeric"
    levels: list  # categories (nominal/binary/ordinal) or bin edges (numeric)
    missing: bool  # whether the column has a missing indicator/category
    dtype: object
    encoding: str = "thermometer"  # for ordinal/numeric: thermometer or onehot
    integer: bool = False
    bits: list = field(default_factory=list)  # output feature names
    fine: object = None  # FineHistogram of a privately learned numeric domain
    other: bool = False  # undeclared levels map to the last level ("other")
    clip: bool = False  # values outside the edges are clipped (else an error)
    bounds: tuple | None = None  # public bounds: only values outside them warn
    # whether ``missing`` was not declared but decided by the encoder (from
    # the dtype, or by a noisy count in states saved before): missing values
    # found later where it has no level are encoded as a value, since an
    # error would reveal them
    missing_learned: bool = False
    # bins of one integer each, split from a heavy leaf of a private domain
    # (split_heavy_leaves): a pipeline drops those its release does not support
    split: tuple = ()
    # the bins of ``split`` cut from a heavy, wide leaf (split_wide_leaves):
    # a float column's tested at TENTATIVE_SUPPORT_Z, and the column named
    # where two of them hold its rows (_spread.wide_parts_reason)
    wide: tuple = ()
    # the leaves of ``fine`` whose count is a bin's shortfall given out by a
    # pipeline (_bin_mass.fill_emptied_leaves), not their own noisy count:
    # the release's estimate of the bin does not confirm them (_spread)
    filled: tuple = ()
    # a date/time or duration column counted in this unit (``_datetime``)
    time_unit: str | None = None
    # a categorical column's noisy count of its missing cells drawn by its
    # private level selection, and that noise's variance: ``(raw, var)``, or
    # ``None`` (read by a pipeline's missing-level test, _missing_support)
    missing_noise: tuple | None = None
    # what a missing level decodes to (a categorical column): ``None`` where
    # the declared levels hold ``None``, else NaN (pandas' object marker)
    missing_value: object = np.nan

    @property
    def n_levels(self):
        return len(self.levels) - 1 if self.kind == "numeric" else len(self.levels)


def _is_missing_scalar(v):
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _hashable(v):
    """A level's key: its value tagged with its kind, so that ``1``, ``1.0``
    and ``True`` (equal and hash-equal in Python) stay three levels; NumPy
    scalars key as the Python ones (``np.int64(1)`` is ``1``)."""
    if isinstance(v, (bool, np.bool_)):
        return ("bool", bool(v))
    if isinstance(v, numbers.Integral):
        return ("int", int(v))
    if isinstance(v, numbers.Real):
        return ("float", float(v))
    try:
        hash(v)
        return ("value", v)  # np.str_('a') keys as 'a'
    except TypeError:
        return ("repr", repr(v))


def _numbers(series, unit):
    """A numeric or time column as float64 (NaN where missing).

    A cell that is not a number is refused naming the column only: NumPy's
    "could not convert string to float: '<the cell>'" quoted it (a text
    cell of a column declared numeric by ``bin_edges=``, in the library, the
    CLI and out of core)."""
    if unit is not None:
        return to_units(series, series.dtype, unit)
    try:
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise ValueError(
            f"column {series.name!r} is numeric (bin_edges=, bounds= or its "
            "dtype) but has values that are not numbers (not shown: they are "
            "private); convert it, e.g. with pd.to_numeric, or declare its "
            "categories"
        ) from None


def _is_bool(v):
    return isinstance(v, (bool, np.bool_))


def _bit_names(spec):
    name = str(spec.name)
    if spec.kind == "binary":
        return [f"{name}={spec.levels[1]}"]
    if spec.kind == "nominal":
        bits = [f"{name}={c}" for c in spec.levels]
        return bits + ([f"{name}={MISSING_LABEL}"] if spec.missing else [])
    if spec.kind == "numeric":
        e = spec.levels
        if spec.time_unit is not None:  # edges as dates or durations
            e = _time_labels(e, spec)
        if spec.encoding == "onehot":
            closing = [")"] * (len(e) - 2) + ["]"]
            bits = [
                f"{name} in [{_fmt(e[i])}, {_fmt(e[i + 1])}{closing[i]}"
                for i in range(len(e) - 1)
            ]
        else:
            bits = [f"{name}>={_fmt(x)}" for x in e[1:-1]]
    else:  # ordinal
        if spec.encoding == "onehot":
            bits = [f"{name}={c}" for c in spec.levels]
        else:
            bits = [f"{name}>={c}" for c in spec.levels[1:]]
    return bits + ([f"{name}={MISSING_LABEL}"] if spec.missing else [])


def _blocks(specs):
    """The :class:`Blocks` of the bit layout written by ``_encode_column``."""
    blocks, start = [], 0
    for spec in specs:
        width = len(spec.bits)
        if width == 0:  # one level, never missing: a constant with no bits
            continue
        if spec.kind == "binary":
            kind, missing = "binary", False
        elif spec.kind == "nominal" or spec.encoding == "onehot":
            kind, missing = "onehot", False
        else:
            kind, missing = "thermometer", spec.missing
        blocks.append(Block(str(spec.name), kind, start, width, missing))
        start += width
    return Blocks(tuple(blocks))


def _time_labels(edges, spec):
    """Edges of a time column as text. A noisy edge of a private domain can
    land past year 9999 in a ``datetime64[s]`` column, where ``strftime``
    (Python's ``datetime``) raises: dates are written by NumPy, which names
    every representable day, so no edge can fail a fit after the data was
    read."""
    dtype = native_time_dtype(spec.dtype)  # a pyarrow date's as NumPy's
    values = from_units(np.asarray(edges), dtype, spec.time_unit)
    if spec.time_unit == "D" and not is_duration_dtype(dtype):
        if getattr(values.dt, "tz", None) is not None:
            values = values.dt.tz_localize(None)  # the local calendar day
        days = values.to_numpy().astype("datetime64[D]")
        return [str(d) for d in np.datetime_as_string(days)]
    return [str(v) for v in values]


def _public_text(spec, x):
    """A declared edge or bound as the user wrote it: a date for a time
    column, a plain float otherwise; an open side of one-sided bounds is
    ``None`` (it read as pandas' last date, 2262, for a time column)."""
    if not np.isfinite(x):
        return "None"
    if spec.time_unit is not None:
        return _time_labels([x], spec)[0]
    return repr(float(x))


def _fmt(x):
    return x if isinstance(x, str) else f"{x:g}"
