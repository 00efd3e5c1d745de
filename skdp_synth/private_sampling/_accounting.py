"""The privacy cost of private sampling (:cite:`Boedihardjo2022` Lemma 12.1,
Theorem 12.2).

:class:`~skdp_synth.private_sampling.PrivateSampler` adds no noise; its
guarantee is the stability of the density ``h*`` between neighbouring datasets
(Lemma 12.1) combined with the private-sampling lemma (Lemma 3.3: the costs of
i.i.d. draws add). The price of one released row depends on the public
``(n, p, d, m)`` and the density bounds only, so the plan fixes it before the
data is read. This module holds that accounting -- the sensitivity bound, the
price of ``k`` rows, the most rows a budget pays for and the guarantee they
carry -- apart from the estimator, so the derivation can be checked on its own.
"""

from __future__ import annotations

import math

from ..fourier import walsh_dimension
from ..privacy import REPLACE_ONE, PrivacyGuarantee
from ..validation import check_integer

__all__ = ["density_sensitivity", "max_draws", "sampling_epsilon"]


def _check_density_bounds(density_lower, density_upper):
    dl, du = float(density_lower), float(density_upper)
    if not (0 < dl and 2 * dl < 1 < du - dl and math.isfinite(du)):
        raise ValueError(
            "the density bounds of Boedihardjo2022 Algorithm 2 must satisfy "
            "0 < 2*density_lower < 1 < density_upper - density_lower; got "
            f"density_lower={dl!r}, density_upper={du!r}"
        )
    return dl, du


def density_sensitivity(
    n: int, p: int, d: int, m: int, density_lower: float, density_upper: float
) -> float:
    """Bound ``eta`` on ``||h*_1 - h*_2||_inf`` for neighbours (:cite:`Boedihardjo2022`
    Lemma 12.1).

    The lemma chains four bounds (``a = 2 delta/m``, ``b = (Delta - delta)/m``,
    ``c = 1/m``, ``lam = delta/m``; ``delta, Delta`` = ``density_lower,
    density_upper``):

    * (9.6) one changed row moves the low-degree part of ``f_n`` by at most
      ``2 sqrt(D) / (n 2^p)`` in ``L^2`` -- for a *replaced* row as for an
      added one, since ``||(1_x)^{<=d}||_{L^2} = sqrt(D) / 2^p``;
    * Lemma 9.5 (``S`` well conditioned): ``d_inf(H_1, H_2) <= 2 e^d 2^p /
      sqrt(m)`` times that, i.e. ``4 e^d sqrt(D) / (n sqrt(m))``;
    * Lemma 11.3 (shrinkage): ``d_inf`` grows by ``(b - a) / min(c - a, b - c)
      = (Delta - 3 delta) / min(1 - 2 delta, Delta - delta - 1)``;
    * Lemma 10.4 (proximal selection): ``||h*_1 - h*_2||_inf^2 <= 4 m max(c -
      a, b - c) ((b - a)/lam + 2) d_inf = 4 max(1 - 2 delta, Delta - delta -
      1) (Delta - delta) / delta * d_inf``.

    Hence ``eta^2 = 16 e^d sqrt(D) (Delta - delta) (Delta - 3 delta) R /
    (delta n sqrt(m))`` with ``R = max(1 - 2 delta, Delta - delta - 1) /
    min(1 - 2 delta, Delta - delta - 1)``.

    The paper states Lemmas 10.4 and 11.3 for ``c < (a + b)/2``, i.e.
    ``Delta + delta > 2``; the proofs give the ``max``/``min`` forms above for
    any ``c`` inside ``(a, b)`` (``beta = 2 min(c - a, b - c)/(b - a)`` in
    Lemma 11.1). The paper then simplifies to ``eta_paper^2 = 32 Delta^3 e^d
    sqrt(D) / (delta n sqrt(m))``, using ``(b - a)/(c - a) <= 2 Delta``,
    which needs ``delta <= Delta / (4 Delta - 3)`` (e.g. ``delta <= 1/4``);
    for ``delta`` near ``1/2`` or ``Delta + delta <= 2`` the closed form is
    *smaller* than what the proof supports. We use the unsimplified chain,
    which is never larger than the closed form where the closed form is
    valid.

    References
    ----------
    :cite:`Boedihardjo2022` Lemma 12.1.

    Examples
    --------
    >>> round(density_sensitivity(10**6, 10, 1, 82, 0.25, 2.5), 6)
    0.025044
    """
    dl, du = _check_density_bounds(density_lower, density_upper)
    D = walsh_dimension(p, d)
    lo_gap, hi_gap = 1 - 2 * dl, du - dl - 1
    ratio = max(lo_gap, hi_gap) / min(lo_gap, hi_gap)
    eta2 = (
        16.0
        * math.exp(d)
        * math.sqrt(D)
        * (du - dl)
        * (du - 3 * dl)
        * ratio
        / (dl * n * math.sqrt(m))
    )
    return math.sqrt(eta2)


