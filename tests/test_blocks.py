"""Block / Blocks: codes, exact decoding, mean-preserving rounding, repair."""

import json

import numpy as np
import pytest

from skdp_synth.blocks import Block, Blocks, _nonincreasing_projection, check_blocks

BLOCKS = [
    Block("b", "binary", 0, 1),
    Block("o1", "onehot", 0, 1),
    Block("o4", "onehot", 0, 4),
    Block("t1", "thermometer", 0, 1),
    Block("t3", "thermometer", 0, 3),
    Block("m1", "thermometer", 0, 1, missing=True),
    Block("m4", "thermometer", 0, 4, missing=True),
]
IDS = [b.name for b in BLOCKS]


def _pav_nonincreasing(y):
    """Reference pool-adjacent-violators for a non-increasing fit."""
    pools = []
    for v in y:
        pools.append([float(v), 1])
        while len(pools) > 1 and pools[-2][0] < pools[-1][0]:
            (a, na), (b, nb) = pools.pop(), pools.pop()
            pools.append([(a * na + b * nb) / (na + nb), na + nb])
    return np.concatenate([[v] * c for v, c in pools])


# ------------------------------------------------------------------ codes
def test_codes_of_each_kind():
    assert Block("b", "binary", 0, 1).codes().tolist() == [[0], [1]]
    assert Block("o", "onehot", 0, 3).codes().tolist() == [
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
    ]
    assert Block("t", "thermometer", 0, 2).codes().tolist() == [
        [0, 0],
        [1, 0],
        [1, 1],
    ]
    assert Block("m", "thermometer", 0, 3, missing=True).codes().tolist() == [
        [0, 0, 0],
        [1, 0, 0],
        [1, 1, 0],
        [0, 0, 1],
    ]
    assert Block("m", "thermometer", 0, 1, missing=True).codes().tolist() == [
        [0],
        [1],
    ]


@pytest.mark.parametrize("block", BLOCKS, ids=IDS)
def test_encode_decode_round_trip(block):
    codes = block.codes()
    assert codes.dtype == np.uint8 and codes.shape == (block.n_levels, block.width)
    assert len({tuple(c) for c in codes}) == block.n_levels  # distinct codes
    levels = np.arange(block.n_levels).repeat(3)
    bits = block.encode(levels)
    assert bits.shape == (levels.size, block.width)
    np.testing.assert_array_equal(block.decode(bits), levels)
    assert block.is_valid(bits).all()
    # every 0/1 word that is not a code is invalid
    words = (np.arange(2**block.width)[:, None] >> np.arange(block.width)) & 1
    valid = block.is_valid(words)
    assert valid.sum() == block.n_levels
    assert {tuple(w) for w in words[valid]} == {tuple(c) for c in codes}


@pytest.mark.parametrize(
    "block, bad, problem",
    [
        (Block("colour", "onehot", 0, 3), [[1, 1, 0], [0, 0, 0]], "exactly one 1"),
        (Block("age", "thermometer", 0, 3), [[0, 1, 0]], "non-increasing"),
        (Block("g", "thermometer", 0, 3, missing=True), [[1, 0, 1]], "missing bit"),
        (Block("b", "binary", 0, 1), [[0.5]], "exact 0/1"),
    ],
)
def test_decode_rejects_invalid_rows_without_echoing_them(block, bad, problem):
    with pytest.raises(ValueError, match=problem) as info:
        block.decode(bad)
    msg = str(info.value)
    assert repr(block.name) in msg and f"{len(bad)} rows" in msg
    assert "0.5" not in msg and "[1, 1, 0]" not in msg
    assert not block.is_valid(bad).any()


def test_block_validation():
    with pytest.raises(ValueError, match="kind"):
        Block("a", "ordinal", 0, 2)
    with pytest.raises(ValueError, match="width 1"):
        Block("a", "binary", 0, 2)
    with pytest.raises(ValueError, match="width must be >= 1"):
        Block("a", "onehot", 0, 0)
    with pytest.raises(ValueError, match="thermometer blocks only"):
        Block("a", "onehot", 0, 3, missing=True)
    with pytest.raises(ValueError, match="str"):
        Block(3, "onehot", 0, 3)
    with pytest.raises(ValueError, match="integer"):
        Block("a", "onehot", 0, 2.0)
    assert Block("a", "onehot", np.int64(2), np.int64(3)).start == 2
    with pytest.raises(ValueError, match="levels outside 0..2"):
        Block("a", "onehot", 0, 3).encode([0, 3])
    assert Block("a", "onehot", 4, 3).columns == slice(4, 7)


