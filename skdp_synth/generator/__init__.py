"""From measured marginal tables to rows (post-processing: reads no data).

``fit_rows`` fits weighted rows whose marginals match noisy measured tables.
"""

from ._generator import (
    MAX_TABLE_CELLS as MAX_TABLE_CELLS,  # for sibling packages
)
from ._generator import (
    GeneratorResult,
    Measurement,
    auto_model_rows,
    controlled_rows,
    fit_rows,
)
from ._generator import (
    _one_way_estimates as _one_way_estimates,  # for sibling packages
)

__all__ = [
    "GeneratorResult",
    "Measurement",
    "auto_model_rows",
    "controlled_rows",
    "fit_rows",
]
