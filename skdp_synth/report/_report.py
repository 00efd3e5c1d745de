"""Fidelity and privacy reports, and privacy--utility curves.

**A report reads the real data: it is not private.** It is for the data
owner deciding whether to publish a release, never for publication next to
it.

:func:`fidelity_report` compares a real (or held-out) table with a synthetic
one -- or with rows drawn from a fitted estimator, pipeline or
:class:`~skdp_synth.Release` -- column by column and pair by pair, and states
what the release is covered by. It follows sdmetrics' ``QualityReport``
conventions: two properties, *Column Shapes* (1-way tables) and *Column Pair
Trends* (2-way tables), each table scored ``1 - TV`` in ``[0, 1]`` (sdmetrics'
``TVComplement`` and ``ContingencySimilarity``), a property's score the mean of
its tables' scores, and the overall score the mean of the properties'.
``TV = 1/2 sum_cells |p_real - p_syn|`` is computed by the same routine as
``marginal_error(kind="tv")`` (:func:`skdp_synth.metrics.marginal_tv`), so the
report's averages are exactly that metric's values.

Given an estimator the report uses only its public interface: ``sample()``,
the public guarantee attributes (``privacy_guarantee_``,
``privacy_summary_``) and ``to_release()``. It never reads private state nor
the attributes that are marked not private.

:func:`curve` fits an estimator factory at several epsilons and measures the
average 1-, 2- and 3-way TV against two references from the same run: a
baseline (noisy independent 1-way marginals at the same guarantee) and the
sampling floor (a bootstrap of the real rows).

Examples
--------
>>> import numpy as np, pandas as pd
>>> from skdp_synth.report import fidelity_report
>>> rng = np.random.default_rng(0)
>>> real = pd.DataFrame({"colour": rng.choice(["red", "blue"], 500),
...                      "size": rng.choice(["S", "M", "L"], 500)})
>>> syn = real.sample(500, replace=True, random_state=1)
>>> rep = fidelity_report(real, syn)
>>> {k: round(v, 3) for k, v in rep.properties.items()}   # 1 - average TV
{'Column Shapes': 0.981, 'Column Pair Trends': 0.97}
>>> rep.guarantee.kind                   # rows given without an estimator
'unknown'
>>> rep.to_frame().columns.tolist()
['property', 'columns', 'metric', 'tv', 'score']
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import math
import numbers
import sys
import textwrap
import warnings
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from ..exceptions import PrivacyBudgetWarning, PrivacyLeakWarning
from ..metrics._coding import (  # noqa: F401 (MAX_RAW_LEVELS, N_QUANTILE_BINS: documented here)
    MAX_RAW_LEVELS,
    MISSING,
    N_QUANTILE_BINS,
    _average_tvs,
    _discretize,
    _time_edges_as_seconds,
    _times_as_seconds,
    catch_all_notes,
    catch_alls,
)
from ..metrics._marginals import _table_tv, _tv_tables
from ..preprocessing._boolean_encoder import SCHEMA_KEYS
from ..release import Release

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

    import pandas as pd
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "FidelityReport",
    "GuaranteeSummary",
    "TableComparison",
    "curve",
    "fidelity_report",
    "noisy_marginals_baseline",
    "numeric_scores",
    "train_synthetic_test_real",
    "plot_curve",
]

#: sdmetrics' property names, by table degree.
PROPERTIES = {1: "Column Shapes", 2: "Column Pair Trends", 3: "Column Triplets"}
_METRICS = {1: "TVComplement", 2: "ContingencySimilarity", 3: "ContingencySimilarity"}
BANNER = (
    "This report reads the real data and is NOT private. It is for the data "
    "owner deciding whether to publish; do not publish it with the release."
)
#: What the page says about the real rows, by ``FidelityReport.held_out``.
_SAMPLE_NOTE = {
    True: "scored on held-out rows: real rows the synthesizer never saw",
    False: (
        "scored in-sample: on the real rows the synthesizer was fitted on, so "
        "the scores flatter it (a copy of those rows would score 1). Score "
        "against held-out rows (skdp-synth synthesize --holdout) for rows it "
        "never saw"
    ),
    None: (
        "scored in-sample if the synthesizer was fitted on these real rows: "
        "then the scores flatter it (a copy of those rows would score 1). "
        "Score against held-out rows (skdp-synth synthesize --holdout; "
        "fidelity_report(..., held_out=True)) for rows it never saw"
    ),
}
#: Characters per line of the figure's text panel (wrapped, never cut).
_PANEL_WIDTH = 46


# ------------------------------------------------------------ value objects
@dataclass(frozen=True)
class TableComparison:
    """One contingency table, real against synthetic (a worst table).

    Attributes
    ----------
    columns : tuple of str
    tv : float
        ``1/2 sum |real - synthetic|`` over the cells.
    cells : tuple of tuple
        Level labels of each cell listed (cells empty in both tables omitted).
    real, synthetic : tuple of float
        The cells' probabilities.
    """

    columns: tuple
    tv: float
    cells: tuple
    real: tuple
    synthetic: tuple

    def to_frame(self) -> pd.DataFrame:
        """The cells as a DataFrame, largest absolute difference first."""
        import pandas as pd

        index = pd.MultiIndex.from_tuples(self.cells, names=list(self.columns))
        out = pd.DataFrame({"real": self.real, "synthetic": self.synthetic}, index)
        out["difference"] = out["synthetic"] - out["real"]
        order = np.argsort(-np.abs(out["difference"].to_numpy()), kind="stable")
        return out.iloc[order]


@dataclass(frozen=True)
class GuaranteeSummary:
    """What the synthetic rows are covered by, read from public attributes.

    ``kind`` is ``"differential privacy"``, ``"anonymity"`` or ``"unknown"``
    (plain rows given without an estimator or release). ``holds`` says what
    the estimator's :class:`~skdp_synth.Release` contains.
    """

    source: str
    kind: str
    epsilon: float | None = None
    delta: float | None = None
    neighbouring: str | None = None
    mechanism: str = ""
    holds: str = ""
    hardened_noise: bool | None = None
    summary: str = ""

    def lines(self) -> list[tuple[str, str]]:
        """``[(label, text), ...]`` for display."""
        out = [("source", self.source), ("guarantee", self.kind)]
        if self.epsilon is not None:
            out += [
                ("epsilon", f"{self.epsilon:g}"),
                ("delta", f"{self.delta:g}"),
                ("neighbouring relation", self.neighbouring),
            ]
        if self.mechanism:
            out.append(("mechanism", self.mechanism))
        if self.summary:
            out.append(("summary", self.summary))
        if self.holds:
            out.append(("the release holds", self.holds))
        if self.hardened_noise is not None:
            out.append(
                (
                    "noise",
                    "secure (OpenDP samplers)"
                    if self.hardened_noise
                    else "seeded NumPy: reproducible, NOT hardened",
                )
            )
        return out


@dataclass(frozen=True, eq=False)
class FidelityReport:
    """Fidelity of synthetic rows to a real table, and the release's guarantee.

    Built by :func:`fidelity_report`; immutable. **Not private**: it is
    computed from the real rows.

    Attributes
    ----------
    columns : tuple of str
    levels : mapping of str to tuple
        The levels each column was compared on (declared or learned).
    n_real, n_synthetic : int
    tv : mapping of int to tuple of (columns, tv)
        For each degree ``d`` computed, the TV of every d-way table in
        ``itertools.combinations`` order.
    worst : mapping of int to tuple of TableComparison
        The worst tables of each degree, worst first.
    guarantee : GuaranteeSummary
    privacy_warnings : tuple of str
        ``PrivacyLeakWarning`` / ``PrivacyBudgetWarning`` messages raised while
        drawing the rows or reading the guarantee, plus those passed in.
    notes : tuple of str
    ks : mapping of str to float
        Two-sample Kolmogorov--Smirnov statistic ``sup_t |F_real(t) -
        F_synthetic(t)|`` of each numeric column the schema neither declares
        nor bins (missing values left out; they count in the TV tables).
        Raw values make a poor contingency table; this is the shape metric
        sdmetrics uses for them (its KSComplement is ``1 - ks``).
    held_out : bool or None
        Whether the real rows were held out of the fit (``True``: the scores
        are out-of-sample), were fitted on (``False``: in-sample) or are not
        stated (``None``); the page says which.
    model : mapping or None
        With ``target=``: :func:`train_synthetic_test_real`'s result (a
        model trained on the synthetic rows, scored on the real ones, and
        its real-trained reference); else ``None``.
    """

    columns: tuple
    levels: MappingProxyType
    n_real: int
    n_synthetic: int
    tv: MappingProxyType
    worst: MappingProxyType
    guarantee: GuaranteeSummary
    privacy_warnings: tuple = field(default=())
    notes: tuple = field(default=())
    ks: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    held_out: bool | None = None
    model: MappingProxyType | None = None

    # ---------------------------------------------------------- numbers
    def average_tv(self, d: int) -> float:
        """Average TV over the d-way tables: ``marginal_error(kind="tv")``."""
        total = 0.0
        for _, tv in self.tv[d]:
            total += tv
        return total / len(self.tv[d])

    @property
    def properties(self) -> dict[str, float]:
        """``{property: score}``, score = mean of ``1 - TV`` over its tables."""
        return {PROPERTIES[d]: 1.0 - self.average_tv(d) for d in self.tv}

    @property
    def score(self) -> float:
        """Overall quality in ``[0, 1]``: the mean of the property scores."""
        return float(np.mean(list(self.properties.values())))

    def pair_matrix(self) -> pd.DataFrame:
        """Pairwise TV as a symmetric ``(p, p)`` DataFrame (1-way TV on the
        diagonal); needs ``d`` to include 2."""
        import pandas as pd

        p = len(self.columns)
        M = np.full((p, p), np.nan)
        pos = {c: i for i, c in enumerate(self.columns)}
        for (a, b), tv in self.tv.get(2, ()):
            M[pos[a], pos[b]] = M[pos[b], pos[a]] = tv
        for (a,), tv in self.tv.get(1, ()):
            M[pos[a], pos[a]] = tv
        return pd.DataFrame(M, index=list(self.columns), columns=list(self.columns))

    def to_frame(self) -> pd.DataFrame:
        """One row per table (sdmetrics' details): property, columns, metric,
        TV and score = ``1 - TV``."""
        import pandas as pd

        rows = [
            {
                "property": PROPERTIES[d],
                "columns": cols,
                "metric": _METRICS[d],
                "tv": tv,
                "score": 1.0 - tv,
            }
            for d, tables in self.tv.items()
            for cols, tv in tables
        ]
        return pd.DataFrame(
            rows, columns=["property", "columns", "metric", "tv", "score"]
        )

    # ---------------------------------------------------------- output
    def plot(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        n_columns: int = 3,
        dpi: int = 100,
    ) -> Figure:
        """A figure: pairwise TV heat map, real-vs-synthetic bars of the
        ``n_columns`` worst columns, and the summary.

        Uses matplotlib's object API (no pyplot state; renders headless). The
        figure is 12 x 8 inches, ``1200 x 800`` pixels at ``dpi=100``. With
        ``path`` it is also saved there as PNG, atomically. Needs the
        ``plot`` extra (``pip install 'skdp_synth[plot]'``).

        Returns
        -------
        matplotlib.figure.Figure
        """
        Figure = _figure_class()
        fig = Figure(figsize=(12, 8), dpi=dpi, layout="constrained")
        grid = fig.add_gridspec(2, max(n_columns, 1), height_ratios=[3, 2])
        top = grid[0, :].subgridspec(1, 2, width_ratios=[3, 2])
        ax_heat = fig.add_subplot(top[0, 0])
        ax_text = fig.add_subplot(top[0, 1])
        self._plot_heat(ax_heat, fig)
        self._plot_summary(ax_text)
        worst = self.worst.get(1, ())[:n_columns]
        for i, table in enumerate(worst):
            self._plot_bars(fig.add_subplot(grid[1, i]), table)
        if path is not None:
            _save_figure(fig, path, dpi)
        return fig

    def _plot_heat(self, ax, fig):
        M = self.pair_matrix()
        im = ax.imshow(M.to_numpy(), cmap="Reds", vmin=0, vmax=max(0.05, np.nanmax(M)))
        ticks = range(len(self.columns))
        ax.set_xticks(ticks, [str(c) for c in self.columns], rotation=60, ha="right")
        ax.set_yticks(ticks, [str(c) for c in self.columns])
        ax.set_title("Total variation per column pair (diagonal: 1-way)")
        ax.set_xlabel("column")
        ax.set_ylabel("column")
        fig.colorbar(
            im, ax=ax, shrink=0.8, label="total variation (0 = identical, 1 = disjoint)"
        )

    def _plot_summary(self, ax):
        ax.axis("off")
        lines = ["NOT PRIVATE: computed from the real data", ""]
        lines.append(f"overall score  {self.score:.3f}")
        for name, s in self.properties.items():
            lines.append(f"{name:<20s} {s:.3f}")
        for d in self.tv:
            lines.append(f"average TV{d}          {self.average_tv(d):.4f}")
        lines.append(f"rows: real {self.n_real}, synthetic {self.n_synthetic}")
        lines.append(_SAMPLE_NOTE[self.held_out].split(":")[0])
        lines.append("")
        for label, text in self.guarantee.lines()[:6]:
            # wrapped, never cut: the whole text stays inside the panel
            lines += textwrap.wrap(
                f"{label}: {text}", _PANEL_WIDTH, subsequent_indent="  "
            )
        if self.privacy_warnings:
            lines.append(f"privacy warnings: {len(self.privacy_warnings)}")
        ax.text(0, 1, "\n".join(lines), va="top", family="monospace", fontsize=8.5)

    @staticmethod
    def _plot_bars(ax, table):
        # the cells in level (ordinal, bin) order, as the table holds them
        labels = [_shorten(str(c[0]), 14) for c in table.cells]
        x = np.arange(len(labels))
        ax.bar(x - 0.2, 100 * np.asarray(table.real), 0.4, label="real")
        ax.bar(x + 0.2, 100 * np.asarray(table.synthetic), 0.4, label="synthetic")
        ax.set_xticks(x, labels, rotation=45, ha="right", fontsize=8)
        ax.set_title(f"{table.columns[0]}  (TV {table.tv:.3f})", fontsize=10)
        ax.set_xlabel(f"{table.columns[0]}: level or bin", fontsize=8)
        ax.set_ylabel("share of rows (%)", fontsize=8)
        ax.legend(fontsize=8)

    def to_html(
        self, path: str | os.PathLike[str] | None = None, *, include_plot: bool = True
    ) -> str:
        """A self-contained HTML page (inline CSS, the figure as an embedded
        PNG when matplotlib is installed), the NOT-private banner first.

        Every TV is also written exactly, as ``data-tv="repr(float)"``. With
        ``path`` the page is written there atomically. Returns the page.
        """
        esc = html.escape
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            "<title>skdp_synth fidelity report</title>",
            f"<style>{_CSS}</style></head><body>",
            '<div class="banner" id="not-private">',
            f"<strong>{esc(BANNER)}</strong></div>",
            "<h1>Fidelity report</h1>",
            self._html_verdict(),
            self._html_contents(include_plot),
            "<h2 id='summary'>Summary</h2><table class='summary'>",
            f"<tr><th>overall score</th><td data-score='{self.score!r}'>"
            f"{self.score:.4f}</td></tr>",
        ]
        for d in self.tv:
            avg = self.average_tv(d)
            parts.append(
                f"<tr><th>{esc(PROPERTIES[d])} (1 - average TV{d})</th>"
                f"<td data-score='{1.0 - avg!r}'>{1.0 - avg:.4f}</td></tr>"
                f"<tr><th>average TV{d}</th><td class='avg-tv' data-d='{d}' "
                f"data-tv='{avg!r}'>{avg:.4f}</td></tr>"
            )
        for col, ks in self.ks.items():
            parts.append(
                f"<tr><th>KS statistic of {esc(col)} (its values; 0 = same "
                "distribution)</th>"
                f"<td class='ks' data-ks='{ks!r}'>{ks:.4f}</td></tr>"
            )
        parts.append(
            "</table><h2 id='guarantee'>Privacy guarantee</h2><table class='guarantee'>"
        )
        for label, text in self.guarantee.lines():
            parts.append(f"<tr><th>{esc(label)}</th><td>{esc(str(text))}</td></tr>")
        parts.append("</table>")
        if self.privacy_warnings:
            parts.append("<h2 id='warnings'>Privacy warnings</h2><ul class='warnings'>")
            parts += [f"<li>{esc(w)}</li>" for w in self.privacy_warnings]
            parts.append("</ul>")
        if self.notes:
            parts.append("<h2 id='notes'>Notes</h2><ul>")
            parts += [f"<li>{esc(n)}</li>" for n in self.notes]
            parts.append("</ul>")
        if include_plot:
            try:
                buf = io.BytesIO()
                self.plot().savefig(buf, format="png")
            except ImportError:
                parts.append(
                    "<h2 id='figure'>Figure</h2>"
                    "<p>(install matplotlib for the figure)</p>"
                )
            else:
                data = base64.b64encode(buf.getvalue()).decode("ascii")
                parts.append(
                    f"<h2 id='figure'>Figure</h2><img alt='fidelity figure' "
                    f"src='data:image/png;base64,{data}'>"
                )
        for d in self.tv:
            parts.append(self._html_tables(d))
        parts.append("</body></html>")
        page = "\n".join(parts)
        if path is not None:
            from .._io import write_atomically

            write_atomically(path, lambda fh: fh.write(page), suffix=".html.tmp")
        return page

    def _html_verdict(self):
        """The summary first, in plain words: score, worst tables, sample, privacy."""
        esc = html.escape
        parts = [
            f"<p class='verdict' id='verdict'><strong>Overall score "
            f"{self.score:.2f}</strong> out of 1 (1: the synthetic rows' tables "
            "match the real ones exactly). "
        ]
        plain = {1: "single columns", 2: "pairs of columns", 3: "triples"}
        for d in self.tv:
            score = 1.0 - self.average_tv(d)
            parts.append(
                f"{plain[d].capitalize()} ({esc(PROPERTIES[d])}): {score:.2f}. "
            )
        worst = []
        for d in self.tv:
            if self.tv[d]:
                cols, tv = max(self.tv[d], key=lambda r: r[1])
                what = "column" if d == 1 else f"{d}-way table"
                worst.append(f"worst {what} {esc(' x '.join(cols))} (TV {tv:.3f})")
        if worst:
            text = "; ".join(worst)
            parts.append(text[:1].upper() + text[1:] + ".")
        parts.append("</p>")
        parts.append(
            f"<p>{self.n_real:,} real rows, {self.n_synthetic:,} synthetic rows, "
            f"{len(self.columns)} columns; {esc(_SAMPLE_NOTE[self.held_out])}.</p>"
        )
        if self.model is not None:
            m = self.model
            reference = (
                "the real training rows"
                if m.get("reference") == "real_train"
                else "half of the real rows (fewer rows: a weaker reference)"
            )
            parts.append(
                f"<p id='model'>A model predicting {esc(m['target'])}, trained "
                "on the synthetic rows, "
                f"scores {esc(m['metric'])} {m['synthetic']:.3f} on the real "
                f"rows; trained on {esc(reference)}, {m['real']:.3f}.</p>"
            )
        g = self.guarantee
        if g.epsilon is not None:
            privacy = (
                f"differential privacy, epsilon = {g.epsilon:g}, delta = "
                f"{g.delta:g} ({g.neighbouring} neighbours)"
            )
        else:
            privacy = g.summary or g.kind
        parts.append(f"<p>Privacy of the synthetic rows: {esc(privacy)}.</p>")
        parts.append(
            "<p class='legend'>A score is between 0 and 1, higher is better; a TV "
            "(total variation distance between the real and the synthetic "
            "table, half the sum of the absolute differences of the shares of "
            "rows in its cells) is between 0 and 1, lower is better.</p>"
        )
        return "".join(parts)

    def _html_contents(self, include_plot):
        """The page's table of contents (links to its sections)."""
        entries = [("summary", "Summary"), ("guarantee", "Privacy guarantee")]
        if self.privacy_warnings:
            entries.append(("warnings", "Privacy warnings"))
        if self.notes:
            entries.append(("notes", "Notes"))
        if include_plot:
            entries.append(("figure", "Figure"))
        entries += [(f"tables-{d}", f"{d}-way tables") for d in self.tv]
        links = "".join(
            f"<li><a href='#{key}'>{html.escape(text)}</a></li>"
            for key, text in entries
        )
        return f"<nav class='toc'><strong>Contents</strong><ul>{links}</ul></nav>"

    def _html_tables(self, d):
        esc = html.escape
        out = [
            f"<h2 id='tables-{d}'>{esc(PROPERTIES[d])}: {d}-way tables, "
            "worst first</h2>",
            f"<table class='tv' data-d='{d}'><tr><th>columns</th>"
            "<th>TV (lower is better)</th><th>score (1 - TV)</th></tr>",
        ]
        for cols, tv in sorted(self.tv[d], key=lambda r: -r[1]):
            out.append(
                f"<tr><td>{esc(' x '.join(map(str, cols)))}</td>"
                f"<td class='tv' data-tv='{tv!r}'>{tv:.4f}</td>"
                f"<td>{1 - tv:.4f}</td></tr>"
            )
        out.append("</table>")
        for table in self.worst.get(d, ()):
            if len(table.columns) == 1:
                # one column: every level in its declared (ordinal) order
                frame = _in_level_order(table)
                what = "every level, in order"
            else:
                frame = table.to_frame().head(12)
                what = "largest differences first"
            out.append(
                f"<h3>{esc(' x '.join(map(str, table.columns)))} "
                f"(TV {table.tv:.4f}): share of rows, {what}</h3>"
            )
            # one header row (the index as ordinary columns, not a 2nd row)
            out.append(
                frame.reset_index().to_html(
                    index=False, float_format=lambda v: f"{v:.4f}"
                )
            )
        return "\n".join(out)

    def __repr__(self):
        props = ", ".join(f"{k}={v:.3f}" for k, v in self.properties.items())
        return (
            f"FidelityReport(score={self.score:.3f}, {props}, "
            f"guarantee={self.guarantee.kind!r}, NOT private)"
        )


_CSS = (
    "body{font-family:sans-serif;max-width:1100px;margin:1em auto;color:#222;"
    "padding:0 1em;line-height:1.4}"
    ".banner{background:#b00020;color:#fff;padding:1em;font-size:1.1em}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:3px 10px;text-align:left}"
    "th{background:#f3f3f3}"
    "td{font-variant-numeric:tabular-nums}"
    "h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}"
    "h3{font-size:1em;margin-top:1.2em}"
    ".toc{background:#f7f7f7;border:1px solid #ddd;padding:.5em 1em;"
    "display:inline-block}"
    ".toc ul{margin:.3em 0;padding-left:1.2em}"
    "img{max-width:100%}"
)


def _in_level_order(table):
    """A one-column table's cells as a frame, in level order (not sorted)."""
    import pandas as pd

    index = pd.Index([c[0] for c in table.cells], name=table.columns[0])
    out = pd.DataFrame({"real": table.real, "synthetic": table.synthetic}, index)
    out["difference"] = out["synthetic"] - out["real"]
    return out


def _shorten(text, n):
    return text if len(text) <= n else text[: n - 1] + "…"


def _figure_class():
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "plots need matplotlib: pip install matplotlib (in a clone of "
            "skdp_synth: pip install -e '.[plot]', or make demo)"
        ) from None
    return Figure


