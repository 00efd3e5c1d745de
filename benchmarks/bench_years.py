"""Integer year columns (``year_built`` 1872-2010, ``year_remod``
1950-2010) of the synthetic ``area`` table
(``bench_tail_past_cap.synthetic_table``) through the ``auto`` pipeline of
``benchmarks/bench_suite.py`` (``fit_ours``, ``--light``), with an integer
column's body leaf cut past the depth limit
(``skdp_synth.preprocessing._wide_leaves.INT_SOLE_SHARE``, ``on``) and
without (``off``: ``None``), in one process: per ε and arm the table's
column-fits with a std ratio (synthetic / held-out) above 10, those out of
``[0.5, 2]`` not named by a warning, the mean KS, and per year column the
median / max std ratio, fits above 10, unnamed ones out of ``[0.5, 2]`` and
mean KS; then every year fit that changed (``*``: named). ``--detail
SEEDS``: for those seeds (ε the first of ``--eps``, ``on``) the kept leaves,
coarse bins, the bins the release dropped and the rows per bin.

    PYTHONPATH=. python -m benchmarks.bench_years --eps 0.3,1 --seeds 20
    PYTHONPATH=. python -m benchmarks.bench_years --eps 0.3 --detail 1,4,11

Results: ``benchmarks/results/bench_narrow_floats.md``.
"""

from __future__ import annotations

import argparse

import numpy as np

YEARS = ("year_built", "year_remod")


def _fit(eps, seed, share, detail=False):
    from benchmarks.bench_suite import fit_ours, numeric_scores
    from benchmarks.bench_tail_past_cap import _synthetic_context
    from skdp_synth.preprocessing import _wide_leaves

    ctx = _synthetic_context("area")
    saved = _wide_leaves.INT_SOLE_SHARE
    _wide_leaves.INT_SOLE_SHARE = share
    try:
        syn, info = fit_ours(
            ctx["train"], ctx["cats"], ctx["options"], eps, seed, "auto", keep_pipe=True
        )
    finally:
        _wide_leaves.INT_SOLE_SHARE = saved
    sc = numeric_scores(syn, ctx["test"], ctx["cats"])
    named = {c for w in info["warnings"] for c in w["columns"]}
    if detail:
        _print_detail(info["pipe"], syn, ctx["test"], seed)
    return sc["std"], sc["ks"], named


def _print_detail(pipe, syn, test, seed):
    dropped = getattr(pipe, "integer_bins_dropped_", {})
    for spec in pipe[0].specs_:
        if spec.name not in YEARS:
            continue
        h = spec.fine
        e, c = np.asarray(h.edges), np.asarray(h.counts)
        leaves = [
            (float(e[j]), float(e[j + 1]), round(float(c[j]), 1))
            for j in np.flatnonzero(c > 0)
        ]
        bins = np.asarray(spec.levels, dtype=float)
        s = syn[spec.name].astype(float).dropna()
        r = test[spec.name].astype(float)
        print(f"seed {seed} {spec.name}: b {h.scale:.1f}, kept leaves {leaves}")
        print(f"  bins {bins.tolist()}, dropped {dropped.get(spec.name)}")
        print(f"  synthetic rows per bin {np.histogram(s, bins)[0].tolist()}")
        print(f"  held-out rows per bin {np.histogram(r, bins)[0].tolist()}")


def main(argv=None):
    from benchmarks.bench_narrow_floats import arm_totals
    from skdp_synth.preprocessing._wide_leaves import INT_SOLE_SHARE

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--eps", default="0.3,1")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--detail", default=None)
    a = p.parse_args(argv)
    eps_list = [float(e) for e in a.eps.split(",")]
    if a.detail:
        for s in (int(v) for v in a.detail.split(",")):
            _fit(eps_list[0], s, INT_SOLE_SHARE, detail=True)
        return
    for eps in eps_list:
        arms = {
            arm: [_fit(eps, s, share) for s in range(a.seeds)]
            for arm, share in (("off", None), ("on", INT_SOLE_SHARE))
        }
        print(f"\n### area, ε = {eps:g}, seeds 0-{a.seeds - 1}\n")
        print(
            "| arm | std > 10 | silent | mean KS | "
            + " | ".join(f"{c} median / max, > 10, silent, KS" for c in YEARS)
            + " |"
        )
        print("|---|---|---|---|---|---|")
        for arm, fits in arms.items():
            big, silent, ks = arm_totals(fits)
            cells = []
            for c in YEARS:
                r = [std[c] for std, *_ in fits]
                sil = sum(not 0.5 <= std[c] <= 2 and c not in n for std, _, n in fits)
                k = np.mean([ks_[c] for _, ks_, _ in fits])
                cells.append(
                    f"{np.median(r):.2f} / {max(r):.4g}, {sum(v > 10 for v in r)}, "
                    f"{sil}, {k:.3f}"
                )
            print(
                f"| {arm} | {big} | {silent} | {ks:.4f} | " + " | ".join(cells) + " |"
            )
        print("\n| seed | " + " | ".join(f"{c} off -> on" for c in YEARS) + " |")
        print("|---|---|---|")
        for s in range(a.seeds):
            (s0, _, n0), (s1, _, n1) = arms["off"][s], arms["on"][s]
            if all(abs(s0[c] - s1[c]) < 1e-9 for c in YEARS):
                continue
            cells = [
                f"{s0[c]:.3g}{'*' if c in n0 else ''} -> "
                f"{s1[c]:.4g}{'*' if c in n1 else ''}"
                for c in YEARS
            ]
            print(f"| {s} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
