"""Declared rules: every sampled row keeps them, derived columns cost nothing."""

import warnings

import numpy as np
import pandas as pd
import pytest
from _dummy import BootstrapSynthesizer
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth._sklearn_compat import InvalidParameterError
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.rules import (
    Derived,
    FixedCombinations,
    Implies,
    Inequality,
    RuleSet,
    StructuralZero,
    rule_from_json,
    rule_to_json,
)

LEVELS = ["a", "b", "c", "d"]


def _births(n=300, seed=0):
    rng = np.random.default_rng(seed)
    mage = np.clip(rng.normal(29, 6, n).round(), 14, 50).astype(int)
    weeks = np.clip(rng.normal(38.5, 2.5, n).round(), 22, 45).astype(int)
    return pd.DataFrame(
        {"mage": mage, "mature": mage >= 35, "weeks": weeks, "premie": weeks < 37}
    )


BIRTH_RULES = [Derived("mature", "mage >= 35"), Derived("premie", "weeks < 37")]


# -- the vocabulary, one rule at a time


def test_inequality_between_columns_and_against_a_constant():
    rows = pd.DataFrame({"tenure": [3.0, 30.0, np.nan], "age": [40.0, 40.0, 10.0]})
    rule = Inequality("tenure", "<=", "age", offset=-14)
    assert rule.broken(rows).tolist() == [False, True, False]  # NaN breaks nothing
    assert Inequality("age", ">=", 18).broken(rows).tolist() == [False, False, True]
    assert rule.edge() == ("tenure", "age", -14.0)
    assert Inequality("age", ">=", 18).edge() == (None, "age", -18.0)


def test_an_inequality_projects_the_left_column_to_the_boundary():
    rules = RuleSet([Inequality("tenure", "<=", "age", offset=-14)])
    rows = pd.DataFrame({"tenure": [3, 30], "age": [40, 40]})
    out = rules.enforce(rows, random_state=0)
    assert out["tenure"].tolist() == [3, 26]  # moved, not age
    assert out["age"].tolist() == [40, 40]
    assert out["tenure"].dtype == rows["tenure"].dtype


def _stays(n=6):
    admitted = pd.Timestamp("2024-03-30 22:00") + pd.to_timedelta(
        np.arange(n) * 7, unit="h"
    )
    discharged = admitted + pd.to_timedelta([-30, 10, 60, -1, 25, 0][:n], unit="h")
    return pd.DataFrame(
        {
            "admitted": admitted.as_unit("s"),
            "discharged": discharged.as_unit("s"),
            "waited": pd.to_timedelta([5, 50, 20, 90, 1, 30][:n], unit="min"),
            "treated": pd.to_timedelta([10, 20, 30, 40, 50, 60][:n], unit="min"),
        }
    )


@pytest.mark.parametrize("flavour", ["naive", "zoned", "pyarrow"])
def test_dates_and_durations_are_held_by_projection(flavour):
    """An inequality between two date (or two duration) columns compares
    them as seconds, with a timedelta offset; before, it was refused as
    "not numeric". The broken rows' ``left`` is moved to the boundary
    exactly, in the column's own dtype."""
    rows = _stays()
    if flavour == "zoned":
        rows["admitted"] = rows["admitted"].dt.tz_localize("Europe/Paris")
        rows["discharged"] = rows["discharged"].dt.tz_localize("Europe/Paris")
    if flavour == "pyarrow":
        pa = pytest.importorskip("pyarrow")
        rows = rows.astype(
            {
                "admitted": pd.ArrowDtype(pa.timestamp("s")),
                "discharged": pd.ArrowDtype(pa.timestamp("s")),
                "waited": pd.ArrowDtype(pa.duration("ns")),
                "treated": pd.ArrowDtype(pa.duration("ns")),
            }
        )
    day = pd.Timedelta("1D")
    stay = Inequality("discharged", ">=", "admitted", offset=day)
    wait = Inequality("waited", "<=", "treated")
    rules = RuleSet([stay, wait]).check_schema(rows)
    assert stay.broken(rows).tolist() == [True, True, False, True, False, True]
    out = rules.enforce(rows, random_state=0)
    assert dict(out.dtypes) == dict(rows.dtypes)
    assert not rules.broken(out).any().any()
    moved = stay.broken(rows)
    assert (out["discharged"][moved] == rows["admitted"][moved] + day).all()
    assert (out["discharged"][~moved] == rows["discharged"][~moved]).all()
    assert (out["admitted"] == rows["admitted"]).all()
    late = wait.broken(rows)  # waited longer than treated: moved down to it
    assert late.tolist() == [False, True, False, True, False, False]
    assert (out["waited"][late] == rows["treated"][late]).all()
    assert (out["waited"][~late] == rows["waited"][~late]).all()