def _save_figure(fig, path, dpi):
    from .._io import write_atomically

    write_atomically(
        path,
        lambda fh: fig.savefig(fh, format="png", dpi=dpi),
        binary=True,
        suffix=".png.tmp",
    )


# ------------------------------------------------------------ discretizing
def _check_schema(schema):
    if schema is None:
        return {}
    if not isinstance(schema, dict):
        raise TypeError(
            f"schema must be a dict of BooleanEncoder arguments, got {schema!r}"
        )
    unknown = set(schema) - SCHEMA_KEYS
    if unknown:
        raise ValueError(
            f"unknown schema keys {sorted(unknown)}; allowed: {sorted(SCHEMA_KEYS)}"
        )
    return schema


# ------------------------------------------------------------ the guarantee
def _final_step(obj):
    steps = getattr(obj, "steps", None)  # a (Synthesis)Pipeline: public steps
    if isinstance(steps, list) and steps:
        return steps[-1][1]
    return obj


def _describe_release(rel):
    """What a release holds, in plain words (no array names or shapes)."""
    total = sum(int(np.size(v)) for v in rel.arrays.values())
    how = {
        "weighted-points": "synthetic rows are drawn from weighted synthetic "
        "points fitted to them",
        "rows": "they are the synthetic rows themselves",
    }.get(rel.plan.get("sampler", "none"), "it draws no rows")
    return f"{total:,} released numbers and no real row; {how}"


