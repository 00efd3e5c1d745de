"""A pipeline's ``sample(n)`` carries the fitted model's 1-way tables.

The rows are the model table rounded to ``n`` rows (controlled rounding,
:func:`skdp_synth.generator.controlled_rows`), decoded: no i.i.d. sampling
error on top of the release's noise. ``benchmarks/bench_tv1_sources.py``
measured it on the TUNE tables (the rows' TV1 against the training rows
equal to the model table's, where n i.i.d. draws from it add 0.002-0.005);
this pins it end to end, decoded columns included.
"""

import numpy as np
import pandas as pd

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.preprocessing import BooleanEncoder

LEVELS = list("abcd")


def _fitted():
    rng = np.random.default_rng(0)
    n = 3000
    a = rng.choice(LEVELS, n, p=[0.4, 0.3, 0.2, 0.1])
    b = np.where(rng.random(n) < 0.7, a, rng.choice(LEVELS, n))
    x = rng.normal(size=n) + (a == "a")
    df = pd.DataFrame({"a": a, "b": b, "x": x})
    edges = [float(x.min()), *np.quantile(x, [0.2, 0.4, 0.6, 0.8]), float(x.max())]
    enc = BooleanEncoder(
        categories={"a": LEVELS, "b": LEVELS}, bin_edges={"x": edges}, random_state=0
    )
    rel = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0)
    return make_synthesis_pipeline(enc, rel).fit(df), np.asarray(edges)


def _counts(frame, edges):
    """Each column's counts on the release's levels (x: its public bins)."""
    x = np.searchsorted(edges[1:-1], frame["x"].to_numpy(float), side="right")
    return {
        "a": np.array([(frame["a"] == v).sum() for v in LEVELS]),
        "b": np.array([(frame["b"] == v).sum() for v in LEVELS]),
        "x": np.bincount(x, minlength=len(edges) - 1),
    }


def test_sampled_rows_hold_the_model_tables_one_way_counts():
    pipe, edges = _fitted()
    rel = pipe[-1]
    model = rel._model_rows
    N = model.shape[0]
    names = [str(s) for s in rel.blocks_.names]
    shares = {
        c: np.bincount(model[:, names.index(c)], minlength=k) / N
        for c, k in (("a", 4), ("b", 4), ("x", len(edges) - 1))
    }
    # n = N: the model table itself, exactly
    got = _counts(pd.DataFrame(pipe.sample(N, random_state=1)), edges)
    for c, p in shares.items():
        np.testing.assert_array_equal(got[c], np.rint(N * p).astype(int))
    # other n: whole copies plus a simple random subset of r = n mod N rows,
    # a hypergeometric error of sd sqrt(r p (1-p) (N-r) / (N-1)) per cell --
    # against sqrt(n p (1-p)) (about 25 rows here) for n i.i.d. draws
    for n in (2 * N + 7, N - 5, N + 11):
        got = _counts(pd.DataFrame(pipe.sample(n, random_state=2)), edges)
        r = n % N
        for c, p in shares.items():
            assert got[c].sum() == n
            sd = np.sqrt(r * p * (1 - p) * (N - r) / max(N - 1, 1))
            assert np.all(np.abs(got[c] - n * p) <= 1 + 4 * sd), (c, n)
