"""The sufficient statistics through which the private estimators read their data.

Each function here is *additive over rows*: its value on a table is the sum
of its values on the parts of any partition of the rows. The estimators call
them only through :func:`skdp_synth._chunked.reduce_rows`, which applies them
to the whole in-memory table (one chunk) or sums them over the chunks of a
Dask array. Everything a fit does with the data afterwards -- the noise, the
projections, the solvers -- reads the summed statistic only, so the
out-of-core fit is the in-memory fit (``doc/privacy.md``, "Fits from
sufficient statistics").

============================  ==========================================  ====
estimator                     statistic (pass)                            exact
============================  ==========================================  ====
ProjectedGaussianRelease      :func:`attribute_statistic` (residual)      yes
                              :func:`workload_counts` (bit-level mech.)   yes
DampedPrivateSynthesizer      :func:`moment_sums` (pass 1, for PROJ),     0/1
                              :func:`damped_cell_sums` (pass 2, after
                              the private subspace is drawn)
PrivateSampler                :func:`walsh_sums`                          yes
============================  ==========================================  ====

"exact": integer-valued, so the sum over chunks is bit-identical to the
in-memory value (float64 represents the integers exactly up to ``2^53``);
"0/1": exact for Boolean data, equal up to the order of floating-point
summation for box data.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .fourier import sign_products, walsh_dimension
from .fourier import walsh_sums as _walsh_sums
from .workloads import ExplicitWorkload, universe_index

#: integer (0/1) rows converted to float64 at a time by :func:`_project` and
#: :func:`_boolean_gram`: the copy stays in cache (4096 x 50 float64 = 1.6 MB)
_PROJECT_ROWS = 4096

__all__ = [
    "attribute_statistic",
    "attribute_tables",
    "attribute_tables_from",
    "cell_sums",
    "damped_cell_sums",
    "moment_sums",
    "projected_cell_sums",
    "walsh_sums",
    "workload_answers",
    "workload_counts",
]


# -------------------------------------------------- ProjectedGaussianRelease
def attribute_tables(U, workload, blocks):
    """Counts of every maximal table of an attribute-level marginal workload.

    ``{S: counts of table S}`` for ``S`` in ``workload.tables`` (flattened,
    C order): :func:`attribute_tables_from` of :func:`attribute_statistic`.
    The residuals follow by :meth:`AttributeMarginalWorkload.residuals` (the
    residual mechanism, :mod:`skdp_synth.attribute_workload`).
    """
    return attribute_tables_from(attribute_statistic(U, workload, blocks), workload)


def attribute_statistic(U, workload, blocks, sample_weight=None):
    """The additive statistic the attribute tables are read from.

    ``sample_weight``: integer counts of the rows (distinct rows of a
    contingency table); the statistic is then that of the expanded rows,
    the same integers.

    For ``d <= 2``: ``(n, Σ E, EᵀE)`` with ``E`` the indicators of the levels
    ``>= 1`` of every attribute (``E = U`` when every block is a single bit):
    every 1- or 2-way table is an integer combination of these
    (:func:`_tables_from_moments`), so the data is read once, by BLAS,
    instead of once per table by ``bincount``, and the tables are formed
    once, on the driver. Larger ``d``: the tables themselves, counted from
    the level rows. Both give the same integers.
    """
    if workload.d <= 2:
        E = _level_indicators(U, workload, blocks)
        if sample_weight is None:
            return np.array([float(U.shape[0])]), E.sum(axis=0), E.T @ E
        # counts of distinct rows: every entry is an integer sum of integer
        # products (< 2^53), so equal bit for bit to the expanded rows' value
        w = np.asarray(sample_weight, dtype=np.float64)
        return np.array([w.sum()]), w @ E, E.T @ (E * w[:, None])
    L = blocks.to_levels(U)
    return {S: workload.table(L, S, sample_weight) for S in workload.tables}


attribute_statistic.accepts_counts = True


def attribute_tables_from(statistic, workload):
    """The tables ``{S: counts}`` from :func:`attribute_statistic` (data-free)."""
    if isinstance(statistic, dict):
        return statistic
    n, sums, gram = statistic
    return _tables_from_moments(n[0], sums, gram, workload)


def _level_indicators(U, workload, blocks):
    """``E`` (``n x Σ_j (L_j - 1)``): ``E[i, (j, l)] = 1[level_j(u_i) = l]``, l >= 1."""
    if blocks.is_all_binary:
        return np.asarray(U, dtype=np.float64)
    L = blocks.to_levels(U)
    widths = workload.n_levels - 1
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    E = np.zeros((L.shape[0], int(widths.sum())))
    for j in range(L.shape[1]):
        rows = np.flatnonzero(L[:, j] > 0)
        E[rows, offsets[j] + L[rows, j] - 1] = 1.0
    return E


def _tables_from_moments(n, sums, gram, workload):
    """The 1- or 2-way tables from ``n``, ``Σ E`` and ``EᵀE`` (exact integers).

    Level 0 of an attribute is the complement of its other levels: with
    ``s_j[l]`` the count of level ``l >= 1`` of ``j``, ``s_j[0] = n - Σ_l
    s_j[l]``; the pair table has ``T[l, m] = (EᵀE)[(a, l), (b, m)]`` for
    ``l, m >= 1``, and its row and column 0 are the 1-way counts minus the
    rest of their column and row.
    """
    widths = workload.n_levels - 1
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])

    def block(j):
        return slice(int(offsets[j]), int(offsets[j] + widths[j]))

    def one_way(j):
        rest = np.asarray(sums[block(j)], dtype=np.float64)
        return np.concatenate([[n - rest.sum()], rest])

    out = {}
    for S in workload.tables:
        if len(S) == 1:
            out[S] = one_way(S[0])
            continue
        a, b = S
        T = np.empty((widths[a] + 1, widths[b] + 1))
        T[1:, 1:] = gram[block(a), block(b)]
        T[1:, 0] = one_way(a)[1:] - T[1:, 1:].sum(axis=1)
        T[0, :] = one_way(b) - T[1:, :].sum(axis=0)
        out[S] = T.ravel()
    return out


def workload_counts(U, workload, sample_weight=None):
    """The counts a bit-level workload's answers are linear in.

    ``sample_weight``: integer counts of the rows (the expanded rows' counts).

    :class:`~skdp_synth.workloads.MarginalWorkload`: its cell counts
    ``y = A x`` themselves; :class:`~skdp_synth.workloads.ExplicitWorkload`:
    the histogram ``x`` over ``{0,1}^p`` (the answers are ``A x``, by
    :func:`workload_answers`).
    """
    X = np.asarray(U).astype(np.int8)
    if isinstance(workload, ExplicitWorkload):
        hist = np.bincount(
            universe_index(X), weights=sample_weight, minlength=workload.universe_size
        )
        return hist.astype(np.float64)
    return workload.answers(X, sample_weight=sample_weight)


workload_counts.accepts_counts = True


def workload_answers(counts, workload):
    """The answers ``y = A x`` from :func:`workload_counts` (data-free)."""
    if isinstance(workload, ExplicitWorkload):
        return workload.matrix @ counts
    return counts


# -------------------------------------------------- DampedPrivateSynthesizer
def moment_sums(U):
    """``(Uᵀ U, Σ_i u_i)``: pass 1 of the damped synthesizer.

    The second-moment matrix of :cite:`Boedihardjo2024` Algorithm 1 step 1 is
    ``UᵀU / n`` (on the unit-ball scale ``/ p``), and the column sums give the
    mean for the moment about a public centre.
    """
    if U.dtype.kind in "bu":  # 0/1 rows (integer_rows): exact integer sums
        return _boolean_gram(U), U.sum(axis=0, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    return U.T @ U, U.sum(axis=0)


def _boolean_gram(B):
    """``BᵀB`` (float64) of 0/1 rows, the float64 copy ``_PROJECT_ROWS`` rows at a time.

    Every entry is an integer below ``2^53``, so the sum over row blocks is
    exactly the product of the whole (any order of summation); the float64
    copy stays in cache (measured 0.65x against 0.91x of one ``X.T @ X`` of
    the chunk, at 10^6 x 50 in blocks of 2^16 rows).
    """
    p = B.shape[1]
    gram = np.zeros((p, p))
    for s in range(0, B.shape[0], _PROJECT_ROWS):
        F = B[s : s + _PROJECT_ROWS].astype(np.float64)
        gram += F.T @ F
    return gram


def cell_sums(X, labels, n_cells):
    """``(counts, sums)`` of the rows of ``X`` in cells ``0..n_cells-1``.

    ``counts[j] = |F_j|``, ``sums[j] = Σ_{i∈F_j} x_i``
    (:cite:`Boedihardjo2024` eq. 5.4 before the damped division).

    Integer rows (validated Boolean rows, ``uint8``): :func:`boolean_cell_sums`
    (exact integers, the same values). Floating-point rows: a sparse
    indicator product, each cell's rows added in row order.
    """
    if X.dtype.kind in "bu":
        return np.bincount(labels, minlength=n_cells), boolean_cell_sums(
            X, labels, n_cells
        )
    n = X.shape[0]
    counts = np.bincount(labels, minlength=n_cells)
    indicator = sparse.csr_matrix(
        (np.ones(n), (labels, np.arange(n))), shape=(n_cells, n)
    )
    return counts, np.asarray(indicator @ X)


#: the value of each of the ``2^w`` codes of ``w`` packed bits (big-endian,
#: as :func:`numpy.packbits`), per bit: ``_CODE_BITS[w][v, b]``
_CODE_BITS = {
    w: np.unpackbits(np.arange(2**w, dtype=np.uint8)[:, None], axis=1)[:, 8 - w :]
    .astype(np.float64)
    .copy()
    for w in (4, 8)
}


def boolean_cell_sums(B, labels, n_cells):
    """``sums[j] = Σ_{i∈F_j} b_i`` for 0/1 rows ``B`` (``uint8``), exact.

    The rows' bits are packed into codes of ``w`` bits (bytes, or nibbles
    when there are many cells); one ``bincount`` per code column counts the
    pairs (cell, code), and a product with the codes' bits turns the counts
    into the per-cell column sums. Integers throughout (exact in float64 up
    to ``2^53`` rows): the values of the sparse indicator product of
    :func:`cell_sums`, at a few passes over ``n x p / w`` bytes instead of
    ``n x p`` floats.
    """
    B = np.asarray(B)
    n, p = B.shape
    sums = np.empty((n_cells, p))
    if p == 0:
        return sums
    w = 8 if n_cells <= 256 else 4
    packed = np.packbits(B.view(np.uint8) if B.dtype == bool else B, axis=1)
    if w == 4:  # nibbles: high then low of every byte
        packed = np.stack([packed >> 4, packed & 15], axis=2).reshape(n, -1)
    base = labels.astype(np.intp) * (2**w)
    bits = _CODE_BITS[w]
    for g in range(-(-p // w)):
        counts = np.bincount(base + packed[:, g], minlength=n_cells * 2**w)
        cols = slice(g * w, min(p, (g + 1) * w))
        width = cols.stop - cols.start
        sums[:, cols] = counts.reshape(n_cells, 2**w) @ bits[:, :width]
    return sums


def _project(U, V):
    """``U @ V`` in float64; integer rows are converted ``_PROJECT_ROWS`` at a time.

    Each row's product is the same BLAS dot product as in ``U.astype(float)
    @ V`` (the row blocks change which rows share a call, not the sums).
    """
    if U.dtype == np.float64:
        return U @ V
    Z = np.empty((U.shape[0], V.shape[1]))
    for s in range(0, U.shape[0], _PROJECT_ROWS):
        np.matmul(
            U[s : s + _PROJECT_ROWS].astype(np.float64), V, out=Z[s : s + _PROJECT_ROWS]
        )
    return Z


def damped_cell_sums(U, V, covering, centre, radius):
    """Pass 2 of the damped synthesizer: per-cell counts and sums
    (:cite:`Boedihardjo2024` Algorithm 4).

    The rows are projected on the private subspace ``V`` (drawn on the
    driver from pass 1), labelled by the nearest point of the public
    covering (:cite:`Boedihardjo2024` Algorithm 4 steps 6-7) and summed per cell.
    """
    n, p = U.shape
    root_p = np.sqrt(p)
    if V.shape[1] > 0:
        Z = _project(U, V) / root_p
        if centre is not None:
            Z = (Z - (centre @ V) / root_p) / radius
        labels = covering.nearest(Z)
    else:
        labels = covering.nearest(np.zeros((n, 0)))
    return cell_sums(U, labels, covering.n_points)


def projected_cell_sums(U, V, offset, scale, covering):
    """Per-cell counts and sums, cells of ``(U V - offset) / scale`` (pass 2).

    The labelling of the block-aware damped release (``parameters="optimal"``):
    the nearest point of the public covering to the projection of ``u - c0``
    on the private subspace ``V`` (``offset = c0 V``), over the public radius.
    """
    n = U.shape[0]
    if V.shape[1] > 0:
        labels = covering.nearest((_project(U, V) - offset) / scale)
    else:
        labels = covering.nearest(np.zeros((n, 0)))
    return cell_sums(U, labels, covering.n_points)


#: statistics that read validated Boolean rows as ``uint8`` (0/1) rather than
#: float64 (``_chunked``: no float64 copy of the chunk); their values are the same
damped_cell_sums.integer_rows = True
projected_cell_sums.integer_rows = True
moment_sums.integer_rows = True


# ------------------------------------------------------------ PrivateSampler
def walsh_sums(U, d, sample_weight=None):
    """``Σ_a χ_J(x_a)`` for every ``|J| <= d``, in ``walsh_subsets`` order.

    The Walsh sums of :cite:`Boedihardjo2022` §4 (``n`` times the Walsh
    coefficients).

    For ``d <= 2`` from one matrix product: with ``χ_J(x) = Π_{j∈J}(1 -
    2x_j)``, ``Σ χ_() = n``, ``Σ χ_{j} = n - 2 s_j`` and ``Σ χ_{i,j} = n - 2
    s_i - 2 s_j + 4 (XᵀX)_{ij}`` (``s`` the column sums), exact integers;
    larger ``d``: :func:`skdp_synth.fourier.walsh_sums` (sign products in
    row blocks). Both give the same integers. ``sample_weight``: integer
    counts of the rows (:func:`_weighted_walsh_sums`, the expanded rows'
    integers).
    """
    if sample_weight is not None:
        return _weighted_walsh_sums(U, d, np.asarray(sample_weight, np.float64))
    if d > 2:
        return _walsh_sums(np.asarray(U, dtype=np.float64), d)
    n, p = U.shape
    if U.dtype.kind in "bu":  # 0/1 rows (integer_rows): no float64 copy
        s = U.sum(axis=0, dtype=np.float64)
        G = _boolean_gram(U) if d >= 2 else None
    else:
        X = np.asarray(U, dtype=np.float64)
        s = X.sum(axis=0)
        G = X.T @ X if d >= 2 else None
    parts = [np.array([float(n)])]
    if d >= 1:
        parts.append(n - 2.0 * s)
    if d >= 2:
        i, j = np.triu_indices(p, k=1)  # (0,1), (0,2), ...: lexicographic
        parts.append(n - 2.0 * s[i] - 2.0 * s[j] + 4.0 * G[i, j])
    return np.concatenate(parts)


walsh_sums.integer_rows = True  # only read on Boolean data (the sampler's domain)
walsh_sums.accepts_counts = True


def _weighted_walsh_sums(U, d, w, chunk=4096):
    """:func:`walsh_sums` of rows with integer counts ``w`` (the expanded rows').

    ``Σ_i w_i χ_J(x_i)``: integer products of ``±1`` by counts, summed in
    float64 exactly (below ``2^53``) -- the expanded table's integers.
    """
    X = np.asarray(U, dtype=np.float64)
    total = np.zeros(walsh_dimension(X.shape[1], d))
    for s in range(0, X.shape[0], chunk):
        signs = 1.0 - 2.0 * X[s : s + chunk]
        total += w[s : s + chunk] @ sign_products(signs, d)
    return total
