"""Categorical block structure of a 0/1 matrix: which bits form one attribute.

A :class:`~skdp_synth.preprocessing.BooleanEncoder` writes every column of a
table as a *block* of adjacent bits. The synthesizers work on the bits, but a
synthetic row is only a row of the table when every block holds a valid code.
This module describes the blocks (public knowledge: they come from the
encoder's declared domain, never from the data) and rounds fractional
values to valid codes.

Kinds of block (``w`` = width, the number of bits):

``"binary"``
    ``w = 1``; levels ``0, 1`` (the bit itself).
``"onehot"``
    levels ``0 .. w-1``; level ``i`` is bit ``i`` set and all others 0. The
    encoder's missing category is simply its last level.
``"thermometer"``
    without a missing indicator: levels ``0 .. w``, level ``l`` = the first
    ``l`` bits 1, the rest 0. With ``missing=True`` the last bit is the
    missing indicator: levels ``0 .. w-1`` are the thermometer codes of the
    first ``w - 1`` bits with the missing bit 0, and level ``w`` (missing)
    is all thermometer bits 0 and the missing bit 1.

Rounding (:meth:`Block.round`) draws one level per row from
:meth:`Block.level_probabilities`, a distribution over levels whose
expected code equals the fractional row whenever some distribution over
valid codes has that mean -- so rounding keeps every 1-way bit frequency in
expectation, as independent per-bit randomized rounding (:cite:`Boedihardjo2024` §4.3)
does, but returns valid rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from .validation import check_boolean, check_integer

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, TypeAlias

    from numpy.typing import ArrayLike, NDArray

    #: What a ``blocks`` argument accepts (for type checkers only): a
    #: :class:`Blocks`, or a list of :class:`Block` or of dicts
    #: ``{"name", "kind", "width", "missing"}``.
    BlocksLike: TypeAlias = "Blocks | Sequence[Block | Mapping[str, Any]]"

__all__ = ["Block", "Blocks", "check_blocks"]

KINDS = ("binary", "onehot", "thermometer")

#: tolerance on fractional values slightly outside [0, 1] (floating error)
_FRAC_TOL = 1e-9
#: rows x width x width floats per chunk of the isotonic projection
_PAV_CHUNK = 1 << 22
#: values per row chunk of the one-pass validity check (a chunk stays in cache)
_VALID_CHUNK = 1 << 15
#: values per row chunk of Blocks.round
_ROUND_CHUNK = 1 << 17


def _as_int(value, what):
    return check_integer(value, what)


def _generator(rng):
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.RandomState):
        raise TypeError(
            "pass a numpy Generator (np.random.default_rng), not RandomState"
        )
    return np.random.default_rng(rng)


def _nonincreasing_projection(V):
    """Euclidean projection of each row of ``V`` onto non-increasing sequences.

    The isotonic regression (what pool-adjacent-violators computes), by the
    min-max formula ``v*_i = min_{j <= i} max_{k >= i} mean(v_j .. v_k)``
    (Robertson, Wright & Dykstra, *Order Restricted Statistical Inference*,
    1988, Theorem 1.4.4, written for the decreasing order). Vectorised over
    rows, ``O(w^2)`` per row; only rows that are not already non-increasing
    are touched. Averages of values in ``[0, 1]`` stay in ``[0, 1]``.
    """
    n, w = V.shape
    out = V.copy()
    if w < 2:
        return out
    bad = np.flatnonzero(np.any(np.diff(V, axis=1) > 0, axis=1))
    if bad.size == 0:
        return out
    chunk = max(1, _PAV_CHUNK // (w * w))
    j = np.arange(w)[:, None]
    k = np.arange(w)[None, :]
    length = np.where(k >= j, k - j + 1, 1).astype(np.float64)
    for s in range(0, bad.size, chunk):
        rows = bad[s : s + chunk]
        C = np.zeros((rows.size, w + 1))
        np.cumsum(V[rows], axis=1, out=C[:, 1:])
        # A[r, j, k] = mean(v_j .. v_k) for k >= j, -inf below the diagonal
        A = (C[:, None, 1:] - C[:, :-1, None]) / length
        A = np.where(k >= j, A, -np.inf)
        # R[r, j, i] = max_{k >= i} A[r, j, k]
        R = np.maximum.accumulate(A[:, :, ::-1], axis=2)[:, :, ::-1]
        R = np.where(k >= j, R, np.inf)  # i = k index here: keep j <= i
        out[rows] = R.min(axis=1)
    return out


@dataclass(frozen=True)
class Block:
    """One attribute: ``width`` adjacent bits starting at column ``start``.

    See the module docstring for the codes of each ``kind``.

    Parameters
    ----------
    name : str
        The attribute's name (the encoder's column name).
    kind : {"binary", "onehot", "thermometer"}
    start : int
        Index of the block's first bit.
    width : int
        Number of bits, ``>= 1``; ``1`` for ``"binary"``.
    missing : bool, default=False
        Thermometer blocks only: the last bit is a missing indicator.

    Examples
    --------
    >>> from skdp_synth.blocks import Block
    >>> b = Block("age", "thermometer", start=0, width=3, missing=True)
    >>> b.n_levels
    4
    >>> b.codes().tolist()
    [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 0, 1]]
    >>> b.decode([[1, 1, 0], [0, 0, 1]]).tolist()
    [2, 3]
    """

    name: str
    kind: str
    start: int
    width: int
    missing: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise ValueError(
                f"a block name must be a str, got {type(self.name).__name__}"
            )
        if self.kind not in KINDS:
            raise ValueError(
                f"block {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}"
            )
        start = _as_int(self.start, f"block {self.name!r}: start")
        width = _as_int(self.width, f"block {self.name!r}: width")
        if start < 0:
            raise ValueError(f"block {self.name!r}: start must be >= 0, got {start}")
        if width < 1:
            raise ValueError(f"block {self.name!r}: width must be >= 1, got {width}")
        if self.kind == "binary" and width != 1:
            raise ValueError(
                f"block {self.name!r}: a binary block has width 1, got {width}"
            )
        if not isinstance(self.missing, bool | np.bool_):
            raise ValueError(f"block {self.name!r}: missing must be a bool")
        if self.missing and self.kind != "thermometer":
            raise ValueError(
                f"block {self.name!r}: missing=True is for thermometer blocks only "
                "(a one-hot block's missing category is just its last level)"
            )
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "width", width)
        object.__setattr__(self, "missing", bool(self.missing))

    # ---------------------------------------------------------- structure
    @property
    def n_levels(self) -> int:
        """Number of valid codes (levels)."""
        if self.kind == "binary":
            return 2
        if self.kind == "onehot":
            return self.width
        return self.width + 1  # thermometer, with or without the missing level

    @property
    def columns(self) -> slice:
        """``slice(start, start + width)``: the block's bits in a row."""
        return slice(self.start, self.start + self.width)

    @property
    def _thermo_width(self):
        return self.width - 1 if self.missing else self.width

    def codes(self) -> NDArray[np.uint8]:
        """The valid codes, one row per level in level order, ``uint8``."""
        w = self.width
        if self.kind == "binary":
            return np.array([[0], [1]], dtype=np.uint8)
        if self.kind == "onehot":
            return np.eye(w, dtype=np.uint8)
        t = self._thermo_width
        levels = np.arange(t + 1)[:, None]
        codes = np.zeros((self.n_levels, w), dtype=np.uint8)
        codes[: t + 1, :t] = levels > np.arange(t)[None, :]
        if self.missing:
            codes[-1, -1] = 1
        return codes

    def encode(self, levels: ArrayLike) -> NDArray[np.uint8]:
        """Codes of integer ``levels``, shape ``(n, width)``, ``uint8``."""
        levels = np.asarray(levels)
        if levels.ndim != 1:
            raise ValueError(f"block {self.name!r}: levels must be a 1-D array")
        if levels.size and not np.issubdtype(levels.dtype, np.integer):
            if not np.all(np.isfinite(levels)) or np.any(levels != np.round(levels)):
                raise ValueError(f"block {self.name!r}: levels must be integers")
        levels = levels.astype(np.int64)
        bad = (levels < 0) | (levels >= self.n_levels)
        if bad.any():
            raise ValueError(
                f"block {self.name!r}: {int(bad.sum())} levels outside "
                f"0..{self.n_levels - 1}"
            )
        return self.codes()[levels]

    def _check_bits(self, bits):
        B = np.asarray(bits)
        if B.ndim != 2 or B.shape[1] != self.width:
            raise ValueError(
                f"block {self.name!r}: expected an array of shape (n, {self.width}), "
                f"got shape {B.shape}"
            )
        return B

    def is_valid(self, bits: ArrayLike) -> NDArray[np.bool_]:
        """Whether each row of ``bits`` (shape ``(n, width)``) is a valid code."""
        B = self._check_bits(bits)
        with np.errstate(invalid="ignore"):
            binary = np.all((B == 0) | (B == 1), axis=1)
        B = np.where(binary[:, None], B, 0).astype(np.int64)
        if self.kind == "binary":
            return binary
        if self.kind == "onehot":
            return binary & (B.sum(axis=1) == 1)
        t = self._thermo_width
        T = B[:, :t]
        monotone = np.all(np.diff(T, axis=1) <= 0, axis=1) if t > 1 else True
        if not self.missing:
            return binary & monotone
        miss = B[:, -1] == 1
        return binary & np.where(miss, T.sum(axis=1) == 0, monotone)

    def decode(self, bits: ArrayLike) -> NDArray[np.integer[Any]]:
        """Level of each row of exact 0/1 valid codes; raise on anything else."""
        B = self._check_bits(bits)
        valid = self.is_valid(B)
        if not valid.all():
            raise ValueError(
                f"block {self.name!r} ({self.kind}): {int((~valid).sum())} rows are "
                "not valid codes (need exact 0/1 values"
                + {
                    "binary": ")",
                    "onehot": " with exactly one 1)",
                    "thermometer": " with non-increasing thermometer bits"
                    + (", all 0 when the missing bit is 1)" if self.missing else ")"),
                }[self.kind]
            )
        B = B.astype(np.int64)
        if self.kind == "binary":
            return B[:, 0]
        if self.kind == "onehot":
            return np.argmax(B, axis=1)
        t = self._thermo_width
        level = B[:, :t].sum(axis=1)
        if self.missing:
            level = np.where(B[:, -1] == 1, self.n_levels - 1, level)
        return level

    # ----------------------------------------------------------- rounding
    def _check_frac(self, frac):
        F = np.asarray(self._check_bits(frac), dtype=np.float64)
        if not np.all(np.isfinite(F)):
            raise ValueError(f"block {self.name!r}: fractional values must be finite")
        if np.any((F < -_FRAC_TOL) | (F > 1 + _FRAC_TOL)):
            raise ValueError(
                f"block {self.name!r}: fractional values must be in [0, 1]"
            )
        return np.clip(F, 0.0, 1.0)

    def level_probabilities(self, frac: ArrayLike) -> NDArray[np.float64]:
        """A distribution over levels, per row, with expected code ``frac``.

        ``frac`` has shape ``(n, width)`` and values in ``[0, 1]``; returns
        ``(n, n_levels)``. The expected code equals ``frac`` exactly whenever
        that is possible (``frac`` in the convex hull of the codes):

        * binary: ``(1 - v, v)``;
        * one-hot: ``frac`` normalised to sum 1 (an all-zero row: uniform);
        * thermometer: the bits are first projected onto non-increasing
          sequences (isotonic regression, the Euclidean projection; rows
          already non-increasing are unchanged), then, with ``v_0 = 1`` and
          ``v_{w+1} = 0``, ``P(level = l) = v_l - v_{l+1}``, so that
          ``P(level >= i) = v_i``;
        * thermometer with missing bit ``m``: ``P(missing) = m``, and the
          other levels get ``(1 - m)`` times the thermometer distribution of
          the conditional bits ``v / (1 - m)`` clipped to ``[0, 1]``.
        """
        F = self._check_frac(frac)
        n = F.shape[0]
        if self.kind == "binary":
            return np.column_stack([1.0 - F[:, 0], F[:, 0]])
        if self.kind == "onehot":
            s = F.sum(axis=1, keepdims=True)
            P = np.where(s > 0, F / np.where(s > 0, s, 1.0), 1.0 / self.width)
            return P
        t = self._thermo_width
        if self.missing:
            m = F[:, -1]
            keep = 1.0 - m
            with np.errstate(divide="ignore", invalid="ignore"):
                cond = np.where(keep[:, None] > 0, F[:, :t] / keep[:, None], 0.0)
            cond = np.clip(cond, 0.0, 1.0)
        else:
            keep = np.ones(n)
            cond = F
        v = _nonincreasing_projection(cond)
        ext = np.hstack([np.ones((n, 1)), v, np.zeros((n, 1))])
        P = np.clip(ext[:, :-1] - ext[:, 1:], 0.0, None) * keep[:, None]
        if self.missing:
            P = np.hstack([P, m[:, None]])
        return P

    def _round_uniform(self, F, u):
        """Levels drawn from :meth:`level_probabilities` by one uniform per row."""
        if self.kind == "binary":
            # the Bernoulli draw u < v: the inverse CDF with the levels reversed,
            # identical to per-bit randomized rounding
            return (u < F[:, 0]).astype(np.int64)
        P = self.level_probabilities(F)
        cum = np.cumsum(P, axis=1)
        level = (cum <= u[:, None]).sum(axis=1)
        # floating error can leave cum[-1] a hair below 1: take the last
        # level with positive probability
        last = self.n_levels - 1 - np.argmax(P[:, ::-1] > 0, axis=1)
        return np.minimum(level, last)

    def round(self, frac: ArrayLike, rng: np.random.Generator) -> NDArray[np.uint8]:
        """Valid codes drawn from :meth:`level_probabilities`, ``(n, width)`` uint8.

        One uniform per row, inverse CDF over the levels in order (a binary
        block draws ``u < v``). Exact valid codes come back unchanged.
        """
        F = self._check_frac(frac)
        u = _generator(rng).random(F.shape[0])
        return self.codes()[self._round_uniform(F, u)]


