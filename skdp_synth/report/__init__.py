"""Fidelity reports: how synthetic rows compare with real ones.

Not private: a report reads the real rows."""

from ._columns import ColumnView
from ._curve import curve, noisy_marginals_baseline, plot_curve
from ._fidelity import fidelity_report
from ._figures import (
    _figure_class as _figure_class,  # for sibling packages
)
from ._model import train_synthetic_test_real
from ._numeric import numeric_scores
from ._report import FidelityReport, GuaranteeSummary, TableComparison
from ._verdict import Alert, Reference

__all__ = [
    "Alert",
    "ColumnView",
    "FidelityReport",
    "GuaranteeSummary",
    "Reference",
    "TableComparison",
    "curve",
    "fidelity_report",
    "noisy_marginals_baseline",
    "numeric_scores",
    "plot_curve",
    "train_synthetic_test_real",
]
