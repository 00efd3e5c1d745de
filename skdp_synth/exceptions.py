"""Warnings and errors raised by skdp_synth.

One module so that users can filter or catch everything we raise in one place.
"""

__all__ = [
    "BudgetError",
    "CoarseDomainWarning",
    "DegenerateColumnWarning",
    "IndependentColumnsWarning",
    "InfeasibleProblemError",
    "MalformedReleaseError",
    "NumbersAsTextWarning",
    "PrivacyLeakWarning",
    "PrivacyBudgetWarning",
    "SmallTableWarning",
    "WideBinWarning",
]


class PrivacyLeakWarning(UserWarning):
    """Something that should be public knowledge was inferred from the data.

    Domains, categories, bin edges and bounds decide how a record is encoded;
    if they are read off the private data, the release can reveal them (a
    category seen only once, the exact maximum of a column) no matter how much
    noise is added later. Pass them as parameters to silence this warning.
    """


class PrivacyBudgetWarning(UserWarning):
    """A privacy guarantee is weak or vacuous for the requested sizes.

    Raised, for example, when the epsilon that a requested number of private
    samples costs is far above what is usually considered private.
    """


class CoarseDomainWarning(UserWarning):
    """A domain learned privately is too coarse to carry its column.

    At a small budget per column (few rows, many columns) the noise can hide
    a numeric column's range, so that the kept range may be a noise leaf far
    from the data; or it can leave a single bin (a zero-inflated column's
    0), or no level of a categorical column but ``"other"``; or a numeric
    column's values reach the end of PrivTree's root (``±2^40``, about
    1.1e12, where no bound is declared), past which they were clipped. In a
    pipeline
    it also names a table of learned levels too large for the generator
    (over ``generator.MAX_TABLE_CELLS`` cells), which the release leaves out
    of its workload instead of refusing a fit whose domains were already
    paid for. The warning names the columns and says what helps (declared
    domains or bounds, fewer levels, or a larger share of the budget for the
    domains); it reads only the released domains, never a value or a count
    of the data.
    """


class NumbersAsTextWarning(UserWarning):
    """A text column looks like a column of numbers.

    pandas reads a numeric column as text (``object`` dtype) when a cell is
    not a number (a stray marker) or when told to (``dtype=str``); the
    encoder then models it as categories. Raised when an undeclared text
    column's kept levels -- the domain the fit releases, never the cells
    behind it -- read as numbers (all of them, numbers beside missing-value
    markers such as ``"n/a"``, or more than half), or when a privately
    learned domain kept nothing but such a marker and ``"other"``. Convert
    the column (``pd.to_numeric(df[col], errors="coerce")``) or declare it
    with ``categories=`` (codes that only look like numbers, as zip codes
    do).
    """


class SmallTableWarning(UserWarning):
    """The table is below the size a method needs to beat its noise.

    Decided from public sizes only: the number of rows where the method's
    guarantee makes it public (replace-one neighbours), the parameters.
    The message names the method to use instead.
    """


class WideBinWarning(UserWarning):
    """A declared numeric bin is far wider than the column's other bins.

    A numeric column declared with ``bin_edges=`` has no fine histogram:
    each bin decodes to its midpoint (or uniformly inside it, with
    ``numeric_value="uniform"``), so a wide outermost bin of a heavy tail --
    a top decile ``[1068, 18777]`` -- brings its values back near 9,923 and
    inflates the column's mean and spread (measured: a model trained on such
    rows scored R² -9 where the real rows scored 0.34). Decided from the
    declared edges only (public). Split the bin, or declare ``bounds=`` so
    that the domain is learned privately with a fine histogram to decode
    inside its bins.
    """


class DegenerateColumnWarning(CoarseDomainWarning):
    """The released domain and release say a column will come back degenerate.

    Issued by a :class:`~skdp_synth.pipeline.SynthesisPipeline` after its fit,
    naming each such column with its reason: a numeric domain of one bin, at
    most one bin whose released count is above the release's noise (a support
    narrower than its own noise), or a released missing share that the rows
    cannot hold. It reads only released quantities (the private domains, the
    release's noisy estimates and model rows, public noise scales), so it is
    covered by the fit's recorded guarantee.
    """


class IndependentColumnsWarning(UserWarning):
    """The synthetic columns were drawn independently of one another.

    Issued by :class:`~skdp_synth.gaussian_release.ProjectedGaussianRelease`
    when ``selection="auto"`` measured only the 1-way tables and no
    ``target`` was named: at that ``ε`` and table size auto expected a pair
    measured in its noise to cost more than the dependence it keeps, so every
    pair is left to the product of its columns. A model trained on such rows
    learns nothing from its features (openintro ``loans_full_schema`` at
    ε = 1: train-on-synthetic R² about -0.05 for ``interest_rate``, against
    0.65-0.94 from auto's MST tree at the same 2-way error;
    ``benchmarks/results/bench_suite.md``). ``target=`` measures the target's
    pairs; ``selection="mst"`` keeps a tree of pairs. The choice is a
    function of public quantities and the released noisy total, so the
    warning carries nothing private.
    """


class BudgetError(ValueError):
    """A privacy budget would be exceeded.

    Raised by :class:`skdp_synth.privacy.BudgetAccountant` *before* any data is
    touched, so a refused fit leaves both the estimator and the budget unchanged.
    """


class InfeasibleProblemError(ValueError):
    """An optimisation problem that the algorithm requires has no solution."""


class MalformedReleaseError(ValueError):
    """A release file is damaged, malformed or larger than the reader allows.

    Raised by :meth:`Release.load <skdp_synth.release.Release.load>` for
    every problem with the file itself -- truncated or not an archive, a
    member or the metadata over the size limits, a failed content hash, a
    value of the wrong type, shape or range, non-finite numbers, unknown or
    duplicate entries -- *before* the release is used.
    """
