"""DampedPrivateSynthesizer: epsilon-DP synthetic data by damped microaggregation.

:cite:`Boedihardjo2024` §5 (private PCA, damped microaggregation, Laplace noise,
metric projection). Modules: ``_estimator`` (the estimator), ``_parameters``
(the data-independent parameters and noise scales, with their privacy
derivations), ``_damping`` (the block geometry and the damped microaggregation).
"""

from ._damping import BlockGeometry, block_geometry
from ._estimator import DampedPrivateSynthesizer
from ._parameters import (
    block_plan,
    count_noise_scale,
    default_alpha,
    default_damping,
    default_n_components,
    mean_noise_scale,
    projection_scale,
    resolve_block_plan,
    share_projection_scale,
    sum_noise_scale,
    weight_noise_scale,
)

__all__ = [
    "BlockGeometry",
    "DampedPrivateSynthesizer",
    "block_geometry",
    "block_plan",
    "count_noise_scale",
    "default_alpha",
    "default_damping",
    "default_n_components",
    "mean_noise_scale",
    "projection_scale",
    "resolve_block_plan",
    "share_projection_scale",
    "sum_noise_scale",
    "weight_noise_scale",
]
