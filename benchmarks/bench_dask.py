"""Out-of-core fits from Parquet files with Dask: time per data pass, peak memory.

Run: ``python -m benchmarks.bench_dask`` (or ``python -m benchmarks.run dask``;
``python -m benchmarks.bench_dask --profile-chunk FILE``, see below).

Boolean rows with latent structure are written to Parquet (one file and one
row group per ``BENCH_DASK_FILE_ROWS`` rows, ``uint8`` columns). Then, each
in a fresh subprocess so that its peak memory is its own:

* ``pass`` -- the baseline: one Dask pass computing ``XᵀX`` (float64) over
  the same files (``dd.read_parquet`` -> Dask array -> ``(X.T @ X).compute()``);
* ``release`` / ``damped`` / ``sampler`` -- ``ProjectedGaussianRelease``
  (default: residual mechanism, ``d = 2``), ``DampedPrivateSynthesizer``
  (defaults) and ``PrivateSampler(k=10)`` fitted from the
  ``dd.read_parquet`` frame;
* ``release-stats`` -- the release's data access alone (chunk validation
  and its one pass of attribute tables, as ``fit`` does it), without the
  noise and the generator: the generator (post-processing) fits a table of
  ``n`` rows and its memory grows with ``n`` (about 2.3 GiB at 2·10^5 rows
  of 50 attributes) unless it is capped: the full ``release`` job caps it
  at ``BENCH_DASK_MODEL_ROWS`` rows (``max_model_rows``, default 20000);
* ``microagg`` -- ``CovarianceLossMicroaggregator(domain="boolean")``
  with its defaults (spectral cells, ``division="bisection"``, groups of
  about 10 rows: ``k = n // 10``) fitted from the frame: three data passes
  (``XᵀX`` and column sums; the map gathering cells, row keys and the
  float32 sketch on the driver; the group sums) and the equipartition on
  the driver; ``microagg-pinning`` the same with ``partition="pinning"``
  (its 16 draws' cell sums in the first pass);
* ``idle`` -- the same imports and nothing else (the interpreter's share of
  the peak).

Reported: wall time as a multiple of the ``pass`` measured in the same run
(run first and again last; the ratio uses the mean of the two: timings on a
shared machine are noisy, only the ratios are meant to transfer), split
into the data passes (time inside ``ChunkedRows.reduce`` and
``ChunkedRows.stream``: reading, validating and summing the statistics or
mapping the rows) and the driver (noise, PROJ, solvers, generator --
independent of ``n`` -- and for the microaggregator the equipartition and
the index of the training rows, which grow with ``n``), and the peak resident
memory of the process (``resource.getrusage(RUSAGE_SELF).ru_maxrss``). Dask's
threaded scheduler with ``BENCH_DASK_WORKERS`` threads (default 2).

``--profile-chunk FILE``: the damped synthesizer's per-chunk statistics as
multiples of the chunk's ``X.T @ X`` (:func:`profile_chunk`).

Environment: ``BENCH_DASK_N`` (rows, default ``10**7``), ``BENCH_DASK_P``
(columns, default 50), ``BENCH_DASK_FILE_ROWS`` (default ``10**6``),
``BENCH_DASK_JOBS`` (comma-separated subset of ``pass,release,damped,
sampler,microagg,microagg-pinning,idle``), ``BENCH_DASK_DIR`` (keep the
files there instead of a temporary folder).
"""

from __future__ import annotations

import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchmarks._harness import markdown_table

JOBS = (
    "pass",
    "release",
    "release-stats",
    "damped",
    "sampler",
    "microagg",
    "microagg-pinning",
    "idle",
)


def _env_int(name, default):
    return int(float(os.environ.get(name, default)))


