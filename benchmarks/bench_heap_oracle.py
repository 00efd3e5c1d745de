"""What exact heap values would buy on column shapes: an oracle, not a mechanism.

Run: ``PYTHONPATH=. python -m benchmarks.bench_heap_oracle --tables
doctorcontacts --eps 1,0.3 --seeds 3``.

A float column's heap at a value that is not round (Ecdat ``DoctorContacts``'
``lfam``, the log of a family's size: 0, 0.693, 1.099, ...) is kept in a
narrow leaf of its private histogram, and the decoder draws the leaf's rows
uniformly inside it (:mod:`skdp_synth.preprocessing._round_heaps` decodes a
heap at its number only where the leaf holds a round number). The scores bin a
numeric column at the training rows' deciles, and a heap's value is then a
decile edge: a row drawn a hair below it falls in the bin below. This
benchmark fits ``auto`` as ``benchmarks.bench_suite`` does, then, as an
oracle that reads the training rows, moves every synthetic value of a
column that is not whole numbers within ``0.002 max(1, |v|)`` of a training
heap ``v`` (a value at least 1 % of the rows hold; no farther than half the
gap to the next training value) onto ``v``, and prints TV1 (against the
held-out rows) before and after, with the columns it moves by more than
0.005. The gap is what a private release of heap values (a stability-based
histogram of the exact values inside a heap's leaf, which needs ``δ`` and a
share of the budget) could recover at most; nothing here is private.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from benchmarks.bench_suite import context, tv_k
from benchmarks.bench_trunc_tail import fit

#: A training value held by at least this share of the non-missing rows is a heap.
HEAP_SHARE = 0.01
#: A synthetic value this close to a heap (relative to ``max(1, |v|)``) is
#: moved onto it: about the width of a float column's finest leaf there.
SNAP_WIDTH = 0.002


def snapped(syn, train, columns):
    """``syn`` with every value of ``columns`` near a training heap moved onto
    it: within ``SNAP_WIDTH max(1, |v|)`` and nearer to ``v`` than half the
    gap to the next distinct training value. Whole-number columns are left
    alone (they decode to whole numbers already)."""
    out = syn.copy()
    for c in columns:
        x = pd.to_numeric(train[c], errors="coerce").dropna()
        if np.all(x.to_numpy() == np.round(x.to_numpy())):
            continue
        shares = x.value_counts(normalize=True)
        heaps = shares[shares >= HEAP_SHARE].index.to_numpy(dtype=float)
        values = np.sort(shares.index.to_numpy(dtype=float))
        s = pd.to_numeric(out[c], errors="coerce").to_numpy(dtype=float)
        for v in heaps:
            gaps = np.abs(values[values != v] - v)
            reach = SNAP_WIDTH * max(1.0, abs(v))
            if gaps.size:
                reach = min(reach, 0.5 * float(gaps.min()))
            s[np.abs(s - v) <= reach] = v
        out[c] = s
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", default="doctorcontacts")
    ap.add_argument("--eps", default="1,0.3")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)
    for table in args.tables.split(","):
        ctx = context(table)
        coder, test = ctx["coder"], ctx["test_codes"]
        cols = list(ctx["train"].columns)
        for eps in (float(e) for e in args.eps.split(",")):
            for seed in range(args.seeds):
                _, syn, _ = fit(ctx, eps, seed)
                a = coder.codes(syn[cols])
                b = coder.codes(snapped(syn, ctx["train"], list(coder.edges))[cols])
                moved = {}
                for j, c in enumerate(cols):
                    one = [coder.sizes[j]]
                    before = tv_k(test[:, [j]], a[:, [j]], one, 1)
                    after = tv_k(test[:, [j]], b[:, [j]], one, 1)
                    if abs(after - before) > 0.005:
                        moved[c] = f"{before:.3f} -> {after:.3f}"
                print(
                    f"{table} eps={eps:g} seed={seed}: TV1 "
                    f"{tv_k(test, a, coder.sizes, 1):.4f} -> oracle "
                    f"{tv_k(test, b, coder.sizes, 1):.4f}; {moved}"
                )


if __name__ == "__main__":
    main()
