"""make_marginal_scorer and SynthesizerMixin.score, inside GridSearchCV."""

import numpy as np
import pandas as pd
import pytest
from _dummy import BootstrapSynthesizer, NoisyMeanSynthesizer
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Binarizer

from skdp_synth import make_synthesis_pipeline
from skdp_synth.metrics import make_marginal_scorer, marginal_error
from skdp_synth.preprocessing import BooleanEncoder


def _boolean(n=200, p=6, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.random((n, 1))
    return (rng.random((n, p)) < 0.2 + 0.6 * z).astype(float)


def test_score_uses_exact_distribution():
    X = _boolean()
    est = NoisyMeanSynthesizer(domain="boolean", epsilon=5.0, random_state=0).fit(X)
    expected = -marginal_error(X, est.means_[None, :], 2)
    assert est.score(X) == pytest.approx(expected, rel=1e-12)
    assert make_marginal_scorer(d=3)(est, X) == pytest.approx(
        -marginal_error(X, est.means_[None, :], 3), rel=1e-12
    )


def test_scorer_with_n_samples_draws_a_sample():
    X = _boolean()
    est = BootstrapSynthesizer(domain="boolean", random_state=0).fit(X)
    scorer = make_marginal_scorer(d=2, n_samples=50, random_state=1)
    sample = est.sample(50, random_state=1)
    assert scorer(est, X) == pytest.approx(-marginal_error(X, sample, 2), rel=1e-12)
    # the exact distribution of a bootstrap of X is X itself: zero error
    assert make_marginal_scorer(d=2)(est, X) == pytest.approx(0.0, abs=1e-15)


def test_scorer_passes_held_out_data_through_the_pipeline():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 5))
    pipe = make_pipeline(
        Binarizer(threshold=0.0),
        NoisyMeanSynthesizer(domain="boolean", epsilon=2.0, random_state=0),
    ).fit(X)
    Xb = (X > 0).astype(float)
    direct = make_marginal_scorer(d=2)(pipe[-1], Xb)
    assert make_marginal_scorer(d=2)(pipe, X) == pytest.approx(direct, rel=1e-12)
    assert pipe.score(X) == pytest.approx(direct, rel=1e-12)


@pytest.mark.filterwarnings(
    "ignore::skdp_synth.exceptions.PrivacyBudgetWarning"
)  # epsilon > 10 on purpose
def test_gridsearch_with_default_score_and_scorer():
    X = _boolean(n=300)
    grid = {"epsilon": [0.05, 50.0]}
    est = NoisyMeanSynthesizer(domain="boolean", random_state=0)
    search = GridSearchCV(est, grid, cv=KFold(3, shuffle=True, random_state=0))
    search.fit(X)
    # more budget, less noise on the means: must win on every fold
    assert search.best_params_ == {"epsilon": 50.0}

    pipe = make_pipeline(
        Binarizer(threshold=0.5),
        NoisyMeanSynthesizer(domain="boolean", random_state=0),
    )
    search = GridSearchCV(
        pipe,
        {"noisymeansynthesizer__epsilon": [0.05, 50.0]},
        scoring=make_marginal_scorer(d=2),
        cv=3,
    )
    search.fit(X)
    assert search.best_params_ == {"noisymeansynthesizer__epsilon": 50.0}
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_tv_scorer_decodes_through_synthesis_pipeline():
    df = pd.DataFrame(
        {
            "colour": ["red", "blue", "red", "green"] * 20,
            "size": ["S", "M", "L", "M"] * 20,
        }
    )
    enc = BooleanEncoder(
        categories={"colour": ["red", "green", "blue"], "size": ["S", "M", "L"]},
        random_state=0,
    )
    pipe = make_synthesis_pipeline(
        enc, BootstrapSynthesizer(domain="boolean", random_state=0)
    ).fit(df)
    score = make_marginal_scorer(d=2, kind="tv", random_state=3)(pipe, df)
    Y = pipe.sample(len(df), random_state=3)
    assert score == pytest.approx(-marginal_error(df, Y, 2, kind="tv"))
    assert -0.3 < score <= 0


