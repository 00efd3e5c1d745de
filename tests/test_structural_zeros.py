"""Structural zeros reach the release before it fits its rows, and release
files carry the pipeline's rules."""

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.blocks import Blocks
from skdp_synth.exceptions import MalformedReleaseError
from skdp_synth.generator import Measurement, fit_rows
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.release import Release
from skdp_synth.rules import (
    OTHER,
    Derived,
    FixedCombinations,
    Implies,
    Inequality,
    RuleSet,
    StructuralZero,
    impossible_cells,
    rule_from_json,
    rule_to_json,
)

SERVICES = ["security", "backup", "tv"]
NIS = "No internet service"


def _subscribers(n=1500, seed=0):
    """A churn-like table: "No" internet service holds "No internet service"
    in the three service columns, and only then."""
    rng = np.random.default_rng(seed)
    internet = rng.choice(["DSL", "Fiber", "No"], size=n, p=[0.35, 0.4, 0.25])
    frame = {"internet": internet}
    for k, c in enumerate(SERVICES):
        yes = rng.random(n) < np.where(internet == "Fiber", 0.3 + 0.2 * k, 0.5)
        frame[c] = np.where(internet == "No", NIS, np.where(yes, "Yes", "No"))
    frame["churn"] = np.where(
        rng.random(n) < np.where(internet == "Fiber", 0.4, 0.15), "Yes", "No"
    )
    frame["age"] = np.clip(rng.normal(45, 12, n).round(), 18, 90)
    frame["tenure"] = np.minimum(rng.integers(0, 60, n), frame["age"] - 18)
    return pd.DataFrame(frame)


RULES = [
    Implies({"internet": "No"}, {c: NIS for c in SERVICES}),
    Implies({"internet": ["DSL", "Fiber"]}, {c: ["No", "Yes"] for c in SERVICES}),
    Inequality("tenure", "<=", "age", offset=-18),
]
CATEGORIES = {
    "internet": ["DSL", "Fiber", "No"],
    "churn": ["No", "Yes"],
    **{c: ["No", "Yes", NIS] for c in SERVICES},
}
EDGES = {"age": np.linspace(18, 90, 9).tolist(), "tenure": np.linspace(0, 72, 9)}


def _pipe(rules=RULES, epsilon=1.0, seed=0, **params):
    return make_synthesis_pipeline(
        BooleanEncoder(categories=CATEGORIES, bin_edges=EDGES),
        ProjectedGaussianRelease(epsilon=epsilon, random_state=seed, **params),
        rules=rules,
    )


# -- the map from rules to encoded cells


def test_implication_makes_the_cells_of_each_consequence_impossible():
    levels = {
        "internet": [["DSL"], ["No"]],
        "tv": [["No"], ["Yes"], [NIS]],
        "backup": [["No"], [NIS]],
    }
    rule = Implies({"internet": "No"}, {"tv": NIS, "backup": NIS})
    found = dict(impossible_cells([rule], levels))
    assert set(found) == {("internet", "tv"), ("internet", "backup")}
    np.testing.assert_array_equal(
        found[("internet", "tv")], [[False, False, False], [True, True, False]]
    )
    np.testing.assert_array_equal(found[("internet", "backup")], [[0, 0], [1, 0]])
    zero = StructuralZero({"tv": "Yes", "backup": NIS})
    ((_, mask),) = impossible_cells([zero], levels)
    np.testing.assert_array_equal(mask, [[0, 0], [0, 1], [0, 0]])
    fixed = FixedCombinations(["internet", "backup"], [("DSL", "No"), ("No", NIS)])
    ((_, mask),) = impossible_cells([fixed], levels)
    np.testing.assert_array_equal(mask, [[0, 1], [1, 0]])


def test_an_other_level_is_impossible_only_when_every_value_it_holds_is():
    """The encoder's "other" level stands for every value it did not name,
    among them a value the rule names: not impossible."""
    levels = {"internet": [["DSL"], ["other", OTHER]], "tv": [["No"], [NIS]]}
    rule = Implies({"internet": "No"}, {"tv": NIS})
    assert impossible_cells([rule], levels) == []
    # a missing level is a value of its own, equal to no named one
    levels = {"internet": [["DSL"], ["No"], [None]], "tv": [["No"], [NIS]]}
    ((_, mask),) = impossible_cells([rule], levels)
    np.testing.assert_array_equal(mask, [[0, 0], [1, 0], [0, 0]])


