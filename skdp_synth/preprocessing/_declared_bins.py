"""Numeric bins decoded without a fine histogram: declared bins
(``bin_edges=``), and any bin under ``numeric_value="midpoint"`` or
``"uniform"``. Their values (:func:`bin_values`), the mean and mean square
``sample`` gives each declared bin (:func:`declared_bin_moments`, for the
spread warnings of ``_spread``), and the warning for a declared bin far
wider than its column's others (:func:`warn_wide_declared_bins`). Public:
the bin edges only.
"""

from __future__ import annotations

import numpy as np

#: Values drawn per bin by :func:`declared_bin_moments` and
#: ``_decoding.decoded_bin_moments``: a Monte Carlo error of a few percent of
#: a bin's spread, well inside the warnings' factor 2 (``ISOLATED_RATIO``).
DECODED_DRAWS = 2000


#: a declared numeric bin wider than this many times the median width of
#: its column's bins warns (``WideBinWarning``). Public: the declared edges.
#: Measured on the suite's public deciles (``benchmarks/bench_suite.py
#: --methods auto-bins``, TUNE half; ``benchmarks/results/bench_tstr_ceiling.md``):
#: the bins that broke train-on-synthetic are 187 (cps1988 ``wage``'s top
#: decile [1068, 18777] decodes to 9,923: R² -9 to -11 against 0.32 with
#: a private domain) and 28 times the median (acs12 ``income``: R² -0.5);
#: at 25 the rule names 19 of the 63 numeric columns of credit, loans,
#: attrition, acs12, hmda and cps1988 (none of attrition's, whose widest
#: is 12.5 times).
WIDE_BIN_RATIO = 25.0


def wide_declared_bins(specs, bin_edges):
    """``{column: (left, right, ratio)}``: the declared numeric bins wider than
    ``WIDE_BIN_RATIO`` times their column's median bin width (columns of at
    least three bins). Reads the declared edges only."""
    out = {}
    for spec in specs:
        if spec.kind != "numeric" or spec.fine is not None:
            continue
        if spec.name not in (bin_edges or {}):
            continue
        edges = np.asarray(spec.levels, dtype=np.float64)
        widths = np.diff(edges)
        if widths.size < 3:
            continue
        median = float(np.median(widths))
        k = int(np.argmax(widths))
        if median > 0 and widths[k] > WIDE_BIN_RATIO * median:
            out[spec.name] = (float(edges[k]), float(edges[k + 1]), widths[k] / median)
    return out


def warn_wide_declared_bins(specs, bin_edges, numeric_value):
    """One ``WideBinWarning`` naming the columns of :func:`wide_declared_bins`."""
    import warnings

    from ..exceptions import WideBinWarning
    from ..validation import user_stacklevel

    wide = wide_declared_bins(specs, bin_edges)
    if not wide:
        return
    how = "uniformly inside it" if numeric_value == "uniform" else "to its midpoint"
    named = "; ".join(
        f"{c!r}: [{lo:g}, {hi:g}], {r:.0f} times the median width"
        for c, (lo, hi, r) in wide.items()
    )
    warnings.warn(
        f"declared bin_edges with a bin far wider than the column's others ({named}):"
        f" a value in such a bin decodes {how}, which for a long tail inflates the"
        " column's mean and spread. Split the bin, or declare bounds= for a private"
        " domain whose fine histogram decodes inside its bins.",
        WideBinWarning,
        stacklevel=user_stacklevel(),
    )


def bin_values(spec, index, rng, numeric_value):
    """Numeric column ``spec``'s values (floats) of the bins ``index``
    without a fine histogram's draw: each bin's midpoint, or a uniform draw
    inside it (``numeric_value="uniform"``); an integer column's the nearest
    integer inside the bin (the last bin is closed)."""
    edges = np.asarray(spec.levels, dtype=np.float64)
    left, right = edges[index], edges[index + 1]
    if numeric_value == "uniform":
        values = left + rng.random(len(index)) * (right - left)
    else:
        values = (left + right) / 2
    if spec.integer:
        # the nearest integer inside [left, right) (the last bin is closed)
        last = index == len(edges) - 2
        lo_int = np.ceil(left)
        hi_int = np.where(last, np.floor(right), np.ceil(right) - 1)
        if spec.fine is not None:
            # a closed last bin [last, last + 1] ends past the cap
            # (_coarse_bins._own_last_integers): not its top integer
            hi_int = np.minimum(hi_int, spec.fine.last_integer)
        has_int = hi_int >= lo_int
        values = np.where(
            has_int,
            np.clip(np.rint(values), lo_int, np.maximum(hi_int, lo_int)),
            np.rint(values),
        )
    return values


def declared_bin_moments(spec, numeric_value):
    """``(k, 2)``: each of numeric column ``spec``'s ``k`` bins' mean and
    mean square as ``sample`` decodes a bin without a fine histogram
    (:func:`bin_values`: its midpoint, or :data:`DECODED_DRAWS` uniform
    draws from a fixed public seed), or ``None`` where the column has a
    fine histogram (``_decoding.decoded_bin_moments``). Public: the bin edges."""
    k = int(spec.n_levels)
    if getattr(spec, "fine", None) is not None or k < 1:
        return None
    i = np.repeat(np.arange(k), DECODED_DRAWS)
    v = bin_values(spec, i, np.random.default_rng(0), numeric_value)
    v = v.reshape(k, DECODED_DRAWS)
    return np.column_stack([v.mean(axis=1), (v * v).mean(axis=1)])
