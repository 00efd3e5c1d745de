"""Domain checks and the maps between box, cube and unit ball."""

import numpy as np
import pandas as pd
import pytest

from skdp_synth.exceptions import PrivacyLeakWarning
from skdp_synth.validation import (
    check_boolean,
    check_bounds,
    check_in_domain,
    check_n_samples,
    check_non_numeric_columns,
    cube_to_unit_ball,
    from_cube,
    infer_bounds,
    to_cube,
)


def test_boolean_domain_names_the_offending_cell():
    X = np.array([[0, 1], [1, 0.5]])
    with pytest.raises(ValueError, match=r"column 1 has other values"):
        check_in_domain(X, "boolean")
    check_in_domain(np.array([[0, 1], [1, 1]]), "boolean")


def test_box_domain_rejects_outside_values():
    lo, hi = np.zeros(2), np.ones(2)
    with pytest.raises(ValueError, match="column 1 has values outside"):
        check_in_domain(np.array([[0.5, -0.1]]), "box", lo, hi)
    check_in_domain(np.array([[0.0, 1.0]]), "box", lo, hi)


def test_bounds_broadcast_and_checks():
    lo, hi = check_bounds((0, [1, 2, 3]), 3)
    np.testing.assert_array_equal(lo, [0, 0, 0])
    np.testing.assert_array_equal(hi, [1, 2, 3])
    with pytest.raises(ValueError, match="lo < hi"):
        check_bounds((1, 1), 2)
    with pytest.raises(ValueError, match="finite"):
        check_bounds((0, np.inf), 2)
    with pytest.raises(ValueError, match="pair"):
        check_bounds(5, 2)


def test_inferred_bounds_warn_and_handle_constant_columns():
    X = np.array([[1.0, 5.0], [3.0, 5.0]])
    with pytest.warns(PrivacyLeakWarning):
        lo, hi = infer_bounds(X, warn=True)
    np.testing.assert_array_equal(lo, [1, 5])
    np.testing.assert_array_equal(hi, [3, 6])  # constant column gets width 1


def test_maps_are_inverse_and_land_in_the_unit_ball():
    rng = np.random.default_rng(0)
    lo, hi = np.array([-2.0, 0.0, 5.0]), np.array([2.0, 1.0, 6.0])
    X = lo + rng.random((20, 3)) * (hi - lo)
    U = to_cube(X, lo, hi)
    assert U.min() >= 0 and U.max() <= 1
    np.testing.assert_allclose(from_cube(U, lo, hi), X, rtol=1e-12)
    assert np.all(np.linalg.norm(cube_to_unit_ball(U), axis=1) <= 1 + 1e-12)
    np.testing.assert_allclose(np.linalg.norm(cube_to_unit_ball(np.ones((1, 3)))), 1.0)


def test_non_numeric_columns_message():
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "c": [True, False]})
    with pytest.raises(ValueError, match=r"\['b'\].*BooleanEncoder"):
        check_non_numeric_columns(df)
    check_non_numeric_columns(np.zeros((2, 2)))


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3", None])
def test_check_n_samples(bad):
    with pytest.raises(ValueError, match="positive integer"):
        check_n_samples(bad)


def test_check_n_samples_ok():
    assert check_n_samples(np.int64(4)) == 4


@pytest.mark.parametrize(
    "lo, hi",
    [
        (np.zeros(4), np.ones(4)),
        (np.array([-1.5, 0, 2, 1e-3]), np.array([3, 1, 9.25, 7])),
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.uint8])
def test_from_cube_is_bit_identical_to_its_formula(lo, hi, dtype):
    # the one-allocation evaluation must give lo + U * (hi - lo) bit for bit
    rng = np.random.default_rng(3)
    U = rng.random((50, 4))
    U[0] = [-0.0, 0.0, 1.0, np.nan]
    U = (U > 0.5) if dtype is np.uint8 else U
    U = U.astype(dtype)
    expected = lo + U * (hi - lo)
    got = from_cube(U, lo, hi)
    assert got.dtype == expected.dtype and got is not U
    np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8))


@pytest.mark.parametrize(
    "dtype", [np.float64, np.float32, np.int64, np.int8, np.uint8, bool, object]
)
def test_check_boolean_one_pass_agrees_with_the_elementwise_test(monkeypatch, dtype):
    import skdp_synth.validation as validation

    monkeypatch.setattr(validation, "_BOOLEAN_CHUNK", 5)  # many chunks
    rng = np.random.default_rng(4)
    X = (rng.random((40, 3)) < 0.5).astype(dtype)
    assert check_boolean(X) is X
    bad_values = {bool: []}.get(dtype, [2, -1] if dtype is not np.uint8 else [2, 255])
    if np.dtype(dtype).kind in "fO":
        bad_values += [0.5, np.nan, np.inf]
    for value in bad_values:
        Y = X.copy()
        Y[37, 1] = value
        with pytest.raises(ValueError, match="column 1 has other values"):
            check_boolean(Y)
