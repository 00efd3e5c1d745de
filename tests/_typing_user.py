"""A small user script that ``tests/test_typing.py`` type-checks with mypy.

It is code a user writes against the public API; ``assert_type`` is a no-op
at run time and an error for mypy when an annotation changes. Nothing runs on
import (pytest imports this file for its doctests).
"""

from typing import Any, assert_type

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from skdp_synth import (
    BudgetAccountant,
    CovarianceLossMicroaggregator,
    DampedPrivateSynthesizer,
    PrivateSampler,
    ProjectedGaussianRelease,
    Release,
    load_binary_digits,
)
from skdp_synth.blocks import Block, Blocks
from skdp_synth.metrics import marginal_error
from skdp_synth.plan import Plan
from skdp_synth.preprocessing import BooleanEncoder, UnitBallScaler
from skdp_synth.privacy import PrivacyGuarantee


def user_code(path: str) -> None:
    X = np.random.default_rng(0).integers(0, 2, size=(200, 4))
    accountant = BudgetAccountant(epsilon=3.0)
    damped = DampedPrivateSynthesizer(
        epsilon=1.0, accountant=accountant, random_state=0
    )
    assert_type(damped.fit(X), DampedPrivateSynthesizer)
    rows = damped.sample(50, random_state=1)
    print(rows.shape)
    assert_type(damped.score(X), float)
    assert_type(damped.make_plan(200, 4), Plan)
    assert_type(damped.accuracy_bound(2), float)
    release = damped.to_release()
    assert_type(release, Release)
    assert_type(release.guarantee, PrivacyGuarantee)
    release.save(path)
    # a pipeline's release decodes to a DataFrame
    assert_type(Release.load(path).sample(10), NDArray[Any] | pd.DataFrame)
    assert_type(Release.load(path).sample(10, decode=False), NDArray[Any])
    assert_type(accountant.remaining(), tuple[float, float])

    sampler = PrivateSampler(m=16, d=2, epsilon=1.0).fit(X)
    assert_type(sampler, PrivateSampler)
    gauss = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, d=2).fit(X)
    assert_type(gauss.to_release(), Release)
    micro = CovarianceLossMicroaggregator(k=10, domain="boolean").fit(X)
    print(micro.transform(X).shape)

    blocks = Blocks.from_spec([{"name": "c", "kind": "onehot", "width": 4}], 4)
    assert_type(Block("b", "binary", 0, 1).codes(), NDArray[np.uint8])
    assert_type(blocks.is_valid(X), NDArray[np.bool_])
    assert_type(marginal_error(X, rows, d=2), float)
    digits = load_binary_digits()
    assert isinstance(digits, np.ndarray)  # the union narrows: no as_frame
    encoder = BooleanEncoder(n_bins=4).fit(digits[:, :3])
    assert_type(encoder, BooleanEncoder)
    assert_type(encoder.transform(digits[:, :3]), NDArray[np.uint8])
    print(UnitBallScaler().fit_transform(X.astype(float)).shape)