def _guarantee_of(source):
    """A :class:`GuaranteeSummary` from public attributes only."""
    if source is None:
        return GuaranteeSummary(
            source="synthetic rows given directly",
            kind="unknown",
            summary="no estimator or release given: the rows' guarantee is not known",
        )
    if isinstance(source, Release):
        g = source.guarantee
        return GuaranteeSummary(
            source=f"Release of {source.estimator}",
            kind="differential privacy",
            epsilon=g.epsilon,
            delta=g.delta,
            neighbouring=g.neighbouring,
            mechanism=g.mechanism,
            holds=_describe_release(source),
            hardened_noise=source.plan.get("hardened_noise"),
        )
    final = _final_step(source)
    g = getattr(final, "privacy_guarantee_", None)
    whole = getattr(source, "privacy_guarantee_", None) if final is not source else None
    if g is not None and whole is not None and whole != g:
        # a pipeline whose encoder learned domains privately: the total it
        # spent (sequential composition), not the synthesizer's share alone
        part = _guarantee_of(final)
        return replace(
            part,
            epsilon=whole.epsilon,
            delta=whole.delta,
            neighbouring=whole.neighbouring,
            mechanism=whole.mechanism,
        )
    if g is not None:
        rel = None
        if callable(getattr(final, "to_release", None)):
            try:
                rel = final.to_release()
            except NotImplementedError:
                rel = None
        if rel is not None:
            return replace(_guarantee_of(rel), source=rel.estimator)
        return GuaranteeSummary(
            source=type(final).__name__,
            kind="differential privacy",
            epsilon=g.epsilon,
            delta=g.delta,
            neighbouring=g.neighbouring,
            mechanism=g.mechanism,
            holds="(no to_release(): what may be published is not stated)",
        )
    summary = getattr(final, "privacy_summary_", None)
    if summary is not None:
        return GuaranteeSummary(
            source=type(final).__name__,
            kind="anonymity",
            summary=f"{summary}; not differential privacy",
        )
    return GuaranteeSummary(
        source=type(final).__name__,
        kind="unknown",
        summary="the estimator states no privacy guarantee",
    )


