"""Noise mechanisms and their calibration.

* :class:`NoiseSource` -- secure (OpenDP) or seeded (NumPy) Laplace and
  Gaussian noise, plus the generator for every other random draw.
* :func:`analytic_gaussian_sigma` and friends -- Gaussian calibration.
"""

from ._calibration import (
    analytic_gaussian_sigma,
    classical_gaussian_sigma,
    gaussian_delta,
    gaussian_sigma,
)
from ._noise import NoiseSource, check_noise_source, make_generator

__all__ = [
    "NoiseSource",
    "analytic_gaussian_sigma",
    "check_noise_source",
    "classical_gaussian_sigma",
    "gaussian_delta",
    "gaussian_sigma",
    "make_generator",
]
