"""Where the silent fits of ``benchmarks/bench_suite.py`` lose (or blow up)
a numeric column's spread, and rules patched in against them (``run-strict``
is now the default).

``diagnose``: for every silent column-fit (std ratio outside [0.5, 2], no
warning naming the column; :func:`benchmarks.bench_suite.silent`) of the
named tables in a ``bench_suite`` cache, the same ``auto`` fit is run again
(:func:`benchmarks.bench_trunc_tail.fit`) and one markdown row printed: the
plan, the private cap, the training rows' std ratio once clipped to the cap
(what the cap alone costs), the training rows past the cap, the training
rows in one-integer bins the pipeline dropped under their support test
(``integer_bins_dropped_``), the highest coarse bin the model's rows use and
the rows' maximum, and a label:

* ``rows far past the real maximum``: std ratio above 2;
* ``cap``: the clipped training rows are under 0.5 of the held-out std;
* ``dropped one-integer bins``: 2 % or more of the training rows in them;
* ``top bin decoded in its lower half``: the rows stop in the lower half of
  the highest bin they use (a bin wider than one);
* ``other``.

The real rows only score the release; nothing here feeds back into a fit.

``suite --arm ARM -- ARGS``: ``bench_suite`` (``ARGS``) with one rule
patched in, to a separate cache:

* ``run-strict``: ``_pipeline_levels.RUN_SUPPORT_Z = 1.0`` with the strict
  bins (tentative, tail parts) in runs too: a run of consecutive
  one-integer bins, each under its own test, kept whole where its
  estimates sum to one sd of their noise. The library's default since it
  was measured here (the same rows as no arm);
* ``run-off``: ``RUN_SUPPORT_Z = None``, the rule before: every
  one-integer bin tested alone;
* ``bin-run``: in ``_spread.release_pieces`` a bin's release estimate
  confirms only the kept leaves in the same run (no emptied stretch wider
  than ``GAP_T``) as the bin's heaviest kept leaf (a warning rule: the rows
  are the same). It replaces the library's rule, which confirms a run
  where the estimate exceeds the other runs' counts in the bin by
  ``CONFIRMED_Z`` sds of the difference (``_spread._seen_by_estimate``).

``count-tail --tables T --seeds N``: every ``auto`` fit of the tables (ε 1
and 0.3, seeds ``0..N-1``) run again, and for each numeric column the
released excess of its top bin over the domain's kept mass, its noise and
the column's released total (what ``_count_tail.cut_count_tail_reason``
compares, recorded when it is called), then per ``(COUNT_TAIL_SHARE,
COUNT_TAIL_Z)`` of a grid: the silent column-fits the rule would name, the
columns within [0.5, 2] it would newly name and the silent fits left.

``zeros --table T --column C --seeds N``: per ``auto`` fit (ε 1 and 0.3,
seeds ``0..N-1``) column ``C``'s private cap, the share of exact zeros in
the rows and in the training rows, and whether a warning names it: a
zero-inflated column whose lower cap starts above 0 has no zero left.

``compare A B --tables T``: silent fits and column-fits, in-band columns
named, mean KS and TV1 per table and ε of the ``auto`` fits in caches A and
B, and the fits whose silent status differs
(:func:`benchmarks.bench_suite_compare.compare`).

    PYTHONPATH=. python -m benchmarks.bench_silent_mechanisms diagnose \\
        --cache C.jsonl --tables credit_card,nmes1988,workinghours
    PYTHONPATH=. python -m benchmarks.bench_silent_mechanisms suite \\
        --arm run-strict -- --half tune --eps 1,0.3 --seeds 10 \\
        --methods auto --light --cache ARM.jsonl
    PYTHONPATH=. python -m benchmarks.bench_silent_mechanisms compare \\
        C.jsonl ARM.jsonl --tables credit,loans,...

Results: ``benchmarks/results/bench_suite.md`` (section "Six more mixed
tables").
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd


def diagnose(cache, tables):
    from benchmarks.bench_suite import (
        context,
        numeric_scores,
        read_cache,
        silent,
        weight,
    )
    from benchmarks.bench_trunc_tail import fit

    lines, _, _, _ = silent(read_cache(cache), tables, oww=weight())
    print(
        "| table | ε | seed | plan | column | std ratio | training rows clipped"
        " to the cap | cap | rows past the cap | rows in dropped one-integer bins"
        " | highest bin used | rows' max | mechanism |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ctxs = {}
    for line in lines:
        head, rest = line.split(": ", 1)
        t, e, s = head.split(" ")
        eps, seed = float(e[4:]), int(s[5:])
        cols = [p.split(" ")[0] for p in rest.split("; ") if " std ratio " in p]
        if not cols:
            continue
        ctx = ctxs.setdefault(t, context(t))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe, syn, _ = fit(ctx, eps, seed)
        final = pipe[-1]
        names = [str(n) for n in final.blocks_.names]
        std = numeric_scores(syn, ctx["test"], ctx["cats"])["std"]
        for c in cols:
            print(_row(t, eps, seed, final, pipe, ctx, syn, std, c, names), flush=True)


def _row(t, eps, seed, final, pipe, ctx, syn, std, c, names):
    spec = next(sp for sp in pipe[0].specs_ if sp.name == c)
    real = pd.to_numeric(ctx["train"][c], errors="coerce").dropna().to_numpy(float)
    test = pd.to_numeric(ctx["test"][c], errors="coerce").dropna().to_numpy(float)
    lo, hi = spec.fine.bounds
    clip = np.clip(real, lo, hi).std() / test.std()
    past = np.mean((real < lo) | (real >= hi))
    edges = np.asarray(spec.levels, float)
    k, j = spec.n_levels, names.index(c)
    inside = np.histogram(np.clip(real, edges[0], edges[-1] - 1e-9), edges)[0]
    used = np.bincount(final._model_rows[:, j].astype(int), minlength=k + 1)[:k]
    dropped = {float(v) for v in pipe.integer_bins_dropped_.get(c, [])}
    lost = sum(
        int(inside[b]) for b in range(k) if used[b] == 0 and float(edges[b]) in dropped
    )
    rows = pd.to_numeric(syn[c], errors="coerce").dropna().to_numpy(float)
    top = max(b for b in range(k) if used[b] > 0)
    a, b = edges[top], edges[top + 1]
    if std[c] > 2:
        label = "rows far past the real maximum"
    elif clip < 0.5:
        label = "cap"
    elif lost >= 0.02 * len(real):
        label = "dropped one-integer bins"
    elif rows.max() < a + 0.5 * (b - a) and b - a > 1:
        label = "top bin decoded in its lower half"
    else:
        label = "other"
    if clip < 0.5 and std[c] <= 2 and lost >= 0.02 * len(real):
        label += " + dropped one-integer bins"
    return (
        f"| {t} | {eps:g} | {seed} | {final.selection_} | {c} | {std[c]:.2f} "
        f"| {clip:.2f} | [{lo:.4g}, {hi:.4g}) | {100 * past:.1f} % "
        f"| {lost} ({100 * lost / len(real):.1f} %) | [{a:.4g}, {b:.4g}) "
        f"| {rows.max():.4g} | {label} |"
    )


def _patch(arm):
    import skdp_synth._pipeline_levels as levels
    import skdp_synth.preprocessing._spread as spread

    if arm == "run-strict":
        levels.RUN_SUPPORT_Z = 1.0  # the default
    elif arm == "run-off":
        levels.RUN_SUPPORT_Z = None
    elif arm == "bin-run":
        spread._seen_by_estimate = _heaviest_run_seen(spread)
    else:
        raise ValueError(arm)


def _heaviest_run_seen(spread):
    """``_spread._seen_by_estimate`` with a bin's estimate confirming only
    the kept leaves in the run of the bin's heaviest kept leaf (the rule the
    library's run-excess test replaced; both name the same columns on the
    TUNE half at seeds 0-9)."""

    def seen(hist, runs, w, est, sd):
        z = spread.CONFIRMED_Z
        main = runs == runs[np.argmax(w)]
        return (est >= z * sd) & (w <= est + z * sd) & main

    return seen


def count_tail(tables, seeds):
    import skdp_synth.preprocessing._decoding as decoding
    from benchmarks.bench_trunc_tail import each_fit
    from skdp_synth.preprocessing._fences import top_bin_excess

    seen, rule = {}, decoding.cut_count_tail_reason

    def recorded(spec, estimates, domain=None):
        k = spec.n_levels
        if estimates is not None and len(estimates) >= k:
            if not any(v is None for v in estimates[:k]):
                top = top_bin_excess(spec, estimates, domain)
                if top is not None:
                    total = sum(max(float(e), 0.0) for e, _ in estimates[:k])
                    seen[str(spec.name)] = (top[6], top[5], total)
        return rule(spec, estimates, domain)

    decoding.cut_count_tail_reason = recorded
    rows = []
    for t, eps, seed, std, named in each_fit(tables, seeds):
        for c, s in std.items():
            rows.append((t, eps, seed, s, c in named, seen.get(c)))
        seen.clear()
    decoding.cut_count_tail_reason = rule
    for share in (0.2, 0.15, 0.1, 0.05):
        for z in (3.0, 2.5, 2.0):
            print(f"share {share} z {z}:", _tail_counts(rows, share, z))


def _tail_counts(rows, share, z):
    def fires(tail):
        return tail is not None and tail[0] > z * tail[1] and tail[0] > share * tail[2]

    silent = [r for r in rows if not 0.5 <= r[3] <= 2 and not r[4]]
    fits = {}
    for t, e, s, v, named, tail in rows:
        bad = not 0.5 <= v <= 2 and not named and not fires(tail)
        fits[(t, e, s)] = fits.get((t, e, s), False) or bad
    return (
        f"silent column-fits named {sum(fires(r[5]) for r in silent)} of"
        f" {len(silent)}, in-band newly named"
        f" {sum(0.5 <= r[3] <= 2 and not r[4] and fires(r[5]) for r in rows)},"
        f" silent fits {sum(fits.values())} of {len(fits)}"
    )


def zeros(table, column, seeds):
    from benchmarks.bench_suite import context
    from benchmarks.bench_trunc_tail import fit

    ctx = context(table)
    real = pd.to_numeric(ctx["train"][column], errors="coerce").dropna()
    print(f"{table} {column}: training rows {np.mean(real == 0):.2f} zeros")
    for eps in (1.0, 0.3):
        for seed in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pipe, syn, named = fit(ctx, eps, seed)
            spec = next(sp for sp in pipe[0].specs_ if sp.name == column)
            lo, hi = spec.fine.bounds
            x = pd.to_numeric(syn[column], errors="coerce").dropna()
            said = "named" if column in named else "not named"
            print(
                f"eps={eps:g} seed={seed}: cap [{lo:.4g}, {hi:.4g}), rows"
                f" {np.mean(x == 0):.2f} zeros, {said}"
            )


def _stats(cache, tables):
    from benchmarks.bench_suite import read_cache, silent, weight

    done = read_cache(cache)
    lines, count, fits, _ = silent(done, tables, oww=weight())
    named_in_band, ks, tv1 = 0, {}, {}
    for (t, e, _, r, _), rec in done.items():
        if t not in tables or r != "auto" or e not in (0.3, 1.0) or "num" not in rec:
            continue
        named = {c for w in rec["warnings"] for c in w["columns"]}
        named_in_band += sum(
            1 for c, v in rec["num"]["std"].items() if 0.5 <= v <= 2 and c in named
        )
        ks.setdefault((t, e), []).extend(rec["num"]["ks"].values())
        tv1.setdefault((t, e), []).append(rec["tv1"])
    columns = sum(line.count(";") + 1 for line in lines)
    return count, fits, columns, named_in_band, ks, tv1, lines


def compare(a, b, tables):
    A, B = _stats(a, tables), _stats(b, tables)
    print(
        f"silent fits {A[0]}/{A[1]} -> {B[0]}/{B[1]}; silent column-fits {A[2]} ->"
        f" {B[2]}; in-band columns named {A[3]} -> {B[3]}"
    )
    for key in sorted(A[4]):
        ka, kb = np.mean(A[4][key]), np.mean(B[4].get(key, [np.nan]))
        ta, tb = np.mean(A[5][key]), np.mean(B[5].get(key, [np.nan]))
        print(
            f"  {key[0]} eps={key[1]:g}: mean KS {ka:.4f} -> {kb:.4f}"
            f" ({100 * (kb / ka - 1):+.1f} %), TV1 {ta:.4f} -> {tb:.4f}"
        )
    # by fit, not by line: a silent fit whose ratio moved is not two changes
    from benchmarks.bench_suite_compare import compare as side_by_side

    print("silent status changed (A -> B):")
    for (t, e, seed), before, after in side_by_side(a, b, tables=set(tables))["silent"]:
        print(f"  {t} eps={e:g} seed={seed}: {before[0]} -> {after[0]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("diagnose")
    d.add_argument("--cache", required=True)
    d.add_argument("--tables", required=True)
    s = sub.add_parser("suite")
    s.add_argument("--arm", required=True, choices=["run-strict", "run-off", "bin-run"])
    s.add_argument("rest", nargs=argparse.REMAINDER)
    t = sub.add_parser("count-tail")
    t.add_argument("--tables", required=True)
    t.add_argument("--seeds", type=int, default=10)
    z = sub.add_parser("zeros")
    z.add_argument("--table", required=True)
    z.add_argument("--column", required=True)
    z.add_argument("--seeds", type=int, default=10)
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--tables", required=True)
    args = ap.parse_args(argv)
    if args.cmd == "diagnose":
        diagnose(args.cache, args.tables.split(","))
    elif args.cmd == "suite":
        from benchmarks import bench_suite

        _patch(args.arm)
        rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
        bench_suite.main(rest)
    elif args.cmd == "zeros":
        zeros(args.table, args.column, args.seeds)
    elif args.cmd == "count-tail":
        count_tail(args.tables.split(","), args.seeds)
    else:
        compare(args.a, args.b, args.tables.split(","))


if __name__ == "__main__":
    main()
