"""Fault suite: bad inputs and interruptions leave nothing changed
or behind, errors say what is wrong without private values, and the public
state of a fitted private estimator is covered by its guarantee or warns.
"""

import copy
import inspect
import os
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from skdp_synth import (
    CovarianceLossMicroaggregator,
    DampedPrivateSynthesizer,
    PrivateSampler,
    ProjectedGaussianRelease,
    Release,
    make_synthesis_pipeline,
)
from skdp_synth._sklearn_compat import InvalidParameterError
from skdp_synth.cli import _main as cli
from skdp_synth.exceptions import (
    PrivacyBudgetWarning,
    PrivacyLeakWarning,
    SmallTableWarning,
)
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.privacy import LARGE_EPSILON, PrivacyGuarantee, not_private

# Fits below use epsilon >> 10 where the guarantee is not the point.
pytestmark = pytest.mark.filterwarnings(
    "ignore::skdp_synth.exceptions.PrivacyBudgetWarning"
)

SECRET = 0.123456789  # a "private value" that must never appear in a message


def _boolean(n=300, p=5, seed=0):
    return (np.random.default_rng(seed).random((n, p)) < 0.4).astype(np.int64)


def _snapshot(obj):
    return {k: copy.deepcopy(v) for k, v in vars(obj).items()}


def _same(a, b):
    """Deep equality for fitted state (arrays, containers, plain objects)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and np.array_equal(
            a, b, equal_nan=a.dtype.kind == "f"
        )
    if isinstance(a, (pd.DataFrame, pd.Series, pd.Index)):
        return a.equals(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "__dict__") and type(a) is type(b):
        return _same(vars(a), vars(b))
    try:
        return bool(a == b) or (a != a and b != b)
    except (TypeError, ValueError):
        return False


def _assert_unchanged(before, obj):
    after = vars(obj)
    assert set(after) == set(before)
    for k, v in before.items():
        assert _same(v, after[k]), k


# ------------------------------------------------------------- estimators
ESTIMATORS = [
    CovarianceLossMicroaggregator(k=10, domain="boolean", random_state=0),
    DampedPrivateSynthesizer(random_state=0),
    PrivateSampler(d=1, k=20, random_state=0),
    ProjectedGaussianRelease(n_candidates=64, random_state=0),
]
IDS = [type(e).__name__ for e in ESTIMATORS]

BAD_FITS = [
    ("nan", lambda X: np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X)),
    ("inf", lambda X: np.where(np.arange(X.size).reshape(X.shape) == 7, np.inf, X)),
    ("private value", lambda X: np.where(np.eye(*X.shape, k=1) == 1, SECRET, X)),
    ("one row", lambda X: X[:1]),
    ("1-D", lambda X: X[:, 0]),
    ("strings", lambda X: pd.DataFrame(X).assign(c="x")),
]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("case, corrupt", BAD_FITS, ids=[c for c, _ in BAD_FITS])
def test_bad_refit_raises_clearly_and_changes_nothing(estimator, case, corrupt):
    X = _boolean()
    est = clone(estimator).fit(X)
    before = _snapshot(est)
    with pytest.raises(ValueError) as info:
        est.fit(corrupt(X.astype(np.float64)))
    message = str(info.value)
    assert str(SECRET)[:6] not in message and "row" not in message
    _assert_unchanged(before, est)
    est.sample(3)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
def test_interrupted_fit_changes_nothing(estimator, monkeypatch):
    X = _boolean()
    est = clone(estimator).fit(X)
    before = _snapshot(est)

    def interrupt(self, U, plan, source):
        self.half_done_ = True
        raise KeyboardInterrupt

    monkeypatch.setattr(type(est), "_fit", interrupt)
    with pytest.raises(KeyboardInterrupt):
        est.fit(_boolean(seed=1))
    _assert_unchanged(before, est)


BOOL_PARAMS = [
    (DampedPrivateSynthesizer, "epsilon"),
    (DampedPrivateSynthesizer, "alpha"),
    (PrivateSampler, "k"),
    (PrivateSampler, "epsilon"),
    (ProjectedGaussianRelease, "epsilon"),
    (ProjectedGaussianRelease, "delta"),
    (BooleanEncoder, "n_bins"),
]


@pytest.mark.parametrize("cls, name", BOOL_PARAMS)
def test_bool_is_not_a_number(cls, name):
    # (CovarianceLossMicroaggregator's k has its own check, which already
    # rejects True with an explanation of what k means.)
    # epsilon=True was once accepted as 1
    est = cls(**{name: True})
    X = pd.DataFrame(_boolean()) if cls is BooleanEncoder else _boolean()
    with pytest.raises(InvalidParameterError, match=f"'{name}'"):
        est.fit(X)
    assert not hasattr(est, "n_features_in_")


@pytest.mark.parametrize(
    "estimator",
    [
        CovarianceLossMicroaggregator(k=10, domain="box", bounds=(-1e308, 1e308)),
        DampedPrivateSynthesizer(domain="box", bounds=(-1e308, 1e308)),
        CovarianceLossMicroaggregator(k=10, domain="box"),
    ],
    ids=["micro-given", "damped-given", "micro-inferred"],
)
def test_bounds_whose_width_overflows_are_rejected(estimator):
    # hi - lo once overflowed and every centroid was NaN
    X = np.random.default_rng(0).uniform(-1e307, 1e307, (50, 3))
    X[0, 0], X[1, 0] = -1.7e308, 1.7e308
    with pytest.raises(ValueError, match="width hi - lo overflows"):
        estimator.fit(X)


@pytest.mark.parametrize(
    "estimator",
    [
        CovarianceLossMicroaggregator(
            k=50, alpha=1e-9, n_components=1, domain="boolean"
        ),
        DampedPrivateSynthesizer(alpha=1e-9, n_components=1),
        DampedPrivateSynthesizer(alpha=1e-300, n_components=3),
    ],
    ids=["micro", "damped", "damped-t3"],
)
def test_huge_coverings_refused_before_allocation(estimator):
    # alpha=1e-9 once allocated 25.8 GiB before the guard
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="covering would have more than"):
        estimator.fit(_boolean(500))
    assert time.perf_counter() - t0 < 2.0


# ------------------------------------------------------------ budgets
def test_large_epsilon_warns():
    # PrivacyBudgetWarning was once defined but never raised
    X = _boolean(2000, 6)
    with pytest.warns(PrivacyBudgetWarning, match="exceeds 10"):
        PrivateSampler(d=1, k=100, random_state=0).fit(X)
    with pytest.warns(PrivacyBudgetWarning):
        DampedPrivateSynthesizer(epsilon=11.0, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # (2000 rows: below the damped method's size, which it says)
        warnings.simplefilter("ignore", SmallTableWarning)
        DampedPrivateSynthesizer(epsilon=LARGE_EPSILON, random_state=0).fit(X)


def test_huge_k_refused_before_anything_is_drawn():
    with pytest.raises(MemoryError, match="lower k"):
        PrivateSampler(d=1, k=10**9).fit(_boolean())


# --------------------------------------------------- encoder and pipeline
def _frame(n=200):
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "colour": rng.choice(["red", "blue", "green"], n),
            "age": rng.integers(0, 90, n),
        }
    )


def _encoder():
    return BooleanEncoder(
        categories={"colour": ["red", "blue", "green"]},
        bin_edges={"age": [0, 30, 60, 90]},
        random_state=0,
    )


BAD_FRAMES = [
    (
        "unknown category",
        lambda df: df.assign(colour=["Alice-SECRET"] + list(df.colour[1:])),
        "not among its declared categories",
    ),
    (
        "outside edges",
        lambda df: df.assign(age=[123456] + list(df.age[1:])),
        "outside the bin edges",
    ),
    (
        "infinite",
        lambda df: df.assign(age=[np.inf] + list(df.age[1:].astype(float))),
        "outside the bin edges",
    ),
    ("undeclared column", lambda df: df.drop(columns="age"), "not present in X"),
]


@pytest.mark.parametrize(
    "case, corrupt, match", BAD_FRAMES, ids=[c[0] for c in BAD_FRAMES]
)
def test_encoder_bad_refit_changes_nothing(case, corrupt, match):
    df = _frame()
    enc = _encoder().fit(df)
    before = _snapshot(enc)
    with pytest.raises(ValueError, match=match) as info:
        enc.fit(corrupt(df))
    assert "SECRET" not in str(info.value) and "123456" not in str(info.value)
    assert "row" not in str(info.value)
    _assert_unchanged(before, enc)


@pytest.mark.parametrize(
    "case, corrupt, match", BAD_FRAMES, ids=[c[0] for c in BAD_FRAMES]
)
def test_pipeline_bad_refit_changes_nothing(case, corrupt, match):
    df = _frame()
    pipe = make_synthesis_pipeline(
        _encoder(),
        CovarianceLossMicroaggregator(k=10, domain="boolean", random_state=0),
    ).fit(df)
    states = [_snapshot(step) for _, step in pipe.steps]
    with pytest.raises(ValueError, match=match):
        pipe.fit(corrupt(df))
    for before, (_, step) in zip(states, pipe.steps):
        _assert_unchanged(before, step)


def test_failed_refit_leaves_the_pipeline_working():
    # a refused refit once left the encoder with the new columns, the synthesizer
    # kept the old fit (refused budget), and pipe.sample raised; a refit with
    # inf in an int column turned its decoded dtype into float.
    from skdp_synth import BudgetAccountant
    from skdp_synth.exceptions import BudgetError

    df = _frame()
    acc = BudgetAccountant(epsilon=1.0)
    pipe = make_synthesis_pipeline(
        # epsilon=None: domains learned without privacy, as when this test was
        # written (the default "auto" learns them privately and clips an inf)
        BooleanEncoder(random_state=0, epsilon=None),
        DampedPrivateSynthesizer(epsilon=1.0, accountant=acc, random_state=0),
    )
    with pytest.warns(PrivacyLeakWarning):
        pipe.fit(df)
    dtypes = pipe.sample(5).dtypes.tolist()
    wider = df.assign(extra=np.arange(len(df)) % 2)
    with pytest.raises(BudgetError), warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        pipe.fit(wider)
    assert list(pipe.sample(5).columns) == ["colour", "age"]
    bad = df.assign(age=df.age.astype(float))
    bad.loc[0, "age"] = np.inf
    # a budget that affords the refit: with the spent one the pipeline now
    # refuses before any value is read (fail closed), and the
    # value error below is what this test is about
    step = pipe.steps[-1][0]
    pipe.set_params(**{f"{step}__accountant": BudgetAccountant(epsilon=1.0)})
    with pytest.raises(ValueError, match="infinite"), warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        pipe.fit(bad)
    assert pipe.sample(5).dtypes.tolist() == dtypes


# ------------------------------------------------------------------ CLI
@pytest.fixture
def csv_in(tmp_path):
    path = tmp_path / "in.csv"
    _frame(60).to_csv(path, index=False)
    return path


def _synthesize(src, out, *extra):
    return cli.main(
        [
            "synthesize",
            str(src),
            "--method",
            "microaggregation",
            "--param",
            "k=5",
            "--seed",
            "0",
            "-o",
            str(out),
            *extra,
        ]
    )


@pytest.mark.parametrize(
    "content, match",
    [
        # no line number or field count: an unclosed quote's line number is
        # the file's length, which gives away the number of rows
        ("a,b\n1,2,3,4\n5\n", "a row does not have the header's 2 fields"),
        ("a,b\n1,2\n5\n", "a row does not have the header's 2 fields"),
        ("", "empty"),
    ],
    ids=["long row", "short row", "empty"],
)
def test_cli_rejects_malformed_csv(tmp_path, capsys, content, match):
    src, out = tmp_path / "bad.csv", tmp_path / "out.csv"
    src.write_text(content)
    assert _synthesize(src, out) == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err and err.count("\n") == 1
    assert "line 2" not in err and "line 3" not in err and "found" not in err
    assert os.listdir(tmp_path) == ["bad.csv"]


def _neighbour_messages(tmp_path, capsys, write):
    """The CLI's error on two files that differ in one row."""
    said = []
    for n in (299, 300):
        src, out = tmp_path / f"in{n}.csv", tmp_path / "out.csv"
        write(src, n)
        assert _synthesize(src, out) == 2
        err = capsys.readouterr().err
        said.append(err.replace(str(src), "FILE"))
        assert "Traceback" not in err and not out.exists()
    return said


