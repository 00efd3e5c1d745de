"""A plot of every column, and the missing cells, for the report's page.

**A report reads the real data: it is not private.**

:func:`column_views` gives each column a :class:`ColumnView`: a numeric
column (more than :data:`~skdp_synth.metrics._coding.MAX_RAW_LEVELS`
distinct real values) as a histogram on bins at the real values' quantiles,
the outer bins stretched to hold every synthetic value; any other column as
the share of rows of each level. Shares are of all rows (missing cells are
counted apart, in ``missing_real`` / ``missing_synthetic``).
:func:`svg` draws a view as a small inline SVG (no matplotlib needed):
histograms to the bins' true widths, so a bar's area is its share of rows.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from ..metrics._coding import MAX_RAW_LEVELS, _between_values, _time_labels

__all__ = ["ColumnView", "column_views", "svg", "missing_html"]

#: Histogram bins of a numeric column (at the real values' quantiles; ties merged).
N_PLOT_BINS = 16
#: Bars drawn for a categorical column; the rest are summed in one bar.
MAX_BARS = 12
#: Bars drawn for a numeric column of few values (one per value, in order).
MAX_VALUE_BARS = 2 * MAX_RAW_LEVELS
_REAL, _SYN = "#8c9bab", "#d95f02"


@dataclass(frozen=True)
class ColumnView:
    """One column's distribution, real against synthetic.

    Attributes
    ----------
    column : str
    kind : str
        ``"numeric"`` (a histogram on ``edges``) or ``"categorical"`` (bars
        of ``labels``).
    labels : tuple of str
        Level labels, or the bins' labels.
    edges : tuple of float
        A histogram's bin edges (``len(labels) + 1`` of them); ``()`` for bars.
    real, synthetic : tuple of float
        Share of all rows in each level or bin.
    missing_real, missing_synthetic : float
        Share of rows whose cell is missing.
    time : bool
        The edges are seconds since 1970 (a date/time column).
    """

    column: str
    kind: str
    labels: tuple
    edges: tuple
    real: tuple
    synthetic: tuple
    missing_real: float
    missing_synthetic: float
    time: bool = False

    def to_dict(self) -> dict:
        return {
            "column": self.column,
            "kind": self.kind,
            "labels": list(self.labels),
            "edges": list(self.edges),
            "real": list(self.real),
            "synthetic": list(self.synthetic),
            "missing_real": self.missing_real,
            "missing_synthetic": self.missing_synthetic,
        }


def _floats(values):
    import pandas as pd

    if pd.api.types.is_bool_dtype(values):
        return None
    out = pd.to_numeric(values, errors="coerce")
    if (out.isna() & values.notna()).any():
        return None
    return out.to_numpy(dtype=float, na_value=np.nan)


def _histogram(col, x, y, time):
    """A numeric column's view, or ``None`` (too few distinct values)."""
    xs, ys = x[~np.isnan(x)], y[~np.isnan(y)]
    if np.unique(xs).size <= MAX_RAW_LEVELS:
        return None
    inner = np.quantile(xs, np.linspace(0, 1, N_PLOT_BINS + 1)[1:-1])
    # between two real values, as the report's tables: a bin splits no value
    inner = _between_values(np.unique(inner), np.unique(xs))
    edges = np.unique(np.concatenate([[xs.min()], inner, [xs.max()]]))
    if ys.size:
        edges[0], edges[-1] = min(edges[0], ys.min()), max(edges[-1], ys.max())
    rc = np.histogram(xs, edges)[0] / len(x)
    sc = np.histogram(ys, edges)[0] / max(len(y), 1)
    e = _time_labels(edges) if time else [f"{v:.4g}" for v in edges]
    labels = [f"[{a}, {b})" for a, b in zip(e[:-1], e[1:])]
    labels[-1] = labels[-1][:-1] + "]"
    return ColumnView(
        col,
        "numeric",
        tuple(labels),
        tuple(float(v) for v in edges),
        tuple(float(v) for v in rc),
        tuple(float(v) for v in sc),
        float(np.isnan(x).mean()),
        float(np.isnan(y).mean()),
        time,
    )


def _value_text(values):
    """Numbers as level labels: ``40`` for 40.0, so that an integer column
    read as floats on one side meets the other's levels."""
    import pandas as pd

    x = pd.to_numeric(values.dropna(), errors="coerce")
    return x.map(lambda v: f"{v:.10g}")


