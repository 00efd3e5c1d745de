"""Rounding: from expected counts to integer rows.

The fitted ``N`` rows are an equal-weight distribution. ``n`` rows are taken
by *controlled rounding* of the expected counts ``n/N`` per fitted row
(:func:`controlled_rows`): every fitted row appears ``floor(n/N)`` times and
the remainder is a simple random subset, so for ``n = N`` the output is the
fitted table itself (shuffled) and its marginals carry no sampling error at
all -- unlike ``n`` i.i.d. draws, which add the TV of the sampling floor.

This module holds that rounding (:func:`controlled_rows`, and the
controlled rounding of counts the generator's start uses), and the rule
that sizes the model table so that rounding it stays below the noise
(:func:`auto_model_rows`). Released or public values only.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

__all__ = ["auto_model_rows", "controlled_rows"]

#: κ of :func:`auto_model_rows`: the rounding of the model table may add at
#: most this fraction of the noise's standard deviation per cell
ROUNDING_SHARE = 0.05
#: τ of :func:`auto_model_rows`: the rounding of the model table moves no
#: measured table by more than about this much total variation
ROUNDING_TV = 2.5e-4


def _controlled_levels(p, N, rng):
    """``N`` levels with counts the controlled rounding of ``N p`` (random order)."""
    counts = _round_counts(N * p, N, rng)
    out = np.repeat(np.arange(p.size), counts)
    rng.shuffle(out)
    return out


def _round_counts(expected, total, rng):
    """Integer counts summing to ``total``: floors plus a systematic remainder."""
    base = np.floor(expected).astype(np.int64)
    rest = int(total - base.sum())
    if rest > 0:
        frac = expected - base
        frac = (
            frac / frac.sum() if frac.sum() > 0 else np.full(frac.size, 1 / frac.size)
        )
        u = (rng.random() + np.arange(rest)) / rest
        picks = np.searchsorted(np.cumsum(frac), u, side="right")
        np.add.at(base, np.minimum(picks, frac.size - 1), 1)
    return base


def auto_model_rows(
    n_total: float,
    cell_sd: float,
    max_cells: int,
    *,
    share: float = ROUNDING_SHARE,
    tv_ceiling: float = ROUNDING_TV,
    noise_rule: bool = True,
) -> int:
    """Rows ``N`` of the generator's model table, from public quantities only.

    The fitted table has ``N`` equal-weight rows, so every cell of every table
    it implies is a multiple of ``1/N`` of the total; on the scale of the
    released counts (total ``n̂``) a cell moves in steps of ``n̂/N``. Rounding
    the (fractional) maximum-likelihood table to ``N`` rows therefore adds to
    each cell an error in ``[-n̂/(2N), n̂/(2N)]``, of standard deviation
    ``n̂/(N sqrt(12))`` when modelled as uniform (the standard quantisation
    model). The release's own noise has standard deviation ``s`` per cell
    (``cell_sd``: the smallest over the released tables, the most demanding
    one). Independent errors add in variance, so with::

        N >= n̂ / (sqrt(12) κ s)          (κ = ``share``)

    the rounding raises the per-cell error by at most a factor
    ``sqrt(1 + κ²)`` (1.001 for the default κ = 0.05): the rows' rounding
    sits below the noise. The rule depends on the signal-to-noise ratio
    ``n̂/s`` and not on the number of rows itself: at fixed ``n̂/s`` a table of
    10⁶ rows gets the same model as one of 10⁴.

    When the noise is tiny against ``n̂`` (many rows), that rule asks for a
    huge table although the rounding is already invisible in the proportions
    users score: a cell's rounding error is at most ``1/(2N)`` of the total,
    on average ``1/(4N)``, so a table of ``C`` cells moves by about
    ``C/(8N)`` in total variation. ``N >= C/(8 τ)`` (``τ = tv_ceiling``,
    ``C = max_cells``) keeps that at ``τ = 2.5·10⁻⁴`` or less on every
    measured table, a tenth of the smallest 2-way TV any of our benchmarks
    reports; ``N`` is the smaller of the two requirements. Measured with
    ``benchmarks/bench_generator_scale.py rows``: at 10⁶ rows the
    noise rule asked for 200k-500k rows, and the fit was both slower and
    worse than at this ceiling (20 attributes: TV2 0.0021 in 100 s against
    0.0014 in 30 s at N = 50k; nassCDS resampled to 10⁶ rows: 0.0010 in 54 s
    against 0.0004 in 10 s).

    Two bounds from the domain and the release: at least ``max_cells`` rows
    (every cell of the largest measured table can be occupied) and at most
    ``n̂`` (the table as many rows as the release counts, the generator's
    model before this rule; more rows would make ``sample(n̂)`` round again).
    Last, ``N`` is raised to ``⌈n̂/k⌉`` with ``k = ⌊n̂/N⌋``, so that
    ``n̂ = k N - δ`` with ``0 <= δ < k``: ``sample(n̂)`` is then ``k`` copies of
    the table less ``δ`` rows instead of copies plus a random subset of up to
    ``N`` rows, whose sampling error (hypergeometric, up to ``sqrt(c/4)`` on a
    cell of ``c`` rows) would exceed the rounding budget (so below ``2N₀``
    rows the table keeps all ``n̂``). A function of released and public
    values only (post-processing).

    Parameters
    ----------
    n_total : float
        The released total ``n̂`` (or the public ``n`` under replace-one).
    cell_sd : float
        Standard deviation of the noise of one cell of the released tables
        (counts; public: the noise scales). ``0`` or ``inf``-ratio: ``n̂`` rows.
    max_cells : int
        Cells of the largest measured table (public: the domain).
    share : float, default=0.05
        ``κ``: the rounding's share of the noise's standard deviation.
    tv_ceiling : float, default=2.5e-4
        ``τ``: the rounding's total variation on the largest table that is
        always small enough. ``0`` switches the ceiling off (the rule before).
    noise_rule : bool, default=True
        ``False``: no noise rule, ``N₀ = min(n̂, max(ceil(C / (8 τ)), C))``
        (``cell_sd`` and ``share`` unused). The rule bounds the rounding of
        the *measured* tables; the rows also carry the tables nobody
        measured (the 3-way tables of a 2-way release), which a small table
        coarsens: the release's default
        (``ReleaseRules.model_rows_noise_rule``) is ``False``.

    Returns
    -------
    int
        ``N₀ = min(n̂, max(min(ceil(n̂ / (sqrt(12) κ s)), ceil(C / (8 τ))), C))``
        (at least 1), then ``N = ceil(n̂ / floor(n̂ / N₀))``.

    Examples
    --------
    >>> auto_model_rows(10**6, cell_sd=20.0, max_cells=100)  # N₀ = 50000
    50000
    >>> auto_model_rows(10**6, cell_sd=20.0, max_cells=100, tv_ceiling=0)
    333334
    >>> auto_model_rows(5000, cell_sd=20.0, max_cells=100)  # N₀ = 1444
    1667
    >>> auto_model_rows(5000, cell_sd=0.0, max_cells=100)  # noise-free: n̂
    5000
    >>> auto_model_rows(5000, cell_sd=20.0, max_cells=100, noise_rule=False)
    5000
    >>> auto_model_rows(10**6, cell_sd=20.0, max_cells=100, noise_rule=False)
    50000
    """
    n_hat = max(1, int(round(float(n_total))))
    if not (share > 0):
        raise ValueError("share must be positive")
    if not (tv_ceiling >= 0):
        raise ValueError("tv_ceiling must be >= 0")
    s = float(cell_sd)
    if not noise_rule:
        need = n_hat
    elif not (s > 0 and math.isfinite(s)):
        return n_hat
    else:
        need = math.ceil(n_hat / (math.sqrt(12.0) * share * s))
    if tv_ceiling > 0:
        need = min(need, math.ceil(int(max_cells) / (8.0 * tv_ceiling)))
    N = int(max(1, min(n_hat, max(need, int(max_cells)))))
    k = n_hat // N  # n̂ = k N' - δ with 0 <= δ < k: sample(n̂) has no remainder
    return int(-(-n_hat // k))


def controlled_rows(
    rows: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    *,
    weights: ArrayLike | None = None,
) -> NDArray[Any]:
    """``n`` rows of a table by controlled rounding of their expected counts.

    The one rounding of a released table into rows, used by
    :meth:`ProjectedGaussianRelease.sample
    <skdp_synth.gaussian_release.ProjectedGaussianRelease.sample>` and
    :meth:`Release.sample <skdp_synth.release.Release.sample>`. Row ``i`` is
    expected ``n w_i`` times; it appears ``floor(n w_i)`` times or once more,
    and the output is shuffled, so the output's marginals equal the table's
    up to the rounding of the remainder (no i.i.d. sampling error).

    * ``weights=None``: an equal-weight table of ``N`` rows (the generator's
      fitted rows, ``w_i = 1/N``): each row ``floor(n/N)`` times and a simple
      random subset of ``n mod N`` rows once more.
    * ``weights`` given (non-negative, summing to 1; e.g. the distinct rows of
      that table with their frequencies, as a release holds them): the
      floors ``floor(n w_i)`` plus the remaining rows by systematic sampling
      proportional to the fractional parts ``n w_i - floor(n w_i)`` (each row
      gains one with probability its fractional part).

    Parameters
    ----------
    rows : ndarray of shape (N, ...)
    n : int
    rng : numpy.random.Generator
    weights : ndarray of shape (N,), default=None

    Returns
    -------
    ndarray of shape (n, ...)

    Examples
    --------
    >>> import numpy as np
    >>> rows = np.array([[0], [1], [2]])
    >>> out = controlled_rows(rows, 7, np.random.default_rng(0))
    >>> np.bincount(out[:, 0]).tolist() in ([3, 2, 2], [2, 3, 2], [2, 2, 3])
    True
    >>> out = controlled_rows(rows, 10, np.random.default_rng(0),
    ...                       weights=np.array([0.5, 0.3, 0.2]))
    >>> np.bincount(out[:, 0]).tolist()
    [5, 3, 2]
    """
    rows = np.asarray(rows)
    N = rows.shape[0]
    n = int(n)
    if weights is not None:
        counts = _round_counts(n * np.asarray(weights, dtype=np.float64), n, rng)
        index = np.repeat(np.arange(N), counts)
        rng.shuffle(index)
        return rows[index]
    reps, rest = divmod(n, N)
    parts = [np.tile(np.arange(N), reps)] if reps else []
    if rest:
        parts.append(rng.choice(N, size=rest, replace=False))
    index = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    rng.shuffle(index)
    return rows[index]
