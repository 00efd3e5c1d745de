"""ProjectedGaussianRelease with a capped generator table (``max_model_rows``).

Run: ``PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python -m benchmarks.bench_model_cap``.

Fits 10^6 x 50 correlated Boolean rows in memory with the generator's model
table capped at ``N`` rows, samples 10^6 rows, and reports the time as a
multiple of one ``X.T @ X`` in the same run, the average 2-way TV of the
sample against the data (on the first 2*10^5 rows of each) and the peak
resident memory. ``BENCH_CAP_N`` / ``BENCH_CAP_ROWS`` change the sizes.
"""

from __future__ import annotations

import os
import resource
import time

import numpy as np


def main() -> int:
    from skdp_synth import ProjectedGaussianRelease
    from skdp_synth.metrics import marginal_error

    n = int(os.environ.get("BENCH_CAP_N", 10**6))
    cap = int(os.environ.get("BENCH_CAP_ROWS", 20_000))
    p = 50
    rng = np.random.default_rng(0)
    z = rng.random((n, 1))
    X = (rng.random((n, p)) < 0.2 + 0.6 * z).astype(np.uint8)
    t = time.perf_counter()
    S = X.astype(np.float64)
    S.T @ S
    base = time.perf_counter() - t
    del S
    t = time.perf_counter()
    est = ProjectedGaussianRelease(
        epsilon=1.0, delta=1e-6, random_state=0, max_model_rows=cap
    ).fit(X)
    fit = time.perf_counter() - t
    t = time.perf_counter()
    Y = est.sample(n, random_state=0)
    smp = time.perf_counter() - t
    m = min(n, 200_000)
    tv2 = marginal_error(X[:m], Y[:m], 2, kind="tv")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(
        f"n={n} p={p} max_model_rows={cap}: fit {fit:.1f} s, sample {smp:.1f} s, "
        f"one X.T@X {base:.2f} s -> {(fit + smp) / base:.0f}x; TV2 {tv2:.4f}; "
        f"peak RSS {rss:.2f} GiB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
