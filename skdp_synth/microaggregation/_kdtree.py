"""The ``division="kdtree"`` cut of the microaggregator's cells, and its kernels.

A k-d tree in principal coordinates: every node (a run of consecutive slots of
the equipartition, :func:`skdp_synth._partition.equipartition`) is cut into
its first ``floor(slots/2)`` slots and the rest, at the order statistic of its
rows along the node's own principal direction: 8 power iterations
(:data:`POWER_ITERATIONS`) on the covariance of its :data:`AXES` sketch
coordinates of largest variance, started from the largest. The theorem of
:cite:`Boedihardjo2024` leaves the cut of a cell free (Lemma 3.8: any refinement
lowers the loss), so the sizes of :cite:`Boedihardjo2024` §3.6 / Remark 4.2 and
the certificate are those of every other division; only which rows share a
block changes.

The sketch (:func:`projection_scale`) is the data projected on the leading
eigenvectors ``W`` of its covariance (in float32, to within a fraction of a
quantisation step: :func:`skdp_synth._partition._quantised_sketch_rows`),
quantised to ``uint16`` on one common scale fixed by ``W`` and the cube
(``u . w_j`` lies between the sums of the negative and of the positive
entries of ``w_j``), so each row's sketch depends on that row alone.

Exactness (the compiled and the NumPy path give the same partition)
-------------------------------------------------------------------
Per-node sums, sums of squares and cross sums of ``uint16`` values are exact
``int64`` sums (below ``2^63`` for nodes of fewer than ``2^31`` rows), whatever
their order. Everything computed from them -- variances ``sq/m - (s/m)^2``,
the covariance, the power iterations (sums in index order) -- is one fixed
sequence of IEEE float64 operations that both paths evaluate identically; the
axes are taken in decreasing variance, ties to the lower index. The direction
is rounded to integers ``c = rint(v 2^10)``, and the rows of a node are
ordered by the exact 64-bit key ``(sum_a c_a x_a + 2^29) << 33 | row``
(``row``: the row's index in the input of the division): distinct keys, so
which rows go left is a function of the node's row *set*, not of how a path
arranged them. By induction over the tree both paths put the same rows in
every slot.

Cost (``n`` rows, ``q`` sketch coordinates, ``L = ceil(log2 slots)`` levels)
-------------------------------------------------------------------------------
Compiled (numba, the optional extra ``skdp_synth[fast]``; ``cache=True``, so
the compilation, several seconds, is paid once per machine): depth first,
each node's rows contiguous and its sketch packed four coordinates to a
word; per level ``O(n q)`` integer operations for the moments, ``O(36 n)`` for
the ``8 x 8`` cross sums, ``O(n)`` for the selection (branch-free radix
rounds of 32 buckets, quickselect below 24 keys) and one stable partition of
the rows. NumPy (no numba): level by level, one
``lexsort`` of ``n`` keys per level, ``O(L n log n)``, several times slower
than ``division="bisection"``.
"""

from __future__ import annotations

import numpy as np

try:  # the optional extra ``fast``
    import numba
except ImportError:  # pragma: no cover - exercised by the NumPy tests
    numba = None

if numba is not None:
    _jit = numba.njit(cache=True, nogil=True)
else:  # pragma: no cover

    def _jit(function):
        return function


__all__ = [
    "HAVE_NUMBA",
    "boolean_group_sums",
    "boolean_keys",
    "divide",
    "group_sums",
    "projection_scale",
    "quantise",
]

