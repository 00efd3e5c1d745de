"""Damped microaggregation: the statistics the damped release adds noise to.

:cite:`Boedihardjo2024` eq. 5.4 replaces each cell's mean by its sum divided by
``max(|F_j|, b)`` so that one record moves a mean by at most ``2/b`` times its
norm (Lemmas 5.10-5.11) however small the cell. This module holds that step
and the geometry it is bounded by, apart from the estimator so the pieces the
sensitivity proofs speak about can be read and tested alone:

* :class:`BlockGeometry` / :func:`block_geometry`: the public centroid, radii
  and l1 sensitivity of the valid rows of the blocks (the default release's
  domain; derivation in :mod:`skdp_synth.damped._parameters`);
* :func:`damped_microaggregation`: the cells' weights, damped means or
  centred sums;
* :func:`project_simplex_l1` and ``_hull_point``: the post-processing that
  maps noisy weights onto the simplex (§5.5) and a noisy mean into the valid
  rows' hull.
"""

from __future__ import annotations

import math

import numpy as np

from .._stats import cell_sums

__all__ = ["BlockGeometry", "block_geometry"]


# ------------------------------------------------------------ block geometry
class BlockGeometry:
    """Public geometry of the valid rows of a block structure (cube scale).

    For records ``u`` whose every block holds a valid code (one-hot: a
    vertex of the simplex; binary: ``{0, 1}``; thermometer: its codes) --
    the product over blocks of the codes' convex hulls -- with ``C_a`` the
    codes of block ``a``:

    * ``centroid``: the mean of ``C_a`` per block (one-hot: ``1/w`` per bit,
      binary: ``1/2``) -- the public centre of the private projection;
    * ``radius2 = sum_a max_{u in C_a} ||u - centroid_a||_2^2`` (one-hot:
      ``1 - 1/w``; binary ``1/4``), so ``||u - centroid||_2^2 <= radius2``;
    * ``diameter = sum_a max_{u, v in C_a} ||u - v||_1`` (one-hot 2, binary
      1, thermometer ``w``): the l1 diameter of the valid rows;
    * ``sum_centre``: per block, whichever of the origin, ``1/2`` and the
      centroid minimises ``max_{u in C_a} ||u - c_a||_1`` (one-hot: the
      origin, 1; binary and thermometer: ``1/2``, half the width), and
      ``sum_radius = sum_a`` that minimum;
    * ``sensitivity = max(diameter, 2 sum_radius)``: the l1 sensitivity of
      the centred cell sums (:mod:`skdp_synth.damped._parameters`),
      ``2 n_onehot + n_binary`` on one-hot/binary blocks, ``p`` on the cube.

    All of it depends on the public blocks only (``doc/privacy.md``).

    Examples
    --------
    >>> from skdp_synth.blocks import Blocks
    >>> g = block_geometry(Blocks.from_spec(
    ...     [{"name": "a", "kind": "onehot", "width": 4},
    ...      {"name": "b", "kind": "binary", "width": 1}]))
    >>> g.centroid.tolist(), g.radius2, g.diameter, g.sensitivity
    ([0.25, 0.25, 0.25, 0.25, 0.5], 1.0, 3.0, 3.0)
    >>> g.sum_centre.tolist()
    [0.0, 0.0, 0.0, 0.0, 0.5]
    """

    def __init__(self, centroid, radius2, diameter, sum_centre, sum_radius):
        self.centroid = centroid
        self.radius2 = float(radius2)
        self.diameter = float(diameter)
        self.sum_centre = sum_centre
        self.sum_radius = float(sum_radius)
        self.sensitivity = max(self.diameter, 2.0 * self.sum_radius)

    def __repr__(self):
        return (
            f"BlockGeometry(radius2={self.radius2:g}, diameter={self.diameter:g}, "
            f"sensitivity={self.sensitivity:g})"
        )


def block_geometry(blocks):
    """The :class:`BlockGeometry` of ``blocks`` (public: the encoder's schema)."""
    p = blocks.n_features
    centroid, sum_centre = np.empty(p), np.empty(p)
    radius2 = diameter = sum_radius = 0.0
    for block in blocks.blocks:
        codes = block.codes().astype(np.float64)
        c = codes.mean(axis=0)
        centroid[block.columns] = c
        radius2 += float(((codes - c) ** 2).sum(axis=1).max())
        diameter += float(
            np.abs(codes[:, None, :] - codes[None, :, :]).sum(axis=2).max()
        )
        best = None
        for cand in (np.zeros(block.width), np.full(block.width, 0.5), c):
            r = float(np.abs(codes - cand).sum(axis=1).max())
            if best is None or r < best[0] - 1e-12:
                best = (r, cand)
        sum_radius += best[0]
        sum_centre[block.columns] = best[1]
    centroid.flags.writeable = False  # public constants of a frozen plan
    sum_centre.flags.writeable = False
    return BlockGeometry(centroid, radius2, diameter, sum_centre, sum_radius)


def _hull_point(blocks, v):
    """A point of the valid rows' convex hull from ``v`` (post-processing):
    per block the expected code of :meth:`Block.level_probabilities`."""
    v = np.clip(np.asarray(v, dtype=np.float64), 0.0, 1.0)
    out = np.empty_like(v)
    for block in blocks.blocks:
        P = block.level_probabilities(v[None, block.columns])
        out[block.columns] = (P @ block.codes())[0]
    return out