def test_an_inequality_makes_the_cells_of_bins_that_cannot_hold_it_impossible():
    inf = np.inf
    bins = {
        "tenure": [(-inf, 10.0), (10.0, 20.0), (20.0, inf), None],
        "age": [(-inf, 15.0), (15.0, inf)],
    }
    ((cols, mask),) = impossible_cells([Inequality("tenure", "<=", "age")], {}, bins)
    # tenure's smallest value in its bin above age's largest in its bin
    assert cols == ("tenure", "age")
    np.testing.assert_array_equal(mask, [[0, 0], [0, 0], [1, 0], [0, 0]])
    ((cols, mask),) = impossible_cells([Inequality("tenure", "<=", 12)], {}, bins)
    assert cols == ("tenure",)
    np.testing.assert_array_equal(mask, [0, 0, 1, 0])


# -- the generator


def _pair_measurements(truth, sigma, rng):
    """Noisy identity measurements of every pair table of level rows."""
    a = truth.shape[1]
    levels = truth.max(axis=0) + 1
    out = []
    for j in range(a):
        for k in range(j + 1, a):
            T = np.zeros((levels[j], levels[k]))
            np.add.at(T, (truth[:, j], truth[:, k]), 1)
            noisy = T.ravel() + rng.normal(0, sigma, T.size)
            out.append(Measurement((j, k), None, noisy, sigma))
    return out, levels


def test_fitted_rows_put_exactly_zero_on_impossible_cells():
    rng = np.random.default_rng(0)
    n = 600
    a = rng.integers(0, 3, n)
    b = np.where(a == 2, 2, rng.integers(0, 2, n))
    c = np.where(a == 2, 1, rng.integers(0, 3, n))
    truth = np.column_stack([a, b, c])
    measurements, levels = _pair_measurements(truth, 15.0, rng)
    ab = np.zeros((3, 3), bool)
    ab[2, :2] = ab[:2, 2] = True
    ac = np.zeros((3, 3), bool)
    ac[2, [0, 2]] = True
    zeros = [((0, 1), ab), ((0, 2), ac)]
    free = fit_rows(measurements, levels, n, rng=np.random.default_rng(1))
    held = fit_rows(measurements, levels, n, rng=np.random.default_rng(1), zeros=zeros)
    # the noise puts rows in impossible cells without the zeros ...
    assert ab[free.rows[:, 0], free.rows[:, 1]].any()
    for (j, k), mask in zeros:
        T = np.zeros(mask.shape)
        np.add.at(T, (held.rows[:, j], held.rows[:, k]), 1)
        assert T[mask].sum() == 0  # ... and none with them
    assert held.rows.shape == (n, 3)


def test_no_zeros_is_the_descent_as_before():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 3, size=(300, 3))
    measurements, levels = _pair_measurements(truth, 5.0, rng)
    before = fit_rows(measurements, levels, 300, rng=np.random.default_rng(7))
    for zeros in (None, []):
        again = fit_rows(
            measurements, levels, 300, rng=np.random.default_rng(7), zeros=zeros
        )
        np.testing.assert_array_equal(again.rows, before.rows)


# -- the release


