"""Tables too large for the generator: refused for declared levels, left out
of the workload (with a warning) for levels an encoder learned privately."""

import dataclasses
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.exceptions import CoarseDomainWarning
from skdp_synth.gaussian_release._planning import attribute_tables, fitting_tables
from skdp_synth.gaussian_release._rules import ReleaseRules
from skdp_synth.gaussian_release._values import ReleaseSpec
from skdp_synth.generator import MAX_TABLE_CELLS
from skdp_synth.preprocessing import BooleanEncoder

REFUSAL = r"cells, more than the 2000 the generator can fit"


def _frame(n=30_000, seed=0):
    # 120 x 25 frequent levels: found by the encoder's private domains at
    # epsilon 1, so the pair has over 2,000 cells
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "wide": rng.choice([f"w{i:03d}" for i in range(120)], n),
            "mid": rng.choice([f"m{i:02d}" for i in range(25)], n),
            "small": rng.choice(["x", "y", "z"], n),
        }
    )


def _fit(df, **release):
    pipe = make_synthesis_pipeline(
        BooleanEncoder(random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0, **release),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe.fit(df)
    return pipe, caught


def _cells(levels, S):
    return math.prod(int(levels[j]) for j in S)


@pytest.mark.parametrize("selection", ["auto", "none", "mst"])
def test_learned_levels_leave_the_oversized_pair_out(selection):
    df = _frame()
    pipe, caught = _fit(df, selection=selection)
    release = pipe[-1]
    levels = release.blocks_.n_levels
    names = [str(n) for n in release.blocks_.names]
    big = (names.index("wide"), names.index("mid"))
    assert _cells(levels, big) > MAX_TABLE_CELLS  # the case refused before
    # the plan's workload and every measured table fit the generator
    assert tuple(sorted(big)) not in release.plan_.workload.tables
    assert all(
        _cells(levels, S) <= MAX_TABLE_CELLS for S in release.plan_.workload.tables
    )
    assert all(_cells(levels, S) <= MAX_TABLE_CELLS for S in release.workload_.tables)
    # the warning names the table, its released level counts and the fix
    msgs = [
        str(w.message) for w in caught if issubclass(w.category, CoarseDomainWarning)
    ]
    left_out = [m for m in msgs if "left out of the workload" in m]
    assert len(left_out) == 1
    assert (
        f"'wide' ({levels[big[0]]} levels) x 'mid' ({levels[big[1]]} levels)"
        in (left_out[0])
    )
    assert "Declare fewer levels for 'wide'" in left_out[0]
    # rows come back, and the mark is the fit's only
    rows = pipe.sample(50)
    assert list(rows.columns) == list(df.columns) and len(rows) == 50
    assert not hasattr(release, "_levels_learned")


def test_target_three_way_tables_fit_the_generator():
    pipe, _ = _fit(_frame(), target="small")
    release = pipe[-1]
    levels = release.blocks_.n_levels
    assert all(
        _cells(levels, S) <= MAX_TABLE_CELLS for S in release.plan_.workload.tables
    )
    assert len(pipe.sample(20)) == 20


def _declared(columns=("wide", "mid", "small")):
    df = _frame(n=3_000)[list(columns)]
    enc = BooleanEncoder(
        categories={c: sorted(df[c].unique()) for c in df.columns}, random_state=0
    )
    return df, enc


def test_declared_levels_are_still_refused_before_the_data():
    df, enc = _declared()
    blocks = enc.fit(df).blocks_
    est = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0)
    with pytest.raises(ValueError, match=REFUSAL):
        est.make_plan(len(df), blocks.n_features, blocks=blocks)
    pipe = make_synthesis_pipeline(enc, est)
    with pytest.raises(ValueError, match="'wide' \\(120 levels\\) x 'mid' \\(25"):
        pipe.fit(df)
    assert not hasattr(pipe[-1], "_levels_learned")


def _spec(blocks, **params):
    est = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, **params)
    est.blocks_ = blocks
    return dataclasses.replace(ReleaseSpec.of(est), levels_learned=True)


def test_fitting_tables_refuses_when_nothing_fits():
    df, enc = _declared(("wide", "mid"))
    blocks = enc.fit(df).blocks_
    with pytest.raises(ValueError, match=REFUSAL):
        attribute_tables(_spec(blocks), ReleaseRules())


def test_an_attribute_in_no_table_keeps_its_one_way_table():
    df = pd.DataFrame(
        {
            "a": [f"a{i % 50}" for i in range(100)],
            "b": [f"b{i % 45}" for i in range(100)],
            "c": [f"c{i % 48}" for i in range(100)],
        }
    )
    # the pairs of a, b, c are over 2,000 cells; those with s fit
    df["s"] = ["u", "v"] * 50
    blocks = (
        BooleanEncoder(categories={c: sorted(df[c].unique()) for c in df.columns})
        .fit(df)
        .blocks_
    )
    weight = {S: 1.0 for S in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]}
    with pytest.warns(CoarseDomainWarning, match="3 of the 6 2-way tables have"):
        kept = fitting_tables(blocks, 2, weight)
    assert sorted(kept) == [(0, 3), (1, 3), (2, 3)]
    # no pair fits 'wide' below: its 1-way table is measured instead
    df2 = pd.DataFrame(
        {
            "wide": [f"w{i % 1500}" for i in range(3000)],
            "s": ["u", "v"] * 1500,
            "t": ["p", "q", "r"] * 1000,
        }
    )
    blocks = (
        BooleanEncoder(categories={c: sorted(df2[c].unique()) for c in df2.columns})
        .fit(df2)
        .blocks_
    )
    with pytest.warns(CoarseDomainWarning, match="or alone"):
        kept = fitting_tables(blocks, 2, {(0, 1): 1.0, (0, 2): 1.0, (1, 2): 1.0})
    assert sorted(kept) == [(0,), (1, 2)]


def test_fitting_tables_keeps_a_workload_that_fits():
    df, enc = _declared(("mid", "small"))
    blocks = enc.fit(df).blocks_
    weight = {(0, 1): 1.0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fitting_tables(blocks, 2, weight) is weight
