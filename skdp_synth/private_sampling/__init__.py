"""PrivateSampler: noiseless epsilon-DP synthetic data on the Boolean cube.

:cite:`Boedihardjo2022` (a density on a random reduced space matching the
low-degree marginals, shrunk and chosen by convex optimisation, then sampled).
Modules: ``_sampler`` (the estimator), ``_accounting`` (its privacy cost,
Lemma 12.1 and Theorem 12.2).
"""

from ._accounting import density_sensitivity, max_draws, sampling_epsilon
from ._sampler import (
    MAX_WALSH_BYTES,
    MarginalCorrection,
    PrivateSampler,
    marginal_correction,
    marginals_to_walsh,
    walsh_coefficients,
    walsh_dimension,
    walsh_matrix,
    walsh_subsets,
    walsh_to_marginals,
)

__all__ = [
    "MAX_WALSH_BYTES",
    "MarginalCorrection",
    "PrivateSampler",
    "density_sensitivity",
    "marginal_correction",
    "marginals_to_walsh",
    "max_draws",
    "sampling_epsilon",
    "walsh_coefficients",
    "walsh_dimension",
    "walsh_matrix",
    "walsh_subsets",
    "walsh_to_marginals",
]
