"""Dates, times and durations as numbers of whole units.

A ``datetime64`` column (naive, or with a time zone) is encoded as the
number of whole ``unit``s since 1970-01-01 (for a zoned column: in UTC, or
days of its own calendar for ``"D"``), a
``timedelta64`` column as its length in ``unit``s. Both are then integer
numeric columns -- with private bins when their domain is not declared, as
any numeric column -- and are decoded back to whole units of the column's
own dtype and time zone. A pyarrow-backed column (``pd.ArrowDtype``, as
``pd.read_parquet(..., dtype_backend="pyarrow")`` gives: ``timestamp``,
``date32``/``date64``, ``duration``) is read through the NumPy dtype that
holds its values (:func:`native_time_dtype`) and given back in its own
dtype; a column of dates (``date32``/``date64``) is counted in days.

The unit is public (``BooleanEncoder(datetime_unit=)``): nothing is read
from the data to choose it. ``"s"`` by default; ``"D"`` for a column of
dates, so that they come back as dates (midnight), not as times of day.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from .validation import is_arrow

#: The units a time column may be counted in. Finer ones would put today's
#: dates beyond the private domains' root interval (``2^40`` units: 35,000
#: years in seconds, 35 years in milliseconds).
UNITS = ("D", "h", "min", "s")
#: Seconds per unit: a date/time column's bin edges in seconds (the unit its
#: rules compare in, ``skdp_synth.rules.Inequality``).
SECONDS = {"D": 86400.0, "h": 3600.0, "min": 60.0, "s": 1.0}

__all__ = [
    "CALENDAR_MONTHS",
    "CALENDAR_YEARS",
    "TIME_LINEAR_SPANS",
    "KEEP_ORIGIN",
    "KEEP_SPAN_SECONDS",
    "SECONDS",
    "UNITS",
    "calendar_cuts",
    "from_units",
    "is_date_dtype",
    "is_day_dtype",
    "is_duration_dtype",
    "is_time_dtype",
    "keep_axis",
    "local_days",
    "native_time_dtype",
    "parse_duration",
    "parse_durations",
    "time_cap",
    "time_coordinate",
    "time_inverse",
    "to_units",
]

#: The years whose 1 January (00:00 UTC) may cut a date/time column's
#: private domain into fixed cells (:func:`calendar_cuts`). Public: a
#: calendar, read from no data.
CALENDAR_YEARS = (1900, 2101)
#: Months per calendar cell: 12, a cell a year (1900, 1901, ..., 2101: 202
#: cuts). Measured (``python benchmarks/bench_datetime.py --seeds 10
#: --window-seeds 20 --n 1000``, 12 -> 24 months): the ``day`` column of
#: ``tests/test_pipeline_release.py`` (11.5 days, 1,500 rows, ε = 1) std
#: ratio in [0.5, 2] in 10 -> 6 of 10 seeds, KS .105 -> .213, median kept
#: leaf 5.7 -> 12.9 days; mean KS of the seconds / the dates at ε = 1 for 1
#: week .072 / .038 -> .070 / .123, 10 years .164 / .188 -> .112 / .102
#: (3 -> 0 of 40 fits with KS above .5: each empty cell is a leaf with its
#: noise, and ``kept_counts``' thresholds grow with ``ln L``, so finer cells
#: found a long window a little less often).
CALENDAR_MONTHS = 12
#: A date/time column's private domain keeps its leaves by rules in a
#: coordinate of time in spans of this many seconds (2^26 s, 777 days) from
#: :data:`KEEP_ORIGIN` (:func:`time_coordinate`), not in the log
#: of its magnitude: the keep rules bridge an empty stretch of at most one
#: span (``GAP_T``), where the log of 1.6e9 seconds bridged 35 years.
#: Measured (``python benchmarks/bench_datetime.py --only windows
#: --window-seeds 20 --n 1000``, 24-month cells, 2^25 -> 2^26 s): mean KS at
#: ε = 1 within .008 of each other for every window and both columns, at
#: ε = 0.3 10 years .890 / .842 -> .844 / .753; with 12-month cells (5
#: seeds) 2^24 s cut a sparse year of a 10-year window beyond a gap of one
#: span (KS .192 against .091 at 2^26 s) and 2^27 s let a noise leaf join
#: a month (W/IQR 3.39 against 1.43).
KEEP_SPAN_SECONDS = 2.0**26
KEEP_ORIGIN = "2000-01-01"


def keep_axis(unit: str) -> tuple:
    """``(origin, span, cuts)``: :data:`KEEP_SPAN_SECONDS` from
    :data:`KEEP_ORIGIN`, in ``unit``s, and the calendar cuts of the tree's
    depth-0 cells (:func:`calendar_cuts`), along which
    ``_numeric_domain._merge_even_siblings`` rebuilds the tree (public: the
    unit only)."""
    origin = _in_units(np.asarray([KEEP_ORIGIN], dtype="datetime64[s]"), unit)
    return float(origin[0]), KEEP_SPAN_SECONDS / SECONDS[unit], calendar_cuts(unit)


def native_time_dtype(dtype):
    """The NumPy (or pandas) dtype a time column of ``dtype`` is read in:
    ``dtype`` itself, or for a pyarrow-backed ``ArrowDtype`` the one that
    holds its values -- a ``timestamp`` as ``datetime64`` of its resolution
    (with its time zone), a date as ``datetime64[s]``, a ``duration`` as
    ``timedelta64`` of its resolution. Other dtypes come back unchanged. A
    function of the dtype (public)."""
    if not is_arrow(dtype):
        return dtype
    import pyarrow as pa

    pa_type = dtype.pyarrow_dtype
    if pa.types.is_timestamp(pa_type):
        if pa_type.tz is not None:
            return pd.DatetimeTZDtype(pa_type.unit, pa_type.tz)
        return np.dtype(f"datetime64[{pa_type.unit}]")
    if pa.types.is_date(pa_type):
        return np.dtype("datetime64[s]")
    if pa.types.is_duration(pa_type):
        return np.dtype(f"timedelta64[{pa_type.unit}]")
    return dtype


def is_time_dtype(dtype) -> bool:
    """Whether a column of this dtype holds dates/times or durations."""
    return is_date_dtype(dtype) or is_duration_dtype(dtype)


def is_date_dtype(dtype) -> bool:
    """Whether a column of this dtype holds dates/times (zoned or not), not
    durations."""
    return pd.api.types.is_datetime64_any_dtype(native_time_dtype(dtype))


def is_duration_dtype(dtype) -> bool:
    """Whether a column of this dtype holds durations (``timedelta64`` or a
    pyarrow ``duration``)."""
    return pd.api.types.is_timedelta64_dtype(native_time_dtype(dtype))


def is_day_dtype(dtype) -> bool:
    """Whether a column of this dtype holds calendar days only (a pyarrow
    ``date32``/``date64``): it is counted in days, whatever
    ``datetime_unit`` says, as a time of day has nowhere to go."""
    return is_arrow(dtype, "date")


def calendar_cuts(unit: str) -> tuple:
    """The public cuts of a date/time column's private domain, in ``unit``s
    since 1970: every :data:`CALENDAR_MONTHS`-th 1st of a month (00:00 UTC)
    from 1 January of the first year of :data:`CALENDAR_YEARS` to 1
    January of the last (1900, 1901, ..., 2101) -- whole units in every
    unit of :data:`UNITS`.

    A function of the unit only (public). PrivTree (``_numeric_domain``)
    starts from these cells instead of the magnitude grid's ``[2^28,
    2^32)`` seconds (1978-2106): a tree pays ``λ ln 2`` rows per level below
    its depth-0 cell, and a week of dates sat 12 levels below that cell
    (``benchmarks/bench_datetime.py``); a year's cell is 5-6 levels above
    a week, and 25 above a second (``MAX_DEPTH`` is 30).
    """
    first, last = CALENDAR_YEARS
    starts = pd.date_range(
        f"{first}-01-01", f"{last}-01-01", freq=f"{CALENDAR_MONTHS}MS"
    )
    cuts = _in_units(starts.to_numpy().astype("datetime64[s]"), unit)
    return tuple(float(v) for v in cuts)


def local_days(dtype, unit: str) -> bool:
    """Whether a column of ``dtype`` counted in ``unit`` counts its own time
    zone's calendar days (a zoned column in ``"D"``: dates come back at
    local midnight) rather than UTC's units (finer units: a local clock
    repeats an hour in autumn, so only UTC gives each instant one count)."""
    return _tz(dtype) is not None and unit == "D"


def _wall_time(stamp, tz, local):
    """A public scalar of a column in zone ``tz`` as the naive time its
    count is read from: the zone's wall clock (``local``) or UTC. A naive
    scalar is a time in ``tz``; one a clock change repeats is its first,
    one it skips the first instant after it."""
    if stamp is pd.NaT:
        return stamp
    if stamp.tzinfo is None:
        if local:
            return stamp
        stamp = stamp.tz_localize(tz, ambiguous=True, nonexistent="shift_forward")
    return stamp.tz_convert(tz if local else "UTC").tz_localize(None)


def _tz(dtype):
    return getattr(native_time_dtype(dtype), "tz", None)


def to_units(values, dtype, unit: str) -> np.ndarray:
    """Whole-or-fractional ``unit``s of ``values`` (NaN where missing).

    ``values``: a column of ``dtype``, or public scalars for it (bounds, bin
    edges: ``Timestamp``, ``datetime``, ISO strings; ``Timedelta`` or
    strings such as ``"3 days"`` for a duration). A naive public scalar of
    a zoned column is read in the column's time zone.
    """
    native = native_time_dtype(dtype)
    if native is not dtype:  # pyarrow-backed: read in its NumPy dtype
        if isinstance(values, pd.Series) and values.dtype == dtype:
            values = values.astype(native)
        dtype = native
    if pd.api.types.is_timedelta64_dtype(dtype):
        td = pd.to_timedelta(
            pd.Series(values) if not isinstance(values, pd.Series) else values
        )
        return _in_units(td.to_numpy(), unit)
    tz = _tz(dtype)
    # days on a zoned column's own calendar (a local midnight is a whole day,
    # where UTC's put New York's dates at 19:00 the day before); finer units
    # in UTC, where every instant has one count (:func:`local_days`)
    local = local_days(dtype, unit)
    if isinstance(values, pd.Series) and values.dtype == dtype:
        ts = values
        if tz is not None:
            ts = ts.dt.tz_convert(tz if local else "UTC").dt.tz_localize(None)
    else:
        stamps = [pd.Timestamp(v) if v is not None else pd.NaT for v in values]
        if tz is None and any(v is not pd.NaT and v.tzinfo is not None for v in stamps):
            raise ValueError(
                "a time zone was given for a column without one; pass naive dates"
            )
        if tz is not None:
            stamps = [_wall_time(v, tz, local) for v in stamps]
        # each in its own resolution: a Series of them is nanoseconds, which
        # refused a declared 2300-01-01 of a datetime64[s] column
        return np.array(
            [
                np.nan
                if v is pd.NaT
                else _in_units(np.array([v.to_datetime64()]), unit)[0]
                for v in stamps
            ],
            dtype=np.float64,
        )
    return _in_units(ts.to_numpy(), unit)


def _in_units(arr, unit):
    """``datetime64``/``timedelta64`` ticks as float ``unit``s since 1970 (NaN
    for NaT), in the array's own resolution: subtracting a nanosecond
    ``Timestamp(0)`` raised pandas' ``OutOfBoundsDatetime`` for a ``[s]``
    column's date before 1677, quoting the (private) value."""
    arr = np.asarray(arr)
    res, count = np.datetime_data(arr.dtype)
    ticks_per_unit = np.timedelta64(1, _np(unit)) / np.timedelta64(count, res)
    out = arr.view(np.int64) / ticks_per_unit
    out[np.isnat(arr)] = np.nan
    return out


