"""Deprecated path: moved to :mod:`skdp_synth.workloads` (removed in 0.3)."""

import warnings

from .workloads._attributes import *  # noqa: F403
from .workloads._attributes import __all__  # noqa: F401

warnings.warn(
    "skdp_synth.attribute_workload is deprecated and will be removed in 0.3; "
    "import its names from skdp_synth.workloads instead",
    FutureWarning,
    stacklevel=2,
)