def test_dates_compare_with_dates_only():
    rows = _stays().assign(age=40.0)
    for rule, match in [
        (Inequality("discharged", ">=", "age"), "compares numbers with numbers"),
        (Inequality("waited", "<=", "admitted"), "dates with dates"),
        (Inequality("discharged", ">=", 0), "encoder's bounds="),
        (Inequality("discharged", ">=", "admitted", offset=1.0), "pd.Timedelta"),
        (Inequality("age", ">=", "age2", offset=pd.Timedelta("1D")), "timedelta"),
    ]:
        with pytest.raises(TypeError, match=match):
            RuleSet([rule]).check_schema(rows.assign(age2=1.0))
    with pytest.raises(ValueError, match="timedelta only between two columns"):
        Inequality("discharged", ">=", 3, offset=pd.Timedelta("1D"))


def test_a_timedelta_offset_round_trips_through_json():
    rule = Inequality("discharged", ">=", "admitted", offset=pd.Timedelta("36h"))
    entry = rule_to_json(rule)
    assert entry == {
        "inequality": ["discharged", ">=", "admitted"],
        "offset": "P1DT12H0M0S",
    }
    assert rule_from_json(entry) == rule
    with pytest.raises(ValueError, match='"offset" must be a number, or .* a duration'):
        rule_from_json({"inequality": ["a", "<=", "b"], "offset": "soon"})


@pytest.mark.parametrize("text", ["P1M", "P1Y", "P0.5D", "PT1.5M", "5"])
def test_an_offset_pandas_would_misread_is_refused(text):
    """pandas reads "P1M" (a month) as a minute, "P0.5D" as five days and
    "5" as five nanoseconds: each is refused, not read so."""
    with pytest.raises(ValueError, match="no months or years"):
        rule_from_json({"inequality": ["a", "<=", "b"], "offset": text})
    entry = {"inequality": ["a", "<=", "b"], "offset": "PT1.5S"}
    assert rule_from_json(entry).offset == pd.Timedelta("1.5s")


def test_whole_number_columns_are_moved_to_whole_numbers():
    rules = RuleSet(
        [Inequality("k", "<=", 3.5), Inequality("k", ">=", "m", offset=0.5)]
    )
    rows = pd.DataFrame({"k": [9, 0, 2], "m": [1, 1, 1]})
    out = rules.enforce(rows, random_state=0)
    assert out["k"].tolist() == [3, 2, 2]
    assert not rules.broken(out).to_numpy().any()


def test_implication_and_structural_zero_and_fixed_combinations():
    rows = pd.DataFrame(
        {
            "internet": ["No", "No", "DSL", "DSL"],
            "tv": ["Yes", "No internet service", "Yes", "No internet service"],
        }
    )
    implies = Implies({"internet": "No"}, {"tv": "No internet service"})
    assert implies.broken(rows).tolist() == [True, False, False, False]
    zero = StructuralZero({"internet": "DSL", "tv": ["No internet service"]})
    assert zero.broken(rows).tolist() == [False, False, False, True]
    fixed = FixedCombinations(
        ["internet", "tv"], [("No", "No internet service"), ("DSL", "Yes")]
    )
    assert fixed.broken(rows).tolist() == [True, False, False, True]
    out = RuleSet([implies, zero]).enforce(rows, random_state=0)
    assert not RuleSet([implies, zero]).broken(out).to_numpy().any()
    # rows that kept the rules are left as they were
    pd.testing.assert_frame_equal(out.iloc[[1, 2]], rows.iloc[[1, 2]])


