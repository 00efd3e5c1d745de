"""scikit-learn's estimator checks over every estimator, plus the checks
scikit-learn lacks for synthesizers (sample shape/dtype/columns,
reproducibility, pandas round trip, privacy bookkeeping, failed fits), which
are published as :mod:`skdp_synth.utils.estimator_checks` and run here
through its ``parametrize_with_checks``.

Each estimator issue adds its estimator to ``SKLEARN_CHECKED`` and
``SYNTHESIZERS`` below.
"""

import numpy as np
import pandas as pd
import pytest
from _dummy import BootstrapSynthesizer, NoisyMeanSynthesizer
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp_synth import (
    CovarianceLossMicroaggregator,
    DampedPrivateSynthesizer,
    PrivateSampler,
    ProjectedGaussianRelease,
)
from skdp_synth.preprocessing import BooleanEncoder, UnitBallScaler
from skdp_synth.privacy import BudgetAccountant
from skdp_synth.utils.estimator_checks import (
    BOOLEAN_ONLY,
    NOT_ROW_ALIGNED,
    PRIVATE_SHAPE,
)
from skdp_synth.utils.estimator_checks import (
    parametrize_with_checks as parametrize_with_synthesizer_checks,
)

# The sklearn checks fit at n = 20 with epsilon = 100 and PrivateSampler's
# per-row price is vacuous at these sizes: PrivacyBudgetWarning (epsilon > 10)
# is expected throughout; it is tested where it is raised (test_faults.py).
pytestmark = pytest.mark.filterwarnings(
    "ignore::skdp_synth.exceptions.PrivacyBudgetWarning"
)

SKLEARN_CHECKED = [
    BooleanEncoder(n_bins=4, random_state=0),
    UnitBallScaler(),
    BootstrapSynthesizer(random_state=0),
    NoisyMeanSynthesizer(random_state=0),
    CovarianceLossMicroaggregator(random_state=0),
    CovarianceLossMicroaggregator(k=3, division="input_order", random_state=0),
    # epsilon=100 and a fixed two-direction plan: with one or few cells at the
    # checks' n = 20 the synthetic rows coincide, and the row-alignment checks
    # (expected failures) passed by accident for about 1 shuffle in 8
    # (measured over 40 global seeds: 5/40 with the default plan, 0/40 here)
    DampedPrivateSynthesizer(
        domain="box", epsilon=100.0, n_components=2, alpha=0.3, random_state=0
    ),
    ProjectedGaussianRelease(d=1, n_candidates=50, random_state=0),
    PrivateSampler(d=1, k=1000, random_state=0),
]

# Boolean-only synthesizers reject the continuous data that scikit-learn's
# checks fit on (values must be 0/1; they are never rounded): BOOLEAN_ONLY.
EXPECTED_FAILED = {
    "BootstrapSynthesizer": NOT_ROW_ALIGNED,
    "DampedPrivateSynthesizer": NOT_ROW_ALIGNED,
    "ProjectedGaussianRelease": {**BOOLEAN_ONLY, **NOT_ROW_ALIGNED},
    "PrivateSampler": {**BOOLEAN_ONLY, **NOT_ROW_ALIGNED},
}


#: BooleanEncoder takes counts (``sample_weight``) for its private domains;
#: without a budget (these checks) it infers its domain from every line, a
#: count of 0 included -- the cells the table lists -- so a zero-count line
#: is not the dropped row scikit-learn's equivalence expects, and a table of
#: no record is refused by the synthesizer after it (fewer than 2 records),
#: not by the encoder
ENCODER_COUNTS = {
    "check_sample_weight_equivalence_on_dense_data": (
        "without a budget the domain is inferred from every line, zero counts included"
    ),
    "check_all_zero_sample_weights_error": (
        "a table of no record is refused by the synthesizer, not the encoder"
    ),
}
EXPECTED_FAILED["BooleanEncoder"] = ENCODER_COUNTS


def _expected_failed(estimator):
    shape = {} if isinstance(estimator, UnitBallScaler) else PRIVATE_SHAPE
    return {**shape, **EXPECTED_FAILED.get(type(estimator).__name__, {})}


