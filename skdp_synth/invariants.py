"""Deprecated path: moved to :mod:`skdp_synth.gaussian_release` (removed in 0.3)."""

import warnings

from .gaussian_release._invariants import *  # noqa: F403
from .gaussian_release._invariants import __all__  # noqa: F401

warnings.warn(
    "skdp_synth.invariants is deprecated and will be removed in 0.3; "
    "import its names from skdp_synth.gaussian_release instead",
    FutureWarning,
    stacklevel=2,
)
