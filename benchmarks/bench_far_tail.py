"""Far tails placed by noise, and numeric columns that break without a word.

For one table of ``benchmarks/_suite_tables.py`` (the suite's 80 % training
split, its categories declared, numeric domains learned privately; the
default pipeline at ``EPS``, δ = 1e-6), per seed and numeric column: whether a
``DegenerateColumnWarning`` named the column for a far tail
(``preprocessing._far_tail.far_tail``), and whether the rows' std is outside
[0.5, 2] of the real one without any ``DegenerateColumnWarning`` naming the
column ("silent").

Run: ``python -m benchmarks.bench_far_tail TABLE EPS N_SEEDS [SEED,SEED...]``,
e.g. ``python -m benchmarks.bench_far_tail credit 1 10`` or
``python -m benchmarks.bench_far_tail hotel 1 0 1`` (seed 1 only).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pandas as pd


def run(name, eps, seeds):
    from benchmarks.bench_mixed import categories
    from benchmarks.bench_suite import DELTA, context
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    ctx = context(name)
    train = ctx["train"]
    numeric = [c for c in train.columns if c not in ctx["cats"]]
    fired = off = silent = 0
    for seed in seeds:
        enc = BooleanEncoder(
            categories=categories(train, ctx["cats"]),
            epsilon="auto",
            random_state=seed,
            **ctx["options"],
        )
        rel = ProjectedGaussianRelease(epsilon=eps, delta=DELTA, random_state=seed)
        pipe = make_synthesis_pipeline(enc, rel)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe.fit(train)
            syn = pipe.sample(len(train), random_state=seed + 1)
        named = getattr(pipe, "degenerate_columns_", {})
        for c in numeric:
            x = pd.to_numeric(syn[c], errors="coerce")
            r = pd.to_numeric(train[c], errors="coerce")
            ratio = x.std() / r.std() if r.std() > 0 else np.nan
            far = [m for m in named.get(c, []) if "tail bin" in m]
            if far:
                fired += 1
                print(f"  seed {seed} {c}: far tail named, std ratio {ratio:.3g}")
            if not 0.5 <= ratio <= 2:
                off += 1
                if c not in named:
                    silent += 1
                    print(f"  seed {seed} {c}: silent, std ratio {ratio:.3g}")
    print(f"{name} eps={eps}: far tail named {fired}, std off {off}, silent {silent}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    name, eps, n = argv[0], float(argv[1]), int(argv[2])
    seeds = [int(s) for s in argv[3].split(",")] if len(argv) > 3 else range(n)
    run(name, eps, seeds)


if __name__ == "__main__":
    main()
