"""Run one smartnoise-synth synthesizer on a CSV of category codes (benchmark only).

Runs in the separate comparison virtualenv (smartnoise-synth 1.0.x needs
``opacus<0.15``, ``mbi<2``, ``opendp<0.15``, ``pandas<3``), never imports
skdp_synth. Usage::

    python _snsynth_runner.py REAL.csv OUT_DIR METHOD EPSILON SEED AIM_ROUNDS [DELTA]

Prints one ``RESULT <label> <csv path> <fit+sample seconds>`` line per output.
For MST and AIM two outputs from the *same* fitted model: smartnoise's own
``sample`` (mbi 1.1.0's ``synthetic_data(method="round")``, which rounds each
column's counts and shuffles, inventing dependence between columns that the
model does not link) and i.i.d. draws from the model
(``synthetic_data(rows, method="sample")``), decoded the same way.
"""

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd


def main(argv):
    src, out_dir, method, eps, seed, rounds = argv[:6]
    eps, seed, rounds = float(eps), int(seed), int(rounds)
    delta = {"delta": float(argv[6])} if len(argv) > 6 else {}
    from snsynth import Synthesizer

    real = pd.read_csv(src)
    n = len(real)
    # smartnoise and mbi draw from NumPy's global generator
    np.random.seed(seed)  # noqa: NPY002
    # AIM at its defaults (16 x columns rounds) takes many minutes: rounds is
    # set by the caller. MWEM over the full 4^16-cell histogram cannot be
    # allocated (20 TiB): split the columns into groups of 4 (4^4 cells each;
    # groups of 8 took 280 s per fit here).
    kwargs = {"aim": {"rounds": rounds}, "mwem": {"split_factor": 4}}.get(method, {})
    synth = Synthesizer.create(method, epsilon=eps, verbose=False, **kwargs, **delta)
    t0 = time.perf_counter()
    synth.fit(real, categorical_columns=list(real.columns), preprocessor_eps=0.0)
    t_fit = time.perf_counter() - t0

    outputs = {}
    t0 = time.perf_counter()
    outputs[f"{method.upper()} (smartnoise sample)"] = synth.sample(n)
    t_default = time.perf_counter() - t0
    times = {f"{method.upper()} (smartnoise sample)": t_fit + t_default}
    if method in ("mst", "aim"):
        t0 = time.perf_counter()
        data = synth.synthesizer.synthetic_data(rows=n, method="sample")
        if method == "mst":
            data = synth.undo_compress_fn(data)
            df = data.df
        else:
            colnames = ["col" + str(i) for i in range(synth._transformer.output_width)]
            df = data.df[colnames]
        rows = [tuple(t[1:]) for t in df.itertuples()]
        label = f"{method.upper()} (same model, i.i.d.)"
        outputs[label] = synth._transformer.inverse_transform(rows)
        times[label] = t_fit + time.perf_counter() - t0
    for label, syn in outputs.items():
        syn = pd.DataFrame(syn, columns=real.columns)
        slug = label.split()[0].lower() + ("_iid" if "i.i.d." in label else "")
        path = Path(out_dir) / f"{slug}_{eps}_{seed}.csv"
        syn.to_csv(path, index=False)
        print("RESULT", label.replace(" ", "_"), path, times[label])


if __name__ == "__main__":
    main(sys.argv[1:])