def _encoded(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = np.where(a == 0, 2, rng.integers(0, 2, n))
    c = rng.integers(0, 2, n)
    blocks = Blocks.from_spec(
        [
            {"name": "a", "kind": "onehot", "width": 3},
            {"name": "b", "kind": "onehot", "width": 3},
            {"name": "c", "kind": "binary", "width": 1},
        ]
    )
    return blocks.to_bits(np.column_stack([a, b, c])), blocks


MASK = np.array([[1, 1, 0], [0, 0, 1], [0, 0, 1]], dtype=bool)


@pytest.mark.parametrize("epsilon", [0.3, 1.0])
def test_the_guarantee_and_the_noise_are_those_without_the_zeros(epsilon):
    """Post-processing: the same plan, noise scales, released answers and
    guarantee; the model's rows (what the release file holds) put 0 mass on
    the impossible cells, and so do the sampled rows."""
    X, blocks = _encoded()
    fits = [
        ProjectedGaussianRelease(
            epsilon=epsilon, blocks=blocks, structural_zeros=z, random_state=0
        ).fit(X)
        for z in (None, [(("a", "b"), MASK)])
    ]
    without, held = fits
    assert held.epsilon_ == without.epsilon_ == epsilon
    assert held.delta_ == without.delta_
    assert held.privacy_guarantee_ == without.privacy_guarantee_
    assert held.selection_ == without.selection_
    np.testing.assert_array_equal(held.residual_scales_, without.residual_scales_)
    np.testing.assert_array_equal(held.released_, without.released_)
    assert without.structural_zeros_ == []
    ((attrs, mask),) = held.structural_zeros_
    assert attrs == (0, 1)
    np.testing.assert_array_equal(mask, MASK)
    points, weights = held._synthetic_distribution()
    L = blocks.to_levels(points)
    assert weights[MASK[L[:, 0], L[:, 1]]].sum() == 0
    rows = blocks.to_levels(held.sample(3000, random_state=1))
    assert not MASK[rows[:, 0], rows[:, 1]].any()
    release = held.to_release()
    L = blocks.to_levels(release.arrays["points"])
    assert release.arrays["weights"][MASK[L[:, 0], L[:, 1]]].sum() == 0


def test_zeros_that_leave_no_cell_are_refused_before_the_data_is_read():
    X, blocks = _encoded(200)
    est = ProjectedGaussianRelease(
        blocks=blocks, structural_zeros=[(("a", "c"), np.ones((3, 2), bool))]
    )
    with pytest.raises(ValueError, match="every cell of the table"):
        est.fit(X)
    assert not hasattr(est, "plan_") and not hasattr(est, "released_")
    for bad, match in [
        ([(("a", "b"), np.ones((3, 2), bool))], "has shape"),
        ([(("a", "nope"), MASK)], "unknown attribute"),
        ([(("a", "b"), MASK.astype(int))], "must be boolean"),
        ([("a",)], "expected"),
    ]:
        with pytest.raises(ValueError, match=match):
            ProjectedGaussianRelease(blocks=blocks, structural_zeros=bad).fit(X)


# -- the pipeline


def test_the_pipeline_hands_its_rules_to_the_release_as_zeros():
    X = _subscribers()
    pipe = _pipe().fit(X)
    final = pipe._final_estimator
    assert final.structural_zeros is None  # the parameter as it was
    names = list(final.blocks_.names)
    found = {tuple(names[j] for j in attrs) for attrs, _ in final.structural_zeros_}
    assert {("internet", c) for c in SERVICES} <= found
    union = {}
    for attrs, mask in final.structural_zeros_:
        key = tuple(names[j] for j in attrs)
        union[key] = union.get(key, False) | mask
    for c in SERVICES:
        # levels: DSL, Fiber, No x No, Yes, NIS (the two implications together)
        np.testing.assert_array_equal(
            union[("internet", c)], [[0, 0, 1], [0, 0, 1], [1, 1, 0]]
        )
    # the release's own rows keep the rules before any repair ...
    raw = pipe.steps[0][1].inverse_transform(final.sample(3000, random_state=2))
    categorical = RuleSet(RULES[:2])
    assert not categorical.broken(raw).any(axis=None)
    # ... and the pipeline's rows every rule, as before
    rows = pipe.sample(3000, random_state=2)
    assert not RuleSet(RULES).broken(rows).any(axis=None)
    # the same guarantee as the fit without the rules
    plain = _pipe(rules=None).fit(X)
    assert pipe.privacy_guarantee_ == plain.privacy_guarantee_


def test_rows_moved_off_a_dropped_level_keep_the_zeros():
    """Private domains with a learned missing and "other" level: the levels
    the release does not support are dropped from the model's rows
    afterwards (their rows moved to levels drawn from the others), and the
    moved rows keep the zeros (62 model rows broke them before)."""
    from skdp_synth.generator import Zeros

    X = _subscribers(3000)
    X.loc[::37, "tv"] = None
    pipe = make_synthesis_pipeline(
        BooleanEncoder(random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, random_state=0),
        rules=RULES,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coarse private domains
        pipe.fit(X)
    final = pipe._final_estimator
    assert final.structural_zeros_
    zeros = Zeros(final.structural_zeros_, final.blocks_.n_levels)
    assert not zeros.broken(final._model_rows).any()
    raw = pipe.steps[0][1].inverse_transform(final.sample(2000, random_state=0))
    assert not RuleSet(RULES[:2]).broken(raw).any(axis=None)


def test_a_rule_that_forbids_every_cell_of_its_columns_is_refused_clearly():
    """The declared levels leave the rule nothing: refused at fit, naming the
    columns, before the release reads a row."""
    rule = StructuralZero({"churn": ["No", "Yes"], "internet": ["DSL", "Fiber"]})
    also = StructuralZero({"churn": ["No", "Yes"], "internet": "No"})
    pipe = _pipe(rules=[rule, also])
    with pytest.raises(ValueError, match=r"on \['internet', 'churn'\] together"):
        pipe.fit(_subscribers(400))
    assert not hasattr(pipe._final_estimator, "released_")
    # one rule alone that forbids every cell of its columns' table
    whole = StructuralZero({"churn": ["No", "Yes"]})
    with pytest.raises(ValueError, match=r"every cell of the table of \['churn'\]"):
        _pipe(rules=[whole]).fit(_subscribers(400))


# -- the release file


def test_rules_survive_save_and_load_and_the_rows_keep_them(tmp_path):
    X = _subscribers()
    X["senior"] = X["age"] >= 65
    rules = [*RULES, Derived("senior", "age >= 65")]
    pipe = _pipe(rules=rules).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        release = pipe.to_release()
    path = tmp_path / "release.npz"
    release.save(path)
    loaded = Release.load(path)
    # the derived rule is stored bound to its column's dtype (bool)
    assert [rule_to_json(r) for r in loaded.rules().rules] == [
        {**rule_to_json(r), **({"dtype": "bool"} if r.kind == "derived" else {})}
        for r in rules
    ]
    rows = loaded.sample(2500, random_state=0)
    assert list(rows.columns) == list(X.columns)
    assert not RuleSet(rules).broken(rows).any(axis=None)
    chunks = list(loaded.iter_sample(2500, chunk_rows=700, random_state=0))
    pd.testing.assert_frame_equal(pd.concat(chunks), rows)
    # conditional rows on the reloaded release keep the rules too
    given = loaded.sample(400, random_state=1, given={"internet": "No"})
    assert len(given) == 400 and (given["internet"] == "No").all()
    assert (given[SERVICES] == NIS).all(axis=None)
    assert not RuleSet(rules).broken(given).any(axis=None)
    encoded = loaded.sample(50, random_state=0, decode=False)
    assert encoded.shape == (50, release.arrays["points"].shape[1])


def test_a_release_without_rules_still_loads(tmp_path):
    pipe = _pipe(rules=None).fit(_subscribers(600))
    release = pipe.to_release()
    assert "rules" not in release.plan and release.rules() is None
    release.save(tmp_path / "r.npz")
    assert Release.load(tmp_path / "r.npz").rules() is None


@pytest.mark.parametrize(
    "entry",
    [
        {"derived": "x", "expression": "__import__('os').system('ls')"},
        {"implies": [{"internet": "No"}]},
        {"structural_zero": {"internet": {"nested": 1}}},
        {"inequality": ["tenure", "<", "age"]},
        {"implies": [{"nope": "No"}, {"tv": "Yes"}]},
        "internet == 'No'",
    ],
)
def test_a_tampered_rules_entry_is_refused(tmp_path, entry):
    release = _pipe().fit(_subscribers(600)).to_release()
    plan = dict(release.plan)
    plan["rules"] = {"rules": [entry], "columns": None}
    tampered = dataclasses.replace(release, plan=plan)
    tampered.save(tmp_path / "t.npz")  # a fresh content hash: only the rules fail
    with pytest.raises(MalformedReleaseError, match="plan.rules"):
        Release.load(tmp_path / "t.npz")


def test_json_form_round_trips_every_kind():
    rules = [
        Derived("senior", "age >= 65"),
        Inequality("tenure", "<=", "age", offset=-18),
        Inequality("age", ">=", 18),
        Implies({"internet": "No"}, {"tv": NIS, "backup": [NIS]}),
        StructuralZero({"sex": "M", "pregnant": "yes"}),
        FixedCombinations(["city", "state"], [("Austin", "TX"), ("Boston", "MA")]),
    ]
    for rule in rules:
        entry = rule_to_json(rule)
        assert rule_to_json(rule_from_json(entry)) == entry
    assert rule_to_json(Derived("y", lambda df: df["x"], inputs=["x"])) is None


def test_a_redraw_into_an_integer_column_keeps_its_dtype_without_a_warning():
    """Object values written into an int64 column warned (pandas' "incompatible
    dtype", an error in a later pandas)."""
    frame = pd.DataFrame(
        {"phone": [0, 1, 0, 1], "lines": ["No", "None", "None", "Yes"]}
    )
    rules = RuleSet(
        [
            Implies({"phone": 0}, {"lines": "None"}),
            Implies({"phone": 1}, {"lines": ["No", "Yes"]}),
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = rules.enforce(frame, random_state=0)
    assert out["phone"].dtype == np.int64
    assert not rules.broken(out).any(axis=None)
