"""The empirical privacy audit: valid lower bounds, and it catches bugs."""

import numpy as np
import pytest

from skdp_synth.audit import audit_epsilon, clopper_pearson
from skdp_synth.mechanisms import NoiseSource


def test_clopper_pearson_edges():
    assert clopper_pearson(0, 10, 0.05)[0] == 0.0
    assert clopper_pearson(10, 10, 0.05)[1] == 1.0
    lo, hi = clopper_pearson(30, 100, 0.025)
    assert lo < 0.3 < hi
    with pytest.raises(ValueError):
        clopper_pearson(5, 3, 0.05)


def _laplace_runs(scale, runs, seed):
    """A counting query (sensitivity 1) on neighbours, privatised by Laplace."""
    src = NoiseSource(seed)
    return src.laplace(np.zeros(runs), scale), src.laplace(np.ones(runs), scale)


def test_audit_accepts_a_correct_laplace_mechanism():
    # epsilon = 1/scale = 1. The bound exceeds the truth with probability <= 0.05
    # (alpha); at this fixed seed it does not.
    a, b = _laplace_runs(1.0, 20000, 0)
    result = audit_epsilon(a, b, alpha=0.05)
    assert result.epsilon_lower <= 1.0
    assert result.epsilon_lower > 0.7  # and it is not vacuous


def test_audit_flags_a_planted_bug_half_the_noise():
    # claimed epsilon = 1, but the noise is halved: true epsilon = 2
    a, b = _laplace_runs(0.5, 20000, 1)
    assert audit_epsilon(a, b, alpha=0.05).epsilon_lower > 1.0


def test_audit_with_delta_and_input_checks():
    a, b = _laplace_runs(1.0, 4000, 2)
    assert (
        audit_epsilon(a, b, delta=0.01).epsilon_lower
        <= audit_epsilon(a, b).epsilon_lower
    )
    with pytest.raises(ValueError, match="at least 4"):
        audit_epsilon([1, 2], [1, 2])