# ---------------------------------------------------- level probabilities
@pytest.mark.parametrize("block", BLOCKS, ids=IDS)
def test_level_probabilities_of_codes_are_point_masses(block):
    P = block.level_probabilities(block.codes())
    np.testing.assert_array_equal(P, np.eye(block.n_levels))


def _feasible(block, rng, n=200):
    """Random points of the convex hull of the block's codes."""
    W = rng.dirichlet(np.ones(block.n_levels), size=n)
    return W @ block.codes()


@pytest.mark.parametrize("block", BLOCKS, ids=IDS)
def test_level_probabilities_reproduce_a_feasible_mean_exactly(block):
    F = _feasible(block, np.random.default_rng(0))
    P = block.level_probabilities(F)
    assert P.shape == (len(F), block.n_levels)
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(P @ block.codes(), F, atol=1e-12)


def test_onehot_probabilities_normalise_and_all_zero_is_uniform():
    b = Block("o", "onehot", 0, 4)
    P = b.level_probabilities([[0.2, 0.2, 0.0, 0.6], [0, 0, 0, 0], [1, 1, 0, 0]])
    np.testing.assert_allclose(
        P, [[0.2, 0.2, 0.0, 0.6], [0.25] * 4, [0.5, 0.5, 0, 0]], atol=1e-15
    )


def test_thermometer_probabilities_use_the_isotonic_projection():
    b = Block("t", "thermometer", 0, 5)
    rng = np.random.default_rng(1)
    F = rng.random((300, 5))
    P = b.level_probabilities(F)
    V = np.array([_pav_nonincreasing(row) for row in F])
    # P(level >= i) is the projected bit i
    np.testing.assert_allclose(P @ b.codes(), V, atol=1e-12)
    np.testing.assert_allclose(_nonincreasing_projection(F), V, atol=1e-12)
    # e.g. (0.2, 0.6) pools to (0.4, 0.4)
    np.testing.assert_allclose(
        Block("t", "thermometer", 0, 2).level_probabilities([[0.2, 0.6]]),
        [[0.6, 0.0, 0.4]],
        atol=1e-15,
    )


def test_missing_thermometer_probabilities():
    b = Block("m", "thermometer", 0, 3, missing=True)
    # m = 0.2; conditional bits (0.5, 0.25) / 0.8 = (0.625, 0.3125)
    P = b.level_probabilities([[0.5, 0.25, 0.2]])
    np.testing.assert_allclose(
        P, [[0.8 * 0.375, 0.8 * 0.3125, 0.8 * 0.3125, 0.2]], atol=1e-15
    )
    # infeasible: m = 0.5, conditional bits (1.8, 0.2) clipped to (1, 0.2)
    P = b.level_probabilities([[0.9, 0.1, 0.5]])
    np.testing.assert_allclose(P, [[0.0, 0.4, 0.1, 0.5]], atol=1e-15)
    # all missing
    np.testing.assert_array_equal(b.level_probabilities([[0, 0, 1]]), [[0, 0, 0, 1]])


def test_fractions_outside_the_unit_interval_are_rejected():
    b = Block("t", "thermometer", 0, 2)
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        b.level_probabilities([[1.5, 0.0]])
    with pytest.raises(ValueError, match="finite"):
        b.round([[np.nan, 0.0]], 0)
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        b.round([[0.5]], 0)


# -------------------------------------------------------------- rounding
@pytest.mark.parametrize("block", BLOCKS, ids=IDS)
def test_round_keeps_exact_valid_codes(block):
    codes = np.repeat(block.codes(), 50, axis=0)
    out = block.round(codes, np.random.default_rng(0))
    np.testing.assert_array_equal(out, codes)
    assert block.round(_feasible(block, np.random.default_rng(1)), 2).shape[1] == (
        block.width
    )


