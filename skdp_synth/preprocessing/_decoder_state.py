"""A fitted :class:`BooleanEncoder`'s decoder as plain JSON and numeric arrays.

A synthesis pipeline's release (:meth:`SynthesisPipeline.to_release
<skdp_synth.pipeline.SynthesisPipeline.to_release>`) carries the encoder's
decoder so that the published file alone samples rows *in the table's own
schema*: each column's name, kind, levels or bin edges, missing level,
dtype, bit layout and private fine histogram, and the three decoding
parameters (``decode``, ``numeric_value``, ``within_bins``). What is left
out is only needed to *encode* data (public bounds, clipping, the split
heaps' bookkeeping), so the rebuilt encoder decodes and nothing else.

Privacy: every entry is a public parameter (declared levels, edges,
dtypes, the unit of a time column) or a private domain the encoder paid
for (PrivTree edges, discovered levels, noisy missing levels, the noisy
fine histograms: ``doc/privacy.md``, "Private domains"), covered by the
pipeline's guarantee. Domains learned *without* privacy (``inferred_``)
are the exception; the pipeline warns before writing them. The Gaussian
copula of ``within_bins="copula"`` is not stored: it is a function of the
release's own distribution of encoded rows and is fitted again from it
(post-processing).

The file is untrusted input when read back: :func:`decoder_from_state`
checks every key, type, range and shape, and that the bit names it
rebuilds from the columns' domains are the stored ones (so the layout
matches the released rows), and raises ``ValueError`` for any problem.
Levels and column names are written as tagged values (``["s", "red"]``,
``["i", 3]``, ``["f", 0.5]``, ``["b", true]``, ``["none"]``, ``["nan"]``) so
that ``3``, ``3.0``, ``"3"`` and ``True`` stay apart.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from .._datetime import UNITS, is_time_dtype
from ..validation import is_arrow
from ._boolean_encoder import BooleanEncoder
from ._column_spec import _bit_names, _blocks, _ColumnSpec
from ._numeric_domain import FineHistogram

__all__ = ["DECODER_VERSION", "decoder_from_state", "decoder_state"]

#: Version of the decoder's layout inside a release's plan.
DECODER_VERSION = 1

_KINDS = {"nominal", "binary", "ordinal", "numeric"}
_ENCODINGS = {"thermometer", "onehot"}
_DECODE_PARAMS = {
    "decode": {"sample", "argmax"},
    "numeric_value": {"auto", "fine", "midpoint", "uniform"},
    "within_bins": {"copula", "independent"},
}
_SPEC_KEYS = {
    "name",
    "kind",
    "levels",
    "missing",
    "dtype",
    "encoding",
    "integer",
    "bits",
    "time_unit",
    "fine",
}
#: keys an older file lacks: ``missing_none`` (whether
#: a missing level decodes to ``None`` or NaN; written always, absent it is
#: ``None``, as those files decoded) and ``other`` (the last level is the
#: catch-all of undiscovered levels; written where true)
_OPTIONAL_SPEC_KEYS = {"missing_none", "other"}
_FINE_KEYS = {"integer", "cap", "found", "scale", "missing_count"}
#: a fine histogram's key written only where there are any (older files lack
#: it): the column's declared point masses, public, decoded exactly
_OPTIONAL_FINE_KEYS = {"point_masses"}
#: a dtype as pandas spells it: ``int64``, ``Int64``, ``string``,
#: ``datetime64[ns, America/New_York]``, ``category``
_DTYPE_TEXT = re.compile(r"[A-Za-z0-9_\[\], /:+\-.=]{1,64}")
ARRAY_PREFIX = "decoder_"
#: Columns a decoder may hold beyond the released rows' bits (a column with
#: one level and no missing value has no bit).
MAX_COLUMNS_WITHOUT_BITS = 1024


# ------------------------------------------------------------------ writing
def _tag(value, what):
    """A level or column name as a tagged JSON value (``what`` names it in
    an error: a column name is public)."""
    if value is None:
        return ["none"]
    if isinstance(value, (bool, np.bool_)):
        return ["b", bool(value)]
    if isinstance(value, (int, np.integer)):
        return ["i", int(value)]
    if isinstance(value, (float, np.floating)):
        return ["nan"] if math.isnan(value) else ["f", float(value)]
    if isinstance(value, str):
        return ["s", value]
    raise TypeError(
        f"{what}: a level or name of type {type(value).__name__} cannot be "
        "written to a release file (strings, numbers, booleans and missing "
        "values can)"
    )


def _dtype_text(dtype, what):
    if isinstance(dtype, pd.CategoricalDtype):
        return {"category": bool(dtype.ordered)}
    text = str(dtype)
    if is_arrow(dtype) and not (
        _DTYPE_TEXT.fullmatch(text) and _arrow_round_trips(text)
    ):
        # pandas reads back a pyarrow dtype's name only for its plain types
        # (a decimal's precision or a dictionary's index type are not parsed)
        raise TypeError(
            f"{what}: its dtype {text!r} cannot be written to a release; cast "
            "the column before the fit (a decimal to float64, a dictionary to "
            "category)"
        )
    if not _DTYPE_TEXT.fullmatch(text):
        raise TypeError(f"{what}: its dtype {text!r} cannot be written to a release")
    return text


def _arrow_round_trips(text):
    try:
        return str(pd.api.types.pandas_dtype(text)) == text
    except (TypeError, ValueError, NotImplementedError):
        return False


def decoder_state(encoder: BooleanEncoder) -> tuple[dict, dict]:
    """``(metadata, arrays)`` of a fitted encoder's decoder (see the module)."""
    specs, arrays = [], {}
    for k, spec in enumerate(encoder.specs_):
        what = f"column {spec.name!r}"
        entry = {
            "name": _tag(spec.name, what),
            "kind": spec.kind,
            "missing": bool(spec.missing),
            "dtype": _dtype_text(spec.dtype, what),
            "encoding": spec.encoding,
            "integer": bool(spec.integer),
            "bits": [str(b) for b in spec.bits],
            "time_unit": spec.time_unit,
            "fine": None,
        }
        entry["missing_none"] = spec.missing_value is None
        if spec.other:
            entry["other"] = True
        if spec.kind == "numeric":
            entry["levels"] = None
            arrays[f"{ARRAY_PREFIX}edges_{k}"] = np.asarray(spec.levels, dtype=float)
        else:
            entry["levels"] = [_tag(v, what) for v in spec.levels]
        fine = spec.fine
        if fine is not None:
            arrays[f"{ARRAY_PREFIX}fine_edges_{k}"] = np.asarray(fine.edges, float)
            arrays[f"{ARRAY_PREFIX}fine_counts_{k}"] = np.asarray(fine.counts, float)
            arrays[f"{ARRAY_PREFIX}fine_finest_{k}"] = np.asarray(
                fine.finest, dtype=np.uint8
            )
            entry["fine"] = {
                "integer": bool(fine.integer),
                # JSON has no infinity: an open cap is null
                "cap": [None if math.isinf(c) else float(c) for c in fine.cap],
                "found": bool(fine.found),
                "scale": None if math.isnan(fine.scale) else float(fine.scale),
                "missing_count": float(fine.missing_count),
            }
            if getattr(fine, "point_masses", ()):
                entry["fine"]["point_masses"] = [float(v) for v in fine.point_masses]
        specs.append(entry)
    meta = {
        "version": DECODER_VERSION,
        "frame": bool(encoder._fitted_on_frame),
        "params": {key: getattr(encoder, key) for key in _DECODE_PARAMS},
        "specs": specs,
    }
    return meta, arrays


