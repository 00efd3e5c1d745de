"""Conditional sampling: ``sample(n, given=...)`` on the pipeline, the
release (also reloaded from disk) and ``skdp-synth sample --given``."""

import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, cli, make_synthesis_pipeline
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.release import Release
from skdp_synth.rules import Derived, Implies, Inequality

PLANS = ["basic", "plus", "pro"]


def _table(n=3000, seed=0):
    """A churn-like table: a rare level ("fraud", 1 % of rows), a plan that
    depends on churn, whole-number tenure, a decimal charge."""
    rng = np.random.default_rng(seed)
    churn = rng.choice(["no", "yes", "fraud"], n, p=[0.74, 0.25, 0.01])
    plan = np.where(
        churn == "yes",
        rng.choice(PLANS, n, p=[0.7, 0.2, 0.1]),
        rng.choice(PLANS, n, p=[0.2, 0.4, 0.4]),
    )
    tenure = np.where(churn == "yes", rng.integers(0, 24, n), rng.integers(0, 72, n))
    charges = np.round(20 + 2 * tenure + rng.normal(0, 5, n), 2)
    return pd.DataFrame(
        {"churn": churn, "plan": plan, "tenure": tenure, "charges": charges}
    )


def _pipe(rules=None, epsilon=1.0):
    return make_synthesis_pipeline(
        BooleanEncoder(
            categories={"churn": ["no", "yes", "fraud"], "plan": PLANS},
            bin_edges={
                "tenure": [0, 6, 12, 24, 36, 48, 60, 72],
                "charges": [0, 40, 60, 80, 100, 120, 140, 200],
            },
            epsilon=None,
            random_state=0,
        ),
        ProjectedGaussianRelease(epsilon=epsilon, delta=1e-6, random_state=0),
        rules=rules,
    )


@pytest.fixture(scope="module")
def fitted():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _pipe().fit(_table())


@pytest.fixture(scope="module")
def release(fitted):
    return fitted.to_release()


CONDITIONS = [
    ({"churn": "yes"}, lambda f: f.churn == "yes"),
    ({"churn": "fraud"}, lambda f: f.churn == "fraud"),
    ({"plan": ["plus", "pro"]}, lambda f: f.plan.isin(["plus", "pro"])),
    ({"tenure": (10, 30)}, lambda f: f.tenure.between(10, 30)),
    (
        {"churn": "no", "charges": (50.5, None)},
        lambda f: (f.churn == "no") & (f.charges >= 50.5),
    ),
    (
        [{"churn": "fraud"}, {"plan": "pro", "tenure": (0, 5)}],
        lambda f: (f.churn == "fraud") | ((f.plan == "pro") & f.tenure.between(0, 5)),
    ),
]


@pytest.mark.parametrize("given,match", CONDITIONS)
def test_every_row_matches_and_there_are_exactly_n(fitted, release, given, match):
    for n in (1, 7, 2000):
        for out in (
            fitted.sample(n, random_state=1, given=given),
            release.sample(n, random_state=1, given=given),
        ):
            assert len(out) == n
            assert match(out).all()
            assert list(out.columns) == list(_table().columns)
            assert out.dtypes.equals(_table().dtypes)


def test_rows_come_from_the_models_conditional_distribution(release):
    """The release's points decoded (categorical columns decode exactly):
    the conditional sample's plan shares are the points' weights restricted
    to churn == "yes" and renormalised (controlled rounding: within a few
    rows)."""
    points, weights = release.arrays["points"], release.arrays["weights"]
    decoded = release.decoder().inverse_transform(points)
    at = (decoded.churn == "yes").to_numpy()
    want = pd.Series(weights[at], index=decoded.plan[at]).groupby(level=0).sum()
    want /= want.sum()
    out = release.sample(20_000, random_state=3, given={"churn": "yes"})
    got = out.plan.value_counts(normalize=True)
    for level in PLANS:
        assert got.get(level, 0.0) == pytest.approx(want.get(level, 0.0), abs=2e-3)