#: whether the compiled path is available (tests switch it off)
HAVE_NUMBA = numba is not None
#: quantisation levels of the sketch (``uint16``)
LEVELS = 65535
#: sketch axes of largest variance in a node that its direction may use
AXES = 8
#: power iterations for a node's direction (from its axis of largest variance)
POWER_ITERATIONS = 8
#: bits of the integer direction: ``rint(v * 2^COEF_BITS)``, ``|v_a| <= 1``
COEF_BITS = 10
COEF_SCALE = float(1 << COEF_BITS)
#: ``|sum_a c_a x_a| < AXES 2^COEF_BITS 2^16 = 2^29``: shifted to be non-negative
OFFSET = 1 << 29
#: bits of the row index in a key (``(value + OFFSET) << ROW_BITS | row``)
ROW_BITS = 33
#: rows a division may have: exact int64 sums of products below 2^32
MAX_ROWS = 1 << 31
#: buckets per round of the radix selection, and the node size below which
#: quickselect is used instead (measured at n = 10^6: the division's time falls
#: from 4.3 to 3.0 X.T@X against quickselect alone, whose branches mispredict)
RADIX_BUCKETS = 32
RADIX_MIN = 24
#: rows per tile of the cross sums (the tile's columns stay in L1)
TILE = 1024


def quantise(Z, use_numba=None, lo=None, scale=None):
    """``uint16`` sketch on one scale for all columns: ``rint((Z - lo_j) * s)``.

    By default ``lo_j`` is the minimum of column ``j`` and ``s = 65535 / max_j
    (hi_j - lo_j)``: one common scale, so the variances of the columns stay
    comparable (a column's variance is multiplied by ``s^2``). The shift per
    column does not change any variance. Constant data gives all zeros.
    The sketch passes ``lo`` and ``scale`` known in advance
    (:func:`projection_scale`).
    Values are clipped to ``0..65535``. The compiled path evaluates the same
    float operations and gives the same array.
    """
    Z = np.asarray(Z, dtype=np.float64)
    n, q = Z.shape
    if n == 0 or q == 0:
        return np.zeros(Z.shape, dtype=np.uint16)
    if use_numba is None:
        use_numba = HAVE_NUMBA
    if use_numba:
        Z = np.ascontiguousarray(Z)
    if lo is None:
        lo, hi = _extremes(Z) if use_numba else (Z.min(axis=0), Z.max(axis=0))
        width = float((hi - lo).max())
        scale = LEVELS / width if width > 0 else 0.0
    lo = np.asarray(lo, dtype=np.float64)
    if use_numba:
        out = np.empty((n, q), dtype=np.uint16)
        _quantise_rows(Z, lo, float(scale), out)
        return out
    Q = Z - lo
    Q *= scale
    np.rint(Q, out=Q)
    np.clip(Q, 0, LEVELS, out=Q)
    return Q.astype(np.uint16)


def projection_scale(W):
    """``(lo, scale)`` of the sketch ``quantise(U @ W, lo=lo, scale=scale)``.

    For rows in the cube ``[0, 1]^p`` the coordinate ``u . w_j`` lies in
    ``[lo_j, hi_j] = [sum_i min(W_ij, 0), sum_i max(W_ij, 0)]``; the common scale
    is ``65535 / max_j (hi_j - lo_j)``. Known before the data is read, so each
    row's sketch is a function of that row alone
    (:func:`skdp_synth._partition.sketch_rows` with ``quantised=True``).
    """
    W = np.asarray(W, dtype=np.float64)
    lo = np.minimum(W, 0.0).sum(axis=0)
    width = float((np.maximum(W, 0.0).sum(axis=0) - lo).max()) if W.size else 0.0
    return lo, (LEVELS / width if width > 0 else 0.0)


@_jit
def _extremes(Z):
    n, q = Z.shape
    lo = Z[0].copy()
    hi = Z[0].copy()
    for i in range(1, n):
        row = Z[i]
        for j in range(q):
            lo[j] = min(lo[j], row[j])
            hi[j] = max(hi[j], row[j])
    return lo, hi


@_jit
def _quantise_rows(Z, lo, scale, out):
    n, q = Z.shape
    for i in range(n):
        row = Z[i]
        dst = out[i]
        for j in range(q):
            value = np.rint((row[j] - lo[j]) * scale)
            dst[j] = np.uint16(min(max(value, 0.0), float(LEVELS)))


