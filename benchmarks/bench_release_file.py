"""Sampling the table from a published file, against the pipeline itself.

Run: ``python -m benchmarks.bench_release_file [--rows 1000000] [--repeats 2]``.

``pipe.to_release()`` carries the encoder's decoder, so whoever holds the
``.npz`` file samples rows of the table without the fitted objects. Times,
on ``nycflights13::flights`` (50,000 rows, ``benchmarks/bench_mixed.py``'s
table, ε = 1): writing and loading the file (its size),
``Release.load(path).sample(n)`` and ``pipe.sample(n)`` in the same run, and
the baseline of the same run: the encoded sample alone.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from benchmarks import bench_mixed as bm
from skdp_synth import Release


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)
    pipe, _ = bm.fitted_pipeline("flights")
    path = os.path.join(tempfile.mkdtemp(), "release.npz")
    best = {}
    for _ in range(args.repeats):
        t = time.perf_counter()
        pipe.to_release().save(path)
        best["to_release + save"] = min(
            best.get("to_release + save", 1e9), time.perf_counter() - t
        )
        t = time.perf_counter()
        rel = Release.load(path)
        best["load"] = min(best.get("load", 1e9), time.perf_counter() - t)
        t = time.perf_counter()
        rel.sample(args.rows, random_state=0, decode=False)
        best["encoded"] = min(best.get("encoded", 1e9), time.perf_counter() - t)
        t = time.perf_counter()
        rel.sample(args.rows, random_state=0)
        best["file sample"] = min(best.get("file sample", 1e9), time.perf_counter() - t)
        t = time.perf_counter()
        pipe.sample(args.rows, random_state=0)
        best["pipe.sample"] = min(best.get("pipe.sample", 1e9), time.perf_counter() - t)
    base = best["encoded"]
    print(
        f"flights, file of {os.path.getsize(path) / 1e6:.2f} MB; "
        f"sample({args.rows}), best of {args.repeats}:"
    )
    for name, s in best.items():
        print(f"  {name:18s} {s:7.2f} s  {s / base:6.2f} x the encoded sample")
    print(
        f"  file sample / pipe.sample: {best['file sample'] / best['pipe.sample']:.2f}"
    )


if __name__ == "__main__":
    sys.exit(main())