def test_a_broken_row_is_redrawn_among_the_nearest_allowed_combinations():
    # one column changed at most; weighted by the rule-keeping rows: the
    # allowed "No, NIS" is 9 times as frequent as "DSL, Yes"
    rows = pd.DataFrame(
        {
            "internet": ["No"] * 9 + ["DSL"] + ["No"] * 200,
            "tv": ["No internet service"] * 9 + ["Yes"] * 201,
        }
    )
    rules = RuleSet([Implies({"internet": "No"}, {"tv": "No internet service"})])
    out = rules.enforce(rows, random_state=0)
    repaired = out.iloc[10:]
    assert not rules.broken(out).to_numpy().any()
    changed = (repaired != rows.iloc[10:]).sum(axis=1)
    assert (changed == 1).all()
    share = (repaired["tv"] == "No internet service").mean()
    assert 0.8 < share < 0.98  # 0.9 expected, 200 draws


def test_derived_column_from_an_expression_or_a_function():
    rows = pd.DataFrame({"mage": [20, 40]})
    assert Derived("mature", "mage >= 35").compute(rows).tolist() == [False, True]
    labelled = Derived(
        "mature",
        lambda df: np.where(df["mage"] >= 35, "mature mom", "younger mom"),
        inputs=["mage"],
    )
    assert labelled.compute(rows).tolist() == ["younger mom", "mature mom"]
    with pytest.raises(ValueError, match="needs inputs="):
        Derived("mature", lambda df: df["mage"] >= 35)


def test_derived_columns_are_computed_in_dependency_order_and_placed():
    rules = RuleSet(
        [Derived("c", "b * 2"), Derived("b", "a + 1")], columns=["a", "b", "c"]
    )
    out = rules.enforce(pd.DataFrame({"a": [1, 2]}), random_state=0)
    assert list(out.columns) == ["a", "b", "c"]
    assert out["c"].tolist() == [4, 6]


# -- clear errors


@pytest.mark.parametrize(
    ("rules", "match"),
    [
        (
            lambda: [Inequality("a", "<=", "b"), Inequality("b", "<=", "a", offset=-1)],
            "contradict",
        ),
        (lambda: [Inequality("a", ">=", 5), Inequality("a", "<=", 3)], "contradict"),
        (
            lambda: [
                Implies({"g": "x"}, {"h": "y"}),
                StructuralZero({"g": "x", "h": "y"}),
                FixedCombinations(["g", "h"], [("x", "y"), ("x", "z")]),
            ],
            "contradict",
        ),
        (lambda: [Derived("a", "b + 1"), Derived("b", "a + 1")], "cycle"),
        (lambda: [Derived("a", "b + 1"), Derived("a", "b + 2")], "defined twice"),
        (
            lambda: [Derived("d", "a + 1"), Inequality("d", "<=", 3)],
            "derived column 'd'",
        ),
        (
            lambda: [Inequality("a", "<=", 3), StructuralZero({"a": 1})],
            "both an Inequality",
        ),
        (lambda: [Inequality("a", "<", 3)], "op must be"),
        (lambda: [Implies({"a": 1}, {"a": 2})], "both its condition"),
    ],
)
def test_rules_that_cannot_hold_together_are_refused(rules, match):
    with pytest.raises(ValueError, match=match):
        RuleSet(rules())


def test_a_rule_naming_an_unknown_column_is_refused_at_fit():
    pipe = make_synthesis_pipeline(
        BooleanEncoder(epsilon=None, categories={"g": ["x", "y"]}),
        BootstrapSynthesizer(domain="boolean", random_state=0),
        rules=[StructuralZero({"g": "x", "colour": "red"})],
    )
    with pytest.raises(ValueError, match="names the column 'colour'"):
        pipe.fit(pd.DataFrame({"g": ["x", "y"] * 10}))
    assert not hasattr(pipe, "rules_")  # the fit left nothing behind


