"""Hashes of what each estimator releases, to show a refactoring changed nothing.

Fits the four estimators and the default pipeline on fixed seeds and prints a
SHA-256 prefix of their released values (the fitted attributes a user reads)
and of their sampled rows. Run it on the commit before a move and after it, on
the same machine: the lines must be identical. (Across machines the floats that
went through BLAS may differ in their last bits, so the hashes are a same-
machine check, not a test.)

    python benchmarks/behaviour_hashes.py
"""

from __future__ import annotations

import hashlib
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

# the checkout this script lives in, not whichever skdp_synth is installed
# (run as a file, Python puts benchmarks/ first on the path, not the root)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        if isinstance(a, pd.DataFrame):
            h.update(pd.util.hash_pandas_object(a, index=True).to_numpy().tobytes())
            h.update(repr(list(a.dtypes)).encode())
        else:
            a = np.ascontiguousarray(np.asarray(a))
            h.update(str(a.dtype).encode() + str(a.shape).encode())
            h.update(a.tobytes())
    return h.hexdigest()[:16]


def _boolean_table(n=600, p=8, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2))
    w = rng.normal(size=(2, p))
    return (z @ w + 0.5 * rng.normal(size=(n, p)) > 0).astype(float)


def _mixed_table(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    return pd.DataFrame(
        {
            "age": age,
            "wage": rng.lognormal(7, 0.5, n) + 20 * age,
            "sector": rng.choice(["public", "private", "self"], n),
            "urban": rng.random(n) < 0.6,
        }
    )


def main() -> None:
    from skdp_synth import (
        CovarianceLossMicroaggregator,
        DampedPrivateSynthesizer,
        PrivateSampler,
        ProjectedGaussianRelease,
        make_synthesis_pipeline,
    )
    from skdp_synth.preprocessing import BooleanEncoder

    warnings.simplefilter("ignore")
    X = _boolean_table()
    lines = []

    micro = CovarianceLossMicroaggregator(k=20, random_state=0).fit(X)
    lines.append(
        (
            "CovarianceLossMicroaggregator",
            _digest(micro.transform(X)),
            _digest(micro.sample(300, random_state=1)),
        )
    )

    damped = DampedPrivateSynthesizer(epsilon=1.0, random_state=0).fit(X)
    lines.append(
        (
            "DampedPrivateSynthesizer",
            _digest(damped.to_release().sample(1, random_state=0)),
            _digest(damped.sample(300, random_state=1)),
        )
    )

    sampler = PrivateSampler(m=64, d=2, k=500, random_state=0).fit(X[:, :6])
    lines.append(
        (
            "PrivateSampler",
            _digest(np.asarray(sampler.epsilon_)),
            _digest(sampler.sample(300, random_state=2)),
        )
    )

    release = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0).fit(X)
    lines.append(
        (
            "ProjectedGaussianRelease",
            _digest(release.released_series_.to_numpy()),
            _digest(release.sample(300, random_state=1)),
        )
    )

    for target in (None, "wage"):
        table = _mixed_table()
        pipe = make_synthesis_pipeline(
            BooleanEncoder(
                categories={"sector": ["public", "private", "self"]}, random_state=0
            ),
            ProjectedGaussianRelease(
                epsilon=1.0, delta=1e-6, random_state=0, target=target
            ),
        ).fit(table)
        lines.append(
            (
                f"pipeline(target={target})",
                _digest(pipe[-1].released_series_.to_numpy()),
                _digest(pipe.sample(500, random_state=1)),
            )
        )

    for name, released, rows in lines:
        print(f"{name:34s} released {released}  rows {rows}")


if __name__ == "__main__":
    main()
