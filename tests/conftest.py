"""Shared fixtures. Tests run with warnings as errors (setup.cfg)."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def boolean_data(rng):
    """300 x 8 Boolean rows with some correlation between columns."""
    base = rng.random((300, 1))
    return (rng.random((300, 8)) < 0.3 + 0.4 * base).astype(np.int64)
