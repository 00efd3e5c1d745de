"""Dates, times and durations as numbers of whole units.

A ``datetime64`` column (naive, or with a time zone) is encoded as the
number of whole ``unit``s since 1970-01-01 (UTC for a zoned column), a
``timedelta64`` column as its length in ``unit``s. Both are then integer
numeric columns -- with private bins when their domain is not declared, as
any numeric column -- and are decoded back to whole units of the column's
own dtype and time zone.

The unit is public (``BooleanEncoder(datetime_unit=)``): nothing is read
from the data to choose it. ``"s"`` by default; ``"D"`` for a column of
dates, so that they come back as dates (midnight), not as times of day.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: The units a time column may be counted in. Finer ones would put today's
#: dates beyond the private domains' root interval (``2^40`` units: 35,000
#: years in seconds, 35 years in milliseconds).
UNITS = ("D", "h", "min", "s")
_SECONDS = {"D": 86400.0, "h": 3600.0, "min": 60.0, "s": 1.0}

__all__ = ["UNITS", "from_units", "is_time_dtype", "to_units"]


def is_time_dtype(dtype) -> bool:
    """Whether a column of this dtype holds dates/times or durations."""
    return pd.api.types.is_datetime64_any_dtype(
        dtype
    ) or pd.api.types.is_timedelta64_dtype(dtype)


def _tz(dtype):
    return getattr(dtype, "tz", None)


def to_units(values, dtype, unit: str) -> np.ndarray:
    """Whole-or-fractional ``unit``s of ``values`` (NaN where missing).

    ``values``: a column of ``dtype``, or public scalars for it (bounds, bin
    edges: ``Timestamp``, ``datetime``, ISO strings; ``Timedelta`` or
    strings such as ``"3 days"`` for a duration). A naive public scalar of
    a zoned column is read in the column's time zone.
    """
    if pd.api.types.is_timedelta64_dtype(dtype):
        td = pd.to_timedelta(
            pd.Series(values) if not isinstance(values, pd.Series) else values
        )
        return _in_units(td.to_numpy(), unit)
    if isinstance(values, pd.Series) and values.dtype == dtype:
        ts = values
    else:
        ts = pd.Series([pd.Timestamp(v) if v is not None else pd.NaT for v in values])
        if _tz(dtype) is not None:
            ts = pd.Series(
                [
                    v
                    if v is pd.NaT or v.tzinfo is not None
                    else v.tz_localize(_tz(dtype))
                    for v in ts
                ]
            )
        ts = pd.to_datetime(ts, utc=_tz(dtype) is not None)
    if _tz(dtype) is not None:
        ts = ts.dt.tz_convert("UTC").dt.tz_localize(None)
    elif getattr(ts.dt, "tz", None) is not None:
        raise ValueError(
            "a time zone was given for a column without one; pass naive dates"
        )
    return _in_units(ts.to_numpy(), unit)


def _in_units(arr, unit):
    """``datetime64``/``timedelta64`` ticks as float ``unit``s since 1970 (NaN
    for NaT), in the array's own resolution: subtracting a nanosecond
    ``Timestamp(0)`` raised pandas' ``OutOfBoundsDatetime`` for a ``[s]``
    column's date before 1677, quoting the (private) value."""
    arr = np.asarray(arr)
    res, count = np.datetime_data(arr.dtype)
    ticks_per_unit = np.timedelta64(1, unit) / np.timedelta64(count, res)
    out = arr.view(np.int64) / ticks_per_unit
    out[np.isnat(arr)] = np.nan
    return out


def _resolution_seconds(dtype) -> float:
    unit = getattr(dtype, "unit", None) or np.datetime_data(np.dtype(dtype))[0]
    return {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}.get(unit, 1e-9)


def from_units(values: np.ndarray, dtype, unit: str) -> pd.Series:
    """A column of ``dtype`` from ``unit`` counts (NaN -> missing).

    Counts are rounded to whole units and clipped to what ``dtype`` can hold
    (a ``datetime64[ns]`` column: 1677-2262), so a decoded value far in a
    noise leaf of a private domain cannot overflow into another date.
    """
    v = np.asarray(values, dtype=np.float64)
    span = 0.999 * 2.0**63 * _resolution_seconds(dtype) / _SECONDS[unit]
    v = np.clip(np.rint(v), -span, span)
    miss = np.isnan(v)
    counts = np.where(miss, 0, v).astype(np.int64).astype(f"timedelta64[{_np(unit)}]")
    counts = counts.astype("timedelta64[s]")
    if pd.api.types.is_timedelta64_dtype(dtype):
        out = pd.Series(counts)
    else:
        out = pd.Series(np.datetime64(0, "s") + counts)
        if _tz(dtype) is not None:
            out = out.dt.tz_localize("UTC").dt.tz_convert(_tz(dtype))
    out = out.astype(dtype)
    out[miss] = pd.NaT
    return out


def _np(unit):
    return "m" if unit == "min" else unit
