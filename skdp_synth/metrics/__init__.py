"""Errors between real and synthetic data, and scorers built on them.

* :func:`marginal_error` -- average d-way marginal error (:cite:`Boedihardjo2024` eq.
  1.2) for Boolean/cube data, exact for every ``d``; average total variation over
  d-way contingency tables for categorical data.
* :func:`marginal_tv` -- the total variation of each d-way table, one by one.
* :func:`moment_error` -- the full d-th moment tensor error (:cite:`Boedihardjo2024` Thm
  3.10, 5.9).
* :func:`covariance_loss` -- ``||E XX^T - E YY^T||_F`` of a partition
  (:cite:`Boedihardjo2024` §3).
* :func:`make_marginal_scorer` -- ``scoring=`` for ``GridSearchCV``.
* :func:`make_model_scorer` -- a model trained on synthetic rows, scored on
  held-out real ones, as ``scoring=``.
"""

from ._marginals import covariance_loss, marginal_error, marginal_tv, moment_error
from ._scorer import make_marginal_scorer, make_model_scorer

__all__ = [
    "covariance_loss",
    "make_marginal_scorer",
    "make_model_scorer",
    "marginal_error",
    "marginal_tv",
    "moment_error",
]