def test_cli_errors_on_private_files_say_the_same_on_neighbours(tmp_path, capsys):
    """An unclosed quote in the last row was reported at "line 301" or
    "line 300": the number of rows. A non-UTF-8 byte quoted the byte and
    its position; a field over the csv module's limit was a traceback
    (exit 1). Each is now one line, the same on both neighbours."""
    rows = lambda n: "".join(f"{i % 3},{i % 2}\n" for i in range(n))  # noqa: E731

    def open_quote(path, n):
        path.write_text("a,b\n" + rows(n) + '"1,2\n')

    def latin1(path, n):
        path.write_bytes(("a,b\n" + rows(n)).encode() + b"\xfc,1\n")

    def huge_field(path, n):
        path.write_text("a,b\n" + rows(n) + '"' + "x" * 200_000 + '",1\n')

    for write in (open_quote, latin1, huge_field):
        first, second = _neighbour_messages(tmp_path, capsys, write)
        assert first == second, write.__name__
        assert first.count("\n") == 1 and "0xfc" not in first, first


def test_cli_checks_the_output_directory_before_fitting(
    csv_in, tmp_path, capsys, monkeypatch
):
    fitted = []
    monkeypatch.setattr(
        "skdp_synth.pipeline.SynthesisPipeline.fit",
        lambda self, *a, **k: fitted.append(1) or self,
    )
    assert _synthesize(csv_in, tmp_path / "missing" / "out.csv") == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "Traceback" not in err
    assert fitted == []


@pytest.mark.parametrize("exc", [KeyboardInterrupt, OSError("disk full")])
def test_cli_interrupted_write_leaves_nothing(
    csv_in, tmp_path, capsys, monkeypatch, exc
):
    out = tmp_path / "out.csv"
    out.write_text("previous,content\n")
    real = pd.DataFrame.to_csv

    def half_then_fail(self, fh, **kwargs):
        real(self.iloc[:3], fh, **kwargs)  # some valid-looking rows first
        raise exc

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_fail)
    with pytest.warns(PrivacyLeakWarning, match="learned from the data"):
        code = _synthesize(csv_in, out)  # no schema: the CLI shows the warning
    assert code == (130 if exc is KeyboardInterrupt else 2)
    assert "Traceback" not in capsys.readouterr().err
    assert out.read_text() == "previous,content\n"
    assert sorted(os.listdir(tmp_path)) == ["in.csv", "out.csv"]