def _resolution_seconds(dtype) -> float:
    dtype = native_time_dtype(dtype)
    unit = getattr(dtype, "unit", None) or np.datetime_data(np.dtype(dtype))[0]
    return {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}.get(unit, 1e-9)


def from_units(values: np.ndarray, dtype, unit: str) -> pd.Series:
    """A column of ``dtype`` from ``unit`` counts (NaN -> missing).

    Counts are rounded to whole units and clipped to what ``dtype`` can hold
    (a ``datetime64[ns]`` column: 1677-2262), so a decoded value far in a
    noise leaf of a private domain cannot overflow into another date.
    """
    v = np.asarray(values, dtype=np.float64)
    native = native_time_dtype(dtype)
    span = 0.999 * 2.0**63 * _resolution_seconds(native) / SECONDS[unit]
    v = np.clip(np.rint(v), -span, span)
    miss = np.isnan(v)
    counts = np.where(miss, 0, v).astype(np.int64).astype(f"timedelta64[{_np(unit)}]")
    counts = counts.astype("timedelta64[s]")
    if pd.api.types.is_timedelta64_dtype(native):
        out = pd.Series(counts)
    else:
        out = pd.Series(np.datetime64(0, "s") + counts)
        if local_days(native, unit):
            # a local midnight that occurs twice is its first; one that a
            # clock change skips is the first instant after it
            out = out.dt.tz_localize(
                _tz(native),
                ambiguous=np.ones(len(out), dtype=bool),
                nonexistent="shift_forward",
            )
        elif _tz(native) is not None:
            out = out.dt.tz_localize("UTC").dt.tz_convert(_tz(native))
    out = out.astype(native)
    out[miss] = pd.NaT
    if native is not dtype:  # back to the pyarrow-backed dtype
        if is_day_dtype(dtype):
            out = out.dt.floor("D")
        out = out.astype(dtype)
    return out


