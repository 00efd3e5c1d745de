"""Noise mechanisms and their calibration.

* :class:`NoiseSource` -- secure (OpenDP) or seeded (NumPy) Laplace and
  Gaussian noise, plus the generator for every other random draw.
* :func:`analytic_gaussian_sigma` and friends -- Gaussian calibration.
* :class:`BinghamSampler`, :func:`pvec`, :func:`proj` -- exact sampling of the
  Bingham distribution (Kent, Ganeiber & Mardia 2013) and the private PCA of
  :cite:`Boedihardjo2024` §5.1 (Algorithms 2-3).
* :mod:`.ellipsoid` -- minimum-volume ellipsoids and :cite:`Nikolov2013`'s base
  decomposition.
* :mod:`.additive` -- the correlated additive noise of :cite:`Nikolov2013` and
  :cite:`Gao2022` (:class:`~skdp_synth.mechanisms.additive.AdditiveNoise`), shaped from
  and verified on a workload's sensitivity set.
"""

from ._calibration import (
    analytic_gaussian_sigma,
    classical_gaussian_sigma,
    gaussian_delta,
    gaussian_sigma,
)
from ._noise import NoiseSource, check_noise_source, make_generator
from .bingham import BinghamSampler, bingham_envelope, proj, pvec

__all__ = [
    "BinghamSampler",
    "NoiseSource",
    "analytic_gaussian_sigma",
    "bingham_envelope",
    "check_noise_source",
    "classical_gaussian_sigma",
    "gaussian_delta",
    "gaussian_sigma",
    "make_generator",
    "proj",
    "pvec",
]