@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.PrivacyLeakWarning")
@parametrize_with_checks(SKLEARN_CHECKED, expected_failed_checks=_expected_failed)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------
# Synthesizer checks scikit-learn does not have, from the published
# skdp_synth.utils.estimator_checks. Each entry: an unfitted estimator with a
# fixed integer random_state; its data kind follows its ``domain`` (0/1 rows
# unless ``domain="box"``, which is checked on [-1, 2]^p with bounds (-1, 2)).
SYNTHESIZERS = [
    BootstrapSynthesizer(domain="boolean", random_state=0),
    BootstrapSynthesizer(domain="box", bounds=(-1, 2), random_state=0),
    NoisyMeanSynthesizer(domain="boolean", random_state=0),
    CovarianceLossMicroaggregator(k=12, domain="boolean", random_state=0),
    CovarianceLossMicroaggregator(
        k=12, domain="boolean", partition="pinning", random_state=0
    ),
    CovarianceLossMicroaggregator(k=12, domain="box", bounds=(-1, 2), random_state=0),
    DampedPrivateSynthesizer(domain="boolean", random_state=0),
    DampedPrivateSynthesizer(
        domain="box", bounds=(-1, 2), n_components=1, random_state=0
    ),
    ProjectedGaussianRelease(n_candidates=64, random_state=0),
    ProjectedGaussianRelease(
        neighbouring="replace-one", mechanism="mee", n_candidates=64, random_state=0
    ),
    # PrivateSampler pays for k rows at fit and refuses more unless an
    # accountant is charged: a tracking accountant (no limit) pays for the
    # rows these checks draw beyond k (set_params replaces it where a test
    # needs a finite budget).
    PrivateSampler(d=2, k=40, accountant=BudgetAccountant(), random_state=0),
]


@parametrize_with_synthesizer_checks(SYNTHESIZERS)
def test_synthesizer_contract(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------
# Valid rows: through a pipeline with a BooleanEncoder, every sampled row has a
# valid code in every block (one 1 per one-hot block, monotone thermometers).
def _mixed_table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.choice(["S", "M", "L", None], n),
            "smoker": rng.choice(["no", "yes"], n),
            "grade": rng.choice(["lo", "mid", "hi", None], n),
            "age": rng.uniform(0, 100, n),
        }
    )


def _mixed_encoder():
    return BooleanEncoder(
        categories={
            "colour": ["red", "green", "blue", "pink"],  # pink never observed
            "size": ["S", "M", "L", None],
            "smoker": ["no", "yes"],
        },
        ordinal={"grade": ["lo", "mid", "hi", None]},
        bin_edges={"age": [0, 20, 40, 60, 80, 100]},
        random_state=0,
    )


VALID_ROW_ESTIMATORS = [
    CovarianceLossMicroaggregator(k=30, domain="boolean", random_state=0),
    CovarianceLossMicroaggregator(
        k=30, domain="boolean", partition="pinning", random_state=0
    ),
    DampedPrivateSynthesizer(epsilon=5.0, random_state=0),
    PrivateSampler(d=1, k=2000, random_state=0),
    ProjectedGaussianRelease(d=1, n_candidates=50, random_state=0),
]


@pytest.mark.parametrize(
    "estimator", VALID_ROW_ESTIMATORS, ids=lambda e: type(e).__name__
)
def test_sampled_rows_are_valid_for_the_encoders_blocks(estimator):
    from skdp_synth import make_synthesis_pipeline

    df = _mixed_table()
    pipe = make_synthesis_pipeline(_mixed_encoder(), clone(estimator)).fit(df)
    enc, final = pipe[0], pipe[-1]
    assert final.blocks_ == enc.blocks_
    assert {b.kind for b in final.blocks_.blocks} == {"onehot", "binary", "thermometer"}
    assert any(b.missing for b in final.blocks_.blocks)
    rows = final.sample(500)
    assert set(np.unique(rows)) <= {0, 1}
    assert final.blocks_.is_valid(rows).all()
    out = pipe.sample(500)
    assert out["colour"].isin(["red", "green", "blue", "pink"]).all()
    assert out["size"].isin(["S", "M", "L"]).sum() + out["size"].isna().sum() == 500
    assert out["smoker"].isin(["no", "yes"]).all()
    assert (
        out["grade"].isin(["lo", "mid", "hi"]).sum() + out["grade"].isna().sum() == 500
    )
    assert out["age"].between(0, 100).all()


def test_microaggregator_random_transform_rows_are_valid():
    from skdp_synth import make_synthesis_pipeline

    df = _mixed_table()
    est = CovarianceLossMicroaggregator(
        k=30, domain="boolean", rounding="random", random_state=0
    )
    pipe = make_synthesis_pipeline(_mixed_encoder(), est).fit(df)
    rows = pipe.transform(df)
    assert pipe[-1].blocks_.is_valid(rows).all()
