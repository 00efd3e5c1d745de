"""Whether a pipeline keeps a column's missing level: the release's estimate
of the missing count, with the encoder's own noisy count of the same cells
where it drew one (a numeric column's fine histogram, a categorical
column's level selection).

Post-processing of released counts and public noise scales
(``doc/privacy/encoder.md``, "The missing share is released").
"""

from __future__ import annotations

import math

import numpy as np

from ._numeric_domain import MISSING_SUPPORT_Z

__all__ = ["MISSING_COMBINED_Z", "missing_support", "second_count"]


#: Where the encoder drew a second noisy count of the same missing cells (a
#: numeric column's fine histogram, ``FineHistogram.missing_raw``,
#: ``Lap(b)``, variance ``v = 2 b²``; a categorical column's private level
#: selection, ``_ColumnSpec.missing_noise``), independent of the release's,
#: a pipeline tests their inverse-variance mean, of sd ``σ_c = (1/σ_j² +
#: 1/v)^-1/2 <= σ_j``, against the same number of
#: rows, ``MISSING_SUPPORT_Z σ_j``, or this many ``σ_c`` where that is lower
#: (:func:`missing_support`). At a true missing count ``m``, the level is
#: lost with probability ``Φ((σ_j - m) / σ_c)``, at most the release's own
#: ``Φ((σ_j - m) / σ_j)`` wherever ``m >= σ_j``; a complete column (``m =
#: 0``) keeps it in ``1 - Φ(σ_j / σ_c)`` of fits instead of 16 % (at least
#: ``1 - Φ(2) = 2.3 %``: a count the mean puts ``2 σ_c`` above 0 is kept, the
#: other levels' ``LEVEL_SUPPORT_Z``). ``doc/privacy/encoder.md``.
MISSING_COMBINED_Z = 2.0


def missing_support(estimate, sd, raw=float("nan"), variance=float("nan")):
    """``(value, threshold)``: a pipeline keeps a column's missing level iff
    ``value >= threshold``. ``estimate`` and ``sd``: the release's estimate
    of the missing count and its noise sd; ``raw`` and ``variance``: the
    encoder's noisy count of the same cells, as drawn, and its noise's
    variance (:func:`second_count`; ``nan`` where there is none: the
    release's estimate alone, at :data:`MISSING_SUPPORT_Z` sds). With both:
    their inverse-variance mean against ``min(MISSING_SUPPORT_Z sd,
    MISSING_COMBINED_Z σ_c)`` (:data:`MISSING_COMBINED_Z`). Post-processing
    of two released counts and their public noise scales."""
    estimate, sd = float(estimate), float(sd)
    raw, variance = float(raw), float(variance)
    if not (np.isfinite(raw) and np.isfinite(variance) and variance > 0 and sd > 0):
        return estimate, MISSING_SUPPORT_Z * sd
    w_release, w_encoder = 1.0 / sd**2, 1.0 / variance
    value = (w_release * estimate + w_encoder * raw) / (w_release + w_encoder)
    sd_c = 1.0 / math.sqrt(w_release + w_encoder)
    return float(value), float(min(MISSING_SUPPORT_Z * sd, MISSING_COMBINED_Z * sd_c))


def second_count(spec):
    """``(raw, variance)``: the encoder's own noisy count of column
    ``spec``'s missing cells and its noise's variance -- a numeric column's
    fine histogram cell (``Lap(b)``: ``2 b²``), a categorical column's
    level-selection cell (``spec.missing_noise``: the joint selection's
    ``σ²``, or a stable-levels histogram's ``2 (Δ/ε)²``) -- or ``(nan,
    nan)`` where there is none (declared levels, a restored decoder).
    Public scales and a released count."""
    noise = getattr(spec, "missing_noise", None)
    if noise is not None:
        return float(noise[0]), float(noise[1])
    fine = getattr(spec, "fine", None)
    raw = float(getattr(fine, "missing_raw", float("nan")))
    scale = float(getattr(fine, "scale", float("nan")))
    return raw, 2.0 * scale**2