def _bars(col, xs, ys, order, numeric=False):
    """Bars per level: declared levels in their order, a numeric column's
    values in numeric order (all of them up to :data:`MAX_VALUE_BARS`),
    else the most common first."""
    import pandas as pd

    if numeric:
        a = _value_text(xs).value_counts() / len(xs)
        b = _value_text(ys).value_counts() / max(len(ys), 1)
    else:
        a = xs.dropna().astype(object).map(str).value_counts() / len(xs)
        b = ys.dropna().astype(object).map(str).value_counts() / max(len(ys), 1)
    both = pd.concat([a.rename("r"), b.rename("s")], axis=1).fillna(0.0)
    cap = MAX_BARS
    if order is not None:  # declared levels first, in their order
        declared = [str(v) for v in order if v is not None]
        rest = [v for v in both.index if v not in declared]
        both = both.reindex(declared + rest, fill_value=0.0)
    elif numeric:
        both = both.iloc[np.argsort([float(v) for v in both.index], kind="stable")]
        cap = MAX_VALUE_BARS
    else:
        both = both.iloc[np.argsort(-both.max(axis=1).to_numpy(), kind="stable")]
    if len(both) > cap:
        if numeric:  # the most common values, kept in numeric order
            top = np.sort(
                np.argsort(-both.max(axis=1).to_numpy(), kind="stable")[: cap - 1]
            )
            rest = np.setdiff1d(np.arange(len(both)), top)
            head, tail = both.iloc[top], both.iloc[rest]
            more = pd.DataFrame(
                [tail.sum()], index=[f"({len(tail)} more values)"], columns=both.columns
            )
            both = pd.concat([head, more])
    if len(both) > cap:
        head, tail = both.iloc[: MAX_BARS - 1], both.iloc[MAX_BARS - 1 :]
        more = pd.DataFrame(
            [tail.sum()], index=[f"({len(tail)} more levels)"], columns=both.columns
        )
        both = pd.concat([head, more])
    return ColumnView(
        col,
        "categorical",
        tuple(str(v) for v in both.index),
        (),
        tuple(float(v) for v in both["r"]),
        tuple(float(v) for v in both["s"]),
        float(xs.isna().mean()),
        float(ys.isna().mean()),
    )


def column_views(real, synthetic, schema, times=()):
    """A :class:`ColumnView` of every column, in the real table's order.

    ``real`` and ``synthetic`` hold dates and times as seconds
    (:func:`~skdp_synth.metrics._coding._times_as_seconds`); ``times`` names
    those columns."""
    import pandas as pd

    cats = {**(schema.get("categories") or {}), **(schema.get("ordinal") or {})}
    out = []
    for col in real.columns:
        view, numeric = None, False
        if col not in cats and pd.api.types.is_numeric_dtype(real[col]):
            x, y = _floats(real[col]), _floats(synthetic[col])
            numeric = x is not None and y is not None and col not in times
            if x is not None and y is not None:
                view = _histogram(str(col), x, y, col in times)
        if view is None:
            view = _bars(
                str(col), real[col], synthetic[col], cats.get(col), numeric=numeric
            )
        out.append(view)
    return tuple(out)


def _short(text, n):
    return text if len(text) <= n else text[: n - 1] + "…"


