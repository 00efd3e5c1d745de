"""The published synthesizer checks pass on a correct synthesizer and catch
broken ones (each broken dummy violates one rule of the contract)."""

import numpy as np
import pytest
from _dummy import BootstrapSynthesizer, NoisyMeanSynthesizer

from skdp_synth.utils.estimator_checks import (
    check_sample_reproducible_with_fixed_random_state,
    check_synthesizer,
    parametrize_with_checks,
)


class UnseededSynthesizer(BootstrapSynthesizer):
    """Draws from the global NumPy generator: not reproducible."""

    def _sample_cube(self, n, source):
        return self.rows_[np.random.randint(0, len(self.rows_), size=n)]  # noqa: NPY002


class WrongSignScoreSynthesizer(NoisyMeanSynthesizer):
    """Scores by the marginal error itself (greater is worse): a sign bug."""

    def score(self, X, y=None):
        return -super().score(X, y) + 1.0


def test_correct_synthesizers_pass():
    check_synthesizer(BootstrapSynthesizer(domain="boolean", random_state=0))
    check_synthesizer(NoisyMeanSynthesizer(domain="box", bounds=(-1, 2)))


def test_unseeded_draws_are_caught():
    est = UnseededSynthesizer(domain="boolean", random_state=0)
    with pytest.raises(AssertionError, match="reproducible"):
        check_synthesizer(est)
    with pytest.raises(AssertionError):
        check_sample_reproducible_with_fixed_random_state(est, "boolean")


def test_wrong_score_sign_is_caught():
    est = WrongSignScoreSynthesizer(domain="boolean", random_state=0)
    with pytest.raises(AssertionError, match="check_score_is_minus_marginal_error"):
        check_synthesizer(est)


def test_kind_is_validated():
    with pytest.raises(ValueError, match="kind"):
        check_synthesizer(BootstrapSynthesizer(), kind="cube")


@parametrize_with_checks([NoisyMeanSynthesizer(domain="boolean", random_state=0)])
def test_parametrize_with_checks_runs_every_check(estimator, check):
    check(estimator)


def test_parametrize_with_checks_lists_the_private_checks():
    mark = parametrize_with_checks([NoisyMeanSynthesizer(random_state=0)])
    ids = [p.id for p in mark.args[1]]
    assert len(ids) == 11
    assert any(i.endswith("_refused_before_touching_data") for i in ids)
    public = parametrize_with_checks([BootstrapSynthesizer(random_state=0)])
    assert len(public.args[1]) == 8