def test_cli_writes_complete_output(csv_in, tmp_path):
    out = tmp_path / "out.csv"
    with pytest.warns(PrivacyLeakWarning, match="learned from the data"):
        assert _synthesize(csv_in, out, "--rows", "7") == 0
    assert len(pd.read_csv(out)) == 7
    assert sorted(os.listdir(tmp_path)) == ["in.csv", "out.csv"]


# ---------------------------------------------------------- leak test
def _neighbours(relation, seed=0):
    X = _boolean(400, 5, seed)
    if relation == "replace-one":
        Y = X.copy()
        Y[0] = 1 - Y[0]
    else:
        Y = X[1:]
    return X, Y


#: For each private estimator, the public attributes that differ between
#: neighbouring datasets because they *are* the release (or post-processing of
#: it with public parameters and the seed) -- doc/privacy.md lists them.
RELEASED = {
    "DampedPrivateSynthesizer": {
        "components_",
        "projection_",
        "weights_",
        "cell_means_",
    },
    "PrivateSampler": set(),
    "ProjectedGaussianRelease": {
        "released_",
        "released_series_",
        "n_estimate_",
        "candidates_",
        "weights_",
        "reweight_residual_",
        "generator_loss_",  # the generator's loss: a function of the release
        "model_rows_",  # the generator's table size: a function of n̂ (released)
        # what selection chose (exponential mechanism) and from the noisy total:
        # released, covered by the GDP accounting (doc/privacy.md, "Selection")
        "selection_",
        "marginals_",
        "selection_shares_",
        # James--Stein factors: functions of the released residuals and their
        # public scales (doc/privacy.md, "Shrinkage of weak interactions")
        "shrinkage_factors_",
    },
}
#: with selection="mst"/"aim" the measured tables are chosen by the exponential
#: mechanism (released): the final tables' workload, noise model and labels are
#: functions of that choice (post-processing), so they may differ on neighbours
SELECTED = {"workload_", "residual_scales_", "expected_error_", "query_index_"}

PRIVATE = [
    DampedPrivateSynthesizer(epsilon=2.0, n_components=1, random_state=0),
    DampedPrivateSynthesizer(
        epsilon=2.0, n_components=1, keep_diagnostics=True, random_state=0
    ),
    PrivateSampler(d=2, k=50, random_state=0),
    ProjectedGaussianRelease(random_state=0),
    ProjectedGaussianRelease(neighbouring="replace-one", random_state=0),
    ProjectedGaussianRelease(n_rows=500, random_state=0),
    ProjectedGaussianRelease(selection="mst", random_state=0),
    ProjectedGaussianRelease(selection="aim", random_state=0),
    ProjectedGaussianRelease(selection="one-way", target=0, random_state=0),
]


def _public_names(est):
    names = {k for k in vars(est) if not k.startswith("_")}
    for name, attr in inspect.getmembers(type(est)):
        if not name.endswith("_") or name.startswith("_"):
            continue
        if isinstance(attr, not_private) and attr.private_name in vars(est):
            names.add(name)
        elif isinstance(attr, property):
            try:
                getattr(est, name)
            except AttributeError:
                continue
            names.add(name)
    return names


@pytest.mark.parametrize("estimator", PRIVATE, ids=lambda e: repr(e))
def test_public_state_is_covered_by_the_guarantee_or_warns(estimator):
    relation = estimator.get_params().get("neighbouring", "replace-one")
    X, Y = _neighbours(relation)
    a, b = clone(estimator).fit(X), clone(estimator).fit(Y)
    names = _public_names(a)
    assert names == _public_names(b)
    # the plan is published as parameter-only: it must be checked here
    assert "plan_" in names and "plan_" not in RELEASED[type(a).__name__]
    released = RELEASED[type(a).__name__]
    if estimator.get_params().get("selection") in ("mst", "aim"):
        released = released | SELECTED
    for name in sorted(names - set(estimator.get_params())):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            va, vb = getattr(a, name), getattr(b, name)
        if any(issubclass(w.category, PrivacyLeakWarning) for w in caught):
            continue
        if name in released:
            continue
        assert _same(va, vb), f"{name} differs on neighbours and is not released"


#: A pipeline's own public attributes that are released: functions of the
#: last step's release and its public noise scales (doc/privacy.md lists
#: them). Everything else it sets must be identical on neighbours.
PIPELINE_RELEASED = {
    "missing_dropped_",
    "other_dropped_",
    "integer_bins_dropped_",
    "outer_bins_dropped_",
    "missing_shares_",
    "degenerate_columns_",
}


@pytest.mark.parametrize("last", ["gaussian", "damped"])
def test_a_pipelines_public_state_is_covered_or_identical_on_neighbours(last):
    """The pipeline's own fitted attributes (not its steps', tested above):
    the level keep rules' records, the released missing shares, the
    degenerate columns and the declared rules are released or public."""
    from skdp_synth.rules import Derived

    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "income": rng.lognormal(7, 1, n),
            "g": rng.choice(["a", "b", "c"], n),
        }
    )
    X.loc[rng.random(n) < 0.05, "income"] = np.nan
    X["old"] = X["age"] >= 60
    Y = X.iloc[1:]  # add/remove neighbours (the gaussian release's relation)
    if last == "gaussian":
        step = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0)
    else:
        step = DampedPrivateSynthesizer(epsilon=1.0, random_state=0)
        Y = X.copy()  # replace-one neighbours (the damped release's relation)
        Y.loc[0, ["age", "income", "g"]] = [79.0, 1e6, "c"]
        Y["old"] = Y["age"] >= 60
    fits = []
    for data in (X, Y):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(categories={"g": ["a", "b", "c"]}, random_state=0),
            clone(step),
            rules=[Derived("old", "age >= 60")],
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(pipe.fit(data))
    a, b = fits
    names = {k for k in vars(a) if k.endswith("_") and not k.startswith("_")}
    assert names == {k for k in vars(b) if k.endswith("_") and not k.startswith("_")}
    assert {"missing_shares_", "rules_"} <= names
    for name in sorted(names - PIPELINE_RELEASED):
        assert _same(getattr(a, name), getattr(b, name)), name


def test_exact_n_not_kept_under_add_remove():
    # n_samples_fit_ was once 2000 vs 1999 on neighbours: it published n
    X, Y = _neighbours("add-remove-one")
    for kwargs in ({}, {"n_rows": 500}):
        est = ProjectedGaussianRelease(random_state=0, **kwargs).fit(X)
        assert not hasattr(est, "n_samples_fit_")
        assert est.sample().shape[1] == 5
    est = ProjectedGaussianRelease(neighbouring="replace-one", random_state=0).fit(X)
    assert est.n_samples_fit_ == 400


