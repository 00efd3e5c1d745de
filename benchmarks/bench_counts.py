"""ProjectedGaussianRelease from a contingency table: counts in vs expanded rows.

Run: ``PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python -m benchmarks.bench_counts``.

A census-like table (4 regions x 5 age groups x 2 sexes, about 10^6 people in
40 cells) is fitted twice through the encoder pipeline with the same seed:
from the expanded rows, one per person, and from the 40 cells with
``sample_weight=counts``. Reports whether the releases are identical, the fit
times (as a ratio, measured in the same run) and the peak memory traced by
``tracemalloc`` during each fit. ``BENCH_COUNTS_SCALE`` multiplies the counts.
"""

from __future__ import annotations

import itertools
import os
import time
import tracemalloc

import numpy as np


def main() -> int:
    import pandas as pd

    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    scale = int(os.environ.get("BENCH_COUNTS_SCALE", 1))
    categories = {
        "region": ["N", "S", "E", "W"],
        "age": ["0-17", "18-34", "35-54", "55-74", "75+"],
        "sex": ["f", "m"],
    }
    cells = pd.DataFrame(
        list(itertools.product(*categories.values())), columns=list(categories)
    )
    counts = np.random.default_rng(0).integers(5_000, 50_000, len(cells)) * scale

    def fit(X, weights):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(categories=categories),
            ProjectedGaussianRelease(random_state=0, max_model_rows=20_000),
        )
        params = {} if weights is None else {"sample_weight": weights}
        tracemalloc.start()
        t = time.perf_counter()
        pipe.fit(X, **params)
        seconds = time.perf_counter() - t
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return pipe[-1].released_, seconds, peak

    expanded = cells.loc[cells.index.repeat(counts)].reset_index(drop=True)
    a = fit(expanded, None)
    b = fit(cells, counts)
    print(f"{int(counts.sum())} records in {len(cells)} cells")
    print(f"identical released_: {np.array_equal(a[0], b[0])}")
    print(f"expanded rows: fit {a[1]:.2f} s, peak traced {a[2] / 2**20:.1f} MiB")
    print(f"counts:        fit {b[1]:.2f} s, peak traced {b[2] / 2**20:.1f} MiB")
    print(f"ratio: time {a[1] / b[1]:.1f}x, memory {a[2] / b[2]:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