def _epsilon_per_draw(n, p, d, m, density_lower, density_upper):
    """``log min(1 + eta m / delta, Delta / delta)`` (:cite:`Boedihardjo2022` Theorem
    12.2's proof)."""
    dl, du = _check_density_bounds(density_lower, density_upper)
    eta = density_sensitivity(n, p, d, m, dl, du)
    # h*_2 >= delta/m and |h*_1 - h*_2| <= eta give h*_1/h*_2 <= 1 + eta m/delta;
    # h* in [delta/m, Delta/m] gives h*_1/h*_2 <= Delta/delta whatever the data.
    return math.log(min(1.0 + eta * m / dl, du / dl))


def sampling_epsilon(
    n_draws: int,
    n: int,
    p: int,
    d: int,
    m: int,
    density_lower: float,
    density_upper: float,
) -> float:
    """The epsilon that releasing ``n_draws`` rows costs (:cite:`Boedihardjo2022` Lemma
    3.3 + Theorem 12.2).

    Replace-one neighbours (datasets of the same public size ``n``, one row
    changed). If every ratio ``h*_1(s) / h*_2(s)`` between the densities of
    neighbouring datasets is at most ``e^{eps_1}``, then ``k`` i.i.d. draws
    are ``k eps_1``-DP (Lemma 3.3). With ``eta`` from
    :func:`density_sensitivity` and ``h* >= delta/m``::

        eps_1 = log min(1 + eta m / delta, Delta / delta)

    The second term holds for *any* two densities in ``[delta/m, Delta/m]``
    and caps the cost when Lemma 12.1 is vacuous. Theorem 12.2 states the
    weaker ``eps_1 <= eta_paper m / delta``, i.e. ``eps(k) = 4 sqrt(2) k
    (Delta/delta)^{3/2} e^{d/2} D^{1/4} m^{3/4} / sqrt(n)`` (:cite:`Boedihardjo2022`
    Theorem 12.2); see
    :func:`density_sensitivity` for where that closed form is (in)valid.

    The guarantee is vacuous at realistic sizes: one row from ``n = 10^6``
    records with ``p = 10``, ``d = 1`` and the default ``m = 82`` costs
    epsilon ~2.2; see ``doc/privacy.md`` for a table.

    References
    ----------
    :cite:`Boedihardjo2022` Lemma 3.3 and Theorem 12.2.

    Examples
    --------
    >>> round(sampling_epsilon(1, 10**6, 10, 1, 82, 0.25, 2.5), 4)
    2.2208
    >>> round(sampling_epsilon(1, 10**12, 10, 1, 82, 0.25, 2.5), 4)
    0.0082
    """
    n_draws = check_integer(n_draws, "n_draws", min_value=0)
    return n_draws * _epsilon_per_draw(n, p, d, m, density_lower, density_upper)


def max_draws(
    epsilon: float,
    n: int,
    p: int,
    d: int,
    m: int,
    density_lower: float,
    density_upper: float,
) -> int:
    """The largest number of rows whose release costs at most ``epsilon``.

    Examples
    --------
    >>> max_draws(1.0, 10**12, 10, 1, 82, 0.25, 2.5)
    122
    >>> max_draws(1.0, 10**6, 10, 1, 82, 0.25, 2.5)    # not one row
    0
    """
    epsilon = float(epsilon)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    per = _epsilon_per_draw(n, p, d, m, density_lower, density_upper)
    k = int(math.floor(epsilon / per))
    while k > 0 and k * per > epsilon:  # guard against rounding up
        k -= 1
    return k


def _theorem_12_2_epsilon(n_draws, n, p, d, m, density_lower, density_upper):
    """The paper's closed form of the cost of ``k`` draws (:cite:`Boedihardjo2022`
    Theorem 12.2).

    ``4 sqrt(2) k (Delta/delta)^{3/2} e^{d/2} D^{1/4} m^{3/4} / sqrt(n)``; for
    reference and tests only (see :func:`density_sensitivity`).
    """
    dl, du = float(density_lower), float(density_upper)
    D = walsh_dimension(p, d)
    return (
        4.0
        * math.sqrt(2.0)
        * n_draws
        * (du / dl) ** 1.5
        * math.exp(d / 2.0)
        * D**0.25
        * m**0.75
        / math.sqrt(n)
    )


def _draws_guarantee(n_draws, epsilon_per_draw):
    """The guarantee of ``n_draws`` released rows (:cite:`Boedihardjo2022` Lemma 3.3:
    costs add)."""
    return PrivacyGuarantee(
        n_draws * epsilon_per_draw,
        0.0,
        REPLACE_ONE,
        f"private sampling, {n_draws} draws (Boedihardjo2022 Thm 12.2)",
    )
