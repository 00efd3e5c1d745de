"""The sampling floor of conditional sampling's TV1, per condition.

``benchmarks/bench_given.py`` scores the TV1 of conditional rows against the
real rows with that condition, and the unconditioned TV1 against all real
rows. Even rows drawn from the true distribution score the sampling noise of
those real rows: a condition held by 20 real rows has a far higher floor than
the whole table. This script estimates each floor -- the expected TV1 of the
true distribution against ``m`` real rows, as TV1(half A, half B) / 2 over
random half-splits (each half has twice the variance of the whole) -- with
the same columns and binning as ``bench_given.py``, and their ratio: what a
perfect model scores as "TV1 given / TV1 plain".

Run: ``python -m benchmarks.bench_given_floor [--splits 40]``.
"""

from __future__ import annotations

import argparse

import numpy as np


def floor(frame, columns, splits, rng):
    """Mean over ``splits`` random half-splits of TV1(A, B) / 2."""
    from benchmarks.bench_given import tv1

    values = []
    for _ in range(splits):
        idx = rng.permutation(len(frame))
        h = len(frame) // 2
        a = frame.iloc[idx[:h]].reset_index(drop=True)
        b = frame.iloc[idx[h : 2 * h]].reset_index(drop=True)
        values.append(tv1(a, b, columns) / 2)
    return float(np.mean(values))


def main(argv=None):
    from benchmarks.bench_given import TABLES, _load

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=40)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    head = ("table", "condition", "real rows with it", "floor given", "floor plain")
    print("| " + " | ".join(head) + " | ratio |")
    print("|---|---|---|---|---|---|")
    for name in TABLES:
        real, conditions = _load(name)
        for given, mask in conditions:
            columns = [c for c in real.columns if c not in given]
            rows = real[mask(real)].reset_index(drop=True)
            fg = floor(rows, columns, args.splits, rng)
            fp = floor(real, columns, args.splits, rng)
            share = len(rows) / len(real)
            print(
                f"| {name} | {given} | {len(rows)} ({share:.2%}) | {fg:.4f} | "
                f"{fp:.4f} | {fg / fp:.1f} |"
            )


if __name__ == "__main__":
    main()
