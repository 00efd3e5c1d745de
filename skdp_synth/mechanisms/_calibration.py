"""Noise calibration for the Gaussian and Laplace mechanisms.

Gaussian mechanism (``values + N(0, sigma^2 I)``, L2 sensitivity ``Delta``):

* :func:`analytic_gaussian_sigma` -- the *analytic Gaussian mechanism* of
  Balle & Wang (2018, "Improving the Gaussian mechanism for differential
  privacy", Theorem 8): the mechanism is ``(eps, delta)``-DP **if and only if**

      Phi(Delta/(2 sigma) - eps sigma/Delta)
          - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta)  <=  delta,

  so the smallest such ``sigma`` is the exact calibration, valid for every
  ``eps > 0``. This is the default everywhere in skdp_synth.
* :func:`classical_gaussian_sigma` -- the constants printed in the papers, kept
  selectable to reproduce them:

  - ``"nikolov2013"``: ``sigma = Delta (1 + sqrt(2 ln(1/delta))) / eps``
    (:cite:`Nikolov2013`, the Gaussian noise magnitude ``c(eps, delta)`` of §2);
  - ``"gao2022"``: ``sigma = Delta (1 + sqrt(1 + ln(1/delta))) / eps``
    (:cite:`Gao2022`, as printed). It is **not** a valid calibration for larger
    epsilon: at ``eps = 2, delta = 1e-9`` it achieves only
    ``delta ~= 1.2e-9`` (see ``tests/test_mechanisms.py``). Selecting it warns.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import optimize, special

__all__ = [
    "analytic_gaussian_sigma",
    "classical_gaussian_sigma",
    "gaussian_delta",
    "gaussian_sigma",
]


def gaussian_delta(sigma, epsilon, sensitivity=1.0):
    """Exact ``delta`` of the Gaussian mechanism at a given ``epsilon``.

    Balle & Wang (2018), Theorem 8: the privacy profile of
    ``N(0, sigma^2)`` noise on a query of L2 sensitivity ``Delta`` is::

        delta(eps) = Phi(Delta/(2 sigma) - eps sigma/Delta)
                     - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta)

    Computed in log space so that deltas down to ~1e-300 are accurate.

    Examples
    --------
    >>> round(gaussian_delta(1.0, 1.0), 6)
    0.126937
    """
    sigma = float(sigma)
    epsilon = float(epsilon)
    sensitivity = float(sensitivity)
    if sigma <= 0 or sensitivity <= 0 or epsilon < 0:
        raise ValueError("sigma and sensitivity must be > 0 and epsilon >= 0")
    a = sensitivity / (2 * sigma) - epsilon * sigma / sensitivity
    b = -sensitivity / (2 * sigma) - epsilon * sigma / sensitivity
    log_first = special.log_ndtr(a)
    log_second = epsilon + special.log_ndtr(b)
    if log_second >= log_first:
        return 0.0
    # Phi(a) - e^eps Phi(b) = Phi(a) * (1 - exp(log_second - log_first))
    return float(math.exp(log_first) * -math.expm1(log_second - log_first))


def analytic_gaussian_sigma(epsilon, delta, sensitivity=1.0):
    """Smallest ``sigma`` making the Gaussian mechanism ``(epsilon, delta)``-DP.

    Solves ``gaussian_delta(sigma, epsilon, sensitivity) = delta`` (Balle &
    Wang 2018, Algorithm 1, by root finding instead of their series) and
    returns a ``sigma`` at which the defining inequality holds, never one just
    below it.

    Parameters
    ----------
    epsilon : float
        ``> 0`` and finite.
    delta : float
        ``0 < delta < 1``.
    sensitivity : float, default=1.0
        L2 sensitivity of the query.

    Returns
    -------
    sigma : float

    Examples
    --------
    >>> s = analytic_gaussian_sigma(1.0, 1e-5)
    >>> round(s, 4)
    3.7305
    >>> gaussian_delta(s, 1.0) <= 1e-5
    True
    """
    epsilon, delta, sensitivity = _check_eps_delta(epsilon, delta, sensitivity)

    def excess(log_sigma):
        return gaussian_delta(math.exp(log_sigma), epsilon, 1.0) - delta

    # delta(sigma) decreases from 1/2 (sigma -> 0) to 0 (sigma -> inf).
    lo, hi = math.log(1e-8), 0.0
    while excess(hi) > 0:
        hi += 1.0
    if excess(lo) <= 0:  # pragma: no cover - delta >= 1/2 is rejected above
        return sensitivity * math.exp(lo)
    root = optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps)
    sigma = math.exp(root)
    # brentq may land a hair below the root; step up until the guarantee holds.
    while gaussian_delta(sigma, epsilon, 1.0) > delta:
        sigma = np.nextafter(sigma, np.inf) * (1 + 1e-15)
    return float(sensitivity * sigma)


def classical_gaussian_sigma(epsilon, delta, sensitivity=1.0, *, variant):
    """The papers' closed-form Gaussian calibrations (see module docstring).

    ``variant="nikolov2013"`` (:cite:`Nikolov2013`) or ``"gao2022"`` (:cite:`Gao2022`).
    """
    epsilon, delta, sensitivity = _check_eps_delta(epsilon, delta, sensitivity)
    log_inv = math.log(1.0 / delta)
    if variant == "nikolov2013":
        c = (1.0 + math.sqrt(2.0 * log_inv)) / epsilon
    elif variant == "gao2022":
        c = (1.0 + math.sqrt(1.0 + log_inv)) / epsilon
        achieved = gaussian_delta(c, epsilon, 1.0)
        if achieved > delta:
            warnings.warn(
                f"the 'gao2022' constant is not a valid calibration at "
                f"epsilon={epsilon:g}, delta={delta:g}: it achieves only "
                f"delta={achieved:.3g}. Use calibration='analytic'.",
                UserWarning,
                stacklevel=2,
            )
    else:
        raise ValueError(f"variant must be 'nikolov2013' or 'gao2022', got {variant!r}")
    return float(sensitivity * c)


def gaussian_sigma(epsilon, delta, sensitivity=1.0, calibration="analytic"):
    """Dispatch to a Gaussian calibration by name.

    ``calibration`` is ``"analytic"`` (default, exact), ``"nikolov2013"`` or
    ``"gao2022"``.
    """
    if calibration == "analytic":
        return analytic_gaussian_sigma(epsilon, delta, sensitivity)
    return classical_gaussian_sigma(epsilon, delta, sensitivity, variant=calibration)


def _check_eps_delta(epsilon, delta, sensitivity):
    epsilon, delta, sensitivity = float(epsilon), float(delta), float(sensitivity)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")
    if not (0.0 < delta < 0.5):
        raise ValueError(
            f"delta must lie in (0, 0.5) for the Gaussian mechanism, got {delta!r}"
        )
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError(f"sensitivity must be finite and > 0, got {sensitivity!r}")
    return epsilon, delta, sensitivity