def test_a_rare_condition_is_drawn_directly_not_by_rejection(fitted, monkeypatch):
    """1 % of the real rows: the rows decoded are exactly the rows returned
    (no rejection: nothing drawn and thrown away), for a rare level as for
    a common one."""
    from skdp_synth.preprocessing import BooleanEncoder as Encoder

    decoded = []
    inverse = Encoder.inverse_transform

    def counting(self, X):
        decoded.append(len(X))
        return inverse(self, X)

    monkeypatch.setattr(Encoder, "inverse_transform", counting)
    for given in ({"churn": "fraud"}, {"churn": "no"}, {"plan": ["plus", "pro"]}):
        decoded.clear()
        out = fitted.sample(50_000, random_state=0, given=given)
        assert len(out) == 50_000 and sum(decoded) == 50_000


@pytest.mark.parametrize(
    "given,words",
    [
        ({"tenure": (500, 900)}, ["'tenure': (500, 900)", "no probability"]),
        ({"churn": "yes", "tenure": (-9, -1)}, ["'churn': 'yes'", "no probability"]),
        ({"region": "north"}, ["unknown column 'region'"]),
        ({"churn": "maybe"}, ["'maybe' is not a level of column 'churn'"]),
        ({"tenure": (30, 10)}, ["the range of 'tenure' is empty"]),
        ({"tenure": "ten"}, ["'ten' is not a number"]),
        ({"churn": None}, ["has no missing value"]),
        ({}, ["empty condition"]),
    ],
)
def test_impossible_and_unknown_conditions_are_clear_errors(
    fitted, release, given, words
):
    for sample in (fitted.sample, release.sample):
        with pytest.raises(ValueError) as info:
            sample(10, random_state=0, given=given)
        for word in words:
            assert word in str(info.value)


def test_given_must_be_a_dict_or_a_list_of_dicts(fitted):
    with pytest.raises(TypeError, match="given must be a dict"):
        fitted.sample(10, given="churn=yes")


def test_a_release_reloaded_from_disk_samples_the_same_conditional_rows(
    release, tmp_path
):
    path = tmp_path / "rel.npz"
    release.save(path)
    loaded = Release.load(path)
    given = {"churn": "fraud", "tenure": (3, 40)}
    a = loaded.sample(3000, random_state=5, given=given)
    b = release.sample(3000, random_state=5, given=given)
    pd.testing.assert_frame_equal(a, b)
    assert (a.churn == "fraud").all() and a.tenure.between(3, 40).all()
    chunks = list(loaded.iter_sample(3000, chunk_rows=700, random_state=5, given=given))
    assert [len(c) for c in chunks] == [700, 700, 700, 700, 200]
    pd.testing.assert_frame_equal(pd.concat(chunks), a)


def test_sampling_given_a_condition_is_free(fitted, release):
    """Post-processing: the guarantee, the release and the plain rows are
    the same before and after any number of conditional samples."""
    before = fitted.privacy_guarantee_
    epsilon = fitted.epsilon_
    plain = fitted.sample(500, random_state=9)
    digest = release.content_hash()
    for given, _ in CONDITIONS:
        fitted.sample(1000, random_state=0, given=given)
        release.sample(1000, random_state=0, given=given)
    assert fitted.privacy_guarantee_ == before
    assert fitted.epsilon_ == epsilon
    assert fitted.to_release().guarantee == release.guarantee
    assert release.content_hash() == digest
    pd.testing.assert_frame_equal(fitted.sample(500, random_state=9), plain)


def test_conditions_work_together_with_declared_rules():
    rules = [
        Inequality("charges", ">=", 20.0),
        Implies({"churn": "fraud"}, {"plan": "basic"}),
        Derived("long", "tenure >= 24"),
    ]
    X = _table().assign(long=lambda f: f.tenure >= 24)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = _pipe(rules).fit(X)
    out = pipe.sample(3000, random_state=2, given={"churn": "fraud", "tenure": (0, 30)})
    assert len(out) == 3000
    assert (out.churn == "fraud").all() and out.tenure.between(0, 30).all()
    assert not pipe.rules_.broken(out).to_numpy().any()
    assert (out.plan == "basic").all()
    assert list(out.columns) == list(X.columns)
    with pytest.raises(ValueError, match="'long' is a derived column"):
        pipe.sample(10, given={"long": True})


