"""Date/time columns over a short or long window, through the default pipeline.

A ``datetime64`` column is encoded as whole units since 1970 (``"s"`` by
default, ``"D"`` for dates: ``BooleanEncoder(datetime_unit=)``) and gets a
private numeric domain. This measures how its shape comes back, on the
default pipeline ``make_synthesis_pipeline(BooleanEncoder(random_state=s,
...), ProjectedGaussianRelease(epsilon, delta=1e-6, random_state=s))``:

* **fixture**: the ``day`` column of ``tests/test_pipeline_release.py``'s
  ``_frame`` (11.5 days of zoned epoch seconds, 1,500 rows, ε = 1, its
  encoder), seeds ``0..seeds-1`` (table and fit seeds alike);
* **windows**: a table of ``n`` rows with a datetime ``when`` (seconds) and
  a date ``day`` (unit ``"D"``) over a window of 1 week, 1 month, 1 year or
  10 years from 2021-03-01 (a Beta(2, 5) shape: skewed, so the shape
  matters), a numeric ``x`` correlated with ``when`` and a categorical
  ``g``; ε 1 and 0.3, ``n`` 1,000 and 10,000.

For each time column: the std ratio (synthetic / real), the KS statistic and
the Wasserstein-1 distance over the real IQR (W/IQR), in the column's unit.
Numbers are for the tree on ``PYTHONPATH``::

    PYTHONPATH=. python benchmarks/bench_datetime.py --seeds 10 --out x.jsonl
    PYTHONPATH=. python benchmarks/bench_datetime.py --summary x.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

WINDOWS = {"1w": 7, "1m": 30, "1y": 365, "10y": 3652}


def _seconds(col):
    """Seconds since 1970 (UTC for a zoned column), NaN where missing, in
    the column's own resolution (a ``[s]`` date past 2262 does not overflow
    a nanosecond subtraction)."""
    from skdp_synth._datetime import to_units

    return to_units(col, col.dtype, "s")


def _metrics(real, synth):
    from scipy import stats

    real = real[~np.isnan(real)]
    synth = synth[~np.isnan(synth)]
    iqr = float(np.subtract(*np.percentile(real, [75, 25])))
    return {
        "std": float(np.std(synth) / np.std(real)),
        "ks": float(stats.ks_2samp(real, synth).statistic),
        "w_iqr": float(stats.wasserstein_distance(real, synth) / max(iqr, 1e-12)),
    }


def window_table(n, days, seed):
    rng = np.random.default_rng(seed)
    u = rng.beta(2.0, 5.0, n)
    start = pd.Timestamp("2021-03-01")
    when = start + pd.to_timedelta(np.floor(u * days * 86400), unit="s")
    day = start + pd.to_timedelta(np.floor(rng.beta(2.0, 5.0, n) * days), unit="D")
    return pd.DataFrame(
        {
            "when": when,
            "day": day.astype("datetime64[s]"),
            "x": 10 * u + rng.normal(size=n),
            "g": pd.Categorical(rng.choice(["a", "b", "c"], n)),
        }
    )


def _fit_sample(df, encoder, eps, seed, n_out):
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe = make_synthesis_pipeline(
            encoder,
            ProjectedGaussianRelease(epsilon=eps, delta=1e-6, random_state=seed),
        )
        pipe.fit(df)
        out = pipe.sample(n_out, random_state=seed)
    names = sorted({type(w.message).__name__ for w in caught})
    return pipe, out, [w for w in caught], names


def _leaf_width(pipe, col):
    """Median width (in the column's unit) of the kept fine leaves."""
    spec = [s for s in pipe[0].specs_ if s.name == col][0]
    h = getattr(spec, "fine", None)
    if h is None:
        return float("nan")
    w = np.diff(h.edges)[h.counts > 0]
    return float(np.median(w)) if w.size else float("nan")


def run_fixture(seeds, out):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_pipeline_release import _encoder, _frame

    for s in range(seeds):
        df = _frame(seed=s)
        enc = _encoder()
        enc.set_params(random_state=s)
        pipe, syn, caught, _ = _fit_sample(df, enc, 1.0, s, len(df))
        m = _metrics(_seconds(df["day"]), _seconds(syn["day"]))
        warned = any(
            type(w.message).__name__ == "DegenerateColumnWarning"
            and "'day'" in str(w.message)
            for w in caught
        )
        rec = {"case": "fixture", "col": "day", "seed": s, "warned": warned}
        rec |= m | {"leaf": _leaf_width(pipe, "day")}
        out.write(json.dumps(rec) + "\n")
        out.flush()
        print(rec, flush=True)


def run_windows(seeds, ns, epss, windows, out):
    from skdp_synth.preprocessing import BooleanEncoder

    for w in windows:
        for n in ns:
            for eps in epss:
                for s in range(seeds):
                    df = window_table(n, WINDOWS[w], s)
                    enc = BooleanEncoder(random_state=s, datetime_unit={"day": "D"})
                    pipe, syn, caught, names = _fit_sample(df, enc, eps, s, n)
                    for col in ("when", "day"):
                        m = _metrics(_seconds(df[col]), _seconds(syn[col]))
                        leaf = _leaf_width(pipe, col)
                        rec = {"case": w, "n": n, "eps": eps, "seed": s, "col": col}
                        rec |= m | {"leaf": leaf, "warnings": names}
                        out.write(json.dumps(rec) + "\n")
                        out.flush()
                    print(w, n, eps, s, flush=True)


def summary(paths):
    rows = []
    for p in paths:
        for line in Path(p).read_text().splitlines():
            rec = json.loads(line)
            rec["file"] = Path(p).stem
            rows.append(rec)
    df = pd.DataFrame(rows)
    df["in_band"] = df["std"].between(0.5, 2.0)
    fx = df[df.case == "fixture"]
    if len(fx):
        print("fixture `day` (n = 1,500, eps 1):")
        g = fx.groupby("file").agg(
            seeds=("seed", "size"),
            std_median=("std", "median"),
            std_max=("std", "max"),
            in_band=("in_band", "mean"),
            ks=("ks", "mean"),
            w_iqr=("w_iqr", "mean"),
            leaf_s=("leaf", "median"),
            warned=("warned", "mean"),
        )
        print(g.round(3).to_string())
    wd = df[df.case != "fixture"]
    if len(wd):
        g = wd.groupby(["case", "col", "n", "eps", "file"], sort=False).agg(
            seeds=("seed", "size"),
            std_median=("std", "median"),
            in_band=("in_band", "mean"),
            ks=("ks", "mean"),
            w_iqr=("w_iqr", "mean"),
            leaf=("leaf", "median"),
        )
        print(g.round(3).to_string())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--window-seeds", type=int, default=5)
    ap.add_argument("--n", default="1000,10000")
    ap.add_argument("--eps", default="1,0.3")
    ap.add_argument("--windows", default=",".join(WINDOWS))
    ap.add_argument("--only", choices=["fixture", "windows"], default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--summary", nargs="*", default=None)
    a = ap.parse_args(argv)
    if a.summary is not None:
        summary(a.summary)
        return
    with open(a.out, "a") as out:
        if a.only in (None, "fixture"):
            run_fixture(a.seeds, out)
        if a.only in (None, "windows"):
            run_windows(
                a.window_seeds,
                [int(v) for v in a.n.split(",")],
                [float(v) for v in a.eps.split(",")],
                a.windows.split(","),
                out,
            )


if __name__ == "__main__":
    main()
