"""Growth across a hole in a numeric column's range: the same fits with and
without ``skdp_synth.preprocessing._gap_jump.GAP_JUMP``.

Per fit (``table:eps:seed``), the ``auto`` pipeline of
``benchmarks/bench_suite.py`` (``fit_ours``: the same encoder, release, seeds
and held-out rows) is fitted twice, the rule off (``before``) and on
(``after``). Printed: each numeric column whose learned domain moved (its
cap, ``FineHistogram.bounds``, and its kept leaves), and train-on-synthetic
both ways (the suite's model and score). The fits to read are those
``bench_suite_compare`` lists as moved:

    PYTHONPATH=. python -m benchmarks.bench_gap_jump \\
        chile:0.3:1 loanapp:1:1 loanapp:1:3 flchain:1:4 credit:0.3:7

Results: ``benchmarks/results/bench_gap_jump.md``.
"""

from __future__ import annotations

import numpy as np


def _domains(pipe):
    """``{column: (cap, kept leaves)}`` of the encoder's numeric domains."""
    out = {}
    for spec in getattr(pipe[0], "specs_", []):
        hist = getattr(spec, "fine", None)
        if hist is None:
            continue
        kept = tuple(np.flatnonzero(np.asarray(hist.counts) > 0).tolist())
        out[str(spec.name)] = (tuple(float(v) for v in hist.bounds), kept)
    return out


def run(fit):
    """Fit ``table:eps:seed`` with the rule off and on; print what moved."""
    from benchmarks import bench_suite
    from skdp_synth.preprocessing import _numeric_domain as nd

    # GAP_JUMP is on in the library: "after" is the rule on
    _, arms = bench_suite.both_arms(fit, nd, {"GAP_JUMP": False}, keep_pipe=True)
    got = {
        arm: (_domains(info["pipe"]), score, info["chose"])
        for arm, (_, info, score) in arms.items()
    }
    (d0, s0, c0), (d1, s1, c1) = got["before"], got["after"]
    moved = [c for c in d0 if d0[c] != d1.get(c)]
    print(f"{fit}: train-on-synthetic {s0:.3f} ({c0}) -> {s1:.3f} ({c1})")
    for c in moved:
        (lo0, hi0), (lo1, hi1) = d0[c][0], d1[c][0]
        print(
            f"  {c}: cap [{lo0:.4g}, {hi0:.4g}] -> [{lo1:.4g}, {hi1:.4g}], "
            f"kept leaves {len(d0[c][1])} -> {len(d1[c][1])}"
        )


def main(argv=None):
    from benchmarks import bench_suite

    bench_suite.fits_main(run, __doc__, argv)


if __name__ == "__main__":
    main()
