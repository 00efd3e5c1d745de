"""Working memory of a large eager ``sample``: bounded chunks vs one piece.

Run: ``python -m benchmarks.bench_sample_memory`` (or
``python -m benchmarks.run sample_memory``).

``sample`` draws ``n`` rows in chunks of
``skdp_synth.validation.sample_chunk_rows(p)`` rows (32 MiB of float64 rows)
when ``n`` is larger; drawn in one piece, an in-memory ``sample(10**7)``
allocates its whole working set at once (15.6 GiB). The one-piece draw is
measured **in the same run** by raising ``SAMPLE_CHUNK_BYTES`` so that no
sample is chunked. Reported: peak
bytes per row (tracemalloc) and the output's bytes per row, and the time
ratio chunked / one piece (best of 3; a shared machine is noisy).

Data: 20 independent bits (estimators) and 10 nominal columns of 5 levels
(pipelines, decoded to strings). ``SKDP_BENCH_QUICK=1``: ``n = 5 * 10^5``
instead of ``10^6``.
"""

from __future__ import annotations

import functools
import os
import warnings

import numpy as np
import pandas as pd

from benchmarks._harness import best_time, markdown_table, peak_memory
from skdp_synth import (
    DampedPrivateSynthesizer,
    ProjectedGaussianRelease,
    make_synthesis_pipeline,
    validation,
)
from skdp_synth.preprocessing import BooleanEncoder

QUICK = os.environ.get("SKDP_BENCH_QUICK", "") not in ("", "0")


def _cases():
    X = (np.random.default_rng(0).random((2000, 20)) < 0.4).astype(np.int64)
    df = pd.DataFrame(
        {
            f"c{j}": np.random.default_rng(j).choice(list("abcde"), 5000)
            for j in range(10)
        }
    )
    cats = {c: list("abcde") for c in df.columns}
    for est in (
        ProjectedGaussianRelease(random_state=0),
        DampedPrivateSynthesizer(random_state=0),
    ):
        yield type(est).__name__, est.fit(X)
        pipe = make_synthesis_pipeline(
            BooleanEncoder(categories=cats, random_state=0),
            est.__class__(random_state=0),
        )
        yield f"pipeline + {type(est).__name__}", pipe.fit(df)


def _out_bytes(Y):
    if isinstance(Y, pd.DataFrame):
        return int(Y.memory_usage(index=False, deep=False).sum())
    return int(Y.nbytes)


def main():
    n = 500_000 if QUICK else 1_000_000
    rows = []
    default = validation.SAMPLE_CHUNK_BYTES
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fitted in _cases():
            figures = {}
            for label, chunk_bytes in (("chunked", default), ("one piece", 1 << 62)):
                validation.SAMPLE_CHUNK_BYTES = chunk_bytes
                draw = functools.partial(fitted.sample, n, random_state=1)
                try:
                    peak, Y = peak_memory(draw)
                    t, _ = best_time(draw)
                finally:
                    validation.SAMPLE_CHUNK_BYTES = default
                figures[label] = (peak / n, t, _out_bytes(Y) / n)
            rows.append(
                {
                    "sampler": name,
                    "n": n,
                    "output B/row": figures["chunked"][2],
                    "peak B/row, chunked": figures["chunked"][0],
                    "peak B/row, one piece": figures["one piece"][0],
                    "time chunked / one piece": figures["chunked"][1]
                    / figures["one piece"][1],
                }
            )
    print(
        markdown_table(
            rows,
            [
                "sampler",
                "n",
                "output B/row",
                "peak B/row, chunked",
                "peak B/row, one piece",
                "time chunked / one piece",
            ],
        )
    )


if __name__ == "__main__":
    main()
