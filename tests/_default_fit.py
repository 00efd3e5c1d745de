"""The default pipeline fitted with its warnings silenced, for tests that
read which columns were named from ``degenerate_columns_`` (or the learned
specs), not from the warnings."""

import warnings

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.preprocessing import BooleanEncoder


def fit_default(df, epsilon, seed):
    """``BooleanEncoder`` + ``ProjectedGaussianRelease`` at ``delta = 1e-6``,
    both at ``random_state=seed``, fitted on ``df``."""
    pipe = make_synthesis_pipeline(
        BooleanEncoder(random_state=seed),
        ProjectedGaussianRelease(epsilon=epsilon, delta=1e-6, random_state=seed),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(df)
    return pipe