def write_parquet(folder, n, p, file_rows, seed=0):
    """``n x p`` Boolean rows with a latent factor, as Parquet files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    names = [f"b{j:02d}" for j in range(p)]
    for i, start in enumerate(range(0, n, file_rows)):
        rows = min(file_rows, n - start)
        rng = np.random.default_rng([seed, i])
        latent = rng.random((rows, 1), dtype=np.float32)
        noise = rng.random((rows, p), dtype=np.float32)
        X = (noise < 0.15 + 0.7 * latent).astype(np.uint8)
        table = pa.table({name: X[:, j] for j, name in enumerate(names)})
        pq.write_table(table, folder / f"part-{i:05d}.parquet", row_group_size=rows)
    return folder


def run_job(job, folder, workers):
    """One measurement in this process: ``{seconds, pass_seconds, peak_bytes}``."""
    import warnings

    import dask
    import dask.dataframe as dd

    from skdp_synth import (
        CovarianceLossMicroaggregator,
        DampedPrivateSynthesizer,
        PrivateSampler,
        ProjectedGaussianRelease,
    )
    from skdp_synth._chunked import ChunkedRows, as_dask_array

    warnings.simplefilter("ignore")  # PrivacyBudgetWarning of the sampler
    dask.config.set(scheduler="threads", num_workers=workers)
    passes = []
    reduce = ChunkedRows.reduce

    def timed_reduce(self, *args):
        t0 = time.perf_counter()
        try:
            return reduce(self, *args)
        finally:
            passes.append(time.perf_counter() - t0)

    ChunkedRows.reduce = timed_reduce
    stream = ChunkedRows.stream

    def timed_stream(self, *args):
        # only the time spent computing the chunks, not the caller's fold
        spent = 0.0
        results = stream(self, *args)
        try:
            while True:
                t0 = time.perf_counter()
                try:
                    item = next(results)
                finally:
                    spent += time.perf_counter() - t0
                yield item
        except StopIteration:
            pass
        finally:
            passes.append(spent)

    ChunkedRows.stream = timed_stream
    frame = dd.read_parquet(folder)
    t0 = time.perf_counter()
    if job == "pass":
        X, _, _ = as_dask_array(frame)
        Xf = X.astype(np.float64)
        (Xf.T @ Xf).compute()
        passes.append(time.perf_counter() - t0)
    elif job == "release":
        ProjectedGaussianRelease(
            epsilon=1.0,
            delta=1e-6,
            random_state=0,
            max_model_rows=_env_int("BENCH_DASK_MODEL_ROWS", 20_000),
        ).fit(frame)
    elif job == "release-stats":
        # the release's data access alone: validation and the attribute tables
        # (one pass), as fit does it, without the noise and the generator
        from skdp_synth._chunked import reduce_rows
        from skdp_synth._stats import attribute_statistic, attribute_tables_from
        from skdp_synth.workloads import AttributeMarginalWorkload

        est = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0)
        U = est._validate_fit_data(frame)
        W = AttributeMarginalWorkload(est.blocks_.n_levels, est.d)
        stat = reduce_rows(U, attribute_statistic, W, est.blocks_)
        W.residuals(attribute_tables_from(stat, W))
    elif job == "damped":
        DampedPrivateSynthesizer(epsilon=1.0, random_state=0).fit(frame)
    elif job == "sampler":
        PrivateSampler(k=10, random_state=0).fit(frame)
    elif job == "microagg":
        CovarianceLossMicroaggregator(domain="boolean").fit(frame)
    elif job == "microagg-pinning":
        CovarianceLossMicroaggregator(
            domain="boolean", partition="pinning", random_state=0
        ).fit(frame)
    elif job != "idle":
        raise ValueError(job)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    return {
        "seconds": seconds,
        "pass_seconds": sum(passes),
        "n_passes": len(passes),
        "peak_bytes": peak,
    }


def profile_chunk(path, repeat=3):
    """Per-chunk cost of the damped synthesizer's two statistics, single-threaded.

    ``python -m benchmarks.bench_dask --profile-chunk FILE.parquet`` (one
    file of the benchmark: 10^6 x 50 uint8 rows). The reference is the
    chunk's share of the baseline pass, ``X.astype(float64)`` then ``X.T @
    X``; each statistic runs as a data pass runs it
    (``_chunked._chunk_statistic``: validation, row blocks of ``SUB_ROWS``),
    with validated Boolean rows as ``uint8`` (``integer_rows``, the default
    path) and, for comparison in the same run, as float64 (the statistic
    without ``integer_rows``: float64 rows, the sparse indicator product).
    Best of ``repeat``; ratios only (the machine is shared).
    """
    import pyarrow.parquet as pq

    from skdp_synth import DampedPrivateSynthesizer, _chunked, _stats
    from skdp_synth.blocks import Blocks
    from skdp_synth.damped import _estimator as damped_module

    table = pq.read_table(path)
    X = np.column_stack([c.to_numpy() for c in table.columns])
    names = [str(c) for c in table.column_names]
    captured = {}
    original = damped_module.projected_cell_sums

    def capture(U, *args):
        captured["args"] = args
        return original(U, *args)

    damped_module.projected_cell_sums = capture
    try:
        DampedPrivateSynthesizer(epsilon=1.0, random_state=0).fit(X)
    finally:
        damped_module.projected_cell_sums = original
    args = captured["args"]

    def best(f):
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        return min(times)

    def baseline():
        F = X.astype(np.float64)
        F.T @ F

    def chunk(statistic, *a):
        spec = ("boolean", (0, 1), Blocks.binary(X.shape[1]), names, statistic, a)
        return lambda: _chunked._chunk_statistic(X, 0, spec)

    def as_float(statistic):
        return lambda U, *a: statistic(U, *a)  # no integer_rows: float64 rows

    base = best(baseline)
    rows = [
        ("pass 1 (moment_sums), uint8 rows", chunk(_stats.moment_sums)),
        ("pass 1, float64 rows", chunk(as_float(_stats.moment_sums))),
        ("pass 2 (projected_cell_sums), uint8 rows", chunk(original, *args)),
        ("pass 2, float64 rows", chunk(as_float(original), *args)),
    ]
    V, covering = args[0], args[3]
    print(
        f"{X.shape[0]} x {X.shape[1]} rows, t = {V.shape[1]}, "
        f"{covering.n_points} cells; X.T @ X of the chunk: {base:.3f} s"
    )
    for label, f in rows:
        print(f"  {label}: {best(f) / base:.2f} x")


def _subprocess(job, folder, workers):
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_dask", "--job", job, str(folder)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "BENCH_DASK_WORKERS": str(workers)},
        cwd=pathlib.Path(__file__).resolve().parent.parent,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    n = _env_int("BENCH_DASK_N", 10**7)
    p = _env_int("BENCH_DASK_P", 50)
    file_rows = _env_int("BENCH_DASK_FILE_ROWS", 10**6)
    workers = _env_int("BENCH_DASK_WORKERS", 2)
    jobs = [j for j in os.environ.get("BENCH_DASK_JOBS", ",".join(JOBS)).split(",")]
    keep = os.environ.get("BENCH_DASK_DIR")
    folder = pathlib.Path(keep) if keep else pathlib.Path(tempfile.mkdtemp())
    try:
        t0 = time.perf_counter()
        if not list(folder.glob("*.parquet")):
            write_parquet(folder, n, p, file_rows)
        files = list(folder.glob("*.parquet"))
        size = sum(f.stat().st_size for f in files) / 1e6
        print(
            f"{n} x {p} Boolean rows, {len(files)} Parquet files ({size:.0f} MB), "
            f"written in {time.perf_counter() - t0:.0f} s; threaded scheduler, "
            f"{workers} threads\n",
            flush=True,
        )
        results = {}
        # the baseline runs first and last; the ratios use the mean of the two
        # (on a shared machine the load moves while the jobs run)
        order = ["pass"] + [j for j in jobs if j != "pass"] + ["pass (again)"]
        for job in order:
            results[job] = _subprocess(job.split()[0], folder, workers)
            r = results[job]
            print(
                f"  {job}: {r['seconds']:.1f} s ({r['n_passes']} data passes "
                f"{r['pass_seconds']:.1f} s), peak {r['peak_bytes'] / 2**30:.2f} GiB",
                flush=True,
            )
        base = (results["pass"]["seconds"] + results["pass (again)"]["seconds"]) / 2
        rows = []
        for job, r in results.items():
            rows.append(
                {
                    "job": job,
                    "seconds": r["seconds"],
                    "x pass (total)": r["seconds"] / base,
                    "data passes": r["n_passes"],
                    "x pass (passes)": r["pass_seconds"] / base,
                    "driver s": r["seconds"] - r["pass_seconds"],
                    "peak GiB": r["peak_bytes"] / 2**30,
                }
            )
        print()
        print(
            markdown_table(
                rows,
                [
                    "job",
                    "seconds",
                    "x pass (total)",
                    "data passes",
                    "x pass (passes)",
                    "driver s",
                    "peak GiB",
                ],
            )
        )
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--profile-chunk":
        profile_chunk(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "--job":
        workers = _env_int("BENCH_DASK_WORKERS", 2)
        print(json.dumps(run_job(sys.argv[2], sys.argv[3], workers)))
    else:
        main()