# ------------------------------------------------------------------ reading
def _untag(value, where):
    if not isinstance(value, list) or not value or not isinstance(value[0], str):
        raise ValueError(f"{where}: a tagged value must be a list [tag, value]")
    tag, rest = value[0], value[1:]
    if tag == "none" and not rest:
        return None
    if tag == "nan" and not rest:
        return float("nan")
    if len(rest) == 1:
        v = rest[0]
        if tag == "b" and isinstance(v, bool):
            return v
        if tag == "i" and isinstance(v, int) and not isinstance(v, bool):
            return v
        if tag == "f" and isinstance(v, (int, float)) and not isinstance(v, bool):
            if math.isfinite(v):
                return float(v)
        if tag == "s" and isinstance(v, str):
            return v
    raise ValueError(f"{where}: {value!r} is not a tagged level or name")


def _dtype_from(text, where):
    if isinstance(text, dict) and set(text) == {"category"}:
        if not isinstance(text["category"], bool):
            raise ValueError(f"{where}: a categorical dtype's 'ordered' is a boolean")
        return pd.CategoricalDtype(ordered=text["category"])
    if not (isinstance(text, str) and _DTYPE_TEXT.fullmatch(text)):
        raise ValueError(f"{where}: the dtype must be a pandas dtype's name")
    if ".." in text or "dateutil" in text or "pytz" in text:
        # a time zone is looked up by name only (a dateutil path would open
        # a file)
        raise ValueError(f"{where}: a time zone must be a plain zone name")
    try:
        return pd.api.types.pandas_dtype(text)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {text!r} is not a dtype pandas knows") from None


