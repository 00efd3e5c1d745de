"""SynthesisPipeline: sample decodes through the encoders."""

import numpy as np
import pandas as pd
import pytest
from _dummy import BootstrapSynthesizer
from sklearn.preprocessing import StandardScaler

from skdp_synth import SynthesisPipeline, make_synthesis_pipeline
from skdp_synth.preprocessing import BooleanEncoder


def _table(n=60):
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "colour": rng.choice(["red", "green"], n),
            "age": rng.integers(18, 90, n),
        }
    )


def test_sample_returns_the_input_schema():
    df = _table()
    enc = BooleanEncoder(
        categories={"colour": ["red", "green", "blue"]},
        bin_edges={"age": [0, 30, 60, 120]},
        random_state=0,
    )
    pipe = make_synthesis_pipeline(
        enc, BootstrapSynthesizer(domain="boolean", random_state=0)
    )
    assert isinstance(pipe, SynthesisPipeline)
    pipe.fit(df)
    out = pipe.sample(25)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["colour", "age"]
    assert out.dtypes.tolist() == df.dtypes.tolist()
    assert len(out) == 25
    assert out["colour"].isin(["red", "green", "blue"]).all()
    # reproducible with a fixed random_state
    pd.testing.assert_frame_equal(out, pipe.sample(25))


def test_sample_inverts_numeric_preprocessing():
    rng = np.random.default_rng(1)
    X = rng.uniform(10, 20, size=(80, 3))
    pipe = make_synthesis_pipeline(
        StandardScaler(), BootstrapSynthesizer(domain="box", random_state=0)
    ).fit(X)
    out = pipe.sample(80)
    # a bootstrap of the scaled rows, unscaled: rows of X
    assert all(any(np.allclose(row, x) for x in X) for row in out[:10])


def test_steps_without_inverse_are_reported():
    from sklearn.preprocessing import Binarizer

    pipe = make_synthesis_pipeline(
        Binarizer(), BootstrapSynthesizer(domain="boolean", random_state=0)
    ).fit(np.random.default_rng(0).normal(size=(20, 2)))
    with pytest.raises(TypeError, match="inverse_transform"):
        pipe.sample(3)
