"""What a noise-free model scores: the TV2 floor on the mixed and categorical tables.

Run: ``python -m benchmarks.bench_oracles mixed --tables credit,wage`` or
``python -m benchmarks.bench_oracles categorical --tables caravan`` (``--seed``).

A target such as "2-way TV ≤ 0.6 × dpmm's" or "≤ 0.5 × independent noisy
columns" can ask for less error than any model of the kind gets even
*without* noise. This benchmark fits, with no privacy at all, the models the
private synthesizers approximate, and scores their rows exactly as the
targets' benchmarks do:

* **independence**: every column's exact 1-way table, columns independent;
* **Chow-Liu tree**: the maximum mutual-information spanning tree over the
  exact 2-way tables (the structure MST estimates with noise), sampled
  forward from the exact conditionals;
* the training rows themselves, and (mixed tables) a bootstrap of them.

``mixed`` scores like ``bench_mixed.py`` (numeric columns in 10 bins at the
held-out quantiles, missing its own level, against the held-out 20 %);
``categorical`` like ``bench_selection.py`` (TV2 of the rows against the
80 % they were fitted to; ``nass_cds``, ``mpls_stops``, ``diamonds`` and the
86-column ``caravan``). Each model draws ``n`` rows (as many as the training
rows) and 200,000 (its own error, almost without sampling).
"""

from __future__ import annotations

import argparse
import itertools
import sys

import numpy as np
import pandas as pd
from scipy.sparse.csgraph import minimum_spanning_tree

BIG = 200_000


def _joint(Z, i, j, L):
    t = np.zeros((L[i], L[j]))
    np.add.at(t, (Z[:, i], Z[:, j]), 1.0)
    return t / len(Z)


def tv2(Z, Y, L):
    """Mean TV over all pairs between the code rows ``Z`` and ``Y``."""
    pairs = itertools.combinations(range(len(L)), 2)
    return float(
        np.mean(
            [
                0.5 * np.abs(_joint(Z, i, j, L) - _joint(Y, i, j, L)).sum()
                for i, j in pairs
            ]
        )
    )


def independence_rows(X, L, N, rng):
    return np.stack(
        [
            rng.choice(L[i], N, p=np.bincount(X[:, i], minlength=L[i]) / len(X))
            for i in range(len(L))
        ],
        axis=1,
    )


def chow_liu_rows(X, L, N, rng):
    """``N`` rows of the exact Chow-Liu tree of ``X`` (no noise)."""
    p = len(L)
    one = [np.bincount(X[:, i], minlength=L[i]) / len(X) for i in range(p)]
    W = np.zeros((p, p))
    for i, j in itertools.combinations(range(p), 2):
        P = _joint(X, i, j, L)
        Q = np.outer(one[i], one[j])
        nz = P > 0
        W[i, j] = -float((P[nz] * np.log(P[nz] / Q[nz])).sum()) - 1e-12
    T = minimum_spanning_tree(W).toarray()
    adj = {i: [] for i in range(p)}
    for i, j in zip(*np.nonzero(T)):
        adj[int(i)].append(int(j))
        adj[int(j)].append(int(i))
    S = np.zeros((N, p), dtype=np.int64)
    S[:, 0] = rng.choice(L[0], N, p=one[0])
    order, parent, k = [0], {0: None}, 0
    while k < len(order):
        u = order[k]
        k += 1
        for v in adj[u]:
            if v not in parent:
                parent[v] = u
                order.append(v)
    for v in order[1:]:
        u = parent[v]
        P = _joint(X, u, v, L)
        for a in range(L[u]):
            at = S[:, u] == a
            if at.any():
                pr = P[a] if P[a].sum() > 0 else one[v]
                S[at, v] = rng.choice(L[v], int(at.sum()), p=pr / pr.sum())
    return S


def _mixed_codes(test, frame, cats):
    """``bench_mixed.scores``' coding: 10 bins at the held-out quantiles."""
    out = {}
    for c in test.columns:
        if c in cats:
            out[c] = frame[c].astype(object).where(frame[c].notna(), "NA").astype(str)
        else:
            q = np.unique(
                np.nanquantile(
                    test[c].to_numpy(dtype=float), np.linspace(0, 1, 11)[1:-1]
                )
            )
            v = pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=float)
            out[c] = pd.Series(
                np.where(np.isnan(v), -1, np.searchsorted(q, v, "right"))
            ).astype(str)
    return pd.DataFrame({c: np.asarray(v) for c, v in out.items()})


def mixed(tables, seed):
    from benchmarks import bench_mixed as bm

    for name in tables:
        df, target, cat_cols = bm.load(name)
        train, test = bm.split(df)
        A, B = _mixed_codes(test, train, cat_cols), _mixed_codes(test, test, cat_cols)
        levels = {c: sorted(set(A[c]) | set(B[c])) for c in A.columns}
        X = np.stack([pd.Categorical(A[c], levels[c]).codes for c in A.columns], 1)
        Y = np.stack([pd.Categorical(B[c], levels[c]).codes for c in A.columns], 1)
        L = [len(levels[c]) for c in A.columns]
        rng = np.random.default_rng(seed)
        n = len(X)
        boot = X[rng.integers(0, n, n)]
        print(f"{name} ({n} training rows, TV2 against the held-out {len(Y)}):")
        print(f"  training rows {tv2(X, Y, L):.4f}  bootstrap {tv2(boot, Y, L):.4f}")
        for label, fn in (
            ("independence", independence_rows),
            ("Chow-Liu tree", chow_liu_rows),
        ):
            print(
                f"  {label}: n rows {tv2(fn(X, L, n, rng), Y, L):.4f}  "
                f"{BIG} rows {tv2(fn(X, L, BIG, rng), Y, L):.4f}"
            )


def categorical(tables, seed):
    from benchmarks._categorical import encode
    from benchmarks.bench_selection import load, split

    for name in tables:
        df, cats = load(name)
        train, test = split(df, 0)
        X, Y = encode(train, cats), encode(test, cats)
        L = [len(cats[c]) for c in train.columns]
        rng = np.random.default_rng(seed)
        n = len(X)
        print(f"{name} ({n} training rows, {len(L)} columns, TV2 against them):")
        print(f"  held-out 20 % {tv2(Y, X, L):.4f}")
        for label, fn in (
            ("independence", independence_rows),
            ("Chow-Liu tree", chow_liu_rows),
        ):
            print(
                f"  {label}: n rows {tv2(fn(X, L, n, rng), X, L):.4f}  "
                f"{BIG} rows {tv2(fn(X, L, BIG, rng), X, L):.4f}"
            )


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["mixed", "categorical"])
    ap.add_argument("--tables", default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.what == "mixed":
        mixed((args.tables or "wage,credit,cps1988,gss_wages").split(","), args.seed)
    else:
        tables = args.tables or "nass_cds,mpls_stops,diamonds,caravan"
        categorical(tables.split(","), args.seed)


if __name__ == "__main__":
    sys.exit(main())
