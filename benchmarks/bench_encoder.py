"""BooleanEncoder.fit_transform on categorical tables against one pandas pass.

The baseline, measured in the same run, is one ``astype("category")`` pass
over every column (the least a categorical encoding must do). Tables: the
real categorical tables of ``benchmarks/_tables.py`` stacked 5 times (so the
per-row work dominates), levels declared (``categories=``, no privacy
budget). Reported: seconds and the ratio to the baseline. Run::

    .venv/bin/python -m benchmarks.bench_encoder [--tables diamonds,nass_cds] \
        [--copies 5]
"""

from __future__ import annotations

import argparse
import time
import warnings

import pandas as pd

from benchmarks._harness import markdown_table


def run(name, copies):
    from benchmarks._tables import load_table
    from skdp_synth.preprocessing import BooleanEncoder

    df, cats = load_table(name)
    big = pd.concat([df] * copies, ignore_index=True)
    t0 = time.perf_counter()
    codes = [big[c].astype("category").cat.codes for c in big.columns]
    base = time.perf_counter() - t0
    del codes
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        BooleanEncoder(categories=cats).fit_transform(big)
    enc = time.perf_counter() - t0
    return {
        "table": name,
        "rows x cols": f"{big.shape[0]} x {big.shape[1]}",
        "encoder s": enc,
        "category pass s": base,
        "ratio": enc / base,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", default="diamonds,nass_cds,mpls_stops")
    ap.add_argument("--copies", type=int, default=5)
    args = ap.parse_args(argv)
    rows = [run(t, args.copies) for t in args.tables.split(",")]
    print(markdown_table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
