"""Partitions for :class:`~skdp_synth.CovarianceLossMicroaggregator`.

Pure functions on arrays; the estimator in :mod:`skdp_synth.microaggregation`
strings them together. Everything works on the cube scale ``U`` in
``[0, 1]^p`` that the shared mixin hands to ``_fit``; the unit-ball scale of
:cite:`Boedihardjo2024` is ``U / sqrt(p)`` (:cite:`Boedihardjo2024` §4.3) and enters
only through the factor ``1/p`` in second moments and ``1/sqrt(p)`` in projections, so
the data is never copied to change scale.

Pieces
------
:func:`paper_parameters`
    ``k' = floor(sqrt(k))``, ``alpha`` and ``t`` of :cite:`Boedihardjo2024` Algorithm 1
    step 2.
:func:`spectral_cells`
    :cite:`Boedihardjo2024` Algorithm 1 steps 1-5: projection on the ``t`` leading
    eigenvectors of ``S``, nearest point of the lattice covering.
:func:`pinning_cells`
    :cite:`SahSawhney` §2: cells of rows agreeing on a random set of coordinates.
:func:`plan_equipartition` and :func:`equipartition`
    :cite:`Boedihardjo2024` §3.6 / Algorithm 1 step 6 with the remainder of Remark 4.2:
    cut each cell into blocks of ``floor(n/k)`` or ``floor(n/k) + 1`` rows and a
    residual, merge the residuals, cut the merged residual.
:func:`row_keys`
    Exact 64-bit keys of rows, used by ``transform`` to recognise training rows.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ..geometry import LatticeCovering, leading_eigenvectors, residual_spectral_norm

__all__ = [
    "cell_loss",
    "cell_sums_from_groups",
    "covering_cells",
    "dense_cells",
    "equipartition",
    "group_sums",
    "paper_parameters",
    "pinning_cells",
    "pinning_depth",
    "pinning_keys",
    "plan_equipartition",
    "row_keys",
    "sketch_basis",
    "sketch_block_rows",
    "sketch_rows",
    "spectral_basis",
    "spectral_cells",
    "stable_argsort",
]

#: dimension of the principal sketch used to divide cells compactly (bisection)
SKETCH_DIM = 16
#: dimension of the quantised sketch of ``division="kdtree"``: each node picks
#: its 8 axes of largest variance among these (at n = 10^6, p = 50, k = 10^5
#: the covariance loss falls from 0.02239 with 16 axes to 0.02083 with 32;
#: ``benchmarks/bench_microaggregation.py``)
KDTREE_SKETCH_DIM = 32
#: power iterations per node and level of the recursive splitting
POWER_ITERATIONS = 2
#: parts per node and level of the recursive splitting
FANOUT = 2
#: rows per batch once the nodes are small (cache-sized work)
BATCH_ROWS = 1 << 15


# ------------------------------------------------------------ parameters
def paper_parameters(k):
    """``(k', alpha, t)`` of :cite:`Boedihardjo2024` Algorithm 1 step 2 (and eq. (3.5)
    with ``k'``).

    ``k' = floor(sqrt(k))``. For ``k' < 3`` (``k < 9``) the algorithm uses a
    single cell: ``alpha`` is ``None`` and ``t = 0``. Otherwise
    ``alpha = (log log k' / log k')^{1/4}`` and
    ``t = floor(log k' / log(7/alpha))``, so that the covering has at most
    ``(7/alpha)^t <= k'`` points (:cite:`Boedihardjo2024` Prop. 3.7).

    Examples
    --------
    >>> paper_parameters(8)
    (2, None, 0)
    >>> kp, alpha, t = paper_parameters(10_000)
    >>> kp, round(alpha, 4), t
    (100, 0.7588, 2)
    """
    k_prime = math.isqrt(int(k))
    if k_prime < 3:
        return k_prime, None, 0
    alpha = (math.log(math.log(k_prime)) / math.log(k_prime)) ** 0.25
    t = int(math.floor(math.log(k_prime) / math.log(7.0 / alpha)))
    return k_prime, alpha, t


# ------------------------------------------------------------- sums, loss
def group_sums(U, labels, n_groups, keys=None):
    """Per-group row sums ``(n_groups, p)`` and sizes, in one pass over ``U``.

    The group-by-row indicator is built column-wise (one entry per row), so
    building it costs nothing and the product streams ``U`` in row order,
    adding each row to its group's sum; each sum adds its rows in ascending
    row order. With numba (the optional extra ``fast``) a compiled loop makes
    exactly these additions (:func:`skdp_synth._kdtree.group_sums`), without
    the sparse matrix. ``keys``: the :func:`row_keys` of 0/1 rows with
    ``p <= 64`` (their bits); with numba the sums are then counted from the
    keys (:func:`skdp_synth._kdtree.boolean_group_sums`, the same integers).
    """
    n = U.shape[0]
    if keys is not None and U.shape[1] <= 64 and _compiled_kernels():
        from . import _kdtree

        sums = _kdtree.boolean_group_sums(keys, labels, n_groups, U.shape[1])
        return sums, np.bincount(labels, minlength=n_groups)
    if _compiled_kernels() and isinstance(U, np.ndarray) and U.dtype == np.float64:
        from . import _kdtree

        sums = _kdtree.group_sums(U, labels, n_groups)
        return sums, np.bincount(labels, minlength=n_groups)
    index = _index_dtype(max(n, n_groups))
    indicator = sp.csc_matrix(
        (np.ones(n), np.asarray(labels, dtype=index), np.arange(n + 1, dtype=index)),
        shape=(n_groups, n),
    )
    sums = np.asarray(indicator @ U)
    sizes = np.bincount(labels, minlength=n_groups)
    return sums, sizes


def _compiled_kernels():
    """Whether numba (the optional extra ``fast``) is there (imported on first use)."""
    from . import _kdtree

    return _kdtree.HAVE_NUMBA


def cell_sums_from_groups(U, cells, pieces, sums):
    """Per-cell row sums and sizes from the group sums, for 0/1 data.

    Every carved block of :func:`equipartition` (``pieces < k``) lies in one
    cell, so a cell's sum is the sum of its blocks' sums plus the sum of its
    rows in the merged residual (``pieces >= k``, a fraction ``residual_mass``
    of the rows): ``O(k p + |G| p)`` instead of a pass over ``U``. For 0/1 data
    every sum is an integer below ``2^53``, exact in any order, so this equals
    ``group_sums(U, cells, n_cells)`` bit for bit (not so for box data).
    """
    n_groups = sums.shape[0]
    n_cells = int(cells.max()) + 1
    carved = pieces < n_groups
    group_cell = np.full(n_groups, -1, dtype=np.intp)
    group_cell[pieces[carved]] = cells[carved]
    whole = np.flatnonzero(group_cell >= 0)
    out, _ = group_sums(sums[whole], group_cell[whole], n_cells)
    rest = np.flatnonzero(~carved)
    if rest.size:
        out += group_sums(U[rest], cells[rest], n_cells)[0]
    return out, np.bincount(cells, minlength=n_cells)


def cell_loss(S_cube, sums, sizes, n):
    """Covariance loss ``||E XX^T - E YY^T||_F`` on the unit-ball scale.

    ``S_cube = U^T U / n``; ``sums``/``sizes`` describe the groups (empty
    groups allowed). ``Y`` takes the group mean ``sums_j / sizes_j`` with
    probability ``sizes_j / n``, so ``E YY^T = sum_j sums_j sums_j^T /
    (n sizes_j)`` (:cite:`Boedihardjo2024` eq. (4.1)). Division by ``p`` moves both
    second moments from the cube to the unit-ball scale (``x -> x / sqrt(p)``).
    """
    p = S_cube.shape[0]
    nonempty = sizes > 0
    if nonempty.all():  # the usual case (groups): no masked copies
        s, m = sums, sizes
    else:
        s, m = sums[nonempty], sizes[nonempty]
    second_y = (s / m[:, None]).T @ s / n
    return float(np.linalg.norm(S_cube - second_y)) / p


# ------------------------------------------------------- spectral cells
def spectral_cells(U, S_cube, t, alpha):
    """Nearest-point partition of the projected rows (:cite:`Boedihardjo2024` Alg. 1
    steps 3-5).

    Parameters
    ----------
    U : ndarray (n, p)
        Cube-scaled data; the unit-ball rows are ``U / sqrt(p)``.
    S_cube : ndarray (p, p)
        ``U^T U / n``; the unit-ball second moment is ``S_cube / p``.
    t : int
        Number of leading eigenvectors (``0``: one cell).
    alpha : float or None
        Covering radius (unused when ``t = 0``).

    Returns
    -------
    cells : ndarray (n,) of int
        Index of the nearest covering point of each ``P x_i``.
    residual_norm : float
        ``||(I-P) S (I-P)||_F = sqrt(sum_{i>t} lambda_i(S)^2)`` on the
        unit-ball scale (:cite:`Boedihardjo2024` Lemma 3.3, eq. (3.2)).
    n_points : int
        Size of the covering.
    """
    V, residual_norm, covering = spectral_basis(S_cube, t, alpha)
    if covering is None:
        return covering_cells(U, V, covering), residual_norm, 1
    return covering_cells(U, V, covering), residual_norm, covering.n_points


def spectral_basis(S_cube, t, alpha):
    """``(V, residual_norm, covering)`` of :func:`spectral_cells`, from ``S`` alone.

    ``V`` holds the ``t`` leading eigenvectors of the unit-ball second moment
    ``S_cube / p``; ``covering`` is ``None`` when ``t = 0`` (one cell).
    """
    p = S_cube.shape[0]
    V, eigenvalues = leading_eigenvectors(S_cube / p, t)
    residual_norm = residual_spectral_norm(eigenvalues, t)
    covering = None if t == 0 else LatticeCovering(t, alpha)
    return V, residual_norm, covering


def covering_cells(U, V, covering):
    """Nearest covering point of each projected row: a per-row map of ``U``."""
    if covering is None:
        return np.zeros(U.shape[0], dtype=np.intp)
    # Coordinates of P x in the orthonormal basis V of ran(P); ||V^T x|| <= 1.
    Z = U @ V
    Z /= math.sqrt(U.shape[1])
    return covering.nearest(Z)


def dense_cells(cells):
    """``np.unique(cells, return_inverse=True)[1]``: each value's rank among the
    distinct values, without a sort when the values are small.

    Covering indices are below the number of covering points; when the largest
    is below ``4 n + 1024`` the ranks are a cumulative count of the values
    present (``O(n)``; the same integers as the sort of ``np.unique``, about
    40x faster at ``n = 10^6``).

    Examples
    --------
    >>> dense_cells(np.array([7, 2, 7, 5])).tolist()
    [2, 0, 2, 1]
    """
    cells = np.asarray(cells)
    n = cells.shape[0]
    if n and cells.min() >= 0 and cells.max() < 4 * n + 1024:
        present = np.bincount(cells) > 0
        rank = np.cumsum(present) - 1
        return rank[cells]
    return np.unique(cells, return_inverse=True)[1].ravel()


# -------------------------------------------------------- pinning cells
def pinning_depth(k):
    """``L = floor(log2 k)``: at most ``2^L <= k`` pinning cells (:cite:`SahSawhney`
    §2).

    The equipartition that follows merges the cells' residuals. A draw with
    ``2^l`` cells leaves at most ``2^l (b + 1)`` rows of residual, mass about
    ``2^l / k``; averaged over ``l`` uniform in ``{0..L}`` that is about
    ``2 / (L + 1) = O(1/log k)``, below the ``O(1/sqrt(log k))`` of the
    cells' own loss, so the rate of :cite:`SahSawhney` survives the equipartition (and
    the best of several draws is kept). Capping at ``k' = floor(sqrt(k))`` cells,
    as :cite:`Boedihardjo2024` §3.6 does for the spectral cells, bounds the residual of
    every draw by ``k'/k`` but gave no better losses on our data
    (``benchmarks/bench_microaggregation.py``).

    Examples
    --------
    >>> [pinning_depth(k) for k in (1, 2, 3, 4, 1000, 1024)]
    [0, 1, 1, 2, 9, 10]
    """
    return int(math.floor(math.log2(int(k))))


def pinning_cells(U, n_pinned):
    """Cells of rows that agree on the coordinates ``n_pinned`` (:cite:`SahSawhney` §2).

    ``U`` is Boolean (0/1); the key of a row is the binary number formed by
    its pinned coordinates, so there are at most ``2^len(n_pinned)`` cells.
    Returns dense cell indices ``0..s-1``.
    """
    T = np.asarray(n_pinned, dtype=np.intp)
    if T.size == 0:
        return np.zeros(U.shape[0], dtype=np.intp)
    _, cells = np.unique(pinning_keys(U, T), return_inverse=True)
    return cells.ravel().astype(np.intp)


def pinning_keys(U, n_pinned):
    """The binary number formed by each row's pinned coordinates (a per-row map).

    Keys lie in ``0 .. 2^len(n_pinned) - 1``; :func:`pinning_cells` numbers the
    keys that occur in increasing order.
    """
    T = np.asarray(n_pinned, dtype=np.intp)
    weights = 2.0 ** np.arange(T.size)
    keys = U[:, T] @ weights  # exact: integers below 2^53
    return keys.astype(np.int64)


# --------------------------------------------------------- equipartition
def plan_equipartition(cell_sizes, n_groups):
    """How many blocks each cell gives up, and what is left to merge.

    With ``n = k b + r`` (``b = floor(n/k)``, ``0 <= r < k``) the final
    partition has ``r`` groups of ``b + 1`` rows and ``k - r`` of ``b`` rows
    (the remainder of :cite:`Boedihardjo2024` Remark 4.2 spread one row per group, so
    every group has ``floor(n/k)`` or ``ceil(n/k)`` rows). A cell of ``c`` rows gives
    ``floor(c/b)`` blocks, as many of them enlarged to ``b + 1`` as its own
    leftover rows allow (:cite:`Boedihardjo2024` §3.6, "division with residual"); the
    global counts are then capped (at most ``r`` large and ``k - r`` small blocks
    from cells) by shrinking large blocks or dissolving small ones into the
    residual. The residual pieces are merged and cut into the remaining
    blocks.

    Returns
    -------
    small, large : ndarray of int
        Blocks of ``b`` and ``b + 1`` rows carved from each cell.
    residual : ndarray of int
        Rows of each cell left to the merged residual.
    merged : tuple (small, large)
        Blocks cut from the merged residual.
    """
    c = np.asarray(cell_sizes, dtype=np.int64)
    n = int(c.sum())
    b, r = divmod(n, int(n_groups))
    q = c // b
    large = np.minimum(c - b * q, q)
    small = q - large
    excess = int(large.sum()) - r
    if excess > 0:  # too many enlarged blocks: shrink some back to b rows
        large, shrunk = _take(large, excess)
        small = small + shrunk
    excess = int(small.sum()) - (n_groups - r)
    if excess > 0:  # too many blocks of b rows: dissolve some into the residual
        small, _ = _take(small, excess)
    residual = c - b * small - (b + 1) * large
    merged = (n_groups - r - int(small.sum()), r - int(large.sum()))
    assert residual.min() >= 0 and min(merged) >= 0
    assert b * merged[0] + (b + 1) * merged[1] == residual.sum()
    return small, large, residual, merged


def _take(counts, amount):
    """Remove ``amount`` units from ``counts``, largest counts first (deterministic).

    Returns the new counts and how many units were taken from each entry.
    """
    counts = counts.copy()
    taken = np.zeros_like(counts)
    for i in np.argsort(-counts, kind="stable"):
        if amount == 0:
            break
        d = min(int(counts[i]), amount)
        counts[i] -= d
        taken[i] += d
        amount -= d
    return counts, taken


def equipartition(cells, n_groups, sketch=None, *, division="bisection"):
    """Cut a partition into ``n_groups`` groups of ``floor(n/k)`` or ``ceil(n/k)`` rows.

    :cite:`Boedihardjo2024` §3.6 / Algorithm 1 step 6 (see :func:`plan_equipartition`
    for the sizes). *How* a cell is cut is left free by the theorem (any refinement
    can only lower the loss, :cite:`Boedihardjo2024` Lemma 3.8). With ``sketch=None``
    the blocks are runs of rows in input order; with a sketch ``Z`` (rows in a few
    principal coordinates) each cell is cut by recursive bisection along the
    principal direction of its rows (:func:`_bisect`, ``division="bisection"``)
    or by the k-d tree of :mod:`skdp_synth._kdtree` (``division="kdtree"``, on the
    quantised sketch of :func:`principal_sketch` with ``quantised=True``), which
    keeps the blocks compact.

    Parameters
    ----------
    cells : ndarray (n,) of int
        Dense cell indices ``0..s-1`` (every index used).
    n_groups : int
        ``k``, with ``1 <= k <= n``.
    sketch : ndarray (n, q) or None
    division : {"bisection", "kdtree"}, default="bisection"
        How a cell is cut when a sketch is given.

    Returns
    -------
    labels : ndarray (n,) of int
        Group of each row, ``0..k-1``.
    pieces : ndarray (n,) of int
        The refinement of ``cells`` before the merger: carved blocks keep
        their group label, the residual of cell ``i`` gets label ``k + i``.
    residual_mass : float
        ``|G| / n``, the probability of the merged residual ``G`` -- the
        merger term of :cite:`Boedihardjo2024` Lemma 3.9.
    """
    cells = np.asarray(cells, dtype=np.intp)
    n = cells.shape[0]
    counts = np.bincount(cells)
    b = n // n_groups
    small, large, residual, (m_small, m_large) = plan_equipartition(counts, n_groups)

    # Slots of phase 1, cell by cell: its blocks, then its residual piece.
    per_cell = small + large + (residual > 0)
    slot_cell = np.repeat(np.arange(counts.size), per_cell)
    slot_sizes = np.empty(slot_cell.size, dtype=np.int64)
    slot_is_residual = np.zeros(slot_cell.size, dtype=bool)
    first = np.concatenate([[0], np.cumsum(per_cell)[:-1]])
    rank = np.arange(slot_cell.size) - first[slot_cell]
    sm, lg = small[slot_cell], large[slot_cell]
    slot_sizes[:] = np.where(rank < sm, b, b + 1)
    is_res = rank >= sm + lg
    slot_sizes[is_res] = residual[slot_cell[is_res]]
    slot_is_residual[is_res] = True
    cell_slot_start = first

    # rows by cell, input order inside (a stable sort is unique: with at most
    # 2^16 cells NumPy's radix sort of uint16 keys gives it, 3x faster)
    small = cells.astype(np.uint16) if counts.size <= 1 << 16 else cells
    order = np.argsort(small, kind="stable")
    order = _divide(order, slot_sizes, cell_slot_start, sketch, division)
    slot_of_pos = np.repeat(np.arange(slot_sizes.size), slot_sizes)

    block_slots = np.flatnonzero(~slot_is_residual)
    group_of_slot = np.full(slot_sizes.size, -1, dtype=np.intp)
    group_of_slot[block_slots] = np.arange(block_slots.size)
    labels = np.empty(n, dtype=np.intp)
    labels[order] = group_of_slot[slot_of_pos]
    pieces = labels.copy()
    in_residual = labels < 0
    pieces[order[slot_is_residual[slot_of_pos]]] = (
        n_groups + slot_cell[slot_of_pos[slot_is_residual[slot_of_pos]]]
    )

    # Phase 2: merge the residual pieces into G and cut G into the rest.
    g_rows = np.flatnonzero(in_residual)  # input order
    if g_rows.size:
        g_sizes = np.concatenate(
            [np.full(m_small, b, dtype=np.int64), np.full(m_large, b + 1, np.int64)]
        )
        g_sketch = None if sketch is None else sketch[g_rows]
        g_order = _divide(
            np.arange(g_rows.size), g_sizes, np.array([0]), g_sketch, division
        )
        g_slot = np.repeat(np.arange(g_sizes.size), g_sizes)
        labels[g_rows[g_order]] = block_slots.size + g_slot
    return labels, pieces, g_rows.size / n


# ----------------------------------------------------- compact division
def _divide(order, slot_sizes, node_slot_start, sketch, division="bisection"):
    """Reorder ``order`` inside each node so that runs of ``slot_sizes`` are compact.

    A node is a run of consecutive slots (initially: the slots of one cell,
    starting at ``node_slot_start``); its rows are the matching run of
    ``order``. Without a sketch nothing moves (input order).
    """
    if sketch is None or slot_sizes.size <= 1:
        return order
    slot_start = np.concatenate([[0], np.cumsum(slot_sizes)])
    node_s0 = np.asarray(node_slot_start, dtype=np.int64)
    node_s1 = np.concatenate([node_s0[1:], [slot_sizes.size]])
    if division == "kdtree":
        from . import _kdtree  # numba (optional) is imported only when used

        return _kdtree.divide(order, slot_start, node_s0, node_s1, sketch)
    return _bisect(order, slot_start, node_s0, node_s1, sketch)


def _bisect(order, slot_start, s0, s1, Z):
    """Recursive principal splitting, all nodes of a level at once.

    Each node with two or more slots is cut at slot boundaries into
    ``min(FANOUT, slots)`` parts of (nearly) equal slot counts: its rows are
    sorted by their coordinate along the node's principal direction (power
    iterations on the node's covariance in the sketch ``Z``, started from the
    sketch axis of largest variance) and consecutive runs go to the parts.
    Cost per level: ``O(n q)`` for the directions plus one sort of ``n``
    keys; ``ceil(log_FANOUT(slots per cell))`` levels. Once every node is
    small, the nodes are finished in batches of about :data:`BATCH_ROWS` rows
    that stay in cache.
    """
    Zo = np.take(Z, order, axis=0)  # the sketch, kept in the current row order
    return _split_levels(order.copy(), Zo, slot_start, s0, s1, batch=True)


def _split_levels(order, Zo, slot_start, s0, s1, batch):
    n = order.size
    base = slot_start[s0[0]]
    while True:
        active = (s1 - s0) >= 2
        if not active.any():
            return order
        r0 = slot_start[s0] - base
        sizes = slot_start[s1] - base - r0
        if batch and n > BATCH_ROWS and sizes.max() <= n // 2:
            return _split_in_batches(order, Zo, slot_start, s0, s1, r0, sizes)
        node_of_pos = np.repeat(np.arange(s0.size), sizes)
        sums = _NodeSums(np.append(r0, n))
        mean = sums(None, Zo) / sizes[:, None]
        var = sums(None, np.square(Zo)) / sizes[:, None]
        var -= mean * mean
        v = np.zeros_like(var)
        v[np.arange(v.shape[0]), np.argmax(var, axis=1)] = 1.0
        for _ in range(POWER_ITERATIONS):
            # s = <z - mean, v>; then v <- sum (z - mean) s = sum z s (sum s = 0)
            s = np.einsum("ij,ij->i", Zo, np.take(v, node_of_pos, axis=0))
            s -= np.take(np.einsum("ij,ij->i", mean, v), node_of_pos)
            v = sums(s, Zo)
            norm = np.linalg.norm(v, axis=1)
            v /= np.where(norm > 0, norm, 1.0)[:, None]
        s = np.einsum("ij,ij->i", Zo, np.take(v, node_of_pos, axis=0))
        s = s.astype(np.float64)
        if not active.all():
            s[~active[node_of_pos]] = 0.0
        lo = np.minimum.reduceat(s, r0)
        width = np.maximum.reduceat(s, r0) - lo
        # key = node + (s - lo) / (width (1 + 1e-6) + 1e-300), computed in place
        s -= np.take(lo, node_of_pos)
        scale = np.take(width * (1 + 1e-6), node_of_pos)
        scale += 1e-300
        s /= scale
        s += node_of_pos
        # equal keys (duplicate rows, finished nodes) in row order on every CPU
        perm = stable_argsort(s)
        # np.take: the same copies as fancy indexing, 2-3x faster on rows
        order = np.take(order, perm)
        Zo = np.take(Zo, perm, axis=0)
        # cut every node into `parts` runs of slots
        n_slots = s1 - s0
        parts = np.minimum(n_slots, FANOUT)
        node = np.repeat(np.arange(s0.size), parts)
        j = np.arange(node.size) - np.repeat(np.cumsum(parts) - parts, parts)
        new_s0 = s0[node] + (j * n_slots[node]) // parts[node]
        new_s1 = s0[node] + ((j + 1) * n_slots[node]) // parts[node]
        s0, s1 = new_s0, new_s1


class _NodeSums:
    """``sum_{i in node} weights_i A_i`` for nodes of consecutive rows.

    One sparse product (node x row matrix holding the weights): far faster
    than ``np.add.reduceat`` on axis 0, and the weights need no ``n x q``
    temporary. The index arrays are built once per level (``int32`` when
    they fit, so SciPy need not scan them).
    """

    def __init__(self, indptr):
        self.n = int(indptr[-1])
        index = _index_dtype(self.n)
        self.shape = (indptr.size - 1, self.n)
        self.indptr = np.asarray(indptr, dtype=index)
        self.columns = np.arange(self.n, dtype=index)
        self.ones = None

    def __call__(self, weights, A):
        """``sum_{i in node} weights_i A_i``; ``weights=None``: all ones."""
        if weights is None:
            if self.ones is None:
                self.ones = np.ones(self.n, dtype=A.dtype)
            weights = self.ones
        matrix = sp.csr_matrix((weights, self.columns, self.indptr), shape=self.shape)
        return matrix @ A


def _index_dtype(largest):
    """``int32`` sparse indices when they fit: SciPy then need not scan them."""
    return np.int32 if largest < np.iinfo(np.int32).max else np.int64


def _split_in_batches(order, Zo, slot_start, s0, s1, r0, sizes):
    """Go on batch by batch: consecutive nodes, each batch a smaller problem.

    Batches hold about ``max(BATCH_ROWS, largest node)`` rows and are split
    the same way (recursively), so the working set shrinks with the nodes
    and the late levels run in cache.
    """
    ends = r0 + sizes
    cuts = [0]
    target = max(BATCH_ROWS, int(sizes.max()))
    limit = target
    # first node index whose end passes each multiple of BATCH_ROWS
    while True:
        i = int(np.searchsorted(ends, limit, side="right"))
        if i >= s0.size:
            break
        i = max(i, cuts[-1] + 1)
        cuts.append(i)
        limit = ends[i - 1] + target
    cuts.append(s0.size)
    out = order.copy()
    for a, b in zip(cuts[:-1], cuts[1:]):
        lo, hi = r0[a], ends[b - 1]
        out[lo:hi] = _split_levels(
            order[lo:hi], Zo[lo:hi], slot_start, s0[a:b], s1[a:b], batch=True
        )
    return out


def principal_sketch(U, S_cube, mean, dim=None, *, quantised=False):
    """Rows in the ``dim`` leading principal coordinates of the centred data.

    ``dim=None`` uses :data:`SKETCH_DIM`. The same as
    ``sketch_rows(U, sketch_basis(S_cube, mean, dim), mean)``: the sketch of a
    row depends on that row alone, bit for bit, so a fit from chunks computes
    it chunk by chunk with the basis of the whole table and gets the same rows
    (:func:`sketch_rows`; ``tests/test_dask.py``). ``quantised=True`` returns
    the ``uint16`` sketch of ``division="kdtree"``
    (:func:`skdp_synth._kdtree.projection_scale`: one common scale fixed by
    the eigenvectors and the cube, shifted per column, so the centring by
    ``mean`` is not needed; the rows must lie in ``[0, 1]^p``).
    """
    return sketch_rows(U, sketch_basis(S_cube, mean, dim), mean, quantised=quantised)


def sketch_basis(S_cube, mean, dim=None):
    """``W``: the ``min(dim, p)`` leading eigenvectors of the covariance
    ``S_cube - mean mean^T`` (``dim=None``: :data:`SKETCH_DIM`)."""
    p = S_cube.shape[0]
    q = min(SKETCH_DIM if dim is None else dim, p)
    covariance = S_cube - np.outer(mean, mean)
    W, _ = leading_eigenvectors(covariance, q)
    return W


#: multiply-adds per BLAS call of :func:`sketch_rows`: small enough that
#: OpenBLAS runs the call on one thread (its threshold is 2^18)
SKETCH_BLOCK_WORK = 1 << 18


def sketch_block_rows(p, q):
    """Rows per BLAS call of :func:`sketch_rows`: a multiple of 8, fixed by ``p, q``."""
    return max(8, SKETCH_BLOCK_WORK // (p * q) // 8 * 8)


def sketch_rows(U, W, mean, first_row=0, *, quantised=False, covering_basis=None):
    """``(U - mean) @ W`` as float32 (computed as ``U @ W - mean @ W``), row by row.

    ``U`` holds the rows ``first_row, first_row + 1, ...`` of the table. A
    BLAS product's last bit can depend on how the rows are blocked (kernels
    for the leftover rows of a block, the split between threads, ``gemv`` for
    one row), so the products are taken in blocks of the table's rows that
    do not depend on the caller: rows ``[j B, (j + 1) B)`` for
    ``B = sketch_block_rows(p, q)``, each one call on ``B`` contiguous rows
    (one thread), a block cut by the ends of ``U`` being padded with zero rows
    at its place. The sketch of a row is then the same bit for bit whether
    the table is in memory or arrives in chunks of any sizes.

    ``quantised=True``: the ``uint16`` sketch of ``division="kdtree"``
    (:func:`_quantised_sketch_rows`; ``mean`` unused), and with
    ``covering_basis=V`` also the projection ``U @ V / sqrt(p)`` of
    :func:`covering_cells`, from the same pass over ``U``.
    """
    if quantised:
        return _quantised_sketch_rows(U, W, first_row, covering_basis)
    if covering_basis is not None:
        raise ValueError("covering_basis needs quantised=True")
    n, p = U.shape
    q = W.shape[1]
    B = sketch_block_rows(p, q)
    shift = mean @ W
    Z = np.empty((n, q), dtype=np.float32)
    for i, at, m, rows in _aligned_blocks(U, B, first_row):
        block = (rows @ W)[at : at + m]
        block -= shift
        Z[i : i + m] = block
    return Z


def _aligned_blocks(U, B, first_row):
    """``(i, at, m, rows)``: ``U`` cut at the table's multiples of ``B`` rows.

    ``rows`` is a full float64 block of ``B`` rows whose rows ``at:at+m`` are
    ``U[i:i+m]``; a block cut by an end of ``U`` is zero-padded, so every row
    is multiplied at the same place of the same-shaped block whether it comes
    from memory or from a chunk of any size (the products are then equal bit
    for bit; ``first_row``: index of ``U``'s first row in the table).
    """
    n, p = U.shape
    i = 0
    while i < n:
        at = (first_row + i) % B
        m = min(B - at, n - i)
        if at == 0 and m == B:
            rows = np.ascontiguousarray(U[i : i + B], dtype=np.float64)
        else:
            rows = np.zeros((B, p))
            rows[at : at + m] = U[i : i + m]
        yield i, at, m, rows
        i += m


#: ``sketch_block_rows`` blocks per step of :func:`_quantised_sketch_rows`
#: (its rows, float64 and float32 copies, stay in a core's L2 cache)
QUANTISED_SUPER_BLOCKS = 8


def _quantised_sketch_rows(U, W, first_row=0, V=None):
    """The ``uint16`` sketch of ``division="kdtree"`` (and ``U @ V / sqrt(p)``).

    ``U @ W`` is taken in float32 (the rows converted, ``W`` rounded to
    float32; about twice the speed of float64): its error, about ``p 2^-24``
    of the range of a coordinate, is below the quantisation step ``2^-16`` of
    that range, so the sketch it feeds is essentially the same. Each block is
    quantised on the scales of :func:`skdp_synth._kdtree.projection_scale`
    (computed from ``W`` in float64). The covering projection ``U @ V`` (the
    cells of :cite:`Boedihardjo2024` Alg. 1 steps 3-5: their nearest point must be
    exact) stays in float64.

    Row blocks are fixed by the table, not by the caller (as in
    :func:`sketch_rows`): steps of ``QUANTISED_SUPER_BLOCKS`` blocks of
    ``B = sketch_block_rows(p, q)`` rows, aligned on the table's row index
    (``first_row``), cut by the ends of ``U`` padded with zero rows at their
    place; one BLAS call per block of ``B`` rows for the sketch, one per step
    for the projection. A row's results are a function of that row alone, bit
    for bit, in memory or in chunks of any sizes (``tests/test_dask.py``).
    """
    from . import _kdtree

    n, p = U.shape
    q = W.shape[1]
    lo, scale = _kdtree.projection_scale(W)
    W32 = W.astype(np.float32)
    B = sketch_block_rows(p, q)
    step = QUANTISED_SUPER_BLOCKS * B
    Z = np.empty((n, q), dtype=np.uint16)
    projection = None if V is None else np.empty((n, V.shape[1]))
    rows32 = np.empty((step, p), dtype=np.float32)
    block = np.empty((step, q), dtype=np.float32)
    for i, at, m, rows in _aligned_blocks(U, step, first_row):
        rows32[...] = rows
        for j in range(0, step, B):
            np.matmul(rows32[j : j + B], W32, out=block[j : j + B])
        Z[i : i + m] = _kdtree.quantise(block[at : at + m], None, lo, scale)
        if V is not None:
            projection[i : i + m] = (rows @ V)[at : at + m]
    if V is None:
        return Z
    projection /= math.sqrt(p)
    return Z, projection


def kdtree_sketch_and_cells(U, W, V, covering, first_row=0):
    """``division="kdtree"`` with the spectral cells: ``(sketch, cells)`` in one pass.

    The ``uint16`` sketch of :func:`sketch_rows` (``quantised=True``) and each
    row's covering point (:cite:`Boedihardjo2024` Alg. 1 steps 3-5, as
    :func:`covering_cells`: the nearest point of ``covering`` to
    ``V^T u / sqrt(p)``), the projections on ``W`` and ``V`` taken by the same
    products, block by block: a function of each row alone (``first_row``:
    the index of ``U``'s first row in the table), so the Dask fit computes it
    chunk by chunk and gets the in-memory rows. ``covering=None`` (``t = 0``):
    one cell.
    """
    if covering is None:
        cells = np.zeros(U.shape[0], dtype=np.intp)
        return sketch_rows(U, W, None, first_row, quantised=True), cells
    Z, projection = sketch_rows(U, W, None, first_row, quantised=True, covering_basis=V)
    return Z, covering.nearest(projection)


# ------------------------------------------------------------- row keys
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_CHUNK = 1 << 16


def _mix(z):
    """SplitMix64 finaliser (Steele, Lea & Flood 2014), vectorised, in place."""
    z ^= z >> np.uint64(30)
    z *= _M1
    z ^= z >> np.uint64(27)
    z *= _M2
    z ^= z >> np.uint64(31)
    return z


def _hash_words(W):
    """64-bit hash of each row of a uint64 matrix (order-dependent)."""
    h = np.full(W.shape[0], _GOLDEN, dtype=np.uint64)
    for j in range(W.shape[1]):
        h ^= W[:, j]
        h += _GOLDEN
        _mix(h)
    return h


def stable_argsort(keys):
    """``np.argsort(keys, kind="stable")`` for integer keys, faster.

    NumPy's default (introsort, SIMD-accelerated) argsort is several times
    faster than its stable sort on 64-bit keys but orders equal keys
    arbitrarily. Equal keys are rare for row keys, so sort unstably and then
    put each run of equal keys in ascending index order (one ``lexsort`` of
    the rows in such runs). The result is exactly the stable order: equal
    keys by index, the rest by key.

    Examples
    --------
    >>> stable_argsort(np.array([3, 1, 3, 2, 1, 3])).tolist()
    [1, 4, 3, 0, 2, 5]
    """
    keys = np.asarray(keys)
    order = np.argsort(keys)
    sorted_keys = keys[order]
    same = sorted_keys[1:] == sorted_keys[:-1]
    if same.any():
        in_run = np.zeros(keys.shape[0], dtype=bool)
        in_run[1:] = same
        in_run[:-1] |= same
        pos = np.flatnonzero(in_run)
        run = np.cumsum(np.concatenate([[True], ~same]))[pos]
        rows = order[pos]
        order[pos] = rows[np.lexsort((rows, run))]
    return order


def row_keys(U, boolean):
    """A 64-bit key per row; equal rows get equal keys.

    Boolean rows (``p <= 64``) are packed into their bit pattern, which is
    exact: different rows get different keys. Longer Boolean rows and box
    data are hashed (SplitMix64 over the packed bytes or the IEEE bit
    patterns, ``-0.0`` normalised to ``0.0``); distinct rows then share a key
    with probability about ``2^-64`` per pair. A shared key never breaks
    ``fit_transform(X) == fit(X).transform(X)`` (see the estimator's
    ``transform``); it can only send a new row to the group of a different
    training row instead of its nearest group.
    """
    n, p = U.shape
    if (
        boolean
        and p <= 64
        and _compiled_kernels()
        and isinstance(U, np.ndarray)
        and U.dtype == np.float64
    ):
        from . import _kdtree

        return _kdtree.boolean_keys(U)  # the same keys, one compiled pass
    if boolean:
        packed = np.packbits(U != 0, axis=1)
        width = -(-packed.shape[1] // 8) * 8
        if width != packed.shape[1]:
            packed = np.pad(packed, ((0, 0), (0, width - packed.shape[1])))
        words = np.ascontiguousarray(packed).view("<u8")
        if words.shape[1] == 1:
            return words[:, 0].astype(np.uint64)
        return _hash_words(words)
    out = np.empty(n, dtype=np.uint64)
    for s in range(0, n, _CHUNK):
        block = U[s : s + _CHUNK] + 0.0  # -0.0 -> 0.0, contiguous copy
        out[s : s + _CHUNK] = _hash_words(block.view(np.uint64))
    return out
