"""SyntheticResampler inside imbalanced-learn's Pipeline and GridSearchCV."""

import numpy as np
import pandas as pd
import pytest
from _dummy import BootstrapSynthesizer, NoisyMeanSynthesizer
from imblearn.pipeline import Pipeline as ImbPipeline
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV

from skdp_synth import SyntheticResampler
from skdp_synth.exceptions import PrivacyLeakWarning


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = (rng.random((n, 6)) < np.where(y[:, None] == 1, 0.8, 0.2)).astype(float)
    return X, y


def test_fit_resample_synthesizes_y_jointly():
    X, y = _data()
    res = SyntheticResampler(
        BootstrapSynthesizer(domain="boolean", random_state=0),
        classes=[0, 1],
        random_state=0,
    )
    Xs, ys = res.fit_resample(X, y)
    assert Xs.shape == X.shape and ys.shape == y.shape
    assert set(np.unique(ys)) <= {0, 1}
    # a bootstrap of the joint table: every synthetic (x, y) row is a real one
    real = {tuple(r) + (c,) for r, c in zip(X, y)}
    assert all(tuple(r) + (c,) in real for r, c in zip(Xs, ys))
    assert ys.dtype == y.dtype


def test_fit_resample_pandas_and_multiclass():
    X, _ = _data()
    y = pd.Series(np.random.default_rng(1).choice(["a", "b", "c"], len(X)), name="lbl")
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    res = SyntheticResampler(
        BootstrapSynthesizer(domain="boolean", random_state=0),
        classes=["a", "b", "c"],
        n_samples=50,
        random_state=0,
    )
    Xs, ys = res.fit_resample(df, y)
    assert isinstance(Xs, pd.DataFrame) and list(Xs.columns) == list(df.columns)
    assert isinstance(ys, pd.Series) and ys.name == "lbl" and len(ys) == 50
    assert set(ys) <= {"a", "b", "c"}


def test_box_bounds_are_extended_for_the_label_bits():
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-5, 5, size=(100, 2)), rng.integers(0, 3, 100)
    res = SyntheticResampler(
        BootstrapSynthesizer(domain="box", bounds=(-5, 5), random_state=0),
        classes=[0, 1, 2],
    )
    Xs, ys = res.fit_resample(X, y)
    lo, hi = res.synthesizer_.bounds_
    np.testing.assert_array_equal(lo, [-5, -5, 0, 0, 0])
    np.testing.assert_array_equal(hi, [5, 5, 1, 1, 1])


def test_inferred_classes_warn():
    X, y = _data(50)
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        SyntheticResampler(BootstrapSynthesizer(domain="boolean")).fit_resample(X, y)