@pytest.mark.parametrize("block", BLOCKS, ids=IDS)
def test_round_has_the_right_mean(block):
    # One feasible fractional row, rounded n times: each bit's mean is within
    # 5 standard errors (sd <= 0.5 / sqrt(n)) of its value. For a correct
    # rounding a bit fails with probability < 6e-7 (normal approximation), so
    # this test (<= 4 bits) < 3e-6 and all 7 cases < 2e-5; the seed is fixed.
    n = 100_000
    f = _feasible(block, np.random.default_rng(2), n=1)
    out = block.round(np.repeat(f, n, axis=0), np.random.default_rng(3))
    assert block.is_valid(out).all()
    np.testing.assert_array_less(np.abs(out.mean(axis=0) - f[0]), 5 * 0.5 / n**0.5)


# ---------------------------------------------------------------- Blocks
def _mixed():
    return Blocks.from_spec(
        [
            {"name": "colour", "kind": "onehot", "width": 3},
            {"name": "smoker", "kind": "binary", "width": 1},
            {"name": "age", "kind": "thermometer", "width": 3},
            {"name": "grade", "kind": "thermometer", "width": 3, "missing": True},
        ],
        10,
    )


def test_blocks_structure_and_value_semantics():
    blocks = _mixed()
    assert blocks.n_features == 10 and blocks.n_attributes == 4
    assert blocks.n_levels.tolist() == [3, 2, 4, 4]
    assert blocks.names == ["colour", "smoker", "age", "grade"]
    assert [b.start for b in blocks.blocks] == [0, 3, 4, 7]
    assert not blocks.is_all_binary and Blocks.binary(3).is_all_binary
    assert repr(blocks).startswith("Blocks(colour: onehot[3], smoker: binary[1]")
    assert repr(Blocks.binary(4)) == "Blocks.binary(4)"
    same = Blocks.from_spec(list(blocks.blocks), 10)
    assert same == blocks and hash(same) == hash(blocks)
    assert Blocks.from_spec(blocks) is blocks
    assert blocks != Blocks.binary(10)
    assert Blocks.binary(2, ["a", "b"]).names == ["a", "b"]
    assert len({blocks, same, Blocks.binary(10)}) == 2


def test_blocks_json_round_trip():
    blocks = _mixed()
    d = json.loads(json.dumps(blocks.to_dict()))
    assert Blocks.from_dict(d) == blocks
    assert d["n_features"] == 10 and d["blocks"][3]["missing"] is True


def test_blocks_must_tile_the_columns():
    with pytest.raises(ValueError, match="starts at 2, expected 1"):
        Blocks((Block("a", "binary", 0, 1), Block("b", "binary", 2, 1)))
    with pytest.raises(ValueError, match="add up to 4 bits, but the data has 5"):
        check_blocks([{"name": "a", "kind": "onehot", "width": 4}], 5)
    with pytest.raises(ValueError, match="keys"):
        Blocks.from_spec([{"name": "a", "kind": "onehot"}])
    with pytest.raises(ValueError, match="but the blocks before it end at 0"):
        Blocks.from_spec([{"name": "a", "kind": "onehot", "width": 2, "start": 1}])
    with pytest.raises(ValueError, match="list of dicts"):
        Blocks.from_spec("onehot")
    assert check_blocks(None, 3) == Blocks.binary(3)
    assert check_blocks(None, 2, ["u", "v"]).names == ["u", "v"]
    assert Blocks(()).n_features == 0


def test_levels_and_bits_round_trip():
    blocks = _mixed()
    rng = np.random.default_rng(0)
    L = np.column_stack([rng.integers(0, k, 50) for k in blocks.n_levels])
    X = blocks.to_bits(L)
    assert X.dtype == np.uint8 and X.shape == (50, 10)
    assert blocks.is_valid(X).all()
    np.testing.assert_array_equal(blocks.to_levels(X), L)
    X[0, :3] = [1, 1, 0]
    assert blocks.is_valid(X).tolist() == [False] + [True] * 49
    assert blocks.invalid_blocks(X) == {"colour": 1}
    with pytest.raises(ValueError, match="'colour'"):
        blocks.to_levels(X)


def test_blocks_round_keeps_valid_rows_and_rounds_to_valid_rows():
    blocks = _mixed()
    rng = np.random.default_rng(0)
    L = np.column_stack([rng.integers(0, k, 200) for k in blocks.n_levels])
    X = blocks.to_bits(L)
    np.testing.assert_array_equal(blocks.round(X, rng), X)
    Y = blocks.round(rng.random((500, 10)), rng)
    assert Y.dtype == np.uint8 and blocks.is_valid(Y).all()


