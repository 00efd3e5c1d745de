"""The microaggregator's lazy ``transform`` of Dask input against the eager one.

Run: ``python -m benchmarks.bench_dask_transform`` (or
``python -m benchmarks.run dask_transform``).

``CovarianceLossMicroaggregator.transform`` of a Dask array is one eager pass
(each row's 64-bit key to the driver, matched there to the training rows)
and a lazy map (one task per chunk). This script times, on ``n x p`` Boolean
rows (``BENCH_DASK_TRANSFORM_N``, default ``10**6``; ``p = 50``,
``k = n / 10``), in memory as chunks of ``n / 8`` rows of a ``dask.array``
on Dask's threaded scheduler with ``BENCH_DASK_WORKERS`` threads (default
2):

* the eager ``transform`` of the NumPy array;
* building the lazy transform (the key pass and the matching), computing
  it, and both -- of the training rows (every row matched: no chunk read
  twice) and of rows half of which are new (every chunk read twice, the new
  rows' nearest group mean computed in the tasks).

Every time is the best of 2 runs, also given as a multiple of one
single-threaded float64 ``X.T @ X`` of the same rows measured in the same
run (the baseline: the figures are ratios, noisy under contention). Each
lazy output is checked equal to the eager one.
"""

from __future__ import annotations

import os

import numpy as np

from ._harness import best_time, markdown_table


def _gram_time(X):
    """Best time of one float64 ``X.T @ X`` (the baseline)."""
    Xf = X.astype(np.float64)
    return best_time(lambda: Xf.T @ Xf)[0]


def main():
    try:
        import dask
        import dask.array as da
    except ImportError:  # pragma: no cover - depends on the environment
        print("bench_dask_transform: needs the dask extra; skipped")
        return
    from threadpoolctl import threadpool_limits

    from skdp_synth import CovarianceLossMicroaggregator

    n = int(os.environ.get("BENCH_DASK_TRANSFORM_N", 10**6))
    workers = int(os.environ.get("BENCH_DASK_WORKERS", 2))
    p = 50
    rng = np.random.default_rng(0)
    X = (rng.random((n, p)) < 0.3).astype(np.uint8)
    with threadpool_limits(1):
        base = _gram_time(X)
    est = CovarianceLossMicroaggregator(k=n // 10, domain="boolean").fit(X)
    new = np.vstack([X[: n // 2], 1 - X[: n - n // 2]])
    rows = []
    with dask.config.set(scheduler="threads", num_workers=workers):
        for name, Y in (("training rows", X), ("half new rows", new)):
            dY = da.from_array(Y, chunks=(-(-n // 8), p))
            eager, want = best_time(lambda Y=Y: est.transform(Y), 2)
            build, lazy = best_time(lambda dY=dY: est.transform(dY), 2)
            compute, got = best_time(lambda lazy=lazy: lazy.compute(), 2)
            both, _ = best_time(lambda dY=dY: est.transform(dY).compute(), 2)
            assert np.array_equal(got, want)
            for step, t in (
                ("eager transform", eager),
                ("lazy: build (key pass, matching)", build),
                ("lazy: compute", compute),
                ("lazy: build + compute", both),
            ):
                rows.append({"rows": name, "step": step, "s": t, "x X.T@X": t / base})
    print(
        f"\n### Lazy transform, n = {n}, p = {p}, k = {n // 10}, "
        f"{workers} threads (one X.T @ X: {base:.3f} s)\n"
    )
    print(markdown_table(rows, ["rows", "step", "s", "x X.T@X"]))


if __name__ == "__main__":
    main()
