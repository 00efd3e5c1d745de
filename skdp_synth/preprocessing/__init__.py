"""Encoders between user tables and the domains the synthesizers need.

* :class:`BooleanEncoder` -- categorical / ordinal / numeric / missing values
  to ``{0, 1}^p`` and back (any 0/1 row decodes to a valid row).
* :class:`UnitBallScaler` -- a known box ``[lo, hi]^p`` to the convex set
  ``K = p^{-1/2}[0, 1]^p`` inside the unit ball, and back.
"""

from ._boolean_encoder import BooleanEncoder
from ._scaler import UnitBallScaler

__all__ = ["BooleanEncoder", "UnitBallScaler"]
