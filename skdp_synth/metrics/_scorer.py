"""Scorers: minus the marginal error, usable as ``scoring=`` in ``GridSearchCV``."""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np
from sklearn.pipeline import Pipeline

from ..validation import check_integer
from ._coding import _average_tvs, _discretize, _times_as_seconds
from ._marginals import marginal_error

__all__ = ["make_marginal_scorer", "make_model_scorer"]


class _MarginalScorer:
    """Callable ``(estimator, X, y=None) -> -marginal_error``; see the factory."""

    def __init__(self, d, n_samples, kind, random_state):
        self.d = d
        self.n_samples = n_samples
        self.kind = kind
        self.random_state = random_state

    def __repr__(self):
        return (
            f"make_marginal_scorer(d={self.d}, n_samples={self.n_samples}, "
            f"kind={self.kind!r})"
        )

    def __call__(self, estimator, X, y=None):
        if self.kind == "tv":
            return -self._tv(estimator, X)
        synth, X_last = _split_pipeline(estimator, X)
        U = synth._to_cube(X_last)
        dist = synth._synthetic_distribution() if self.n_samples is None else None
        if dist is not None:
            points, weights = dist
        else:
            n = self.n_samples if self.n_samples is not None else U.shape[0]
            sample = synth.sample(n, random_state=self.random_state)
            points, weights = synth._to_cube(sample), None
        return -marginal_error(U, points, self.d, synthetic_weight=weights)

    def _tv(self, estimator, X):
        if not hasattr(estimator, "sample"):
            raise TypeError(
                "kind='tv' compares X with estimator.sample(...), decoded to X's "
                f"schema; {type(estimator).__name__} has no sample method. Use "
                "make_synthesis_pipeline(encoder, synthesizer)."
            )
        import pandas as pd

        n = self.n_samples if self.n_samples is not None else len(X)
        Y = estimator.sample(n, random_state=self.random_state)
        # coded as the fidelity report codes them: a numeric column with many
        # values in 10 bins at the held-out column's quantiles (each distinct
        # float its own level made every table's TV about 1), dates as
        # numbers
        real = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
        rows = _matched_columns(real, Y)
        # the held-out levels are not folded into a candidate's "other": a
        # candidate that found no level would score best; a release that
        # keeps more levels is the more faithful
        real, rows = _times_as_seconds(real, rows)
        cx, cy, sizes, _, _ = _discretize(real, rows, {})
        d = min(self.d, real.shape[1])
        return _average_tvs(cx, cy, sizes, (d,))[f"TV{d}"]


def _matched_columns(real, Y):
    """The sampled rows ``Y`` with ``real``'s columns, matched by name where
    both have names (a held-out table with its columns in another order was
    scored column against the wrong column, silently), else by position;
    a column one has and the other lacks is refused by name."""
    import pandas as pd

    named = not isinstance(real.columns, pd.RangeIndex)
    if isinstance(Y, pd.DataFrame) and named and list(Y.columns) != list(real.columns):
        lost = [c for c in real.columns if c not in set(Y.columns)]
        extra = [c for c in Y.columns if c not in set(real.columns)]
        if lost or extra:
            raise ValueError(
                "the scored table's columns are not the fitted table's: "
                f"not sampled {lost}, not in the scored table {extra}"
            )
        return Y[list(real.columns)]
    rows = Y.copy() if isinstance(Y, pd.DataFrame) else pd.DataFrame(np.asarray(Y))
    if rows.shape[1] != real.shape[1]:
        raise ValueError(
            f"the scored table has {real.shape[1]} columns and the sampled rows "
            f"{rows.shape[1]}: score on a table of the fitted table's columns"
        )
    rows.columns = real.columns
    return rows


def _check_n_samples(n_samples):
    if n_samples is not None and (
        isinstance(n_samples, bool)
        or not isinstance(n_samples, numbers.Integral)
        or n_samples < 1
    ):
        raise ValueError(
            f"n_samples must be a positive integer or None, got {n_samples!r}"
        )


def _split_pipeline(estimator, X):
    """The synthesizer at the end of ``estimator`` and ``X`` as it reaches it."""
    if isinstance(estimator, Pipeline):
        if len(estimator.steps) > 1:
            X = estimator[:-1].transform(X)
        estimator = estimator.steps[-1][1]
    if not hasattr(estimator, "_to_cube"):
        raise TypeError(
            f"{type(estimator).__name__} is not a skdp_synth synthesizer; the "
            "marginal scorer needs one (or a pipeline ending in one)"
        )
    return estimator, X