def svg(view, width=320, height=170):
    """The view as an inline SVG: real filled grey, synthetic outlined orange."""
    esc = html.escape
    left, right, top, bottom = 8, 8, 8, 48
    w, h = width - left - right, height - top - bottom
    parts = [
        f"<svg class='column-plot' data-column='{esc(view.column)}' "
        f"data-kind='{view.kind}' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' aria-label='{esc(view.column)}"
        ": real (grey) against synthetic (orange)'>"
    ]
    base = top + h
    if view.kind == "numeric":
        e = np.asarray(view.edges)
        widths = np.diff(e)
        dr = np.asarray(view.real) / widths
        ds = np.asarray(view.synthetic) / widths
        peak = max(float(dr.max()), float(ds.max()), 1e-300)

        def x(v):
            return left + w * (v - e[0]) / (e[-1] - e[0])

        for k in range(len(widths)):
            x0, x1 = x(e[k]), x(e[k + 1])
            hr = h * dr[k] / peak
            parts.append(
                f"<rect x='{x0:.1f}' y='{base - hr:.1f}' width='{x1 - x0:.1f}' "
                f"height='{hr:.1f}' fill='{_REAL}' stroke='#fff' stroke-width='.5'>"
                f"<title>{esc(view.labels[k])}: real {100 * view.real[k]:.1f} %, "
                f"synthetic {100 * view.synthetic[k]:.1f} %</title></rect>"
            )
        # the synthetic histogram as one outline over the real bars
        path = [f"M{x(e[0]):.1f},{base:.1f}"]
        for k in range(len(widths)):
            y = base - h * ds[k] / peak
            path.append(f"L{x(e[k]):.1f},{y:.1f}L{x(e[k + 1]):.1f},{y:.1f}")
        path.append(f"L{x(e[-1]):.1f},{base:.1f}")
        parts.append(
            f"<path d='{''.join(path)}' fill='{_SYN}' fill-opacity='.15' "
            f"stroke='{_SYN}' stroke-width='1.6'/>"
        )
        ends = [f"{e[0]:.4g}", f"{e[-1]:.4g}"]
        if view.time:
            ends = _time_labels([e[0], e[-1]])
        parts.append(
            f"<text x='{left}' y='{base + 14}' font-size='11'>{esc(ends[0])}</text>"
            f"<text x='{left + w}' y='{base + 14}' font-size='11' "
            f"text-anchor='end'>{esc(ends[1])}</text>"
            f"<text x='{left + w / 2}' y='{base + 30}' font-size='10' "
            "text-anchor='middle' fill='#555'>bins at the real quantiles, "
            "to their widths</text>"
        )
    else:
        n = max(len(view.labels), 1)
        peak = max(max(view.real, default=0), max(view.synthetic, default=0), 1e-300)
        slot = w / n
        every = int(np.ceil(n / MAX_BARS))  # a label every so many bars
        for k, lab in enumerate(view.labels):
            x0 = left + k * slot
            for j, (share, colour) in enumerate(
                ((view.real[k], _REAL), (view.synthetic[k], _SYN))
            ):
                hb = h * share / peak
                parts.append(
                    f"<rect x='{x0 + slot * (0.1 + 0.4 * j):.1f}' "
                    f"y='{base - hb:.1f}' width='{slot * 0.4:.1f}' "
                    f"height='{hb:.1f}' fill='{colour}'><title>{esc(lab)}: "
                    f"{'synthetic' if j else 'real'} {100 * share:.1f} %</title></rect>"
                )
            cx = x0 + slot / 2
            if k % every and k != n - 1:
                continue
            parts.append(
                f"<text x='{cx:.1f}' y='{base + 10}' font-size='10' "
                f"text-anchor='end' transform='rotate(-35 {cx:.1f} {base + 10})'>"
                f"{esc(_short(lab, 12))}</text>"
            )
    parts.append(
        f"<line x1='{left}' y1='{base}' x2='{left + w}' y2='{base}' stroke='#333'/>"
    )
    parts.append("</svg>")
    return "".join(parts)


def missing_html(views):
    """The missing-values view: per column, the share of missing cells in
    the real and in the synthetic rows, as bars in a table."""
    esc = html.escape
    peak = max([max(v.missing_real, v.missing_synthetic) for v in views] + [1e-300])
    rows = [
        "<table class='missing'><tr><th>column</th><th>missing: real "
        "(grey) and synthetic (orange)</th><th>real</th><th>synthetic</th></tr>"
    ]
    for v in views:
        bars = "".join(
            f"<span class='bar' style='width:{100 * share / peak:.1f}%;"
            f"background:{colour}'></span>"
            for share, colour in ((v.missing_real, _REAL), (v.missing_synthetic, _SYN))
        )
        rows.append(
            f"<tr data-column='{esc(v.column)}'><td>{esc(v.column)}</td>"
            f"<td class='bars'>{bars}</td>"
            f"<td data-missing='{v.missing_real!r}'>{100 * v.missing_real:.1f} %</td>"
            f"<td data-missing='{v.missing_synthetic!r}'>"
            f"{100 * v.missing_synthetic:.1f} %</td></tr>"
        )
    rows.append("</table>")
    return "".join(rows)
