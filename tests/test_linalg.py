"""The one SVD rank cut-off (skdp_synth._linalg)."""

import numpy as np

from skdp_synth._linalg import RANK_TOL_FACTOR, numerical_rank, rank_tolerance


def test_rank_cutoff_is_ten_times_the_rounding_bound():
    assert RANK_TOL_FACTOR == 10.0
    shape = (4, 3)
    bound = 3.0 * max(shape) * np.finfo(float).eps
    assert rank_tolerance([3.0, 1.0, 0.0], shape) == RANK_TOL_FACTOR * bound
    # a singular value at a few times the rounding bound counts as zero
    assert numerical_rank([3.0, 1.0, 5 * bound], shape) == 2
    assert numerical_rank([3.0, 1.0, 20 * bound], shape) == 3
    assert numerical_rank([0.0, 0.0], shape) == 0


def test_rank_deficient_product_is_detected():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, 4)) @ rng.standard_normal((4, 30))
    s = np.linalg.svd(A, compute_uv=False)
    assert numerical_rank(s, A.shape) == 4 == np.linalg.matrix_rank(A)
