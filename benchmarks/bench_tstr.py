"""Where a negative train-on-synthetic R² comes from, per suite table.

Run: ``python -m benchmarks.bench_tstr TABLE --eps 1,0.3 --seeds 2
[--methods auto,auto-target]`` (tables, split, encoder and release as in
:mod:`benchmarks.bench_suite`; ``auto-target`` declares the table's model
target as ``ProjectedGaussianRelease(target=)``).

Per fit, for a numeric model target: the synthetic target's spread against
the training rows' (std ratio, quantiles, min / max); the std ratio of every
numeric feature outside [0.5, 2]; the suite's train-on-synthetic R²
(:func:`benchmarks.bench_suite.tstr`) beside the same score after

* the synthetic target clipped to the training rows' range (exploding
  target values),
* the synthetic rows whose target is above the training rows' maximum
  dropped,
* (before) the rank correlation of the target with the numeric features
  most correlated with it in the training rows, synthetic / real;
* the synthetic target shuffled (what the rows' dependence on the target is
  worth: R² at or above the unshuffled one says it is lost or wrong),
* every synthetic target value replaced by the training rows' mean inside
  its released coarse bin (the encoder's public bin edges): the bin shares
  the release drew kept, the placement inside the bins made exact -- an
  oracle (it reads the real rows), to split the loss between the bin shares
  and the decoding inside the bins;

and per released bin the synthetic and real shares and means.

``--floor`` adds what separates the noise from the model class:

* per table, the **null floor**: the suite's model fitted on the real
  training rows with the target permuted among them (three permutations,
  the mean) -- exactly independent features and target, the real marginals
  -- and scored on the held-out rows. The suite's regressor
  (``HistGradientBoostingRegressor``, no early stopping under 10,000
  training rows) fits 100 boosting rounds to whatever it is given, so its
  R² on independent columns is below 0 by the variance of its
  predictions;
* per fit, the R² of a constant prediction at the synthetic target's mean
  (the mean's shift alone), the numeric features clipped to the training
  rows' range (exploding features), both the features and the target
  clipped, and the same three scores (synthetic, real-trained, null floor)
  with the regressor's early stopping on (``early_stopping=True``: 10 % of
  the training rows held out, stop after 10 rounds without gain) -- a
  robust model beside the suite's, not the suite's figure.

Not private: a diagnostic that reads the real rows.
"""

from __future__ import annotations

import argparse
import contextlib
import warnings
from unittest import mock

import numpy as np
import pandas as pd

from benchmarks import bench_suite as B


