"""CovarianceLossMicroaggregator: (n/k)-anonymous microaggregation.

Group means with a covariance-loss certificate.

:cite:`Boedihardjo2024` §3-4 (spectral partition, lattice covering, equipartition) and
:cite:`SahSawhney` §2 (the pinning partition for Boolean data). Modules:
``_microaggregator`` (the estimator), ``_partition`` (the partitions, pure
functions on arrays), ``_kdtree`` (the compiled k-d tree division),
``_chunk_stats`` (the per-chunk statistics of the fit from Dask input).
"""

from ._microaggregator import (
    CovarianceLossMicroaggregator,
)

__all__ = [
    "CovarianceLossMicroaggregator",
]
