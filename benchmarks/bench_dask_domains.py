"""Private domains learned out of core: passes, time and peak memory.

A mixed table of 20 columns is generated to CSV (``gen``): ten numeric --
skewed (log-normal), zero-inflated, a point mass, integers, missing values --
and ten categorical (2 to 30 levels, Zipf-like, missing values in four).
Then, each job in its own process (run it under ``/usr/bin/time -v`` for the
peak resident memory):

* ``dask FILE`` -- ``dd.read_csv`` (64 MB blocks) into the pipeline
  ``BooleanEncoder(delta > 0) -> ProjectedGaussianRelease(ε = 1, δ = 1e-6,
  max_model_rows=100000)``, fitted with the threaded scheduler, then 10^5
  rows sampled: every domain is learned privately from chunk counts;
* ``cli FILE`` -- ``synthesize --out-of-core`` with a types-only schema
  (the same columns), ``--rows 100000``;
* ``compare FILE`` -- the encoder alone on ``FILE`` in memory
  (``pd.read_csv``) and from ``dd.read_csv`` of the same file, same seed:
  prints whether every learned domain is identical.

Passes over the data are counted as the calls that read every chunk: the
domain statistics' passes and the synthesizer's ``ChunkedRows`` passes.

``dask``, ``cli`` and ``compare`` take ``--refine-cells K`` (the encoder's
``refine_cells``: bounded mode, at most ``K`` cells per numeric column a
refinement pass; default: exact mode, the refined cells' distinct values).

Run (2 cores, shared)::

    python -m benchmarks.bench_dask_domains gen 10000000 /tmp/work/big/t1e7.csv
    /usr/bin/time -v python -m benchmarks.bench_dask_domains dask /tmp/work/big/t1e7.csv
    /usr/bin/time -v python -m benchmarks.bench_dask_domains dask \
        /tmp/work/big/t1e7.csv --refine-cells 1048576
"""

from __future__ import annotations

import json
import os
import time
import warnings

import numpy as np
import pandas as pd

NUMERIC = {
    "income": "numeric",
    "wage": "numeric",
    "debt": "numeric",
    "assets": "numeric",
    "price": "numeric",
    "score": "numeric",
    "age": "integer",
    "children": "integer",
    "hours": "integer",
    "visits": "integer",
}
N_CATEGORICAL = 10


def _chunk(n, rng):
    u = rng.random
    cols = {
        "income": rng.lognormal(10.5, 0.8, n).round(2),
        "wage": np.where(u(n) < 0.08, np.nan, rng.lognormal(7.0, 1.2, n).round(2)),
        "debt": np.where(u(n) < 0.75, 0.0, rng.exponential(4e3, n).round(2)),
        "assets": np.where(u(n) < 0.4, 0.0, rng.lognormal(9, 2, n).round(0)),
        "price": np.where(u(n) < 0.5, 9.99, rng.gamma(2.0, 20.0, n).round(2)),
        "score": np.where(u(n) < 0.03, np.nan, rng.normal(600, 80, n).round(1)),
        "age": rng.integers(18, 95, n),
        "children": rng.poisson(1.2, n),
        "hours": np.where(u(n) < 0.6, 40, rng.integers(0, 80, n)),
        "visits": rng.negative_binomial(1, 0.05, n),
    }
    for j in range(N_CATEGORICAL):
        k = [2, 3, 4, 5, 6, 8, 10, 12, 20, 30][j]
        p = 1.0 / np.arange(1, k + 1) ** 1.1
        v = rng.choice(k, n, p=p / p.sum())
        col = np.array([f"c{j}_{i}" for i in range(k)], dtype=object)[v]
        if j % 3 == 0:
            col[u(n) < 0.05] = None
        cols[f"cat{j}"] = col
    return pd.DataFrame(cols)


def gen(n, path, chunk=1_000_000):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    rng = np.random.default_rng(2026)
    for start in range(0, n, chunk):
        _chunk(min(chunk, n - start), rng).to_csv(
            path, mode="w" if start == 0 else "a", header=start == 0, index=False
        )
    print(f"wrote {n} rows to {path} ({os.path.getsize(path) / 2**30:.2f} GiB)")


def _dtypes():
    out = {c: ("float64" if t == "numeric" else "int64") for c, t in NUMERIC.items()}
    out |= {f"cat{j}": object for j in range(N_CATEGORICAL)}
    return out


def _read_dask(path):
    import dask
    import dask.dataframe as dd

    with dask.config.set({"dataframe.convert-string": False}):
        return dd.read_csv(path, blocksize="64MB", dtype=_dtypes())


class _Passes:
    """Counts the passes over the data: the domain statistics' passes
    (``_domain_stats.chunk_pass``) and the synthesizer's
    (``ChunkedRows.reduce``, ``map``, ``stream``: one pass each)."""

    def __init__(self):
        from skdp_synth import _chunked
        from skdp_synth.preprocessing import _domain_stats

        self.names = []
        real = _domain_stats.chunk_pass

        def chunk_pass(frame, function, *args):
            self.names.append(function.__name__)
            return real(frame, function, *args)

        _domain_stats.chunk_pass = chunk_pass
        for method in ("reduce", "map", "stream"):
            self._wrap(_chunked.ChunkedRows, method)

    def _wrap(self, cls, method):
        real = getattr(cls, method)

        def wrapped(obj, *args, **kwargs):
            self.names.append(f"ChunkedRows.{method}")
            return real(obj, *args, **kwargs)

        setattr(cls, method, wrapped)


