"""The fidelity report as a value, and its HTML page and figure.

**A report reads the real data: it is not private.** It is for the data
owner deciding whether to publish a release, never for publication next to
it.

:class:`FidelityReport` is what :func:`~skdp_synth.report.fidelity_report`
returns: the TV of every table compared, the worst tables with their cells
(:class:`TableComparison`) and what the rows are covered by
(:class:`GuaranteeSummary`). It is immutable and renders itself: a
self-contained HTML page (:meth:`FidelityReport.to_html`) and a matplotlib
figure (:meth:`FidelityReport.plot`). Computing the scores is
:mod:`._fidelity`'s job, reading the guarantee :mod:`._guarantee`'s.
"""

from __future__ import annotations

import base64
import html
import io
import textwrap
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from ._figures import _figure_class, _save_figure

if TYPE_CHECKING:
    import os

    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "FidelityReport",
    "GuaranteeSummary",
    "TableComparison",
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
    alerts : tuple of Alert
        What the synthetic rows got wrong, column by column (collapsed or
        shifted range, spread, missing cells lost or invented, levels lost,
        a model no better than the trivial one): see
        ``skdp_synth.report._verdict`` for the thresholds.
    references : tuple of Reference
        Overall scores to read ``score`` against, computed in the same
        way: independent columns drawn from the real 1-way tables, and (with
        ``held_out=True``) real rows, the sampling floor.
    column_views : tuple of ColumnView
        Every column's distribution, real against synthetic (the page's
        plots), with its missing shares.
    rule_checks : tuple of RuleCheck
        Each declared rule with the share of synthetic rows breaking it (an
        alert when above 0) and, as information, of real rows.
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
    alerts: tuple = field(default=())
    references: tuple = field(default=())
    column_views: tuple = field(default=())
    rule_checks: tuple = field(default=())

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
        # a fixed corner: loc="best" times its search and warns past 1 s on a
        # loaded machine (a UserWarning from matplotlib that depends on load)
        ax.legend(fontsize=8, loc="upper right")

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
            self._html_alerts(),
            self._html_rules(),
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
        parts.append(self._html_columns())
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
                    "<h2 id='figure'>Figure</h2><details><summary>Pairwise TV "
                    "heat map and the worst columns (PNG)</summary>"
                    f"<img alt='fidelity figure' src='data:image/png;base64,{data}'>"
                    "</details>"
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
            f"<p class='verdict' id='verdict'><strong>{esc(self.verdict)}</strong> "
            "Scores are out of 1 (1: the synthetic rows' tables match the real "
            "ones exactly). "
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
        parts.append(self._html_references())
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
        entries.append(("alerts", f"Alerts ({len(self.alerts)})"))
        if self.rule_checks:
            entries.append(("rules", "Declared rules"))
        if self.column_views:
            entries += [("columns", "Every column"), ("missing", "Missing cells")]
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
            "<details><summary>every table's TV, and the worst tables' cells</summary>",
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
        out.append("</details>")
        return "\n".join(out)

    def _html_references(self):
        """The overall score beside its references, and what they mean."""
        if not self.references:
            return ""
        esc = html.escape
        rows = [
            "<table class='references' id='references'><tr><th>rows scored "
            "against the real ones</th><th>overall score</th><th>drawn from"
            "</th><th>scored on</th><th>what it means</th></tr>",
            f"<tr class='this'><td>the synthetic rows</td><td data-score="
            f"'{self.score!r}'><strong>{self.score:.3f}</strong></td><td>"
            f"the synthesizer ({self.n_synthetic:,} rows)</td><td>the "
            f"{'held-out ' if self.held_out else ''}real rows "
            f"{'' if self.held_out else 'given '}({self.n_real:,})</td><td>"
            "</td></tr>",
        ]
        for ref in self.references:
            rows.append(
                f"<tr data-reference='{esc(ref.name)}'><td>{esc(ref.name)}</td>"
                f"<td data-score='{ref.score!r}'>{ref.score:.3f}</td>"
                f"<td class='drawn-from'>{esc(ref.drawn_from)}</td>"
                f"<td class='scored-on'>{esc(ref.scored_on)}</td>"
                f"<td>{esc(ref.description)}.</td></tr>"
            )
        rows.append("</table>")
        return "".join(rows)

    @property
    def verdict(self) -> str:
        """The overall score read against its references, in one sentence."""
        refs = {r.name: r.score for r in self.references}
        s, low = self.score, refs.get("independent columns")
        high = refs.get("real rows")
        if low is None:
            return f"Overall score {s:.3f}."
        if s <= low:
            text = (
                f"Overall score {s:.3f}, no higher than independent columns "
                f"({low:.3f}): rows drawn column by column from the real "
                "1-way tables, with no relation between columns, match the "
                "real tables at least as well"
            )
            if high is not None:
                text += f" (a second real sample: {high:.3f})"
        elif high is not None and high <= low:
            text = (
                f"Overall score {s:.3f}, above independent columns ({low:.3f}); "
                f"a second real sample scores {high:.3f}: at this number of "
                "rows the tables hardly tell relations between columns from "
                "noise, so read the alerts and the plots"
            )
        elif high is None:
            text = f"Overall score {s:.3f}, above independent columns ({low:.3f})"
            if any(d > 1 for d in self.tv):
                text += ": some relations between columns are kept"
            text += (
                " (too few held-out rows for a second real sample)"
                if self.held_out
                else ". Score against held-out rows (held_out=True) for the "
                "sampling floor a second real sample reaches"
            )
        elif s >= high:
            text = (
                f"Overall score {s:.3f}, as high as a second real sample "
                f"({high:.3f}; independent columns: {low:.3f}): the differences "
                "left are within sampling noise"
            )
        else:
            share = (s - low) / (high - low) if high > low else 1.0
            text = (
                f"Overall score {s:.3f}: {100 * share:.0f} % of the way from "
                f"independent columns ({low:.3f}) to a second real sample "
                f"({high:.3f}, the sampling floor)"
            )
        n = len(self.alerts)
        return text + (f"; {n} alert{'s' if n != 1 else ''} below." if n else ".")

    def _html_alerts(self):
        esc = html.escape
        if not self.alerts:
            return (
                "<h2 id='alerts'>Alerts (0)</h2><p class='no-alerts'>No alerts: "
                "no column's range, spread, missing cells or levels differ "
                "beyond the thresholds (skdp_synth.report._verdict), and no "
                "synthetic row breaks a declared rule.</p>"
            )
        items = "".join(
            f"<li class='alert' data-kind='{esc(a.kind)}' data-column="
            f"'{esc(a.column)}'><span class='kind'>{esc(_KIND_LABELS[a.kind])}"
            f"</span> {esc(a.message)}</li>"
            for a in self.alerts
        )
        return (
            f"<h2 id='alerts'>Alerts ({len(self.alerts)})</h2>"
            f"<ul class='alerts'>{items}</ul>"
        )

    def _html_rules(self):
        """Each declared rule: the share of synthetic rows breaking it, and
        of real rows (information about the data, not an alert)."""
        if not self.rule_checks:
            return ""
        esc = html.escape

        def share(x):
            return "not checked" if x is None else f"{100 * x:.1f} %"

        noted = any(c.note for c in self.rule_checks)
        rows = "".join(
            f"<tr data-rule='{esc(c.rule)}'><td><code>{esc(c.rule)}</code></td>"
            f"<td class='synthetic-broken'>{share(c.synthetic_broken)}</td>"
            f"<td class='real-broken'>{share(c.real_broken)}</td>"
            + (f"<td>{esc(c.note)}</td>" if noted else "")
            + "</tr>"
            for c in self.rule_checks
        )
        return (
            "<h2 id='rules'>Declared rules</h2><table class='rules'><tr><th>"
            "rule</th><th>synthetic rows breaking it (an alert above 0)</th>"
            "<th>real rows breaking it (information about the data, not an "
            "alert)</th>"
            + ("<th>note</th>" if noted else "")
            + "</tr>"
            + rows
            + "</table>"
        )

    def _html_columns(self):
        """A plot of every column, and the missing-values view."""
        if not self.column_views:
            return ""
        from ._columns import missing_html, svg

        esc = html.escape
        tv1 = {cols[0]: tv for cols, tv in self.tv.get(1, ())}
        flagged = {}
        for a in self.alerts:
            flagged.setdefault(a.column, []).append(_KIND_LABELS[a.kind])
        cards = []
        for view in self.column_views:
            facts = []
            if view.column in tv1:
                facts.append(f"TV {tv1[view.column]:.3f}")
            if view.column in self.ks:
                facts.append(f"KS {self.ks[view.column]:.3f}")
            badges = "".join(
                f"<span class='badge'>{esc(k)}</span>"
                for k in flagged.get(view.column, ())
            )
            cards.append(
                f"<div class='card' data-column='{esc(view.column)}'>"
                f"<div class='card-title'><strong>{esc(view.column)}</strong> "
                f"{esc(', '.join(facts))} {badges}</div>{svg(view)}</div>"
            )
        return (
            "<h2 id='columns'>Every column</h2><p class='legend'>"
            f"<span class='key' style='background:{_KEY[0]}'></span> real "
            f"<span class='key' style='background:{_KEY[1]}'></span> synthetic; "
            "share of rows per level, or per unit of a numeric column's value "
            "(bins at the real quantiles drawn to their widths, so an area is "
            "a share of rows).</p>"
            f"<div class='cards'>{''.join(cards)}</div>"
            "<h2 id='missing'>Missing cells</h2>" + missing_html(self.column_views)
        )

    # ---------------------------------------------------------- JSON
    def to_dict(self) -> dict:
        """The report's content as plain JSON types: the page's verdict,
        references, alerts, columns, tables and guarantee, for a CI to read."""
        from dataclasses import asdict

        tv1 = {cols[0]: tv for cols, tv in self.tv.get(1, ())}
        columns = []
        for view in self.column_views:
            entry = view.to_dict()
            entry["tv"] = tv1.get(view.column)
            entry["ks"] = self.ks.get(view.column)
            columns.append(entry)
        out = {
            "not_private": BANNER,
            "score": self.score,
            "properties": self.properties,
            "verdict": self.verdict,
            "references": [r.to_dict() for r in self.references],
            "alerts": [a.to_dict() for a in self.alerts],
            "n_real": self.n_real,
            "n_synthetic": self.n_synthetic,
            "held_out": self.held_out,
            "sample": _SAMPLE_NOTE[self.held_out],
            "columns": columns,
            "levels": {c: list(levels) for c, levels in self.levels.items()},
            "tv": {
                str(d): [{"columns": list(c), "tv": t} for c, t in tables]
                for d, tables in self.tv.items()
            },
            "worst": {
                str(d): [asdict(t) for t in tables] for d, tables in self.worst.items()
            },
            "ks": dict(self.ks),
            "rules": [c.to_dict() for c in self.rule_checks],
            "model": None if self.model is None else dict(self.model),
            "guarantee": asdict(self.guarantee),
            "privacy_warnings": list(self.privacy_warnings),
            "notes": list(self.notes),
        }
        return _jsonable(out)

    def to_json(
        self, path: str | os.PathLike[str] | None = None, *, indent: int | None = 2
    ) -> str:
        """:meth:`to_dict` as JSON (non-finite numbers as ``null``); with
        ``path`` also written there atomically. Returns the text."""
        import json

        text = json.dumps(self.to_dict(), indent=indent, allow_nan=False)
        if path is not None:
            from .._io import write_atomically

            write_atomically(path, lambda fh: fh.write(text), suffix=".json.tmp")
        return text

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
    ".verdict{font-size:1.1em}"
    ".references td:nth-child(n+3){font-size:.9em;color:#444}"
    ".alerts{padding-left:1.2em}.alert{margin:.2em 0}"
    ".kind,.badge{display:inline-block;background:#fde8d7;color:#8a3b00;"
    "border-radius:3px;padding:0 .4em;font-size:.85em;font-weight:bold}"
    ".badge{margin-left:.3em}"
    ".cards{display:flex;flex-wrap:wrap;gap:8px}"
    ".card{border:1px solid #ddd;padding:4px 6px;width:320px}"
    ".card-title{font-size:.9em;min-height:2.6em}"
    ".key{display:inline-block;width:.9em;height:.9em;vertical-align:middle}"
    ".missing .bars{width:320px}.missing .bar{display:block;height:6px;"
    "margin:1px 0;min-width:1px}"
    "details summary{cursor:pointer;color:#0645ad}"
)


#: How the page names each alert's kind.
_KIND_LABELS = {
    "range_collapsed": "collapsed range",
    "range_shifted": "shifted range",
    "std_ratio": "spread",
    "missing_lost": "missing cells lost",
    "missing_invented": "missing cells invented",
    "levels_lost": "levels lost",
    "rule_broken": "rule broken",
    "model_below_baseline": "model below baseline",
}
_KEY = ("#8c9bab", "#d95f02")


def _jsonable(value):
    """``value`` with tuples as lists, NumPy scalars as Python ones, other
    labels as text and non-finite floats as ``None``."""
    if isinstance(value, dict | MappingProxyType):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    return str(value)


def _in_level_order(table):
    """A one-column table's cells as a frame, in level order (not sorted)."""
    import pandas as pd

    index = pd.Index([c[0] for c in table.cells], name=table.columns[0])
    out = pd.DataFrame({"real": table.real, "synthetic": table.synthetic}, index)
    out["difference"] = out["synthetic"] - out["real"]
    return out


def _shorten(text, n):
    return text if len(text) <= n else text[: n - 1] + "…"
