"""Workloads: the linear queries a release answers.

``MarginalWorkload`` and ``ExplicitWorkload`` on bits (Walsh/marginal queries of
degree <= d) and ``AttributeMarginalWorkload`` on attributes (cells of k-way
tables of encoded columns).
"""

from ._attributes import (
    AttributeMarginalWorkload,
    helmert_basis,
)
from ._bits import (
    ExplicitWorkload,
    MarginalWorkload,
    SensitivitySet,
    krawtchouk,
    universe_index,
)
from ._bits import (
    universe_points as universe_points,  # for sibling packages
)

__all__ = [
    "AttributeMarginalWorkload",
    "ExplicitWorkload",
    "MarginalWorkload",
    "SensitivitySet",
    "helmert_basis",
    "krawtchouk",
    "universe_index",
]
