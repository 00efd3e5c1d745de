"""Bits back to a table: how a :class:`BooleanEncoder` decodes.

:meth:`BooleanEncoder.inverse_transform` turns any row with entries in
``[0, 1]`` into a valid row of the fitted schema, by the rule in the
encoder's module docstring. That rule is post-processing of the rows it is
given (no privacy cost) and needs only the columns' specs and the decoding
parameters (``decode``, ``numeric_value``, ``within_bins``), never the
training data -- which is why a release's stored decoder
(``_decoder_state``) can run it. Here: a block's level index
(:func:`decode_index`), a level index's value in the column's dtype, with
missing cells and dates or durations restored (:func:`values_from_index`),
the Gaussian copula's positions inside numeric bins
(:func:`quantiles_in_bins`), and the output as a DataFrame or an array
(:func:`decoded_output`). The draws come from the one generator the caller
passes, in the caller's order.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from .._datetime import from_units
from ._count_tail import cut_count_tail_reason, wide_outer_leaf_reason
from ._declared_bins import (
    DECODED_DRAWS,
    bin_values,
    declared_bin_moments,
)
from ._edge_gap import above_noise, kept_across_edge
from ._far_tail import _core_mode, _far_side, far_tail
from ._fences import capped_tail_reason
from ._natural_limits import NATURAL_LIMITS
from ._numeric_domain import GAP_T, INNER_SCALES, _t, _x
from ._round_heaps import heap_draws, heap_shares, round_values
from ._single_leaf import single_leaf_reason
from ._spread import declared_spread_reasons, spread_reasons, wide_parts_reason
from ._tail_past_cap import capped_floor_reason
from ._tail_rates import (
    OUTER_FALL_T,
    TAIL_FIT_T,
    _decay_scale,
    _falls,
    _fitted_rate,
    _fitted_tail_rate,
    _is_hard_edge,
    _t_decay_values,
)


def copula_columns(specs):
    """The columns the copula couples: numeric with a fine histogram."""
    return [
        k
        for k, spec in enumerate(specs)
        if spec.kind == "numeric" and spec.fine is not None
    ]


def quantiles_in_bins(copula, cols, decoded, rng, *, within_bins, numeric_value):
    """``{column position: quantile in its bin}`` from the copula (``cols``:
    the positions it couples; none without a copula, or where
    ``within_bins`` or ``numeric_value`` do not use it)."""
    from ._copula import within_bin_quantiles

    if (
        within_bins != "copula"
        or copula is None
        or numeric_value not in ("auto", "fine")
        or not decoded
        or len(decoded[0][0]) == 0
    ):
        return {}
    U = within_bin_quantiles(
        copula,
        np.stack([decoded[k][0] for k in cols], 1),
        np.stack([decoded[k][1] for k in cols], 1),
        rng,
    )
    return {k: U[:, i] for i, k in enumerate(cols)}


def decode_index(spec, B, rng, decode):
    """Each row's level index (and whether it is missing) in ``spec``'s
    block ``B``, by the ``decode`` rule (``"argmax"``: rounding, no draws)."""
    n = B.shape[0]
    sample = decode == "sample"
    miss = np.zeros(n, dtype=bool)
    if spec.kind == "binary":
        v = B[:, 0]
        index = (rng.random(n) < v) if sample else (v >= 0.5)
        index = index.astype(int)
    elif spec.kind == "nominal" or spec.encoding == "onehot":
        index = _decode_onehot(B, sample, rng)
        if spec.missing:
            miss = index == spec.n_levels
            index = np.where(miss, 0, index)
    else:  # thermometer (+ missing bit)
        if spec.missing:
            miss = (rng.random(n) < B[:, -1]) if sample else (B[:, -1] >= 0.5)
            B = B[:, :-1]
        s = B.sum(axis=1)
        if sample:
            base = np.floor(s)
            index = base + (rng.random(n) < (s - base))
        else:
            index = np.floor(s + 0.5)
        index = np.clip(index.astype(int), 0, spec.n_levels - 1)
    return index, miss


def values_from_index(spec, index, miss, rng, numeric_value, within=None):
    """Column ``spec``'s values of the level indices ``index`` (missing where
    ``miss``), in its dtype: a numeric bin by ``numeric_value`` (``within``:
    the copula's quantiles in the bins, or ``None``), a level as declared."""
    if spec.kind == "numeric":
        edges = np.asarray(spec.levels, dtype=np.float64)
        left, right = edges[index], edges[index + 1]
        if spec.fine is not None and numeric_value in ("auto", "fine"):
            last = index == len(edges) - 2
            values = decode_fine(
                spec.fine, left, right, last, rng, u=within, first=index == 0
            )
            return _numeric_back(values, miss, spec)
        return _numeric_back(bin_values(spec, index, rng, numeric_value), miss, spec)
    levels = np.empty(len(spec.levels), dtype=object)
    levels[:] = spec.levels
    values = levels[index]
    if miss.any():
        # ``None`` where the declared levels hold ``None``; else NaN,
        # pandas' marker of a missing object value as read_csv writes it
        # (None came back where the input had NaN). The input's own
        # marker is not read: one row would decide it. Nullable dtypes
        # get their NA (_cast_back)
        values = values.copy()
        values[miss] = spec.missing_value
    series = pd.Series(values, dtype=object)
    return _cast_back(series, spec.dtype, categories=spec.levels)


def _numeric_back(values, miss, spec):
    """Decoded numbers in the column's dtype: a time column's dates or
    durations; an integer column's values clipped to what its dtype holds
    (public: the dtype), so a value of a private bin past ``int8``'s 127
    cannot wrap around to -128."""
    values = np.where(miss, np.nan, np.asarray(values, dtype=np.float64))
    if spec.time_unit is not None:
        return from_units(values, spec.dtype, spec.time_unit)
    if pd.api.types.is_integer_dtype(spec.dtype):
        info = np.iinfo(_held_dtype(spec.dtype))
        hi = float(info.max)
        if hi > info.max:  # int64, uint64: the float rounds past the largest
            hi = float(np.nextafter(hi, -np.inf))
        values = np.clip(values, float(info.min), hi)
    elif pd.api.types.is_float_dtype(spec.dtype):
        # a float16 / float32 column likewise: a declared bin's value past
        # float16's 65,504 came back as inf, which no row of the input holds
        big = float(np.finfo(_held_dtype(spec.dtype)).max)
        values = np.clip(values, -big, big)
    return _cast_back(pd.Series(values, dtype=np.float64), spec.dtype)


def _held_dtype(dtype):
    """The NumPy dtype that holds ``dtype``'s values: pandas' nullable and
    pyarrow's name it in ``numpy_dtype``, a sparse one in ``subtype``
    (``np.iinfo`` of the SparseDtype itself raised after the fit had spent
    its budget)."""
    held = getattr(dtype, "numpy_dtype", None)
    held = getattr(dtype, "subtype", None) if held is None else held
    return dtype if held is None else held


def _decode_onehot(B, sample, rng):
    """Category index per row of a one-hot block, by the documented rule."""
    n, width = B.shape
    index = np.empty(n, dtype=int)
    ones = B.sum(axis=1)
    exact = (ones == 1) & np.all((B == 0) | (B == 1), axis=1)
    index[exact] = np.argmax(B[exact], axis=1)
    rest = np.flatnonzero(~exact)
    if rest.size == 0:
        return index
    fallback = B.mean(axis=0)
    if fallback.sum() <= 0:
        fallback = np.ones(width)
    if not sample:
        rows = B[rest]
        best = rows.max(axis=1, keepdims=True)
        ties = rows == best
        # break ties (and all-zero rows) towards the most frequent category
        score = ties * (1.0 + fallback[None, :] / (fallback.max() + 1.0))
        index[rest] = np.argmax(score, axis=1)
        return index
    weights = B[rest].copy()
    zero = weights.sum(axis=1) <= 0
    weights[zero] = fallback
    weights /= weights.sum(axis=1, keepdims=True)
    cum = np.cumsum(weights, axis=1)
    u = rng.random(rest.size)[:, None]
    index[rest] = np.minimum((u > cum).sum(axis=1), width - 1)
    return index


def _cast_back(series, dtype, categories=None):
    """Return the decoded column in its training dtype where that is lossless.

    A categorical column gets the *declared* levels as its categories, not the
    training dtype's: those may be the observed levels only, so a declared
    level the data lacks would decode to NaN and the dtype would show which
    levels were observed.
    """
    if isinstance(dtype, pd.CategoricalDtype):
        if categories is None:  # pragma: no cover - every caller passes them
            return series.astype(dtype)
        declared = [c for c in categories if not _is_missing_level(c)]
        return series.astype(pd.CategoricalDtype(declared, ordered=dtype.ordered))
    try:
        cast = series.astype(dtype)
    except (TypeError, ValueError, OverflowError):
        return series
    if series.isna().any() and not cast.isna().equals(series.isna()):
        return series
    return cast


def _is_missing_level(level):
    """Whether a level is the missing category (``None`` or a NaN)."""
    return level is None or (isinstance(level, float) and level != level)


def decoded_output(df, specs, frame):
    """The decoded columns ``df`` as returned: the DataFrame if the encoder
    was fitted on one (``frame``), else an ndarray of the fitted array's
    dtype where that is a number or bool dtype, else of objects."""
    if not frame:
        dtypes = {np.dtype(spec.dtype) for spec in specs}
        dt = dtypes.pop() if len(dtypes) == 1 else np.dtype(object)
        if dt.kind not in "biuf" or (dt.kind in "biu" and df.isna().any().any()):
            dt = np.dtype(object)
        return df.to_numpy(dtype=dt)
    return df


#: A level is above its noise in a release when the release's estimate of its
#: count is at least this many of its noise standard deviations
#: (:func:`degenerate_reasons`).
DEGENERATE_Z = 2.0
#: The rows' missing count may differ from the release's estimate by at most
#: this many of its noise standard deviations (:func:`degenerate_reasons`).
MISSING_ROWS_Z = 3.0


#: The rows' std of a numeric column may differ from the std of its released
#: fine histogram by at most this factor either way (:func:`degenerate_reasons`).
SPREAD_RATIO = 2.0


def _leaf_moments(hist, lo=-np.inf, hi=np.inf, solid=False):
    """``(mass, mean, second moment)`` of the released fine histogram's kept
    leaves inside ``[lo, hi)`` and its cap, each leaf uniform on its part
    of ``[lo, hi)``; ``None`` where no finite leaf is there. ``solid``:
    without the tentative leaves (a tail the release keeps only where its
    own estimate supports it). Post-processing."""
    e = np.asarray(hist.edges, dtype=np.float64)
    a = np.maximum(np.maximum(e[:-1], lo), hist.cap[0])
    b = np.minimum(np.minimum(e[1:], hi), hist.cap[1])
    c = np.clip(np.asarray(hist.counts, dtype=np.float64), 0.0, None)
    tentative = getattr(hist, "tentative", None)
    if solid and tentative is not None:  # the release decides on these
        c = np.where(np.asarray(tentative, dtype=bool), 0.0, c)
    m = np.isfinite(a) & np.isfinite(b) & (b > a)
    if not m.any():
        return None
    a, b, c = a[m], b[m], c[m]
    if c.sum() <= 0:
        c = b - a  # as decode_fine: uniform over the leaves
    p = c / c.sum()
    mean = float(p @ ((a + b) / 2))
    second = float(p @ ((a * a + a * b + b * b) / 3))
    return float(c.sum()), mean, second


def _binned_std(spec, hist, shares):
    """The std of values with ``shares`` of ``spec``'s coarse bins, each bin
    filled by the fine histogram's kept leaves inside it (uniformly where it
    has none); ``None`` where no share is positive."""
    edges = np.asarray(spec.levels, dtype=np.float64)
    q = np.clip(np.asarray(shares, dtype=np.float64), 0.0, None)
    if q.sum() <= 0 or q.size != edges.size - 1:
        return None
    q = q / q.sum()
    m1 = m2 = 0.0
    for k in np.flatnonzero(q > 0):
        lo, hi = float(edges[k]), float(edges[k + 1])
        if hist.integer and k == edges.size - 2:
            hi += 1.0
        inside = _leaf_moments(hist, lo, hi)
        if inside is None:
            if not (np.isfinite(lo) and np.isfinite(hi)):
                continue
            inside = (0.0, (lo + hi) / 2, (lo * lo + lo * hi + hi * hi) / 3)
        m1 += q[k] * inside[1]
        m2 += q[k] * inside[2]
    return float(np.sqrt(max(m2 - m1 * m1, 0.0)))


def spread_ratio(spec, level_shares, estimate_shares=None):
    """How far the rows' spread is from the released spread of numeric
    column ``spec``: the std of the values that rows with the model's shares
    of its bins (``level_shares``) decode to (each bin filled by the
    released fine histogram's leaves inside it, :func:`decode_fine` without
    its tail shapes) over the std of the released fine histogram itself
    (without its tentative leaves, which the release decides on) -- or,
    where the release's own estimates of the bins (``estimate_shares``) give
    a spread nearer to the rows', over that one (a noise leaf of the fine
    histogram that the release measured as empty is no reason). ``None``: no
    fine histogram, shares or spread. Post-processing of released
    quantities."""
    hist = getattr(spec, "fine", None)
    if hist is None or level_shares is None:
        return None
    whole = _leaf_moments(hist, solid=True)
    rows = _binned_std(spec, hist, level_shares)
    if whole is None or rows is None or whole[2] - whole[1] ** 2 <= 0:
        return None
    ratios = [rows / float(np.sqrt(whole[2] - whole[1] ** 2))]
    if estimate_shares is not None:
        released = _binned_std(spec, hist, estimate_shares)
        if released:
            ratios.append(rows / released)
    return min(ratios, key=lambda r: abs(np.log(r)) if r > 0 else np.inf)


def model_level_shares(final, rows, j, k, estimates):
    """The shares of attribute ``j``'s ``k`` levels in what the last step
    samples from: its model rows (the Gaussian release), else its cells'
    level distributions (``_synthetic_distribution``: the damped release's
    weights and means), else its 1-way estimates; ``None`` if none.
    Post-processing of released quantities."""
    if rows is not None and len(rows):
        return np.bincount(rows[:, j].astype(np.intp), minlength=k)[:k] / len(rows)
    dist = getattr(final, "_synthetic_distribution", None)
    blocks = getattr(final, "blocks_", None)
    if dist is not None and blocks is not None:
        try:
            means, weights = dist()
        except (AttributeError, TypeError, ValueError):
            means = None
        if means is not None and weights is not None:
            block = blocks.blocks[j]
            P = block.level_probabilities(np.clip(means[:, block.columns], 0, 1))
            return np.asarray(weights) @ P
    if estimates is not None:
        return np.clip([est for est, _ in estimates], 0.0, None)
    return None


def degenerate_reasons(
    spec,
    estimates,
    n_estimate,
    rows_missing,
    missing_kept,
    level_shares=None,
    domain=None,
    numeric_value="auto",
    n_sd=None,
):
    """Why column ``spec`` will come back degenerate, from released
    quantities only (an empty list: it will not).

    Parameters
    ----------
    spec : _ColumnSpec
        The column's released domain (levels or bin edges, missing level,
        the private fine histogram of a numeric column).
    estimates : list of (float, float) or None
        The release's estimate ``(T̂_j[level], σ_j)`` of every level of the
        column's block (the missing level last), or ``None`` where the
        release has none.
    n_estimate : float or None
        The release's estimate of the number of rows.
    rows_missing : float or None
        The share of the release's model rows at the missing level (what
        ``sample`` draws from), or ``None``.
    missing_kept : bool
        Whether the rows can hold a missing value (a missing level that the
        pipeline did not drop).
    level_shares : array-like or None
        The model's shares of the column's value levels (bins; missing
        excluded), for :func:`spread_ratio`, or ``None``.
    domain : FineHistogram or None
        The column's fine histogram as its private domain released it,
        before the release's estimates filled its emptied leaves
        (``_pipeline_levels._reconcile_leaves``), for
        :func:`._fences.capped_tail_reason`; ``None``: ``spec.fine``.
    numeric_value : str, default="auto"
        The encoder's ``numeric_value``: how a declared bin (no fine
        histogram) decodes, for the rows' spread
        (:func:`declared_bin_moments`).
    n_sd : float or None, default=None
        The noise sd of ``n_estimate`` (or an upper bound), for
        :func:`._single_leaf.single_leaf_reason`; ``None``: not read.

    Every input is the released domain, the release's noisy answers and
    model rows, or a public scale: post-processing, no privacy cost. The
    reasons: a numeric domain of one bin; a numeric column with at most one
    bin whose released count is above ``DEGENERATE_Z`` of its noise and
    that its rows use (a positive share in ``level_shares``: not a bin the
    pipeline dropped) -- its support narrower than its own noise: the rest
    of its rows fill bins with noise; a missing count above ``DEGENERATE_Z``
    of its noise that the rows cannot hold (a missing level dropped), or
    rows whose
    missing count is more than ``MISSING_ROWS_Z`` of its noise from the
    release's estimate; a numeric column whose rows' std (the model's bin
    shares, each bin filled from the released fine histogram) is more than
    ``SPREAD_RATIO`` times from the released histogram's std
    (:func:`spread_ratio`); a numeric column whose rows' spread rests on
    outer leaves the release cannot tell from noise
    (:func:`._spread.spread_reasons`; with declared bins, outer bins only:
    :func:`._spread.declared_spread_reasons`), or whose rows sit on at most two
    bins cut from one wide leaf (:func:`._spread.wide_parts_reason`); a
    column with a fifth of its rows past its cap
    (:func:`._count_tail.cut_count_tail_reason`), or whose rows' spread
    rests on one wide outer leaf past an emptied stretch
    (:func:`._count_tail.wide_outer_leaf_reason`); a numeric domain of
    one kept leaf holding fewer rows than the release counts with a value
    (:func:`._single_leaf.single_leaf_reason`); a
    kept missing level whose released count is under ``MISSING_ROWS_Z``
    sds while the rows hold more than that many (a column without missing
    values then comes back with them, and the release cannot say); a kept
    missing level holding every model row while the release puts its
    values' count above ``MISSING_ROWS_Z`` of that sum's noise ("comes back
    entirely missing").
    """
    reasons = []
    numeric = spec.kind == "numeric"
    n_values = spec.n_levels
    if numeric and n_values < 2:
        reasons.append("a single bin")
    ratio = None
    if numeric and n_values >= 2:
        released = None if estimates is None else [e for e, _ in estimates]
        ratio = spread_ratio(
            spec, level_shares, None if released is None else released[:n_values]
        )
    if ratio is not None and not 1 / SPREAD_RATIO <= ratio <= SPREAD_RATIO:
        reasons.append(
            f"rows with {ratio:.2g} times the spread (std) of its released histogram"
        )
    if numeric and n_values >= 2 and level_shares is not None and spec.fine:
        released = None if estimates is None else estimates[:n_values]
        moments = None if released is None else lambda: decoded_bin_moments(spec)
        reasons.extend(spread_reasons(spec, level_shares, released, moments))
        wide = wide_parts_reason(spec, level_shares)
        if wide is None:
            wide = wide_outer_leaf_reason(spec, level_shares)
        if wide is not None:
            reasons.append(wide)
    declared = []  # declared bins: an outer bin far past the data holds noise
    if numeric and n_values >= 2 and level_shares is not None and not spec.fine:
        released = None if estimates is None else estimates[:n_values]
        # drawn only where an outer bin is under the support test
        moments = functools.partial(declared_bin_moments, spec, numeric_value)
        declared = declared_spread_reasons(spec, level_shares, released, moments)
    capped = (
        capped_tail_reason(spec, estimates, domain) if numeric and spec.fine else None
    )
    if capped is None and numeric and spec.fine:
        capped = cut_count_tail_reason(spec, estimates, domain)
    if capped is not None:
        reasons.append(capped)
    floor = capped_floor_reason(spec, estimates, domain) if numeric else None
    if floor is not None:
        reasons.append(floor)
    single = None
    if numeric and not capped and not floor:
        single = single_leaf_reason(
            spec, estimates, n_estimate, n_sd, domain, missing_kept=missing_kept
        )
    if single is not None:
        reasons.append(single)
    far = far_tail(spec, level_shares) if numeric else None
    if far is not None:
        share, a, b, start = far
        # the decoder's own test: a bin named only past bins the pipeline
        # dropped (_far_tail._past_unused_bins) is drawn on its leaves
        drawn = (
            "they are drawn next to its inner edge"
            if _far_side(spec.fine, a, b, _core_mode(spec.fine))[0]
            else "they are drawn on those leaves"
        )
        reasons.append(
            f"{100 * share:.2g} % of its rows in a tail bin [{a:.6g}, {b:.6g}) "
            "that the release confirms as a whole but whose only kept leaves "
            f"start at {start:.6g}, past an emptied stretch: where in the bin "
            f"those rows lie is not released, and {drawn} (declare bounds= "
            "with its natural limit)"
        )
    if estimates is not None:
        values = estimates[:n_values]
        # a bin the rows never use (a level the pipeline dropped: a tentative
        # bin under its stricter test) is no support of them
        used = [True] * n_values
        if level_shares is not None and len(level_shares) >= n_values:
            used = [bool(q > 0) for q in level_shares[:n_values]]
        above = sum(
            est >= DEGENERATE_Z * sd and u for (est, sd), u in zip(values, used)
        )
        if numeric and n_values >= 2 and above <= 1:
            reasons.append(
                f"{above} of its {n_values} bins above the release's noise "
                f"(±{values[0][1]:.3g} rows): a support narrower than its noise"
            )
            declared = []  # said: the rows' spread is the noise's
        if spec.missing and len(estimates) > n_values:
            est, sd = estimates[n_values]
            if not missing_kept and est >= DEGENERATE_Z * sd:
                reasons.append(
                    f"a released missing count of {est:.3g} ± {sd:.3g} rows "
                    "that its rows cannot hold"
                )
            elif (
                missing_kept
                and rows_missing is not None
                and n_estimate
                and abs(rows_missing * n_estimate - max(est, 0.0)) > MISSING_ROWS_Z * sd
            ):
                reasons.append(
                    f"rows with {100 * rows_missing:.3g} % missing where the "
                    f"release says {100 * max(est, 0.0) / n_estimate:.3g} ± "
                    f"{100 * sd / n_estimate:.3g} %"
                )
            elif (
                missing_kept
                and rows_missing is not None
                and n_estimate
                and est < MISSING_ROWS_Z * sd
                and rows_missing * n_estimate > max(MISSING_ROWS_Z * sd, est + sd)
            ):
                # the release cannot tell the missing count from 0, and the
                # rows hold more than MISSING_ROWS_Z sds of it: for a column
                # without missing values that is more than the band allows.
                # Rows within one sd of the estimate follow the release and
                # are not named: the births-like table of
                # tests/test_missing_and_degenerate.py, ``visits`` (5.6 %
                # missing; ε = 1, seed 0, every table measured), was released
                # at 9.84 ± 3.44 % (2.86 sds) and its rows held 10.4 % (3.02).
                reasons.append(
                    f"rows with {100 * rows_missing:.3g} % missing where the "
                    f"release cannot tell its missing share "
                    f"({100 * max(est, 0.0) / n_estimate:.3g} ± "
                    f"{100 * sd / n_estimate:.3g} %) from none"
                )
            # every model row missing while the release puts its values'
            # count above MISSING_ROWS_Z of that sum's noise: the column
            # comes back entirely missing against what the release says
            total = sum(e for e, _ in values)
            spread = float(np.sqrt(sum(s * s for _, s in values)))
            if (
                missing_kept
                and rows_missing is not None
                and rows_missing >= 1.0
                and n_values
                and total >= MISSING_ROWS_Z * spread
            ):
                reasons.append(
                    "comes back entirely missing where the release puts "
                    f"{total:.3g} ± {spread:.3g} rows in its values"
                )
    return reasons + declared


def decoded_bin_moments(spec):
    """``(k, 2)``: each of numeric column ``spec``'s ``k`` bins' mean and
    mean square as :func:`decode_fine` draws its values from the released
    fine histogram (:data:`DECODED_DRAWS` draws each, a fixed public seed),
    or ``None`` without a fine histogram. What ``sample`` decodes, so that
    a warning reads the rows' spread, not a model of it. Post-processing of
    released values."""
    hist, k = getattr(spec, "fine", None), int(spec.n_levels)
    if hist is None or k < 1:
        return None
    e = np.asarray(spec.levels, dtype=np.float64)
    i = np.repeat(np.arange(k), DECODED_DRAWS)
    v = decode_fine(
        hist, e[i], e[i + 1], i == k - 1, np.random.default_rng(0), first=i == 0
    )
    out = np.full((k, 2), np.nan)
    for b in range(k):
        x = v[(i == b) & np.isfinite(v)]
        out[b] = (x.mean(), (x * x).mean()) if x.size else (np.nan, np.nan)
    return out


def decode_fine(hist, left, right, last, rng, u=None, first=None):
    """Values inside coarse bins ``[left, right)`` drawn from the fine histogram.

    Post-processing: a leaf inside the bin is drawn with probability
    proportional to its noisy count (uniformly among the bin's leaves if
    they are all 0), then a value inside it and inside the cap: uniform in
    ``t`` (an integer for integer columns); a finest leaf gives its edge
    nearer to 0 (at an end of the root, a declared bound: that end,
    :func:`_root_end`), a narrow float heap its roundest number, but for the share
    its neighbours' density puts around it (:mod:`._round_heaps`).
    A kept leaf outwards of the densest one, touching its inner neighbour (no
    emptied leaf between), is a tail if its mean density is below the
    neighbour's ``d0`` by more than ``_numeric_domain.EDGE_Z`` noise sds
    (:func:`_falls`; the public ``b``; an outermost leaf at least
    ``_tail_rates.OUTER_FALL_T`` wide in ``t`` by any amount; one wider than
    ``GAP_T`` past an emptied leaf decays at its fitted rate, :func:`_tail_models`):
    its density decays from ``d0`` at the inner edge, ``d0 exp(-z / s)`` with
    ``s`` fixed by its mass, so a wide outer leaf is not filled up to its far
    edge. It is flat at ``d0`` until its mass is used instead where the density
    does not fall towards it (a hard edge, :func:`_is_hard_edge`: a year column)
    or next to a one-integer leaf. Beside a point mass (a float column's
    whole-number finest leaf, an integer column's 0 or 100: :func:`_limit_mass`)
    a leaf decodes as an inner one. A far tail bin --
    its kept leaves all tentative and starting more than :data:`._far_tail.FAR_TAIL_T`
    past its inner edge (:func:`._far_tail.far_tail`) -- is drawn from such a decaying
    tail at its inner edge instead of from its leaves
    (:func:`_far_bin_values`). Inside a bin
    outwards of the densest leaf, a kept leaf beyond a kept and then an
    emptied leaf weighs at most what the emptied leaf stayed under, per unit
    of ``t`` (:func:`_beyond_gap_weights`).

    ``last`` / ``first`` (per row): the row's bin is the top / bottom bin,
    which reach past the bin edge to the cap where rows were placed past it.

    ``u`` (optional, in ``[0, 1]`` per row): the quantile inside the bin at
    which each value is read -- the leaf by the bin's noisy CDF, the place
    inside the leaf by the rest -- so that the value grows with ``u``; a
    uniform ``u`` gives the same distribution as the default draws. The
    Gaussian copula of :mod:`._copula` couples numeric columns this way.
    """
    e, c = hist.edges, hist.counts
    cap_lo, cap_hi = hist.bounds
    tails = _tail_models(hist, cap_lo, cap_hi)
    mode = _core_mode(hist)
    heaps = round_values(hist)
    shares = heap_shares(hist, heaps)
    out = np.empty(left.shape, dtype=np.float64)
    first = np.zeros(left.shape, dtype=bool) if first is None else first
    groups = {(a, b, z, f) for a, b, z, f in zip(left, right, last, first)}
    for a, b, is_last, is_first in groups:
        rows = np.flatnonzero(
            (left == a) & (right == b) & (last == is_last) & (first == is_first)
        )
        hi = b + 1.0 if (hist.integer and is_last) else b
        if is_last and cap_hi > hi:  # a capped tail placed past the top bin
            hi = cap_hi  # (_tail_past_cap.place_capped_tail)
        if is_first and cap_lo < a:  # rows placed below the bottom bin
            a = cap_lo  # (_tail_past_cap.place_capped_floor)
        side, start, near = _far_side(hist, a, hi, mode)
        if side and near:  # draw from the leaves before the emptied stretch
            a, hi = (a, start) if side > 0 else (start, hi)
        elif side:
            if u is None:
                q = rng.random(rows.size)
            else:  # increasing in u on either side (the copula's order)
                q = u[rows] if side > 0 else 1.0 - u[rows]
            out[rows] = _far_bin_values(hist, a, hi, side, q, cap_lo, cap_hi)
            continue
        j0 = max(int(np.searchsorted(e, a, "right")) - 1, 0)
        j1 = int(np.searchsorted(e, hi, "left"))
        j1 = min(max(j1, j0 + 1), len(c))
        w = _beyond_gap_weights(hist, j0, j1, mode, cap_lo, cap_hi)
        if w.sum() <= 0:
            w = np.ones_like(w)
        if u is None:
            j = j0 + rng.choice(w.size, size=rows.size, p=w / w.sum())
            q = rng.random(rows.size)
        else:  # inverse CDF over the bin's leaves, then inside the leaf
            p = w / w.sum()
            cum = np.cumsum(p)
            cum[-1] = 1.0
            uu = u[rows]
            k = np.minimum(np.searchsorted(cum, uu, side="right"), w.size - 1)
            before = cum[k] - p[k]
            q = np.clip((uu - before) / np.maximum(p[k], 1e-300), 0.0, 1.0)
            j = j0 + k
        lo_j = np.maximum(np.maximum(e[j], a), cap_lo)
        hi_j = np.maximum(np.minimum(np.minimum(e[j + 1], hi), cap_hi), lo_j)
        if hist.integer:
            lo_i = np.ceil(lo_j)
            hi_i = np.maximum(np.ceil(hi_j), lo_i + 1.0)
            v = np.floor(_x(_t(lo_i) + q * (_t(hi_i) - _t(lo_i))))
            v = np.clip(v, lo_i, hi_i - 1.0)
        else:
            # a heap leaf's rows at its number, but for the share its
            # neighbours' density puts around it (_round_heaps.heap_shares)
            heap = np.isfinite(heaps[j])
            t_lo, t_hi = _t(lo_j), _t(hi_j)
            span = np.where(t_hi > t_lo, t_hi - t_lo, 1.0)
            at_value = np.where(
                heap, (_t(np.where(heap, heaps[j], lo_j)) - t_lo) / span, 0
            )
            p, on_heap = heap_draws(q, 1.0 - shares[j], at_value)
            p, on_heap = np.where(heap, p, q), heap & on_heap
            v = np.clip(_x(t_lo + p * (t_hi - t_lo)), lo_j, hi_j)
            near0 = np.where(np.abs(lo_j) <= np.abs(hi_j), lo_j, hi_j)
            # a declared point mass's leaf [v, v + w) is v, whatever its sign
            declared = np.isin(lo_j, getattr(hist, "point_masses", ()))
            near0 = np.where(declared, lo_j, near0)
            # a finest leaf is a point mass at its edge nearer 0 only where
            # that edge is a whole number (0, 100, an amount in whole units):
            # a decimal column narrower than FINEST_T in t (a decimal year,
            # 2016.6-2017.7: a few finest leaves) decoded every row at a
            # few leaf edges (KS .48 on hotel_rates' arrival_date_num)
            fin = hist.finest[j] & ((near0 == np.round(near0)) | declared)
            v = np.where(fin, near0, np.where(on_heap, heaps[j], v))
            end = _root_end(hist, j)  # a declared bound's heap at the bound
            v = np.where(np.isnan(end) | fin, v, end)
        for leaf, (inner, side, width, s, flat) in tails.items():
            sel = j == leaf
            if not sel.any():
                continue
            qs = q[sel] if (u is None or side > 0) else 1.0 - q[sel]  # increasing
            qs = _in_bin(qs, (inner, side, width, s, flat), a, hi)
            if qs is None:  # the model holds none of the bin: as an inner leaf
                continue
            if flat == "t":  # decaying in t at rate s (uniform at 0)
                v[sel] = _t_decay_values(inner, side, width, s, qs, hist.integer)
                continue
            if flat:
                z = qs * s
            else:  # inverse CDF of the exponential truncated at the width
                z = -s * np.log1p(qs * np.expm1(-width / s))
            z = np.minimum(z, width)
            if hist.integer:
                z = np.minimum(np.floor(z), max(width - 1.0, 0.0))
                v[sel] = inner + z if side > 0 else inner - 1.0 - z
            else:
                v[sel] = inner + z if side > 0 else inner - z
        top = hi - 1.0 if hist.integer else hi
        cap_top = cap_hi - 1.0 if hist.integer else cap_hi  # exclusive: integers
        out[rows] = np.clip(v, max(a, cap_lo), min(top, cap_top))
    return out


def _root_end(hist, j):
    """Per leaf index ``j`` of float histogram ``hist``: the end of
    PrivTree's root where ``j`` is a finest leaf at that end, else NaN. The
    root ends at a declared bound (``bounds=``), and the encoder clips to
    it: such a leaf holds the rows at the bound (unless its edge nearer 0
    is a whole number, the finest leaves' rule). That edge is the bound less
    the leaf's width -- a spike at a declared 100 of ``bounds=(0, 100)``
    came back at 99.99999999997 (80 % of 3,000 rows, ε = 1: none exactly at
    100; ``tests/test_bound_heaps.py``). Public: the edges and the finest
    flags."""
    e = np.asarray(hist.edges, dtype=np.float64)
    fin = np.asarray(hist.finest, dtype=bool)[j]
    end = np.where(j == e.size - 2, e[-1], np.where(j == 0, e[0], np.nan))
    return np.where(fin, end, np.nan)


def _in_bin(qs, model, a, hi):
    """The quantiles ``qs`` of a tail leaf's model (:func:`_tail_models`:
    ``(inner, side, width, s, flat)``) moved into the part of the leaf
    inside the coarse bin ``[a, hi)``: the model conditioned on the bin.
    ``qs`` itself where the bin holds the whole leaf; ``None`` where the
    model puts nothing in the bin (a flat tail ending before it).

    A wide tail leaf cut into coarse bins (:func:`._wide_leaves.
    cut_tail_leaves`) has its rows placed in its parts by the release; inside
    a part they follow the leaf's decay, not the whole leaf's decay clipped
    to the part (which piled them at the part's edge). Post-processing."""
    inner, side, width, s, flat = model
    if flat == "t":
        ti = _t(inner)
        near, far = (_t(a) - ti, _t(hi) - ti) if side > 0 else (ti - _t(hi), ti - _t(a))
    else:
        near, far = (a - inner, hi - inner) if side > 0 else (inner - hi, inner - a)
    near, far = max(float(near), 0.0), min(float(far), float(width))
    if near <= 0.0 and far >= width:
        return qs

    def cdf(z):
        if flat == "t":  # decaying in t at rate s (uniform at 0)
            rate = float(s) * float(width)
            return np.expm1(-s * z) / np.expm1(-rate) if rate > 1e-9 else z / width
        if flat:  # flat at d0 until its mass is used
            return min(z / s, 1.0)
        return np.expm1(-z / s) / np.expm1(-width / s)

    lo, up = float(cdf(near)), float(cdf(far))
    if not up > lo:
        return None
    return lo + qs * (up - lo)


def _beyond_gap_weights(hist, j0, j1, mode, cap_lo, cap_hi):
    """The weights of the leaves ``j0..j1 - 1`` of one coarse bin in
    :func:`decode_fine`: their noisy counts, except that a kept leaf lying
    outwards of the core's densest leaf ``mode`` beyond an emptied leaf of
    the same bin (inside the cap) that itself lies beyond a kept leaf of the
    bin weighs at most ``INNER_SCALES b`` per unit
    of ``t`` of its width -- what the emptied leaf's noisy count stayed
    under, per unit of its ``t`` width -- so the density in ``t`` does not
    rise again past the leaf the release emptied. A point mass (a finest
    leaf) keeps its count. Measured on openintro ``acs12`` (``income``,
    eps = 1, seed 1 of ``benchmarks.bench_tstr``): the bin
    ``[65,536, 524,288)`` kept ``[262,145, 524,289)`` with 105.9 noisy rows
    (13 real, ``+2.8 b``) beyond the emptied ``[131,072, 262,145)`` (17
    real) and decoded 60 % of its rows there (bin mean 266,317 against the
    real 131,174; train-on-synthetic R² -1.044). With this weight: bin mean
    186,620, R² -0.511 (``python -m benchmarks.bench_tstr acs12 --eps 1
    --seeds 2``). Without the kept leaf inwards, credit's ``Debt`` (a point
    mass at 0, then emptied leaves, then its body in ``[1, 2049)``) moved
    its rows outwards: mean KS at eps = 1 +3 % on ``benchmarks.bench_suite
    --light``. A kept leaf (not a point mass) across the bin's inner edge
    starts the bin's rows too, and a leaf whose count passes its cap by more
    than ``REAL_PAST_GAP_SCALES b`` keeps it and ends the cap: rows of its
    own, a heap (:mod:`._edge_gap`). Post-processing of the noisy counts and
    the public ``b``."""
    c, e = hist.counts, hist.edges
    w = np.asarray(c[j0:j1], dtype=np.float64).copy()
    scale = float(hist.scale)
    if mode is None or not np.isfinite(scale) or w.size < 2:
        return w
    lo = np.maximum(e[j0:j1], cap_lo)
    hi = np.minimum(e[j0 + 1 : j1 + 1], cap_hi)
    span = np.where(hi > lo, _t(hi) - _t(lo), 0.0)
    upwards = bool(e[j0] >= e[mode + 1])
    if upwards:
        order = range(w.size)  # outwards: upwards
    elif e[j1] <= e[mode]:
        order = range(w.size - 1, -1, -1)  # outwards: downwards
    else:
        return w
    limit = None  # INNER_SCALES b per unit of t, once past an emptied leaf
    # a kept leaf inwards (of the bin, or across its inner edge where
    # EDGE_SEEN): the bin's rows start there
    seen = kept_across_edge(hist, j0, j1, upwards)
    for i in order:
        if w[i] > 0 and limit is None:
            seen = True
        elif w[i] <= 0 and span[i] > 0 and seen:
            if limit is None or INNER_SCALES * scale / span[i] < limit:
                limit = INNER_SCALES * scale / span[i]
        elif w[i] > 0 and limit is not None and not hist.finest[j0 + i]:
            if above_noise(w[i], limit * span[i], scale):
                limit = None  # rows of their own: the density rises again
            else:
                w[i] = min(w[i], limit * span[i])
    return w


def _far_bin_values(hist, a, hi, side, q, cap_lo, cap_hi):
    """Values of a far tail bin ``[a, hi)`` (:func:`._far_tail._far_side`) at the
    quantiles ``q``: a density decaying from the core's side, as
    :func:`_tail_models` models a tail leaf -- ``d0`` the density of the
    nearest kept leaf on the core's side, the bin's kept noisy mass filling
    ``s`` of it -- so the rows the release keeps in the bin lie next to the
    core instead of on noise leaves orders of magnitude beyond it
    (:func:`._far_tail.far_tail`). Post-processing of the fine histogram."""
    e, c = hist.edges, hist.counts
    lo_b, hi_b = max(a, cap_lo), min(hi, cap_hi)
    width = max(hi_b - lo_b, 0.0)
    inside = (c > 0) & (e[1:] > a) & (e[:-1] < hi)
    mass = float(c[inside].sum())
    kept = np.flatnonzero(c > 0)
    near = kept[e[kept + 1] <= a] if side > 0 else kept[e[kept] >= hi]
    d0 = 0.0
    if near.size:
        j = int(near[-1] if side > 0 else near[0])
        d0 = float(c[j] / max(e[j + 1] - e[j], 1e-300))
    ratio = mass / d0 if d0 > 0 else width
    if not 0 < ratio < width:
        s = max(width, 1e-300)
        z = np.asarray(q, dtype=np.float64) * width  # flat: no density to decay from
    else:
        s = _decay_scale(ratio, width)
        z = -s * np.log1p(np.asarray(q, dtype=np.float64) * np.expm1(-width / s))
    z = np.clip(z, 0.0, width)
    if hist.integer:
        z = np.minimum(np.floor(z), max(width - 1.0, 0.0))
        v = lo_b + z if side > 0 else hi_b - 1.0 - z
        return np.clip(v, lo_b, max(hi_b - 1.0, lo_b))
    v = lo_b + z if side > 0 else hi_b - z
    return np.clip(v, lo_b, hi_b)


def _tail_models(hist, cap_lo, cap_hi):
    """``{leaf: (inner edge, side, width, s, flat)}`` for the kept leaves
    outwards of the densest one whose mean density is below their inner
    neighbour's (post-processing; see :func:`decode_fine`)."""
    e, c = hist.edges, hist.counts
    pos = np.flatnonzero(c > 0)
    # a kept leaf wholly outside the cap decodes no row; with no width it
    # had an infinite density and was taken for the mode, and the leaf next
    # to it lost its tail model (a year column 2003-2009 at ε = 1 kept
    # [1919, 1961) on noise, cut by the cap at 1948: [1961, 2004), holding
    # the 2003s, was drawn uniformly over 1961-2003, std ratio 4.90; seed 13
    # of ``python -m benchmarks.bench_count_columns``)
    pos = pos[np.minimum(e[pos + 1], cap_hi) > np.maximum(e[pos], cap_lo)]
    out = {}
    if pos.size < 2:
        return out
    lo_e = np.maximum(e[pos], cap_lo)
    hi_e = np.minimum(e[pos + 1], cap_hi)
    widths = hi_e - lo_e
    dens = c[pos] / np.maximum(widths, 1e-300)
    mode = int(np.argmax(dens))
    # a float point mass (a finest leaf decoded at its whole-number edge: a
    # percentage's 100, an amount's 0) has no density for a tail to
    # continue: loans' account_never_delinq_percent kept [79.8, 100) beside
    # its 4,327 noisy rows at [100, 100.001), and the leaf's 3,281 rows were
    # decoded within 0.006 of 100 (std ratio 0.00; bench_limit_atoms.md)
    near0 = np.where(np.abs(lo_e) <= np.abs(hi_e), lo_e, hi_e)
    finest = np.asarray(hist.finest, dtype=bool)[pos]
    mass = finest & (near0 == np.round(near0)) & (not hist.integer)
    mass |= finest & np.isin(lo_e, getattr(hist, "point_masses", ()))  # declared
    mass |= np.isfinite(_root_end(hist, pos)) & (not hist.integer)  # at a bound
    for side, seq in ((-1, range(mode - 1, -1, -1)), (1, range(mode + 1, pos.size))):
        # an integer column's value at a natural limit (a count's 0, a
        # whole percentage's 100) beside the leaf on the data's side: a point
        # mass too (_limit_mass)
        point = mass | (_limit_mass(lo_e, finest, side) & hist.integer)
        for k in seq:
            nb = k - side
            if point[nb]:
                continue
            width = widths[k]
            # an outermost leaf wider than GAP_T in t is a tail whenever it
            # falls: decoded uniformly in t it spans a factor > 2 (credit's
            # Debt, [4096, 65536) at 1.8 sds under its neighbour: std x4.1);
            # so is one OUTER_FALL_T wide or more (a factor 2 ** 0.5: nhefs'
            # sbp, [129, 256) within the noise of its neighbour: std x2.18)
            outer, span = k in (0, pos.size - 1), _t(hi_e[k]) - _t(lo_e[k])
            wide, loose = outer and span > GAP_T, outer and span >= OUTER_FALL_T
            falls = _falls(dens, widths, k, nb, np.nan if loose else hist.scale)
            # a tail continues its neighbour's density from their common
            # edge; across an emptied leaf that density says nothing (credit's
            # Time, 6..60 months at multiples of 6: [16, 32) was piled at 31
            # from the density of [35, 37)), so such a leaf decodes as inner
            touching = e[pos[k] if side > 0 else pos[k] + 1] == e[pos[nb] + (side > 0)]
            if wide and falls and not touching and width > 0:
                # a wide outermost leaf past an emptied leaf: its density
                # falls from the kept leaf inside it at the rate the two
                # released densities fit (_fitted_rate); decoded uniformly in
                # t it spans a factor > 2 (doctorcontacts' mdu, [16, 256)
                # past an emptied [13, 16): std ratio 3.36)
                rate = _fitted_rate(c, e, pos, k, nb, lo_e, hi_e)
                inner = lo_e[k] if side > 0 else hi_e[k]
                out[int(pos[k])] = (inner, side, span, rate, "t")
                continue
            if width <= 0 or not falls or not touching:
                continue
            ratio = c[pos[k]] / dens[nb]  # the width its mass fills at d0
            if not ratio < width:
                # only where a subnormal width was clamped in ``dens``
                # (found by hypothesis: bounds near 1e-313); no tail model,
                # the leaf decodes uniformly like an inner one
                continue
            inner = lo_e[k] if side > 0 else hi_e[k]
            if outer and not wide and span >= TAIL_FIT_T:
                rate = _fitted_rate(c, e, pos, k, nb, lo_e, hi_e)
                out[int(pos[k])] = (inner, side, span, rate, "t")
                continue
            # a wide outermost leaf that the cap cuts holds a tail that goes
            # on past the cap: it decays at its fitted rate where that rate
            # says so (_fitted_tail_rate), not from the edge's density
            rate = _fitted_tail_rate(c, e, pos, k, nb, lo_e, hi_e, side, span, wide)
            if rate is not None:
                out[int(pos[k])] = (inner, side, span, rate, "t")
                continue
            flat = bool(hist.integer and hist.finest[pos[nb]])
            flat = flat or _is_hard_edge(dens, widths, nb, side, mode, hist.scale)
            s = ratio if flat else _decay_scale(ratio, width)
            out[int(pos[k])] = (inner, side, width, s, flat)
    return out


def _limit_mass(lo_e, finest, side):
    """Which kept leaves of an integer column are its value at a natural
    limit (``_natural_limits.NATURAL_LIMITS``: 0, the bottom of a count; 100,
    the top of a whole percentage) for a tail leaf on ``side`` of them, the
    side the data lie on: a finest leaf (one integer) starting there.

    Such a value is a point mass, not a density for the next leaf to
    continue: a zero-inflated count kept ``[0, 1)`` with 2,516 noisy rows
    beside ``[1, 16)`` with 1,003, and the leaf, filled flat at the 0's
    density until its mass was used, came back all 1s (nmes1988's
    ``ovisits``, ε = 0.3, seed 7 of ``python -m benchmarks.bench_suite
    --half tune --tables nmes1988 --eps 0.3 --seeds 10 --methods auto
    --tv-only``; real rows in the leaf: mean 2.3, 53 % at 1). The leaf then
    decodes like an inner one, uniformly in ``t`` (as beside a float point
    mass). Post-processing of public edges."""
    at = np.zeros(lo_e.shape, dtype=bool)
    for value, beyond in NATURAL_LIMITS:
        if side == -beyond:
            at |= lo_e == value
    return at & finest
