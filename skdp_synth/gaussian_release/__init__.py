"""ProjectedGaussianRelease: (epsilon, delta)-DP marginal release and its tools.

:cite:`Nikolov2013` (correlated Gaussian noise from the minimum-volume enclosing
ellipsoid, least-squares projection), :cite:`Gao2022` (exact invariants), with
private selection of the measured tables (``select_mst``, ``select_aim``),
shrinkage of noisy interactions and invariants held by the sampled rows.
"""

from ._invariants import (
    AttributeInvariants,
    repair_rows,
    rounded_tables,
    running_intersection_order,
)
from ._release import (
    AdditiveNoise,
    ProjectedGaussianRelease,
    distributed_privatize,
)
from ._selection import (
    SelectionResult,
    exponential_mechanism,
    gdp_mu_of_pure_dp,
    l1_scores,
    measure,
    mst_edge_budget,
    pure_dp_of_gdp_mu,
    score_sensitivity,
    select_aim,
    select_mst,
)
from ._shrinkage import (
    james_stein_factor,
    shrink_interactions,
    shrink_towards_rows,
)

__all__ = [
    "AdditiveNoise",
    "AttributeInvariants",
    "ProjectedGaussianRelease",
    "SelectionResult",
    "distributed_privatize",
    "exponential_mechanism",
    "gdp_mu_of_pure_dp",
    "james_stein_factor",
    "l1_scores",
    "measure",
    "mst_edge_budget",
    "pure_dp_of_gdp_mu",
    "repair_rows",
    "rounded_tables",
    "running_intersection_order",
    "score_sensitivity",
    "select_aim",
    "select_mst",
    "shrink_interactions",
    "shrink_towards_rows",
]
