"""The per-chunk statistics of the microaggregator's fit from Dask input.

:meth:`CovarianceLossMicroaggregator._fit_chunked
<skdp_synth.microaggregation.CovarianceLossMicroaggregator>` reads chunked rows
in three passes and must give the in-memory fit's groups. Each pass runs one
of these functions on every chunk (through ``reduce_rows``, ``map_rows`` or
``ChunkedRows.stream``) and adds their parts on the driver: ``U^T U`` and the
column sums (``n S`` of :cite:`Boedihardjo2024` Alg. 1), every pinning draw's
cell sums (:cite:`SahSawhney` §2), each row's cell, key and sketch, and the
per-cell and per-group sums. They are functions of the rows alone (no
estimator state), kept apart from the estimator so each pass's statistic can
be read on its own.
"""

from __future__ import annotations

import numpy as np

from . import _partition


def _gram_and_sums(U):
    """``(U^T U, column sums)`` (additive over rows): ``n S`` of
    :cite:`Boedihardjo2024` Alg. 1 and ``n`` times the mean of the sketch."""
    return U.T @ U, U.sum(axis=0)


def _covering_cell_ids(U, V, covering):
    return _partition.covering_cells(U, V, covering)


def _row_map(U, first_row, cell_map, W, mean, boolean, quantised=False):
    """Per-row map: the row's cell id, its row key, and (``W`` given) its sketch
    (``quantised``: the ``uint16`` sketch of ``division="kdtree"``)."""
    cell_of, *args = cell_map
    keys = _partition.row_keys(U, boolean)
    if quantised and cell_of is _covering_cell_ids:  # as in memory: one pass
        sketch, cells = _partition.kdtree_sketch_and_cells(U, W, *args, first_row)
        return cells, keys, sketch
    out = (cell_of(U, *args), keys)
    if W is None:
        return out
    sketch = _partition.sketch_rows(U, W, mean, first_row, quantised=quantised)
    return (*out, sketch)


def _add_sums(total, count, U, keys):
    """``total[j] += sum of rows with key j``, ``count[j] += their number``.

    Keys of a block of rows are compacted first when the table is larger than
    the block, so the work is ``O(rows)``, not ``O(table)``.
    """
    if total.shape[0] <= U.shape[0]:
        sums, sizes = _partition.group_sums(U, keys, total.shape[0])
        total += sums
        count += sizes
        return
    present, local = np.unique(keys, return_inverse=True)
    sums, sizes = _partition.group_sums(U, local.ravel(), present.size)
    total[present] += sums
    count[present] += sizes


def _pinning_chunk(blocks, draws):
    """One chunk's ``U^T U``, column sums and every draw's cell sums (sparse)."""
    gram = column_sums = tables = None
    for _, U in blocks:
        if tables is None:
            p = U.shape[1]
            gram, column_sums = np.zeros((p, p)), np.zeros(p)
            tables = [
                (np.zeros((1 << T.size, p)), np.zeros(1 << T.size, np.int64))
                for T in draws
            ]
        g, c = _gram_and_sums(U)
        gram += g
        column_sums += c
        for T, (total, count) in zip(draws, tables):
            _add_sums(total, count, U, _partition.pinning_keys(U, T))
    parts = []
    for total, count in tables:
        keys = np.flatnonzero(count)
        parts.append((keys, total[keys], count[keys]))
    return gram, column_sums, parts


def _labelled_sums(U, cells, n_cells, labels, k):
    """Per-cell and per-group sums and sizes, in one pass over the chunks.

    Each chunk gets its own slice of ``cells`` and ``labels`` and returns the
    sums of the cells and groups that occur in it; the driver adds them into
    its ``(n_cells, p)`` and ``(k, p)`` tables (the group sums are the
    released centroids times the sizes, so the driver holds them anyway).
    """
    p = U.shape[1]
    cell_sums, cell_sizes = np.zeros((n_cells, p)), np.zeros(n_cells, np.int64)
    sums, sizes = np.zeros((k, p)), np.zeros(k, np.int64)
    chunk_args = [(cells[rows], labels[rows]) for rows in U.chunk_slices()]
    for _, parts in U.stream(_labelled_chunk, chunk_args):
        for (total, count), (keys, part, size) in zip(
            ((cell_sums, cell_sizes), (sums, sizes)), parts
        ):
            total[keys] += part
            count[keys] += size
    return cell_sums, cell_sizes, sums, sizes


def _labelled_chunk(blocks, *labellings):
    """Sums and sizes per label that occurs in the chunk, for each labelling."""
    tables = [np.unique(lab, return_inverse=True) for lab in labellings]
    totals = None
    for start, U in blocks:
        if totals is None:
            totals = [
                (np.zeros((keys.size, U.shape[1])), np.zeros(keys.size, np.int64))
                for keys, _ in tables
            ]
        for (_, local), (total, count) in zip(tables, totals):
            rows = local.ravel()[start : start + U.shape[0]]
            _add_sums(total, count, U, rows)
    return [(keys, *total) for (keys, _), total in zip(tables, totals)]