# -------------------------------------------------------------- release
@pytest.mark.parametrize("estimator", PRIVATE, ids=lambda e: repr(e))
def test_release_round_trip(estimator, tmp_path):
    X, _ = _neighbours("replace-one")
    est = clone(estimator).fit(X)
    rel = est.to_release()
    path = tmp_path / "release.npz"
    rel.save(path)
    back = Release.load(path)
    assert back.guarantee == est.privacy_guarantee_
    assert back.estimator == type(est).__name__
    assert "random_state" not in back.params and "accountant" not in back.params
    assert back.arrays.keys() == rel.arrays.keys()
    for k in rel.arrays:
        np.testing.assert_array_equal(back.arrays[k], rel.arrays[k])
    assert back.to_dict() == rel.to_dict()
    np.testing.assert_array_equal(
        back.sample(7, random_state=1), rel.sample(7, random_state=1)
    )
    assert back.sample(7, random_state=1).shape == (7, 5)
    with np.load(path, allow_pickle=False) as z:  # no pickled member
        assert all(z[name].dtype != object for name in z.files)
    assert os.listdir(tmp_path) == ["release.npz"]


def test_release_refuses_newer_formats(tmp_path):
    est = PrivateSampler(d=1, k=5, random_state=0).fit(_boolean())
    rel = est.to_release()
    object.__setattr__(rel, "format_version", 99)
    rel.save(tmp_path / "r.npz")
    with pytest.raises(ValueError, match="format version 99"):
        Release.load(tmp_path / "r.npz")


def test_model_selection_charges_every_fit():
    # doc/privacy.md, "Scores and model selection": a search is a data access;
    # clones share the accountant, so each of the c * f + 1 fits is charged.
    from sklearn.model_selection import GridSearchCV

    from skdp_synth import BudgetAccountant

    acc = BudgetAccountant(neighbouring="add-remove-one", delta=0.5)
    est = ProjectedGaussianRelease(d=1, accountant=acc, random_state=0)
    GridSearchCV(est, {"epsilon": [0.5, 1.0]}, cv=3).fit(_boolean(300, 4))
    assert len(acc.spent) == 2 * 3 + 1
    assert acc.total_spent[0] == pytest.approx(
        3 * 0.5 + 3 * 1.0 + acc.spent[-1].epsilon
    )


# ------------------------------------------------------------ fail closed
# Every refused fit on two neighbouring datasets must say the same thing: the
# order is parameters -> budget -> data, and a data error names the column or
# block and the kind of problem, never a count, a value or a size.
THERMO = [
    {"name": "t", "kind": "thermometer", "width": 2},
    {"name": "a", "kind": "binary", "width": 1},
    {"name": "b", "kind": "binary", "width": 1},
    {"name": "c", "kind": "binary", "width": 1},
]

#: every estimator, with the neighbouring relation its guarantee is stated for
PROBED = [
    (CovarianceLossMicroaggregator(k=10, domain="boolean", random_state=0), None),
    (DampedPrivateSynthesizer(epsilon=2.0, n_components=1, random_state=0), "r"),
    (PrivateSampler(d=1, k=20, random_state=0), "r"),
    (ProjectedGaussianRelease(d=1, random_state=0), "a"),
    (ProjectedGaussianRelease(d=1, neighbouring="replace-one", random_state=0), "r"),
    (ProjectedGaussianRelease(d=1, mechanism="correlated", n_rows=300), "a"),
]
PROBED_IDS = [f"{type(e).__name__}-{r}-{i}" for i, (e, r) in enumerate(PROBED)]


def _invalid_thermometer(n, n_bad, seed=0):
    """``n`` rows of 5 bits with ``n_bad`` invalid thermometer codes (0, 1)."""
    X = _boolean(n, 5, seed)
    X[:, 1] = X[:, 0] * X[:, 1]  # valid: 00, 10, 11
    X[:n_bad, 0], X[:n_bad, 1] = 0, 1  # invalid: 01 (the cell x0=0, x1=1)
    return X


def _neighbour_pair(relation, make):
    """Two tables that differ in one record: ``make(n, extra)`` builds them."""
    if relation == "a":  # add/remove: one more record
        return make(300, 0), make(301, 1)
    return make(300, 0), make(300, 1)  # replace-one: the same size


def _refusal(est, X):
    try:
        est.fit(X)
    except (ValueError, TypeError) as exc:
        return type(exc).__name__, str(exc)
    return None


def _corrupt_cases():
    def bad_blocks(n, extra):
        return _invalid_thermometer(n, 7 + extra)

    def nan_at(n, extra):
        X = _boolean(n, 5).astype(np.float64)
        X[: 3 + extra, 2] = np.nan
        return X

    def out_of_domain(n, extra):
        X = _boolean(n, 5).astype(np.float64)
        X[: 3 + extra, 4] = SECRET
        return X

    def strings(n, extra):
        X = _boolean(n, 5).astype(object)
        X[0, 3] = "secret-" + str(n + extra)
        return X

    def one_dim(n, extra):
        return _boolean(n, 5)[:, 0].astype(np.float64) + extra * SECRET

    return {
        "invalid blocks": bad_blocks,
        "nan": nan_at,
        "out of domain": out_of_domain,
        "strings": strings,
        "1-D": one_dim,
    }


CORRUPT = _corrupt_cases()


@pytest.mark.parametrize("estimator, relation", PROBED, ids=PROBED_IDS)
@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_refused_fits_on_neighbours_say_the_same(estimator, relation, case):
    # a refusal once said "267 training rows are not valid for blocks_":
    # the exact count of a cell chosen through `blocks`
    X, Y = _neighbour_pair(relation or "r", CORRUPT[case])
    est = clone(estimator).set_params(blocks=THERMO)
    a, b = _refusal(clone(est), X), _refusal(clone(est), Y)
    assert a is not None and b is not None
    assert a == b
    assert "301" not in a[1] and "300" not in a[1] and "0.1234" not in a[1]


@pytest.mark.parametrize(
    "estimator, relation",
    [(e, r) for e, r in PROBED if r is not None],
    ids=[i for i, (_, r) in zip(PROBED_IDS, PROBED) if r is not None],
)
@pytest.mark.parametrize("case", ["invalid blocks", "nan", "out of domain"])
def test_budget_is_checked_before_the_data(estimator, relation, case):
    # with the budget exhausted, the data error (and its
    # count) came first and nothing was charged; now the refusal is the
    # budget's, the same on neighbours, before any value is read (the shape
    # and the dtype -- strings, 1-D -- are checked first: the plan needs them)
    from skdp_synth import BudgetAccountant
    from skdp_synth.exceptions import BudgetError

    X, Y = _neighbour_pair(relation, CORRUPT[case])
    nb = "replace-one" if relation == "r" else "add-remove-one"
    messages = []
    for data in (X, Y):
        acc = BudgetAccountant(epsilon=1e-3, delta=1e-9, neighbouring=nb)
        est = clone(estimator).set_params(blocks=THERMO, accountant=acc)
        with pytest.raises(BudgetError) as info:
            est.fit(data)
        messages.append(str(info.value))
        assert acc.spent == []
    assert messages[0] == messages[1]


def test_n_rows_does_not_answer_for_n():
    # under add/remove the plan once compared n with n_rows
    # before the budget: a binary search over n_rows found n in 30 refused
    # fits. Now n is never compared with it (post-processing bound).
    X = _boolean(301, 4)
    results = []
    for bound in (300, 301, 302):
        est = ProjectedGaussianRelease(
            d=1, mechanism="correlated", n_rows=bound, random_state=0
        )
        est.fit(X)  # never refused, whatever the bound
        results.append(est.plan_)
    assert all(p.n_samples is None for p in results)
    # replace-one: n is public, the bound is enforced
    with pytest.raises(ValueError, match="public upper bound"):
        ProjectedGaussianRelease(
            d=1, mechanism="correlated", n_rows=300, neighbouring="replace-one"
        ).fit(X)


