"""ProjectedGaussianRelease: error against baselines, and the cost of its geometry.

Three tables (``python -m benchmarks.run gaussian_release``):

1. **Released 2-way marginals on the binarized digits** (1797 x 64, all 2016
   tables x 4 cells) at the same ``(ε, δ)`` and add/remove neighbours: the
   expected total squared error of each mechanism as a ratio to the isotropic
   Gaussian mechanism and to the Gaussian-class lower bound, and the
   realised average total variation (TV) per table over a few seeds.
2. **Against MST** (smartnoise-synth, benchmark-only): average TV over the
   2016 two-way tables of MST's synthetic data, of our released tables, and
   of our sampled rows, at the same ``(ε, δ)``; MST's rows both from
   smartnoise's own sampler and i.i.d. from the same fitted model. MST runs
   in its own virtual environment (``make compare-venv``, see
   ``benchmarks/_compare.py``); skipped with a message when it is missing.
3. **Geometry cost**: building the noise model (MEE + base decomposition +
   verification, data-independent) as the number of queries and the universe
   grow -- closed form for all 2-way marginals (universe ``2^p``), Khachiyan for
   explicit marginal + prefix workloads -- as ratios to a baseline measured in
   the same run (computing the answers of the same workload on 1797 rows,
   i.e. one pass over the data).

The ratios travel between machines better than seconds.
"""

from __future__ import annotations

import sys
import tempfile

import numpy as np
import pandas as pd

from benchmarks._compare import compare_unavailable, run_snsynth
from benchmarks._harness import best_time, markdown_table
from skdp_synth import ProjectedGaussianRelease
from skdp_synth.datasets import load_binary_digits
from skdp_synth.workloads import ExplicitWorkload, MarginalWorkload

EPS, DELTA = 1.0, 1e-6


def _tv_tables(W, counts, truth, n):
    """Average TV over the tables between released counts and true counts."""
    rel = np.clip(counts.reshape(W.n_tables, W.n_cells), 0, None)
    rel = rel / np.maximum(rel.sum(axis=1, keepdims=True), 1e-12)
    tru = truth.reshape(W.n_tables, W.n_cells) / n
    return float(np.mean(0.5 * np.abs(rel - tru).sum(axis=1)))


def _tv_rows(W, X, Y):
    a = W.answers(X).reshape(W.n_tables, W.n_cells) / len(X)
    b = W.answers(Y).reshape(W.n_tables, W.n_cells) / len(Y)
    return float(np.mean(0.5 * np.abs(a - b).sum(axis=1)))


def table_errors(X, seeds=3):
    W = MarginalWorkload(X.shape[1], 2)
    truth = W.answers(X)
    rows = []
    iso = None
    for mech in ("isotropic-gaussian", "mee", "correlated", "correlated-weighted"):
        tvs = []
        for s in range(seeds):
            est = ProjectedGaussianRelease(
                epsilon=EPS,
                delta=DELTA,
                mechanism=mech,
                random_state=s,
                n_candidates=50,
            ).fit(X)
            tvs.append(_tv_tables(W, est.released_, truth, len(X)))
        if mech == "isotropic-gaussian":
            iso = est.expected_error_
        rows.append(
            {
                "mechanism": mech,
                "E||noise||^2": est.expected_error_,
                "ratio to isotropic": est.expected_error_ / iso,
                "ratio to Gaussian optimum": est.expected_error_
                / est.gaussian_optimal_error_,
                "RMS noise per cell / n": np.sqrt(est.expected_error_ / W.n_queries)
                / len(X),
                "avg TV per table": float(np.mean(tvs)),
            }
        )
    return rows


