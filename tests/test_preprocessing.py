"""BooleanEncoder and UnitBallScaler."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from skdp_synth.blocks import Block, Blocks
from skdp_synth.exceptions import PrivacyLeakWarning
from skdp_synth.preprocessing import BooleanEncoder, UnitBallScaler

SCHEMA = dict(
    categories={"colour": ["red", "green", "blue", None], "smoker": [False, True]},
    ordinal={"size": ["S", "M", "L", "XL"]},
    bin_edges={"age": [0, 18, 40, 65, 100], "income": [0.0, 1e4, 5e4, 1e6]},
)


def _table(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue", None], n),
            "smoker": rng.choice([False, True], n),
            "size": pd.Categorical(
                rng.choice(["S", "M", "L", "XL"], n), categories=["S", "M", "L", "XL"]
            ),
            "age": rng.integers(0, 100, n),
            "income": np.where(rng.random(n) < 0.1, np.nan, rng.uniform(0, 9e5, n)),
        }
    )


def _fit(df, **kw):
    # income has missing values: its declared domain says so (a declared
    # domain's missing level is declared too, never inferred from the data)
    params = {**SCHEMA, "missing": {"income": True}, "random_state": 0, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the full schema is public: no warning
        return BooleanEncoder(**params).fit(df)


def test_layout_and_names():
    enc = _fit(_table())
    names = enc.get_feature_names_out().tolist()
    assert names == [
        "colour=red",
        "colour=green",
        "colour=blue",
        "colour=<missing>",
        "smoker=True",
        "size>=M",
        "size>=L",
        "size>=XL",
        "age>=18",
        "age>=40",
        "age>=65",
        "income>=10000",
        "income>=50000",
        "income=<missing>",
    ]
    assert enc.inferred_ == []  # income's missing level is declared


def test_encoding_is_exact_and_valid_rows_round_trip():
    df = _table(200)
    enc = _fit(df)
    Z = enc.transform(df)
    assert Z.dtype == np.uint8 and set(np.unique(Z)) <= {0, 1}
    # one-hot block: exactly one bit per row (missing is a category)
    assert np.all(Z[:, 0:4].sum(axis=1) == 1)
    # thermometer blocks are monotone
    for block in (Z[:, 5:8], Z[:, 8:11], Z[:, 11:13]):
        assert np.all(np.diff(block.astype(int), axis=1) <= 0)
    back = enc.inverse_transform(Z)
    assert list(back.columns) == list(df.columns)
    assert back["colour"].tolist() == df["colour"].tolist()
    assert back["smoker"].tolist() == df["smoker"].tolist()
    assert back["size"].tolist() == df["size"].tolist()
    assert back["size"].dtype == df["size"].dtype
    assert back["age"].dtype == df["age"].dtype
    # numeric values come back as the (integer) midpoint of their bin
    edges = np.array(SCHEMA["bin_edges"]["age"])
    idx = np.clip(np.searchsorted(edges, df["age"], side="right") - 1, 0, 3)
    lo, hi = edges[idx], edges[idx + 1]
    assert np.all((back["age"] >= lo) & ((back["age"] < hi) | (idx == 3)))
    assert back["income"].isna().tolist() == df["income"].isna().tolist()


def test_thermometer_bits_are_the_empirical_cdf():
    df = _table(300, seed=2)
    enc = _fit(df)
    Z = enc.transform(df)
    for j, edge in zip((8, 9, 10), (18, 40, 65)):
        assert Z[:, j].mean() == pytest.approx(np.mean(df["age"] >= edge))


def test_any_binary_row_decodes_to_a_valid_row():
    df = _table()
    enc = _fit(df)
    rng = np.random.default_rng(0)
    R = rng.integers(0, 2, size=(500, len(enc.get_feature_names_out())))
    back = enc.inverse_transform(R)
    assert (
        back["colour"].isin(["red", "green", "blue"]).sum()
        + back["colour"].isna().sum()
        == 500
    )
    assert back["size"].isin(["S", "M", "L", "XL"]).all()
    assert back["age"].between(0, 100).all()
    assert back["smoker"].isin([False, True]).all()
    # thermometer rule: the level is the number of ones (1 0 1 -> level 2 = "L")
    row = np.zeros((1, R.shape[1]), dtype=int)
    row[0, 0] = 1
    row[0, [5, 7]] = 1
    assert enc.inverse_transform(row)["size"].iloc[0] == "L"
    # the missing bit wins for numeric columns
    row[0, 13] = 1
    assert np.isnan(enc.inverse_transform(row)["income"].iloc[0])


def test_ambiguous_onehot_block_sampling_rule():
    # several ones: uniform among them; fractional values: proportional
    df = pd.DataFrame({"c": ["a", "b", "c"] * 10})
    enc = BooleanEncoder(categories={"c": ["a", "b", "c"]}, random_state=0).fit(df)
    two_ones = np.tile([1, 1, 0], (6000, 1))
    counts = enc.inverse_transform(two_ones)["c"].value_counts()
    assert set(counts.index) == {"a", "b"}
    # binomial test, two-sided, false-failure rate 1e-3
    assert stats.binomtest(int(counts["a"]), 6000, 0.5).pvalue > 1e-3
    frac = np.tile([0.7, 0.2, 0.1], (6000, 1))
    counts = enc.inverse_transform(frac)["c"].value_counts()
    observed = [counts.get(c, 0) for c in "abc"]
    # chi-square goodness of fit, false-failure rate 1e-3
    assert stats.chisquare(observed, np.array([0.7, 0.2, 0.1]) * 6000).pvalue > 1e-3


def test_all_zero_block_uses_the_decoded_rows_own_marginal():
    df = pd.DataFrame({"c": ["a", "b", "c"] * 10})
    enc = BooleanEncoder(categories={"c": ["a", "b", "c"]}, random_state=1).fit(df)
    Z = np.vstack(
        [
            np.tile([1, 0, 0], (800, 1)),
            np.tile([0, 0, 1], (200, 1)),
            np.zeros((3000, 3)),
        ]
    )
    out = enc.inverse_transform(Z)["c"].iloc[1000:].value_counts()
    assert "b" not in out.index  # b never appears among the decoded rows
    # proportional to (800, 0, 200): binomial test, false-failure rate 1e-3
    assert stats.binomtest(int(out["a"]), 3000, 0.8).pvalue > 1e-3


def test_argmax_decoding_is_deterministic():
    df = pd.DataFrame({"c": ["a", "b", "b"]})
    enc = BooleanEncoder(
        categories={"c": ["a", "b"]}, decode="argmax", missing="always"
    ).fit(df)
    # three bits: a, b, <missing>; ties and empty rows go to the most frequent
    Z = np.array([[0.2, 0.7, 0.1], [0, 0, 0], [1, 1, 0]])
    out = enc.inverse_transform(Z)["c"].tolist()
    assert out[0] == "b"
    assert out == enc.inverse_transform(Z)["c"].tolist()


def test_expected_marginals_preserved_by_sample_decoding():
    # decoding fractional rows by sampling keeps the category frequencies
    df = pd.DataFrame({"c": ["a", "b", "c", "a"]})
    enc = BooleanEncoder(categories={"c": ["a", "b", "c"]}, random_state=5).fit(df)
    Z = np.tile([0.5, 0.25, 0.25], (8000, 1))
    counts = enc.inverse_transform(Z)["c"].value_counts()
    observed = [counts.get(c, 0) for c in "abc"]
    # chi-square, false-failure rate 1e-3
    assert stats.chisquare(observed, [4000, 2000, 2000]).pvalue > 1e-3


def test_inferred_domains_warn_and_list_columns():
    df = _table()
    with pytest.warns(PrivacyLeakWarning, match="colour") as record:
        enc = BooleanEncoder(n_bins=3).fit(df)
    assert len(record) == 1
    # a NumPy bool column's domain is its dtype's, {False, True}: public, not
    # learned (it was learned as a numeric range, and warned)
    assert set(enc.inferred_) == set(df.columns) - {"smoker"}
    smoker = enc.specs_[list(df.columns).index("smoker")]
    assert (smoker.kind, smoker.levels, smoker.missing) == (
        "binary",
        [False, True],
        False,
    )


@pytest.mark.parametrize(
    "change, match",
    [
        (
            lambda d: d.assign(colour=["purple"] + d["colour"].tolist()[1:]),
            "not among its declared categories",
        ),
        (
            lambda d: d.assign(age=[150] + d["age"].tolist()[1:]),
            "outside the bin edges",
        ),
    ],
)
def test_values_outside_the_domain_are_rejected(change, match):
    df = _table()
    enc = _fit(df)
    with pytest.raises(ValueError, match=match):
        enc.transform(change(df))


def test_missing_never_rejects_missing_values():
    df = pd.DataFrame({"c": ["a", None]})
    with pytest.raises(ValueError, match="missing"):
        BooleanEncoder(categories={"c": ["a", "b"]}, missing="never").fit(df)


def test_missing_always_adds_a_bit_everywhere():
    df = pd.DataFrame({"c": ["a", "b"], "x": [1.0, 2.0]})
    enc = BooleanEncoder(
        categories={"c": ["a", "b"]}, bin_edges={"x": [0, 1.5, 3]}, missing="always"
    ).fit(df)
    assert enc.get_feature_names_out().tolist() == [
        "c=a",
        "c=b",
        "c=<missing>",
        "x>=1.5",
        "x=<missing>",
    ]


def test_declaration_errors():
    df = pd.DataFrame({"c": ["a", "b"]})
    with pytest.raises(ValueError, match="not present in X"):
        BooleanEncoder(categories={"zz": ["a"]}).fit(df)
    with pytest.raises(ValueError, match="more than one"):
        BooleanEncoder(categories={"c": ["a", "b"]}, ordinal={"c": ["a", "b"]}).fit(df)
    with pytest.raises(ValueError, match="strictly increasing"):
        BooleanEncoder(bin_edges={"c": [1, 1]}).fit(pd.DataFrame({"c": [1.0]}))
    with pytest.raises(ValueError, match="unique"):
        BooleanEncoder(categories={"c": ["a", "a", "b"]}).fit(df)


def test_onehot_numeric_encoding():
    df = pd.DataFrame({"x": [0.5, 1.5, 2.5, 3.0]})
    enc = BooleanEncoder(bin_edges={"x": [0, 1, 2, 3]}, numeric_encoding="onehot").fit(
        df
    )
    assert enc.get_feature_names_out().tolist() == [
        "x in [0, 1)",
        "x in [1, 2)",
        "x in [2, 3]",
    ]
    np.testing.assert_array_equal(
        enc.transform(df), [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]]
    )
    assert enc.inverse_transform(enc.transform(df))["x"].tolist() == [
        0.5,
        1.5,
        2.5,
        2.5,
    ]


def test_array_input_and_output():
    X = np.array([["a", 1.0], ["b", 2.0]], dtype=object)
    enc = BooleanEncoder(categories={0: ["a", "b"]}, bin_edges={1: [0, 1.5, 3]}).fit(X)
    Z = enc.transform(X)
    back = enc.inverse_transform(Z)
    assert isinstance(back, np.ndarray) and back.shape == (2, 2)
    assert back[:, 0].tolist() == ["a", "b"]


def test_inverse_transform_input_checks():
    enc = BooleanEncoder(categories={"c": ["a", "b", "z"]}).fit(
        pd.DataFrame({"c": ["a"]})
    )
    with pytest.raises(ValueError, match="columns"):
        enc.inverse_transform(np.zeros((2, 5)))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        enc.inverse_transform(np.full((2, 3), 2.0))


def test_set_output_pandas():
    df = pd.DataFrame({"c": ["a", "b"]})
    enc = BooleanEncoder(categories={"c": ["a", "b", "z"]}).set_output(
        transform="pandas"
    )
    out = enc.fit_transform(df)
    assert isinstance(out, pd.DataFrame)
    assert out.columns.tolist() == ["c=a", "c=b", "c=z"]


# ---------------------------------------------------------------- scaler
def test_unit_ball_scaler_maps_the_box_into_K_and_back():
    rng = np.random.default_rng(0)
    lo, hi = np.array([-1.0, 0.0, 10.0]), np.array([1.0, 5.0, 20.0])
    X = lo + rng.random((50, 3)) * (hi - lo)
    sc = UnitBallScaler(bounds=(lo, hi)).fit(X)
    Z = sc.transform(X)
    assert np.all(np.linalg.norm(Z, axis=1) <= 1 + 1e-12)
    assert np.all((Z >= 0) & (Z <= 1 / np.sqrt(3)))
    np.testing.assert_allclose(sc.inverse_transform(Z), X, rtol=1e-12, atol=1e-12)
    # the corners of the box go to the corners of K
    np.testing.assert_allclose(
        sc.transform(hi[None, :]), np.full((1, 3), 1 / np.sqrt(3))
    )


def test_unit_ball_scaler_rejects_or_clips_outside_values():
    sc = UnitBallScaler(bounds=(0, 1)).fit(np.array([[0.5, 0.5]]))
    with pytest.raises(ValueError, match="outside the declared bounds"):
        sc.transform(np.array([[0.5, 1.5]]))
    clip = UnitBallScaler(bounds=(0, 1), on_outside="clip").fit(np.array([[0.5, 0.5]]))
    np.testing.assert_allclose(
        clip.transform(np.array([[0.5, 1.5]])), [[0.5 / np.sqrt(2), 1 / np.sqrt(2)]]
    )


def test_unit_ball_scaler_inferred_bounds_warn():
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        UnitBallScaler().fit(np.array([[0.0, 1.0], [2.0, 1.0]]))


def test_unit_ball_scaler_bad_bounds():
    with pytest.raises(ValueError, match="lo < hi"):
        UnitBallScaler(bounds=(1, 0)).fit(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="pair"):
        UnitBallScaler(bounds=(1, 2, 3)).fit(np.zeros((2, 2)))


# ----------------------------------------------------------------- blocks_
def test_blocks_match_the_bit_layout():
    df = _table()
    enc = _fit(df)
    assert enc.blocks_ == Blocks(
        (
            Block("colour", "onehot", 0, 4),  # missing is the last level
            Block("smoker", "binary", 4, 1),
            Block("size", "thermometer", 5, 3),
            Block("age", "thermometer", 8, 3),
            Block("income", "thermometer", 11, 3, missing=True),
        )
    )
    names = enc.get_feature_names_out()
    for b in enc.blocks_.blocks:
        assert all(str(n).startswith(b.name) for n in names[b.columns])
    X = enc.transform(df)
    assert enc.blocks_.n_features == X.shape[1]
    assert enc.blocks_.is_valid(X).all()
    # the levels are the category / bin indices, missing the last level
    L = enc.blocks_.to_levels(X)
    colour = ["red", "green", "blue"]
    expected = [colour.index(c) if c is not None else 3 for c in df["colour"]]
    assert L[:, 0].tolist() == expected
    income_missing = df["income"].isna().to_numpy()
    assert (L[income_missing, 4] == 3).all() and (L[~income_missing, 4] < 3).all()


def test_blocks_of_onehot_numeric_and_constant_columns():
    df = pd.DataFrame(
        {"a": [1.0, 5.0, 9.0], "o": ["x", "x", "x"], "g": ["u", None, "u"]}
    )
    enc = BooleanEncoder(
        bin_edges={"a": [0, 4, 10]},
        ordinal={"o": ["x"], "g": ["u", None]},
        numeric_encoding="onehot",
    ).fit(df)
    assert [(b.name, b.kind, b.width, b.missing) for b in enc.blocks_.blocks] == [
        ("a", "onehot", 2, False),
        ("o", "onehot", 1, False),
        ("g", "onehot", 2, False),
    ]
    assert enc.blocks_.is_valid(enc.transform(df)).all()
    enc = BooleanEncoder(ordinal={"o": ["x"], "g": ["u", None]}).fit(df[["o", "g"]])
    # thermometer: "o" (one level, never missing) has no bits and no block; "g"
    # (one level or missing) is a thermometer block of its missing bit only
    assert enc.blocks_ == Blocks((Block("g", "thermometer", 0, 1, True),))
    assert enc.blocks_.to_levels(enc.transform(df[["o", "g"]]))[:, 0].tolist() == [
        0,
        1,
        0,
    ]


def test_public_bounds_warn_only_for_values_outside_them():
    """The private bins may cover less than the public bounds: training values
    inside the bounds are clipped to them silently (saying so would tell
    where the private range ends); a value outside the bounds is said."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"wage": rng.lognormal(6.5, 0.5, 2000)})
    enc = BooleanEncoder(bounds={"wage": [0, 1e6]}, epsilon=0.2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc.fit_transform(df)
    assert enc.specs_[0].levels[-1] < 1e6  # the learned range is narrower
    with pytest.warns(UserWarning, match=r"columns \['wage'\] have values outside"):
        enc.transform(pd.DataFrame({"wage": [2e6]}))


@pytest.mark.parametrize("epsilon", [None, 1.0])
@pytest.mark.parametrize(
    "declared, match",
    [
        ({"bounds": {"code": (0, 5)}}, "'code', whose dtype object is not numeric"),
        ({"bounds": {"flag": (0, 1)}}, "'flag', whose dtype bool is not numeric"),
        (
            {"categories": {"k": list(range(10))}, "bounds": {"k": (0, 9)}},
            "'k' is declared in bounds= and categories=",
        ),
        (
            {"bin_edges": {"k": [0, 5, 10]}, "bounds": {"k": (0, 9)}},
            "'k' is declared in bounds= and bin_edges=",
        ),
    ],
)
def test_bounds_that_would_be_dropped_are_refused(declared, match, epsilon):
    """bounds= on a text or bool column, or beside a declaration that fixes
    the domain, was dropped without a word (categories= with bin_edges= was
    already refused): refused from the schema, before a value is read."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "code": rng.choice(["1", "2", "3"], 300),
            "k": rng.integers(0, 10, 300),
            "flag": rng.random(300) < 0.5,
        }
    )
    with pytest.raises(ValueError, match=match):
        BooleanEncoder(epsilon=epsilon, **declared).fit(df)


@pytest.mark.parametrize(
    "declared",
    [
        {"bounds": {"id": (2**62, 2**62 + 1000)}},
        {"bin_edges": {"id": [2**62, 2**62 + 500, 2**62 + 1000]}},
        {"bounds": {"id": (np.int64(2**62), None)}},
    ],
)
def test_whole_numbers_float64_cannot_hold_are_refused(declared):
    """Bounds of ``(2**62, 2**62 + 1000)`` were one float64 value: every row
    came back as ``2**62`` (a CoarseDomainWarning blamed the budget); the
    same edges as ``bin_edges=`` were refused as not strictly increasing."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"id": 2**62 + rng.integers(0, 1000, 300)})
    with pytest.raises(ValueError, match=r"'id' hold whole numbers past 2\*\*53"):
        BooleanEncoder(epsilon=1.0, **declared).fit(df)
    # 2**53 itself is exact, and a float is the number it says
    BooleanEncoder(epsilon=None, bounds={"id": (0, 2**53)}).fit(df.assign(id=5))


# ------------------------------- level lookup, once per distinct value
def _category_index_by_row(spec, series, miss):
    """The row-by-row lookup that ``_category_index`` replaced (reference)."""
    import numbers

    from skdp_synth.preprocessing._column_spec import _hashable, _is_bool

    lookup = {_hashable(v): i for i, v in enumerate(spec.levels)}
    index = np.zeros(len(series), dtype=int)
    for i, (v, m) in enumerate(zip(series.tolist(), miss)):
        if m:
            continue
        j = lookup.get(_hashable(v))
        if j is None and isinstance(v, numbers.Number) and not _is_bool(v):
            j = next(
                (
                    k
                    for k, c in enumerate(spec.levels)
                    if isinstance(c, numbers.Number) and not _is_bool(c) and c == v
                ),
                None,
            )
        if j is None and spec.other:
            j = len(spec.levels) - 1
        if j is None:
            return None
        index[i] = j
    return index


_MIXED = [1, 1.0, True, False, 0, 0.0, "a", "b", np.int64(2), 2.0, np.float64(1.5)]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(_MIXED + [None, float("nan")]), max_size=40),
    st.lists(st.sampled_from(_MIXED), min_size=1, max_size=6, unique_by=repr),
    st.booleans(),
)
def test_category_index_matches_the_row_by_row_lookup(values, levels, other):
    """Grouping rows by (type, value) gives each row the level the row loop
    gave it -- ``1``, ``1.0`` and ``True`` stay apart -- and
    refuses exactly the same columns."""
    from skdp_synth.preprocessing._column_spec import _ColumnSpec
    from skdp_synth.preprocessing._encoding import _category_index

    spec = _ColumnSpec("c", "nominal", list(levels), False, object, other=other)
    series = pd.Series(values, dtype=object)
    miss = pd.isna(series).to_numpy()
    want = _category_index_by_row(spec, series, miss)
    if want is None:
        with pytest.raises(ValueError, match="not among its declared"):
            _category_index(spec, series, miss)
    else:
        np.testing.assert_array_equal(_category_index(spec, series, miss), want)