def test_an_inequality_on_a_text_column_and_an_array_are_refused():
    rules = RuleSet([Inequality("g", "<=", 3)])
    with pytest.raises(TypeError, match="not numeric"):
        rules.check_schema(pd.DataFrame({"g": ["x"]}))
    with pytest.raises(TypeError, match="pass a pandas DataFrame"):
        rules.check_schema(np.zeros((3, 2)))
    with pytest.raises(TypeError, match="not a rule"):
        RuleSet(["a <= b"])


def test_bounds_with_no_whole_number_between_them_are_refused_for_integers():
    rules = RuleSet([Inequality("k", ">=", 0.2), Inequality("k", "<=", 0.8)])
    rules.check_schema(pd.DataFrame({"k": [0.5]}))  # a decimal column: fine
    with pytest.raises(ValueError, match="whole numbers"):
        rules.check_schema(pd.DataFrame({"k": [1]}))


def test_whole_numbers_get_whole_values_beside_decimals():
    # x2 in [x0 + 3, x0 + 4] and x2 >= x3 - 3: with x0 = 2.5, x3 = 9.5 the
    # real interval is the point 6.5; the whole-number column is placed first
    rules = RuleSet(
        [
            Inequality("x2", ">=", "x0", offset=3),
            Inequality("x0", ">=", "x2", offset=-4),
            Inequality("x3", "<=", "x2", offset=3),
            Inequality("x0", ">=", 2.5),
        ]
    )
    rows = pd.DataFrame({"x0": [-4.5], "x2": [-1], "x3": [9.5]})
    out = rules.enforce(rows, random_state=0)
    assert not rules.broken(out).to_numpy().any()
    assert out["x2"].dtype == np.int64


def test_a_categorical_contradiction_is_found_on_the_declared_levels():
    # with an "other" level the two rules can hold (g = "z"); a category
    # dtype declares that g has only x and y
    rules = RuleSet(
        [StructuralZero({"g": "x", "h": "u"}), StructuralZero({"g": "y", "h": "u"})]
    )
    X = pd.DataFrame(
        {
            "g": pd.Categorical(["x"], categories=["x", "y"]),
            "h": pd.Categorical(["u"], categories=["u"]),
        }
    )
    with pytest.raises(ValueError, match="contradict"):
        rules.check_schema(X)


# -- every row keeps every rule: random rules, random tables


