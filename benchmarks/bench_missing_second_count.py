"""A missing level kept on the release's estimate alone, or with the encoder's
own noisy count of the same cells (``_missing_support.missing_support``).

A synthetic table of ``--rows`` rows: six undeclared text columns of 3-5
levels, the last with ``--rate`` missing, and two complete float columns.
``make_synthesis_pipeline(BooleanEncoder(), ProjectedGaussianRelease(epsilon,
delta=1e-6))`` learns every domain privately (the text columns' levels by
the joint Gaussian selection, which draws a noisy missing count per column;
the float columns' by PrivTree, whose fine histogram draws one too). Both
rules are read from the same fits (the released estimate, its sd, the
encoder's count and its variance): per ``ε``, over ``--seeds`` fits,

* complete column-fits (text; float) whose missing level a rule keeps --
  missing cells in a column that has none;
* fits where the text column with missing cells loses its level.

Run::

    .venv-dev/bin/python -m benchmarks.bench_missing_second_count \
        [--seeds 30] [--eps 0.3,1] [--rows 2000] [--rate 0.03]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

from benchmarks._harness import markdown_table


def table(n, rate, seed=1):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            f"c{i}": rng.choice(list("abcde")[: 3 + i % 3], n).astype(object)
            for i in range(6)
        }
    )
    df["v"] = rng.gamma(2.0, 3.0, n)
    df["w"] = rng.normal(0.0, 1.0, n)
    df.loc[rng.random(n) < rate, "c5"] = None
    return df


def decisions(df, eps, seed):
    """``[(column, kind, kept by the release alone, kept with the second
    count)]`` of one fit (the release refuses a drop at ``2 σ`` or more)."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder
    from skdp_synth.preprocessing._missing_support import missing_support, second_count

    pipe = make_synthesis_pipeline(
        BooleanEncoder(random_state=seed),
        ProjectedGaussianRelease(epsilon=eps, delta=1e-6, random_state=seed),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # inferred domains: the point here
        pipe.fit(df)
    rel = pipe[-1]
    names = [str(x) for x in rel.blocks_.names]
    out = []
    for spec in pipe[0].specs_:
        if not spec.missing:
            continue
        j = names.index(spec.name)
        est, sd = rel._one_way_level_estimate(j, int(rel.blocks_.n_levels[j]) - 1)
        raw, variance = second_count(spec)
        value, threshold = missing_support(est, sd, raw, variance)
        alone = not est < sd
        both = not (value < threshold and est < 2.0 * sd)
        out.append((spec.name, spec.kind, alone, both))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--eps", default="0.3,1")
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--rate", type=float, default=0.03)
    args = ap.parse_args(argv)
    df = table(args.rows, args.rate)
    rows = []
    for eps in (float(e) for e in args.eps.split(",")):
        tally = np.zeros((3, 2), dtype=int)  # text / float complete, lost
        fits = np.zeros(3, dtype=int)
        for seed in range(args.seeds):
            for name, kind, alone, both in decisions(df, eps, seed):
                if name == "c5":
                    fits[2] += 1
                    tally[2] += (not alone, not both)
                else:
                    k = 1 if kind == "numeric" else 0
                    fits[k] += 1
                    tally[k] += (alone, both)
        rows.append(
            {
                "ε": f"{eps:g}",
                "complete text columns with a missing level (alone -> both)": (
                    f"{tally[0, 0]} -> {tally[0, 1]} of {fits[0]}"
                ),
                "complete float columns": (
                    f"{tally[1, 0]} -> {tally[1, 1]} of {fits[1]}"
                ),
                "text column with missing cells: level lost": (
                    f"{tally[2, 0]} -> {tally[2, 1]} of {fits[2]}"
                ),
            }
        )
    print(markdown_table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
