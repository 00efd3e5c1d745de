"""PrivTree's threshold ``θ`` on the numeric columns of the TUNE half: how many
of a column's real rows the private cap keeps, at the budget the suite's
``auto`` pipeline gives each column.

    PYTHONPATH=. python -m benchmarks.bench_privtree_theta --tables \\
        credit,loans,acs12,attrition,hmda,cps1988 --eps 1,0.3 --seeds 1 \\
        --noise-seeds 20 --scales 0,2,4,8,16,32,0@0.3,8@0.3
    PYTHONPATH=. python -m benchmarks.bench_privtree_theta --cap-columns \\
        --tables loans,attrition,credit --scales 0,4 --seeds 5

Per table, ε and seed it fits ``bench_suite``'s ``auto`` pipeline's encoder
(the same split, options and budget; the release is not fitted) and records
every numeric column's call of :func:`privtree_histogram` (its values, ``ε``,
sensitivity, dtype and root). Each call is then repeated for each arm of
``--scales`` (``κ``: ``theta_scales = κ``; ``κ@s``: also ``tree_share = s``)
on ``--noise-seeds`` noise seeds, the same for every arm (a different θ
grows a different tree, so the draws differ past the first split that
changes). Scores per column (not released; the real training rows):
``out``, the share of the non-missing rows outside the cap
(:attr:`FineHistogram.bounds`); ``ks``, the KS distance between the rows and
the kept histogram's CDF (each kept leaf's mass uniform in the log
coordinate ``t``, cut to the cap); ``leaves``, the number of kept leaves.
Summaries: mean ``out``, the share of columns with ``out`` above 2 % and 10 %,
mean and 90th percentile ``ks``, over all (table, ε, seed, column).
``--cap-columns`` instead refits the suite's whole pipelines with
``PRIVTREE_THETA_SCALES`` set to each value (:func:`cap_columns`).

Measured (``benchmarks/results/bench_privtree_theta.md``): ``θ > 0`` keeps
more rows inside the cap (κ = 8: 4.8 -> 2.9 % past it at ε = 1, 19.7 ->
12.7 % at 0.3), but in the suite's fits more columns come back collapsed
(κ = 4, 144 fits: 80 -> 109 silent columns): ``PRIVTREE_THETA_SCALES``
stays 0.
"""

from __future__ import annotations

import argparse
import pickle
import warnings

import numpy as np
import pandas as pd

from benchmarks.bench_suite import DELTA, context
from skdp_synth.mechanisms import NoiseSource
from skdp_synth.preprocessing import _column_domain
from skdp_synth.preprocessing._numeric_domain import _t, privtree_histogram


class _Stop(Exception):
    pass


def record(ctx, eps, seed):
    """The numeric columns' ``privtree_histogram`` calls of the suite's
    ``auto`` fit: ``[(column, values, epsilon, kwargs), ...]``."""
    from benchmarks.bench_mixed import categories
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    calls, current = [], {}
    real_spec = _column_domain._ColumnDomainMixin._private_spec
    real_hist = _column_domain.privtree_histogram

    def spec(self, col, *a, **k):
        current["col"] = col
        return real_spec(self, col, *a, **k)

    def hist(values, epsilon, source, **k):
        calls.append((current["col"], np.array(values), float(epsilon), dict(k)))
        return real_hist(values, epsilon, source, **k)

    def stop(self, *a, **k):
        raise _Stop

    enc = BooleanEncoder(
        categories=categories(ctx["train"], ctx["cats"]),
        epsilon="auto",
        random_state=seed,
        **ctx["options"],
    )
    rel = ProjectedGaussianRelease(
        epsilon=eps, delta=DELTA, random_state=seed, selection="auto"
    )
    saved = (
        _column_domain._ColumnDomainMixin._private_spec,
        _column_domain.privtree_histogram,
        ProjectedGaussianRelease.fit,
    )
    _column_domain._ColumnDomainMixin._private_spec = spec
    _column_domain.privtree_histogram = hist
    ProjectedGaussianRelease.fit = stop
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make_synthesis_pipeline(enc, rel).fit(ctx["train"])
    except _Stop:
        pass
    finally:
        (
            _column_domain._ColumnDomainMixin._private_spec,
            _column_domain.privtree_histogram,
            ProjectedGaussianRelease.fit,
        ) = saved
    return calls


def _source(seed):
    return NoiseSource(seed)


def score(h, values):
    """``(out, ks, leaves)`` of one fine histogram against the real rows."""
    x = values[~np.isnan(values)]
    lo, hi = h.bounds
    out = float(np.mean((x < lo) | (x >= hi))) if x.size else 0.0
    c = np.asarray(h.counts, float)
    kept = np.flatnonzero(c > 0)
    if kept.size == 0 or x.size == 0:
        return out, 1.0, 0
    e = np.asarray(h.edges, float)
    a = _t(np.maximum(e[:-1], lo))
    b = _t(np.minimum(e[1:], hi))
    w = np.where(c > 0, c, 0.0)
    w = w / w.sum()
    tx = np.sort(_t(x))
    # the histogram's CDF at each sorted row (uniform in t inside a leaf)
    frac = np.clip((tx[:, None] - a[None, :]) / np.maximum(b - a, 1e-12), 0, 1)
    frac = np.where((b - a)[None, :] > 0, frac, (tx[:, None] >= a[None, :]) * 1.0)
    cdf = frac[:, kept] @ w[kept]
    n = tx.size
    ks = float(
        max(
            np.max(np.abs(cdf - np.arange(1, n + 1) / n)),
            np.max(np.abs(cdf - np.arange(n) / n)),
        )
    )
    return out, ks, int(kept.size)