def _random_case(seed, n):
    """A table that breaks many rules, and consistent random rules: every rule
    is drawn so that a hidden witness row keeps it (so they can hold together)."""
    rng = np.random.default_rng(seed)
    n_num, n_cat = rng.integers(1, 5), rng.integers(1, 5)
    num = [f"x{i}" for i in range(n_num)]
    cat = [f"g{i}" for i in range(n_cat)]
    witness_num = {c: float(rng.integers(-10, 10)) for c in num}
    witness_cat = {c: rng.choice(LEVELS) for c in cat}
    rules = []
    for _ in range(rng.integers(1, 6)):
        left = rng.choice(num)
        gap = float(rng.integers(0, 5))
        if rng.random() < 0.5 and n_num > 1:
            right = rng.choice([c for c in num if c != left])
            offset = witness_num[left] - witness_num[right]
            if rng.random() < 0.5:
                rules.append(Inequality(left, "<=", right, offset=offset + gap))
            else:
                rules.append(Inequality(left, ">=", right, offset=offset - gap))
        elif rng.random() < 0.5:
            rules.append(Inequality(left, "<=", witness_num[left] + gap))
        else:
            rules.append(Inequality(left, ">=", witness_num[left] - gap))
    for _ in range(rng.integers(0, 5)):
        cols = list(rng.choice(cat, size=rng.integers(1, n_cat + 1), replace=False))
        kind = rng.integers(3)
        if kind == 0:  # an impossible cell the witness is not in
            cell = {c: rng.choice(LEVELS) for c in cols}
            if all(cell[c] == witness_cat[c] for c in cols):
                cell[cols[0]] = next(v for v in LEVELS if v != witness_cat[cols[0]])
            rules.append(StructuralZero(cell))
        elif kind == 1 and len(cols) > 1:
            condition = {cols[0]: rng.choice(LEVELS)}
            consequence = {c: rng.choice(LEVELS) for c in cols[1:]}
            if condition[cols[0]] == witness_cat[cols[0]]:
                consequence = {c: witness_cat[c] for c in cols[1:]}
            rules.append(Implies(condition, consequence))
        elif len(cols) > 1:
            combos = [tuple(witness_cat[c] for c in cols)]
            combos += [tuple(rng.choice(LEVELS, size=len(cols))) for _ in range(3)]
            rules.append(FixedCombinations(cols, combos))
    rules.append(Derived("total", " + ".join(num)))
    data = {}
    for c in num:
        values = rng.integers(-30, 30, n).astype(float)
        if rng.random() < 0.5:
            data[c] = values.astype(np.int64)
        else:
            values[rng.random(n) < 0.1] = np.nan
            data[c] = values / 2
    for c in cat:
        data[c] = rng.choice(LEVELS, n).astype(object)
        if rng.random() < 0.3:  # a missing value is a level of its own
            data[c][rng.random(n) < 0.1] = np.nan
    return pd.DataFrame(data), rules


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 120))
def test_every_row_keeps_every_rule(seed, n):
    X, rules = _random_case(seed, n)
    ruleset = RuleSet(rules).check_schema(X)
    out = ruleset.enforce(X, random_state=seed)
    assert len(out) == len(X)
    assert not ruleset.broken(out).to_numpy().any()
    assert out.drop(columns="total").dtypes.equals(X.dtypes)
    # rows that kept every rule are untouched; missing values stay missing
    complete = X.assign(total=rules[-1].compute(X))
    kept = ~ruleset.broken(complete).to_numpy().any(axis=1)
    pd.testing.assert_frame_equal(out[kept], complete[kept])
    numeric = [c for c in X.columns if c.startswith("x")]
    pd.testing.assert_frame_equal(out[numeric].isna(), X[numeric].isna())


# -- in the pipeline


def _pipe(rules, **kw):
    return make_synthesis_pipeline(
        BooleanEncoder(
            epsilon=None,
            bin_edges={"mage": [14, 20, 25, 30, 35, 40, 51], "weeks": [18, 37, 40, 46]},
            random_state=0,
        ),
        BootstrapSynthesizer(domain="boolean", random_state=0),
        rules=rules,
        **kw,
    )


def test_the_pipeline_samples_rows_that_keep_every_rule():
    X = _births()
    # the real rows break a declared rule: never checked (that would read
    # them); the synthetic rows keep it all the same
    X.loc[:9, "weeks"] = 20
    rules = [*BIRTH_RULES, Inequality("weeks", ">=", 24)]
    pipe = _pipe(rules).fit(X)
    out = pipe.sample(500, random_state=1)
    assert list(out.columns) == list(X.columns)
    assert out.dtypes.equals(X.dtypes)
    assert not pipe.rules_.broken(out).to_numpy().any()
    # the encoder never saw the derived columns
    assert list(pipe[0].feature_names_in_) == ["mage", "weeks"]
    pd.testing.assert_frame_equal(out, pipe.sample(500, random_state=1))
    assert pipe.transform(X).shape[0] == len(X)


