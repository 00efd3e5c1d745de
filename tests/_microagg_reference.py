"""The microaggregator's partition code as it was before the speed-up.

Verbatim copies of ``skdp_synth._partition.group_sums`` and of the recursive
bisection (``_bisect``, ``_split_levels``, ``_node_sums``,
``_split_in_batches``) at main 6376364, and of the training-row index of
``CovarianceLossMicroaggregator``. ``tests/test_microaggregation.py`` checks
that the faster code gives bit-identical partitions, sums and indices.
"""

import numpy as np
import scipy.sparse as sp

from skdp_synth.microaggregation._partition import FANOUT, POWER_ITERATIONS

#: patched by the tests together with ``skdp_synth._partition.BATCH_ROWS``
BATCH_ROWS = 1 << 15


def group_sums(U, labels, n_groups, keys=None):
    """Per-group row sums ``(n_groups, p)`` and sizes, in one pass over ``U``.

    ``keys`` (the row keys the fast code may count bits from) is ignored: the
    reference always sums the rows of ``U``.
    """
    n = U.shape[0]
    indicator = sp.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(n_groups, n))
    sums = np.asarray(indicator @ U)
    sizes = np.bincount(labels, minlength=n_groups)
    return sums, sizes


# ----------------------------------------------------- compact division
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
    Zo = Z[order]  # the sketch, kept in the current row order
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
        indptr = np.append(r0, n)
        ones = np.ones(n, dtype=Zo.dtype)
        mean = _node_sums(ones, indptr, Zo) / sizes[:, None]
        var = _node_sums(ones, indptr, Zo * Zo) / sizes[:, None]
        var -= mean * mean
        v = np.zeros_like(var)
        v[np.arange(v.shape[0]), np.argmax(var, axis=1)] = 1.0
        for _ in range(POWER_ITERATIONS):
            # s = <z - mean, v>; then v <- sum (z - mean) s = sum z s (sum s = 0)
            s = np.einsum("ij,ij->i", Zo, v[node_of_pos])
            s -= np.einsum("ij,ij->i", mean, v)[node_of_pos]
            v = _node_sums(s, indptr, Zo)
            norm = np.linalg.norm(v, axis=1)
            v /= np.where(norm > 0, norm, 1.0)[:, None]
        s = np.einsum("ij,ij->i", Zo, v[node_of_pos]).astype(np.float64)
        s[~active[node_of_pos]] = 0.0
        lo = np.minimum.reduceat(s, r0)
        width = np.maximum.reduceat(s, r0) - lo
        frac = (s - lo[node_of_pos]) / ((width * (1 + 1e-6))[node_of_pos] + 1e-300)
        # ties in row order, as the package now does on every CPU
        perm = np.argsort(node_of_pos + frac, kind="stable")
        order = order[perm]
        Zo = Zo[perm]
        # cut every node into `parts` runs of slots
        n_slots = s1 - s0
        parts = np.minimum(n_slots, FANOUT)
        node = np.repeat(np.arange(s0.size), parts)
        j = np.arange(node.size) - np.repeat(np.cumsum(parts) - parts, parts)
        new_s0 = s0[node] + (j * n_slots[node]) // parts[node]
        new_s1 = s0[node] + ((j + 1) * n_slots[node]) // parts[node]
        s0, s1 = new_s0, new_s1


def _node_sums(weights, indptr, A):
    """``sum_{i in node} weights_i A_i`` for nodes of consecutive rows.

    One sparse product (node x row matrix holding the weights): far faster
    than ``np.add.reduceat`` on axis 0, and the weights need no ``n x q``
    temporary.
    """
    n = A.shape[0]
    matrix = sp.csr_matrix((weights, np.arange(n), indptr), shape=(indptr.size - 1, n))
    return matrix @ A


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


def index_training_rows(keys, labels):
    """``(keys, start, count, labels in key order)`` as ``fit`` built them."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    uniq, start, count = np.unique(sorted_keys, return_index=True, return_counts=True)
    return uniq, start, count, labels[order]