def _arm(text):
    """``"s"`` or ``"s@share"``: ``(theta_scales, tree_share or None)``."""
    s, _, share = text.partition("@")
    return float(s), (float(share) if share else None)


def run(tables, eps_list, seeds, arms, noise_seeds, out_path=None):
    """Each (table, ε, split seed)'s recorded calls, repeated for each arm on
    ``noise_seeds`` noise seeds (the same seeds for every arm)."""
    rows = []
    for name in tables:
        ctx = context(name)
        for eps in eps_list:
            for seed in range(seeds):
                for col, values, ce, kw in record(ctx, eps, seed):
                    for arm in arms:
                        s, share = _arm(arm)
                        k = dict(kw)
                        if share is not None:
                            k["tree_share"] = share
                        for ns in range(noise_seeds):
                            h = privtree_histogram(
                                values,
                                ce,
                                _source(1000 * seed + ns),
                                theta_scales=s,
                                **k,
                            )
                            o, ks, nl = score(h, values)
                            rows.append(
                                {
                                    "table": name,
                                    "eps": eps,
                                    "seed": seed,
                                    "noise": ns,
                                    "col": str(col),
                                    "col_eps": ce,
                                    "scale": arm,
                                    "out": o,
                                    "ks": ks,
                                    "leaves": nl,
                                }
                            )
                print(name, eps, seed, "done", flush=True)
    df = pd.DataFrame(rows)
    if out_path:
        with open(out_path, "wb") as f:
            pickle.dump(df, f)
    return df


def summary(df):
    g = df.groupby(["eps", "scale"])
    t = pd.DataFrame(
        {
            "mean out %": g["out"].mean() * 100,
            "cols out>2%": g["out"].apply(lambda s: (s > 0.02).mean() * 100),
            "cols out>10%": g["out"].apply(lambda s: (s > 0.10).mean() * 100),
            "mean ks": g["ks"].mean(),
            "p90 ks": g["ks"].quantile(0.9),
            "leaves": g["leaves"].mean(),
        }
    )
    return t.round(3)


def cap_columns(tables, scales, seeds=5):
    """The suite's own fits (:func:`benchmarks.bench_trunc_tail.columns`: the
    pipeline's released fine histogram, the rows' std ratio, the real rows
    past the cap and the clipped real std ratio) with
    :data:`PRIVTREE_THETA_SCALES` set to each of ``scales``; per scale the
    columns collapsed (std ratio < 0.5, no warning), the real rows past the
    cap, and how many of the collapsed would be under 0.5 even decoded
    exactly inside the cap."""
    from benchmarks.bench_trunc_tail import columns
    from skdp_synth.preprocessing import _numeric_domain as nd

    saved = nd.PRIVTREE_THETA_SCALES
    out = {}
    try:
        for k in scales:
            nd.PRIVTREE_THETA_SCALES = float(k)
            rows = []
            for name in tables:
                ctx = context(name)
                for eps in (1.0, 0.3):
                    for seed in range(seeds):
                        rows += columns(name, eps, seed, ctx)
            d = pd.DataFrame(rows)
            coll = (d["std"] < 0.5) & ~d["named"]
            out[k] = {
                "columns": len(d),
                "collapsed": int(coll.sum()),
                "past the cap %": 100 * d["beyond"].mean(),
                "collapsed: past the cap %": 100 * d.loc[coll, "beyond"].mean(),
                "collapsed, clipped real < 0.5": int(
                    (d.loc[coll, "clipped"] < 0.5).sum()
                ),
            }
    finally:
        nd.PRIVTREE_THETA_SCALES = saved
    return pd.DataFrame(out).T


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", default="credit,loans,acs12,attrition,hmda,cps1988")
    p.add_argument("--eps", default="1,0.3")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--scales", default="0,1,2,4,8")
    p.add_argument("--noise-seeds", type=int, default=1)
    p.add_argument("--out", default=None)
    p.add_argument("--load", default=None)
    p.add_argument(
        "--cap-columns",
        action="store_true",
        help="the suite's fits per --scales value (cap_columns)",
    )
    a = p.parse_args(argv)
    if a.cap_columns:
        print(
            cap_columns(a.tables.split(","), a.scales.split(","), a.seeds).to_string()
        )
        return None
    if a.load:
        with open(a.load, "rb") as f:
            df = pickle.load(f)
    else:
        df = run(
            a.tables.split(","),
            [float(e) for e in a.eps.split(",")],
            a.seeds,
            a.scales.split(","),
            a.noise_seeds,
            a.out,
        )
    print(summary(df).to_string())
    return df


if __name__ == "__main__":
    main()
