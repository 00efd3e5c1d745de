"""PrivateSampler: solve time, accuracy, privacy cost, the frontier on real tables.

Run: ``python -m benchmarks.bench_private_sampling`` (``--quick`` skips the
slowest rows; ``--frontier`` or ``--frontier-damped`` runs table 6 only), or
``python -m benchmarks.run private_sampling``. The sampler is
:cite:`Boedihardjo2022`.

Tables
------
1. *Solve time and accuracy* for p in {10, 20, 40}, d in {1, 2, 3} on two
   kinds of data (n = 5000): near-uniform (Bernoulli(0.45) columns, where
   :cite:`Boedihardjo2022` Remark 12.5 predicts no shrinkage) and skewed
   (Bernoulli(0.3)). Times are reported as raw seconds *and* as multiples of one product
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
6. *The frontier on real tables* (:func:`frontier`): for
   ``nass_cds`` and ``mpls_stops`` one-hot encoded (``BooleanEncoder`` with the
   public level sets), d = 1, 2, bootstrapped to n = 10^4 ... 10^7: the
   epsilon paid per released row, the largest k affordable at total
   epsilon = 1, the n from which one row costs less than 1 (and 0.01), all
   from the public cost functions (no fit needed); then the TV2 of released
   rows where a fit is feasible, beside the other methods at epsilon = 1 on
   the same table. ``python -m benchmarks.bench_private_sampling --frontier``
   runs only this (``SKDP_BENCH_QUICK=1``: nass_cds, n <= 10^5);
   ``--frontier-damped`` only the baselines and DampedPrivateSynthesizer.
"""

from __future__ import annotations

import math
import os
import sys
import time
import warnings

import numpy as np