def test_all_binary_round_is_per_bit_randomized_rounding():
    U = np.random.default_rng(0).random((40, 6))
    expected = np.random.default_rng(5).random(U.shape) < U
    got = Blocks.binary(6).round(U, np.random.default_rng(5))
    np.testing.assert_array_equal(got, expected)


def test_repair():
    blocks = _mixed()
    rng = np.random.default_rng(0)
    X = (rng.random((300, 10)) < 0.5).astype(np.uint8)
    R = blocks.repair(X, np.random.default_rng(1))
    assert blocks.is_valid(R).all()
    # valid blocks are untouched
    for b in blocks.blocks:
        ok = b.is_valid(X[:, b.columns])
        np.testing.assert_array_equal(R[ok, b.columns], X[ok, b.columns])
    # a one-hot block with several ones keeps one of them
    two = np.array([[1, 0, 1, 0, 0, 0, 0, 0, 0, 0]] * 100)
    R = blocks.repair(two, np.random.default_rng(2))
    assert set(map(tuple, R[:, :3])) == {(1, 0, 0), (0, 0, 1)}
    with pytest.raises(ValueError, match="exact 0/1"):
        blocks.repair(np.full((1, 10), 0.5), rng)


# ------------------------------------------- the one-pass validity check
_KINDS = [
    ("binary", 1, False),
    ("onehot", 1, False),
    ("onehot", 3, False),
    ("onehot", 70, False),  # wide: fewer sums packed per dot product
    ("thermometer", 1, False),
    ("thermometer", 1, True),
    ("thermometer", 2, True),
    ("thermometer", 4, False),
    ("thermometer", 4, True),
]


def _reference_is_valid(blocks, X):
    """The block-by-block definition (:meth:`Block.is_valid`)."""
    valid = np.ones(X.shape[0], dtype=bool)
    for b in blocks.blocks:
        valid &= b.is_valid(X[:, b.columns])
    return valid


def _reference_invalid_blocks(blocks, X):
    counts = {b.name: int((~b.is_valid(X[:, b.columns])).sum()) for b in blocks.blocks}
    return {name: c for name, c in counts.items() if c}


@pytest.mark.parametrize("chunk", [7, 1 << 15])
def test_vectorised_validity_equals_the_block_by_block_definition(monkeypatch, chunk):
    import skdp_synth.blocks as blocks_module

    monkeypatch.setattr(blocks_module, "_VALID_CHUNK", chunk)  # many chunks too
    rng = np.random.default_rng(0)
    specials = np.array([np.nan, 2.0, -1.0, 0.5, np.inf, -0.0, 1e-300])
    for trial in range(60):
        spec = []
        for i in range(rng.integers(1, 8)):
            kind, width, missing = _KINDS[rng.integers(len(_KINDS))]
            spec.append({"name": f"b{i}", "kind": kind, "width": width,
                         "missing": missing})  # fmt: skip
        blocks = Blocks.from_spec(spec)
        L = rng.integers(0, blocks.n_levels, size=(150, blocks.n_attributes))
        X = blocks.to_bits(L).astype(np.float64)
        flip = rng.random(X.shape) < [0.0, 0.02, 0.2][trial % 3]
        X[flip] = 1 - X[flip]
        odd = rng.random(X.shape) < 0.01 * (trial % 2)
        X[odd] = rng.choice(specials, odd.sum())
        integral = np.abs(np.nan_to_num(X, nan=3, posinf=7, neginf=-7))
        cases = [X, X.astype(np.float32), np.asfortranarray(X), X.astype(object),
                 integral.astype(np.int64) * rng.choice([-1, 1], X.shape),
                 integral.astype(np.uint8), integral.astype(np.int8),
                 integral != 0]  # fmt: skip
        for Y in cases:
            np.testing.assert_array_equal(
                blocks.is_valid(Y), _reference_is_valid(blocks, Y)
            )
            assert blocks.invalid_blocks(Y) == _reference_invalid_blocks(blocks, Y)


def test_validity_of_no_rows_and_no_columns():
    blocks = Blocks.from_spec([{"name": "c", "kind": "onehot", "width": 3}])
    assert blocks.is_valid(np.zeros((0, 3))).shape == (0,)
    assert Blocks.binary(0).is_valid(np.zeros((4, 0))).tolist() == [True] * 4


