"""Train on synthetic rows, test on real ones: a model's view of the rows.

Marginal tables say nothing about how well the rows serve a predictive
model; :func:`train_synthetic_test_real` fits one on the synthetic rows,
scores it on held-out real rows and gives the same model trained on real
rows as the reference. :func:`~._fidelity.fidelity_report` adds it for a
``target``. **Not private**: it reads the real rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..metrics._coding import _times_as_seconds

if TYPE_CHECKING:
    from typing import Any

    import pandas as pd

__all__ = ["train_synthetic_test_real"]


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
        # the reference's two halves differ
        order = np.random.default_rng(random_state).permutation(len(real))
        half = len(real) // 2
        out["real"] = fit_score(real.iloc[order[:half]], real.iloc[order[half:]])
        out["reference"] = "half of real"
    if out["metric"] == "auc":
        out["positive"] = positive
    return out