def test_scorer_errors():
    with pytest.raises(ValueError, match="positive integer"):
        make_marginal_scorer(d=0)
    with pytest.raises(ValueError, match="n_samples"):
        make_marginal_scorer(n_samples=0)
    with pytest.raises(ValueError, match="kind"):
        make_marginal_scorer(kind="l2")
    from sklearn.linear_model import LinearRegression

    with pytest.raises(TypeError, match="not a skdp_synth synthesizer"):
        make_marginal_scorer()(LinearRegression(), np.zeros((3, 2)))
    with pytest.raises(TypeError, match="no sample method"):
        make_marginal_scorer(kind="tv")(LinearRegression(), np.zeros((3, 2)))
    assert "d=2" in repr(make_marginal_scorer())


def _labelled(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.choice(["u", "v", "w"], n)
    b = rng.choice(["p", "q"], n)
    y = np.where((a == "u") ^ (b == "p") ^ (rng.random(n) < 0.15), "yes", "no")
    return pd.DataFrame({"a": a, "b": b, "y": y})


def _labelled_pipe(target=None):
    from skdp_synth import ProjectedGaussianRelease

    cats = {"a": ["u", "v", "w"], "b": ["p", "q"], "y": ["no", "yes"]}
    return make_synthesis_pipeline(
        BooleanEncoder(categories=cats, random_state=0),
        ProjectedGaussianRelease(
            epsilon=2.0, delta=1e-6, random_state=0, target=target
        ),
    )


def test_model_scorer_is_the_reports_synthetic_score():
    """make_model_scorer(target) trains on estimator.sample(len(X)) and
    scores on X: exactly train_synthetic_test_real's "synthetic" for the
    same rows (one model definition, metrics._model)."""
    from skdp_synth.metrics import make_model_scorer
    from skdp_synth.report import train_synthetic_test_real

    df = _labelled()
    train, held = df.iloc[:900], df.iloc[900:].reset_index(drop=True)
    pipe = _labelled_pipe().fit(train)
    got = make_model_scorer("y", random_state=3)(pipe, held)
    rows = pipe.sample(len(held), random_state=3)
    want = train_synthetic_test_real(rows, held, "y", random_state=3)
    assert got == want["synthetic"]
    assert 0.5 < got <= 1.0
    with pytest.raises(ValueError, match="must be a DataFrame that has it"):
        make_model_scorer("z")(pipe, held)
    with pytest.raises(ValueError, match="n_samples"):
        make_model_scorer("y", n_samples=0)


def test_grid_search_chooses_target_by_the_model_scorer():
    """GridSearchCV tunes target= by the model a user will train (target=
    was seen to help one model and hurt another, so whether to set it is a
    choice to measure)."""
    from skdp_synth.metrics import make_model_scorer

    df = _labelled()
    search = GridSearchCV(
        _labelled_pipe(),
        {"projectedgaussianrelease__target": [None, "y"]},
        scoring=make_model_scorer("y"),
        cv=KFold(2),
        error_score="raise",
    ).fit(df)
    assert search.best_params_["projectedgaussianrelease__target"] in (None, "y")
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_the_model_score_takes_a_level_with_one_row():
    """Above 10,000 rows the classifier's early stopping split the training
    rows by class and failed on a level with one row, with an error naming
    such levels of the real rows (a species of a 28k-row survey)."""
    from skdp_synth.report import train_synthetic_test_real

    rng = np.random.default_rng(0)
    n = 12_000
    x = rng.normal(size=n)
    y = np.where(x > 0, "a", "b").astype(object)
    y[:3] = ["c", "d", "e"]  # three levels of one row each
    df = pd.DataFrame({"x": x, "y": y})
    out = train_synthetic_test_real(df, df.iloc[:3000], "y", real_train=df)
    assert out["metric"] == "auc-ovr" and 0.5 < out["synthetic"] <= 1.0


def test_the_model_score_takes_a_text_feature_of_many_levels():
    """A date read from CSV is text with thousands of levels; the model's
    categorical features take at most 255 and scikit-learn refused. The
    most frequent levels are kept, the rest count as missing."""
    from skdp_synth.metrics._model import MAX_FEATURE_LEVELS
    from skdp_synth.report import train_synthetic_test_real

    rng = np.random.default_rng(0)
    n = 3000
    x = rng.normal(size=n)
    day = pd.Series(pd.date_range("2000-01-01", periods=n)).astype(str)
    df = pd.DataFrame({"day": day, "x": x, "y": np.where(x > 0, "a", "b")})
    assert df["day"].nunique() > MAX_FEATURE_LEVELS + 1
    out = train_synthetic_test_real(df, df.iloc[:1000], "y", real_train=df)
    assert 0.9 < out["synthetic"] <= 1.0