def test_derived_columns_spend_no_budget():
    """The fit with a derived column is the fit without it: the same
    guarantee (the private domains' share too) and the same rows."""
    X = _births(1000)

    def fitted(rules, table):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(random_state=0),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
            rules=rules,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # coarse private domains
            return pipe.fit(table)

    with_rules = fitted(BIRTH_RULES, X)
    without = fitted(None, X.drop(columns=["mature", "premie"]))
    assert with_rules.privacy_guarantee_ == without.privacy_guarantee_
    assert with_rules.epsilon_ == 1.0
    rows = with_rules.sample(300, random_state=2)
    pd.testing.assert_frame_equal(
        rows[["mage", "weeks"]], without.sample(300, random_state=2)
    )
    assert (rows["mature"] == (rows["mage"] >= 35)).all()
    # the release file stores the rules (plan["rules"]), so it warns no more
    # that it does not, and its rows keep them
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        release = with_rules.to_release()
    # each derived rule bound to its column's dtype in the table (bool here)
    assert [rule_to_json(r) for r in release.rules().rules] == [
        {**rule_to_json(r), "dtype": "bool"} for r in BIRTH_RULES
    ]
    released = release.sample(300, random_state=2)
    assert not release.rules().broken(released).any(axis=None)


def test_clone_and_get_params_carry_the_rules():
    pipe = _pipe(BIRTH_RULES)
    assert pipe.get_params()["rules"] == BIRTH_RULES
    copy = clone(pipe)
    assert copy.rules == BIRTH_RULES and copy.rules is not pipe.rules
    copy.set_params(rules=None).fit(_births()[["mage", "weeks"]])
    assert copy.rules_ is None
    with pytest.raises(InvalidParameterError, match="'rules' parameter"):
        _pipe("mage >= 35").fit(_births())


def test_a_rule_set_is_accepted_as_rules():
    pipe = _pipe(RuleSet(BIRTH_RULES)).fit(_births())
    assert pipe.rules_.derived_columns == ("mature", "premie")
    assert not pipe.rules_.broken(pipe.sample(50, random_state=0)).to_numpy().any()


def test_a_lazy_sample_keeps_every_rule_chunk_by_chunk():
    pytest.importorskip("dask")
    pipe = _pipe([*BIRTH_RULES, Inequality("weeks", ">=", 30)]).fit(_births())
    lazy = pipe.sample(700, random_state=3, chunks=300)
    out = lazy.compute()
    assert len(out) == 700 and list(out.columns) == list(_births().columns)
    assert not pipe.rules_.broken(out).to_numpy().any()
    again = pipe.sample(700, random_state=3, chunks=300).compute()
    pd.testing.assert_frame_equal(out, again)


def test_rows_of_a_pipeline_without_an_encoder_keep_the_rules_too():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(0, 10, 200), "b": rng.uniform(0, 10, 200)})
    X["s"] = X["a"] + X["b"]
    pipe = make_synthesis_pipeline(
        BootstrapSynthesizer(bounds=(0, 10), random_state=0),
        rules=[Derived("s", "a + b"), Inequality("a", "<=", "b")],
    ).fit(X)
    out = pipe.sample(100, random_state=0)
    assert list(out.columns) == ["a", "b", "s"]
    assert not pipe.rules_.broken(out).to_numpy().any()
    assert np.isfinite(pipe.score(X))


# ------------------------------------------------------------ safe expressions
def test_a_safe_expression_evaluates_its_closed_vocabulary():
    import pickle

    from skdp_synth.rules import Expression

    rows = pd.DataFrame(
        {"a": pd.array([1, None, 40], dtype="Int64"), "s": ["x", "y", "z"]}
    )
    cases = {
        "a >= 35": [False, False, True],  # missing compares false
        "not a >= 35": [True, True, False],
        "10 <= a < 50": [False, False, True],
        "s in ['x', 'z']": [True, False, True],
        "s not in ('x',)": [False, True, True],
        "a > 1 and s == 'z' or s == 'x'": [True, False, True],
        "'old' if a >= 35 else 'young'": ["young", "young", "old"],
    }
    for text, expected in cases.items():
        assert list(Expression(text)(rows)) == expected, text
    assert list(Expression("-a * 2 + 1")(rows).fillna(0)) == [-1, 0, -79]
    expression = Expression("a + 1")
    assert expression.names == ("a",)
    assert pickle.loads(pickle.dumps(expression)) == expression
    # as a Derived column's function, it reads its names alone
    rule = Derived("old", Expression("a >= 35"), inputs=("a",))
    assert rule.compute(rows).tolist() == [False, False, True]


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('echo x')",
        "a.__class__",
        "a[0]",
        "(lambda: a)()",
        "__builtins__ + a",
        "a if b else {}",
        "a in b",
        "a == None",
        "3 > 2",
    ],
)
def test_a_safe_expression_refuses_everything_else(text):
    from skdp_synth.rules import Expression

    with pytest.raises(ValueError, match="not allowed|reads no column"):
        Expression(text)