def divide(order, slot_start, s0, s1, Q, use_numba=None):
    """Reorder ``order`` so that every slot holds the rows the k-d tree gives it.

    ``order`` lists the rows (indices into ``Q``) node by node; node ``i``
    covers the slots ``s0[i]..s1[i]-1`` and the rows
    ``slot_start[s0[i]]..slot_start[s1[i]]-1`` of ``order`` (``slot_start``
    counted from the first node's first slot). Returns the new order; the rows
    of each slot are a set fixed by the tree (their arrangement inside a slot
    depends on the path).
    """
    order = np.asarray(order, dtype=np.int64)
    n = order.size
    if n >= MAX_ROWS:
        raise ValueError(
            f"division='kdtree' handles fewer than 2^31 rows per fit, got {n}"
        )
    Q = np.asarray(Q, dtype=np.uint16)
    base = int(slot_start[s0[0]])
    starts = np.asarray(slot_start, dtype=np.int64) - base
    s0 = np.asarray(s0, dtype=np.int64)
    s1 = np.asarray(s1, dtype=np.int64)
    if use_numba is None:
        use_numba = HAVE_NUMBA
    if use_numba:
        out = order.copy()
        q = Q.shape[1]
        if q % 4:
            Q = np.pad(Q, ((0, 0), (0, 4 - q % 4)))
        words = np.ascontiguousarray(Q).view("<u8")  # little-endian: axis 4g+c
        P = np.empty((words.shape[1], n), dtype=np.uint64)  # in bits 16c..16c+15
        _gather_words(words, out, P)  # of word g; rows in the order of `order`
        _kernel(P, q, out, starts, s0, s1)
        return out
    Qo = np.take(Q, order, axis=0)
    return _divide_numpy(order.copy(), Qo, starts, s0, s1)


@_jit
def _gather_words(words, order, P):
    """``P[g, i] = words[order[i], g]``: gather and transpose in one pass."""
    for i in range(order.size):
        row = words[order[i]]
        for g in range(P.shape[0]):
            P[g, i] = row[g]


# ------------------------------------------------------------------ NumPy
def _divide_numpy(order, Qo, starts, s0, s1):
    """Level by level, all nodes of a level at once; the same sets of rows."""
    n, q = Qo.shape
    r = min(AXES, q)
    rows = np.arange(n)
    while True:
        active = (s1 - s0) >= 2
        if not active.any():
            return order
        r0 = starts[s0]
        sizes = starts[s1] - r0
        node_of_pos = np.repeat(np.arange(s0.size), sizes)
        Q64 = Qo.astype(np.int64)
        total = np.add.reduceat(Q64, r0, axis=0)
        square = np.add.reduceat(Q64 * Q64, r0, axis=0)
        m = sizes[:, None]
        mean = total / m
        var = square / m - mean * mean
        top = np.argsort(-var, axis=1, kind="stable")[:, :r]
        X = Q64[rows[:, None], top[node_of_pos]]  # (n, r): the node's top axes
        del Q64
        mean_top = np.take_along_axis(mean, top, axis=1)
        cov = np.empty((s0.size, r, r))
        for a in range(r):
            cross = np.add.reduceat(X[:, a, None] * X, r0, axis=0)
            cov[:, a, :] = cross / m - mean_top[:, a, None] * mean_top
        coef = _coefficients_numpy(cov)
        key = np.zeros(n, dtype=np.int64)
        for a in range(r):  # exact: |sum| < 2^(COEF_BITS + 16 + 3)
            key += np.take(coef[:, a], node_of_pos) * X[:, a]
        key += OFFSET
        key <<= ROW_BITS
        key |= order
        perm = np.lexsort((key, node_of_pos))
        order = np.take(order, perm)
        Qo = np.take(Qo, perm, axis=0)
        n_slots = s1 - s0
        parts = np.minimum(n_slots, 2)
        node = np.repeat(np.arange(s0.size), parts)
        j = np.arange(node.size) - np.repeat(np.cumsum(parts) - parts, parts)
        new_s0 = s0[node] + (j * n_slots[node]) // parts[node]
        new_s1 = s0[node] + ((j + 1) * n_slots[node]) // parts[node]
        s0, s1 = new_s0, new_s1