@dataclass(frozen=True, repr=False)
class Blocks:
    """The blocks of a 0/1 matrix: a tuple of :class:`Block` tiling its columns.

    The blocks must cover columns ``0 .. p-1`` contiguously, in order. Blocks
    are public knowledge (they come from the encoder's declared domain), so
    using them costs no privacy.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp_synth.blocks import Blocks
    >>> blocks = Blocks.from_spec(
    ...     [{"name": "colour", "kind": "onehot", "width": 3},
    ...      {"name": "age", "kind": "thermometer", "width": 2}], 5)
    >>> blocks
    Blocks(colour: onehot[3], age: thermometer[2])
    >>> blocks.n_levels.tolist()
    [3, 3]
    >>> X = np.array([[0, 1, 0, 1, 0], [1, 1, 0, 0, 1]])
    >>> blocks.is_valid(X).tolist()
    [True, False]
    >>> blocks.to_levels(X[:1]).tolist()
    [[1, 1]]
    >>> Y = blocks.round(np.full((4, 5), 0.5), np.random.default_rng(0))
    >>> bool(blocks.is_valid(Y).all())
    True
    """

    blocks: tuple

    def __post_init__(self):
        blocks = tuple(self.blocks)
        start = 0
        for b in blocks:
            if not isinstance(b, Block):
                raise ValueError(f"Blocks holds Block objects, got {type(b).__name__}")
            if b.start != start:
                raise ValueError(
                    f"blocks must tile the columns contiguously in order: block "
                    f"{b.name!r} starts at {b.start}, expected {start}"
                )
            start += b.width
        object.__setattr__(self, "blocks", blocks)

    # ------------------------------------------------------- constructors
    @classmethod
    def binary(cls, n_features: int, names: Sequence[str] | None = None) -> Blocks:
        """Every bit its own binary block, named ``x0 ..`` or by ``names``."""
        p = _as_int(n_features, "n_features")
        if p < 0:
            raise ValueError(f"n_features must be >= 0, got {p}")
        if names is None:
            names = [f"x{j}" for j in range(p)]
        names = [str(c) for c in names]
        if len(names) != p:
            raise ValueError(f"got {len(names)} names for {p} features")
        return cls(tuple(Block(names[j], "binary", j, 1) for j in range(p)))

    @classmethod
    def from_spec(cls, spec: BlocksLike, n_features: int | None = None) -> Blocks:
        """Blocks from a :class:`Blocks`, a list of :class:`Block` or of dicts.

        Dicts have keys ``name``, ``kind``, ``width`` and optionally
        ``missing`` (and ``start``, which must then match the order). With
        ``n_features`` given, the widths must add up to it.
        """
        if isinstance(spec, Blocks):
            blocks = spec
        else:
            if isinstance(spec, str | bytes | dict) or not hasattr(spec, "__iter__"):
                raise ValueError(
                    "blocks must be a Blocks, a list of Block or a list of dicts "
                    "with keys name, kind, width (and missing); got "
                    f"{type(spec).__name__}"
                )
            items, start = [], 0
            for item in spec:
                if isinstance(item, Block):
                    block = item
                elif isinstance(item, dict):
                    unknown = set(item) - {"name", "kind", "width", "missing", "start"}
                    if unknown or not {"name", "kind", "width"} <= set(item):
                        raise ValueError(
                            "a block dict has keys name, kind, width and optionally "
                            f"missing, start; got {sorted(item)}"
                        )
                    if "start" in item and item["start"] != start:
                        raise ValueError(
                            f"block {item['name']!r} starts at {item['start']}, "
                            f"but the blocks before it end at {start}"
                        )
                    block = Block(
                        item["name"],
                        item["kind"],
                        start,
                        item["width"],
                        item.get("missing", False),
                    )
                else:
                    raise ValueError(
                        f"a block must be a Block or a dict, got {type(item).__name__}"
                    )
                items.append(block)
                start = block.start + block.width
            blocks = cls(tuple(items))
        if n_features is not None and blocks.n_features != n_features:
            raise ValueError(
                f"the blocks' widths add up to {blocks.n_features} bits, but the "
                f"data has {n_features} columns"
            )
        return blocks

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Blocks:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(d, dict) or "blocks" not in d:
            raise ValueError("expected a dict with a 'blocks' list (see to_dict)")
        blocks = cls.from_spec(d["blocks"], d.get("n_features"))
        return blocks

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able description: ``{"n_features": p, "blocks": [dicts]}``."""
        return {
            "n_features": self.n_features,
            "blocks": [
                {
                    "name": b.name,
                    "kind": b.kind,
                    "start": b.start,
                    "width": b.width,
                    "missing": b.missing,
                }
                for b in self.blocks
            ],
        }

    # --------------------------------------------------------- properties
    @property
    def n_features(self) -> int:
        """Number of bits ``p``."""
        return sum(b.width for b in self.blocks)

    @property
    def n_attributes(self) -> int:
        """Number of blocks."""
        return len(self.blocks)

    @property
    def n_levels(self) -> NDArray[np.int64]:
        """Levels per block, an ``int`` array."""
        return np.array([b.n_levels for b in self.blocks], dtype=np.int64)

    @property
    def names(self) -> list[str]:
        """Block names, a list of str."""
        return [b.name for b in self.blocks]

    @cached_property
    def is_all_binary(self) -> bool:
        """Whether every block is a single binary bit (no structure)."""
        return all(b.kind == "binary" for b in self.blocks)

    def __repr__(self):
        if self.is_all_binary:
            return f"Blocks.binary({self.n_features})"
        shown = [
            f"{b.name}: {b.kind}[{b.width}{', missing' if b.missing else ''}]"
            for b in self.blocks[:6]
        ]
        if self.n_attributes > 6:
            shown.append(f"... {self.n_attributes - 6} more")
        return f"Blocks({', '.join(shown)})"

    # ------------------------------------------------------------ methods
    def _check_matrix(self, X, what="X"):
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(
                f"{what} must have shape (n, {self.n_features}) for these blocks, "
                f"got {X.shape}"
            )
        return X

    @cached_property
    def _layout(self):
        """Column indices of the one-pass validity check (public structure only).

        ``onehot_weights``/``onehot_target``: see below; ``up``: a mask of
        the pairs of adjacent thermometer bits ``(j, j + 1)`` of one block, a
        row being invalid where ``x_j < x_{j+1}`` (an increase);
        ``miss_t0``/``miss_bit``:
        the first thermometer bit and the missing bit of thermometer blocks
        with ``missing=True`` and at least one thermometer bit.
        """
        up_lo, miss_t0, miss_bit = [], [], []
        for b in self.blocks:
            if b.kind != "thermometer":
                continue
            t = b._thermo_width
            up_lo.extend(range(b.start, b.start + t - 1))
            if b.missing and t >= 1:
                miss_t0.append(b.start)
                miss_bit.append(b.start + b.width - 1)
        up = np.zeros(max(self.n_features - 1, 0), dtype=bool)
        up[np.asarray(up_lo, dtype=np.intp)] = True
        # One-hot sums packed as base-2^e digits of a few dot products: on a
        # 0/1 row block a's sum s_a <= w_a < 2^e, so sum_a s_a 2^(e d_a) is
        # exact in float64 (< 2^52) and equals sum_a 2^(e d_a) iff every
        # s_a == 1. One matrix-vector product per chunk, no per-block work.
        onehot = [b for b in self.blocks if b.kind == "onehot"]
        e = int(max([b.width for b in onehot], default=1)).bit_length()
        per = max(1, 52 // e)
        n_groups = -(-len(onehot) // per)
        weights = np.zeros((self.n_features, n_groups))
        target = np.zeros(n_groups)
        for i, b in enumerate(onehot):
            g, d = divmod(i, per)
            weights[b.columns, g] = 2.0 ** (e * d)
            target[g] += 2.0 ** (e * d)
        return {
            "onehot_weights": weights,
            "onehot_target": target,
            "up": up if up.any() else None,
            "miss_t0": np.asarray(miss_t0, dtype=np.intp),
            "miss_bit": np.asarray(miss_bit, dtype=np.intp),
        }

    def _valid_rows(self, C):
        """:meth:`is_valid` of one chunk of rows of a numeric ``C``.

        On rows of exact 0/1 values a block's code is valid iff: one-hot, its
        bits sum to 1; thermometer, no adjacent pair increases; with a missing
        bit, moreover not both the missing bit and the first thermometer bit
        (a non-increasing thermometer part is all 0 iff its first bit is 0).
        Rows with any other value are invalid in some block whatever the
        rest, so the structural tests may read them as they are.
        """
        lay = self._layout
        kind = C.dtype.kind
        ok = np.ones(C.shape[0], dtype=bool)

        def reject(bad):  # rows with a bad entry; a global test first (cheap)
            if bad.any():
                ok[bad.any(axis=1)] = False

        with np.errstate(invalid="ignore", over="ignore"):
            if kind == "u":
                reject(C > 1)
            elif kind == "i":  # negative values wrap to huge unsigned ones
                reject(C.view(C.dtype.str.replace("i", "u")) > 1)
            elif kind == "f":
                reject((C != 0) & (C != 1))
            if lay["onehot_target"].size:
                sums = C @ lay["onehot_weights"]
                reject(sums != lay["onehot_target"])
            if lay["up"] is not None:
                reject((C[:, :-1] < C[:, 1:]) & lay["up"])
            if lay["miss_t0"].size:
                reject((C[:, lay["miss_t0"]] == 1) & (C[:, lay["miss_bit"]] == 1))
        return ok

    def is_valid(self, X: ArrayLike) -> NDArray[np.bool_]:
        """Whether each row of ``X`` has a valid code in every block.

        One pass over the data in row chunks that stay in cache (no copy of
        ``X``, no Python loop over the blocks); the same answer as
        :meth:`Block.is_valid` block by block, which non-numeric arrays use.
        """
        X = self._check_matrix(X)
        if X.dtype.kind not in "biuf":
            valid = np.ones(X.shape[0], dtype=bool)
            for b in self.blocks:
                valid &= b.is_valid(X[:, b.columns])
            return valid
        n = X.shape[0]
        valid = np.empty(n, dtype=bool)
        if self.n_features == 0:
            valid[:] = True
            return valid
        step = max(1, _VALID_CHUNK // self.n_features)
        for s in range(0, n, step):
            valid[s : s + step] = self._valid_rows(X[s : s + step])
        return valid

    def invalid_blocks(self, X: ArrayLike) -> dict[str, int]:
        """``{block name: number of rows with an invalid code}``, non-zero only."""
        X = self._check_matrix(X)
        out = {}
        if X.dtype.kind in "biuf" and self.is_valid(X).all():
            return out
        for b in self.blocks:
            bad = int((~b.is_valid(X[:, b.columns])).sum())
            if bad:
                out[b.name] = bad
        return out

    def to_levels(self, X: ArrayLike) -> NDArray[np.int64]:
        """Levels of exact valid rows, ``(n, n_attributes)`` int; raises otherwise."""
        X = self._check_matrix(X)
        if X.dtype.kind in "biuf" and self.is_valid(X).all():
            # On valid codes the level is linear in the bits: binary x, one-hot
            # sum_j j x_j, thermometer sum_j x_j plus w times the missing bit
            # (whose thermometer bits are then 0). One product, exact in
            # float64, the same levels as Block.decode.
            if self.is_all_binary:  # the level is the bit
                return X.astype(np.int64)
            levels = np.empty((X.shape[0], self.n_attributes), dtype=np.int64)
            step = max(1, _VALID_CHUNK // max(1, self.n_features))
            for s in range(0, X.shape[0], step):
                levels[s : s + step] = X[s : s + step] @ self._level_weights
            return levels
        out = np.empty((X.shape[0], self.n_attributes), dtype=np.int64)
        for a, b in enumerate(self.blocks):
            out[:, a] = b.decode(X[:, b.columns])
        return out

    @cached_property
    def _level_weights(self):
        W = np.zeros((self.n_features, self.n_attributes))
        for a, b in enumerate(self.blocks):
            if b.kind == "onehot":
                W[b.columns, a] = np.arange(b.width)
            else:
                W[b.columns, a] = 1.0
                if b.missing:
                    W[b.start + b.width - 1, a] = b.n_levels - 1
        return W

    def to_bits(self, L: ArrayLike) -> NDArray[np.uint8]:
        """Codes of levels ``L`` (shape ``(n, n_attributes)``), ``(n, p)`` uint8."""
        L = np.asarray(L)
        if L.ndim != 2 or L.shape[1] != self.n_attributes:
            raise ValueError(
                f"levels must have shape (n, {self.n_attributes}), got {L.shape}"
            )
        out = np.empty((L.shape[0], self.n_features), dtype=np.uint8)
        for a, b in enumerate(self.blocks):
            out[:, b.columns] = b.encode(L[:, a])
        return out

    def round(self, U: ArrayLike, rng: np.random.Generator) -> NDArray[np.uint8]:
        """Round fractional rows ``U`` in ``[0, 1]`` to valid 0/1 rows, block by block.

        Each block draws one level per row from
        :meth:`Block.level_probabilities` (one uniform per row and block,
        drawn together as ``rng.random((n, n_attributes))``), so every bit
        keeps its mean whenever the block's fractional values are feasible.
        On all-binary blocks this is exactly per-bit randomized rounding
        ``rng.random(U.shape) < U`` (:cite:`Boedihardjo2024` §4.3). Exact valid rows
        come back unchanged.
        """
        U = self._check_matrix(U, "U")
        rng = _generator(rng)
        n = U.shape[0]
        u = rng.random((n, self.n_attributes))
        out = np.empty((n, self.n_features), dtype=np.uint8)
        # In row chunks that stay in cache (each row is rounded on its own,
        # so the chunks change nothing), all binary blocks of a chunk at once.
        lay = self._round_layout
        step = max(1, _ROUND_CHUNK // max(1, self.n_features))
        for s in range(0, n, step):
            F = np.asarray(U[s : s + step], dtype=np.float64)
            if (
                not np.isfinite(F).all()
                or not ((F >= -_FRAC_TOL) & (F <= 1 + _FRAC_TOL)).all()
            ):
                self._raise_bad_fractions(U)
            F = np.clip(F, 0.0, 1.0)
            uu = u[s : s + step]
            if self.is_all_binary:  # u has U's shape: u < U, bit by bit
                np.less(uu, F, out=out[s : s + step], casting="unsafe")
                continue
            if lay["binary"].size:
                out[s : s + step, lay["binary_cols"]] = (
                    uu[:, lay["binary"]] < F[:, lay["binary_cols"]]
                )
            for a in lay["other"]:
                b = self.blocks[a]
                out[s : s + step, b.columns] = b.codes()[
                    b._round_uniform(F[:, b.columns], uu[:, a])
                ]
        return out

    @cached_property
    def _round_layout(self):
        binary = [a for a, b in enumerate(self.blocks) if b.kind == "binary"]
        return {
            "binary": np.asarray(binary, dtype=np.intp),
            "binary_cols": np.asarray(
                [self.blocks[a].start for a in binary], dtype=np.intp
            ),
            "other": [a for a, b in enumerate(self.blocks) if b.kind != "binary"],
        }

    def _raise_bad_fractions(self, U):
        """The error of the first block with a value outside ``[0, 1]``."""
        if self.is_all_binary:
            raise ValueError("fractional values must be finite and in [0, 1]")
        for b in self.blocks:
            b._check_frac(U[:, b.columns])
        raise AssertionError("unreachable")  # pragma: no cover

    def repair(self, X01: ArrayLike, rng: np.random.Generator) -> NDArray[np.uint8]:
        """Make 0/1 rows valid: valid blocks unchanged, others redrawn.

        A block holding a valid code keeps it; any other block gets a level
        drawn as in :meth:`round` from its bits read as fractional values
        (a one-hot block with several ones: one of them uniformly; with
        none: a uniform level; a non-monotone thermometer block: from its
        isotonic projection). Post-processing of the rows only.
        """
        X = self._check_matrix(X01, "X01")
        check_boolean(X, "repair's rows", hint="; use round for fractions")
        return self.round(X, rng)


def check_blocks(
    blocks: BlocksLike | None, n_features: int, names: Sequence[str] | None = None
) -> Blocks:
    """Coerce ``blocks`` to a :class:`Blocks` of ``n_features`` bits.

    ``None`` gives :meth:`Blocks.binary` (named by ``names`` when given);
    anything else goes through :meth:`Blocks.from_spec`, which raises a
    clear error when the widths do not add up to ``n_features``.
    """
    if blocks is None:
        return Blocks.binary(n_features, names)
    return Blocks.from_spec(blocks, n_features)