def test_release_ignores_bounds_set_after_fit():
    # fit without bounds, then set_params(bounds=...):
    # the release published the exact minima/maxima as declared bounds
    X = np.random.default_rng(0).normal(size=(200, 3))
    est = DampedPrivateSynthesizer(domain="box", n_components=1, random_state=0)
    with pytest.warns(PrivacyLeakWarning):
        est.fit(X)
    est.set_params(bounds=(-100.0, 100.0))
    with pytest.warns(PrivacyLeakWarning, match="read off the data"):
        rel = est.to_release()
    assert rel.plan["bounds_inferred"] is True
    assert rel.params["bounds"] is None
    np.testing.assert_array_equal(rel.arrays["bounds_lo"], est.bounds_[0])


def test_release_reads_the_fitted_parameters():
    # set_params(random_state=None) after a seeded fit
    # gave hardened_noise=True; the params' epsilon differed from the guarantee
    est = ProjectedGaussianRelease(d=1, epsilon=0.5, random_state=0).fit(_boolean())
    est.set_params(random_state=None, epsilon=5.0, d=2, n_rows=7)
    rel = est.to_release()
    assert rel.plan["hardened_noise"] is False
    assert rel.params["epsilon"] == rel.guarantee.epsilon == 0.5
    assert rel.params["d"] == rel.plan["d"] == 1
    assert rel.params["n_rows"] is None
    assert rel.plan["default_n_samples"] == est.to_release().plan["default_n_samples"]


def test_domain_switch_after_fit_does_not_change_the_rows():
    # a domain switch after fit once gave wrong rows silently
    X = _boolean()
    est = DampedPrivateSynthesizer(n_components=1, random_state=0).fit(X)
    before = est.sample(50, random_state=1)
    est.set_params(domain="box", bounds=(-5.0, 5.0))
    after = est.sample(50, random_state=1)
    np.testing.assert_array_equal(before, after)  # same process, same path
    assert set(np.unique(after).tolist()) <= {0, 1}
    assert est.to_release().plan["domain"] == "boolean"


@pytest.mark.parametrize(
    "estimator, hardened",
    [
        (PrivateSampler(d=1, k=20), False),
        (DampedPrivateSynthesizer(n_components=1), False),
        (ProjectedGaussianRelease(d=1), True),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, bool) else str(v),
)
def test_hardened_noise_only_when_every_draw_is_hardened(estimator, hardened):
    # the sampler's rows and PROJ's draws come from NumPy
    rel = clone(estimator).fit(_boolean()).to_release()
    assert rel.plan["hardened_noise"] is hardened


def test_concurrent_spends_never_overspend():
    # check-then-append without a lock overspent 71/3000 times
    # at a 1 us switch interval. Under the lock the ledger is exact: at most
    # floor(1 / 0.001) = 1000 spends of 0.001 fit (the tolerance is 1e-12).
    import sys
    import threading

    from skdp_synth import BudgetAccountant
    from skdp_synth.exceptions import BudgetError

    acc = BudgetAccountant(epsilon=1.0)

    def spend():
        for _ in range(300):
            try:
                acc.spend(0.001)
            except BudgetError:
                pass

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=spend) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert len(acc.spent) <= 1000
    assert acc.total_spent[0] <= 1.0 + 1e-12


# ------------------------------------- Release.load of malformed files
def _malformed():
    from skdp_synth.exceptions import MalformedReleaseError

    return MalformedReleaseError


def _weighted_release(tmp_path):
    est = DampedPrivateSynthesizer(n_components=1, random_state=0).fit(_boolean())
    path = tmp_path / "r.npz"
    est.to_release().save(path)
    return path


def _members(path):
    import json

    with np.load(path, allow_pickle=False) as z:
        arrays = {n: z[n] for n in z.files}
    meta = json.loads(arrays.pop("metadata").tobytes().decode("utf-8"))
    return meta, arrays


def _rewrite(path, meta, arrays, rehash=True):
    """Write a tampered file; ``rehash``: with a valid content hash (so only
    the schema can catch it -- the hash is not a signature)."""
    import json

    from skdp_synth.release import _content_hash

    meta = dict(meta)
    if rehash and "content_hash" in meta:
        del meta["content_hash"]
        strip = {k[len("array_") :]: v for k, v in arrays.items()}
        meta["content_hash"] = _content_hash(meta, strip)
    text = json.dumps(meta).encode("utf-8")
    np.savez(path, metadata=np.frombuffer(text, dtype=np.uint8), **arrays)


def test_release_load_refuses_doubled_weights(tmp_path):
    # doubled weights made sample(1000) return 1,876 rows
    path = _weighted_release(tmp_path)
    meta, arrays = _members(path)
    arrays["array_weights"] = arrays["array_weights"] * 2
    _rewrite(path, meta, arrays)
    with pytest.raises(_malformed(), match="sum to 1"):
        Release.load(path)


def _tamper_cases():
    def nan_point(meta, arrays):
        arrays["array_points"] = arrays["array_points"].copy()
        arrays["array_points"][0, 0] = np.nan

    def out_of_range(meta, arrays):
        arrays["array_points"] = arrays["array_points"].copy()
        arrays["array_points"][0, 0] = 3.0

    def infinite_bounds(meta, arrays):
        p = arrays["array_points"].shape[1]
        arrays["array_bounds_lo"] = np.full(p, -np.inf)
        arrays["array_bounds_hi"] = np.full(p, np.inf)
        meta["plan"]["domain"] = "box"

    def string_epsilon(meta, arrays):
        meta["guarantee"]["epsilon"] = "1.0"

    def bool_epsilon(meta, arrays):
        meta["guarantee"]["epsilon"] = True

    def extra_key(meta, arrays):
        meta["payload"] = "x"

    def feature_names(meta, arrays):
        meta["plan"]["feature_names"] = ["a", "b"]

    def pickled(meta, arrays):
        arrays["array_points"] = np.array([object()] * 3, dtype=object)

    return {
        "nan point": nan_point,
        "out-of-range point": out_of_range,
        "infinite bounds": infinite_bounds,
        "string number": string_epsilon,
        "boolean number": bool_epsilon,
        "extra key": extra_key,
        "inconsistent feature names": feature_names,
        "pickled member": pickled,
    }


TAMPER = _tamper_cases()


@pytest.mark.parametrize("case", sorted(TAMPER))
def test_release_load_validates_the_schema(tmp_path, case):
    path = _weighted_release(tmp_path)
    meta, arrays = _members(path)
    TAMPER[case](meta, arrays)
    if case == "pickled member":
        import json

        text = json.dumps(meta).encode("utf-8")
        np.savez(path, metadata=np.frombuffer(text, dtype=np.uint8), **arrays)
    else:
        _rewrite(path, meta, arrays)
    with pytest.raises(_malformed()):
        Release.load(path)