#: pandas' nullable number dtypes, by name (an integer column with missing
#: values comes back as one of these)
_NULLABLE_NUMBERS = frozenset(
    [f"{kind}{bits}" for kind in ("Int", "UInt") for bits in (8, 16, 32, 64)]
    + ["Float32", "Float64"]
)


def _is_number_dtype(dtype):
    """NumPy's integers and floats, pandas' nullable ones or pyarrow's (not
    bool, complex, or another extension dtype)."""
    if isinstance(dtype, np.dtype):
        return dtype.kind in "iuf"
    return str(dtype) in _NULLABLE_NUMBERS or is_arrow(dtype, "integer", "floating")


def _check_dtype(dtype, kind, unit, frame, where):
    """The dtypes an encoder gives back, by column kind (a tampered file's
    others crashed the decoder or gave bytes). A sparse dtype is checked by
    its subtype (``pd.get_dummies(sparse=True)``'s columns)."""
    inner = dtype
    if isinstance(dtype, pd.SparseDtype):
        inner = np.dtype(dtype.subtype)
    if unit is not None:
        ok = is_time_dtype(inner)
    elif kind == "numeric":
        ok = _is_number_dtype(inner)
    else:
        ok = (
            isinstance(inner, (pd.CategoricalDtype, pd.StringDtype, pd.BooleanDtype))
            or inner == np.dtype(object)
            or inner == np.dtype(bool)
            or _is_number_dtype(inner)
            or is_arrow(inner, "string", "large_string", "boolean")
        )
    if ok and not frame and not isinstance(dtype, np.dtype):
        ok = False  # an array's columns have NumPy dtypes
    if not ok:
        raise ValueError(f"{where}: dtype {dtype} is not one a {kind} column has")


def _vector(arrays, name, where, *, kind="f"):
    if name not in arrays:
        raise ValueError(f"{where}: the array {name!r} is missing")
    arr = np.asarray(arrays[name])
    if (
        arr.ndim != 1
        or arr.size < 1
        or arr.dtype.kind not in ("u" if kind == "u" else "iuf")
    ):
        raise ValueError(f"{where}: the array {name!r} must be a non-empty vector")
    return arr


def _increasing(arr, where):
    arr = arr.astype(np.float64)
    if arr.size < 2 or not np.all(np.isfinite(arr)) or not np.all(np.diff(arr) > 0):
        raise ValueError(f"{where}: edges must be finite and strictly increasing")
    return arr


