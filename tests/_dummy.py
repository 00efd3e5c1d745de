"""Minimal synthesizers used to test the shared contract in isolation."""

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator

from skdp_synth._sklearn_compat import Interval
from skdp_synth.base import PrivateSynthesizerMixin, SynthesizerMixin
from skdp_synth.plan import Plan
from skdp_synth.privacy import PrivacyGuarantee


class BootstrapSynthesizer(SynthesizerMixin, BaseEstimator):
    """Resamples the (cube-scaled) training rows: no privacy, exact distribution."""

    # domain, bounds, random_state: constraints owned by the mixin
    _parameter_constraints = {
        "m": [Interval(Real, 1, None, closed="left"), None],
    }

    def __init__(self, *, domain="box", bounds=None, m=None, random_state=None):
        self.domain = domain
        self.bounds = bounds
        self.m = m
        self.random_state = random_state

    def _make_plan(self, n_samples, n_features):
        return Plan(n_samples=n_samples, n_features=n_features, guarantee=None)

    def _fit(self, U, plan, source):
        self.rows_ = U.copy()

    def _sample_cube(self, n, source):
        return self.rows_[source.rng.integers(0, len(self.rows_), size=n)]

    def _synthetic_distribution(self):
        return self.rows_, None


class NoisyMeanSynthesizer(PrivateSynthesizerMixin, BaseEstimator):
    """Column means + Laplace noise, rows drawn independently: a tiny DP mechanism.

    Replace-one: the mean of n rows in [0,1]^p moves by at most 1/n per column,
    l1 sensitivity p/n, Laplace scale p/(n epsilon).
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, np.inf, closed="neither")],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        domain="box",
        bounds=None,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.domain = domain
        self.bounds = bounds
        self.accountant = accountant
        self.random_state = random_state

    def _make_plan(self, n_samples, n_features):
        guarantee = PrivacyGuarantee(
            self.epsilon, 0.0, "replace-one", "Laplace on means"
        )
        return Plan(n_samples=n_samples, n_features=n_features, guarantee=guarantee)

    def _fit(self, U, plan, source):
        n, p = U.shape
        self.means_ = np.clip(
            source.laplace(U.mean(axis=0), p / (n * self.epsilon)), 0, 1
        )

    def _sample_cube(self, n, source):
        if self._domain() == "boolean":
            return (source.rng.random((n, len(self.means_))) < self.means_).astype(
                float
            )
        return np.tile(self.means_, (n, 1))

    def _synthetic_distribution(self):
        return self.means_[None, :], None
