"""Empirical privacy auditing: a statistical lower bound on epsilon.

A mechanism ``M`` that is ``(eps, delta)``-DP satisfies, for every event
``E`` and neighbouring ``D, D'``,
``P[M(D) in E] <= e^eps P[M(D') in E] + delta``. Running ``M`` many times on
``D`` and ``D'`` and counting how often a *fixed* event happens gives
Clopper-Pearson bounds ``p_lo <= P[M(D) in E]`` and ``q_hi >= P[M(D') in E]``,
hence the lower bound

    eps_lower = log((p_lo - delta) / q_hi),

which exceeds the true epsilon with probability at most ``alpha`` (the
false-failure rate of an audit test; :cite:`Jagielski2020`).

The event is chosen on one half of the runs (a threshold on a scalar
statistic of the output, in either direction) and the bound is computed on
the other half, so the selection does not bias it. An audit can only *refute*
a claimed epsilon (a planted bug, such as half the noise, shows as
``eps_lower > eps``); passing it is evidence, not proof.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

__all__ = ["AuditResult", "audit_epsilon", "clopper_pearson"]


def clopper_pearson(successes: int, trials: int, alpha: float) -> tuple[float, float]:
    """Two one-sided Clopper-Pearson bounds ``(lower, upper)``, each at level ``alpha``.

    Examples
    --------
    >>> lo, hi = clopper_pearson(50, 100, 0.05)
    >>> round(lo, 3), round(hi, 3)
    (0.414, 0.586)
    """
    k, n = int(successes), int(trials)
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"need 0 <= successes <= trials, trials >= 1; got {k}, {n}")
    lower = 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))
    upper = 1.0 if k == n else float(stats.beta.ppf(1 - alpha, k + 1, n - k))
    return lower, upper


def _bound(k_a, n_a, k_b, n_b, delta, alpha):
    p_lo, _ = clopper_pearson(k_a, n_a, alpha / 2)
    _, q_hi = clopper_pearson(k_b, n_b, alpha / 2)
    if p_lo <= delta or q_hi <= 0:
        return 0.0
    return max(0.0, math.log((p_lo - delta) / q_hi))


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_epsilon`.

    Attributes
    ----------
    epsilon_lower : float
        Lower bound on epsilon, valid with probability ``1 - alpha``.
    threshold : float
        Threshold of the chosen event.
    direction : {"a>", "b>", "a<", "b<"}
        The event is ``{s > threshold}`` (``>``) or ``{s <= threshold}``
        (``<``), and it is likelier under the first (``a``) or second (``b``)
        dataset.
    counts : tuple
        ``(k_a, n_a, k_b, n_b)`` on the evaluation half.
    alpha : float
    """

    epsilon_lower: float
    threshold: float
    direction: str
    counts: tuple
    alpha: float


def audit_epsilon(
    scores_a: ArrayLike,
    scores_b: ArrayLike,
    *,
    delta: float = 0.0,
    alpha: float = 0.05,
    n_thresholds: int = 200,
) -> AuditResult:
    """Lower-bound epsilon from a scalar statistic of outputs on neighbours.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (n_runs,)
        A scalar statistic of independent runs of the mechanism on ``D`` and
        ``D'``. The first half of each is used to choose the event, the second
        half to bound.
    delta : float, default=0.0
        The mechanism's claimed delta.
    alpha : float, default=0.05
        Probability that ``epsilon_lower`` exceeds the true epsilon.
    n_thresholds : int, default=200
        Candidate thresholds (quantiles of the pooled selection half).

    Returns
    -------
    AuditResult

    References
    ----------
    :cite:`Jagielski2020` (the Clopper-Pearson audit of a DP mechanism).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.laplace(0.0, 1.0, 20000)       # Laplace(1) on a sensitivity-1 query:
    >>> b = rng.laplace(1.0, 1.0, 20000)       # epsilon = 1
    >>> r = audit_epsilon(a, b)
    >>> 0.5 < r.epsilon_lower <= 1.0
    True
    """
    a = np.asarray(scores_a, dtype=np.float64).ravel()
    b = np.asarray(scores_b, dtype=np.float64).ravel()
    if a.size < 4 or b.size < 4:
        raise ValueError("need at least 4 runs per dataset")
    ha, hb = a.size // 2, b.size // 2
    sel_a, ev_a = a[:ha], a[ha:]
    sel_b, ev_b = b[:hb], b[hb:]
    pooled = np.concatenate([sel_a, sel_b])
    candidates = np.unique(np.quantile(pooled, np.linspace(0, 1, n_thresholds)))

    best = (-1.0, candidates[0], "a>")
    sa, sb = np.sort(sel_a), np.sort(sel_b)
    for tau in candidates:
        k_a = sa.size - np.searchsorted(sa, tau, side="right")
        k_b = sb.size - np.searchsorted(sb, tau, side="right")
        for direction, (ka, na, kb, nb) in (
            ("a>", (k_a, sa.size, k_b, sb.size)),
            ("b>", (k_b, sb.size, k_a, sa.size)),
            ("a<", (sa.size - k_a, sa.size, sb.size - k_b, sb.size)),
            ("b<", (sb.size - k_b, sb.size, sa.size - k_a, sa.size)),
        ):
            eps = _bound(ka, na, kb, nb, delta, alpha)
            if eps > best[0]:
                best = (eps, tau, direction)

    _, tau, direction = best
    above_a = int(np.sum(ev_a > tau))
    above_b = int(np.sum(ev_b > tau))
    n_a, n_b = ev_a.size, ev_b.size
    if direction == "a>":
        counts = (above_a, n_a, above_b, n_b)
    elif direction == "b>":
        counts = (above_b, n_b, above_a, n_a)
    elif direction == "a<":
        counts = (n_a - above_a, n_a, n_b - above_b, n_b)
    else:
        counts = (n_b - above_b, n_b, n_a - above_a, n_a)
    eps = _bound(*counts, delta, alpha)
    return AuditResult(eps, float(tau), direction, counts, alpha)