def _fit(ctx, eps, seed, method):
    from benchmarks.bench_mixed import categories
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    train = ctx["train"]
    enc = BooleanEncoder(
        categories=categories(train, ctx["cats"]),
        epsilon="auto",
        random_state=seed,
        **ctx["options"],
    )
    rel = ProjectedGaussianRelease(
        epsilon=eps,
        delta=B.DELTA,
        random_state=seed,
        target=ctx["target"] if method == "auto-target" else None,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe = make_synthesis_pipeline(enc, rel).fit(train)
        syn = pd.DataFrame(pipe.sample(len(train), random_state=seed + 1))
    named = sorted(
        {c for w in caught for c in B._named(str(w.message), [ctx["target"]])}
    )
    return pipe, syn, named


def _q(x):
    return (
        f"sd {x.std():.4g} q01 {x.quantile(0.01):.4g} q50 {x.median():.4g} "
        f"q99 {x.quantile(0.99):.4g} min {x.min():.4g} max {x.max():.4g}"
    )


def _bins(pipe, target):
    enc = pipe[0]
    spec = enc.specs_[list(enc.columns_).index(target)]
    return [float(v) for v in spec.levels]


@contextlib.contextmanager
def early_stopping():
    """The suite's regressor with ``early_stopping=True`` (everything else as
    :func:`skdp_synth.metrics._model.model_task` builds it)."""
    import sklearn.ensemble as E

    cls = E.HistGradientBoostingRegressor

    def make(**kw):
        return cls(early_stopping=True, **kw)

    with mock.patch.object(E, "HistGradientBoostingRegressor", make):
        yield


def null_floor(ctx, n=3):
    """Mean R² of the suite's model fitted on the training rows with the
    target permuted (``n`` permutations), scored on the held-out rows."""
    tr, te, tg = ctx["train"], ctx["test"], ctx["target"]
    out = []
    for k in range(n):
        p = tr.copy()
        p[tg] = np.random.default_rng(k).permutation(p[tg].to_numpy())
        out.append(B.tstr(p, te, tr, tg)[0])
    return float(np.mean(out))


def _const(ys, te, tg):
    """R² on the held-out rows of a constant at the synthetic mean."""
    y = te[tg].astype(float).dropna()
    return float(1 - ((y - ys.mean()) ** 2).mean() / ((y - y.mean()) ** 2).mean())


def _clip_features(syn, tr, ctx):
    out = syn.copy()
    for c in tr.columns:
        if c in ctx["cats"] or c == ctx["target"]:
            continue
        x = tr[c].astype(float)
        if pd.api.types.is_numeric_dtype(x):
            a = pd.to_numeric(out[c], errors="coerce").astype(float)
            out[c] = a.clip(x.min(), x.max())
    return out


def one(ctx, eps, seed, method, floor=None):
    tr, te, tg = ctx["train"], ctx["test"], ctx["target"]
    pipe, syn, named = _fit(ctx, eps, seed, method)
    ys = pd.to_numeric(syn[tg], errors="coerce").astype(float)
    yr = tr[tg].astype(float)
    print(f"--- {method} eps={eps:g} seed={seed} chose={pipe[-1].selection_}")
    print(f"  warnings naming {tg}: {named or 'none'}")
    print(f"  synthetic {tg}: std ratio {ys.std() / yr.std():.3f}, {_q(ys.dropna())}")
    for c in tr.columns:
        if c in ctx["cats"] or c == tg:
            continue
        a = pd.to_numeric(syn[c], errors="coerce").astype(float)
        ratio = a.std() / tr[c].astype(float).std()
        if not 0.5 <= ratio <= 2:
            print(f"  feature {c}: std ratio {ratio:.2f}")
    num = [c for c in tr.columns if c not in ctx["cats"]]
    if len(num) > 1:  # rank correlation with the target, synthetic / real
        r_s = syn[num].apply(pd.to_numeric, errors="coerce").astype(float)
        rho_s = r_s.corr(method="spearman")[tg].drop(tg)
        rho_r = tr[num].astype(float).corr(method="spearman")[tg].drop(tg)
        top = rho_r.abs().sort_values(ascending=False).index[:4]
        pairs = ", ".join(f"{c} {rho_s[c]:.2f} / {rho_r[c]:.2f}" for c in top)
        print(f"  Spearman with {tg}, synthetic / real: {pairs}")
    base, real, _ = B.tstr(syn, te, tr, tg)
    lo, hi = yr.min(), yr.max()
    clipped = syn.copy()
    clipped[tg] = ys.clip(lo, hi)
    dropped = syn[(ys <= hi) | ys.isna()]
    shuffled = syn.copy()
    shuffled[tg] = np.random.default_rng(0).permutation(shuffled[tg].to_numpy())
    edges = _bins(pipe, tg)
    oracle = syn.copy()
    yo = ys.copy()
    rows = []
    for k, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
        last = k == len(edges) - 2
        s_in = (ys >= a) & ((ys <= b) if last else (ys < b))
        r_in = (yr >= a) & ((yr <= b) if last else (yr < b))
        if r_in.any():
            yo[s_in] = yr[r_in].mean()
        share_s = s_in.sum() / ys.notna().sum()
        share_r = r_in.sum() / yr.notna().sum()
        rows.append(
            f"  [{a:.6g}, {b:.6g}{']' if last else ')'}: share synthetic "
            f"{share_s:.3f} real {share_r:.3f}"
            f" | mean synthetic {ys[s_in].mean():.5g} real {yr[r_in].mean():.5g}"
        )
    oracle[tg] = yo
    print(
        f"  R2 {base:.3f} | target clipped to the real range "
        f"{B.tstr(clipped, te, tr, tg)[0]:.3f} | rows above the real max "
        f"dropped ({int((ys > hi).sum())}) {B.tstr(dropped, te, tr, tg)[0]:.3f}"
        f" | target shuffled {B.tstr(shuffled, te, tr, tg)[0]:.3f} | real bin "
        f"means (oracle) {B.tstr(oracle, te, tr, tg)[0]:.3f} | real-trained "
        f"{real:.3f}"
    )
    print("\n".join(rows))
    if floor is None:
        return
    fclip = _clip_features(syn, tr, ctx)
    both = fclip.copy()
    both[tg] = ys.clip(lo, hi)
    with early_stopping():
        es_syn, es_real, _ = B.tstr(syn, te, tr, tg)
    print(
        f"  floor: constant at the synthetic mean {_const(ys.dropna(), te, tg):.3f}"
        f" | features clipped {B.tstr(fclip, te, tr, tg)[0]:.3f} | features and"
        f" target clipped {B.tstr(both, te, tr, tg)[0]:.3f} | null floor "
        f"{floor[0]:.3f} | early stopping: R2 {es_syn:.3f} real-trained "
        f"{es_real:.3f} null floor {floor[1]:.3f}"
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table")
    ap.add_argument("--eps", default="1,0.3")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--methods", default="auto,auto-target")
    ap.add_argument(
        "--floor", action="store_true", help="null floor, clipping, early stopping"
    )
    args = ap.parse_args(argv)
    ctx = B.context(args.table)
    tg = ctx["target"]
    yr = ctx["train"][tg]
    if tg in ctx["cats"] or not pd.api.types.is_numeric_dtype(yr):
        raise SystemExit(f"{args.table}: the target {tg!r} is not numeric")
    print(f"{args.table}: target {tg}, training rows {_q(yr.astype(float).dropna())}")
    floor = None
    if args.floor:
        with early_stopping():
            es = null_floor(ctx)
        floor = (null_floor(ctx), es)
        print(
            f"null floor (target permuted in the training rows): {floor[0]:.3f};"
            f" with early stopping {floor[1]:.3f}"
        )
    for method in args.methods.split(","):
        for eps in (float(e) for e in args.eps.split(",")):
            for seed in range(args.seeds):
                one(ctx, eps, seed, method, floor)


if __name__ == "__main__":
    main()
