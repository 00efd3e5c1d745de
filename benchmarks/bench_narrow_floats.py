"""Narrow float columns (a coordinate, sd 0.026 around -93.63) of the
synthetic ``area`` table (``bench_tail_past_cap.synthetic_table``) through
the ``auto`` pipeline of ``benchmarks/bench_suite.py`` (``fit_ours``,
``--light``), with a float leaf holding more than ``--share`` of its
column's confirmed rows cut into parts past the depth limit
(``skdp_synth.preprocessing._wide_leaves.SOLE_SHARE``; ``off``: ``None``,
the default) and without, in one process: per ε the column-fits with a
std ratio (synthetic / held-out) above 10, those out of ``[0.5, 2]`` not
named by a warning, the mean KS, and the latitude's and longitude's
median / max std ratio and mean KS; then every coordinate fit.

    PYTHONPATH=. python -m benchmarks.bench_narrow_floats --eps 0.3,1 \\
        --seeds 20 --share 0.9

Results: ``benchmarks/results/bench_narrow_floats.md``.
"""

from __future__ import annotations

import argparse

import numpy as np

COORDS = ("latitude", "longitude")


def _fits(eps, seeds, share):
    from benchmarks.bench_tail_past_cap import run
    from skdp_synth.preprocessing import _wide_leaves

    saved = _wide_leaves.SOLE_SHARE
    _wide_leaves.SOLE_SHARE = share
    try:
        return [run("area", eps, s, True) for s in range(seeds)]
    finally:
        _wide_leaves.SOLE_SHARE = saved


def arm_totals(fits):
    """``(column-fits with a std ratio above 10, column-fits outside [0.5,
    2] that no warning named, mean KS)`` of an arm's fits, each ``(std
    ratios, KS, named columns, ...)`` by column."""
    big = sum(v > 10 for std, *_ in fits for v in std.values())
    silent = sum(
        not 0.5 <= v <= 2 and c not in named
        for std, _, named, *_ in fits
        for c, v in std.items()
    )
    ks = float(np.mean([np.mean(list(k.values())) for _, k, *_ in fits]))
    return big, silent, ks


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--eps", default="0.3,1")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--share", type=float, default=0.9)
    a = p.parse_args(argv)
    for eps in [float(e) for e in a.eps.split(",")]:
        arms = {"off": _fits(eps, a.seeds, None), "on": _fits(eps, a.seeds, a.share)}
        print(f"\n### area, ε = {eps:g}, seeds 0-{a.seeds - 1}\n")
        print(
            "| arm | std > 10 | silent | mean KS | "
            + " | ".join(f"{c} median / max std, KS" for c in COORDS)
            + " |"
        )
        print("|---|---|---|---|---|---|")
        for arm, fits in arms.items():
            big, silent, ks = arm_totals(fits)
            cells = []
            for c in COORDS:
                r = [std[c] for std, *_ in fits]
                k = np.mean([ks_[c] for _, ks_, *_ in fits])
                cells.append(f"{np.median(r):.2f} / {max(r):.1f}, {k:.3f}")
            print(
                f"| {arm} | {big} | {silent} | {ks:.4f} | " + " | ".join(cells) + " |"
            )
        print("\n| seed | " + " | ".join(f"{c} off | on" for c in COORDS) + " |")
        print("|---|---|---|---|---|")
        for s in range(a.seeds):
            cells = [
                f"{arms['off'][s][0][c]:.3g} | {arms['on'][s][0][c]:.3g}"
                for c in COORDS
            ]
            print(f"| {s} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