def test_arithmetic_in_a_safe_expression_is_on_numbers_only():
    from skdp_synth.rules import Expression

    rows = pd.DataFrame({"a": [1, 2], "s": ["x", "y"]})
    with pytest.raises(ValueError, match="numbers only"):
        Expression("s * 1000000000")(rows)
    with pytest.raises(OverflowError):  # a float power: no unbounded integer
        Expression("a + 10 ** 10 ** 10")(rows)


def test_the_pipeline_samples_stays_that_end_after_they_start():
    rng = np.random.default_rng(0)
    n = 1500
    admitted = pd.Timestamp("2024-01-01") + pd.to_timedelta(
        rng.integers(0, 300, n), "D"
    )
    stays = pd.DataFrame(
        {
            "admitted": admitted.as_unit("s"),
            "discharged": (
                admitted + pd.to_timedelta(rng.integers(1, 20, n), "D")
            ).as_unit("s"),
            "ward": rng.choice(["a", "b"], n),
        }
    )
    rule = Inequality("discharged", ">=", "admitted", offset=pd.Timedelta("1D"))
    pipe = make_synthesis_pipeline(
        BooleanEncoder(
            epsilon="auto",
            random_state=0,
            datetime_unit="D",
            bounds={
                c: ("2024-01-01", "2025-01-01") for c in ("admitted", "discharged")
            },
        ),
        ProjectedGaussianRelease(epsilon=1.0, random_state=0),
        rules=[rule],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(stays)
    rows = pipe.sample(2000, random_state=1)
    assert dict(rows.dtypes) == dict(stays.dtypes)
    assert not rule.broken(rows).any()
    assert pipe.epsilon_ == 1.0  # nothing spent on the rule
    # the release keeps out of the pairs of bins the rule rules out (the
    # bins' edges in seconds, as the rule compares)
    zeros = pipe[-1].structural_zeros_
    assert len(zeros) == 1 and zeros[0][1].any() and not zeros[0][1].all()


@pytest.mark.parametrize("dtype", ["bool[pyarrow]", "boolean", "int64"])
def test_a_derived_column_comes_back_in_its_dtype(dtype):
    """Recomputed from an expression, a derived column came back in the
    computation's dtype (NumPy ``bool``) whatever the table's was: a
    ``bool[pyarrow]`` or ``boolean`` column, or flags stored as 0/1
    integers. The pipeline binds the rule to the column's dtype, and the
    release file keeps it."""
    if dtype == "bool[pyarrow]":
        pytest.importorskip("pyarrow")
    X = _births(800)
    X["mature"] = X["mature"].astype(dtype)
    pipe = make_synthesis_pipeline(
        BooleanEncoder(random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
        rules=[Derived("mature", "mage >= 35")],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X)
        release = pipe.to_release()
    for rows in (pipe.sample(200, random_state=0), release.sample(200, random_state=0)):
        assert rows["mature"].dtype == X["mature"].dtype
        assert (rows["mature"].astype(bool) == (rows["mage"] >= 35)).all()
    assert rule_to_json(release.rules().rules[0])["dtype"] == dtype
    with pytest.raises(ValueError, match="plain dtype name"):
        rule_from_json({"derived": "m", "expression": "a > 1", "dtype": "x, y"})