# ------------------------------------------------- damped microaggregation
def damped_microaggregation(X, labels, n_cells, b, centre=None, sums_only=False):
    """Weights and damped means of a partition (:cite:`Boedihardjo2024` eq. 5.4).

    Parameters
    ----------
    X : ndarray of shape (n, p)
    labels : ndarray of shape (n,)
        Cell of each row, in ``0..n_cells-1``.
    n_cells : int
        Number of cells ``s`` (empty cells included).
    b : float
        Damping level, ``> 0``.
    centre : ndarray of shape (p,), default=None
        A public point ``c``: the damped means are those of ``x_i - c``
        (``None``: of ``x_i``, the paper's).
    sums_only : bool, default=False
        Return the cell sums ``sum_{F_j} (x_i - c)`` in place of the damped
        means (``b`` unused).

    Returns
    -------
    w : ndarray of shape (s,)
        ``|F_j| / n``.
    y_tilde : ndarray of shape (s, p)
        ``sum_{i in F_j} x_i / max(|F_j|, b)`` (zero for empty cells).
    counts : ndarray of shape (s,)

    References
    ----------
    :cite:`Boedihardjo2024` eq. 5.4.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> w, y, c = damped_microaggregation(X, np.array([0, 0, 2]), 3, b=2.5)
    >>> w.tolist(), c.tolist()
    ([0.6666666666666666, 0.0, 0.3333333333333333], [2, 0, 1])
    >>> y.tolist()                    # cells smaller than b are divided by b
    [[0.4, 0.4], [0.0, 0.0], [0.4, 0.4]]
    """
    counts, sums = cell_sums(X, labels, n_cells)
    return _from_cell_sums(counts, sums, X.shape[0], b, centre, sums_only)


def _from_cell_sums(counts, sums, n, b, centre=None, sums_only=False):
    """:func:`damped_microaggregation` from the cells' counts and sums."""
    if centre is not None:
        sums = sums - counts[:, None] * np.asarray(centre, dtype=np.float64)
    if sums_only:
        return counts / n, sums, counts
    y_tilde = sums / np.maximum(counts, b)[:, None]
    return counts / n, y_tilde, counts


def project_simplex_l1(v):
    """An ``l1`` metric projection onto the probability simplex (:cite:`Boedihardjo2024`
    §5.5).

    Negative entries are set to 0 and the rest renormalised; if no entry is
    positive the uniform vector is returned. This is a minimiser of
    ``||w - v||_1`` over the simplex: any distribution dominating (or
    dominated by) ``max(v, 0)`` is at distance
    ``sum(max(-v, 0)) + |1 - sum(max(v, 0))|``, the minimum.

    Examples
    --------
    >>> project_simplex_l1(np.array([0.5, -0.2, 0.3])).tolist()
    [0.625, 0.0, 0.375]
    >>> project_simplex_l1(np.array([-1.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    v = np.asarray(v, dtype=np.float64)
    positive = np.clip(v, 0.0, None)
    total = positive.sum()
    if not total > 0:
        return np.full(v.shape, 1.0 / v.size)
    return positive / total


def level_coefficients(block, level):
    """``(a, a0)``: the count of ``level`` of ``block`` as ``a . T + a0 n``,
    ``T`` the counts of the block's bits (its codes, :meth:`Block.codes`).
    One-hot: the level's bit; binary: the bit or ``n`` minus it;
    thermometer ``(v_1..v_t[, m])``: ``v_l - v_{l+1}`` with ``v_0 = n - m``
    and ``v_{t+1} = 0``, and the missing level is ``m``."""
    a = np.zeros(block.width)
    if block.kind == "onehot":
        a[level] = 1.0
        return a, 0.0
    if block.kind == "binary":
        return (a + 1.0, 0.0) if level == 1 else (a - 1.0, 1.0)
    t = block._thermo_width
    if block.missing and level == t + 1:
        a[t] = 1.0
        return a, 0.0
    a0 = 0.0
    if level == 0:
        a0 = 1.0
        if block.missing:
            a[t] = -1.0
    else:
        a[level - 1] = 1.0
    if level < t:
        a[level] -= 1.0
    return a, a0


def one_way_level_estimate(blocks, totals, parts, j, level):
    """``(T̂, σ)``: the damped release's estimate of the count of ``level``
    of attribute ``j`` and its noise standard deviation, from the released
    bit totals ``T̂_i = Σ_c ỹ_ci + n Σ_c w̃_c z_i`` (the noisy centred cell
    sums ``ỹ`` and noisy weights ``w̃`` before any projection, ``z`` the
    public ``sum_centre``): unbiased, with variance
    ``2 s (β² |a|² + (n λ_w a.z)²)`` for ``s`` cells, Laplace scales ``β``
    (sums) and ``λ_w`` (weights), ``a`` from :func:`level_coefficients`
    (doc/privacy/damped.md, "One-way estimates"). Post-processing."""
    s, sum_scale, count_scale, centre, n = parts
    block = blocks.blocks[int(j)]
    a, a0 = level_coefficients(block, int(level))
    cols = block.columns
    est = float(a @ totals[cols] + a0 * n)
    var = (
        2.0
        * s
        * (sum_scale**2 * float(a @ a) + (count_scale * (a @ centre[cols])) ** 2)
    )
    return est, math.sqrt(var)