def make_marginal_scorer(
    d: int = 2,
    *,
    n_samples: int | None = None,
    kind: str = "boolean",
    random_state: int | np.random.Generator | None = None,
) -> Callable[..., float]:
    """Scorer returning minus the average d-way marginal error (greater is better).

    Works on a bare synthesizer and on a pipeline whose last step is one: the
    held-out ``X`` is passed through the preceding steps' ``transform``.

    Parameters
    ----------
    d : int, default=2
        Marginal degree.
    n_samples : int, default=None
        ``None``: compare with the synthesizer's exact synthetic distribution
        when it has one (the weighted points it samples from -- the
        ``n_samples -> inf`` limit, free of bootstrap noise; for Boolean data
        the expected marginals after randomized rounding, :cite:`Boedihardjo2024` Lemma
        4.7), else with a sample of ``len(X)`` rows. An integer always draws a sample of
        that size through ``sample`` (which, for a sampler whose privacy cost
        grows with the number of draws, is charged).
    kind : {"boolean", "tv"}, default="boolean"
        ``"boolean"``: :cite:`Boedihardjo2024` eq. (1.2) on the synthesizer's cube
        scale. ``"tv"``: average total variation over the d-way contingency tables of
        ``X`` and ``estimator.sample(...)`` in ``X``'s own schema (needs a
        :func:`~skdp_synth.make_synthesis_pipeline`, which decodes), coded
        as :func:`~skdp_synth.report.fidelity_report` codes them: a numeric
        column with more than 20 values in 10 bins at the held-out column's
        quantiles, dates and times as numbers.
    random_state : None, int or RandomState, default=None
        For the synthetic sample when one is drawn; ``None`` defers to the
        estimator's ``random_state``.

    Returns
    -------
    scorer : callable ``(estimator, X, y=None) -> float``

    Notes
    -----
    The synthetic side is always released output: the distribution an
    estimator exposes for scoring is its release (never exact state such as
    :class:`~skdp_synth.PrivateSampler`'s density). The other side is
    held-out *real* data: model selection on private data with held-out
    folds is itself a data access. Every fit in the search spends its
    epsilon (``c`` candidates and ``f`` folds cost ``(c f + 1) epsilon`` by
    basic composition; pass an ``accountant``, which clones share, to have
    each charged), and picking the best score is not differentially private
    at all. Use public or already released data to tune, or make the
    selection private and account for it (``doc/privacy.md``, "Scores and
    model selection").
    """
    check_integer(d, "d", min_value=1)
    _check_n_samples(n_samples)
    if kind not in ("boolean", "tv"):
        raise ValueError(f"kind must be 'boolean' or 'tv', got {kind!r}")
    return _MarginalScorer(int(d), n_samples, kind, random_state)


class _ModelScorer:
    """Callable ``(estimator, X, y=None) -> model score``; see the factory."""

    def __init__(self, target, n_samples, random_state):
        self.target = target
        self.n_samples = n_samples
        self.random_state = random_state

    def __repr__(self):
        return f"make_model_scorer({self.target!r}, n_samples={self.n_samples})"

    def __call__(self, estimator, X, y=None):
        import pandas as pd

        from ._model import model_task

        if not hasattr(estimator, "sample"):
            raise TypeError(
                "make_model_scorer trains on estimator.sample(...), decoded to "
                f"X's schema; {type(estimator).__name__} has no sample method. "
                "Use make_synthesis_pipeline(encoder, synthesizer)."
            )
        if not isinstance(X, pd.DataFrame) or self.target not in X.columns:
            raise ValueError(
                f"make_model_scorer({self.target!r}) scores on held-out rows "
                "with that column: X must be a DataFrame that has it"
            )
        n = self.n_samples if self.n_samples is not None else len(X)
        rows = estimator.sample(n, random_state=self.random_state)
        if not isinstance(rows, pd.DataFrame):
            rows = pd.DataFrame(np.asarray(rows), columns=X.columns)
        real, rows = _times_as_seconds(X, rows[list(X.columns)])
        seed = self.random_state if isinstance(self.random_state, int) else 0
        _, _, fit_score = model_task(real, rows, self.target, seed)
        return fit_score(rows, real)


def make_model_scorer(
    target: object,
    *,
    n_samples: int | None = None,
    random_state: int | None = 0,
) -> Callable[..., float]:
    """Scorer: a model trained on the synthetic rows, scored on held-out real ones.

    What a user who synthesizes for a model cares about, as ``scoring=`` for
    ``GridSearchCV``: ``estimator.sample(n)`` (a
    :func:`~skdp_synth.make_synthesis_pipeline`, decoded to the table's
    schema) trains a gradient-boosting model for ``target``, scored on the
    held-out fold ``X`` -- ROC AUC for a categorical target (macro
    one-vs-rest for more than two levels), R² for a numeric one; greater is
    better. The same model as :func:`~skdp_synth.report.train_synthetic_test_real`
    (``"synthetic"``). Use it to choose, e.g., whether ``target=`` of
    :class:`~skdp_synth.ProjectedGaussianRelease` helps your model: it
    weights the target's tables, and where the release selects a tree of
    pairs that tree becomes a star around the target, which helps some
    models and hurts others (``doc/user_guide/gaussian_release.md``).

    Parameters
    ----------
    target : column label
        The column the model predicts (a column of ``X``).
    n_samples : int, default=None
        Synthetic rows to train on; ``None``: ``len(X)``.
    random_state : int or None, default=0
        For the synthetic sample and the model (``None``: a fresh sample,
        the model seeded with 0).

    Returns
    -------
    scorer : callable ``(estimator, X, y=None) -> float``

    Notes
    -----
    **Not private**, as every score on held-out real rows: see
    :func:`make_marginal_scorer`'s notes -- each fit of the search spends its
    budget, and picking the best score reads the real folds.
    """
    _check_n_samples(n_samples)
    return _ModelScorer(target, n_samples, random_state)