def test_category_index_takes_unhashable_values_row_by_row():
    from skdp_synth.preprocessing._column_spec import _ColumnSpec
    from skdp_synth.preprocessing._encoding import _category_index

    spec = _ColumnSpec("c", "nominal", ["a", "b"], False, object, other=True)
    series = pd.Series([["x"], "b", "a", ["y"]], dtype=object)
    got = _category_index(spec, series, np.zeros(4, dtype=bool))
    np.testing.assert_array_equal(got, [1, 1, 0, 1])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "Int8"])
def test_decoded_integers_are_clipped_to_their_dtype_not_wrapped(dtype):
    """A bin past the dtype's largest value decodes to that value: cast to
    ``int8``, 200 would wrap around to -56 (values invented far from the
    data, as a private bin of an int8 column did)."""
    df = pd.DataFrame({"x": pd.Series([1, 50, 99, 120], dtype=dtype)})
    enc = BooleanEncoder(bin_edges={"x": [0, 100, 300]}, numeric_value="midpoint")
    out = enc.fit(df).inverse_transform(enc.transform(df))["x"]
    assert out.dtype == df["x"].dtype
    assert out.tolist() == [50, 50, 50, 127 if dtype != "uint8" else 200]


def test_a_declared_domains_missing_level_is_declared_not_inferred():
    """With ``missing="infer"`` a declared column got a missing level when
    the data had a missing value (with a warning) and none when it had not
    (silently): neighbours differing in one missing value gave different
    bit layouts, one of them without a warning. A declared domain's
    missing level is now declared too; a
    missing value it does not declare is refused, naming only the column."""
    df = pd.DataFrame({"c": ["a", "b"] * 20, "x": np.arange(40.0)})
    declared = dict(categories={"c": ["a", "b"]}, bin_edges={"x": [0, 20, 40]})
    layouts = []
    for row in (None, 0):
        d = df.copy()
        if row is not None:
            d.loc[row, "x"] = np.nan
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                layouts.append(list(BooleanEncoder(**declared).fit(d).blocks_.names))
        except ValueError as exc:
            assert "'x'" in str(exc) and "missing" in str(exc)
            assert "nan" not in str(exc).lower() and "0" not in str(exc)
            layouts.append("refused")
    assert layouts == [["c", "x"], "refused"]
    # declared, it is kept whether or not a value is missing
    enc = BooleanEncoder(**declared, missing={"x": True}).fit(df)
    assert enc.specs_[1].missing
    # a nullable boolean can be missing by its dtype (public), not by its data
    flags = pd.DataFrame({"f": pd.array([True, False] * 20, dtype="boolean")})
    assert BooleanEncoder(epsilon=1.0, random_state=0).fit(flags).specs_[0].missing


