"""From measured marginal tables to rows (post-processing: reads no data).

``fit_rows`` fits weighted rows whose marginals match noisy measured tables.
"""

from ._cliques import (
    MAX_TABLE_CELLS as MAX_TABLE_CELLS,  # for sibling packages
)
from ._estimates import (
    _one_way_estimates as _one_way_estimates,  # for sibling packages
)
from ._generator import (
    GeneratorResult,
    Measurement,
    fit_rows,
    rows_loss,
    warn_disagreement,
)
from ._rounding import auto_model_rows, controlled_rows
from ._zeros import Zeros, check_zeros

__all__ = [
    "GeneratorResult",
    "Measurement",
    "Zeros",
    "auto_model_rows",
    "check_zeros",
    "controlled_rows",
    "fit_rows",
    "rows_loss",
    "warn_disagreement",
]
