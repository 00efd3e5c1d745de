"""The share of rows in a float column's cut wide leaf, real against synthetic (bench_uncut_leaves.md)."""
import sys, warnings
import numpy as np, pandas as pd
from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.preprocessing import BooleanEncoder

def run(seed):
    rng = np.random.default_rng(0)
    n = 3333
    df = pd.DataFrame({f"ch{i}": np.round(rng.normal(30, 9, n).clip(0, 60), 2) for i in range(4)}
        | {f"k{i}": rng.choice(list("abc"), n) for i in range(12)}
        | {f"m{i}": rng.normal(180, 50, n).round(1) for i in range(4)})
    pipe = make_synthesis_pipeline(BooleanEncoder(random_state=seed),
        ProjectedGaussianRelease(epsilon=0.3, delta=1e-6, random_state=seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(df)
    syn = pipe.sample(n, random_state=seed)
    enc = pipe[0]
    for spec in enc.specs_:
        w = sorted(getattr(spec, "wide", ()))
        if not w or spec.integer: continue
        for i in range(0, len(w), 16):
            a, b = float(spec.levels[w[i]]), float(spec.levels[w[min(i+15, len(w)-1)] + 1])
            r = df[spec.name].between(a, b, inclusive="left").mean()
            s = syn[spec.name].between(a, b, inclusive="left").mean()
            print(seed, spec.name, round(a,2), round(b,2), "real", round(r,3), "syn", round(s,3), "dropped", len(pipe.integer_bins_dropped_.get(spec.name, [])))
for s in map(int, sys.argv[1:]): run(s)