def _np(unit):
    return "m" if unit == "min" else unit


#: An ISO 8601 duration of fixed length: weeks, days, hours, minutes and
#: seconds, a fraction on the seconds only. pandas reads more, and misreads
#: it: "P1M" (a month) as a minute, "P0.5D" as five days, "PT1.5M" as five
#: minutes and a second.
ISO_DURATION = re.compile(
    r"[-+]?P(?=\d|T\d)(?:\d+W)?(?:\d+D)?"
    r"(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?"
)
#: Text that is meant as an ISO 8601 duration (and so must be one exactly).
_ISO_LIKE = r"[-+]?[Pp]"


def parse_durations(cells) -> pd.Series:
    """Cells (text) as ``timedelta64[ns]``: ISO 8601 durations of fixed length
    (:data:`ISO_DURATION`: ``"P1D"``, ``"PT30M"``) or pandas' own form
    (``"1 days 02:00:00"``, as ``to_csv`` writes them; ``"3 hours"``).
    ``NaT`` where a cell is missing or none of these -- a bare number too:
    pandas reads ``"5"`` as five nanoseconds, and the unit is not said --
    for the caller to refuse (out of ``timedelta64[ns]``'s +-292 years too).
    """
    cells = pd.Series(cells, dtype=object)
    out = pd.Series(pd.NaT, index=cells.index, dtype="timedelta64[ns]")
    present = cells.notna()
    if not present.any():
        return out
    text = cells[present].astype(str)
    ok = pd.to_numeric(text, errors="coerce").isna()
    ok &= ~text.str.match(_ISO_LIKE) | text.str.fullmatch(ISO_DURATION)
    if ok.any():
        good = text[ok]
        out[good.index] = pd.to_timedelta(good, errors="coerce").to_numpy()
    return out