def test_cli_sample_given(release, tmp_path, capsys):
    path = tmp_path / "rel.npz"
    release.save(path)
    out = tmp_path / "out.csv"
    args = ["sample", str(path), "--rows", "1500", "--seed", "0", "-o", str(out)]
    assert cli.main([*args, "--given", "churn=fraud", "--given", "tenure=..20"]) == 0
    rows = pd.read_csv(out)
    assert len(rows) == 1500
    assert (rows.churn == "fraud").all() and (rows.tenure <= 20).all()
    assert cli.main([*args, "--given", "plan=plus", "--given", "plan=pro"]) == 0
    assert pd.read_csv(out).plan.isin(["plus", "pro"]).all()
    capsys.readouterr()
    assert cli.main([*args, "--given", "churn=maybe"]) == 2
    assert "'maybe' is not a level of column 'churn'" in capsys.readouterr().err
    assert cli.main([*args, "--given", "tenure=500..900"]) == 2
    assert "no probability" in capsys.readouterr().err
    assert cli.main([*args, "--given", "churn"]) == 2


def test_points_that_decode_at_random_are_drawn_again():
    """An invalid bit pattern (two levels of a one-hot block set, as an
    explicit workload's candidate rows can be) decodes to either level
    under ``decode="sample"``: the rows that decode outside the condition
    are drawn again, so every row still matches."""
    from skdp_synth._given import ConditionalModel

    X = _table(300)[["churn", "plan"]]
    enc = BooleanEncoder(
        categories={"churn": ["no", "yes", "fraud"], "plan": PLANS}, epsilon=None
    ).fit(X)
    points = np.array(
        [[1, 1, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0], [1, 0, 0, 0, 0, 1]], dtype=float
    )
    weights = np.array([0.6, 0.3, 0.1])
    for seed in range(3):
        enc.random_state = seed
        model = ConditionalModel(
            points, weights, enc, {"churn": "no"}, controlled=False
        )
        out = model.draw(400, np.random.default_rng(seed))
        assert len(out) == 400 and (out.churn == "no").all()
        # both the invalid point (decoded "no") and the valid one are drawn
        assert set(out.plan) == {"basic", "pro"}


def test_a_range_draws_what_filtering_a_large_sample_keeps(fitted):
    """Rows of partly covered bins are drawn again when their value falls
    outside the range: the conditional rows are the model's own conditional
    distribution, as filtering a large unconditioned sample gives it."""
    given = {"tenure": (10, 30)}  # bins [6, 12) and [24, 36) partly covered
    out = fitted.sample(20_000, random_state=4, given=given)
    big = fitted.sample(200_000, random_state=5)
    kept = big[big.tenure.between(10, 30)]
    for column in ("churn", "plan"):
        got = out[column].value_counts(normalize=True)
        want = kept[column].value_counts(normalize=True)
        assert got.subtract(want, fill_value=0).abs().max() < 0.015
    edges = [10, 12, 24, 31]
    got = pd.cut(out.tenure, edges, right=False).value_counts(normalize=True)
    want = pd.cut(kept.tenure, edges, right=False).value_counts(normalize=True)
    assert got.subtract(want, fill_value=0).abs().max() < 0.015


