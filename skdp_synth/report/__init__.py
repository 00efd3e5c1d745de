"""Fidelity reports: how synthetic rows compare with real ones.

Not private: a report reads the real rows."""

from ._report import (
    FidelityReport,
    GuaranteeSummary,
    TableComparison,
    curve,
    fidelity_report,
    noisy_marginals_baseline,
    numeric_scores,
    plot_curve,
    train_synthetic_test_real,
)
from ._report import (
    _figure_class as _figure_class,  # for sibling packages
)

__all__ = [
    "FidelityReport",
    "GuaranteeSummary",
    "TableComparison",
    "curve",
    "fidelity_report",
    "noisy_marginals_baseline",
    "numeric_scores",
    "plot_curve",
    "train_synthetic_test_real",
]
