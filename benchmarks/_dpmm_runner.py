"""Run dpmm's MST on a pickled train frame; write the synthetic rows (separate venv).

Usage: ``.venv-dpmm/bin/python benchmarks/_dpmm_runner.py IN OUT EPS DELTA SEED``
(``requirements-dpmm.txt``). ``EPS`` is the total: 0.1 for dpmm's processing
(``proc_epsilon``, its default) and the rest for the model. The pickle holds
``(train, categorical columns)`` or ``(train, categorical columns, domain)``,
``domain`` dpmm's public bounds ``{col: {"lower": a, "upper": b}}``.
"""

import pickle
import sys
import time

from dpmm.pipelines.mst import MSTPipeline


def main(src, dst, eps, delta, seed):
    with open(src, "rb") as fh:
        payload = pickle.load(fh)
    train, cats = payload[:2]
    domain = payload[2] if len(payload) > 2 else None
    df = train.copy()
    for c in cats:
        df[c] = df[c].astype("category")
    t0 = time.perf_counter()
    pipe = MSTPipeline(epsilon=eps - 0.1, delta=delta, proc_epsilon=0.1, n_jobs=1)
    pipe.set_random_state(seed)
    pipe.fit(df, domain=domain)
    out = pipe.generate(len(df))
    elapsed = time.perf_counter() - t0
    with open(dst, "wb") as fh:
        pickle.dump((out, elapsed), fh)


if __name__ == "__main__":
    a = sys.argv
    main(a[1], a[2], float(a[3]), float(a[4]), int(a[5]))
