"""A column's missing level is kept on the release's estimate of its count
together with the fine histogram's own noisy count of the same cells
(``_missing_support.missing_support``).

Both are released and independent (the release's Gaussian noise, the
domain's ``Lap(b)``): their inverse-variance mean has sd ``σ_c <= σ``. It is
tested against the release's own threshold in rows, ``MISSING_SUPPORT_Z σ``
(or ``MISSING_COMBINED_Z σ_c`` where lower), so a missing count of at least
``σ`` is lost no more often than before, and a complete column keeps a
missing level in ``1 - Φ(σ / σ_c)`` of fits instead of ``1 - Φ(1) = 16 %``.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from skdp_synth.preprocessing import _missing_support as ms
from skdp_synth.preprocessing._missing_support import missing_support
from skdp_synth.preprocessing._numeric_domain import MISSING_SUPPORT_Z


def test_the_rule_s_constants():
    assert (MISSING_SUPPORT_Z, ms.MISSING_COMBINED_Z) == (1.0, 2.0)


def test_without_a_second_count_the_release_s_estimate_decides_alone():
    """No fine histogram (a categorical column, a restored decoder): the
    estimate against ``MISSING_SUPPORT_Z σ``, as before."""
    assert missing_support(37.0, 40.0) == (37.0, 40.0)
    assert missing_support(37.0, 40.0, raw=12.0) == (37.0, 40.0)  # no variance
    assert missing_support(37.0, 40.0, float("nan"), 5000.0) == (37.0, 40.0)


def test_the_two_counts_inverse_variance_mean_and_its_threshold():
    """``σ = 40``, ``b = 50`` (Laplace variance ``2 b² = 5000``): weights
    ``1/1600`` and ``1/5000``, ``σ_c = 34.8``; the threshold is ``σ`` (under
    ``2 σ_c``)."""
    value, threshold = missing_support(37.0, 40.0, -20.0, 2.0 * 50.0**2)
    w1, w2 = 1.0 / 1600.0, 1.0 / 5000.0
    assert value == pytest.approx((w1 * 37.0 + w2 * -20.0) / (w1 + w2), rel=1e-12)
    assert threshold == pytest.approx(40.0, rel=1e-12)
    # a precise second count: the threshold is 2 sd of the mean, under sigma
    value, threshold = missing_support(37.0, 40.0, 30.0, 2.0 * 5.0**2)
    sd_c = 1.0 / math.sqrt(1.0 / 1600.0 + 1.0 / 50.0)
    assert threshold == pytest.approx(2.0 * sd_c, rel=1e-12) and threshold < 40.0
    assert value >= threshold  # 30 rows, 4.3 sd_c: kept (40 rows alone: 0.75 sd)


def _keep_rate(m, sigma, b, n, rng):
    est = m + sigma * rng.standard_normal(n)
    raw = m + rng.laplace(0.0, b, n)
    variance = 2.0 * b**2  # Lap(b)
    found = (missing_support(e, sigma, r, variance) for e, r in zip(est, raw))
    return float(np.mean([v >= t for v, t in found]))


@pytest.mark.parametrize("b", [40.0, 60.0])
def test_a_complete_column_keeps_a_missing_level_less_often(b):
    """True count 0, ``σ = 60`` (attrition at ε = 0.3 has ``σ`` 89-122 and
    ``b = 111``): kept in about ``1 - Φ(σ / σ_c)`` of 4,000 simulated fits
    (the mean is close to normal), against ``1 - Φ(1) = 15.9 %`` on the
    release's estimate alone. One-sided binomial bound at ``p = 1e-6``: a
    false failure once in a million runs."""
    sigma, n = 60.0, 4000
    rate = _keep_rate(0.0, sigma, b, n, np.random.default_rng(0))
    bound = stats.binom.isf(1e-6, n, 1.0 - stats.norm.cdf(1.0)) / n
    assert rate < 1.0 - stats.norm.cdf(1.0)
    sd_c = 1.0 / math.sqrt(1.0 / sigma**2 + 1.0 / (2.0 * b**2))
    expected = 1.0 - stats.norm.cdf(sigma / sd_c)
    assert abs(rate - expected) < 0.03  # Laplace tails: about, not exactly
    assert rate < bound


@pytest.mark.parametrize("m_in_sigma", [1.0, 1.5, 2.0, 3.0])
def test_a_missing_count_of_at_least_sigma_is_lost_no_more_often(m_in_sigma):
    """True count ``m >= σ``: lost with probability at most the release's
    own ``Φ(1 - m / σ)``, within a binomial tolerance (``p = 1e-6``) over
    4,000 simulated fits."""
    sigma, b, n = 60.0, 50.0, 4000
    rng = np.random.default_rng(int(10 * m_in_sigma))
    lost = 1.0 - _keep_rate(m_in_sigma * sigma, sigma, b, n, rng)
    before = stats.norm.cdf(1.0 - m_in_sigma)
    assert lost <= stats.binom.isf(1e-6, n, before) / n


def test_the_pipeline_decides_on_both_counts():
    """A 1,200-row table with a complete float column, ε = 0.3, AIM's
    rounds: over seeds 0-11 the pipeline drops the missing level exactly where
    :func:`missing_support` says so (and the release's estimate is under
    its 2 σ, the release's own refusal), and the fine histogram keeps the
    count as drawn (``missing_raw``) beside the clipped one."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    rng = np.random.default_rng(0)
    n = 1200
    df = pd.DataFrame(
        {
            "x": rng.gamma(2.0, 10.0, n),
            "y": rng.normal(50.0, 5.0, n),
            "c": rng.choice(list("abc"), n),
        }
    )
    decisions = 0
    for seed in range(12):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(categories={"c": list("abc")}, random_state=seed),
            # the plan is pinned: which seeds' noise flips a decision depends
            # on the plan auto picks, and the plan is not what is tested here
            ProjectedGaussianRelease(
                epsilon=0.3, delta=1e-6, random_state=seed, selection="aim"
            ),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # inferred domains: not the point
            pipe.fit(df)
        rel = pipe[-1]
        names = [str(x) for x in rel.blocks_.names]
        for spec in pipe[0].specs_:
            if spec.kind != "numeric":
                continue
            fine = spec.fine
            assert np.isfinite(fine.missing_raw)
            assert fine.missing_count == max(fine.missing_raw, 0.0)
            j = names.index(spec.name)
            est, sd = rel._one_way_level_estimate(j, int(rel.blocks_.n_levels[j]) - 1)
            value, threshold = missing_support(
                est, sd, fine.missing_raw, 2.0 * fine.scale**2
            )
            dropped = spec.name in pipe.missing_dropped_
            assert dropped == (value < threshold and est < 2.0 * sd)
            decisions += (value < threshold) != (est < MISSING_SUPPORT_Z * sd)
    # the second count changed at least one decision of the 24
    assert decisions >= 1


@pytest.mark.parametrize("selection", ["gaussian", "laplace"])
def test_a_categorical_column_s_level_selection_count_is_the_second_count(selection):
    """An undeclared text column's private level selection drew a noisy
    count of its missing cells: the joint Gaussian selection's, variance
    ``σ²`` of its public parameters, or a stable-levels histogram's
    ``Lap(Δ/ε_c)``, variance ``2 (Δ/ε_c)²``. The spec keeps it
    (``missing_noise``) and the pipeline's drop follows
    :func:`missing_support` on it (seeds 0-11, a complete column and one
    with 5 % missing)."""
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder
    from skdp_synth.preprocessing._level_selection import gaussian_selection_params
    from skdp_synth.preprocessing._missing_support import second_count

    rng = np.random.default_rng(1)
    n = 1500
    df = pd.DataFrame(
        {
            "full": rng.choice(list("abcd"), n).astype(object),
            "gaps": rng.choice(list("xyz"), n).astype(object),
            "v": rng.normal(0.0, 1.0, n),
        }
    )
    df.loc[rng.random(n) < 0.05, "gaps"] = None
    for seed in range(12):
        enc = BooleanEncoder(level_selection=selection, random_state=seed)
        pipe = make_synthesis_pipeline(
            enc, ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=seed)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # inferred domains: not the point
            pipe.fit(df)
        enc, rel = pipe[0], pipe[-1]
        names = [str(x) for x in rel.blocks_.names]
        for spec in enc.specs_:
            if spec.kind == "numeric":
                continue
            raw, variance = second_count(spec)
            assert spec.missing_noise == (raw, variance) and np.isfinite(raw)
            # the encoder's share: three paid domains, two of them levels
            eps_c = enc.epsilon_ / 3
            if selection == "gaussian":
                sigma = gaussian_selection_params(
                    2 * eps_c, enc.delta_, 2, enc.neighbouring
                )[0]
                assert variance == pytest.approx(sigma**2, rel=1e-12)
            else:
                assert variance == pytest.approx(2.0 * (1.0 / eps_c) ** 2, rel=1e-12)
            j = names.index(spec.name)
            est, sd = rel._one_way_level_estimate(j, int(rel.blocks_.n_levels[j]) - 1)
            value, threshold = missing_support(est, sd, raw, variance)
            dropped = spec.name in pipe.missing_dropped_
            assert dropped == (value < threshold and est < 2.0 * sd)