def test_resampler_in_imblearn_pipeline_grid_search():
    X, y = _data(400)
    pipe = ImbPipeline(
        [
            (
                "synth",
                SyntheticResampler(
                    NoisyMeanSynthesizer(domain="boolean", random_state=0),
                    classes=[0, 1],
                    random_state=0,
                ),
            ),
            ("clf", LogisticRegression()),
        ]
    )
    search = GridSearchCV(pipe, {"synth__synthesizer__epsilon": [0.5, 5.0]}, cv=3)
    search.fit(X, y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    # the model is evaluated on real held-out rows, and the resampler only ran
    # during fit: predict works on real data of the original width
    assert search.predict(X).shape == y.shape


def test_bad_inputs():
    X, y = _data(20)
    res = SyntheticResampler(BootstrapSynthesizer(domain="boolean"), classes=[0, 1])
    with pytest.raises(ValueError, match="rows"):
        res.fit_resample(X[:5], y)
    with pytest.raises(ValueError, match="1-dimensional"):
        res.fit_resample(X, y[:, None])
    with pytest.raises(ValueError, match="distinct"):
        SyntheticResampler(BootstrapSynthesizer(), classes=[0, 0]).fit_resample(X, y)
    # by equality, as np.unique decided: 1, 1.0 and True are one label
    for same in ([0, 1, 1.0], [0, 1, True]):
        with pytest.raises(ValueError, match="distinct"):
            SyntheticResampler(BootstrapSynthesizer(), classes=same).fit_resample(X, y)


@pytest.mark.parametrize("bad_label", [False, True])
def test_the_budget_is_checked_before_a_label_is_read(bad_label):
    """An unaffordable fit is refused before the labels are encoded: an
    undeclared label must not turn the refusal into a ValueError (which
    answer came back would then depend on the data)."""
    from skdp_synth import BudgetAccountant, ProjectedGaussianRelease
    from skdp_synth.exceptions import BudgetError

    rng = np.random.default_rng(0)
    X = (rng.random((300, 4)) < 0.4).astype(int)
    y = rng.choice([0, 1], 300)
    if bad_label:
        y[0] = 7
    acc = BudgetAccountant(epsilon=1e-3, delta=1e-9, neighbouring="add-remove-one")
    resampler = SyntheticResampler(
        ProjectedGaussianRelease(accountant=acc, random_state=0),
        classes=[0, 1],
        random_state=0,
    )
    with pytest.raises(BudgetError):
        resampler.fit_resample(X, y)
    assert acc.spent == []


@pytest.mark.parametrize("as_frame", [True, False])
def test_a_synthesis_pipeline_on_a_mixed_table(as_frame):
    """With a synthesis pipeline the label is one more categorical column,
    its classes declared to the encoder: appended as 0/1 columns it was
    learned as a numeric domain (a warning about an internal column) and
    the float decode failed on a categorical column of ``X``."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    rng = np.random.default_rng(0)
    n = 3000
    sector = rng.choice(["public", "private"], n)
    X = pd.DataFrame({"sector": sector, "age": rng.integers(18, 80, n)})
    y = pd.Series(np.where(sector == "public", "yes", "no"), name="y")
    if not as_frame:
        X = X.assign(sector=(X["sector"] == "public").astype(float)).to_numpy()
    encoder = BooleanEncoder(
        categories={"sector": ["public", "private"]} if as_frame else None,
        random_state=0,
    )
    synth = make_synthesis_pipeline(
        encoder, ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0)
    )
    res = SyntheticResampler(synth, classes=["yes", "no"], random_state=0)
    Xs, ys = res.fit_resample(X, y)  # warnings are errors: none is raised
    assert isinstance(ys, pd.Series) and ys.name == "y"
    assert set(ys) <= {"yes", "no"} and len(ys) == len(Xs)
    if as_frame:
        assert list(Xs.columns) == ["sector", "age"]
        assert Xs["age"].dtype == X["age"].dtype
        # the joint table kept the label's dependence on sector (exact in X)
        agree = np.mean((Xs["sector"] == "public") == (ys == "yes"))
    else:
        assert Xs.shape[1] == 2
        agree = np.mean((Xs[:, 0] == 1.0) == (ys == "yes").to_numpy())
    assert agree > 0.9
    assert res.synthesizer_.epsilon_ == 1.0


def test_the_release_target_can_name_the_label():
    """``target="y"`` (y's own name) raised "unknown attribute 'y'": the label
    column was renamed ``__target__``."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    rng = np.random.default_rng(1)
    n = 2000
    X = pd.DataFrame({"sector": rng.choice(["public", "private"], n)})
    y = pd.Series(np.where(X["sector"] == "public", "yes", "no"), name="y")
    synth = make_synthesis_pipeline(
        BooleanEncoder(categories={"sector": ["public", "private"]}, random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, target="y", random_state=0),
    )
    res = SyntheticResampler(synth, classes=["yes", "no"], random_state=0)
    Xs, ys = res.fit_resample(X, y)
    assert ys.name == "y" and list(Xs.columns) == ["sector"]
    assert res.synthesizer_[-1].target == "y"


def _labelled_with_missing(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    sector = rng.choice(["public", "private"], n)
    X = pd.DataFrame({"sector": sector, "age": rng.integers(18, 80, n)})
    y = pd.Series(np.where(sector == "public", "yes", "no"), name="y", dtype=object)
    y[rng.random(n) < 0.2] = np.nan  # a fifth of the labels missing
    return X, y


@pytest.mark.parametrize("missing", [None, np.nan])
def test_missing_labels_are_declared_by_none_among_the_classes(missing):
    """A label with missing values: the refusal named the encoder's
    ``categories=``/``missing=`` of a column the user never declared, and
    following it with ``classes=[..., None]`` failed in ``np.unique`` (None
    beside strings). ``None`` (or NaN)
    among the classes declares a missing label; labels come back as Python
    strings, not ``np.str_``."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    X, y = _labelled_with_missing()

    def resampler(classes):
        synth = make_synthesis_pipeline(
            BooleanEncoder(
                categories={"sector": ["public", "private"]}, random_state=0
            ),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
        )
        return SyntheticResampler(synth, classes=classes, random_state=0)

    with pytest.raises(ValueError, match="put None among classes"):
        resampler(["yes", "no"]).fit_resample(X, y)
    res = resampler(["yes", "no", missing])
    Xs, ys = res.fit_resample(X, y)
    assert set(ys.dropna()) <= {"yes", "no"}
    assert all(type(v) is str for v in ys.dropna())
    assert 0.1 < ys.isna().mean() < 0.3  # the missing labels are synthesized
    assert list(res.classes_) == ["yes", "no", None]


def test_missing_labels_with_a_bit_synthesizer():
    """The same declaration where the labels are one-hot bits."""
    rng = np.random.default_rng(1)
    y = np.where(rng.random(300) < 0.5, "a", "b").astype(object)
    X = (rng.random((300, 4)) < np.where(y[:, None] == "a", 0.8, 0.2)).astype(float)
    y[:30] = None
    with pytest.raises(ValueError, match="put None among classes"):
        SyntheticResampler(
            BootstrapSynthesizer(domain="boolean", random_state=0), classes=["a", "b"]
        ).fit_resample(X, y)
    Xs, ys = SyntheticResampler(
        BootstrapSynthesizer(domain="boolean", random_state=0),
        classes=["a", "b", None],
        random_state=0,
    ).fit_resample(X, y)
    assert set(v for v in ys if v is not None) <= {"a", "b"}


def test_a_pipelines_spent_budget_is_refused_before_the_labels_are_read():
    """With the accountant in a pipeline's last step, the resampler's check
    read the pipeline's own parameters (no accountant): a spent budget gave
    ``BudgetError`` or a refusal of an undeclared label, by what ``y`` held.
    An invalid ε likewise came after the labels. Both are now refused the
    same way whatever ``y`` holds."""
    from skdp_synth import (
        BudgetAccountant,
        ProjectedGaussianRelease,
        make_synthesis_pipeline,
    )
    from skdp_synth._sklearn_compat import InvalidParameterError
    from skdp_synth.exceptions import BudgetError

    X = (np.random.default_rng(1).random((300, 4)) < 0.4).astype(float)
    clean = np.array(["yes"] * 300, dtype=object)
    odd = np.array(["yes"] * 299 + ["undeclared"], dtype=object)
    for y in (clean, odd):
        spent = BudgetAccountant(epsilon=0.1, delta=1e-9, neighbouring="add-remove-one")
        synth = make_synthesis_pipeline(
            ProjectedGaussianRelease(epsilon=1, delta=1e-6, accountant=spent)
        )
        with pytest.raises(BudgetError):
            SyntheticResampler(synth, classes=["yes"]).fit_resample(X, y)
        bad = ProjectedGaussianRelease(epsilon=-1, delta=1e-6)
        with pytest.raises(InvalidParameterError):
            SyntheticResampler(bad, classes=["yes"]).fit_resample(X, y)


@pytest.mark.parametrize("through", ["pipeline", "bits"])
def test_the_labels_keep_a_categorical_or_string_dtype(through):
    """A categorical or ``string`` y came back as ``object`` labels; the
    categories are the declared classes, not y's own."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame({"x": rng.integers(0, 2, n), "z": rng.integers(0, 2, n)})
    if through == "pipeline":
        synth = make_synthesis_pipeline(
            BooleanEncoder(categories={"x": [0, 1], "z": [0, 1]}),
            ProjectedGaussianRelease(epsilon=1.0, random_state=0),
        )
    else:
        synth = BootstrapSynthesizer(random_state=0)
    labels = rng.choice(["no", "yes"], n)
    for y in [
        pd.Series(pd.Categorical(labels, categories=["no", "yes"]), name="y"),
        pd.Series(labels, name="y", dtype="string"),
    ]:
        res = SyntheticResampler(synth, classes=["no", "yes", "maybe"], random_state=0)
        _, ys = res.fit_resample(X, y)
        if isinstance(y.dtype, pd.CategoricalDtype):
            assert ys.dtype == pd.CategoricalDtype(["no", "yes", "maybe"])
        else:
            assert ys.dtype == y.dtype
        assert ys.name == "y" and set(ys.dropna()) <= {"no", "yes", "maybe"}


def test_polars_x_and_y_are_read_as_their_pandas_twins():
    """``fit_resample`` called ``X.reset_index`` on a polars frame."""
    pl = pytest.importorskip("polars")
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    rng = np.random.default_rng(0)
    X = pl.DataFrame({"x": rng.integers(0, 2, 400), "g": rng.choice(["a", "b"], 400)})
    y = pl.Series("label", rng.choice(["no", "yes"], 400))
    synth = make_synthesis_pipeline(
        BooleanEncoder(categories={"x": [0, 1], "g": ["a", "b"]}),
        ProjectedGaussianRelease(epsilon=1.0, random_state=0),
    )
    res = SyntheticResampler(synth, classes=["no", "yes"], random_state=0)
    Xs, ys = res.fit_resample(X, y)
    assert list(Xs.columns) == ["x", "g"] and ys.name == "label"
    assert set(ys) <= {"no", "yes"} and set(Xs["g"]) <= {"a", "b"}
