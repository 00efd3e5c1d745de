"""Shared fixtures. Tests run with warnings as errors (setup.cfg)."""

import os

import numpy as np
import pytest
from hypothesis import settings

# Property tests draw the same examples on every run and machine, so CI's
# verdict does not depend on a random draw (a clean clone once found a
# subnormal-bounds bug that no earlier run had drawn). To explore with fresh
# examples: HYPOTHESIS_PROFILE=explore (then add what fails as a test).
settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False, max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def boolean_data(rng):
    """300 x 8 Boolean rows with some correlation between columns."""
    base = rng.random((300, 1))
    return (rng.random((300, 8)) < 0.3 + 0.4 * base).astype(np.int64)


@pytest.fixture(autouse=True)
def _seed_global_numpy_rng():
    """Seed NumPy's global RNG before every test.

    scikit-learn's estimator checks draw from it unseeded (e.g.
    ``check_methods_sample_order_invariance`` shuffles rows with
    ``np.random.permutation``). For ``DampedPrivateSynthesizer`` that check
    is an expected failure (``transform`` returns a synthetic sample) that
    still passed for about 1 global state in 8 (synthetic rows that coincide
    under the shuffle), which turned the strict xfail into a random red run.
    A fixed global state makes every such check deterministic.
    """
    np.random.seed(0)  # noqa: NPY002 (the legacy global RNG is what the checks use)


@pytest.fixture
def test_method(monkeypatch):
    """Two test-only CLI methods (``tests/_dummy.py``) in the registry."""
    from skdp_synth.cli import _registry as _registry
    from skdp_synth.cli._registry import Method

    methods = dict(_registry.METHODS)
    methods["bootstrap-test"] = Method(
        name="bootstrap-test",
        target="_dummy:BootstrapSynthesizer",
        summary="test only",
        guarantee="anonymity",
        demo_params={"domain": "boolean"},
    )
    methods["noisy-mean-test"] = Method(
        name="noisy-mean-test",
        target="_dummy:NoisyMeanSynthesizer",
        summary="test only",
        guarantee="epsilon-DP",
        demo_params={"domain": "boolean", "epsilon": 1.0},
    )
    monkeypatch.setattr(_registry, "METHODS", methods)
    return methods


@pytest.fixture
def auto_estimates_calls(monkeypatch):
    """Every call of ``selection="auto"``'s expected errors
    (``gaussian_release._plan_choice.auto_estimates``), as ``(args, kwargs)``,
    in order: what the choice was allowed to read."""
    from skdp_synth.gaussian_release import _plan_choice

    calls = []
    original = _plan_choice.auto_estimates

    def spy(*args, **kw):
        calls.append((args, kw))
        return original(*args, **kw)

    monkeypatch.setattr(_plan_choice, "auto_estimates", spy)
    return calls