def test_every_column_with_undeclared_missing_values_is_named_at_once():
    """One column per run took credit three fix-and-rerun cycles."""
    df = pd.DataFrame(
        {"a": ["x", None, "y"] * 10, "b": [1.0, 2.0, np.nan] * 10, "c": ["u"] * 30}
    )
    enc = BooleanEncoder(
        categories={"a": ["x", "y"], "c": ["u"]}, bin_edges={"b": [0, 1.5, 3]}
    )
    with pytest.raises(ValueError, match=r"columns \['a', 'b'\] have missing"):
        enc.fit(df)


def test_the_unknown_value_refusal_lists_the_declared_missing_level():
    """The refusal listed ``['White', 'Asian']`` where ``None`` was declared
    too: the declared domain, in full."""
    enc = BooleanEncoder(categories={"race": ["White", "Asian", None]}).fit(
        pd.DataFrame({"race": ["White", "Asian", None]})
    )
    with pytest.raises(ValueError, match=r"categories \['White', 'Asian', None\]"):
        enc.transform(pd.DataFrame({"race": ["Black"]}))


def test_a_missing_category_decodes_to_the_declared_marker():
    """A missing value of an object column came back ``None`` even where
    the input (as ``read_csv`` gives it) had NaN. It now decodes to
    ``None`` only where the declared levels hold ``None``, else to NaN,
    pandas' marker -- never by which marker the data used (one row would
    decide). A release file's decoder keeps the marker."""
    from skdp_synth.preprocessing._decoder_state import (
        decoder_from_state,
        decoder_state,
    )

    df = pd.DataFrame(
        {
            "declared": ["a", None, "b", "a"] * 50,
            "learned": ["x", np.nan, "y", "y"] * 50,
            "by_flag": ["u", np.nan, "v", "u"] * 50,
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # "learned"
        enc = BooleanEncoder(
            categories={"declared": ["a", "b", None], "by_flag": ["u", "v"]},
            missing={"by_flag": True},
            epsilon=None,
            random_state=0,
        ).fit(df)
    Z = enc.transform(df)
    restored = decoder_from_state(*decoder_state(enc), n_features=Z.shape[1])
    for back in (enc.inverse_transform(Z), restored.inverse_transform(Z)):
        assert back["declared"][1] is None
        for col in ("learned", "by_flag"):
            value = back[col][1]
            assert isinstance(value, float) and np.isnan(value)
        assert back.loc[[0, 2], "learned"].tolist() == ["x", "y"]


def test_an_ordered_categoricals_levels_are_said_to_come_from_its_dtype():
    """An ordered categorical's levels are used from its dtype with a
    warning that said they were "learned from the data"; it now says they
    came from the dtype and how to make them public."""
    df = pd.DataFrame(
        {"size": pd.Categorical(["S", "M", "L"] * 30, ["S", "M", "L"], ordered=True)}
    )
    with pytest.warns(PrivacyLeakWarning, match=r"taken from their ordered"):
        BooleanEncoder(epsilon=1.0, delta=1e-6, random_state=0).fit(df)


def test_a_decoder_written_before_the_marker_key_decodes_missing_to_none():
    """Release files written before the ``missing_none`` key existed lack
    it and decoded a missing category to ``None``; read as NaN they would
    change. Absent, the key means ``None``."""
    from skdp_synth.preprocessing._decoder_state import (
        decoder_from_state,
        decoder_state,
    )

    df = pd.DataFrame({"c": ["x", np.nan, "y", "y"] * 50})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        enc = BooleanEncoder(epsilon=None, random_state=0).fit(df)
    Z = enc.transform(df)
    meta, arrays = decoder_state(enc)
    assert meta["specs"][0]["missing_none"] is False
    for entry in meta["specs"]:
        del entry["missing_none"]  # as an older file
    old = decoder_from_state(meta, arrays, n_features=Z.shape[1])
    assert old.inverse_transform(Z)["c"][1] is None
