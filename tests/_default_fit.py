"""The default pipeline fitted with its warnings silenced, for tests that
read which columns were named from ``degenerate_columns_`` (or the learned
specs), not from the warnings: the benchmarks' own
(:func:`benchmarks._harness.fit_default_pipeline`), so a test and the
benchmark it checks fit the same pipeline."""

from benchmarks._harness import fit_default_pipeline


def fit_default(df, epsilon, seed):
    """``BooleanEncoder`` + ``ProjectedGaussianRelease`` at ``delta = 1e-6``,
    both at ``random_state=seed``, fitted on ``df``."""
    return fit_default_pipeline(df, epsilon, seed)
