"""The sufficient statistics (skdp_synth._stats): fast forms equal the definitions.

Exact identities (integers): the one-product forms of the attribute tables
(d <= 2) and of the Walsh sums (d <= 2) against bincount per table and the
sign products; additivity over any split of the rows.
"""

import numpy as np
import pandas as pd
import pytest

from skdp_synth import _stats
from skdp_synth.blocks import Blocks
from skdp_synth.fourier import walsh_sums as walsh_sums_by_products
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.workloads import AttributeMarginalWorkload


def _encoded(n=2500, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "a": rng.choice(list("xyz"), n),
            "b": rng.choice(["lo", "mid", "hi", "top"], n),
            "c": rng.choice([0, 1], n),
            "e": rng.uniform(0, 1, n),
            "m": rng.choice(["u", None], n),
        }
    )
    enc = BooleanEncoder(
        categories={"a": list("xyz"), "c": [0, 1], "m": ["u", None]},
        ordinal={"b": ["lo", "mid", "hi", "top"]},
        bin_edges={"e": [0, 0.2, 0.5, 1]},
        missing="always",
    ).fit(frame)
    return enc.transform(frame).astype(np.float64), enc.blocks_


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("kind", ["categorical", "binary"])
def test_attribute_tables_equal_bincount_per_table(d, kind):
    if kind == "categorical":
        U, blocks = _encoded()
        assert not blocks.is_all_binary
    else:
        rng = np.random.default_rng(1)
        U = (rng.random((3000, 6)) < 0.35).astype(np.float64)
        blocks = Blocks.binary(6)
    W = AttributeMarginalWorkload(blocks.n_levels, d)
    L = blocks.to_levels(U)
    got = _stats.attribute_tables(U, W, blocks)
    assert sorted(got) == sorted(W.tables)
    for S in W.tables:
        np.testing.assert_array_equal(got[S], W.table(L, S))
        assert got[S].sum() == U.shape[0]


@pytest.mark.parametrize("d", [0, 1, 2, 3])
def test_walsh_sums_equal_sign_products(d):
    rng = np.random.default_rng(2)
    X = (rng.random((3000, 9)) < 0.3).astype(np.float64)
    np.testing.assert_array_equal(_stats.walsh_sums(X, d), walsh_sums_by_products(X, d))


def test_statistics_are_additive_over_any_split():
    U, blocks = _encoded(1800, seed=3)
    W = AttributeMarginalWorkload(blocks.n_levels, 2)
    cuts = [0, 1, 700, 701, 1800]  # includes one-row parts
    parts = [U[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
    whole = _stats.attribute_tables(U, W, blocks)
    summed = [_stats.attribute_tables(P, W, blocks) for P in parts]
    for S in W.tables:
        np.testing.assert_array_equal(sum(t[S] for t in summed), whole[S])
    for stat in (_stats.moment_sums,):
        whole = stat(U)
        summed = [stat(P) for P in parts]
        for k in range(len(whole)):
            np.testing.assert_array_equal(sum(t[k] for t in summed), whole[k])
    np.testing.assert_array_equal(
        sum(_stats.walsh_sums(P, 2) for P in parts), _stats.walsh_sums(U, 2)
    )


# ------------------------------------------- integer rows (damped, pass 1 and 2)
@pytest.mark.parametrize("n_cells", [1, 7, 256, 257, 3000])
@pytest.mark.parametrize("p", [1, 4, 13, 50])
def test_boolean_cell_sums_equal_the_indicator_product(n_cells, p):
    """The packed-code counts give the per-cell sums of the sparse indicator
    product exactly (bytes up to 256 cells, nibbles beyond; p not a multiple
    of the code width; empty cells; bool rows)."""
    rng = np.random.default_rng(p + n_cells)
    B = (rng.random((5000, p)) < rng.random(p)).astype(np.uint8)
    labels = rng.integers(0, n_cells, 5000) // 2  # upper half of the cells empty
    counts, sums = _stats.cell_sums(B.astype(np.float64), labels, n_cells)
    counts8, sums8 = _stats.cell_sums(B, labels, n_cells)
    np.testing.assert_array_equal(counts8, counts)
    np.testing.assert_array_equal(sums8, sums)
    np.testing.assert_array_equal(
        _stats.boolean_cell_sums(B.astype(bool), labels, n_cells), sums
    )


def test_integer_rows_statistics_equal_float_rows():
    """With ``integer_rows`` the damped statistics read uint8 rows; the values
    are those of the float64 rows, bit for bit (the projection is the same
    BLAS product per row; the sums are integers)."""
    from skdp_synth.geometry import LatticeCovering

    rng = np.random.default_rng(3)
    B = (rng.random((3 * _stats._PROJECT_ROWS + 17, 12)) < 0.4).astype(np.uint8)
    F = B.astype(np.float64)
    for a, b in zip(_stats.moment_sums(B), _stats.moment_sums(F)):
        np.testing.assert_array_equal(a, b)
    assert _stats.walsh_sums.integer_rows
    for d in (0, 1, 2, 3):
        np.testing.assert_array_equal(_stats.walsh_sums(B, d), _stats.walsh_sums(F, d))
    V = np.linalg.qr(rng.normal(size=(12, 3)))[0]
    cov = LatticeCovering(3, 0.7)
    for stat, args in [
        (_stats.projected_cell_sums, (V, 0.4 * V.sum(axis=0), 2.1, cov)),
        (_stats.damped_cell_sums, (V, cov, np.full(12, 0.4), 0.8)),
        (_stats.damped_cell_sums, (V, cov, None, 1.0)),
    ]:
        assert stat.integer_rows
        for a, b in zip(stat(B, *args), stat(F, *args)):
            np.testing.assert_array_equal(a, b)