def _reference_round(blocks, U, rng):
    """The block-by-block rounding (before the chunked loop)."""
    U = np.asarray(U)
    u = rng.random((U.shape[0], blocks.n_attributes))
    if blocks.is_all_binary:
        return (u < np.asarray(U, dtype=np.float64)).astype(np.uint8)
    out = np.empty(U.shape, dtype=np.uint8)
    for a, b in enumerate(blocks.blocks):
        F = b._check_frac(U[:, b.columns])
        out[:, b.columns] = b.codes()[b._round_uniform(F, u[:, a])]
    return out


@pytest.mark.parametrize("chunk", [5, 1 << 17])
def test_chunked_round_equals_the_block_by_block_rounding(monkeypatch, chunk):
    import skdp_synth.blocks as blocks_module

    monkeypatch.setattr(blocks_module, "_ROUND_CHUNK", chunk)
    rng = np.random.default_rng(1)
    for trial in range(40):
        spec = []
        for i in range(rng.integers(1, 8)):
            kind, width, missing = _KINDS[rng.integers(len(_KINDS))]
            spec.append({"name": f"b{i}", "kind": kind, "width": width,
                         "missing": missing})  # fmt: skip
        blocks = Blocks.from_spec(spec)
        if trial % 5 == 0:
            blocks = Blocks.binary(blocks.n_features)
        U = rng.random((97, blocks.n_features))
        U[rng.random(U.shape) < 0.1] = 0.0
        U[rng.random(U.shape) < 0.1] = 1.0
        U[rng.random(U.shape) < 0.05] = 1 + 1e-12  # within the tolerance
        for V in (U, U.astype(np.float32), (U > 0.5).astype(np.uint8)):
            a = blocks.round(V, np.random.default_rng(trial))
            b = _reference_round(blocks, V, np.random.default_rng(trial))
            assert a.dtype == np.uint8
            np.testing.assert_array_equal(a, b)


def test_chunked_round_names_the_first_bad_block(monkeypatch):
    import skdp_synth.blocks as blocks_module

    monkeypatch.setattr(blocks_module, "_ROUND_CHUNK", 4)
    blocks = Blocks.from_spec(
        [{"name": "a", "kind": "onehot", "width": 2},
         {"name": "b", "kind": "thermometer", "width": 2}]
    )  # fmt: skip
    U = np.full((30, 4), 0.5)
    U[25, 3] = 1.5  # in a later chunk, block b
    with pytest.raises(ValueError, match="block 'b': fractional values must be in"):
        blocks.round(U, 0)
    U[2, 0] = np.nan
    with pytest.raises(ValueError, match="block 'a': fractional values must be fin"):
        blocks.round(U, 0)
    with pytest.raises(ValueError, match="must be finite and in"):
        Blocks.binary(4).round(U, 0)


def test_to_levels_by_one_product_equals_decode_block_by_block(monkeypatch):
    import skdp_synth.blocks as blocks_module

    monkeypatch.setattr(blocks_module, "_VALID_CHUNK", 11)
    rng = np.random.default_rng(5)
    for _ in range(40):
        spec = []
        for i in range(rng.integers(1, 8)):
            kind, width, missing = _KINDS[rng.integers(len(_KINDS))]
            spec.append({"name": f"b{i}", "kind": kind, "width": width,
                         "missing": missing})  # fmt: skip
        blocks = Blocks.from_spec(spec)
        L = rng.integers(0, blocks.n_levels, size=(60, blocks.n_attributes))
        X = blocks.to_bits(L)
        for Y in (X, X.astype(np.float64), X.astype(bool), X.astype(object)):
            got = blocks.to_levels(Y)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, L)
            np.testing.assert_array_equal(
                got,
                np.column_stack([b.decode(Y[:, b.columns]) for b in blocks.blocks]),
            )
        if blocks.is_all_binary:
            continue
        X = X.astype(np.float64)
        X[7] = 1.0  # every bit set: invalid in some non-binary block
        bad = [b for b in blocks.blocks if not b.is_valid(X[7:8, b.columns])[0]]
        if not bad:  # e.g. one-hot[1] and thermometers without a missing bit
            continue
        with pytest.raises(ValueError, match=f"block {bad[0].name!r}"):
            blocks.to_levels(X)