def test_release_load_detects_damage_by_the_content_hash(tmp_path):
    path = _weighted_release(tmp_path)
    meta, arrays = _members(path)
    w = arrays["array_weights"].copy()
    w[[0, -1]] = w[[-1, 0]] if w.size > 1 else w[[0, 0]]
    w[0] = np.nextafter(w[0], 1.0)  # sums stay within the schema's tolerance
    arrays["array_weights"] = w
    _rewrite(path, meta, arrays, rehash=False)
    with pytest.raises(_malformed(), match="content hash"):
        Release.load(path)


def test_release_load_refuses_duplicate_members(tmp_path):
    import zipfile

    path = _weighted_release(tmp_path)
    with zipfile.ZipFile(path) as zf:
        first = zf.infolist()[0]
        data = zf.read(first)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile: duplicate name
        with zipfile.ZipFile(path, "a") as zf:
            zf.writestr(first.filename, data)
    with pytest.raises(_malformed(), match="duplicate"):
        Release.load(path)


@pytest.mark.parametrize("cut", [0.3, 0.9])
def test_release_load_truncated_file_is_one_clear_error(tmp_path, cut):
    # BadZipFile / EOFError before
    path = _weighted_release(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(_malformed()):
        Release.load(path)


def test_release_load_deep_json_is_refused(tmp_path):
    # a 100k-deep JSON raised RecursionError
    path = _weighted_release(tmp_path)
    _, arrays = _members(path)
    text = ("[" * 100_000 + "]" * 100_000).encode()
    np.savez(path, metadata=np.frombuffer(text, dtype=np.uint8), **arrays)
    with pytest.raises(_malformed(), match="nested"):
        Release.load(path)


def test_release_load_checks_sizes_before_allocating(tmp_path):
    # a 525 KB file expanded to 1.24 GB: the member sizes are checked first
    path = tmp_path / "bomb.npz"
    _, arrays = _members(_weighted_release(tmp_path))
    np.savez_compressed(
        path,
        metadata=np.frombuffer(b"{}", dtype=np.uint8),
        array_points=np.zeros((2_000_000, 8)),  # 128 MB of zeros, ~125 KB packed
    )
    assert path.stat().st_size < 1_000_000
    with pytest.raises(_malformed(), match="max_bytes"):
        Release.load(path, max_bytes=10_000_000)


def test_release_load_of_a_fifo_does_not_hang(tmp_path):
    import threading

    fifo = tmp_path / "release.fifo"
    os.mkfifo(fifo)
    outcome = []

    def load():
        try:
            Release.load(fifo)
        except Exception as exc:  # recorded and checked below
            outcome.append(exc)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(timeout=10)
    hung = thread.is_alive()
    if hung:  # unblock the reader (main: it waits for a writer forever)
        with open(fifo, "wb"):
            pass
        thread.join(timeout=10)
    assert not hung
    assert len(outcome) == 1 and isinstance(outcome[0], _malformed())


def test_saved_files_follow_the_umask(tmp_path, csv_in):
    # outputs and releases were once 0600 whatever the umask
    old = os.umask(0o022)
    try:
        rel_path = tmp_path / "r.npz"
        PrivateSampler(d=1, k=5, random_state=0).fit(_boolean()).to_release().save(
            rel_path
        )
        out = tmp_path / "out.csv"
        with pytest.warns(PrivacyLeakWarning):
            assert _synthesize(csv_in, out) == 0
    finally:
        os.umask(old)
    assert rel_path.stat().st_mode & 0o777 == 0o644
    assert out.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(
    "extra, schema",
    [(["--param", "k"], None), ([], ["categories"])],
    ids=["malformed param", "list-shaped schema"],
)
def test_cli_user_errors_exit_with_status_2(tmp_path, csv_in, capsys, extra, schema):
    # these user errors once exited with code 1 (SystemExit(message)), not 2
    import json

    if schema is not None:
        path = tmp_path / "schema.json"
        path.write_text(json.dumps(schema))
        extra = ["--schema", str(path)]
    # main returns the status (the console script exits with it), as for every
    # other user error
    assert _synthesize(csv_in, tmp_path / "out.csv", *extra) == 2
    err = capsys.readouterr().err
    assert err.startswith("skdp-synth: error:") and err.count("\n") == 1


def test_resampler_does_not_return_the_private_n():
    # under add/remove, fit_resample once returned exactly
    # len(X) rows (n is private), without a warning
    from skdp_synth import SyntheticResampler

    X = _boolean(300, 4)
    y = X[:, 0].copy()
    res = SyntheticResampler(
        ProjectedGaussianRelease(d=1, n_rows=500, random_state=0), classes=[0, 1]
    )
    Xs, ys = res.fit_resample(X[:, 1:], y)
    assert len(Xs) == len(ys) == 500  # the public bound, not len(X)
    # replace-one: n is public, len(X) as before
    res = SyntheticResampler(
        ProjectedGaussianRelease(d=1, neighbouring="replace-one", random_state=0),
        classes=[0, 1],
    )
    assert len(res.fit_resample(X[:, 1:], y)[0]) == 300
    with pytest.raises(ValueError) as info:
        res.fit_resample(X[:, 1:], y[:-1])
    assert "300" not in str(info.value) and "299" not in str(info.value)


@pytest.mark.parametrize(
    "estimator",
    [
        ProjectedGaussianRelease(d=2, random_state=0),
        DampedPrivateSynthesizer(n_components=1, random_state=0),
    ],
    ids=lambda e: type(e).__name__,
)
def test_large_samples_are_drawn_in_bounded_chunks(estimator, monkeypatch):
    # sample(10**7) once allocated 15.6 GiB in one go; the
    # working memory beyond the output must not grow with n. Bound (by
    # construction): the chunks and their concatenation (2x the output) plus
    # a few chunks' working memory; main's one-shot draw peaks at ~4x.
    import tracemalloc

    from skdp_synth import validation as base

    monkeypatch.setattr(base, "SAMPLE_CHUNK_BYTES", 1 << 20)
    est = clone(estimator).fit(_boolean(2000, 20))
    n = 200_000
    assert n > base.sample_chunk_rows(20)
    tracemalloc.start()
    try:
        Y = est.sample(n, random_state=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert Y.shape == (n, 20) and set(np.unique(Y).tolist()) <= {0, 1}
    assert peak <= 2 * Y.nbytes + 8 * base.SAMPLE_CHUNK_BYTES
    np.testing.assert_array_equal(Y, est.sample(n, random_state=1))  # same path


def test_large_pipeline_samples_are_drawn_in_bounded_chunks(monkeypatch):
    # the CLI's in-memory path (pipe.sample) is chunked as well
    import tracemalloc

    from skdp_synth import validation as base

    monkeypatch.setattr(base, "SAMPLE_CHUNK_BYTES", 1 << 16)
    df = pd.DataFrame(
        {
            f"c{j}": np.random.default_rng(j).choice(["a", "b", "c"], 500)
            for j in range(8)
        }
    )
    categories = {c: ["a", "b", "c"] for c in df.columns}
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories=categories, random_state=0),
        DampedPrivateSynthesizer(n_components=1, random_state=0),
    ).fit(df)
    n = 50_000
    one = pipe.sample(2_000, random_state=1)  # one piece
    tracemalloc.start()
    try:
        Y = pipe.sample(n, random_state=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert Y.shape == (n, 8) and list(Y.columns) == list(df.columns)
    assert Y.dtypes.tolist() == one.dtypes.tolist()
    out = int(Y.memory_usage(deep=True).sum())
    assert peak <= 3 * out + 64 * base.SAMPLE_CHUNK_BYTES


# ------------------------------------------------ sizes at plan time
def _huge_blocks(width=3000):
    return [{"name": "zip", "kind": "onehot", "width": width}] + [
        {"name": f"b{j}", "kind": "binary", "width": 1} for j in range(2)
    ]


def test_huge_attribute_tables_refused_at_plan_time_naming_the_column():
    # 10^5 declared levels allocated a dense 74.5 GiB matrix after 32 s and
    # failed with a MemoryError that named no column. The generator's table
    # of 'zip' x 'b0' (6000 cells) cannot be fitted: refused in the plan,
    # with the column and the fix, before the data is read.
    est = ProjectedGaussianRelease(d=2, blocks=_huge_blocks(), random_state=0)
    with pytest.raises(ValueError, match=r"'zip' \(3000 levels\).*fewer levels"):
        est.make_plan(100, 3002)
    X = np.zeros((40, 3002))
    X[:, 0] = 1
    X[0, :2] = 1  # an invalid row: the size refusal comes first
    with pytest.raises(ValueError, match="before the data is read"):
        clone(est).fit(X)


def test_huge_second_moment_refused_at_plan_time_naming_the_block():
    # p = 20000 bits: S is 20000 x 20000 float64 (3 GiB) > the 2 GiB limit
    est = DampedPrivateSynthesizer(blocks=_huge_blocks(19_998), random_state=0)
    with pytest.raises(ValueError, match=r"'zip' with 19998 bits.*fewer levels"):
        est.make_plan(100, 20_000)


def test_no_huge_number_in_size_messages():
    # a MemoryError message once held a 300-digit number
    import re

    est = PrivateSampler(d=100, k=5)
    with pytest.raises((MemoryError, ValueError)) as info:
        est.make_plan(50, 400)
    digits = max(len(run) for run in re.findall(r"\d+", str(info.value)))
    assert digits <= 12, str(info.value)[:200]


def test_categorical_output_has_the_declared_levels():
    # a pd.Categorical of the observed levels with a
    # declared extra level: the synthetic column took the training dtype, so
    # rows of the unseen level became NaN (40/5000) and the dtype showed
    # which levels were observed
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "c": pd.Categorical(rng.choice(["a", "b"], 500)),
            "o": pd.Categorical(rng.choice(["lo", "hi"], 500), ordered=True),
            "d": rng.choice(["x", "y"], 500),
        }
    )
    enc = BooleanEncoder(
        categories={"c": ["a", "b", "z"], "d": ["x", "y"]},
        ordinal={"o": ["lo", "mid", "hi"]},
        random_state=0,
    )
    pipe = make_synthesis_pipeline(
        enc, DampedPrivateSynthesizer(epsilon=1.0, random_state=0)
    ).fit(df)
    Y = pipe.sample(5000, random_state=0)
    assert list(Y["c"].cat.categories) == ["a", "b", "z"]
    assert list(Y["o"].cat.categories) == ["lo", "mid", "hi"] and Y["o"].cat.ordered
    assert not Y["c"].isna().any() and not Y["o"].isna().any()


