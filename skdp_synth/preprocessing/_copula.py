"""Where values fall inside their coarse bins, jointly across numeric columns.

The release measures numeric columns in coarse bins; a decoded value is then
placed inside its bin by the column's private fine histogram. Drawn column by
column, the places are independent: two columns that move together
(a flight's distance and air time, a worker's age and wage) lose their
dependence inside every pair of bins, and a model or a finer table sees a
blur of what the release measured between bins.

A Gaussian copula keeps it (post-processing: it reads only the released
distribution, never the data). Its correlation ``R`` comes from the
release's own table of coarse bins: each column's bins are intervals of a
latent standard normal ``Z_j`` (cut at ``Φ⁻¹`` of the released bin CDF); a
row's bins are a box, and its ``Z`` is drawn from ``N(0, R)`` inside that box
(Gibbs sampling, :func:`within_bin_quantiles`); ``Φ(Z_j)`` placed inside the
bin's CDF interval, then replaced by its rank among the rows of that bin
(jittered), is the quantile, in ``[0, 1]``, at which the column's fine
histogram is read (``decode_fine(..., u=)``). Every column keeps its
distribution (a stratified uniform given its bin); only the coupling inside
the bins changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

__all__ = [
    "GaussianCopula",
    "fit_copula",
    "single_value_bins",
    "within_bin_quantiles",
]

#: Gibbs sweeps per decode (each a pass over the columns, vectorised over
#: rows): the box constraints mix within a few. A binned normal's own
#: within-bin rank correlation at ρ = 0.99 (0.139): 1 / 2 / 3 / 4 / 8 / 16
#: sweeps give 0.053 / 0.125 / 0.132 / 0.138 / 0.137 / 0.143.
SWEEPS = 4
#: The largest |latent correlation| kept (a singular R has no conditionals).
MAX_CORRELATION = 0.99


@dataclass(frozen=True)
class GaussianCopula:
    """``cdfs[j]``: the released CDF of column ``j``'s bins (``0`` first,
    ``1`` last, one more entry than bins); ``corr``: the latent correlation."""

    cdfs: tuple
    corr: np.ndarray


def _cuts(cdf):
    return ndtri(np.clip(np.asarray(cdf, dtype=np.float64), 0.0, 1.0))


def _phi(z):
    """The standard normal density, 0 at ``±inf``."""
    finite = np.isfinite(z)
    return np.exp(-0.5 * np.where(finite, z, 0.0) ** 2) * finite / np.sqrt(2 * np.pi)


def _bin_scores(cdf):
    """``E[Z | bin]`` of a standard normal cut at ``Φ⁻¹(cdf)``."""
    a, b = _cuts(cdf[:-1]), _cuts(cdf[1:])
    p = np.diff(cdf)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, (_phi(a) - _phi(b)) / p, 0.0)


#: :func:`fit_copula` reads the latent correlations without the points of a
#: bin that holds one value (:func:`single_value_bins`) and at least this
#: share of its column's points: such a bin has no place inside it to
#: couple, and its latent box is wide, so a tight correlation with it drags
#: the other columns' places around inside their bins. On dplyr's
#: ``storms``, ``hurricane_force_diameter`` (0, one bin, for every storm
#: below hurricane strength, over half the rows) came out at latent
#: correlation 0.94 with ``wind`` and -0.94 with ``pressure``, and a model of
#: ``wind`` trained on the rows scored R² .891 with the copula against .928
#: placing values column by column (ε = 100, 2 seeds; real rows .973).
#: Leaving every one-value bin out hurt where such bins are narrow: cps1988's
#: ``education`` and ``experience`` have a bin per integer that locates the
#: row and shifts ``wage`` inside its bin (R² .321 -> -.117 at ε = 1). At
#: 0.25 cps1988's ``education`` = 12 (37.5 % of the rows) went too (R² .322
#: -> .312); at 0.4 cps1988 is unchanged and storms gains (.913 -> .924 at
#: ε = 1, .927 -> .941 at ε = 3, 2 seeds; ``benchmarks/results/
#: bench_copula_start.md``). ``None``: every bin counts.
WIDE_SINGLE_SHARE = 0.4


def single_value_bins(edges, integer, fine=None):
    """A mask of a numeric column's bins (``edges``, its coarse bin edges)
    that hold one value: for an integer column a bin one integer wide (the
    last bin is closed: ``[a, a]``); for a float column a bin whose only
    kept leaf of the fine histogram ``fine`` is a finest one, which decodes
    to one value (none without ``fine``). Public: the released edges, the
    dtype and the released histogram."""
    edges = np.asarray(edges, dtype=np.float64)
    width = np.diff(edges)
    if integer:
        width[-1:] += 1.0  # the last bin [a, b] holds b - a + 1 integers
        return width <= 1.0
    out = np.zeros(width.size, dtype=bool)
    if fine is None:
        return out
    e = np.asarray(fine.edges, dtype=np.float64)
    kept = np.asarray(fine.counts, dtype=np.float64) > 0
    finest = np.asarray(fine.finest, dtype=bool)
    for b in range(width.size):
        inside = kept & (e[:-1] >= edges[b]) & (e[1:] <= edges[b + 1])
        out[b] = inside.sum() == 1 and bool(finest[inside].all())
    return out


def fit_copula(indices, missing, n_bins, weights, single=None):
    """The copula of the released coarse table (post-processing).

    ``indices``: ``(m, k)`` bin of each of ``m`` released points in each of
    ``k`` numeric columns; ``missing``: where a point is missing there;
    ``n_bins[j]``: bins of column ``j``; ``weights``: the points' weights.
    Each column's bin CDF is the weighted share of its non-missing points;
    the latent correlation of two columns is the ``ρ`` of a bivariate
    normal whose bin scores ``m(bin) = E[Z | bin]`` have their weighted
    covariance (:func:`_latent_correlation`, Mehler's expansion: the
    correlation of the scores themselves is weakened by the coarsening),
    clipped to ``±MAX_CORRELATION``, the matrix projected onto the
    correlation matrices. ``single`` (optional): per column, a mask of its
    bins that hold one value (:func:`single_value_bins`); the points of
    those holding at least :data:`WIDE_SINGLE_SHARE` of the column's are
    left out of the covariances, not of the CDFs.
    """
    idx = np.asarray(indices)
    miss = np.asarray(missing, dtype=bool)
    w = np.asarray(weights, dtype=np.float64)
    k = idx.shape[1]
    cdfs, scores, coefs = [], [], []
    for j in range(k):
        keep = ~miss[:, j]
        mass = np.bincount(idx[keep, j], weights=w[keep], minlength=n_bins[j])
        total = mass.sum()
        mass = mass / total if total > 0 else np.full(n_bins[j], 1.0 / n_bins[j])
        cdf = np.concatenate([[0.0], np.cumsum(mass)])
        cdf[-1] = 1.0
        m = _bin_scores(cdf)
        coefs.append(_hermite_coefficients(cdf, m))
        cdfs.append(cdf)
        at = np.clip(idx[:, j], 0, n_bins[j] - 1)
        if single is not None and WIDE_SINGLE_SHARE is not None:
            wide = np.asarray(single[j], dtype=bool) & (mass >= WIDE_SINGLE_SHARE)
            keep = keep & ~wide[at]
        scores.append(np.where(keep, m[at], np.nan))
    R = np.eye(k)
    for a in range(k):
        for b in range(a + 1, k):
            both = ~np.isnan(scores[a]) & ~np.isnan(scores[b])
            ww = w[both]
            # c_1 = E[m(Z) Z] = Var m: 0 for a column kept in one bin
            if ww.sum() <= 0 or coefs[a][0] <= 0 or coefs[b][0] <= 0:
                continue
            x, y = scores[a][both], scores[b][both]
            mx, my = np.average(x, weights=ww), np.average(y, weights=ww)
            cov = np.average((x - mx) * (y - my), weights=ww)
            R[a, b] = R[b, a] = _latent_correlation(cov, coefs[a], coefs[b])
    return GaussianCopula(tuple(cdfs), _nearest_correlation(R))


#: Terms of the Hermite expansion of the bin scores' covariance.
HERMITE_TERMS = 16


def _hermite_coefficients(cdf, m):
    """``c_k = E[m(Z) He_k(Z)]`` for ``k = 1..HERMITE_TERMS``: bin scores
    ``m`` on the cuts ``Φ⁻¹(cdf)``, by ``∫_a^b He_k φ = [He_{k-1} φ]_b^a``."""
    cuts = _cuts(cdf)
    z = np.where(np.isfinite(cuts), cuts, 0.0)
    phi = _phi(cuts)
    prev, he = np.zeros_like(z), np.ones_like(z)  # He_{k-2}, He_{k-1}
    out = []
    for k in range(1, HERMITE_TERMS + 1):
        g = he * phi
        out.append(float(np.sum(m * (g[:-1] - g[1:]))))
        prev, he = he, z * he - (k - 1) * prev
    return np.array(out)


def _latent_correlation(cov, ca, cb):
    """The ``ρ`` of a bivariate normal whose bin scores have covariance
    ``cov``: ``cov(ρ) = Σ_k ρ^k c_k^a c_k^b / k!`` (Mehler's expansion),
    solved by bisection on ``[-MAX_CORRELATION, MAX_CORRELATION]``."""
    k = np.arange(1, len(ca) + 1)
    w = ca * cb / np.cumprod(k.astype(float))

    def f(r):
        return float(np.sum(w * r**k)) - cov

    lo, hi = -MAX_CORRELATION, MAX_CORRELATION
    if f(lo) >= 0:
        return lo
    if f(hi) <= 0:
        return hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


def _nearest_correlation(R):
    vals, vecs = np.linalg.eigh((R + R.T) / 2)
    vals = np.maximum(vals, 1e-3)
    S = (vecs * vals) @ vecs.T
    d = np.sqrt(np.diag(S))
    return S / np.outer(d, d)


def _truncated_normal(mu, sigma, lo, hi, v):
    """``N(mu, sigma²)`` restricted to ``[lo, hi]`` at its quantile ``v``
    (inverse CDF; computed in the tail nearer to 0 for precision)."""
    a, b = (lo - mu) / sigma, (hi - mu) / sigma
    flip = a > 0  # both in the upper tail: use the mirrored lower tail
    a, b = np.where(flip, -b, a), np.where(flip, -a, b)
    Fa = ndtr(a)
    z = ndtri(Fa + v * (ndtr(b) - Fa))
    # inside [a, b] and finite (an interval beyond float precision, or a
    # draw of exactly 0, gives ±inf)
    np.clip(z, np.maximum(a, -40.0), np.minimum(b, 40.0), out=z)
    np.negative(z, out=z, where=flip)
    return mu + sigma * z


#: Whether the sweeps start from a sequential draw that already follows the
#: columns' correlation (:func:`_sequential_start`), not from the middle of
#: each row's box, each column on its own. Where strongly coupled columns
#: sit in wide bins, the sweeps from the middles crawl along the ridge of
#: the latent normal and had not mixed after :data:`SWEEPS`: three columns
#: at ρ = 0.995 in two bins each kept within-bin correlations of 0.70-0.72
#: against the Gaussian's own 0.82 (0.81 after 64 sweeps; with the start,
#: 0.81 after 4; ``tests/test_copula.py``). On dplyr's ``storms`` (nine
#: numeric columns, wind and pressure at latent correlation -0.8 to -0.9),
#: a model of ``wind`` trained on the rows scored R² .886 -> .900 at ε = 1
#: and .885 -> .912 at ε = 3 (3 seeds each, the held-out rows of
#: ``benchmarks/bench_suite.py``); on the noise-free pipeline (ε = 1e6) the
#: rows scored .807, .872 and .898 after 4, 16 and 64 sweeps from the
#: middles, .893 after 4 from the start. Over the TUNE half the scores and
#: the pairwise rank correlations moved within their noise, at 1.04-1.08
#: times the sampling time (``benchmarks/results/bench_copula_start.md``).
SEQUENTIAL_START = True


def _sequential_start(corr, lo, hi, rng):
    """A first draw of ``Z`` inside each row's box, column after column
    (the GHK simulator): ``Z = L e`` with ``L`` the Cholesky factor of
    ``R`` and each ``e_j`` a standard normal truncated so that ``Z_j``
    falls in its box given ``Z_1 .. Z_{j-1}``. It already follows the
    columns' correlation, where the sweeps would start from each box's
    middle, independently."""
    n, k = lo.shape
    L = np.linalg.cholesky(corr)
    z = np.zeros((n, k))
    e = np.zeros((n, k))
    for j in range(k):
        mu = e[:, :j] @ L[j, :j]
        s = float(L[j, j])
        z[:, j] = _truncated_normal(mu, s, lo[:, j], hi[:, j], rng.random(n))
        e[:, j] = (z[:, j] - mu) / s
    return z


def within_bin_quantiles(copula, indices, missing, rng, sweeps=SWEEPS):
    """``(n, k)`` quantiles in ``[0, 1]`` at which each row's value is read
    inside its bin (NaN where missing): ``Z ~ N(0, R)`` restricted to the
    row's box of bins, by Gibbs sampling (started from
    :func:`_sequential_start`, :data:`SEQUENTIAL_START`), then ``Φ(Z_j)``
    located in bin ``j``'s CDF interval. A missing column is unconstrained.
    Bins without released mass (a decode outside the copula's support) get
    a uniform."""
    idx = np.asarray(indices)
    miss = np.asarray(missing, dtype=bool)
    n, k = idx.shape
    lo, hi, flo, fhi = (np.empty((n, k)) for _ in range(4))
    for j, cdf in enumerate(copula.cdfs):
        i = np.clip(idx[:, j], 0, len(cdf) - 2)
        flo[:, j], fhi[:, j] = cdf[i], cdf[i + 1]
        lo[:, j] = np.where(miss[:, j], -np.inf, _cuts(flo[:, j]))
        hi[:, j] = np.where(miss[:, j], np.inf, _cuts(fhi[:, j]))
    empty = fhi <= flo
    lo, hi = np.where(empty, -np.inf, lo), np.where(empty, np.inf, hi)
    P = np.linalg.inv(copula.corr)
    sigma = 1.0 / np.sqrt(np.diag(P))
    if SEQUENTIAL_START:
        z = _sequential_start(copula.corr, lo, hi, rng)
    else:
        z = np.clip(ndtri(np.clip((flo + fhi) / 2, 1e-12, 1 - 1e-12)), lo, hi)
        z = np.where(np.isfinite(z), z, 0.0)
    for _ in range(sweeps):
        for j in range(k):
            mu = -(z @ P[j] - P[j, j] * z[:, j]) / P[j, j]
            z[:, j] = _truncated_normal(mu, sigma[j], lo[:, j], hi[:, j], rng.random(n))
    with np.errstate(divide="ignore", invalid="ignore"):
        u = (ndtr(z) - flo) / (fhi - flo)
    u = np.where(empty, rng.random((n, k)), np.clip(u, 0.0, 1.0))
    return np.where(miss, np.nan, _uniform_within_bins(u, idx, miss, rng))


def _uniform_within_bins(u, idx, miss, rng):
    """Each column's quantiles made uniform inside every bin, their order
    kept: the released table is not a Gaussian copula, so the box-truncated
    draws tilt a bin's values (a skewed column's top bin pushed out into
    its tail, std 2.4 times the real one on flights); their ranks in the
    bin, jittered, are exactly the stratified uniform the column's own
    decoding draws (each column's distribution unchanged)."""
    out = u.copy()
    for j in range(u.shape[1]):
        keep = np.flatnonzero(~miss[:, j])
        # one float key: the bin, then the draw inside it (u < 1)
        order = keep[np.argsort(idx[keep, j] + 0.5 * u[keep, j])]
        bins = idx[order, j]
        starts = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]])
        sizes = np.diff(np.r_[starts, bins.size])
        rank = np.arange(bins.size) - np.repeat(starts, sizes)
        out[order, j] = (rank + rng.random(bins.size)) / np.repeat(sizes, sizes)
    return out