def test_a_date_range_and_a_single_value():
    """A date column takes a range of dates (ISO strings or Timestamps,
    an open end); a whole-number column one value."""
    rng = np.random.default_rng(0)
    n = 2000
    days = pd.to_timedelta(rng.integers(0, 365, n), unit="D")
    X = pd.DataFrame(
        {
            "d": (pd.Timestamp("2020-01-01") + days).astype("datetime64[s]"),
            "g": rng.choice(["a", "b"], n),
            "k": rng.integers(0, 50, n),
        }
    )
    pipe = make_synthesis_pipeline(
        BooleanEncoder(
            datetime_unit={"d": "D"},
            categories={"g": ["a", "b"]},
            bin_edges={"k": [0, 10, 20, 30, 40, 50]},
            random_state=0,
        ),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coarse private domains
        pipe.fit(X)
    out = pipe.sample(
        1000, random_state=0, given={"d": ("2020-03-01", "2020-04-15"), "g": "b"}
    )
    assert out.d.between(pd.Timestamp("2020-03-01"), pd.Timestamp("2020-04-15")).all()
    assert (out.g == "b").all() and out.d.dtype == X.d.dtype
    rel = pipe.to_release()
    out = rel.sample(
        500, random_state=0, given={"d": (pd.Timestamp("2020-06-01"), None)}
    )
    assert (out.d >= pd.Timestamp("2020-06-01")).all()
    out = rel.sample(500, random_state=0, given={"k": 17})
    assert (out.k == 17).all() and out.k.dtype == X.k.dtype


def test_a_range_never_draws_an_integer_past_the_private_cap():
    """An integer column's split bins end in a closed bin ``[L, L + 1]``
    whose ``L + 1`` lies past the private cap (the decoder gives ``L``
    alone). Conditional sampling reads that bin as ``L`` alone too: a range
    past ``L`` has no mass and is refused (it drew ``L + 1``, a value the
    domain excludes, from half the bin), and a range ending at ``L`` covers
    the whole bin."""
    from types import SimpleNamespace

    from _fine_hist import fine_hist

    from skdp_synth._given import _bin_share, _range_edges

    # integers 0-9 in leaves up to [8, 11), an empty [11, 16): the cap's
    # largest integer is 10, the split bins' edges go on to 11
    fine = fine_hist(list(range(9)) + [11, 16], [200.0] * 8 + [400.0, 0.0])
    assert fine.bounds == (0.0, 11.0) and fine.last_integer == 10.0
    spec = SimpleNamespace(
        levels=[float(v) for v in range(12)], integer=True, fine=fine
    )
    edges = _range_edges(spec)
    assert edges[-2:].tolist() == [10.0, 10.0]
    assert _bin_share(edges, 10.5, np.inf, True)[-1] == 0.0
    assert _bin_share(edges, 10.0, 10.0, True)[-1] == 1.0
    assert _bin_share(np.asarray(spec.levels), 10.5, np.inf, True)[-1] == 0.5

    rng = np.random.default_rng(0)
    n = 3000
    X = pd.DataFrame({"k": rng.integers(0, 10, n), "g": rng.choice(["a", "b"], n)})
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"g": ["a", "b"]}, random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X)
    k = next(s for s in pipe[0].specs_ if s.name == "k")
    top = k.levels[-1]
    assert top == k.fine.bounds[1]  # the closed last bin's top, past the cap
    with pytest.raises(ValueError):
        pipe.sample(100, random_state=0, given={"k": (top - 0.5, None)})
    out = pipe.sample(200, random_state=0, given={"k": (top - 3.0, None)})
    assert out.k.between(top - 3.0, top - 1.0).all()


def test_a_number_given_for_a_level_of_numbers_matches_it_by_value():
    """A column declared with the levels 1, 2, 3 refused ``given={"c": 2.0}``
    ("2.0 is not a level"), while the encoder reads a cell 2.0 as the level
    2; a bool is not a number here (True is not the level 1)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"c": rng.choice([1, 2, 3], 2000), "g": rng.choice(["a", "b"], 2000)}
    )
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"c": [1, 2, 3], "g": ["a", "b"]}, random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    ).fit(df)
    rows = pipe.sample(50, given={"c": 2.0}, random_state=0)
    assert (rows["c"] == 2).all() and len(rows) == 50
    with pytest.raises(ValueError, match="True is not a level of column 'c'"):
        pipe.sample(5, given={"c": True})