def test_one_one_point_zero_and_true_are_three_levels():
    # 1, 1.0 and True (equal and hash-equal in Python) once merged
    # into one level, inferred or declared
    df = pd.DataFrame({"c": pd.Series([1, 1.0, True, "a", 1, True], dtype=object)})
    with pytest.warns(PrivacyLeakWarning):
        inferred = BooleanEncoder(random_state=0).fit(df)
    assert len(inferred.specs_[0].levels) == 4
    enc = BooleanEncoder(categories={"c": [1, 1.0, True, "a"]}, random_state=0)
    bits = enc.fit_transform(df)
    assert bits.argmax(axis=1).tolist() == [0, 1, 2, 3, 0, 2]
    back = enc.inverse_transform(bits)["c"].tolist()
    assert [type(v) for v in back] == [int, float, bool, str, int, bool]
    # a CSV's 1.0 still matches a declared 1 (no other numeric level equals it)
    only_int = BooleanEncoder(categories={"c": [0, 1]}, random_state=0)
    assert only_int.fit_transform(pd.DataFrame({"c": [1.0, 0.0]})).tolist() == [
        [1],
        [0],
    ]


def test_process_workers_fail_closed_and_say_why():
    # GridSearchCV with process workers failed closed (the
    # pickled accountant refuses to spend) but the message did not say why
    import pickle

    from skdp_synth import BudgetAccountant
    from skdp_synth.exceptions import BudgetError

    acc = BudgetAccountant(epsilon=1.0)
    copy_in_worker = pickle.loads(pickle.dumps(acc))
    with pytest.raises(BudgetError, match=r"n_jobs.*threading"):
        copy_in_worker.spend(0.1)
    assert acc.spent == []


def test_model_selection_with_threads_charges_every_fit():
    # the remedy the message names: threads share the accountant (its spends
    # are serialised by the lock), so each of the c * f + 1 fits is charged
    import joblib
    from sklearn.model_selection import GridSearchCV

    from skdp_synth import BudgetAccountant

    acc = BudgetAccountant(neighbouring="add-remove-one", delta=0.5)
    est = ProjectedGaussianRelease(d=1, accountant=acc, random_state=0)
    with joblib.parallel_backend("threading", n_jobs=2):
        GridSearchCV(est, {"epsilon": [0.5, 1.0]}, cv=3, n_jobs=2).fit(_boolean(300, 4))
    assert len(acc.spent) == 2 * 3 + 1


