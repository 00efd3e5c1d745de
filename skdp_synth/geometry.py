"""Spectral projection, lattice coverings and nearest-point partitions.

Shared by :class:`~skdp_synth.CovarianceLossMicroaggregator` (:cite:`Boedihardjo2024`
§3, Algorithm 1) and :class:`~skdp_synth.DampedPrivateSynthesizer`
(:cite:`Boedihardjo2024` §5, Algorithm 4) -- one implementation for both.

* :cite:`Boedihardjo2024` Lemma 3.3: projecting onto the ``t`` leading eigenvectors of
  the second moment matrix ``S`` leaves ``||(I-P)S(I-P)||_F <= 1/sqrt(t)`` when
  ``||x|| <= 1``.
* :cite:`Boedihardjo2024` Proposition 3.7 / Algorithm 1 step 4: the lattice points
  ``(alpha/sqrt(t)) Z^t  intersected with  B_2^t`` form an ``alpha``-covering
  of the unit ball ``B_2^t`` with at most ``(7/alpha)^t`` points. (Every
  ``z`` in the ball is within ``alpha`` of a lattice point *inside* the ball:
  round ``(1 - alpha/2) z``, which is ``alpha/2`` from ``z``, to a lattice
  point ``alpha/2`` away from it.)
* :cite:`Boedihardjo2024` Definition 3.4: the nearest-point partition assigns each
  projected record to its nearest covering point.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree

__all__ = [
    "LatticeCovering",
    "leading_eigenvectors",
    "nearest_in_symmetric_hull",
    "residual_spectral_norm",
    "second_moment",
]


def second_moment(X):
    """``S = X^T X / n`` (not centred), :cite:`Boedihardjo2024` Algorithm 1 step 1."""
    X = np.asarray(X, dtype=np.float64)
    return X.T @ X / X.shape[0]


def leading_eigenvectors(S, t):
    """The ``t`` leading eigenvectors of the symmetric matrix ``S``.

    Returns
    -------
    V : ndarray of shape (p, t)
        Orthonormal columns, eigenvalues in decreasing order. Each column's sign
        is fixed so that its largest-magnitude entry is positive, making the
        result deterministic.
    eigenvalues : ndarray of shape (p,)
        All eigenvalues of ``S`` in decreasing order.
    """
    S = np.asarray(S, dtype=np.float64)
    values, vectors = np.linalg.eigh((S + S.T) / 2)
    # stable: equal eigenvalues keep LAPACK's order on every CPU
    order = np.argsort(values, kind="stable")[::-1]
    values, vectors = values[order], vectors[:, order]
    V = vectors[:, :t].copy()
    if t:
        idx = np.argmax(np.abs(V), axis=0)
        V *= np.sign(V[idx, np.arange(t)])
    return V, values


def residual_spectral_norm(eigenvalues, t):
    """``||(I-P)S(I-P)||_F = sqrt(sum_{i>t} lambda_i^2)`` for the spectral projection.

    :cite:`Boedihardjo2024` Lemma 3.3, eq. (3.2); bounded by ``1/sqrt(t)`` for data in
    the unit ball.
    """
    tail = np.asarray(eigenvalues, dtype=np.float64)[t:]
    return float(np.sqrt(np.sum(np.clip(tail, 0.0, None) ** 2)))


def _lattice_points(t, radius, max_points, chunk_elements=4_000_000):
    """Integer vectors ``z`` in ``Z^t`` with ``||z||_2 <= radius``, all of them.

    Sizes are checked arithmetically before anything is allocated (without
    that, ``alpha=1e-9`` would allocate tens of GiB before the size guard): the
    ``2 floor(r) + 1`` points on one axis and the ``(2 floor(r/sqrt t) + 1)^t``
    points of the inscribed cube are all in the ball, so either above
    ``max_points`` refuses at once; the candidates of each extension step are
    then built in chunks of at most ``chunk_elements``.
    """

    def too_many():
        return ValueError(
            f"the covering would have more than {max_points} points; choose a "
            "larger alpha or fewer components"
        )

    if not math.isfinite(radius):
        raise too_many()
    r_int = int(math.floor(radius + 1e-12))
    if 2 * r_int + 1 > max_points:
        raise too_many()
    inner = int(math.floor(radius / math.sqrt(t))) if t else 0
    if t * math.log(2 * inner + 1) > math.log(max_points):
        raise too_many()
    r2 = radius * radius + 1e-9
    partial = np.zeros((1, 0), dtype=np.int64)
    used = np.zeros(1)
    steps = np.arange(-r_int, r_int + 1, dtype=np.int64)
    squares = steps.astype(np.float64) ** 2
    rows_per_chunk = max(1, chunk_elements // steps.size)
    for _ in range(t):
        parts, sums, total = [], [], 0
        for start in range(0, used.size, rows_per_chunk):
            block = used[start : start + rows_per_chunk]
            new_used = block[:, None] + squares[None, :]
            rows, cols = np.nonzero(new_used <= r2)
            total += rows.size
            if total > max_points:
                raise too_many()
            parts.append(np.hstack([partial[start + rows], steps[cols][:, None]]))
            sums.append(new_used[rows, cols])
        partial = np.vstack(parts)
        used = np.concatenate(sums)
    return partial


#: :meth:`LatticeCovering.nearest` uses a dense look-up table (int32, 4 bytes
#: a key) when the box of the covering has at most this many integer points
_TABLE_KEYS = 1 << 20


class LatticeCovering:
    """The ``alpha``-covering ``(alpha/sqrt(t)) Z^t  intersected with  B_2^t``.

    Parameters
    ----------
    t : int
        Dimension (``t = 0`` gives the single point ``0`` of ``R^0``).
    alpha : float
        Covering radius, ``0 < alpha``.
    max_points : int, default=2_000_000
        Refuse to build coverings larger than this.

    Attributes
    ----------
    points : ndarray of shape (s, t)
        The covering points, in the ball.
    n_points : int

    Examples
    --------
    >>> cov = LatticeCovering(2, 0.8)
    >>> cov.n_points            # (0.8/sqrt 2) Z^2 in the unit disc
    9
    >>> cov.nearest(np.array([[0.5, 0.0], [0.0, 0.0]])).tolist()
    [7, 4]
    """

    def __init__(self, t, alpha, max_points=2_000_000):
        t = int(t)
        if t < 0:
            raise ValueError(f"t must be >= 0, got {t}")
        if not (alpha > 0 and math.isfinite(alpha)):
            raise ValueError(f"alpha must be a finite number > 0, got {alpha!r}")
        self.t = t
        self.alpha = float(alpha)
        if t == 0:
            self._integer = np.zeros((1, 0), dtype=np.int64)
            self.step = 1.0
        else:
            self.step = self.alpha / math.sqrt(t)
            self._integer = _lattice_points(t, 1.0 / self.step, max_points)
        self.points = self._integer * self.step
        self.n_points = self.points.shape[0]
        # keys of the integer points for exact O(log s) look-up of a rounded point
        self._offset = int(np.abs(self._integer).max()) if t else 0
        self._base = 2 * self._offset + 3
        keys = self._keys(self._integer)
        self._order = np.argsort(keys)
        self._sorted_keys = keys[self._order]
        self._tree = None
        self._table = None

    def _keys(self, Z):
        if self.t == 0:
            return np.zeros(Z.shape[0], dtype=np.int64)
        shifted = Z + self._offset + 1
        powers = self._base ** np.arange(self.t, dtype=np.int64)
        return shifted @ powers

    def nearest(self, Z):
        """Index of the nearest covering point for each row of ``Z`` (shape (n, t)).

        Rounds ``Z / step`` to the nearest lattice point; when that point lies
        inside the ball it is the nearest point of the whole lattice, hence of
        the covering. Otherwise (near the boundary, or outside the ball) a
        KD-tree over the covering gives the exact nearest point. Deterministic.
        """
        Z = np.asarray(Z, dtype=np.float64)
        n = Z.shape[0]
        if self.t == 0:
            return np.zeros(n, dtype=np.intp)
        if Z.ndim != 2 or Z.shape[1] != self.t:
            raise ValueError(f"expected points of dimension {self.t}, got {Z.shape}")
        rounded = np.rint(Z / self.step).astype(np.int64)
        if self._base**self.t <= _TABLE_KEYS:
            return self._nearest_by_table(Z, rounded)
        radius_sq = (1.0 / self.step) ** 2 + 1e-9
        inside = np.sum(rounded.astype(np.float64) ** 2, axis=1) <= radius_sq
        inside &= np.all(np.abs(rounded) <= self._offset, axis=1)
        out = np.empty(n, dtype=np.intp)
        if np.any(inside):
            keys = self._keys(rounded[inside])
            pos = np.searchsorted(self._sorted_keys, keys)
            pos = np.minimum(pos, len(self._sorted_keys) - 1)
            found = self._sorted_keys[pos] == keys
            idx = np.where(found, self._order[pos], -1)
            out[inside] = idx
            inside_idx = np.flatnonzero(inside)
            missing = inside_idx[~found]
        else:
            missing = np.zeros(0, dtype=np.intp)
        rest = np.concatenate([np.flatnonzero(~inside), missing])
        return self._nearest_by_tree(Z, rest, out)

    def _nearest_by_tree(self, Z, rest, out):
        """``out[rest]``: the nearest covering points of the rows ``Z[rest]``
        (a KD-tree over the points, built once), for the rows the fast paths
        leave open; returns ``out``."""
        if rest.size:
            if self._tree is None:
                self._tree = cKDTree(self.points)
            _, idx = self._tree.query(Z[rest])
            out[rest] = idx
        return out

    def _nearest_by_table(self, Z, rounded):
        """:meth:`nearest` by a look-up table over the box of the covering.

        The same labels as the sorted-key search: a rounded point is a
        covering point exactly when its (clipped) key holds one in the table
        of the ``(2 offset + 3)^t`` integer points of the box ``|z_j| <=
        offset + 1`` (a coordinate clipped to ``offset + 1`` is in no covering
        point); every other row goes to the KD-tree, as there. One gather per
        row instead of a binary search, the norm and the box test.
        """
        if self._table is None:
            table = np.full(self._base**self.t, -1, dtype=np.int32)
            table[self._keys(self._integer)] = np.arange(self.n_points)
            self._table = table
        shift = self._offset + 1
        np.clip(rounded, -shift, shift, out=rounded)
        keys = rounded[:, self.t - 1] + shift
        for j in range(self.t - 2, -1, -1):
            keys *= self._base
            keys += rounded[:, j] + shift
        out = self._table[keys].astype(np.intp)
        return self._nearest_by_tree(Z, np.flatnonzero(out < 0), out)

    def __repr__(self):
        return (
            f"LatticeCovering(t={self.t}, alpha={self.alpha:g}, "
            f"n_points={self.n_points})"
        )


def nearest_in_symmetric_hull(H, b, *, max_iter=2000, tol=1e-9):
    """``argmin ||x - b||`` over ``conv{±h_u}`` (columns of ``H``), :cite:`Nikolov2013`
    §4.2.

    The least-squares step of :cite:`Nikolov2013` Algorithm 3 (sparse case) in
    :class:`~skdp_synth.ProjectedGaussianRelease`.

    Frank--Wolfe with exact line search; the linear minimisation oracle is a
    maximum over the enumerated columns. Stops when the duality gap is below
    ``tol · max(1, ||b||²)``.

    References
    ----------
    :cite:`Nikolov2013` §4.2 and Algorithm 3.
    """
    x = np.zeros_like(b)
    scale = max(1.0, float(b @ b))
    for _ in range(max_iter):
        grad = x - b
        scores = grad @ H
        j = int(np.argmax(np.abs(scores)))
        s = -np.sign(scores[j]) * H[:, j] if scores[j] != 0 else np.zeros_like(b)
        direction = s - x
        gap = -float(grad @ direction)
        if gap <= tol * scale:
            break
        denom = float(direction @ direction)
        gamma = min(1.0, gap / denom) if denom > 0 else 0.0
        x = x + gamma * direction
    return x