def _fine_from(entry, arrays, k, where):
    if not (isinstance(entry, dict) and set(entry) - _OPTIONAL_FINE_KEYS == _FINE_KEYS):
        raise ValueError(f"{where}: 'fine' must have the keys {sorted(_FINE_KEYS)}")
    masses = entry.get("point_masses", [])
    if not (
        isinstance(masses, list)
        and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in masses
        )
    ):
        raise ValueError(f"{where}: the fine histogram's point_masses are numbers")
    edges = _increasing(_vector(arrays, f"{ARRAY_PREFIX}fine_edges_{k}", where), where)
    counts = _vector(arrays, f"{ARRAY_PREFIX}fine_counts_{k}", where).astype(float)
    finest = _vector(arrays, f"{ARRAY_PREFIX}fine_finest_{k}", where, kind="u")
    if counts.size != edges.size - 1 or finest.size != counts.size:
        raise ValueError(f"{where}: the fine histogram's arrays differ in length")
    if np.any(counts < 0) or np.any(finest > 1):
        raise ValueError(f"{where}: fine counts must be >= 0 and 'finest' 0 or 1")
    cap = entry["cap"]
    if not (isinstance(cap, list) and len(cap) == 2):
        raise ValueError(f"{where}: the fine histogram's cap is two numbers or nulls")
    bounds = []
    for c, inf in zip(cap, (-np.inf, np.inf)):
        if c is None:
            bounds.append(inf)
        elif isinstance(c, (int, float)) and not isinstance(c, bool):
            bounds.append(float(c))
        else:
            raise ValueError(f"{where}: the fine histogram's cap is numbers or nulls")
    if not bounds[0] < bounds[1]:
        raise ValueError(f"{where}: the fine histogram's cap is not an interval")
    scale, missing_count = entry["scale"], entry["missing_count"]
    for name, v in (("scale", scale), ("missing_count", missing_count)):
        if v is None and name == "scale":
            continue
        if not (isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0):
            raise ValueError(f"{where}: the fine histogram's {name} is a number >= 0")
    for name in ("integer", "found"):
        if not isinstance(entry[name], bool):
            raise ValueError(f"{where}: the fine histogram's {name} is a boolean")
    return FineHistogram(
        edges=edges,
        counts=counts,
        missing_count=float(missing_count),
        finest=finest.astype(bool),
        integer=entry["integer"],
        cap=(bounds[0], bounds[1]),
        found=entry["found"],
        scale=float("nan") if scale is None else float(scale),
        point_masses=tuple(float(v) for v in masses),
    )


def _spec_from(entry, arrays, k, frame):
    where = f"decoder column {k}"
    if not (
        isinstance(entry, dict)
        and _SPEC_KEYS <= set(entry) <= _SPEC_KEYS | _OPTIONAL_SPEC_KEYS
    ):
        raise ValueError(f"{where}: must have the keys {sorted(_SPEC_KEYS)}")
    if not isinstance(entry.get("missing_none", True), bool):
        raise ValueError(f"{where}: 'missing_none' must be true or false")
    if entry.get("other", True) is not True:
        raise ValueError(f"{where}: 'other' must be true where present")
    name = _untag(entry["name"], where)
    kind, encoding = entry["kind"], entry["encoding"]
    if kind not in _KINDS or encoding not in _ENCODINGS:
        raise ValueError(f"{where}: unknown kind or encoding")
    for key in ("missing", "integer"):
        if not isinstance(entry[key], bool):
            raise ValueError(f"{where}: {key!r} must be a boolean")
    unit = entry["time_unit"]
    if unit is not None and unit not in UNITS:
        raise ValueError(f"{where}: time_unit must be one of {sorted(UNITS)} or null")
    dtype = _dtype_from(entry["dtype"], where)
    _check_dtype(dtype, kind, unit, frame, where)
    if kind == "numeric":
        if entry["levels"] is not None:
            raise ValueError(f"{where}: a numeric column's edges are an array")
        levels = list(
            _increasing(_vector(arrays, f"{ARRAY_PREFIX}edges_{k}", where), where)
        )
    else:
        raw = entry["levels"]
        if not (isinstance(raw, list) and raw):
            raise ValueError(f"{where}: levels must be a non-empty list")
        levels = [_untag(v, where) for v in raw]
        if kind == "binary" and len(levels) != 2:
            raise ValueError(f"{where}: a binary column has two levels")
        if unit is not None:
            raise ValueError(f"{where}: only a numeric column has a time unit")
    fine = entry["fine"]
    if fine is not None:
        if kind != "numeric":
            raise ValueError(f"{where}: only a numeric column has a fine histogram")
        fine = _fine_from(fine, arrays, k, where)
        lo, hi = fine.cap
        if lo > levels[-1] or hi < levels[0]:
            # a cap outside the column's bins put every value there (-1e9
            # for bins [6.6, 129.3])
            raise ValueError(f"{where}: the fine histogram's cap misses its bins")
    bits = entry["bits"]
    if not (isinstance(bits, list) and all(isinstance(b, str) for b in bits)):
        raise ValueError(f"{where}: bits must be a list of strings")
    spec = _ColumnSpec(
        name=name,
        kind=kind,
        levels=levels,
        missing=entry["missing"],
        dtype=dtype,
        encoding=encoding,
        integer=entry["integer"],
        fine=fine,
        time_unit=unit,
        missing_value=None if entry.get("missing_none", True) else np.nan,
        other=bool(entry.get("other")) and kind == "nominal",
    )
    try:
        expected = _bit_names(spec)
    except (TypeError, ValueError, OverflowError, IndexError):
        raise ValueError(f"{where}: its domain does not give a bit layout") from None
    if expected != bits:
        raise ValueError(f"{where}: its bits do not match its domain")
    spec.bits = bits
    return spec


