"""Train on synthetic rows, score on real ones: the model behind
:func:`skdp_synth.report.train_synthetic_test_real` and
:func:`skdp_synth.metrics.make_model_scorer` (one definition, so a search's
score and the report's agree). **Not private**: it reads real rows."""

from __future__ import annotations

import numpy as np

__all__ = ["model_task"]

#: A categorical feature's levels in the model: HistGradientBoosting's limit
#: (255 bins, one kept for missing values).
MAX_FEATURE_LEVELS = 254
#: The classifier's L2 penalty on its leaf values (scikit-learn's default
#: is 0): keeps the boosting finite on classes of a row or two.
L2_REGULARIZATION = 1.0


def model_task(real, synthetic, target, random_state=0):
    """``(metric, positive, fit_score)`` for predicting ``target``.

    ``real`` and ``synthetic`` share columns, times already as numbers
    (``metrics._coding._times_as_seconds``). A gradient-boosting model
    (:class:`~sklearn.ensemble.HistGradientBoostingClassifier` for a
    non-numeric ``target``, scored by the ROC AUC of its last level in sorted
    order, ``positive``, or the macro one-vs-rest AUC over the levels present
    for more than two; :class:`~sklearn.ensemble.HistGradientBoostingRegressor`
    and R² for a numeric one (a 0/1 flag too: cast it to ``bool`` for an
    AUC); the classifier without early stopping, 100 iterations,
    ``l2_regularization=1``).
    ``fit_score(train, test)`` fits it on ``train`` and scores it on
    ``test`` (rows whose target is missing are
    dropped); categorical features are coded over the levels of ``real``
    and ``synthetic`` together.
    """
    import pandas as pd
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )
    from sklearn.metrics import r2_score, roc_auc_score
    from threadpoolctl import threadpool_limits

    # by the dtype only: a 0/1 flag stored as integers is a number (cast it
    # to bool for an AUC). Deciding by the values counted would score one
    # fold of a search by AUC and another by R², and compare an int 1 with
    # a float 1.0 as text
    numeric = pd.api.types.is_numeric_dtype(
        real[target]
    ) and not pd.api.types.is_bool_dtype(real[target])
    features = [c for c in real.columns if c != target]
    cats = [c for c in features if not pd.api.types.is_numeric_dtype(real[c])]
    levels = {}
    for c in cats:
        cells = pd.concat([real[c], synthetic[c]], ignore_index=True).dropna()
        counts = cells.astype(str).value_counts()
        # the model takes at most 255 levels of a feature: the most frequent
        # (a date read from CSV as text, 8,992 days, failed in
        # scikit-learn); the rest count as missing
        levels[c] = sorted(counts.index[:MAX_FEATURE_LEVELS])

    def xy(df):
        X = df[features].copy()
        for c in features:
            if c in cats:
                X[c] = pd.Categorical(
                    X[c]
                    .astype(object)
                    .where(X[c].notna(), None)
                    .map(lambda v: None if v is None else str(v)),
                    categories=levels[c],
                )
            else:
                X[c] = pd.to_numeric(X[c], errors="coerce").astype(float)
        y = df[target]
        keep = y.notna().to_numpy()
        return X[keep], y[keep]

    def fit_score(train, test):
        # one OpenMP thread: on a busy machine the boosting's threads spun
        # -- 113 s per fold of a search against 0.3 s, measured; the scores
        # do not depend on the thread count
        with threadpool_limits(limits=1, user_api="openmp"):
            return _fit_score(train, test)

    def _fit_score(train, test):
        Xtr, ytr = xy(train)
        Xte, yte = xy(test)
        # a numeric feature with no value in the training rows teaches the
        # model nothing, and scikit-learn's binning fails on it ("window
        # shape cannot be larger than input array shape"): rows a release
        # returned with a column entirely missing (attrition's `MonthlyRate`
        # at ε = 0.1, `python -m benchmarks.bench_suite --half tune --tables
        # attrition --eps 0.1 --methods mst`) are scored without it
        empty = [c for c in features if c not in cats and Xtr[c].isna().all()]
        Xtr, Xte = Xtr.drop(columns=empty), Xte.drop(columns=empty)
        if numeric:
            model = HistGradientBoostingRegressor(
                categorical_features="from_dtype", random_state=random_state
            )
            model.fit(Xtr, ytr.astype(float))
            return float(r2_score(yte.astype(float), model.predict(Xte)))
        # no early stopping: above 10,000 rows its stratified validation
        # split failed on a level with one row, and the error named them
        # (a species of a 28k-row survey).
        # Without it, classes of one or two rows drove the unregularised
        # boosting to raw scores of 60,000: a police table's real-trained
        # reference scored below the majority rate (accuracy .55 against
        # .73, AUC .52; 1.0 with l2_regularization=1), so the leaves are
        # shrunk by L2_REGULARIZATION
        model = HistGradientBoostingClassifier(
            categorical_features="from_dtype",
            early_stopping=False,
            l2_regularization=L2_REGULARIZATION,
            random_state=random_state,
        )
        if len(classes) <= 2:
            model.fit(Xtr, (ytr.astype(str) == positive).astype(int))
            yb = (yte.astype(str) == positive).astype(int)
            return float(roc_auc_score(yb, model.predict_proba(Xte)[:, 1]))
        model.fit(Xtr, ytr.astype(str))
        proba = model.predict_proba(Xte)
        present = sorted(set(yte.astype(str)))
        P = np.zeros((len(Xte), len(present)))
        for k, c in enumerate(model.classes_):
            if c in present:
                P[:, present.index(c)] = proba[:, k]
        total = P.sum(axis=1, keepdims=True)
        P = np.where(total > 0, P / np.where(total > 0, total, 1), 1 / len(present))
        if len(present) == 2:
            return float(roc_auc_score(yte.astype(str) == present[1], P[:, 1]))
        return float(
            roc_auc_score(yte.astype(str), P, multi_class="ovr", labels=present)
        )

    classes = sorted(real[target].dropna().astype(str).unique())
    positive = classes[-1]
    metric = "r2" if numeric else ("auc" if len(classes) <= 2 else "auc-ovr")
    return metric, positive, fit_score