def _format_warning(w):
    if isinstance(w, str):
        return w
    category = getattr(w, "category", type(getattr(w, "message", w)))
    message = getattr(w, "message", w)
    return f"{category.__name__}: {message}"


# ------------------------------------------------------------ the report
def fidelity_report(
    real: pd.DataFrame,
    synthetic: Any,
    schema: Mapping[str, Any] | None = None,
    *,
    d: int | Sequence[int] = (1, 2),
    release: Any = None,
    n_samples: int | None = None,
    random_state: int | np.random.RandomState | np.random.Generator | None = None,
    n_worst: int = 5,
    extra_warnings: Iterable[str | warnings.WarningMessage] = (),
    held_out: bool | None = None,
    target: Any = None,
    real_train: pd.DataFrame | None = None,
) -> FidelityReport:
    """Compare synthetic rows with a real table; read the release's guarantee.

    **Not private**: the result is computed from ``real``.

    Parameters
    ----------
    real : DataFrame
        The real table (or a held-out part of it): categorical, Boolean,
        ordinal or binned numeric columns.
    synthetic : DataFrame, array, fitted estimator/pipeline, or Release
        Synthetic rows with ``real``'s columns, or something to draw them
        from with ``sample(n_samples, random_state=random_state)``: a fitted
        estimator or pipeline (its guarantee is read from its public
        attributes and ``to_release()``) or a :class:`~skdp_synth.Release`
        whose rows have ``real``'s columns.
    schema : dict, default=None
        The public domain, as the ``BooleanEncoder`` arguments the CLI's
        schema file holds: ``categories`` and ``ordinal`` fix the levels of a
        column, ``bin_edges`` bins a numeric one (``[e_{i-1}, e_i)``, the last
        bin closed, as the encoder does). Other columns are compared on the
        values seen in either table. Other keys are accepted and ignored.
    d : int or tuple of int, default=(1, 2)
        Table degrees: 1 (Column Shapes), 2 (Column Pair Trends), 3
        (summary of the 3-way tables).
    release : estimator, pipeline or Release, default=None
        Where to read the guarantee when ``synthetic`` is rows.
    n_samples : int, default=None
        Rows to draw from an estimator or release; ``len(real)`` by default.
    random_state : int, RandomState or None, default=None
        Passed to ``sample``.
    n_worst : int, default=5
        Worst tables kept per degree, with their cells.
    extra_warnings : iterable of str or warnings.WarningMessage, default=()
        Warnings recorded elsewhere (e.g. while fitting) to list in the report.
    held_out : bool or None, default=None
        Whether ``real`` was held out of the fit (``True``), is the table the
        synthesizer was fitted on (``False``) or is not stated (``None``).
        Recorded and said on the page: scores on the fitted rows are
        in-sample and flatter the synthesizer.
    target : column name, default=None
        Also train a model predicting ``target`` on the synthetic rows and
        score it on ``real`` (:func:`train_synthetic_test_real`; issue 22):
        ``model`` holds the result and the page says it.
    real_train : DataFrame, default=None
        With ``target``: the real rows the synthesizer was fitted on, for
        the like-for-like reference (the same model trained on them);
        without them the reference is trained on half of ``real``.

    Returns
    -------
    FidelityReport
    """
    import pandas as pd

    if not isinstance(real, pd.DataFrame):
        raise TypeError("real must be a pandas DataFrame (the table's columns named)")
    if len(real) == 0 or real.shape[1] == 0:
        raise ValueError("real has no rows or no columns")
    ds = (d,) if isinstance(d, numbers.Integral) else tuple(d)
    if not ds or any(
        isinstance(k, bool) or not isinstance(k, numbers.Integral) or k not in (1, 2, 3)
        for k in ds
    ):
        raise ValueError(f"d must be 1, 2, 3 or a tuple of them, got {d!r}")
    ds = tuple(sorted({int(k) for k in ds if k <= real.shape[1]}))
    schema = _check_schema(schema)
    recorded = [_format_warning(w) for w in extra_warnings]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if hasattr(synthetic, "sample") and not isinstance(synthetic, pd.DataFrame):
            source = synthetic
            n = len(real) if n_samples is None else n_samples
            rows = synthetic.sample(n, random_state=random_state)
        else:
            source, rows = release, synthetic
        guarantee = _guarantee_of(source)
    for w in caught:
        if issubclass(w.category, PrivacyLeakWarning | PrivacyBudgetWarning):
            recorded.append(_format_warning(w))
        else:  # not ours to swallow
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    rows = _as_frame(rows, real)
    if len(rows) == 0:
        # 1/len(rows) below (a ZeroDivisionError traceback from the CLI; a
        # walk-through, round twenty)
        raise ValueError("synthetic has no rows")
    # the real levels the release gives as its "other": said in a note
    folds = catch_alls(source) if source is not None else {}
    fold_notes = catch_all_notes(real, rows, folds)
    model = None
    if target is not None:
        if target not in real.columns:
            raise ValueError(f"target {target!r} is not a column of real")
        scores = train_synthetic_test_real(rows, real, target, real_train=real_train)
        model = MappingProxyType({**scores, "target": str(target)})
    schema = _time_edges_as_seconds(schema, real)
    times = [c for c in real.columns if pd.api.types.is_datetime64_any_dtype(real[c])]
    real, rows = _times_as_seconds(real, rows)
    cx, cy, sizes, levels, notes = _discretize(real, rows, schema, times)
    notes = fold_notes + list(notes)
    w = np.full(len(real), 1.0 / len(real))
    v = np.full(len(rows), 1.0 / len(rows))
    names = tuple(str(c) for c in real.columns)
    tv, worst = {}, {}
    for k in ds:
        tables = _tv_tables(cx, cy, sizes, k, w, v)
        tv[k] = tuple((tuple(names[j] for j in cols), t) for cols, t in tables)
        order = sorted(range(len(tables)), key=lambda i: -tables[i][1])[:n_worst]
        worst[k] = tuple(
            _comparison(cx, cy, tables[i][0], sizes, w, v, names, levels) for i in order
        )
    ks = _ks_statistics(real, rows, schema)
    return FidelityReport(
        columns=names,
        levels=MappingProxyType(levels),
        n_real=len(real),
        n_synthetic=len(rows),
        tv=MappingProxyType(tv),
        worst=MappingProxyType(worst),
        guarantee=guarantee,
        privacy_warnings=tuple(recorded),
        notes=tuple(notes),
        ks=MappingProxyType(ks),
        held_out=None if held_out is None else bool(held_out),
        model=model,
    )


