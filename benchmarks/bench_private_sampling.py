"""PrivateSampler (paper 001): solve time, accuracy, and the honest privacy table.

Run with ``python -m benchmarks.run private_sampling`` (add ``--quick`` after
the module path when running this file directly to skip the slowest rows).

Tables
------
1. *Solve time and accuracy* for p in {10, 20, 40}, d in {1, 2, 3} on two
   kinds of data (n = 5000): near-uniform (Bernoulli(0.45) columns, where
   001 Remark 12.5 predicts no shrinkage) and skewed (Bernoulli(0.3)).
   Times are reported as raw seconds *and* as multiples of one product
   ``M^T v`` with the run's own Walsh matrix (the unit of work of every
   first-order method on this problem), so they transfer between machines.
   Accuracy: ``lam*`` and the largest error over all conjunction marginals
   ``P(x_J = 1)``, ``|J| <= d``, of the exact density ``h*`` (no sampling
   noise). Rows whose Walsh matrix exceeds ``MAX_WALSH_BYTES`` are skipped
   and say so.
2. *Growing m* at p = 20, d = 2: conditioning, ``lam*`` and time.
3. *Newton vs cvxpy* (HiGHS LP + Clarabel QP) where cvxpy finishes.
4. *The privacy table*: epsilon per released row for realistic sizes.
5. *Measured density sensitivity* on random replace-one neighbours versus
   the Lemma 12.1 bound (not a privacy audit: random pairs, not worst case).
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np

from benchmarks._harness import best_time, markdown_table
from skdp_synth import PrivateSampler
from skdp_synth.private_sampling import (
    MAX_WALSH_BYTES,
    _theorem_12_2_epsilon,
    density_sensitivity,
    max_draws,
    sampling_epsilon,
    walsh_coefficients,
    walsh_dimension,
    walsh_matrix,
    walsh_to_marginals,
)


def _data(n, p, q, seed=0):
    return (np.random.default_rng(seed).random((n, p)) < q).astype(np.int8)


def _default_m(p, d):
    return math.ceil(math.exp(2 * d) * walsh_dimension(p, d))


def _max_marginal_error(ps, X, d):
    p = X.shape[1]
    mu_data = walsh_coefficients(X, d)
    mu_syn = walsh_matrix(ps.reduced_space_, d).T @ ps.density_
    return float(
        np.abs(
            walsh_to_marginals(mu_syn, p, d) - walsh_to_marginals(mu_data, p, d)
        ).max()
    )


def _matvec_seconds(m, D):
    M = np.random.default_rng(0).choice([-1.0, 1.0], size=(m, D))
    v = np.ones(m)
    t, _ = best_time(lambda: M.T @ v, repeat=5)
    return t


def _fit(X, d, solver="newton", m=None):
    t0 = time.perf_counter()
    ps = PrivateSampler(d=d, k=1, m=m, solver=solver, random_state=0).fit(X)
    return ps, time.perf_counter() - t0


def table_solve(quick):
    rows = []
    for p in (10, 20, 40):
        for d in (1, 2, 3):
            D = walsh_dimension(p, d)
            m = _default_m(p, d)
            need = 8.0 * (m * D + D * D)
            if need > MAX_WALSH_BYTES:
                rows.append(
                    {"p": p, "d": d, "D": D, "m": m, "data": "-",
                     "note": f"skipped: M needs {need / 2**30:.0f} GiB"}
                )  # fmt: skip
                continue
            if quick and m * D > 5e6:
                rows.append({"p": p, "d": d, "D": D, "m": m, "note": "skipped (quick)"})
                continue
            unit = _matvec_seconds(m, D)
            for label, q in (("near-uniform", 0.45), ("skewed", 0.3)):
                X = _data(5000, p, q)
                ps, sec = _fit(X, d)
                rows.append(
                    {
                        "p": p,
                        "d": d,
                        "D": D,
                        "m": m,
                        "data": label,
                        "lam*": ps.shrinkage_,
                        "max marg. err": _max_marginal_error(ps, X, d),
                        "fit s": sec,
                        "fit / M^T v": sec / unit,
                        "sigma_min/sqrt(m)": ps.min_singular_value_,
                    }
                )
    cols = ["p", "d", "D", "m", "data", "lam*", "max marg. err", "fit s",
            "fit / M^T v", "sigma_min/sqrt(m)", "note"]  # fmt: skip
    return markdown_table(rows, cols)


def table_m_growth():
    p, d = 20, 2
    X = _data(5000, p, 0.3)
    D = walsh_dimension(p, d)
    rows = []
    for factor in (0.05, 0.25, 1.0, 2.0):
        m = max(D, math.ceil(factor * math.exp(2 * d) * D))
        ps, sec = _fit(X, d, m=m)
        rows.append(
            {
                "m / (e^{2d} D)": factor,
                "m": m,
                "sigma_min/sqrt(m)": ps.min_singular_value_,
                "redraws": ps.n_redraws_,
                "lam*": ps.shrinkage_,
                "max marg. err": _max_marginal_error(ps, X, d),
                "eps per row (n=1e9)": sampling_epsilon(1, 10**9, p, d, m, 0.25, 2.5),
                "fit s": sec,
            }
        )
    return markdown_table(rows, list(rows[0]))


def table_solvers(quick):
    rows = []
    cases = [(10, 1), (10, 2), (20, 1)] + ([] if quick else [(20, 2)])
    for p, d in cases:
        X = _data(5000, p, 0.3)
        a, ta = _fit(X, d, "newton")
        b, tb = _fit(X, d, "cvxpy")
        m = a.m_
        rows.append(
            {
                "p": p,
                "d": d,
                "m x D": f"{m} x {a.n_walsh_}",
                "lam* newton": a.shrinkage_,
                "lam* cvxpy": b.shrinkage_,
                "QP objective newton/cvxpy": np.sum((m * a.density_ - 1) ** 2)
                / np.sum((m * b.density_ - 1) ** 2),
                "newton s": ta,
                "cvxpy s": tb,
                "cvxpy / newton": tb / ta,
            }
        )
    return markdown_table(rows, list(rows[0]))


def table_privacy():
    rows = []
    for p, d in ((10, 1), (20, 2), (64, 1), (64, 2), (40, 3)):
        m = _default_m(p, d)
        for n in (10**3, 10**4, 10**5, 10**6, 10**9):
            eps1 = sampling_epsilon(1, n, p, d, m, 0.25, 2.5)
            eta = density_sensitivity(n, p, d, m, 0.25, 2.5)
            # n at which one row costs 0.01: log(1 + eta m/delta) = 0.01,
            # with eta proportional to n^{-1/2}
            n_001 = n * (eta * m / 0.25 / math.expm1(0.01)) ** 2
            rows.append(
                {
                    "p": p,
                    "d": d,
                    "m": m,
                    "n": f"{n:.0e}",
                    "eps per row": eps1,
                    "Thm 12.2 closed form": _theorem_12_2_epsilon(
                        1, n, p, d, m, 0.25, 2.5
                    ),
                    "capped": "yes" if eps1 >= math.log(10) - 1e-12 else "no",
                    "rows for eps=1": max_draws(1.0, n, p, d, m, 0.25, 2.5),
                    "n for 0.01/row": f"{n_001:.1e}",
                }
            )
    return markdown_table(rows, list(rows[0]))


def table_sensitivity():
    rows = []
    p, d = 6, 2
    for n in (400, 4000):
        rng = np.random.default_rng(1)
        worst_gap, worst_log_ratio = 0.0, 0.0
        for trial in range(20):
            X1 = _data(n, p, 0.2 + 0.05 * (trial % 6), seed=trial)
            X2 = X1.copy()
            i = rng.integers(n)
            X2[i] = 1 - X1[i]
            a = PrivateSampler(d=d, k=1, random_state=7).fit(X1)
            b = PrivateSampler(d=d, k=1, random_state=7).fit(X2)
            worst_gap = max(worst_gap, float(np.abs(a.density_ - b.density_).max()))
            worst_log_ratio = max(
                worst_log_ratio, float(np.abs(np.log(a.density_ / b.density_)).max())
            )
        m = a.m_
        rows.append(
            {
                "n": n,
                "m": m,
                "measured max abs(h1-h2) * m": worst_gap * m,
                "Lemma 12.1 eta * m": density_sensitivity(n, p, d, m, 0.25, 2.5) * m,
                "measured max log ratio": worst_log_ratio,
                "eps per row (bound)": a.epsilon_per_draw_,
            }
        )
    return markdown_table(rows, list(rows[0]))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    print(
        "Machine: "
        f"{os.cpu_count()} CPUs, OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}. Times are raw "
        "seconds and multiples of one M^T v product on the same matrix.\n"
    )
    print("### Solve time and accuracy (Newton solver, n = 5000)\n")
    print(table_solve(quick), "\n")
    print("### Growing m (p = 20, d = 2, skewed data)\n")
    print(table_m_growth(), "\n")
    print("### Newton versus cvxpy (HiGHS + Clarabel), skewed data\n")
    print(table_solvers(quick), "\n")
    print("### Privacy: epsilon per released row (delta = 0.25, Delta = 2.5)\n")
    print(table_privacy(), "\n")
    print("### Measured density sensitivity, random replace-one pairs (p=6, d=2)\n")
    print(table_sensitivity(), "\n")


if __name__ == "__main__":
    main()