def parse_duration(text):
    """One duration written as text (:func:`parse_durations`' forms) as a
    ``pd.Timedelta``, or ``None`` when it is not one (or not text)."""
    if not isinstance(text, str):
        return None
    value = parse_durations([text]).iloc[0]
    return None if pd.isna(value) else value


#: Beyond this many spans of a date/time column's axis from its origin
#: (128 spans of 2^26 s: 1728-2272) the keep rules' coordinate grows as a
#: logarithm (:func:`time_coordinate`): the root's ends (``±2^40`` days
#: for unit ``"D"``) are at ``|t| < 152`` there, and Tukey's fences of a
#: body spanning the whole root (``kept_counts`` maps them back with
#: ``2^t``) stay below ``t = 1024``, where float64 overflows (at 1,000
#: spans an integer column's fence hit ``inf`` and ``math.ceil`` raised).
TIME_LINEAR_SPANS = 128.0


def time_coordinate(x, time_axis):
    """The points ``x`` (a date/time column's units since 1970) where the
    keep rules' ``t`` (``kept_counts``, ``fences_t``) is
    ``(x - origin) / span`` for ``time_axis = (origin, span, _)``: time in
    spans, not the log of its magnitude (at 1.6e9 seconds one unit of
    ``t`` is 35 years, so a gap of ``GAP_T`` bridged 35 years of noise
    cells). Linear within :data:`TIME_LINEAR_SPANS` spans of the origin,
    logarithmic beyond; monotone, inverted by :func:`time_inverse`.
    Public: the unit only."""
    origin, span = time_axis[:2]
    d = np.asarray(x, dtype=np.float64) - origin
    a = np.abs(d) / span
    m = TIME_LINEAR_SPANS
    tau = np.where(a <= m, a, m + np.log2(np.maximum(a, m) / m))
    return np.sign(d) * (np.exp2(tau) - 1.0)


def time_inverse(v, time_axis):
    """``x`` of :func:`time_coordinate`'s ``v``."""
    origin, span = time_axis[:2]
    tau = np.log2(1.0 + np.abs(np.asarray(v, dtype=np.float64)))  # |t(v)|
    m = TIME_LINEAR_SPANS
    a = np.where(tau <= m, tau, m * np.exp2(np.maximum(tau, m) - m))
    return origin + np.sign(v) * a * span


def time_cap(cap, time_axis, integer, edges, kept):
    """The cap of ``kept_counts`` run in :func:`time_coordinate` (as
    a float column), back in units. For an integer column as
    ``kept_counts`` rounds it (``hi`` exclusive): a fence to the
    integers around it (``floor``, ``ceil + 1``), a leaf's edge to itself,
    within the kept leaves' edges. Rounded in the coordinate, where one
    unit of its ``x`` is a day or so, the cap reached 1-2 days past the
    fence."""
    lo, hi = (float(time_inverse(v, time_axis)) for v in cap)
    if not integer:
        return lo, hi
    pos = np.flatnonzero(np.asarray(kept) > 0)
    if pos.size:
        lo_e, hi_e = float(edges[pos[0]]), float(edges[pos[-1] + 1])
    else:
        lo_e, hi_e = -np.inf, np.inf
    lo = float(round(lo)) if abs(lo - round(lo)) < 1e-6 else float(math.floor(lo))
    hi = float(round(hi)) if abs(hi - round(hi)) < 1e-6 else math.ceil(hi) + 1.0
    return max(lo, lo_e), min(hi, hi_e)