def mst_comparison(X, seeds=2):
    W = MarginalWorkload(X.shape[1], 2)
    truth = W.answers(X)
    rng = np.random.default_rng(0)
    independent = (rng.random(X.shape) < X.mean(axis=0)).astype(np.int64)
    rows = [
        {
            "method": "reference: real rows, bootstrap (not private)",
            "avg TV": _tv_rows(W, X, X[rng.integers(0, len(X), len(X))]),
        },
        {
            "method": "reference: independent columns (not private)",
            "avg TV": _tv_rows(W, X, independent),
        },
    ]
    ours_tables, ours_rows = [], []
    for s in range(seeds):
        est = ProjectedGaussianRelease(
            epsilon=EPS, delta=DELTA, mechanism="correlated", random_state=s
        ).fit(X)
        ours_tables.append(_tv_tables(W, est.released_, truth, len(X)))
        ours_rows.append(_tv_rows(W, X, np.asarray(est.sample(len(X)))))
    rows.append(
        {
            "method": "ProjectedGaussianRelease, released tables",
            "avg TV": np.mean(ours_tables),
        }
    )
    rows.append(
        {
            "method": "ProjectedGaussianRelease, sampled rows",
            "avg TV": np.mean(ours_rows),
        }
    )
    why_not = compare_unavailable()
    if why_not:
        print(f"(MST skipped: {why_not})")
        return rows
    codes = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for s in range(seeds):
            for label, (syn, secs) in run_snsynth(
                codes, "mst", EPS, s, tmp, delta=DELTA
            ).items():
                Y = syn.to_numpy(dtype=np.int64)
                results.setdefault(label, []).append((_tv_rows(W, X, Y), secs))
    for label, runs in results.items():
        tv, secs = np.mean(runs, axis=0)
        rows.append(
            {
                "method": f"{label} (smartnoise-synth), rows, {secs:.0f} s/fit",
                "avg TV": tv,
            }
        )
    return rows


def geometry_cost():
    X = np.asarray(load_binary_digits())
    rows = []
    for p in (16, 32, 64, 128):
        Xp = np.tile(X, (1, 2))[:, :p] if p > 64 else X[:, :p]
        W = MarginalWorkload(p, 2)
        base, _ = best_time(lambda W=W, Xp=Xp: W.answers(Xp))
        n = Xp.shape[0]
        for relation in ("add-remove-one", "replace-one"):
            # the bit-level noise model of the closed-form marginal workload
            est = ProjectedGaussianRelease(
                neighbouring=relation, mechanism="correlated-weighted", random_state=0
            )
            t, _ = best_time(lambda est=est, n=n, p=p: est.make_plan(n, p), repeat=2)
            rows.append(
                {
                    "workload": f"all 2-way, p={p} (closed form)",
                    "relation": relation,
                    "queries": W.n_queries,
                    "universe": f"2^{p}",
                    "rank": W.rank,
                    "build (s)": t,
                    "ratio to one pass": t / base,
                }
            )
    for p in (6, 8, 10):
        A = np.vstack(
            [
                MarginalWorkload(p, 2).to_explicit().matrix,
                np.tril(np.ones((2**p, 2**p))),
            ]
        )
        W = ExplicitWorkload(A, p)
        base, _ = best_time(lambda W=W, p=p: W.answers(X[:, :p]))
        est = ProjectedGaussianRelease(workload=W, random_state=0)
        n = X.shape[0]
        t, _ = best_time(lambda est=est, n=n, p=p: est.make_plan(n, p), repeat=1)
        rows.append(
            {
                "workload": f"2-way + prefix, p={p} (Khachiyan)",
                "relation": "add-remove-one",
                "queries": W.n_queries,
                "universe": 2**p,
                "rank": W.rank,
                "build (s)": t,
                "ratio to one pass": t / base,
            }
        )
    return rows


def main():
    X = np.asarray(load_binary_digits()).astype(np.int64)
    print(
        f"ProjectedGaussianRelease at epsilon={EPS}, delta={DELTA}, add/remove, "
        f"digits {X.shape}\n"
    )
    rows = table_errors(X)
    print(markdown_table(rows, list(rows[0])))
    print()
    rows = mst_comparison(X)
    print(markdown_table(rows, ["method", "avg TV"]))
    print()
    rows = geometry_cost()
    print(markdown_table(rows, list(rows[0])))


if __name__ == "__main__":
    sys.exit(main())
