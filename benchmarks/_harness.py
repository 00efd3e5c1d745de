"""Small helpers shared by the benchmarks: timing, peak memory, tables, caches.

Speed is always reported as a ratio to a baseline measured in the same run
(for example one pass over the data, ``X.T @ X``), so the figures transfer
between machines better than raw seconds.
"""

from __future__ import annotations

import gc
import json
import os
import time
import tracemalloc
import warnings


def best_time(fn, repeat=3):
    """Best wall-clock time (s) of ``repeat`` calls of ``fn()``, and its last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def peak_memory(fn):
    """Peak bytes allocated by Python and NumPy while running ``fn()`` (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, result


def markdown_table(rows, columns):
    """Render ``rows`` (list of dicts) as a GitHub markdown table."""

    def fmt(v):
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(fmt(row.get(c, "")) for c in columns) + " |")
    return "\n".join(lines)


def fit_default_pipeline(df, eps, seed):
    """The default pipeline (``BooleanEncoder`` + ``ProjectedGaussianRelease``
    at ``delta = 1e-6``, both at ``random_state=seed``) fitted on ``df`` with
    its warnings silenced: the benchmarks that read which columns were named
    do so from ``degenerate_columns_``, not from the warnings."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    pipe = make_synthesis_pipeline(
        BooleanEncoder(random_state=seed),
        ProjectedGaussianRelease(epsilon=eps, delta=1e-6, random_state=seed),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(df)
    return pipe


def sample_default_pipeline(df, eps, seed, **encoder):
    """``(rows, warnings)``: ``len(df)`` rows sampled (``random_state=seed +
    1``) from the default pipeline fitted on ``df`` (``BooleanEncoder(
    random_state=seed, **encoder)`` + ``ProjectedGaussianRelease`` at
    ``delta = 1e-6``), and every warning the fit and the sample raised."""
    import pandas as pd

    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe = make_synthesis_pipeline(
            BooleanEncoder(random_state=seed, **encoder),
            ProjectedGaussianRelease(epsilon=eps, delta=1e-6, random_state=seed),
        )
        pipe.fit(df)
        rows = pd.DataFrame(pipe.sample(len(df), random_state=seed + 1))
    return rows, list(caught)


def cached_keys(path, default_arm):
    """The ``(table, eps, seed, arm)`` of every JSON line already in the
    cache ``path`` (an absent file: none), so a rerun fits only what is
    missing; lines without an ``arm`` count as ``default_arm``."""
    done = set()
    if os.path.exists(path):
        with open(path) as fh:
            for line in fh:
                r = json.loads(line)
                done.add((r["table"], r["eps"], r["seed"], r.get("arm", default_arm)))
    return done
