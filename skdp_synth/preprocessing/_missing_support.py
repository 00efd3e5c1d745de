"""Whether a pipeline keeps a column's missing level: the release's estimate
of the missing count, with the fine histogram's own noisy count of the same
cells where the encoder drew one.

Post-processing of released counts and public noise scales
(``doc/privacy/encoder.md``, "The missing level kept").
"""

from __future__ import annotations

import math

import numpy as np

from ._numeric_domain import MISSING_SUPPORT_Z

__all__ = ["MISSING_COMBINED_Z", "missing_support"]


#: Where the column's fine histogram drew a second noisy count of the same
#: missing cells (``FineHistogram.missing_raw``, ``Lap(b)``, independent of
#: the release's), a pipeline tests their inverse-variance mean, of sd
#: ``σ_c = (1/σ_j² + 1/(2 b²))^-1/2 <= σ_j``, against the same number of
#: rows, ``MISSING_SUPPORT_Z σ_j``, or this many ``σ_c`` where that is lower
#: (:func:`missing_support`). At a true missing count ``m``, the level is
#: lost with probability ``Φ((σ_j - m) / σ_c)``, at most the release's own
#: ``Φ((σ_j - m) / σ_j)`` wherever ``m >= σ_j``; a complete column (``m =
#: 0``) keeps it in ``1 - Φ(σ_j / σ_c)`` of fits instead of 16 % (at least
#: ``1 - Φ(2) = 2.3 %``: a count the mean puts ``2 σ_c`` above 0 is kept, the
#: other levels' ``LEVEL_SUPPORT_Z``). ``doc/privacy/encoder.md``.
MISSING_COMBINED_Z = 2.0


def missing_support(estimate, sd, raw=float("nan"), scale=float("nan")):
    """``(value, threshold)``: a pipeline keeps a column's missing level iff
    ``value >= threshold``. ``estimate`` and ``sd``: the release's estimate
    of the missing count and its noise sd; ``raw`` and ``scale``: the fine
    histogram's noisy count of the same cells, as drawn, and its Laplace
    scale ``b`` (``nan`` where there is none: the release's estimate alone,
    at :data:`MISSING_SUPPORT_Z` sds). With both: their inverse-variance
    mean against ``min(MISSING_SUPPORT_Z sd, MISSING_COMBINED_Z σ_c)``
    (:data:`MISSING_COMBINED_Z`). Post-processing of two released counts and
    their public noise scales."""
    estimate, sd = float(estimate), float(sd)
    raw, scale = float(raw), float(scale)
    if not (np.isfinite(raw) and np.isfinite(scale) and scale > 0 and sd > 0):
        return estimate, MISSING_SUPPORT_Z * sd
    w_release, w_fine = 1.0 / sd**2, 1.0 / (2.0 * scale**2)
    value = (w_release * estimate + w_fine * raw) / (w_release + w_fine)
    sd_c = 1.0 / math.sqrt(w_release + w_fine)
    return float(value), float(min(MISSING_SUPPORT_Z * sd, MISSING_COMBINED_Z * sd_c))