def dask_job(path, refine_cells=None):
    import dask

    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    frame = _read_dask(path)
    passes = _Passes()
    pipe = make_synthesis_pipeline(
        BooleanEncoder(random_state=0, refine_cells=refine_cells),
        ProjectedGaussianRelease(
            epsilon=1.0, delta=1e-6, random_state=0, max_model_rows=100_000
        ),
    )
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(), dask.config.set(scheduler="threads"):
        warnings.simplefilter("ignore")
        pipe.fit(frame)
        t1 = time.perf_counter()
        rows = pipe.sample(100_000, random_state=1)
    t2, c2 = time.perf_counter(), time.process_time()
    print(
        json.dumps(
            {
                "job": "dask",
                "file": path,
                "refine_cells": refine_cells,
                "partitions": frame.npartitions,
                "passes": len(passes.names),
                "pass_kinds": passes.names,
                "fit_wall_s": round(t1 - t0, 1),
                "wall_s": round(t2 - t0, 1),
                "cpu_s": round(c2 - c0, 1),
                "sampled": len(rows),
                "bits": int(pipe[0].blocks_.n_bits)
                if hasattr(pipe[0].blocks_, "n_bits")
                else len(pipe[0].get_feature_names_out()),
            }
        )
    )


def cli_job(path, refine_cells=None):
    from skdp_synth.cli import _main as cli

    passes = _Passes()

    schema = {"columns": dict(NUMERIC)}
    schema["columns"] = {
        c: ({"type": "numeric", "integer": True} if t == "integer" else "numeric")
        for c, t in NUMERIC.items()
    }
    schema["columns"] |= {f"cat{j}": "categorical" for j in range(N_CATEGORICAL)}
    if refine_cells is not None:
        schema["refine_cells"] = refine_cells
    spath = path + ".schema.json"
    with open(spath, "w") as fh:
        json.dump(schema, fh)
    out = path + ".synthetic.csv"
    args = ["synthesize", path, "--schema", spath, "-o", out, "--out-of-core"]
    args += ["--method", "gaussian-release", "--epsilon", "1", "--delta", "1e-6"]
    args += ["--seed", "0", "--rows", "100000", "--blocksize", "64MB"]
    t0, c0 = time.perf_counter(), time.process_time()
    code = cli.main(args)
    print(
        json.dumps(
            {
                "job": "cli",
                "file": path,
                "refine_cells": refine_cells,
                "code": code,
                "passes": len(passes.names),
                "pass_kinds": passes.names,
                "wall_s": round(time.perf_counter() - t0, 1),
                "cpu_s": round(time.process_time() - c0, 1),
            }
        )
    )


def compare_job(path, refine_cells=None):
    import dask

    from skdp_synth.preprocessing import BooleanEncoder

    params = dict(epsilon=0.5, delta=1e-6, random_state=0)
    dask_params = dict(params, refine_cells=refine_cells)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = _read_dask(path)
        t0 = time.perf_counter()
        with dask.config.set(scheduler="threads"):
            b = BooleanEncoder(**dask_params).fit(frame)
        t1 = time.perf_counter()
        df = pd.read_csv(path, dtype=_dtypes())
        a = BooleanEncoder(**params).fit(df)
        t2 = time.perf_counter()
    same = []
    for sa, sb in zip(a.specs_, b.specs_):
        fa, fb = getattr(sa, "fine", None), getattr(sb, "fine", None)
        ok = list(map(str, sa.levels)) == list(map(str, sb.levels)) and (
            sa.missing == sb.missing
        )
        if fa is not None:
            ok = ok and np.array_equal(fa.edges, fb.edges)
            ok = ok and np.array_equal(fa.counts, fb.counts)
            ok = ok and fa.missing_count == fb.missing_count and fa.cap == fb.cap
        same.append((sa.name, bool(ok)))
    print(
        json.dumps(
            {
                "job": "compare",
                "file": path,
                "refine_cells": refine_cells,
                "rows": len(df),
                "identical": all(ok for _, ok in same),
                "columns": same,
                "dask_fit_s": round(t1 - t0, 1),
                "memory_fit_s": round(t2 - t1, 1),
            }
        )
    )


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_dask_domains",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("job", choices=["gen", "dask", "cli", "compare"])
    parser.add_argument("args", nargs="+", help="gen: ROWS FILE; else: FILE")
    parser.add_argument(
        "--refine-cells",
        type=int,
        default=None,
        help="the encoder's refine_cells (bounded mode); default: exact mode",
    )
    ns = parser.parse_args(argv)
    if ns.job == "gen":
        gen(int(float(ns.args[0])), ns.args[1])
    else:
        jobs = {"dask": dask_job, "cli": cli_job, "compare": compare_job}
        jobs[ns.job](ns.args[0], ns.refine_cells)


if __name__ == "__main__":
    main()
