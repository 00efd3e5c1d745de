"""Two runs of ``benchmarks/bench_suite.py`` side by side: what a rule change
moved, in the row every section of ``benchmarks/results/bench_suite.md``
reports.

    PYTHONPATH=. python -m benchmarks.bench_suite_compare BASE_A.jsonl,BASE_B.jsonl \\
        ARM_A.jsonl,ARM_B.jsonl [--eps 0.3,1] [--tables t1,t2]

Each side is one run's caches (comma-separated, as ``--cache`` takes them),
the same tables, ε and seeds run with and without the change. Printed:

* the row: fits moved (TV1 not the same), mean TV1, TV2 and KS per ε (KS:
  the mean over fits of each fit's mean over its numeric columns), mean
  train-on-synthetic where the run scored it, silent fits and those not
  explained by unseen rows (:func:`benchmarks.bench_suite.silent_fits`), and
  numeric column-fits with a std ratio over 10;
* per table and ε with a fit moved: how many, and TV1 and mean KS as a change
  in percent;
* each fit whose silent status changed (silent, explained by unseen rows,
  not silent) with its reasons on both sides;
* each column-fit whose std ratio crossed 10, or moved by more than a factor
  2 with one side past 2.

Only the ``auto`` fits both sides hold are compared. Reads the caches; runs
nothing.
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.bench_suite import read_cache, silent_fits, weight

#: A std ratio past this counts as an explosion in the row's last column.
EXPLODED = 10.0


def _fits(done, eps_list, tables):
    """``{(table, eps, seed): record}`` of the finished ``auto`` fits."""
    oww = weight()
    return {
        k[:3]: r
        for k, r in done.items()
        if k[3] == "auto"
        and k[4] == oww
        and k[1] in eps_list
        and (tables is None or k[0] in tables)
        and not r.get("dnf")
    }


def _mean_ks(rec):
    ks = list(rec.get("num", {}).get("ks", {}).values())
    return float(np.mean(ks)) if ks else np.nan


def _mean(recs, get):
    vals = [get(r) for r in recs]
    vals = [v for v in vals if v is not None and np.isfinite(v)]
    return float(np.mean(vals)) if vals else np.nan


def summary(done, fits, eps_list):
    """The row's figures of one side over ``fits`` (keys): per ε the mean
    TV1, TV2, KS and train-on-synthetic, then the silent fits, those not
    explained by unseen rows, and the std ratios past :data:`EXPLODED`."""
    recs = _fits(done, eps_list, None)
    out = {}
    for e in eps_list:
        rs = [recs[k] for k in fits if k[1] == e]
        out[e] = {
            "tv1": _mean(rs, lambda r: r.get("tv1")),
            "tv2": _mean(rs, lambda r: r.get("tv2")),
            "ks": _mean(rs, _mean_ks),
            "tstr": _mean(rs, lambda r: r.get("tstr")),
        }
    tables = sorted({k[0] for k in fits})
    per_fit, _ = silent_fits(done, tables, tuple(eps_list), weight())
    per_fit = {k: v for k, v in per_fit.items() if k in fits}
    exploded = sum(
        1
        for k in fits
        for s in recs[k].get("num", {}).get("std", {}).values()
        if s > EXPLODED
    )
    return out, per_fit, exploded


def compare(a, b, eps_list=(0.3, 1.0), tables=None):
    """The comparison of caches ``a`` and ``b`` (each comma-separated), as a
    dict: ``moved`` (fit keys), ``rows`` (:func:`summary` of each side),
    ``tables`` (per table and ε: fits moved, TV1 and KS change in percent),
    ``silent`` (fits whose status changed: key, before, after) and ``std``
    (column-fits crossing :data:`EXPLODED` or moving by more than 2x)."""
    da, db = read_cache(a), read_cache(b)
    fa, fb = _fits(da, eps_list, tables), _fits(db, eps_list, tables)
    common = sorted(set(fa) & set(fb))
    moved = [k for k in common if fa[k].get("tv1") != fb[k].get("tv1")]
    moved_set = set(moved)
    rows = (summary(da, common, eps_list), summary(db, common, eps_list))
    per_table = {}
    for t, e in sorted({k[:2] for k in common}):
        keys = [k for k in common if k[:2] == (t, e)]
        n = sum(1 for k in keys if k in moved_set)
        if not n:
            continue
        tv_a = _mean([fa[k] for k in keys], lambda r: r.get("tv1"))
        tv_b = _mean([fb[k] for k in keys], lambda r: r.get("tv1"))
        ks_a = _mean([fa[k] for k in keys], _mean_ks)
        ks_b = _mean([fb[k] for k in keys], _mean_ks)
        per_table[(t, e)] = (n, 100 * (tv_b / tv_a - 1), 100 * (ks_b / ks_a - 1))

    def status(per_fit, k):
        if k not in per_fit:
            return "not silent", []
        explained, bad = per_fit[k]
        return ("unseen rows" if explained else "silent"), bad

    silent = []
    for k in common:
        before, after = status(rows[0][1], k), status(rows[1][1], k)
        if before[0] != after[0]:
            silent.append((k, before, after))
    std = []
    for k in common:
        sa, sb = (
            fa[k].get("num", {}).get("std", {}),
            fb[k].get("num", {}).get("std", {}),
        )
        for c in sorted(set(sa) & set(sb)):
            x, y = sa[c], sb[c]
            if not (np.isfinite(x) and np.isfinite(y)) or max(x, y) <= 2.0:
                continue
            crossed = (x > EXPLODED) != (y > EXPLODED)
            if crossed or max(x, y) > 2.0 * max(min(x, y), 1e-12):
                std.append((k, c, x, y))
    return {
        "moved": moved,
        "rows": rows,
        "tables": per_table,
        "silent": silent,
        "std": std,
    }


def _row(label, side, eps_list, moved=""):
    figures, per_fit, exploded = side
    unexplained = sum(1 for explained, _ in per_fit.values() if not explained)

    def cells(field):
        return " / ".join(f"{figures[e][field]:.4f}".lstrip("0") for e in eps_list)

    tstr = (
        cells("tstr") if any(np.isfinite(figures[e]["tstr"]) for e in eps_list) else ""
    )
    return (
        f"| {label} | {moved} | {cells('tv1')} | {cells('tv2')} | {cells('ks')} | "
        f"{tstr} | {len(per_fit)} ({unexplained}) | {exploded} |"
    )


def report(result, eps_list=(0.3, 1.0)):
    """The printed comparison (module docstring)."""
    eps = " / ".join(f"{e:g}" for e in eps_list)
    lines = [
        f"| | fits moved | TV1 ε = {eps} | TV2 | mean KS | TSTR | "
        "silent fits (not explained by unseen rows) | std ratio > 10 |",
        "|---|---|---|---|---|---|---|---|",
        _row("A", result["rows"][0], eps_list),
        _row("B", result["rows"][1], eps_list, str(len(result["moved"]))),
        "",
        "Per table and ε (fits moved, TV1 and mean KS change):",
    ]
    for (t, e), (m, tv, ks) in result["tables"].items():
        lines.append(f"  {t} ε = {e:g}: {m} moved, TV1 {tv:+.1f} %, KS {ks:+.1f} %")
    lines.append("Silent status changed (A -> B):")
    for (t, e, seed), (sa, ra), (sb, rb) in result["silent"]:
        lines.append(
            f"  {t} ε = {e:g} seed {seed}: {sa} -> {sb}; A: {'; '.join(ra) or '-'}"
        )
        lines.append(f"      B: {'; '.join(rb) or '-'}")
    lines.append(
        f"Std ratios crossing {EXPLODED:g} or moving by more than 2x (A -> B):"
    )
    for (t, e, seed), c, x, y in result["std"]:
        lines.append(f"  {t} ε = {e:g} seed {seed} {c}: {x:.3g} -> {y:.3g}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="the baseline run's caches, comma-separated")
    ap.add_argument("b", help="the changed run's caches, comma-separated")
    ap.add_argument("--eps", default="0.3,1")
    ap.add_argument("--tables", default=None)
    args = ap.parse_args(argv)
    eps_list = tuple(float(e) for e in args.eps.split(","))
    tables = None if args.tables is None else set(args.tables.split(","))
    print(report(compare(args.a, args.b, eps_list, tables), eps_list))


if __name__ == "__main__":
    main()