def decoder_from_state(
    meta: dict, arrays: dict, *, n_features: int | None = None
) -> BooleanEncoder:
    """A fitted :class:`BooleanEncoder` that decodes as the stored one did
    (``inverse_transform`` only), from untrusted ``meta`` and ``arrays``;
    ``n_features``: the released rows' width, which the bits must match.
    Raises ``ValueError`` for anything malformed."""
    if not (
        isinstance(meta, dict) and set(meta) == {"version", "frame", "params", "specs"}
    ):
        raise ValueError("the decoder must have the keys frame, params, specs, version")
    if meta["version"] != DECODER_VERSION or isinstance(meta["version"], bool):
        raise ValueError(f"decoder version {meta['version']!r} is not supported")
    if not isinstance(meta["frame"], bool):
        raise ValueError("the decoder's 'frame' must be a boolean")
    params = meta["params"]
    if not (isinstance(params, dict) and set(params) == set(_DECODE_PARAMS)):
        raise ValueError(f"the decoder's params must be {sorted(_DECODE_PARAMS)}")
    for key, allowed in _DECODE_PARAMS.items():
        if params[key] not in allowed:
            raise ValueError(f"the decoder's {key} must be one of {sorted(allowed)}")
    raw = meta["specs"]
    if not (isinstance(raw, list) and raw):
        raise ValueError("the decoder's specs must be a non-empty list")
    if n_features is not None and len(raw) > n_features + MAX_COLUMNS_WITHOUT_BITS:
        # columns without bits (one level, never missing) cost decoding work
        # but no released width: bounded
        raise ValueError("the decoder has far more columns than the rows' bits")
    specs = [_spec_from(entry, arrays, k, meta["frame"]) for k, entry in enumerate(raw)]
    names = [spec.name for spec in specs]
    try:
        distinct = len(set(names)) == len(names)
    except TypeError:  # pragma: no cover - untagged values are all hashable
        distinct = False
    if not distinct or any(n is None or n != n for n in names):
        raise ValueError("the decoder's column names must be distinct and not missing")
    width = sum(len(spec.bits) for spec in specs)
    if n_features is not None and width != n_features:
        raise ValueError("the decoder's bits do not match the released rows' width")
    known = {
        f"{ARRAY_PREFIX}{p}_{k}"
        for k in range(len(specs))
        for p in ("edges", "fine_edges", "fine_counts", "fine_finest")
    }
    extra = [a for a in arrays if a.startswith(ARRAY_PREFIX) and a not in known]
    if extra:
        raise ValueError(f"unexpected decoder arrays {sorted(extra)}")
    encoder = BooleanEncoder(**params)
    encoder.columns_ = names
    encoder.specs_ = specs
    encoder.blocks_ = _blocks(specs)
    encoder.n_features_in_ = len(names)
    encoder._fitted_on_frame = meta["frame"]
    return encoder