def test_large_release_samples_are_drawn_in_bounded_chunks(monkeypatch):
    # Release.sample is chunked as well
    import tracemalloc

    from skdp_synth import validation

    monkeypatch.setattr(validation, "SAMPLE_CHUNK_BYTES", 1 << 20)
    est = DampedPrivateSynthesizer(n_components=1, random_state=0)
    rel = est.fit(_boolean(2000, 20)).to_release()
    n = 200_000
    tracemalloc.start()
    try:
        Y = rel.sample(n, random_state=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert Y.shape == (n, 20) and set(np.unique(Y).tolist()) <= {0.0, 1.0}
    assert peak <= 2 * Y.nbytes + 8 * validation.SAMPLE_CHUNK_BYTES


def test_shape_errors_do_not_say_the_number_of_rows():
    """``sample_weight`` of the wrong length said "for 120 rows" and
    ``SyntheticResampler`` a 2-D ``y``'s shape: ``n``, private under
    add/remove neighbours."""
    from skdp_synth import SyntheticResampler
    from skdp_synth.validation import check_counts_shape

    with pytest.raises(ValueError) as info:
        check_counts_shape(np.ones(119), 120)
    assert "120" not in str(info.value) and "119" not in str(info.value)
    X = np.zeros((120, 2))
    res = SyntheticResampler(ProjectedGaussianRelease(epsilon=1.0, delta=1e-6))
    with pytest.raises(ValueError) as info:
        res.fit_resample(X, np.zeros((120, 2)))
    assert "120" not in str(info.value)


def test_extra_rows_are_charged_to_the_ledger_that_paid_for_the_fit():
    """``set_params(accountant=fresh)`` after fit moved the charge for more
    rows off the ledger that paid for the fit, lifting its limit."""
    from skdp_synth import BudgetAccountant, PrivateSampler
    from skdp_synth.exceptions import BudgetError

    X = np.random.default_rng(3).integers(0, 2, (150, 4)).astype(float)
    ledger = BudgetAccountant(epsilon=20, neighbouring="replace-one")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sampler = PrivateSampler(k=5, accountant=ledger, random_state=0).fit(X)
    spent = ledger.total_spent
    sampler.set_params(accountant=BudgetAccountant(epsilon=1e9))
    with pytest.raises(BudgetError, match="replaced after fit"):
        sampler.sample(12)
    assert ledger.total_spent == spent
    sampler.set_params(accountant=ledger)  # set back: charged as before
    sampler.sample(6)
    assert ledger.total_spent[0] > spent[0]


def test_the_default_output_size_is_the_fitted_m():
    """``DampedPrivateSynthesizer``'s release and ``sample()`` followed a
    ``set_params(m=...)`` after fit while its ``params`` kept the fitted m."""
    X = np.random.default_rng(3).integers(0, 2, (150, 4)).astype(float)
    est = DampedPrivateSynthesizer(epsilon=1.0, m=50, random_state=0).fit(X)
    est.set_params(m=7)
    release = est.to_release()
    assert release.params["m"] == release.plan["default_n_samples"] == 50
    assert len(est.sample()) == 50


def test_a_pipeline_refuses_zero_and_one_row_with_the_same_words():
    """The encoder refused an empty table first with scikit-learn's "Found
    array with 0 sample(s)", while one row reached the synthesizer's
    refusal, worded for 0 or 1: the messages told the two apart."""
    import pandas as pd

    from skdp_synth import make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    said = []
    for n in (0, 1):
        df = pd.DataFrame({"a": ["x"] * n, "b": np.arange(n)})
        pipe = make_synthesis_pipeline(
            BooleanEncoder(categories={"a": ["x", "y"]}),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6),
        )
        with pytest.raises(ValueError) as info:
            pipe.fit(df)
        said.append(str(info.value))
    assert said[0] == said[1] and "0 samples or 1 sample" in said[0]


def test_a_pipeline_refuses_a_spent_budget_before_counting_rows():
    """With an exhausted ledger, one row got the too-few-rows refusal and
    two rows the budget's: the error's type told them apart."""
    import pandas as pd

    from skdp_synth import BudgetAccountant, make_synthesis_pipeline
    from skdp_synth.exceptions import BudgetError
    from skdp_synth.preprocessing import BooleanEncoder

    for n in (1, 2):
        ledger = BudgetAccountant(
            epsilon=0.5, delta=1e-5, neighbouring="add-remove-one"
        )
        pipe = make_synthesis_pipeline(
            BooleanEncoder(categories={"a": ["x", "y"]}),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, accountant=ledger),
        )
        with pytest.raises(BudgetError):
            pipe.fit(pd.DataFrame({"a": ["x", "y"][:n]}))


def test_release_load_refuses_rows_too_wide_to_sample(tmp_path):
    """One deflated point 10^6 wide is a small file whose sample(4096) asked
    30 GiB."""
    from skdp_synth.release import MAX_RELEASE_FEATURES

    path = tmp_path / "wide.npz"
    width = MAX_RELEASE_FEATURES + 1
    Release(
        estimator="Wide",
        params={},
        guarantee=PrivacyGuarantee(1.0, 0.0, "replace-one", "test"),
        arrays={"points": np.zeros((1, width)), "weights": np.ones(1)},
        plan={"sampler": "weighted-points", "n_features": width},
    ).save(path)
    assert path.stat().st_size < 1 << 20
    with pytest.raises(_malformed(), match="wider than"):
        Release.load(path)


@pytest.mark.parametrize(
    "make",
    [
        lambda acc: ProjectedGaussianRelease(d=1, accountant=acc, random_state=0),
        lambda acc: PrivateSampler(d=1, k=100, accountant=acc, random_state=0),
        lambda acc: DampedPrivateSynthesizer(
            domain="boolean", epsilon=1.0, accountant=acc, random_state=0
        ),
    ],
)
def test_conversion_refusals_quote_no_value_or_size(make):
    """scikit-learn's conversion errors quote the data: complex input printed
    the first and last rows ("Complex data not supported\\n[[...987654.321...]]"),
    before the budget was checked; a table without columns printed its
    shape, whose n is private; ``transform`` of text printed the cell (seen
    by planting canary values in the input). Each is refused without them."""
    n, canary = 1237, 987654.321
    X = np.zeros((n, 3))
    X[5, 1] = canary
    texts, acc = [], None
    for bad in (X.astype(complex), np.zeros((n, 0)), X[:, 0]):
        with pytest.raises(ValueError) as info:
            make(acc).fit(bad)
        texts.append(str(info.value))
    fitted = make(acc).fit(np.random.default_rng(0).integers(0, 2, (50, 3)))
    text_rows = pd.DataFrame(np.zeros((4, 3))).astype(object)
    text_rows.iloc[1, 1] = "CANARY_7f3a"
    for method in (fitted.transform, fitted.score):
        for bad in (text_rows, X.astype(complex)[:4], X[:, 0]):
            with pytest.raises(ValueError) as info:
                method(bad)
            texts.append(str(info.value))
    assert "Complex data not supported" in texts[0]
    assert "no columns" in texts[1]
    for text in texts:
        assert "987654" not in text and "9.8765" not in text, text
        assert "1237" not in text and "1236" not in text, text
        assert "CANARY" not in text, text


def test_an_unusual_conversion_error_is_not_relayed():
    """An input whose ``__array__`` raises another class than ValueError or
    TypeError went through the sanitizer with its text."""

    class Odd:
        shape = (10, 2)

        def __len__(self):
            return 10

        def __array__(self, dtype=None, copy=None):
            raise RuntimeError("row 3 is 987654321")

    with pytest.raises(ValueError) as info:
        ProjectedGaussianRelease(d=1, random_state=0).fit(Odd())
    assert "987654321" not in str(info.value)


@pytest.mark.parametrize(
    "column, advice",
    [
        (pd.Series(pd.period_range("2000-01", periods=40, freq="M")), "to_timestamp"),
        (pd.Series(pd.interval_range(0, 40)), "midpoints"),
    ],
)
def test_a_period_or_interval_column_is_refused_before_any_budget(column, advice):
    """Read as undiscovered text, a monthly period column came back as
    ``"other"`` objects, its dtype lost; now it is refused before the fit,
    naming the column and its dtype (the schema, public) and how to convert
    it. Declared in ``categories=``, its levels come back in its dtype."""
    df = pd.DataFrame({"when": column, "x": np.arange(40.0)})
    enc = BooleanEncoder(epsilon=1.0, random_state=0)
    with pytest.raises(ValueError, match=rf"column 'when' has dtype .*{advice}"):
        enc.fit(df)
    assert not hasattr(enc, "specs_")
    levels = list(column.unique())
    enc = BooleanEncoder(categories={"when": levels}, epsilon=1.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = enc.inverse_transform(enc.fit_transform(df))
    assert back["when"].dtype == column.dtype
    assert back["when"].tolist() == column.tolist()