def _coefficients_numpy(cov):
    """:func:`_coefficients` for a stack of matrices, the same float operations."""
    nodes, r, _ = cov.shape
    v = np.zeros((nodes, r))
    v[:, 0] = 1.0
    for _ in range(POWER_ITERATIONS):
        w = np.empty_like(v)
        for a in range(r):
            acc = cov[:, a, 0] * v[:, 0]
            for b in range(1, r):
                acc = acc + cov[:, a, b] * v[:, b]
            w[:, a] = acc
        norm2 = w[:, 0] * w[:, 0]
        for a in range(1, r):
            norm2 = norm2 + w[:, a] * w[:, a]
        norm = np.sqrt(norm2)
        ok = norm > 0
        v[ok] = w[ok] / norm[ok, None]
    return np.rint(v * COEF_SCALE).astype(np.int64)


# --------------------------------------------------------------- compiled
@_jit
def _select(buf, lo, hi, rank):
    """The ``rank``-th smallest (0-based) of ``buf[lo:hi]``; ``buf`` is permuted.

    Quickselect with a median-of-three pivot; distinct keys. After
    ``4 log2(m) + 16`` rounds without converging (adversarial input) the rest
    is sorted, so the worst case is ``O(m log m)``.
    """
    k = lo + rank
    rounds = 0
    limit = 16
    m = hi - lo
    while m > 1:
        limit += 4
        m >>= 1
    hi -= 1
    while hi > lo:
        rounds += 1
        if rounds > limit:
            buf[lo : hi + 1] = np.sort(buf[lo : hi + 1])
            return buf[k]
        mid = (lo + hi) >> 1
        a, b, c = buf[lo], buf[mid], buf[hi]
        if a < b:
            if b < c:
                pivot = b
            elif a < c:
                pivot = c
            else:
                pivot = a
        elif a < c:
            pivot = a
        elif b < c:
            pivot = c
        else:
            pivot = b
        i, j = lo, hi
        while i <= j:
            while buf[i] < pivot:
                i += 1
            while buf[j] > pivot:
                j -= 1
            if i <= j:
                t = buf[i]
                buf[i] = buf[j]
                buf[j] = t
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return buf[k]
    return buf[k]


@_jit
def _select_radix(buf, lo, hi, rank, hist):
    """:func:`_select` for large nodes: most-significant-digit radix rounds.

    Each round takes the keys' range ``[mn, mx]``, counts them in 2048 buckets
    of ``(key - mn) >> shift`` (the smallest shift that fits the range), finds
    the bucket of the ``rank``-th key and compacts that bucket to the front
    (branch-free passes; at least two buckets are non-empty, so every round
    shrinks the candidates). Below :data:`RADIX_MIN` keys, quickselect.
    """
    k = rank
    while hi - lo > RADIX_MIN:
        seg = buf[lo:hi]
        m = hi - lo
        mn = seg[0]
        mx = seg[0]
        for i in range(m):
            mn = min(mn, seg[i])
            mx = max(mx, seg[i])
        span = mx - mn
        shift = 0
        while (span >> shift) >= RADIX_BUCKETS:
            shift += 1
        hist[:] = 0
        for i in range(m):
            hist[(seg[i] - mn) >> shift] += 1
        bucket = 0
        below = 0
        while below + hist[bucket] <= k:
            below += hist[bucket]
            bucket += 1
        k -= below
        j = 0
        for i in range(m):
            value = seg[i]
            seg[j] = value
            j += ((value - mn) >> shift) == bucket
        hi = lo + hist[bucket]
    return _select(buf, lo, hi, k)