def _ks_statistics(real, synthetic, schema):
    """KS statistic of each numeric column without declared levels or bins."""
    import pandas as pd
    from scipy.stats import ks_2samp

    declared = {
        *(schema.get("categories") or {}),
        *(schema.get("ordinal") or {}),
        *(schema.get("bin_edges") or {}),
    }
    out = {}
    for col in real.columns:
        if col in declared:
            continue
        xs = pd.to_numeric(real[col], errors="coerce")
        ys = pd.to_numeric(synthetic[col], errors="coerce")
        numeric = (
            pd.api.types.is_numeric_dtype(real[col])
            and not pd.api.types.is_bool_dtype(real[col])
            and ys.notna().sum() == synthetic[col].notna().sum()
        )
        x, y = xs.dropna().to_numpy(float), ys.dropna().to_numpy(float)
        if numeric and len(x) and len(y):
            # the statistic only; "asymp" skips the costly exact p-value
            out[str(col)] = float(ks_2samp(x, y, method="asymp").statistic)
    return out


def _as_frame(rows, real):
    import pandas as pd

    if isinstance(rows, pd.DataFrame):
        missing = [c for c in real.columns if c not in rows.columns]
        if missing:
            raise ValueError(
                f"the synthetic rows lack the real table's columns {missing}"
            )
        return rows[list(real.columns)]
    arr = np.asarray(rows)
    if arr.ndim != 2 or arr.shape[1] != real.shape[1]:
        raise ValueError(
            f"the synthetic rows have shape {arr.shape}, the real table "
            f"{real.shape[1]} columns; pass rows in the real table's schema (a "
            "pipeline decodes its samples; a bare estimator's need encoded real rows)"
        )
    if len(arr) == 0:
        raise ValueError("no synthetic rows")
    return pd.DataFrame(arr, columns=real.columns)