from benchmarks._harness import best_time, markdown_table
from skdp_synth import PrivateSampler
from skdp_synth.private_sampling._accounting import (
    _theorem_12_2_epsilon,
    density_sensitivity,
    max_draws,
    sampling_epsilon,
)
from skdp_synth.private_sampling._sampler import (
    MAX_WALSH_BYTES,
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


# ------------------------------------------------------ 6. the frontier
FRONTIER_SIZES = (10**4, 10**5, 10**6, 10**7)
N_EVAL = 20_000  # synthetic rows scored per method (TV2 against the real table)
DL, DU = 0.25, 2.5  # PrivateSampler's default density bounds (delta, Delta)


def conditioned_m(p, d):
    """The smallest ``m`` that passes :cite:`Boedihardjo2022`'s conditioning test for a
    random +-1 matrix, by the Marchenko-Pastur edge: ``sigma_min(M)/sqrt(m) ~ 1 -
    sqrt(D/m) >= 1/(2 e^d)``, i.e. ``m >= D / (1 - 1/(2 e^d))^2``, plus 10 %.

    A data-independent choice (it reads only ``p, d``): ``eps_1`` grows like
    ``m^{3/4}`` outside the cap, so at a fixed budget the smallest
    well-conditioned ``m`` buys the most rows. Not the library default.
    """
    D = walsh_dimension(p, d)
    return math.ceil(1.1 * D / (1.0 - 1.0 / (2.0 * math.exp(d))) ** 2)


def n_for_epsilon_per_row(target, p, d, m, dl=DL, du=DU):
    """Smallest n with ``eps_1 <= target`` (``eta`` is proportional to
    ``n^{-1/2}``); ``inf`` when ``target >= log(Delta/delta)`` is never needed."""
    eta1 = density_sensitivity(1, p, d, m, dl, du)  # eta at n = 1
    eta = dl * math.expm1(target) / m
    return math.ceil((eta1 / eta) ** 2)


def frontier_costs(name, p, sizes=FRONTIER_SIZES):
    """Privacy cost of PrivateSampler rows, from the public functions only."""
    rows = []
    for d in (1, 2):
        D = walsh_dimension(p, d)
        for rule, m in (("default", _default_m(p, d)), ("min", conditioned_m(p, d))):
            need = 8.0 * (m * D + D * D)
            for n in sizes:
                eps1 = sampling_epsilon(1, n, p, d, m, DL, DU)
                n_1, n_001 = (n_for_epsilon_per_row(e, p, d, m) for e in (1.0, 0.01))
                rows.append(
                    {
                        "table": name,
                        "p": p,
                        "d": d,
                        "m rule": rule,
                        "m": m,
                        "M GiB": need / 2**30,
                        "n": f"{n:.0e}",
                        "eps per row": eps1,
                        "capped": "yes" if eps1 >= math.log(DU / DL) - 1e-12 else "no",
                        "k at eps=1": max_draws(1.0, n, p, d, m, DL, DU),
                        "eps for 1000 rows": sampling_epsilon(1000, n, p, d, m, DL, DU),
                        "n: 1 row < eps 1": f"{n_1:.1e}",
                        "n: eps 0.01/row": f"{n_001:.1e}",
                    }
                )
    return rows


def _bits(name):
    from skdp_synth.datasets import load_categorical_table
    from skdp_synth.preprocessing import BooleanEncoder

    df, cats = load_categorical_table(name)
    enc = BooleanEncoder(categories=cats).fit(df)
    return df, cats, enc, np.asarray(enc.transform(df), dtype=np.uint8)


def _rows_tv2(est, enc, Xb, real, seconds_from):
    """Fit ``est`` on the bits with the encoder's blocks, decode N_EVAL rows, TV2."""
    import pandas as pd

    from benchmarks._categorical import tv

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # budget and leak warnings: we report both
        est.fit(Xb, blocks=enc.blocks_)
        syn = est.sample(N_EVAL)
    sec = time.perf_counter() - seconds_from
    syn = pd.DataFrame(enc.inverse_transform(syn), columns=real.columns)
    return tv(real, syn, 2), sec


def frontier_fits(
    name, sizes=FRONTIER_SIZES, max_fit_n=10**6, damped_max_n=10**7, damped_only=False
):
    """TV2 at epsilon = 1 (or, for PrivateSampler, at the epsilon its rows cost).

    Bootstraps of the bit matrix up to ``max_fit_n`` rows for every method
    (``damped_max_n`` for DampedPrivateSynthesizer, whose fit is a few passes
    over the data); the noisy 1-way baseline is refitted on each bootstrap.
    ``damped_only``: the baselines and DampedPrivateSynthesizer only (its
    column of the README table, after a change of its default), same
    bootstraps and seeds.
    """
    from benchmarks._categorical import tv
    from benchmarks.bench_damped import _laplace_marginals, _uniform_rows
    from skdp_synth import DampedPrivateSynthesizer, ProjectedGaussianRelease

    real, cats, enc, X = _bits(name)
    p = X.shape[1]
    rows = []

    def add(method, n, tv2, sec, eps, note=""):
        rows.append({"table": name, "n": f"{n:.0e}" if n != len(X) else f"{n} (real)",
                     "method": method, "TV2": tv2, "eps paid": eps,
                     "fit+sample s": sec, "note": note})  # fmt: skip
        print(rows[-1], flush=True)

    t0 = time.perf_counter()
    uni = _uniform_rows(real, cats, N_EVAL, 0)
    add("uniform random rows", len(X), tv(real, uni, 2), time.perf_counter() - t0, 0.0)
    t0 = time.perf_counter()
    lap = _laplace_marginals(real, cats, 1.0, N_EVAL, 0)
    add("noisy 1-way (Laplace), pure eps", len(X), tv(real, lap, 2),
        time.perf_counter() - t0, 1.0)  # fmt: skip
    for n in (len(X),) + tuple(sizes):
        if n > damped_max_n:
            continue
        idx = np.random.default_rng(0).integers(0, len(X), n)
        Xn = X if n == len(X) else X[idx]
        if n != len(X) and n <= max_fit_n:
            t0 = time.perf_counter()
            lap = _laplace_marginals(real.iloc[idx], cats, 1.0, N_EVAL, 0)
            add("noisy 1-way (Laplace), pure eps", n, tv(real, lap, 2),
                time.perf_counter() - t0, 1.0)  # fmt: skip
        t0 = time.perf_counter()
        tv2, sec = _rows_tv2(DampedPrivateSynthesizer(epsilon=1.0, random_state=0),
                             enc, Xn, real, t0)  # fmt: skip
        add("DampedPrivateSynthesizer (default)", n, tv2, sec, 1.0, "pure, replace-one")
        if n > max_fit_n or damped_only:
            continue
        t0 = time.perf_counter()
        est = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, d=2, random_state=0)
        tv2, sec = _rows_tv2(est, enc, Xn, real, t0)
        add("ProjectedGaussianRelease rows", n, tv2, sec, 1.0, "delta=1e-6, add/remove")
        for d in (1, 2):
            m = _default_m(p, d)
            t0 = time.perf_counter()
            try:
                est = PrivateSampler(d=d, k=N_EVAL, random_state=0)
                tv2, sec = _rows_tv2(est, enc, Xn, real, t0)
            except MemoryError as exc:
                add(f"PrivateSampler d={d}, m={m}", n, float("nan"), 0.0,
                    float("nan"), f"refused: {str(exc)[:60]}")  # fmt: skip
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lam = est.shrinkage_  # not private: for the benchmark only
            add(f"PrivateSampler d={d}, m={m}", n, tv2, sec, est.epsilon_,
                f"{N_EVAL} rows, lam*={lam:.3f} (not private)")  # fmt: skip
    return rows


def frontier(tables=("nass_cds", "mpls_stops"), damped_only=False):
    """PrivateSampler's frontier on real tables.

    ``damped_only`` (``--frontier-damped``): only the TV2 rows of the
    baselines and DampedPrivateSynthesizer, no PrivateSampler cost table.
    """
    sizes = FRONTIER_SIZES
    if QUICK:
        tables, sizes = tables[:1], (10**4, 10**5)
    cost_cols = ["table", "p", "d", "m rule", "m", "M GiB", "n", "eps per row",
                 "capped", "k at eps=1", "eps for 1000 rows", "n: 1 row < eps 1",
                 "n: eps 0.01/row"]  # fmt: skip
    fit_cols = ["table", "n", "method", "TV2", "eps paid", "fit+sample s", "note"]
    for name in tables:
        _, _, _, X = _bits(name)
        if not damped_only:
            print(f"### {name}: PrivateSampler's price per row (public functions)\n")
            costs = frontier_costs(name, X.shape[1], sizes)
            print(markdown_table(costs, cost_cols), "\n")
        print(f"### {name}: TV2 of {N_EVAL} rows, same table, eps = 1 unless said\n")
        fits = frontier_fits(name, sizes, damped_only=damped_only)
        print(markdown_table(fits, fit_cols), "\n")


QUICK = os.environ.get("SKDP_BENCH_QUICK", "") not in ("", "0")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    if "--frontier" in argv or "--frontier-damped" in argv:
        frontier(damped_only="--frontier-damped" in argv)
        return
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
    print("### The frontier on real tables (nass_cds, mpls_stops)\n")
    frontier()


if __name__ == "__main__":
    main()