@_jit
def _coefficients(cov, v, w, out):
    """Integer direction of a node: power iterations on its ``r x r`` covariance.

    Starts from the axis of largest variance (``v = e_0``); ``POWER_ITERATIONS``
    rounds of ``v <- C v / ||C v||`` (sums in index order, so that
    :func:`_coefficients_numpy` repeats them bit for bit); then
    ``rint(v 2^COEF_BITS)``.
    """
    r = v.size
    v[:] = 0.0
    v[0] = 1.0
    for _ in range(POWER_ITERATIONS):
        for a in range(r):
            acc = cov[a, 0] * v[0]
            for b in range(1, r):
                acc = acc + cov[a, b] * v[b]
            w[a] = acc
        norm2 = w[0] * w[0]
        for a in range(1, r):
            norm2 = norm2 + w[a] * w[a]
        norm = np.sqrt(norm2)
        if norm > 0:
            for a in range(r):
                v[a] = w[a] / norm
    for a in range(r):
        out[a] = np.int64(np.rint(v[a] * COEF_SCALE))
    return out


@_jit
def _moments(P, q, lo, hi, total, square):
    """Exact per-axis sums and sums of squares of rows ``lo..hi-1``."""
    m = hi - lo
    mask = np.uint64(0xFFFF)
    for g in range((q + 3) // 4):  # four axes per pass over a word column
        col = P[g, lo:hi]  # a slice: indices provably >= 0, so LLVM vectorises
        s0 = s1 = s2 = s3 = np.int64(0)
        t0 = t1 = t2 = t3 = np.int64(0)
        for i in range(m):
            word = col[i]
            v0 = np.int64(word & mask)
            v1 = np.int64((word >> np.uint64(16)) & mask)
            v2 = np.int64((word >> np.uint64(32)) & mask)
            v3 = np.int64(word >> np.uint64(48))
            s0 += v0
            s1 += v1
            s2 += v2
            s3 += v3
            t0 += v0 * v0
            t1 += v1 * v1
            t2 += v2 * v2
            t3 += v3 * v3
        sums = (s0, s1, s2, s3)
        squares = (t0, t1, t2, t3)
        for c in range(4):
            if 4 * g + c < q:
                total[4 * g + c] = sums[c]
                square[4 * g + c] = squares[c]


@_jit
def _cross(P, top, lo, hi, cross):
    """Exact sums of products of the axes ``top`` over rows ``lo..hi-1``."""
    r = top.size
    mask = np.uint64(0xFFFF)
    cross[:, :] = 0
    for start in range(lo, hi, TILE):  # tile by tile: the columns stay in L1
        end = min(hi, start + TILE)
        for t in range(r):
            x = P[top[t] >> 2, start:end]
            sx = np.uint64(16 * (top[t] & 3))
            for u in range(t, r):
                y = P[top[u] >> 2, start:end]
                sy = np.uint64(16 * (top[u] & 3))
                c = np.int64(0)
                for i in range(end - start):
                    c += np.int64((x[i] >> sx) & mask) * np.int64((y[i] >> sy) & mask)
                cross[t, u] += c


@_jit
def _keys(P, top, coef, lo, hi, order, keys, scratch):
    """``(sum_t coef_t x_t + OFFSET) << ROW_BITS | row`` of rows ``lo..hi-1``.

    Exact in ``int64`` (``|sum| < 2^29``); copied to ``scratch`` for the
    selection.
    """
    m = hi - lo
    mask = np.uint64(0xFFFF)
    ks = keys[lo:hi]
    ks[:] = OFFSET
    for t in range(top.size):
        x = P[top[t] >> 2, lo:hi]
        sx = np.uint64(16 * (top[t] & 3))
        c = coef[t]
        for i in range(m):
            ks[i] += c * np.int64((x[i] >> sx) & mask)
    sc = scratch[lo:hi]
    od = order[lo:hi]
    for i in range(m):
        key = (ks[i] << ROW_BITS) | od[i]
        ks[i] = key
        sc[i] = key


@_jit
def _partition_rows(P, order, keys, kth, lo, cut, hi, dest, scratch, buffer, words):
    """Stable partition of rows ``lo..hi-1``: keys below ``kth`` to ``lo..cut-1``.

    The sketch words move too when ``words`` (a child will be cut again);
    below two leaves only ``order`` is needed."""
    m = hi - lo
    ks = keys[lo:hi]
    od = order[lo:hi]
    sc = scratch[lo:hi]
    ds = dest[:m]
    left = 0
    right = cut - lo
    for i in range(m):
        below = np.int64(ks[i] < kth)
        ds[i] = below * left + (1 - below) * right
        left += below
        right += 1 - below
    for i in range(m):
        sc[ds[i]] = od[i]
    od[:] = sc
    if not words:
        return
    buf = buffer[:m]
    for g in range(P.shape[0]):
        col = P[g, lo:hi]
        for i in range(m):
            buf[ds[i]] = col[i]
        col[:] = buf


@_jit
def _top_axes(var, r, top, taken):
    """The ``r`` axes of largest variance, ties to the lower index.

    One pass keeping the best ``r`` so far sorted by decreasing variance (an
    axis is inserted before the first kept axis of strictly smaller variance,
    so ties keep the lower index first): the same axes in the same order as
    ``r`` rounds of "largest untaken variance, lowest index"
    (:func:`_divide_numpy`'s stable sort). ``taken`` is unused (kept for the
    signature).
    """
    q = var.size
    kept = 0
    for j in range(q):
        value = var[j]
        if kept == r and not value > var[top[r - 1]]:
            continue
        pos = kept if kept < r else r - 1
        while pos > 0 and value > var[top[pos - 1]]:
            top[pos] = top[pos - 1]
            pos -= 1
        top[pos] = j
        if kept < r:
            kept += 1


@_jit
def _kernel(P, q, order, starts, s0s, s1s):
    """Depth first over the tree of each root node, in place (see :func:`divide`).

    ``P`` holds the ``uint16`` sketch packed four axes to a ``uint64`` word and
    stored word by word (``P[g, i]`` = axes ``4g..4g+3`` of row ``i``, rows in
    the order of ``order``): every sum runs over contiguous memory in ``int64``
    (exact, vectorised by LLVM without reordering a float operation), and
    moving a row moves ``ceil(q/4)`` words. Numba compiles it on the first
    call (``cache=True``: once per machine).
    """
    n = P.shape[1]
    r = min(AXES, q)
    keys = np.empty(n, dtype=np.int64)
    scratch = np.empty(n, dtype=np.int64)
    hist = np.empty(RADIX_BUCKETS, dtype=np.int64)
    dest = np.empty(n, dtype=np.int64)
    buffer = np.empty(n, dtype=np.uint64)
    total = np.empty(q, dtype=np.int64)
    square = np.empty(q, dtype=np.int64)
    var = np.empty(q)
    mean = np.empty(q)
    top = np.empty(r, dtype=np.int64)
    taken = np.empty(q, dtype=np.bool_)
    cov = np.empty((r, r))
    cross = np.empty((r, r), dtype=np.int64)
    v = np.empty(r)
    w = np.empty(r)
    coef = np.empty(r, dtype=np.int64)
    stack0 = np.empty(256, dtype=np.int64)
    stack1 = np.empty(256, dtype=np.int64)
    for root in range(s0s.size):
        stack0[0] = s0s[root]
        stack1[0] = s1s[root]
        depth = 1
        while depth > 0:
            depth -= 1
            a = stack0[depth]
            b = stack1[depth]
            if b - a < 2:
                continue
            lo = starts[a]
            hi = starts[b]
            m = hi - lo
            _moments(P, q, lo, hi, total, square)
            for j in range(q):
                mean[j] = total[j] / m
                var[j] = square[j] / m - mean[j] * mean[j]
            _top_axes(var, r, top, taken)
            _cross(P, top, lo, hi, cross)
            for t in range(r):  # the centred covariance on those axes
                for u in range(t, r):  # (a product commutes exactly: symmetric)
                    cov[t, u] = cross[t, u] / m - mean[top[t]] * mean[top[u]]
                    cov[u, t] = cov[t, u]
            _coefficients(cov, v, w, coef)
            _keys(P, top, coef, lo, hi, order, keys, scratch)
            mid = a + (b - a) // 2
            cut = starts[mid]
            if m > RADIX_MIN:
                kth = _select_radix(scratch, lo, hi, cut - lo, hist)
            else:
                kth = _select(scratch, lo, hi, cut - lo)
            words = b - a > 2  # two slots: both children are leaves
            _partition_rows(
                P, order, keys, kth, lo, cut, hi, dest, scratch, buffer, words
            )
            stack0[depth] = mid
            stack1[depth] = b
            stack0[depth + 1] = a
            stack1[depth + 1] = mid
            depth += 2


# ------------------------------------------------------------- group sums
def group_sums(U, labels, n_groups):
    """Per-group row sums of a float64 ``U``, each in ascending row order.

    The same additions as SciPy's product of the group-by-row indicator with
    ``U`` (:func:`skdp_synth._partition.group_sums`): row ``i`` is added to the
    sum of its group in ascending ``i``, so the sums agree bit for bit; one
    compiled pass, no indicator matrix.
    """
    sums = np.zeros((n_groups, U.shape[1]))
    _add_rows(U, np.asarray(labels, dtype=np.int64), sums)
    return sums


@_jit
def _add_rows(U, labels, sums):
    n, p = U.shape
    for i in range(n):
        target = sums[labels[i]]
        row = U[i]
        for j in range(p):
            target[j] += row[j]


# --------------------------------------------------------------- row keys
def boolean_keys(U):
    """The exact key of :func:`skdp_synth._partition.row_keys` for 0/1 rows,
    ``p <= 64``: the bytes of ``np.packbits(U != 0, axis=1)`` (zero-padded to
    eight) read as one little-endian ``uint64``, i.e. column ``c`` sets bit
    ``8 (c // 8) + 7 - c % 8``. One compiled pass, no ``(n, p)`` Boolean
    temporary."""
    n, p = U.shape
    shifts = np.array([8 * (c // 8) + 7 - c % 8 for c in range(p)], dtype=np.uint64)
    out = np.empty(n, dtype=np.uint64)
    _boolean_keys(U, shifts, out)
    return out


@_jit
def _boolean_keys(U, shifts, out):
    n, p = U.shape
    for i in range(n):
        row = U[i]
        key = np.uint64(0)
        for c in range(p):
            key |= np.uint64(row[c] != 0.0) << shifts[c]
        out[i] = key


def boolean_group_sums(keys, labels, n_groups, p):
    """Per-group column sums of 0/1 rows from their :func:`boolean_keys`.

    Counts the set bits of each column per group in integers (8 bytes read a
    row instead of ``8 p``, and an integer table half the size of the float
    one); for 0/1 data every float sum is an integer below ``2^53``, so the
    result equals :func:`group_sums` of the rows bit for bit.
    """
    shifts = np.array([8 * (c // 8) + 7 - c % 8 for c in range(p)], dtype=np.uint64)
    dtype = np.int32 if keys.size < 1 << 31 else np.int64
    counts = np.zeros((n_groups, p), dtype=dtype)
    _count_bits(keys, np.asarray(labels, dtype=np.int64), shifts, counts)
    return counts.astype(np.float64)


@_jit
def _count_bits(keys, labels, shifts, counts):
    one = np.uint64(1)
    for i in range(keys.size):
        key = keys[i]
        row = counts[labels[i]]
        for c in range(shifts.size):
            row[c] += np.int64((key >> shifts[c]) & one)