def _comparison(cx, cy, cols, sizes, w, v, names, levels):
    tv, px, py, cells = _table_tv(cx, cy, cols, sizes, w, v)
    labs = [levels[names[j]] for j in cols]
    keep = np.flatnonzero((px > 0) | (py > 0))
    if len(cols) == 1:  # bars: every level, in order
        keep = np.arange(len(px))
    if cells is None:
        idx = np.unravel_index(keep, [sizes[j] for j in cols])
        lab = [
            tuple(labs[a][i[r]] for a, i in enumerate(idx)) for r in range(len(keep))
        ]
    else:
        lab = [tuple(labs[a][c] for a, c in enumerate(cells[r])) for r in keep]
    return TableComparison(
        columns=tuple(names[j] for j in cols),
        tv=tv,
        cells=tuple(lab),
        real=tuple(float(x) for x in px[keep]),
        synthetic=tuple(float(x) for x in py[keep]),
    )


# ------------------------------------------------------------ curves
def noisy_marginals_baseline(
    codes: ArrayLike,
    sizes: Sequence[int],
    epsilon: float,
    delta: float,
    neighbouring: str,
    n_samples: int,
    rng: np.random.Generator,
) -> NDArray[np.int64]:
    """Rows with independent columns drawn from noisy 1-way histograms.

    The usual baseline of the field: every column's counts plus noise, as
    one mechanism on the concatenated histograms. A row is in one cell of
    each of the ``p`` histograms, so its ``l1``/``l2`` sensitivity is ``p`` /
    ``sqrt(p)`` under add/remove and twice / ``sqrt(2)`` times that under
    replace-one. ``delta > 0``: Gaussian noise with
    ``analytic_gaussian_sigma(epsilon, delta, l2)`` (Balle--Wang 2018, exact
    for this sensitivity); ``delta = 0``: Laplace noise of scale
    ``l1 / epsilon``. Noisy counts are clipped at 0 and normalised (an
    all-zero histogram counts as uniform); ``n_samples`` rows are drawn
    column by column. Seeded NumPy noise from ``rng``: for experiments.

    Returns
    -------
    ndarray of shape (n_samples, p), int codes
    """
    from ..mechanisms import analytic_gaussian_sigma

    p = codes.shape[1]
    factor = 2.0 if neighbouring == "replace-one" else 1.0
    if delta > 0:
        sigma = analytic_gaussian_sigma(epsilon, delta, math.sqrt(factor * p))
    out = np.empty((n_samples, p), dtype=np.int64)
    for j in range(p):
        k = sizes[j]
        counts = np.bincount(codes[:, j], minlength=k)
        if delta > 0:
            noisy = counts + rng.normal(0, sigma, k)
        else:
            noisy = counts + rng.laplace(0, factor * p / epsilon, k)
        q = np.clip(noisy, 0, None)
        q = q / q.sum() if q.sum() > 0 else np.full(k, 1 / k)
        out[:, j] = rng.choice(k, size=n_samples, p=q)
    return out


def curve(
    estimator_factory: Callable[..., Any],
    epsilons: Sequence[float],
    X: pd.DataFrame,
    *,
    schema: Mapping[str, Any] | None = None,
    repeats: int = 3,
    d: Sequence[int] = (1, 2, 3),
    n_samples: int | None = None,
    baseline: bool = True,
    floor: bool = True,
    progress: bool = False,
    X_eval: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Privacy--utility curve: average TV against epsilon, with references.

    **Not private** (computed from ``X``), and each point spends its own
    budget: an experiment for choosing a mechanism, not for a release.

    For each ``epsilon`` and seed ``r in range(repeats)``,
    ``estimator_factory(epsilon=epsilon, random_state=r)`` must return an
    unfitted estimator or pipeline; it is fitted on ``X`` and
    ``n_samples`` rows (``len(X)`` by default) are drawn with
    ``random_state=r``. References from the same run: the noisy 1-way
    marginals baseline (:func:`noisy_marginals_baseline`) at the guarantee
    the fitted estimator states (its public ``privacy_guarantee_``), and the
    sampling floor, a bootstrap of ``X``'s rows (no privacy).

    Every method is scored against ``X_eval`` when it is given (a held-out
    sample of the same population), else against ``X`` itself. In-sample,
    the floor is optimistic: a bootstrap of ``X`` scored against ``X``
    only measures resampling noise, while a synthesizer that generalises is
    penalised for not reproducing ``X``'s own sampling noise. Held out, all
    three references face the same population and the comparison is fair.

    Parameters
    ----------
    estimator_factory : callable
    epsilons : sequence of float
    X : DataFrame
        The real table, in the columns the estimator's samples have.
    schema : dict, default=None
        Public domain (see :func:`fidelity_report`).
    repeats : int, default=3
    d : tuple of int, default=(1, 2, 3)
    n_samples : int, default=None
    baseline, floor : bool, default=True
    progress : bool, default=False
        Print one line per fit on standard error.
    X_eval : DataFrame, default=None
        Held-out rows, in ``X``'s columns, to score every method against.

    Returns
    -------
    DataFrame
        One row per method, epsilon and repeat: ``method``, ``epsilon``,
        ``repeat`` and ``TV1``/``TV2``/``TV3`` (for the floor, ``epsilon`` is
        NaN). :func:`plot_curve` draws it.
    """
    import pandas as pd

    if not isinstance(X, pd.DataFrame):
        raise TypeError("X must be a pandas DataFrame")
    if X_eval is None:
        ref = X
    else:
        if not isinstance(X_eval, pd.DataFrame):
            raise TypeError("X_eval must be a pandas DataFrame")
        if list(X_eval.columns) != list(X.columns):
            raise ValueError("X_eval must have the columns of X, in the same order")
        if len(X_eval) == 0:
            raise ValueError("X_eval has no rows")
        ref = X_eval
    ds = tuple(
        k for k in ((d,) if isinstance(d, numbers.Integral) else d) if k <= X.shape[1]
    )
    schema = _check_schema(schema)
    n = len(X) if n_samples is None else int(n_samples)
    rows = []
    real_codes = None
    for eps, r in itertools.product(epsilons, range(repeats)):
        if progress:
            print(f"[curve] epsilon={eps:g}, repeat {r + 1}/{repeats}", file=sys.stderr)
        est = estimator_factory(epsilon=eps, random_state=r)
        est.fit(X)
        syn = _as_frame(est.sample(n, random_state=r), X)
        cx, cy, sizes, _, _ = _discretize(ref, syn, schema)
        rows.append(
            {"method": "estimator", "epsilon": float(eps), "repeat": r}
            | _average_tvs(cx, cy, sizes, ds)
        )
        if baseline:
            if real_codes is None:
                real_codes = _training_and_reference_codes(X, X_eval, schema)
            g = getattr(_final_step(est), "privacy_guarantee_", None)
            delta, rel = (
                (g.delta, g.neighbouring) if g is not None else (0.0, "replace-one")
            )
            rng = np.random.default_rng(10_000 + r)
            base = noisy_marginals_baseline(
                real_codes[0], real_codes[2], float(eps), delta, rel, n, rng
            )
            rows.append(
                {
                    "method": "baseline: noisy 1-way marginals",
                    "epsilon": float(eps),
                    "repeat": r,
                }
                | _average_tvs(real_codes[1], base, real_codes[2], ds)
            )
    if floor:
        if real_codes is None:
            real_codes = _training_and_reference_codes(X, X_eval, schema)
        for r in range(repeats):
            rng = np.random.default_rng(20_000 + r)
            boot = real_codes[0][rng.integers(0, len(X), n)]
            rows.append(
                {
                    "method": "floor: bootstrap of the real rows",
                    "epsilon": np.nan,
                    "repeat": r,
                }
                | _average_tvs(real_codes[1], boot, real_codes[2], ds)
            )
    return pd.DataFrame(rows)


def _training_and_reference_codes(X, X_eval, schema):
    """``(codes of X, codes of the reference table, sizes)`` on common levels.

    The reference is ``X_eval`` when given, else ``X`` (then both codes are
    the same array, as :func:`curve` computed them before ``X_eval``).
    """
    if X_eval is None:
        cx, _, sizes, _, _ = _discretize(X, X.iloc[:1], schema)
        return cx, cx, sizes
    cx, cy, sizes, _, _ = _discretize(X, X_eval, schema)
    return cx, cy, sizes


def plot_curve(
    frame: pd.DataFrame, path: str | os.PathLike[str] | None = None, *, dpi: int = 100
) -> Figure:
    """Plot a :func:`curve` frame: one panel per TVd, mean and min-max band
    over the repeats against epsilon (log scale), the floor as a line.

    Returns
    -------
    matplotlib.figure.Figure
    """
    Figure = _figure_class()
    tvs = [c for c in ("TV1", "TV2", "TV3") if c in frame.columns]
    fig = Figure(figsize=(4 * len(tvs), 3.5), dpi=dpi, layout="constrained")
    axes = fig.subplots(1, len(tvs), squeeze=False)[0]
    for ax, col in zip(axes, tvs):
        for method, part in frame.groupby("method", sort=False):
            if part["epsilon"].isna().all():
                ax.axhline(part[col].mean(), color="grey", ls="--", label=method)
                continue
            g = part.groupby("epsilon")[col]
            eps = g.mean().index.to_numpy()
            ax.plot(eps, g.mean().to_numpy(), marker="o", label=method)
            ax.fill_between(eps, g.min().to_numpy(), g.max().to_numpy(), alpha=0.2)
        ax.set_xscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel(f"average {col}")
        ax.set_title(f"{col} against epsilon")
    axes[0].legend(fontsize=8)
    if path is not None:
        _save_figure(fig, path, dpi)
    return fig


def _wasserstein_scale(values: np.ndarray) -> float:
    """The spread a Wasserstein distance is divided by: the interquartile
    range of ``values``; where it is 0 (more than half of them on one value,
    e.g. a debt that is 0 for 82 % of the rows) their standard deviation;
    where that is 0 too (a constant), 1. Dividing by 1 where the IQR was 0
    gave the distance in the column's units (115 for credit's ``Debt``),
    which outweighed every other column in a mean.

    >>> import numpy as np
    >>> _wasserstein_scale(np.array([1.0, 2, 3, 4, 5]))
    2.0
    >>> _wasserstein_scale(np.array([-4.0, 0, 0, 0, 0, 0, 0, 4]))  # IQR 0: the std
    2.0
    """
    values = np.asarray(values, dtype=np.float64)
    q75, q25 = np.percentile(values, [75, 25])
    if q75 > q25:
        return float(q75 - q25)
    sd = float(values.std())
    return sd if sd > 0 else 1.0


def numeric_scores(
    real: pd.DataFrame, synthetic: pd.DataFrame, columns: Sequence | None = None
) -> pd.DataFrame:
    """Score numeric columns on their values, not in a schema's bins (issue 22).

    **Not private** (reads the real rows); pass held-out rows as ``real`` to
    score against data the fit did not see. Per column (missing values
    dropped): the two-sample Kolmogorov-Smirnov statistic, the 1-Wasserstein
    distance divided by the real values' spread (their interquartile range,
    or their standard deviation where more than half of them are one value),
    the ratio of standard deviations (synthetic / real), the share of
    integral synthetic values, the missing rates, and the largest absolute
    difference between the two Pearson correlation matrices in the column's
    row.

    Parameters
    ----------
    real, synthetic : DataFrame
    columns : list, default=None
        The numeric columns (default: the real table's numeric, non-Boolean
        columns).

    Returns
    -------
    DataFrame
        One row per column: ``ks``, ``wasserstein_iqr``, ``std_ratio``,
        ``integral``, ``missing_real``, ``missing_synthetic``, ``corr_diff``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> real = pd.DataFrame({"x": rng.normal(size=400), "n": rng.integers(0, 9, 400)})
    >>> numeric_scores(real, real).loc["x", ["ks", "std_ratio"]].tolist()
    [0.0, 1.0]
    """
    import pandas as pd
    from scipy.stats import ks_2samp, wasserstein_distance

    real, synthetic = _times_as_seconds(real, synthetic)
    if columns is None:
        columns = [
            c
            for c in real.columns
            if pd.api.types.is_numeric_dtype(real[c])
            and not pd.api.types.is_bool_dtype(real[c])
        ]
    columns = list(columns)
    r = real[columns].apply(pd.to_numeric, errors="coerce").astype(float)
    s = synthetic[columns].apply(pd.to_numeric, errors="coerce").astype(float)
    # a numeric code whose rare values came back as "other" (a privately
    # discovered categorical): its scores would count them as missing
    texts = [c for c in columns if (s[c].isna() & synthetic[c].notna()).any()]
    if texts:
        warnings.warn(
            f"columns {texts} have synthetic values that are not numbers (e.g. "
            "'other', a level of a categorical column): they are scored as "
            "missing here; score such columns as categorical (fidelity_report)",
            UserWarning,
            stacklevel=2,
        )
    corr_diff = (r.corr() - s.corr()).abs().max(axis=1)
    rows = {}
    for c in columns:
        a, b = r[c].dropna().to_numpy(), s[c].dropna().to_numpy()
        rows[c] = {
            "ks": float(ks_2samp(a, b).statistic),
            "wasserstein_iqr": float(
                wasserstein_distance(a, b) / _wasserstein_scale(a)
            ),
            "std_ratio": float(b.std() / a.std()) if a.std() > 0 else math.nan,
            "integral": float(np.mean(b == np.round(b))) if b.size else math.nan,
            "missing_real": float(r[c].isna().mean()),
            "missing_synthetic": float(s[c].isna().mean()),
            "corr_diff": float(corr_diff[c]),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def train_synthetic_test_real(
    synthetic: pd.DataFrame,
    real: pd.DataFrame,
    target: Any,
    *,
    real_train: pd.DataFrame | None = None,
    random_state: int | None = 0,
) -> dict[str, Any]:
    """Train on synthetic rows, test on real ones (and the real-trained baseline).

    **Not private.** A gradient-boosting model
    (:class:`~sklearn.ensemble.HistGradientBoostingClassifier` for a
    non-numeric ``target``; :class:`~sklearn.ensemble.HistGradientBoostingRegressor`
    and R² for a numeric one) is fitted on ``synthetic`` and scored on
    ``real`` (held-out rows). The reference (``"real"``) is the same model
    fitted on ``real_train`` -- the real rows the synthesizer was fitted
    on: give them, for the like-for-like comparison -- and scored on the
    same held-out rows; without them, fitted on a random half of ``real``
    and scored on the other half (fewer training rows, so a weaker
    reference: synthetic rows can "beat" it; ``"reference"`` says which).
    A two-level target is scored
    by the ROC AUC of its last level in sorted order (named in
    ``"positive"``); one of more levels by the macro average of the
    one-vs-rest AUCs over the levels present in the scored rows
    (``"auc-ovr"``; a level the training rows lack gets probability 0).

    Returns
    -------
    dict
        ``{"metric": "auc", "auc-ovr" or "r2", "synthetic": score, "real":
        score, "reference": "real_train" or "half of real"}``, and
        ``"positive"`` for ``"auc"``.
    """
    import pandas as pd

    from ..metrics._model import model_task

    if real_train is not None:
        real_train = real_train[list(real.columns)]
        both, synthetic = _times_as_seconds(
            pd.concat([real, real_train], ignore_index=True),
            synthetic[list(real.columns)],
        )
        real, real_train = both.iloc[: len(real)], both.iloc[len(real) :]
    else:
        real, synthetic = _times_as_seconds(real, synthetic[list(real.columns)])
    metric, positive, fit_score = model_task(real, synthetic, target, random_state)
    out = {"metric": metric, "synthetic": fit_score(synthetic, real)}
    if real_train is not None:
        out["real"] = fit_score(real_train, real)
        out["reference"] = "real_train"
    else:
        # a random half, not the first rows: a file sorted by anything made
        # the reference's two halves differ (a walk-through, round eighteen)
        order = np.random.default_rng(random_state).permutation(len(real))
        half = len(real) // 2
        out["real"] = fit_score(real.iloc[order[:half]], real.iloc[order[half:]])
        out["reference"] = "half of real"
    if out["metric"] == "auc":
        out["positive"] = positive
    return out
